//! `kernels` loops the dependence test (`semantic::dependence`) proves independent: OpenACC
//! compilers parallelize them, so the translation does too, with the `reduction` and
//! `lastprivate` clauses the test infers; the others stay sequential with a
//! `kernels-sequential` warning that names the dependence found.

use super::{Mode, Options, Plan, Unit};
use crate::diag::Diagnostic;
use crate::profile::Profile;
use crate::semantic::dependence::{self, Nest, Verdict};

/// The dependence verdicts for kernels loop `i`: a loop site, or (`bare`) the plain loop that
/// is the whole body of kernels construct `i`.
fn nest(u: &Unit, i: usize) -> Option<Nest> {
    if u.is_loop(i) {
        return dependence::for_site(u, i);
    }
    let f = u.bare_loop(i)?;
    dependence::for_loop_in(u, i, f.for_tok)
}

/// What the test says about kernels loop `i` (a loop site without levels or `independent`,
/// or the bare loop of kernels construct `i`) in a construct of mapping `mode`.
pub enum Proof {
    /// Independent: the clauses to add (`reduction(+:s)`, `lastprivate(t)`, `collapse(2)`).
    Independent(Vec<String>),
    /// Not proven: why, for the `kernels-sequential` warning.
    Sequential(String),
}

/// Decides kernels loop `i` of compute construct `c`. Inferred reductions need a construct
/// that combines them: the loop's own combined construct (or bare loop), or a `target`
/// region where the loop opens its own `parallel for`.
pub fn prove(u: &Unit, i: usize, c: usize, mode: Mode) -> Proof {
    let Some(n) = nest(u, i) else {
        return Proof::Sequential("its loop is not analyzed".into());
    };
    match n.outer() {
        Verdict::Dependent(d) => {
            Proof::Sequential(format!("{} (line {})", d.reason, u.line_at(d.at)))
        }
        Verdict::Independent(cl) => {
            if !cl.reduction.is_empty() && i != c && mode != Mode::Target {
                return Proof::Sequential(format!(
                    "its reduction ({}) would need the enclosing 'target teams' to combine it",
                    cl.omp().join(" ")
                ));
            }
            let mut out = cl.omp();
            // Loop sites inside keep their own directives: no collapse over them.
            let k = n.collapse();
            if k > 1 && !u.descendants(i).iter().any(|&s| u.is_loop(s)) {
                out.push(format!("collapse({k})"));
            }
            Proof::Independent(out)
        }
    }
}

/// The `kernels-sequential` warning for loop `line`, with the reason the test gave.
pub fn sequential(at: usize, line: usize, why: &str) -> Diagnostic {
    Diagnostic::new(
        at,
        "kernels-sequential",
        format!(
            "loop at line {line} in a kernels region runs sequentially: {why}; mark it 'independent' if its iterations are independent, or pass --assume-independent"
        ),
    )
}

/// The plain `for` loops among the statements of a `kernels` construct `c` mapped to
/// `target` (several statements): each proven independent gets its own `parallel for`
/// directive (`parallel for simd` in the default profile) with the inferred clauses; the
/// others stay sequential with a warning.
pub fn plain_loops(u: &Unit, c: usize, opts: &Options, plan: &mut Plan) {
    let Some(stmt) = u.stmts[c].as_ref() else {
        return;
    };
    if u.bare_loop(c).is_some() || u.is_loop(c) {
        return;
    }
    for s in u.structure.statements_in(&stmt.toks) {
        if u.structure.site_at(s).is_some() {
            continue;
        }
        let Some(f) = u.structure.for_loop_at(s) else {
            continue;
        };
        let at = u.structure.toks[f.for_tok].start;
        let line = u.line_at(at);
        let Some(n) = dependence::for_loop_in(u, c, f.for_tok) else {
            continue;
        };
        let clauses = match n.outer() {
            Verdict::Independent(cl) => {
                let mut out = cl.omp();
                let k = n.collapse();
                if k > 1 {
                    out.insert(0, format!("collapse({k})"));
                }
                out
            }
            Verdict::Dependent(d) if !opts.assume_independent => {
                let why = format!("{} (line {})", d.reason, u.line_at(d.at));
                plan.diags.push(sequential(at, line, &why));
                continue;
            }
            Verdict::Dependent(_) => Vec::new(),
        };
        let mut clauses = clauses;
        if let Some(v) = f.var.as_ref().filter(|_| !f.declared)
            && !clauses.iter().any(|c| {
                c.strip_prefix("lastprivate(")
                    .is_some_and(|l| l.trim_end_matches(')').split(", ").any(|x| x == v))
            })
        {
            clauses.push(format!("lastprivate({v})"));
        }
        let name = match opts.profile {
            Profile::Default => "parallel for simd",
            _ => "parallel for",
        };
        let omp = std::iter::once(name.to_string())
            .chain(clauses)
            .collect::<Vec<_>>()
            .join(" ");
        plan.inserts
            .push(super::directive_before(u, f.for_tok, &omp));
        if let Some(end) = f.body.end.checked_sub(1) {
            plan.regions
                .push((name.to_string(), at..u.structure.toks[end].end));
        }
    }
}
