//! Byte ranges indexed once for the questions asked per runtime call (is the call in a kept
//! or a compute construct, which construct holds it, which edits touch a site), so that a
//! file with many calls and many constructs is not read once per call.

use std::ops::Range;

/// Ranges in the order of their starts (stable: equal starts keep their order), with the
/// greatest end of each prefix.
pub(super) struct Spans {
    ranges: Vec<(Range<usize>, usize)>,
    max_end: Vec<usize>,
}

impl Spans {
    pub(super) fn new(ranges: impl IntoIterator<Item = Range<usize>>) -> Self {
        let mut ranges: Vec<(Range<usize>, usize)> = ranges
            .into_iter()
            .enumerate()
            .map(|(k, r)| (r, k))
            .collect();
        ranges.sort_by_key(|(r, _)| r.start);
        let mut max_end = Vec::with_capacity(ranges.len());
        let mut m = 0;
        for (r, _) in &ranges {
            m = m.max(r.end);
            max_end.push(m);
        }
        Spans { ranges, max_end }
    }

    /// The positions (as given to `new`) of the ranges that start before `start_below` and
    /// end at or after `end_from`: the latest start first, and of equal starts the later
    /// given first.
    pub(super) fn reaching(
        &self,
        start_below: usize,
        end_from: usize,
    ) -> impl Iterator<Item = usize> + '_ {
        let n = self.ranges.partition_point(|(r, _)| r.start < start_below);
        (0..n)
            .rev()
            .take_while(move |&i| self.max_end[i] >= end_from)
            .filter(move |&i| self.ranges[i].0.end >= end_from)
            .map(move |i| self.ranges[i].1)
    }

    /// Whether a range holds `at`.
    pub(super) fn holds(&self, at: usize) -> bool {
        self.reaching(at + 1, at + 1).next().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::Spans;

    /// Against the plain tests of every range, on nested, disjoint, empty and equal ranges.
    #[test]
    fn spans_answer_as_a_walk_of_every_range() {
        let mut ranges = Vec::new();
        let mut x: usize = 7;
        for _ in 0..300 {
            x = x.wrapping_mul(1103515245).wrapping_add(12345) % 100_003;
            let start = x % 500;
            let len = (x / 500) % [3, 40, 200][x % 3];
            ranges.push(start..start + len);
        }
        ranges.push(0..1000);
        ranges.push(10..10);
        ranges.push(10..10);
        let s = Spans::new(ranges.clone());
        for at in 0..1100 {
            assert_eq!(s.holds(at), ranges.iter().any(|r| r.contains(&at)), "{at}");
            for lo in [at.saturating_sub(5), at] {
                let mut got: Vec<usize> = s.reaching(at, lo).collect();
                let mut want: Vec<usize> = (0..ranges.len())
                    .filter(|&k| ranges[k].start < at && ranges[k].end >= lo)
                    .collect();
                // The first is the latest start, the later given of equal starts.
                let first = want.iter().copied().max_by_key(|&k| ranges[k].start);
                assert_eq!(got.first().copied(), first, "{at} {lo}");
                got.sort_unstable();
                want.sort_unstable();
                assert_eq!(got, want, "{at} {lo}");
            }
        }
    }
}
