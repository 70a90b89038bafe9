//! A `simd` construct nested in a loop that became a worksharing loop (`do`) or
//! `distribute` gets `safelen(128)`. flang-22 keeps the private copies of such a `simd`
//! loop (its index, its `private` and `reduction` variables, a `block`'s locals) in the
//! enclosing loop's per-thread storage, yet marks their loads and stores as free of
//! loop-carried dependences (`llvm.access.group`): at `-O2` the vectoriser then runs lanes
//! on one copy and gives wrong values (offloaded to the host and in the AMD GPU device code
//! alike; `tests/conformance/fortran_limits/simd_in_parallel_do.f90`). With `safelen`
//! flang-22 writes no such marks, so the vectoriser proves independence itself or leaves
//! the loop scalar. 128 is above every lane count compilers use for `simd` (GCC: 32 on
//! NVIDIA, 64 on AMD GPUs; vectors of 64 elements at most on CPUs) and above the widths
//! LLVM accepts as a hint, so it limits nothing: the iterations of an OpenACC vector loop
//! are independent at any distance.

use super::Front;
use crate::intent::{Action, ClauseOp, Construct, OmpClause, Plan};

/// The `safelen` written, unless a larger `simdlen` is there (`safelen` may not be less).
const SAFELEN: u64 = 128;

/// Add `safelen` to every plan of `plans` (per OpenACC site; `acc_sites[i]` is plan `i`'s
/// index in `front.sites`) that is a lone `simd` construct inside a loop construct whose
/// plan has `distribute` or the worksharing loop.
pub fn add_safelen(front: &Front, acc_sites: &[usize], plans: &mut [Plan]) {
    let mut plan_of = vec![usize::MAX; front.sites.len()];
    for (i, k) in acc_sites.iter().enumerate() {
        plan_of[*k] = i;
    }
    let lone_simd = Construct::of("simd");
    let shares_loop = |p: &Plan| match &p.action {
        Action::Rewrite(rw) => rw
            .name
            .spelled("do")
            .split_whitespace()
            .any(|w| w == "do" || w == "distribute"),
        _ => false,
    };
    for i in 0..plans.len() {
        let Action::Rewrite(rw) = &plans[i].action else {
            continue;
        };
        if rw.name != lone_simd || rw.append.iter().any(|c| c.name == "safelen") {
            continue;
        }
        let mut parent = front.structure.regions[acc_sites[i]].parent();
        let mut nested = false;
        while let Some(k) = parent {
            if plans.get(plan_of[k]).is_some_and(shares_loop) {
                nested = true;
                break;
            }
            parent = front.structure.regions[k].parent();
        }
        if !nested {
            continue;
        }
        let Action::Rewrite(rw) = &mut plans[i].action else {
            continue;
        };
        let replaced = rw.ops.iter().flat_map(|op| match op {
            ClauseOp::Replace(cs) => cs.as_slice(),
            _ => &[],
        });
        let simdlen = replaced
            .chain(&rw.append)
            .filter(|c| c.name == "simdlen")
            .filter_map(|c| c.arg.as_deref()?.trim().parse::<u64>().ok())
            .max()
            .unwrap_or(0);
        rw.append
            .push(OmpClause::new("safelen", SAFELEN.max(simdlen).to_string()));
    }
}
