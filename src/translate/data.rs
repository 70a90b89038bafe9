//! The directives other than compute constructs and loops: data directives (`data`, `enter
//! data`, `exit data`, `update`, `host_data`), `wait`, `atomic`, `init`, `shutdown`, `set`,
//! `cache` and `routine` (`declare` in `declare.rs`); the data clauses are in `compute.rs`.

use super::compute::{DataCtx, completed_list, data_clause, queue_diags};
use super::queues::AsyncWait;
use super::{Options, Unit};
use crate::attachments::Detach;
use crate::diag::Diagnostic;
use crate::directive::{Dialect, Directive};
use crate::intent::{
    Action, CallStmt, Calls, ClauseOp, Construct, Decl, Insert, OmpClause, OmpDirective, Plan,
    Rewrite,
};
use crate::lang::Language;
use crate::rules::id;
use crate::semantic::VarKind;
use crate::syntax::OmpRead;

fn rewrite(name: &'static str, ops: Vec<ClauseOp>) -> Action {
    Action::Rewrite(Rewrite {
        name: Construct::of(name),
        ops,
        append: Vec::new(),
        drop_arg: false,
    })
}

/// Whether `name` in a `use_device` clause at site `i` is an array (else a pointer): the
/// semantic layer's type when it has one, else the declaration's spelling.
fn is_array(u: &Unit, i: usize, name: &str) -> bool {
    match u
        .site_facts(i)
        .and_then(|f| f.type_of(name))
        .map(|t| &t.kind)
    {
        Some(VarKind::Array { .. }) => true,
        Some(VarKind::Pointer) => false,
        _ => u.syntax.declared_as_array(name, u.at(i)),
    }
}

/// `host_data use_device(…) if_present`: an item whose data is not present keeps its host
/// address. OpenMP 5.0's `use_device_ptr` gives a null pointer then (Clang), so each item gets
/// its own `target data`, whose `if(omp_target_is_present(…))` leaves it on the host when
/// absent (with the construct's own `if` too); the constructs nest, the last is this
/// directive, the others go on lines before it.
fn host_data_if_present(u: &Unit, i: usize, d: &Directive) -> Plan {
    let mut plan = Plan::new(Action::Unchanged);
    let cond = d.find("if").and_then(|c| c.arg_text());
    let items: Vec<&str> = d
        .all("use_device")
        .flat_map(|c| c.items())
        .map(|x| x.text.as_str())
        .collect();
    let l = u.lang;
    let one = |n: &str| {
        let array = is_array(u, i, n);
        let clause = if array {
            "use_device_addr"
        } else {
            "use_device_ptr"
        };
        let present = l.int_condition(&format!(
            "omp_target_is_present({}, omp_get_default_device())",
            l.presence_address(n, !array)
        ));
        let test = match &cond {
            Some(c) => l.and(&l.group(c), &present),
            None => present,
        };
        vec![OmpClause::new(clause, n), OmpClause::new("if", test)]
    };
    let Some((last, others)) = items.split_last() else {
        return plan;
    };
    let mut placed = false;
    let ops = d
        .clauses
        .iter()
        .map(|c| match c.name.as_str() {
            "use_device" if !std::mem::replace(&mut placed, true) => ClauseOp::Replace(one(last)),
            _ => ClauseOp::Drop,
        })
        .collect();
    plan.action = rewrite("target data", ops);
    for n in others {
        plan.before
            .push(OmpDirective::new(Construct::of("target data"), one(n)));
    }
    plan.diags.push(Diagnostic::new(u.at(i), id::HOST_DATA_IF_PRESENT, "'if_present' keeps the host address of data that is not present, where OpenMP's 'use_device_ptr' would give a null pointer: each item gets a 'target data' of its own whose 'if(omp_target_is_present(…))' keeps it on the host when its data is absent"));
    plan
}

/// `wait` directive: `taskwait`, `taskwait depend(in: …)`, or with `async(r)` an empty task
/// that orders queue `r` after the waited queues without blocking the host.
fn wait_directive(u: &Unit, i: usize, d: &Directive) -> Plan {
    let at = u.at(i);
    let mut aw = AsyncWait::of(u.lang, d.clauses.iter(), d.arg.as_deref());
    if d.arg.is_none() {
        aw.wait_all = true;
    }
    let mut diags = Vec::new();
    queue_diags(&aw, at, &mut diags);
    if let Some(c) = d.find("if") {
        diags.push(Diagnostic::new(
            c.span().start,
            id::CLAUSE_IGNORED,
            "'if' on 'wait' is dropped: the wait is unconditional, which only orders more",
        ));
    }
    let (name, append) = match aw.async_object() {
        None if aw.wait_all || aw.waits.is_empty() => ("taskwait", vec![]),
        None => ("taskwait", aw.wait_depends()),
        Some(own) => {
            let mut deps = aw.wait_depends();
            deps.push(OmpClause::new("depend", format!("inout: {own}")));
            ("task", deps)
        }
    };
    let mut p = Plan::new(Action::Rewrite(Rewrite {
        name: Construct::of(name),
        ops: vec![ClauseOp::Drop; d.clauses.len()],
        append,
        drop_arg: d.arg.is_some(),
    }));
    if name == "task" {
        p.inserts.push(Insert::EmptyBody);
    }
    p.diags = diags.into();
    p
}

pub fn plan(u: &Unit, i: usize, opts: &Options) -> Plan {
    let d = u.dir(i).expect("standalone plan on a parsed directive");
    let at = u.at(i);
    let mut plan = Plan::new(Action::Unchanged);
    let mut diags = Vec::new();
    let finalize = d.has("finalize");
    let (name, ctx) = match d.name.as_str() {
        "data" => ("target data", DataCtx::Data),
        "enter data" => ("target enter data", DataCtx::Enter),
        "exit data" => ("target exit data", DataCtx::Exit { finalize }),
        "update" => ("target update", DataCtx::Data),
        "host_data" if d.has("if_present") => return host_data_if_present(u, i, d),
        "host_data" => ("target data", DataCtx::Data),
        "wait" => return wait_directive(u, i, d),
        "atomic" => {
            if let Some(c) = d.find("if") {
                plan.diags.push(Diagnostic::new(
                    c.span().start,
                    id::NOT_TRANSLATED,
                    "'if' on 'atomic' has no OpenMP equivalent; the directive is left unchanged",
                ));
                return plan;
            }
            plan.action = rewrite("atomic", vec![ClauseOp::Keep; d.clauses.len()]);
            return plan;
        }
        "init" if is_host_init(d) => return host_init(u, i, d),
        "init" | "shutdown" => {
            // The OpenMP runtime starts on first use and stops at exit.
            plan.action = Action::Remove;
            plan.diags.push(Diagnostic::new(at, id::RUNTIME_LIFECYCLE, format!("'acc {}' is removed: the OpenMP runtime initializes devices on first use and shuts down at exit", d.name)));
            return plan;
        }
        "set" => return set(u, i, d),
        "cache" => {
            plan.action = Action::Remove;
            plan.diags.push(Diagnostic::new(
                at,
                id::CACHE_REMOVED,
                "'cache' is a performance hint with no OpenMP equivalent; it is removed",
            ));
            return plan;
        }
        "routine" => return routine(u, i, d),
        "declare" => return super::declare::plan(u, i, d),
        _ => {
            plan.diags.push(Diagnostic::new(
                at,
                id::NOT_TRANSLATED,
                format!(
                    "'acc {}' is not translated yet; it is left unchanged",
                    d.name
                ),
            ));
            return plan;
        }
    };
    // Without a data clause nothing is moved and nothing waits: the directive does nothing
    // (the same test lets the checks accept it).
    if crate::directive::no_op_data(&d.name, &d.clauses, Dialect::of_language(u.lang.name())) {
        plan.action = Action::Remove;
        return plan;
    }
    let aw = AsyncWait::of(u.lang, d.clauses.iter(), None);
    queue_diags(&aw, at, &mut diags);
    let structured = matches!(d.name.as_str(), "data" | "host_data");
    let mut waits_done = false;
    let mut ops = Vec::new();
    let mut maps = 0;
    for c in &d.clauses {
        let op = match c.name.as_str() {
            // `target data` has no `nowait` or `depend`: handled below.
            "async" | "wait" if structured => ClauseOp::Drop,
            // OpenACC makes the data present at once and moves it on the queue; a deferred
            // `target enter data nowait` would make it present only when its task runs, after
            // constructs that follow may have looked it up. Mapping at once, after the queue's
            // earlier work (an undeferred task with the queue's dependence), keeps both.
            "async" if d.name == "enter data" => match aw.async_object() {
                Some(o) => {
                    diags.push(Diagnostic::new(c.span().start, id::ASYNC_ENTER_DATA, format!("'enter data … async' maps at once, after the queue's earlier work ('depend(inout: {o})' without 'nowait'): OpenACC makes the data present immediately, and a deferred 'target enter data nowait' would leave it absent for the constructs that follow until its task runs")));
                    ClauseOp::to(OmpClause::new("depend", format!("inout: {o}")))
                }
                None => ClauseOp::Drop,
            },
            "async" => match aw.async_clauses() {
                t if t.is_empty() => ClauseOp::Drop,
                t => ClauseOp::Replace(t),
            },
            "wait" => {
                let deps = aw.wait_depends();
                if std::mem::replace(&mut waits_done, true) || deps.is_empty() {
                    ClauseOp::Drop
                } else {
                    ClauseOp::Replace(deps)
                }
            }
            "if" => ClauseOp::Keep,
            // OpenMP's `target update` skips absent data, as `if_present` asks.
            "finalize" | "if_present" => ClauseOp::Drop,
            "default" => {
                let (rule, what) = match c.items().next().map(|v| v.text.as_str()) {
                    Some("present") => (
                        id::DEFAULT_PRESENT,
                        "data referenced inside is mapped by OpenMP's rules and its presence is not checked",
                    ),
                    _ => (
                        id::DEFAULT_NONE,
                        "its compile-time check has no OpenMP counterpart",
                    ),
                };
                diags.push(Diagnostic::new(
                    c.span().start,
                    rule,
                    format!(
                        "'default({})' on 'data' is dropped: {what}",
                        c.list_text().trim()
                    ),
                ));
                ClauseOp::Drop
            }
            "self" | "host" | "device" => {
                let Some(list) =
                    completed_list(u.lang, c, false, u.site_facts(i), None, &mut diags)
                else {
                    return left(plan, diags);
                };
                let motion = if c.name == "device" { "to" } else { "from" };
                ClauseOp::to(OmpClause::new(motion, list))
            }
            "use_device" => {
                let (arrays, ptrs): (Vec<&str>, Vec<&str>) = c
                    .items()
                    .map(|x| x.text.as_str())
                    .partition(|n| is_array(u, i, n));
                let mut parts = Vec::new();
                // One kind only: the list keeps its spelling.
                let list = |names: &[&str]| match arrays.is_empty() || ptrs.is_empty() {
                    true => c.list_text().to_string(),
                    false => names.join(", "),
                };
                if !ptrs.is_empty() {
                    parts.push(OmpClause::new("use_device_ptr", list(&ptrs)));
                }
                if !arrays.is_empty() {
                    parts.push(OmpClause::new("use_device_addr", list(&arrays)));
                }
                ClauseOp::Replace(parts)
            }
            "copyout" if finalize => {
                // OpenMP has no "copy back and drop every reference": copy with an update
                // first, then delete.
                let items = c.list_text();
                // Same queue and waits as the directive: a queue expression with side effects
                // would be evaluated twice.
                if let Some(q) = aw.runtime.iter().find(|q| u.lang.writes_or_calls(q)) {
                    diags.push(Diagnostic::new(c.span().start, id::RUNTIME_FINALIZE, format!("'copyout' with 'finalize' becomes a 'target update' and a 'target exit data' on the same queue, and the queue '{q}' has side effects that would happen twice; compute the queue into a variable first; the directive is left unchanged")));
                    return left(plan, diags);
                }
                // The update is conditional as the directive is: with a false `if` nothing
                // comes back.
                // The condition is evaluated again after the update: it must not change, by
                // side effects or by reading the data the update copies back.
                let cond = d.find("if").and_then(|c| c.arg_text());
                if let Some(t) = cond.as_deref() {
                    let copied: Vec<&str> = c
                        .items()
                        .filter_map(|x| u.lang.base_name(&x.text))
                        .collect();
                    let reads = u
                        .lang
                        .identifiers(t)
                        .into_iter()
                        .find(|v| copied.iter().any(|b| b.eq_ignore_ascii_case(v)));
                    let why = match reads {
                        Some(v) => Some(format!("reads '{v}', which the update changes before the condition is evaluated again")),
                        None if u.lang.writes_or_calls(t) => Some("may have side effects (a call or an assignment), which would happen twice".to_string()),
                        None => None,
                    };
                    if let Some(why) = why {
                        diags.push(Diagnostic::new(c.span().start, id::RUNTIME_FINALIZE, format!("'copyout' with 'finalize' becomes a 'target update' and a 'target exit data' under the same 'if', and the condition '{t}' {why}; compute it into a variable first; the directive is left unchanged")));
                        return left(plan, diags);
                    }
                }
                let mut update = vec![OmpClause::new("from", items)];
                update.extend(cond.map(|t| OmpClause::new("if", t)));
                update.extend(aw.wait_depends());
                update.extend(aw.async_clauses());
                plan.before
                    .push(OmpDirective::new(Construct::of("target update"), update));
                ClauseOp::to(OmpClause::new("map", format!("delete: {items}")))
            }
            "deviceptr" => {
                diags.push(Diagnostic::new(c.span().start, id::CLAUSE_IGNORED, "'deviceptr' on a data construct is dropped; list the pointer in 'deviceptr' on the compute constructs that use it"));
                ClauseOp::Drop
            }
            "attach" | "detach" => {
                // Mapping the pointer's target as a zero-length section attaches the present
                // pointer (OpenMP 5.0 pointer attachment); releasing it ends that. A detach
                // of what a data clause attached releases nothing (see `crate::attachments`).
                let kind = if c.name == "attach" {
                    "alloc"
                } else {
                    "release"
                };
                if c.name == "detach" {
                    let mut explicit = Vec::new();
                    for x in c.items() {
                        match u.attachments().detach(at, &x.text) {
                            Detach::Explicit => explicit.push(zero_length(u, &x.text)),
                            Detach::Implicit => diags.push(Diagnostic::new(x.span().start, id::DETACH_IMPLICIT, format!("'detach({})' is dropped: no explicit attach of it (acc_attach, 'attach') in this function is left for it to undo, so a data clause attached it, and OpenMP ends that attachment when the target is unmapped and keeps the host pointer when the structure is copied back ('map(release: {}[:0])' would drop the target data's own reference)", x.text, x.text))),
                            Detach::Unknown(line) => {
                                diags.push(Diagnostic::new(x.span().start, id::DETACH_UNPAIRED, format!("no explicit attach of '{}' in this function is left for this 'detach' to undo, and line {line} attaches explicitly in another function: if that attach is the one undone here, OpenMP must release its reference ('map(release: {}[:0])'), if a data clause attached the pointer it must not; the directive is left unchanged", x.text, x.text)));
                                return left(plan, diags);
                            }
                        }
                    }
                    if explicit.is_empty() {
                        ops.push(ClauseOp::Drop);
                        continue;
                    }
                    diags.push(Diagnostic::new(c.span().start, id::ATTACH_DETACH, format!("'{}' becomes 'map(release: {})': mapping the pointer's target as a zero-length section releases the attachment of the present pointer", c.spelled(), explicit.join(", "))));
                    maps += 1;
                    ops.push(ClauseOp::to(OmpClause::new(
                        "map",
                        format!("release: {}", explicit.join(", ")),
                    )));
                    continue;
                }
                let items: Vec<String> = c.items().map(|x| zero_length(u, &x.text)).collect();
                diags.push(Diagnostic::new(
                    c.span().start,
                    id::ATTACH_DETACH,
                    format!("'{}' becomes 'map({kind}: {})': mapping the pointer's target as a zero-length section {} the present pointer", c.spelled(), items.join(", "), if c.name == "attach" { "attaches" } else { "releases the attachment of" }),
                ));
                ClauseOp::to(OmpClause::new(
                    "map",
                    format!("{kind}: {}", items.join(", ")),
                ))
            }
            _ => match data_clause(
                u.lang,
                c,
                ctx,
                opts,
                u.site_facts(i),
                Some(u.src),
                &mut diags,
            ) {
                Some(op) => op,
                None => return left(plan, diags),
            },
        };
        if matches!(&op, ClauseOp::Replace(t) if t.first().is_some_and(|c| matches!(c.name, "map" | "from" | "to" | "use_device_ptr" | "use_device_addr")))
        {
            maps += 1;
        }
        ops.push(op);
    }
    if structured && aw.any() && maps > 0 {
        data_waits(u, i, &aw, &mut plan, &mut diags);
    }
    let own = structured && aw.async_object().is_some();
    if (d.name == "data" || own) && maps > 0 && !data_end_wait(u, i, &aw, &mut plan, &mut diags) {
        return left(plan, diags);
    }
    // An OpenMP data directive needs at least one map; without one it does nothing but wait
    // for the queues its `wait` names.
    plan.action = if maps == 0 {
        if d.name == "data" {
            let waits = if aw.wait_all {
                Some(Vec::new())
            } else if !aw.waits.is_empty() {
                Some(vec![OmpClause::new(
                    "depend",
                    format!("in: {}", aw.waits.join(", ")),
                )])
            } else {
                None
            };
            let waits = waits.map(|c| OmpDirective::new(Construct::of("taskwait"), c));
            let kept = match &waits {
                Some(w) => format!(
                    ": '{}' before its statement keeps its 'wait'",
                    w.text(u.lang.worksharing())
                ),
                None => String::new(),
            };
            diags.push(Diagnostic::new(
                at,
                id::DATA_WITHOUT_MAP,
                format!("'acc data' maps nothing (no data clause), so it has no OpenMP counterpart and is removed{kept}"),
            ));
            plan.before.extend(waits);
        }
        Action::Remove
    } else {
        rewrite(name, ops)
    };
    plan.diags.append(&mut diags);
    plan
}

/// The directive stays as written, with `diags` saying why: what the clauses before the
/// refused one planned (a `target update` before it, waits around it) is dropped.
fn left(mut plan: Plan, diags: Vec<Diagnostic>) -> Plan {
    plan.unchanged();
    plan.diags = diags.into();
    plan
}

/// `data … async(q) wait(…)`: `target data` has no `nowait`, so the region's data moves
/// synchronously, after waiting for the queues (a `taskwait` before the directive) and, with
/// `async(q)`, for the work of queue `q` inside the region before its data is copied back
/// (see `data_end_wait`).
fn data_waits(u: &Unit, i: usize, aw: &AsyncWait, plan: &mut Plan, diags: &mut Vec<Diagnostic>) {
    let at = u.at(i);
    let own = aw.async_object();
    let mut entry: Vec<String> = aw.waits.clone();
    if let Some(o) = &own
        && !entry.contains(o)
    {
        entry.push(o.clone());
    }
    let clauses = if aw.wait_all {
        Vec::new()
    } else {
        vec![OmpClause::new(
            "depend",
            format!("in: {}", entry.join(", ")),
        )]
    };
    plan.before
        .push(OmpDirective::new(Construct::of("taskwait"), clauses));
    let first = u.sites[i]
        .token()
        .map(|last| u.sites[i].first_token().unwrap_or(last));
    if first.is_some_and(|f| u.syntax.is_body(f)) {
        // The inserted line must not take the directive's place: open a block.
        plan.scope.decls.push(Decl::Group);
    }
    diags.push(Diagnostic::new(at, id::ASYNC_DATA, "'target data' has no 'nowait': the region's data moves synchronously, after a 'taskwait' for its queues (and, with 'async', for that queue's work inside the region before the data is copied back)"));
}

/// The end of a structured data region copies its data back and unmaps it: first, wait for
/// the asynchronous work inside that may still use it (and, with `async(q)`, for queue `q`).
/// False (left unchanged) when no line can be added at the body's end.
fn data_end_wait(
    u: &Unit,
    i: usize,
    aw: &AsyncWait,
    plan: &mut Plan,
    diags: &mut Vec<Diagnostic>,
) -> bool {
    let at = u.at(i);
    // Under a conditional, the body read may not be the one compiled (`#if 0` code before
    // it): in a file with asynchronous work, no guess about what is inside.
    if conditional_in_body(u, i) && super::queues::has_async(u) {
        diags.push(Diagnostic::new(at, id::ASYNC_DATA, "a preprocessor conditional ('#if', '#else', …) lies between this 'data' directive and the end of its body, so whether asynchronous work inside needs a wait before the data is copied back cannot be told for every branch; put the conditional inside the braces of the body; the directive is left unchanged"));
        return false;
    }
    let inside = queues_inside(u, i);
    let clauses = match (&inside, aw.async_object()) {
        (None, _) => Vec::new(),
        (Some(v), own) => {
            let mut objs = v.clone();
            if let Some(o) = own
                && !objs.contains(&o)
            {
                objs.push(o);
            }
            if objs.is_empty() {
                return true;
            }
            vec![OmpClause::new("depend", format!("in: {}", objs.join(", ")))]
        }
    };
    let wait = OmpDirective::new(Construct::of("taskwait"), clauses);
    if u.stmts[i].is_none() {
        diags.push(Diagnostic::new(at, id::ASYNC_DATA, "the body of this 'data' construct is not a statement acc2omp can find, so the wait for its asynchronous work before the data is copied back cannot be added; the directive is left unchanged"));
        return false;
    }
    let shown = wait.text(u.lang.worksharing());
    plan.inserts.push(Insert::AtBodyEnd(wait));
    let wait = shown;
    if inside.as_ref().is_none_or(|v| !v.is_empty()) {
        diags.push(Diagnostic::new(at, id::ASYNC_IN_DATA, format!("asynchronous work inside this data region may still use its data when the region ends: '{wait}' before the end of the region waits for it, so that the data is copied back after it")));
    }
    true
}

/// Whether a conditional line stands between the directive at site `i` and the end of where
/// its wait goes: before a compound body's `{`, anywhere in another body (braces added
/// around it would fall in different branches, or the wait in one branch only).
fn conditional_in_body(u: &Unit, i: usize) -> bool {
    let (Some(stmt), Some(last)) = (&u.stmts[i], u.sites[i].token()) else {
        return false;
    };
    let end = if u.syntax.is_block(&stmt.toks()) {
        stmt.toks().start
    } else {
        stmt.toks().end
    };
    u.syntax.conditional_in(last + 1..end)
}

/// The queues that the work inside the structured data region at site `i` goes to: their
/// dependence objects, or None for "every queue" (a queue known only at run time, a runtime
/// routine with a queue argument). Empty when nothing inside is asynchronous.
fn queues_inside(u: &Unit, i: usize) -> Option<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    // Work translated already (a run on its own output, where the data directive was left
    // unchanged, decides as the first did).
    let translated = translated_inside(u, i);
    for (_, _, t) in &translated {
        match t {
            Translated::Async(None) => return None,
            Translated::Async(Some(o)) => {
                if !out.contains(o) {
                    out.push(o.clone());
                }
            }
            Translated::Wait(_) => {}
        }
    }
    // Only `async` clauses send work to a queue (the sites that have one, not the whole
    // nest: a nest of 20,000 data constructs).
    let asyncs = u.nested_with_clause(i, "async");
    for &k in &asyncs {
        let Some(d) = u.dir(k) else { continue };
        // Data constructs move their data synchronously (`target data` has no `nowait`).
        if matches!(d.name.as_str(), "data" | "host_data") {
            continue;
        }
        let aw = AsyncWait::of(u.lang, d.clauses.iter(), None);
        match &aw.async_queue {
            Some(q) if q.is_runtime() => return None,
            Some(q) => {
                if let Some(o) = q.object()
                    && !out.contains(&o)
                {
                    out.push(o);
                }
            }
            None => {}
        }
    }
    // A `wait` directive after the last asynchronous work, directly in the body (not under
    // an `if` or in a loop), already waits for it.
    let stmt = u.stmts[i].as_ref()?;
    let top_level = |t: usize| u.syntax.directly_in(&stmt.toks(), t);
    let last_async = asyncs
        .iter()
        .filter(|&&k| u.dir(k).is_some_and(|d| d.has("async")))
        .map(|&k| u.at(k))
        .chain(
            translated
                .iter()
                .filter(|t| matches!(t.2, Translated::Async(_)))
                .map(|t| t.1),
        )
        .max();
    let waited = last_async.is_some_and(|l| {
        u.nested_named(i, "wait").into_iter().any(|k| {
            u.dir(k).is_some_and(|d| {
                let aw = AsyncWait::of(u.lang, d.clauses.iter(), d.arg.as_deref());
                d.name == "wait"
                    && u.at(k) > l
                    && aw.async_queue.is_none()
                    && u.sites[k].token().is_some_and(top_level)
                    && (d.arg.is_none() || out.iter().all(|o| aw.waits.contains(o)))
            })
        })
    }) || translated.iter().any(|(t, at, w)| {
        let Translated::Wait(objs) = w else {
            return false;
        };
        top_level(*t)
            && last_async.is_some_and(|l| *at > l)
            && objs
                .as_ref()
                .is_none_or(|objs| out.iter().all(|o| objs.contains(o)))
    });
    if waited {
        out.clear();
    }
    if u.calls_async_routine(stmt.toks()) {
        return None;
    }
    Some(out)
}

/// A translated OpenMP directive: what it does with asynchronous work.
#[derive(Debug, PartialEq, Eq)]
enum Translated {
    /// Deferred work (a `target` construct with `nowait`, a `task`) on the queue whose
    /// dependence object is given (`depend(inout: acc2omp_queue[…])`); None: a queue known
    /// only at run time, or none named (every queue must be waited for).
    Async(Option<String>),
    /// `taskwait`: for these dependence objects (`depend(in: …)`), or for every queue (None).
    Wait(Option<Vec<String>>),
}

/// What the OpenMP directive `r`, read back from the file, does with asynchronous work, if
/// anything: acc2omp's translations of the `async` and `wait` clauses and directives.
fn translated(l: &dyn Language, r: &OmpRead) -> Option<Translated> {
    let objects = |kind: &str| -> Vec<String> {
        r.depends
            .iter()
            .filter(|d| d.0 == kind)
            .flat_map(|d| {
                d.1.iter()
                    .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
            })
            .collect()
    };
    match r.name.as_str() {
        "taskwait" => {
            let ins = objects("in");
            let all = r.depends.is_empty() || r.depends.iter().any(|d| d.0 == "iterator");
            Some(Translated::Wait((!all).then_some(ins)))
        }
        "target" if r.nowait => Some(async_of(l, objects("inout"))),
        "task" => Some(async_of(l, objects("inout"))),
        _ => None,
    }
}

/// The OpenMP directives between the directive of site `i` and the end of its statement
/// that are deferred work or waits, with their token index and offset: a run on acc2omp's
/// own output decides as the first did when the site itself was left OpenACC.
fn translated_inside(u: &Unit, i: usize) -> Vec<(usize, usize, Translated)> {
    let (Some(last), Some(stmt)) = (u.sites[i].token(), u.stmts[i].as_ref()) else {
        return Vec::new();
    };
    // The tokens that may start an OpenMP directive (indexed: not every token of every
    // region of a nest).
    let count = u.syntax.token_count();
    let starts = u.omp_pragmas(last + 1..stmt.toks().end.min(count));
    u.syntax
        .omp_directives(starts, stmt.toks().end)
        .iter()
        .filter_map(|r| Some((r.tok, r.at, translated(u.lang, r)?)))
        .collect()
}

/// The queue of translated deferred work from its `depend(inout: …)` objects: one of
/// acc2omp's dependence objects whose slot is known before the run (a literal, the default
/// queue), or None.
fn async_of(l: &dyn Language, objects: Vec<String>) -> Translated {
    // The object of a slot, as the language writes an element of the queue array.
    let probe = l.element(super::queues::QUEUES, "\u{0}");
    let (prefix, suffix) = probe.split_once('\u{0}').unwrap_or((&probe, ""));
    let default = l.low_bits(super::queues::DEFAULT_ASYNC, super::queues::SLOTS - 1);
    let known = |o: &String| {
        o.strip_prefix(prefix)
            .and_then(|r| r.strip_suffix(suffix))
            .is_some_and(|index| {
                index.bytes().all(|b| b.is_ascii_digit()) && !index.is_empty() || index == default
            })
    };
    match objects.as_slice() {
        [o] if known(o) => Translated::Async(Some(o.clone())),
        _ => Translated::Async(None),
    }
}

fn routine(u: &Unit, i: usize, d: &Directive) -> Plan {
    let at = u.at(i);
    let mut plan = Plan::new(Action::Unchanged);
    if let Some(b) = d.find("bind") {
        plan.diags.push(Diagnostic::new(b.span().start, id::ROUTINE_BIND, "'bind' has no OpenMP 5.0 equivalent (use 'declare variant'); the directive is left unchanged"));
        return plan;
    }
    let mut ops = Vec::new();
    for c in &d.clauses {
        ops.push(match c.name.as_str() {
            "gang" | "worker" | "vector" => {
                plan.diags.push(Diagnostic::new(c.span().start, id::ROUTINE_LEVEL, format!("'declare target' has no parallelism level: the '{}' loops inside keep their own mapping", c.name)));
                ClauseOp::Drop
            }
            "nohost" => {
                plan.diags.push(Diagnostic::new(c.span().start, id::CLAUSE_IGNORED, "'nohost' is dropped: the function is also compiled for the host"));
                ClauseOp::Drop
            }
            _ => ClauseOp::Drop,
        });
    }
    if d.arg.is_some() {
        plan.action = rewrite("declare target", ops);
        return plan;
    }
    if u.stmts[i].is_none() {
        plan.diags.push(Diagnostic::new(
            at,
            id::NOT_TRANSLATED,
            "no function declaration follows 'acc routine'; the directive is left unchanged",
        ));
        return plan;
    }
    plan.action = rewrite("declare target", ops);
    plan.end_after_stmt = Some(Construct::of("declare target"));
    plan
}

/// `acc set`: the statements of the runtime routines it stands for (`acc_set_device_type`,
/// `acc_set_device_num`, `acc_set_default_async`), on the device-type model of the runtime
/// translation (the host is the initial device, any other device is "not host"), under
/// `if (cond)` with an `if` clause.
fn set(u: &Unit, i: usize, d: &Directive) -> Plan {
    let at = u.at(i);
    let mut plan = Plan::new(Action::Remove);
    if u.stmts[i].is_none() && u.sites[i].token().is_none() {
        plan.unchanged();
        plan.diags.push(Diagnostic::new(
            at,
            id::NOT_TRANSLATED,
            "'acc set' inside a macro is not translated; it is left unchanged",
        ));
        return plan;
    }
    let arg = |name: &str| {
        d.find(name)
            .and_then(|c| c.arg_text())
            .map(|a| a.trim().to_string())
    };
    let num = arg("device_num");
    // One device type is a keyword, canonical (lower case) in the directive; a list is any
    // device of theirs.
    let device_type = d.find("device_type").map(|c| match &c.args {
        Some(a) if a.items.len() == 1 => a.items[0].text.to_string(),
        _ => c.arg_text().unwrap_or_default().trim().to_string(),
    });
    let call = |routine: &'static str, args: Vec<String>| CallStmt::Call { routine, args };
    let mut stmts = Vec::new();
    match device_type.as_deref() {
        Some("host") => stmts.push(call(
            "omp_set_default_device",
            vec!["omp_get_initial_device()".to_string()],
        )),
        Some(t) => {
            let ty = if t == "default" {
                "acc2omp_device_default"
            } else {
                if t != "not_host"
                    && let Some(c) = d.find("device_type")
                {
                    plan.diags.push(Diagnostic::new(c.span().start, id::RUNTIME_DEVICE, format!("device type '{t}' is any non-host device: OpenMP numbers devices and cannot tell vendors apart")));
                }
                "acc2omp_device_not_host"
            };
            stmts.push(match &num {
                Some(n) if ty == "acc2omp_device_not_host" => {
                    call("omp_set_default_device", vec![n.clone()])
                }
                Some(n) => call("acc2omp_set_device_num", vec![n.clone(), ty.to_string()]),
                None => call("acc2omp_set_device_type", vec![ty.to_string()]),
            });
        }
        None => {
            if let Some(n) = &num {
                stmts.push(call(
                    "acc2omp_set_device_num",
                    vec![n.clone(), "acc2omp_device_current".to_string()],
                ));
            }
        }
    }
    if let Some(q) = arg("default_async") {
        stmts.push(CallStmt::Assign {
            var: super::queues::DEFAULT_ASYNC,
            value: q,
        });
    }
    if stmts.is_empty() {
        return plan;
    }
    plan.action = Action::Calls(Calls {
        cond: arg("if"),
        stmts,
    });
    plan
}

/// `init device_type(host)`: initializing the host makes it the current device type (as
/// `acc_init(acc_device_host)` does in GCC).
fn is_host_init(d: &Directive) -> bool {
    d.find("device_type").is_some_and(
        |c| matches!(&c.args, Some(a) if a.items.len() == 1 && a.items[0].text == "host"),
    )
}

/// The plan of `init device_type(host)`: the initial device becomes the default device.
fn host_init(u: &Unit, i: usize, d: &Directive) -> Plan {
    let at = u.at(i);
    let mut plan = Plan::new(Action::Unchanged);
    if u.stmts[i].is_none() && u.sites[i].token().is_none() {
        plan.diags.push(Diagnostic::new(
            at,
            id::NOT_TRANSLATED,
            "'acc init' inside a macro is not translated; it is left unchanged",
        ));
        return plan;
    }
    plan.action = Action::Calls(Calls {
        cond: d
            .find("if")
            .and_then(|c| c.arg_text())
            .map(|a| a.trim().to_string()),
        stmts: vec![CallStmt::Call {
            routine: "omp_set_default_device",
            args: vec!["omp_get_initial_device()".to_string()],
        }],
    });
    plan.diags.push(Diagnostic::new(at, id::RUNTIME_LIFECYCLE, "'acc init device_type(host)' makes the initial device the default device: initializing the host makes it the current device type (as in GCC); the OpenMP runtime initializes devices on first use"));
    plan
}

/// Item `p` as a zero-length section of what it points to (`p[:0]`), or as written where
/// the language has none.
fn zero_length(u: &Unit, p: &str) -> String {
    u.lang.zero_length(p).unwrap_or_else(|| p.to_string())
}
