//! Gang-redundant code under `target teams`. OpenACC runs the code of a `parallel` region
//! outside its partitioned loops once per gang; `target teams` runs it once per team, the
//! same, but OpenMP 5.0 allows only `distribute`, `parallel` and `loop` regions and a few
//! routines strictly nested in `teams`, and GCC 12 rejects `atomic` and runtime calls there.
//! The statement holding them is wrapped in `parallel num_threads(1)`: still one thread per
//! team. (A region with no gang loop is `target`, where this does not arise.)

mod callees;

use super::loops::{Decision, Decisions, runtime_calls};
use super::{Mode, Unit};
use crate::diag::Diagnostic;
use crate::intent::{Action, Construct, Insert, OmpClause, OmpDirective, Plan};
use crate::rules::id;
use crate::semantic::VarKind;
use std::ops::Range;

pub fn wrap(u: &Unit, dec: &Decisions, plans: &mut [Plan]) {
    for c in 0..plans.len() {
        let Some(d) = u.dir(c) else { continue };
        if d.compute_kind().is_none()
            || d.is_combined()
            || dec.mode(c) != Mode::Teams
            || !matches!(plans[c].action, Action::Rewrite(_))
        {
            continue;
        }
        let Some(stmt) = &u.stmts[c] else { continue };
        let inside: Vec<usize> = u.descendants(c);
        // Token ranges of the loops that open OpenMP regions (partitioned loops).
        let partitioned: Vec<Range<usize>> = inside
            .iter()
            .filter(|&&l| u.is_loop(l) && matches!(plans[l].action, Action::Rewrite(_)))
            .filter_map(|&l| u.stmts[l].as_ref().map(|s| s.toks()))
            .collect();
        let redundant = |t: usize| !partitioned.iter().any(|r| r.contains(&t));
        // Tokens of what OpenMP does not allow directly in `teams`.
        let mut offenders: Vec<(usize, &str)> = Vec::new();
        for &k in &inside {
            if u.dir(k).is_some_and(|x| x.name == "atomic")
                && let Some(t) = u.sites[k].first_token().or(u.sites[k].token())
                && redundant(t)
            {
                offenders.push((t, "an 'atomic' construct"));
            }
        }
        for t in runtime_calls(u, stmt.toks()) {
            if redundant(t) {
                offenders.push((t, "a call that becomes an OpenMP runtime call"));
            }
        }
        let mut wrapped: Vec<Range<usize>> = Vec::new();
        for (t, what) in offenders {
            if wrapped.iter().any(|r| r.contains(&t)) {
                continue;
            }
            let Some(s) = u.syntax.statement_holding(stmt.toks(), t) else {
                continue;
            };
            let gang_inside = inside.iter().any(|&l| {
                u.sites[l].token().is_some_and(|x| s.contains(&x))
                    && matches!(dec[l].as_ref().map(|x| &x.decision), Some(Decision::Par(lv)) if lv.gang)
            });
            if gang_inside {
                let p = &mut plans[c];
                p.diags.push(Diagnostic::new(
                    u.syntax.token_range(t).start,
                    id::REDUNDANT_IN_TEAMS,
                    format!("{what} runs once per gang here, in a statement that also holds a gang loop: OpenMP does not allow it directly in 'teams' and the statement cannot become a 'parallel' region; move it out of that statement. The construct is left unchanged"),
                ));
                p.action = Action::Unchanged;
                break;
            }
            if u.syntax.is_declaration(s.clone()) {
                // Its scope would end with the wrapper; runtime calls there are reported
                // by the runtime translation (`runtime-in-region`).
                continue;
            }
            let bytes = u.syntax.token_range(s.start).start..u.syntax.token_range(s.end - 1).end;
            plans[c].inserts.push(Insert::BeforeStatement {
                stmt: s.start,
                directive: OmpDirective::new(
                    Construct::of("parallel"),
                    vec![OmpClause::new("num_threads", "1")],
                ),
                region: Some(bytes),
            });
            wrapped.push(s);
        }
    }
}

/// What the gang-redundant code of `parallel` construct `c` does whose result depends on
/// how many gangs run it (OpenACC runs it once per gang; one gang runs it once).
pub enum GangCountEffect {
    /// A construct `reduction` whose operator counts copies
    /// ([`counts_copies`](crate::directive::counts_copies): `+`, `-`, `*`, `^`, …): each
    /// gang's copy is combined. (`max`, `min`, `&`, `|`, `&&`, `||` give the same for any
    /// number.)
    Reduction { op: String, var: String },
    /// An `atomic` construct (not `read`) at this byte: one update per gang.
    Atomic(usize),
    /// A call of a function this file does not show to be free of such effects (one it
    /// defines whose body writes only its own locals and calls only such functions is).
    Call(String),
}

/// The first [`GangCountEffect`] of compute construct `c`, which has no gang loop: all its
/// code is gang-redundant.
pub fn gang_count_effect(u: &Unit, c: usize) -> Option<GangCountEffect> {
    let d = u.dir(c)?;
    for cl in d.clauses.iter().filter(|cl| cl.name == "reduction") {
        let op = cl.modifier().unwrap_or("+").trim();
        if crate::directive::counts_copies(op)
            && let Some(v) = cl.items().next()
        {
            return Some(GangCountEffect::Reduction {
                op: op.to_string(),
                var: v.text.to_string(),
            });
        }
    }
    for k in u.descendants(c) {
        if let Some(x) = u.dir(k)
            && x.name == "atomic"
            && !x.has("read")
        {
            return Some(GangCountEffect::Atomic(u.at(k)));
        }
    }
    let stmt = u.stmts[c].as_ref()?;
    let runtime = runtime_calls(u, stmt.toks());
    let mut callees = callees::Callees::default();
    let library = |f: &str| u.lang.is_library_function(f);
    u.syntax
        .calls_in(stmt.toks())
        .into_iter()
        .find(|call| {
            let name = call.name.as_str();
            !runtime.contains(&call.tok)
                && !name.starts_with("acc_")
                && !name.starts_with("omp_")
                && !u.lang.is_library_function(name)
                && (call.member || !callees.inert(u.syntax, &library, name))
        })
        .map(|call| GangCountEffect::Call(call.name))
}

/// What the loop over the gangs of a construct on an `async` queue says: it runs
/// synchronously, ordered on its queue ([`AsyncWait::ordered_clauses`]). A deferred
/// (`nowait`) `target teams distribute` over the gangs does not finish under clang-19
/// without offload targets nor under its host offloading with one team (GCC's
/// par-reduction-2.c); OpenACC's `async` allows synchronous work, and an undeferred target
/// task with `depend(inout: …)` still waits for the queue's earlier work and orders its
/// later work.
///
/// [`AsyncWait::ordered_clauses`]: super::queues::AsyncWait::ordered_clauses
pub const GANG_LOOP_ON_QUEUE: &str = "; on its 'async' queue it runs synchronously (OpenACC allows it), after the queue's earlier work and before its later work (the host waits for it)";

/// Why compute construct `c` (a `parallel num_gangs(gangs)` with effect `e` and no gang
/// loop) cannot become a loop over its gangs (`Insert::GangLoop`), or None when it can.
/// Each gang's copy of a firstprivate variable would be one per team, shared by the
/// iterations a team runs.
pub fn gang_loop_refusal(u: &Unit, c: usize, e: &GangCountEffect, gangs: &str) -> Option<String> {
    let d = u.dir(c)?;
    let l = u.lang;
    if let GangCountEffect::Call(_) = e {
        return Some("what the call does is not known".into());
    }
    if d.is_combined() {
        return Some("a combined construct's loop cannot go inside a loop over the gangs".into());
    }
    if !(l.is_int_literal(gangs) || l.is_identifier(gangs)) {
        return Some(format!(
            "'{gangs}' is not a constant or a variable, and the loop would evaluate it on the device"
        ));
    }
    let Some(stmt) = u.stmts[c]
        .as_ref()
        .filter(|_| u.sites[c].form == crate::scan::Form::Pragma)
    else {
        return Some("the statement the construct applies to is not known".into());
    };
    // The loop's head goes before the statement: under a conditional it would be in one
    // branch only.
    let start = u.syntax.token_range(stmt.toks().start).start;
    if u.src
        .get(u.sites[c].span().end..start)
        .is_none_or(|t| t.lines().any(|l| l.trim_start().starts_with('#')))
    {
        return Some("a preprocessor line lies between the directive and its statement".into());
    }
    if d.has("firstprivate") {
        return Some("a 'firstprivate' copy would be one per team, not one per gang".into());
    }
    let Some(facts) = u.site_facts(c) else {
        return Some("the variables of the region are not known".into());
    };
    // Named in a data, reduction or privatization clause (not in an argument such as
    // `num_gangs(n)`: a region that assigns `n` would change the loop's bound).
    let args = [
        "num_gangs",
        "num_workers",
        "vector_length",
        "if",
        "self",
        "async",
        "wait",
    ];
    let named = |v: &str| {
        d.clauses
            .iter()
            .filter(|cl| !args.contains(&cl.name.as_str()))
            .any(|cl| cl.items().any(|it| l.same_name(it.text.trim(), v)))
    };
    facts
        .vars
        .iter()
        .find(|v| {
            !matches!(v.ty.kind, VarKind::Array { .. })
                && !named(&v.name)
                && super::implicit::region_writes(u, c, v) > 0
        })
        .map(|v| format!("'{}' is firstprivate (one copy per gang) and assigned in the region, and a copy would be one per team", v.name))
}
