//! `private` naming the control variable of a loop around the directive
//! (`private-loop-variable`): each iteration would get an uninitialized copy of a variable
//! that holds the enclosing loop's iteration (CloverLeaf's `!$acc loop private(j,k)` inside
//! `do k`). Found only when the loop reads the variable before assigning it. Reading the
//! copy is undefined in OpenACC (gcc's is garbage), and the enclosing loop's value is the
//! only one the program can mean: where the loop never assigns the variable, the
//! translation drops it from `private` ([`dropped`]) so the loop reads that value; where
//! the loop assigns it too (dropping would make its threads race on it) the directive is
//! translated as written. Both are reported.
//! `firstprivate` (on a combined construct) copies the current value: it is not reported.

use crate::diag::Diagnostic;
use crate::directive::{Clause, Dialect, Directive};
use crate::rules::id;
use crate::unit::Unit;

/// A `private` item naming an enclosing loop's control variable that the loop reads first.
struct Found {
    /// The item's offset in the directive.
    at: usize,
    name: String,
    /// Line of the enclosing loop.
    line: usize,
    /// Whether the loop assigns the variable (then it is kept).
    writes: bool,
}

fn found(u: &Unit, i: usize) -> Vec<Found> {
    let mut out = Vec::new();
    let Some(d) = u.dir(i).filter(|_| u.is_loop(i)) else {
        return out;
    };
    if d.find("private").is_none() {
        return out;
    }
    let (Some(stmt), Some(t)) = (u.stmts[i].as_ref(), u.sites[i].token()) else {
        return out;
    };
    let Some(f) = stmt.for_loop.as_ref() else {
        return out;
    };
    // The variables the loop uses from outside it: a name it declares for itself (C's
    // inner block) is another variable.
    let Some(facts) = u.site_facts(i) else {
        return out;
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
        out.push(Found {
            at: item.span().start,
            name: name.to_string(),
            line: u.line_at(u.syntax.token_range(outer.for_tok()).start),
            writes: !used.writes().is_empty(),
        });
    }
    out
}

/// The `private` items of loop directive `i` that its translation drops: enclosing loops'
/// control variables it reads first and never assigns.
pub fn dropped(u: &Unit, i: usize) -> Vec<String> {
    found(u, i)
        .into_iter()
        .filter(|f| !f.writes)
        .map(|f| f.name)
        .collect()
}

/// `private` clause `c` without the items in `drop` (from [`dropped`]):
/// `None` when none of its items is dropped, `Some(None)` when all are, else the items left.
pub fn without(u: &Unit, c: &Clause, drop: &[String]) -> Option<Option<String>> {
    let gone = |x: &str| drop.iter().any(|v| u.lang.same_name(v, x.trim()));
    if !c.items().any(|x| gone(&x.text)) {
        return None;
    }
    let left: Vec<&str> = c
        .items()
        .filter(|x| !gone(&x.text))
        .map(|x| x.text.trim())
        .collect();
    Some((!left.is_empty()).then(|| left.join(", ")))
}

/// The warnings of every loop directive (and combined construct) of `u`, with their sites.
pub fn check(u: &Unit) -> Vec<(usize, Diagnostic)> {
    let mut out = Vec::new();
    for i in 0..u.sites.len() {
        for f in found(u, i) {
            let (name, line) = (&f.name, f.line);
            let message = if f.writes {
                format!(
                    "'{name}' is the control variable of the enclosing loop at line {line}: 'private({name})' gives the loop an uninitialized copy of it, and the loop reads '{name}' before assigning it; translated as written (the loop also assigns '{name}'): remove '{name}' from 'private', and give the loop a variable of its own for what it assigns"
                )
            } else {
                format!(
                    "'{name}' is the control variable of the enclosing loop at line {line} and the loop reads it without assigning it: 'private({name})' would give the loop an uninitialized copy (undefined in OpenACC; gcc reads garbage); dropped from 'private', so the loop reads the enclosing loop's value; remove it from the source too"
                )
            };
            out.push((i, Diagnostic::new(f.at, id::PRIVATE_LOOP_VARIABLE, message)));
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
