//! OpenACC IR + syntactic context → per-directive plans (the OpenMP to emit).

mod clauses;
mod declare;
mod implicit;
mod kernels;
mod loops;
mod narrow;
pub mod queues;
mod reductions;
mod redundant;
mod routines;
mod standalone;
mod structs;
mod threads;

use crate::directive::Clause;
use crate::intent::{Action, Plan};
use crate::options::Options;
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

/// Names used in a clause's items that are plain identifiers.
pub fn item_names(c: &Clause) -> impl Iterator<Item = &str> {
    c.items().map(|i| i.text.as_str())
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

/// Plans for every site.
pub fn plan(unit: &Unit, opts: &Options) -> Vec<Plan> {
    let mut decisions = loops::decide(unit, opts);
    let hoisted = threads::hoist(unit, opts, &mut decisions.loops);
    let lifted = reductions::lifted(unit, &decisions);
    let plan_one = |i: usize| {
        let Some(d) = unit.dir(i) else {
            return Plan::new(Action::Unchanged);
        };
        if d.compute_kind().is_some() {
            clauses::compute(unit, i, opts, &decisions, &lifted)
        } else if d.name == "loop" {
            loops::plan_loop(unit, i, opts, &decisions)
        } else {
            standalone::plan(unit, i, opts)
        }
    };
    let mut plans: Vec<Plan> = crate::par::map_indices(unit.sites.len(), plan_one);
    threads::finish(unit, &hoisted, &mut plans);
    for (c, p) in plans.iter_mut().enumerate() {
        if decisions.mode(c) == Mode::Target
            && unit.dir(c).and_then(|d| d.compute_kind()) == Some("kernels")
            && matches!(p.action, Action::Rewrite(_))
        {
            kernels::plain_loops(unit, c, opts, p);
        }
    }
    implicit::apply(unit, opts, &decisions, &mut plans);
    structs::apply(unit, &mut plans);
    for (c, p) in plans.iter_mut().enumerate() {
        loops::split_bare_loop(unit, c, p);
    }
    redundant::wrap(unit, &decisions, &mut plans);
    // A compute construct that stays OpenACC keeps its loops OpenACC too.
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
    plans
}
