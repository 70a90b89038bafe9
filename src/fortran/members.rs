//! What the statements of a region do with the components of a derived-type variable
//! (`t%a = …`, `… = t%b`, `call f(t)`): the shared decision that maps a structure around
//! its listed components (`translate::structs`) reads it. Conservative where Fortran passes
//! by reference: a component or the whole variable that a procedure, an `associate` or
//! `select type` name or a pointer may reach counts as written, so that the structure is
//! copied back rather than a device write lost.

use super::Front;
use super::facts;
use super::lang::{CONDITION_KEYWORDS, is_intrinsic_function};
use super::lex::TokKind;
use super::stmt::{Kind, Toks};
use crate::syntax::MemberUses;
use std::ops::Range;

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
            .any(|r| r.start <= s.span().start && s.span().end <= r.end)
        {
            continue;
        }
        let t = Toks::new(src, lx, s);
        let mentions: Vec<usize> = s
            .toks()
            .clone()
            .filter(|&k| {
                t.is_name(k)
                    && t.text(k).eq_ignore_ascii_case(base)
                    && (k == s.toks().start || t.text(k - 1) != "%")
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
                || writes.contains(&lx.tokens[k].start())
                || in_procedure_arguments(&t, s.toks().start, k);
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

/// An intrinsic function that never assigns its arguments nor gives a pointer that may:
/// a component inside its parentheses is only read.
fn read_only_intrinsic(name: &str) -> bool {
    is_intrinsic_function(name) && !matches!(name, "c_loc" | "c_funloc")
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
                !read_only_intrinsic(&name) && !CONDITION_KEYWORDS.contains(&name.as_str())
            }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uses(src: &str, base: &str) -> MemberUses {
        let kind = crate::fortran::form::kind_of(std::path::Path::new("x.f90")).expect("Fortran");
        let front = Front::new(src, kind, |_| Default::default());
        member_uses(src, &front, 0..front.lexed.stmts.len(), &[], base)
    }

    /// Any intrinsic function only reads a component in its arguments (one list of them);
    /// `c_loc` gives a pointer through which it may be written.
    #[test]
    fn intrinsic_functions_read_their_arguments() {
        let src = "subroutine s(t, k, p)\n  use iso_c_binding\n  type(tt) :: t\n  integer :: k(1)\n  type(c_ptr) :: p\n  k = maxloc(t%a)\n  k(1) = len_trim(t%s) + findloc(t%b, 1, 1)\n  p = c_loc(t%c)\nend subroutine\n";
        let u = uses(src, "t");
        assert_eq!(u.members, ["a", "s", "b", "c"]);
        assert_eq!(u.written, ["c"]);
    }
}
