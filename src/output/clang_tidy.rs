//! `--export-fixes FILE`: clang-tidy's fixes YAML, which `clang-apply-replacements` applies.
//! One entry per reported diagnostic, with absolute paths as clang-tidy writes them; each
//! construct's replacements (the engine's own edits, in bytes) go with the first diagnostic
//! about it, or with an `acc2omp-migrate` entry when nothing is reported there.

use super::{Entry, RunView};
use crate::fix::Fix;

/// YAML's double-quoted scalars accept JSON string syntax.
fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

fn level(severity: &str) -> &'static str {
    match severity {
        "error" => "Error",
        "warning" => "Warning",
        _ => "Remark",
    }
}

/// The YAML, and the constructs whose replacements are not UTF-8 text (YAML holds text
/// only), as (path, line) — their entries are written without replacements.
pub fn render(run: &RunView) -> (String, Vec<(String, usize)>) {
    let cwd = std::env::current_dir()
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_default();
    let main = match run.files.as_slice() {
        [f] => f
            .abs
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default(),
        _ => String::new(),
    };
    let mut y = format!("---\nMainSourceFile:  {}\nDiagnostics:\n", q(&main));
    let mut not_text = Vec::new();
    let mut used: Vec<Vec<bool>> = run
        .files
        .iter()
        .map(|f| vec![false; f.fixes.len()])
        .collect();
    let mut entry = |y: &mut String,
                     name: &str,
                     message: &str,
                     path: &str,
                     offset: usize,
                     severity: &str,
                     fix: Option<&Fix>,
                     line: usize| {
        y.push_str(&format!(
            "  - DiagnosticName:  {}\n    DiagnosticMessage:\n      Message:         {}\n      FilePath:        {}\n      FileOffset:      {offset}\n      Replacements:",
            q(name),
            q(message),
            q(path)
        ));
        let texts: Option<Vec<&str>> = fix.map(|f| {
            f.replacements
                .iter()
                .map(|r| std::str::from_utf8(&r.text).ok())
                .collect::<Option<Vec<_>>>()
                .unwrap_or_default()
        });
        match (fix, texts) {
            (Some(f), Some(t)) if t.len() == f.replacements.len() && !t.is_empty() => {
                y.push('\n');
                for (r, text) in f.replacements.iter().zip(t) {
                    y.push_str(&format!(
                        "        - FilePath:        {}\n          Offset:          {}\n          Length:          {}\n          ReplacementText: {}\n",
                        q(path),
                        r.offset,
                        r.length,
                        q(text)
                    ));
                }
            }
            (Some(f), _) if !f.replacements.is_empty() => {
                not_text.push((path.to_string(), line));
                y.push_str(" []\n");
            }
            _ => y.push_str(" []\n"),
        }
        y.push_str(&format!(
            "    Level:           {}\n    BuildDirectory:  {}\n",
            level(severity),
            q(&cwd)
        ));
    };
    let path_of = |e: &Entry| -> String {
        e.file
            .and_then(|i| run.files[i].abs.as_ref())
            .map_or_else(|| e.diag.path.clone(), |p| p.to_string_lossy().into_owned())
    };
    for e in run.shown() {
        let offset = e.diag.range.as_ref().map_or(0, |r| r.start);
        let fix = e.file.and_then(|i| {
            let k = run.files[i].fix_at(offset)?;
            (e.diag.range.is_some() && !std::mem::replace(&mut used[i][k], true))
                .then(|| &run.files[i].fixes[k])
        });
        let name = format!("acc2omp-{}", e.diag.rule);
        entry(
            &mut y,
            &name,
            &e.diag.message,
            &path_of(e),
            offset,
            e.diag.severity,
            fix,
            e.diag.line,
        );
    }
    for (i, f) in run.files.iter().enumerate() {
        let Some(abs) = &f.abs else { continue };
        let path = abs.to_string_lossy();
        let index = crate::source::LineIndex::of_bytes(f.source, f.terminator);
        for (k, fix) in f.fixes.iter().enumerate() {
            if !used[i][k] {
                let line = index.line_col(fix.offset).0;
                entry(
                    &mut y,
                    "acc2omp-migrate",
                    &fix.message,
                    &path,
                    fix.offset,
                    "note",
                    Some(fix),
                    line,
                );
            }
        }
    }
    y.push_str("...\n");
    (y, not_text)
}
