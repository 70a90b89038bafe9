//! The command line end to end: modes, exit codes, walking, stdin, atomic writes.

mod common;

use common::{run, stderr, stdout};
use std::fs;
use std::process::{Command, Output, Stdio};

const ACC: &str = "void f(int n, double *a) {\n  #pragma acc parallel loop copy(a[0:n])\n  for (int i = 0; i < n; i++) a[i] += 1;\n}\n";
const PLAIN: &str = "int g(void) { return 1; }\n";

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
    // No path means the current directory.
    let o = run(d.path(), &["migrate"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("0 file(s)"), "{}", stderr(&o));
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
    fs::write(d.path().join("k.c"), "void k(int n, float *x) {\n#pragma acc kernels loop\nfor (int i = 0; i < n; i++) x[i + 1] = x[i];\n}\n").unwrap();
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
            // The clacc profile keeps the selected `num_gangs` as `num_teams`.
            "--profile",
            "clacc",
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
    let o = run(
        d.path(),
        &[
            "migrate",
            "--no-clang",
            "--profile",
            "clacc",
            "a.c",
            "--write",
        ],
    );
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

/// Two warnings at line 2 (kernels-sequential, implicit-pointer), an error at line 5.
const MIXED: &str = "void k(int n, float *x) {\n#pragma acc kernels loop\n  for (int i = 0; i < n; i++) x[i + 1] = x[i];\n  float *z = x;\n#pragma acc parallel loop bogus(z) copy(z[0:n])\n  for (int i = 0; i < n; i++) z[i] = 1;\n}\n";

/// The rule ids of the diagnostics in a run's text output.
fn rules_reported(o: &Output) -> Vec<String> {
    let mut v: Vec<String> = stderr(o)
        .lines()
        .filter(|l| l.contains(": warning: ") || l.contains(": error: "))
        .filter_map(|l| Some(l.rsplit_once('[')?.1.trim_end_matches(']').to_string()))
        .collect();
    v.sort();
    v
}

#[test]
fn select_ignore_and_extend_select_from_the_command_line_and_the_config() {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("k.c"), MIXED).unwrap();
    let go = |args: &[&str]| {
        let mut a = vec!["migrate", "k.c", "--no-clang", "--color", "never"];
        a.extend_from_slice(args);
        run(d.path(), &a)
    };
    let o = go(&[]);
    assert_eq!(
        rules_reported(&o),
        ["implicit-pointer", "kernels-sequential", "unknown-clause"]
    );
    let o = go(&["--ignore", "unknown-clause"]);
    // The error is not reported, so it does not fail the run; the directive stays as it was.
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        rules_reported(&o),
        ["implicit-pointer", "kernels-sequential"]
    );
    assert!(stderr(&o).contains("(1 not selected)"), "{}", stderr(&o));
    let o = go(&["--select", "acc2omp-kernels-*,implicit-pointer"]);
    assert_eq!(
        rules_reported(&o),
        ["implicit-pointer", "kernels-sequential"]
    );
    let o = go(&[
        "--select",
        "kernels-sequential",
        "--extend-select",
        "unknown-clause",
    ]);
    assert_eq!(rules_reported(&o), ["kernels-sequential", "unknown-clause"]);
    assert_eq!(o.status.code(), Some(1));
    // An unknown id is a usage error, with the closest id.
    let o = go(&["--ignore", "kernels-sequentail"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("did you mean 'kernels-sequential'?"),
        "{}",
        stderr(&o)
    );
    // acc2omp.toml: its selection comes first, the command line's applies on top of it.
    fs::write(
        d.path().join("acc2omp.toml"),
        "select = [\"ALL\"]\nignore = [\"implicit-pointer\", \"unknown-*\"]\n",
    )
    .unwrap();
    let o = go(&[]);
    assert_eq!(rules_reported(&o), ["kernels-sequential"], "{}", stderr(&o));
    let o = go(&["--extend-select", "unknown-clause"]);
    assert_eq!(rules_reported(&o), ["kernels-sequential", "unknown-clause"]);
    let o = go(&["--select", "implicit-pointer"]);
    assert_eq!(rules_reported(&o), ["implicit-pointer"]);
    fs::write(d.path().join("acc2omp.toml"), "ignore = 3\n").unwrap();
    let o = go(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("`ignore` must be a list"),
        "{}",
        stderr(&o)
    );
    fs::write(d.path().join("acc2omp.toml"), "select = [\"nope\"]\n").unwrap();
    assert_eq!(go(&[]).status.code(), Some(2));
}

#[test]
fn nolint_comments_suppress_reports_but_not_translations() {
    let d = tempfile::tempdir().unwrap();
    let src = "void k(int n, float *x) {\n\
               #pragma acc kernels loop // NOLINT(acc2omp-kernels-sequential)\n\
               for (int i = 0; i < n; i++) x[i + 1] = x[i];\n\
               float *z = x;\n\
               // NOLINTNEXTLINE(acc2omp-*)\n\
               #pragma acc parallel loop bogus(z) copy(z[0:n])\n\
               for (int i = 0; i < n; i++) z[i] = 1;\n\
               #pragma acc parallel loop bogus(z) /* NOLINT(bugprone-x) */\n\
               for (int i = 0; i < n; i++) z[i] = 2;\n}\n";
    fs::write(d.path().join("k.c"), src).unwrap();
    let o = run(d.path(), &["migrate", "k.c", "--no-clang", "--diff"]);
    // Another tool's NOLINT does not hide acc2omp's error at line 8.
    assert_eq!(rules_reported(&o), ["implicit-pointer", "unknown-clause"]);
    assert!(stderr(&o).contains("k.c:8:"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("2 suppressed by NOLINT"),
        "{}",
        stderr(&o)
    );
    assert_eq!(o.status.code(), Some(1));
    // The suppressed error's directive is still left unchanged.
    assert!(
        !stdout(&o).contains("-#pragma acc parallel loop bogus"),
        "{}",
        stdout(&o)
    );
    let src = src.replace(
        "/* NOLINT(bugprone-x) */",
        "/* NOLINT(bugprone-x, acc2omp-unknown-clause) */",
    );
    fs::write(d.path().join("k.c"), src).unwrap();
    let o = run(d.path(), &["migrate", "k.c", "--no-clang", "--check"]);
    assert_eq!(rules_reported(&o), ["implicit-pointer"]);
    // A reviewed error no longer blocks a check; only the change does.
    assert_eq!(o.status.code(), Some(1));
    fs::write(
        d.path().join("k.c"),
        "// NOLINTNEXTLINE\n#pragma acc parallel loop bogus(z)\nfor (;;) ;\n",
    )
    .unwrap();
    // The directive left unchanged gets its guard above the NOLINTNEXTLINE comment, which
    // keeps suppressing it: after --write a check passes.
    let o = run(d.path(), &["migrate", "k.c", "--no-clang", "--write"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let written = fs::read_to_string(d.path().join("k.c")).unwrap();
    assert!(
        written.contains("#endif\n// NOLINTNEXTLINE\n#pragma acc"),
        "{written}"
    );
    let o = run(d.path(), &["migrate", "k.c", "--no-clang", "--check"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // JSON leaves suppressed diagnostics out and counts them.
    let o = run(
        d.path(),
        &["migrate", "k.c", "--no-clang", "--output-format", "json"],
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["diagnostics"].as_array().unwrap().len(), 0);
    assert_eq!(v["summary"]["suppressed"], 1);
}

/// A project whose flags live in a compilation database: `-DN=…` decides which branch is
/// active, `@flags.rsp` holds it.
fn db_project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().canonicalize().unwrap();
    fs::create_dir_all(root.join("build")).unwrap();
    fs::write(root.join("a.c"), ACC).unwrap();
    fs::write(root.join("build/flags.rsp"), "-DWIDTH=4 '-DMSG=a b'\n").unwrap();
    let db = format!(
        r#"[{{"directory": "{}", "file": "../a.c", "command": "cc @flags.rsp -c ../a.c"}}]"#,
        root.join("build").display()
    );
    fs::write(root.join("build/compile_commands.json"), db).unwrap();
    d
}

#[test]
fn compilation_database_by_directory_or_file_and_malformed_ones() {
    let d = db_project();
    for p in ["build", "build/compile_commands.json"] {
        let o = run(d.path(), &["migrate", "a.c", "-p", p, "--no-clang"]);
        assert_eq!(o.status.code(), Some(0), "-p {p}: {}", stderr(&o));
    }
    // No database there.
    let o = run(d.path(), &["migrate", "a.c", "-p", "."]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no compile_commands.json"),
        "{}",
        stderr(&o)
    );
    // A malformed database is an error, given or found next to the file.
    fs::write(d.path().join("bad.json"), "[{\"directory\": \"/\",").unwrap();
    let o = run(d.path(), &["migrate", "a.c", "-p", "bad.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("bad.json: not a usable compilation database"),
        "{}",
        stderr(&o)
    );
    fs::write(d.path().join("compile_commands.json"), "{}").unwrap();
    let o = run(d.path(), &["migrate", "a.c"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    fs::remove_file(d.path().join("compile_commands.json")).unwrap();
    // A response file that is missing.
    fs::remove_file(d.path().join("build/flags.rsp")).unwrap();
    let o = run(d.path(), &["migrate", "a.c", "-p", "build"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot read response file"),
        "{}",
        stderr(&o)
    );
    // Also without libclang: the syntactic facts take the database's -D flags.
    let o = run(d.path(), &["migrate", "a.c", "-p", "build", "--no-clang"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn require_clang_fails_when_a_region_falls_back_to_syntax() {
    if std::process::Command::new(env!("CARGO_BIN_EXE_acc2omp"))
        .args(["migrate", "--require-clang", "-q", "-"])
        .stdin(Stdio::null())
        .output()
        .unwrap()
        .status
        .code()
        != Some(0)
    {
        assert!(
            std::env::var("ACC2OMP_REQUIRE_TOOLS").as_deref() != Ok("1"),
            "libclang is required (libclang1-19)"
        );
        eprintln!(
            "!!! SKIPPED require_clang_fails_when_a_region_falls_back_to_syntax: no libclang"
        );
        return;
    }
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("a.c"), ACC).unwrap();
    // `undeclared` is unknown to libclang: the region's facts come from syntax.
    fs::write(
        d.path().join("b.c"),
        "void g(int n, double *a) {\n  #pragma acc parallel loop copy(a[0:n])\n  for (int i = 0; i < n; i++) a[i] = undeclared;\n}\n",
    )
    .unwrap();
    let o = run(d.path(), &["migrate", "a.c", "--require-clang"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(d.path(), &["migrate", "a.c", "b.c", "--require-clang"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--require-clang: 1 directive(s) were translated from syntax alone"),
        "{}",
        stderr(&o)
    );
    // Without it the run goes on, and the summary counts the region.
    let o = run(d.path(), &["migrate", "a.c", "b.c"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("1 directive(s) translated from syntax alone"),
        "{}",
        stderr(&o)
    );
    // --exit-zero does not hide it.
    let o = run(
        d.path(),
        &["migrate", "b.c", "--require-clang", "--exit-zero"],
    );
    assert_eq!(o.status.code(), Some(2));
    // A LIBCLANG_PATH without libclang does not hide the installed one, and -v says so.
    fs::write(d.path().join("libclang.so"), "not a library").unwrap();
    for bad in [d.path().join("nowhere"), d.path().to_path_buf()] {
        let o = Command::new(env!("CARGO_BIN_EXE_acc2omp"))
            .current_dir(d.path())
            .env("LIBCLANG_PATH", &bad)
            .args(["migrate", "a.c", "--require-clang", "-v"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("LIBCLANG_PATH passed over"),
            "{}",
            stderr(&o)
        );
    }
    assert!(
        run(d.path(), &["migrate", "--require-clang", "--no-clang"])
            .status
            .code()
            == Some(2)
    );
}

#[test]
fn completions_man_page_and_explain_suggestions() {
    let d = tempfile::tempdir().unwrap();
    let o = run(d.path(), &["completions", "bash"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("--output-format"), "{}", stdout(&o));
    let o = run(d.path(), &["man"]);
    assert_eq!(o.status.code(), Some(0));
    let page = stdout(&o);
    assert!(page.contains(".TH acc2omp"), "{page}");
    // Each section once, in man-pages(7) order, and no pointer to pages that do not exist.
    let headings: Vec<&str> = page.lines().filter(|l| l.starts_with(".SH ")).collect();
    assert_eq!(
        headings,
        [
            ".SH NAME",
            ".SH SYNOPSIS",
            ".SH DESCRIPTION",
            ".SH COMMANDS",
            ".SH EXIT STATUS",
            ".SH ENVIRONMENT",
            ".SH FILES",
            ".SH EXAMPLES",
            ".SH VERSION"
        ]
    );
    assert_eq!(page.matches(".ds Aq '").count(), 1, "{page}");
    for sub in ["migrate", "rules", "explain", "completions", "man", "clean"] {
        assert!(page.contains(&format!(".SS \"acc2omp {sub}\"")), "{sub}");
    }
    assert!(page.contains("require\\-clang") && page.contains("ACC2OMP_CACHE_DIR"));
    let o = run(d.path(), &["explain", "implicit-pointr"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("did you mean 'implicit-pointer'?"),
        "{}",
        stderr(&o)
    );
    let o = run(d.path(), &["explain", "acc2omp-implicit-pointer"]);
    assert_eq!(o.status.code(), Some(0));
    // `rules` aligns its columns.
    let o = run(d.path(), &["rules"]);
    let cols: std::collections::BTreeSet<usize> =
        stdout(&o).lines().map(|l| l.find("  ").unwrap()).collect();
    assert!(!cols.is_empty());
    let starts: std::collections::BTreeSet<usize> = stdout(&o)
        .lines()
        .map(|l| {
            let id = l.split_whitespace().next().unwrap();
            id.len() + l[id.len()..].len() - l[id.len()..].trim_start().len()
        })
        .collect();
    assert_eq!(starts.len(), 1, "{}", stdout(&o));
}

#[test]
fn summary_says_when_the_offloading_runtime_is_needed() {
    let d = tempfile::tempdir().unwrap();
    fs::write(
        d.path().join("m.c"),
        // acc_malloc goes through a helper with a host fallback; acc_map_data still calls
        // omp_target_associate_ptr itself.
        "#include <openacc.h>\nvoid f(double *h, void *d, int n) { acc_map_data(h, d, n); }\n",
    )
    .unwrap();
    fs::write(
        d.path().join("q.c"),
        "#include <openacc.h>\nint g(void) { return acc_get_num_devices(acc_device_not_host); }\n",
    )
    .unwrap();
    let o = run(d.path(), &["migrate", "."]);
    let err = stderr(&o);
    assert!(
        err.contains("1 file(s) now call OpenMP device-memory routines (omp_target_*)"),
        "{err}"
    );
    assert!(
        err.contains("clang -fopenmp alone cannot link them"),
        "{err}"
    );
    // Once migrated, nothing is emitted again and nothing is said.
    let o = run(d.path(), &["migrate", ".", "--write"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(d.path(), &["migrate", "."]);
    assert!(!stderr(&o).contains("device-memory"), "{}", stderr(&o));
}

/// `--emit`: each mode writes its form, `--check`/`--diff` judge against it, a mode run on
/// its own output changes nothing, and `--emit omp` finishes a dual file; acc2omp.toml sets it.
#[test]
fn emit_modes_end_to_end() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("a.c");
    fs::write(&file, ACC).unwrap();
    let omp = {
        let o = run(d.path(), &["migrate", "a.c", "--diff", "-q"]);
        assert_eq!(o.status.code(), Some(1));
        let o = run(d.path(), &["migrate", "a.c", "--write", "-q"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let t = fs::read_to_string(&file).unwrap();
        fs::write(&file, ACC).unwrap();
        t
    };
    for (mode, marker) in [
        (
            "dual",
            "#ifdef _OPENACC // acc2omp\n  #pragma acc parallel loop",
        ),
        (
            "omp-acc",
            "  // acc2omp was: #pragma acc parallel loop copy(a[0:n])\n",
        ),
        ("acc-omp", "  // acc2omp: #pragma omp target teams"),
    ] {
        fs::write(&file, ACC).unwrap();
        let o = run(
            d.path(),
            &["migrate", "a.c", "--emit", mode, "--diff", "-q"],
        );
        assert_eq!(o.status.code(), Some(1), "{mode}: {}", stderr(&o));
        assert!(stdout(&o).contains("acc2omp"), "{mode}: {}", stdout(&o));
        let o = run(
            d.path(),
            &["migrate", "a.c", "--emit", mode, "--write", "-q"],
        );
        assert_eq!(o.status.code(), Some(0), "{mode}: {}", stderr(&o));
        let written = fs::read_to_string(&file).unwrap();
        assert!(written.contains(marker), "{mode}:\n{written}");
        for flag in ["--check", "--diff"] {
            let o = run(d.path(), &["migrate", "a.c", "--emit", mode, flag, "-q"]);
            assert_eq!(o.status.code(), Some(0), "{mode} {flag}: {}", stdout(&o));
            assert!(stdout(&o).is_empty(), "{mode} {flag}: {}", stdout(&o));
        }
        let o = run(d.path(), &["migrate", "a.c", "--check", "-q"]);
        assert_eq!(o.status.code(), Some(1), "{mode}: --emit omp has work left");
        let o = run(d.path(), &["migrate", "a.c", "--write", "-q"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(fs::read_to_string(&file).unwrap(), omp, "{mode} then omp");
    }
    // The configuration file sets the mode; the command line wins.
    fs::write(&file, ACC).unwrap();
    fs::write(d.path().join("acc2omp.toml"), "emit = \"dual\"\n").unwrap();
    let o = run(d.path(), &["migrate", "a.c", "--write", "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        fs::read_to_string(&file)
            .unwrap()
            .starts_with("void f(int n, double *a) {\n#ifdef _OPENACC // acc2omp\n")
    );
    let o = run(
        d.path(),
        &["migrate", "a.c", "--emit", "omp", "--write", "-q"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(fs::read_to_string(&file).unwrap(), omp);
    fs::write(d.path().join("acc2omp.toml"), "emit = \"both\"\n").unwrap();
    let o = run(d.path(), &["migrate", "a.c", "--check"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("emit"), "{}", stderr(&o));
}

/// Loops nested thousands deep in `kernels` regions (whose loops the dependence test reads)
/// are reported as not analyzed: no crash, and every file of the run is written.
#[test]
fn deeply_nested_kernels_loops_do_not_stop_the_run() {
    let d = tempfile::tempdir().unwrap();
    let head = "void f(int n, float *a) {\n#pragma acc kernels copy(a[0:n])\n";
    let lp = |k: usize| format!("for (int i{k} = 0; i{k} < n; i{k}++)");
    let cases = [
        (
            "parentheses.c",
            format!(
                "{head}{} a[i0] = {}a[i0]{};\n}}\n",
                lp(0),
                "(".repeat(3000),
                ")".repeat(3000)
            ),
        ),
        (
            "braced.c",
            format!(
                "{head}{{\n{}\na[0] += 1;\n{}\n}}\n}}\n",
                (0..3000).map(|k| lp(k) + " {").collect::<String>(),
                "}".repeat(3000)
            ),
        ),
        (
            "unbraced.c",
            format!(
                "{head}{}\na[0] += 1;\n}}\n",
                (0..3000).map(lp).collect::<Vec<_>>().join("\n")
            ),
        ),
        (
            "kernels_loop.c",
            format!(
                "{}{}\na[0] += 1;\n{}\n}}\n",
                head.replace("kernels", "kernels loop"),
                (0..1000).map(|k| lp(k) + " {").collect::<String>(),
                "}".repeat(1000)
            ),
        ),
        (
            "negations.c",
            format!(
                "{}{} a[i0] = {}a[i0];\n}}\n",
                head.replace("kernels", "kernels loop"),
                lp(0),
                "-".repeat(100_000)
            ),
        ),
        (
            "sum.c",
            format!(
                "{}{} a[i0] = {}1;\n}}\n",
                head.replace("kernels", "kernels loop"),
                lp(0),
                "1 + ".repeat(20_000)
            ),
        ),
    ];
    for (name, text) in &cases {
        fs::write(d.path().join(name), text).unwrap();
    }
    fs::write(d.path().join("good.c"), ACC).unwrap();
    let o = run(d.path(), &["migrate", ".", "--write", "--no-clang"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    for (name, _) in &cases {
        let out = fs::read_to_string(d.path().join(name)).unwrap();
        assert!(out.contains("#pragma omp target"), "{name} not translated");
        assert!(
            err.contains(&format!("{name}:2:1: warning: loop at line ")),
            "{name}: {err}"
        );
    }
    assert_eq!(
        err.matches("the loop is nested too deeply").count(),
        6,
        "{err}"
    );
    assert!(
        fs::read_to_string(d.path().join("good.c"))
            .unwrap()
            .contains("omp target")
    );
}

/// Fortran goes through its own front end (on stdin with `--stdin-filename`): its
/// directives become `!$omp` lines in the file's form and its runtime API the Fortran
/// binding of OpenMP's (C's rules never write C into it).
#[test]
fn fortran_on_stdin_is_translated_by_its_front_end() {
    const F: &str = "program p\n  use openacc\n  real :: a(10)\n  !$acc parallel loop &\n  !$acc& copy(a)\n  do i = 1, 10\n    a(i) = i\n  end do\n  if (acc_on_device(acc_device_host)) stop 1\nend program\n";
    let mut c = Command::new(env!("CARGO_BIN_EXE_acc2omp"))
        .args(["migrate", "-", "--stdin-filename", "x.f90"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    c.stdin.take().unwrap().write_all(F.as_bytes()).unwrap();
    let o = c.wait_with_output().unwrap();
    assert!(
        stdout(&o).contains(
            "  !$omp target teams distribute parallel do simd map(tofrom: a) private(i)\n  do i = 1, 10\n"
        ),
        "{}",
        stdout(&o)
    );
    assert!(!stdout(&o).contains("!$acc"), "{}", stdout(&o));
    // The runtime API too, with the Fortran binding.
    assert!(stdout(&o).contains("  use omp_lib\n"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("if (omp_is_initial_device()) stop 1"),
        "{}",
        stdout(&o)
    );
    let fixed = "      PROGRAM P\nC$ACC KERNELS\n      X = 1\nC$ACC END KERNELS\n      END\n";
    let mut c = Command::new(env!("CARGO_BIN_EXE_acc2omp"))
        .args(["migrate", "-", "--stdin-filename", "y.F"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(fixed.as_bytes()).unwrap();
    let o = c.wait_with_output().unwrap();
    assert_eq!(
        stdout(&o),
        "      PROGRAM P\nC$OMP target map(tofrom: X)\n      X = 1\nC$OMP end target\n      END\n",
        "{}",
        stderr(&o)
    );
}

/// A reader that closes its end early: `acc2omp rules | head -1`. The tool ends quietly, as
/// git does (killed by SIGPIPE, or done before the reader closed): no panic, no message.
#[test]
fn output_to_a_closed_pipe_ends_quietly() {
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::process::ExitStatusExt;
    let d = tempfile::tempdir().unwrap();
    // A diff far larger than a pipe's buffer (64 KiB).
    let big: String = (0..3000)
        .map(|i| format!("void f{i}(int n, double *a) {{\n  #pragma acc parallel loop copy(a[0:n])\n  for (int i = 0; i < n; i++) a[i] += 1;\n}}\n"))
        .collect();
    fs::write(d.path().join("big.c"), big).unwrap();
    let commands: [&[&str]; 5] = [
        &["rules"],
        &["completions", "zsh"],
        &["explain", "implicit-pointer"],
        &["man"],
        &["migrate", "big.c", "--diff", "--no-clang", "--no-cache"],
    ];
    let quiet = |what: String, o: Output| {
        let by_sigpipe = o.status.signal() == Some(libc::SIGPIPE);
        let done = matches!(o.status.code(), Some(0 | 1));
        assert!(by_sigpipe || done, "{what}: {:?}", o.status);
        assert!(o.stderr.is_empty(), "{what}: {}", stderr(&o));
    };
    for args in commands {
        for round in 0..20 {
            // The reader is gone before the tool writes.
            let mut fds = [0; 2];
            assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
            let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
            drop(r);
            let o = Command::new(env!("CARGO_BIN_EXE_acc2omp"))
                .current_dir(d.path())
                .args(args)
                .stdout(Stdio::from(w))
                .stderr(Stdio::piped())
                .output()
                .unwrap();
            if !args.contains(&"migrate") {
                assert_eq!(o.status.signal(), Some(libc::SIGPIPE), "{args:?}");
            }
            quiet(format!("{args:?} closed before, round {round}"), o);
            // The reader takes a few bytes and goes (`| head -c 100`): the race of the issue.
            let mut c = Command::new(env!("CARGO_BIN_EXE_acc2omp"))
                .current_dir(d.path())
                .args(args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut out = c.stdout.take().unwrap();
            let mut some = [0u8; 100];
            let _ = out.read(&mut some);
            drop(out);
            quiet(
                format!("{args:?} closed after, round {round}"),
                c.wait_with_output().unwrap(),
            );
        }
    }
}

/// `NOLINT(unknown-clause)` names a rule as `--select` does; a `NOLINTBEGIN` left open is an
/// error at its comment, as clang-tidy reports it, and its region hides nothing.
#[test]
fn nolint_short_ids_and_unmatched_regions() {
    let d = tempfile::tempdir().unwrap();
    let src = "void k(int n, float *z) {\n\
               #pragma acc parallel loop bogus(z) // NOLINT(unknown-clause)\n\
               for (int i = 0; i < n; i++) z[i] = 1;\n\
               /* NOLINTBEGIN(unknown-clause) */\n\
               #pragma acc parallel loop bogus(z)\n\
               for (int i = 0; i < n; i++) z[i] = 2;\n}\n";
    fs::write(d.path().join("k.c"), src).unwrap();
    let o = run(d.path(), &["migrate", "k.c", "--no-clang", "--no-cache"]);
    let err = stderr(&o);
    assert_eq!(
        rules_reported(&o),
        ["nolint-unmatched", "unknown-clause"],
        "{err}"
    );
    assert!(
        err.contains("k.c:4:4: error: unmatched 'NOLINTBEGIN' comment without a subsequent 'NOLINTEND' comment"),
        "{err}"
    );
    assert!(err.contains("k.c:5:"), "{err}");
    assert!(err.contains("1 suppressed by NOLINT"), "{err}");
    assert_eq!(o.status.code(), Some(1));
    // Closed, the region hides the second error; an extra NOLINTEND is reported.
    let closed = format!("{src}// NOLINTEND(unknown-clause)\n");
    fs::write(d.path().join("k.c"), &closed).unwrap();
    let o = run(d.path(), &["migrate", "k.c", "--no-clang", "--no-cache"]);
    assert!(rules_reported(&o).is_empty(), "{}", stderr(&o));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    fs::write(d.path().join("k.c"), format!("{closed}// NOLINTEND\n")).unwrap();
    let o = run(d.path(), &["migrate", "k.c", "--no-clang", "--no-cache"]);
    let err = stderr(&o);
    assert!(
        err.contains(
            "k.c:9:4: error: unmatched 'NOLINTEND' comment without a previous 'NOLINTBEGIN' comment"
        ),
        "{err}"
    );
    assert_eq!(
        rules_reported(&o),
        ["nolint-unmatched", "unknown-clause"],
        "{err}"
    );
}

/// Lines a message names are lines of the file its position is in, also when that file is
/// acc2omp's own `--emit` output (read back as the original, whose lines differ).
#[test]
fn lines_named_in_messages_are_the_files_lines_in_every_emit_mode() {
    let src = "void f(int n, double *y) {\n  #pragma acc parallel loop copy(y[0:n])\n  for (int i = 0; i < n; i++) y[i] = 1;\n  #pragma acc kernels copy(y[0:n])\n  for (int i = 1; i < n; i++)\n    y[i] += y[i - 1];\n}\n";
    let d = tempfile::tempdir().unwrap();
    let number_after = |text: &str, key: &str| -> usize {
        let at = text.find(key).unwrap_or_else(|| panic!("{key} in {text}")) + key.len();
        let digits: String = text[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().unwrap()
    };
    for mode in ["omp", "dual", "omp-acc", "acc-omp"] {
        fs::write(d.path().join("s.c"), src).unwrap();
        let args = ["migrate", "s.c", "--no-clang", "--no-cache", "--emit", mode];
        let mut write = args.to_vec();
        write.push("--write");
        // The original, then the file as the mode wrote it.
        for second in [false, true] {
            let file = fs::read_to_string(d.path().join("s.c")).unwrap();
            let err = stderr(&run(d.path(), if second { &args } else { &write }));
            if mode == "omp" && second {
                // Translated: nothing left to report.
                assert!(!err.contains("[kernels-sequential]"), "{err}");
                continue;
            }
            let lines: Vec<&str> = file.lines().collect();
            let loop_line = number_after(&err, "loop at line ");
            let read_line = number_after(&err, "another iteration (line ");
            assert!(
                lines[loop_line - 1].contains("for (int i = 1;"),
                "{mode}: {err}\n{file}"
            );
            assert!(
                lines[read_line - 1].contains("y[i] += y[i - 1]"),
                "{mode}: {err}\n{file}"
            );
        }
    }
}

#[test]
fn cuda_headers_and_fortran_are_walked_and_fortran_is_not_read_as_c() {
    let d = tempfile::tempdir().unwrap();
    let acc = "void f(int n, double *a) {\n#pragma acc parallel loop copy(a[0:n])\n  for (int i = 0; i < n; i++) a[i] += 1;\n}\n";
    fs::write(d.path().join("k.cuh"), acc).unwrap();
    // Fortran is walked and read with its own front end, never as C.
    let free = "! #pragma acc parallel loop\nprogram p\n!$acc parallel loop\ndo i = 1, 3\nend do\nend program\n";
    let fixed = "! #pragma acc parallel loop\n      program p\n!$acc parallel loop\n      do i = 1, 3\n      end do\n      end program\n";
    fs::write(d.path().join("p.f90"), free).unwrap();
    fs::write(d.path().join("q.F"), fixed).unwrap();
    let o = run(
        d.path(),
        &["migrate", "--check", "--no-clang", "--no-cache"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    let mut listed: Vec<&str> = out.lines().collect();
    listed.sort();
    assert_eq!(listed, ["k.cuh", "p.f90", "q.F"], "{}", stderr(&o));
    // As pre-commit names them.
    let args = [
        "migrate",
        "--write",
        "-q",
        "--no-clang",
        "--no-cache",
        "p.f90",
        "q.F",
    ];
    let o = run(d.path(), &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for name in ["p.f90", "q.F"] {
        let text = fs::read_to_string(d.path().join(name)).unwrap();
        assert!(
            text.contains("!$omp target teams distribute parallel do") && !text.contains("!$acc"),
            "{name}: {text}"
        );
        assert!(text.starts_with("! #pragma acc parallel loop\n"), "{text}");
    }
}

/// Fortran the front end cannot pair (a generated file with unclosed loops) in a file without
/// OpenACC gives no structure warning: there is no directive it could leave unchanged. CUDA
/// Fortran's `attributes(global)` subprograms beside OpenACC pair with their `end`.
#[test]
fn fortran_without_openacc_has_no_structure_warnings() {
    let d = tempfile::tempdir().unwrap();
    let broken = "subroutine s(n, a)\n  integer :: n, i, j\n  real :: a(n)\n    !$omp do\n    do i = 1, n\n    do j = 1, n\n      a(i) = 0\n    end do\nend subroutine\n";
    fs::write(d.path().join("broken.f90"), broken).unwrap();
    let cuf = "module k\ncontains\n  attributes(global) subroutine add(n, a)\n    integer, value :: n\n    real :: a(n)\n  end subroutine add\n  subroutine host(n, a)\n    integer :: n, i\n    real :: a(n)\n    !$acc parallel loop copy(a)\n    do i = 1, n\n      a(i) = a(i) + 1\n    end do\n  end subroutine host\nend module k\n";
    fs::write(d.path().join("cuf.f90"), cuf).unwrap();
    let o = run(d.path(), &["migrate", ".", "--diff"]);
    let err = stderr(&o);
    assert!(!err.contains("broken.f90"), "{err}");
    assert!(!err.contains("not-translated"), "{err}");
    assert!(
        stdout(&o).contains("+    !$omp target teams distribute parallel do"),
        "{}\n{err}",
        stdout(&o)
    );
    assert!(err.contains("0 warning(s)"), "{err}");
}
