//! `private` naming the control variable of a loop around the directive
//! (`private-loop-variable`): each iteration gets an uninitialized copy of a variable that
//! holds the enclosing loop's iteration, a bug in the input that a faithful translation
//! keeps (CloverLeaf's `!$acc loop private(j,k)` inside `do k`). Reported only when the
//! loop reads the variable before assigning it; the translation is not changed.
//! `firstprivate` (on a combined construct) copies the current value: it is not reported.

use crate::diag::Diagnostic;
use crate::directive::{Dialect, Directive};
use crate::rules::id;
use crate::unit::Unit;

/// The warnings of every loop directive (and combined construct) of `u`, with their sites.
pub fn check(u: &Unit) -> Vec<(usize, Diagnostic)> {
    let mut out = Vec::new();
    for i in 0..u.sites.len() {
        let Some(d) = u.dir(i).filter(|_| u.is_loop(i)) else {
            continue;
        };
        if d.find("private").is_none() {
            continue;
        }
        let (Some(stmt), Some(t)) = (u.stmts[i].as_ref(), u.sites[i].token()) else {
            continue;
        };
        let Some(f) = stmt.for_loop.as_ref() else {
            continue;
        };
        // The variables the loop uses from outside it: a name it declares for itself (C's
        // inner block) is another variable.
        let Some(facts) = u.site_facts(i) else {
            continue;
        };
        let own: Vec<String> = u
            .syntax
            .nest_loops(f.for_tok(), associated(d, u).min(64))
            .into_iter()
            .filter_map(|l| l.var.map(String::from))
            .collect();
        for item in d.all("private").flat_map(|c| c.items()) {
            let name = item.text.trim();
            if !u.lang.is_identifier(name) || own.iter().any(|v| u.lang.same_name(v, name)) {
                continue;
            }
            let Some(used) = facts.vars.iter().find(|v| u.lang.same_name(&v.name, name)) else {
                continue;
            };
            let Some(outer) = u.syntax.loop_around(t, name) else {
                continue;
            };
            if u.syntax.assigned_before_read(stmt.bytes(), name) {
                continue;
            }
            let line = u.line_at(u.syntax.token_range(outer.for_tok()).start);
            let fix = if used.writes().is_empty() {
                format!("remove '{name}' from 'private'")
            } else {
                format!(
                    "remove '{name}' from 'private', and give the loop a variable of its own for what it assigns"
                )
            };
            out.push((
                i,
                Diagnostic::new(
                    item.span().start,
                    id::PRIVATE_LOOP_VARIABLE,
                    format!(
                        "'{name}' is the control variable of the enclosing loop at line {line}: 'private({name})' gives the loop an uninitialized copy of it, and the loop reads '{name}' before assigning it; {fix}"
                    ),
                ),
            ));
        }
    }
    out
}

/// How many loops directive `d` applies to: its `collapse` or `tile`; a count that is not a
/// constant takes the whole nest (no variable of it is reported).
fn associated(d: &Directive, u: &Unit) -> usize {
    let dialect = Dialect::of_language(u.lang.name());
    if let Some(c) = d.find("collapse") {
        return c
            .items()
            .last()
            .and_then(|x| crate::directive::count::constant(&x.text, dialect))
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(usize::MAX)
            .max(1);
    }
    d.find("tile").map_or(1, |c| c.items().count().max(1))
}
