//! Printing a decided loop: the OpenMP loop directive of each profile, its clauses, the
//! local copies of a sequential loop, and the loop split off a `kernels` construct.

use super::decide::{
    Decision, Decisions, Levels, LoopInfo, asserted_independent, is_seq, kernels_sequential,
};
use crate::diag::Diagnostic;
use crate::directive::{Clause, Directive};
use crate::intent::{Action, ClauseOp, Construct, Insert, OmpClause, OmpDirective, Plan, Rewrite};
use crate::profile::Profile;
use crate::rules::id;
use crate::translate::kernels::Proof;
use crate::translate::{Mode, Options, Unit};
use crate::translate::{kernels, reductions};

/// The clauses the dependence test infers for kernels loop `i` when it was the test that
/// made it parallel (no levels, no `independent`): `reduction`, `lastprivate`, `collapse`.
/// On a loop with levels or marked `independent` only its reductions: OpenACC compilers
/// infer those in `kernels` (the scalars the iterations update by one operator and read
/// nowhere else), where shared they would race.
fn inferred_clauses(u: &Unit, i: usize, c: Option<usize>, mode: Mode) -> Vec<OmpClause> {
    let kernels = c.and_then(|c| u.dir(c)).and_then(|d| d.compute_kind()) == Some("kernels");
    if !kernels {
        return Vec::new();
    }
    let d = u.dir(i);
    let asserted = trusted(u, i);
    let Some(c) = c else { return Vec::new() };
    // Variables the directive's own clauses already name keep those clauses.
    let named = |v: &str| {
        d.is_some_and(|d| {
            d.clauses.iter().any(|k| {
                matches!(k.name.as_str(), "private" | "firstprivate" | "reduction")
                    && k.items().any(|x| x.text.trim() == v)
            })
        })
    };
    let Proof::Independent(cl) = kernels::prove(u, i, c, mode) else {
        return Vec::new();
    };
    cl.into_iter()
        .filter(|x| !asserted || x.name == "reduction")
        .filter_map(|x| {
            if x.name == "collapse" {
                return (!d.is_some_and(|d| d.has("collapse") || d.has("tile"))).then_some(x);
            }
            let list = x.arg.as_deref()?;
            let (prefix, items) = match list.split_once(':') {
                Some((op, items)) => (format!("{op}:"), items),
                None => (String::new(), list),
            };
            let kept: Vec<&str> = items
                .split(',')
                .map(str::trim)
                .filter(|v| !named(v))
                .collect();
            (!kept.is_empty())
                .then(|| OmpClause::new(x.name, format!("{prefix}{}", kept.join(", "))))
        })
        .collect()
}

/// Whether loop site `i` is parallel by its directive (levels or `independent`), not by the
/// dependence test: only the test's reductions are added to it.
fn trusted(u: &Unit, i: usize) -> bool {
    let levels = u.is_loop(i) && u.dir(i).is_some_and(|d| Levels::explicit(d).any());
    levels || asserted_independent(u, i)
}

/// The operator and variables of a `reduction` clause the translation built (`max:a, b`).
fn reduction_items(x: &OmpClause) -> Option<(&str, Vec<&str>)> {
    let (op, vars) = x
        .arg
        .as_deref()
        .filter(|_| x.name == "reduction")?
        .split_once(':')?;
    Some((op, vars.split(',').map(str::trim).collect()))
}

/// Keeps in the `reduction` clauses of `clauses` only the variables `keep` accepts (a
/// clause left with none goes).
fn retain_reductions(clauses: &mut Vec<OmpClause>, keep: impl Fn(&str) -> bool) {
    clauses.retain_mut(|x| {
        let Some((op, vars)) = reduction_items(x) else {
            return true;
        };
        let kept: Vec<&str> = vars.into_iter().filter(|v| keep(v)).collect();
        if kept.is_empty() {
            return false;
        }
        let arg = format!("{op}:{}", kept.join(", "));
        x.arg = Some(arg.into());
        true
    });
}

/// [`inferred_clauses`] of loop `i` in construct `c`, without the reductions of scalars that
/// a loop around it (up to `c`) shares among iterations that run in parallel (declared
/// outside it): that loop's threads would still race on them. A loop around that reduces
/// the scalar gives `i` the reduction itself ([`inherit_inferred`],
/// [`reductions::inherited_by`]); one that does not is reported by `scalar-race`.
fn own_inferred(
    u: &Unit,
    i: usize,
    c: Option<usize>,
    mode: Mode,
    dec: &[Option<LoopInfo>],
) -> Vec<OmpClause> {
    let mut out = inferred_clauses(u, i, c, mode);
    let Some(c) = c.filter(|&c| c != i) else {
        return out;
    };
    let parallel: Vec<usize> = (u.ancestors(i).take_while(|&a| a != c))
        .chain(std::iter::once(c))
        .filter(|&a| {
            matches!(
                dec.get(a).and_then(Option::as_ref).map(|x| &x.decision),
                Some(Decision::Par(_))
            )
        })
        .collect();
    // (No facts: taken as shared.)
    let shared = |v: &str| {
        parallel.iter().any(|&a| {
            u.site_facts(a)
                .is_none_or(|f| f.vars.iter().any(|x| u.lang.same_name(&x.name, v)))
        })
    };
    retain_reductions(&mut out, |v| !shared(v));
    out
}

/// The reductions the translation infers on the loops around parallel loop `i` (decided by
/// `info`) in a `kernels` construct, which `i` updates only by their operator: added to
/// `inherited` as [`reductions::inherited_by`] finds those of written clauses. An inner
/// `simd` or `parallel for` that updates the scalar without the clause would race on it.
fn inherit_inferred(
    u: &Unit,
    i: usize,
    info: Option<&LoopInfo>,
    dec: &[Option<LoopInfo>],
    inherited: &mut Vec<(String, String)>,
) {
    let Some(info) = info else { return };
    let (Some(c), Decision::Par(_)) = (info.compute, &info.decision) else {
        return;
    };
    let (Some(d), Some(st)) = (u.dir(i), u.stmts[i].as_ref()) else {
        return;
    };
    if c == i || u.dir(c).and_then(|x| x.compute_kind()) != Some("kernels") {
        return;
    }
    let own = reductions::own_names(u.lang, d);
    let own = |v: &str| own.contains(&reductions::name_key(u.lang, v));
    for a in u.ancestors(i) {
        let mode = dec
            .get(a)
            .and_then(Option::as_ref)
            .map_or(Mode::Teams, |x| x.mode);
        for clause in own_inferred(u, a, Some(c), mode, dec) {
            let Some((op, vars)) = reduction_items(&clause) else {
                continue;
            };
            for v in vars {
                if !own(v)
                    && !inherited.iter().any(|(_, x)| x == v)
                    && u.syntax.updated_only_by(&st.toks(), v, op)
                {
                    inherited.push((op.to_string(), v.to_string()));
                }
            }
        }
        if a == c {
            break;
        }
    }
}

/// An expression that can be evaluated again inside the region with the same value.
fn is_simple_expr(s: &str) -> bool {
    !s.contains(['(', '=', ',', '?']) && !s.contains("++") && !s.contains("--")
}

/// The argument of `worker(n)`, `worker(num:n)`, `vector(length:n)`.
fn level_arg(c: &Clause) -> Option<&str> {
    c.items().next().map(|i| i.text.as_str())
}

/// The chunk of `gang(static:n)` on a loop that becomes `distribute` (`distribute`): OpenACC
/// deals the iterations to the gangs round-robin in chunks of `n`, as `dist_schedule(static,
/// n)` deals them to the teams (both in order of the gang or team number). `static:*` leaves
/// the chunk to the implementation, as OpenMP's default does. Returns the chunk and whether
/// the arguments dropped (`num:`, `dim:`, a bare count, or a chunk with no `distribute` to
/// take it or one with side effects).
fn gang_schedule<'c>(
    l: &dyn crate::lang::Language,
    c: &'c Clause,
    distribute: bool,
) -> (Option<&'c str>, Vec<&'c str>) {
    let mut chunk = None;
    let mut dropped = Vec::new();
    for it in c.items() {
        let static_arg = it
            .text
            .split_once(':')
            .filter(|(k, v)| k.trim() == "static" && !v.starts_with(':'))
            .map(|(_, v)| v.trim());
        match static_arg {
            Some("*") => {}
            Some(n) if distribute && !l.has_side_effects(n) => chunk = Some(n),
            _ => dropped.push(it.text.trim()),
        }
    }
    (chunk, dropped)
}

/// Why the default profile gives `simd` no `simdlen`.
const SIMDLEN_HINT: &str = "the vector length is dropped: as 'simdlen' it would force that width on a CPU, where the compiler's own choice is faster, and GPUs take no width from 'simd'";

/// The OpenMP pieces for a parallelized loop.
pub struct LoopOut {
    pub parts: Vec<&'static str>,
    pub ops: Vec<Option<ClauseOp>>,
    pub append: Vec<OmpClause>,
    pub locals: Vec<String>,
    pub diags: Vec<Diagnostic>,
}

/// Whether an ancestor loop of `i` (up to its compute construct) is gang- or worker-partitioned.
fn ancestor_partitioned(
    u: &Unit,
    i: usize,
    dec: &[Option<LoopInfo>],
    compute: Option<usize>,
) -> bool {
    if Some(i) == compute {
        return false;
    }
    for a in u.ancestors(i) {
        if let Some(Some(LoopInfo {
            decision: Decision::Par(l),
            ..
        })) = dec.get(a)
            && (l.gang || l.worker)
        {
            return true;
        }
        if Some(a) == compute {
            break;
        }
    }
    false
}

/// Translate the loop part of directive `i` (a `loop` or the loop of a combined directive).
pub fn loop_part(
    u: &Unit,
    i: usize,
    l: Levels,
    dec: &[Option<LoopInfo>],
    opts: &Options,
) -> LoopOut {
    loop_part_by(u, i, l, dec[i].as_ref(), dec, opts)
}

/// [`loop_part`] with the decision `info` about loop `i` (the others' from `dec`).
fn loop_part_by(
    u: &Unit,
    i: usize,
    l: Levels,
    info: Option<&LoopInfo>,
    dec: &[Option<LoopInfo>],
    opts: &Options,
) -> LoopOut {
    let d = u.dir(i).expect("loop_part on a parsed directive");
    let mode = info.map_or(Mode::Teams, |x| x.mode);
    let compute = info.and_then(|x| x.compute);
    let cdir = compute.and_then(|c| u.dir(c));
    let anc = ancestor_partitioned(u, i, dec, compute);
    let at = u.at(i);
    let mut diags = Vec::new();
    let mut append = Vec::new();
    let mut parts: Vec<&'static str> = Vec::new();
    let mut lone_vector = false;
    // GCC 12 miscompiles `atomic` inside `simd` (the program crashes), so a loop that
    // contains an atomic construct is not vectorized.
    let has_atomic = u
        .descendants(i)
        .iter()
        .any(|&k| u.dir(k).is_some_and(|x| x.name == "atomic"));
    let mut l = l;
    if has_atomic && l.vector {
        l.vector = false;
        if d.has("vector") {
            diags.push(Diagnostic::new(at, id::SIMD_ATOMIC, "'vector' does not become 'simd': the loop contains 'atomic', which GCC 12 miscompiles inside 'simd'"));
        }
    }
    let mut inherited = reductions::inherited_by(u, i, info);
    inherit_inferred(u, i, info, dec, &mut inherited);
    let mut inferred = own_inferred(u, i, compute, mode, dec);
    // A reduction a loop around gives this one is not written twice.
    retain_reductions(&mut inferred, |v| !inherited.iter().any(|(_, w)| w == v));
    if trusted(u, i) {
        for (op, vars) in inferred.iter().filter_map(reduction_items) {
            diags.push(Diagnostic::new(
                at,
                id::KERNELS_REDUCTION,
                format!(
                    "the iterations update {} only as a '{op}' reduction and no clause names it: OpenACC compilers infer the reduction in a kernels region, and shared in OpenMP the iterations would race; 'reduction({op}:{})' is added",
                    crate::diag::quoted_names(&vars),
                    vars.join(", ")
                ),
            ));
        }
    }
    // What OpenMP's `loop` construct cannot express, in the `loop` profile: such a loop
    // takes the default profile's mapping.
    let fallback = match opts.profile {
        // No reduction on a `loop` bound to an enclosing `teams` (a bare loop in braces
        // gets its own directive inside the construct: `split_bare_loop`).
        Profile::Loop
            if mode == Mode::Teams
                && l.gang
                && (compute != Some(i) || split_bare(u, i))
                && (d.has("reduction")
                    || !inherited.is_empty()
                    || inferred.iter().any(|c| c.name == "reduction")) =>
        {
            Some("a reduction on a 'loop' bound to the enclosing 'teams'")
        }
        // No constructs in its region but loop, parallel and simd.
        Profile::Loop if has_atomic => Some("an 'atomic' construct in a 'loop' region"),
        // No call of the OpenMP runtime, which the runtime API becomes.
        Profile::Loop if calls_runtime(u, i) => Some(
            "a call of the OpenMP runtime (the OpenACC runtime API's translation) in a 'loop' region",
        ),
        // No `lastprivate` but of its own loop variables: `translate::plan` found that the
        // loop's plan needs one.
        Profile::Loop if info.is_some_and(|x| x.no_loop_construct) => {
            Some("'lastprivate' of a variable other than the loop's own on a 'loop' construct")
        }
        _ => None,
    };
    let profile = match fallback {
        Some(why) => {
            diags.push(Diagnostic::new(
                at,
                id::LOOP_CONSTRUCT_FALLBACK,
                format!("mapped as under the default profile: OpenMP does not allow {why}"),
            ));
            Profile::Default
        }
        None => opts.profile,
    };
    match (profile, mode) {
        // A `loop` inside the region of an enclosing loop construct is not closely nested in
        // a `teams` or `parallel` construct, where OpenMP leaves its binding undefined
        // (5.0 2.9.5, 5.1 2.11.7); `bind(thread)` is what GCC, Clang and flang choose for it.
        (Profile::Loop, _) if anc => {
            parts.push("loop");
            append.push(OmpClause::new("bind", "thread"));
        }
        (Profile::Loop, Mode::Teams) => parts.push(if l.gang { "loop" } else { "parallel loop" }),
        (Profile::Loop, _) => parts.push("parallel loop"),
        (_, Mode::Teams) => {
            if l.gang {
                parts.push("distribute");
            }
            if l.worker || (!l.gang && !anc) {
                parts.push("parallel for");
                lone_vector = !l.worker;
            }
            if l.vector {
                parts.push("simd");
            }
        }
        (_, _) => {
            if l.gang || l.worker {
                parts.push("parallel for");
            }
            if l.vector {
                parts.push("simd");
            }
        }
    }
    let has_pf = parts.contains(&"parallel for");
    let has_simd = parts.contains(&"simd");
    let is_loop_construct = profile == Profile::Loop;
    // Threads of this loop update a reduction variable: it needs its own reduction (a
    // gang-only loop runs each iteration on one thread of a team).
    let keeps_reduction =
        ((l.worker || l.vector) && !(is_loop_construct && l.gang)) || mode == Mode::Target;
    let mut ops = Vec::new();
    let dropped_private = crate::validate::private_loop::dropped(u, i);
    for c in &d.clauses {
        let op = match c.name.as_str() {
            "gang" => {
                let distribute = parts.contains(&"distribute");
                let (schedule, dropped) = gang_schedule(u.lang, c, distribute);
                if let Some(n) = schedule {
                    append.push(OmpClause::new("dist_schedule", format!("static, {n}")));
                }
                if !dropped.is_empty() {
                    let message = match schedule {
                        None => format!(
                            "'{}' arguments have no OpenMP equivalent on a loop and are dropped",
                            c.spelled()
                        ),
                        Some(_) => format!(
                            "'{}' of '{}' has no OpenMP equivalent on a loop and is dropped (its 'static:' chunk becomes 'dist_schedule')",
                            dropped.join(", "),
                            c.spelled()
                        ),
                    };
                    diags.push(Diagnostic::new(c.span().start, id::CLAUSE_IGNORED, message));
                }
                ClauseOp::Drop
            }
            "worker" => match level_arg(c) {
                Some(n) if has_pf && !lone_vector && !is_loop_construct => {
                    ClauseOp::to(OmpClause::new("num_threads", n))
                }
                Some(_) => {
                    diags.push(Diagnostic::new(
                        c.span().start,
                        id::CLAUSE_IGNORED,
                        "the worker count has no place in this OpenMP mapping and is dropped",
                    ));
                    ClauseOp::Drop
                }
                None => ClauseOp::Drop,
            },
            "vector" => match level_arg(c) {
                Some(n)
                    if has_simd && u.lang.is_int_literal(n) && opts.profile != Profile::Default =>
                {
                    ClauseOp::to(OmpClause::new("simdlen", n))
                }
                Some(_) if has_simd && opts.profile == Profile::Default => {
                    diags.push(Diagnostic::new(
                        c.span().start,
                        id::LAUNCH_HINT,
                        SIMDLEN_HINT,
                    ));
                    ClauseOp::Drop
                }
                Some(_) if !has_simd => {
                    diags.push(Diagnostic::new(
                        c.span().start,
                        id::CLAUSE_IGNORED,
                        "the vector length has no place in this OpenMP mapping and is dropped",
                    ));
                    ClauseOp::Drop
                }
                Some(n) => {
                    diags.push(Diagnostic::new(
                        c.span().start,
                        id::VECTOR_LENGTH_IGNORED,
                        format!("vector length '{n}' is not an integer constant and is ignored"),
                    ));
                    ClauseOp::Drop
                }
                None => ClauseOp::Drop,
            },
            "seq" | "independent" | "auto" => ClauseOp::Drop,
            "collapse" => match c.modifier() {
                Some(_) => ClauseOp::to(OmpClause::new("collapse", level_arg(c).unwrap_or("1"))),
                None => ClauseOp::Keep,
            },
            "tile" => {
                let n = c.items().count();
                if d.has("collapse") {
                    diags.push(Diagnostic::new(
                        c.span().start,
                        id::TILE_AS_COLLAPSE,
                        "'tile' is dropped: the loop already has 'collapse'",
                    ));
                    ClauseOp::Drop
                } else {
                    let mut nested = u.nest_token(i).map_or(n, |t| u.syntax.nest_depth(t, n));
                    if u.stmts[i].is_none() {
                        nested = n;
                    }
                    if nested < n {
                        diags.push(Diagnostic::new(
                            c.span().start,
                            id::COLLAPSE_DEPTH,
                            format!(
                                "'tile' names {n} loops but only {nested} are perfectly nested here"
                            ),
                        ));
                    }
                    diags.push(Diagnostic::new(c.span().start, id::TILE_AS_COLLAPSE, format!("'tile' becomes 'collapse({n})': same iterations, no tiling (OpenMP 'tile' needs OpenMP 5.1 support that GCC 12 lacks)")));
                    ClauseOp::to(OmpClause::new("collapse", n.to_string()))
                }
            }
            "private" => private_op(u, c, &dropped_private),
            "reduction" => {
                if keeps_reduction {
                    ClauseOp::Keep
                } else {
                    ClauseOp::Drop
                }
            }
            _ => {
                ops.push(None);
                continue;
            }
        };
        ops.push(Some(op));
    }
    if let Some(cd) = cdir {
        // The default profile puts `num_workers` in the teams' `thread_limit` instead, and
        // under `target` (no `thread_limit` before OpenMP 5.1) leaves the count to the runtime.
        if l.worker
            && !l.vector_threads
            && opts.profile != Profile::Default
            && has_pf
            && !lone_vector
            && !is_loop_construct
            && d.find("worker").is_none_or(|w| w.args.is_none())
            && let Some(nw) = cd.find("num_workers").and_then(level_arg)
        {
            if is_simple_expr(nw) {
                append.push(OmpClause::new("num_threads", nw));
            } else {
                diags.push(Diagnostic::new(at, id::NUM_WORKERS_IGNORED, format!("num_workers '{nw}' may have side effects and is not repeated on the worker loop")));
            }
        }
        if l.vector
            && has_simd
            && opts.profile != Profile::Default
            && d.find("vector").is_none_or(|w| w.args.is_none())
            && let Some(vl) = cd.find("vector_length").and_then(level_arg)
        {
            if u.lang.is_int_literal(vl) {
                append.push(OmpClause::new("simdlen", vl));
            } else {
                diags.push(Diagnostic::new(
                    at,
                    id::VECTOR_LENGTH_IGNORED,
                    format!("vector_length '{vl}' is not an integer constant and is ignored"),
                ));
            }
        }
    }
    if lone_vector && l.vector {
        append.push(OmpClause::new("num_threads", "1"));
    }
    if keeps_reduction {
        for (op, v) in &inherited {
            append.push(OmpClause::new("reduction", format!("{op}: {v}")));
        }
    }
    append.extend(inferred);
    // The bare loop of a `kernels` construct has no loop directive to make its control
    // variable private (C; Fortran's `do` variables in a compute construct are, and its
    // facts leave them out of the region's variables): it keeps its last value, as
    // sequentially and as `kernels` copies it out.
    let bare = u.bare_loop(i);
    if let Some(f) = &bare
        && let Some(v) = &f.var
        && u.site_facts(i)
            .is_some_and(|x| x.vars.iter().any(|r| u.lang.same_name(&r.name, v)))
    {
        append = kernels::lastprivate_of(f, append);
    }
    let mut locals = Vec::new();
    if l.vector
        && bare.is_none()
        && let Some(f) = u.stmts[i].as_ref().and_then(|s| s.for_loop.as_ref())
        && !f.declared
        && let Some(v) = &f.var
    {
        locals.push(v.to_string());
        // `simd` makes the variable linear or lastprivate: GCC maps the local copy and the
        // region writes its last value back. A deferred (`nowait`) target task would write
        // into the copy's block after it ended (a hang or corrupted stack under GCC 12).
        if compute == Some(i) && d.has("async") {
            append.push(OmpClause::new("private", v.clone()));
        }
    }
    if d.has("collapse")
        && let Some(n) = d
            .find("collapse")
            .and_then(level_arg)
            .and_then(|n| crate::directive::count::constant(n, crate::directive::Dialect::C))
            .and_then(|n| usize::try_from(n).ok())
        && u.stmts[i].is_some()
        && let Some(t) = u.nest_token(i)
    {
        let depth = u.syntax.nest_depth(t, n);
        if depth < n {
            // Where the nest ends, as compilers report it; the directive when unknown.
            let (pos, line) = match u.syntax.nest_break(t, n) {
                Some(b) => (
                    u.syntax.token_range(b).start,
                    format!(" (line {})", u.line(i)),
                ),
                None => (at, String::new()),
            };
            diags.push(Diagnostic::new(
                pos,
                id::COLLAPSE_DEPTH,
                format!("'collapse({n})'{line} but only {depth} perfectly nested loops follow"),
            ));
        }
    }
    LoopOut {
        parts,
        ops,
        append,
        locals,
        diags,
    }
}

/// A loop directive's `private` clause `c`, without the enclosing loops' control variables
/// in `dropped` (`validate::private_loop`, which reports them).
pub fn private_op(u: &Unit, c: &Clause, dropped: &[String]) -> ClauseOp {
    let gone = |x: &str| dropped.iter().any(|v| u.lang.same_name(v, x.trim()));
    if !c.items().any(|x| gone(&x.text)) {
        return ClauseOp::Keep;
    }
    let left: Vec<&str> = c
        .items()
        .filter(|x| !gone(&x.text))
        .map(|x| x.text.trim())
        .collect();
    if left.is_empty() {
        ClauseOp::Drop
    } else {
        ClauseOp::to(OmpClause::new("private", left.join(", ")))
    }
}

/// Local copies needed when loop `i` becomes a plain sequential loop: its `private`
/// variables, and its control variable when the `for` assigns one declared outside (OpenACC
/// makes the loop variable of a loop construct private, also of a sequential one).
pub fn seq_locals(u: &Unit, i: usize, diags: &mut crate::intent::Thin<Diagnostic>) -> Vec<String> {
    let Some(d) = u.dir(i) else {
        return Vec::new();
    };
    let at = u.at(i);
    let mut locals = Vec::new();
    let dropped = crate::validate::private_loop::dropped(u, i);
    for c in d.all("private") {
        for item in c.items() {
            if dropped
                .iter()
                .any(|v| u.lang.same_name(v, item.text.trim()))
            {
                continue;
            }
            if u.lang.is_identifier(&item.text) {
                locals.push(item.text.to_string());
            } else {
                diags.push(Diagnostic::new(item.span().start.max(at), id::PRIVATE_NOT_LOCAL, format!("private '{}' on a sequential loop cannot become a local copy; it stays shared", item.text)));
            }
        }
    }
    if let Some(v) = assigned_control_var(u, i)
        && !locals.contains(&v)
    {
        locals.push(v);
    }
    locals
}

/// The control variable of loop site `i` when its `for` assigns one declared outside.
pub fn assigned_control_var(u: &Unit, i: usize) -> Option<String> {
    let f = u.stmts[i].as_ref()?.for_loop.as_ref()?;
    f.var.as_deref().filter(|_| !f.declared).map(String::from)
}

/// Whether a compute construct before orphan loop `i`, in the same function, has no known
/// region (left: no loop after a combined construct, no end directive, an error). The loop
/// may be that construct's: translating or removing it would change what a second run
/// finds after the construct, so it is left with it.
fn follows_unknown_region(u: &Unit, i: usize) -> bool {
    // Fortran only for now: in C the same shape has not been seen, and its output is pinned
    // by the C conformance expectations.
    if u.lang.name() != "Fortran" {
        return false;
    }
    let Some(t) = u.sites[i].token() else {
        return false;
    };
    let functions = u.syntax.enclosing_functions(t);
    (0..i).any(|c| {
        u.stmts[c].is_none()
            && is_compute(u, c)
            && u.sites[c]
                .token()
                .is_some_and(|tc| u.syntax.enclosing_functions(tc) == functions)
    })
}

/// Whether site `c` is a compute construct, parsed or left unparsed (its name alone).
fn is_compute(u: &Unit, c: usize) -> bool {
    use crate::directive::{Dialect, compute_kind_of, directive_name_in};
    if let Some(d) = u.dir(c) {
        return d.compute_kind().is_some();
    }
    let s = &u.sites[c];
    let text = s.unescaped.as_deref().unwrap_or(u.src);
    let dialect = Dialect::of_language(u.lang.name());
    directive_name_in(text, s.text(), u.tables, dialect)
        .is_some_and(|n| compute_kind_of(&n).is_some())
}

/// Plan for a standalone `acc loop`.
pub fn plan_loop(u: &Unit, i: usize, opts: &Options, dec: &Decisions) -> Plan {
    let d = u.dir(i).expect("plan_loop on a parsed directive");
    let info = dec[i].clone().unwrap_or(LoopInfo {
        decision: Decision::Orphan,
        compute: None,
        mode: Mode::Teams,
        kernels_unknown: false,
        host_function: false,
        no_loop_construct: false,
        vector_refused: None,
    });
    let mut plan = Plan::new(Action::Unchanged);
    let at = u.at(i);
    match info.decision {
        Decision::Seq => {
            plan.action = Action::Remove;
            plan.scope.locals = seq_locals(u, i, &mut plan.diags);
            if info.kernels_unknown {
                plan.diags.push(kernels_sequential(u, i, u.line(i)));
            }
            if let Some(why) = &info.vector_refused {
                plan.diags.push(Diagnostic::new(
                    at,
                    id::VECTOR_DEPENDENCE,
                    format!(
                        "loop without levels runs sequentially on its thread: OpenACC treats it as independent, but the dependence test finds: {why}; the loop around it takes the vector level ('simd'). If its iterations are independent, give it 'vector' (with the clauses they need); if not, the original races here"
                    ),
                ));
            }
        }
        Decision::Orphan => {
            let l = Levels::explicit(d);
            if is_seq(d) {
                plan.action = Action::Remove;
                plan.scope.locals = seq_locals(u, i, &mut plan.diags);
            } else if !l.any() {
                plan.diags.push(Diagnostic::new(at, id::ORPHAN_LOOP, "orphaned loop without 'gang', 'worker', 'vector' or 'seq': its level depends on the caller, so it is left unchanged"));
            } else if l.gang && d.has("reduction") {
                plan.diags.push(Diagnostic::new(at, id::ORPHAN_LOOP, "orphaned gang reduction: the compute construct that must combine it is not visible, so the loop is left unchanged"));
            } else if follows_unknown_region(u, i) {
                plan.diags.push(Diagnostic::new(at, id::ORPHAN_LOOP, "loop after a compute construct of the same function whose region is not known (see that construct's diagnostic): it may belong to that construct, so it is left unchanged with it"));
            } else if info.host_function {
                plan.action = Action::Remove;
                plan.scope.locals = seq_locals(u, i, &mut plan.diags);
                let message = match dec.callers.get(&i) {
                    Some(c) => format!(
                        "orphaned worker/vector loop in a function that no 'routine' directive of this file makes device code; the compute construct at line {} calls it (directly or through the file's functions), so OpenACC makes it an implicit 'routine seq' and the loop runs sequentially on the device thread that calls it, as the translation keeps it; add 'acc routine worker' (or vector) before the function to parallelize it",
                        u.line(*c)
                    ),
                    None => "orphaned worker/vector loop in a function that no 'routine' directive of this file makes device code: it runs on the host, so it stays sequential; add 'acc routine worker' (or vector) to the function if the device calls it".to_string(),
                };
                plan.diags
                    .push(Diagnostic::new(at, id::ORPHAN_LOOP_HOST, message));
            } else {
                // Decided here, for this loop only (the others' decisions are unchanged).
                let own = LoopInfo {
                    decision: Decision::Par(l),
                    compute: None,
                    // An orphaned `distribute` binds to the caller's teams (both GCC and Clang).
                    mode: if l.gang { Mode::Teams } else { Mode::Target },
                    kernels_unknown: false,
                    host_function: false,
                    no_loop_construct: false,
                    vector_refused: None,
                };
                // An orphaned OpenMP `loop` would need a binding we cannot know.
                let o = Options {
                    profile: Profile::Default,
                    ..opts.clone()
                };
                let mut out = loop_part_by(u, i, l, Some(&own), dec, &o);
                plan.diags.append(&mut out.diags);
                plan.scope.locals = out.locals;
                plan.action = rewrite(d, &out.parts, out.ops, out.append);
            }
        }
        Decision::Par(l) => {
            let mut out = loop_part(u, i, l, dec, opts);
            plan.diags.append(&mut out.diags);
            if out.parts.is_empty() {
                // Nothing left to partition (a vector loop that cannot be `simd`).
                plan.action = Action::Remove;
                plan.scope.locals = seq_locals(u, i, &mut plan.diags);
            } else {
                plan.scope.locals = out.locals;
                plan.action = rewrite(d, &out.parts, out.ops, out.append);
            }
        }
    }
    plan
}

fn rewrite(
    d: &Directive,
    parts: &[&'static str],
    ops: Vec<Option<ClauseOp>>,
    append: Vec<OmpClause>,
) -> Action {
    let ops = ops
        .into_iter()
        .zip(&d.clauses)
        .map(|(o, _)| o.unwrap_or(ClauseOp::Drop))
        .collect();
    let mut name = Construct::default();
    for p in parts {
        name.push(p);
    }
    Action::Rewrite(Rewrite {
        name,
        ops,
        append,
        drop_arg: false,
    })
}

/// Whether the statement of site `i` calls an OpenMP runtime routine, or an OpenACC one that
/// becomes an OpenMP runtime call.
pub(crate) fn calls_runtime(u: &Unit, i: usize) -> bool {
    u.stmts[i]
        .as_ref()
        .is_some_and(|s| !runtime_calls(u, s.toks()).is_empty())
}

/// The tokens in `toks` that call an OpenMP runtime routine, or an OpenACC one that becomes
/// an OpenMP runtime call.
pub fn runtime_calls(u: &Unit, toks: std::ops::Range<usize>) -> Vec<usize> {
    u.syntax
        .calls_in(toks)
        .into_iter()
        .filter(|c| {
            let name = c.name.as_str();
            name.starts_with("omp_")
                || u.tables.runtime.iter().any(|r| {
                    r.name == name
                        && (r.omp.iter().chain(&r.host).chain(&r.omp51)).any(|o| o.contains("omp_"))
                })
        })
        .map(|c| c.tok)
        .collect()
}

/// Whether `c` is a `kernels` construct whose body is `{ for … }`: [`split_bare_loop`] gives
/// the loop a directive of its own inside the construct.
fn split_bare(u: &Unit, c: usize) -> bool {
    u.bare_loop(c).is_some() && u.stmts[c].as_ref().is_some_and(|s| s.for_loop.is_none())
}

/// A `kernels` construct whose body is `{ for … }` and whose bare loop is parallel: OpenMP's
/// combined directive cannot apply to the compound statement, so the construct keeps
/// `target teams` and the loop gets its own directive with the clauses that belong to it.
pub fn split_bare_loop(u: &Unit, c: usize, plan: &mut Plan) {
    let Some(f) = u.bare_loop(c).filter(|_| split_bare(u, c)) else {
        return;
    };
    let Action::Rewrite(rw) = &mut plan.action else {
        return;
    };
    let Some(parts) = rw.name.after("target teams") else {
        return;
    };
    rw.name = Construct::of("target teams");
    let mut clauses = Vec::new();
    rw.append.retain(|a| match a.name {
        "simdlen" | "num_threads" | "private" | "lastprivate" | "collapse" => {
            clauses.push(a.clone());
            false
        }
        // Both levels reduce, as with a combined directive.
        "reduction" => {
            clauses.push(a.clone());
            true
        }
        _ => true,
    });
    let region = f
        .body()
        .end
        .checked_sub(1)
        .map(|end| u.syntax.token_range(f.for_tok()).start..u.syntax.token_range(end).end);
    plan.inserts.push(Insert::BeforeStatement {
        stmt: f.for_tok(),
        directive: OmpDirective::new(parts, clauses),
        region,
    });
}
