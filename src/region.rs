//! What a directive applies to, as every front end describes it: the statement (or, in
//! Fortran, the statements up to the end directive) and the loop at its start, and how the
//! sites nest. Positions are byte offsets and indices of the front end's own tokens, which
//! the shared code only passes back to it.

use compact_str::CompactString;
use std::ops::Range;

/// The loop a loop directive applies to: a `for` loop in C and C++, a `do` loop in Fortran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForLoop {
    /// The loop control variable, when the loop names one.
    /// Inline: loop variables are short, and every statement of a loop site holds one.
    pub var: Option<CompactString>,
    /// Declared by the loop itself (`for (int i = ...)`; `do concurrent (integer :: i = …)`)
    /// rather than assigned (`for (i = ...)`, `do i = …`).
    pub declared: bool,
    /// Token index of the `for` (`do`) keyword.
    pub for_tok: usize,
    /// Token range of the loop body.
    pub body: Range<usize>,
}

/// The statement a directive applies to.
#[derive(Debug, Clone)]
pub struct Stmt {
    /// Token range (first..one past last).
    pub toks: Range<usize>,
    /// Byte range.
    pub bytes: Range<usize>,
    /// The loop at the start of the statement (after any nested directives).
    pub for_loop: Option<ForLoop>,
    /// The site of the directive that ends the region (Fortran's `!$acc end parallel`);
    /// None in C, where the statement ends the region.
    pub end: Option<usize>,
}

/// Parent of each site by containment of (site start .. statement end) ranges.
pub fn nesting(ranges: &[Option<Range<usize>>]) -> Vec<Option<usize>> {
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
            if r.start >= t.start && r.end <= t.end && r != t {
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
        assert_eq!(nesting(&r), vec![None, Some(0), Some(1), Some(0)]);
    }

    /// A file of many loop directives holds one statement each: its loop variable is kept
    /// inline, without an allocation per loop.
    #[test]
    fn loop_variable_inline() {
        let f = ForLoop {
            var: Some("index_of_row".into()),
            declared: false,
            for_tok: 0,
            body: 0..0,
        };
        assert!(!f.var.as_ref().is_some_and(|v| v.is_heap_allocated()));
        assert!(size_of::<Stmt>() <= 104);
    }
}
