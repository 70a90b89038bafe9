//! Data, executable and declarative directives.

use super::clauses::{DataCtx, data_clause};
use super::{Action, ClauseOp, Options, Plan, Rewrite, Unit};
use crate::diag::Diagnostic;
use crate::directive::Directive;

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

fn drop_async(
    d: &Directive,
    c: &crate::directive::Clause,
    noted: &mut bool,
    diags: &mut Vec<Diagnostic>,
) -> ClauseOp {
    if !*noted {
        diags.push(Diagnostic::new(
            c.span.start,
            "async-synchronous",
            format!(
                "'{}' is dropped: 'acc {}' runs synchronously, which keeps the results",
                c.spelled, d.name
            ),
        ));
        *noted = true;
    }
    ClauseOp::Drop
}

pub fn plan(u: &Unit, i: usize, opts: &Options) -> Plan {
    let d = u.dir(i).expect("standalone plan on a parsed directive");
    let at = u.at(i);
    let mut plan = Plan::new(Action::Unchanged);
    let mut diags = Vec::new();
    let mut noted = false;
    let finalize = d.has("finalize");
    let (name, ctx) = match d.name.as_str() {
        "data" => ("target data", DataCtx::Data),
        "enter data" => ("target enter data", DataCtx::Enter),
        "exit data" => ("target exit data", DataCtx::Exit { finalize }),
        "update" => ("target update", DataCtx::Data),
        "host_data" => ("target data", DataCtx::Data),
        "wait" => {
            let mut p = Plan::new(Action::Rewrite(Rewrite {
                name: "taskwait".into(),
                ops: vec![ClauseOp::Drop; d.clauses.len()],
                append: vec![],
                drop_arg: d.arg.is_some(),
            }));
            if d.has("if") {
                p.diags.push(Diagnostic::new(
                    at,
                    "clause-ignored",
                    "'if' on 'wait' is dropped: all work already ran synchronously",
                ));
            }
            return p;
        }
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
    let mut ops = Vec::new();
    let mut maps = 0;
    for c in &d.clauses {
        let op = match c.name.as_str() {
            "async" | "wait" => drop_async(d, c, &mut noted, &mut diags),
            "if" => ClauseOp::Keep,
            "finalize" | "if_present" | "default" => ClauseOp::Drop,
            "self" | "host" => {
                ClauseOp::Replace(format!("from({})", c.arg_text().unwrap_or_default()))
            }
            "device" => ClauseOp::Replace(format!("to({})", c.arg_text().unwrap_or_default())),
            "use_device" => {
                let (arrays, ptrs): (Vec<&str>, Vec<&str>) = c
                    .items()
                    .map(|x| x.text.as_str())
                    .partition(|n| declared_as_array(u, n, at));
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
                plan.before.push(format!("target update from({items})"));
                ClauseOp::Replace(format!("map(delete: {items})"))
            }
            "deviceptr" => {
                diags.push(Diagnostic::new(c.span.start, "clause-ignored", "'deviceptr' on a data construct is dropped; list the pointer in 'deviceptr' on the compute constructs that use it"));
                ClauseOp::Drop
            }
            "detach" | "attach" => {
                diags.push(Diagnostic::new(
                    c.span.start,
                    "attach-detach",
                    format!("'{}' is dropped: OpenMP 5.0 cannot attach a pointer that is already present; map its target together with the structure (e.g. 'map(to: s, s.p[0:n])')", c.spelled),
                ));
                ClauseOp::Drop
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
    // An OpenMP data directive needs at least one map; without one it does nothing.
    plan.action = if maps == 0 {
        Action::Remove
    } else {
        rewrite(name, ops)
    };
    plan.diags.append(&mut diags);
    plan
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

/// `acc set`: the device number becomes `omp_set_default_device`; the rest has no effect
/// on results in OpenMP (no device types, all work synchronous).
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
    let mut call = None;
    for c in &d.clauses {
        match c.name.as_str() {
            "device_num" => call = c.arg_text().map(|n| format!("omp_set_default_device({n});")),
            "if" => {
                plan.action = Action::Unchanged;
                plan.diags.push(Diagnostic::new(c.span.start, "not-translated", "'if' on 'acc set' is not translated; the directive is left unchanged"));
                return plan;
            }
            _ => plan.diags.push(Diagnostic::new(c.span.start, "clause-ignored", format!("'{}' on 'acc set' is dropped: OpenMP has no device types and this tool runs async work synchronously", c.spelled))),
        }
    }
    if let Some(call) = call {
        plan.action = Action::Statement(call);
    }
    plan
}
