//! A file's edits gathered into hunks of whole lines: what each mode writes twice (once as
//! OpenACC, once as OpenMP) must be lines a preprocessor conditional or a `//` comment can
//! hold. A hunk never starts or ends inside a continued line (`\`), a comment or a literal
//! that spans lines, so a `#define` is always whole.

use crate::edit::{Edit, apply};
pub use crate::lex::conditional;
use crate::lex::{block_comment_end, lex, line_comment_end};
use std::collections::HashMap;
use std::ops::Range;

/// Lines `range` of the original text and what the translation makes of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub range: Range<usize>,
    pub new: String,
}

/// Physical lines of a text and where a preprocessor line could start.
pub struct Lines<'a> {
    src: &'a str,
    /// Start of each physical line.
    starts: Vec<usize>,
    /// Byte spans that cross a line end: multi-line tokens (continued preprocessor lines,
    /// raw strings, spliced words) and comments. No hunk boundary falls inside one.
    spans: Vec<Range<usize>>,
}

impl<'a> Lines<'a> {
    pub fn new(src: &'a str) -> Self {
        let b = src.as_bytes();
        let mut starts = vec![0];
        starts.extend(
            b.iter()
                .enumerate()
                .filter(|(_, c)| **c == b'\n')
                .map(|(i, _)| i + 1),
        );
        let mut spans = Vec::new();
        let mut prev = 0;
        let multi = |r: &Range<usize>| src[r.clone()].contains('\n');
        for t in lex(src) {
            spans.extend(comments(b, prev..t.start()).into_iter().filter(multi));
            let r = t.range();
            if multi(&r) {
                spans.push(r);
            }
            prev = t.end();
        }
        spans.extend(comments(b, prev..b.len()).into_iter().filter(multi));
        Lines { src, starts, spans }
    }

    pub fn line_start(&self, offset: usize) -> usize {
        self.starts[self.starts.partition_point(|&s| s <= offset).max(1) - 1]
    }

    /// Just after the line terminator of the line holding `offset` (or the end of the text).
    pub fn line_end(&self, offset: usize) -> usize {
        let k = self.starts.partition_point(|&s| s <= offset);
        self.starts.get(k).copied().unwrap_or(self.src.len())
    }

    /// Whether a preprocessor line could start at line start `at`: not in a continued line,
    /// a comment or a literal.
    pub fn boundary(&self, at: usize) -> bool {
        if at == 0 || at >= self.src.len() {
            return true;
        }
        // Spans are disjoint and in order.
        let k = self.spans.partition_point(|s| s.start < at);
        if k > 0 && at < self.spans[k - 1].end {
            return false;
        }
        // The previous line's terminator only: a blank line before `at` ends any splice.
        let before = &self.src[..at];
        let before = before.strip_suffix('\n').unwrap_or(before);
        let before = before.strip_suffix('\r').unwrap_or(before);
        !before.ends_with('\\')
    }

    /// Widen `r` to whole lines whose ends are boundaries.
    pub fn whole(&self, r: Range<usize>) -> Range<usize> {
        let mut a = self.line_start(r.start);
        while !self.boundary(a) {
            a = self.line_start(a - 1);
        }
        let last = if r.is_empty() { r.start } else { r.end - 1 };
        let mut b = if r.is_empty() && r.start == self.src.len() {
            r.start
        } else {
            self.line_end(last)
        };
        while !self.boundary(b) {
            b = self.line_end(b);
        }
        a..b
    }

    /// Whether the physical lines of `r` include a conditional directive (`#if` … `#endif`).
    pub fn has_conditional(&self, r: &Range<usize>) -> bool {
        let k = self.starts.partition_point(|&s| s < r.start);
        self.starts[k..]
            .iter()
            .take_while(|&&s| s < r.end)
            .any(|&s| self.boundary(s) && conditional(&self.src[s..self.line_end(s)]).is_some())
    }
}

/// Comments in the gap `r` between two tokens.
fn comments(b: &[u8], r: Range<usize>) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = r.start;
    while i + 1 < r.end {
        if b[i] == b'/' && (b[i + 1] == b'*' || b[i + 1] == b'/') {
            let e = if b[i + 1] == b'*' {
                block_comment_end(b, i)
            } else {
                line_comment_end(b, i)
            };
            out.push(i..e);
            i = e;
        } else {
            i += 1;
        }
    }
    out
}

/// Whether the conditional directives of `text` (whole lines) open and close within it.
pub fn balanced(text: &str) -> bool {
    let mut depth = 0usize;
    for line in text.split_inclusive('\n') {
        match conditional(line) {
            Some("if" | "ifdef" | "ifndef") => depth += 1,
            Some("endif") if depth > 0 => depth -= 1,
            Some("endif") => return false,
            Some(_) if depth == 0 => return false,
            _ => {}
        }
    }
    depth == 0
}

/// The file's `edits` as hunks. `translated` is what applying them gives: the hunks must give
/// it too, or the edits are not ones this module understands (an error).
pub fn hunks(lines: &Lines, edits: &[Edit], translated: &str) -> Result<Vec<Hunk>, &'static str> {
    let src = lines.src;
    let eol_at = |p: usize| {
        if src[p..].starts_with("\r\n") {
            2
        } else if src[p..].starts_with('\n') {
            1
        } else {
            0
        }
    };
    // A line inserted after a line's end (`stmt;` + `\n}`) is a line inserted before the
    // next one (`}\n`), unless another edit shares its place.
    let mut ends: HashMap<usize, usize> = HashMap::new();
    for e in edits {
        *ends.entry(e.range.start).or_default() += 1;
        if e.range.end != e.range.start {
            *ends.entry(e.range.end).or_default() += 1;
        }
    }
    let mut moved: Vec<(Edit, usize)> = Vec::with_capacity(edits.len());
    for e in edits {
        let p = e.range.start;
        let n = eol_at(p);
        let alone = || ends.get(&p) == Some(&1);
        if e.range.is_empty()
            && n > 0
            && e.text.starts_with(&src[p..p + n])
            && lines.boundary(p + n)
            && p + n < src.len()
            && alone()
        {
            let text = format!("{}{}", &e.text[n..], &src[p..p + n]);
            moved.push((Edit::insert(p + n, text), p));
        } else {
            moved.push((e.clone(), p));
        }
    }
    moved.sort_by_key(|(e, from)| (e.range.start, e.range.end, *from));
    let mut found: Vec<(Range<usize>, Vec<Edit>)> = Vec::new();
    for (e, _) in moved {
        if e.range.is_empty() && e.text.is_empty() {
            continue;
        }
        let line_insert = e.range.is_empty()
            && lines.line_start(e.range.start) == e.range.start
            && lines.boundary(e.range.start)
            && e.text.ends_with('\n');
        let r = if line_insert {
            e.range.clone()
        } else {
            lines.whole(e.range.clone())
        };
        found.push((r, vec![e]));
    }
    found.sort_by_key(|(r, _)| (r.start, r.end));
    let mut merged: Vec<(Range<usize>, Vec<Edit>)> = Vec::new();
    for (r, es) in found {
        if let Some((last, les)) = merged.last_mut() {
            let touch =
                r.start == last.end && !lines.has_conditional(&r) && !lines.has_conditional(last);
            if r.start < last.end || touch || (r.start == last.start && r.is_empty()) {
                last.end = last.end.max(r.end);
                les.extend(es);
                continue;
            }
        }
        merged.push((r, es));
    }
    let mut out = Vec::with_capacity(merged.len());
    let mut text = String::with_capacity(translated.len());
    let mut pos = 0;
    for (r, mut es) in merged {
        es.sort_by_key(|e| (e.range.start, e.range.end));
        for e in &mut es {
            e.range = e.range.start - r.start..e.range.end - r.start;
        }
        let new = apply(&src[r.clone()], &es).map_err(|_| "overlapping edits")?;
        text.push_str(&src[pos..r.start]);
        text.push_str(&new);
        pos = r.end;
        out.push(Hunk { range: r, new });
    }
    text.push_str(&src[pos..]);
    if text != translated {
        return Err("edits that are not whole lines");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_avoid_continuations_and_comments() {
        let s = "a;\n#define P \\\n  x\n/* c\nd */ e;\nf;\n";
        let l = Lines::new(s);
        let at = |t: &str| s.find(t).unwrap();
        assert!(l.boundary(at("#define")));
        assert!(!l.boundary(at("  x")));
        assert!(!l.boundary(at("d */")));
        assert!(l.boundary(at("f;")));
        assert_eq!(l.whole(at("x")..at("x") + 1), at("#define")..at("/* c"));
        assert_eq!(l.whole(at("e;")..at("e;")), at("/* c")..at("f;"));
        // A splice takes the next line only: after a blank one, a line starts again.
        let s = "// c \\\n\ny;\n// d \\\r\n\r\nz;\n";
        let l = Lines::new(s);
        let at = |t: &str| s.find(t).unwrap();
        assert!(!l.boundary(at("\ny;")));
        assert!(l.boundary(at("y;")));
        assert!(l.boundary(at("z;")));
    }

    #[test]
    fn touching_lines_merge_but_not_conditionals() {
        let s = "#ifdef _OPENACC\n#include <openacc.h>\n#endif\nx;\n";
        let l = Lines::new(s);
        let e = [
            Edit::replace(7..15, "_OPENMP"),
            Edit::replace(26..33, "omp"),
        ];
        let t = apply(s, &e).unwrap();
        let h = hunks(&l, &e, &t).unwrap();
        assert_eq!(h.len(), 2);
        assert_eq!(h[0].new, "#ifdef _OPENMP\n");
        assert_eq!(h[1].new, "#include <omp.h>\n");
    }

    #[test]
    fn a_line_added_after_a_statement_is_a_line_of_its_own() {
        let s = "{ a;\n  b;\n}\n";
        let e = [Edit::insert(9, "\n  }")];
        let t = apply(s, &e).unwrap();
        let h = hunks(&Lines::new(s), &e, &t).unwrap();
        assert_eq!(
            h,
            vec![Hunk {
                range: 10..10,
                new: "  }\n".into()
            }]
        );
    }

    #[test]
    fn balance() {
        assert!(balanced("#ifndef X\n#define X\n#endif\n"));
        assert!(!balanced("#ifdef _OPENACC\n"));
        assert!(!balanced("#else\n"));
        assert!(balanced("a;\n"));
    }
}
