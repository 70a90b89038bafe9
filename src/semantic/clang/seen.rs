//! The statements a walk has entered, by address: a bitset per 4 KiB page of libclang's
//! AST. libclang allocates a translation unit's statements from a bump allocator in about
//! the order the walk meets them, so consecutive lookups touch one small bitset; a hash set
//! of every address cost a cache miss per statement (4.5% of the time with libclang on a
//! file of 100,000 directives).

use crate::hash::{HashMap, HashSet};

/// A set of addresses.
#[derive(Default)]
pub(super) struct Seen {
    /// Page (address / 4096) to its bitset in `bits`.
    pages: HashMap<usize, usize>,
    /// One bit per 8-aligned address of a page (libclang's statements are aligned to 8;
    /// any other address goes to `odd`), so the set is exact.
    bits: Vec<[u64; 8]>,
    /// The page of the last insert and its bitset.
    last: Option<(usize, usize)>,
    /// Addresses that are not 8-aligned (none from libclang; kept exact all the same).
    odd: HashSet<usize>,
}

impl Seen {
    /// Add `addr`; false if it was there.
    pub(super) fn insert(&mut self, addr: usize) -> bool {
        if !addr.is_multiple_of(8) {
            return self.odd.insert(addr);
        }
        let (page, slot) = (addr >> 12, (addr >> 3) & 511);
        let k = match self.last {
            Some((p, k)) if p == page => k,
            _ => {
                let n = self.bits.len();
                let k = *self.pages.entry(page).or_insert(n);
                if k == n {
                    self.bits.push([0; 8]);
                }
                self.last = Some((page, k));
                k
            }
        };
        let (word, bit) = (slot / 64, 1u64 << (slot % 64));
        let fresh = self.bits[k][word] & bit == 0;
        self.bits[k][word] |= bit;
        fresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_as_a_set_of_addresses() {
        let mut s = Seen::default();
        let mut all = HashSet::default();
        // Neighbours, other pages and back, the ends of a page, unaligned addresses.
        let addrs = [
            4096,
            4104,
            8184,
            8192,
            4096,
            1 << 40,
            4104,
            12,
            13,
            12,
            8184,
            (1 << 40) + 8,
        ];
        for a in addrs {
            assert_eq!(s.insert(a), all.insert(a), "{a}");
        }
        let mut x = 0x7f00_0000_0000usize;
        for _ in 0..10_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let a = 0x7f00_0000_0000 + (x >> 40) * 8;
            assert_eq!(s.insert(a), all.insert(a), "{a}");
        }
    }
}
