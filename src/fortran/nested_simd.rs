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

use crate::intent::{Action, ClauseOp, Construct, Insert, OmpClause, Plan};
use crate::unit::Unit;

/// The `safelen` written, unless a larger `simdlen` is there (`safelen` may not be less).
const SAFELEN: u64 = 128;

/// Whether a construct shares out loop iterations: `do` or `distribute` in its name.
fn shares_loop(c: &Construct) -> bool {
    (c.spelled("do").split_whitespace()).any(|w| w == "do" || w == "distribute")
}

/// The `safelen` clause for a `simd` whose clauses are `clauses`.
fn safelen<'c>(clauses: impl Iterator<Item = &'c OmpClause>) -> OmpClause {
    let simdlen = clauses
        .filter(|c| c.name == "simdlen")
        .filter_map(|c| c.arg.as_deref()?.trim().parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    OmpClause::new("safelen", SAFELEN.max(simdlen).to_string())
}

/// Whether plan `p` rewrites its site into a construct that shares out loop iterations.
fn rewrites_to_shared_loop(p: &Plan) -> bool {
    matches!(&p.action, Action::Rewrite(rw) if shares_loop(&rw.name))
}

/// Add `safelen` to every plan of `plans` (per site of `u`) that is a lone `simd` construct
/// inside a loop construct whose plan has `distribute` or the worksharing loop (the sites
/// around it as the unit nests them: alternative directives are planned one at a time), and
/// to every such `simd` directive a plan adds before a loop of its region.
pub fn add_safelen(u: &Unit, plans: &mut [Plan]) {
    let lone_simd = Construct::of("simd");
    for i in 0..plans.len() {
        let Action::Rewrite(rw) = &plans[i].action else {
            continue;
        };
        if rw.name != lone_simd || rw.append.iter().any(|c| c.name == "safelen") {
            continue;
        }
        let nested = u
            .ancestors(i)
            .any(|k| plans.get(k).is_some_and(rewrites_to_shared_loop));
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
        let clause = safelen(replaced.chain(&rw.append));
        rw.append.push(clause);
    }
    for i in 0..plans.len() {
        inserted(u, plans, i);
    }
}

/// The same for the lone `simd` directives plan `i` adds before loops of its region (a
/// `kernels` region's plain loops): inside a loop directive it adds with `do` or
/// `distribute`, or in a construct that has one (its own plan's or an enclosing site's).
fn inserted(u: &Unit, plans: &mut [Plan], i: usize) {
    let around = std::iter::once(i)
        .chain(u.ancestors(i))
        .any(|k| plans.get(k).is_some_and(rewrites_to_shared_loop));
    let loops: Vec<std::ops::Range<usize>> = (plans[i].inserts.iter())
        .filter_map(|x| match x {
            Insert::BeforeStatement {
                directive,
                region: Some(r),
                ..
            } if shares_loop(&directive.name) => Some(r.clone()),
            _ => None,
        })
        .collect();
    let lone_simd = Construct::of("simd");
    for x in plans[i].inserts.iter_mut() {
        let Insert::BeforeStatement {
            directive,
            region: Some(r),
            ..
        } = x
        else {
            continue;
        };
        if directive.name != lone_simd || directive.clauses.iter().any(|c| c.name == "safelen") {
            continue;
        }
        if around || loops.iter().any(|l| l.start < r.start && r.end <= l.end) {
            let clause = safelen(directive.clauses.iter());
            directive.clauses.push(clause);
        }
    }
}
