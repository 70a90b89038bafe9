//! `--report FILE`: the migration report a reviewer reads before accepting a migration —
//! totals, what is left for a person (per rule, with its advice), directories and files,
//! files analyzed from syntax alone, and what NOLINT comments or the rule selection hid.
//! Markdown, or HTML when the file name ends in `.html`; both come from one document.

use crate::output::{Entry, FileView, Hidden, RunView};
use crate::semantic::Mode;
use std::collections::BTreeMap;
use std::path::Path;

/// A block of the report. Text uses `backticks` for code, nothing else.
enum Block {
    Heading(u8, String),
    Para(String),
    Table(Vec<String>, Vec<Vec<String>>),
    List(Vec<String>),
}

/// Counts for a file or a directory.
#[derive(Default, Clone)]
struct Counts {
    files: usize,
    with_openacc: usize,
    directives: usize,
    changed: usize,
    constructs: usize,
    errors: usize,
    warnings: usize,
    notes: usize,
    hidden: usize,
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.files += o.files;
        self.with_openacc += o.with_openacc;
        self.directives += o.directives;
        self.changed += o.changed;
        self.constructs += o.constructs;
        self.errors += o.errors;
        self.warnings += o.warnings;
        self.notes += o.notes;
        self.hidden += o.hidden;
    }
}

fn file_counts(run: &RunView, i: usize, f: &FileView) -> Counts {
    let mut c = Counts {
        files: 1,
        with_openacc: usize::from(f.sites > 0),
        directives: f.sites,
        changed: usize::from(f.changed),
        constructs: f.fixes.len(),
        ..Counts::default()
    };
    for e in run.entries.iter().filter(|e| e.file == Some(i)) {
        match (e.hidden, e.diag.severity) {
            (Some(_), _) => c.hidden += 1,
            (None, "error") => c.errors += 1,
            (None, "warning") => c.warnings += 1,
            (None, _) => c.notes += 1,
        }
    }
    c
}

fn dir_of(display: &str) -> String {
    match Path::new(display).parent() {
        Some(p) if !p.as_os_str().is_empty() => format!("{}/", p.display()),
        _ => "./".into(),
    }
}

fn code(s: &str) -> String {
    // A backtick inside code would end it: such text is shown with a lookalike.
    format!("`{}`", s.replace('`', "\u{2035}"))
}

fn location(e: &Entry) -> String {
    code(&format!(
        "{}:{}:{}",
        e.diag.path, e.diag.line, e.diag.column
    ))
}

fn yes(b: bool) -> String {
    if b { "yes".into() } else { String::new() }
}

fn num(n: usize) -> String {
    if n == 0 { String::new() } else { n.to_string() }
}

/// What each changed file had migrated: `parallel loop` ×3, `data` ×1, …
fn what_changed(f: &FileView) -> String {
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for fix in f.fixes {
        for m in fix.message.split("; ") {
            let k = m
                .strip_prefix("'acc ")
                .and_then(|r| r.split_once('\''))
                .map_or_else(|| "runtime and headers".to_string(), |(d, _)| code(d));
            *kinds.entry(k).or_default() += 1;
        }
    }
    kinds
        .iter()
        .map(|(k, n)| {
            if *n > 1 {
                format!("{k} ×{n}")
            } else {
                k.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn document(run: &RunView, mode: &str) -> Vec<Block> {
    let s = &run.summary;
    let mut out = vec![
        Block::Heading(1, "acc2omp migration report".into()),
        Block::Para(format!(
            "acc2omp {}, profile {}, mode {}. Errors leave their directive unchanged: each is OpenACC a person must migrate. Warnings mark translations to review.",
            env!("CARGO_PKG_VERSION"),
            code(&run.profile),
            code(mode)
        )),
        Block::Heading(2, "Totals".into()),
    ];
    let mut analysis: BTreeMap<String, usize> = BTreeMap::new();
    for f in &run.files {
        if let Some(m) = f.mode {
            *analysis.entry(m.describe()).or_default() += 1;
        }
    }
    let analysis = analysis
        .iter()
        .map(|(m, n)| format!("{n} with {m}"))
        .collect::<Vec<_>>()
        .join(", ");
    let per_file: Vec<Counts> = run
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| file_counts(run, i, f))
        .collect();
    let left_files = per_file.iter().filter(|c| c.errors > 0).count();
    out.push(Block::Table(
        vec!["".into(), "".into()],
        vec![
            vec!["Files".into(), s.files.to_string()],
            vec!["Files with OpenACC".into(), s.with_openacc.to_string()],
            vec!["OpenACC directives".into(), s.directives.to_string()],
            vec!["Files changed".into(), s.changed.to_string()],
            vec![
                "Constructs migrated".into(),
                per_file
                    .iter()
                    .map(|c| c.constructs)
                    .sum::<usize>()
                    .to_string(),
            ],
            vec![
                "Errors (left unchanged)".into(),
                format!("{} in {left_files} file(s)", s.errors),
            ],
            vec!["Warnings (to review)".into(), s.warnings.to_string()],
            vec!["Notes".into(), s.notes.to_string()],
            vec![
                "Hidden".into(),
                format!(
                    "{} suppressed by NOLINT, {} not selected",
                    s.suppressed, s.ignored
                ),
            ],
            vec![
                "Analysis".into(),
                if analysis.is_empty() {
                    "no file with OpenACC".into()
                } else {
                    analysis
                },
            ],
            vec![
                "Directives translated from syntax alone".into(),
                s.fell_back.to_string(),
            ],
        ],
    ));

    // Which configuration each file had (see the README's Configuration section).
    let mut configs: BTreeMap<(Option<&str>, &str), usize> = BTreeMap::new();
    for f in &run.files {
        *configs.entry((f.config, f.profile)).or_default() += 1;
    }
    if configs.len() > 1 {
        out.push(Block::Heading(2, "Configurations".into()));
        out.push(Block::Table(
            vec!["Configuration".into(), "Profile".into(), "Files".into()],
            configs
                .iter()
                .map(|((c, p), n)| vec![c.map_or("none".into(), code), code(p), n.to_string()])
                .collect(),
        ));
    }

    // What is left for a person, per rule: errors first, then warnings, then notes.
    out.push(Block::Heading(2, "Left for a person".into()));
    let mut by_rule: BTreeMap<(u8, &str), Vec<&Entry>> = BTreeMap::new();
    for e in run.shown() {
        let rank = match e.diag.severity {
            "error" => 0,
            "warning" => 1,
            _ => 2,
        };
        by_rule.entry((rank, e.diag.rule)).or_default().push(e);
    }
    if by_rule.is_empty() {
        out.push(Block::Para("Nothing: no diagnostic was reported.".into()));
    }
    let t = run.tables;
    for ((_, rule), entries) in &by_rule {
        let files: std::collections::BTreeSet<&str> =
            entries.iter().map(|e| e.diag.path.as_str()).collect();
        out.push(Block::Heading(
            3,
            format!(
                "{} ({}): {} in {} file(s)",
                code(rule),
                entries[0].diag.severity,
                entries.len(),
                files.len()
            ),
        ));
        if let Some(r) = t.diagnostic(rule) {
            out.push(Block::Para(format!("{} {}", r.summary, r.doc.trim())));
            out.push(Block::Para(format!(
                "More: {} (an example of the translation, where there is one).",
                code(&format!("acc2omp explain {rule}"))
            )));
        }
        const SHOWN: usize = 50;
        let mut items: Vec<String> = entries
            .iter()
            .take(SHOWN)
            .map(|e| format!("{} {}", location(e), e.diag.message))
            .collect();
        if entries.len() > SHOWN {
            items.push(format!(
                "… and {} more (see `--output-format json`)",
                entries.len() - SHOWN
            ));
        }
        out.push(Block::List(items));
    }

    // Directories.
    let mut dirs: BTreeMap<String, Counts> = BTreeMap::new();
    for (f, c) in run.files.iter().zip(&per_file) {
        dirs.entry(dir_of(&f.display)).or_default().add(c);
    }
    out.push(Block::Heading(2, "Directories".into()));
    out.push(Block::Table(
        [
            "Directory",
            "Files",
            "With OpenACC",
            "Directives",
            "Changed",
            "Errors",
            "Warnings",
        ]
        .map(String::from)
        .to_vec(),
        dirs.iter()
            .map(|(d, c)| {
                vec![
                    code(d),
                    c.files.to_string(),
                    c.with_openacc.to_string(),
                    c.directives.to_string(),
                    c.changed.to_string(),
                    num(c.errors),
                    num(c.warnings),
                ]
            })
            .collect(),
    ));

    // Files with OpenACC or diagnostics.
    out.push(Block::Heading(2, "Files".into()));
    let rows: Vec<Vec<String>> = run
        .files
        .iter()
        .zip(&per_file)
        .filter(|(_, c)| c.directives > 0 || c.errors + c.warnings + c.notes + c.hidden > 0)
        .map(|(f, c)| {
            vec![
                code(&f.display),
                c.directives.to_string(),
                yes(f.changed),
                what_changed(f),
                num(c.errors),
                num(c.warnings),
                f.mode.map(|m| m.describe()).unwrap_or_default(),
            ]
        })
        .collect();
    if rows.is_empty() {
        out.push(Block::Para("No file has OpenACC or a diagnostic.".into()));
    } else {
        out.push(Block::Table(
            [
                "File",
                "Directives",
                "Changed",
                "Migrated",
                "Errors",
                "Warnings",
                "Analysis",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        ));
    }

    // Files whose facts came from syntax.
    out.push(Block::Heading(2, "Translated from syntax alone".into()));
    let syntactic: Vec<String> = run
        .files
        .iter()
        .filter(|f| f.sites > 0 && (f.fell_back > 0 || f.mode.is_some_and(Mode::is_syntactic)))
        .map(|f| {
            let how = f.mode.map(|m| m.describe()).unwrap_or_default();
            let n = if f.mode.is_some_and(Mode::is_syntactic) {
                f.sites
            } else {
                f.fell_back
            };
            format!(
                "{}: {n} of {} directive(s) ({how})",
                code(&f.display),
                f.sites
            )
        })
        .collect();
    if syntactic.is_empty() {
        out.push(Block::Para(
            "None: libclang analyzed every file with OpenACC.".into(),
        ));
    } else {
        out.push(Block::Para(
            "Types and statements came from the tokens alone: implicit mappings and type checks were not made. Give libclang the file's flags (`-p`) or install libclang, and run again; `--require-clang` makes this an error.".into(),
        ));
        out.push(Block::List(syntactic));
    }

    // What was hidden.
    let hidden: Vec<String> = run
        .entries
        .iter()
        .filter_map(|e| {
            let why = match e.hidden? {
                Hidden::Suppressed => "suppressed by NOLINT",
                Hidden::Ignored => "not selected",
            };
            Some(format!(
                "{} {} ({}, {why}) {}",
                location(e),
                code(e.diag.rule),
                e.diag.severity,
                e.diag.message
            ))
        })
        .collect();
    if !hidden.is_empty() {
        out.push(Block::Heading(2, "Hidden diagnostics".into()));
        out.push(Block::Para(
            "Reported nowhere else. Hiding a diagnostic does not change the translation: a directive an error leaves unchanged is still OpenACC.".into(),
        ));
        out.push(Block::List(hidden));
    }
    out
}

/// Markdown table cells cannot hold `|` or line breaks.
fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

fn markdown(doc: &[Block]) -> String {
    let mut out = String::new();
    for b in doc {
        match b {
            Block::Heading(level, text) => {
                out.push_str(&format!("{} {text}\n\n", "#".repeat(*level as usize)))
            }
            Block::Para(text) => out.push_str(&format!("{text}\n\n")),
            Block::Table(head, rows) => {
                let line = |cells: &[String]| {
                    format!(
                        "| {} |\n",
                        cells
                            .iter()
                            .map(|c| md_cell(c))
                            .collect::<Vec<_>>()
                            .join(" | ")
                    )
                };
                out.push_str(&line(head));
                out.push_str(&format!("|{}\n", "---|".repeat(head.len())));
                for r in rows {
                    out.push_str(&line(r));
                }
                out.push('\n');
            }
            Block::List(items) => {
                for i in items {
                    out.push_str(&format!("- {}\n", i.replace('\n', " ")));
                }
                out.push('\n');
            }
        }
    }
    out
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Text with `code` spans, escaped.
fn html_text(s: &str) -> String {
    s.split('`')
        .enumerate()
        .map(|(k, part)| {
            if k % 2 == 1 {
                format!("<code>{}</code>", html_escape(part))
            } else {
                html_escape(part)
            }
        })
        .collect()
}

fn html(doc: &[Block]) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>acc2omp migration report</title>\n<style>\nbody{font-family:system-ui,sans-serif;max-width:72em;margin:2em auto;padding:0 1em;line-height:1.45}\ntable{border-collapse:collapse;margin:1em 0}\nth,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}\nth{background:#f3f3f3}\ncode{background:#f5f5f5;padding:0 .2em}\nh3{margin-top:1.6em}\n</style>\n</head>\n<body>\n",
    );
    for b in doc {
        match b {
            Block::Heading(level, text) => {
                out.push_str(&format!("<h{level}>{}</h{level}>\n", html_text(text)))
            }
            Block::Para(text) => out.push_str(&format!("<p>{}</p>\n", html_text(text))),
            Block::Table(head, rows) => {
                out.push_str("<table>\n");
                if head.iter().any(|h| !h.is_empty()) {
                    out.push_str("<tr>");
                    for h in head {
                        out.push_str(&format!("<th>{}</th>", html_text(h)));
                    }
                    out.push_str("</tr>\n");
                }
                for r in rows {
                    out.push_str("<tr>");
                    for c in r {
                        out.push_str(&format!("<td>{}</td>", html_text(c)));
                    }
                    out.push_str("</tr>\n");
                }
                out.push_str("</table>\n");
            }
            Block::List(items) => {
                out.push_str("<ul>\n");
                for i in items {
                    out.push_str(&format!("<li>{}</li>\n", html_text(i)));
                }
                out.push_str("</ul>\n");
            }
        }
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// The report for `run`, as Markdown or (for a `.html` path) HTML.
pub fn render(run: &RunView, path: &Path, mode: &str) -> String {
    let doc = document(run, mode);
    let is_html = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm"));
    if is_html { html(&doc) } else { markdown(&doc) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_escapes_and_marks_code() {
        assert_eq!(html_text("a `<b>` & c"), "a <code>&lt;b&gt;</code> &amp; c");
        assert_eq!(md_cell("a|b\nc"), "a\\|b c");
        assert_eq!(code("x`y"), "`x\u{2035}y`");
    }
}
