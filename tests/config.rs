//! Rules files (`--rules`) and `acc2omp.toml` end to end: overrides change translations and
//! severities, configuration discovery, precedence, and positioned errors.

mod common;

use common::{run, run_with_input, stderr, stdout};
use std::fs;
use std::path::Path;

/// A runtime call (`runtime-memory`, not reported), a `present` clause (`present-unchecked`,
/// a note) and a parallel loop (mapped by the profile).
const SRC: &str = "void f(int n, double *a) {\n  double *d = (double *)acc_malloc(n);\n  #pragma acc parallel loop present(a[0:n])\n  for (int i = 0; i < n; i++) a[i] += 1;\n  acc_free(d);\n}\n";

/// `root/src/deep/a.c` holding [`SRC`].
fn project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    fs::create_dir_all(d.path().join("src/deep")).unwrap();
    fs::write(d.path().join("src/deep/a.c"), SRC).unwrap();
    d
}

/// The translated text of `a.c` (from standard output, migrating standard input).
fn translate(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let mut all = vec!["migrate", "-", "--no-clang"];
    all.extend(args);
    let o = run_with_input(dir, &all, SRC);
    (o.status.code(), stdout(&o), stderr(&o))
}

#[test]
fn a_rules_file_changes_what_a_runtime_call_becomes() {
    let d = project();
    let (code, out, err) = translate(d.path(), &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("(double *)acc2omp_target_alloc(n, omp_get_default_device());"),
        "{out}"
    );
    fs::write(
        d.path().join("r.toml"),
        "[[routine]]\nname = \"acc_malloc\"\nomp = \"my_alloc({0})\"\n",
    )
    .unwrap();
    let (code, out, err) = translate(d.path(), &["--rules", "r.toml"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("(double *)my_alloc(n);"), "{out}");
    // Only what the entry gives changes.
    assert!(
        out.contains("acc2omp_target_free(d, omp_get_default_device());"),
        "{out}"
    );
}

#[test]
fn a_rules_file_changes_severities_and_the_exit_status() {
    let d = project();
    let note = "note: 'present' becomes 'map(alloc: ...)'";
    let (code, _, err) = translate(d.path(), &[]);
    assert_eq!(code, Some(0));
    assert!(err.contains(note), "{err}");
    fs::write(
        d.path().join("error.toml"),
        "[[rule]]\nid = \"present-unchecked\"\nseverity = \"error\"\n",
    )
    .unwrap();
    let (code, _, err) = translate(d.path(), &["--rules", "error.toml"]);
    assert_eq!(code, Some(1), "an error is reported: {err}");
    assert!(
        err.contains("<stdin>:3:29: error: 'present' becomes 'map(alloc: ...)'"),
        "{err}"
    );
    assert!(err.contains("1 error(s)"), "{err}");
    fs::write(
        d.path().join("off.toml"),
        "[[rule]]\nid = \"present-unchecked\"\nseverity = \"off\"\n",
    )
    .unwrap();
    let (code, out, err) = translate(d.path(), &["--rules", "off.toml"]);
    assert_eq!(code, Some(0));
    assert!(!err.contains("present-unchecked"), "{err}");
    assert!(
        out.contains("map(alloc: a[0:n])"),
        "the translation is the same: {out}"
    );
    // An error made a warning no longer fails `--check` on a file that does not change.
    fs::write(d.path().join("bad.c"), "#pragma acc bogus\n").unwrap();
    assert_eq!(
        run(d.path(), &["migrate", "bad.c", "--check"])
            .status
            .code(),
        Some(1)
    );
    fs::write(
        d.path().join("warn.toml"),
        "[[rule]]\nid = \"unknown-directive\"\nseverity = \"warning\"\n",
    )
    .unwrap();
    // (Written once: the guard that stops OpenMP builds of the directive left unchanged.)
    let o = run(
        d.path(),
        &["migrate", "bad.c", "--write", "--rules", "warn.toml"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(
        d.path(),
        &["migrate", "bad.c", "--check", "--rules", "warn.toml"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("bad.c:4:13: warning: unknown OpenACC directive 'bogus'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_configuration_is_found_from_a_nested_directory() {
    let d = project();
    fs::write(
        d.path().join("acc2omp.toml"),
        "# project defaults\nprofile = \"clacc\"\nrules = \"tools/acc-rules.toml\"\n\n[[rule]]\nid = \"present-unchecked\"\nseverity = \"warning\"\n",
    )
    .unwrap();
    fs::create_dir_all(d.path().join("tools")).unwrap();
    fs::write(
        d.path().join("tools/acc-rules.toml"),
        "[[routine]]\nname = \"acc_free\"\nomp = \"my_free({0})\"\n",
    )
    .unwrap();
    let deep = d.path().join("src/deep");
    let o = run(&deep, &["migrate", "a.c", "--diff", "--no-clang", "-v"]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        out.contains("+  #pragma omp target teams distribute map(alloc: a[0:n])\n"),
        "clacc profile: {out}"
    );
    assert!(
        out.contains("+  my_free(d);"),
        "rules = …, relative to the configuration: {out}"
    );
    assert!(
        err.contains("warning: 'present' becomes"),
        "inline rule: {err}"
    );
    let config = d.path().canonicalize().unwrap().join("acc2omp.toml");
    assert!(
        err.contains(&format!("acc2omp: config: {}\n", config.display())),
        "{err}"
    );
    assert!(
        err.contains("acc-rules.toml (1 routine(s) changed)"),
        "{err}"
    );
    assert!(err.contains("[profile clacc]"), "{err}");
    // Found from the inputs, not the current directory.
    let elsewhere = tempfile::tempdir().unwrap();
    let a = deep.join("a.c");
    let o = run(
        elsewhere.path(),
        &["migrate", a.to_str().unwrap(), "--no-clang"],
    );
    assert!(stderr(&o).contains("[profile clacc]"), "{}", stderr(&o));
    // Standard input: the current directory.
    let (_, out, _) = translate(&deep, &[]);
    assert!(out.contains("omp target teams distribute map("), "{out}");
    let (_, out, _) = translate(elsewhere.path(), &[]);
    assert!(out.contains("distribute parallel for simd"), "{out}");
    // …or the directory of --stdin-filename.
    let (_, out, _) = translate(elsewhere.path(), &["--stdin-filename", a.to_str().unwrap()]);
    assert!(out.contains("omp target teams distribute map("), "{out}");
    // --no-config and --config.
    let o = run(&deep, &["migrate", "a.c", "--no-clang", "--no-config"]);
    assert!(stderr(&o).contains("[profile default]"), "{}", stderr(&o));
    fs::write(elsewhere.path().join("other.toml"), "profile = \"loop\"\n").unwrap();
    let other = elsewhere.path().join("other.toml");
    let o = run(
        &deep,
        &[
            "migrate",
            "a.c",
            "--no-clang",
            "--config",
            other.to_str().unwrap(),
        ],
    );
    assert!(stderr(&o).contains("[profile loop]"), "{}", stderr(&o));
}

#[test]
fn command_line_flags_win_over_the_configuration() {
    let d = project();
    fs::write(
        d.path().join("acc2omp.toml"),
        "profile = \"clacc\"\nomp-version = 5.1\nquiet = true\n",
    )
    .unwrap();
    let o = run(
        d.path(),
        &[
            "migrate",
            "src",
            "--diff",
            "--no-clang",
            "--profile",
            "loop",
        ],
    );
    let out = stdout(&o);
    assert!(
        out.contains("+  #pragma omp target teams loop map(present, alloc: a[0:n])\n"),
        "{out}"
    );
    // quiet = true from the file: no summary, no note.
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    let o = run(
        d.path(),
        &[
            "migrate",
            "src",
            "--diff",
            "--no-clang",
            "--omp-version",
            "5.0",
        ],
    );
    assert!(
        stdout(&o).contains("target teams distribute map(alloc: a[0:n])\n"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn bad_rules_files_are_positioned_errors_with_status_two() {
    let d = project();
    fs::write(
        d.path().join("r.toml"),
        "[[rule]]\nid = \"present-unchecked\"\nseverty = \"error\"\n\n[[routine]]\nname = \"acc_malloc\"\nargs = \"two\"\n",
    )
    .unwrap();
    let o = run(
        d.path(),
        &["migrate", "src", "--write", "--rules", "r.toml"],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.starts_with(
            "r.toml:3:1: error: unknown field `severty`, expected one of `id`, `severity`"
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "\nr.toml:7:8: error: invalid type: string \"two\", expected usize [rules-file]\n"
        ),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(d.path().join("src/deep/a.c")).unwrap(),
        SRC,
        "nothing is written"
    );
    // Not TOML at all.
    fs::write(d.path().join("r.toml"), "[[rule]\n").unwrap();
    let o = run(d.path(), &["migrate", "src", "--rules", "r.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("r.toml:1:"), "{}", stderr(&o));
    assert!(
        stderr(&o).trim_end().ends_with("[rules-file]"),
        "{}",
        stderr(&o)
    );
    // A rule id that names nothing.
    fs::write(
        d.path().join("r.toml"),
        "[[rule]]\nid = \"present-unchecke\"\nseverity = \"off\"\n",
    )
    .unwrap();
    let o = run(d.path(), &["rules", "--rules", "r.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "r.toml:2:6: error: unknown rule 'present-unchecke' (did you mean 'present-unchecked'?)"
        ),
        "{}",
        stderr(&o)
    );
    // A missing file.
    let o = run(d.path(), &["migrate", "src", "--rules", "missing.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("missing.toml: error: cannot read rules file:"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bad_configurations_are_positioned_errors_with_status_two() {
    let d = project();
    fs::write(
        d.path().join("acc2omp.toml"),
        "profile = \"fast\"\nassume_independent = true\nrules = \"nope.toml\"\n",
    )
    .unwrap();
    let o = run(&d.path().join("src"), &["migrate", "deep"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    let config = d.path().canonicalize().unwrap().join("acc2omp.toml");
    let config = config.display();
    assert!(err.contains(&format!("{config}:1:11: error: `profile`: invalid value 'fast' for '--profile <PROFILE>' [possible values: default, clacc, loop] [config-file]\n")), "{err}");
    assert!(err.contains(&format!("{config}:2:1: error: unknown key `assume_independent` (did you mean 'assume-independent'?)")), "{err}");
    fs::write(d.path().join("acc2omp.toml"), "\nrules = \"nope.toml\"\n").unwrap();
    let o = run(d.path(), &["migrate", "src"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("acc2omp.toml:2:9: error: cannot read rules file nope.toml:"),
        "{}",
        stderr(&o)
    );
    // `rules` and `explain` read it too, from the current directory.
    assert_eq!(run(d.path(), &["rules"]).status.code(), Some(2));
    assert_eq!(
        run(d.path(), &["rules", "--no-config"]).status.code(),
        Some(0)
    );
}

#[test]
fn rules_and_explain_show_the_tables_in_effect() {
    let d = tempfile::tempdir().unwrap();
    fs::write(
        d.path().join("acc2omp.toml"),
        "[[rule]]\nid = \"simd-atomic\"\nseverity = \"error\"\nsummary = \"Our own summary.\"\n",
    )
    .unwrap();
    let o = run(d.path(), &["rules"]);
    let line = stdout(&o)
        .lines()
        .find(|l| l.starts_with("simd-atomic "))
        .unwrap()
        .to_string();
    assert!(
        line.contains(" error ") && line.ends_with("Our own summary."),
        "{line}"
    );
    let o = run(d.path(), &["explain", "simd-atomic"]);
    assert!(
        stdout(&o).starts_with("simd-atomic (error)\n\nOur own summary."),
        "{}",
        stdout(&o)
    );
    let o = run(d.path(), &["explain", "simd-atomic", "--no-config"]);
    assert!(
        stdout(&o).starts_with("simd-atomic (warning)\n"),
        "{}",
        stdout(&o)
    );
    fs::write(
        d.path().join("r.toml"),
        "[[rule]]\nid = \"simd-atomic\"\nseverity = \"off\"\n",
    )
    .unwrap();
    let o = run(d.path(), &["explain", "simd-atomic", "--rules", "r.toml"]);
    assert!(
        stdout(&o).starts_with("simd-atomic (off)\n\nOur own summary."),
        "--rules applies after the configuration: {}",
        stdout(&o)
    );
}
