//! gfortran 12 stops with an internal compiler error (in `gfc_trans_omp_do`) on a `simd`
//! construct with `collapse(n)`, n ≥ 2, over a nest where a loop's step is not 1 or -1 (a
//! variable, a named constant or any other literal). The `simd` a loop construct would get
//! is left off there: it is a hint that the iterations may run in SIMD lanes, so the loops
//! without it run the same iterations with the same data-sharing.

use super::Front;
use super::structure::Applies;
use crate::intent::{Action, Plan};

/// Drop `simd` from the plan of OpenACC site `site` (an index in `front.sites`) of file `src`
/// when its
/// collapsed nest has a loop whose step is not 1 or -1.
pub fn drop_simd(src: &str, front: &Front, site: usize, plan: &mut Plan) {
    let Action::Rewrite(rw) = &mut plan.action else {
        return;
    };
    let Some(Applies::Loop { loops, .. }) = front.structure.regions.get(site).map(|r| &r.applies)
    else {
        return;
    };
    if loops.len() >= 2 && !unit_steps(src, front, loops.clone()) {
        rw.name.remove("simd");
    }
}

/// Whether every loop of `loops` (indices in `front.structure.loops`) steps by 1 or -1
/// (or names no step): only then may `simd` go with their `collapse`.
pub fn unit_steps(src: &str, front: &Front, loops: impl IntoIterator<Item = usize>) -> bool {
    loops.into_iter().all(|k| {
        front.structure.loops[k].step().is_none_or(|r| {
            let step: String = src[r.clone()]
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            matches!(step.as_str(), "1" | "+1" | "-1")
        })
    })
}
