//! OpenACC async queues in Fortran: the shared decisions (`crate::translate::queues`: a
//! queue is a dependence object, work on it a deferred task with `depend(inout: …)`, a wait
//! a `taskwait`) written in the directive shapes that both gfortran 12 and flang-22 build
//! into what was decided, and the declaration of the dependence objects.
//!
//! - Compute constructs: `!$omp target … nowait depend(…)` alone, with the rest of the
//!   combined construct on the next line and `!$omp end target` after the region. gfortran
//!   12 drops `depend` from combined `target …` constructs without a word (the work of one
//!   queue then runs unordered), and keeps it on a plain `target`.
//! - A loop over the gangs (`Insert::GangLoop`, synchronous on its queue): `!$omp taskwait`,
//!   then the combined construct without `depend`.
//! - `enter data`, `exit data`, `update` with `async`/`wait`: `!$omp taskwait`, then the
//!   directive without `nowait`/`depend` (flang-22 does not lower `depend` on standalone
//!   data directives): it follows the work of every queue and is complete on return, which
//!   OpenACC allows.
//! - Waits: `!$omp taskwait` for every queue (flang-22 does not accept `depend` on
//!   `taskwait`; waiting for more queues only orders more); a `wait(q) async(r)` is an empty
//!   `!$omp task depend(in: …) depend(inout: …)` / `!$omp end task`; a wait for every queue
//!   (`wait` without a list: flang-22 has no `depend(iterator(…))`) is a `taskwait` before.
//! - The dependence objects: `integer acc2omp_queue(0:63)` in the named common block
//!   `/acc2omp_queues/`, declared in each program unit that names them. A common block is
//!   shared by every file of a program without a definition in any one of them (a module
//!   would have to be compiled first, in one file); its values are never read.
//! - `async` without argument (and `acc_async_noval`) is slot 63: Fortran files get no
//!   `acc2omp_default_async` (`acc_set_default_async` stays OpenACC in Fortran).

use super::Front;
use super::lines::{LineKind, Sentinel};
use super::stmt::Kind;
use crate::directive::Directive;
use crate::intent::{Insert, Plan};
use std::ops::Range;

/// The common block and the array of dependence objects.
const COMMON: &str = "acc2omp_queues";
const ARRAY: &str = crate::translate::queues::QUEUES;

/// The default queue's object as the shared decisions spell it in Fortran, and its slot.
const DEFAULT_OBJECT: &str = "iand(acc2omp_default_async, 63)";
const DEFAULT_SLOT: &str = "63";

/// Clauses of a combined construct that go on `target` when it is split off.
const TARGET_CLAUSES: [&str; 9] = [
    "map",
    "depend",
    "nowait",
    "if",
    "device",
    "defaultmap",
    "is_device_ptr",
    "has_device_addr",
    "in_reduction",
];

/// Whether directive `d` with `plan` has queue work this module writes: an `async` or
/// `wait` clause, a `wait` directive, or a wait the decisions added (before the directive,
/// as an empty task body, at the end of a data region).
pub fn involved(d: &Directive, plan: &Plan) -> bool {
    // Only the waits are queue work: other placements (a `declare`'s lines at the unit's
    // exits) are the printer's own.
    let wait = |w: &crate::intent::OmpDirective| w.name.spelled("do") == "taskwait";
    d.name == "wait"
        || d.find("async").is_some()
        || d.find("wait").is_some()
        || plan.before.iter().any(wait)
        || plan.inserts.iter().any(|i| match i {
            Insert::EmptyBody => true,
            Insert::AtBodyEnd(w) => wait(w),
            _ => false,
        })
}

/// Whether the placements of `plan` are ones this module writes: waits before the
/// directive, an empty task body, a wait at the end of a data region, directives before
/// the loops of its region (the printer's `inserted_lines`).
pub fn writable(plan: &Plan) -> bool {
    plan.scope.is_empty()
        && plan.end_after_stmt.is_none()
        && plan
            .before
            .iter()
            .all(|b| b.name.spelled("do") == "taskwait")
        && plan.inserts.iter().all(|i| match i {
            Insert::EmptyBody | Insert::GangLoop { .. } | Insert::BeforeStatement { .. } => true,
            Insert::AtBodyEnd(w) => w.name.spelled("do") == "taskwait",
            _ => false,
        })
}

/// The directive lines (OpenMP text without sentinel) one translated site becomes.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Shape {
    /// Directives before the site's own (`taskwait`).
    pub before: Vec<String>,
    /// The site's directive.
    pub main: String,
    /// Directives right after it (the rest of a split construct, `end task`).
    pub after: Vec<String>,
    /// Directives after the construct's statement when no end directive closes it.
    pub after_stmt: Vec<String>,
    /// What the site's end directive becomes (in order), when it has one.
    pub close: Vec<String>,
}

impl Shape {
    /// Whether the written directives name the dependence objects.
    pub fn names_queues(&self) -> bool {
        std::iter::once(&self.main)
            .chain(&self.after)
            .any(|t| t.contains(ARRAY))
    }
}

/// The shape of a rewrite named `name` (spelled, `target teams distribute parallel do`)
/// with its clauses as (name, text) pairs. `wait_at_end`: a data region that waits for every
/// queue before it ends (asynchronous work in a file whose region holds a preprocessor
/// conditional, where the decisions did not look for it).
pub fn shape(
    name: &str,
    clauses: Vec<(String, String)>,
    plan: &Plan,
    wait_at_end: bool,
    undeferred: bool,
) -> Shape {
    let clauses: Vec<(String, String)> = clauses
        .into_iter()
        .filter(|c| !(undeferred && c.0 == "nowait"))
        .map(|(n, t)| (n, t.replace(DEFAULT_OBJECT, DEFAULT_SLOT)))
        .collect();
    let is_dep = |n: &str| n == "depend" || n == "nowait";
    let every_queue = |t: &str| t.contains("iterator(");
    let mut s = Shape::default();
    if !plan.before.is_empty() {
        s.before.push("taskwait".into());
    }
    let wait_all = |s: &mut Shape| {
        if s.before.is_empty() {
            s.before.push("taskwait".into());
        }
    };
    let join = |name: &str, cs: &[&(String, String)]| {
        let mut t = name.to_string();
        for c in cs {
            t.push(' ');
            t.push_str(&c.1);
        }
        t
    };
    let rest: Vec<&(String, String)> = clauses.iter().filter(|c| !is_dep(&c.0)).collect();
    match name {
        "taskwait" => s.main = "taskwait".into(),
        "task" => {
            if clauses.iter().any(|c| every_queue(&c.1)) {
                s.main = "taskwait".into();
            } else {
                s.main = join("task", &clauses.iter().collect::<Vec<_>>());
                s.after.push("end task".into());
            }
        }
        "target enter data" | "target exit data" | "target update" => {
            if clauses.iter().any(|c| is_dep(&c.0)) {
                wait_all(&mut s);
            }
            s.main = join(name, &rest);
        }
        _ => {
            let all = clauses.iter().any(|c| every_queue(&c.1));
            if all {
                wait_all(&mut s);
            }
            let mut kept: Vec<&(String, String)> =
                clauses.iter().filter(|c| !every_queue(&c.1)).collect();
            // A loop over the gangs is synchronous on its queue (`depend` without `nowait`):
            // a split `teams distribute` makes flang-22 reject the loop's `cycle` ("CYCLE to
            // construct outside of TEAMS DISTRIBUTE"), and gfortran 12 drops `depend` from
            // the combined construct; a `taskwait` before it waits for the queue's earlier
            // work (and every other queue's), and it is complete before the queue's later work.
            let gang_loop = plan
                .inserts
                .iter()
                .any(|i| matches!(i, Insert::GangLoop { .. }));
            if gang_loop && kept.iter().any(|c| is_dep(&c.0)) {
                wait_all(&mut s);
                kept.retain(|c| !is_dep(&c.0));
            }
            let deferred = kept.iter().any(|c| is_dep(&c.0)) || undeferred && !gang_loop;
            match name.strip_prefix("target ") {
                Some(inner) if deferred => {
                    let (mut on_target, on_inner): (Vec<&(String, String)>, Vec<_>) = kept
                        .into_iter()
                        .partition(|c| TARGET_CLAUSES.contains(&c.0.as_str()));
                    // A reduction variable of the split-off construct is firstprivate on
                    // `target` unless mapped: its result must come back.
                    let extra = reduction_maps(&on_target, &on_inner);
                    on_target.extend(extra.iter());
                    // The queue's clauses last, as on the other constructs.
                    on_target.sort_by_key(|c| is_dep(&c.0));
                    s.main = join("target", &on_target);
                    s.after.push(join(inner, &on_inner));
                    let last = inner.rsplit(' ').next().unwrap_or(inner);
                    let is_loop = ["do", "simd", "loop", "distribute"].contains(&last);
                    if is_loop {
                        s.after_stmt.push("end target".into());
                        s.close.push("end target".into());
                    } else {
                        s.close.push(format!("end {inner}"));
                        s.close.push("end target".into());
                    }
                }
                _ => {
                    s.main = join(name, &kept);
                    s.close.push(format!("end {name}"));
                    // A block construct over a loop whose directive has no end directive
                    // (a `kernels loop` run sequentially as `target`) ends after the loop.
                    let last = name.rsplit(' ').next().unwrap_or(name);
                    if !["do", "simd", "loop", "distribute"].contains(&last) {
                        s.after_stmt.push(format!("end {name}"));
                    }
                }
            }
        }
    }
    if s.close.is_empty() {
        s.close.push(format!("end {name}"));
    }
    if wait_at_end
        || plan
            .inserts
            .iter()
            .any(|i| matches!(i, Insert::AtBodyEnd(_)))
    {
        s.close.insert(0, "taskwait".into());
    }
    s
}

/// `map(tofrom: v, …)` for the reduction variables of `inner` that `target` does not map.
fn reduction_maps(
    target: &[&(String, String)],
    inner: &[&(String, String)],
) -> Vec<(String, String)> {
    let lang = &super::lang::Fortran;
    let mapped: Vec<String> = target
        .iter()
        .filter(|c| c.0 == "map")
        .flat_map(|c| items(after_colon(&c.1)))
        .filter_map(|i| lang.base_name(&i).map(str::to_ascii_lowercase))
        .collect();
    let mut vars: Vec<String> = Vec::new();
    for c in inner.iter().filter(|c| c.0 == "reduction") {
        for it in items(after_colon(&c.1)) {
            if let Some(b) = lang.base_name(&it) {
                let low = b.to_ascii_lowercase();
                if !mapped.contains(&low) && !vars.iter().any(|v| v.eq_ignore_ascii_case(b)) {
                    vars.push(b.to_string());
                }
            }
        }
    }
    if vars.is_empty() {
        return Vec::new();
    }
    vec![("map".into(), format!("map(tofrom: {})", vars.join(", ")))]
}

/// The list of a clause's text after its modifier: `map(tofrom: a, b)` → `a, b`.
fn after_colon(clause: &str) -> &str {
    let inner = clause
        .split_once('(')
        .map_or("", |(_, r)| r.strip_suffix(')').unwrap_or(r));
    match top_level_colon(inner) {
        Some(k) => &inner[k + 1..],
        None => inner,
    }
}

/// The byte offset of the first `:` of `s` outside parentheses (a clause's modifiers end there).
pub(crate) fn top_level_colon(s: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (k, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ':' if depth == 0 => return Some(k),
            _ => {}
        }
    }
    None
}

/// The items of a list, split at commas outside parentheses.
fn items(list: &str) -> Vec<String> {
    let mut out = split_outside_parentheses(list, ',');
    if out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out
}

/// `s` split at the `sep` characters outside parentheses, each part trimmed.
pub fn split_outside_parentheses(s: &str, sep: char) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut depth = 0i32;
    for ch in s.chars() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if ch == sep && depth == 0 {
            out.push(String::new());
        } else if let Some(last) = out.last_mut() {
            last.push(ch);
        }
    }
    out.iter().map(|p| p.trim().to_string()).collect()
}

/// The dummy arguments of unit `u` (lower case), from its header's argument list.
pub fn dummies(src: &str, front: &Front, u: usize) -> Vec<String> {
    let unit = &front.structure.units[u];
    let Some(h) = unit.header else {
        return Vec::new();
    };
    let text = src[front.lexed.stmts[h].span()].to_ascii_lowercase();
    let Some((_, rest)) = text.split_once('(') else {
        return Vec::new();
    };
    let list = rest.split(')').next().unwrap_or("");
    items(list)
        .into_iter()
        .map(|n| {
            n.trim_matches(|c: char| c.is_whitespace() || c == '&')
                .to_string()
        })
        .filter(|n| !n.is_empty() && n != "*")
        .collect()
}

/// The innermost program unit (not a module) holding byte `at`.
pub fn unit_at(front: &Front, at: usize) -> Option<usize> {
    front.structure.unit_at(at)
}

/// The declaration of the dependence objects in unit `u`, unless it has one: inserted
/// after the unit's `use`, `import` and `implicit` statements (before its first other
/// statement, and before its first directive), indented as the line it goes before.
pub fn declaration(
    src: &str,
    front: &Front,
    u: usize,
    eol: &str,
) -> Option<(Range<usize>, String)> {
    let unit = &front.structure.units[u];
    let st = &front.structure;
    let lx = &front.lexed;
    let stmts = unit.spec.start..unit.exec.end.max(unit.spec.end);
    // Declared already (a second run, or by hand).
    let declared = stmts.clone().any(|si| {
        st.stmts[si].kind == Kind::Common
            && src[lx.stmts[si].span()]
                .to_ascii_lowercase()
                .contains(COMMON)
    });
    if declared {
        return None;
    }
    let last_head = stmts
        .clone()
        .filter(|&si| matches!(st.stmts[si].kind, Kind::Use | Kind::Import | Kind::Implicit))
        .max();
    let first_other = match last_head {
        Some(si) => si + 1,
        None => stmts.start,
    };
    let lines = &front.lines;
    // The line to insert before: that statement's first line, or the unit's first
    // directive line when it comes earlier.
    let mut line = (first_other < lx.stmts.len() && first_other <= unit.end.unwrap_or(usize::MAX))
        .then(|| lx.stmts[first_other].lines().start);
    let after_head = match last_head.or(unit.header) {
        Some(si) => lines.next(lx.stmts[si].lines().end - 1),
        None => unit.span.start,
    };
    let directive = front
        .sites
        .iter()
        .filter(|s| matches!(s.sentinel, Sentinel::Acc | Sentinel::Omp))
        .filter(|s| s.span.start >= after_head && unit.span.contains(&s.span.start))
        .map(|s| s.lines.start)
        .min();
    if let Some(d) = directive
        && line.is_none_or(|l| d < l)
    {
        line = Some(d);
    }
    let l = &lines.get(line?);
    let fixed = l.form == super::form::Form::Fixed;
    let indent = if fixed {
        "      ".to_string()
    } else {
        let text = &src[l.start..l.end];
        let n = text.len() - text.trim_start_matches([' ', '\t']).len();
        // A directive or comment line's own indentation; a code line's.
        match l.kind {
            LineKind::Code | LineKind::Directive(_) | LineKind::Comment => text[..n].to_string(),
            _ => String::new(),
        }
    };
    let text = format!(
        "{indent}! acc2omp: one OpenMP dependence object per OpenACC async queue{eol}\
         {indent}integer {ARRAY}(0:63){eol}\
         {indent}common /{COMMON}/ {ARRAY}{eol}"
    );
    Some((l.start..l.start, text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intent::{Action, Construct, OmpDirective};

    fn c(name: &str, text: &str) -> (String, String) {
        (name.into(), text.into())
    }

    #[test]
    fn combined_constructs_split_off_target_with_the_queue() {
        let plan = Plan::new(Action::Unchanged);
        let s = shape(
            "target teams distribute parallel do simd",
            vec![
                c("collapse", "collapse(2)"),
                c("reduction", "reduction(+: s, t)"),
                c("map", "map(tofrom: t)"),
                c("nowait", "nowait"),
                c(
                    "depend",
                    "depend(inout: acc2omp_queue(iand(acc2omp_default_async, 63)))",
                ),
                c("private", "private(i)"),
            ],
            &plan,
            false,
            false,
        );
        assert_eq!(
            s.main,
            "target map(tofrom: t) map(tofrom: s) nowait depend(inout: acc2omp_queue(63))"
        );
        assert_eq!(
            s.after,
            ["teams distribute parallel do simd collapse(2) reduction(+: s, t) private(i)"]
        );
        assert_eq!(s.after_stmt, ["end target"]);
        assert!(s.names_queues());
    }

    #[test]
    fn waits_and_data_directives_are_synchronous() {
        let mut plan = Plan::new(Action::Unchanged);
        let s = shape(
            "target update",
            vec![
                c("map", "from(c)"),
                c("nowait", "nowait"),
                c("depend", "depend(inout: acc2omp_queue(1))"),
            ],
            &plan,
            false,
            false,
        );
        assert_eq!(
            (s.before.as_slice(), s.main.as_str()),
            (&["taskwait".to_string()][..], "target update from(c)")
        );
        assert!(!s.names_queues());
        let s = shape(
            "taskwait",
            vec![c("depend", "depend(in: acc2omp_queue(1))")],
            &plan,
            false,
            false,
        );
        assert_eq!(s.main, "taskwait");
        plan.inserts.push(Insert::EmptyBody);
        let s = shape(
            "task",
            vec![
                c("depend", "depend(in: acc2omp_queue(2))"),
                c("depend", "depend(inout: acc2omp_queue(1))"),
            ],
            &plan,
            false,
            false,
        );
        assert_eq!(s.after, ["end task"]);
        let s = shape(
            "task",
            vec![c(
                "depend",
                "depend(iterator(acc2omp_k = 0:63), in: acc2omp_queue(acc2omp_k))",
            )],
            &plan,
            false,
            false,
        );
        assert_eq!((s.main.as_str(), s.after.len()), ("taskwait", 0));
        let mut data = Plan::new(Action::Unchanged);
        data.inserts.push(Insert::AtBodyEnd(OmpDirective::new(
            Construct::of("taskwait"),
            vec![],
        )));
        let s = shape(
            "target data",
            vec![c("map", "map(to: a)")],
            &data,
            false,
            false,
        );
        assert_eq!(s.close, ["taskwait", "end target data"]);
    }
}
