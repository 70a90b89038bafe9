//! Outside scalars an iteration writes: reduction statements recognized (`s += e`,
//! `s = fmax(s, e)`, `if (e > m) m = e`, ...), each use recorded, and the clauses
//! (private, lastprivate, reduction) or the dependence they make.

use super::super::exprs::{chain, mentions};
use super::super::syntax::{Expr, Shape, Stmt};
use super::super::{Clauses, DepKind, Dependence, ReductionOp, dep};
use super::{ScalarUse, Walk};

impl<'f, 'i> Walk<'f, 'i> {
    /// `s op= e`, `s = s op e`, `s = fmax(s, e)`, `s = s > e ? s : e`, `s++` on an outside
    /// scalar: (s, operator, operands to evaluate).
    pub(super) fn reduction_stmt<'e>(
        &self,
        e: &'e Expr,
    ) -> Option<(String, ReductionOp, Vec<&'e Expr>)> {
        let target = |x: &Expr| -> Option<String> {
            let Expr::Name(_, n) = x else { return None };
            let var = self.lookup(n)?;
            (!var.local && matches!(var.shape, Shape::Scalar { .. })).then(|| n.clone())
        };
        match e {
            Expr::Unary(_, "++" | "--", a) | Expr::Postfix(_, "++" | "--", a) => {
                Some((target(a)?, ReductionOp::Add, Vec::new()))
            }
            Expr::Assign(_, op, l, r) => {
                let s = target(l)?;
                if *op != "=" {
                    if mentions(r, &s) {
                        return None;
                    }
                    let rop = match *op {
                        "+=" | "-=" => ReductionOp::Add,
                        "*=" => ReductionOp::Mul,
                        "&=" => ReductionOp::BitAnd,
                        "|=" => ReductionOp::BitOr,
                        "^=" => ReductionOp::BitXor,
                        _ => return None,
                    };
                    return Some((s, rop, vec![&**r]));
                }
                let is_s = |x: &Expr| matches!(x, Expr::Name(_, n) if *n == s);
                match &**r {
                    Expr::Call(_, f, args) if args.len() == 2 => {
                        let base = f.strip_prefix("std::").unwrap_or(f);
                        let rop = match base {
                            "fmax" | "fmaxf" | "fmaxl" => ReductionOp::Max,
                            "fmin" | "fminf" | "fminl" => ReductionOp::Min,
                            "max" if f.starts_with("std::") => ReductionOp::Max,
                            "min" if f.starts_with("std::") => ReductionOp::Min,
                            _ => return None,
                        };
                        let other = match (is_s(&args[0]), is_s(&args[1])) {
                            (true, false) => &args[1],
                            (false, true) => &args[0],
                            _ => return None,
                        };
                        (!mentions(other, &s)).then(|| (s, rop, vec![other]))
                    }
                    Expr::Cond(_, c, x, y) => {
                        let (op, other, s_left) = compare_with(c, &s)?;
                        let rop = select_op(op, s_left, x, y, &s, other)?;
                        Some((s, rop, vec![other]))
                    }
                    Expr::Binary(_, bop, _, _) => {
                        let (rop, chain_op) = match *bop {
                            "+" | "-" => (ReductionOp::Add, "+"),
                            "*" => (ReductionOp::Mul, "*"),
                            "&" => (ReductionOp::BitAnd, "&"),
                            "|" => (ReductionOp::BitOr, "|"),
                            "^" => (ReductionOp::BitXor, "^"),
                            "&&" => (ReductionOp::And, "&&"),
                            "||" => (ReductionOp::Or, "||"),
                            _ => return None,
                        };
                        let mut terms = Vec::new();
                        chain(r, chain_op, false, &mut terms);
                        let mine: Vec<_> = terms.iter().filter(|(_, t)| is_s(t)).collect();
                        let [(neg, _)] = mine.as_slice() else {
                            return None;
                        };
                        if *neg {
                            return None;
                        }
                        let others: Vec<&Expr> = terms
                            .iter()
                            .filter(|(_, t)| !is_s(t))
                            .map(|(_, t)| *t)
                            .collect();
                        if others.iter().any(|o| mentions(o, &s)) {
                            return None;
                        }
                        // `&&`/`||` short-circuit: the other operands must come after `s`.
                        if matches!(rop, ReductionOp::And | ReductionOp::Or) && !is_s(terms[0].1) {
                            return None;
                        }
                        Some((s, rop, others))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// `if (e > m) m = e;` (and `<`, `>=`, `<=`, either side): (m, max/min, e).
    pub(super) fn if_reduction<'e>(
        &self,
        c: &'e Expr,
        then: &'e Stmt,
    ) -> Option<(String, ReductionOp, &'e Expr)> {
        let assign = match then {
            Stmt::Expr(e) => e,
            Stmt::Block(b) => match b.as_slice() {
                [Stmt::Expr(e)] => e,
                _ => return None,
            },
            _ => return None,
        };
        let Expr::Assign(_, "=", l, r) = assign else {
            return None;
        };
        let Expr::Name(_, s) = &**l else { return None };
        let var = self.lookup(s)?;
        if var.local || !matches!(var.shape, Shape::Scalar { .. }) {
            return None;
        }
        let (op, other, s_left) = compare_with(c, s)?;
        if !r.same(other) {
            return None;
        }
        // `e > s` (s on the right) keeps the larger.
        let greater = matches!(op, ">" | ">=");
        let rop = if greater != s_left {
            ReductionOp::Max
        } else {
            ReductionOp::Min
        };
        Some((s.clone(), rop, other))
    }

    fn scalar_use(&mut self, name: &str) -> &mut ScalarUse {
        if !self.scalars.contains_key(name) {
            self.order.push(name.to_string());
        }
        self.scalars.entry(name.to_string()).or_default()
    }

    pub(super) fn scalar_read(&mut self, name: &str, at: usize) {
        let defined = self.defs.contains(name);
        let red = self.in_reduction.clone();
        let u = self.scalar_use(name);
        if !defined {
            u.exposed.get_or_insert(at);
        }
        match red {
            Some((n, op)) if n == name => u.reductions.push((op, at)),
            _ => {
                u.plain.get_or_insert(at);
            }
        }
    }

    pub(super) fn scalar_write(&mut self, name: &str, at: usize) {
        let red = self.in_reduction.as_ref().is_some_and(|(n, _)| n == name);
        let u = self.scalar_use(name);
        u.written.get_or_insert(at);
        if !red {
            u.plain.get_or_insert(at);
        }
        if self.conditional == 0 {
            self.defs.insert(name.to_string());
        }
    }

    /// Private and reduction scalars, or the scalar dependence.
    pub(super) fn scalar_clauses(&self) -> Result<Clauses, Dependence> {
        let mut c = Clauses::default();
        for name in &self.order {
            let u = &self.scalars[name];
            let Some(w) = u.written else { continue };
            match u.exposed {
                None => {
                    if self.lookup(name).is_some_and(|v| v.confined) {
                        // Its value after the loop is never read: no last value to keep.
                        c.private.push(name.clone());
                    } else if self.exits.as_ref().is_some_and(|e| e.contains(name)) {
                        c.lastprivate.push(name.clone());
                    } else {
                        return Err(dep(
                            DepKind::LastValue,
                            w,
                            format!(
                                "'{name}' is not assigned in every iteration: after the loop it holds the value of the last iteration that assigns it"
                            ),
                        ));
                    }
                }
                Some(r) => {
                    let op = u.reductions.first().map(|x| x.0);
                    match (u.plain, op) {
                        (None, Some(op)) if u.reductions.iter().all(|x| x.0 == op) => {
                            c.reduction.push((op, name.clone()))
                        }
                        (None, Some(_)) => {
                            return Err(dep(
                                DepKind::Scalar,
                                r,
                                format!("'{name}' is updated with different reduction operators"),
                            ));
                        }
                        _ => {
                            return Err(dep(
                                DepKind::Scalar,
                                r,
                                format!(
                                    "'{name}' is read before it is written in an iteration: its value comes from the previous one"
                                ),
                            ));
                        }
                    }
                }
            }
        }
        Ok(c)
    }
}

/// `a`, `b` of the comparison `c` when one of them is `Name(s)`: (the other, s on the left).
fn compare_with<'e>(c: &'e Expr, s: &str) -> Option<(&'static str, &'e Expr, bool)> {
    let Expr::Binary(_, op, l, r) = c else {
        return None;
    };
    if !matches!(*op, "<" | "<=" | ">" | ">=") {
        return None;
    }
    match (&**l, &**r) {
        (Expr::Name(_, x), e) if x == s && !mentions(e, s) => Some((op, e, true)),
        (e, Expr::Name(_, x)) if x == s && !mentions(e, s) => Some((op, e, false)),
        _ => None,
    }
}

/// `max`/`min` of `cmp ? x : y` where the comparison is between `s` and `e`.
fn select_op(op: &str, s_left: bool, x: &Expr, y: &Expr, s: &str, e: &Expr) -> Option<ReductionOp> {
    let is_s = |z: &Expr| matches!(z, Expr::Name(_, n) if n == s);
    // Does the true branch pick the larger of the two?
    let greater = matches!(op, ">" | ">=");
    let true_is_left = if is_s(x) && y.same(e) {
        s_left
    } else if x.same(e) && is_s(y) {
        !s_left
    } else {
        return None;
    };
    Some(if greater == true_is_left {
        ReductionOp::Max
    } else {
        ReductionOp::Min
    })
}
