//! `acc declare`: at file scope `declare target`; in a block, a data lifetime from the
//! directive to the end of the block, as `target enter data` here and `target exit data`
//! before the block's closing brace and before every `return` in between.

use super::Unit;
use crate::diag::Diagnostic;
use crate::directive::Directive;
use crate::intent::{Action, ClauseOp, Construct, Insert, OmpClause, OmpDirective, Plan, Rewrite};
use crate::lex::TokKind;
use crate::rules::id;
use crate::scan::Form;

/// The token index of the `}` closing the block that contains token `at`, or None at file,
/// namespace or `extern "C"` scope.
pub(crate) fn block_end(u: &Unit, at: usize) -> Option<usize> {
    let t = u.structure.toks;
    let (open, close) = u.structure.enclosing_brace(at)?;
    if open > 0 {
        let prev = t[open - 1];
        let block_keyword = matches!(
            prev.text(u.src),
            "else" | "do" | "try" | "const" | "noexcept" | "override" | "final" | "mutable"
        );
        if (prev.kind == TokKind::Ident && !block_keyword) || prev.kind == TokKind::Literal {
            return None;
        }
    }
    close
}

/// The variable of a list item: `a` for `a[0:n]`.
fn base(item: &str) -> &str {
    let end = item
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(item.len());
    &item[..end]
}

pub fn plan(u: &Unit, i: usize, d: &Directive) -> Plan {
    let at = u.at(i);
    let mut plan = Plan::new(Action::Unchanged);
    let Some(last) = u.sites[i].token else {
        plan.diags.push(Diagnostic::new(
            at,
            id::NOT_TRANSLATED,
            "'acc declare' inside a macro is not translated; it is left unchanged",
        ));
        return plan;
    };
    match block_end(u, last) {
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

/// The `extern` declaration statement of `name` in the block around token `last`, before it.
fn extern_decl(u: &Unit, name: &str, last: usize) -> Option<std::ops::Range<usize>> {
    let t = u.structure.toks;
    let text = |k: usize| t[k].text(u.src);
    let mut depth = 0i32;
    let mut end = None;
    for k in (0..last).rev() {
        if t[k].kind == TokKind::PpLine {
            continue;
        }
        match text(k) {
            "}" => depth += 1,
            "{" if depth == 0 => return None,
            "{" => depth -= 1,
            ";" if depth == 0 => end = Some(k),
            _ => {}
        }
        if depth != 0 || text(k) != name {
            continue;
        }
        // The statement holding `name`: back to the previous `;`, `{` or `}`.
        let mut s = k;
        while s > 0 && !matches!(text(s - 1), ";" | "{" | "}") && t[s - 1].kind != TokKind::PpLine {
            s -= 1;
        }
        let e = end?;
        if (s..k).any(|j| text(j) == "extern") {
            return Some(t[s].start..t[e].end);
        }
        return None;
    }
    None
}

fn block_externs(u: &Unit, d: &Directive, last: usize) -> Externs {
    let mut decls: Vec<std::ops::Range<usize>> = Vec::new();
    let mut local = None;
    for c in &d.clauses {
        for x in c.items() {
            let name = base(&x.text);
            match extern_decl(u, name, last) {
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
                .find(|n| extern_decl(u, n, last).is_some())
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
    let Some(start) = function_start(u, last) else {
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

/// Start of the line where the file-scope function around token `last` begins (its return
/// type), or None when that function is nested in a class or namespace.
fn function_start(u: &Unit, last: usize) -> Option<usize> {
    let t = u.structure.toks;
    let text = |k: usize| t[k].text(u.src);
    let mut open = None;
    let mut at = last;
    while let Some((o, _)) = u.structure.enclosing_brace(at) {
        open = Some(o);
        at = o;
    }
    // `open` is now the outermost `{` before `last` still open there: the function body.
    let open = open?;
    // A function body follows the parameter list (and maybe `const`, `noexcept`, ...).
    let mut p = open.checked_sub(1)?;
    while matches!(text(p), "const" | "noexcept" | "override" | "final") {
        p = p.checked_sub(1)?;
    }
    if text(p) != ")" {
        return None;
    }
    let mut k = open;
    while k > 0 {
        let p = k - 1;
        if t[p].kind == TokKind::PpLine || matches!(text(p), ";" | "}") {
            break;
        }
        if text(p) == "{" {
            return None;
        }
        k = p;
    }
    let s = t.get(k)?.start;
    Some(u.src[..s].rfind('\n').map_or(0, |p| p + 1))
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
                plan.diags.push(Diagnostic::new(c.span.start, id::DECLARE_SCOPE, format!("'{}' is not allowed in a file-scope 'declare'; the directive is left unchanged", c.spelled)));
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
            site.span.start,
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
                plan.diags.push(Diagnostic::new(c.span.start, id::CLAUSE_IGNORED, "'deviceptr' in 'declare' is dropped; list the pointer in 'deviceptr' on the compute constructs that use it"));
                ops.push(ClauseOp::Drop);
                continue;
            }
            _ => {
                plan.diags.push(Diagnostic::new(c.span.start, id::DECLARE_SCOPE, format!("'{}' is not allowed in a block-scope 'declare'; the directive is left unchanged", c.spelled)));
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
    let toks = u.structure.toks;
    let src = u.src;
    let mut returns = Vec::new();
    // Every `return` between here and the end of the block leaves the data lifetime.
    let last = site.token.unwrap_or(0);
    for k in last + 1..close {
        if toks[k].kind != TokKind::Ident || toks[k].text(src) != "return" {
            continue;
        }
        let line_start = src[..toks[k].start].rfind('\n').map_or(0, |p| p + 1);
        let first_on_line = src[line_start..toks[k].start].trim().is_empty();
        let after_statement =
            matches!(toks[k - 1].text(src), ";" | "{" | "}") || toks[k - 1].kind == TokKind::PpLine;
        if !first_on_line || !after_statement {
            plan.diags.push(Diagnostic::new(
                toks[k].start,
                id::DECLARE_RETURN,
                "a 'return' that is not a statement on its own line leaves the 'declare' data lifetime; put it in braces on its own line; the directive is left unchanged",
            ));
            return;
        }
        returns.push(toks[k].start);
    }
    // A block that ends with `return` needs nothing more at its closing brace.
    let ends_with_return = (last + 1..close)
        .rev()
        .find(|&k| toks[k].text(src) == "return")
        .is_some_and(|r| {
            let mut depth = 0i32;
            let mut k = r;
            while k < close {
                match toks[k].text(src) {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" => depth -= 1,
                    ";" if depth == 0 => break,
                    _ => {}
                }
                k += 1;
            }
            k + 1 == close
        });
    plan.inserts.push(Insert::AtExits {
        returns,
        end: (!ends_with_return).then(|| toks[close].start),
        directive: OmpDirective::new(Construct::of("target exit data"), exit),
    });
    plan.action = Action::Rewrite(Rewrite {
        name: Construct::of("target enter data"),
        ops,
        append: vec![],
        drop_arg: false,
    });
}
