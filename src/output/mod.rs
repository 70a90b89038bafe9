//! What a run prints and writes: diagnostics as text, JSON, SARIF or GitHub annotations,
//! clang-tidy fix files, unified diffs. Every output reads the same [`RunView`].

pub mod clang_tidy;
pub mod diff;
pub mod github;
pub mod json;
pub mod sarif;
pub mod text;

use crate::diag::Located;
use crate::fix::Fix;
use crate::rules::DiagnosticRule;
use crate::semantic::Mode;
use std::collections::BTreeMap;
use std::path::PathBuf;

pub use diff::{unified_diff, write_unified_diff_of_changes};

/// Why a diagnostic is not reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hidden {
    /// Not selected (`--select`, `--ignore`).
    Ignored,
    /// A NOLINT comment.
    Suppressed,
}

/// One input file after the run.
#[derive(Debug)]
pub struct FileView<'a> {
    /// As shown in messages (relative to the current directory when below it).
    pub display: String,
    /// The file written (a link's target), absolute; None for standard input.
    pub abs: Option<PathBuf>,
    /// Its bytes as read.
    pub source: &'a [u8],
    /// Its line terminator (`\n`, `\r` in a CR-only file).
    pub terminator: u8,
    pub fixes: &'a [Fix],
    /// (start, index) of each fix's span and offset, sorted: see [`FileView::fix_at`].
    pub fix_starts: Vec<(usize, usize)>,
    /// The translation differs from the input.
    pub changed: bool,
    /// OpenACC directives found.
    pub sites: usize,
    pub mode: Option<&'a Mode>,
    /// Directives whose facts came from syntax although libclang was used.
    pub fell_back: usize,
    /// The configuration it was translated with, as shown (None: none), and its profile.
    pub config: Option<&'a str>,
    pub profile: &'static str,
}

impl FileView<'_> {
    /// The sorted starts of `fixes` for [`FileView::fix_at`].
    pub fn fix_starts(fixes: &[Fix]) -> Vec<(usize, usize)> {
        let mut v: Vec<(usize, usize)> = fixes
            .iter()
            .enumerate()
            .flat_map(|(i, f)| [(f.span.start, i), (f.offset, i)])
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The index of the fix whose construct a diagnostic at `at` is about, the innermost
    /// when a runtime call's fix lies in a directive's. Constructs nest only that shallowly,
    /// so a few fixes starting before `at` are looked at (a binary search: a file can have
    /// 100,000 fixes and diagnostics).
    pub fn fix_at(&self, at: usize) -> Option<usize> {
        let end = self.fix_starts.partition_point(|(s, _)| *s <= at);
        let mut before = 0;
        for &(start, i) in self.fix_starts[..end].iter().rev() {
            if self.fixes[i].covers(at) {
                return Some(i);
            }
            before += usize::from(start < at);
            if before == 4 {
                break;
            }
        }
        None
    }
}

/// A diagnostic of the run, with its file when it has one.
#[derive(Debug, Clone)]
pub struct Entry {
    pub diag: Located,
    /// Index in [`RunView::files`].
    pub file: Option<usize>,
    pub hidden: Option<Hidden>,
}

/// The counts of the summary line.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub files: usize,
    pub with_openacc: usize,
    pub directives: usize,
    pub changed: usize,
    pub errors: usize,
    pub warnings: usize,
    pub notes: usize,
    pub suppressed: usize,
    pub ignored: usize,
    /// Regions translated from syntax (libclang missing, failing, or disagreeing).
    pub fell_back: usize,
}

/// Everything the outputs need about a finished run.
#[derive(Debug)]
pub struct RunView<'a> {
    pub files: Vec<FileView<'a>>,
    pub entries: Vec<Entry>,
    pub summary: Summary,
    /// The profiles the files were translated with (one name, or several joined by `, `
    /// when configurations differ).
    pub profile: String,
    /// The run configuration's tables: the rules' documentation in SARIF, the report and
    /// the statistics (each diagnostic already has its own file's severity).
    pub tables: &'a crate::rules::Tables,
}

impl RunView<'_> {
    /// Diagnostics that are reported.
    pub fn shown(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(|e| e.hidden.is_none())
    }

    /// The fix of the construct a diagnostic is about.
    pub fn fix_of(&self, e: &Entry) -> Option<&Fix> {
        let at = e.diag.range.as_ref()?.start;
        let f = &self.files[e.file?];
        f.fix_at(at).map(|i| &f.fixes[i])
    }

    /// Shown diagnostics per rule, most frequent first.
    pub fn statistics(&self) -> Vec<(&'static str, &'static str, usize)> {
        let mut m: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        for e in self.shown() {
            *m.entry((e.diag.rule, e.diag.severity)).or_default() += 1;
        }
        let mut v: Vec<_> = m.into_iter().map(|((r, s), n)| (r, s, n)).collect();
        v.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(b.0)));
        v
    }
}

/// The text `acc2omp explain ID` prints.
pub fn explain(r: &DiagnosticRule) -> String {
    let mut s = format!(
        "{} ({})\n\n{}\n\n{}\n",
        r.id,
        r.severity.as_str(),
        r.summary,
        r.doc.trim()
    );
    if let (Some(b), Some(a)) = (&r.before, &r.after) {
        let indent = |s: &str| -> String { s.lines().map(|l| format!("    {l}\n")).collect() };
        s.push_str(&format!(
            "\nBefore:\n\n{}\nAfter:\n\n{}",
            indent(b),
            indent(a)
        ));
    }
    s
}

/// `--statistics`: one line per rule, counts aligned.
pub fn statistics_table(run: &RunView) -> String {
    let stats = run.statistics();
    let w = stats.iter().map(|s| s.0.len()).max().unwrap_or(0);
    let n = stats
        .iter()
        .map(|s| s.2.to_string().len())
        .max()
        .unwrap_or(1);
    let mut out = String::new();
    for (rule, sev, count) in &stats {
        let summary = run
            .tables
            .diagnostic(rule)
            .map_or("", |r| r.summary.as_str());
        out.push_str(&format!("{count:>n$}  {rule:<w$}  {sev:<7}  {summary}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(span: std::ops::Range<usize>) -> Fix {
        Fix {
            offset: span.start,
            span,
            message: String::new(),
            replacements: Vec::new(),
        }
    }

    #[test]
    fn the_fix_of_a_position_is_the_innermost_construct_holding_it() {
        // A directive at 10..40 with a runtime call's fix at 20..25 inside, another at 50..60.
        let fixes = [fix(10..40), fix(20..25), fix(50..60)];
        let f = FileView {
            display: String::new(),
            abs: None,
            source: b"",
            terminator: b'\n',
            fixes: &fixes,
            fix_starts: FileView::fix_starts(&fixes),
            changed: true,
            sites: 2,
            mode: None,
            fell_back: 0,
            config: None,
            profile: "default",
        };
        let at = |o| f.fix_at(o);
        assert_eq!(
            [
                at(5),
                at(10),
                at(21),
                at(30),
                at(45),
                at(50),
                at(59),
                at(60)
            ],
            [
                None,
                Some(0),
                Some(1),
                Some(0),
                None,
                Some(2),
                Some(2),
                None
            ]
        );
    }
}
