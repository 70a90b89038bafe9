//! Gang-redundant code under `target teams`. OpenACC runs the code of a `parallel` region
//! outside its partitioned loops once per gang; `target teams` runs it once per team, the
//! same, but OpenMP 5.0 allows only `distribute`, `parallel` and `loop` regions and a few
//! routines strictly nested in `teams`, and GCC 12 rejects `atomic` and runtime calls there.
//! The statement holding them is wrapped in `parallel num_threads(1)`: still one thread per
//! team. (A region with no gang loop is `target`, where this does not arise.)

use super::loops::{Decision, Decisions, runtime_call_at};
use super::{Mode, Unit};
use crate::diag::Diagnostic;
use crate::intent::{Action, Construct, Insert, OmpClause, OmpDirective, Plan};
use crate::lex::TokKind;
use crate::rules::id;
use std::ops::Range;

pub fn wrap(u: &Unit, dec: &Decisions, plans: &mut [Plan]) {
    for c in 0..plans.len() {
        let Some(d) = u.dir(c) else { continue };
        if d.compute_kind().is_none()
            || d.is_combined()
            || dec.mode(c) != Mode::Teams
            || !matches!(plans[c].action, Action::Rewrite(_))
        {
            continue;
        }
        let Some(stmt) = &u.stmts[c] else { continue };
        let inside: Vec<usize> = u.descendants(c);
        // Token ranges of the loops that open OpenMP regions (partitioned loops).
        let partitioned: Vec<Range<usize>> = inside
            .iter()
            .filter(|&&l| u.is_loop(l) && matches!(plans[l].action, Action::Rewrite(_)))
            .filter_map(|&l| u.stmts[l].as_ref().map(|s| s.toks.clone()))
            .collect();
        let redundant = |t: usize| !partitioned.iter().any(|r| r.contains(&t));
        // Tokens of what OpenMP does not allow directly in `teams`.
        let mut offenders: Vec<(usize, &str)> = Vec::new();
        for &k in &inside {
            if u.dir(k).is_some_and(|x| x.name == "atomic")
                && let Some(t) = u.sites[k].first_token.or(u.sites[k].token)
                && redundant(t)
            {
                offenders.push((t, "an 'atomic' construct"));
            }
        }
        for t in stmt.toks.clone() {
            if runtime_call_at(u, t) && redundant(t) {
                offenders.push((t, "a call that becomes an OpenMP runtime call"));
            }
        }
        let mut wrapped: Vec<Range<usize>> = Vec::new();
        for (t, what) in offenders {
            if wrapped.iter().any(|r| r.contains(&t)) {
                continue;
            }
            let Some(s) = statement_of(u, stmt.toks.clone(), t) else {
                continue;
            };
            let gang_inside = inside.iter().any(|&l| {
                u.sites[l].token.is_some_and(|x| s.contains(&x))
                    && matches!(dec[l].as_ref().map(|x| &x.decision), Some(Decision::Par(lv)) if lv.gang)
            });
            if gang_inside {
                let p = &mut plans[c];
                p.diags.push(Diagnostic::new(
                    u.structure.toks[t].start,
                    id::REDUNDANT_IN_TEAMS,
                    format!("{what} runs once per gang here, in a statement that also holds a gang loop: OpenMP does not allow it directly in 'teams' and the statement cannot become a 'parallel' region; move it out of that statement. The construct is left unchanged"),
                ));
                p.action = Action::Unchanged;
                break;
            }
            if is_declaration(u, s.clone()) {
                // Its scope would end with the wrapper; runtime calls there are reported
                // by the runtime translation (`runtime-in-region`).
                continue;
            }
            let toks = u.structure.toks;
            plans[c].inserts.push(Insert::BeforeStatement {
                stmt: s.start,
                directive: OmpDirective::new(
                    Construct::of("parallel"),
                    vec![OmpClause::new("num_threads", "1")],
                ),
                region: Some(toks[s.start].start..toks[s.end - 1].end),
            });
            wrapped.push(s);
        }
    }
}

/// The statement holding token `t`, directly in the region or in a compound statement in it
/// (through `{ }` only: an `if` or a plain loop is wrapped whole).
fn statement_of(u: &Unit, mut range: Range<usize>, t: usize) -> Option<Range<usize>> {
    let st = &u.structure;
    for _ in 0..200 {
        let mut found = None;
        for s in st.statements_in(&range) {
            let e = st.stmt_end(s)?;
            if (s..e).contains(&t) {
                found = Some(s..e);
                break;
            }
        }
        let s = found?;
        if st.toks[st.skip_pp(s.start)].text(u.src) == "{" && s != range {
            range = s;
            continue;
        }
        return (s != range || st.toks[s.start].text(u.src) != "{").then_some(s);
    }
    None
}

/// A declaration statement (`int on = f();`, `const T *p = …;`): two names in a row before
/// any `=`, `(` or `;`.
fn is_declaration(u: &Unit, s: Range<usize>) -> bool {
    let toks = &u.structure.toks[s];
    let mut prev_name = false;
    for t in toks {
        let text = t.text(u.src);
        if matches!(text, "=" | "(" | ";" | "{" | "[") {
            return false;
        }
        let name = t.kind == TokKind::Ident
            && !matches!(
                text,
                "return" | "if" | "else" | "for" | "while" | "do" | "switch"
            );
        if name && prev_name {
            return true;
        }
        prev_name = name || (prev_name && matches!(text, "*" | "&"));
    }
    false
}
