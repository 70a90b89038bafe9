//! Fixes: the engine's edits grouped by the construct they migrate, so that each can be
//! reported with a diagnostic (`--export-fixes`, JSON, SARIF). A file's fixes never touch each
//! other, and applying all of them gives exactly the translated file.

use crate::edit::Edit;
use std::ops::Range;

/// The edits of one construct, in the translator's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextFix {
    /// Where the construct starts (the diagnostic's position).
    pub offset: usize,
    /// The construct's own bytes (diagnostics inside it carry this fix).
    pub span: Range<usize>,
    pub message: String,
    pub edits: Vec<Edit>,
}

/// One replacement of the file's bytes `offset..offset + length`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    pub offset: usize,
    pub length: usize,
    pub text: Vec<u8>,
}

/// A fix in the file's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    pub offset: usize,
    pub span: Range<usize>,
    pub message: String,
    pub replacements: Vec<Replacement>,
}

impl Fix {
    /// Whether a diagnostic at `offset` is about this fix's construct.
    pub fn covers(&self, offset: usize) -> bool {
        self.span.contains(&offset) || self.offset == offset
    }
}

/// Merge fixes whose edits touch (adjacent or at one insertion point), and within a fix
/// join touching edits, so that no two replacements of a file touch: tools that apply them
/// (clang-apply-replacements) then need no ordering rule. The order of edits at one offset
/// is kept as given, as `edit::apply` keeps it.
pub fn group(mut fixes: Vec<TextFix>) -> Vec<TextFix> {
    // (fix, edit) pairs in the order `edit::apply` applies them. The edits' texts move into
    // the groups (a large file has millions of them).
    let mut all: Vec<(usize, usize)> = fixes
        .iter()
        .enumerate()
        .flat_map(|(f, x)| {
            x.edits
                .iter()
                .enumerate()
                .filter(|(_, e)| !(e.range.is_empty() && e.text.is_empty()))
                .map(move |(k, _)| (f, k))
        })
        .collect();
    let range = |fixes: &[TextFix], (f, k): (usize, usize)| fixes[f].edits[k].range.clone();
    all.sort_by_key(|&p| {
        let r = range(&fixes, p);
        (r.start, r.end)
    });
    let mut parent: Vec<usize> = (0..fixes.len()).collect();
    fn root(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    for w in all.windows(2) {
        let (fa, fb) = (w[0].0, w[1].0);
        if range(&fixes, w[1]).start <= range(&fixes, w[0]).end {
            let (ra, rb) = (root(&mut parent, fa), root(&mut parent, fb));
            parent[ra.max(rb)] = ra.min(rb);
        }
    }
    // Kept until the file's fixes are written: no more room than one group per fix.
    let mut out: Vec<TextFix> = Vec::with_capacity(fixes.len());
    let mut slot: Vec<Option<usize>> = vec![None; fixes.len()];
    // Whether a fix's offset, span and message are in its group yet: once per fix, not per
    // edit (a message is searched for in the group's).
    let mut met = vec![false; fixes.len()];
    for &(f, k) in &all {
        let r = root(&mut parent, f);
        let i = *slot[r].get_or_insert_with(|| {
            out.push(TextFix {
                offset: fixes[r].offset,
                span: fixes[r].span.clone(),
                message: String::new(),
                // Most groups are one fix, whose touching edits are joined below.
                edits: Vec::with_capacity(fixes[f].edits.len()),
            });
            out.len() - 1
        });
        let fix = &mut out[i];
        let x = &mut fixes[f];
        if !std::mem::replace(&mut met[f], true) {
            fix.offset = fix.offset.min(x.offset);
            fix.span = fix.span.start.min(x.span.start)..fix.span.end.max(x.span.end);
            if fix.message.is_empty() {
                // The group's first message moves (an empty one stays empty either way).
                fix.message = std::mem::take(&mut x.message);
            } else if !fix.message.split("; ").any(|m| m == x.message) {
                fix.message.push_str("; ");
                fix.message.push_str(&x.message);
            }
        }
        let e = &mut x.edits[k];
        match fix.edits.last_mut() {
            Some(last) if last.range.end == e.range.start => {
                last.range.end = e.range.end;
                last.text.push_str(&e.text);
            }
            _ => fix.edits.push(Edit {
                range: e.range.clone(),
                text: std::mem::take(&mut e.text),
            }),
        }
    }
    out.sort_by_key(|f| f.offset);
    out.shrink_to_fit();
    for f in &mut out {
        f.edits.shrink_to_fit();
    }
    out
}

/// A short, one-line description of what an edit of `src` does, for runtime and header
/// edits that have no directive name.
pub fn describe(src: &str, e: &Edit) -> String {
    let first_line = |s: &str| -> String {
        let l = s.trim().lines().next().unwrap_or("").trim();
        let mut t: String = l.chars().take(60).collect();
        if t.len() < l.len() {
            t.push('…');
        }
        t
    };
    let old = src.get(e.range.clone()).unwrap_or("");
    if old.trim().is_empty() {
        format!("insert '{}'", first_line(&e.text))
    } else {
        format!("'{}' migrated to OpenMP", first_line(old))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::apply;

    fn fix(offset: usize, edits: Vec<Edit>) -> TextFix {
        TextFix {
            offset,
            span: offset..offset + 1,
            message: format!("m{offset}"),
            edits,
        }
    }

    #[test]
    fn touching_fixes_merge_and_the_result_is_unchanged() {
        let src = "0123456789";
        let fixes = vec![
            fix(0, vec![Edit::replace(0..2, "ab"), Edit::insert(2, "+")]),
            fix(2, vec![Edit::replace(2..3, "C")]),
            fix(6, vec![Edit::delete(6..7)]),
            fix(9, vec![Edit::insert(9, "")]),
        ];
        let all: Vec<Edit> = fixes.iter().flat_map(|f| f.edits.clone()).collect();
        let g = group(fixes);
        assert_eq!(g.len(), 2, "{g:?}");
        assert_eq!(g[0].edits, vec![Edit::replace(0..3, "ab+C")]);
        assert_eq!(g[0].message, "m0; m2");
        assert_eq!(g[0].span, 0..3);
        let edits: Vec<Edit> = g.iter().flat_map(|f| f.edits.clone()).collect();
        assert_eq!(apply(src, &edits).unwrap(), apply(src, &all).unwrap());
    }

    #[test]
    fn a_fix_of_several_edits_gives_its_message_once() {
        let mut a = fix(0, vec![Edit::insert(0, "x"), Edit::replace(1..2, "y")]);
        a.message = "first; second".into();
        let b = fix(5, vec![Edit::replace(5..6, "z"), Edit::insert(8, "w")]);
        let g = group(vec![a, b]);
        assert_eq!(g.len(), 2, "{g:?}");
        assert_eq!(g[0].message, "first; second");
        assert_eq!(g[1].message, "m5");
        assert_eq!(
            g[0].edits,
            vec![Edit::insert(0, "x"), Edit::replace(1..2, "y")]
        );
    }

    #[test]
    fn descriptions_are_one_line() {
        let src = "#include <openacc.h>\nx";
        assert_eq!(
            describe(src, &Edit::replace(0..20, "#include <omp.h>")),
            "'#include <openacc.h>' migrated to OpenMP"
        );
        assert_eq!(
            describe(src, &Edit::insert(21, "\n#include <omp.h>\nint q;")),
            "insert '#include <omp.h>'"
        );
    }
}
