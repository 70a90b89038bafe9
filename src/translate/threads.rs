//! Where a team's threads go in the default profile. The seeds' mapping (the `clacc`
//! profile) opens a `parallel for` region for each worker loop inside a `distribute`
//! iteration: a fork and join per gang iteration, which costs more than the loop's work on a
//! CPU, and leaves a gang loop without inner worker loops on one thread of each team. When a
//! gang loop's nest allows it, the default profile moves the threads to the gang loop
//! instead: `distribute parallel for` (with `collapse(2)` over a perfectly nested worker
//! loop), the worker loops inside run sequentially on their thread and the vector loops
//! become `simd`. A gang iteration then runs whole on one thread, which computes what
//! OpenACC computes as long as nothing the iteration writes is shared by the threads of a
//! team where OpenACC gives each gang its own copy; the checks below make sure of that, and
//! the scalars a gang iteration assigns before reading (one copy per gang in OpenACC) become
//! `private` to the thread.

use super::implicit::ClauseNames;
use super::loops::{Decision, Levels, LoopInfo, calls_runtime};
use super::reductions::name_key;
use super::{Mode, Options, Unit};
use crate::hash::HashSet;
use crate::intent::{Action, OmpClause, Plan};
use crate::profile::Profile;
use crate::rules::id;
use crate::semantic::VarKind;
use std::borrow::Cow;
use std::cell::OnceCell;

/// How the threads of gang loop `g` are placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hoist {
    /// The gang loop that takes the threads.
    pub gang: usize,
    /// A perfectly nested worker loop collapsed into it (its directive is removed).
    pub collapsed: Option<usize>,
    /// `private` variables per loop site of the nest (the gang loop, its vector loops):
    /// scalars from outside that every gang iteration assigns before reading them.
    pub private: Vec<(usize, Vec<String>)>,
}

/// Moves the threads of every eligible gang loop nest to its gang loop (default profile):
/// updates the decisions and returns the nests changed.
pub fn hoist(u: &Unit, opts: &Options, dec: &mut [Option<LoopInfo>]) -> Vec<Hoist> {
    let mut out = Vec::new();
    if opts.profile != Profile::Default || routine_gang_in_file(u) {
        return out;
    }
    let mut routines = None;
    // Names that `declare` and `enter data` directives make present: shared on the device.
    let mut present: Option<HashSet<Cow<str>>> = None;
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
        // (A gang loop without worker or vector loops inside takes the threads too: in
        // OpenACC each of its iterations runs on one worker and one vector lane of a gang.)
        // A worker or vector routine called in the nest expects the team's threads (on one
        // thread its loops run sequentially).
        let routines = routines.get_or_insert_with(|| super::routines::Routines::of(u));
        if routines.calls_threaded_routine(u, g) {
            continue;
        }
        let present = present.get_or_insert_with(|| present_in_file(u));
        let Some(private) = eligible(u, g, &inner, dec, present) else {
            continue;
        };
        let collapsed = collapsible(u, g, &inner, dec);
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
            collapsed,
            private,
        });
    }
    out
}

/// Names in the data clauses of the file's `declare` and `enter data` directives, as the
/// language compares them ([`name_key`]).
fn present_in_file<'u>(u: &'u Unit) -> HashSet<Cow<'u, str>> {
    (0..u.sites.len())
        .filter_map(|k| u.dir(k))
        .filter(|d| matches!(d.name.as_str(), "declare" | "enter data"))
        .flat_map(|d| super::implicit::attributed(u.lang, d, u.tables))
        .collect()
}

/// The names the data clauses of compute construct `c` and of the `data` constructs around
/// it name ([`super::implicit::attributed`]), found once per gang loop: a clause may list
/// thousands, and each variable of the loop asks.
fn data_names<'u>(u: &'u Unit, c: Option<usize>) -> HashSet<Cow<'u, str>> {
    let Some(c) = c else {
        return HashSet::default();
    };
    std::iter::once(c)
        .chain(
            u.ancestors(c)
                .filter(|&a| u.dir(a).is_some_and(|x| x.name == "data")),
        )
        .filter_map(|k| u.dir(k))
        .flat_map(|x| super::implicit::attributed(u.lang, x, u.tables))
        .collect()
}

/// A `routine gang` function has a `distribute` loop, which may not run inside `parallel`.
fn routine_gang_in_file(u: &Unit) -> bool {
    (0..u.sites.len()).any(|i| {
        u.dir(i)
            .is_some_and(|d| d.name == "routine" && d.has("gang"))
    })
}

/// Whether the nest of gang loop `g` (its loop sites `inner`) may run each gang iteration on
/// one thread of a team, and if so the `private` clauses that needs (see [`Hoist::private`]).
fn eligible(
    u: &Unit,
    g: usize,
    inner: &[usize],
    dec: &[Option<LoopInfo>],
    present: &HashSet<Cow<str>>,
) -> Option<Vec<(usize, Vec<String>)>> {
    let (d, stmt, facts) = (u.dir(g)?, u.stmts[g].as_ref()?, u.site_facts(g)?);
    let f = stmt.for_loop.as_ref()?;
    // Only loops and `atomic` inside (and the end directives that close them, or `g`: a
    // statement's range takes its end directive); no OpenMP runtime call (thread numbers
    // change).
    let others = u.descendants(g).into_iter().any(|k| {
        u.dir(k).is_none_or(|x| {
            !(matches!(x.name.as_str(), "loop" | "atomic" | "cache") || x.name.starts_with("end "))
        })
    });
    if others || calls_runtime(u, g) {
        return None;
    }
    let c = dec[g].as_ref().and_then(|x| x.compute);
    let cd = c.and_then(|c| u.dir(c));
    // The clause names of the gang loop, the construct and the inner loops, by name (lists
    // may name thousands of variables), each found when first asked.
    let gang_names = ClauseNames::new(u.lang, Some(d));
    let construct_names = OnceCell::new();
    let shared_names = OnceCell::new();
    let inner_names: Vec<OnceCell<ClauseNames>> = inner.iter().map(|_| OnceCell::new()).collect();
    // (`at`: the position of the loop in `inner`.)
    let inner_named = |at: usize, clauses: &[&str], v: &str| {
        inner_names[at]
            .get_or_init(|| ClauseNames::new(u.lang, u.dir(inner[at])))
            .named(clauses, v)
    };
    // Loops that turn sequential must not carry a reduction or `private` that a vector loop
    // inside them needs, and their `private` variables become local copies (not possible
    // for an array section, which would stay shared by the threads).
    for &k in inner {
        let Some(Decision::Par(l)) = dec[k].as_ref().map(|x| &x.decision) else {
            continue;
        };
        if l.vector {
            continue;
        }
        let kd = u.dir(k);
        let sections = kd.is_some_and(|x| {
            x.all("private")
                .any(|c| c.items().any(|it| !u.lang.is_identifier(&it.text)))
        });
        if sections {
            return None;
        }
        let reduces = kd.is_some_and(|x| x.has("reduction") || x.has("private"));
        let par_inside = u
            .descendants(k)
            .into_iter()
            .any(|j| matches!(dec[j].as_ref().map(|x| &x.decision), Some(Decision::Par(_))));
        if reduces && par_inside {
            return None;
        }
    }
    let stmt_of = |k: usize| u.stmts[k].as_ref().map(|s| s.bytes());
    let within = |k: usize, w: usize| stmt_of(k).is_some_and(|b| b.contains(&w));
    let assigned = |k: usize| {
        u.stmts[k]
            .as_ref()
            .and_then(|s| s.for_loop.as_ref())
            .filter(|f| !f.declared)
            .and_then(|f| f.var.as_deref())
    };
    // The loops that stay `simd` once the threads move (with their positions in `inner`).
    let vector: Vec<(usize, usize)> = inner
        .iter()
        .copied()
        .enumerate()
        .filter(
            |&(_, k)| matches!(dec[k].as_ref().map(|x| &x.decision), Some(Decision::Par(l)) if l.vector),
        )
        .collect();
    let region = c.and_then(|c| u.stmts[c].as_ref());
    let parallel = cd.and_then(|x| x.compute_kind()) == Some("parallel");
    let mut private: Vec<(usize, Vec<String>)> = Vec::new();
    let mut add = |k: usize, v: &str| match private.iter_mut().find(|(x, _)| *x == k) {
        Some((_, names)) => names.push(v.to_string()),
        None => private.push((k, vec![v.to_string()])),
    };
    // (Fortran compares names without case: a clause or a `do` may spell a name otherwise.)
    let same = |a: Option<&str>, v: &str| a.is_some_and(|a| u.lang.same_name(a, v));
    for v in &facts.vars {
        let key = name_key(u.lang, &v.name);
        let own =
            same(f.var.as_deref(), &v.name) || gang_names.named(&["private", "reduction"], &v.name);
        // Declared in the compute construct around the gang loop, or private to each gang
        // there: one copy per team, which the team's threads would share.
        let per_gang = v.decl().is_some_and(|o| {
            region.is_some_and(|r| r.bytes().contains(&o) && !stmt.bytes().contains(&o))
        }) || (c != Some(g)
            && construct_names
                .get_or_init(|| ClauseNames::new(u.lang, cd))
                .named(&["private", "firstprivate"], &v.name));
        let mutable = !v.ty.is_const && (v.ty.kind != VarKind::Scalar || !v.writes().is_empty());
        if per_gang && mutable && !own {
            return None;
        }
        // (An array's or a structure's writes are to its elements and members: data that
        // OpenACC shares among the gangs too.)
        if v.writes().is_empty()
            || own
            || matches!(v.ty.kind, VarKind::Array { .. } | VarKind::Struct)
        {
            continue;
        }
        // Written only inside inner loops that give it a local copy: as their control
        // variable (sequential loops and `simd` loops whose `for` assigns it) or `private`.
        let loop_local = v.writes().iter().all(|&w| {
            inner.iter().enumerate().any(|(at, &k)| {
                within(k, w)
                    && (same(assigned(k), &v.name) || inner_named(at, &["private"], &v.name))
            })
        });
        if loop_local {
            continue;
        }
        // Otherwise a scalar of a `parallel` construct that no data clause shares (OpenACC
        // gives each gang its own copy) and every gang iteration assigns before reading it:
        // one copy per thread computes the same. In a construct of several statements it
        // must not be used outside the gang loop (the copy a gang keeps after the loop).
        let used_around = region.is_some_and(|r| {
            c != Some(g) && u.syntax.mentions_outside(r.toks(), &stmt.bytes(), &v.name)
        });
        let shared =
            shared_names.get_or_init(|| data_names(u, c)).contains(&key) || present.contains(&key);
        let gang_private = parallel
            && v.ty.kind == VarKind::Scalar
            && !v.ty.is_const
            && !shared
            && !used_around
            && u.syntax.assigned_before_read(stmt.bytes(), &v.name);
        if !gang_private {
            return None;
        }
        add(g, &v.name);
        // A `simd` loop writing it needs its own copy per lane too, unless a clause of the
        // loop already covers it.
        for &(at, k) in &vector {
            if !v.writes().iter().any(|&w| within(k, w))
                || inner_named(at, &["private", "reduction"], &v.name)
                || same(assigned(k), &v.name)
            {
                continue;
            }
            match stmt_of(k) {
                Some(b) if u.syntax.assigned_before_read(b.clone(), &v.name) => add(k, &v.name),
                _ => return None,
            }
        }
    }
    Some(private)
}

/// The worker loop perfectly nested in gang loop `g` that can be collapsed into it: the only
/// loop site directly inside, decided worker level only (explicitly or as a loop without
/// levels), no clause besides `worker` (without a count) and `independent`, its bounds not
/// using the gang loop's variable. OpenMP makes the variables of collapsed loops private, so
/// one its `for` assigns needs no local copy (which would break the perfect nest); libclang
/// must read the `for` as the tokens do.
fn collapsible(u: &Unit, g: usize, inner: &[usize], dec: &[Option<LoopInfo>]) -> Option<usize> {
    let d = u.dir(g)?;
    if d.has("collapse") || d.has("tile") {
        return None;
    }
    let outer = u.stmts[g].as_ref()?.for_loop.as_ref()?;
    let gvar = outer.var.as_deref()?;
    let t = u.nest_token(g)?;
    if u.syntax.nest_depth(t, 2) < 2 {
        return None;
    }
    let k = *inner.first()?;
    let kd = u.dir(k)?;
    let f = u.stmts[k].as_ref()?.for_loop.as_ref()?;
    let header_uses_g = u.syntax.header_mentions(f, &[gvar]).is_some();
    let inner_of_outer = u.syntax.inner_loop(outer);
    let nested_here = inner_of_outer.is_some_and(|x| x.for_tok() == f.for_tok());
    let worker_only = matches!(
        dec[k].as_ref().map(|x| &x.decision),
        Some(Decision::Par(l)) if l.worker && !l.gang && !l.vector
    );
    let plain = kd.name == "loop"
        && worker_only
        && kd
            .clauses
            .iter()
            .all(|c| (c.name == "worker" && c.args.is_none()) || c.name == "independent");
    let same_reading = u
        .site_facts(k)
        .and_then(|x| x.loop_shape.as_ref().filter(|_| x.exact))
        .is_none_or(|x| x.declared == f.declared && x.var.as_deref() == f.var.as_deref());
    (nested_here && plain && same_reading && !header_uses_g).then_some(k)
}

/// The plans' side of the moved threads: `collapse(2)` on the gang loop of a collapsed
/// nest (the collapsed loop's variable needs no local copy), the `private` clauses, and a
/// note where a worker count the user gave a loop no longer applies.
pub fn finish(u: &Unit, hoisted: &[Hoist], plans: &mut [Plan]) {
    for h in hoisted {
        if let Some(k) = h.collapsed
            && let Action::Rewrite(rw) = &mut plans[h.gang].action
        {
            rw.append.push(OmpClause::new("collapse", "2"));
            let var = super::loops::assigned_control_var(u, k);
            plans[k].scope.locals.retain(|x| Some(x) != var.as_ref());
        }
        for (k, names) in &h.private {
            if let Action::Rewrite(rw) = &mut plans[*k].action {
                rw.append.push(OmpClause::new("private", names.join(", ")));
                plans[*k]
                    .diags
                    .push(super::implicit::scalar_private_note(u.at(*k), names));
            }
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
                    w.span().start,
                    id::LAUNCH_HINT,
                    format!("'worker({})' is dropped: the threads of the gang loop at line {} run this loop's iterations", w.arg_text().unwrap_or_default(), u.line(h.gang)),
                ));
            }
        }
    }
}
