//! What `migrate` reports, end to end: `--output-format` (JSON, JSON lines, SARIF, GitHub),
//! text with source lines and colour, `--statistics`, `--exit-zero`, `--report`.

mod common;

use common::{run, stderr, stdout};
use std::fs;
use std::process::{Command, Output};

/// Two warnings (kernels-sequential, implicit-pointer) at line 2, one error at line 5.
const SRC: &str = "void k(int n, float *x) {\n#pragma acc kernels loop\n  for (int i = 0; i < n; i++) x[i + 1] = x[i];\n  float *z = x;\n#pragma acc parallel loop bogus(z) copy(z[0:n])\n  for (int i = 0; i < n; i++) z[i] = 1;\n}\n";
const CLEAN: &str = "void c(int n, double *a) {\n  #pragma acc parallel loop copy(a[0:n])\n  for (int i = 0; i < n; i++) a[i] += 1;\n}\n";

fn project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    fs::create_dir_all(d.path().join("src/gpu")).unwrap();
    fs::write(d.path().join("src/k.c"), SRC).unwrap();
    fs::write(d.path().join("src/gpu/c.c"), CLEAN).unwrap();
    d
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

/// Apply a JSON fix's edits (byte offsets) to `src`.
fn apply(src: &[u8], edits: &[serde_json::Value]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut at = 0;
    for e in edits {
        let s = e["start"]["offset"].as_u64().unwrap() as usize;
        let t = e["end"]["offset"].as_u64().unwrap() as usize;
        assert!(
            s >= at && t >= s,
            "edits overlap or go backwards: {edits:?}"
        );
        out.extend_from_slice(&src[at..s]);
        out.extend_from_slice(e["content"].as_str().unwrap().as_bytes());
        at = t;
    }
    out.extend_from_slice(&src[at..]);
    out
}

#[test]
fn json_has_positions_fixes_and_the_tool_version() {
    let d = project();
    let o = run(
        d.path(),
        &["migrate", "--output-format", "json", "--no-clang"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["tool"]["name"], "acc2omp");
    assert_eq!(v["tool"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(v["format_version"], 1);
    let diags = v["diagnostics"].as_array().unwrap();
    let err = diags
        .iter()
        .find(|x| x["rule"] == "unknown-clause")
        .unwrap();
    assert_eq!(err["path"], "src/k.c");
    assert_eq!(err["severity"], "error");
    // `bogus` at line 5, columns 27..32.
    assert_eq!(err["start"]["line"], 5);
    assert_eq!(err["start"]["column"], 27);
    assert_eq!(err["end"]["line"], 5);
    assert_eq!(err["end"]["column"], 32);
    let off = err["start"]["offset"].as_u64().unwrap() as usize;
    assert_eq!(&SRC[off..off + 5], "bogus");
    // An error leaves its directive unchanged: no fix.
    assert!(err["fix"].is_null());
    let warn = diags
        .iter()
        .find(|x| x["rule"] == "kernels-sequential")
        .unwrap();
    assert_eq!(warn["start"]["line"], 2);
    assert!(
        warn["fix"]["edits"]
            .as_array()
            .is_some_and(|e| !e.is_empty())
    );
    assert_eq!(v["summary"]["errors"], 1);
    assert_eq!(v["summary"]["warnings"], 2);
    // Each file's fixes, applied, give what --write writes.
    let files = v["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    let w = project();
    let o = run(w.path(), &["migrate", "--write", "--no-clang", "-q"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    for f in files {
        let path = f["path"].as_str().unwrap();
        let edits: Vec<serde_json::Value> = f["fixes"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|x| x["edits"].as_array().unwrap().clone())
            .collect();
        let src = fs::read(d.path().join(path)).unwrap();
        assert_eq!(
            String::from_utf8(apply(&src, &edits)).unwrap(),
            fs::read_to_string(w.path().join(path)).unwrap(),
            "{path}"
        );
    }
    // JSON lines: one object per diagnostic, each with the version.
    let o = run(
        d.path(),
        &["migrate", "--output-format", "json-lines", "--no-clang"],
    );
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert!(
        lines
            .iter()
            .all(|l| l["tool_version"] == env!("CARGO_PKG_VERSION"))
    );
    // Machine formats cannot share standard output with --diff.
    let o = run(d.path(), &["migrate", "--diff", "--output-format", "json"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(
        d.path(),
        &[
            "migrate",
            "--diff",
            "--output-format",
            "json",
            "-o",
            "d.json",
            "--no-clang",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).starts_with("--- a/src/gpu/c.c"),
        "{}",
        stdout(&o)
    );
    let v: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(d.path().join("d.json")).unwrap()).unwrap();
    assert_eq!(v["summary"]["changed"], 2);
}

#[test]
fn sarif_follows_the_standard() {
    let d = project();
    fs::write(d.path().join("src/with space.c"), SRC).unwrap();
    let o = run(
        d.path(),
        &["migrate", "--output-format", "sarif", "--no-clang"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json(&o);
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("schemas/sarif-2.1.0-required.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&v)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // The schema check itself catches a misspelt property.
    let mut bad = v.clone();
    bad["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startline"] =
        1.into();
    assert!(!validator.is_valid(&bad));

    let run0 = &v["runs"][0];
    let rules = run0["tool"]["driver"]["rules"].as_array().unwrap();
    let r = rules.iter().find(|r| r["id"] == "unknown-clause").unwrap();
    assert!(
        r["help"]["text"]
            .as_str()
            .unwrap()
            .contains("unknown-clause")
    );
    assert!(!r["fullDescription"]["text"].as_str().unwrap().is_empty());
    let results = run0["results"].as_array().unwrap();
    assert_eq!(results.len(), 6);
    for res in results {
        // ruleIndex points at the rule.
        let i = res["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[i]["id"], res["ruleId"]);
    }
    let e = results
        .iter()
        .find(|r| {
            r["ruleId"] == "unknown-clause"
                && r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    == "src/with%20space.c"
        })
        .unwrap();
    assert_eq!(e["level"], "error");
    let region = &e["locations"][0]["physicalLocation"]["region"];
    assert_eq!(
        (
            &region["startLine"],
            &region["startColumn"],
            &region["endColumn"]
        ),
        (&5.into(), &27.into(), &32.into())
    );
    let w = results
        .iter()
        .find(|r| r["ruleId"] == "kernels-sequential")
        .unwrap();
    let change = &w["fixes"][0]["artifactChanges"][0];
    assert!(!change["replacements"].as_array().unwrap().is_empty());
}

#[test]
fn github_annotations() {
    let d = project();
    let o = run(
        d.path(),
        &[
            "migrate",
            "src/k.c",
            "--output-format",
            "github",
            "--no-clang",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.lines().any(|l| l
            == "::error title=acc2omp unknown-clause,file=src/k.c,line=5,col=27,endLine=5,endColumn=32::unknown clause 'bogus' on 'acc parallel loop'; the directive is left unchanged [unknown-clause]"),
        "{out}"
    );
    assert_eq!(out.matches("::warning ").count(), 2, "{out}");
}

#[test]
fn text_shows_the_source_line_with_a_caret_and_colours_on_request() {
    let d = project();
    let o = run(
        d.path(),
        &["migrate", "src/k.c", "--color", "never", "--no-clang"],
    );
    let err = stderr(&o);
    assert!(!err.contains('\x1b'), "{err}");
    let expected = "src/k.c:5:27: error: unknown clause 'bogus' on 'acc parallel loop'; the directive is left unchanged [unknown-clause]\n  |\n5 | #pragma acc parallel loop bogus(z) copy(z[0:n])\n  |                           ^^^^^\n";
    assert!(err.contains(expected), "{err}");
    let o = run(
        d.path(),
        &["migrate", "src/k.c", "--color", "always", "--no-clang"],
    );
    assert!(stderr(&o).contains("\x1b["), "{}", stderr(&o));
    // Not a terminal: auto means no colour.
    let o = run(d.path(), &["migrate", "src/k.c", "--no-clang"]);
    assert!(!stderr(&o).contains('\x1b'));
    let o = run(
        d.path(),
        &[
            "migrate",
            "src/k.c",
            "--output-format",
            "concise",
            "--no-clang",
        ],
    );
    assert!(!stderr(&o).contains("^^^^^"), "{}", stderr(&o));
    assert!(stderr(&o).contains("src/k.c:5:27: error:"));
}

#[test]
fn statistics_exit_zero_and_the_write_hint() {
    let d = project();
    let o = run(d.path(), &["migrate", "--statistics", "--no-clang"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines[0].starts_with("1  implicit-pointer    warning"),
        "{err}"
    );
    assert!(
        lines[1].starts_with("1  kernels-sequential  warning"),
        "{err}"
    );
    assert!(
        lines[2].starts_with("1  unknown-clause      error"),
        "{err}"
    );
    assert!(!err.contains("^^^"), "{err}");
    assert!(
        err.contains("run with --write to apply the changes"),
        "{err}"
    );
    // --exit-zero: errors and changes do not fail the run.
    let o = run(
        d.path(),
        &["migrate", "--check", "--exit-zero", "--no-clang"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // ... but usage errors still do.
    let o = run(d.path(), &["migrate", "--exit-zero", "--select", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    // No hint after --write, none under -q.
    let o = run(d.path(), &["migrate", "--write", "--no-clang"]);
    assert!(!stderr(&o).contains("run with --write"), "{}", stderr(&o));
    let o = run(d.path(), &["migrate", "-q", "--no-clang"]);
    assert!(!stderr(&o).contains("run with --write"));
}

/// `--statistics` in the machine formats: the counts in the format's own form, no
/// diagnostics; SARIF has no such form.
#[test]
fn statistics_in_each_output_format() {
    let d = project();
    let args = |f: &'static str| {
        [
            "migrate",
            "--statistics",
            "--no-clang",
            "--output-format",
            f,
        ]
    };
    let o = run(d.path(), &args("json"));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(
        v.get("diagnostics").is_none() && v.get("files").is_none(),
        "{v}"
    );
    let stats = v["statistics"].as_array().unwrap();
    let rules: Vec<(&str, &str, u64)> = stats
        .iter()
        .map(|s| {
            let rule = s["rule"].as_str().unwrap();
            (
                rule,
                s["severity"].as_str().unwrap(),
                s["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rules,
        [
            ("implicit-pointer", "warning", 1),
            ("kernels-sequential", "warning", 1),
            ("unknown-clause", "error", 1)
        ]
    );
    assert!(stats[0]["summary"].as_str().is_some_and(|s| !s.is_empty()));
    assert_eq!(v["summary"]["errors"], 1);
    assert_eq!(v["tool"]["name"], "acc2omp");
    // Standard error keeps the summary line only.
    assert!(!stderr(&o).contains("unknown clause"), "{}", stderr(&o));
    let o = run(d.path(), &args("json-lines"));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[2]["rule"], "unknown-clause");
    assert_eq!(lines[2]["count"], 1);
    let o = run(d.path(), &args("github"));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 3, "{out}");
    assert!(
        out.lines()
            .all(|l| l.starts_with("::notice title=acc2omp ")),
        "{out}"
    );
    assert!(out.contains("1 error(s) [unknown-clause]"), "{out}");
    let o = run(d.path(), &args("sarif"));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--statistics has no SARIF form"));
    // With -o, the table goes to the file instead of the diagnostics.
    let o = run(
        d.path(),
        &["migrate", "--statistics", "--no-clang", "-o", "stats.txt"],
    );
    let table = fs::read_to_string(d.path().join("stats.txt")).unwrap();
    assert!(
        table.starts_with("1  implicit-pointer    warning"),
        "{table}"
    );
    assert!(!stderr(&o).contains("implicit-pointer"), "{}", stderr(&o));
}

#[test]
fn migration_report_in_markdown_and_html() {
    let d = project();
    fs::write(d.path().join("src/plain.c"), "int p;\n").unwrap();
    let o = run(
        d.path(),
        &[
            "migrate",
            "-q",
            "--report",
            "r.md",
            "--no-clang",
            "--exit-zero",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = fs::read_to_string(d.path().join("r.md")).unwrap();
    for want in [
        "# acc2omp migration report",
        "## Totals",
        "| Files | 3 |",
        "| Files with OpenACC | 2 |",
        "| OpenACC directives | 3 |",
        "## Left for a person",
        "### `unknown-clause` (error): 1 in 1 file(s)",
        "More: `acc2omp explain unknown-clause`",
        "- `src/k.c:5:27` unknown clause 'bogus'",
        "## Directories",
        "| `src/` |",
        "| `src/gpu/` |",
        "## Files",
        "| `src/gpu/c.c` | 1 | yes |",
        "## Translated from syntax alone",
        "- `src/k.c`: 2 of 2 directive(s) (syntactic (--no-clang))",
    ] {
        assert!(md.contains(want), "missing {want:?} in\n{md}");
    }
    // The rule's advice (its doc) is in the report.
    let doc = Command::new(env!("CARGO_BIN_EXE_acc2omp"))
        .args(["explain", "kernels-sequential"])
        .output()
        .unwrap();
    let advice = stdout(&doc).lines().nth(4).unwrap().to_string();
    assert!(md.contains(&advice[..40]), "{advice}\n{md}");
    let o = run(
        d.path(),
        &[
            "migrate",
            "-q",
            "--report",
            "r.html",
            "--no-clang",
            "--exit-zero",
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    let html = fs::read_to_string(d.path().join("r.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.contains("<h2>Totals</h2>") && html.contains("<code>src/gpu/</code>"));
    assert!(
        html.contains("unknown clause &#39;bogus&#39;") || html.contains("unknown clause 'bogus'")
    );
    assert!(!html.contains("<script"));
}

/// `--emit`: the JSON fixes give what `--write` writes in that mode, and in a file the mode
/// wrote, diagnostics point at the original OpenACC inside its blocks.
#[test]
fn json_fixes_and_positions_in_emit_modes() {
    for mode in ["dual", "omp-acc", "acc-omp"] {
        let d = project();
        let as_json = |d: &tempfile::TempDir| {
            let args = [
                "migrate",
                "src/k.c",
                "--emit",
                mode,
                "--output-format",
                "json",
            ];
            json(&run(d.path(), &[&args[..], &["--no-clang"]].concat()))
        };
        let v = as_json(&d);
        let edits: Vec<serde_json::Value> = v["files"][0]["fixes"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|x| x["edits"].as_array().unwrap().clone())
            .collect();
        let o = run(
            d.path(),
            &[
                "migrate",
                "src/k.c",
                "--emit",
                mode,
                "--write",
                "--no-clang",
                "-q",
            ],
        );
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let written = fs::read_to_string(d.path().join("src/k.c")).unwrap();
        assert_ne!(written, SRC);
        assert_eq!(
            String::from_utf8(apply(SRC.as_bytes(), &edits)).unwrap(),
            written
        );
        // Again on the written file: nothing to do, the same diagnostics, at the original.
        let v = as_json(&d);
        assert!(
            v["files"]
                .as_array()
                .unwrap()
                .iter()
                .all(|f| f["fixes"].as_array().is_none_or(|x| x.is_empty())),
            "{mode}: {v}"
        );
        let diags = v["diagnostics"].as_array().unwrap();
        assert_eq!(diags.len(), 3, "{mode}: {diags:?}");
        for (rule, at) in [
            ("kernels-sequential", "#pragma acc kernels loop"),
            ("unknown-clause", "bogus(z)"),
        ] {
            let d = diags.iter().find(|x| x["rule"] == rule).unwrap();
            let off = d["start"]["offset"].as_u64().unwrap() as usize;
            assert!(
                written[off..].starts_with(at),
                "{mode} {rule}: {}",
                &written[off..]
            );
        }
    }
}
