//! OpenACC IR + syntactic context → per-directive plans (the OpenMP to emit).

mod carried;
mod compute;
mod data;
mod declare;
mod device_ptrs;
mod implicit;
mod kernels;
mod loops;
mod narrow;
mod plain_split;
mod pointer_maps;
pub mod queues;
mod reductions;
mod redundant;
mod routines;
pub mod split;
mod structs;
mod threads;

use crate::intent::{Action, Plan, WORKSHARING};
use crate::options::Options;
use crate::profile::Profile;
use crate::unit::Unit;

/// How a compute construct maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `target teams`: gangs are teams.
    Teams,
    /// `target`: one initial thread; parallel loops open `parallel` regions.
    Target,
    /// `serial`: one thread, every loop sequential.
    Serial,
}

/// Per-site values of one run of whole site trees (`Unit::tree_runs`), indexed by site.
pub struct Tree<'p, T> {
    base: usize,
    items: &'p mut [T],
}

/// The plans of one run of whole site trees.
pub type TreePlans<'p> = Tree<'p, Plan>;

impl<T> std::ops::Index<usize> for Tree<'_, T> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        &self.items[i - self.base]
    }
}

impl<T> std::ops::IndexMut<usize> for Tree<'_, T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.items[i - self.base]
    }
}

/// `f(run, items)` for runs of whole site trees side by side, in parallel: for a pass whose
/// work on a site reads and changes only the values of that site's tree, in source order.
fn by_trees<T: Send>(
    u: &Unit,
    items: &mut [T],
    f: impl Fn(std::ops::Range<usize>, &mut Tree<T>) + Sync + Send,
) {
    let runs = u.tree_runs(crate::par::run_length(items.len()));
    crate::par::for_each_run_mut(items, &runs, |run, items| {
        let base = run.start;
        f(run, &mut Tree { base, items })
    });
}

/// Plans for every site, in phases whose order matters:
///
/// 1. **loops** (`loops::decide`): every loop's decision and every compute construct's
///    mode (`target teams`, `target`, serial); every later phase reads them.
/// 2. **threads** (`threads::hoist`, default profile): the threads of a gang loop nest move
///    to its gang loop, which changes the loop decisions before any plan is made from them.
/// 3. **reductions** (`reductions::lifted`): the reductions of the loops in each compute
///    construct, which the construct's plan maps, from the final loop decisions.
/// 4. **sites** ([`plan_site`], in parallel): each site's own plan: compute construct, loop,
///    or data, declare, routine and other directives.
/// 5. **carried** (`carried::refuse`): a `parallel` construct whose gang loops pass a
///    gang-private value from one to a later one is left unchanged (no OpenMP construct keeps
///    a team's iterations paired with a gang's); before the phases below add to its plan.
/// 6. **threads, finished** (`threads::finish`): the plans' side of the moved threads, on the
///    gang loops' plans.
/// 7. **kernels loops** ([`kernels_loops`]): the plain loops of a `kernels` construct mapped
///    to `target` get their own directives, inside the construct's plan.
/// 8. **implicit data** (`implicit::apply`): with the semantic facts, OpenACC's implicit
///    data attributes made explicit where OpenMP's differ, and what the facts show a plan
///    cannot do (types, launch arguments, loop nests); after every plan exists, since it adds
///    to them or leaves their directives unchanged.
/// 9. **structures** (`structs::apply`): structures whose members are mapped one by one,
///    on the plans the implicit data left rewritten; then (`structs::order_enter_data`) an
///    `enter data` of a structure right after one of its members moves ahead of them; and
///    (`structs::member_lifetimes`) an `exit data` of some members of a structure whose
///    other members are mapped apart is reported (OpenMP counts references per structure).
/// 10. **plain nests** ([`split_plain_nests`]): a `kernels` construct mapped to `target`
///     whose body is plain loop nests, each planned parallel by phase 7, becomes a data
///     region and each nest a combined construct; it moves the scalar maps phase 8 added.
/// 11. **bare loops** ([`split_bare_loops`]): a `kernels` construct whose body is `{ for … }`
///     gives the loop its clauses, including any the phases above added.
/// 12. **gang-redundant code** (`redundant::wrap`): code of a `teams` region outside its
///     partitioned loops, which needs the loops' final plans.
/// 13. **kept** ([`keep_inside_unchanged`]): last, since it undoes what the phases above
///     planned inside a compute construct that stays OpenACC.
///
/// Under the `loop` profile, a loop whose plan ends with a `lastprivate` on a `loop`
/// construct (which takes none but of its own control variable) is mapped as under the
/// default profile, and the phases from 3 on run again: the clause is only known once
/// every plan is made (phase 8 infers it from the facts).
pub fn plan(unit: &Unit, opts: &Options) -> Vec<Plan> {
    let mut decisions = loops::decide(unit, opts);
    let hoisted = threads::hoist(unit, opts, &mut decisions.loops);
    let mut plans = plan_decided(unit, opts, &decisions, &hoisted);
    if opts.profile != Profile::Loop {
        return plans;
    }
    // Each round maps at least one more loop as the default profile does: it ends.
    loop {
        let refused: Vec<usize> = (0..plans.len())
            .filter(|&i| lastprivate_on_loop_construct(unit, i, &plans[i]))
            .filter(|&i| {
                decisions.loops[i]
                    .as_ref()
                    .is_some_and(|x| !x.no_loop_construct)
            })
            .collect();
        if refused.is_empty() {
            break;
        }
        for i in refused {
            if let Some(x) = decisions.loops[i].as_mut() {
                x.no_loop_construct = true;
            }
        }
        plans = plan_decided(unit, opts, &decisions, &hoisted);
    }
    plans
}

/// Whether the plan of site `i` writes an OpenMP `loop` construct with a `lastprivate` of
/// a variable other than the control variables of the loops it applies to (the only ones
/// OpenMP's `loop` takes there).
fn lastprivate_on_loop_construct(u: &Unit, i: usize, p: &Plan) -> bool {
    let Action::Rewrite(rw) = &p.action else {
        return false;
    };
    if rw.name.last(WORKSHARING) != Some("loop") {
        return false;
    }
    let names: Vec<&str> = rw
        .append
        .iter()
        .filter(|c| c.name == "lastprivate")
        .filter_map(|c| c.arg.as_deref())
        .flat_map(|l| l.split(',').map(str::trim))
        .collect();
    if names.is_empty() {
        return false;
    }
    let count = |text: &str| {
        crate::directive::count::constant(text, crate::directive::Dialect::C)
            .and_then(|n| usize::try_from(n).ok())
    };
    // The loops the construct applies to: its `collapse` (written or inferred) or `tile`;
    // a count that is not a literal takes the whole nest (at worst a clause the compiler
    // rejects, never a shared variable).
    let written = u.dir(i).and_then(|d| {
        d.find("collapse")
            .map(|c| {
                c.items()
                    .last()
                    .and_then(|x| count(&x.text))
                    .unwrap_or(usize::MAX)
            })
            .or_else(|| d.find("tile").map(|c| c.items().count()))
    });
    let inferred = rw
        .append
        .iter()
        .filter(|c| c.name == "collapse")
        .filter_map(|c| c.arg.as_deref().and_then(count))
        .max();
    let depth = written.into_iter().chain(inferred).max().unwrap_or(1);
    let outer = u.stmts[i]
        .as_ref()
        .and_then(|s| s.for_loop.clone())
        .or_else(|| u.bare_loop(i));
    let controls: Vec<_> = outer
        .map(|f| u.syntax.nest_loops(f.for_tok(), depth))
        .unwrap_or_default()
        .into_iter()
        .filter_map(|f| f.var)
        .collect();
    let key = |n: &str| crate::lang::name_key(u.lang, n).into_owned();
    names
        .iter()
        .any(|n| !controls.iter().any(|v| key(v) == key(n)))
}

/// Phases 3 to 13 of [`plan`], on the loops' decisions.
fn plan_decided(
    unit: &Unit,
    opts: &Options,
    decisions: &loops::Decisions,
    hoisted: &[threads::Hoist],
) -> Vec<Plan> {
    let lifted = reductions::lifted(unit, decisions);
    // Each shrunk as soon as it is made (lists built by pushing): all of them are held.
    let mut plans: Vec<Plan> = crate::par::map_indices(unit.sites.len(), |i| {
        let mut p = plan_site(unit, i, opts, decisions, &lifted);
        p.shrink_to_fit();
        p
    });
    // Read by the sites' plans only.
    drop(lifted);
    carried::refuse(unit, decisions, &mut plans);
    threads::finish(unit, hoisted, &mut plans);
    kernels_loops(unit, opts, decisions, &mut plans);
    implicit::apply(unit, opts, decisions, &mut plans);
    structs::apply(unit, &mut plans);
    structs::order_enter_data(unit, &mut plans);
    structs::member_lifetimes(unit, &mut plans);
    split_plain_nests(unit, opts, decisions, &mut plans);
    split_bare_loops(unit, &mut plans);
    redundant::wrap(unit, decisions, &mut plans);
    keep_inside_unchanged(unit, &mut plans);
    // Kept until the file is printed, one per site.
    plans.iter_mut().for_each(Plan::shrink_to_fit);
    plans
}

/// Phase **sites**: the plan of site `i` on its own.
fn plan_site(
    unit: &Unit,
    i: usize,
    opts: &Options,
    decisions: &loops::Decisions,
    lifted: &reductions::LiftedBySite,
) -> Plan {
    let Some(d) = unit.dir(i) else {
        return Plan::new(Action::Unchanged);
    };
    // An end directive (Fortran) closes its opener's construct, whatever that becomes.
    if let Some(opener) =
        unit.parent[i].filter(|&p| unit.stmts[p].as_ref().and_then(|s| s.end()) == Some(i))
    {
        return Plan::new(Action::Close { opener });
    }
    if d.compute_kind().is_some() {
        compute::compute(unit, i, opts, decisions, lifted)
    } else if d.name == "loop" {
        loops::plan_loop(unit, i, opts, decisions)
    } else {
        data::plan(unit, i, opts)
    }
}

/// Phase **kernels loops**: `kernels::plain_loops` on each `kernels` construct mapped to
/// `target` and rewritten.
fn kernels_loops(unit: &Unit, opts: &Options, decisions: &loops::Decisions, plans: &mut [Plan]) {
    for (c, p) in plans.iter_mut().enumerate() {
        if decisions.mode(c) == Mode::Target
            && unit.dir(c).and_then(|d| d.compute_kind()) == Some("kernels")
            && matches!(p.action, Action::Rewrite(_))
        {
            kernels::plain_loops(unit, c, opts, p);
        }
    }
}

/// Phase **plain nests**: `plain_split::split` on each `kernels` construct mapped to
/// `target` and rewritten, once its plan holds its implicit data.
fn split_plain_nests(
    unit: &Unit,
    opts: &Options,
    decisions: &loops::Decisions,
    plans: &mut [Plan],
) {
    for (c, p) in plans.iter_mut().enumerate() {
        if decisions.mode(c) == Mode::Target
            && unit.dir(c).and_then(|d| d.compute_kind()) == Some("kernels")
            && matches!(p.action, Action::Rewrite(_))
        {
            plain_split::split(unit, c, opts.profile, p);
        }
    }
}

/// Phase **bare loops**: `loops::split_bare_loop` on every site.
fn split_bare_loops(unit: &Unit, plans: &mut [Plan]) {
    for (c, p) in plans.iter_mut().enumerate() {
        loops::split_bare_loop(unit, c, p);
    }
}

/// Phase **kept**: a compute construct that stays OpenACC keeps its loops OpenACC too.
pub(crate) fn keep_inside_unchanged(unit: &Unit, plans: &mut [Plan]) {
    for i in 0..plans.len() {
        let untranslated_compute = unit.dir(i).is_some_and(|d| d.compute_kind().is_some())
            && plans[i].action == Action::Unchanged;
        if untranslated_compute {
            for k in unit.descendants(i) {
                let p = &mut plans[k];
                p.action = Action::Unchanged;
                p.scope.locals.clear();
                p.end_after_stmt = None;
                p.before.clear();
                p.inserts.clear();
            }
        }
    }
}
