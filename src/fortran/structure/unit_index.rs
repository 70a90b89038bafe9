//! The innermost program unit holding a byte, found by a binary search: callers ask it
//! per site and per edit, and a scan of every unit per question made a file of many
//! units quadratic.

use super::Unit;
use std::collections::BTreeSet;

/// Between two consecutive unit boundaries (a span's start or end) the units holding a
/// byte do not change: each such stretch keeps its answer.
#[derive(Debug, Clone, Default)]
pub(super) struct UnitIndex {
    /// The boundaries, ascending: stretch `k` runs from `bounds[k]` to `bounds[k + 1]`.
    bounds: Vec<usize>,
    /// Per stretch: its innermost unit (`u32::MAX`: none).
    unit: Vec<u32>,
}

impl UnitIndex {
    /// Interface bodies are left out (they declare a procedure defined elsewhere), and
    /// so are empty spans, which hold no byte.
    pub(super) fn new(units: &[Unit]) -> UnitIndex {
        let kept: Vec<usize> = (0..units.len())
            .filter(|&u| !units[u].interface && !units[u].span.is_empty())
            .collect();
        let mut bounds: Vec<usize> = kept
            .iter()
            .flat_map(|&u| [units[u].span.start, units[u].span.end])
            .collect();
        bounds.sort_unstable();
        bounds.dedup();
        let mut by_start = kept.clone();
        by_start.sort_by_key(|&u| units[u].span.start);
        let mut by_end = kept;
        by_end.sort_by_key(|&u| units[u].span.end);
        // The units holding the current stretch, shortest first, then by index: the
        // first is the innermost (the first found of equal length, as a scan would).
        let mut open = BTreeSet::new();
        let (mut s, mut e) = (0, 0);
        let mut unit = Vec::with_capacity(bounds.len());
        for &b in &bounds {
            while let Some(&u) = by_start.get(s).filter(|&&u| units[u].span.start <= b) {
                open.insert((units[u].span.len(), u));
                s += 1;
            }
            while let Some(&u) = by_end.get(e).filter(|&&u| units[u].span.end <= b) {
                open.remove(&(units[u].span.len(), u));
                e += 1;
            }
            unit.push(open.first().map_or(u32::MAX, |&(_, u)| u as u32));
        }
        UnitIndex { bounds, unit }
    }

    /// The innermost unit (not an interface body) whose span holds byte `at`.
    pub(super) fn at(&self, at: usize) -> Option<usize> {
        let k = self.bounds.partition_point(|&b| b <= at).checked_sub(1)?;
        Some(self.unit[k])
            .filter(|&u| u != u32::MAX)
            .map(|u| u as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fortran::stmt::UnitKind;

    /// The scan the index replaces: the oracle.
    fn scan(units: &[Unit], at: usize) -> Option<usize> {
        (0..units.len())
            .filter(|&u| units[u].span.contains(&at))
            .filter(|&u| !units[u].interface)
            .min_by_key(|&u| units[u].span.len())
    }

    fn unit(start: usize, end: usize, interface: bool) -> Unit {
        Unit {
            kind: UnitKind::Subroutine,
            name: None,
            header: None,
            end: None,
            spec: 0..0,
            exec: 0..0,
            contains: None,
            parent: None,
            interface,
            span: start..end,
        }
    }

    #[test]
    fn the_index_answers_as_the_scan_over_any_spans() {
        // Nested, disjoint, overlapping, equal, empty and reversed spans.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n) as usize
        };
        for _ in 0..400 {
            let n = next(12);
            let units: Vec<Unit> = (0..n)
                .map(|_| {
                    let a = next(60);
                    let b = if next(8) == 0 { next(60) } else { a + next(30) };
                    unit(a, b, next(6) == 0)
                })
                .collect();
            let index = UnitIndex::new(&units);
            for at in 0..100 {
                assert_eq!(index.at(at), scan(&units, at), "{at} in {units:?}");
            }
        }
    }

    #[test]
    fn the_index_answers_as_the_scan_over_a_file_of_units() {
        // Modules with procedures, internal procedures, interface bodies, a main program
        // without `program`, a unit left open.
        let src = "module m\n  interface\n    subroutine e(x)\n      real :: x\n    end subroutine e\n  end interface\ncontains\n  subroutine a(n)\n    integer :: n\n    call b\n  contains\n    subroutine b\n    end subroutine b\n  end subroutine a\n  real function f(x)\n    real :: x\n    f = x\n  end function f\nend module m\nsubroutine s(p)\n  real :: p(:)\n  !$acc parallel loop\n  do i = 1, 2\n    p(i) = 1\n  end do\nend subroutine s\nx = 1\nend\nsubroutine t\n  interface\n    function g()\n    end function\n  end interface\n";
        for ext in ["f90", "f"] {
            let kind = crate::fortran::form::kind_of(std::path::Path::new(&format!("x.{ext}")))
                .expect("Fortran");
            let src: String = match ext {
                "f90" => src.to_string(),
                _ => src
                    .lines()
                    .map(|l| format!("      {}\n", l.trim()))
                    .collect(),
            };
            let front = crate::fortran::Front::new(&src, kind, |_| Default::default());
            let units = &front.structure.units;
            assert!(units.len() >= 8, "{units:?}");
            for at in 0..=src.len() + 1 {
                assert_eq!(front.structure.unit_at(at), scan(units, at), "{at}");
            }
        }
    }
}
