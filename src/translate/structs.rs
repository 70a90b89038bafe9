//! Structures whose members are mapped one by one (`copyin(s.x[0:n])`, `copy(g->y[0:n])`).
//! OpenMP then maps only the listed members: the rest of the structure (sizes, coefficients)
//! is absent on a device with its own memory, and an implicit map of the whole structure is
//! an error once a member is present. When the region reads other members, the structure is
//! mapped too, before its members: `map(to: s)` in the same directive for a variable; for a
//! pointer, a `target data map(to: g[0:1])` around the directive (GCC 12 miscompiles
//! `g[0:1]` and `g->x[…]` in one directive).

use super::{TreePlans, Unit};
use crate::diag::Diagnostic;
use crate::directive::{Directive, LIFETIME_CLAUSES};
use crate::hash::HashMap;
use crate::intent::{Action, ClauseOp, Construct, OmpClause, OmpDirective, Plan};
use crate::lang::{Access, Language};
use crate::rules::id;
use crate::rules::{Severity, Tables};
use crate::syntax::{Jump, MemberUses};
use std::borrow::Cow;
use std::ops::Range;

/// Items of the clauses of `d` that map data (not `deviceptr`, `private`, ...).
fn map_items<'d>(d: &'d Directive, t: &'d Tables) -> impl Iterator<Item = (usize, &'d str)> {
    d.clauses
        .iter()
        .enumerate()
        .filter(|(_, c)| t.clause(&c.name).is_some_and(|r| r.map.is_some()))
        .flat_map(|(k, c)| c.items().map(move |i| (k, i.text.as_str())))
}

/// Bases whose members (and not the whole structure) the clauses of `d` map, with the
/// members, the access and the first clause that names one.
fn partly_mapped(
    l: &dyn Language,
    d: &Directive,
    t: &Tables,
) -> Vec<(String, Vec<String>, Access, usize)> {
    let mut out: Vec<(String, Vec<String>, Access, usize)> = Vec::new();
    for (k, item) in map_items(d, t) {
        let Some((base, member, access)) = l.member_of(item) else {
            continue;
        };
        match out.iter_mut().find(|(b, ..)| l.same_name(b, base)) {
            Some((_, members, ..)) => {
                if !members.iter().any(|m| l.same_name(m, member)) {
                    members.push(member.to_string());
                }
            }
            None => out.push((base.to_string(), vec![member.to_string()], access, k)),
        }
    }
    out.retain(|(b, ..)| !map_items(d, t).any(|x| l.names_whole(x.1, b)));
    out
}

/// The map items of the file's `declare` and `enter data` directives, by the name they start
/// with (after a `*`): an item that maps a variable whole starts with its name, so only those
/// of that name are tried (a file may have thousands).
struct FileWide<'d> {
    by_name: HashMap<Cow<'d, str>, Vec<&'d str>>,
    all: Vec<&'d str>,
}

impl<'d> FileWide<'d> {
    fn new(u: &'d Unit) -> Self {
        let mut by_name: HashMap<Cow<str>, Vec<&str>> = HashMap::default();
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
                by_name.entry(key(u.lang, &r[..end])).or_default().push(t);
                all.push(t);
            }
        }
        FileWide { by_name, all }
    }

    /// Whether one of the items maps `base` whole.
    fn maps_whole(&self, l: &dyn Language, base: &str) -> bool {
        if !l.is_identifier(base) {
            return self.all.iter().any(|x| l.names_whole(x, base));
        }
        self.by_name
            .get(&key(l, base))
            .is_some_and(|items| items.iter().any(|x| l.names_whole(x, base)))
    }
}

/// The file's [`FileWide`] items, read when a partly mapped structure first asks.
type WhenAsked<'d> = std::sync::OnceLock<FileWide<'d>>;

/// A name as the file's language compares it.
fn key<'n>(l: &dyn Language, name: &'n str) -> Cow<'n, str> {
    if l.folds_case() {
        Cow::Owned(name.to_ascii_lowercase())
    } else {
        Cow::Borrowed(name)
    }
}

/// Whether `base` is mapped whole around site `i`: by an enclosing `data`, or by one of the
/// file's `declare` and `enter data` directives.
fn whole_around<'d>(u: &'d Unit, i: usize, base: &str, file_wide: &WhenAsked<'d>) -> bool {
    u.ancestors(i)
        .filter_map(|a| u.dir(a))
        .filter(|d| d.name == "data")
        .any(|d| map_items(d, u.tables).any(|x| u.lang.names_whole(x.1, base)))
        || file_wide
            .get_or_init(|| FileWide::new(u))
            .maps_whole(u.lang, base)
}

/// Whether `base` is privatized or a device pointer on `d`.
fn private_on(l: &dyn Language, d: &Directive, base: &str) -> bool {
    d.clauses.iter().any(|c| {
        matches!(c.name.as_str(), "private" | "firstprivate" | "deviceptr")
            && c.items().any(|x| l.same_name(x.text.trim(), base))
    })
}

fn stmt_toks(u: &Unit, i: usize) -> Option<Range<usize>> {
    u.stmts[i].as_ref().map(|s| s.toks())
}

pub fn apply(u: &Unit, plans: &mut [Plan]) {
    // Found once, not once per partly mapped struct, and only for a file that has one.
    let file_wide = WhenAsked::new();
    super::by_trees(u, plans, |run, plans| {
        for i in run {
            one_site(u, i, &file_wide, plans);
        }
    });
}

/// The partly mapped structures of site `i`'s clauses.
fn one_site<'d>(u: &'d Unit, i: usize, file_wide: &WhenAsked<'d>, plans: &mut TreePlans) {
    let Some(d) = u.dir(i) else { return };
    let compute = d.compute_kind().is_some();
    if !(compute || d.name == "data") || !matches!(plans[i].action, Action::Rewrite(_)) {
        return;
    }
    for (base, members, access, first) in partly_mapped(u.lang, d, u.tables) {
        if private_on(u.lang, d, &base) || whole_around(u, i, &base, file_wide) {
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
                        !private_on(u.lang, x, &base)
                            && !map_items(x, u.tables).any(|y| u.lang.names_whole(y.1, &base))
                    })
                })
                .collect()
        };
        let mut read: Vec<String> = Vec::new();
        let mut written: Vec<String> = Vec::new();
        // Members of `*this` are also used without `this->`: assume the region reads them.
        let mut whole = base == "this";
        let mut whole_written = false;
        for &c in &computes {
            let Some(r) = stmt_toks(u, c) else { continue };
            let mine: Vec<&str> = u.dir(c).map_or(Vec::new(), |x| {
                map_items(x, u.tables)
                    .filter_map(|(_, t)| u.lang.member_of(t))
                    .filter(|(b, ..)| u.lang.same_name(b, &base))
                    .map(|(_, m, _)| m)
                    .collect()
            });
            let uses = u.syntax.member_uses(r, &[], &base, access);
            whole |= uses.whole;
            whole_written |= uses.whole_written;
            for m in uses.members {
                let same = |x: &str| u.lang.same_name(x, &m);
                let mapped = members.iter().any(|x| same(x)) || mine.iter().any(|x| same(x));
                if !mapped && !read.iter().any(|x| same(x)) {
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
            v.iter()
                .map(|m| format!("'{}'", u.lang.member(&base, m, access)))
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
        let host = if compute {
            MemberUses::default()
        } else {
            u.syntax.member_uses(region.clone(), &nested, &base, access)
        };
        // The members written, or the structure itself when only a whole use may write it.
        let writes = |members: &[String], whole: bool| {
            if members.is_empty() && whole {
                Some(format!("'{base}'"))
            } else {
                (!members.is_empty()).then(|| shown(members))
            }
        };
        let async_compute = compute && d.has("async");
        let device_writes = writes(&written, whole_written).filter(|_| !compute);
        let problem = if let Some(w) = device_writes {
            Some(format!("the compute constructs inside write {w}"))
        } else if let Some(w) = writes(&host.written, host.whole_written) {
            Some(format!("the host writes {w} inside the region"))
        } else if access == Access::Pointer && async_compute {
            Some("with 'async', no data construct can be put around it".to_string())
        } else {
            None
        };
        if let Some(why) = problem {
            // The constructs inside stay too: translated, they would hide from a second
            // run what this one saw.
            for k in std::iter::once(i).chain(u.descendants(i)) {
                let p = &mut plans[k];
                p.unchanged();
                p.diags.retain(|x| {
                    u.tables.severity(x.rule.as_str(), Severity::Warning) == Severity::Error
                });
            }
            plans[i].diags.push(Diagnostic::new(at, id::STRUCT_PARTLY_MAPPED, format!("the region reads {what}, which no clause maps (OpenMP maps only the listed members of '{base}'), and the structure cannot be mapped here too: {why}; map '{base}' in an enclosing data construct; the directive is left unchanged")));
            continue;
        }
        // Writes to members of `*this` without `this->` are not seen: copy it back.
        let map_type = if written.is_empty() && !whole_written && !(compute && base == "this") {
            "to"
        } else {
            "tofrom"
        };
        match access {
            Access::Value => {
                if let Action::Rewrite(rw) = &mut plans[i].action
                    && let Some(op) = rw.ops.get_mut(first)
                    && let ClauseOp::Replace(t) = op
                {
                    t.insert(0, OmpClause::new("map", format!("{map_type}: {base}")));
                }
                plans[i].diags.push(Diagnostic::new(at, id::STRUCT_MEMBER_MAP, format!("the region reads {what}, which no clause maps: 'map({map_type}: {base})' maps the structure before its listed members (OpenMP maps only the listed members)")));
            }
            Access::Pointer => {
                plans[i].before.push(OmpDirective::new(
                    Construct::of("target data"),
                    vec![OmpClause::new(
                        "map",
                        format!("{map_type}: {}", u.lang.pointee(&base)),
                    )],
                ));
                plans[i].diags.push(Diagnostic::new(at, id::STRUCT_MEMBER_MAP, format!("the region reads {what}, which no clause maps: a 'target data map({map_type}: {base}[0:1])' around the directive maps the structure '{base}' points to (OpenMP maps only the listed members)")));
            }
        }
    }
}

/// `enter data` of a structure's members followed by an `enter data` of the structure
/// (`copyin(o.a[0:n])` then `copyin(o)`, or through `this`): OpenMP maps the member's
/// structure element with the section, and mapping the whole structure afterwards extends a
/// present mapping, which runtimes reject (Clang: "explicit extension not allowed"). When
/// nothing between the two can change the structure or skip the second (see `between`), the
/// structure's clause moves to the front of the first directive; otherwise both are left
/// unchanged with an error, whose guard stops an OpenMP build.
pub fn order_enter_data(u: &Unit, plans: &mut [Plan]) {
    for i in 0..plans.len() {
        let Some(first) = u.dir(i).filter(|_| only_maps(u, plans, i)) else {
            continue;
        };
        let bases = partly_mapped(u.lang, first, u.tables);
        if bases.is_empty() {
            continue;
        }
        let Some((j, k, Between { moves })) = later_whole_map(u, plans, i, &bases) else {
            continue;
        };
        let Some(second) = u.dir(j) else { continue };
        let c = &second.clauses[k];
        let spelled = u.src[c.span()].to_string();
        let line = u.line(i);
        if let Err(why) = moves {
            // Both stay: with the first translated, a second run would translate the second.
            plans[i].unchanged();
            plans[j].unchanged();
            plans[j].diags.push(Diagnostic::new(
                c.span().start,
                id::MEMBER_MAP_ORDER_LEFT,
                format!("'{spelled}' maps the structure after the 'enter data' at line {line} mapped its members: OpenMP maps a member's structure element with its section, and mapping the whole structure then extends a present mapping, which OpenMP runtimes reject (Clang aborts: 'explicit extension not allowed'); its map cannot move to that directive, since {why}; both directives are left unchanged: map the structure before its members"),
            ));
            continue;
        }
        let (Action::Rewrite(r1), Action::Rewrite(r2)) = (&plans[i].action, &plans[j].action)
        else {
            continue;
        };
        let (Some(ClauseOp::Replace(moved)), Some(ClauseOp::Replace(rest))) =
            (r2.ops.get(k), r1.ops.first())
        else {
            continue;
        };
        let front: Vec<OmpClause> = moved.iter().chain(rest).cloned().collect();
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
        let adjacent = j == i + 1
            && u.src
                .get(u.sites[i].span().end..u.sites[j].span().start)
                .is_some_and(|t| t.trim().is_empty());
        plans[j].diags.push(Diagnostic::new(
            c.span().start,
            id::MEMBER_MAP_ORDER,
            format!("'{spelled}' maps the structure after {} mapped its members: OpenMP maps a member's structure element with its section, and mapping the whole structure then extends a present mapping, which OpenMP runtimes reject; {}it moves to the front of that directive{}", if adjacent { "the directive before it".to_string() } else { format!("the 'enter data' at line {line}") }, if adjacent { "" } else { "nothing between them uses the structure, calls a function or leaves the block, so " }, if gone { ", and this directive is removed" } else { "" }),
        ));
    }
}

/// Whether site `k` is an `enter data` with data clauses only, to be rewritten.
fn only_maps(u: &Unit, plans: &[Plan], k: usize) -> bool {
    u.dir(k).is_some_and(|d| {
        d.name == "enter data"
            && d.inactive().is_empty()
            && u.sites[k].unescaped.is_none()
            && d.clauses
                .iter()
                .all(|c| u.tables.clause(&c.name).is_some_and(|r| r.map.is_some()))
    }) && matches!(plans[k].action, Action::Rewrite(_))
}

/// Whether the structure's map may move over the code between two `enter data`.
struct Between {
    /// Why not, when it may not.
    moves: Result<(), String>,
}

/// The first `enter data` after site `i` in the same block with a clause that maps one of
/// `bases` (structures `i` maps members of) whole and alone, with that clause's index and
/// whether the code between lets its map move to `i`. None when the block ends first, or a
/// directive between releases one of the structures. C and C++ only.
fn later_whole_map(
    u: &Unit,
    plans: &[Plan],
    i: usize,
    bases: &[(String, Vec<String>, Access, usize)],
) -> Option<(usize, usize, Between)> {
    if u.lang.name() == "Fortran" {
        // Only directly adjacent directives.
        let j = i + 1;
        if j >= u.sites.len() {
            return None;
        }
        let k = whole_clause(u, j, bases).filter(|_| only_maps(u, plans, j))?;
        let empty = u
            .src
            .get(u.sites[i].span().end..u.sites[j].span().start)?
            .trim()
            .is_empty();
        return empty.then_some((j, k, Between { moves: Ok(()) }));
    }
    let names: Vec<&str> = bases.iter().map(|(b, ..)| b.as_str()).collect();
    let mut why: Option<String> = None;
    let mut depth = 0i64;
    let mut from = u.sites[i].span().end;
    let jumps = u.syntax.jumps();
    for j in i + 1..u.sites.len() {
        let site = &u.sites[j];
        if site.span().start < from {
            continue;
        }
        // The code from the previous directive to this one.
        match code_between(u, from..site.span().start, &names, &mut depth, jumps) {
            Code::Leaves => return None,
            Code::Unsafe(w) => {
                why.get_or_insert(w);
            }
            Code::Plain => {}
        }
        from = site.span().end;
        let Some(d) = u.dir(j) else {
            why.get_or_insert_with(|| "a directive between is not translated".into());
            continue;
        };
        if let Some(k) = whole_clause(u, j, bases) {
            if !only_maps(u, plans, j) {
                return None;
            }
            if depth > 0 {
                why = Some("it lies in a block inside the first one's, which may not run".into());
            }
            let moves = match why {
                Some(w) => Err(w),
                None => Ok(()),
            };
            return Some((j, k, Between { moves }));
        }
        let text = &u.src[site.span()];
        let named = names
            .iter()
            .any(|b| u.lang.identifiers(text).iter().any(|x| x == b));
        if named && d.name == "exit data" {
            return None;
        }
        if named && d.name != "enter data" {
            why.get_or_insert_with(|| {
                format!("the '{}' directive between uses the structure", d.name)
            });
        }
    }
    None
}

/// The clause of site `j` that maps one of `bases` whole, alone.
fn whole_clause(
    u: &Unit,
    j: usize,
    bases: &[(String, Vec<String>, Access, usize)],
) -> Option<usize> {
    let d = u.dir(j)?;
    d.clauses.iter().position(|c| {
        let items: Vec<&str> = c.items().map(|x| x.text.as_str()).collect();
        u.tables.clause(&c.name).is_some_and(|r| r.map.is_some())
            && items.len() == 1
            && bases.iter().any(|(b, ..)| u.lang.names_whole(items[0], b))
    })
}

/// What code between two directives means for moving a structure's map over it.
enum Code {
    /// Nothing that matters.
    Plain,
    /// It may change the structure or skip the second directive: why.
    Unsafe(String),
    /// It closes the block the first directive is in.
    Leaves,
}

/// The file's tokens that start in bytes `r`.
fn tokens_in(u: &Unit, r: &Range<usize>) -> Range<usize> {
    let first_at = |at: usize| {
        let (mut lo, mut hi) = (0, u.syntax.token_count());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if u.syntax.token_range(mid).start < at {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    };
    first_at(r.start)..first_at(r.end)
}

/// Statements that leave the code between for elsewhere (`goto`, labels and `case` come
/// from the syntax's jumps, calls such as `longjmp` from its calls).
const LEAVING: &[&str] = &[
    "return",
    "break",
    "continue",
    "throw",
    "co_return",
    "co_await",
    "co_yield",
];

/// Reads the code in `range` (no directives), keeping the brace `depth` relative to the first
/// directive's block. `jumps`: the file's (`Syntax::jumps`).
fn code_between(
    u: &Unit,
    range: Range<usize>,
    bases: &[&str],
    depth: &mut i64,
    jumps: &[Jump],
) -> Code {
    let toks = tokens_in(u, &range);
    let text = |k: usize| -> &str {
        if toks.contains(&k) {
            &u.src[u.syntax.token_range(k)]
        } else {
            ""
        }
    };
    let ident = |k: usize| {
        text(k)
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
    };
    let mut why: Option<String> = None;
    // Calls may change the structure (a reference or pointer to it may be anywhere).
    if let Some(c) = u.syntax.calls_in(toks.clone()).first() {
        why = Some(format!(
            "the code between calls '{}', which may change the structure",
            c.name
        ));
    }
    // A `goto` from the code, or a label or `case` in it that a jump reaches.
    let jump = jumps.iter().find_map(|j| match j {
        Jump::Goto { from, to, .. } if toks.contains(from) || toks.contains(to) => {
            Some("a 'goto' or its label lies between them")
        }
        Jump::Case { label, .. } if toks.contains(label) => {
            Some("a 'case' label lies between them")
        }
        _ => None,
    });
    // Variables declared between the two: a write to one cannot reach the structure.
    let mut locals: Vec<&str> = Vec::new();
    for k in toks.clone() {
        let w = text(k);
        if ident(k)
            && k > toks.start
            && (DECL_WORDS.contains(&text(k - 1))
                || text(k - 1) == "*" && k > toks.start + 1 && DECL_WORDS.contains(&text(k - 2)))
        {
            locals.push(w);
        }
        if let Some(what) = hidden_write(k, toks.start, &text, &ident, &locals) {
            why.get_or_insert(what);
        }
        if u.syntax.is_preprocessor_line(k) {
            why.get_or_insert_with(|| "a preprocessor line lies between them".into());
            continue;
        }
        match w {
            "{" => *depth += 1,
            "}" => {
                *depth -= 1;
                if *depth < 0 {
                    return Code::Leaves;
                }
            }
            _ if !ident(k) => {}
            _ if bases.contains(&w) => {
                why.get_or_insert_with(|| format!("the code between uses '{w}'"));
            }
            _ if bases.contains(&"this") => {
                why.get_or_insert_with(|| {
                    "code lies between them, which may use the members of '*this'".into()
                });
            }
            _ if LEAVING.contains(&w) => {
                why.get_or_insert_with(|| format!("'{w}' between them may skip the second"));
            }
            _ => {}
        }
    }
    if let Some(j) = jump {
        why.get_or_insert_with(|| j.into());
    }
    why.map_or(Code::Plain, Code::Unsafe)
}

/// Type words after which a name is a new variable (`int k`, `double *p`).
const DECL_WORDS: &[&str] = &[
    "int", "long", "short", "char", "float", "double", "unsigned", "signed", "bool", "_Bool",
    "size_t", "auto", "const",
];

/// Why token `k` (of the code between, which starts at token `first`) may write memory the
/// structure can alias (a write through a pointer, an element, a member, or to a variable
/// not declared between the two, which may be a reference), or may be a macro statement
/// (`RESET;`); None for writes to new locals.
fn hidden_write<'s>(
    k: usize,
    first: usize,
    text: &dyn Fn(usize) -> &'s str,
    ident: &dyn Fn(usize) -> bool,
    locals: &[&str],
) -> Option<String> {
    let w = text(k);
    let prev = |k: usize| k.checked_sub(1).filter(|&p| p >= first);
    let starts = prev(k).is_none_or(|p| matches!(text(p), ";" | "{" | "}"));
    if ident(k) && starts && text(k + 1) == ";" {
        return Some(format!(
            "'{w}' between them may be a macro that changes the structure"
        ));
    }
    let local = |j: Option<usize>| {
        j.is_some_and(|j| {
            ident(j)
                && locals.contains(&text(j))
                && prev(j).is_none_or(|p| !matches!(text(p), "." | "->" | "*" | "&"))
        })
    };
    let assign = matches!(
        w,
        "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "&=" | "|=" | "^=" | "<<=" | ">>="
    );
    let step = matches!(w, "++" | "--");
    let next = Some(k + 1).filter(|&j| !text(j).is_empty());
    if assign && !local(prev(k)) || step && !local(prev(k)) && !local(next) {
        return Some("the code between writes memory that may belong to the structure".into());
    }
    None
}

/// Whether runtime routine `name` starts (`Some(false)`) or ends (`Some(true)`) the device
/// lifetime of the bytes its first argument points to, read from the `target enter data` or
/// `target exit data` of `{bytes}` it becomes in the runtime table (not a pointer's
/// attachment); None for any other routine.
fn lifetime_routine(tables: &crate::rules::Tables, name: &str) -> Option<bool> {
    let lines = tables.runtime(name)?.pragma.as_ref()?.lines();
    if !lines.iter().any(|l| l.contains("{bytes}")) {
        return None;
    }
    if lines.iter().any(|l| l.starts_with("target exit data")) {
        Some(true)
    } else if lines.iter().any(|l| l.starts_with("target enter data")) {
        Some(false)
    } else {
        None
    }
}

/// What one directive or runtime call does with the members of a structure.
struct MemberData {
    /// The functions around it.
    functions: Vec<String>,
    /// The structure is declared in the function (a local or a parameter): other functions
    /// name other objects. A structure of file scope is the same object in every function.
    local: bool,
    /// Its site, or for a call the site its diagnostic goes with.
    site: usize,
    /// It ends the data's lifetime (`exit data`, `acc_copyout`, `acc_delete`), and is
    /// translated.
    exit: bool,
    /// Where it names the first member, and how it is spelled there (the clause or call).
    at: usize,
    spelled: String,
    /// The structure.
    base: String,
    /// Its members named whole (`s.a`, not `s.a[0:n]`), or None where it maps the structure
    /// whole.
    members: Option<Vec<String>>,
    /// How the members are reached.
    access: Access,
}

/// The structure and member that clause item (or address argument) `item` names whole:
/// `s.a`, `p->a` (not `s.a[0:n]` or `s.a.b`).
fn whole_member<'i>(l: &dyn Language, item: &'i str) -> Option<(&'i str, &'i str, Access)> {
    let (base, member, access) = l.member_of(item)?;
    let squeeze = |t: &str| t.split_whitespace().collect::<String>();
    (squeeze(item) == squeeze(&l.member(base, member, access))).then_some((base, member, access))
}

/// Members of one structure given separate device lifetimes: an `exit data` (or
/// `acc_copyout`/`acc_delete`) of some members of a structure whose other members other
/// directives or calls of the same function map, or of any function where the structure
/// is of file scope. OpenACC counts references per member;
/// OpenMP per structure (its mapped members are one block), so that exit can unmap the other
/// members with it, without copying them back, and a construct that maps members entered
/// apart extends a present mapping, which runtimes reject. Reported, translated as written.
/// C and C++.
pub fn member_lifetimes(u: &Unit, plans: &mut [Plan]) {
    let exits = u.dirs.iter().flatten().any(|d| d.name == "exit data")
        || u.src.contains("acc_copyout")
        || u.src.contains("acc_delete");
    if u.lang.name() == "Fortran" || u.sites.is_empty() || !exits {
        return;
    }
    let mut all: Vec<MemberData> = Vec::new();
    for (i, plan) in plans.iter().enumerate() {
        let (Some(d), Some(t)) = (u.dir(i), u.sites[i].token()) else {
            continue;
        };
        let exit = d.name == "exit data" && matches!(plan.action, Action::Rewrite(_));
        let mut here: Vec<MemberData> = Vec::new();
        for c in d
            .clauses
            .iter()
            .filter(|c| LIFETIME_CLAUSES.contains(&c.name.as_str()))
        {
            for item in c.items() {
                let (base, member, access) = match whole_member(u.lang, &item.text) {
                    Some((b, m, a)) => (b, Some(m), a),
                    None => match u.lang.base_name(&item.text) {
                        Some(b) if u.lang.names_whole(&item.text, b) => (b, None, Access::Value),
                        _ => continue,
                    },
                };
                match here.iter_mut().find(|m| u.lang.same_name(&m.base, base)) {
                    Some(m) => match (&mut m.members, member) {
                        (Some(v), Some(x)) => v.push(x.to_string()),
                        (v, _) => *v = None,
                    },
                    None => here.push(MemberData {
                        functions: Vec::new(),
                        local: true,
                        site: i,
                        exit,
                        at: item.span().start,
                        spelled: u.src[c.span()].to_string(),
                        base: base.to_string(),
                        members: member.map(|x| vec![x.to_string()]),
                        access,
                    }),
                }
            }
        }
        if !here.is_empty() {
            let functions = u.syntax.enclosing_functions(t);
            for mut m in here {
                m.functions = functions.clone();
                m.local = u.syntax.declared_in_function(t, &m.base);
                all.push(m);
            }
        }
    }
    // The runtime data routines' address arguments (`acc_copyout(&s.a, sizeof s.a)`).
    let n = if u.src.contains("acc_") {
        u.syntax.token_count()
    } else {
        0
    };
    let text = |k: usize| {
        if k < n {
            &u.src[u.syntax.token_range(k)]
        } else {
            ""
        }
    };
    for call in u.syntax.calls_in(0..n) {
        let Some(exit) = lifetime_routine(u.tables, &call.name).filter(|_| !call.member) else {
            continue;
        };
        if text(call.tok + 1) != "(" || text(call.tok + 2) != "&" {
            continue;
        }
        // The first argument after its `&`, to the first comma outside brackets.
        let (mut k, mut depth) = (call.tok + 3, 0i32);
        while k < n && !(depth == 0 && matches!(text(k), "," | ")")) {
            match text(k) {
                "(" | "[" => depth += 1,
                ")" | "]" => depth -= 1,
                _ => {}
            }
            k += 1;
        }
        if k >= n || k == call.tok + 3 {
            continue;
        }
        let r = u.syntax.token_range(call.tok + 3).start..u.syntax.token_range(k - 1).end;
        let Some((base, member, access)) = whole_member(u.lang, &u.src[r.clone()]) else {
            continue;
        };
        let at = u.syntax.token_range(call.tok).start;
        // The diagnostic goes with the last site before the call (any site: its plan's
        // diagnostics are all reported).
        let site = u
            .sites
            .partition_point(|s| s.span().start < at)
            .saturating_sub(1);
        all.push(MemberData {
            functions: u.syntax.enclosing_functions(call.tok),
            local: u.syntax.declared_in_function(call.tok, base),
            site,
            exit,
            at,
            spelled: format!("{}(&{}, ...)", call.name, &u.src[r]),
            base: base.to_string(),
            members: Some(vec![member.to_string()]),
            access,
        });
    }
    // The items by base name: each exit compares itself with its own base's items only (a
    // file of many functions naming the same structures would compare all with all).
    let mut by_base: HashMap<Cow<str>, Vec<usize>> = HashMap::default();
    for (k, x) in all.iter().enumerate() {
        by_base.entry(key(u.lang, &x.base)).or_default().push(k);
    }
    let mut found: Vec<(usize, Diagnostic)> = Vec::new();
    for (k, x) in all.iter().enumerate() {
        let Some(mine) = x.members.as_ref().filter(|_| x.exit) else {
            continue;
        };
        let same = |y: &MemberData| {
            (y.functions == x.functions || !(x.local || y.local))
                && u.lang.same_name(&y.base, &x.base)
        };
        let group = by_base
            .get(&key(u.lang, &x.base))
            .map_or(&[][..], Vec::as_slice);
        // Mapped whole somewhere: its members are parts of that data, in OpenACC too.
        if group
            .iter()
            .any(|&j| same(&all[j]) && all[j].members.is_none())
        {
            continue;
        }
        let mut others: Vec<&str> = Vec::new();
        let mut line = 0;
        for &j in group {
            let y = &all[j];
            if j == k || !same(y) {
                continue;
            }
            for m in y.members.iter().flatten() {
                let named = |v: &&str| u.lang.same_name(v, m);
                if !mine.iter().map(String::as_str).any(|v| named(&v)) && !others.iter().any(named)
                {
                    if others.is_empty() {
                        line = u.line_at(y.at);
                    }
                    others.push(m);
                }
            }
        }
        if others.is_empty() {
            continue;
        }
        let shown = |v: &mut dyn Iterator<Item = &str>| {
            v.map(|m| format!("'{}'", u.lang.member(&x.base, m, x.access)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let ending = shown(&mut mine.iter().map(String::as_str));
        let kept = shown(&mut others.iter().copied());
        let base = &x.base;
        found.push((x.site, Diagnostic::new(x.at, id::STRUCT_MEMBER_LIFETIME, format!("'{}' ends the device data of {ending} apart from {kept}, which line {line} maps: OpenACC counts references per member, OpenMP per structure, so this can also unmap {kept} (without copying it back) or leave {ending} present; translated as written: enter and exit the members of '{base}' together, or map '{base}' whole", x.spelled))));
    }
    for (site, d) in found {
        plans[site].diags.push(d);
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::migrate_source;
    use crate::options::Options;
    use crate::rules::id;
    use crate::semantic::SemanticConfig;

    /// The structure's map moves over code the syntax shows harmless; a `goto` out, a label a
    /// `goto` reaches, a `case`, a `return`, a call (`longjmp` too) or a write that may reach
    /// the structure between leave both directives, from syntax alone as with libclang.
    #[test]
    fn code_between_from_the_syntax() {
        let head = "#include <setjmp.h>\nstruct F { int n; double *a; };\njmp_buf jb;\n";
        let pair = |between: &str| {
            format!(
                "{head}void f(struct F o, double *q, int m, int s) {{\n#pragma acc enter data copyin(o.a[0:m])\n{between}\n#pragma acc enter data copyin(o)\nout:;\n}}\n"
            )
        };
        let moved = [
            "  int k = m * 2;\n  k += m > 1 ? 1 : 2;",
            "  double t[4]; (void)t;",
        ];
        let left = [
            ("  if (m) goto out;", "goto"),
            ("  if (m) return;", "'return'"),
            ("  longjmp(jb, 1);", "calls 'longjmp'"),
            ("  switch (s) { case 1: ; }", "case"),
            ("  *q = 1;", "writes memory"),
            ("  RESET;", "macro"),
        ];
        for sem in [SemanticConfig::syntactic(), SemanticConfig::default()] {
            for code in moved {
                let out = migrate_source(&pair(code), None, &Options::default(), &sem);
                assert!(
                    out.diagnostics
                        .iter()
                        .any(|d| d.rule == id::MEMBER_MAP_ORDER)
                        && out.text.contains("map(to: o) map(to: o.a[0:m])"),
                    "{code}:\n{}",
                    out.text
                );
            }
            for (code, says) in left {
                let out = migrate_source(&pair(code), None, &Options::default(), &sem);
                assert!(
                    out.diagnostics
                        .iter()
                        .any(|d| d.rule == id::MEMBER_MAP_ORDER_LEFT && d.message.contains(says)),
                    "{code}: {:?}",
                    out.diagnostics
                );
                assert_eq!(
                    out.text.matches("#pragma acc enter data").count(),
                    2,
                    "{code}:\n{}",
                    out.text
                );
            }
        }
    }

    /// A structure of file scope is one object in every function: an exit of one member in
    /// one function while another maps the other is reported. A local or a parameter of the
    /// same name is another object (an address taken, `p = &g`, declares nothing).
    #[test]
    fn member_lifetimes_across_functions_for_file_scope_structures() {
        let head = "struct P { int a; int b; };\nstruct P g;\n";
        let enter = "void start(void) {\n  struct P *p = &g;\n  (void)p;\n#pragma acc enter data copyin(g.a, g.b)\n}\n";
        let exit_a = |decl: &str| {
            format!("void finish(void) {{\n{decl}#pragma acc exit data copyout(g.a)\n}}\n")
        };
        for sem in [SemanticConfig::syntactic(), SemanticConfig::default()] {
            for (decl, warned) in [("", true), ("  struct P g = { 1, 2 };\n", false)] {
                let src = format!("{head}{enter}{}", exit_a(decl));
                let out = migrate_source(&src, None, &Options::default(), &sem);
                assert_eq!(
                    out.diagnostics
                        .iter()
                        .any(|d| d.rule == id::STRUCT_MEMBER_LIFETIME),
                    warned,
                    "{src}"
                );
            }
        }
    }
}
