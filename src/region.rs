//! What a directive applies to, as every front end describes it: the statement (or, in
//! Fortran, the statements up to the end directive) and the loop at its start, and how the
//! sites nest. Positions are byte offsets and indices of the front end's own tokens, which
//! the shared code only passes back to it.

use crate::source::{Index32, Span32, narrow};
use compact_str::CompactString;
use std::ops::Range;

/// The loop a loop directive applies to: a `for` loop in C and C++, a `do` loop in Fortran.
/// Token indices are kept in 32 bits, as in [`Stmt`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForLoop {
    /// The loop control variable, when the loop names one.
    /// Inline: loop variables are short, and every statement of a loop site holds one.
    pub var: Option<CompactString>,
    /// Declared by the loop itself (`for (int i = ...)`; `do concurrent (integer :: i = …)`)
    /// rather than assigned (`for (i = ...)`, `do i = …`).
    pub declared: bool,
    for_tok: u32,
    body: Span32,
}

impl ForLoop {
    pub fn new(
        var: Option<CompactString>,
        declared: bool,
        for_tok: usize,
        body: Range<usize>,
    ) -> Self {
        ForLoop {
            var,
            declared,
            for_tok: narrow(for_tok),
            body: Span32::new(body),
        }
    }
    /// Token index of the `for` (`do`) keyword.
    pub fn for_tok(&self) -> usize {
        self.for_tok as usize
    }
    /// Token range of the loop body.
    pub fn body(&self) -> Range<usize> {
        self.body.get()
    }
}

/// The statement a directive applies to. One per site of a large file: offsets and indices
/// are kept in 32 bits (a longer text is not read, see [`crate::lex::MAX_TEXT`]).
#[derive(Debug, Clone)]
pub struct Stmt {
    toks: Span32,
    bytes: Span32,
    /// The loop at the start of the statement (after any nested directives).
    pub for_loop: Option<ForLoop>,
    end: Index32,
}

impl Stmt {
    pub fn new(
        toks: Range<usize>,
        bytes: Range<usize>,
        for_loop: Option<ForLoop>,
        end: Option<usize>,
    ) -> Self {
        Stmt {
            toks: Span32::new(toks),
            bytes: Span32::new(bytes),
            for_loop,
            end: Index32::new(end),
        }
    }
    /// Token range (first..one past last).
    pub fn toks(&self) -> Range<usize> {
        self.toks.get()
    }
    /// Byte range.
    pub fn bytes(&self) -> Range<usize> {
        self.bytes.get()
    }
    /// The site of the directive that ends the region (Fortran's `!$acc end parallel`);
    /// None in C, where the statement ends the region.
    pub fn end(&self) -> Option<usize> {
        self.end.get()
    }
}

/// Parent of each site by containment of (directive start .. statement end) `ranges`. A site
/// nests in another only from where that other's statement starts (`body(i)`, at or after
/// its range's start), so that two directives before one statement, in different branches
/// of a preprocessor conditional, are siblings (alternatives), not one inside the other.
pub fn nesting(
    ranges: &[Option<Range<usize>>],
    body: impl Fn(usize) -> usize,
) -> Vec<Option<usize>> {
    let mut order: Vec<usize> = (0..ranges.len()).filter(|&i| ranges[i].is_some()).collect();
    order.sort_by_key(|&i| {
        ranges[i]
            .as_ref()
            .map(|r| (r.start, std::cmp::Reverse(r.end)))
    });
    let mut parent = vec![None; ranges.len()];
    let mut stack: Vec<usize> = Vec::new();
    for i in order {
        let r = ranges[i].clone().unwrap_or(0..0);
        while let Some(&top) = stack.last() {
            let t = ranges[top].clone().unwrap_or(0..0);
            if r.start >= t.start.max(body(top)) && r.end <= t.end && r != t {
                break;
            } else {
                stack.pop();
            }
        }
        parent[i] = stack.last().copied();
        stack.push(i);
    }
    parent
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_by_containment() {
        let r = vec![Some(0..100), Some(10..50), Some(20..30), Some(60..90)];
        let start = |i: usize| r[i].as_ref().map_or(0, |r| r.start);
        assert_eq!(nesting(&r, start), vec![None, Some(0), Some(1), Some(0)]);
        // Two directives (60, 65) before one statement (70..90), alternatives: siblings in
        // the site around them; a site inside the statement nests in the last of them.
        let r = vec![Some(0..100), Some(60..90), Some(65..90), Some(75..80)];
        let body = |i: usize| [0, 70, 70, 75][i];
        assert_eq!(nesting(&r, body), vec![None, Some(0), Some(0), Some(2)]);
    }

    /// A file of many loop directives holds one statement each: its loop variable is kept
    /// inline, without an allocation per loop, and its offsets in 32 bits.
    #[test]
    fn loop_variable_inline() {
        let f = ForLoop::new(Some("index_of_row".into()), false, 0, 0..0);
        assert!(!f.var.as_ref().is_some_and(|v| v.is_heap_allocated()));
        assert!(
            size_of::<Option<Stmt>>() <= 64,
            "{}",
            size_of::<Option<Stmt>>()
        );
    }
}
