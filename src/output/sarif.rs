//! `--output-format sarif`: a SARIF 2.1.0 log (GitHub code scanning, editors' SARIF
//! viewers). Rules carry their summary, doc and `acc2omp explain` text; results carry
//! regions (lines, code point columns and byte offsets) and the fix of their construct.

use super::{Entry, FileView, RunView};
use crate::fix::Fix;
use crate::source::LineIndex;
use serde_json::{Value, json};

pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// Percent-encode a path for a URI reference (RFC 3986: unreserved characters and `/` kept).
fn uri_path(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn artifact(path: &str) -> Value {
    if path.starts_with('/') {
        json!({"uri": format!("file://{}", uri_path(path))})
    } else {
        json!({"uri": uri_path(path), "uriBaseId": "%SRCROOT%"})
    }
}

/// 1-based line and code point column of byte `offset` (each byte that is not UTF-8
/// counts as one).
fn line_column(f: &FileView, index: &LineIndex, offset: usize) -> (usize, usize) {
    let offset = offset.min(f.source.len());
    let (line, _) = index.line_col(offset);
    let start = index.line_start(offset);
    let column: usize = f.source[start..offset]
        .utf8_chunks()
        .map(|c| c.valid().chars().count() + c.invalid().len())
        .sum();
    (line, column + 1)
}

fn region(f: &FileView, index: &LineIndex, start: usize, end: usize) -> Value {
    let (sl, sc) = line_column(f, index, start);
    let (el, ec) = line_column(f, index, end);
    json!({
        "startLine": sl, "startColumn": sc, "endLine": el, "endColumn": ec,
        "byteOffset": start, "byteLength": end - start,
    })
}

fn fix_json(fix: &Fix, path: &str) -> Value {
    let replacements: Vec<Value> = fix
        .replacements
        .iter()
        .map(|r| {
            json!({
                "deletedRegion": {"byteOffset": r.offset, "byteLength": r.length},
                "insertedContent": {"text": String::from_utf8_lossy(&r.text)},
            })
        })
        .collect();
    json!({
        "description": {"text": fix.message},
        "artifactChanges": [{"artifactLocation": artifact(path), "replacements": replacements}],
    })
}

fn level(severity: &str) -> &'static str {
    match severity {
        "error" => "error",
        "warning" => "warning",
        _ => "note",
    }
}

fn result(run: &RunView, ix: &[LineIndex], e: &Entry, rule_index: Option<usize>) -> Value {
    let d = &e.diag;
    let mut location = json!({"artifactLocation": artifact(&d.path)});
    match (e.file, &d.range) {
        (Some(i), Some(r)) => location["region"] = region(&run.files[i], &ix[i], r.start, r.end),
        _ => location["region"] = json!({"startLine": d.line, "startColumn": d.column}),
    }
    let mut r = json!({
        "ruleId": d.rule,
        "level": level(d.severity),
        "message": {"text": d.message},
        "locations": [{"physicalLocation": location}],
    });
    if let Some(i) = rule_index {
        r["ruleIndex"] = json!(i);
    }
    if let Some(fix) = run.fix_of(e) {
        r["fixes"] = json!([fix_json(fix, &d.path)]);
    }
    r
}

/// The SARIF log of a run.
pub fn document(run: &RunView) -> Value {
    let t = run.tables;
    let rules: Vec<Value> = t
        .diagnostics
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "shortDescription": {"text": r.summary},
                "fullDescription": {"text": r.doc.trim()},
                "help": {"text": super::explain(r)},
                "defaultConfiguration": {
                    "level": if r.severity.as_str() == "off" { "none" } else { level(r.severity.as_str()) },
                    "enabled": r.severity.as_str() != "off",
                },
            })
        })
        .collect();
    let ix: Vec<LineIndex> = run
        .files
        .iter()
        .map(|f| LineIndex::of_bytes(f.source, f.terminator))
        .collect();
    let results: Vec<Value> = run
        .shown()
        .map(|e| {
            let i = t.diagnostics.iter().position(|r| r.id == e.diag.rule);
            result(run, &ix, e, i)
        })
        .collect();
    let root = std::env::current_dir()
        .map(|d| format!("file://{}/", uri_path(&d.to_string_lossy())))
        .unwrap_or_else(|_| "file:///".into());
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "acc2omp",
                "version": env!("CARGO_PKG_VERSION"),
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": root}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

pub fn render(run: &RunView) -> String {
    serde_json::to_string_pretty(&document(run)).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(uri_path("src/a b%.c"), "src/a%20b%25.c");
        assert_eq!(artifact("/x/y.c")["uri"], "file:///x/y.c");
    }
}
