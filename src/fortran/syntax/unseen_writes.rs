//! [`Syntax::may_write_unseen`](crate::syntax::Syntax::may_write_unseen) in Fortran: the
//! facts count assignments, `call` arguments and input items as writes; a name may also be
//! defined through an `associate` name or as the argument of a function reference.

use crate::fortran::Front;
use crate::fortran::lex::TokKind;
use crate::fortran::stmt::{Kind, Toks};
use std::ops::Range;

/// Statement keywords followed by a parenthesized expression (`print` and `write` control
/// lists only name units and formats).
const KEYWORDS: [&str; 9] = [
    "if",
    "elseif",
    "while",
    "case",
    "where",
    "elsewhere",
    "forall",
    "print",
    "write",
];

/// Whether the statements starting in `bytes` hold an `associate` construct, or pass `name`
/// (lower case) to a function: inside the parentheses after a name that no declaration of
/// the unit makes an array and that is no pure intrinsic.
pub(super) fn may_write(src: &str, front: &Front, bytes: Range<usize>, name: &str) -> bool {
    let (lx, st) = (&front.lexed, &front.structure);
    let first = lx.stmts.partition_point(|s| s.span().start < bytes.start);
    for k in first..lx.stmts.len() {
        let s = &lx.stmts[k];
        if s.span().start >= bytes.end {
            break;
        }
        if matches!(st.stmts[k].kind, Kind::Associate) {
            return true;
        }
        let t = Toks::new(src, lx, s);
        let unit = st.unit_of(k);
        let mut open: Vec<usize> = Vec::new();
        for i in s.toks() {
            match t.text(i).as_ref() {
                "(" => open.push(i),
                ")" => {
                    open.pop();
                }
                _ if lx.tokens[i].kind() == TokKind::Name
                    && t.text(i).eq_ignore_ascii_case(name) =>
                {
                    let Some(&p) = open.last() else { continue };
                    if p == s.toks().start || !t.is_name(p - 1) {
                        continue;
                    }
                    let callee = t.text(p - 1).to_ascii_lowercase();
                    // A statement's own parentheses: `if (k > 1)`, `select case (k)`.
                    if KEYWORDS.contains(&callee.as_str()) {
                        continue;
                    }
                    let array = unit
                        .and_then(|u| front.facts.lookup(st, u, &callee))
                        .is_some_and(|v| v.is_array());
                    let intrinsic = crate::fortran::dependence::PURE
                        .binary_search(&callee.as_str())
                        .is_ok();
                    if !array && !intrinsic {
                        return true;
                    }
                }
                _ => {}
            }
        }
    }
    false
}
