//! Where the OpenMP of a Fortran `declare` goes. The mapping is the shared one
//! (`translate::declare`): in a module, `declare target`; in a subprogram or main program, a
//! data lifetime of the unit, as `target enter data` and `target exit data` before each
//! `return` and before the end of its execution part. Fortran adds two placements:
//!
//! - `target enter data` is executable, so it goes after the unit's last specification
//!   statement (or declarative directive), not where the `declare` stands among them;
//! - OpenACC gives an allocatable module variable of a `declare create` its device copy at
//!   each `allocate` and frees it at each `deallocate`. OpenMP's `declare target` does not,
//!   so such a variable leaves the directive and gets `target enter data map(alloc: …)`
//!   after each `allocate` of it and `target exit data map(delete: …)` before each
//!   `deallocate`, when every one of them in the file can take a directive line.

use super::Front;
use super::facts::Var;
use super::lines::Sentinel;
use super::stmt::{Kind, Toks};
use super::structure::Applies;
use crate::directive::Directive;
use std::ops::Range;

/// Where a statement's directive goes: before its first line or after its last one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Before,
    After,
}

/// A directive line to add next to statement `stmt`, naming `vars`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Around {
    pub stmt: usize,
    pub side: Side,
    pub vars: Vec<String>,
}

/// The variables of a `declare` directive's clauses, as written, with the clause each is in.
fn items(d: &Directive) -> Vec<(String, &str)> {
    d.clauses
        .iter()
        .flat_map(|c| {
            c.items()
                .map(move |x| (x.text.trim().to_string(), c.name.as_str()))
        })
        .collect()
}

/// The declaration a `declare` item names, seen from the unit of site `k`.
fn var_of(front: &Front, k: usize, item: &str) -> Option<Var> {
    let unit = front.structure.regions.get(k)?.unit?;
    let name = item.split(['(', '%', ' ']).next()?.trim();
    front.facts.lookup(&front.structure, unit, name)
}

/// The allocatable variables of the `declare` at site `k` (in a module): the names as
/// written.
pub fn allocatables(front: &Front, k: usize, d: &Directive) -> Vec<String> {
    items(d)
        .into_iter()
        .filter(|(x, _)| var_of(front, k, x).is_some_and(|v| v.allocatable))
        .map(|(x, _)| x)
        .collect()
}

/// Why the `declare` at site `k` cannot be written (offset, reason); `module`: it stands in
/// a module.
pub fn refusal(
    src: &str,
    front: &Front,
    k: usize,
    d: &Directive,
    module: bool,
) -> Option<(usize, String)> {
    let at = front.sites[k].span.start;
    for (x, clause) in items(d) {
        let Some(v) = var_of(front, k, &x) else {
            continue;
        };
        if v.pointer {
            return Some((
                at,
                format!(
                    "'{x}' is a pointer: OpenMP maps its target, not the pointer OpenACC's 'declare' gives a device copy; the directive is left unchanged"
                ),
            ));
        }
        if !v.allocatable {
            continue;
        }
        if !module {
            return Some((
                at,
                format!(
                    "'{x}' is allocatable: OpenACC makes its device copy at each 'allocate' in this unit and frees it at each 'deallocate' and at the unit's end, which is not translated; the directive is left unchanged"
                ),
            ));
        }
        if clause != "create" && clause != "device_resident" {
            return Some((
                at,
                format!(
                    "'{x}' is allocatable: only 'create' of an allocatable module variable is translated (a device copy made at each 'allocate'); the directive is left unchanged"
                ),
            ));
        }
        if let Err((off, why)) = allocations(src, front, &v) {
            return Some((
                off,
                format!("{why}; the 'declare' of '{x}' is left unchanged"),
            ));
        }
    }
    None
}

/// The `allocate` and `deallocate` statements of module variable `v` in the file, each
/// with the side its directive goes on; Err (offset, why) where one cannot take a directive
/// line, or where the variable may be allocated out of sight.
pub fn allocations(src: &str, front: &Front, v: &Var) -> Result<Vec<Around>, (usize, String)> {
    let (lx, st) = (&front.lexed, &front.structure);
    let ours = |k: usize, name: &str| {
        st.unit_of(k)
            .and_then(|u| front.facts.lookup(st, u, name))
            .is_some_and(|w| w.at == v.at && w.name == v.name)
    };
    let mut out = Vec::new();
    for (k, stmt) in lx.stmts.iter().enumerate() {
        let at = stmt.span.start;
        let t = Toks::new(src, lx, stmt);
        let (first, side) = match &st.stmts[k].kind {
            Kind::Allocate => (stmt.toks.start, Side::After),
            Kind::Deallocate => (stmt.toks.start, Side::Before),
            Kind::IfStmt(a) if t.is(*a, "allocate") || t.is(*a, "deallocate") => (*a, Side::After),
            Kind::Call
                if t.text(stmt.toks.start + 1)
                    .eq_ignore_ascii_case("move_alloc")
                    && mentions(&t, stmt.toks.clone(), &v.name) =>
            {
                return Err((
                    at,
                    format!(
                        "'{}' is moved by 'move_alloc': its device copy would not follow",
                        v.name
                    ),
                ));
            }
            _ => continue,
        };
        let mut named = Vec::new();
        let mut k2 = first + 2;
        while let Some(d) = t.designator(k2) {
            let name = lx.lower(src, k2);
            if name == v.name && ours(k, &name) {
                if component(&t, k2, d) {
                    return Err((at, format!("a component of '{}' is allocated here", v.name)));
                }
                named.push(src[lx.tokens[k2].range()].to_string());
            }
            if t.text(d) != "," {
                break;
            }
            k2 = d + 1;
        }
        if named.is_empty() {
            continue;
        }
        if first != stmt.toks.start {
            return Err((
                at,
                format!(
                    "'{}' is allocated or deallocated by the action of a logical 'if', where no directive line can go",
                    v.name
                ),
            ));
        }
        if !own_lines(front, k) {
            return Err((at, "this statement shares a line with another one, so no directive line can go next to it".to_string()));
        }
        if side == Side::Before && stmt.label.is_some() {
            return Err((
                at,
                "this 'deallocate' has a label: a jump to it would skip the 'exit data' before it"
                    .to_string(),
            ));
        }
        out.push(Around {
            stmt: k,
            side,
            vars: named,
        });
    }
    if !out.iter().any(|a| a.side == Side::After) {
        let at = v.at;
        return Err((
            at,
            format!(
                "no 'allocate' of '{}' is in this file, so its device copy cannot follow its allocation",
                v.name
            ),
        ));
    }
    Ok(out)
}

/// Whether the designator at `k..end` reaches a component (`a%b`, `a(i)%b`).
fn component(t: &Toks, k: usize, end: usize) -> bool {
    let mut i = k + 1;
    while i < end {
        match t.text(i).as_ref() {
            "(" | "[" => i = t.after(i).unwrap_or(end),
            "%" => return true,
            _ => i += 1,
        }
    }
    false
}

fn mentions(t: &Toks, toks: Range<usize>, name: &str) -> bool {
    toks.into_iter()
        .any(|i| t.is_name(i) && t.text(i).eq_ignore_ascii_case(name))
}

/// Whether statement `k` has its lines to itself (no other statement starts or ends on them).
pub fn own_lines(front: &Front, k: usize) -> bool {
    let stmts = &front.lexed.stmts;
    let lines = &stmts[k].lines;
    let before = k == 0 || stmts[k - 1].lines.end <= lines.start;
    let after = stmts.get(k + 1).is_none_or(|n| n.lines.start >= lines.end);
    before && after
}

/// Where the executable `target enter data` of the `declare` at site `k` goes: None when
/// the site itself is the last item of its unit's specification part (rewritten in place);
/// else the offset of the line after that last item (a specification statement or a
/// declarative directive).
pub fn enter_point(front: &Front, k: usize) -> Option<usize> {
    let st = &front.structure;
    let unit = &st.units[st.regions[k].unit?];
    let site = &front.sites[k];
    let lx = &front.lexed;
    let mut last = site.span.end;
    if unit.spec.end > unit.spec.start
        && let Some(s) = lx.stmts.get(unit.spec.end - 1)
    {
        last = last.max(s.span.end);
    }
    let exec = lx
        .stmts
        .get(unit.spec.end)
        .map_or(usize::MAX, |s| s.span.start);
    for (j, s) in front.sites.iter().enumerate() {
        let declarative = s.sentinel == Sentinel::Acc
            && st.regions[j].applies == Applies::Declarative
            && st.regions[j].unit == st.regions[k].unit;
        if declarative && s.span.start < exec {
            last = last.max(s.span.end);
        }
    }
    if last == site.span.end {
        return None;
    }
    let line = &front.lines.lines[front.lines.line_of(last.saturating_sub(1))];
    Some(line.next)
}
