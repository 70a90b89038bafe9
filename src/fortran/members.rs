//! What the statements of a region do with the components of a derived-type variable
//! (`t%a = …`, `… = t%b`, `call f(t)`): the shared decision that maps a structure around
//! its listed components (`translate::structs`) reads it. Conservative where Fortran passes
//! by reference: a component or the whole variable that a procedure, an `associate` or
//! `select type` name or a pointer may reach counts as written, so that the structure is
//! copied back rather than a device write lost.

use super::Front;
use super::facts;
use super::lex::TokKind;
use super::stmt::{Kind, Toks};
use crate::syntax::MemberUses;
use std::ops::Range;

/// Intrinsic procedures that never assign their arguments: a component inside their
/// parentheses is only read.
const READ_ONLY_INTRINSICS: &[&str] = &[
    "abs",
    "all",
    "any",
    "count",
    "dble",
    "real",
    "int",
    "nint",
    "size",
    "shape",
    "lbound",
    "ubound",
    "sum",
    "product",
    "maxval",
    "minval",
    "max",
    "min",
    "mod",
    "modulo",
    "sqrt",
    "exp",
    "log",
    "sin",
    "cos",
    "tan",
    "present",
    "allocated",
    "associated",
    "huge",
    "tiny",
    "epsilon",
    "sign",
    "merge",
    "iand",
    "ior",
    "ieor",
    "ishft",
    "btest",
    "len",
    "trim",
    "dot_product",
    "matmul",
    "transpose",
    "floor",
    "ceiling",
    "aimag",
    "conjg",
    "cmplx",
];

/// Keywords whose parentheses hold a condition or selector that is only read.
const CONDITION_KEYWORDS: &[&str] = &["if", "while", "case", "where", "forall"];

/// The uses of `base`'s components in statements `stmts` (indices of the front end's
/// statements), leaving out those whose byte range lies in `skip`.
pub fn member_uses(
    src: &str,
    front: &Front,
    stmts: Range<usize>,
    skip: &[Range<usize>],
    base: &str,
) -> MemberUses {
    let (lx, st) = (&front.lexed, &front.structure);
    let mut out = MemberUses::default();
    for i in stmts {
        let (Some(s), Some(c)) = (lx.stmts.get(i), st.stmts.get(i)) else {
            continue;
        };
        if skip
            .iter()
            .any(|r| r.start <= s.span.start && s.span.end <= r.end)
        {
            continue;
        }
        let t = Toks::new(src, lx, s);
        let mentions: Vec<usize> = s
            .toks
            .clone()
            .filter(|&k| {
                t.is_name(k)
                    && t.text(k).eq_ignore_ascii_case(base)
                    && (k == s.toks.start || t.text(k - 1) != "%")
            })
            .collect();
        if mentions.is_empty() {
            continue;
        }
        let writes = facts::uses(src, lx, st, i..i + 1)
            .into_iter()
            .find(|u| u.name.eq_ignore_ascii_case(base))
            .map(|u| u.writes)
            .unwrap_or_default();
        // Statements through which every mention may be written: a call's arguments, an
        // `associate`/`select type` name or a pointer then reaches the storage.
        let aliased = match &c.kind {
            Kind::Call | Kind::Associate | Kind::Select | Kind::PointerAssignment(_) => true,
            Kind::IfStmt(action) => t.is(*action, "call") || t.text(*action + 1) == "=>",
            _ => false,
        };
        for k in mentions {
            let written = aliased
                || writes.contains(&lx.tokens[k].start)
                || in_procedure_arguments(&t, s.toks.start, k);
            let member = (t.text(k + 1) == "%" && t.is_name(k + 2))
                .then(|| t.text(k + 2).to_ascii_lowercase());
            match member {
                Some(m) => {
                    if written && !out.written.contains(&m) {
                        out.written.push(m.clone());
                    }
                    if !out.members.contains(&m) {
                        out.members.push(m);
                    }
                }
                None => {
                    out.whole = true;
                    out.whole_written |= written;
                }
            }
        }
    }
    out
}

/// Whether token `k` lies inside parentheses that follow a name other than a read-only
/// intrinsic or a condition keyword: the arguments of a procedure that may assign them (an
/// array subscript counts too, conservatively).
fn in_procedure_arguments(t: &Toks, first: usize, k: usize) -> bool {
    (first..k).any(|o| {
        t.text(o) == "("
            && t.after(o).is_some_and(|a| k < a)
            && o > first
            && t.kind(o - 1) == Some(TokKind::Name)
            && {
                let name = t.text(o - 1).to_ascii_lowercase();
                !READ_ONLY_INTRINSICS.contains(&name.as_str())
                    && !CONDITION_KEYWORDS.contains(&name.as_str())
            }
    })
}
