//! `kernels` regions that are a sequence of loop nests, each with its loop directive: in
//! OpenACC every such nest is a kernel of its own, launched one after the other (the gangs
//! of one finish before the next starts). One `target` region would run them all on one
//! team, and one `target teams` region would let a team start the next loop before the
//! others finish this one. So the region becomes a data region around them (its data
//! clauses; nothing where it has none) and each loop a `kernels loop`, which maps as the
//! combined construct does: `target teams distribute parallel for` per loop.
//!
//! Done on the unit's directives before planning, so every later phase (loop decisions,
//! implicit data, reductions, the printers) sees and maps a data construct and combined
//! constructs, as if the file had been written so.

use crate::diag::Diagnostic;
use crate::directive::DATA_CLAUSES;
use crate::facts::VarKind;
use crate::intent::{Action, Plan};
use crate::rules::id;
use crate::unit::Unit;

/// Data clauses a `data` construct takes with the meaning they have on `kernels`: the
/// lifetime clauses but `delete` (copy, copyin, copyout, create, no_create, present).
const REGION_CLAUSES: &[&str] = DATA_CLAUSES.split_at(6).0;

/// Split every `kernels` construct of `u` that is a sequence of loop nests (see the module
/// documentation); the `kernels-split` note for each. Returns the sites split.
pub fn split(u: &mut Unit) -> (Vec<usize>, Vec<Diagnostic>) {
    let found: Vec<(usize, Vec<usize>)> = (0..u.sites.len())
        .filter_map(|c| loops_of(u, c).map(|l| (c, l)))
        .collect();
    let mut diags = Vec::with_capacity(found.len());
    for (c, loops) in &found {
        diags.push(Diagnostic::new(
            u.at(*c),
            id::KERNELS_SPLIT,
            format!(
                "kernels region of {} loop nests: each nest becomes a target construct of its own, as it is a kernel of its own in OpenACC{}",
                loops.len(),
                if u.dir(*c).is_some_and(|d| d.clauses.is_empty()) {
                    ""
                } else {
                    ", inside a 'target data' region with the construct's data clauses"
                }
            ),
        ));
        if let Some(d) = u.dirs[*c].as_mut() {
            d.name = "data".into();
        }
        for &l in loops {
            if let Some(d) = u.dirs[l].as_mut() {
                d.name = "kernels loop".into();
            }
        }
    }
    if !found.is_empty() {
        // The index lists sites by directive name and their compute constructs.
        u.index = Default::default();
    }
    (found.into_iter().map(|(c, _)| c).collect(), diags)
}

/// A split construct without clauses has nothing left to do: its directive goes (and its
/// Fortran end directive with it).
pub fn remove_empty(u: &Unit, split: &[usize], plans: &mut [Plan]) {
    for &c in split {
        if u.dir(c).is_some_and(|d| d.clauses.is_empty()) {
            plans[c] = Plan::new(Action::Remove);
        }
    }
}

/// The loop sites of `kernels` construct `c` when its body is two or more loop nests, each
/// the statement of a loop directive of its own (a Fortran `end loop` after it), and its
/// clauses are data clauses over arrays: nothing else runs in the region, so splitting it
/// changes no result.
fn loops_of(u: &Unit, c: usize) -> Option<Vec<usize>> {
    let d = u.dir(c)?;
    if d.name != "kernels" {
        return None;
    }
    let facts = u.site_facts(c);
    for clause in &d.clauses {
        if !REGION_CLAUSES.contains(&clause.name.as_str()) {
            return None;
        }
        // A scalar mapped around the loops would be read from the host by the loops that
        // do not assign it (a scalar not mapped by the construct itself is firstprivate).
        for item in clause.items() {
            let text = item.text.trim();
            let name = u.lang.base_name(text)?;
            let rest = text[name.len()..].trim_start();
            // A member (`s%a`, `s.a`, `p->a`) maps its structure too: not split.
            if !text.starts_with(name) || rest.starts_with(['%', '.', '-']) {
                return None;
            }
            let array = !rest.is_empty()
                || facts
                    .and_then(|f| f.type_of(name))
                    .is_some_and(|t| matches!(t.kind, VarKind::Array { .. }));
            if !array {
                return None;
            }
        }
    }
    let stmt = u.stmts[c].as_ref()?;
    let body = u.syntax.statements_in(&stmt.toks());
    let mut loops = Vec::new();
    let mut covered: Option<(std::ops::Range<usize>, Option<usize>)> = None;
    for &t in &body {
        if let Some((own, end)) = &covered
            && (own.contains(&t) || (end.is_some() && u.syntax.site_at(t) == *end))
        {
            continue;
        }
        let l = u.syntax.site_at(t)?;
        if !u.is_loop(l) || u.parent[l] != Some(c) || u.dir(l)?.name != "loop" {
            return None;
        }
        let own = u.stmts[l].as_ref()?;
        own.for_loop.as_ref()?;
        covered = Some((own.toks(), own.end()));
        loops.push(l);
    }
    (loops.len() >= 2).then_some(loops)
}
