//! A named common block in an OpenMP data-motion clause (`map(tofrom: /blk/)`, `target
//! update to(/blk/)`): gfortran 12 rejects the block's name there (a syntax error) and
//! flang-22 stops lowering it, while both map the block's variables by name. OpenACC's
//! `/blk/` in a data clause means every variable of the block, so the OpenMP clause names
//! the members the unit's `common` statements give the block, in their order (or, where the
//! unit has none for it, those of its host). A block whose members are not known leaves
//! the directive unchanged with a warning.

use super::Front;
use super::lex::TokKind;
use super::stmt::Kind;
use crate::diag::Diagnostic;
use crate::intent::{Action, ClauseOp, OmpClause, Plan};
use crate::rules::id;
use std::cell::RefCell;
use std::collections::HashMap;

/// Clauses whose list items are mapped or moved data.
const DATA_MOTION: [&str; 3] = ["map", "to", "from"];

/// Per named common block of unit `unit` (lower case, without slashes): its members.
pub fn blocks(src: &str, front: &Front, unit: usize) -> HashMap<String, Vec<String>> {
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    let lx = &front.lexed;
    for (s, c) in front.structure.stmts.iter().enumerate() {
        if c.kind != Kind::Common || front.structure.stmt_unit[s] as usize != unit {
            continue;
        }
        let toks = lx.stmts[s].toks();
        let text = |i: usize| lx.text(src, i).to_ascii_lowercase();
        let mut block: Option<String> = None;
        let mut depth = 0;
        let mut i = c.rest().max(toks.start);
        while i < toks.end {
            let t = text(i);
            match (lx.tokens[i].kind(), t.as_str()) {
                (TokKind::Punct, "(") => depth += 1,
                (TokKind::Punct, ")") => depth -= 1,
                (TokKind::Punct, "//") if depth == 0 => block = None,
                (TokKind::Punct, "/") if depth == 0 => {
                    // `/name/`
                    block = (i + 2 < toks.end && lx.tokens[i + 1].kind() == TokKind::Name)
                        .then(|| text(i + 1));
                    i += 2;
                }
                (TokKind::Name, _) if depth == 0 => {
                    if let Some(b) = &block {
                        out.entry(b.clone()).or_default().push(t);
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
    out
}

/// `arg` of a data-motion clause with each `/name/` item replaced by its block's members
/// (`members` of a block name, lower case without slashes; None: not known, which is
/// `Err` with the name as written).
fn with_members(
    arg: &str,
    members: &dyn Fn(&str) -> Option<Vec<String>>,
) -> Result<Option<String>, String> {
    // The modifiers end at the first `:` outside parentheses (`tofrom: a(1:n), /b/`).
    let (modifiers, list) = match super::queues::top_level_colon(arg) {
        Some(k) => (Some(arg[..k].trim_end()), &arg[k + 1..]),
        None => (None, arg),
    };
    let mut changed = false;
    let mut items = Vec::new();
    for item in super::queues::split_outside_parentheses(list, ',') {
        let Some(name) = item.strip_prefix('/').and_then(|r| r.strip_suffix('/')) else {
            items.push(item);
            continue;
        };
        match members(&name.trim().to_ascii_lowercase()) {
            Some(m) if !m.is_empty() => {
                changed = true;
                items.push(m.join(", "));
            }
            _ => return Err(item),
        }
    }
    Ok(changed.then(|| match modifiers {
        Some(m) => format!("{m}: {}", items.join(", ")),
        None => items.join(", "),
    }))
}

/// The members of block `name` in unit `unit`: its own `common` statements, else those of
/// its hosts (host association), unless the unit declares a variable of a member's name
/// (which hides the host's).
fn members_of(
    src: &str,
    front: &Front,
    per_unit: &RefCell<HashMap<usize, HashMap<String, Vec<String>>>>,
    unit: usize,
    name: &str,
) -> Option<Vec<String>> {
    let mut u = Some(unit);
    while let Some(k) = u {
        let found = per_unit
            .borrow_mut()
            .entry(k)
            .or_insert_with(|| blocks(src, front, k))
            .get(name)
            .cloned();
        if let Some(m) = found {
            let hidden = k != unit
                && front
                    .facts
                    .units
                    .get(unit)
                    .is_some_and(|f| m.iter().any(|n| f.var(n).is_some()));
            return (!hidden).then_some(m);
        }
        u = front.structure.units[k].parent;
    }
    None
}

/// Name the members of common blocks in the data-motion clauses of every rewritten plan
/// (`acc_sites[i]`: plan `i`'s index in `front.sites`; `at(i)`: where plan `i`'s site
/// starts). A block whose members are not known (the unit neither declares it nor gets it
/// from a host) leaves the directive unchanged, with a warning: gfortran rejects `/blk/`
/// in an OpenMP clause.
pub fn name_members(
    src: &str,
    front: &Front,
    acc_sites: &[usize],
    plans: &mut [Plan],
    at: &dyn Fn(usize) -> usize,
) -> Vec<Diagnostic> {
    let per_unit = RefCell::new(HashMap::new());
    let mut out = Vec::new();
    for (i, plan) in plans.iter_mut().enumerate() {
        let Action::Rewrite(rw) = &mut plan.action else {
            continue;
        };
        let mut clauses: Vec<&mut OmpClause> = rw
            .ops
            .iter_mut()
            .filter_map(|op| match op {
                ClauseOp::Replace(cs) => Some(cs.iter_mut()),
                _ => None,
            })
            .flatten()
            .chain(rw.append.iter_mut())
            .filter(|c| DATA_MOTION.contains(&c.name))
            .filter(|c| c.arg.as_deref().is_some_and(|a| a.contains('/')))
            .collect();
        if clauses.is_empty() {
            continue;
        }
        let unit = front.structure.regions[acc_sites[i]].unit();
        let mut unknown = None;
        let mut named = Vec::new();
        for c in clauses.iter_mut() {
            let members = |n: &str| members_of(src, front, &per_unit, unit?, n);
            match c.arg.as_deref().map(|a| with_members(a, &members)) {
                Some(Ok(Some(arg))) => named.push(arg),
                Some(Ok(None)) | None => {
                    named.push(c.arg.as_deref().unwrap_or_default().to_string())
                }
                Some(Err(item)) => {
                    unknown = Some(item);
                    break;
                }
            }
        }
        if let Some(item) = unknown {
            plan.unchanged();
            out.push(Diagnostic::new(
                at(i),
                id::NOT_TRANSLATED,
                format!("the common block '{item}' is not declared in this program unit nor in a host of it (or a variable of the unit hides a member): OpenMP needs the block's members by name (gfortran 12 rejects '{item}' in a clause); the directive is left unchanged"),
            ));
            continue;
        }
        for (c, arg) in clauses.iter_mut().zip(named) {
            c.arg = Some(arg.into());
        }
    }
    out
}
