//! `acc declare`: at file scope `declare target`; in a block, a data lifetime from the
//! directive to the end of the block, as `target enter data` here and `target exit data`
//! before the block's closing brace and before every `return` in between.

use super::Unit;
use crate::diag::Diagnostic;
use crate::directive::Directive;
use crate::intent::{Action, ClauseOp, Construct, Insert, OmpClause, OmpDirective, Plan, Rewrite};
use crate::rules::id;
use crate::scan::Form;

/// The variable of a list item: `a` for `a[0:n]`; a Fortran common block `/c/` whole.
fn base(item: &str) -> &str {
    if let Some(end) = item.strip_prefix('/').and_then(|r| r.find('/')) {
        return &item[..end + 2];
    }
    let end = item
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(item.len());
    &item[..end]
}

pub fn plan(u: &Unit, i: usize, d: &Directive) -> Plan {
    let at = u.at(i);
    let mut plan = Plan::new(Action::Unchanged);
    let Some(last) = u.sites[i].token() else {
        plan.diags.push(Diagnostic::new(
            at,
            id::NOT_TRANSLATED,
            "'acc declare' inside a macro is not translated; it is left unchanged",
        ));
        return plan;
    };
    match u.syntax.block_end(last) {
        None => file_scope(d, &mut plan),
        Some(close) => match block_externs(u, d, last) {
            Externs::None => block_scope(u, i, d, close, &mut plan),
            Externs::All(decls) => extern_scope(u, i, d, last, &decls, &mut plan),
            Externs::Mixed(name) => plan.diags.push(Diagnostic::new(at, id::DECLARE_SCOPE, format!("'{name}' is a block-scope extern, whose device copy lives as long as the program, but other variables of this 'declare' live in the block: split the directive; it is left unchanged"))),
        },
    }
    plan
}

/// Whether the variables of a block-scope `declare` are block-scope `extern` declarations.
enum Externs {
    None,
    /// All of them, with the byte range of each declaration statement.
    All(Vec<std::ops::Range<usize>>),
    Mixed(String),
}

fn block_externs(u: &Unit, d: &Directive, last: usize) -> Externs {
    let mut decls: Vec<std::ops::Range<usize>> = Vec::new();
    let mut local = None;
    for c in &d.clauses {
        for x in c.items() {
            let name = base(&x.text);
            match u.syntax.extern_declaration(name, last) {
                Some(r) => {
                    if !decls.contains(&r) {
                        decls.push(r);
                    }
                }
                None => local = Some(name.to_string()),
            }
        }
    }
    match (decls.is_empty(), local) {
        (true, _) => Externs::None,
        (false, None) => Externs::All(decls),
        (false, Some(_)) => Externs::Mixed(
            d.clauses
                .iter()
                .flat_map(|c| c.items())
                .map(|x| base(&x.text).to_string())
                .find(|n| u.syntax.extern_declaration(n, last).is_some())
                .unwrap_or_default(),
        ),
    }
}

/// `declare` on block-scope `extern` variables: OpenACC gives them a device copy for the whole
/// program, as at file scope. OpenMP's `declare target` may only appear at file scope (Clang
/// rejects it in a block), so it goes before the function, after a copy of the `extern`
/// declarations; the directive in the block is removed.
fn extern_scope(
    u: &Unit,
    i: usize,
    d: &Directive,
    last: usize,
    decls: &[std::ops::Range<usize>],
    plan: &mut Plan,
) {
    let at = u.at(i);
    let mut fs = Plan::new(Action::Unchanged);
    file_scope(d, &mut fs);
    let Action::Rewrite(rw) = &fs.action else {
        plan.diags = fs.diags;
        return;
    };
    let Some(start) = u.syntax.function_start(last) else {
        plan.diags.push(Diagnostic::new(at, id::DECLARE_SCOPE, "'declare' on a block-scope extern gives it a device copy for the whole program, which OpenMP declares at file scope, but the enclosing function is not at file scope; move the directive to file scope; it is left unchanged"));
        return;
    };
    let clauses: Vec<OmpClause> = d
        .clauses
        .iter()
        .zip(&rw.ops)
        .filter_map(|(_, op)| match op {
            ClauseOp::Replace(t) => Some(t.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    plan.inserts.push(Insert::BeforeFunction {
        at: start,
        copies: decls.to_vec(),
        directive: OmpDirective::new(rw.name.clone(), clauses),
    });
    plan.action = Action::Remove;
    let names: Vec<String> = d
        .clauses
        .iter()
        .flat_map(|c| c.items())
        .map(|x| format!("'{}'", base(&x.text)))
        .collect();
    plan.diags.push(Diagnostic::new(at, id::DECLARE_EXTERN, format!("{} {} declared 'extern' in this block: 'declare' gives {} a device copy for the whole program, as at file scope, so 'declare target' goes before the function (OpenMP allows it only at file scope)", names.join(", "), if names.len() == 1 { "is" } else { "are" }, if names.len() == 1 { "it" } else { "them" })));
}

fn file_scope(d: &Directive, plan: &mut Plan) {
    let mut ops = Vec::new();
    for c in &d.clauses {
        let names: Vec<&str> = c.items().map(|x| base(&x.text)).collect();
        ops.push(match c.name.as_str() {
            // The device copy starts from the variable's static initial value, as `copyin` asks.
            "create" | "copyin" | "device_resident" => ClauseOp::to(OmpClause::new("to", names.join(", "))),
            "link" => ClauseOp::to(OmpClause::new("link", names.join(", "))),
            _ => {
                plan.diags.push(Diagnostic::new(c.span().start, id::DECLARE_SCOPE, format!("'{}' is not allowed in a file-scope 'declare'; the directive is left unchanged", c.spelled())));
                return;
            }
        });
    }
    plan.action = Action::Rewrite(Rewrite {
        name: Construct::of("declare target"),
        ops,
        append: vec![],
        drop_arg: false,
    });
}

fn block_scope(u: &Unit, i: usize, d: &Directive, close: usize, plan: &mut Plan) {
    let site = &u.sites[i];
    if site.form != Form::Pragma {
        plan.diags.push(Diagnostic::new(
            site.span().start,
            id::NOT_TRANSLATED,
            "a block-scope 'declare' written with _Pragma is not translated; it is left unchanged",
        ));
        return;
    }
    let mut ops = Vec::new();
    let mut enter = 0;
    let mut exit: Vec<OmpClause> = Vec::new();
    for c in &d.clauses {
        let items = c
            .items()
            .map(|x| x.text.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let (entry, leave) = match c.name.as_str() {
            "copy" => ("to", "from"),
            "copyin" => ("to", "release"),
            "copyout" => ("alloc", "from"),
            "create" | "device_resident" | "present" => ("alloc", "release"),
            "deviceptr" => {
                plan.diags.push(Diagnostic::new(c.span().start, id::CLAUSE_IGNORED, "'deviceptr' in 'declare' is dropped; list the pointer in 'deviceptr' on the compute constructs that use it"));
                ops.push(ClauseOp::Drop);
                continue;
            }
            _ => {
                plan.diags.push(Diagnostic::new(c.span().start, id::DECLARE_SCOPE, format!("'{}' is not allowed in a block-scope 'declare'; the directive is left unchanged", c.spelled())));
                return;
            }
        };
        enter += 1;
        ops.push(ClauseOp::to(OmpClause::new(
            "map",
            format!("{entry}: {items}"),
        )));
        exit.push(OmpClause::new("map", format!("{leave}: {items}")));
    }
    if enter == 0 {
        plan.action = Action::Remove;
        return;
    }
    // Every `return` between here and the end of the block leaves the data lifetime.
    let last = site.token().unwrap_or(0);
    let exits = match u.syntax.scope_exits(last, close) {
        Ok(e) => e,
        Err(at) => {
            plan.diags.push(Diagnostic::new(
                at,
                id::DECLARE_RETURN,
                "a 'return' that is not a statement on its own line leaves the 'declare' data lifetime; put it in braces on its own line; the directive is left unchanged",
            ));
            return;
        }
    };
    plan.inserts.push(Insert::AtExits {
        returns: exits.returns,
        end: exits.end,
        directive: OmpDirective::new(Construct::of("target exit data"), exit),
    });
    plan.action = Action::Rewrite(Rewrite {
        name: Construct::of("target enter data"),
        ops,
        append: vec![],
        drop_arg: false,
    });
}
