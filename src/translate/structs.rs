//! Structures whose members are mapped one by one (`copyin(s.x[0:n])`, `copy(g->y[0:n])`).
//! OpenMP then maps only the listed members: the rest of the structure (sizes, coefficients)
//! is absent on a device with its own memory, and an implicit map of the whole structure is
//! an error once a member is present. When the region reads other members, the structure is
//! mapped too, before its members: `map(to: s)` in the same directive for a variable; for a
//! pointer, a `target data map(to: g[0:1])` around the directive (GCC 12 miscompiles
//! `g[0:1]` and `g->x[…]` in one directive).

use super::{Action, ClauseOp, Plan, TreePlans, Unit};
use crate::diag::Diagnostic;
use crate::directive::Directive;
use crate::hash::HashMap;
use crate::lex::TokKind;
use crate::rules::{Severity, Tables};
use crate::semantic::base_name;
use std::ops::Range;

/// How a structure is reached: a variable (`s.x`) or a pointer (`g->x`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    Dot,
    Arrow,
}

/// A data-clause item naming a member: (base, member, access).
fn member_item(item: &str) -> Option<(&str, &str, Access)> {
    let t = item.trim();
    let base = base_name(t)?;
    let rest = t[base.len()..].trim_start();
    let (access, rest) = if let Some(r) = rest.strip_prefix("->") {
        (Access::Arrow, r)
    } else if let Some(r) = rest.strip_prefix('.') {
        (Access::Dot, r)
    } else {
        return None;
    };
    Some((base, base_name(rest)?, access))
}

/// Items of the clauses of `d` that map data (not `deviceptr`, `private`, ...).
fn map_items<'d>(d: &'d Directive, t: &'d Tables) -> impl Iterator<Item = (usize, &'d str)> {
    d.clauses
        .iter()
        .enumerate()
        .filter(|(_, c)| t.clause(&c.name).is_some_and(|r| r.map.is_some()))
        .flat_map(|(k, c)| c.items().map(move |i| (k, i.text.as_str())))
}

/// Whether the items map structure `base` whole (`s`, `g[0:1]`, `*g`).
fn maps_whole<'a>(mut items: impl Iterator<Item = &'a str>, base: &str) -> bool {
    items.any(|t| {
        let t = t.trim();
        t == base
            || t.strip_prefix('*').is_some_and(|r| r.trim() == base)
            || t.strip_prefix(base)
                .is_some_and(|r| r.trim_start().starts_with('['))
    })
}

/// What a region does with a structure: the members it uses, those it assigns, and whether
/// it uses the structure itself (passes it, takes its address, indexes the pointer).
#[derive(Debug, Default)]
struct Uses {
    members: Vec<String>,
    written: Vec<String>,
    whole: bool,
}

fn uses(u: &Unit, toks: Range<usize>, skip: &[Range<usize>], base: &str, access: Access) -> Uses {
    let t = u.structure.toks;
    let text = |k: usize| t.get(k).map_or("", |x| x.text(u.src));
    let sep = match access {
        Access::Dot => ".",
        Access::Arrow => "->",
    };
    let mut out = Uses::default();
    for k in toks {
        if t[k].kind != TokKind::Ident
            || text(k) != base
            || skip.iter().any(|r| r.contains(&k))
            || k.checked_sub(1)
                .is_some_and(|p| matches!(text(p), "." | "->" | "::"))
        {
            continue;
        }
        if text(k + 1) != sep || t.get(k + 2).is_none_or(|x| x.kind != TokKind::Ident) {
            out.whole = true;
            continue;
        }
        let m = text(k + 2).to_string();
        // Past `[...]` and `.field` to the operator that follows the member.
        let mut e = k + 3;
        loop {
            match text(e) {
                "[" => {
                    let mut depth = 0i32;
                    while e < t.len() {
                        match text(e) {
                            "[" | "(" => depth += 1,
                            "]" | ")" => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        e += 1;
                    }
                    e += 1;
                }
                "." if t.get(e + 1).is_some_and(|x| x.kind == TokKind::Ident) => e += 2,
                _ => break,
            }
        }
        let next = text(e);
        let prev = k.checked_sub(1).map_or("", text);
        let assigned = crate::lex::ASSIGNMENT_OPS.contains(&next)
            || matches!(next, "++" | "--")
            || matches!(prev, "++" | "--" | "&");
        if assigned && !out.written.contains(&m) {
            out.written.push(m.clone());
        }
        if !out.members.contains(&m) {
            out.members.push(m);
        }
    }
    out
}

/// Bases whose members (and not the whole structure) the clauses of `d` map, with the
/// members, the access and the first clause that names one.
fn partly_mapped(d: &Directive, t: &Tables) -> Vec<(String, Vec<String>, Access, usize)> {
    let mut out: Vec<(String, Vec<String>, Access, usize)> = Vec::new();
    for (k, item) in map_items(d, t) {
        let Some((base, member, access)) = member_item(item) else {
            continue;
        };
        match out.iter_mut().find(|(b, ..)| b == base) {
            Some((_, members, ..)) => {
                if !members.iter().any(|m| m == member) {
                    members.push(member.to_string());
                }
            }
            None => out.push((base.to_string(), vec![member.to_string()], access, k)),
        }
    }
    out.retain(|(b, ..)| !maps_whole(map_items(d, t).map(|x| x.1), b));
    out
}

/// The map items of the file's `declare` and `enter data` directives, by the name they start
/// with (after a `*`): an item that maps a variable whole starts with its name, so only those
/// of that name are tried (a file may have thousands).
struct FileWide<'d> {
    by_name: HashMap<&'d str, Vec<&'d str>>,
    all: Vec<&'d str>,
}

impl<'d> FileWide<'d> {
    fn new(u: &'d Unit) -> Self {
        let mut by_name: HashMap<&str, Vec<&str>> = HashMap::default();
        let mut all = Vec::new();
        let dirs = (0..u.sites.len())
            .filter_map(|k| u.dir(k))
            .filter(|d| matches!(d.name.as_str(), "declare" | "enter data"));
        for d in dirs {
            for (_, t) in map_items(d, u.tables) {
                let r = t.trim().trim_start_matches('*').trim_start();
                let end = r
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(r.len());
                by_name.entry(&r[..end]).or_default().push(t);
                all.push(t);
            }
        }
        FileWide { by_name, all }
    }

    /// Whether one of the items maps `base` whole.
    fn maps_whole(&self, base: &str) -> bool {
        if !crate::lex::is_identifier(base) {
            return maps_whole(self.all.iter().copied(), base);
        }
        self.by_name
            .get(base)
            .is_some_and(|items| maps_whole(items.iter().copied(), base))
    }
}

/// Whether `base` is mapped whole around site `i`: by an enclosing `data`, or by one of the
/// file's `declare` and `enter data` directives.
fn whole_around(u: &Unit, i: usize, base: &str, file_wide: &FileWide) -> bool {
    u.ancestors(i)
        .filter_map(|a| u.dir(a))
        .filter(|d| d.name == "data")
        .any(|d| maps_whole(map_items(d, u.tables).map(|x| x.1), base))
        || file_wide.maps_whole(base)
}

/// Whether `base` is privatized or a device pointer on `d`.
fn private_on(d: &Directive, base: &str) -> bool {
    d.clauses.iter().any(|c| {
        matches!(c.name.as_str(), "private" | "firstprivate" | "deviceptr")
            && c.items().any(|x| x.text.trim() == base)
    })
}

fn stmt_toks(u: &Unit, i: usize) -> Option<Range<usize>> {
    u.stmts[i].as_ref().map(|s| s.toks.clone())
}

pub fn apply(u: &Unit, plans: &mut [Plan]) {
    // Found once, not once per partly mapped struct.
    let file_wide = FileWide::new(u);
    super::by_trees(u, plans, |run, plans| {
        for i in run {
            one_site(u, i, &file_wide, plans);
        }
    });
}

/// The partly mapped structures of site `i`'s clauses.
fn one_site(u: &Unit, i: usize, file_wide: &FileWide, plans: &mut TreePlans) {
    let Some(d) = u.dir(i) else { return };
    let compute = d.compute_kind().is_some();
    if !(compute || d.name == "data") || !matches!(plans[i].action, Action::Rewrite(_)) {
        return;
    }
    for (base, members, access, first) in partly_mapped(d, u.tables) {
        if private_on(d, &base) || whole_around(u, i, &base, file_wide) {
            continue;
        }
        let Some(region) = stmt_toks(u, i) else {
            continue;
        };
        // The compute regions whose reads count: this one, or those inside the data region.
        let computes: Vec<usize> = if compute {
            vec![i]
        } else {
            u.descendants(i)
                .into_iter()
                .filter(|&k| u.dir(k).is_some_and(|x| x.compute_kind().is_some()))
                .filter(|&k| {
                    u.dir(k).is_some_and(|x| {
                        !private_on(x, &base)
                            && !maps_whole(map_items(x, u.tables).map(|y| y.1), &base)
                    })
                })
                .collect()
        };
        let mut read: Vec<String> = Vec::new();
        let mut written: Vec<String> = Vec::new();
        // Members of `*this` are also used without `this->`: assume the region reads them.
        let mut whole = base == "this";
        for &c in &computes {
            let Some(r) = stmt_toks(u, c) else { continue };
            let mine: Vec<&str> = u.dir(c).map_or(Vec::new(), |x| {
                map_items(x, u.tables)
                    .filter_map(|(_, t)| member_item(t))
                    .filter(|(b, ..)| *b == base)
                    .map(|(_, m, _)| m)
                    .collect()
            });
            let uses = uses(u, r, &[], &base, access);
            whole |= uses.whole;
            for m in uses.members {
                let mapped = members.contains(&m) || mine.contains(&m.as_str());
                if !mapped && !read.contains(&m) {
                    if uses.written.contains(&m) {
                        written.push(m.clone());
                    }
                    read.push(m);
                }
            }
        }
        if read.is_empty() && !whole {
            continue;
        }
        let at = u.at(i);
        let shown = |v: &[String]| {
            let sep = if access == Access::Dot { "." } else { "->" };
            v.iter()
                .map(|m| format!("'{base}{sep}{m}'"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let what = if read.is_empty() {
            format!("'{base}' itself")
        } else {
            shown(&read)
        };
        // Host writes inside a data region would not reach the device copy made at its
        // start, and device writes would not reach the host before its end.
        let nested: Vec<Range<usize>> = computes.iter().filter_map(|&c| stmt_toks(u, c)).collect();
        let host_writes = if compute {
            Vec::new()
        } else {
            uses(u, region.clone(), &nested, &base, access).written
        };
        let async_compute = compute && d.has("async");
        let problem = if !written.is_empty() && !compute {
            Some(format!(
                "the compute constructs inside write {}",
                shown(&written)
            ))
        } else if !host_writes.is_empty() {
            Some(format!(
                "the host writes {} inside the region",
                shown(&host_writes)
            ))
        } else if access == Access::Arrow && async_compute {
            Some("with 'async', no data construct can be put around it".to_string())
        } else {
            None
        };
        if let Some(why) = problem {
            // The constructs inside stay too: translated, they would hide from a second
            // run what this one saw.
            for k in std::iter::once(i).chain(u.descendants(i)) {
                let p = &mut plans[k];
                p.action = Action::Unchanged;
                p.locals.clear();
                p.decls.clear();
                p.before.clear();
                p.inserts.clear();
                p.after_stmt = None;
                p.diags
                    .retain(|x| u.tables.severity(x.rule, Severity::Warning) == Severity::Error);
            }
            plans[i].diags.push(Diagnostic::new(at, "struct-partly-mapped", format!("the region reads {what}, which no clause maps (OpenMP maps only the listed members of '{base}'), and the structure cannot be mapped here too: {why}; map '{base}' in an enclosing data construct; the directive is left unchanged")));
            continue;
        }
        // Writes to members of `*this` without `this->` are not seen: copy it back.
        let map_type = if written.is_empty() && !(compute && base == "this") {
            "to"
        } else {
            "tofrom"
        };
        match access {
            Access::Dot => {
                if let Action::Rewrite(rw) = &mut plans[i].action
                    && let Some(op) = rw.ops.get_mut(first)
                    && let ClauseOp::Replace(t) = op
                {
                    *t = format!("map({map_type}: {base}) {t}");
                }
                plans[i].diags.push(Diagnostic::new(at, "struct-member-map", format!("the region reads {what}, which no clause maps: 'map({map_type}: {base})' maps the structure before its listed members (OpenMP maps only the listed members)")));
            }
            Access::Arrow => {
                plans[i]
                    .before
                    .push(format!("target data map({map_type}: {base}[0:1])"));
                plans[i].diags.push(Diagnostic::new(at, "struct-member-map", format!("the region reads {what}, which no clause maps: a 'target data map({map_type}: {base}[0:1])' around the directive maps the structure '{base}' points to (OpenMP maps only the listed members)")));
            }
        }
    }
}

/// `enter data` of a structure's members directly followed by an `enter data` of the
/// structure (`copyin(o.a[0:n])` then `copyin(o)`, or through `this`): OpenMP maps the
/// member's structure element with the section, and mapping the whole structure afterwards
/// extends a present mapping, which runtimes reject (Clang: "explicit extension not
/// allowed"). Nothing runs between the two directives, so the structure's clause moves to the
/// front of the first one.
pub fn order_enter_data(u: &Unit, plans: &mut [Plan]) {
    let only_maps = |d: &Directive| {
        d.inactive.is_empty()
            && d.clauses
                .iter()
                .all(|c| u.tables.clause(&c.name).is_some_and(|r| r.map.is_some()))
    };
    for i in 0..plans.len().saturating_sub(1) {
        let j = i + 1;
        let (Some(first), Some(second)) = (u.dir(i), u.dir(j)) else {
            continue;
        };
        let (a, b) = (&u.sites[i], &u.sites[j]);
        if first.name != "enter data"
            || second.name != "enter data"
            || !only_maps(first)
            || !only_maps(second)
            || a.unescaped.is_some()
            || b.unescaped.is_some()
            || a.span.end > b.span.start
            || !u.src[a.span.end..b.span.start].trim().is_empty()
        {
            continue;
        }
        let bases = partly_mapped(first, u.tables);
        // The clause of the second directive that maps one of those structures whole, alone.
        let Some((k, c)) = second.clauses.iter().enumerate().find(|(_, c)| {
            let items: Vec<&str> = c.items().map(|x| x.text.as_str()).collect();
            items.len() == 1 && bases.iter().any(|(b, ..)| maps_whole(items.iter().copied(), b))
        }) else {
            continue;
        };
        let (Action::Rewrite(r1), Action::Rewrite(r2)) = (&plans[i].action, &plans[j].action)
        else {
            continue;
        };
        let (Some(ClauseOp::Replace(moved)), Some(op)) = (r2.ops.get(k), r1.ops.first()) else {
            continue;
        };
        let front = match op {
            ClauseOp::Replace(t) => format!("{moved} {t}"),
            ClauseOp::Keep => format!("{moved} {}", &u.src[first.clauses[0].span.clone()]),
            ClauseOp::Drop => continue,
        };
        let spelled = u.src[c.span.clone()].to_string();
        if let Action::Rewrite(r1) = &mut plans[i].action {
            r1.ops[0] = ClauseOp::Replace(front);
        }
        let gone = second.clauses.len() == 1;
        if let Action::Rewrite(r2) = &mut plans[j].action {
            r2.ops[k] = ClauseOp::Drop;
        }
        if gone {
            plans[j].action = Action::Remove;
        }
        plans[j].diags.push(Diagnostic::new(
            c.span.start,
            "member-map-order",
            format!("'{spelled}' maps the structure after the directive before it mapped its members: OpenMP maps a member's structure element with its section, and mapping the whole structure then extends a present mapping, which OpenMP runtimes reject; it moves to the front of that directive{}", if gone { ", and this directive is removed" } else { "" }),
        ));
    }
}
