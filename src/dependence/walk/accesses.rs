//! What an iteration's expressions read and write: subscripts as polynomials, memory
//! accesses recorded with the root they go through, and the check that two accesses to
//! memory that may overlap never meet (one written).

use super::super::file_info::is_pure;
use super::super::poly::{self, Atom, Poly};
use super::super::syntax::{Expr, Shape};
use super::super::{DepKind, Dependence, dep, unknown};
use super::{Access, R, RootClass, Walk};

impl<'f, 'i> Walk<'f, 'i> {
    /// The value of `e` as a polynomial of loop variables and invariants.
    pub(super) fn poly(&self, e: &Expr) -> Option<Poly> {
        match e {
            Expr::Num(_, s) => int_literal(s).map(Poly::constant),
            Expr::Name(_, n) => match self.lookup(n) {
                Some(var) if var.loop_var => Some(Poly::atom(Atom::Loop(n.clone()))),
                Some(var) if var.value.is_some() => var.value.clone(),
                Some(var) => (matches!(var.shape, Shape::Scalar { .. })
                    && !self.written.contains(n)
                    && !var.local)
                    .then(|| Poly::atom(Atom::Inv(n.clone()))),
                None => self
                    .file
                    .is_constant(n)
                    .then(|| Poly::atom(Atom::Inv(n.clone()))),
            },
            Expr::Member(_, b, m, false) => match &**b {
                Expr::Name(_, s) => match self.lookup(s) {
                    Some(var)
                        if var.shape == Shape::Object
                            && !var.local
                            && !self.written.contains(s)
                            && !self.writes_root(s) =>
                    {
                        Some(Poly::atom(Atom::Inv(format!("{s}.{m}"))))
                    }
                    _ => None,
                },
                _ => None,
            },
            Expr::Unary(_, "-", a) => self.poly(a)?.scale(-1),
            Expr::Unary(_, "+", a) | Expr::Cast(_, true, a) => self.poly(a),
            Expr::Binary(_, "+", a, b) => self.poly(a)?.add(&self.poly(b)?),
            Expr::Binary(_, "-", a, b) => self.poly(a)?.sub(&self.poly(b)?),
            Expr::Binary(_, "*", a, b) => self.poly(a)?.mul(&self.poly(b)?),
            Expr::Sizeof(_, t) => Some(Poly::atom(Atom::Inv(t.clone()))),
            _ => None,
        }
    }

    /// Whether the polynomial of subscript `e` is its exact value. Every operand of a
    /// subscript's `+`, `-` and `*` is an integer (C gives a floating operand a floating
    /// result, which cannot subscript), so only casts and locals can hide a conversion.
    fn exact_subscript(&self, e: &Expr) -> bool {
        match e {
            Expr::Num(..) | Expr::Member(..) | Expr::Sizeof(..) => true,
            Expr::Name(_, n) => self.lookup(n).is_none_or(|v| v.value.is_none() || v.exact),
            Expr::Unary(_, "-" | "+", a) => self.exact_subscript(a),
            Expr::Binary(_, "+" | "-" | "*", a, b) => {
                self.exact_subscript(a) && self.exact_subscript(b)
            }
            Expr::Cast(_, true, a) => self.integer_operands(a),
            _ => false,
        }
    }

    /// Whether `e` is built from integer literals and names known to be integers by `+`,
    /// `-`, `*` and integer casts: its polynomial is its value.
    pub(super) fn integer_operands(&self, e: &Expr) -> bool {
        match e {
            Expr::Num(_, s) => int_literal(s).is_some(),
            Expr::Sizeof(..) => true,
            Expr::Name(_, n) => self.lookup(n).is_some_and(|v| {
                v.shape == (Shape::Scalar { integer: true }) && (v.value.is_none() || v.exact)
            }),
            Expr::Unary(_, "-" | "+", a) | Expr::Cast(_, true, a) => self.integer_operands(a),
            Expr::Binary(_, "+" | "-" | "*", a, b) => {
                self.integer_operands(a) && self.integer_operands(b)
            }
            _ => false,
        }
    }

    /// Whether the loop writes members of struct `s` (seen so far).
    fn writes_root(&self, s: &str) -> bool {
        self.accesses.iter().any(|a| a.write && a.root == s)
    }

    /// Evaluate `e` for its value.
    pub(super) fn value(&mut self, e: &Expr) -> R {
        match e {
            Expr::Num(..) | Expr::Str(_) | Expr::Sizeof(..) => Ok(()),
            Expr::Name(at, n) => match self.lookup(n).cloned() {
                Some(var) if var.shape == Shape::Object && self.file.cxx => {
                    Err(self.operators(*at, n))
                }
                // Private: a local array used as a value decays to a pointer to private
                // storage, and writes through local pointers are not followed.
                Some(var) if var.local => Ok(()),
                Some(var) => match var.shape {
                    Shape::Scalar { .. } | Shape::Pointer { .. } => {
                        self.scalar_read(n, *at);
                        Ok(())
                    }
                    Shape::Array { .. } => Err(unknown(
                        *at,
                        format!("the array '{n}' is used as a pointer"),
                    )),
                    Shape::Object => self.access(e, false, false),
                    Shape::Unknown => Err(unknown(*at, format!("the type of '{n}' is not known"))),
                },
                None if self.file.is_constant(n) => Ok(()),
                None => Err(unknown(
                    *at,
                    format!("'{n}' is not a variable the analysis knows (a macro or a member?)"),
                )),
            },
            Expr::Call(at, f, args) => {
                if !is_pure(f) || self.lookup(f).is_some() {
                    return Err(dep(DepKind::Call, *at, format!("call to '{f}'")));
                }
                for a in args {
                    self.value(a)?;
                }
                Ok(())
            }
            Expr::Index(..) | Expr::Member(..) | Expr::Unary(_, "*", _) => {
                self.access(e, false, false)
            }
            Expr::Unary(at, "&", a) => Err(unknown(
                *at,
                format!("the address of '{}' is taken", a.show()),
            )),
            Expr::Unary(_, "++" | "--", a) | Expr::Postfix(_, _, a) => self.store(a, true),
            Expr::Unary(_, _, a) | Expr::Cast(_, _, a) => self.value(a),
            Expr::Binary(_, op, l, r) => {
                self.value(l)?;
                let cond = matches!(*op, "&&" | "||");
                self.conditional += cond as usize;
                let res = self.value(r);
                self.conditional -= cond as usize;
                res
            }
            Expr::Assign(_, op, l, r) => {
                self.value(r)?;
                self.store(l, *op != "=")
            }
            Expr::Cond(_, c, t, f) => {
                self.value(c)?;
                self.conditional += 1;
                let res = self.value(t).and_then(|_| self.value(f));
                self.conditional -= 1;
                res
            }
        }
    }

    /// `lhs` is assigned (and read first when `read`).
    fn store(&mut self, lhs: &Expr, read: bool) -> R {
        match lhs {
            Expr::Name(at, n) => match self.lookup(n).cloned() {
                Some(var) if var.shape == Shape::Object && self.file.cxx => {
                    Err(self.operators(*at, n))
                }
                Some(var) if var.control => Err(dep(
                    DepKind::Control,
                    *at,
                    format!("the loop variable '{n}' is assigned in the loop body"),
                )),
                Some(var) if var.local => match var.shape {
                    Shape::Unknown => Err(unknown(
                        *at,
                        format!("'{n}' may be a reference: writes through it are not analyzed"),
                    )),
                    _ => Ok(()),
                },
                Some(var) => match var.shape {
                    Shape::Scalar { .. } => {
                        if read {
                            self.scalar_read(n, *at);
                        }
                        self.scalar_write(n, *at);
                        Ok(())
                    }
                    Shape::Pointer { .. } => Err(unknown(
                        *at,
                        format!("the pointer '{n}' is assigned in the loop"),
                    )),
                    Shape::Array { .. } | Shape::Object => {
                        Err(unknown(*at, format!("'{n}' is assigned as a whole")))
                    }
                    Shape::Unknown => Err(unknown(*at, format!("the type of '{n}' is not known"))),
                },
                None => Err(unknown(
                    *at,
                    format!("'{n}' is not a variable the analysis knows (a macro or a member?)"),
                )),
            },
            Expr::Index(..) | Expr::Member(..) | Expr::Unary(_, "*", _) => {
                self.access(lhs, true, read)
            }
            _ => Err(unknown(lhs.at(), format!("assignment to '{}'", lhs.show()))),
        }
    }

    /// A memory access through `e` (`a[i]`, `s.x`, `p->x`, `*p`): evaluates its subscripts
    /// and records it.
    fn access(&mut self, e: &Expr, write: bool, read: bool) -> R {
        // Steps from the root outwards: Some(index) or None (a member).
        let mut steps: Vec<Option<Expr>> = Vec::new();
        let mut cur = e;
        let root = loop {
            match cur {
                Expr::Index(_, b, i) => {
                    steps.push(Some((**i).clone()));
                    cur = b;
                }
                Expr::Member(at, b, _, arrow) => {
                    steps.push(None);
                    if *arrow {
                        steps.push(Some(Expr::Num(*at, "0".into())));
                    }
                    cur = b;
                }
                Expr::Unary(at, "*", p) => match &**p {
                    Expr::Binary(_, "+", x, y) if self.is_base(x) => {
                        steps.push(Some((**y).clone()));
                        cur = x;
                    }
                    Expr::Binary(_, "+", x, y) if self.is_base(y) => {
                        steps.push(Some((**x).clone()));
                        cur = y;
                    }
                    Expr::Binary(bat, "-", x, y) if self.is_base(x) => {
                        steps.push(Some(Expr::Unary(*bat, "-", y.clone())));
                        cur = x;
                    }
                    _ => {
                        steps.push(Some(Expr::Num(*at, "0".into())));
                        cur = p;
                    }
                },
                Expr::Name(_, n) => break Some(n.clone()),
                _ => break None,
            }
        };
        steps.reverse();
        for i in steps.iter().flatten() {
            self.value(i)?;
        }
        let text = e.show();
        let at = e.at();
        let Some(root) = root else {
            // `(p + 1)[i]`, `f(x)->y`: the base is computed.
            self.value(cur)?;
            return self.unknown_access(at, text, write);
        };
        let Some(var) = self.lookup(&root).cloned() else {
            if self.file.is_constant(&root) {
                return Err(unknown(
                    at,
                    format!("'{text}' is not a memory access the analysis understands"),
                ));
            }
            return Err(unknown(
                at,
                format!("'{root}' is not a variable the analysis knows (a macro or a member?)"),
            ));
        };
        // Direct steps: subscripts within the object's own dimensions, then members.
        let dims = match var.shape {
            Shape::Array { dims } | Shape::Pointer { dims, .. } => dims as usize,
            Shape::Object => 0,
            Shape::Scalar { .. } => {
                return Err(unknown(
                    at,
                    format!("'{text}': '{root}' is not an array or pointer"),
                ));
            }
            Shape::Unknown => {
                if var.local {
                    return self.unknown_access(at, text, write);
                }
                return Err(unknown(at, format!("the type of '{root}' is not known")));
            }
        };
        let n_idx = steps.iter().take_while(|s| s.is_some()).count();
        if var.shape == Shape::Object && n_idx > 0 {
            return Err(dep(
                DepKind::Call,
                at,
                format!("'{text}' calls 'operator[]' of '{root}'"),
            ));
        }
        let loaded = n_idx > dims || steps[n_idx..].iter().any(Option::is_some);
        if matches!(var.shape, Shape::Pointer { .. }) {
            // The pointer itself is read.
            if var.local {
                return self.unknown_access(at, text, write);
            }
            self.scalar_read(&root, at);
        }
        if loaded {
            return self.unknown_access(at, text, write);
        }
        if n_idx < dims && steps.len() == n_idx {
            return Err(unknown(at, format!("'{text}' is used as a pointer")));
        }
        if var.local {
            return Ok(()); // private storage
        }
        let class = match var.shape {
            Shape::Pointer { restrict, .. } => RootClass::Pointer { restrict },
            _ => RootClass::Storage,
        };
        let idx: Vec<Option<Poly>> = steps.iter().flatten().map(|i| self.poly(i)).collect();
        let exact = steps.iter().flatten().all(|i| self.exact_subscript(i));
        for (w, r) in [(false, read || !write), (true, write)] {
            if r {
                self.accesses.push(Access {
                    root: root.clone(),
                    class,
                    idx: idx.clone(),
                    exact,
                    write: w,
                    at,
                    text: text.clone(),
                });
            }
        }
        Ok(())
    }

    /// A struct value used as a whole in C++: its operators are calls.
    fn operators(&self, at: usize, n: &str) -> Dependence {
        dep(
            DepKind::Call,
            at,
            format!("'{n}' is a class object used as a whole: its operators may be calls"),
        )
    }

    /// Whether `e` names an array or pointer (the base of `*(p + i)`).
    fn is_base(&self, e: &Expr) -> bool {
        matches!(e, Expr::Name(_, n) if self.lookup(n).is_some_and(|v| matches!(v.shape, Shape::Array { .. } | Shape::Pointer { .. })))
    }

    fn unknown_access(&mut self, at: usize, text: String, write: bool) -> R {
        if write {
            if self.overlap.is_none() {
                self.overlap = Some(dep(
                    DepKind::Alias,
                    at,
                    format!("'{text}' is written through a pointer the analysis cannot follow"),
                ));
            }
            return Ok(());
        }
        self.unknown_reads.push((at, text));
        Ok(())
    }

    /// Whether accesses `a` and `b` of one array never reach the same element in the
    /// analyzed loop: one dimension keeps them apart (`c[(i - 1)*m + j]` and `c[i*m + j]` in
    /// a loop over `0 <= j < m`; see [`poly::disjoint`]).
    fn disjoint(&self, a: &Access, b: &Access) -> bool {
        let Some((lo, hi)) = &self.own else {
            return false;
        };
        a.exact
            && b.exact
            && a.idx.iter().zip(&b.idx).any(|(x, y)| match (x, y) {
                (Some(x), Some(y)) => poly::disjoint(x, y, &self.v, lo, hi),
                _ => false,
            })
    }

    /// Memory dependences between the recorded accesses: the first carried one, else the
    /// first possible overlap of different arrays. Every write is checked, so that an
    /// overlap found first does not hide an accumulation at an invariant element after it.
    pub(super) fn memory(&self) -> R {
        let writes: Vec<&Access> = self.accesses.iter().filter(|a| a.write).collect();
        // The first possible overlap: once found, only carried dependences are looked for.
        let mut overlap: Option<Dependence> = None;
        for w in &writes {
            let dims: Option<Vec<Poly>> = w.idx.iter().cloned().collect();
            let Some(dims) = dims else {
                return Err(dep(
                    DepKind::Carried,
                    w.at,
                    format!(
                        "'{}' is written at a subscript that is not an affine function of the loop variables",
                        w.text
                    ),
                ));
            };
            if !poly::injective(&dims, &self.v, &self.ranges) {
                return Err(dep(
                    DepKind::Carried,
                    w.at,
                    format!("'{}' may be written by more than one iteration", w.text),
                ));
            }
            // Another access to the same array: the dimensions where both have the same
            // subscript must keep two iterations apart (`a[i][j]` and `a[i][j - 1]` in a
            // loop over `i`), which the same subscripts everywhere do.
            for a in self
                .accesses
                .iter()
                .filter(|a| a.root == w.root && a.idx != w.idx)
            {
                let same: Vec<Poly> = a
                    .idx
                    .iter()
                    .zip(&w.idx)
                    .filter_map(|(x, y)| (x == y).then(|| x.clone()).flatten())
                    .collect();
                if a.idx.len() != w.idx.len()
                    || !(poly::injective(&same, &self.v, &self.ranges) || self.disjoint(a, w))
                {
                    let verb = if a.write { "written" } else { "read" };
                    return Err(dep(
                        DepKind::Carried,
                        a.at,
                        format!(
                            "'{}' is {verb} and '{}' is written: the element of another iteration",
                            a.text, w.text
                        ),
                    ));
                }
            }
            if overlap.is_some() {
                continue;
            }
            if let Some(a) = self
                .accesses
                .iter()
                .find(|a| a.root != w.root && may_alias(w.class, a.class))
            {
                overlap = Some(dep(
                    DepKind::Alias,
                    a.at,
                    format!(
                        "'{}' may alias '{}' (pointers without 'restrict')",
                        a.root, w.root
                    ),
                ));
            } else if let Some((at, text)) = self.unknown_reads.first() {
                overlap = Some(dep(
                    DepKind::Alias,
                    *at,
                    format!(
                        "'{text}' is read through a pointer the analysis cannot follow and may alias '{}'",
                        w.root
                    ),
                ));
            }
        }
        if let Some(d) = overlap {
            return Err(d);
        }
        // A pointer written here may point to a scalar whose address the file takes.
        if let Some(p) = writes
            .iter()
            .find(|w| w.class == (RootClass::Pointer { restrict: false }))
        {
            for name in &self.order {
                let scalar = self
                    .lookup(name)
                    .is_some_and(|v| matches!(v.shape, Shape::Scalar { .. }));
                if scalar && self.file.addressed.contains(name) {
                    return Err(dep(
                        DepKind::Alias,
                        p.at,
                        format!(
                            "'{}' may point to '{name}', whose address is taken in this file",
                            p.root
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Whether two different roots may overlap.
fn may_alias(a: RootClass, b: RootClass) -> bool {
    match (a, b) {
        (RootClass::Storage, RootClass::Storage) => false,
        (RootClass::Storage, RootClass::Pointer { restrict })
        | (RootClass::Pointer { restrict }, RootClass::Storage) => !restrict,
        (RootClass::Pointer { restrict: x }, RootClass::Pointer { restrict: y }) => !(x && y),
    }
}

fn int_literal(s: &str) -> Option<i64> {
    let t = s.trim_end_matches(['u', 'U', 'l', 'L']);
    if t.is_empty() {
        return None;
    }
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()
    } else if t.len() > 1 && t.starts_with('0') {
        i64::from_str_radix(&t[1..], 8).ok()
    } else {
        t.parse().ok()
    }
}
