//! The walk of one loop: the names in scope, the state an iteration builds up, and the
//! statements, declarations and nested loops (canonical form, control flow). What
//! expressions read and write, and whether the array accesses may meet, is in `accesses`;
//! how outside scalars are used (private, lastprivate, reduction) is in `scalars`.

mod accesses;
mod scalars;

use super::exprs::{assigned_in_expr, assigned_in_stmt, condition, increment, names_in, only_loop};
use super::poly::{Atom, Poly, Ranges};
use super::syntax::{Declarator, Expr, For, ForInit, Shape, Stmt};
use super::{
    Clauses, DepKind, Dependence, FileInfo, LoopReport, Nest, ReductionOp, Verdict, dep, unknown,
};
use crate::hash::{HashMap, HashSet};
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
pub(super) struct Var {
    shape: Shape,
    /// Declared inside the analyzed loop: private to each iteration.
    local: bool,
    /// Declared outside, and nothing reads its value before or after the loop.
    pub(super) confined: bool,
    /// The variable of the analyzed loop, or of a canonical loop inside it whose body
    /// does not assign it: an `Atom::Loop`.
    loop_var: bool,
    /// The analyzed loop's own variable.
    control: bool,
    /// A local integer initialized once and never assigned: its value as a polynomial.
    value: Option<Poly>,
    /// The value is exactly the polynomial: its initializer has integer operands only, so
    /// no conversion truncates it (`int at = x * 2` with a `double x` is not exact).
    exact: bool,
}

impl Var {
    pub(super) fn outside(shape: Shape) -> Var {
        Var {
            shape,
            local: false,
            confined: false,
            loop_var: false,
            control: false,
            value: None,
            exact: true,
        }
    }
}

/// How an outside scalar is used in one iteration.
#[derive(Debug, Default)]
struct ScalarUse {
    /// First read that no assignment in the iteration precedes.
    exposed: Option<usize>,
    written: Option<usize>,
    /// Reduction statements: operator and position.
    reductions: Vec<(ReductionOp, usize)>,
    /// A read or write outside a reduction statement.
    plain: Option<usize>,
}

/// Where an access goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RootClass {
    /// A declared array or struct: distinct from every other declared one.
    Storage,
    Pointer {
        restrict: bool,
    },
}

#[derive(Debug, Clone)]
struct Access {
    root: String,
    class: RootClass,
    /// Subscripts inside the object, outermost first (None: not a polynomial).
    idx: Vec<Option<Poly>>,
    /// The subscripts are integer expressions whose polynomials are their exact values (no
    /// cast of a value that may not be an integer): their atoms are integers.
    exact: bool,
    write: bool,
    at: usize,
    text: String,
}

/// A `for` directly in the analyzed loop's body, with the names visible there.
struct Child<'f> {
    f: &'f For,
    env: HashMap<String, Var>,
    collapsible: bool,
}

struct Walk<'f, 'i> {
    file: &'i FileInfo,
    scopes: Vec<HashMap<String, Var>>,
    /// The analyzed loop's variable.
    v: String,
    /// Names assigned anywhere in the loop (body, condition, increment).
    written: HashSet<String>,
    /// Outside scalars assigned on every path so far in this iteration.
    defs: HashSet<String>,
    /// Inside `?:` branches or the right side of `&&`/`||`: assignments may not happen.
    conditional: usize,
    /// Inside a loop nested in the analyzed one.
    inner: usize,
    /// Outside scalars assigned on every path that ends an iteration.
    exits: Option<HashSet<String>>,
    scalars: BTreeMap<String, ScalarUse>,
    /// Order of first use of each outside scalar.
    order: Vec<String>,
    accesses: Vec<Access>,
    /// Reads through pointers loaded from memory: (at, text).
    unknown_reads: Vec<(usize, String)>,
    /// The first write through a pointer the walk cannot follow: reported only when nothing
    /// worse is found, so the walk goes on past it (a possible overlap is what the
    /// independence a program asserts covers; an accumulation after it is not).
    overlap: Option<Dependence>,
    ranges: Ranges,
    /// `[lo, hi)` of the analyzed loop's variable, when its bounds are polynomials.
    own: Option<(Poly, Poly)>,
    children: Vec<Child<'f>>,
    /// The reduction statement being walked: (variable, operator).
    in_reduction: Option<(String, ReductionOp)>,
}

type R = Result<(), Dependence>;

/// Analyze `f` (depth `depth`) and, recursively, the loops directly in its body.
pub(super) fn analyze_loop(
    file: &FileInfo,
    f: &For,
    env: HashMap<String, Var>,
    parent: Option<usize>,
    depth: usize,
    collapsible: bool,
    nest: &mut Nest,
) {
    let mut w = Walk {
        file,
        scopes: vec![env],
        v: String::new(),
        written: HashSet::default(),
        defs: HashSet::default(),
        conditional: 0,
        inner: 0,
        exits: None,
        scalars: BTreeMap::new(),
        order: Vec::new(),
        accesses: Vec::new(),
        unknown_reads: Vec::new(),
        overlap: None,
        ranges: Ranges::default(),
        own: None,
        children: Vec::new(),
        in_reduction: None,
    };
    let verdict = match w.run(f) {
        Ok(c) => Verdict::Independent(c),
        Err(d) => Verdict::Dependent(d),
    };
    let var = (!w.v.is_empty()).then(|| w.v.clone());
    let index = nest.loops.len();
    nest.loops.push(LoopReport {
        at: f.at,
        var,
        depth,
        parent,
        collapsible,
        verdict,
    });
    if depth >= 16 {
        return;
    }
    let children = std::mem::take(&mut w.children);
    for c in children {
        analyze_loop(
            file,
            c.f,
            c.env,
            Some(index),
            depth + 1,
            c.collapsible,
            nest,
        );
    }
}

impl<'f, 'i> Walk<'f, 'i> {
    fn lookup(&self, name: &str) -> Option<&Var> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    fn declare(&mut self, name: &str, var: Var) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), var);
        }
    }

    /// The whole analysis of the loop `f`.
    fn run(&mut self, f: &'f For) -> Result<Clauses, Dependence> {
        // Canonical form: one variable, initialized, compared and stepped by a constant.
        let (v, shape) = match &f.init {
            ForInit::Decl(ds) => match ds.as_slice() {
                [
                    Declarator {
                        name,
                        shape: Shape::Scalar { integer: true },
                        init,
                        ..
                    },
                ] if init.len() == 1 => (name.clone(), Shape::Scalar { integer: true }),
                _ => {
                    return Err(dep(
                        DepKind::Control,
                        f.at,
                        "the loop does not declare one integer control variable",
                    ));
                }
            },
            ForInit::Expr(Expr::Assign(_, "=", l, _)) => match &**l {
                Expr::Name(_, n) => match self.lookup(n) {
                    Some(var) if matches!(var.shape, Shape::Scalar { .. }) => {
                        (n.clone(), var.shape)
                    }
                    _ => {
                        return Err(unknown(
                            f.at,
                            format!("the control variable '{n}' is not a known scalar"),
                        ));
                    }
                },
                _ => {
                    return Err(dep(
                        DepKind::Control,
                        f.at,
                        "the loop is not in canonical form",
                    ));
                }
            },
            _ => {
                return Err(dep(
                    DepKind::Control,
                    f.at,
                    "the loop is not in canonical form",
                ));
            }
        };
        self.v = v.clone();
        let mut written = HashSet::default();
        assigned_in_stmt(&f.body, &mut written);
        if let Some(c) = &f.cond {
            assigned_in_expr(c, &mut written);
        }
        if written.contains(&v) {
            return Err(dep(
                DepKind::Control,
                f.at,
                format!("the loop variable '{v}' is assigned in the loop body"),
            ));
        }
        self.written = written;
        // The step: a constant or a value the loop does not change.
        let bound = f.cond.as_ref().and_then(|c| condition(c, &v));
        let step_ok = match f.incr.as_ref().and_then(increment) {
            Some((n, None)) => n == v,
            Some((n, Some(s))) => {
                n == v
                    && self
                        .poly(s)
                        .is_some_and(|p| !p.has_loop_atom() && p != Poly::default())
            }
            None => false,
        };
        if bound.is_none() || !step_ok {
            return Err(dep(
                DepKind::Control,
                f.at,
                format!(
                    "the loop over '{v}' is not in canonical form ('{v} < bound', invariant step)"
                ),
            ));
        }
        let mut header = HashMap::default();
        header.insert(
            v.clone(),
            Var {
                shape,
                local: true,
                confined: false,
                loop_var: true,
                control: true,
                value: None,
                exact: true,
            },
        );
        self.scopes.push(header);
        let lo = match &f.init {
            ForInit::Decl(ds) => ds.first().and_then(|d| d.init.first()),
            ForInit::Expr(Expr::Assign(_, "=", _, r)) => Some(&**r),
            _ => None,
        };
        self.own = self.range(f, &v, lo);
        // The condition is evaluated before every iteration: its reads are the iteration's.
        if let Some(c) = &f.cond {
            self.value(c)?;
        }
        let falls = self.stmt(&f.body)?;
        if falls {
            self.exit();
        }
        // The collapsible child: the only statement, bounds not using anything the loop
        // changes.
        if let Some(only) = only_loop(&f.body)
            && let Some(c) = self.children.iter_mut().find(|c| std::ptr::eq(c.f, only))
        {
            let mut used = Vec::new();
            match &only.init {
                ForInit::Decl(ds) => ds
                    .iter()
                    .flat_map(|d| &d.init)
                    .for_each(|e| names_in(e, &mut used)),
                ForInit::Expr(Expr::Assign(_, "=", _, r)) => names_in(r, &mut used),
                _ => used.push(v.clone()),
            }
            for e in only.cond.iter().chain(&only.incr) {
                names_in(e, &mut used);
            }
            let inner_var = match &only.init {
                ForInit::Decl(ds) => ds.first().map(|d| d.name.clone()),
                ForInit::Expr(Expr::Assign(_, "=", l, _)) => match &**l {
                    Expr::Name(_, n) => Some(n.clone()),
                    _ => None,
                },
                _ => None,
            };
            c.collapsible = used
                .iter()
                .all(|n| *n != v && (Some(n) == inner_var.as_ref() || !self.written.contains(n)));
        }
        let clauses = self.scalar_clauses()?;
        // A possible overlap (`DepKind::Alias`) is the verdict only when no other problem is
        // found: callers treat it as covered by an asserted independence.
        let memory = self.memory();
        match (memory, self.overlap.take()) {
            (Err(d), _) if d.kind != DepKind::Alias => Err(d),
            (_, Some(d)) | (Err(d), None) => Err(d),
            (Ok(()), None) => Ok(clauses),
        }
    }

    /// An iteration ends here.
    fn exit(&mut self) {
        self.exits = Some(match self.exits.take() {
            None => self.defs.clone(),
            Some(e) => e.intersection(&self.defs).cloned().collect(),
        });
    }

    fn stmt(&mut self, s: &'f Stmt) -> Result<bool, Dependence> {
        match s {
            Stmt::Empty => Ok(true),
            Stmt::Expr(e) => {
                if let Some((name, op, operands)) = self.reduction_stmt(e) {
                    for o in operands {
                        self.value(o)?;
                    }
                    self.in_reduction = Some((name.clone(), op));
                    self.scalar_read(&name, e.at());
                    self.scalar_write(&name, e.at());
                    self.in_reduction = None;
                } else {
                    self.value(e)?;
                }
                Ok(true)
            }
            Stmt::Decl(ds) => {
                self.declarations(ds)?;
                Ok(true)
            }
            Stmt::Block(b) => {
                self.scopes.push(HashMap::default());
                let mut falls = true;
                for s in b {
                    let f = self.stmt(s);
                    match f {
                        Ok(f) => falls &= f,
                        Err(e) => {
                            self.scopes.pop();
                            return Err(e);
                        }
                    }
                }
                self.scopes.pop();
                Ok(falls)
            }
            Stmt::If(c, t, e) => {
                if e.is_none()
                    && let Some((name, op, operand)) = self.if_reduction(c, t)
                {
                    self.value(operand)?;
                    self.in_reduction = Some((name.clone(), op));
                    self.scalar_read(&name, c.at());
                    // Assigned on one path only: no definition.
                    self.conditional += 1;
                    self.scalar_write(&name, c.at());
                    self.conditional -= 1;
                    self.in_reduction = None;
                    return Ok(true);
                }
                self.value(c)?;
                let before = self.defs.clone();
                let ft = self.stmt(t)?;
                let after_t = std::mem::replace(&mut self.defs, before);
                let fe = match e {
                    Some(e) => self.stmt(e)?,
                    None => true,
                };
                let after_e = std::mem::take(&mut self.defs);
                self.defs = match (ft, fe) {
                    (true, true) => after_t.intersection(&after_e).cloned().collect(),
                    (true, false) => after_t,
                    (false, true) => after_e,
                    (false, false) => after_t.intersection(&after_e).cloned().collect(),
                };
                Ok(ft || fe)
            }
            Stmt::For(f) => {
                if self.inner == 0 {
                    let mut env = HashMap::default();
                    for s in &self.scopes {
                        for (n, var) in s {
                            let mut o = Var::outside(var.shape);
                            // Locals of this loop are outside the inner one; their known
                            // values stay valid there.
                            o.value = None;
                            env.insert(n.clone(), o);
                        }
                    }
                    self.children.push(Child {
                        f,
                        env,
                        collapsible: false,
                    });
                }
                self.inner_for(f)?;
                Ok(true)
            }
            Stmt::While(c, b) => {
                self.value(c)?;
                let before = self.defs.clone();
                self.inner += 1;
                let r = self.stmt(b);
                self.inner -= 1;
                r?;
                self.defs = before;
                Ok(true)
            }
            Stmt::DoWhile(b, c) => {
                let before = self.defs.clone();
                self.inner += 1;
                let r = self.stmt(b).and_then(|_| self.value(c));
                self.inner -= 1;
                r?;
                self.defs = before;
                Ok(true)
            }
            Stmt::Continue(_) => {
                if self.inner == 0 {
                    self.exit();
                }
                Ok(false)
            }
            Stmt::Break(at) => {
                if self.inner == 0 {
                    Err(dep(DepKind::Control, *at, "'break' leaves the loop early"))
                } else {
                    Ok(false)
                }
            }
        }
    }

    /// A loop inside the analyzed one: its variable is a loop atom in its body when the
    /// loop is canonical and its body does not assign it.
    fn inner_for(&mut self, f: &'f For) -> R {
        self.scopes.push(HashMap::default());
        let r = self.inner_for_scoped(f);
        self.scopes.pop();
        r
    }

    fn inner_for_scoped(&mut self, f: &'f For) -> R {
        let var = match &f.init {
            ForInit::Decl(ds) => {
                self.declarations(ds)?;
                match ds.as_slice() {
                    [d] if matches!(d.shape, Shape::Scalar { .. }) => {
                        Some((d.name.clone(), d.init.first()))
                    }
                    _ => None,
                }
            }
            ForInit::Expr(e) => {
                self.value(e)?;
                match e {
                    Expr::Assign(_, "=", l, r) => match &**l {
                        Expr::Name(_, n) => Some((n.clone(), Some(&**r))),
                        _ => None,
                    },
                    _ => None,
                }
            }
            ForInit::None => None,
        };
        let after_init = self.defs.clone();
        if let Some((k, lo)) = var {
            let mut body_writes = HashSet::default();
            assigned_in_stmt(&f.body, &mut body_writes);
            let step = f.incr.as_ref().and_then(increment);
            let canonical = !body_writes.contains(&k)
                && step.is_some_and(|(n, s)| {
                    n == k && s.is_none_or(|s| self.poly(s).and_then(|p| p.as_const()).is_some())
                })
                && f.cond.as_ref().and_then(|c| condition(c, &k)).is_some();
            if canonical && let Some(found) = self.lookup(&k).cloned() {
                let range = self
                    .range(f, &k, lo)
                    .map(|(lo, hi)| (self.outer_bound(lo, true), self.outer_bound(hi, false)));
                self.ranges.entry(k.clone()).or_default().push(range);
                self.declare(
                    &k,
                    Var {
                        loop_var: true,
                        value: None,
                        ..found
                    },
                );
            }
        }
        if let Some(c) = &f.cond {
            self.value(c)?;
        }
        self.inner += 1;
        let r = self.stmt(&f.body).and_then(|_| match &f.incr {
            Some(e) => self.value(e),
            None => Ok(()),
        });
        self.inner -= 1;
        r?;
        self.defs = after_init;
        Ok(())
    }

    /// `[lo, hi)` of the variable `k` of canonical loop `f` started at `lo`, when the bounds
    /// are polynomials (`k = hi - 1; k >= lo; k--` too).
    fn range(&self, f: &For, k: &str, lo: Option<&Expr>) -> Option<(Poly, Poly)> {
        let (b, op) = f.cond.as_ref().and_then(|c| condition(c, k))?;
        let lo = self.poly(lo?)?;
        let b = self.poly(b)?;
        let one = Poly::constant(1);
        let up = match f.incr.as_ref().and_then(increment) {
            Some((_, None)) => matches!(
                f.incr.as_ref(),
                Some(Expr::Unary(_, "++", _) | Expr::Postfix(_, "++", _))
            ),
            Some((_, Some(s))) => {
                let c = self.poly(s)?.as_const()?;
                let minus = matches!(f.incr.as_ref(), Some(Expr::Assign(_, "-=", ..)))
                    || matches!(f.incr.as_ref(), Some(Expr::Assign(_, "=", _, r)) if matches!(&**r, Expr::Binary(_, "-", ..)));
                (c > 0) != minus
            }
            None => return None,
        };
        match (up, op) {
            (true, "<") => Some((lo, b)),
            (true, "<=") => Some((lo, b.add(&one)?)),
            (false, ">=") => Some((b, lo.add(&one)?)),
            (false, ">") => Some((b.add(&one)?, lo.add(&one)?)),
            _ => None,
        }
    }

    /// A bound of an inner loop's range `[lo, hi)` that does not use the analyzed loop's
    /// variable `v`, for `lo` or `hi` of the form `a·v + c` (`a >= 0`, `c` a constant) and
    /// `v` in `[lo_v, hi_v)`: `a·lo_v + c` for a start (a constant `lo_v`), `a·(hi_v - 1) + c`
    /// for an end. So `k = i` in `for (i = 0; ...)` starts at 0 or later, and `k < i` in
    /// `for (i = ...; i < n; ...)` ends at `n - 1` or before: `x[i*n + k]` stays in row `i`.
    /// The range only grows. Other bounds are returned as they are.
    fn outer_bound(&self, b: Poly, start: bool) -> Poly {
        let bound = || {
            let lin = b.linear()?;
            let a = match lin.len() {
                1 => lin.get(&self.v)?.as_const()?,
                _ => return None,
            };
            let v = Poly::atom(Atom::Loop(self.v.clone()));
            let c = b.sub(&v.scale(a)?)?.as_const()?;
            let (lo_v, hi_v) = self.own.as_ref()?;
            if a < 0 {
                return None;
            }
            let extreme = if start {
                Poly::constant(lo_v.as_const()?)
            } else {
                hi_v.sub(&Poly::constant(1))?
            };
            extreme.scale(a)?.add(&Poly::constant(c))
        };
        bound().unwrap_or(b)
    }

    /// Local variables: private to each iteration. An integer initialized once and never
    /// assigned keeps its value as a polynomial (`const int at = i * n + j;`).
    fn declarations(&mut self, ds: &'f [Declarator]) -> R {
        for d in ds {
            for e in &d.init {
                self.value(e)?;
            }
            let value = match d.shape {
                Shape::Scalar { integer: true }
                    if d.init.len() == 1 && !self.written.contains(&d.name) =>
                {
                    self.poly(&d.init[0])
                }
                _ => None,
            };
            let exact = value.is_some() && self.integer_operands(&d.init[0]);
            self.declare(
                &d.name,
                Var {
                    shape: d.shape,
                    local: true,
                    confined: false,
                    loop_var: false,
                    control: false,
                    value,
                    exact,
                },
            );
        }
        Ok(())
    }
}
