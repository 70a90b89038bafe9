//! Runs the Fortran front end over files and directories and prints what it found: sites,
//! how many OpenACC directives are paired with what they apply to, problems, time.
//!
//! `cargo run --release --example fortran_scan -- [-v] PATH...`
//! `cargo run --release --example fortran_scan -- --generate N`: time the front end on
//! generated files of N/4, N/2 and N directives (free form, with continuation lines, data
//! regions, collapsed nests, atomics and labelled loops) and print the time per directive.
//!
//! A problem on a line that carries a DejaGnu `dg-error` (GCC's compile-only tests) is
//! counted as expected. `-v` prints every problem and every directive left unpaired.

use acc2omp::fortran::Front;
use acc2omp::fortran::form::kind_of;
use acc2omp::fortran::form::{Form, SourceKind};
use acc2omp::fortran::lines::Sentinel;
use acc2omp::fortran::structure::Applies;
use acc2omp::rules::Tables;
use acc2omp::{Dialect, fortran_site_info, parse_directive_all_in};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Default)]
struct Totals {
    files: usize,
    bytes: usize,
    acc: usize,
    paired: usize,
    unpaired: usize,
    omp: usize,
    conditional: usize,
    parse_errors: usize,
    problems: usize,
    expected: usize,
    panics: usize,
}

fn walk(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(p)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        entries.sort();
        for e in entries {
            walk(&e, out);
        }
    } else if kind_of(p).is_some() {
        out.push(p.to_path_buf());
    }
}

/// A subroutine of `n` groups of directives (each group: 5 `!$acc` directives).
fn generated(groups: usize) -> String {
    let mut s =
        String::from("subroutine big(a, b, n)\n  integer :: n, i, j\n  real :: a(n, n), b(n), x\n");
    for _ in 0..groups {
        s.push_str(
            "  !$acc data copy(a) &\n  !$acc& copyin(b)\n  !$acc parallel loop collapse(2) &\n  !$acc   private(x)\n  do j = 1, n\n    do i = 1, n\n      a(i, j) = a(i, j) + b(i)\n    end do\n  end do\n  !$acc end parallel loop\n  !$acc end data\n  !$acc atomic update\n  x = x + 1\n  do 10 i = 1, n\n10 b(i) = 0\n",
        );
    }
    s.push_str("end subroutine big\n");
    s
}

fn generate(n: usize, tables: &Tables) {
    let kind = SourceKind {
        form: Form::Free,
        cpp: false,
    };
    for directives in [n / 4, n / 2, n] {
        let src = generated(directives.div_ceil(5));
        let start = Instant::now();
        let f = Front::new(&src, kind, |s| fortran_site_info(s, tables));
        let secs = start.elapsed().as_secs_f64();
        let acc = f.sites.len();
        println!(
            "{acc} directives, {} lines, {} bytes: {secs:.3} s ({:.2} us per directive), {} problems",
            f.lines.len(),
            src.len(),
            secs * 1e6 / acc.max(1) as f64,
            f.problems.len()
        );
    }
}

fn main() {
    let mut verbose = false;
    let mut files = Vec::new();
    let tables = Tables::builtin();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "-v" {
            verbose = true;
        } else if a == "--generate" {
            let n = args.next().and_then(|n| n.parse().ok()).unwrap_or(100_000);
            generate(n, &tables);
            return;
        } else {
            walk(Path::new(&a), &mut files);
        }
    }
    let mut t = Totals::default();
    let start = Instant::now();
    for path in &files {
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        let src = String::from_utf8_lossy(&bytes).into_owned();
        let Some(kind) = kind_of(path) else { continue };
        t.files += 1;
        t.bytes += src.len();
        let line_of = |o: usize| src[..o.min(src.len())].matches('\n').count() + 1;
        let read = |s: &_| fortran_site_info(s, &tables);
        let front = match std::panic::catch_unwind(|| Front::new(&src, kind, read)) {
            Ok(f) => f,
            Err(_) => {
                t.panics += 1;
                println!("PANIC {}", path.display());
                continue;
            }
        };
        let lines: Vec<&str> = src.lines().collect();
        let dg_error = |line: usize| {
            lines
                .get(line.saturating_sub(1))
                .is_some_and(|l| l.contains("dg-error"))
        };
        for (k, site) in front.sites.iter().enumerate() {
            match site.sentinel {
                Sentinel::Omp => t.omp += 1,
                Sentinel::Conditional => t.conditional += 1,
                Sentinel::Acc => {
                    t.acc += 1;
                    let text = &site.text;
                    if let Err(e) =
                        parse_directive_all_in(text, 0..text.len(), &tables, Dialect::Fortran)
                    {
                        t.parse_errors += 1;
                        let at = site.file_offset(e[0].offset);
                        if verbose && !dg_error(line_of(at)) {
                            println!(
                                "{}:{}: parse: {}",
                                path.display(),
                                line_of(at),
                                e[0].message
                            );
                        }
                    }
                    let r = &front.structure.regions[k];
                    let paired = match &r.applies {
                        Applies::Block { end, .. } => end.is_some(),
                        Applies::Loop { loops, .. } => !loops.is_empty(),
                        Applies::End { opener } => opener.is_some(),
                        Applies::Atomic { .. } | Applies::Standalone | Applies::Declarative => true,
                        Applies::Nothing => false,
                    };
                    if paired {
                        t.paired += 1;
                    } else {
                        t.unpaired += 1;
                        if verbose {
                            let l = line_of(site.span.start);
                            let mark = if dg_error(l) { " (dg-error)" } else { "" };
                            println!(
                                "{}:{l}: unpaired{mark}: {}",
                                path.display(),
                                site.text.trim()
                            );
                        }
                    }
                }
            }
        }
        for p in &front.problems {
            t.problems += 1;
            let l = line_of(p.offset);
            if dg_error(l) {
                t.expected += 1;
            } else if verbose {
                println!("{}:{l}: {}", path.display(), p.message);
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{} files, {} bytes, {:.3} s; !$acc sites: {} ({} paired or standalone, {} unpaired, {} with parse errors); !$omp: {}; !$: {}; problems: {} ({} on dg-error lines); panics: {}",
        t.files,
        t.bytes,
        secs,
        t.acc,
        t.paired,
        t.unpaired,
        t.parse_errors,
        t.omp,
        t.conditional,
        t.problems,
        t.expected,
        t.panics
    );
}
