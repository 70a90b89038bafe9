//! flang-22 does not lower `firstprivate` on `target` ("not yet implemented: Unhandled
//! clause FIRSTPRIVATE in TARGET construct"), and on a combined `target teams …` construct
//! the clause applies to `target` too. Such a construct is split as the queue work's are
//! (`!$omp target`, then `!$omp teams … firstprivate(x)`, …, `!$omp end target`;
//! `fortran::queues::shape`) when every firstprivate item is a scalar of intrinsic type: on
//! `target`, OpenMP makes such a scalar firstprivate without a clause, so each team's copy
//! starts from the host value as before. An array, a derived-type or an undeclared item
//! would be mapped instead (its device copy could differ from the host's): those keep the
//! combined construct. flang-22 crashes on a `teams` region that has statements besides
//! its loop nest, so a `target teams` block construct is split only when its region is
//! one loop nest. On a plain `target` (no `teams`), whose region runs as one thread, such
//! scalars simply leave `private` and `firstprivate` (`scalar_privates`).

use super::Front;
use super::facts::Type;
use super::stmt::UnitKind;
use super::structure::Applies;
use crate::directive::Directive;
use crate::intent::{Action, ClauseOp, OmpClause, Plan};

/// On a plain `target` construct (a `serial` or `kernels` region), drop the `private` and
/// `firstprivate` items of site `k`'s plan that are scalars of intrinsic type: flang-22 does
/// not lower either clause on `target`, and OpenMP makes such a scalar firstprivate there
/// without a clause. The region runs as one thread, so its one copy starts from the host
/// value and the host's is left as it was, as either clause would have it.
/// `mapped`: what the file's data directives and calls map; `src` the file's text.
pub fn scalar_privates(
    src: &str,
    front: &Front,
    mapped: &super::deep_maps::Mapped,
    k: usize,
    d: &Directive,
    plan: &mut Plan,
) {
    let Action::Rewrite(rw) = &mut plan.action else {
        return;
    };
    // `defaultmap` (`default(present)` with OpenMP 5.1) covers scalars too: such a scalar
    // would be mapped, not firstprivate.
    let defaultmap = |cs: &[OmpClause]| cs.iter().any(|c| c.name == "defaultmap");
    if !rw.name.starts_with("target")
        || rw.name.after("target").is_some()
        || defaultmap(&rw.append)
        || rw
            .ops
            .iter()
            .any(|op| matches!(op, ClauseOp::Replace(cs) if defaultmap(cs)))
    {
        return;
    }
    let Some(unit) = front.structure.regions.get(k).and_then(|r| r.unit()) else {
        return;
    };
    // flang-22 makes an implicit scalar firstprivate only where it is not present on the
    // device: one a data directive of the file maps (by name, in any unit), or a dummy
    // argument (its caller may map it under another name), would be the device copy, which
    // the region's writes then reach. A module's variable may be `declare target` (a
    // device global); one of another file is not known. A character variable is no scalar
    // to OpenMP: it would be mapped `tofrom`. All of these keep the clause.
    let st = &front.structure;
    let local = |item: &str| {
        let lower = item.to_ascii_lowercase();
        !mapped.names(&lower)
            && front.facts.lookup(st, unit, item).is_some_and(|v| {
                v.at > 0
                    && !matches!(&v.ty, Type::Intrinsic { name, .. } if name == "character")
                    && st.unit_at(v.at).is_some_and(|u| {
                        !matches!(st.units[u].kind, UnitKind::Module | UnitKind::Submodule)
                            && !super::queues::dummies(src, front, u).contains(&lower)
                    })
            })
    };
    let scalar = |item: &str| scalar_of_intrinsic_type(front, unit, item) && local(item);
    let privatizing = |name: &str| name == "private" || name == "firstprivate";
    // The clause with `scalar` items left out, or None when none is left.
    let kept = |name: &'static str, items: &str| {
        let rest: Vec<&str> = items
            .split(',')
            .map(str::trim)
            .filter(|t| !scalar(t))
            .collect();
        (!rest.is_empty()).then(|| OmpClause::new(name, rest.join(", ")))
    };
    for (c, op) in d.clauses.iter().zip(rw.ops.iter_mut()) {
        match op {
            ClauseOp::Keep if privatizing(&c.name) => {
                let name = if c.name == "private" {
                    "private"
                } else {
                    "firstprivate"
                };
                let items: Vec<&str> = c.items().map(|it| it.text.trim()).collect();
                if items.iter().any(|t| scalar(t)) {
                    *op = ClauseOp::Replace(kept(name, &items.join(",")).into_iter().collect());
                }
            }
            ClauseOp::Replace(cs) => filter(cs, &kept),
            _ => {}
        }
    }
    filter(&mut rw.append, &kept);
}

/// `clauses` with the scalar items of their `private` and `firstprivate` clauses left out
/// by `kept`.
fn filter(clauses: &mut Vec<OmpClause>, kept: &dyn Fn(&'static str, &str) -> Option<OmpClause>) {
    *clauses = std::mem::take(clauses)
        .into_iter()
        .filter_map(|c| match (c.name, c.arg.as_deref()) {
            ("private" | "firstprivate", Some(items)) => kept(c.name, items),
            _ => Some(c),
        })
        .collect();
}

/// Whether `item` names a scalar of intrinsic type (not a pointer or allocatable) that
/// `unit` sees.
fn scalar_of_intrinsic_type(front: &Front, unit: usize, item: &str) -> bool {
    !item.is_empty()
        && item.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && front
            .facts
            .lookup(&front.structure, unit, item)
            .is_some_and(|v| {
                matches!(v.ty, Type::Intrinsic { .. })
                    && !v.is_array()
                    && !v.pointer
                    && !v.allocatable
            })
}

/// Whether the rewrite of front-end site `k` named `name` (spelled, `target teams …`) with
/// `clauses` (name, text) is split off its `target`.
pub fn firstprivate_split(
    front: &Front,
    k: usize,
    name: &str,
    clauses: &[(String, String)],
) -> bool {
    if !name.starts_with("target ") || (name == "target teams" && !only_a_loop(front, k)) {
        return false;
    }
    let lists: Vec<&str> = clauses
        .iter()
        .filter(|c| c.0 == "firstprivate")
        .map(|c| {
            let t = c.1.as_str();
            let open = t.find('(').map_or(t.len(), |p| p + 1);
            let close = t.rfind(')').unwrap_or(t.len()).max(open);
            &t[open..close]
        })
        .collect();
    let Some(unit) = front.structure.regions.get(k).and_then(|r| r.unit()) else {
        return false;
    };
    let scalar = |item: &str| scalar_of_intrinsic_type(front, unit, item.trim());
    !lists.is_empty() && lists.iter().all(|l| l.split(',').all(scalar))
}

/// Whether the region of block construct `k` holds one loop nest and no other statement.
fn only_a_loop(front: &Front, k: usize) -> bool {
    let st = &front.structure;
    let Some(Applies::Block { body, .. }) = st.regions.get(k).map(|r| &r.applies) else {
        return false;
    };
    // Statement indices.
    let outer: Vec<std::ops::RangeInclusive<usize>> = st
        .loops
        .iter()
        .filter(|l| body.contains(&l.stmt()))
        .filter(|l| {
            l.parent()
                .is_none_or(|p| !body.contains(&st.loops[p].stmt()))
        })
        .map(|l| l.stmt()..=l.end().unwrap_or(usize::MAX))
        .collect();
    let [nest] = outer.as_slice() else {
        return false;
    };
    body.clone().all(|s| nest.contains(&s))
}

/// Whether the rewrite of loop directive `k` (a combined `… loop` without its optional
/// `end … loop`) named `name` is a block construct (`target`, for a `kernels loop` that
/// runs sequentially), which Fortran closes with an end directive after the loop.
pub fn unclosed_block(front: &Front, k: usize, name: &str) -> bool {
    let last = name.rsplit(' ').next().unwrap_or(name);
    let loop_construct = ["do", "simd", "loop", "distribute"].contains(&last);
    !loop_construct
        && matches!(
            front.structure.regions.get(k).map(|r| &r.applies),
            Some(Applies::Loop { loops, end: None }) if !loops.is_empty()
        )
}
