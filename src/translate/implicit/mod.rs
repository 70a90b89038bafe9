//! A post-pass over the plans that uses the semantic facts (`Unit::facts`): OpenACC's
//! implicit data attributes made explicit where OpenMP's differ, pointers that would become
//! zero-length mappings, types that private/reduction cannot take, non-constant launch
//! arguments, and loop nests checked against `collapse`/`tile`.

mod region_clauses;
mod scalar_sharing;

use super::loops::{Decision, LoopInfo};
use super::{Options, TreePlans, Unit};
use crate::diag::Diagnostic;
use crate::directive::Directive;
use crate::hash::{HashSet, SmallSet};
use crate::intent::{Action, ClauseOp, Decl, OmpClause, Plan};
use crate::lang::Language;
use crate::rules::id;
use crate::rules::{Severity, Tables};
use crate::semantic::{RegionVar, VarKind};
use crate::translate::reductions::name_key;
use std::borrow::Cow;

pub(crate) use region_clauses::ClauseNames;
pub(crate) use scalar_sharing::scalar_private_note;
use scalar_sharing::{gang_copies, scalar_races};

/// Name of the `const` copy of a non-constant `num_workers` argument.
pub const NUM_WORKERS: &str = "acc2omp_num_workers";

pub fn apply(u: &Unit, _opts: &Options, dec: &[Option<LoopInfo>], plans: &mut [Plan]) {
    if u.facts.is_none() {
        return;
    }
    let file = FileNames::new(u);
    // Each tree of sites is checked on its own: a file may have 100,000 regions.
    super::by_trees(u, plans, |run, plans| {
        for i in run.clone() {
            typed_clauses(u, i, plans);
        }
        for i in run {
            check(u, i, dec, &file, plans);
        }
    });
}

/// The checks of site `i` after every site's `typed_clauses`.
fn check<'u>(
    u: &'u Unit,
    i: usize,
    dec: &[Option<LoopInfo>],
    file: &FileNames<'u>,
    plans: &mut TreePlans,
) {
    let Some(d) = u.dir(i) else { return };
    if u.is_loop(i) {
        loop_depth(u, i, plans);
        control_variable(u, i, dec, plans);
    }
    if d.compute_kind().is_some() && matches!(plans[i].action, Action::Rewrite(_)) {
        // What the construct's clauses and the data constructs around it map, found once
        // for the checks below.
        let mapped = Mapped {
            here: attributed(u.lang, d, u.tables).into(),
            around: mapped_around(u, i, file),
        };
        implicit_maps(u, i, &mapped, plans);
        scalar_races(u, i, dec, &mapped, plans);
        gang_copies(u, i, dec, &mapped, plans);
        pointers(u, i, &mapped, file, plans);
        launch_arguments(u, i, plans);
    }
}

fn offset_of(u: &Unit, i: usize, item_start: usize) -> usize {
    if u.sites[i].unescaped.is_some() {
        u.at(i)
    } else {
        item_start
    }
}

/// `const` or incomplete variables in `private`/`firstprivate`/`reduction` (Clacc's "Basic
/// Data Sharing"): errors, and the directive stays as it is.
fn typed_clauses(u: &Unit, i: usize, plans: &mut TreePlans) {
    let (Some(d), Some(f)) = (u.dir(i), u.site_facts(i)) else {
        return;
    };
    let mut errors = Vec::new();
    for c in &d.clauses {
        let what = match c.name.as_str() {
            "private" => "private",
            "firstprivate" => "firstprivate",
            "reduction" => "reduction",
            _ => continue,
        };
        for item in c.items() {
            let Some(n) = u.lang.base_name(&item.text) else {
                continue;
            };
            let Some(ty) = f.type_of(n) else { continue };
            let at = offset_of(u, i, item.span().start);
            if ty.incomplete {
                errors.push(Diagnostic::new(at, id::INCOMPLETE_PRIVATE, format!("'{n}' has an incomplete type, so no {what} copy of it can be allocated; the directive is left unchanged")));
            } else if ty.is_const && what != "firstprivate" {
                let why = if what == "private" {
                    "its private copy could never be initialized"
                } else {
                    "the reduction could not update it"
                };
                errors.push(Diagnostic::new(
                    at,
                    id::CONST_PRIVATE,
                    format!("'{n}' is const in '{what}': {why}; the directive is left unchanged"),
                ));
            }
        }
    }
    if errors.is_empty() {
        return;
    }
    let p = &mut plans[i];
    p.unchanged();
    p.diags = errors.into();
    // The enclosing compute construct may carry this loop's lifted reduction: it stays too.
    if let Some(c) = u.compute_of(i).filter(|&c| c != i) {
        let p = &mut plans[c];
        p.unchanged();
        p.diags
            .retain(|d| u.tables.severity(d.rule.as_str(), Severity::Warning) == Severity::Error);
    }
}

/// Base names of the items of `d`'s clauses that give a variable a data attribute, as the
/// language compares names ([`name_key`]: a Fortran clause may spell a name in another case
/// than the statements; look names up by their key too).
pub(super) fn attributed<'d>(l: &dyn Language, d: &'d Directive, t: &Tables) -> Vec<Cow<'d, str>> {
    d.clauses
        .iter()
        .filter(|c| {
            t.clause(&c.name).is_some_and(|r| r.map.is_some())
                || matches!(
                    c.name.as_str(),
                    "deviceptr"
                        | "attach"
                        | "private"
                        | "firstprivate"
                        | "reduction"
                        | "use_device"
                        | "device_resident"
                        | "link"
                )
        })
        .flat_map(|c| c.items().filter_map(|i| l.base_name(&i.text)))
        .map(|b| name_key(l, b))
        .collect()
}

/// Names the directives of the whole file map, found once per file (not once per region:
/// a file may have 100,000 directives).
struct FileNames<'u> {
    /// In `declare` directives.
    declared: HashSet<Cow<'u, str>>,
    /// In `data`, `enter data`, `declare` and `host_data` directives.
    data: HashSet<Cow<'u, str>>,
}

impl<'u> FileNames<'u> {
    fn new(u: &'u Unit) -> Self {
        let mut f = FileNames {
            declared: HashSet::default(),
            data: HashSet::default(),
        };
        for k in 0..u.sites.len() {
            let Some(x) = u.dir(k) else { continue };
            if x.name == "declare" {
                f.declared.extend(attributed(u.lang, x, u.tables));
            }
            if matches!(
                x.name.as_str(),
                "data" | "enter data" | "declare" | "host_data"
            ) {
                f.data.extend(attributed(u.lang, x, u.tables));
            }
        }
        f
    }
}

/// The base names a compute construct's own data clauses name ([`attributed`]) and those
/// mapped around it ([`mapped_around`]), by [`name_key`]. (Sets: each variable of the region
/// asks, and a directive may list thousands of names.)
struct Mapped<'a, 'u> {
    here: SmallSet<Cow<'u, str>>,
    around: Around<'a, 'u>,
}

/// Names mapped by enclosing `data` constructs or a `declare` in the file.
struct Around<'a, 'u> {
    data: SmallSet<Cow<'u, str>>,
    declared: &'a HashSet<Cow<'u, str>>,
}

impl Around<'_, '_> {
    /// Whether they map `key` (a [`name_key`]).
    fn contains(&self, key: &str) -> bool {
        self.data.contains(key) || self.declared.contains(key)
    }
}

fn mapped_around<'a, 'u>(u: &'u Unit, c: usize, file: &'a FileNames<'u>) -> Around<'a, 'u> {
    let mut data = SmallSet::default();
    for a in u.ancestors(c) {
        if let Some(d) = u.dir(a).filter(|d| d.name == "data") {
            data.extend(attributed(u.lang, d, u.tables));
        }
    }
    Around {
        data,
        declared: &file.declared,
    }
}

/// Names in `map(...)` clauses the plan already appends.
fn appended_maps(l: &dyn Language, p: &Plan) -> Vec<String> {
    let Action::Rewrite(rw) = &p.action else {
        return Vec::new();
    };
    rw.append
        .iter()
        .filter(|a| a.name == "map")
        .filter_map(|a| a.arg.as_deref())
        .flat_map(|m| {
            let list = m.rsplit_once(':').map_or(m, |x| x.1);
            list.split(',')
                .filter_map(|x| l.base_name(x).map(|b| name_key(l, b).into_owned()))
        })
        .collect()
}

/// Writes of `v` that change the region's copy: not those inside a nested loop where `v` is
/// that loop's (private) control variable or in its `private` clause.
pub(super) fn region_writes(u: &Unit, c: usize, v: &RegionVar) -> usize {
    let loops: Vec<usize> = std::iter::once(c)
        .chain(u.descendants(c))
        .filter(|&l| u.is_loop(l))
        .collect();
    v.writes()
        .iter()
        .filter(|&&w| {
            !loops.iter().any(|&l| {
                let Some(st) = &u.stmts[l] else { return false };
                if !st.bytes().contains(&w) {
                    return false;
                }
                let d = u.dir(l).expect("loop sites are parsed");
                let control = u
                    .site_facts(l)
                    .and_then(|f| f.loop_shape.as_ref().and_then(|s| s.var.clone()))
                    .or_else(|| {
                        st.for_loop
                            .as_ref()
                            .and_then(|f| f.var.as_deref().map(String::from))
                    });
                control.is_some_and(|x| u.lang.same_name(&x, &v.name))
                    || d.all("private")
                        .any(|p| p.items().any(|x| u.lang.same_name(&x.text, &v.name)))
            })
        })
        .count()
}

/// In `kernels`, OpenACC copies scalars in and out; OpenMP makes them firstprivate. A scalar
/// that a data construct already maps is shared with the device in OpenACC, firstprivate in
/// OpenMP. Either way, a scalar the region writes gets `map(tofrom:)`. So does a variable
/// whose type the syntax alone cannot tell (a typedef from a header not read) that the
/// region assigns as a whole, with `map-type-unknown`: a scalar, structure or array gets
/// what OpenACC does; one the region also subscripts or dereferences may be a pointer,
/// whose map would move only the pointer, and leaves the construct unchanged.
fn implicit_maps(u: &Unit, c: usize, mapped: &Mapped, plans: &mut TreePlans) {
    let (Some(d), Some(f)) = (u.dir(c), u.site_facts(c)) else {
        return;
    };
    let kernels = d.compute_kind() == Some("kernels");
    let Mapped { here, around } = mapped;
    let already: HashSet<String> = appended_maps(u.lang, &plans[c]).into_iter().collect();
    let mut add: Vec<&str> = Vec::new();
    let mut guessed: Vec<&str> = Vec::new();
    for v in &f.vars {
        let n = v.name.as_str();
        let key = name_key(u.lang, n);
        // (C and C++: a Fortran name of no known type is a macro or a function's result
        // typed in its prefix, not a variable of a header's type.)
        let unknown = v.ty.kind == VarKind::Other && !f.exact && u.lang.name() != "Fortran";
        if !(v.ty.kind == VarKind::Scalar || unknown)
            || v.ty.is_const
            || here.contains(&*key)
            || already.contains(&*key)
            || !(kernels || around.contains(&key))
            || region_writes(u, c, v) == 0
        {
            continue;
        }
        if unknown {
            if super::pointer_maps::accessed_through(f, u.src, n) {
                let p = &mut plans[c];
                p.unchanged();
                p.diags.push(Diagnostic::new(
                    u.at(c),
                    id::POINTER_WITHOUT_EXTENT,
                    format!(
                        "the region assigns '{n}' and accesses what it points to, and its type is unknown (this file is translated from syntax alone, without libclang's types): 'kernels' copies a scalar back, which 'map(tofrom: {n})' does only if it is no pointer; the directive is left unchanged; give the compile flags (-p, compile_commands.json) or a data clause for it"
                    ),
                ));
                return;
            }
            guessed.push(n);
        }
        add.push(n);
    }
    if add.is_empty() {
        return;
    }
    if !guessed.is_empty() {
        plans[c].diags.push(Diagnostic::new(
            u.at(c),
            id::MAP_TYPE_UNKNOWN,
            format!(
                "the region assigns {}, whose type is unknown (this file is translated from syntax alone, without libclang's types): mapped 'tofrom', as OpenACC copies a scalar, structure or array back (a pointer would move alone); give the compile flags (-p, compile_commands.json) to have the type checked",
                crate::diag::quoted_names(&guessed)
            ),
        ));
    }
    if let Action::Rewrite(rw) = &mut plans[c].action {
        rw.append
            .push(OmpClause::new("map", format!("tofrom: {}", add.join(", "))));
    }
}

/// A pointer no data clause covers becomes a zero-length array section in OpenMP.
fn pointers(u: &Unit, c: usize, mapped: &Mapped, file: &FileNames, plans: &mut TreePlans) {
    let (Some(d), Some(f)) = (u.dir(c), u.site_facts(c)) else {
        return;
    };
    // `default(present)` here or on an enclosing `data` construct: the user asserts that
    // everything is present, which is exactly what the zero-length mapping relies on.
    let asserts_present = |x: &Directive| {
        x.clauses
            .iter()
            .any(|k| k.name == "default" && k.items().any(|v| v.text == "present"))
    };
    if asserts_present(d)
        || u.ancestors(c)
            .filter_map(|a| u.dir(a))
            .any(|x| x.name == "data" && asserts_present(x))
    {
        return;
    }
    let Mapped { here, around } = mapped;
    for v in &f.vars {
        let n = v.name.as_str();
        let key = name_key(u.lang, n);
        if v.ty.kind != VarKind::Pointer
            || here.contains(&*key)
            || around.contains(&key)
            || file.data.contains(&*key)
        {
            continue;
        }
        let line = u.line_at(v.first_use());
        plans[c].diags.push(Diagnostic::new(
            u.at(c),
            id::IMPLICIT_POINTER,
            format!("pointer '{n}' (used at line {line}) is in no data clause and no data construct of this file maps it: OpenMP maps it as a zero-length array section, so its data must already be on the device; add e.g. 'copy({n}[0:n])'"),
        ));
    }
}

/// Non-constant `num_workers`/`vector_length` (Clacc): a nested worker loop reads a local
/// `const` copy of `num_workers` made before the region, unless the expression is a scalar
/// the region does not write; an unused argument with side effects is still evaluated.
fn launch_arguments(u: &Unit, c: usize, plans: &mut TreePlans) {
    let (Some(d), Some(f)) = (u.dir(c), u.site_facts(c)) else {
        return;
    };
    let single = |name: &str| {
        d.find(name)
            .filter(|k| k.items().count() == 1)
            .and_then(|k| k.items().next().map(|x| x.text.trim().to_string()))
    };
    // The default profile's `thread_limit` evaluates `num_workers` once, as OpenACC does.
    let limited = matches!(&plans[c].action, Action::Rewrite(rw)
        if rw.ops.iter().any(|o| matches!(o, ClauseOp::Replace(t) if t.iter().any(|c| c.name == "thread_limit"))));
    if let Some(nw) = single("num_workers")
        && !u.lang.is_int_literal(&nw)
        && !limited
    {
        let repeated = OmpClause::new("num_threads", nw.clone());
        let users: Vec<usize> = std::iter::once(c)
            .chain(u.descendants(c))
            .filter(|&l| u.is_loop(l))
            .filter(|&l| {
                let p = &plans[l];
                matches!(&p.action, Action::Rewrite(rw) if rw.append.contains(&repeated))
                    || p.diags.iter().any(|x| x.rule == id::NUM_WORKERS_IGNORED)
            })
            .collect();
        if users.is_empty() {
            if u.lang.has_side_effects(&nw) {
                plans[c].scope.decls.push(Decl::Evaluate(nw.clone()));
            }
        } else {
            let stable = !u.lang.has_side_effects(&nw)
                && !nw.contains(['[', '*', '.', '-', '&'])
                && u.lang.identifiers(&nw).iter().all(|n| {
                    f.type_of(n).is_some_and(|t| t.kind == VarKind::Scalar)
                        && f.var(n).is_none_or(|v| v.writes().is_empty())
                });
            if !stable {
                plans[c].scope.decls.push(Decl::Const {
                    name: NUM_WORKERS,
                    value: nw.clone(),
                });
                let local = OmpClause::new("num_threads", NUM_WORKERS);
                for l in users {
                    let p = &mut plans[l];
                    let ignored = p.diags.iter().any(|x| x.rule == id::NUM_WORKERS_IGNORED);
                    p.diags.retain(|x| x.rule != id::NUM_WORKERS_IGNORED);
                    if let Action::Rewrite(rw) = &mut p.action {
                        match rw.append.iter().position(|a| *a == repeated) {
                            Some(k) => rw.append[k] = local.clone(),
                            None if ignored => rw.append.push(local.clone()),
                            None => {}
                        }
                    }
                }
            }
        }
    }
    if let Some(vl) = single("vector_length")
        && !u.lang.is_int_literal(&vl)
        && u.lang.has_side_effects(&vl)
    {
        plans[c].scope.decls.push(Decl::Evaluate(vl.clone()));
        let warned = std::iter::once(c).chain(u.descendants(c)).any(|l| {
            plans[l]
                .diags
                .iter()
                .any(|x| x.rule == id::VECTOR_LENGTH_IGNORED)
        });
        if !warned {
            plans[c].diags.push(Diagnostic::new(
                u.at(c),
                id::VECTOR_LENGTH_IGNORED,
                format!("vector_length '{vl}' is not an integer constant and is ignored (it is still evaluated)"),
            ));
        }
    }
}

/// The loops directive `d` of unit `u` makes one iteration space: `collapse(n)` with `n` a
/// constant, or the items of `tile` with the clause's offset. None for neither, or a count
/// that is not a constant.
pub(super) fn nest_count(u: &Unit, d: &Directive) -> Option<(usize, Option<usize>)> {
    if let Some(c) = d.find("collapse") {
        let dialect = crate::directive::Dialect::of_language(u.lang.name());
        let n = crate::directive::count::constant(&c.items().last()?.text, dialect)?;
        Some((usize::try_from(n).ok()?, None))
    } else {
        let c = d.find("tile")?;
        Some((c.items().count(), Some(c.span().start)))
    }
}

/// With exact facts, `collapse(n)`/`tile` are checked against the nest libclang sees (macros
/// included), replacing the syntactic check when the two differ.
fn loop_depth(u: &Unit, i: usize, plans: &mut TreePlans) {
    let (Some(d), Some(f), Some(t)) = (u.dir(i), u.site_facts(i), u.nest_token(i)) else {
        return;
    };
    let Some(shape) = f.loop_shape.as_ref().filter(|_| f.exact) else {
        return;
    };
    let Some((n, tile)) = nest_count(u, d) else {
        return;
    };
    let syntactic = u.syntax.nest_depth(t, n);
    let exact = shape.depth.min(n);
    if syntactic == exact || plans[i].action == Action::Unchanged {
        return;
    }
    plans[i].diags.retain(|x| x.rule != id::COLLAPSE_DEPTH);
    if exact < n {
        let diag = match tile {
            Some(at) => Diagnostic::new(
                offset_of(u, i, at),
                id::COLLAPSE_DEPTH,
                format!("'tile' names {n} loops but only {exact} are perfectly nested here"),
            ),
            None => Diagnostic::new(
                u.at(i),
                id::COLLAPSE_DEPTH,
                format!("'collapse({n})' but only {exact} perfectly nested loops follow"),
            ),
        };
        plans[i].diags.push(diag);
    }
}

/// A vector loop whose control variable is assigned gets a local copy of it; libclang's
/// view of the `for` init (through macros) overrides the syntactic one.
fn control_variable(u: &Unit, i: usize, dec: &[Option<LoopInfo>], plans: &mut TreePlans) {
    let Some(Some(info)) = dec.get(i) else { return };
    // A bare `kernels` loop's variable is lastprivate (`loops::loop_part`), never a copy.
    if u.bare_loop(i).is_some() {
        return;
    }
    // Vector loops and loops that became sequential (their directive removed).
    let copies = match (&info.decision, &plans[i].action) {
        (Decision::Par(l), Action::Rewrite(_)) => l.vector,
        (_, Action::Remove) => true,
        _ => false,
    };
    let Some(f) = u.site_facts(i).filter(|f| f.exact) else {
        return;
    };
    if !copies {
        return;
    }
    let Some(shape) = &f.loop_shape else { return };
    let local = |declared: bool, var: Option<&str>| var.filter(|_| !declared).map(String::from);
    let syn = u.stmts[i]
        .as_ref()
        .and_then(|s| s.for_loop.as_ref())
        .and_then(|fl| local(fl.declared, fl.var.as_deref()));
    let exact = local(shape.declared, shape.var.as_deref());
    if syn == exact {
        return;
    }
    let p = &mut plans[i];
    let private = u.dir(i).is_some_and(|d| {
        d.all("private")
            .any(|c| c.items().any(|x| Some(x.text.as_str()) == syn.as_deref()))
    });
    if let Some(s) = syn.filter(|_| !private) {
        p.scope.locals.retain(|x| *x != s);
    }
    if let Some(e) = exact
        && !p.scope.locals.contains(&e)
    {
        p.scope.locals.push(e);
    }
}
