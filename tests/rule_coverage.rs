//! Every rule of `rules/diagnostics.toml` is exercised: a fixture expects it (`[id]` in an
//! `expected.*.txt`), or a test looks for it (its constant `id::NAME`, its quoted id or
//! `[id]` in test code). The rules that only a rules file or an `--emit` mode can raise are exercised here.

mod common;

use acc2omp::options::Emit;
use acc2omp::rules::id;
use acc2omp::{Options, migrate_text};
use std::fs;
use std::path::Path;

/// Test code and data: the files under `tests/` (the conformance expectations name rules
/// too), and in `src/` the test modules: files of their own (`tests.rs`, `*_tests.rs`), and
/// in other files from the first `#[cfg(test)] mod name {` on. A `#[cfg(test)]` function
/// or a `#[cfg(test)] mod name;` among the code does not start test code: what follows it
/// is code that reports rules.
fn test_code(root: &Path) -> String {
    let mut out = String::new();
    let mut stack = vec![root.join("tests"), root.join("src")];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(&dir).expect("a source directory") {
            let p = e.expect("an entry").path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let in_tests = p.starts_with(root.join("tests"));
            if !in_tests && p.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let Ok(text) = fs::read_to_string(&p) else {
                continue;
            };
            let name = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            if in_tests || name == "tests" || name.ends_with("_tests") {
                out.push_str(&text);
            } else if let Some(at) = test_module(&text) {
                out.push_str(&text[at..]);
            }
        }
    }
    out
}

/// Where the first `#[cfg(test)]` of a module written in the file (`mod tests { … }`)
/// starts.
fn test_module(text: &str) -> Option<usize> {
    text.match_indices("#[cfg(test)]")
        .map(|(at, _)| at)
        .find(|&at| {
            let Some(m) = text[at + "#[cfg(test)]".len()..]
                .trim_start()
                .strip_prefix("mod ")
            else {
                return false;
            };
            m.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_')
                .trim_start()
                .starts_with('{')
        })
}

/// The diagnostics the fixtures expect: the text of every `expected.*.txt`.
fn fixture_expectations(root: &Path) -> String {
    let mut out = String::new();
    for case in fs::read_dir(root.join("fixtures/translate")).expect("fixtures/translate") {
        let case = case.expect("a case").path();
        let Ok(files) = fs::read_dir(&case) else {
            continue;
        };
        for f in files {
            let f = f.expect("a file").path();
            let name = f.file_name().and_then(|s| s.to_str()).unwrap_or("");
            if name.starts_with("expected.") && name.ends_with(".txt") {
                out.push_str(&fs::read_to_string(&f).expect("an expectation"));
            }
        }
    }
    out
}

#[test]
fn every_rule_is_exercised_by_a_fixture_or_a_test() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tests = test_code(root);
    let fixtures = fixture_expectations(root);
    let missing: Vec<&str> = id::ALL
        .iter()
        .map(|r| r.as_str())
        .filter(|r| {
            let constant = format!("id::{}", r.to_ascii_uppercase().replace('-', "_"));
            let tag = format!("[{r}]");
            !fixtures.contains(&tag)
                && !tests.contains(&tag)
                && !tests.contains(&constant)
                && !tests.contains(&format!("\"{r}\""))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "rules no fixture expects and no test names: {missing:?}"
    );
    assert!(id::ALL.len() > 100, "{} rules", id::ALL.len());
}

/// The rules `acc2omp migrate` reports for `src` (file `name` in `dir`) with `args`.
fn reported(dir: &Path, name: &str, src: &str, args: &[&str]) -> String {
    fs::write(dir.join(name), src).unwrap();
    let mut all = vec![
        "migrate",
        "--no-config",
        "--no-clang",
        "--output-format",
        "concise",
    ];
    all.extend_from_slice(args);
    all.push(name);
    let o = common::run(dir, &all);
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The runtime mappings that are not reported by default (waits, data routines, the default
/// queue) are reported under their rules when a rules file asks for it.
#[test]
fn quiet_runtime_mappings_are_reported_when_a_rules_file_asks() {
    let d = tempfile::tempdir().unwrap();
    let rules = "[[routine]]\nname = \"acc_wait\"\nreport = true\n\n[[routine]]\nname = \"acc_copyin\"\nreport = true\n\n[[routine]]\nname = \"acc_set_default_async\"\nreport = true\n";
    fs::write(d.path().join("r.toml"), rules).unwrap();
    let src = "#include <openacc.h>\nvoid f(double *a, int n) {\n  acc_copyin(a, n * sizeof(double));\n  acc_set_default_async(2);\n  acc_wait(1);\n}\n";
    let quiet = reported(d.path(), "q.c", src, &[]);
    let loud = reported(d.path(), "q.c", src, &["--rules", "r.toml"]);
    for (rule, line) in [
        (id::RUNTIME_DATA, "q.c:3:3"),
        (id::ASYNC_DEFAULT_QUEUE, "q.c:4:3"),
        (id::RUNTIME_WAIT, "q.c:5:3"),
    ] {
        let tag = format!("[{rule}]");
        assert!(!quiet.contains(&tag), "{quiet}");
        assert!(
            loud.lines()
                .any(|l| l.starts_with(line) && l.ends_with(&tag)),
            "{rule} at {line}:\n{loud}"
        );
    }
}

/// A routine a rules file maps by device type, without a mapping for a type known only at
/// run time, is left unchanged where its device type is a variable.
#[test]
fn a_device_type_known_only_at_run_time_needs_a_dynamic_mapping() {
    let d = tempfile::tempdir().unwrap();
    let rules = "[[routine]]\nname = \"acc_vendor_count\"\nargs = 1\ndevtype = 0\nomp = \"omp_get_num_devices()\"\nhost = \"1\"\nrule = \"runtime-device\"\ndoc = \"devices of a type\"\n";
    fs::write(d.path().join("r.toml"), rules).unwrap();
    let src = "#include <openacc.h>\nint acc_vendor_count(acc_device_t);\nint f(acc_device_t t) {\n  return acc_vendor_count(acc_device_host) + acc_vendor_count(t);\n}\n";
    let err = reported(d.path(), "t.c", src, &["--rules", "r.toml"]);
    assert!(
        err.lines().any(|l| l.starts_with("t.c:4:46:")
            && l.ends_with(&format!("[{}]", id::RUNTIME_DEVICE_TYPE))),
        "{err}"
    );
    assert_eq!(err.matches("[runtime-device-type]").count(), 1, "{err}");
}

/// `--emit dual` writes a condition on `_OPENACC` as one line: one that spans lines stays
/// as it was, with a warning.
#[test]
fn dual_output_leaves_a_condition_over_lines_with_a_warning() {
    let src = "#if defined(_OPENACC) && \\\n    defined(EXTRA)\n#include <openacc.h>\n#endif\nvoid f(int n, double *a) {\n#pragma acc parallel loop copy(a[0:n])\n  for (int i = 0; i < n; i++) a[i] = 0;\n}\n";
    let opts = Options {
        emit: Emit::Dual,
        ..Options::default()
    };
    let out = migrate_text(src, &opts);
    let rules: Vec<_> = out.diagnostics.iter().map(|d| d.rule).collect();
    assert!(
        rules.contains(&id::EMIT_CONDITION),
        "{rules:?}\n{}",
        out.text
    );
    assert!(
        out.text
            .contains("#if defined(_OPENACC) && \\\n    defined(EXTRA)\n"),
        "{}",
        out.text
    );
    assert!(
        out.text.contains("#pragma omp target teams"),
        "{}",
        out.text
    );
}

/// A mode that would separate an `#if` line from its `#endif` (here a comment inside the
/// directive that starts a line with `#if`) refuses the file and leaves it as it was.
#[test]
fn an_emit_mode_that_would_split_a_conditional_refuses_the_file() {
    let src = "void f(int n, double *a) {\n#pragma acc parallel loop copy(a[0:n]) /* see\n#if X */\n  for (int i = 0; i < n; i++) a[i] = 0;\n}\n";
    let opts = |emit| Options {
        emit,
        ..Options::default()
    };
    let omp = migrate_text(src, &opts(Emit::Omp));
    assert!(
        omp.text.contains("#pragma omp target teams"),
        "{}",
        omp.text
    );
    let out = migrate_text(src, &opts(Emit::Dual));
    let refused = out
        .diagnostics
        .iter()
        .filter(|d| d.rule == id::EMIT_REFUSED)
        .count();
    assert_eq!(refused, 1, "{:?}", out.diagnostics);
    assert_eq!(out.text, src);
}

/// An `enter data` of a structure after one of its members, with code between: its map
/// moves ahead of the members when the code leaves the structure alone, and both directives
/// are left with an error when the code writes it, calls a function or lies in another block.
#[test]
fn member_map_order_over_code_between() {
    let d = tempfile::tempdir().unwrap();
    let src = "struct F { int n; double *a; };\nvoid f(struct F o, int m) {\n#pragma acc enter data copyin(o.a[0:m])\n  int k = m * 2;\n  for (int i = 0; i < 3; i++) k += i;\n#pragma acc enter data copyin(k)\n#pragma acc enter data copyin(o)\n}\nvoid g(struct F o, int m) {\n#pragma acc enter data copyin(o.a[0:m])\n  o.n = m;\n#pragma acc enter data copyin(o)\n}\nvoid h(struct F *o, int m) {\n#pragma acc enter data copyin(o->a[0:m])\n  prepare(m);\n#pragma acc enter data copyin(o[0:1])\n}\nvoid c(struct F o, int m) {\n#pragma acc enter data copyin(o.a[0:m])\n  if (m > 1) {\n#pragma acc enter data copyin(o)\n  }\n}\nvoid w(struct F o, struct F *q, int m) {\n#pragma acc enter data copyin(o.a[0:m])\n  q->n = m;\n#pragma acc enter data copyin(o)\n}\nvoid r(struct F o, int m) {\n#pragma acc enter data copyin(o.a[0:m])\n  RESET_O;\n#pragma acc enter data copyin(o)\n}\n";
    let r = reported(d.path(), "m.c", src, &[]);
    for (rule, line, says) in [
        (id::MEMBER_MAP_ORDER, "m.c:7:", "at line 3"),
        (id::MEMBER_MAP_ORDER_LEFT, "m.c:12:", "uses 'o'"),
        (id::MEMBER_MAP_ORDER_LEFT, "m.c:17:", "calls 'prepare'"),
        (id::MEMBER_MAP_ORDER_LEFT, "m.c:22:", "block"),
        // A write through another pointer may reach the structure; a bare name may be a macro.
        (id::MEMBER_MAP_ORDER_LEFT, "m.c:28:", "writes memory"),
        (id::MEMBER_MAP_ORDER_LEFT, "m.c:33:", "macro"),
    ] {
        let tag = format!("[{rule}]");
        assert!(
            r.lines()
                .any(|l| l.starts_with(line) && l.contains(says) && l.ends_with(&tag)),
            "{rule} at {line}:\n{r}"
        );
    }
    let out = migrate_text(src, &Options::default()).text;
    assert!(
        out.contains("#pragma omp target enter data map(to: o) map(to: o.a[0:m])\n  int k = m * 2;\n  for (int i = 0; i < 3; i++) k += i;\n#pragma omp target enter data map(to: k)\n}"),
        "{out}"
    );
    // Left: both directives of each pair (a second run then reads the same pair).
    assert_eq!(
        out.matches("#pragma acc enter data copyin(o").count(),
        10,
        "{out}"
    );
}

/// An `enter data` of a structure right after one of its members moves ahead of it, and a
/// `data` construct without data clauses goes with a note, its `wait` kept.
#[test]
fn member_map_order_and_data_without_map_are_noted() {
    let d = tempfile::tempdir().unwrap();
    let src = "struct F { int n; double *a; };\nvoid f(struct F *o) {\n#pragma acc enter data copyin(o->a[0:o->n])\n#pragma acc enter data copyin(o[0:1])\n#pragma acc data wait(1)\n  { o->n = 1; }\n}\n";
    let r = reported(d.path(), "m.c", src, &[]);
    for (rule, line) in [
        (id::MEMBER_MAP_ORDER, "m.c:4:"),
        (id::DATA_WITHOUT_MAP, "m.c:5:"),
    ] {
        let tag = format!("[{rule}]");
        assert!(
            r.lines().any(|l| l.starts_with(line) && l.ends_with(&tag)),
            "{rule} at {line}:\n{r}"
        );
    }
    let out = migrate_text(src, &Options::default()).text;
    assert!(
        out.contains("#pragma omp target enter data map(to: o[0:1]) map(to: o->a[0:o->n])\n#pragma omp taskwait depend(in: acc2omp_queue[1])\n  { o->n = 1; }"),
        "{out}"
    );
}
