//! Gang-redundant code under `target teams`. OpenACC runs the code of a `parallel` region
//! outside its partitioned loops once per gang; `target teams` runs it once per team, the
//! same, but OpenMP 5.0 allows only `distribute`, `parallel` and `loop` regions and a few
//! routines strictly nested in `teams`, and GCC 12 rejects `atomic` and runtime calls there.
//! The statement holding them is wrapped in `parallel num_threads(1)`: still one thread per
//! team. (A region with no gang loop is `target`, where this does not arise.)

use super::loops::{Decision, Decisions, runtime_calls};
use super::{Mode, Unit};
use crate::diag::Diagnostic;
use crate::intent::{Action, Construct, Insert, OmpClause, OmpDirective, Plan};
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
        for t in runtime_calls(u, stmt.toks.clone()) {
            if redundant(t) {
                offenders.push((t, "a call that becomes an OpenMP runtime call"));
            }
        }
        let mut wrapped: Vec<Range<usize>> = Vec::new();
        for (t, what) in offenders {
            if wrapped.iter().any(|r| r.contains(&t)) {
                continue;
            }
            let Some(s) = u.syntax.statement_holding(stmt.toks.clone(), t) else {
                continue;
            };
            let gang_inside = inside.iter().any(|&l| {
                u.sites[l].token.is_some_and(|x| s.contains(&x))
                    && matches!(dec[l].as_ref().map(|x| &x.decision), Some(Decision::Par(lv)) if lv.gang)
            });
            if gang_inside {
                let p = &mut plans[c];
                p.diags.push(Diagnostic::new(
                    u.syntax.token_range(t).start,
                    id::REDUNDANT_IN_TEAMS,
                    format!("{what} runs once per gang here, in a statement that also holds a gang loop: OpenMP does not allow it directly in 'teams' and the statement cannot become a 'parallel' region; move it out of that statement. The construct is left unchanged"),
                ));
                p.action = Action::Unchanged;
                break;
            }
            if u.syntax.is_declaration(s.clone()) {
                // Its scope would end with the wrapper; runtime calls there are reported
                // by the runtime translation (`runtime-in-region`).
                continue;
            }
            let bytes = u.syntax.token_range(s.start).start..u.syntax.token_range(s.end - 1).end;
            plans[c].inserts.push(Insert::BeforeStatement {
                stmt: s.start,
                directive: OmpDirective::new(
                    Construct::of("parallel"),
                    vec![OmpClause::new("num_threads", "1")],
                ),
                region: Some(bytes),
            });
            wrapped.push(s);
        }
    }
}
