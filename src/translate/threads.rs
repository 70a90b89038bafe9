//! Where a team's threads go in the default profile. The seeds' mapping (the `clacc`
//! profile) opens a `parallel for` region for each worker loop inside a `distribute`
//! iteration: a fork and join per gang iteration, which costs more than the loop's work on a
//! CPU. When a gang loop's nest allows it, the default profile moves the threads to the gang
//! loop instead: `distribute parallel for` (with `collapse(2)` over a perfectly nested worker
//! loop), the worker loops inside run sequentially on their thread and the vector loops
//! become `simd`. A gang iteration then runs whole on one thread, which computes what
//! OpenACC computes as long as nothing the iteration writes is shared by the threads of a
//! team where OpenACC gives each gang its own copy; the checks below make sure of that.

use super::loops::{Decision, Levels, LoopInfo, calls_runtime};
use super::{Mode, Options, Unit};
use crate::intent::{Action, OmpClause, Plan};
use crate::profile::Profile;
use crate::rules::id;
use crate::semantic::VarKind;

/// How the threads of gang loop `g` are placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hoist {
    /// The gang loop that takes the threads.
    pub gang: usize,
    /// A perfectly nested worker loop collapsed into it (its directive is removed).
    pub collapsed: Option<usize>,
}

/// Moves the threads of every eligible gang loop nest to its gang loop (default profile):
/// updates the decisions and returns the nests changed.
pub fn hoist(u: &Unit, opts: &Options, dec: &mut [Option<LoopInfo>]) -> Vec<Hoist> {
    let mut out = Vec::new();
    if opts.profile != Profile::Default || routine_gang_in_file(u) {
        return out;
    }
    for g in 0..dec.len() {
        let Some(info) = &dec[g] else { continue };
        let Decision::Par(l) = info.decision else {
            continue;
        };
        if info.mode != Mode::Teams || !l.gang || l.worker || l.vector {
            continue;
        }
        let inner: Vec<usize> = u
            .descendants(g)
            .into_iter()
            .filter(|&k| u.is_loop(k))
            .collect();
        let par = |k: usize| matches!(dec[k].as_ref().map(|x| &x.decision), Some(Decision::Par(_)));
        if !inner.iter().any(|&k| par(k)) || !eligible(u, g, &inner, dec) {
            continue;
        }
        dec[g].as_mut().expect("checked").decision = Decision::Par(Levels { worker: true, ..l });
        for &k in &inner {
            let Some(info) = dec[k].as_mut() else {
                continue;
            };
            if let Decision::Par(l) = info.decision {
                info.decision = if l.vector {
                    Decision::Par(Levels {
                        vector: true,
                        ..Levels::default()
                    })
                } else {
                    Decision::Seq
                };
            }
        }
        out.push(Hoist {
            gang: g,
            collapsed: collapsible(u, g, &inner, dec),
        });
    }
    out
}

/// A `routine gang` function has a `distribute` loop, which may not run inside `parallel`.
fn routine_gang_in_file(u: &Unit) -> bool {
    (0..u.sites.len()).any(|i| {
        u.dir(i)
            .is_some_and(|d| d.name == "routine" && d.has("gang"))
    })
}

/// Whether the nest of gang loop `g` (its loop sites `inner`) may run each gang iteration on
/// one thread of a team.
fn eligible(u: &Unit, g: usize, inner: &[usize], dec: &[Option<LoopInfo>]) -> bool {
    let (Some(d), Some(stmt), Some(facts)) = (u.dir(g), u.stmts[g].as_ref(), u.site_facts(g))
    else {
        return false;
    };
    let Some(f) = stmt.for_loop.as_ref() else {
        return false;
    };
    // Only loops and `atomic` inside; no OpenMP runtime call (thread numbers change).
    let others = u.descendants(g).into_iter().any(|k| {
        u.dir(k)
            .is_none_or(|x| !(x.name == "loop" || x.name == "atomic" || x.name == "cache"))
    });
    if others || calls_runtime(u, g) {
        return false;
    }
    let c = dec[g].as_ref().and_then(|x| x.compute);
    let cd = c.and_then(|c| u.dir(c));
    let named = |dir: Option<&crate::directive::Directive>, clauses: &[&str], v: &str| {
        dir.is_some_and(|x| {
            x.clauses.iter().any(|k| {
                clauses.contains(&k.name.as_str())
                    && k.items().any(|it| u.lang.base_name(&it.text) == Some(v))
            })
        })
    };
    // Loops that turn sequential keep their control variable private only when declared in
    // the `for`, and their reduction must not be needed by a vector loop inside them.
    for &k in inner {
        let Some(Decision::Par(l)) = dec[k].as_ref().map(|x| &x.decision) else {
            continue;
        };
        if l.vector {
            continue;
        }
        let declared = u.stmts[k]
            .as_ref()
            .and_then(|s| s.for_loop.as_ref())
            .is_some_and(|f| f.declared);
        let reduces = u
            .dir(k)
            .is_some_and(|x| x.has("reduction") || x.has("private"));
        let par_inside = u
            .descendants(k)
            .into_iter()
            .any(|j| matches!(dec[j].as_ref().map(|x| &x.decision), Some(Decision::Par(_))));
        if !declared || (reduces && par_inside) {
            return false;
        }
    }
    let vector_var = |v: &str| {
        inner.iter().any(|&k| {
            matches!(dec[k].as_ref().map(|x| &x.decision), Some(Decision::Par(l)) if l.vector)
                && u.stmts[k]
                    .as_ref()
                    .and_then(|s| s.for_loop.as_ref())
                    .and_then(|f| f.var.as_deref())
                    == Some(v)
        })
    };
    let region = c.and_then(|c| u.stmts[c].as_ref()).map(|s| s.bytes.clone());
    for v in &facts.vars {
        let own = f.var.as_deref() == Some(v.name.as_str())
            || named(Some(d), &["private", "reduction"], &v.name);
        // Declared in the compute construct around the gang loop, or private to each gang
        // there: one copy per team, which the team's threads would share.
        let per_gang = v.decl.is_some_and(|o| {
            region
                .as_ref()
                .is_some_and(|r| r.contains(&o) && !stmt.bytes.contains(&o))
        }) || (c != Some(g) && named(cd, &["private", "firstprivate"], &v.name));
        let mutable = !v.ty.is_const && (v.ty.kind != VarKind::Scalar || !v.writes.is_empty());
        if per_gang && mutable && !own {
            return false;
        }
        if !v.writes.is_empty() && !own && !vector_var(&v.name) {
            return false;
        }
    }
    true
}

/// The worker loop perfectly nested in gang loop `g` that can be collapsed into it: the only
/// loop site directly inside, worker level only, no clause besides `worker` (without a
/// count) and `independent`, its `for` declaring its variable, its bounds not using the gang
/// loop's variable.
fn collapsible(u: &Unit, g: usize, inner: &[usize], dec: &[Option<LoopInfo>]) -> Option<usize> {
    let d = u.dir(g)?;
    if d.has("collapse") || d.has("tile") {
        return None;
    }
    let outer = u.stmts[g].as_ref()?.for_loop.as_ref()?;
    let gvar = outer.var.as_deref()?;
    let t = u.sites[g].token?;
    if u.syntax.nest_depth(t + 1, 2) < 2 {
        return None;
    }
    let k = *inner.first()?;
    let kd = u.dir(k)?;
    let f = u.stmts[k].as_ref()?.for_loop.as_ref()?;
    let header_uses_g = u.syntax.header_mentions(f, &[gvar]).is_some();
    let inner_of_outer = u.syntax.inner_loop(outer);
    let nested_here = inner_of_outer.is_some_and(|x| x.for_tok == f.for_tok);
    let plain = kd.name == "loop"
        && kd.has("worker")
        && kd
            .clauses
            .iter()
            .all(|c| (c.name == "worker" && c.args.is_none()) || c.name == "independent");
    (nested_here
        && plain
        && f.declared
        && !header_uses_g
        && dec[k].as_ref().map(|x| &x.decision) == Some(&Decision::Seq))
    .then_some(k)
}

/// The plans' side of the moved threads: `collapse(2)` on the gang loop of a collapsed
/// nest, and a note where a worker count the user gave a loop no longer applies.
pub fn finish(u: &Unit, hoisted: &[Hoist], plans: &mut [Plan]) {
    for h in hoisted {
        if h.collapsed.is_some()
            && let Action::Rewrite(rw) = &mut plans[h.gang].action
        {
            rw.append.push(OmpClause::new("collapse", "2"));
        }
        for k in u.descendants(h.gang) {
            let Some(w) = u
                .dir(k)
                .and_then(|d| d.find("worker"))
                .filter(|w| w.args.is_some())
            else {
                continue;
            };
            if plans[k].action == Action::Remove {
                plans[k].diags.push(crate::diag::Diagnostic::new(
                    w.span.start,
                    id::LAUNCH_HINT,
                    format!("'worker({})' is dropped: the threads of the gang loop at line {} run this loop's iterations", w.arg_text().unwrap_or_default(), u.line(h.gang)),
                ));
            }
        }
    }
}
