//! Variables of static storage in `routine` functions. OpenACC (2.15.1) requires each global
//! variable a routine function uses to be in a `declare` directive (`create`, `copyin`,
//! `device_resident` or `link`) so that the device has it; GCC rejects the function
//! otherwise, and rejects `declare link` variables there too. Without the `declare`, the
//! OpenMP translation would compile and read or write another copy of the variable, so the
//! routine is left unchanged. Read from syntax in every mode: a variable declared in another
//! file (whose `declare` may be there too) is not checked.

use super::syntactic::Syntax;
use crate::diag::Diagnostic;
use crate::rules::id;
use crate::semantic::base_name;
use crate::unit::Unit;
use std::collections::HashMap;

/// Errors and warnings about the routines of `unit`, and the starts of the routine
/// directives to leave unchanged.
pub(super) fn check(
    unit: &Unit,
    st: &crate::structure::Structure,
    syntax: &Syntax,
) -> (Vec<Diagnostic>, Vec<usize>) {
    let (mut diags, mut rejected) = (Vec::new(), Vec::new());
    let routines: Vec<usize> = (0..unit.sites.len())
        .filter(|&i| {
            unit.dir(i)
                .is_some_and(|d| d.name == "routine" && d.arg.is_none())
        })
        .collect();
    if routines.is_empty() {
        return (diags, rejected);
    }
    // Each name a `declare` lists: its clause and the directive's line.
    let mut declared: HashMap<&str, (&str, usize)> = HashMap::new();
    for i in 0..unit.sites.len() {
        let Some(d) = unit.dir(i).filter(|d| d.name == "declare") else {
            continue;
        };
        for c in &d.clauses {
            for n in c.items().filter_map(|it| base_name(&it.text)) {
                declared.entry(n).or_insert((c.name.as_str(), unit.line(i)));
            }
        }
    }
    // Sites by offset: those in a function's body without reading every site per routine.
    let mut by_offset: Vec<(usize, usize)> =
        (0..unit.sites.len()).map(|k| (unit.at(k), k)).collect();
    by_offset.sort_unstable();
    for i in routines {
        let Some(stmt) = &unit.stmts[i] else { continue };
        // The function's body: the first `{` outside parentheses.
        let mut depth = 0i32;
        let open = stmt.toks().find(|&k| {
            match st.text(k) {
                "(" => depth += 1,
                ")" => depth -= 1,
                "{" if depth == 0 => return true,
                _ => {}
            }
            false
        });
        let Some((open, after)) = open.and_then(|o| Some((o, st.matching(o)?))) else {
            continue;
        };
        // Names in the clauses of directives inside the function (a loop's `private(g)`
        // gives the loop its own copy): not checked.
        let body = st.toks[open].start()..st.toks[after - 1].end();
        let from = by_offset.partition_point(|&(at, _)| at < body.start);
        let to = by_offset.partition_point(|&(at, _)| at < body.end);
        let mut inside: Vec<usize> = by_offset[from..to].iter().map(|&(_, k)| k).collect();
        inside.sort_unstable();
        let clauses: Vec<&str> = inside
            .into_iter()
            .filter_map(|k| unit.dir(k))
            .flat_map(|d| d.clauses.iter().flat_map(|c| c.items()))
            .filter_map(|it| base_name(&it.text))
            .collect();
        for (name, decl, used) in syntax.global_uses(open + 1..after - 1) {
            if clauses.contains(&name) {
                continue;
            }
            let line = unit.line_at(used);
            match declared.get(name) {
                Some(("link", at)) => diags.push(Diagnostic::new(
                    decl,
                    id::ROUTINE_LINK_VARIABLE,
                    format!(
                        "'{name}' is in a 'declare link' (line {at}) and used at line {line} in the function of 'acc routine' (line {}): OpenACC allows it, GCC rejects it ('link' clause used in 'routine' function); it is translated as 'declare target link', which OpenMP allows",
                        unit.line(i)
                    ),
                )),
                Some(_) => {}
                None => reject(
                    (&mut diags, &mut rejected),
                    unit.at(i),
                    Diagnostic::new(
                        decl,
                        id::ROUTINE_GLOBAL_UNDECLARED,
                        format!(
                            "'{name}' is used at line {line} in the function of 'acc routine' (line {}) but no 'declare' directive (create, copyin, device_resident or link) puts it on the device; the routine is left unchanged",
                            unit.line(i)
                        ),
                    ),
                ),
            }
        }
    }
    (diags, rejected)
}

/// `declare` in a block names the block's own variables (OpenACC 2.13: in the same scope as
/// the declaration); one of an enclosing block is an error (GCC: "must be a variable
/// declared in the same scope"), and its translation would map the variable at the wrong
/// block's end. Returns errors and the starts of the directives to leave unchanged.
pub(super) fn declare_scopes(unit: &Unit, syntax: &Syntax) -> (Vec<Diagnostic>, Vec<usize>) {
    let (mut diags, mut rejected) = (Vec::new(), Vec::new());
    for i in 0..unit.sites.len() {
        let (Some(d), Some(tok)) = (
            unit.dir(i).filter(|d| d.name == "declare"),
            unit.sites[i].token(),
        ) else {
            continue;
        };
        for c in &d.clauses {
            for it in c.items() {
                let Some(name) = base_name(&it.text) else {
                    continue;
                };
                let Some(decl) = syntax.declared_outside_block(name, tok) else {
                    continue;
                };
                let at = if unit.sites[i].unescaped.is_some() {
                    unit.at(i)
                } else {
                    it.span().start
                };
                reject(
                    (&mut diags, &mut rejected),
                    unit.at(i),
                    Diagnostic::new(
                        at,
                        id::DECLARE_SCOPE,
                        format!(
                            "'{name}' is declared at line {} in another block than this 'declare': a 'declare' directive must be in the scope that declares its variables; the directive is left unchanged",
                            unit.line_at(decl)
                        ),
                    ),
                );
            }
        }
    }
    (diags, rejected)
}

/// Report `d` and leave the directive starting at `site` unchanged.
fn reject((diags, rejected): (&mut Vec<Diagnostic>, &mut Vec<usize>), site: usize, d: Diagnostic) {
    diags.push(d);
    if !rejected.contains(&site) {
        rejected.push(site);
    }
}
