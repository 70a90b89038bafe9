//! The statement holding a token, asked for many tokens of one region (carried scalars: once per
//! scalar written in a gang loop): the statements of a region or block asked about again are
//! listed once with their ends, and each token's statement is found by a binary search, not
//! by a walk over the statements before it.

use super::assigned::LastAsked;
use super::blocks;
use crate::hash::HashMap;
use crate::structure::Structure;
use std::ops::Range;

/// Ranges asked about by one thread: once (none), or again (their statements and ends).
#[derive(Default)]
pub(super) struct Bounds(HashMap<(usize, usize), Option<Listed>>);

/// A range's statements in order, each with its end (none for the last one when its end is
/// not found).
type Listed = Vec<(usize, Option<usize>)>;

/// Ranges remembered per thread before they are forgotten all at once.
const RANGES: usize = 64;

/// The statement holding token `t`, directly in the region or in a compound statement in it
/// (through `{ }` only): the same answer as the walk over each block's statements.
pub(super) fn statement_of(
    last: &LastAsked<Bounds>,
    st: &Structure,
    range: Range<usize>,
    t: usize,
) -> Option<Range<usize>> {
    let mut known = last.take().unwrap_or_default();
    if known.0.len() > RANGES {
        known.0.clear();
    }
    let answer =
        blocks::statement_of_with(st, range, |r| match known.0.get_mut(&(r.start, r.end)) {
            None => {
                known.0.insert((r.start, r.end), None);
                blocks::holding_in(st, r, t)
            }
            Some(listed) => holding(listed.get_or_insert_with(|| statements(st, r)), t),
        });
    last.put(known);
    answer
}

/// The statements of `range`.
fn statements(st: &Structure, range: &Range<usize>) -> Listed {
    st.statements_in(range)
        .into_iter()
        .map(|s| (s, st.stmt_end(s)))
        .collect()
}

/// [`blocks::holding_in`] from the statements of the range: they follow each other, so only
/// the last one starting at or before `t` can hold it.
fn holding(listed: &[(usize, Option<usize>)], t: usize) -> Option<Range<usize>> {
    let k = listed.partition_point(|&(s, _)| s <= t);
    let (s, e) = *listed.get(k.checked_sub(1)?)?;
    let e = e?;
    (t < e).then_some(s..e)
}

#[cfg(test)]
mod tests;
