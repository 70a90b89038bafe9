//! Scalars shared by the threads or teams of a region where OpenACC gives each its own copy:
//! written by the iterations of parallel loops (made `private`, given the enclosing
//! reduction, or reported as a race), and written by the gang-redundant code of a `parallel`
//! region (made `firstprivate` on the construct).

use std::borrow::Cow;

use super::Mapped;
use super::region_clauses::RegionClauses;

use crate::diag::Diagnostic;
use crate::hash::{HashMap, HashSet};
use crate::intent::{Action, OmpClause, Plan};
use crate::rules::{Severity, id};
use crate::semantic::VarKind;
use crate::translate::loops::{Decision, LoopInfo};
use crate::translate::reductions;
use crate::translate::reductions::name_key;
use crate::translate::{TreePlans, Unit};

/// The bytes of the innermost loop of the nest that `collapse(n)` (`n` a constant, at
/// least 2) or `tile` makes the iterations of loop site `l`: each run of its body is one
/// iteration. None where the directive has neither, or fewer loops are perfectly nested.
fn collapsed_iteration(u: &Unit, l: usize) -> Option<std::ops::Range<usize>> {
    let (n, _) = super::nest_count(u, u.dir(l)?)?;
    if n < 2 {
        return None;
    }
    let outer = u.stmts[l].as_ref()?.for_loop.as_ref()?;
    let nest = u.syntax.nest_loops(outer.for_tok(), n);
    if nest.len() < n {
        return None;
    }
    let t = nest.last()?.for_tok();
    let end = u.syntax.stmt_end(t)?;
    if end <= t {
        return None;
    }
    Some(u.syntax.token_range(t).start..u.syntax.token_range(end - 1).end)
}

/// Scalars from outside the region written by the iterations of loops that run in parallel,
/// with no clause making them private or a reduction and not under `atomic`. OpenMP shares
/// them among the iterations, where OpenACC compilers privatize them or infer a reduction.
/// A scalar each iteration assigns before reading it becomes `private` on those loops in a
/// `parallel` region (it is firstprivate there, so no value leaves the region either way);
/// otherwise the race is reported with the clause to add, and a `kernels` construct, where
/// the scalar is copied back, is left unchanged.
pub(super) fn scalar_races(
    u: &Unit,
    c: usize,
    dec: &[Option<LoopInfo>],
    attributes: &Mapped,
    plans: &mut TreePlans,
) {
    let Some(f) = u.site_facts(c) else { return };
    let kind = u.dir(c).and_then(|d| d.compute_kind());
    let (parallel, kernels) = (kind == Some("parallel"), kind == Some("kernels"));
    let region: Vec<usize> = std::iter::once(c).chain(u.descendants(c)).collect();
    let covers = |l: usize, w: usize| u.stmts[l].as_ref().is_some_and(|s| s.bytes().contains(&w));
    // Variables of the `reduction`/`lastprivate` clauses the translation added (those the
    // dependence test inferred for `kernels` loops).
    // (Only the region's plans: a file may have 100,000 regions.)
    // (Only the sites that add any: most add none, and an empty map allocates nothing.)
    let added: HashMap<usize, HashSet<String>> = region
        .iter()
        .map(|&l| (l, added_clause_names(&plans[l]).into_iter().collect()))
        .filter(|(_, names): &(usize, HashSet<String>)| !names.is_empty())
        .collect();
    // The sites' private and reduction clauses, indexed once (a directive may list
    // thousands of names, and each written variable asks about each site around it).
    let clauses = RegionClauses::new(u.lang, region.iter().filter_map(|&l| Some((l, u.dir(l)?))));
    let names =
        |l: usize, v: &str| added.get(&l).is_some_and(|a| a.contains(v)) || clauses.names(l, v);
    // Loops, and the bare loop of a `kernels` construct, that run in parallel.
    let is_par = |l: usize| matches!(dec[l].as_ref().map(|x| &x.decision), Some(Decision::Par(_)));
    // The control variable of a loop construct is private to it (a sequential one gets a
    // local copy); that of a bare `kernels` loop only when it runs in parallel.
    let control = |l: usize| {
        if u.is_loop(l) {
            u.site_facts(l)
                .and_then(|x| x.loop_shape.as_ref())
                .and_then(|x| x.var.clone())
        } else {
            u.bare_loop(l)
                .and_then(|f| f.var)
                .map(String::from)
                .filter(|_| is_par(l))
        }
    };
    // Per loop, the scalars that become private on it (`true`: `lastprivate`).
    let mut private: Vec<(usize, Vec<(String, bool)>)> = Vec::new();
    // Per parallel loop, the names of the reductions it inherits, found once.
    let mut inherited: HashMap<usize, HashSet<String>> = HashMap::default();
    // The scalars whose copy-back the construct no longer needs.
    let mut unmapped: HashSet<&str> = HashSet::default();
    // The reasons the construct is left unchanged.
    let mut leave: Vec<Diagnostic> = Vec::new();
    for v in &f.vars {
        // A type the facts could not resolve (a macro from a header, a reference) is made
        // private only as a loop variable's; its other writes are reported.
        let unknown = v.ty.kind == VarKind::Other;
        if !(v.ty.kind == VarKind::Scalar || unknown) || v.ty.is_const {
            continue;
        }
        // A reduction of the construct or of a loop in it: its updates in nested parallel
        // loops must be combined too, never privatized.
        let reducers = clauses.reducers(&v.name);
        let reduced = reducers.first().copied();
        if names(c, &v.name) && reduced.is_none() {
            continue;
        }
        // The parallel loops whose iterations write `v`.
        let mut loops: Vec<usize> = Vec::new();
        let mut first = None;
        for &w in v.writes() {
            // Only writes spelled here: a macro's expansion reports other positions.
            let spelled = u.src.get(w..).is_some_and(|r| {
                r.starts_with(v.name.as_str())
                    && !r[v.name.len()..].starts_with(|ch: char| ch.is_alphanumeric() || ch == '_')
            });
            let around: Vec<usize> = region.iter().copied().filter(|&l| covers(l, w)).collect();
            if !spelled || !around.iter().any(|&l| is_par(l)) {
                continue;
            }
            // From the innermost construct out: the first that privatizes, reduces or
            // protects the write excuses it, unless a parallel loop comes first (a reduction
            // on an outer gang loop does not combine the threads of an inner loop, except
            // for the updates that loop inherits).
            let mut inside_out = around.clone();
            inside_out.sort_by_key(|&l| std::cmp::Reverse(u.at(l)));
            // `Some(l)`: the parallel loop `l` races on the write.
            let racing = inside_out
                .iter()
                .find_map(|&l| {
                    if names(l, &v.name)
                        || u.dir(l).is_some_and(|d| d.name == "atomic")
                        || control(l).as_deref() == Some(v.name.as_str())
                    {
                        Some(None)
                    } else if is_par(l) {
                        let inherits = inherited
                            .entry(l)
                            .or_insert_with(|| {
                                reductions::inherited(u, l, dec)
                                    .into_iter()
                                    .map(|(_, x)| x)
                                    .collect()
                            })
                            .contains(v.name.as_str());
                        Some((!inherits).then_some(l))
                    } else {
                        None
                    }
                })
                .flatten();
            let Some(racing) = racing else { continue };
            first.get_or_insert((w, racing));
            // Only the loops inside the construct that privatizes it (an outer loop's
            // `private(v)`): outside it, no iteration shares that copy.
            let bound = inside_out
                .iter()
                .position(|&l| {
                    names(l, &v.name)
                        || u.dir(l).is_some_and(|d| d.name == "atomic")
                        || control(l).as_deref() == Some(v.name.as_str())
                })
                .unwrap_or(inside_out.len());
            for l in inside_out[..bound].iter().copied().filter(|&l| is_par(l)) {
                if !loops.contains(&l) {
                    loops.push(l);
                }
            }
        }
        let Some((w, racing)) = first else { continue };
        loops.sort_by_key(|&l| u.at(l));
        let outer = loops[0];
        let line = u.line_at(u.at(outer));
        // Asked of each loop that would privatize `v`: an inner loop whose iteration reads
        // the value the outer iteration left would read an unassigned private copy.
        let assigned_first = loops.iter().all(|&l| {
            u.stmts[l]
                .as_ref()
                .is_some_and(|st| u.syntax.assigned_before_read(st.bytes(), &v.name))
        });
        // A scalar in a data clause here or around has a value after the region.
        let key = name_key(u.lang, &v.name);
        let mapped = attributes.here.contains(&*key) || attributes.around.contains(&key);
        // The control variable of a loop whose directive is gone (`loop seq`, or levels all
        // taken by an outer loop) or that has none: private to each iteration around it, as
        // OpenACC makes loop variables (and compilers treat those of plain inner loops).
        let loop_variable = assigned_first
            && u.stmts[outer]
                .as_ref()
                .is_some_and(|st| u.syntax.first_mention_in_loop_init(st.toks(), &v.name));
        // Reductions only on loops inside every loop that would privatize `v` (a gang
        // loop's iteration resets a sum that an inner vector loop reduces): each iteration
        // reduces into its own copy.
        let reduced_inside = reducers.iter().all(|&(r, _)| {
            loops
                .iter()
                .all(|&l| r != l && u.ancestors(r).any(|a| a == l))
        });
        if reduced_inside && assigned_first && ((parallel && !mapped && !unknown) || loop_variable)
        {
            for &l in &loops {
                match private.iter_mut().find(|(x, _)| *x == l) {
                    Some((_, names)) => names.push((v.name.to_string(), false)),
                    None => private.push((l, vec![(v.name.to_string(), false)])),
                }
            }
            if !reducers.is_empty() {
                // No value leaves the region: the copy-back the inner reduction implied goes.
                unmapped.insert(v.name.as_str());
            }
            continue;
        }
        // In `kernels`, scalars are copied back: the last iteration's value survives, as it
        // does sequentially. (On an OpenMP `loop` construct, which takes no `lastprivate` of
        // other variables, `translate::plan` then maps the loop as the default profile does.)
        // That needs every iteration to assign it: `lastprivate` copies back the last
        // iteration's private copy, unassigned where that iteration skipped the assignment
        // (`lastprivate(conditional:)` would keep the last value assigned, but neither
        // OpenMP 5.0 nor the compilers allow it on `distribute`). Otherwise the construct
        // is left unchanged: shared, the iterations would race on it.
        // An iteration of a loop with `collapse(n)` or `tile` is one run of the innermost
        // loop's body: the assignment there is on every path of it, although an inner loop
        // may run no iteration of an outer one.
        // (`whole`: the loop's own iterations only.)
        let every = |l: usize, whole: bool| {
            u.stmts[l].as_ref().is_some_and(|st| {
                u.syntax.assigned_every_iteration(st.bytes(), &v.name)
                    || (!whole
                        && collapsed_iteration(u, l)
                            .is_some_and(|r| u.syntax.assigned_every_iteration(r, &v.name)))
            })
        };
        // A local that nothing outside these loops mentions has no value after them to
        // copy back: private, whether or not each iteration assigns it.
        let confined = || {
            let inside: Vec<std::ops::Range<usize>> = (loops.iter())
                .filter_map(|&l| Some(u.at(l)..u.stmts[l].as_ref()?.bytes().end))
                .collect();
            v.decl()
                .is_some_and(|d| u.syntax.confined_to(u.at(c), d, &inside, &v.name))
        };
        if reduced_inside
            && assigned_first
            && kernels
            && !unknown
            && !loops.iter().all(|&l| every(l, false))
            && !confined()
        {
            let message = format!(
                "'{}' is written by the iterations of the loop at line {line}, which run in parallel, and not assigned on every path through each iteration: 'lastprivate' would copy back the last iteration's copy, unassigned where that iteration skips the assignment, and shared the iterations race on it ('lastprivate(conditional:)' is not allowed on 'distribute'). The construct is left unchanged: assign '{}' in every iteration, or keep the index of the last assignment in a reduction (max)",
                v.name, v.name
            );
            leave.push(Diagnostic::new(w, id::SCALAR_RACE, message));
            continue;
        }
        if reduced_inside && assigned_first && kernels && !unknown {
            // A confined local has no value after the loops to copy back (nor a map):
            // private; otherwise every iteration assigns it here, and the last one's value
            // is copied back.
            let last = !confined();
            if !last {
                unmapped.insert(v.name.as_str());
            }
            for &l in &loops {
                match private.iter_mut().find(|(x, _)| *x == l) {
                    Some((_, names)) => names.push((v.name.to_string(), last)),
                    None => private.push((l, vec![(v.name.to_string(), last)])),
                }
            }
            continue;
        }
        // What races, and the fix.
        let (race, fix) = if let Some((r, _)) = reduced
            && loops.iter().any(|&l| u.ancestors(r).any(|a| a == l))
        {
            let l = loops
                .iter()
                .copied()
                .filter(|&l| u.ancestors(r).any(|a| a == l))
                .last()
                .unwrap_or(racing);
            let fix = if assigned_first {
                format!(
                    "add 'private({})' to the loop at line {}",
                    v.name,
                    u.line_at(u.at(l))
                )
            } else {
                format!(
                    "give each iteration of the loop at line {} its own '{}' (assign it before the reduction) or make that loop sequential",
                    u.line_at(u.at(l)),
                    v.name
                )
            };
            let race = format!(
                "'{}' is reduced by the loop at line {}, but the iterations of the loop at line {} around it, which run in parallel, also write it: in OpenMP they race on it",
                v.name,
                u.line_at(u.at(r)),
                u.line_at(u.at(l)),
            );
            (race, fix)
        } else if let Some((r, op)) = reduced {
            let line = u.line_at(u.at(racing));
            let race = format!(
                "'{}' is a reduction at line {}, but the loop at line {line}, whose iterations run in parallel, updates it in a form not recognized as that reduction: in OpenMP its threads race",
                v.name,
                u.line_at(u.at(r)),
            );
            let fix = format!(
                "add 'reduction({op}:{})' to the inner loop or make the update atomic",
                v.name
            );
            (race, fix)
        } else {
            // (A private copy loses what the iterations that assign it wrote, a value a
            // data clause copies out unless every iteration assigns it.)
            let private = assigned_first && (!mapped || loops.iter().all(|&l| every(l, true)));
            let fix = match (private, u.syntax.reduction_op(w, &v.name)) {
                (true, _) => format!("add 'private({})' to the loop", v.name),
                (false, Some(op)) => format!("add 'reduction({op}:{})' to the loop", v.name),
                (false, None) => format!("make '{}' private or the update atomic", v.name),
            };
            let race = format!(
                "'{}' is written by the iterations of the loop at line {line}, which run in parallel, and no clause makes it private or a reduction: in OpenMP the iterations race (OpenACC compilers often privatize it or infer a reduction)",
                v.name
            );
            (race, fix)
        };
        // In `kernels` OpenACC compilers find the write (their dependence analysis) and run
        // the loop sequentially or privatize the scalar: translated, the teams and threads
        // would race on one shared copy.
        if kernels {
            let message = format!("{race}. The construct is left unchanged: {fix}");
            leave.push(Diagnostic::new(w, id::SCALAR_RACE, message));
            continue;
        }
        let message = format!("{race}; {fix}");
        plans[c]
            .diags
            .push(Diagnostic::new(w, id::SCALAR_RACE, message));
    }
    if !leave.is_empty() {
        let p = &mut plans[c];
        p.unchanged();
        p.diags
            .retain(|d| u.tables.severity(d.rule.as_str(), Severity::Warning) == Severity::Error);
        p.diags.extend(leave);
        return;
    }
    unmap_appended(&mut plans[c], &unmapped);
    for (l, mut names) in private {
        // (A loop whose threads moved to it has its own: `threads::finish`.)
        let already: HashSet<String> = added_clause_names(&plans[l]).into_iter().collect();
        names.retain(|(n, _)| !already.contains(n));
        for last in [false, true] {
            let list: Vec<&str> = names
                .iter()
                .filter(|(_, x)| *x == last)
                .map(|(n, _)| n.as_str())
                .collect();
            if list.is_empty() {
                continue;
            }
            let clause = if last { "lastprivate" } else { "private" };
            if let Action::Rewrite(rw) = &mut plans[l].action {
                rw.append.push(OmpClause::new(clause, list.join(", ")));
            }
            let quoted = list
                .iter()
                .map(|n| format!("'{n}'"))
                .collect::<Vec<_>>()
                .join(", ");
            let (s, are, them) = if list.len() == 1 {
                ("", "is", "it")
            } else {
                ("s", "are", "them")
            };
            let message = if last {
                format!(
                    "scalar{s} {quoted} from outside the region {are} assigned before being read in each iteration: private to the loop, with the last iteration's value copied back as 'kernels' copies scalars (OpenMP would share {them} among the iterations)"
                )
            } else {
                format!(
                    "scalar{s} {quoted} from outside the region {are} assigned before being read in each iteration: private to the loop, as OpenACC compilers treat {them} (OpenMP would share {them} among the iterations)"
                )
            };
            plans[l]
                .diags
                .push(Diagnostic::new(u.at(l), id::SCALAR_PRIVATE, message));
        }
    }
}

/// Scalars that the gang-redundant code of a `parallel` region under `target teams` writes
/// (outside its parallel loops) with no data attribute: OpenACC gives each gang its own
/// firstprivate copy, OpenMP's implicit firstprivate on `target` is one copy that the teams
/// share (and race on). `firstprivate` on the construct gives each team its copy.
pub(super) fn gang_copies(
    u: &Unit,
    c: usize,
    dec: &[Option<LoopInfo>],
    mapped: &Mapped,
    plans: &mut TreePlans,
) {
    let (Some(d), Some(f)) = (u.dir(c), u.site_facts(c)) else {
        return;
    };
    let teams =
        matches!(&plans[c].action, Action::Rewrite(rw) if rw.name.starts_with("target teams"));
    if d.compute_kind() != Some("parallel") || d.is_combined() || !teams {
        return;
    }
    let Mapped { here, around } = mapped;
    let appended: HashSet<String> = appended_names(u, &plans[c]).into_iter().collect();
    let inside: Vec<usize> = u.descendants(c);
    let private: HashSet<(usize, Cow<str>)> = inside
        .iter()
        .filter_map(|&l| Some((l, u.dir(l)?)))
        .flat_map(|(l, d)| {
            d.all("private")
                .flat_map(move |p| p.items().map(move |i| (l, name_key(u.lang, &i.text))))
        })
        .collect();
    let covers = |l: usize, w: usize| u.stmts[l].as_ref().is_some_and(|s| s.bytes().contains(&w));
    let is_par = |l: usize| matches!(dec[l].as_ref().map(|x| &x.decision), Some(Decision::Par(_)));
    let mut add: Vec<&str> = Vec::new();
    for v in &f.vars {
        let n = v.name.as_str();
        // (Fortran names differ in case: `COPY(RES1)` names `res1`.)
        let key = name_key(u.lang, n);
        if v.ty.kind != VarKind::Scalar
            || v.ty.is_const
            || here.contains(&*key)
            || around.contains(&key)
            || appended.contains(&*key)
        {
            continue;
        }
        // Writes of the gang's copy: outside parallel loops (their iterations' writes are
        // `scalar_races`'), and not of a loop's own (private) control variable.
        let redundant = v.writes().iter().any(|&w| {
            !inside.iter().any(|&l| {
                covers(l, w)
                    && (is_par(l)
                        || u.site_facts(l)
                            .and_then(|x| x.loop_shape.as_ref())
                            .and_then(|x| x.var.as_deref())
                            .is_some_and(|x| u.lang.same_name(x, n))
                        || private.contains(&(l, key.clone())))
            })
        });
        if redundant {
            add.push(n);
        }
    }
    if add.is_empty() {
        return;
    }
    if let Action::Rewrite(rw) = &mut plans[c].action {
        rw.append
            .push(OmpClause::new("firstprivate", add.join(", ")));
    }
    let quoted = add
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ");
    let (s, are) = if add.len() == 1 {
        ("", "is")
    } else {
        ("s", "are")
    };
    plans[c].diags.push(Diagnostic::new(
        u.at(c),
        id::SCALAR_PRIVATE,
        format!("scalar{s} {quoted} {are} written by code that runs once per gang: firstprivate to each team, as OpenACC gives each gang its own copy (OpenMP would share one copy among the teams)"),
    ));
}

/// Base names of the items of the clauses plan `p` appends (`map(tofrom: s)`,
/// `reduction(+: s)`, `private(t)`).
fn appended_names(u: &Unit, p: &Plan) -> Vec<String> {
    let Action::Rewrite(rw) = &p.action else {
        return Vec::new();
    };
    rw.append
        .iter()
        .filter_map(|a| a.arg.as_deref())
        .flat_map(|inner| {
            let list = inner.rsplit_once(':').map_or(inner, |x| x.1);
            list.split(',').filter_map(|x| {
                u.lang
                    .base_name(x)
                    .map(|b| name_key(u.lang, b).into_owned())
            })
        })
        .collect()
}

/// Removes the names `vs` from the `map(tofrom: …)` clauses plan `p` appends.
fn unmap_appended(p: &mut Plan, vs: &HashSet<&str>) {
    let Action::Rewrite(rw) = &mut p.action else {
        return;
    };
    if vs.is_empty() {
        return;
    }
    rw.append.retain_mut(|a| {
        let Some(list) = a
            .arg
            .as_deref()
            .filter(|_| a.name == "map")
            .and_then(|x| x.strip_prefix("tofrom: "))
        else {
            return true;
        };
        let kept: Vec<&str> = list.split(", ").filter(|x| !vs.contains(x)).collect();
        if kept.is_empty() {
            return false;
        }
        a.arg = Some(format!("tofrom: {}", kept.join(", ")).into());
        true
    });
}

/// The `scalar-private` note on the loop at `at` for the scalars `names` made private.
pub(crate) fn scalar_private_note(at: usize, names: &[String]) -> Diagnostic {
    let list = names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ");
    let (s, are, them) = if names.len() == 1 {
        ("", "is", "it")
    } else {
        ("s", "are", "them")
    };
    Diagnostic::new(
        at,
        id::SCALAR_PRIVATE,
        format!(
            "scalar{s} {list} from outside the region {are} assigned before being read in each iteration: private to the loop, as OpenACC compilers treat {them} (OpenMP would share {them} among the iterations)"
        ),
    )
}

/// The variables of the `reduction(op:…)`, `lastprivate(…)` and `private(…)` clauses a plan
/// appends.
fn added_clause_names(p: &Plan) -> Vec<String> {
    let Action::Rewrite(rw) = &p.action else {
        return Vec::new();
    };
    rw.append
        .iter()
        .filter_map(|a| {
            let arg = a.arg.as_deref()?;
            let list = match a.name {
                "lastprivate" | "private" => arg,
                "reduction" => arg.split_once(':')?.1,
                _ => return None,
            };
            Some(list.to_string())
        })
        .flat_map(|l| {
            l.split(',')
                .map(|x| x.trim().to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}
