//! Fortran fixture snapshots: each `fixtures/translate/<case>/input.*` with a Fortran
//! extension (free and fixed form, continuations, comments, CRLF) is translated with the
//! default profile and compared with `expected.default.<ext>` and `expected.default.txt`
//! (`ACC2OMP_BLESS=1` writes them). Each output is a fixed point, `--diff | git apply`
//! gives the `--write` output, the input builds under `gfortran -fopenacc` (`flang-22
//! -fopenacc` for the directives gfortran 12 lacks: `init`, `set`), and the output
//! builds under `gfortran -fopenmp` unless it leaves a directive (then the guard stops it).
//! The C fixtures of the same directory are `tests/fixtures.rs`'s.

mod common;

use acc2omp::diag::Located;
use acc2omp::semantic::SemanticConfig;
use acc2omp::{Options, migrate_source};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/translate");
    let mut out: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| {
            let dir = e.unwrap().path();
            fs::read_dir(&dir)
                .ok()?
                .map(|e| e.unwrap().path())
                .find(|p| p.file_stem().is_some_and(|s| s == "input"))
                .filter(|p| acc2omp::fortran::form::kind_of(p).is_some())
        })
        .collect();
    out.sort();
    assert!(
        out.len() >= 3,
        "expected the Fortran fixtures, found {out:?}"
    );
    out
}

fn ext(p: &Path) -> String {
    p.extension().unwrap().to_string_lossy().into_owned()
}

fn translate(input: &Path, text: &str) -> acc2omp::Outcome {
    migrate_source(
        text,
        Some(input),
        &Options::default(),
        &SemanticConfig::syntactic(),
    )
}

fn check_or_bless(path: &Path, actual: &str, failures: &mut Vec<String>) {
    let expected = fs::read_to_string(path).ok();
    if expected.as_deref() == Some(actual) {
        return;
    }
    if std::env::var("ACC2OMP_BLESS").is_ok_and(|v| v == "1") {
        fs::write(path, actual).unwrap();
        return;
    }
    failures.push(match expected {
        None => format!("{}: missing snapshot (ACC2OMP_BLESS=1)", path.display()),
        Some(e) => format!(
            "{} differs:\n{}",
            path.display(),
            similar::TextDiff::from_lines(&e, actual)
                .unified_diff()
                .header("expected", "actual")
        ),
    });
}

#[test]
fn fortran_snapshots_match_and_are_fixed_points() {
    let mut failures = Vec::new();
    for input in cases() {
        let dir = input.parent().unwrap();
        let text = fs::read_to_string(&input).unwrap();
        let out = translate(&input, &text);
        let name = input.file_name().unwrap().to_string_lossy().into_owned();
        let diags: String = out
            .diagnostics
            .iter()
            .map(|d| Located::from(&name, &out.index, d).render() + "\n")
            .collect();
        check_or_bless(
            &dir.join(format!("expected.default.{}", ext(&input))),
            &out.text,
            &mut failures,
        );
        check_or_bless(&dir.join("expected.default.txt"), &diags, &mut failures);
        let again = translate(&input, &out.text);
        if again.text != out.text {
            failures.push(format!("{}: output is not a fixed point", dir.display()));
        }
        // The line terminators the input uses are kept.
        if text.contains("\r\n") && out.text.replace("\r\n", "").contains('\n') {
            failures.push(format!("{}: a bare LF in a CRLF file", dir.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn run(dir: &Path, prog: &str, args: &[&str]) -> std::process::Output {
    Command::new(prog)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{prog}: {e}"))
}

#[test]
fn fortran_diff_applies_as_write() {
    for input in cases() {
        let text = fs::read(&input).unwrap();
        let name = format!("case.{}", ext(&input));
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        for d in [&a, &b] {
            fs::write(d.path().join(&name), &text).unwrap();
        }
        let bin = env!("CARGO_BIN_EXE_acc2omp");
        let o = run(
            a.path(),
            bin,
            &["migrate", "--write", "-q", "--no-cache", &name],
        );
        assert!(o.status.code().is_some_and(|c| c <= 1), "{o:?}");
        let diff = run(
            b.path(),
            bin,
            &["migrate", "--diff", "-q", "--no-cache", &name],
        );
        let patch = b.path().join("p.diff");
        fs::write(&patch, &diff.stdout).unwrap();
        run(b.path(), "git", &["init", "-q"]);
        let applied = run(b.path(), "git", &["apply", "p.diff"]);
        assert!(applied.status.success(), "{}: {applied:?}", input.display());
        assert_eq!(
            fs::read(a.path().join(&name)).unwrap(),
            fs::read(b.path().join(&name)).unwrap(),
            "{}",
            input.display()
        );
    }
}

#[test]
fn fortran_fixtures_build() {
    if !common::fortran::tools("Fortran fixtures build") {
        return;
    }
    let mut failures = Vec::new();
    for input in cases() {
        let dir = input.parent().unwrap();
        let e = ext(&input);
        let out = dir.join(format!("expected.default.{e}"));
        let Ok(translated) = fs::read_to_string(&out) else {
            continue;
        };
        let t = tempfile::tempdir().unwrap();
        // Modules of another file (`modules.f90` beside the input, which the tool does not
        // read with it): compiled first, for their `.mod` files.
        let modules = dir.join("modules.f90");
        if modules.exists() {
            let o = run(
                t.path(),
                "gfortran",
                &["-fsyntax-only", modules.to_str().unwrap()],
            );
            assert!(o.status.success(), "{}: {o:?}", modules.display());
        }
        let build = |text: &str, flag: &str| {
            let f = t.path().join(format!("x.{e}"));
            fs::write(&f, text).unwrap();
            run(
                t.path(),
                "gfortran",
                &[flag, "-fsyntax-only", f.to_str().unwrap()],
            )
        };
        let o = build(&fs::read_to_string(&input).unwrap(), "-fopenacc");
        // gfortran 12 has no 'init', 'set' nor 'shutdown' directive, finds no common block
        // of a host unit and takes no 'type(c_ptr)' scalar in 'use_device': flang-22 reads
        // those.
        let err = String::from_utf8_lossy(&o.stderr);
        let gfortran_limit = err.contains("Unclassifiable OpenACC directive")
            || (err.contains("COMMON block") && err.contains("not found"))
            || err.contains("USE_DEVICE clause variable");
        let o = if gfortran_limit {
            run(
                t.path(),
                "flang-22",
                &["-fopenacc", "-fsyntax-only", input.to_str().unwrap()],
            )
        } else {
            o
        };
        if !o.status.success() {
            failures.push(format!("{}: input: {o:?}", input.display()));
        }
        let o = build(&translated, "-fopenmp");
        // A directive left as OpenACC (comments may name the sentinel).
        let left = translated.lines().any(|l| {
            let l = l.to_ascii_lowercase();
            l.trim_start().starts_with("!$acc") || l.starts_with("c$acc") || l.starts_with("*$acc")
        });
        let err = String::from_utf8_lossy(&o.stderr);
        // gfortran 12 rejects every map of a variable with allocatable components (a
        // manual deep copy): flang-22 reads those.
        let flang_reads = || {
            let f = t.path().join(format!("x.{e}"));
            run(
                t.path(),
                "flang-22",
                &[
                    "-fopenmp",
                    "-fopenmp-version=51",
                    "-fsyntax-only",
                    f.to_str().unwrap(),
                ],
            )
            .status
            .success()
        };
        match (left, o.status.success()) {
            (false, true) => {}
            (true, false) if err.contains("acc2omp: OpenACC at line") => {}
            (false, false)
                if err.contains("with allocatable components is not permitted in map clause")
                    && flang_reads() => {}
            _ => failures.push(format!("{}: -fopenmp: {err}", out.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// flang's facts (its symbols of the modules of other files): a program whose module is in
/// another file translates as it does with the module in the same file (an allocatable
/// array and scalars in `use_device` take `use_device_addr`; a derived type with an
/// allocatable component mapped whole and by component is refused), the run says it used
/// flang, and a second run changes nothing.
#[test]
fn flang_facts_of_other_files_modules() {
    if !common::fortran::tools("flang facts of other files' modules") {
        return;
    }
    let module = "module m2\n  implicit none\n  type pt\n    real :: x\n    real, allocatable :: v(:)\n  end type\n  real, allocatable :: a(:)\n  real, pointer :: ps\n  real, allocatable :: as\n  type(pt) :: t\n  real :: s\nend module\n";
    let program = "program p\n  use m2\n  implicit none\n  integer :: i\n  !$acc data copy(t, t%v)\n  !$acc parallel loop reduction(+:s)\n  do i = 1, 10\n    s = s + t%v(i)\n  end do\n  !$acc end data\n  !$acc host_data use_device(a, ps, as)\n  call foo(a, ps, as)\n  !$acc end host_data\nend program\n";
    let t = tempfile::tempdir().unwrap();
    fs::write(t.path().join("m2.f90"), module).unwrap();
    let o = run(
        t.path(),
        "flang-22",
        &["-fc1", "-fsyntax-only", "-module-dir", ".", "m2.f90"],
    );
    assert!(o.status.success(), "{o:?}");
    let path = t.path().join("p.f90");
    fs::write(&path, program).unwrap();
    let flang = SemanticConfig::default();
    let out = migrate_source(program, Some(&path), &Options::default(), &flang);
    assert!(
        matches!(out.semantic, Some(acc2omp::semantic::Mode::Flang { .. })),
        "{:?}",
        out.semantic
    );
    let both = format!("{module}{program}");
    let same_file = migrate_source(
        &both,
        Some(&t.path().join("both.f90")),
        &Options::default(),
        &SemanticConfig::syntactic(),
    );
    // The guard line names its directive's line, which the module shifts.
    let guards = |text: &str| -> String {
        text.lines()
            .map(|l| match l.find("OpenACC at line ") {
                Some(k) => &l[..k],
                None => l,
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        guards(&same_file.text[module.len()..]),
        guards(&out.text),
        "with flang, the module of another file gives the facts of the same file's"
    );
    assert!(
        out.text.contains("use_device_addr(a, ps, as)"),
        "{}",
        out.text
    );
    let rules: Vec<&str> = out.diagnostics.iter().map(|d| d.rule.as_str()).collect();
    assert!(rules.contains(&"not-translated"), "{rules:?}");
    fs::write(&path, &out.text).unwrap();
    let again = migrate_source(&out.text, Some(&path), &Options::default(), &flang);
    assert_eq!(
        again.text, out.text,
        "a second run with flang changes nothing"
    );
}
