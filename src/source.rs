//! A source file's text and the mapping from byte offsets to line and column.

use std::ops::Range;

/// Byte offset → 1-based (line, column); columns count bytes, as clang does.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        Self::of_bytes(text.as_bytes(), b'\n')
    }

    /// Lines of a file's bytes, ended by `terminator` (LF, or CR in a CR-only file).
    pub fn of_bytes(bytes: &[u8], terminator: u8) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(terminator, bytes).map(|i| i + 1));
        LineIndex { starts }
    }

    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        (line, offset - self.starts[line - 1] + 1)
    }

    /// Offset where the line containing `offset` starts.
    pub fn line_start(&self, offset: usize) -> usize {
        self.starts[self.line_col(offset).0 - 1]
    }
}

/// The line terminator a file mostly uses, for any text we insert that spans lines.
pub fn line_ending(text: &str) -> &'static str {
    let b = text.as_bytes();
    let (mut crlf, mut lf) = (0usize, 0usize);
    for i in memchr::memchr_iter(b'\n', b) {
        if i > 0 && b[i - 1] == b'\r' {
            crlf += 1;
        } else {
            lf += 1;
        }
    }
    if crlf > lf { "\r\n" } else { "\n" }
}

/// Leading whitespace of the line containing `offset`.
pub fn indentation(text: &str, line_start: usize) -> &str {
    let rest = &text[line_start..];
    let n = rest
        .bytes()
        .take_while(|b| *b == b' ' || *b == b'\t')
        .count();
    &rest[..n]
}

/// The length of the blanks and comments at the start of `rest` up to its line's end, or
/// None when a comment goes on past the line end (a block comment over several lines, a
/// spliced `//` comment) or code follows.
pub fn blank_to_line_end(rest: &[u8]) -> Option<usize> {
    let mut k = 0;
    loop {
        match rest.get(k..).unwrap_or_default() {
            [] | [b'\n', ..] | [b'\r', ..] => return Some(k),
            [b' ' | b'\t', ..] => k += 1,
            [b'/', b'*', ..] => {
                let e = crate::lex::block_comment_end(rest, k);
                if rest[k..e].contains(&b'\n')
                    || rest[k..e].contains(&b'\r')
                    || !rest[..e].ends_with(b"*/")
                {
                    return None;
                }
                k = e;
            }
            [b'/', b'/', ..] => {
                let e = crate::lex::line_comment_end(rest, k);
                if rest[k..e].contains(&b'\n') || rest[k..e].contains(&b'\r') {
                    return None;
                }
                k = e;
            }
            _ => return None,
        }
    }
}

/// A byte or token range of a text of at most [`crate::lex::MAX_TEXT`] bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span32 {
    lo: u32,
    hi: u32,
}

impl Span32 {
    pub(crate) fn new(r: Range<usize>) -> Self {
        Span32 {
            lo: narrow(r.start),
            hi: narrow(r.end),
        }
    }
    pub(crate) fn get(self) -> Range<usize> {
        self.lo as usize..self.hi as usize
    }
}

/// An optional index of a token or a site: a text of at most [`crate::lex::MAX_TEXT`] bytes
/// has fewer of either than `u32::MAX`, which stands for none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Index32(u32);

impl Index32 {
    pub(crate) fn new(i: Option<usize>) -> Self {
        Index32(i.map_or(u32::MAX, narrow))
    }
    pub(crate) fn get(self) -> Option<usize> {
        (self.0 != u32::MAX).then_some(self.0 as usize)
    }
}

/// An offset or token index of a text the lexers take, which fits 32 bits (a longer text's
/// translation ends, as the lexers' own).
pub(crate) fn narrow(o: usize) -> u32 {
    u32::try_from(o).unwrap_or_else(|_| crate::memory::too_long())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_is_one_based() {
        let idx = LineIndex::new("ab\ncd\r\nef");
        assert_eq!(idx.line_col(0), (1, 1));
        assert_eq!(idx.line_col(4), (2, 2));
        assert_eq!(idx.line_col(7), (3, 1));
        assert_eq!(idx.line_start(8), 7);
    }

    #[test]
    fn detects_crlf() {
        assert_eq!(line_ending("a\r\nb\r\n"), "\r\n");
        assert_eq!(line_ending("a\nb"), "\n");
        assert_eq!(line_ending(""), "\n");
    }
}
