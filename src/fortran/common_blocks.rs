//! A named common block in an OpenMP data-motion clause (`map(tofrom: /blk/)`, `target
//! update to(/blk/)`): gfortran 12 rejects the block's name there (a syntax error) and
//! flang-22 stops lowering it, while both map the block's variables by name. OpenACC's
//! `/blk/` in a data clause means every variable of the block, so the OpenMP clause names
//! the members the unit's `common` statements give the block, in their order. A block the
//! unit does not declare itself (host association) stays as written.

use super::Front;
use super::lex::TokKind;
use super::stmt::Kind;
use crate::intent::{Action, ClauseOp, OmpClause, Plan};
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
        let toks = lx.stmts[s].toks.clone();
        let text = |i: usize| lx.text(src, i).to_ascii_lowercase();
        let mut block: Option<String> = None;
        let mut depth = 0;
        let mut i = c.rest.max(toks.start);
        while i < toks.end {
            let t = text(i);
            match (lx.tokens[i].kind, t.as_str()) {
                (TokKind::Punct, "(") => depth += 1,
                (TokKind::Punct, ")") => depth -= 1,
                (TokKind::Punct, "//") if depth == 0 => block = None,
                (TokKind::Punct, "/") if depth == 0 => {
                    // `/name/`
                    block = (i + 2 < toks.end && lx.tokens[i + 1].kind == TokKind::Name)
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

/// `arg` of a data-motion clause with each `/name/` item of `blocks` replaced by the
/// block's members; None when it names no such block.
fn with_members(arg: &str, blocks: &HashMap<String, Vec<String>>) -> Option<String> {
    // The modifiers end at the first `:` outside parentheses (`tofrom: a(1:n), /b/`).
    let mut depth = 0i32;
    let colon = arg.char_indices().find_map(|(k, ch)| {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            ':' if depth == 0 => return Some(k),
            _ => {}
        }
        None
    });
    let (modifiers, list) = match colon {
        Some(k) => (Some(arg[..k].trim_end()), &arg[k + 1..]),
        None => (None, arg),
    };
    let mut changed = false;
    let items: Vec<String> = super::queues::split_outside_parentheses(list, ',')
        .into_iter()
        .map(|item| {
            let name = item
                .strip_prefix('/')
                .and_then(|r| r.strip_suffix('/'))
                .map(|n| n.trim().to_ascii_lowercase());
            match name.and_then(|n| blocks.get(&n)) {
                Some(members) if !members.is_empty() => {
                    changed = true;
                    members.join(", ")
                }
                _ => item,
            }
        })
        .collect();
    changed.then(|| match modifiers {
        Some(m) => format!("{m}: {}", items.join(", ")),
        None => items.join(", "),
    })
}

/// Name the members of common blocks in the data-motion clauses of every rewritten plan
/// (`acc_sites[i]`: plan `i`'s index in `front.sites`).
pub fn name_members(src: &str, front: &Front, acc_sites: &[usize], plans: &mut [Plan]) {
    let mut per_unit: HashMap<usize, HashMap<String, Vec<String>>> = HashMap::new();
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
        let Some(unit) = front.structure.regions[acc_sites[i]].unit else {
            continue;
        };
        let blocks = per_unit
            .entry(unit)
            .or_insert_with(|| blocks(src, front, unit));
        for c in clauses.iter_mut() {
            if let Some(arg) = c.arg.as_deref().and_then(|a| with_members(a, blocks)) {
                c.arg = Some(arg);
            }
        }
    }
}
