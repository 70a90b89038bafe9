//! Compute constructs (`parallel`, `serial`, `kernels`, combined) and the data clauses
//! shared with the data directives.

use super::loops::{Decision, Decisions, loop_part};
use super::queues::AsyncWait;
use super::reductions::LiftedBySite;
use super::redundant::GangCountEffect;
use super::{Mode, Options, Unit};
use crate::diag::Diagnostic;
use crate::directive::{Clause, Directive};
use crate::hash::{HashMap, HashSet};
use crate::intent::{Action, ClauseOp, Construct, Insert, OmpClause, Plan, Rewrite};
use crate::lang::{Language, name_key};
use crate::profile::{OmpVersion, Profile};
use crate::rules::Tables;
use crate::rules::id;
use crate::semantic::{SiteFacts, VarKind};
use compact_str::CompactString;
use std::borrow::Cow;

/// Where a data clause appears: compute constructs take `is_device_ptr`, data constructs do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataCtx {
    Compute,
    Data,
    Enter,
    Exit { finalize: bool },
}

/// Translate a data clause (`copy`, `present`, `deviceptr`, ...), or None if `c` is not one.
pub fn data_clause(
    l: &dyn Language,
    c: &Clause,
    ctx: DataCtx,
    opts: &Options,
    facts: Option<&SiteFacts>,
    src: Option<&str>,
    diags: &mut Vec<Diagnostic>,
) -> Option<ClauseOp> {
    let at = c.span().start;
    let rule = opts.tables.clause(&c.name)?;
    let mut map_type = match (c.name.as_str(), ctx) {
        ("delete", DataCtx::Exit { finalize: true }) => "delete",
        ("delete", _) => "release",
        (_, _) => rule.map.as_deref()?,
    };
    let presence = matches!(c.name.as_str(), "present" | "no_create");
    let items = completed_list(l, c, presence, facts, src, diags)?;
    let mut modifiers = Vec::new();
    match c.modifier() {
        Some("zero") => {
            diags.push(Diagnostic::new(at, id::ZERO_MODIFIER, format!("'{}(zero: ...)' has no OpenMP equivalent: zero-fill the data on the device after mapping it", c.spelled())));
            return None;
        }
        Some("always") => modifiers.push("always"),
        Some("alwaysin") if map_type != "from" => modifiers.push("always"),
        Some("alwaysout") if map_type != "to" => modifiers.push("always"),
        Some("capture") => diags.push(Diagnostic::new(
            at,
            id::CLAUSE_IGNORED,
            "the 'capture' modifier has no OpenMP equivalent and is dropped",
        )),
        _ => {}
    }
    match c.name.as_str() {
        "present" => {
            if opts.omp_version >= OmpVersion::V51 {
                modifiers.push("present");
            } else {
                diags.push(Diagnostic::new(at, id::PRESENT_UNCHECKED, "'present' becomes 'map(alloc: ...)': presence is no longer checked at run time (--omp-version 5.1 keeps the check)"));
            }
        }
        "no_create" => diags.push(Diagnostic::new(at, id::NO_CREATE_ALLOC, "'no_create' becomes 'map(alloc: ...)': data that is not present is allocated instead of left on the host")),
        _ => {}
    }
    if ctx == DataCtx::Enter && map_type == "tofrom" {
        map_type = "to";
    }
    // `modifier, …, map-type: items`
    let len = modifiers.iter().map(|m| m.len() + 2).sum::<usize>() + map_type.len() + 2;
    let mut arg = CompactString::with_capacity(len + items.len());
    for m in modifiers {
        arg.push_str(m);
        arg.push_str(", ");
    }
    arg.push_str(map_type);
    // A list that starts on the next line keeps its blank before the continuation.
    arg.push_str(if items.starts_with([' ', '\t']) {
        ":"
    } else {
        ": "
    });
    arg.push_str(&items);
    Some(ClauseOp::to(OmpClause::new("map", arg)))
}

/// The clause's list with its bare pointers completed. A parameter declared as an array
/// (`double t[N]`) is a pointer in C: it gets its declared extent (`t[0:N]`), or, when that is
/// unknown, an error (None). Other pointers in a presence clause (`present(p)`) get a
/// zero-length section, which finds the data they point to as OpenACC compilers do (and
/// attaches the device pointer); elsewhere they move the pointer itself, with a warning, or,
/// when the construct's statement (in `src`) dereferences it, an error (None).
pub fn completed_list(
    l: &dyn Language,
    c: &Clause,
    presence: bool,
    facts: Option<&SiteFacts>,
    src: Option<&str>,
    diags: &mut Vec<Diagnostic>,
) -> Option<String> {
    let pointer = |name: &str| {
        facts
            .and_then(|f| f.type_of(name))
            .filter(|t| t.kind == VarKind::Pointer)
    };
    let mut unknown = Vec::new();
    let mut plain = Vec::new();
    for it in c.items() {
        let Some(t) = pointer(&it.text) else { continue };
        match &t.param_dims {
            Some(_) if presence => {}
            Some(_) if t.param_section(&it.text).is_none() => unknown.push(it.text.as_str()),
            Some(_) => {}
            None if !presence => plain.push(it.text.as_str()),
            None => {}
        }
    }
    if let Some(p) = unknown.first() {
        diags.push(Diagnostic::new(c.span().start, id::ARRAY_PARAMETER_EXTENT, format!("'{p}' is a parameter declared as an array of unknown or non-constant extent, which C makes a pointer: '{}({p})' would move the pointer, not the array; give the extent, e.g. '{}({p}[0:n])'; the directive is left unchanged", c.spelled(), c.spelled())));
        return None;
    }
    let sections: Vec<String> = c
        .items()
        .filter(|_| !presence)
        .filter_map(|it| pointer(&it.text)?.param_section(&it.text))
        .collect();
    if !sections.is_empty() {
        diags.push(Diagnostic::new(c.span().start, id::ARRAY_PARAMETER, format!("parameters declared as arrays are pointers in C: {} maps the declared extent, as the clause means the whole array", crate::diag::quoted_names(&sections))));
    }
    if let Some(d) = super::pointer_maps::unknown_parameter(c, facts, src) {
        diags.push(d);
        return None;
    }
    // Without libclang's facts a name of unknown type may be a pointer (an array parameter
    // whose type a macro spells, as PolyBench's `POLYBENCH_2D`): the map is not justified.
    let guessed: Vec<&str> = match facts {
        Some(f) if !f.exact && !presence => c
            .items()
            .map(|it| it.text.as_str())
            .filter(|n| l.is_identifier(n) && f.type_of(n).is_none_or(|t| t.kind == VarKind::Other))
            .collect(),
        _ => Vec::new(),
    };
    if !guessed.is_empty() {
        diags.push(Diagnostic::new(c.span().start, id::MAP_TYPE_UNKNOWN, format!("the type of {} is unknown (this file is translated from syntax alone, without libclang's types), so '{}' maps it as written: if it is a pointer or a parameter declared as an array, only the pointer moves and the region dereferences a host address on a device with its own memory; give the compile flags (-p, compile_commands.json) or the extent, e.g. '{}({}[0:n])'", crate::diag::quoted_names(&guessed), c.spelled(), c.spelled(), guessed[0])));
    }
    if let Some(d) = super::pointer_maps::dereferenced(c, &plain, facts, src) {
        diags.push(d);
        return None;
    }
    if let Some(p) = plain.first() {
        diags.push(Diagnostic::new(c.span().start, id::POINTER_WITHOUT_SECTION, format!("'{}({p})' moves the pointer '{p}' itself, not the data it points to, so the region would dereference a host address on a device with its own memory; give the extent, e.g. '{}({p}[0:n])'", c.spelled(), c.spelled())));
    }
    Some(c.list_with_suffixes(|it| {
        let t = pointer(&it.text)?;
        if presence {
            // Where the language has no zero-length section, the item stays as written.
            return l
                .zero_length(&it.text)
                .and_then(|z| z.strip_prefix(it.text.as_str()).map(str::to_string));
        }
        t.param_section(&it.text)
            .map(|s| s[it.text.len()..].to_string())
    }))
}

/// `vars` that `mapped` does not name, each once, in the order of their first occurrence:
/// sets, not lists searched per variable, as a clause may name thousands.
fn unmapped_once<'v>(
    l: &dyn Language,
    vars: impl Iterator<Item = &'v str>,
    mapped: &[&str],
) -> Vec<&'v str> {
    // (By `name_key`: a Fortran clause may spell a name in another case.)
    let mapped: HashSet<Cow<str>> = mapped.iter().map(|m| name_key(l, m)).collect();
    let mut listed: HashSet<Cow<str>> = HashSet::default();
    vars.filter(|v| {
        let key = name_key(l, v);
        !mapped.contains(&key) && listed.insert(key)
    })
    .collect()
}

/// Names of the variables (item text) in the data clauses of `d`.
fn mapped_items<'d>(d: &'d Directive, t: &Tables) -> Vec<&'d str> {
    d.clauses
        .iter()
        .filter(|c| t.clause(&c.name).is_some_and(|r| r.map.is_some()) || c.name == "deviceptr")
        .flat_map(|c| c.items().map(|i| i.text.as_str()))
        .collect()
}

/// Plan for a compute or combined construct.
pub fn compute(u: &Unit, i: usize, opts: &Options, dec: &Decisions, lifted: &LiftedBySite) -> Plan {
    let d = u.dir(i).expect("compute on a parsed directive");
    let kind = d.compute_kind().unwrap_or("parallel");
    let at = u.at(i);
    let mut plan = Plan::new(Action::Unchanged);
    let mut diags = Vec::new();
    let mode = dec.mode(i);
    // The loop part of a combined directive, or of the bare loop of a `kernels` construct.
    let mut loop_out = None;
    let mut seq_combined = false;
    let bare = u.bare_loop(i);
    if d.is_combined() || bare.is_some() {
        let info = dec[i].as_ref();
        match info.map(|x| &x.decision) {
            Some(Decision::Par(l)) if mode != Mode::Serial => {
                loop_out = Some(loop_part(u, i, *l, dec, opts))
            }
            _ => {
                seq_combined = d.is_combined();
                if seq_combined {
                    // OpenACC's loop variable is private: the host's stays as it was.
                    plan.scope
                        .locals
                        .extend(super::loops::assigned_control_var(u, i));
                }
                let nested_loops = u.descendants(i).iter().any(|&k| u.is_loop(k));
                if info.is_some_and(|x| x.kernels_unknown) && !nested_loops {
                    let line = match &bare {
                        Some(f) => u.line_at(u.syntax.token_range(f.for_tok()).start),
                        None => u.line(i),
                    };
                    diags.push(super::loops::kernels_sequential(u, i, line));
                }
            }
        }
    }
    // A `parallel num_gangs(n)` without gang loops is one gang, unless what its
    // gang-redundant code computes counts the gangs (see `redundant::gang_count_effect`).
    let mut gang_loop: Option<String> = None;
    if mode == Mode::Target
        && kind == "parallel"
        && let Some(n) = d.find("num_gangs").and_then(|c| c.arg_text())
        && n.trim() != "1"
    {
        let n = n.trim();
        let head = format!(
            "no loop of this parallel region is gang-partitioned, so it becomes 'target': one gang, which OpenACC allows ('num_gangs({n})' is an upper bound); gang-redundant code runs once"
        );
        match super::redundant::gang_count_effect(u, i) {
            None => diags.push(Diagnostic::new(at, id::SINGLE_GANG, head)),
            Some(e) => {
                let what = match &e {
                    GangCountEffect::Reduction { op, var } => {
                        format!("'reduction({op}:{var})' combines one copy per gang")
                    }
                    GangCountEffect::Atomic(k) => format!(
                        "the 'atomic' construct on line {} updates once per gang",
                        u.line_at(*k)
                    ),
                    GangCountEffect::Call(f) => {
                        format!("it calls '{f}', whose effects per gang are not known here")
                    }
                };
                match super::redundant::gang_loop_refusal(u, i, &e, n) {
                    None => {
                        let queue = if d.has("async") { super::redundant::GANG_LOOP_ON_QUEUE } else { "" };
                        diags.push(Diagnostic::new(at, id::GANG_COUNT_LOOP, format!("{what}: the region becomes 'target teams distribute' over a loop of 'num_gangs({n})' iterations, one per gang (one where the region runs on the host, as OpenACC runs it there), so the result counts the gangs OpenACC runs whatever the number of teams{queue}")));
                        gang_loop = Some(n.to_string());
                    }
                    Some(why) => diags.push(Diagnostic::new(at, id::GANG_REDUNDANT_RESULT, format!("{head}, but {what}: where OpenACC runs {n} gangs (a GPU) the result counts {n} runs of that code, here it counts one ({why}). Write the repetition as a gang loop, or 'num_gangs(1)' if one run is meant"))),
                }
            }
        }
    }
    let mut name = match mode {
        _ if gang_loop.is_some() => Construct::of("target teams distribute"),
        Mode::Teams => Construct::of("target teams"),
        Mode::Target | Mode::Serial => Construct::of("target"),
    };
    if let Some(out) = &loop_out {
        for p in &out.parts {
            name.push(p);
        }
    }
    let l = u.lang;
    let self_cond = d
        .find("self")
        .map(|c| c.arg_text().unwrap_or_else(|| l.truth().into()));
    let aw = AsyncWait::of(l, d.clauses.iter(), None);
    queue_diags(&aw, at, &mut diags);
    let mut waits_done = false;
    // A gang loop over a `char`/`short` bounds the teams (see `narrow`).
    let bound = (mode == Mode::Teams)
        .then(|| super::narrow::teams_bound(u, i, dec))
        .flatten();
    let mut limit = (opts.profile.tunes_launch() && mode == Mode::Teams)
        .then(|| thread_limit(l, d))
        .flatten();
    let mut ops = Vec::with_capacity(d.clauses.len());
    let mut reductions: Vec<(String, String)> = Vec::new();
    for (k, c) in d.clauses.iter().enumerate() {
        if let Some(op) = loop_out.as_ref().and_then(|o| o.ops[k].clone())
            && c.name != "reduction"
            && c.name != "private"
        {
            ops.push(op);
            continue;
        }
        let op = match c.name.as_str() {
            "gang" | "worker" | "vector" | "seq" | "independent" | "auto" | "collapse" | "tile" => {
                ClauseOp::Drop
            }
            "async" => match if gang_loop.is_some() {
                aw.ordered_clauses()
            } else {
                aw.async_clauses()
            } {
                t if t.is_empty() => ClauseOp::Drop,
                t => ClauseOp::Replace(t),
            },
            "wait" => {
                let deps = aw.wait_depends();
                if std::mem::replace(&mut waits_done, true) || deps.is_empty() {
                    ClauseOp::Drop
                } else {
                    ClauseOp::Replace(deps)
                }
            }
            "num_gangs" => match (mode, c.items().count()) {
                (Mode::Teams, 1) if let Some(b) = &bound => {
                    let n = c.arg_text().unwrap_or_default();
                    match bounded_teams(l, n.trim(), b.max) {
                        Some(t) => ClauseOp::to(t),
                        None => {
                            diags.push(Diagnostic::new(c.span().start, id::NARROW_LOOP_VARIABLE, format!("{}: GCC computes the 'distribute' schedule in that type, and 'num_gangs({})' may have side effects, so it cannot be bounded to {}: more teams than that give a wrong result under GCC", b.why, n.trim(), b.max)));
                            ClauseOp::to(OmpClause::new("num_teams", n.trim()))
                        }
                    }
                }
                // A combined construct, or one whose body is gang loops only, runs nothing
                // outside its gang loops, so the number of teams changes no result; a fixed
                // count oversubscribes a CPU host (GCC runs the teams one after another,
                // Clang's host as many threads as there are cores, each forking its own).
                (Mode::Teams, 1)
                    if opts.profile.tunes_launch()
                        && (loop_out.is_some() || only_gang_loops(u, i, dec)) =>
                {
                    let whole = if loop_out.is_some() {
                        "the loop is the whole region"
                    } else {
                        "the region holds only gang loops"
                    };
                    diags.push(Diagnostic::new(c.span().start, id::LAUNCH_HINT, format!("'num_gangs({})' is dropped: {whole}, so the number of teams changes no result, and the OpenMP runtime sizes it to the loop and the device (a fixed count oversubscribes a CPU)", c.arg_text().unwrap_or_default())));
                    ClauseOp::Drop
                }
                (Mode::Teams, 1) => ClauseOp::to(OmpClause::new(
                    "num_teams",
                    c.arg_text().unwrap_or_default(),
                )),
                (Mode::Teams, _) => {
                    diags.push(Diagnostic::new(
                        c.span().start,
                        id::CLAUSE_IGNORED,
                        "multi-dimensional 'num_gangs' has no OpenMP equivalent and is dropped",
                    ));
                    ClauseOp::Drop
                }
                _ => ClauseOp::Drop,
            },
            "num_workers" | "vector_length" => {
                let arg = c.arg_text().unwrap_or_default();
                if c.name == "vector_length"
                    && opts.profile == Profile::Default
                    && mode == Mode::Teams
                    && !l.is_int_literal(arg.trim())
                    // (One with side effects gets `vector-length-ignored` instead.)
                    && !l.has_side_effects(arg.trim())
                {
                    diags.push(Diagnostic::new(
                        c.span().start,
                        id::LAUNCH_HINT,
                        format!("'vector_length({arg})' is dropped: only an integer constant bounds the threads of a team ('thread_limit') without a run-time cost; the OpenMP runtime chooses the vector length"),
                    ));
                }
                if c.name == "num_workers"
                    && opts.profile == Profile::Default
                    && mode == Mode::Target
                    && kind != "serial"
                {
                    diags.push(Diagnostic::new(
                        c.span().start,
                        id::LAUNCH_HINT,
                        format!("'num_workers({arg})' is dropped: under 'target' the OpenMP runtime sizes the worker loops' thread teams (a fixed 'num_threads' oversubscribes a CPU; OpenMP 5.0 has no 'thread_limit' on 'target')"),
                    ));
                }
                match limit.take() {
                    Some(t) => ClauseOp::to(t),
                    None => ClauseOp::Drop,
                }
            }
            "if" => match &self_cond {
                Some(s) => ClauseOp::to(OmpClause::new(
                    "if",
                    l.and(&l.group(&c.arg_text().unwrap_or_default()), &l.not(s)),
                )),
                None => ClauseOp::Keep,
            },
            "self" => {
                if d.has("if") {
                    ClauseOp::Drop
                } else {
                    ClauseOp::to(OmpClause::new(
                        "if",
                        l.not(self_cond.as_deref().unwrap_or(l.truth())),
                    ))
                }
            }
            // (A keyword, canonical in the directive: Fortran spells it in any case.)
            "default" => match c.items().next().map(|v| v.text.as_str()) {
                Some("present") if opts.omp_version >= OmpVersion::V51 => {
                    ClauseOp::to(OmpClause::new("defaultmap", "present"))
                }
                Some("present") => {
                    diags.push(Diagnostic::new(c.span().start, id::DEFAULT_PRESENT, "'default(present)' is dropped: data is mapped implicitly and presence is not checked (--omp-version 5.1 gives 'defaultmap(present)')"));
                    ClauseOp::Drop
                }
                _ => {
                    diags.push(Diagnostic::new(c.span().start, id::DEFAULT_NONE, "'default(none)' is dropped: its compile-time check has no direct OpenMP counterpart on 'target'"));
                    ClauseOp::Drop
                }
            },
            "private" => {
                super::loops::private_op(u, c, &crate::validate::private_loop::dropped(u, i))
            }
            "firstprivate" => ClauseOp::Keep,
            "reduction" => {
                let op = c.modifier().unwrap_or("+").to_string();
                for v in c.items() {
                    reductions.push((op.clone(), v.text.to_string()));
                }
                // Under `target` only a combined loop's `parallel for` can reduce.
                if mode == Mode::Teams || loop_out.is_some() || gang_loop.is_some() {
                    ClauseOp::Keep
                } else {
                    ClauseOp::Drop
                }
            }
            "deviceptr" => super::device_ptrs::clause(u, i, c, &mut diags),
            "attach" => {
                diags.push(Diagnostic::new(c.span().start, id::ATTACH_SECTION, "'attach(p)' becomes 'map(alloc: p[:0])', which attaches 'p' to its present target"));
                ClauseOp::to(OmpClause::new(
                    "map",
                    format!(
                        "alloc: {}",
                        c.items()
                            .map(|x| l.zero_length(&x.text).unwrap_or_else(|| x.text.to_string()))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ))
            }
            _ => match data_clause(
                l,
                c,
                DataCtx::Compute,
                opts,
                u.site_facts(i),
                Some(u.src),
                &mut diags,
            ) {
                Some(op) => op,
                None => {
                    // An untranslatable clause: leave the whole directive as it is.
                    plan.diags = diags.into();
                    return plan;
                }
            },
        };
        ops.push(op);
    }
    let mut append: Vec<OmpClause> = Vec::new();
    if let Some(out) = &mut loop_out {
        append.append(&mut out.append);
        diags.append(&mut out.diags);
        plan.scope.locals.append(&mut out.locals);
    }
    // Gang reductions of nested loops are combined across the teams; every loop reduction
    // variable comes back to the host.
    let mut extra: Vec<(String, String)> = Vec::new();
    let mut copied: Vec<(String, String)> = Vec::new();
    // The operation of each variable's first reduction, on the construct or lifted to it.
    // (By `name_key`: a Fortran clause may spell a name, or an operator, in another case.)
    let mut first: HashMap<Cow<str>, &str> = HashMap::default();
    if !lifted.of(i).is_empty() {
        for (o, w) in &reductions {
            first.entry(name_key(u.lang, w)).or_insert(o);
        }
    }
    for r in lifted.of(i) {
        let (op, v) = (&r.op, &r.var);
        match first.get(&name_key(u.lang, v)).copied() {
            Some(o) if !o.eq_ignore_ascii_case(op) && r.gang => diags.push(Diagnostic::new(
                u.at(r.from),
                id::REDUCTION_CONFLICT,
                format!("reduction '{op}' on '{v}' conflicts with reduction '{o}' on the enclosing compute construct"),
            )),
            Some(_) => {}
            None if r.gang => {
                first.insert(name_key(u.lang, v), op);
                extra.push((op.clone(), v.clone()));
            }
            None => copied.push((op.clone(), v.clone())),
        }
    }
    if diags.iter().any(|x| x.rule == id::REDUCTION_CONFLICT) {
        plan.diags = diags.into();
        return plan;
    }
    if mode == Mode::Teams {
        for (op, v) in &extra {
            append.push(OmpClause::new("reduction", format!("{op}: {v}")));
        }
    }
    let reduced = || reductions.iter().chain(extra.iter()).chain(copied.iter());
    // (Most constructs reduce nothing: their mapped items are not collected.)
    let mapped = match reduced().next() {
        Some(_) => mapped_items(d, u.tables),
        None => Vec::new(),
    };
    let seen = unmapped_once(u.lang, reduced().map(|(_, v)| v.as_str()), &mapped);
    if !seen.is_empty() {
        append.push(OmpClause::new(
            "map",
            format!("tofrom: {}", seen.join(", ")),
        ));
    }
    if seq_combined && mode == Mode::Teams && !d.has("num_gangs") {
        // A sequential combined loop runs redundantly per gang; use one, as OpenACC compilers do.
        append.push(OmpClause::new("num_teams", "1"));
    } else if let Some(b) = &bound
        && !d.has("num_gangs")
    {
        append.push(OmpClause::new("num_teams", b.max.to_string()));
    }
    if let Some(b) = &bound
        && !diags.iter().any(|x| x.rule == id::NARROW_LOOP_VARIABLE)
    {
        diags.push(Diagnostic::new(
            u.at(b.site),
            id::NARROW_LOOP_VARIABLE,
            format!("{}: GCC computes the 'distribute' schedule in that type, so the teams are bounded to {} ('num_teams'), a count the type holds; OpenACC's 'num_gangs' is an upper bound", b.why, b.max),
        ));
    }
    if let Some(gangs) = gang_loop {
        plan.inserts.push(Insert::GangLoop { gangs });
    }
    plan.action = Action::Rewrite(Rewrite {
        name,
        ops,
        append,
        drop_arg: false,
    });
    plan.diags.append(&mut diags);
    plan
}

/// Whether every statement of compute construct `c`'s body is a gang loop (one of its loop
/// sites): no code runs redundantly on each gang.
fn only_gang_loops(u: &Unit, c: usize, dec: &Decisions) -> bool {
    let Some(stmt) = u.stmts[c].as_ref() else {
        return false;
    };
    let body = u.syntax.statements_in(&stmt.toks());
    !body.is_empty()
        && body.iter().all(|&t| {
            u.site_at(t).is_some_and(|l| {
            u.is_loop(l)
                && u.parent[l] == Some(c)
                && matches!(dec[l].as_ref().map(|x| &x.decision), Some(Decision::Par(v)) if v.gang)
        })
        })
}

/// `num_teams` for `num_gangs(n)` bounded by `max`: a constant here, an expression without
/// side effects at run time (it is evaluated twice).
fn bounded_teams(l: &dyn Language, n: &str, max: u32) -> Option<OmpClause> {
    match n.parse::<u64>() {
        Ok(v) => Some(OmpClause::new(
            "num_teams",
            v.min(u64::from(max)).to_string(),
        )),
        Err(_) if !l.has_side_effects(n) => Some(OmpClause::new("num_teams", l.min(n, max))),
        Err(_) => None,
    }
}

/// Diagnostics about the queues of a directive's `async` and `wait` clauses.
pub fn queue_diags(aw: &AsyncWait, at: usize, diags: &mut Vec<Diagnostic>) {
    for q in &aw.runtime {
        diags.push(Diagnostic::new(
            at,
            id::ASYNC_QUEUE_VALUE,
            format!("the queue '{q}' is known only at run time: it becomes the dependence object 'acc2omp_queue[({q}) & 63]'; if it can be acc_async_sync, that work still runs asynchronously"),
        ));
    }
    if aw.devnum {
        diags.push(Diagnostic::new(
            at,
            id::CLAUSE_IGNORED,
            "the device number of 'wait(devnum: …)' is dropped: the queues of every device share one set of dependence objects, which only orders more",
        ));
    }
}

/// The default profile's `thread_limit` for a `target teams` construct: a gang's threads stand
/// for its workers and vector lanes, so `num_workers(w)` and an integer `vector_length(v)`
/// give `thread_limit(w * v)`, evaluated once on the construct as OpenACC evaluates them.
pub fn thread_limit(l: &dyn Language, d: &Directive) -> Option<OmpClause> {
    let arg = |name: &str| {
        d.find(name)
            .filter(|c| c.items().count() == 1)
            .and_then(|c| c.items().next().map(|x| x.text.trim().to_string()))
    };
    let vl = arg("vector_length").filter(|v| l.is_int_literal(v));
    let factors: Vec<String> = [arg("num_workers"), vl].into_iter().flatten().collect();
    let several = factors.len() > 1;
    let factors: Vec<String> = factors
        .into_iter()
        .map(|e| {
            if !several || l.is_identifier(&e) || l.is_int_literal(&e) {
                e
            } else {
                l.group(&e)
            }
        })
        .collect();
    (!factors.is_empty()).then(|| OmpClause::new("thread_limit", factors.join(" * ")))
}

#[cfg(test)]
mod tests {
    use super::unmapped_once;

    /// The sets answer as the lists searched per variable did: each variable not mapped,
    /// once, in the order of its first occurrence.
    #[test]
    fn unmapped_once_as_lists() {
        let vars: Vec<String> = (0..300).map(|k| format!("v{}", k * 7 % 101)).collect();
        let mapped: Vec<String> = (0..40).map(|k| format!("v{}", k * 3)).collect();
        let mapped: Vec<&str> = mapped.iter().map(String::as_str).collect();
        let mut oracle: Vec<&str> = Vec::new();
        for v in &vars {
            if !mapped.contains(&v.as_str()) && !oracle.contains(&v.as_str()) {
                oracle.push(v);
            }
        }
        assert_eq!(
            unmapped_once(&crate::c::lang::C, vars.iter().map(String::as_str), &mapped),
            oracle
        );
        assert!(unmapped_once(&crate::c::lang::C, std::iter::empty(), &mapped).is_empty());
    }
}
