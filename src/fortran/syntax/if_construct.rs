//! The `if` constructs of a file: each `if (…) then` with its `else if`, `else` and `end if`
//! statements, which the items list one by one.

use super::{FortranSyntax, Item};
use crate::fortran::stmt::{ConstructKind, Kind, Toks};
use crate::hash::HashMap;
use crate::syntax::IfConstruct;

/// Per `if (…) then` statement, its `end if` statement (none where the construct is not
/// closed).
pub(super) fn ends(f: &FortranSyntax) -> HashMap<usize, usize> {
    let mut out = HashMap::default();
    let mut open = Vec::new();
    for (s, c) in f.front.structure.stmts.iter().enumerate() {
        match c.kind {
            Kind::IfThen => open.push(s),
            Kind::End(ConstructKind::If) => {
                if let Some(o) = open.pop() {
                    out.insert(o, s);
                }
            }
            _ => {}
        }
    }
    out
}

/// The `if` construct whose `if (…) then` is item `t`.
pub(super) fn at(f: &FortranSyntax, t: usize) -> Option<IfConstruct> {
    let Item::Stmt(s) = f.items.get(t)? else {
        return None;
    };
    let st = &f.front.structure;
    if st.stmts[s].kind != Kind::IfThen {
        return None;
    }
    let ends = f.if_ends.get_or_init(|| ends(f));
    let end = f.stmt_item(*ends.get(&s)?);
    let mut branches = vec![(Some(condition(f, s)?), Vec::new())];
    let mut k = t + 1;
    while k < end {
        let mut next = crate::syntax::Syntax::stmt_end(f, k).unwrap_or(k + 1);
        if let Item::Stmt(x) = f.items.get(k)? {
            match st.stmts[x].kind {
                Kind::ElseIf => {
                    branches.push((Some(condition(f, x)?), Vec::new()));
                    k += 1;
                    continue;
                }
                Kind::Else => {
                    branches.push((None, Vec::new()));
                    k += 1;
                    continue;
                }
                // A nested construct is one statement of the branch.
                Kind::IfThen => next = f.stmt_item(*ends.get(&x)?) + 1,
                _ => {}
            }
        }
        branches.last_mut()?.1.push(k);
        k = next.max(k + 1);
    }
    Some(IfConstruct {
        branches,
        end: end + 1,
    })
}

/// The tokens of the condition of statement `s` (`if (…) then`, `else if (…) then`).
fn condition(f: &FortranSyntax, s: usize) -> Option<Vec<String>> {
    let lx = &f.front.lexed;
    let t = Toks::new(f.src, lx, &lx.stmts[s]);
    let open = f.front.structure.stmts[s].rest();
    if t.text(open) != "(" {
        return None;
    }
    let close = t.after(open)? - 1;
    Some((open + 1..close).map(|i| t.text(i).into_owned()).collect())
}
