//! Data, executable and declarative directives.

use super::clauses::{DataCtx, data_clause, queue_diags};
use super::queues::AsyncWait;
use super::{Action, ClauseOp, Options, Plan, Rewrite, Unit};
use crate::diag::Diagnostic;
use crate::directive::Directive;
use crate::scan::Form;
use crate::semantic::VarKind;
use crate::source::{indentation, line_ending};

fn rewrite(name: &str, ops: Vec<ClauseOp>) -> Action {
    Action::Rewrite(Rewrite {
        name: name.into(),
        ops,
        append: Vec::new(),
        drop_arg: false,
    })
}

/// Whether `name` is declared as an array before offset `before` (`T name[...]`).
fn declared_as_array(u: &Unit, name: &str, before: usize) -> bool {
    let t = u.structure.toks;
    let src = u.src;
    let mut found = None;
    for k in 1..t.len().saturating_sub(1) {
        if t[k].start >= before {
            break;
        }
        if t[k].text(src) == name {
            let prev = t[k - 1].text(src);
            let next = t[k + 1].text(src);
            let decl_prev = t[k - 1].kind == crate::lex::TokKind::Ident
                && !matches!(prev, "return" | "sizeof" | "case" | "goto")
                || prev == "*"
                || prev == ",";
            if decl_prev && matches!(next, "[" | ";" | "=" | "," | ")") {
                found = Some(next == "[");
            }
        }
    }
    found.unwrap_or(false)
}

/// Whether an expression may have side effects (an assignment, an increment or a call).
fn side_effects(e: &str) -> bool {
    let toks = crate::lex::lex(e);
    toks.iter().enumerate().any(|(k, t)| {
        let s = t.text(e);
        matches!(s, "++" | "--")
            || (s.ends_with('=') && !matches!(s, "==" | "!=" | "<=" | ">="))
            || (s == "(" && k > 0 && toks[k - 1].kind == crate::lex::TokKind::Ident)
    })
}

/// Whether the directive at site `i` is the statement of an `if`/`else`/loop without braces,
/// a label, or another directive: a line inserted before it would take its place.
fn is_body(u: &Unit, i: usize) -> bool {
    let Some(last) = u.sites[i].token else {
        return false;
    };
    let first = u.sites[i].first_token.unwrap_or(last);
    let Some(p) = first.checked_sub(1) else {
        return false;
    };
    let t = &u.structure.toks[p];
    let text = t.text(u.src);
    if t.kind == crate::lex::TokKind::PpLine {
        return text[1..].trim_start().starts_with("pragma");
    }
    matches!(text, ")" | "else" | "do" | ":")
}

/// `wait` directive: `taskwait`, `taskwait depend(in: …)`, or with `async(r)` an empty task
/// that orders queue `r` after the waited queues without blocking the host.
fn wait_directive(u: &Unit, i: usize, d: &Directive) -> Plan {
    let at = u.at(i);
    let mut aw = AsyncWait::of(d.clauses.iter(), d.arg.as_ref());
    if d.arg.is_none() {
        aw.wait_all = true;
    }
    let mut diags = Vec::new();
    queue_diags(&aw, at, &mut diags);
    if let Some(c) = d.find("if") {
        diags.push(Diagnostic::new(
            c.span.start,
            "clause-ignored",
            "'if' on 'wait' is dropped: the wait is unconditional, which only orders more",
        ));
    }
    let (name, append) = match aw.async_object() {
        None if aw.wait_all || aw.waits.is_empty() => ("taskwait", vec![]),
        None => ("taskwait", aw.wait_depends()),
        Some(own) => {
            let mut deps = aw.wait_depends();
            deps.push(format!("depend(inout: {own})"));
            ("task", deps)
        }
    };
    let mut p = Plan::new(Action::Rewrite(Rewrite {
        name: name.into(),
        ops: vec![ClauseOp::Drop; d.clauses.len()],
        append,
        drop_arg: d.arg.is_some(),
    }));
    if name == "task" {
        // The task's empty body.
        let site = &u.sites[i];
        let text = if site.form == Form::Pragma {
            let ls = u.src[..site.span.start].rfind('\n').map_or(0, |k| k + 1);
            format!("{}{}{{}}", line_ending(u.src), indentation(u.src, ls))
        } else {
            " {}".to_string()
        };
        p.inserts.push((site.span.end, text));
    }
    p.diags = diags;
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
        "host_data" => ("target data", DataCtx::Data),
        "wait" => return wait_directive(u, i, d),
        "atomic" => {
            if let Some(c) = d.find("if") {
                plan.diags.push(Diagnostic::new(
                    c.span.start,
                    "not-translated",
                    "'if' on 'atomic' has no OpenMP equivalent; the directive is left unchanged",
                ));
                return plan;
            }
            plan.action = rewrite("atomic", vec![ClauseOp::Keep; d.clauses.len()]);
            return plan;
        }
        "init" | "shutdown" => {
            // The OpenMP runtime starts on first use and stops at exit.
            plan.action = Action::Remove;
            plan.diags.push(Diagnostic::new(at, "runtime-lifecycle", format!("'acc {}' is removed: the OpenMP runtime initializes devices on first use and shuts down at exit", d.name)));
            return plan;
        }
        "set" => return set(u, i, d),
        "cache" => {
            plan.action = Action::Remove;
            plan.diags.push(Diagnostic::new(
                at,
                "cache-removed",
                "'cache' is a performance hint with no OpenMP equivalent; it is removed",
            ));
            return plan;
        }
        "routine" => return routine(u, i, d),
        "declare" => return super::declare::plan(u, i, d),
        _ => {
            plan.diags.push(Diagnostic::new(
                at,
                "not-translated",
                format!(
                    "'acc {}' is not translated yet; it is left unchanged",
                    d.name
                ),
            ));
            return plan;
        }
    };
    let aw = AsyncWait::of(d.clauses.iter(), None);
    queue_diags(&aw, at, &mut diags);
    let structured = matches!(d.name.as_str(), "data" | "host_data");
    let mut waits_done = false;
    let mut ops = Vec::new();
    let mut maps = 0;
    for c in &d.clauses {
        let op = match c.name.as_str() {
            // `target data` has no `nowait` or `depend`: handled below.
            "async" | "wait" if structured => ClauseOp::Drop,
            "async" => match aw.async_clause() {
                Some(t) => ClauseOp::Replace(t),
                None => ClauseOp::Drop,
            },
            "wait" => {
                let deps = aw.wait_depends();
                if std::mem::replace(&mut waits_done, true) || deps.is_empty() {
                    ClauseOp::Drop
                } else {
                    ClauseOp::Replace(deps.join(" "))
                }
            }
            "if" => ClauseOp::Keep,
            // OpenMP's `target update` skips absent data, as `if_present` asks.
            "finalize" | "if_present" => ClauseOp::Drop,
            "default" => {
                let (rule, what) = match c.list_text().trim() {
                    "present" => (
                        "default-present",
                        "data referenced inside is mapped by OpenMP's rules and its presence is not checked",
                    ),
                    _ => (
                        "default-none",
                        "its compile-time check has no OpenMP counterpart",
                    ),
                };
                diags.push(Diagnostic::new(
                    c.span.start,
                    rule,
                    format!(
                        "'default({})' on 'data' is dropped: {what}",
                        c.list_text().trim()
                    ),
                ));
                ClauseOp::Drop
            }
            "self" | "host" => {
                ClauseOp::Replace(format!("from({})", c.arg_text().unwrap_or_default()))
            }
            "device" => ClauseOp::Replace(format!("to({})", c.arg_text().unwrap_or_default())),
            "use_device" => {
                let (arrays, ptrs): (Vec<&str>, Vec<&str>) =
                    c.items().map(|x| x.text.as_str()).partition(|n| {
                        // The semantic layer's type when it has one, else the declaration's
                        // spelling.
                        match u.site_facts(i).and_then(|f| f.type_of(n)).map(|t| &t.kind) {
                            Some(VarKind::Array { .. }) => true,
                            Some(VarKind::Pointer) => false,
                            _ => declared_as_array(u, n, at),
                        }
                    });
                let mut parts = Vec::new();
                // One kind only: the list keeps its spelling.
                let list = |names: &[&str]| match arrays.is_empty() || ptrs.is_empty() {
                    true => c.list_text().to_string(),
                    false => names.join(", "),
                };
                if !ptrs.is_empty() {
                    parts.push(format!("use_device_ptr({})", list(&ptrs)));
                }
                if !arrays.is_empty() {
                    parts.push(format!("use_device_addr({})", list(&arrays)));
                }
                ClauseOp::Replace(parts.join(" "))
            }
            "copyout" if finalize => {
                // OpenMP has no "copy back and drop every reference": copy with an update
                // first, then delete.
                let items = c.arg_text().unwrap_or_default();
                let items = items
                    .split_once(':')
                    .filter(|(m, _)| c.modifier() == Some(m.trim()))
                    .map_or(items.as_str(), |(_, r)| r.trim());
                // Same queue and waits as the directive: a queue expression with side effects
                // would be evaluated twice.
                if let Some(q) = aw.runtime.iter().find(|q| side_effects(q)) {
                    diags.push(Diagnostic::new(c.span.start, "runtime-finalize", format!("'copyout' with 'finalize' becomes a 'target update' and a 'target exit data' on the same queue, and the queue '{q}' has side effects that would happen twice; compute the queue into a variable first; the directive is left unchanged")));
                    plan.diags = diags;
                    return plan;
                }
                let mut update = format!("target update from({items})");
                for t in aw.wait_depends().into_iter().chain(aw.async_clause()) {
                    update.push(' ');
                    update.push_str(&t);
                }
                plan.before.push(update);
                ClauseOp::Replace(format!("map(delete: {items})"))
            }
            "deviceptr" => {
                diags.push(Diagnostic::new(c.span.start, "clause-ignored", "'deviceptr' on a data construct is dropped; list the pointer in 'deviceptr' on the compute constructs that use it"));
                ClauseOp::Drop
            }
            "attach" | "detach" => {
                // Mapping the pointer's target as a zero-length section attaches the present
                // pointer (OpenMP 5.0 pointer attachment); releasing it ends that.
                let kind = if c.name == "attach" {
                    "alloc"
                } else {
                    "release"
                };
                let items: Vec<String> = c.items().map(|x| format!("{}[:0]", x.text)).collect();
                diags.push(Diagnostic::new(
                    c.span.start,
                    "attach-detach",
                    format!("'{}' becomes 'map({kind}: {})': mapping the pointer's target as a zero-length section {} the present pointer", c.spelled, items.join(", "), if c.name == "attach" { "attaches" } else { "releases the attachment of" }),
                ));
                ClauseOp::Replace(format!("map({kind}: {})", items.join(", ")))
            }
            _ => match data_clause(c, ctx, opts, u.site_facts(i), &mut diags) {
                Some(op) => op,
                None => {
                    plan.diags = diags;
                    return plan;
                }
            },
        };
        if matches!(&op, ClauseOp::Replace(t) if t.starts_with("map(") || t.starts_with("from(") || t.starts_with("to(") || t.starts_with("use_device"))
        {
            maps += 1;
        }
        ops.push(op);
    }
    if structured && aw.any() && maps > 0 && !data_waits(u, i, &aw, &mut plan, &mut diags) {
        plan.diags = diags;
        return plan;
    }
    // An OpenMP data directive needs at least one map; without one it does nothing.
    plan.action = if maps == 0 {
        Action::Remove
    } else {
        rewrite(name, ops)
    };
    plan.diags.append(&mut diags);
    plan
}

/// `data … async(q) wait(…)`: `target data` has no `nowait`, so the region's data moves
/// synchronously, after waiting for the queues (a `taskwait` before the directive) and, with
/// `async(q)`, for the work of queue `q` inside the region before its data is copied back (a
/// `taskwait` before the body's closing brace). False (left unchanged) when the body is not a
/// compound statement.
fn data_waits(
    u: &Unit,
    i: usize,
    aw: &AsyncWait,
    plan: &mut Plan,
    diags: &mut Vec<Diagnostic>,
) -> bool {
    let at = u.at(i);
    let own = aw.async_object();
    let mut entry: Vec<String> = aw.waits.clone();
    if let Some(o) = &own
        && !entry.contains(o)
    {
        entry.push(o.clone());
    }
    if own.is_some() {
        let Some(stmt) = &u.stmts[i] else {
            return false;
        };
        let body = &u.src[stmt.bytes.clone()];
        let pragma = u.sites[i].form == Form::Pragma;
        if !(pragma && body.starts_with('{') && body.ends_with('}')) {
            diags.push(Diagnostic::new(at, "async-data", "'async' on a 'data' construct whose body is not a compound statement is not translated ('target data' has no 'nowait'); put braces around the body; the directive is left unchanged"));
            return false;
        }
        let close = stmt.bytes.end - 1;
        let ls = u.src[..close].rfind('\n').map_or(0, |k| k + 1);
        let eol = line_ending(u.src);
        let wait = format!(
            "#pragma omp taskwait depend(in: {})",
            own.clone().unwrap_or_default()
        );
        let text = if u.src[ls..close].trim_matches([' ', '\t']).is_empty() {
            // Indented like the body's last line.
            let prev = u.src[..ls.saturating_sub(1)]
                .rfind('\n')
                .map_or(0, |k| k + 1);
            let ind = indentation(u.src, prev.min(ls));
            (ls, format!("{ind}{wait}{eol}"))
        } else {
            (close, format!("{eol}{wait}{eol}"))
        };
        plan.inserts.push(text);
    }
    plan.before.push(if aw.wait_all {
        "taskwait".to_string()
    } else {
        format!("taskwait depend(in: {})", entry.join(", "))
    });
    if is_body(u, i) {
        // The inserted line must not take the directive's place: open a block.
        plan.decls.push(String::new());
    }
    diags.push(Diagnostic::new(at, "async-data", "'target data' has no 'nowait': the region's data moves synchronously, after a 'taskwait' for its queues (and, with 'async', for that queue's work inside the region before the data is copied back)"));
    true
}

fn routine(u: &Unit, i: usize, d: &Directive) -> Plan {
    let at = u.at(i);
    let mut plan = Plan::new(Action::Unchanged);
    if let Some(b) = d.find("bind") {
        plan.diags.push(Diagnostic::new(b.span.start, "routine-bind", "'bind' has no OpenMP 5.0 equivalent (use 'declare variant'); the directive is left unchanged"));
        return plan;
    }
    let mut ops = Vec::new();
    for c in &d.clauses {
        ops.push(match c.name.as_str() {
            "gang" | "worker" | "vector" => {
                plan.diags.push(Diagnostic::new(c.span.start, "routine-level", format!("'declare target' has no parallelism level: the '{}' loops inside keep their own mapping", c.name)));
                ClauseOp::Drop
            }
            "nohost" => {
                plan.diags.push(Diagnostic::new(c.span.start, "clause-ignored", "'nohost' is dropped: the function is also compiled for the host"));
                ClauseOp::Drop
            }
            _ => ClauseOp::Drop,
        });
    }
    if d.arg.is_some() {
        plan.action = Action::Rewrite(Rewrite {
            name: "declare target".into(),
            ops,
            append: vec![],
            drop_arg: false,
        });
        return plan;
    }
    if u.stmts[i].is_none() {
        plan.diags.push(Diagnostic::new(
            at,
            "not-translated",
            "no function declaration follows 'acc routine'; the directive is left unchanged",
        ));
        return plan;
    }
    plan.action = Action::Rewrite(Rewrite {
        name: "declare target".into(),
        ops,
        append: vec![],
        drop_arg: false,
    });
    plan.after_stmt = Some("end declare target".into());
    plan
}

/// `acc set`: the statements of the runtime routines it stands for (`acc_set_device_type`,
/// `acc_set_device_num`, `acc_set_default_async`), on the device-type model of the runtime
/// translation (the host is the initial device, any other device is "not host"), under
/// `if (cond)` with an `if` clause.
fn set(u: &Unit, i: usize, d: &Directive) -> Plan {
    let at = u.at(i);
    let mut plan = Plan::new(Action::Remove);
    if u.stmts[i].is_none() && u.sites[i].token.is_none() {
        plan.action = Action::Unchanged;
        plan.diags.push(Diagnostic::new(
            at,
            "not-translated",
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
    let mut stmts = Vec::new();
    match arg("device_type").as_deref() {
        Some("host") => stmts.push("omp_set_default_device(omp_get_initial_device());".to_string()),
        Some(t) => {
            let ty = if t == "default" {
                "acc2omp_device_default"
            } else {
                if t != "not_host"
                    && let Some(c) = d.find("device_type")
                {
                    plan.diags.push(Diagnostic::new(c.span.start, "runtime-device", format!("device type '{t}' is any non-host device: OpenMP numbers devices and cannot tell vendors apart")));
                }
                "acc2omp_device_not_host"
            };
            stmts.push(match &num {
                Some(n) if ty == "acc2omp_device_not_host" => {
                    format!("omp_set_default_device({n});")
                }
                Some(n) => format!("acc2omp_set_device_num({n}, {ty});"),
                None => format!("acc2omp_set_device_type({ty});"),
            });
        }
        None => {
            if let Some(n) = &num {
                stmts.push(format!(
                    "acc2omp_set_device_num({n}, acc2omp_device_current);"
                ));
            }
        }
    }
    if let Some(q) = arg("default_async") {
        stmts.push(format!("acc2omp_default_async = {q};"));
    }
    if stmts.is_empty() {
        return plan;
    }
    let mut text = stmts.join(" ");
    if let Some(cond) = arg("if") {
        text = format!("if ({cond}) {{ {text} }}");
    } else if stmts.len() > 1 {
        text = format!("{{ {text} }}");
    }
    plan.action = Action::Statement(text);
    plan
}
