//! `private` naming the control variable of a loop around the directive
//! (`private-loop-variable`): each iteration would get an uninitialized copy of a variable
//! that holds the enclosing loop's iteration (CloverLeaf's `!$acc loop private(j,k)` inside
//! `do k`). Found only when the loop reads the variable before assigning it. Reading the
//! copy is undefined in OpenACC (gcc's is garbage), and the enclosing loop's value is the
//! only one the program can mean: where the loop never assigns the variable, the
//! translation drops it from `private` ([`dropped`]) so the loop reads that value; where
//! the loop assigns it too, or may where syntactic facts do not look (a C reference or
//! macro without libclang, a Fortran `associate` name or function argument), dropping it
//! could make its threads race on it: the directive is translated as written. Both are
//! reported.
//! `firstprivate` (on a combined construct) copies the current value: it is not reported.

use crate::diag::Diagnostic;
use crate::directive::{Dialect, Directive};
use crate::rules::id;
use crate::unit::Unit;

/// A `private` item naming an enclosing loop's control variable that the loop reads first.
pub struct Found {
    /// The item's offset in the directive.
    at: usize,
    name: String,
    /// Line of the enclosing loop.
    line: usize,
    /// Whether the loop assigns the variable, or may (then it is kept).
    writes: Writes,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Writes {
    None,
    Seen,
    /// Possible where the facts do not look: `Syntax::may_write_unseen` with syntactic facts.
    Possible,
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
        // Indexed by name (a scan per item is quadratic in a loop private to many).
        let used = facts.var(name).or_else(|| {
            u.lang
                .folds_case()
                .then(|| facts.vars.iter().find(|v| u.lang.same_name(&v.name, name)))
                .flatten()
        });
        let Some(used) = used else {
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
            writes: if !used.writes().is_empty() {
                Writes::Seen
            } else if !facts.exact && u.syntax.may_write_unseen(stmt.bytes(), name) {
                Writes::Possible
            } else {
                Writes::None
            },
        });
    }
    out
}

/// The `private` items of loop directive `i` that its translation drops: enclosing loops'
/// control variables it reads first and never assigns.
pub fn dropped(u: &Unit, i: usize) -> Vec<String> {
    found(u, i)
        .into_iter()
        .filter(|f| f.writes == Writes::None)
        .map(|f| f.name)
        .collect()
}

/// The findings of every loop directive (and combined construct) of `u`, with their sites:
/// their warnings are worded once the translation has decided (see [`Found::diagnostic`]).
pub fn check(u: &Unit) -> Vec<(usize, Found)> {
    (0..u.sites.len())
        .flat_map(|i| found(u, i).into_iter().map(move |f| (i, f)))
        .collect()
}

impl Found {
    /// The warning; `translated`: whether the directive became OpenMP (a construct left
    /// unchanged for another reason drops nothing, and the warning only advises).
    pub fn diagnostic(&self, translated: bool) -> Diagnostic {
        let (name, line) = (&self.name, self.line);
        let message = match self.writes {
            _ if !translated => format!(
                "'{name}' is the control variable of the enclosing loop at line {line}: 'private({name})' gives the loop an uninitialized copy of it, and the loop reads '{name}' before assigning it; remove '{name}' from 'private'"
            ),
            Writes::Seen => format!(
                "'{name}' is the control variable of the enclosing loop at line {line}: 'private({name})' gives the loop an uninitialized copy of it, and the loop reads '{name}' before assigning it; translated as written (the loop also assigns '{name}'): remove '{name}' from 'private', and give the loop a variable of its own for what it assigns"
            ),
            Writes::Possible => format!(
                "'{name}' is the control variable of the enclosing loop at line {line}: 'private({name})' gives the loop an uninitialized copy of it, and the loop reads '{name}' before assigning it; translated as written, as the loop may assign '{name}' through a name the analysis does not follow (a reference, a pointer, a macro, an 'associate' name, a function's argument; libclang's facts see them in C and C++): remove '{name}' from 'private'"
            ),
            Writes::None => format!(
                "'{name}' is the control variable of the enclosing loop at line {line} and the loop reads it without assigning it: 'private({name})' would give the loop an uninitialized copy (undefined in OpenACC; gcc reads garbage); dropped from 'private', so the loop reads the enclosing loop's value; remove it from the source too"
            ),
        };
        Diagnostic::new(self.at, id::PRIVATE_LOOP_VARIABLE, message)
    }
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
