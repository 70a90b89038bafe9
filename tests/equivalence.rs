//! Proof of equivalence: every program in `fixtures/programs/` is translated with each
//! profile; the original runs under `gcc -fopenacc` (the reference), the translation under
//! `gcc -fopenmp` and under `clang-19 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu` (a host
//! device with separate memory, so a wrong map shows up as a wrong result). Output and exit
//! status must match; no OpenACC may remain; every line without OpenACC stays byte-identical.
//! Programs that cannot be translated exactly are listed in `known_gaps.toml` with the
//! diagnostic the tool gives.

mod common;

use acc2omp::lex::{TokKind, lex};
use acc2omp::profile::Profile;
use acc2omp::scan::find_sites;
use rayon::prelude::*;
use serde::Deserialize;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[derive(Deserialize)]
struct Gaps {
    #[serde(default)]
    gap: Vec<Gap>,
}

#[derive(Deserialize)]
struct Gap {
    program: String,
    /// The diagnostic rule the tool reports for the construct it cannot translate exactly.
    rule: String,
    #[allow(dead_code)]
    reason: String,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/programs")
}

fn programs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(root())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "c" || e == "cpp"))
        .collect();
    v.sort();
    v
}

fn gaps() -> Vec<Gap> {
    let text = fs::read_to_string(root().join("known_gaps.toml")).unwrap_or_default();
    toml::from_str::<Gaps>(&text)
        .expect("known_gaps.toml parses")
        .gap
}

/// Run a program with a time limit; (stdout, exit status).
fn run(exe: &Path, clang: bool) -> Result<(String, Option<i32>), String> {
    run_with(exe, clang, false)
}

/// `helpers`: leave libomp's hidden helper threads on, so that `target nowait` tasks really
/// run concurrently with the host and with each other (only then does a missing `depend`
/// show up as a wrong result; libomp then aborts now and then, see `run_async`).
fn run_with(exe: &Path, clang: bool, helpers: bool) -> Result<(String, Option<i32>), String> {
    let mut cmd = Command::new("timeout");
    cmd.arg("60").arg(exe).stdin(Stdio::null());
    if clang {
        cmd.env("LD_LIBRARY_PATH", "/usr/lib/llvm-19/lib");
        if !helpers {
            cmd.env("LIBOMP_USE_HIDDEN_HELPER_TASK", "0");
        }
    }
    let o = cmd.output().map_err(|e| e.to_string())?;
    Ok((
        String::from_utf8_lossy(&o.stdout).into_owned(),
        o.status.code(),
    ))
}

fn translate(src: &str, name: &str, profile: Profile) -> (String, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_acc2omp"))
        .args([
            "migrate",
            "-",
            "-q",
            "--stdin-filename",
            name,
            "--profile",
            profile.name(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    c.stdin.take().unwrap().write_all(src.as_bytes()).unwrap();
    let o = c.wait_with_output().unwrap();
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Line numbers (0-based) of `src` that carry OpenACC: directive sites, `acc_*` names,
/// `openacc.h`, `_OPENACC`.
fn openacc_lines(src: &str) -> BTreeSet<usize> {
    let toks = lex(src);
    let line_of = |o: usize| src[..o].matches('\n').count();
    let mut lines = BTreeSet::new();
    for s in find_sites(src, &toks) {
        lines.extend(line_of(s.span.start)..=line_of(s.span.end));
    }
    for t in &toks {
        let text = t.text(src);
        let acc = match t.kind {
            TokKind::Ident => text.starts_with("acc_") || text == "_OPENACC",
            TokKind::PpLine => {
                text.contains("openacc.h") || text.contains("_OPENACC") || text.contains("acc_")
            }
            _ => false,
        };
        if acc {
            lines.extend(line_of(t.start)..=line_of(t.end));
        }
    }
    lines
}

/// What OpenACC is left in a translation.
fn leftover_openacc(out: &str) -> Option<String> {
    let toks = lex(out);
    if let Some(s) = find_sites(out, &toks).first() {
        return Some(out[s.span.clone()].to_string());
    }
    toks.iter()
        .map(|t| t.text(out))
        .find(|t| t.starts_with("acc_") || t.contains("openacc.h") || *t == "_OPENACC")
        .map(str::to_string)
}

/// Original lines without OpenACC that the translation changed or removed.
fn touched_plain_lines(orig: &str, out: &str) -> Vec<String> {
    let acc = openacc_lines(orig);
    let diff = similar::TextDiff::from_lines(orig, out);
    let mut bad = Vec::new();
    for op in diff.ops() {
        for change in diff.iter_changes(op) {
            if change.tag() == similar::ChangeTag::Delete {
                let line = change.old_index().unwrap_or(0);
                if !acc.contains(&line) {
                    bad.push(format!("line {}: {}", line + 1, change.value().trim_end()));
                }
            }
        }
    }
    bad
}

fn first_difference(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    for k in 0..e.len().max(a.len()) {
        if e.get(k) != a.get(k) {
            return format!(
                "first differing line {}: expected {:?}, got {:?}",
                k + 1,
                e.get(k),
                a.get(k)
            );
        }
    }
    "outputs differ only in the trailing newline".into()
}

/// Check one program; returns failure messages.
fn check(prog: &Path, gap: Option<&Gap>, tmp: &Path) -> Vec<String> {
    let name = prog.file_name().unwrap().to_string_lossy().into_owned();
    let stem = prog.file_stem().unwrap().to_string_lossy().into_owned();
    let src = fs::read_to_string(prog).unwrap();
    let refexe = tmp.join(format!("{stem}.ref"));
    if let Err(e) = common::compile(
        common::gcc_for(prog),
        &["-fopenacc", "-O1"],
        prog,
        &refexe,
        true,
    ) {
        return vec![format!(
            "{name}: gcc -fopenacc cannot compile the original:\n{e}"
        )];
    }
    let reference = match run(&refexe, false) {
        Ok(r) => r,
        Err(e) => return vec![format!("{name}: reference run failed: {e}")],
    };
    let mut failures = Vec::new();
    let mut gap_reported = false;
    for profile in Profile::ALL {
        let (out, diags) = translate(&src, &name, profile);
        let tag = format!("{name} [profile {}]", profile.name());
        if let Some(g) = gap {
            gap_reported |= diags.contains(&format!("[{}]", g.rule));
        }
        if let Some(left) = leftover_openacc(&out) {
            failures.push(format!(
                "{tag}: OpenACC left in the translation: {left}\n{diags}"
            ));
            continue;
        }
        let touched = touched_plain_lines(&src, &out);
        if !touched.is_empty() {
            failures.push(format!(
                "{tag}: lines without OpenACC changed:\n  {}",
                touched.join("\n  ")
            ));
        }
        let translated = tmp.join(format!(
            "{stem}.{}.{}",
            profile.name(),
            prog.extension().unwrap().to_string_lossy()
        ));
        fs::write(&translated, &out).unwrap();
        for (compiler, flags, clang) in [
            (common::gcc_for(prog), &["-fopenmp", "-O1"][..], false),
            (common::clang_for(prog), common::CLANG_OFFLOAD, true),
        ] {
            let exe = tmp.join(format!("{stem}.{}.{compiler}", profile.name()));
            if let Err(e) = common::compile(compiler, flags, &translated, &exe, true) {
                failures.push(format!(
                    "{tag}: {compiler} cannot compile the translation:\n{e}"
                ));
                continue;
            }
            match run(&exe, clang) {
                Err(e) => failures.push(format!("{tag}: {compiler} build cannot run: {e}")),
                Ok(got) if got != reference => failures.push(format!(
                    "{tag}: {compiler} build differs from gcc -fopenacc (exit {:?} vs {:?}); {}",
                    got.1,
                    reference.1,
                    first_difference(&reference.0, &got.0)
                )),
                Ok(_) => {}
            }
        }
    }
    match gap {
        Some(g) if !gap_reported => vec![format!(
            "{name}: listed as a known gap, but the tool no longer reports [{}]",
            g.rule
        )],
        Some(_) if failures.is_empty() => vec![format!(
            "{name}: listed as a known gap but now translates exactly: remove it from known_gaps.toml"
        )],
        Some(_) => Vec::new(),
        None => failures,
    }
}

#[test]
fn translated_programs_compute_the_same_results() {
    if !common::compilers("equivalence") {
        return;
    }
    let mut progs = programs();
    assert!(
        progs.len() >= 40,
        "the corpus has {} programs, expected at least 40",
        progs.len()
    );
    // `ACC2OMP_PROGRAMS=a,b` runs only programs whose names contain one of the words.
    if let Ok(only) = std::env::var("ACC2OMP_PROGRAMS") {
        let words: Vec<&str> = only.split(',').filter(|w| !w.is_empty()).collect();
        progs.retain(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            words.iter().any(|w| name.contains(w))
        });
        eprintln!(
            "equivalence: ACC2OMP_PROGRAMS={only}: {} program(s)",
            progs.len()
        );
    }
    let gaps = gaps();
    for g in &gaps {
        assert!(
            root().join(&g.program).exists(),
            "known_gaps.toml names a missing program {}",
            g.program
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let failures: Vec<String> = progs
        .par_iter()
        .flat_map(|p| {
            let gap = gaps.iter().find(|g| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy() == g.program)
            });
            check(p, gap, tmp.path())
        })
        .collect();
    no_failures(&failures);
}

/// A test of the test: a translation whose `from` map is turned into `to` must be caught.
#[test]
fn a_broken_map_is_caught() {
    if !common::compilers("equivalence (broken map)") {
        return;
    }
    let src = "#include <stdio.h>\n#define N 1000\nint main(void) {\n  static double a[N], b[N];\n  for (int i = 0; i < N; i++) a[i] = i;\n  #pragma acc parallel loop copyin(a) copyout(b)\n  for (int i = 0; i < N; i++) b[i] = 2 * a[i];\n  double s = 0;\n  for (int i = 0; i < N; i++) s += b[i];\n  printf(\"%.1f\\n\", s);\n  return 0;\n}\n";
    let tmp = tempfile::tempdir().unwrap();
    let orig = tmp.path().join("p.c");
    fs::write(&orig, src).unwrap();
    common::compile("gcc", &["-fopenacc"], &orig, &tmp.path().join("ref"), true).unwrap();
    let reference = run(&tmp.path().join("ref"), false).unwrap();
    assert_eq!(reference.0, "999000.0\n");
    let (good, _) = translate(src, "p.c", Profile::Default);
    assert!(good.contains("map(from: b)"), "{good}");
    for (text, should_match) in [
        (good.clone(), true),
        (good.replace("map(from: b)", "map(to: b)"), false),
    ] {
        let p = tmp.path().join("t.c");
        fs::write(&p, &text).unwrap();
        let exe = tmp.path().join("t");
        common::compile("clang-19", common::CLANG_OFFLOAD, &p, &exe, true).unwrap();
        let got = run(&exe, true).unwrap();
        assert_eq!(
            got == reference,
            should_match,
            "translation:\n{text}\noutput: {got:?}"
        );
    }
}

/// A run with hidden helper threads on; a run that libomp aborts (killed by a signal) is
/// retried, a run that finishes must give the reference output.
fn run_async(exe: &Path, runs: usize) -> Vec<(String, Option<i32>)> {
    let mut out = Vec::new();
    let mut aborted = 0;
    while out.len() < runs && aborted < 10 {
        match run_with(exe, true, true) {
            Ok((_, code)) if code.is_none_or(|c| c >= 128) => aborted += 1,
            Ok(r) => out.push(r),
            Err(e) => panic!("{}: {e}", exe.display()),
        }
    }
    assert!(
        out.len() == runs,
        "{}: libomp aborted {aborted} runs",
        exe.display()
    );
    out
}

/// Async queues with real concurrency: the programs that use `async` are run with libomp's
/// hidden helper threads, so their `nowait` target tasks overlap unless `depend` orders them.
/// The test of the test strips every `depend` from one translation and requires a wrong
/// result in some run.
#[test]
fn async_queues_keep_their_order_under_concurrency() {
    if !common::compilers("equivalence (async under concurrency)") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let progs: Vec<PathBuf> = programs()
        .into_iter()
        .filter(|p| fs::read_to_string(p).is_ok_and(|s| s.contains("async")))
        .collect();
    assert!(progs.len() >= 4, "async programs: {progs:?}");
    let failures: Vec<String> = progs
        .par_iter()
        .flat_map(|prog| {
            let name = prog.file_name().unwrap().to_string_lossy().into_owned();
            let stem = prog.file_stem().unwrap().to_string_lossy().into_owned();
            let ext = prog.extension().unwrap().to_string_lossy().into_owned();
            let src = fs::read_to_string(prog).unwrap();
            let refexe = tmp.path().join(format!("{stem}.ref"));
            common::compile(common::gcc_for(prog), &["-fopenacc", "-O1"], prog, &refexe, true)
                .unwrap();
            let reference = run(&refexe, false).unwrap();
            let (good, _) = translate(&src, &name, Profile::Default);
            let mut variants = vec![("translation", good.clone(), true)];
            if stem == "async_queue_order" {
                let stripped = strip_depend(&good);
                assert_ne!(stripped, good, "no depend clause in {name}");
                variants.push(("translation without depend", stripped, false));
            }
            let mut fails = Vec::new();
            for (what, text, should_match) in variants {
                let t = tmp.path().join(format!("{stem}.{}.{ext}", should_match));
                fs::write(&t, &text).unwrap();
                let exe = tmp.path().join(format!("{stem}.{}", should_match));
                if let Err(e) =
                    common::compile(common::clang_for(prog), common::CLANG_OFFLOAD, &t, &exe, true)
                {
                    fails.push(format!("{name}: {what} does not compile: {e}"));
                    continue;
                }
                let runs = if should_match { 3 } else { 8 };
                let got = run_async(&exe, runs);
                let all_match = got.iter().all(|g| *g == reference);
                match (should_match, all_match) {
                    (true, false) => {
                        let bad = got.iter().find(|g| **g != reference).unwrap();
                        fails.push(format!(
                            "{name}: {what} under hidden helper threads differs from gcc -fopenacc (exit {:?} vs {:?}); {}",
                            bad.1,
                            reference.1,
                            first_difference(&reference.0, &bad.0)
                        ));
                    }
                    (false, true) => fails.push(format!(
                        "{name}: {what} gave the right result in all {runs} runs: the test cannot see queue order"
                    )),
                    _ => {}
                }
            }
            fails
        })
        .collect();
    no_failures(&failures);
}

fn no_failures(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// `text` without its `depend(...)` clauses.
fn strip_depend(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(k) = rest.find(" depend(") {
        out.push_str(&rest[..k]);
        let mut depth = 0;
        let mut end = rest.len();
        for (i, ch) in rest[k + 1..].char_indices() {
            match ch {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = k + 1 + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}
