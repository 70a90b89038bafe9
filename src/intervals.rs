//! Byte ranges asked "what contains this offset?" many times: logarithmic queries, so that
//! a pass over every token of a file with 100,000 directives stays linear.

use std::collections::BTreeMap;
use std::ops::Range;

/// A union of ranges that grows while it is queried (what a pass has already handled).
#[derive(Debug, Default, Clone)]
pub struct Covered {
    /// Disjoint, non-adjacent ranges: start → end.
    spans: BTreeMap<usize, usize>,
}

impl Covered {
    pub fn insert(&mut self, r: Range<usize>) {
        if r.is_empty() {
            return;
        }
        let (mut start, mut end) = (r.start, r.end);
        // Absorb every range that overlaps or touches `start..end`.
        if let Some((&s, &e)) = self.spans.range(..=start).next_back()
            && e >= start
        {
            start = s;
            end = end.max(e);
        }
        let absorbed: Vec<usize> = self.spans.range(start..=end).map(|(&s, _)| s).collect();
        for s in absorbed {
            if let Some(e) = self.spans.remove(&s) {
                end = end.max(e);
            }
        }
        self.spans.insert(start, end);
    }

    pub fn contains(&self, at: usize) -> bool {
        self.spans
            .range(..=at)
            .next_back()
            .is_some_and(|(_, &e)| at < e)
    }
}

/// Ranges that nest or are disjoint, as statement bodies do (others are answered too, see
/// [`Nested::innermost`]), each with an id (a site index, say).
#[derive(Debug, Default, Clone)]
pub struct Nested {
    /// By start, the longer first when two start together, then by id.
    ranges: Vec<(Range<usize>, usize)>,
    /// The range each one was read inside of (`usize::MAX`: none).
    parent: Vec<usize>,
}

impl Nested {
    pub fn new(ranges: Vec<Range<usize>>) -> Self {
        Self::with_ids(ranges.into_iter().map(|r| (r, 0)).collect())
    }

    pub fn with_ids(mut ranges: Vec<(Range<usize>, usize)>) -> Self {
        ranges.retain(|(r, _)| !r.is_empty());
        ranges.sort_by_key(|(r, id)| (r.start, std::cmp::Reverse(r.end), *id));
        let mut parent = vec![usize::MAX; ranges.len()];
        let mut open: Vec<usize> = Vec::new();
        for (k, (r, _)) in ranges.iter().enumerate() {
            while open.last().is_some_and(|&o| ranges[o].0.end <= r.start) {
                open.pop();
            }
            parent[k] = open.last().copied().unwrap_or(usize::MAX);
            open.push(k);
        }
        Nested { ranges, parent }
    }

    /// The latest-starting range that contains `at` (of those, the shortest, then the
    /// largest id), with its id. Every range containing `at` is still open when the last
    /// range starting at or before `at` is read, so it is on that one's parent chain; the
    /// walk up stops at the first that contains `at`.
    pub fn innermost(&self, at: usize) -> Option<(&Range<usize>, usize)> {
        let mut k = self
            .ranges
            .partition_point(|(r, _)| r.start <= at)
            .checked_sub(1)?;
        loop {
            let (r, id) = &self.ranges[k];
            if r.contains(&at) {
                return Some((r, *id));
            }
            k = self.parent[k];
            if k == usize::MAX {
                return None;
            }
        }
    }

    pub fn contains(&self, at: usize) -> bool {
        self.innermost(at).is_some()
    }
}

/// Whether `r` overlaps one of `sorted`: disjoint ranges in order.
pub fn overlaps_any(sorted: &[Range<usize>], r: &Range<usize>) -> bool {
    let k = sorted.partition_point(|s| s.end <= r.start);
    sorted
        .get(k)
        .is_some_and(|s| s.start < r.end && !s.is_empty() && !r.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The queries agree with a linear scan on every offset, for random ranges.
    #[test]
    fn agree_with_linear_scans() {
        let mut seed = 7u64;
        let mut next = |m: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % m
        };
        for _ in 0..300 {
            let n = next(12);
            let ranges: Vec<Range<usize>> = (0..n)
                .map(|_| {
                    let s = next(40);
                    s..s + next(15)
                })
                .collect();
            let mut covered = Covered::default();
            for r in &ranges {
                covered.insert(r.clone());
            }
            let nested = Nested::new(ranges.clone());
            let mut sorted = ranges.clone();
            sorted.sort_by_key(|r| r.start);
            let disjoint = sorted.windows(2).all(|w| w[0].end <= w[1].start);
            for at in 0..60 {
                let any = ranges.iter().any(|r| r.contains(&at));
                assert_eq!(covered.contains(at), any, "{ranges:?} at {at}");
                let latest = ranges
                    .iter()
                    .filter(|r| r.contains(&at))
                    .map(|r| r.start)
                    .max();
                assert_eq!(
                    nested.innermost(at).map(|(r, _)| r.start),
                    latest,
                    "{ranges:?} at {at}"
                );
                if disjoint {
                    let q = at..at + next(5);
                    let brute = sorted.iter().any(|s| {
                        s.start < q.end && q.start < s.end && !s.is_empty() && !q.is_empty()
                    });
                    assert_eq!(overlaps_any(&sorted, &q), brute, "{sorted:?} {q:?}");
                }
            }
        }
    }
}
