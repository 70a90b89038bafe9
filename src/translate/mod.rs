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

pub(crate) use declare::block_end;

use crate::diag::Diagnostic;
use crate::directive::Clause;
pub use crate::lex::is_identifier;
use crate::profile::{OmpVersion, Profile};
use crate::rules::Tables;
pub use crate::unit::Unit;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct Options {
    pub profile: Profile,
    pub omp_version: OmpVersion,
    /// Treat loops in `kernels` regions whose independence is unknown as independent.
    pub assume_independent: bool,
    /// Keep `#include <openacc.h>` and `_OPENACC` tests (dual-build guards) as they are.
    pub keep_openacc_guards: bool,
    /// The device type whose `device_type` sections apply (None: only `device_type(*)`).
    pub device_type: Option<String>,
    /// The rule tables of the file's configuration (shared by the files that have it).
    pub tables: Arc<Tables>,
    /// How the translation is written (`--emit`).
    pub emit: crate::emit::Emit,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            profile: Profile::Default,
            omp_version: OmpVersion::V50,
            assume_independent: false,
            keep_openacc_guards: false,
            device_type: None,
            tables: Arc::new(Tables::builtin()),
            emit: crate::emit::Emit::Omp,
        }
    }
}

/// What happens to one clause of a rewritten directive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClauseOp {
    Keep,
    Drop,
    Replace(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    /// The OpenMP directive name (`target teams distribute`).
    pub name: String,
    /// One op per clause of the OpenACC directive, in order.
    pub ops: Vec<ClauseOp>,
    /// New clauses, appended after the last clause.
    pub append: Vec<String>,
    /// Replace the directive's own argument list (`wait(1)`): None keeps it.
    pub drop_arg: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Unchanged,
    Rewrite(Rewrite),
    /// Delete the directive (its comments stay).
    Remove,
    /// Replace the whole directive with a statement (e.g. a runtime call).
    Statement(String),
}

/// What to do at one site.
#[derive(Debug, Clone)]
pub struct Plan {
    pub action: Action,
    /// Variables that get an uninitialized local copy in a new compound statement around
    /// the directive and its statement.
    pub locals: Vec<String>,
    /// Text inserted on a new line after the statement (e.g. `end declare target`).
    pub after_stmt: Option<String>,
    /// Statements (`const int acc2omp_num_workers = n;`) opening the new compound statement
    /// around the directive and its statement, before `locals`.
    pub decls: Vec<String>,
    /// OpenMP directives (without `#pragma omp`) inserted on lines before this one.
    pub before: Vec<String>,
    /// Text inserted at byte offsets elsewhere in the file (e.g. `exit data` at a block's end).
    pub inserts: Vec<(usize, String)>,
    /// OpenMP constructs that `inserts`/`before` open around existing code: (directive name,
    /// byte range of the statement they apply to).
    pub regions: Vec<(String, std::ops::Range<usize>)>,
    pub diags: Vec<Diagnostic>,
}

impl Plan {
    fn new(action: Action) -> Self {
        Plan {
            action,
            locals: Vec::new(),
            after_stmt: None,
            decls: Vec::new(),
            before: Vec::new(),
            inserts: Vec::new(),
            regions: Vec::new(),
            diags: Vec::new(),
        }
    }
}

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

/// The insertion that puts OpenMP directive `omp` (without `#pragma omp`) before the
/// statement starting at token `tok`: a line of its own when the statement starts its line,
/// else a `_Pragma` operator in front of it.
pub fn directive_before(u: &Unit, tok: usize, omp: &str) -> (usize, String) {
    let at = u.structure.toks[tok].start;
    let ls = u.src[..at].rfind('\n').map_or(0, |p| p + 1);
    let indent = crate::source::indentation(u.src, ls);
    if ls + indent.len() == at {
        let eol = u.eol;
        (ls, format!("{indent}#pragma omp {omp}{eol}"))
    } else {
        (
            at,
            format!(
                "_Pragma(\"omp {}\") ",
                omp.replace('\\', "\\\\").replace('"', "\\\"")
            ),
        )
    }
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
    structs::order_enter_data(unit, &mut plans);
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
                plans[k].action = Action::Unchanged;
                plans[k].locals.clear();
                plans[k].after_stmt = None;
                plans[k].before.clear();
                plans[k].inserts.clear();
                plans[k].regions.clear();
            }
        }
    }
    plans
}
