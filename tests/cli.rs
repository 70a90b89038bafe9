//! The command line end to end: modes, exit codes, walking, stdin, atomic writes.

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const ACC: &str = "void f(int n, double *a) {\n  #pragma acc parallel loop copy(a[0:n])\n  for (int i = 0; i < n; i++) a[i] += 1;\n}\n";
const PLAIN: &str = "int g(void) { return 1; }\n";

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_acc2omp"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    fs::create_dir_all(d.path().join("src/sub")).unwrap();
    fs::create_dir_all(d.path().join(".hidden")).unwrap();
    fs::create_dir_all(d.path().join("build")).unwrap();
    fs::write(d.path().join("src/a.c"), ACC).unwrap();
    fs::write(d.path().join("src/sub/b.cpp"), ACC).unwrap();
    fs::write(d.path().join("src/plain.c"), PLAIN).unwrap();
    fs::write(d.path().join("src/notes.txt"), ACC).unwrap();
    fs::write(d.path().join(".hidden/h.c"), ACC).unwrap();
    fs::write(d.path().join("build/gen.c"), ACC).unwrap();
    fs::write(d.path().join(".gitignore"), "build/\n").unwrap();
    d
}

#[test]
fn default_mode_writes_nothing_and_exits_zero() {
    let d = project();
    let o = run(d.path(), &["migrate", "."]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
    assert_eq!(fs::read_to_string(d.path().join("src/a.c")).unwrap(), ACC);
    assert!(
        stderr(&o).contains("3 file(s), 2 with OpenACC"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn check_lists_changed_files_honouring_gitignore_and_hidden() {
    let d = project();
    let o = run(d.path(), &["migrate", ".", "--check"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "src/a.c\nsrc/sub/b.cpp\n");
    // A file named explicitly is always processed.
    let o = run(d.path(), &["migrate", "build/gen.c", "--check"]);
    assert_eq!(
        (o.status.code(), stdout(&o).as_str()),
        (Some(1), "build/gen.c\n")
    );
    let o = run(d.path(), &["migrate", "src/plain.c", "--check"]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn diff_applies_with_git_apply_and_equals_write() {
    let d = project();
    let diff = run(d.path(), &["migrate", "src", "--diff"]);
    assert_eq!(diff.status.code(), Some(1));
    let patch = stdout(&diff);
    assert!(patch.contains("--- a/src/a.c\n+++ b/src/a.c\n"), "{patch}");
    let copy = tempfile::tempdir().unwrap();
    for f in ["src/a.c", "src/sub/b.cpp", "src/plain.c"] {
        let to = copy.path().join(f);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(d.path().join(f), to).unwrap();
    }
    let mut git = Command::new("git")
        .args(["apply", "-"])
        .current_dir(copy.path())
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    git.stdin
        .take()
        .unwrap()
        .write_all(patch.as_bytes())
        .unwrap();
    assert!(
        git.wait().unwrap().success(),
        "git apply rejected:\n{patch}"
    );
    let w = run(d.path(), &["migrate", "src", "--write"]);
    assert_eq!(w.status.code(), Some(0), "{}", stderr(&w));
    for f in ["src/a.c", "src/sub/b.cpp"] {
        let written = fs::read_to_string(d.path().join(f)).unwrap();
        assert_eq!(written, fs::read_to_string(copy.path().join(f)).unwrap());
        assert!(written.contains("#pragma omp target teams"), "{written}");
    }
    // A second run has nothing left to do.
    let again = run(d.path(), &["migrate", "src", "--check"]);
    assert_eq!(again.status.code(), Some(0));
}

#[test]
fn write_leaves_untouched_files_alone() {
    use std::os::unix::fs::MetadataExt;
    let d = project();
    let before = fs::metadata(d.path().join("src/plain.c")).unwrap().ino();
    let o = run(d.path(), &["migrate", "src", "--in-place"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        fs::metadata(d.path().join("src/plain.c")).unwrap().ino(),
        before
    );
    assert_eq!(
        fs::read_to_string(d.path().join("src/plain.c")).unwrap(),
        PLAIN
    );
}

#[test]
fn stdin_prints_the_translation() {
    let mut c = Command::new(env!("CARGO_BIN_EXE_acc2omp"))
        .args([
            "migrate",
            "-",
            "--stdin-filename",
            "x.c",
            "--profile",
            "clacc",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    c.stdin
        .take()
        .unwrap()
        .write_all(ACC.replace('\n', "\r\n").as_bytes())
        .unwrap();
    let o = c.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        ACC.replace('\n', "\r\n").replace(
            "acc parallel loop copy(a[0:n])",
            "omp target teams distribute map(tofrom: a[0:n])"
        )
    );
}

#[test]
fn errors_are_positioned_and_work_continues() {
    let d = tempfile::tempdir().unwrap();
    fs::write(
        d.path().join("bad.c"),
        "void f(void) {\n  #pragma acc parallel bogus\n  {}\n}\n",
    )
    .unwrap();
    fs::write(
        d.path().join("latin1.c"),
        b"/* caf\xe9 */\nvoid f(void) {\n#pragma acc wait\n}\n",
    )
    .unwrap();
    fs::write(d.path().join("good.c"), ACC).unwrap();
    let o = run(d.path(), &["migrate", ".", "--write"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("bad.c:2:24: error: unknown clause 'bogus' on 'acc parallel'; the directive is left unchanged [unknown-clause]"), "{err}");
    assert!(
        fs::read_to_string(d.path().join("good.c"))
            .unwrap()
            .contains("omp target")
    );
    // Bytes that are not UTF-8 are kept; the directive is translated.
    assert_eq!(
        fs::read(d.path().join("latin1.c")).unwrap(),
        b"/* caf\xe9 */\nvoid f(void) {\n#pragma omp taskwait\n}\n"
    );
}

#[test]
fn usage_and_io_errors_exit_two() {
    let d = tempfile::tempdir().unwrap();
    assert_eq!(run(d.path(), &["migrate"]).status.code(), Some(2));
    assert_eq!(
        run(d.path(), &["migrate", "x.c", "--diff", "--check"])
            .status
            .code(),
        Some(2)
    );
    let o = run(d.path(), &["migrate", "missing.c"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("missing.c:1:1: error:"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        run(d.path(), &["migrate", "-", "x.c"]).status.code(),
        Some(2)
    );
}

#[test]
fn rules_and_explain() {
    let d = tempfile::tempdir().unwrap();
    let o = run(d.path(), &["rules"]);
    assert!(stdout(&o).contains("kernels-sequential"));
    let o = run(d.path(), &["explain", "tile-as-collapse"]);
    assert!(stdout(&o).contains("collapse(2)"));
    assert_eq!(run(d.path(), &["explain", "nope"]).status.code(), Some(2));
}

#[test]
fn export_diagnostics_as_json() {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("k.c"), "void k(int n, float *x) {\n#pragma acc kernels loop\nfor (int i = 0; i < n; i++) x[i] = 0;\n}\n").unwrap();
    let o = run(
        d.path(),
        &["migrate", "k.c", "--export-diagnostics", "d.json"],
    );
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(d.path().join("d.json")).unwrap()).unwrap();
    assert_eq!(v[0]["rule"], "kernels-sequential");
    assert_eq!(v[0]["line"], 2);
}

#[test]
fn device_type_selects_sections() {
    let d = tempfile::tempdir().unwrap();
    let src = "void f(int n, double *a) {\n#pragma acc parallel loop num_gangs(4) copy(a[0:n]) device_type(nvidia) num_gangs(64)\n  for (int i = 0; i < n; i++) a[i] += 1;\n}\n";
    fs::write(d.path().join("a.c"), src).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_acc2omp"))
        .current_dir(d.path())
        .args([
            "migrate",
            "--no-clang",
            "--device-type",
            "NVIDIA",
            "a.c",
            "--write",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = fs::read_to_string(d.path().join("a.c")).unwrap();
    assert!(out.contains("map(tofrom: a[0:n]) num_teams(64)\n"), "{out}");
    assert!(
        !out.contains("device_type") && !out.contains("num_teams(4)"),
        "{out}"
    );
    assert!(stderr(&o).contains("applied device_type(nvidia): num_gangs(64) [device-type]"));
    // Without a selection the default clause stays.
    fs::write(d.path().join("a.c"), src).unwrap();
    let o = run(d.path(), &["migrate", "--no-clang", "a.c", "--write"]);
    let out = fs::read_to_string(d.path().join("a.c")).unwrap();
    assert!(
        out.contains("num_teams(4) map(tofrom: a[0:n])\n"),
        "{out}\n{}",
        stderr(&o)
    );
    assert!(
        !out.contains("device_type") && !out.contains("num_teams(64)"),
        "{out}"
    );
    let bad = run(d.path(), &["migrate", "--device-type", "nv-idia", "a.c"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("not a device type name"),
        "{}",
        stderr(&bad)
    );
}

/// `--export-fixes` writes what `--write` would do as clang-tidy fixes:
/// `clang-apply-replacements` applied to them gives the same files (CRLF and a `_Pragma`
/// in a macro included).
#[test]
fn export_fixes_apply_like_write() {
    let tool = "clang-apply-replacements-19";
    if Command::new(tool).arg("--version").output().is_err() {
        assert!(
            std::env::var("ACC2OMP_REQUIRE_TOOLS").as_deref() != Ok("1"),
            "{tool} is required (clang-tools-19)"
        );
        eprintln!("!!! SKIPPED export_fixes_apply_like_write: {tool} not found (clang-tools-19)");
        return;
    }
    let crlf = ACC.replace('\n', "\r\n");
    let mac = "#define P _Pragma(\"acc parallel loop copy(a[0:n])\")\nvoid h(int n, double *a) {\n  P\n  for (int i = 0; i < n; i++) a[i] = 0;\n}\n";
    let make = || {
        let d = tempfile::tempdir().unwrap();
        fs::write(d.path().join("a.c"), ACC).unwrap();
        fs::write(d.path().join("crlf.c"), &crlf).unwrap();
        fs::write(d.path().join("mac.c"), mac).unwrap();
        fs::write(d.path().join("plain.c"), PLAIN).unwrap();
        d
    };
    let (fixed, written) = (make(), make());
    let fixes = tempfile::tempdir().unwrap();
    let yaml = fixes.path().join("fixes.yaml");
    let o = run(
        fixed.path(),
        &["migrate", ".", "--export-fixes", yaml.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = fs::read_to_string(&yaml).unwrap();
    assert_eq!(text.matches("DiagnosticName:").count(), 3, "{text}");
    let applied = Command::new(tool).arg(fixes.path()).output().unwrap();
    assert!(applied.status.success(), "{}", stderr(&applied));
    let o = run(written.path(), &["migrate", ".", "--write"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for f in ["a.c", "crlf.c", "mac.c", "plain.c"] {
        let (x, y) = (
            fs::read(fixed.path().join(f)).unwrap(),
            fs::read(written.path().join(f)).unwrap(),
        );
        assert_eq!(
            String::from_utf8_lossy(&x),
            String::from_utf8_lossy(&y),
            "{f}"
        );
    }
    assert_ne!(fs::read_to_string(written.path().join("a.c")).unwrap(), ACC);
}
