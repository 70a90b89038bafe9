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
        // gfortran 12 has no 'init', 'set' nor 'shutdown' directive: flang-22 reads them.
        let unclassifiable =
            String::from_utf8_lossy(&o.stderr).contains("Unclassifiable OpenACC directive");
        let o = if unclassifiable {
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
        match (left, o.status.success()) {
            (false, true) => {}
            (true, false) if err.contains("acc2omp: OpenACC at line") => {}
            _ => failures.push(format!("{}: -fopenmp: {err}", out.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
