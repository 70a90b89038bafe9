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
//! one loop nest.

use super::Front;
use super::facts::Type;
use super::structure::Applies;

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
    let scalar = |item: &str| {
        let item = item.trim();
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
    };
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
