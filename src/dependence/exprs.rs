//! Questions about an expression or a statement that its syntax alone answers (names it
//! mentions or assigns, the parts of a canonical loop), shared by the walk of a loop and
//! its reduction patterns.

use super::syntax::{Expr, For, ForInit, Stmt};
use crate::hash::HashSet;

/// Names an expression mentions (not called function names nor members).
pub(super) fn names_in(e: &Expr, out: &mut Vec<String>) {
    match e {
        Expr::Name(_, n) => out.push(n.clone()),
        Expr::Num(..) | Expr::Str(_) | Expr::Sizeof(..) => {}
        Expr::Call(_, _, args) => args.iter().for_each(|a| names_in(a, out)),
        Expr::Index(_, a, b) | Expr::Binary(_, _, a, b) | Expr::Assign(_, _, a, b) => {
            names_in(a, out);
            names_in(b, out);
        }
        Expr::Member(_, a, _, _)
        | Expr::Unary(_, _, a)
        | Expr::Postfix(_, _, a)
        | Expr::Cast(_, _, a) => names_in(a, out),
        Expr::Cond(_, a, b, c) => {
            names_in(a, out);
            names_in(b, out);
            names_in(c, out);
        }
    }
}

pub(super) fn mentions(e: &Expr, name: &str) -> bool {
    let mut n = Vec::new();
    names_in(e, &mut n);
    n.iter().any(|x| x == name)
}

/// Names assigned (`=`, `op=`, `++`, `--`) in an expression.
pub(super) fn assigned_in_expr(e: &Expr, out: &mut HashSet<String>) {
    match e {
        Expr::Assign(_, _, l, r) => {
            if let Expr::Name(_, n) = &**l {
                out.insert(n.clone());
            }
            assigned_in_expr(l, out);
            assigned_in_expr(r, out);
        }
        Expr::Unary(_, op, a) | Expr::Postfix(_, op, a) => {
            if matches!(*op, "++" | "--")
                && let Expr::Name(_, n) = &**a
            {
                out.insert(n.clone());
            }
            assigned_in_expr(a, out);
        }
        Expr::Num(..) | Expr::Str(_) | Expr::Name(..) | Expr::Sizeof(..) => {}
        Expr::Call(_, _, args) => args.iter().for_each(|a| assigned_in_expr(a, out)),
        Expr::Index(_, a, b) | Expr::Binary(_, _, a, b) => {
            assigned_in_expr(a, out);
            assigned_in_expr(b, out);
        }
        Expr::Member(_, a, _, _) | Expr::Cast(_, _, a) => assigned_in_expr(a, out),
        Expr::Cond(_, a, b, c) => {
            assigned_in_expr(a, out);
            assigned_in_expr(b, out);
            assigned_in_expr(c, out);
        }
    }
}

pub(super) fn assigned_in_stmt(s: &Stmt, out: &mut HashSet<String>) {
    match s {
        Stmt::Expr(e) => assigned_in_expr(e, out),
        Stmt::Decl(ds) => ds
            .iter()
            .flat_map(|d| &d.init)
            .for_each(|e| assigned_in_expr(e, out)),
        Stmt::Block(b) => b.iter().for_each(|s| assigned_in_stmt(s, out)),
        Stmt::If(c, t, e) => {
            assigned_in_expr(c, out);
            assigned_in_stmt(t, out);
            if let Some(e) = e {
                assigned_in_stmt(e, out);
            }
        }
        Stmt::For(f) => {
            match &f.init {
                ForInit::Expr(e) => assigned_in_expr(e, out),
                ForInit::Decl(ds) => ds
                    .iter()
                    .flat_map(|d| &d.init)
                    .for_each(|e| assigned_in_expr(e, out)),
                ForInit::None => {}
            }
            for e in f.cond.iter().chain(&f.incr) {
                assigned_in_expr(e, out);
            }
            assigned_in_stmt(&f.body, out);
        }
        Stmt::While(c, b) | Stmt::DoWhile(b, c) => {
            assigned_in_expr(c, out);
            assigned_in_stmt(b, out);
        }
        Stmt::Continue(_) | Stmt::Break(_) | Stmt::Empty => {}
    }
}

/// The `for` that is the only statement of a loop body, if any.
pub(super) fn only_loop(s: &Stmt) -> Option<&For> {
    match s {
        Stmt::For(f) => Some(f),
        Stmt::Block(b) => match b.as_slice() {
            [one] => only_loop(one),
            _ => None,
        },
        _ => None,
    }
}

/// `i` in a canonical increment of `i`, with its step.
pub(super) fn increment(e: &Expr) -> Option<(&str, Option<&Expr>)> {
    match e {
        Expr::Unary(_, "++" | "--", a) | Expr::Postfix(_, "++" | "--", a) => match &**a {
            Expr::Name(_, n) => Some((n, None)),
            _ => None,
        },
        Expr::Assign(_, "+=" | "-=", l, r) => match &**l {
            Expr::Name(_, n) => Some((n, Some(r))),
            _ => None,
        },
        Expr::Assign(_, "=", l, r) => {
            let Expr::Name(_, n) = &**l else { return None };
            match &**r {
                Expr::Binary(_, "+", a, b) => match (&**a, &**b) {
                    (Expr::Name(_, x), step) | (step, Expr::Name(_, x)) if x == n => {
                        Some((n, Some(step)))
                    }
                    _ => None,
                },
                Expr::Binary(_, "-", a, b) => match &**a {
                    Expr::Name(_, x) if x == n => Some((n, Some(b))),
                    _ => None,
                },
                _ => None,
            }
        }
        _ => None,
    }
}

/// `(var, bound, inclusive, var_on_left_of_less)` of a loop condition `i < n`, `n > i`, ...
pub(super) fn condition<'e>(e: &'e Expr, var: &str) -> Option<(&'e Expr, &'static str)> {
    let Expr::Binary(_, op, l, r) = e else {
        return None;
    };
    // Normalized to `var op bound`.
    let flip = |op: &'static str| match op {
        "<" => ">",
        ">" => "<",
        "<=" => ">=",
        ">=" => "<=",
        o => o,
    };
    match (&**l, &**r) {
        (Expr::Name(_, x), b) if x == var && !mentions(b, var) => {
            matches!(*op, "<" | "<=" | ">" | ">=").then_some((b, *op))
        }
        (b, Expr::Name(_, x)) if x == var && !mentions(b, var) => {
            matches!(*op, "<" | "<=" | ">" | ">=").then_some((b, flip(op)))
        }
        _ => None,
    }
}

/// The terms of a chain of `op` (`a + b - c` for `+`), with signs.
pub(super) fn chain<'e>(e: &'e Expr, op: &str, neg: bool, out: &mut Vec<(bool, &'e Expr)>) {
    match e {
        Expr::Binary(_, o, l, r) if *o == op || (op == "+" && *o == "-") => {
            chain(l, op, neg, out);
            chain(r, op, if *o == "-" { !neg } else { neg }, out);
        }
        _ => out.push((neg, e)),
    }
}
