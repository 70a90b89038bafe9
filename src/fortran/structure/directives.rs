//! The OpenACC directives in the structure: what each applies to (a block up to its `end`
//! directive, the loops of a nest, an `atomic`'s statements) and which encloses which.

use super::Problem;
use super::{
    Applies, BLOCKS, Builder, Conditional, DoKind, Item, LOOPS, OpenAcc, Region, STANDALONE,
};
use crate::fortran::lines::Sentinel;
use std::ops::Range;

impl Builder<'_> {
    pub(super) fn site(&mut self, k: usize) {
        let site = &self.sites[k];
        let name = self.infos.get(k).and_then(|i| i.name.clone());
        let unit = self.units.last().copied();
        let construct = self.constructs.last().copied();
        let applies = match (site.sentinel, name.as_deref()) {
            (Sentinel::Acc, Some(n)) if BLOCKS.contains(&n) => {
                self.acc.push(OpenAcc {
                    site: k,
                    name: n.to_string(),
                    construct,
                    unit,
                });
                Applies::Block {
                    body: 0..0,
                    end: None,
                }
            }
            (Sentinel::Acc, Some(n))
                if n.strip_prefix("end ").is_some_and(|b| BLOCKS.contains(&b)) =>
            {
                let opener = self.end_block(k, &n[4..]);
                Applies::End { opener }
            }
            (Sentinel::Acc, Some(n)) if LOOPS.contains(&n) => Applies::Loop {
                loops: 0..0,
                end: None,
            },
            (Sentinel::Acc, Some("atomic")) => Applies::Atomic {
                body: 0..0,
                end: None,
            },
            (Sentinel::Acc, Some(n)) if n.starts_with("end ") => Applies::End { opener: None },
            (Sentinel::Acc, Some("declare" | "routine")) => Applies::Declarative,
            (Sentinel::Acc, Some(n)) if STANDALONE.contains(&n) => Applies::Standalone,
            _ => Applies::Nothing,
        };
        let mut region = Region::new(applies, unit);
        region.set_extent(site.span.clone());
        self.s.regions.push(region);
    }

    /// `end <name>` at site `k`: the open block construct it closes.
    pub(super) fn end_block(&mut self, k: usize, name: &str) -> Option<usize> {
        let at = self.sites[k].span.start;
        let Some(pos) = self.acc.iter().rposition(|o| o.name == name) else {
            self.problem(at, format!("'end {name}' without an open 'acc {name}'"));
            return None;
        };
        // An end directive in another unit or construct than its opener is out of place
        // (gfortran reads it so): the region stays open for the end directive after it.
        let open = &self.acc[pos];
        if open.unit != self.units.last().copied()
            || open.construct != self.constructs.last().copied()
        {
            self.problem(
                at,
                format!(
                    "'end {name}' is not in the same program unit and construct as its 'acc {name}'"
                ),
            );
            return None;
        }
        while self.acc.len() > pos + 1 {
            let inner = self.acc.pop()?;
            self.problem(
                self.sites[inner.site].span.start,
                format!("'acc {0}' has no 'end {0}' before 'end {name}'", inner.name),
            );
        }
        let open = self.acc.pop()?;
        let body_start = self.item_stmt_after(self.site_item[open.site]);
        let body_end = self.item_stmt_after(self.site_item[k]);
        if let Applies::Block { body, end } = &mut self.s.regions[open.site].applies {
            *body = body_start..body_end.max(body_start);
            *end = Some(k);
        }
        let start = self.s.regions[open.site].extent().start;
        self.s.regions[open.site].set_extent(start..self.sites[k].span.end);
        Some(open.site)
    }

    /// The index of the first statement after item `item` (or the number of statements).
    pub(super) fn item_stmt_after(&self, item: usize) -> usize {
        self.items[item + 1..]
            .iter()
            .find_map(|it| match it {
                Item::Stmt(i) => Some(*i),
                Item::Site(_) => None,
            })
            .unwrap_or(self.lx.stmts.len())
    }

    /// The next item after `item` that is not an `!$omp` or `!$` site.
    pub(super) fn next_item(&self, item: usize) -> Option<(usize, Item)> {
        (item + 1..self.items.len())
            .map(|k| (k, self.items[k]))
            .find(|(_, it)| match it {
                Item::Site(s) => self.sites[*s].sentinel == Sentinel::Acc,
                Item::Stmt(_) => true,
            })
    }

    /// [`next_item`](Self::next_item) as compiled with the branch of every preprocessor
    /// conditional group that `item` (a site) is in: the items of the group's other
    /// branches are skipped. In `#ifdef A` / `!$acc kernels loop` / `#else` / `!$acc
    /// parallel loop` / `#endif` / `do …` both directives apply to the `do` (alternatives,
    /// as C's: `crate::structure`).
    pub(super) fn next_item_in_branch(&self, item: usize) -> Option<(usize, Item)> {
        let at = |it: &Item| match *it {
            Item::Stmt(i) => self.stmt(i).span().start,
            Item::Site(i) => self.sites[i].span.start,
        };
        let lines = &self.conditionals;
        let mut c = lines.partition_point(|&(o, _, _)| o < at(&self.items[item]));
        // As in `crate::structure`: the depth from the site, the lowest reached (the
        // innermost group still around it), and whether that group's `#else` was passed.
        let (mut depth, mut low, mut other) = (0i64, 0i64, false);
        let mut from = item;
        loop {
            let (k, it) = self.next_item(from)?;
            let start = at(&it);
            let mut jump = None;
            while let Some(&(_, kw, end)) = lines.get(c).filter(|(o, _, _)| *o < start) {
                match kw {
                    Conditional::Open => depth += 1,
                    Conditional::Close => {
                        depth -= 1;
                        if depth < low {
                            (low, other) = (depth, false);
                        }
                    }
                    Conditional::Other if depth == low => {
                        // The group's other branches, up to its `#endif` (read next):
                        // skipped at once, so that a chain of alternatives stays linear.
                        other = true;
                        let end = lines.get(end as usize)?;
                        c = end.2 as usize;
                        jump = Some(end.0);
                        break;
                    }
                    Conditional::Other => {}
                }
                c += 1;
            }
            if let Some(endif) = jump {
                // On from the last item before the `#endif`.
                from = self
                    .items
                    .partition_point(|it| at(it) < endif)
                    .max(from + 1)
                    - 1;
                continue;
            }
            if !other {
                return Some((k, it));
            }
            from = k;
        }
    }

    /// The acc site at `item`, when its name is `name`.
    pub(super) fn site_named(&self, item: Option<(usize, Item)>, name: &str) -> Option<usize> {
        match item? {
            (_, Item::Site(s))
                if self.infos.get(s).and_then(|i| i.name.as_deref()) == Some(name) =>
            {
                Some(s)
            }
            _ => None,
        }
    }

    /// `site_named(item, "end {name}")`, without the formatted name (once per loop
    /// directive).
    fn site_ending(&self, item: Option<(usize, Item)>, name: &str) -> Option<usize> {
        match item? {
            (_, Item::Site(s))
                if self
                    .infos
                    .get(s)
                    .and_then(|i| i.name.as_deref()?.strip_prefix("end "))
                    == Some(name) =>
            {
                Some(s)
            }
            _ => None,
        }
    }

    /// Loop and atomic directives: what follows them.
    pub(super) fn associate(&mut self) {
        for k in 0..self.sites.len() {
            let name = self.infos.get(k).and_then(|i| i.name.clone());
            let at = self.sites[k].span.start;
            match &self.s.regions[k].applies {
                Applies::Loop { .. } => {
                    let name = name.unwrap_or_default();
                    let next = self.next_item_in_branch(self.site_item[k]);
                    let Some((_, Item::Stmt(s))) = next else {
                        self.problem(at, format!("'acc {name}' must be followed by a do loop"));
                        continue;
                    };
                    let Some(l) = self.s.loop_at(s) else {
                        self.problem(
                            self.stmt(s).span().start,
                            format!(
                                "'acc {name}' must be followed by a do loop, not this statement"
                            ),
                        );
                        continue;
                    };
                    let kind = self.s.loops[l].kind;
                    // A `do while` or a `do` without loop control has no iteration count:
                    // the directive is `loop-without-for` (`engine::require_statements`), as
                    // C's over a `while`; a second diagnostic here would say it twice.
                    if kind == DoKind::Concurrent {
                        self.problem(
                            self.stmt(s).span().start,
                            format!("'acc {name}' over 'do concurrent' has no OpenMP translation that gfortran 12 and flang-22 build (both reject a loop construct on DO CONCURRENT, as gfortran 12 rejects this directive); write it as counted do loops"),
                        );
                    }
                    let n = self.infos.get(k).map_or(1, |i| i.nest.max(1));
                    // Reported at the directive, which is what stays untranslated (the front
                    // end leaves every directive a problem is reported at); the region keeps
                    // its first loop so that its end directive pairs with it.
                    let loops = match self.s.tight_nest(self.lx, self.sites, l, n) {
                        Ok(v) => v,
                        Err(p) => {
                            self.s.problems.push(Problem { offset: at, ..p });
                            vec![l]
                        }
                    };
                    // A loop never closed has no body to translate (or to copy in versions
                    // by OPTIONAL arguments' presence): the directive stays as it is.
                    if loops.iter().any(|&x| self.s.loops[x].end().is_none()) {
                        self.problem(at, format!("'acc {name}': its do loop is not closed"));
                    }
                    let mut end = None;
                    let mut extent_end = self.s.loops[l].span().end;
                    if let Some(e) = self.s.loops[l].end()
                        && let Some(site) =
                            self.site_ending(self.next_item(self.stmt_item[e]), &name)
                    {
                        end = Some(site);
                        self.s.regions[site].applies = Applies::End { opener: Some(k) };
                        extent_end = self.sites[site].span.end;
                    }
                    let loops = consecutive(&loops).unwrap_or_else(|| {
                        self.problem(
                            at,
                            format!("'acc {name}': its loop nest was read out of order (an internal error)"),
                        );
                        l..l + 1
                    });
                    self.s.regions[k].applies = Applies::Loop { loops, end };
                    let start = self.s.regions[k].extent().start;
                    self.s.regions[k].set_extent(start..extent_end);
                }
                Applies::Atomic { .. } => {
                    let next = self.next_item(self.site_item[k]);
                    let Some((i1, Item::Stmt(s1))) = next else {
                        self.problem(at, "'acc atomic' must be followed by a statement".into());
                        continue;
                    };
                    let after1 = self.next_item(i1);
                    let mut body = s1..s1 + 1;
                    let mut end = self.site_named(after1, "end atomic");
                    if end.is_none()
                        && let Some((i2, Item::Stmt(s2))) = after1
                        && let Some(e) = self.site_named(self.next_item(i2), "end atomic")
                    {
                        body = s1..s2 + 1;
                        end = Some(e);
                    }
                    let last = body.end - 1;
                    let mut extent_end = self.stmt(last).span().end;
                    if let Some(e) = end {
                        self.s.regions[e].applies = Applies::End { opener: Some(k) };
                        extent_end = self.sites[e].span.end;
                    }
                    self.s.regions[k].applies = Applies::Atomic { body, end };
                    let start = self.s.regions[k].extent().start;
                    self.s.regions[k].set_extent(start..extent_end);
                }
                _ => {}
            }
        }
        // End directives that nothing opened.
        for k in 0..self.sites.len() {
            if let Applies::End { opener: None } = self.s.regions[k].applies
                && let Some(name) = self.infos.get(k).and_then(|i| i.name.clone())
                && !name
                    .strip_prefix("end ")
                    .is_some_and(|b| BLOCKS.contains(&b))
            {
                let what = &name[4..];
                let after = if what == "atomic" {
                    "its statement"
                } else {
                    "its do loop"
                };
                self.problem(
                    self.sites[k].span.start,
                    format!("'{name}' does not follow an 'acc {what}' and {after}"),
                );
            }
        }
    }

    /// Each OpenACC site's enclosing one, by containment of extents.
    pub(super) fn nest(&mut self) {
        let ranges: Vec<Option<Range<usize>>> = self
            .s
            .regions
            .iter()
            .zip(self.sites)
            .map(|(r, s)| {
                (s.sentinel == Sentinel::Acc && !matches!(r.applies, Applies::End { .. }))
                    .then(|| r.extent())
            })
            .collect();
        // A loop directive holds sites from its loop on: alternatives before the loop are
        // siblings.
        let body = |i: usize| match &self.s.regions[i].applies {
            Applies::Loop { loops, .. } if !loops.is_empty() => {
                self.stmt(self.s.loops[loops.start].stmt()).span().start
            }
            _ => ranges[i].as_ref().map_or(0, |r| r.start),
        };
        let parents = crate::region::nesting(&ranges, body);
        for (r, p) in self.s.regions.iter_mut().zip(parents) {
            r.parent = super::opt32(p);
        }
    }
}

/// A nest's loop numbers as a range. Loops are numbered at their `do` statement and a
/// tight nest's `do` statements follow each other, so this holds by construction; should
/// it not, the caller leaves the directive unchanged rather than guess its nest.
fn consecutive(loops: &[usize]) -> Option<Range<usize>> {
    let (&first, _) = loops.split_first()?;
    loops
        .iter()
        .enumerate()
        .all(|(i, &l)| l == first + i)
        .then(|| first..first + loops.len())
}

#[cfg(test)]
mod tests {
    use super::super::{Applies, Region};
    use super::consecutive;

    #[test]
    fn a_nest_is_a_range_only_when_its_loops_are_consecutive() {
        assert_eq!(consecutive(&[7]), Some(7..8));
        assert_eq!(consecutive(&[3, 4, 5]), Some(3..6));
        assert_eq!(consecutive(&[3, 5]), None);
        assert_eq!(consecutive(&[4, 3]), None);
        assert_eq!(consecutive(&[]), None);
    }
    use crate::fortran::Front;

    /// A loop directive over a `do` never closed is reported at the directive, which is
    /// what the front end then leaves unchanged (the loop's own report is at the `do`).
    #[test]
    fn a_loop_never_closed_leaves_its_directive() {
        let src = "subroutine s(y)\n  integer :: i, l\n  real :: y(4)\n  !$acc parallel loop\n  do i = 1, 4\n  do l = 1, 4\n    y(l) = 1\n  end do\nend subroutine\n";
        let kind = crate::fortran::form::kind_of(std::path::Path::new("x.f90")).expect("Fortran");
        let tables = crate::rules::Tables::builtin();
        let front = Front::new(src, kind, |s| {
            crate::directive::fortran_site_info(s, &tables)
        });
        let at = src.find("!$acc").unwrap();
        let p = front.structure.problems.iter().find(|p| p.offset == at);
        assert!(
            p.is_some_and(|p| p.message.contains("not closed")),
            "{:?}",
            front.structure.problems
        );
    }

    /// One per site: 104 bytes, and a vector for each loop directive, before the indices
    /// were 32-bit and a nest's loops a range; 64 with its innermost construct.
    #[test]
    fn a_region_is_56_bytes() {
        assert!(std::mem::size_of::<Region>() <= 56);
    }

    /// A loop directive's loops are the nest `tight_nest` finds, which it kept as a vector.
    #[test]
    fn loop_ranges_are_the_nests() {
        let src = "subroutine s(n, a)\n  integer :: n, i, j, k\n  real :: a(n, n, n)\n  !$acc parallel loop collapse(3)\n  do i = 1, n\n    do j = 1, n\n      do k = 1, n\n        a(i, j, k) = 0\n      end do\n    end do\n  end do\n  !$acc parallel loop collapse(2)\n  do 10 i = 1, n\n  do 10 j = 1, n\n    !$acc loop\n    do k = 1, n\n      a(i, j, k) = 1\n    end do\n10 continue\n  !$acc kernels loop tile(2, 2)\n  do i = 1, n\n    a(i, 1, 1) = 2\n    do j = 1, n\n    end do\n  end do\nend subroutine\n";
        let kind = crate::fortran::form::kind_of(std::path::Path::new("x.f90")).expect("Fortran");
        let tables = crate::rules::Tables::builtin();
        let front = Front::new(src, kind, |s| {
            crate::directive::fortran_site_info(s, &tables)
        });
        let st = &front.structure;
        let mut nests = Vec::new();
        for r in &st.regions {
            let Applies::Loop { loops, .. } = &r.applies else {
                continue;
            };
            let n = front.sites.len(); // more than any nest
            let (old, _) = st.tight_prefix(&front.lexed, &front.sites, loops.start, n);
            let want = old.len().min(loops.len().max(1));
            assert_eq!(loops.clone().collect::<Vec<_>>(), old[..want]);
            nests.push(loops.clone());
        }
        assert_eq!(nests, [0..3, 3..5, 5..6, 6..7]);
    }
    /// A loop directive over `do concurrent` stays OpenACC with the reason at the loop.
    #[test]
    fn do_concurrent_is_refused_with_its_reason() {
        let src = "program p\n  integer :: a(9), i\n  !$acc parallel loop\n  do concurrent (i = 1:9)\n    a(i) = i\n  end do\nend program p\n";
        let o = crate::engine::migrate_source(
            src,
            Some(std::path::Path::new("x.f90")),
            &crate::options::Options::default(),
            &crate::semantic::SemanticConfig::syntactic(),
        );
        assert!(o.text.contains("  !$acc parallel loop\n"), "{}", o.text);
        let at = src.find("do concurrent").unwrap();
        assert!(
            o.diagnostics
                .iter()
                .any(|d| d.offset == at && d.message.contains("'do concurrent'")),
            "{:?}",
            o.diagnostics
        );
    }
}
