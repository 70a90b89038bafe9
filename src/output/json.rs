//! `--output-format json` and `json-lines` (documented in docs/json-output.md).

use super::{Entry, FileView, RunView};
use crate::fix::Fix;
use crate::source::LineIndex;
use serde_json::{Value, json};

/// The version of this document's layout; it changes when a field changes meaning.
pub const FORMAT_VERSION: u32 = 1;

fn position(index: Option<&LineIndex>, offset: usize) -> Value {
    match index {
        Some(ix) => {
            let (line, column) = ix.line_col(offset);
            json!({"line": line, "column": column, "offset": offset})
        }
        None => json!({"line": 1, "column": 1, "offset": null}),
    }
}

fn fix_json(f: &Fix, index: &LineIndex) -> Value {
    let edits: Vec<Value> = f
        .replacements
        .iter()
        .map(|r| {
            json!({
                "start": position(Some(index), r.offset),
                "end": position(Some(index), r.offset + r.length),
                "content": String::from_utf8_lossy(&r.text),
                "content_is_utf8": std::str::from_utf8(&r.text).is_ok(),
            })
        })
        .collect();
    json!({"message": f.message, "edits": edits})
}

fn index_of(f: &FileView) -> LineIndex {
    LineIndex::of_bytes(f.source, f.terminator)
}

/// One diagnostic as an object.
pub fn diagnostic(run: &RunView, e: &Entry, index: Option<&LineIndex>) -> Value {
    let d = &e.diag;
    let (start, end) = match &d.range {
        Some(r) => (position(index, r.start), position(index, r.end)),
        None => (position(None, 0), position(None, 0)),
    };
    let fix = match (run.fix_of(e), index) {
        (Some(f), Some(ix)) => fix_json(f, ix),
        _ => Value::Null,
    };
    json!({
        "path": d.path,
        "rule": d.rule,
        "severity": d.severity,
        "message": d.message,
        "start": start,
        "end": end,
        "fix": fix,
    })
}

fn indexes(run: &RunView) -> Vec<LineIndex> {
    run.files.iter().map(index_of).collect()
}

/// The whole run as one document.
pub fn document(run: &RunView) -> Value {
    let ix = indexes(run);
    let diagnostics: Vec<Value> = run
        .shown()
        .map(|e| diagnostic(run, e, e.file.map(|f| &ix[f])))
        .collect();
    let files: Vec<Value> = run
        .files
        .iter()
        .zip(&ix)
        .map(|(f, i)| {
            json!({
                "path": f.display,
                "changed": f.changed,
                "directives": f.sites,
                "analysis": f.mode.map(|m| m.describe()),
                "fell_back": f.fell_back,
                "fixes": f.fixes.iter().map(|x| fix_json(x, i)).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "tool": {"name": "acc2omp", "version": env!("CARGO_PKG_VERSION")},
        "format_version": FORMAT_VERSION,
        "profile": run.profile,
        "diagnostics": diagnostics,
        "files": files,
        "summary": summary(run),
    })
}

fn summary(run: &RunView) -> Value {
    let s = &run.summary;
    json!({
        "files": s.files,
        "with_openacc": s.with_openacc,
        "directives": s.directives,
        "changed": s.changed,
        "errors": s.errors,
        "warnings": s.warnings,
        "notes": s.notes,
        "suppressed": s.suppressed,
        "ignored": s.ignored,
        "fell_back": s.fell_back,
    })
}

pub fn render(run: &RunView) -> String {
    serde_json::to_string_pretty(&document(run)).unwrap_or_default() + "\n"
}

/// `--statistics`: the count of reported diagnostics per rule, most frequent first.
fn statistics(run: &RunView) -> Vec<Value> {
    run.statistics()
        .into_iter()
        .map(|(rule, severity, count)| {
            let summary = run.tables.diagnostic(rule).map(|r| r.summary.as_str());
            json!({"rule": rule, "severity": severity, "count": count, "summary": summary})
        })
        .collect()
}

/// `--statistics` as one document: the counts instead of the diagnostics and files.
pub fn render_statistics(run: &RunView) -> String {
    let doc = json!({
        "tool": {"name": "acc2omp", "version": env!("CARGO_PKG_VERSION")},
        "format_version": FORMAT_VERSION,
        "profile": run.profile,
        "statistics": statistics(run),
        "summary": summary(run),
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}

/// `--statistics` as one object per rule and line.
pub fn render_statistics_lines(run: &RunView) -> String {
    let mut out = String::new();
    for mut v in statistics(run) {
        v["tool_version"] = json!(env!("CARGO_PKG_VERSION"));
        out.push_str(&v.to_string());
        out.push('\n');
    }
    out
}

/// One diagnostic object per line, each with the tool version.
pub fn render_lines(run: &RunView) -> String {
    let ix = indexes(run);
    let mut out = String::new();
    for e in run.shown() {
        let mut v = diagnostic(run, e, e.file.map(|f| &ix[f]));
        v["tool_version"] = json!(env!("CARGO_PKG_VERSION"));
        out.push_str(&v.to_string());
        out.push('\n');
    }
    out
}
