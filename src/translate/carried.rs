//! Gang-private values carried from one gang loop to a later one of the same `parallel`
//! construct. OpenACC gives each gang its own copy of a variable the construct makes private
//! (`private`, `firstprivate`, a scalar without a data clause) or that its region declares,
//! and keeps it for the whole region: a program can write it in one gang loop and read it in
//! a later one, relying on each gang running the matching iterations of both
//! (`gang(static:1)` with as many gangs as iterations). Under `target teams` that copy is one
//! per team, and OpenMP fixes neither how many teams run (`num_teams` is an upper bound, and
//! the runtime may run fewer) nor which team runs which iteration of a `distribute` loop
//! beyond its `dist_schedule`: a team reads the value another iteration left. No OpenMP
//! construct keeps the pairing, so such a construct is left unchanged with an error
//! (`gang-private-carried`), and the guard before it stops an OpenMP build.
//!
//! The test is conservative: a value counts as carried unless the later loop's iteration
//! first assigns the variable a value that does not read it, in a statement of its own that
//! every iteration runs (directly in the loop's body, not under a condition or in an inner
//! loop). Not looked at: a value written by a later gang loop and read by an earlier one in
//! the next iteration of a sequential loop around both, and `kernels` constructs (their
//! gang-redundant code is not one copy per gang).

use super::implicit::ClauseNames;
use super::loops::{Decision, Decisions};
use super::reductions::name_key;
use super::{Mode, Unit};
use crate::diag::Diagnostic;
use crate::facts::RegionVar;
use crate::hash::{HashMap, HashSet};
use crate::intent::{Action, Plan};
use crate::rules::{Severity, id};
use crate::semantic::VarKind;
use std::borrow::Cow;
use std::ops::Range;

/// A gang-private variable whose value a later gang loop reads from an earlier one.
#[derive(Debug, PartialEq, Eq)]
pub struct Carried {
    /// The variable, as the later loop spells it.
    pub var: String,
    /// The gang loop that writes it, and the one that reads it (sites).
    pub writer: usize,
    pub reader: usize,
    /// Where the later loop first uses it (byte offset).
    pub read_at: usize,
}

/// Phase **carried**: every `parallel` construct mapped to `target teams` with a carried
/// gang-private value is left unchanged with the error.
pub fn refuse(u: &Unit, dec: &Decisions, plans: &mut [Plan]) {
    // Names in the file's `declare` directives: present, shared by the gangs.
    let declared: Vec<Cow<str>> = (0..u.sites.len())
        .filter_map(|k| u.dir(k))
        .filter(|x| x.name == "declare")
        .flat_map(|x| super::implicit::attributed(u.lang, x, u.tables))
        .collect();
    for (c, p) in plans.iter_mut().enumerate() {
        if !matches!(p.action, Action::Rewrite(_)) {
            continue;
        }
        let Some(found) = carried(u, dec, c, &declared) else {
            continue;
        };
        let message = format!(
            "'{}' is private to each gang of this construct: the gang loop at line {} writes it, and the gang loop at line {} may read it before assigning it (its first use there, here, is not an assignment that every iteration runs first). That relies on each gang running the matching iterations of both loops and keeping its copy between them. Under 'target teams' the copy is one per team, and OpenMP fixes neither the number of teams ('num_teams' is an upper bound) nor which team runs which iteration, so a team would read the value another iteration left. The construct is left unchanged: carry the value in an array indexed by the iteration, or compute it in the loop that reads it",
            found.var,
            u.line(found.writer),
            u.line(found.reader),
        );
        p.unchanged();
        p.diags
            .retain(|d| u.tables.severity(d.rule.as_str(), Severity::Warning) == Severity::Error);
        p.diags.push(Diagnostic::new(
            found.read_at,
            id::GANG_PRIVATE_CARRIED,
            message,
        ));
    }
}

/// The first gang-private value compute construct `c` carries from one gang loop to a later
/// one, if it is a `parallel` construct (not combined) mapped to `target teams` with more
/// than one gang. `declared`: the names in the file's `declare` directives.
pub fn carried(u: &Unit, dec: &Decisions, c: usize, declared: &[Cow<str>]) -> Option<Carried> {
    let d = u.dir(c)?;
    if d.compute_kind() != Some("parallel") || d.is_combined() || dec.mode(c) != Mode::Teams {
        return None;
    }
    // One gang runs every iteration of both loops, as one team does.
    if d.find("num_gangs")
        .and_then(|g| g.arg_text())
        .is_some_and(|g| g.trim() == "1")
    {
        return None;
    }
    let region = u.stmts[c].as_ref()?;
    // The gang loops of the region, in source order (gang loops do not nest).
    let mut gangs: Vec<usize> = u
        .descendants(c)
        .into_iter()
        .filter(|&l| {
            u.is_loop(l)
                && matches!(dec[l].as_ref().map(|x| &x.decision), Some(Decision::Par(lv)) if lv.gang)
        })
        .collect();
    gangs.sort_by_key(|&l| u.at(l));
    if gangs.len() < 2 {
        return None;
    }
    let names = Names::new(u, c, declared);
    let mut writers = Writers::default();
    for (k, &reader) in gangs.iter().enumerate().skip(1) {
        let (Some(rf), Some(rs)) = (u.site_facts(reader), u.stmts[reader].as_ref()) else {
            continue;
        };
        for v in &rf.vars {
            let shared = !gang_private(u, &names, &region.bytes(), v);
            #[cfg(test)]
            assert_eq!(
                shared,
                !tests::gang_private(u, c, &region.bytes(), v, declared)
            );
            if shared || loop_private(u, &names, reader, v) {
                continue;
            }
            if written_first(u, rs, v) || private_inside(u, &names, reader, rs, v) {
                continue;
            }
            let writer = writers.first(u, &names, &gangs[..k], v, u.at(reader));
            #[cfg(test)]
            assert_eq!(
                writer,
                tests::first_writer(u, &names, &gangs[..k], v, u.at(reader))
            );
            if let Some(writer) = writer {
                return Some(Carried {
                    var: v.name.to_string(),
                    writer,
                    reader,
                    read_at: v.first_use(),
                });
            }
        }
    }
    None
}

/// The names the clauses around a construct's gang loops give a data attribute, listed once
/// per construct: a clause may list thousands of names, and each variable of each gang loop
/// asks about them.
struct Names<'u> {
    /// The construct's `private` and `firstprivate` names.
    construct: ClauseNames<'u>,
    /// Names with any other data attribute on the construct or a `data` construct around it,
    /// or in the file's `declare` directives ([`name_key`]s).
    shared: HashSet<Cow<'u, str>>,
    /// Per loop in the construct, its `private`, `firstprivate` and `reduction` names.
    loops: HashMap<usize, ClauseNames<'u>>,
}

impl<'u> Names<'u> {
    fn new(u: &'u Unit, c: usize, declared: &[Cow<'u, str>]) -> Self {
        let attributed = |k: usize| {
            u.dir(k)
                .map(|x| super::implicit::attributed(u.lang, x, u.tables))
                .unwrap_or_default()
        };
        let shared = attributed(c)
            .into_iter()
            .chain(
                u.ancestors(c)
                    .filter(|&a| u.dir(a).is_some_and(|x| x.name == "data"))
                    .flat_map(attributed),
            )
            .chain(declared.iter().cloned())
            .collect();
        let loops = u
            .descendants(c)
            .into_iter()
            .filter(|&l| u.is_loop(l))
            .map(|l| (l, ClauseNames::new(u.lang, u.dir(l))))
            .collect();
        Names {
            construct: ClauseNames::new(u.lang, u.dir(c)),
            shared,
            loops,
        }
    }

    /// Whether a `private`, `firstprivate` or `reduction` clause of loop `l` names `v`.
    fn loop_names(&self, l: usize, v: &str) -> bool {
        self.loops
            .get(&l)
            .is_some_and(|n| n.named(&["private", "firstprivate", "reduction"], v))
    }
}

/// Whether `v` (used by a gang loop of the construct whose names are `names` and whose region
/// is `region`) has one copy per gang: declared in the region, named in the construct's
/// `private` or `firstprivate`, or a scalar that no data clause of the construct or of a
/// `data` construct around it names, nor a `declare` directive (OpenACC makes it
/// firstprivate).
fn gang_private(u: &Unit, names: &Names, region: &Range<usize>, v: &RegionVar) -> bool {
    if v.decl().is_some_and(|o| region.contains(&o)) {
        return true;
    }
    if names.construct.named(&["private", "firstprivate"], &v.name) {
        return true;
    }
    // Any other data attribute on the construct or a `data` construct around it shares it.
    let shared = names.shared.contains(&name_key(u.lang, &v.name));
    let scalar = v.ty.kind == VarKind::Scalar && !v.ty.is_const;
    scalar && !shared
}

/// Whether loop `l`'s own clauses or control variable make `v` private to it.
fn loop_private(u: &Unit, names: &Names, l: usize, v: &RegionVar) -> bool {
    let same = |n: &str| u.lang.same_name(n, &v.name);
    let control = u
        .site_facts(l)
        .and_then(|f| f.loop_shape.as_ref())
        .and_then(|s| s.var.as_deref())
        .or_else(|| {
            u.stmts[l]
                .as_ref()
                .and_then(|s| s.for_loop.as_ref())
                .and_then(|f| f.var.as_deref())
        });
    let own = names.loop_names(l, &v.name);
    #[cfg(test)]
    assert_eq!(own, tests::loop_names(u, l, v));
    control.is_some_and(same) || own
}

/// The variables the gang loops of a construct write (outside the loops that make them
/// private to them), read once per loop as later loops ask (a region of thousands of gang
/// loops asks about the loops before each).
#[derive(Default)]
struct Writers {
    /// How many of the gang loops (in source order) have been read.
    read: usize,
    /// The gang loops (positions among them) that write a variable, by name (folded where
    /// the language folds case) and declaration, ascending.
    by_var: HashMap<(String, Option<usize>), Vec<usize>>,
    /// The gang loops without facts: counted as writing every variable.
    unknown: Vec<usize>,
}

impl Writers {
    /// The first of `gangs` that ends before offset `before` and writes `v`.
    fn first(
        &mut self,
        u: &Unit,
        names: &Names,
        gangs: &[usize],
        v: &RegionVar,
        before: usize,
    ) -> Option<usize> {
        while self.read < gangs.len() {
            self.add(u, names, self.read, gangs[self.read]);
            self.read += 1;
        }
        let ends_before = |p: &&usize| {
            u.stmts[gangs[**p]]
                .as_ref()
                .is_some_and(|ws| ws.bytes().end <= before)
        };
        let listed = self
            .by_var
            .get(&var_key(u, v))
            .and_then(|l| l.iter().find(ends_before));
        let unknown = self.unknown.iter().find(ends_before);
        listed.into_iter().chain(unknown).min().map(|&p| gangs[p])
    }

    /// Notes what gang loop `w`, the `p`th, writes.
    fn add(&mut self, u: &Unit, names: &Names, p: usize, w: usize) {
        let Some(f) = u.site_facts(w) else {
            self.unknown.push(p);
            return;
        };
        let mut inner: Option<Vec<usize>> = None;
        let mut seen = HashSet::default();
        for x in &f.vars {
            // A variable's first entry stands for it.
            let key = var_key(u, x);
            if !seen.insert(key.clone()) || x.writes().is_empty() {
                continue;
            }
            let inner = inner.get_or_insert_with(|| {
                std::iter::once(w)
                    .chain(u.descendants(w))
                    .filter(|&k| u.is_loop(k))
                    .collect()
            });
            if written_outside(u, names, x, inner) {
                self.by_var.entry(key).or_default().push(p);
            }
        }
    }
}

/// What tells a variable from the others: its name as the language compares names, and its
/// declaration.
fn var_key(u: &Unit, v: &RegionVar) -> (String, Option<usize>) {
    let name = if u.lang.folds_case() {
        v.name.as_str().to_ascii_lowercase()
    } else {
        v.name.to_string()
    };
    (name, v.decl())
}

/// Whether variable `x` of a gang loop's facts is written there outside the loops that make
/// it private to them (among `inner`, the gang loop and the loops in it).
fn written_outside(u: &Unit, names: &Names, x: &RegionVar, inner: &[usize]) -> bool {
    let loops: Vec<usize> = inner
        .iter()
        .copied()
        .filter(|&k| loop_private(u, names, k, x))
        .collect();
    // Only writes spelled here: a macro's expansion reports other positions (a parameter
    // that a macro names reads as written where the macro is used).
    let spelled = |at: usize| {
        u.src.get(at..).is_some_and(|r| {
            r.get(..x.name.len())
                .is_some_and(|w| u.lang.same_name(w, &x.name))
                && !r[x.name.len()..].starts_with(|ch: char| ch.is_alphanumeric() || ch == '_')
        })
    };
    x.writes().iter().any(|&at| {
        spelled(at)
            && !loops
                .iter()
                .any(|&k| u.stmts[k].as_ref().is_some_and(|s| s.bytes().contains(&at)))
    })
}

/// Whether every iteration of the loop of statement `s` assigns `v` before any other use:
/// its first use starts a statement of the loop's body (or of plain blocks in it) that is
/// neither a loop nor holds other statements, or is the init of a plain loop there whose
/// control variable it is, and assigns `v` a value that does not read it.
fn written_first(u: &Unit, s: &crate::region::Stmt, v: &RegionVar) -> bool {
    let Some(f) = s.for_loop.as_ref() else {
        return false;
    };
    let sx = &u.syntax;
    let Some(t) = sx.token_starting_at(v.first_use()) else {
        return false;
    };
    if !f.body().contains(&t) {
        return false;
    }
    let Some(stmt) = sx.statement_holding(f.body(), t) else {
        return false;
    };
    if stmt.is_empty() {
        return false;
    }
    let end = sx.token_range(stmt.end - 1).end;
    // The init of a plain loop of the body that assigns it (`for (i = j; …)`: it runs
    // whenever the loop statement does).
    let init = sx.site_at(stmt.start).is_none()
        && sx.loop_at(stmt.start).is_some_and(|l| {
            !l.declared
                && l.var
                    .as_deref()
                    .is_some_and(|n| u.lang.same_name(n, &v.name))
        })
        && sx.first_mention_in_loop_init(stmt.clone(), &v.name);
    if init {
        return sx.assigned_before_read(v.first_use()..end, &v.name);
    }
    if stmt.start != t
        || sx.loop_at(t).is_some()
        || sx.site_at(t).is_some()
        || !sx.nested_statements(t).is_empty()
    {
        return false;
    }
    sx.assigned_before_read(sx.token_range(stmt.start).start..end, &v.name)
}

/// Whether loop `l` (statement `s`) uses `v` only inside one loop in it that makes `v` private
/// to itself (its control variable, or a clause).
fn private_inside(
    u: &Unit,
    names: &Names,
    l: usize,
    s: &crate::region::Stmt,
    v: &RegionVar,
) -> bool {
    u.descendants(l)
        .into_iter()
        .filter(|&k| u.is_loop(k) && loop_private(u, names, k, v))
        .filter_map(|k| u.stmts[k].as_ref())
        .find(|ks| ks.bytes().contains(&v.first_use()))
        .is_some_and(|ks| !u.syntax.mentions_outside(s.toks(), &ks.bytes(), &v.name))
}

#[cfg(test)]
mod tests;
