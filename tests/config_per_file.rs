//! Configuration that follows the file: each file is translated with its nearest
//! `acc2omp.toml`, whatever else is on the command line.

mod common;

use common::{run, run_with_input, stderr, stdout};
use std::fs;
use std::path::Path;

/// A runtime call, a `present` clause (`present-unchecked` note at 3:29) and a parallel loop
/// (mapped by the profile).
const SRC: &str = "void f(int n, double *a) {\n  double *d = (double *)acc_malloc(n);\n  #pragma acc parallel loop present(a[0:n])\n  for (int i = 0; i < n; i++) a[i] += 1;\n  acc_free(d);\n}\n";

const CLACC: &str = "+  #pragma omp target teams distribute map(alloc: a[0:n])\n";
const LOOP: &str = "+  #pragma omp target teams loop map(alloc: a[0:n])\n";
const DEFAULT: &str = "distribute parallel for simd";

/// root/acc2omp.toml (clacc) with a/x.c; b/acc2omp.toml (loop, its own rules file, the
/// `present-unchecked` note ignored) with b/y.c and b/c/z.c.
fn project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    for dir in ["a", "b/c", "b/tools"] {
        fs::create_dir_all(p.join(dir)).unwrap();
    }
    fs::write(p.join("acc2omp.toml"), "profile = \"clacc\"\n").unwrap();
    fs::write(
        p.join("b/acc2omp.toml"),
        "profile = \"loop\"\nrules = \"tools/r.toml\"\nignore = [\"present-unchecked\"]\n",
    )
    .unwrap();
    fs::write(
        p.join("b/tools/r.toml"),
        "[[routine]]\nname = \"acc_malloc\"\nomp = \"my_alloc({0})\"\n",
    )
    .unwrap();
    for f in ["a/x.c", "b/y.c", "b/c/z.c"] {
        fs::write(p.join(f), SRC).unwrap();
    }
    d
}

/// The part of a unified diff about file `name`.
fn diff_of(out: &str, name: &str) -> String {
    let head = format!("--- a/{name}\n");
    let Some(at) = out.find(&head) else {
        return String::new();
    };
    let rest = &out[at + head.len()..];
    let end = rest.find("\n--- a/").map_or(rest.len(), |e| e + 1);
    rest[..end].to_string()
}

/// How a diff names a file outside the current directory: its absolute path without `/`.
fn absolute_name(p: &Path) -> String {
    let p = p.canonicalize().unwrap();
    p.to_str().unwrap().trim_start_matches('/').to_string()
}

fn migrate(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let mut all = vec!["migrate", "--diff", "--no-clang"];
    all.extend(args);
    let o = run(dir, &all);
    (o.status.code(), stdout(&o), stderr(&o))
}

#[test]
fn files_in_one_run_get_their_own_nearest_configuration() {
    let d = project();
    let (code, out, err) = migrate(d.path(), &["a/x.c", "b/y.c", "b/c/z.c"]);
    assert_eq!(code, Some(1), "{err}");
    let (x, y, z) = (
        diff_of(&out, "a/x.c"),
        diff_of(&out, "b/y.c"),
        diff_of(&out, "b/c/z.c"),
    );
    assert!(x.contains(CLACC), "root config: {x}");
    assert!(
        x.contains("omp_target_alloc(n, omp_get_default_device())"),
        "{x}"
    );
    assert!(y.contains(LOOP), "nested config: {y}");
    assert!(
        y.contains("+  double *d = (double *)my_alloc(n);"),
        "its rules file: {y}"
    );
    assert_eq!(z.replace("b/c/z.c", "b/y.c"), y, "from a parent directory");
    // Each file's rule selection: the note is ignored under b/ only.
    assert!(err.contains("a/x.c:3:29: note: 'present' becomes"), "{err}");
    assert!(!err.contains("b/y.c:3:29"), "{err}");
    assert!(err.contains("[profile clacc, loop]"), "{err}");
    // The migration report says which configuration the files had.
    let (_, _, err) = migrate(d.path(), &[".", "--report", "r.md"]);
    let report = fs::read_to_string(d.path().join("r.md")).unwrap_or_else(|e| panic!("{e}: {err}"));
    assert!(
        report.contains("| `acc2omp.toml` | `clacc` | 1 |\n"),
        "{report}"
    );
    assert!(
        report.contains("| `b/acc2omp.toml` | `loop` | 2 |\n"),
        "{report}"
    );
}

#[test]
fn a_file_translates_the_same_alone_in_a_batch_or_from_elsewhere() {
    let d = project();
    let (_, batch, _) = migrate(d.path(), &["."]);
    let (_, alone, _) = migrate(d.path(), &["b/y.c"]);
    let y = diff_of(&alone, "b/y.c");
    assert!(y.contains(LOOP), "{y}");
    assert_eq!(diff_of(&batch, "b/y.c"), y);
    let (_, pair, _) = migrate(d.path(), &["b/y.c", "a/x.c"]);
    assert_eq!(diff_of(&pair, "b/y.c"), y);
    assert_eq!(diff_of(&pair, "a/x.c"), diff_of(&batch, "a/x.c"));
    // From inside b/ and from outside the project.
    // (A file outside the current directory makes every name of the diff absolute.)
    let (_, inside, _) = migrate(&d.path().join("b"), &["y.c", "../a/x.c"]);
    let y_abs = absolute_name(&d.path().join("b/y.c"));
    assert_eq!(diff_of(&inside, &y_abs).replace(&y_abs, "b/y.c"), y);
    let x_abs = absolute_name(&d.path().join("a/x.c"));
    assert!(diff_of(&inside, &x_abs).contains(CLACC), "{inside}");
    let elsewhere = tempfile::tempdir().unwrap();
    let abs = d.path().join("b/y.c");
    let (_, out, _) = migrate(elsewhere.path(), &[abs.to_str().unwrap()]);
    assert!(out.contains(LOOP), "{out}");
    // Standard input: the directory of --stdin-filename, else the current directory.
    let stdin = |dir: &Path, args: &[&str]| {
        let mut all = vec!["migrate", "-", "--no-clang"];
        all.extend(args);
        stdout(&run_with_input(dir, &all, SRC))
    };
    let out = stdin(d.path(), &["--stdin-filename", "b/c/new.c"]);
    assert!(
        out.contains("#pragma omp target teams loop map(alloc: a[0:n])"),
        "{out}"
    );
    assert!(out.contains("my_alloc(n)"), "{out}");
    let out = stdin(d.path(), &[]);
    assert!(
        out.contains("#pragma omp target teams distribute map("),
        "{out}"
    );
    let out = stdin(&d.path().join("b"), &[]);
    assert!(out.contains("#pragma omp target teams loop map("), "{out}");
}

#[test]
fn the_command_line_and_config_flag_win_over_every_file_configuration() {
    let d = project();
    let (_, out, err) = migrate(d.path(), &[".", "--profile", "default"]);
    for f in ["a/x.c", "b/y.c"] {
        assert!(diff_of(&out, f).contains(DEFAULT), "{f}: {out}");
    }
    // The rules file and selection of b/ still apply: only the flag is the command line's.
    assert!(diff_of(&out, "b/y.c").contains("my_alloc(n)"), "{out}");
    assert!(err.contains("[profile default]"), "{err}");
    // --config FILE: one configuration for every file, nested ones ignored.
    fs::write(d.path().join("other.toml"), "profile = \"loop\"\n").unwrap();
    let (_, out, err) = migrate(d.path(), &[".", "--config", "other.toml", "-v"]);
    let (x, y) = (diff_of(&out, "a/x.c"), diff_of(&out, "b/y.c"));
    assert!(x.contains(LOOP) && y.contains(LOOP), "{out}");
    assert!(!y.contains("my_alloc"), "b/'s rules file is not read: {y}");
    assert!(err.contains("b/y.c: configuration other.toml\n"), "{err}");
    // --no-config: none.
    let (_, out, _) = migrate(d.path(), &[".", "--no-config"]);
    assert!(diff_of(&out, "b/y.c").contains(DEFAULT), "{out}");
}

#[test]
fn a_broken_nested_configuration_stops_only_its_files() {
    let d = project();
    fs::create_dir_all(d.path().join("bad")).unwrap();
    fs::write(d.path().join("bad/w.c"), SRC).unwrap();
    fs::write(
        d.path().join("bad/acc2omp.toml"),
        "# broken\nprofil = \"loop\"\n",
    )
    .unwrap();
    let (code, out, err) = migrate(d.path(), &["."]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("bad/acc2omp.toml:2:1: error: unknown key `profil` (did you mean 'profile'?)"),
        "positioned once: {err}"
    );
    assert_eq!(err.matches("unknown key `profil`").count(), 1, "{err}");
    assert!(
        err.contains("bad/w.c:1:1: error: not translated: its configuration bad/acc2omp.toml has errors [config-file]"),
        "{err}"
    );
    assert!(diff_of(&out, "bad/w.c").is_empty(), "{out}");
    assert!(
        diff_of(&out, "a/x.c").contains(CLACC),
        "the rest is done: {out}"
    );
    assert!(diff_of(&out, "b/y.c").contains(LOOP), "{out}");
    // --write leaves its files alone and writes the others.
    let (code, _, _) = migrate(d.path(), &[]);
    assert_eq!(code, Some(2));
    let o = run(d.path(), &["migrate", "--write", "--no-clang", "."]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(fs::read_to_string(d.path().join("bad/w.c")).unwrap(), SRC);
    assert_ne!(fs::read_to_string(d.path().join("b/y.c")).unwrap(), SRC);
    // A rules file it cannot read is its error too, positioned at `rules`.
    fs::write(d.path().join("bad/acc2omp.toml"), "rules = \"nope.toml\"\n").unwrap();
    let (code, _, err) = migrate(d.path(), &["bad", "a"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("bad/acc2omp.toml:1:9: error: cannot read rules file bad/nope.toml"),
        "{err}"
    );
    // The run's own configuration (the current directory's) broken: nothing is done.
    let o = run(
        &d.path().join("bad"),
        &["migrate", "--diff", "--no-clang", "../a"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
}

#[test]
fn options_of_the_whole_run_come_from_the_run_configuration() {
    let d = project();
    fs::write(
        d.path().join("b/acc2omp.toml"),
        "profile = \"loop\"\nquiet = true\n",
    )
    .unwrap();
    // From the root, b/'s `quiet` does not apply, and says so.
    let (code, _, err) = migrate(d.path(), &["b/y.c"]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("b/acc2omp.toml:2:1: warning: `quiet` applies to the whole run, so it is read only from the run's configuration (acc2omp.toml); it is ignored here [config-run-option]"),
        "{err}"
    );
    assert!(err.contains("acc2omp: 1 file(s)"), "not quiet: {err}");
    // From b/, it is the run's configuration.
    let (code, out, err) = migrate(&d.path().join("b"), &["y.c", "../a/x.c"]);
    assert_eq!(code, Some(1));
    assert!(err.is_empty(), "quiet: {err}");
    let x_abs = absolute_name(&d.path().join("a/x.c"));
    assert!(diff_of(&out, &x_abs).contains(CLACC), "{out}");
}

#[test]
fn each_configuration_is_read_once() {
    let d = project();
    for i in 0..20 {
        fs::write(d.path().join(format!("b/c/f{i}.c")), SRC).unwrap();
    }
    let (_, _, err) = migrate(d.path(), &[".", "-v"]);
    let nested = Path::new("b").join("acc2omp.toml");
    let line = format!("acc2omp: config: {}\n", nested.display());
    assert_eq!(err.matches(&line).count(), 1, "{err}");
    assert!(
        err.contains("b/c/f7.c: configuration b/acc2omp.toml\n"),
        "{err}"
    );
    assert!(err.contains("a/x.c: configuration acc2omp.toml\n"), "{err}");
}

#[test]
fn no_clang_follows_the_file() {
    if !common::libclang("a nested `no-clang = true`") {
        return;
    }
    let d = project();
    fs::write(
        d.path().join("b/acc2omp.toml"),
        "profile = \"loop\"\nno-clang = true\n",
    )
    .unwrap();
    let o = run(d.path(), &["migrate", "--diff", "a/x.c", "b/y.c", "-v"]);
    let err = stderr(&o);
    assert!(err.contains("a/x.c: analyzed with libclang"), "{err}");
    assert!(
        err.contains("b/y.c: analyzed with syntactic (--no-clang)"),
        "{err}"
    );
    // Syntax was asked for there: not counted as a fallback.
    assert!(!err.contains("translated from syntax alone"), "{err}");
}

/// `extend = "../acc2omp.toml"`: the nested configuration is its parent with its own keys
/// on top (options, rule selection, tables), as ruff's `extend`; without it, a parent's
/// `compile-commands` lost this way is noted.
#[test]
fn a_nested_configuration_extends_its_parent() {
    let d = project();
    let p = d.path();
    fs::create_dir_all(p.join("build")).unwrap();
    fs::write(p.join("build/compile_commands.json"), "[]").unwrap();
    fs::write(
        p.join("acc2omp.toml"),
        "profile = \"clacc\"\ncompile-commands = \"build\"\nignore = [\"present-unchecked\"]\n[[routine]]\nname = \"acc_free\"\nomp = \"my_free({0})\"\n",
    )
    .unwrap();
    // Not extending: its own keys only, and a note about the database it lost.
    let (_, out, err) = migrate(p, &["a/x.c", "b/y.c", "-v"]);
    assert!(
        err.contains("b/acc2omp.toml:1:1: note: this configuration replaces acc2omp.toml, whose `compile-commands` its files therefore do not get")
            && err.contains("add `extend = \"../acc2omp.toml\"`"),
        "{err}"
    );
    assert!(
        diff_of(&out, "b/y.c").contains("omp_target_free(d,"),
        "{out}"
    );
    assert!(diff_of(&out, "a/x.c").contains("my_free(d)"), "{out}");
    // Extending: the parent's tables, its selection and database, the own profile.
    fs::write(
        p.join("b/acc2omp.toml"),
        "extend = \"../acc2omp.toml\"\nprofile = \"loop\"\nrules = \"tools/r.toml\"\n",
    )
    .unwrap();
    let (code, out, err) = migrate(p, &["a/x.c", "b/y.c", "-v"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(!err.contains("config-extend"), "{err}");
    assert!(
        err.contains("config: b/acc2omp.toml (extends acc2omp.toml)"),
        "{err}"
    );
    let y = diff_of(&out, "b/y.c");
    assert!(y.contains(LOOP), "own key wins: {y}");
    assert!(y.contains("my_free(d)"), "parent's table: {y}");
    assert!(y.contains("my_alloc(n)"), "own rules file: {y}");
    assert!(!err.contains("b/y.c:3:29"), "parent's ignore: {err}");
    assert!(err.contains("[profile clacc, loop]"), "{err}");
    // A cycle, and a missing file, are errors at the key.
    fs::write(p.join("acc2omp.toml"), "extend = \"b/acc2omp.toml\"\n").unwrap();
    let (code, _, err) = migrate(p, &["b/y.c"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("`extend` makes a cycle"), "{err}");
    fs::write(p.join("b/acc2omp.toml"), "extend = \"nowhere.toml\"\n").unwrap();
    let (code, _, err) = migrate(p, &["b/y.c"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("b/acc2omp.toml:1:10: error: the configuration it extends, b/nowhere.toml, has errors [config-file]"),
        "{err}"
    );
}

/// `exclude` and `extend-exclude` (gitignore patterns relative to their configuration)
/// leave paths out of a walk; a file named on the command line is left out only with
/// `--force-exclude`, as in ruff. `.ignore` files are honoured as `.gitignore` is.
#[test]
fn excluded_paths_are_left_out_of_walks() {
    let check = |dir: &Path, args: &[&str]| {
        let mut all = vec!["migrate", "--check", "--no-clang"];
        all.extend(args);
        let o = run(dir, &all);
        (o.status.code(), stdout(&o), stderr(&o))
    };
    let d = project();
    let p = d.path();
    for dir in ["gen", "b/legacy", "b/c/legacy", "vendor"] {
        fs::create_dir_all(p.join(dir)).unwrap();
        fs::write(p.join(dir).join("g.c"), SRC).unwrap();
    }
    fs::write(p.join("b/c/keep_gen.c"), SRC).unwrap();
    fs::write(p.join("b/c/x_gen.c"), SRC).unwrap();
    fs::write(
        p.join("acc2omp.toml"),
        "profile = \"clacc\"\nexclude = [\"gen\", \"*_gen.c\", \"!keep_gen.c\"]\n",
    )
    .unwrap();
    fs::write(
        p.join("b/acc2omp.toml"),
        "extend = \"../acc2omp.toml\"\nextend-exclude = [\"/legacy\"]\n",
    )
    .unwrap();
    fs::write(p.join(".ignore"), "vendor/\n").unwrap();
    let (_, out, err) = check(p, &[]);
    let files: Vec<&str> = out.lines().collect();
    assert_eq!(
        files,
        [
            "a/x.c",
            "b/c/keep_gen.c",
            "b/c/legacy/g.c",
            "b/c/z.c",
            "b/y.c"
        ],
        "{err}"
    );
    // Named: processed, unless --force-exclude.
    let (_, out, _) = check(p, &["gen/g.c", "b/legacy/g.c"]);
    assert_eq!(out, "b/legacy/g.c\ngen/g.c\n");
    let (code, out, err) = check(p, &["--force-exclude", "gen/g.c", "b/c/x_gen.c", "b/y.c"]);
    assert_eq!((code, out.as_str()), (Some(1), "b/y.c\n"), "{err}");
    // A nested configuration that sets `exclude` replaces the inherited patterns.
    fs::write(
        p.join("b/acc2omp.toml"),
        "extend = \"../acc2omp.toml\"\nexclude = []\n",
    )
    .unwrap();
    let (_, out, _) = check(p, &["b"]);
    assert!(
        out.contains("b/c/x_gen.c") && out.contains("b/legacy/g.c"),
        "{out}"
    );
    // A bad pattern is the configuration's error.
    fs::write(p.join("b/acc2omp.toml"), "exclude = [\"a/{b\"]\n").unwrap();
    let (code, _, err) = migrate(p, &["b/y.c"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("b/acc2omp.toml:1:11: error: `exclude`: 'a/{b' is not a valid pattern"),
        "{err}"
    );
}

/// `per-file-ignores`: rules not reported in the files a pattern matches.
#[test]
fn per_file_ignores_hide_rules_in_matching_files() {
    let d = project();
    let p = d.path();
    fs::write(
        p.join("acc2omp.toml"),
        "profile = \"clacc\"\n[per-file-ignores]\n\"a/*.c\" = [\"present-*\"]\n\"z.c\" = [\"acc2omp-present-unchecked\"]\n",
    )
    .unwrap();
    fs::remove_file(p.join("b/acc2omp.toml")).unwrap();
    fs::write(p.join("y.c"), SRC).unwrap();
    let (_, _, err) = migrate(p, &["a/x.c", "b/c/z.c", "y.c"]);
    assert!(!err.contains("a/x.c:3:29"), "{err}");
    assert!(!err.contains("b/c/z.c:3:29"), "{err}");
    assert!(err.contains("y.c:3:29: note: 'present' becomes"), "{err}");
    assert!(err.contains("(2 not selected)"), "{err}");
    fs::write(
        p.join("acc2omp.toml"),
        "[per-file-ignores]\n\"a/*.c\" = [\"presnt-unchecked\"]\n",
    )
    .unwrap();
    let (code, _, err) = migrate(p, &["a/x.c"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("'presnt-unchecked' matches no rule (did you mean 'present-unchecked'?)"),
        "{err}"
    );
}

/// A rule id on the command line that matches nothing is the command line's error, reported
/// once however many configurations there are.
#[test]
fn a_bad_rule_on_the_command_line_is_a_command_line_error() {
    let d = project();
    let (code, _, err) = migrate(
        d.path(),
        &["a/x.c", "b/y.c", "--select", "presnt-unchecked"],
    );
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        "acc2omp: error: --select: 'presnt-unchecked' matches no rule (did you mean 'present-unchecked'?) (see `acc2omp rules`) [command-line]\n"
    );
    fs::write(d.path().join("acc2omp.toml"), "select = [\"nope\"]\n").unwrap();
    let (code, _, err) = migrate(d.path(), &["a/x.c"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("acc2omp.toml: error: select: 'nope' matches no rule"),
        "{err}"
    );
    assert!(err.contains("[config-file]"), "{err}");
}
