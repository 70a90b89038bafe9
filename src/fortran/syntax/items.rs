//! A file's items (its statements and directive sites, in file order) as the seam's
//! positions, in 12 bytes each: a file of 100,000 directives has 400,000 of them, held from
//! the read through printing.

use super::Item;
use std::ops::Range;

/// The bit that marks a site's index (an item is a statement's index otherwise). A
/// statement or a site takes at least two bytes of a file, and [`crate::fortran::lines`]
/// refuses one of 4 GiB or more: fewer than 2^31 of each.
const SITE: u32 = 1 << 31;

/// The items in file order with their byte ranges.
#[derive(Debug, Default)]
pub struct Items {
    packed: Vec<u32>,
    spans: Vec<[u32; 2]>,
}

impl Items {
    pub fn with_capacity(n: usize) -> Items {
        Items {
            packed: Vec::with_capacity(n),
            spans: Vec::with_capacity(n),
        }
    }

    /// Add the next item, which spans `span`.
    pub fn push(&mut self, it: Item, span: Range<usize>) {
        let (Item::Stmt(i) | Item::Site(i)) = it;
        assert!(i < SITE as usize, "too many statements or sites");
        let mark = if matches!(it, Item::Site(_)) { SITE } else { 0 };
        self.packed.push(i as u32 | mark);
        self.spans.push([span.start as u32, span.end as u32]);
    }

    pub fn len(&self) -> usize {
        self.packed.len()
    }

    pub fn get(&self, t: usize) -> Option<Item> {
        self.packed.get(t).map(|&p| unpack(p))
    }

    /// The byte range of item `t`.
    pub fn span(&self, t: usize) -> Option<Range<usize>> {
        self.spans.get(t).map(|&[a, b]| a as usize..b as usize)
    }

    /// The item starting at byte `at`.
    pub fn starting_at(&self, at: usize) -> Option<usize> {
        let k = self.spans.partition_point(|s| (s[0] as usize) < at);
        (self.spans.get(k)?[0] as usize == at).then_some(k)
    }

    /// The statements among items `r` (clamped to the items), in order.
    pub fn stmts_in(&self, r: Range<usize>) -> impl DoubleEndedIterator<Item = usize> + '_ {
        let n = self.len();
        self.packed[r.start.min(n)..r.end.min(n)]
            .iter()
            .filter_map(|&p| match unpack(p) {
                Item::Stmt(i) => Some(i),
                Item::Site(_) => None,
            })
    }

    /// Bytes held (tests).
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.packed.capacity() * 4 + self.spans.capacity() * 8
    }
}

fn unpack(p: u32) -> Item {
    if p & SITE != 0 {
        Item::Site((p & !SITE) as usize)
    } else {
        Item::Stmt(p as usize)
    }
}
