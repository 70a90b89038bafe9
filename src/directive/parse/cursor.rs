//! The cursor over a directive's text (comments, `\` continuations and quotes skipped, in
//! the directive's dialect) and the directive name it reads first.

use super::{Dialect, ParseError};
use crate::directive::Text;
use crate::lex::{block_comment_end, line_comment_end, splice_len};
use crate::rules::{RuleId, id};
use std::ops::Range;

pub(super) struct Cursor<'a> {
    b: &'a [u8],
    src: &'a str,
    pub(super) pos: usize,
    end: usize,
    pub(super) comments: Vec<Range<usize>>,
    dialect: Dialect,
}

/// End of the quoted text whose quote is at `i`: C escapes with `\` and stops at a newline;
/// Fortran doubles the quote.
pub(super) fn quoted_end(b: &[u8], i: usize, dialect: Dialect) -> usize {
    match dialect {
        Dialect::C => crate::lex::quoted_end(b, i),
        Dialect::Fortran => {
            let mut k = i + 1;
            while k < b.len() {
                if b[k] == b[i] {
                    if b.get(k + 1) != Some(&b[i]) {
                        return k + 1;
                    }
                    k += 1;
                }
                k += 1;
            }
            b.len()
        }
    }
}

impl<'a> Cursor<'a> {
    pub(super) fn new(src: &'a str, range: Range<usize>, dialect: Dialect) -> Self {
        Cursor {
            b: src.as_bytes(),
            src,
            pos: range.start,
            end: range.end.min(src.len()),
            comments: Vec::new(),
            dialect,
        }
    }

    /// Skip blanks, line splices and comments (recording the comments). Fortran directive
    /// text comes with its comments and continuations already taken out.
    fn skip(&mut self) {
        while self.pos < self.end {
            let c = self.b[self.pos];
            let s = splice_len(self.b, self.pos);
            if self.dialect == Dialect::Fortran {
                if !c.is_ascii_whitespace() {
                    break;
                }
                self.pos += 1;
            } else if s > 0 {
                self.pos += s;
            } else if c.is_ascii_whitespace() {
                self.pos += 1;
            } else if self.b[self.pos..self.end].starts_with(b"/*") {
                let e = block_comment_end(self.b, self.pos).min(self.end);
                self.comments.push(self.pos..e);
                self.pos = e;
            } else if self.b[self.pos..self.end].starts_with(b"//") {
                let e = line_comment_end(self.b, self.pos).min(self.end);
                self.comments.push(self.pos..e);
                self.pos = e;
            } else {
                break;
            }
        }
    }

    pub(super) fn peek(&mut self) -> Option<u8> {
        self.skip();
        (self.pos < self.end).then(|| self.b[self.pos])
    }

    pub(super) fn word(&mut self) -> Option<Range<usize>> {
        self.skip();
        let start = self.pos;
        while self.pos < self.end
            && (self.b[self.pos].is_ascii_alphanumeric() || self.b[self.pos] == b'_')
        {
            self.pos += 1;
        }
        (self.pos > start).then_some(start..self.pos)
    }

    /// Peek at the next word without consuming it.
    fn peek_word(&mut self) -> Option<&'a str> {
        let save = (self.pos, self.comments.len());
        let w = self.word().map(|r| &self.src[r]);
        self.pos = save.0;
        self.comments.truncate(save.1);
        w
    }

    pub(super) fn err(&self, offset: usize, rule: RuleId, message: String) -> ParseError {
        ParseError {
            offset,
            message,
            rule,
        }
    }

    /// A balanced `( ... )` starting at the cursor; returns the inside range.
    pub(super) fn parens(&mut self) -> Result<Range<usize>, ParseError> {
        self.skip();
        let open = self.pos;
        let mut depth = 0usize;
        let mut i = self.pos;
        while i < self.end {
            match self.b[i] {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        if self.b[i] != b')' {
                            break;
                        }
                        self.pos = i + 1;
                        return Ok(open + 1..i);
                    }
                }
                b'"' | b'\'' => {
                    i = quoted_end(self.b, i, self.dialect);
                    continue;
                }
                b'/' if self.dialect == Dialect::C && self.b.get(i + 1) == Some(&b'*') => {
                    i = block_comment_end(self.b, i);
                    continue;
                }
                // A `//` comment runs to the end of the directive: a parenthesis in it is
                // no part of the clause (`copy(a//[0:n])` is `copy(a`).
                b'/' if self.dialect == Dialect::C && self.b.get(i + 1) == Some(&b'/') => {
                    i = line_comment_end(self.b, i);
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        Err(self.err(open, id::PARSE_ERROR, "unbalanced parentheses".into()))
    }
}
/// The directive name at the cursor (`enter data`, `parallel loop`), resolved only as far
/// as its words go: whether it is a known directive is checked by the caller.
pub(super) fn read_name(cur: &mut Cursor) -> Result<(Text, Range<usize>), ParseError> {
    if cur.dialect == Dialect::Fortran {
        return fortran_name(cur).map(|(name, span)| (name.into(), span));
    }
    let src = cur.src;
    let first = cur.word().ok_or_else(|| {
        cur.err(
            cur.pos,
            id::PARSE_ERROR,
            "expected an OpenACC directive name".into(),
        )
    })?;
    // Held inline (a second word makes `enter data`, `parallel loop`).
    let mut name = Text::new(&src[first.clone()]);
    let mut name_span = first.clone();
    match name.as_str() {
        "enter" | "exit" => match cur.word() {
            Some(w) if &src[w.clone()] == "data" => {
                name.push_str(" data");
                name_span.end = w.end;
            }
            _ => {
                return Err(cur.err(
                    first.start,
                    id::PARSE_ERROR,
                    format!("expected 'data' after '{name}'"),
                ));
            }
        },
        "parallel" | "serial" | "kernels" if cur.peek_word() == Some("loop") => {
            let w = cur.word().unwrap_or(first.clone());
            name.push_str(" loop");
            name_span.end = w.end;
        }
        _ => {}
    }
    Ok((name, name_span))
}

/// Fortran directive names of several words. Blanks between the words are optional in
/// Fortran (gfortran and flang read `!$acc enterdata`, `!$acc endparallel`); an `end`
/// directive names the construct it ends (`end loop` is redundant: gfortran accepts it
/// right after the loop). Longest first: the first that matches wins.
const FORTRAN_NAMES: [&[&str]; 15] = [
    &["end", "parallel", "loop"],
    &["end", "kernels", "loop"],
    &["end", "serial", "loop"],
    &["end", "host_data"],
    &["end", "parallel"],
    &["end", "kernels"],
    &["end", "serial"],
    &["end", "atomic"],
    &["end", "data"],
    &["end", "loop"],
    &["parallel", "loop"],
    &["kernels", "loop"],
    &["serial", "loop"],
    &["enter", "data"],
    &["exit", "data"],
];

/// A Fortran directive name at the cursor, in lower case: one of [`FORTRAN_NAMES`] with
/// or without blanks between its words, or one word.
fn fortran_name(cur: &mut Cursor) -> Result<(String, Range<usize>), ParseError> {
    cur.skip();
    let start = cur.pos;
    let b = cur.b;
    let name_char = |k: usize| k < cur.end && (b[k].is_ascii_alphanumeric() || b[k] == b'_');
    let first = b.get(start).map(u8::to_ascii_lowercase);
    for words in FORTRAN_NAMES {
        if first != words[0].bytes().next() {
            continue;
        }
        let mut k = start;
        let matched = words.iter().enumerate().all(|(n, word)| {
            if n > 0 {
                while k < cur.end && (b[k] == b' ' || b[k] == b'\t') {
                    k += 1;
                }
            }
            let ok = b.get(k..k + word.len()).is_some_and(|w| {
                k + word.len() <= cur.end && w.eq_ignore_ascii_case(word.as_bytes())
            });
            k += word.len();
            ok
        });
        if matched && !name_char(k) {
            cur.pos = k;
            return Ok((words.join(" "), start..k));
        }
    }
    let w = cur.word().ok_or_else(|| {
        cur.err(
            cur.pos,
            id::PARSE_ERROR,
            "expected an OpenACC directive name".into(),
        )
    })?;
    let name = cur.src[w.clone()].to_ascii_lowercase();
    match name.as_str() {
        "enter" | "exit" => Err(cur.err(
            w.start,
            id::PARSE_ERROR,
            format!("expected 'data' after '{name}'"),
        )),
        "end" => Err(cur.err(
            w.start,
            id::PARSE_ERROR,
            "'end' must name the construct it ends: parallel, kernels, serial, their 'loop' \
             forms, loop, data, host_data or atomic"
                .into(),
        )),
        _ => Ok((name, w)),
    }
}
