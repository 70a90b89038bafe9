//! The dependence test for Fortran `do` loops (the rules of [`crate::dependence`], read from
//! Fortran statements): can the iterations of a counted `do` run in any order, and with
//! which clauses?
//!
//! A loop is independent when
//! - it is `do v = lo, hi[, step]` with an integer `v`, and its body does not assign `v`,
//!   leave the loop (`exit` of it or of a loop outside, a `cycle` of a loop outside,
//!   `return`, `stop`, `goto`, an arithmetic `if`), or do input/output (its order is seen);
//!   a `cycle` of the loop or an `exit`/`cycle` of a loop inside it stays in the iteration;
//! - every array written is indexed by subscripts that are integer polynomials of the loop
//!   variables and of integer names the loop does not change, and some dimension (or the
//!   dimensions together) separates the iterations ([`poly::injective`]); every other access
//!   to the array has the write's subscripts on dimensions that separate them too (`c(i, j)`
//!   and `c(i, j - 1)` in a loop over `i`) or one dimension that never meets it in the
//!   loop's range ([`poly::disjoint`]: `d(j, 1 - k)` and `d(j, k)` over `do k = 1, depth`);
//!   a section or a whole array written or read
//!   beside a write is a dependence;
//! - no array or scalar written has the POINTER or TARGET attribute, is in a COMMON block or
//!   an EQUIVALENCE (another name may reach its storage), or is written through a
//!   derived-type component. Dummy arguments are taken not to overlap each other or the
//!   variables the procedure reaches otherwise: a program that modifies one of two
//!   associated entities through either breaks the standard's rules;
//! - functions are known pure intrinsics, unshadowed by a declaration or a procedure of the
//!   file; a `call`, another function, a defined operator, an array constructor or a whole
//!   derived-type value (which may call a defined operator or assignment) is not analyzed;
//! - every scalar written is updated only by reduction statements of one operator that
//!   Fortran's OpenMP spells as C's (`s = s + e`, `s = e + s`, `s = s - e`, `s = s * e`,
//!   `s = max(s, e)`, `s = min(s, e)`) and read nowhere else, or is assigned before any read
//!   in each iteration (`FortranSyntax::assigned_before_read`) and on every path through it
//!   (`FortranSyntax::assigned_every_iteration`): `lastprivate`. The control variables of
//!   the loops inside are private to each iteration (OpenACC and OpenMP make them so): no
//!   clause.
//!
//! Other statements (`where`, `forall`, `select type`, `associate`, `block`, allocation,
//! pointer assignment, `do while`, `do concurrent`), a directive or a preprocessor line in
//! the loop are not analyzed: the loop is dependent, with the construct named.

use super::Front;
use super::facts::{Type, Var};
use super::lex::TokKind;
use super::stmt::{DoControl, Kind, Toks};
use crate::dependence::poly::{self, Atom, Poly};
use crate::dependence::{Clauses, DepKind, Dependence, LoopReport, Nest, ReductionOp, Verdict};
use crate::hash::{HashMap, HashSet};
use std::borrow::Cow;
use std::ops::Range;

/// Pure intrinsic functions whose arguments are only read.
pub(crate) const PURE: &[&str] = &[
    "abs",
    "acos",
    "aimag",
    "aint",
    "all",
    "amax1",
    "amin1",
    "anint",
    "any",
    "asin",
    "atan",
    "atan2",
    "btest",
    "ceiling",
    "cmplx",
    "conjg",
    "cos",
    "cosh",
    "count",
    "dabs",
    "dacos",
    "dasin",
    "datan",
    "datan2",
    "dble",
    "dcos",
    "dcosh",
    "dexp",
    "dim",
    "dlog",
    "dlog10",
    "dmax1",
    "dmin1",
    "dmod",
    "dot_product",
    "dprod",
    "dsign",
    "dsin",
    "dsinh",
    "dsqrt",
    "dtan",
    "dtanh",
    "epsilon",
    "exp",
    "float",
    "floor",
    "huge",
    "iabs",
    "iand",
    "ibclr",
    "ibits",
    "ibset",
    "idint",
    "idnint",
    "ieor",
    "ifix",
    "int",
    "ior",
    "ishft",
    "kind",
    "lbound",
    "len",
    "len_trim",
    "log",
    "log10",
    "max",
    "max0",
    "maxval",
    "merge",
    "min",
    "min0",
    "minval",
    "mod",
    "modulo",
    "nint",
    "not",
    "product",
    "real",
    "shape",
    "sign",
    "sin",
    "sinh",
    "size",
    "sngl",
    "sqrt",
    "sum",
    "tan",
    "tanh",
    "tiny",
    "ubound",
];

/// Inquiry functions: a whole array as first argument is not read.
pub(crate) const INQUIRY: &[&str] = &["kind", "lbound", "len", "shape", "size", "ubound"];

/// What the test needs besides the front end.
pub struct Context<'a> {
    pub src: &'a str,
    pub front: &'a Front,
    /// Names of COMMON and EQUIVALENCE statements of the file (lower case).
    pub shared_storage: &'a HashSet<String>,
    /// Names of the file's program units (procedures that may shadow an intrinsic).
    pub procedures: &'a HashSet<String>,
    /// Whether every read of a name in a byte range follows an assignment on every path.
    pub assigned_first: &'a dyn Fn(Range<usize>, &str) -> bool,
    /// Whether each iteration of the loop at a byte range assigns a name on every path.
    pub assigned_every: &'a dyn Fn(Range<usize>, &str) -> bool,
    /// Names whose values before and after the analyzed loop nothing reads.
    pub confined: &'a [&'a str],
}

/// The verdicts for structure loop `l` and the counted loops nested in it (outside loops of
/// other kinds), outermost first.
pub fn nest(cx: &Context, l: usize) -> Nest {
    let st = &cx.front.structure;
    let mut loops = Vec::new();
    // (structure loop, its index in `loops`'s parent, depth)
    let mut todo = vec![(l, None, 0usize)];
    while let Some((m, parent, depth)) = todo.pop() {
        let k = loops.len();
        let an = analyze(cx, m);
        let collapsible = parent.is_some_and(|p: usize| collapsible(cx, &loops, p, m));
        loops.push(Report {
            l: m,
            rep: LoopReport {
                at: stmt_start(cx, m),
                var: spelled_var(cx, m),
                depth,
                parent,
                collapsible,
                verdict: an,
            },
        });
        // Children in reverse so that they come out in file order (each before its own).
        let body = st.loops[m].body();
        let first = st.loops.partition_point(|x| x.stmt() < body.start);
        let inner: Vec<usize> = (first..first + st.loops_in(body).len())
            .filter(|&c| {
                st.loops[c].parent() == Some(m)
                    && st.loops[c].kind == super::structure::DoKind::Counted
            })
            .collect();
        for c in inner.into_iter().rev() {
            todo.push((c, Some(k), depth + 1));
        }
    }
    Nest {
        loops: loops.into_iter().map(|r| r.rep).collect(),
    }
}

struct Report {
    l: usize,
    rep: LoopReport,
}

fn stmt_start(cx: &Context, l: usize) -> usize {
    let st = &cx.front.structure;
    cx.front.lexed.stmts[st.loops[l].stmt()].span().start
}

fn spelled_var(cx: &Context, l: usize) -> Option<String> {
    let lp = &cx.front.structure.loops[l];
    match (lp.var(), lp.var_span()) {
        (Some(v), Some(r)) => Some(super::site_facts::spelled(cx.src, r.start, v)),
        (v, _) => v.map(Into::into),
    }
}

/// Loop `m` is the only statement of the body of `loops[p]`, and its bounds and step name
/// no variable of the loops around it in the nest and nothing the nest writes.
fn collapsible(cx: &Context, loops: &[Report], p: usize, m: usize) -> bool {
    let (st, lx) = (&cx.front.structure, &cx.front.lexed);
    let outer = loops[p].l;
    let tight = st.tight_prefix(lx, &cx.front.sites, outer, 2).0;
    if tight != [outer, m] {
        return false;
    }
    let mut around = HashSet::default();
    let mut q = Some(p);
    while let Some(k) = q {
        if let Some(v) = st.loops[loops[k].l].var() {
            around.insert(v.to_string());
        }
        q = loops[k].rep.parent;
    }
    // The names the outermost loop's body writes.
    let top = loops[0].l;
    let written = writes_in(cx, st.loops[top].body());
    let lp = &st.loops[m];
    [lp.lo(), lp.hi(), lp.step()]
        .into_iter()
        .flatten()
        .all(|r| {
            super::lang::Fortran.words(&cx.src[r]).into_iter().all(|w| {
                let w = w.to_ascii_lowercase();
                !around.contains(&w) && !written.contains(&w)
            })
        })
}

/// Every name statements `stmts` write (assigned, read into, a `do` variable, passed whole
/// to a procedure), lower case.
fn writes_in(cx: &Context, stmts: Range<usize>) -> HashSet<String> {
    let (lx, st) = (&cx.front.lexed, &cx.front.structure);
    super::facts::uses(cx.src, lx, st, stmts)
        .into_iter()
        .filter(|u| u.written)
        .map(|u| u.name)
        .collect()
}

/// How an array is subscripted at one access.
#[derive(Debug, Clone)]
enum Subs {
    /// One element: the token range of each subscript.
    Elem(Vec<Range<usize>>),
    /// A section (`a(:, j)`) or the whole array.
    Many,
}

#[derive(Debug, Clone)]
struct Access {
    name: String,
    /// The bytes of the designator.
    span: Range<usize>,
    write: bool,
    subs: Subs,
}

#[derive(Debug, Default)]
struct Scalar {
    /// As first written in the loop.
    spelled: String,
    first_write: usize,
    reads: usize,
    writes: usize,
    /// Reduction statements: their operator (None once two differ) and count.
    reduction: Option<Option<ReductionOp>>,
    reductions: usize,
    /// Another name may reach it: a possible overlap, whose verdict is [`DepKind::Alias`].
    reached: bool,
}

/// A loop the walk is in (inside the analyzed one): its structure index and end statement.
struct Frame {
    l: Option<usize>,
    end: usize,
}

struct Walk<'c, 'a> {
    cx: &'c Context<'a>,
    unit: usize,
    /// The analyzed loop.
    l: usize,
    var: String,
    /// The control variables of the analyzed loop and of the counted loops inside it.
    loop_vars: HashSet<String>,
    accesses: Vec<Access>,
    scalars: HashMap<String, Scalar>,
    /// Constructs open around the current statement (`if`, `select`, `do`).
    depth: usize,
    /// The loops open around the current statement, innermost last.
    frames: Vec<Frame>,
    /// The first write another name may reach (`DepKind::Alias`): the verdict only when
    /// nothing worse is found, so the walk goes on past it (a possible overlap is what the
    /// independence a program asserts covers; an accumulation after it is not).
    overlap: Option<Dependence>,
}

type Found<T> = Result<T, Dependence>;

fn dep(kind: DepKind, at: usize, reason: impl Into<String>) -> Dependence {
    Dependence {
        kind,
        at,
        reason: reason.into(),
    }
}

/// The verdict for structure loop `l` with respect to its own variable.
pub fn analyze(cx: &Context, l: usize) -> Verdict {
    match walk(cx, l) {
        Ok(cl) => Verdict::Independent(cl),
        Err(d) => Verdict::Dependent(d),
    }
}

fn walk(cx: &Context, l: usize) -> Found<Clauses> {
    let (st, lx) = (&cx.front.structure, &cx.front.lexed);
    let lp = &st.loops[l];
    let at = lx.stmts[lp.stmt()].span().start;
    let Some(var) = lp
        .var()
        .filter(|_| lp.kind == super::structure::DoKind::Counted)
    else {
        return Err(dep(DepKind::Control, at, "not a counted 'do' loop"));
    };
    let Some(end) = lp.end() else {
        return Err(dep(DepKind::Control, at, "the loop has no end statement"));
    };
    let unit = st
        .unit_of(lp.stmt())
        .ok_or_else(|| dep(DepKind::Unknown, at, "the loop is in no program unit"))?;
    let mut w = Walk {
        cx,
        unit,
        l,
        var: var.to_string(),
        loop_vars: HashSet::default(),
        accesses: Vec::new(),
        scalars: HashMap::default(),
        depth: 0,
        frames: Vec::new(),
        overlap: None,
    };
    if !w.integer(var) {
        return Err(dep(
            DepKind::Control,
            at,
            format!("its variable '{var}' is not an integer"),
        ));
    }
    w.loop_vars.insert(var.to_string());
    lines_inside(cx, lp.span())?;
    let body = lp.body();
    for k in body.clone() {
        w.statement(k)?;
        while w.frames.last().is_some_and(|f| f.end == k) {
            w.frames.pop();
            w.depth -= 1;
        }
    }
    // Loops inside that end on the loop's own labelled terminal statement.
    while w.frames.last().is_some_and(|f| f.end == end) {
        w.frames.pop();
        w.depth -= 1;
    }
    if !w.frames.is_empty() || w.depth != 0 {
        return Err(dep(
            DepKind::Unknown,
            at,
            "the loop's constructs are not closed",
        ));
    }
    let overlap = w.arrays()?;
    let overlap = w.overlap.take().or(overlap);
    let clauses = scalar_clauses(&w, body, end)?;
    overlap.map_or(Ok(clauses), Err)
}

/// The clauses for the scalars of the loop `w` walked (body `body`, end statement `end`).
fn scalar_clauses(w: &Walk, body: Range<usize>, end: usize) -> Found<Clauses> {
    let (st, lx) = (&w.cx.front.structure, &w.cx.front.lexed);
    let lp = &st.loops[w.l];
    // The bytes of each iteration: its body's statements.
    // A terminal statement shared with loops inside closes them: it goes with the body.
    let shared_end = st
        .loops_in(body.clone())
        .iter()
        .any(|x| x.end() == Some(end));
    let last = if shared_end {
        Some(end)
    } else {
        body.end.checked_sub(1)
    };
    let bytes = match (lx.stmts.get(body.start), last) {
        (Some(a), Some(z)) if body.start < body.end => a.span().start..lx.stmts[z].span().end,
        _ => return Ok(Clauses::default()),
    };
    let every = lx.stmts[lp.stmt()].span().start..lx.stmts[end].span().end;
    w.scalars(bytes, every)
}

/// A directive or a preprocessor line inside the loop's bytes.
fn lines_inside(cx: &Context, span: Range<usize>) -> Found<()> {
    let sites = &cx.front.sites;
    let from = sites.partition_point(|s| s.span.start < span.start);
    if let Some(s) = sites[from..]
        .iter()
        .take_while(|s| s.span.start < span.end)
        .next()
    {
        return Err(dep(
            DepKind::Unknown,
            s.span.start,
            "a directive inside the loop is not analyzed",
        ));
    }
    let lines = &cx.front.lines;
    if lines.is_empty() {
        return Ok(());
    }
    let (a, b) = (lines.line_of(span.start), lines.line_of(span.end));
    if let Some(l) = lines
        .range(a..(b + 1).min(lines.len()))
        .find(|l| l.kind == super::lines::LineKind::Preprocessor)
    {
        return Err(dep(
            DepKind::Unknown,
            l.start,
            "a preprocessor line inside the loop is not analyzed",
        ));
    }
    Ok(())
}

impl Walk<'_, '_> {
    fn lookup(&self, name: &str) -> Option<Cow<'_, Var>> {
        let st = &self.cx.front.structure;
        self.cx.front.facts.lookup(st, self.unit, name)
    }

    /// Whether `name` (lower case) is declared (not only implicitly typed).
    fn declared(v: &Var) -> bool {
        v.at != 0 || !matches!(v.ty, Type::Implicit(_))
    }

    /// `name` is an integer: declared so, or typed implicitly by its first letter (`i`-`n`,
    /// no `implicit` statement changing it).
    fn integer(&self, name: &str) -> bool {
        match self.lookup(name).as_deref().map(|v| &v.ty) {
            Some(Type::Intrinsic { name: t, .. }) => t == "integer",
            Some(Type::Implicit(Some(t))) => t == "integer",
            Some(Type::Implicit(None)) => self.implicit_type(name) == Some("integer"),
            _ => false,
        }
    }

    /// The implicit type of undeclared `name` from its first letter: the `implicit` rules
    /// of the unit and its hosts, else the default (`i`-`n` integer, others real); None
    /// under `implicit none` (a name from a module of another file).
    fn implicit_type(&self, name: &str) -> Option<&str> {
        let (st, facts) = (&self.cx.front.structure, &self.cx.front.facts);
        let letter = name.bytes().next().filter(u8::is_ascii_lowercase)?;
        let mut u = Some(self.unit);
        while let Some(k) = u {
            let uf = facts.units.get(k)?;
            if let Some(t) = &uf.implicit[(letter - b'a') as usize] {
                return Some(t.as_str());
            }
            if uf.implicit_none {
                return None;
            }
            u = st.units[k].parent.filter(|_| !st.units[k].interface);
        }
        Some(if (b'i'..=b'n').contains(&letter) {
            "integer"
        } else {
            "real"
        })
    }

    fn lower(&self, i: usize) -> String {
        self.cx.front.lexed.lower(self.cx.src, i)
    }

    fn tok_at(&self, i: usize) -> usize {
        self.cx.front.lexed.tokens[i].start()
    }

    fn bytes(&self, r: Range<usize>) -> Range<usize> {
        let t = &self.cx.front.lexed.tokens;
        match (t.get(r.start), r.end.checked_sub(1).and_then(|e| t.get(e))) {
            (Some(a), Some(b)) if r.start < r.end => a.start()..b.end(),
            _ => 0..0,
        }
    }

    fn text(&self, r: Range<usize>) -> String {
        let b = self.bytes(r);
        self.cx
            .src
            .get(b)
            .unwrap_or("")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn statement(&mut self, k: usize) -> Found<()> {
        let (src, lx, st) = (self.cx.src, &self.cx.front.lexed, &self.cx.front.structure);
        let s = &lx.stmts[k];
        let t = Toks::new(src, lx, s);
        let first = s.toks().start;
        let at = s.span().start;
        let c = &st.stmts[k];
        match &c.kind {
            Kind::Assignment(eq) => self.assignment(&t, first, *eq),
            Kind::IfStmt(action) => {
                let open = c.rest();
                self.expr(&t, open, *action)?;
                self.action(&t, *action, at)
            }
            Kind::Do(h) => match &h.control {
                DoControl::Counted { var, lo, hi, step } => {
                    for r in [Some(lo), Some(hi), step.as_ref()].into_iter().flatten() {
                        self.expr(&t, r.start, r.end)?;
                    }
                    let name = self.lower(*var);
                    if name == self.var {
                        return Err(dep(
                            DepKind::Control,
                            self.tok_at(*var),
                            format!("the loop variable '{name}' is the variable of a loop inside"),
                        ));
                    }
                    self.loop_vars.insert(name.clone());
                    self.write_scalar(&name, *var)?;
                    let l = st.loop_at(k);
                    let end = l.and_then(|l| st.loops[l].end()).ok_or_else(|| {
                        dep(DepKind::Unknown, at, "a loop inside has no end statement")
                    })?;
                    self.frames.push(Frame { l, end });
                    self.depth += 1;
                    Ok(())
                }
                DoControl::While(_) => Err(dep(
                    DepKind::Unknown,
                    at,
                    "a 'do while' loop inside is not analyzed",
                )),
                DoControl::Concurrent(_) => Err(dep(
                    DepKind::Unknown,
                    at,
                    "a 'do concurrent' loop inside is not analyzed",
                )),
                DoControl::Forever => Err(dep(
                    DepKind::Unknown,
                    at,
                    "a 'do' loop without control inside is not analyzed",
                )),
            },
            Kind::IfThen | Kind::ElseIf => {
                let open = c.rest();
                if t.text(open) == "(" {
                    let close = t.after(open).unwrap_or(t.end);
                    self.expr(&t, open, close)?;
                }
                if matches!(c.kind, Kind::IfThen) {
                    self.depth += 1;
                }
                Ok(())
            }
            Kind::Else | Kind::Continue | Kind::Format => Ok(()),
            Kind::Select => {
                if t.seq(first, &["select", "case"]).is_none() {
                    return Err(dep(
                        DepKind::Unknown,
                        at,
                        format!("'{}' is not analyzed", self.text(first..first + 2)),
                    ));
                }
                self.depth += 1;
                self.expr(&t, c.rest(), t.end)
            }
            Kind::Case => self.expr(&t, c.rest(), t.end),
            Kind::End(super::stmt::ConstructKind::If | super::stmt::ConstructKind::Select) => {
                self.depth = self.depth.saturating_sub(1);
                Ok(())
            }
            Kind::End(super::stmt::ConstructKind::Do) => Ok(()),
            Kind::Jump => self.jump(&t, first, at),
            Kind::Goto | Kind::ArithmeticIf => {
                Err(dep(DepKind::Control, at, "a jump to a label in the loop"))
            }
            Kind::Call => Err(dep(
                DepKind::Call,
                at,
                format!("call to '{}'", self.lower(c.rest())),
            )),
            Kind::Io => Err(dep(
                DepKind::Call,
                at,
                format!(
                    "'{}' statement (the order of input/output is seen)",
                    self.lower(first)
                ),
            )),
            _ => Err(dep(
                DepKind::Unknown,
                at,
                format!("'{}' statement is not analyzed", self.lower(first)),
            )),
        }
    }

    /// The action of a logical `if` at token `a`: an assignment, a jump or a statement with
    /// effects.
    fn action(&mut self, t: &Toks, a: usize, at: usize) -> Found<()> {
        if let Some(d) = t.designator(a)
            && t.text(d) == "="
        {
            return self.assignment(t, a, d);
        }
        let w = self.lower(a);
        match w.as_str() {
            "cycle" | "exit" | "return" | "stop" | "error" => self.jump(t, a, at),
            "continue" => Ok(()),
            "call" => Err(dep(
                DepKind::Call,
                at,
                format!("call to '{}'", self.lower(a + 1)),
            )),
            "goto" | "go" => Err(dep(DepKind::Control, at, "a jump to a label in the loop")),
            w if super::lang::IO_KEYWORDS.contains(&w) => Err(dep(
                DepKind::Call,
                at,
                format!("'{w}' statement (the order of input/output is seen)"),
            )),
            w => Err(dep(
                DepKind::Unknown,
                at,
                format!("'{w}' statement is not analyzed"),
            )),
        }
    }

    /// `cycle`, `exit` (with a construct name or not), `return`, `stop`, `error stop` at
    /// token `first`.
    fn jump(&mut self, t: &Toks, first: usize, at: usize) -> Found<()> {
        let w = self.lower(first);
        if w != "cycle" && w != "exit" {
            return Err(dep(DepKind::Control, at, format!("'{w}' leaves the loop")));
        }
        let st = &self.cx.front.structure;
        let lx = &self.cx.front.lexed;
        let name_of = |l: usize| {
            st.stmts[st.loops[l].stmt()]
                .name()
                .map(|n| lx.lower(self.cx.src, n))
        };
        // The loop it cycles or exits: named, or the innermost; None: outside the loop.
        let target = if first + 1 < t.end {
            let name = self.lower(first + 1);
            self.frames
                .iter()
                .rev()
                .find(|f| f.l.and_then(name_of).as_deref() == Some(&name))
                .map(|f| f.l)
                .or_else(|| (name_of(self.l).as_deref() == Some(&name)).then_some(Some(self.l)))
        } else {
            Some(self.frames.last().map_or(Some(self.l), |f| f.l))
        };
        match (w.as_str(), target) {
            (_, None) => Err(dep(DepKind::Control, at, format!("'{w}' leaves the loop"))),
            ("exit", Some(Some(l))) if l == self.l => {
                Err(dep(DepKind::Control, at, "'exit' leaves the loop"))
            }
            (_, Some(Some(_))) => Ok(()),
            (_, Some(None)) => Err(dep(DepKind::Control, at, format!("'{w}' is not analyzed"))),
        }
    }

    /// `lhs = rhs` with the left side from `first` to `eq`.
    fn assignment(&mut self, t: &Toks, first: usize, eq: usize) -> Found<()> {
        if eq == first + 1 {
            let name = self.lower(first);
            let v = self.lookup(&name);
            if v.as_ref().is_some_and(|v| !v.is_array()) {
                if let Some(op) = self.reduction(t, &name, eq + 1, t.end) {
                    let s = self.scalars.entry(name.clone()).or_default();
                    s.reduction = Some(match s.reduction {
                        None => Some(op),
                        Some(prev) => prev.filter(|&p| p == op),
                    });
                    s.reductions += 1;
                }
                self.expr(t, eq + 1, t.end)?;
                return self.write_scalar(&name, first);
            }
        }
        self.expr(t, eq + 1, t.end)?;
        self.designator(t, first, eq, true)?;
        Ok(())
    }

    /// Scalar `name` (lower case, at token `i`) written.
    fn write_scalar(&mut self, name: &str, i: usize) -> Found<()> {
        let at = self.tok_at(i);
        if name == self.var {
            return Err(dep(
                DepKind::Control,
                at,
                format!("the loop variable '{name}' is assigned in the body"),
            ));
        }
        if let Some(v) = self.lookup(name) {
            if matches!(v.ty, Type::Derived { .. }) {
                return Err(dep(
                    DepKind::Unknown,
                    at,
                    format!(
                        "'{name}' of a derived type is assigned (a defined assignment may be called)"
                    ),
                ));
            }
            if v.pointer || v.target || self.cx.shared_storage.contains(name) {
                // That is its problem, not its use as a scalar of the loop.
                self.overlap.get_or_insert_with(|| {
                    dep(
                        DepKind::Alias,
                        at,
                        format!(
                            "'{name}' is written, and another name may reach it (pointer, target, common or equivalence)"
                        ),
                    )
                });
                self.scalars.entry(name.to_string()).or_default().reached = true;
            }
        }
        let spelled = self.cx.front.lexed.text(self.cx.src, i).to_string();
        let s = self.scalars.entry(name.to_string()).or_default();
        if s.writes == 0 && s.spelled.is_empty() {
            s.spelled = spelled;
            s.first_write = at;
        }
        s.writes += 1;
        Ok(())
    }

    /// The operator of `name = rhs` as a reduction statement (`rhs`: tokens `a..b`).
    fn reduction(&self, t: &Toks, name: &str, a: usize, b: usize) -> Option<ReductionOp> {
        let is = |i: usize| self.lower(i) == name && t.kind(i) == Some(TokKind::Name);
        // `max(s, e)`, `min(s, e)`: the whole right side.
        let w = self.lower(a);
        if (w == "max" || w == "min") && t.text(a + 1) == "(" && t.after(a + 1) == Some(b) {
            if !self.intrinsic(&w) {
                return None;
            }
            let args = split_top(t, a + 2, b - 1, ",");
            let own = args.iter().filter(|r| r.len() == 1 && is(r.start)).count();
            let others = args
                .iter()
                .filter(|r| !(r.len() == 1 && is(r.start)))
                .all(|r| !r.clone().any(is));
            return (own == 1 && others && args.len() >= 2).then_some(if w == "max" {
                ReductionOp::Max
            } else {
                ReductionOp::Min
            });
        }
        // No operator of lower precedence than `+` at the top level.
        let mut i = a;
        while i < b {
            match t.text(i).as_ref() {
                "(" | "[" => {
                    i = t.after(i)?;
                    continue;
                }
                "//" | "==" | "/=" | "<" | "<=" | ">" | ">=" => return None,
                _ if t.kind(i) == Some(TokKind::DotOp) => return None,
                _ => {}
            }
            i += 1;
        }
        let terms = split_top(t, a, b, "+-");
        if terms.len() >= 2 {
            // `s` alone as a term added (not subtracted), nowhere else.
            let mut own = 0;
            for (n, r) in terms.iter().enumerate() {
                if r.is_empty() {
                    // Only a leading sign makes an empty first term.
                    if n > 0 {
                        return None;
                    }
                    continue;
                }
                let sign_minus = r.start > a && t.text(r.start - 1) == "-";
                if r.len() == 1 && is(r.start) {
                    if sign_minus {
                        return None;
                    }
                    own += 1;
                } else if r.clone().any(is) {
                    return None;
                }
            }
            return (own == 1).then_some(ReductionOp::Add);
        }
        let factors = split_top(t, a, b, "*/");
        if factors.len() >= 2 {
            let mut own = 0;
            for r in &factors {
                if r.start > a && t.text(r.start - 1) != "*" {
                    return None;
                }
                if r.len() == 1 && is(r.start) {
                    own += 1;
                } else if r.is_empty() || r.clone().any(is) {
                    return None;
                }
            }
            return (own == 1).then_some(ReductionOp::Mul);
        }
        None
    }

    /// `name` (lower case) is the intrinsic procedure: no declaration or procedure of the
    /// file gives the name another meaning.
    fn intrinsic(&self, name: &str) -> bool {
        PURE.binary_search(&name).is_ok()
            && !self.cx.procedures.contains(name)
            && self.lookup(name).is_none_or(|v| !Self::declared(&v))
    }

    /// The names and references of an expression, tokens `a..b`.
    fn expr(&mut self, t: &Toks, a: usize, b: usize) -> Found<()> {
        let mut i = a;
        while i < b {
            match t.kind(i) {
                Some(TokKind::Name) => {
                    // A keyword argument's name.
                    if t.text(i + 1) == "=" && i > a && matches!(t.text(i - 1).as_ref(), "(" | ",")
                    {
                        i += 1;
                        continue;
                    }
                    i = self.designator(t, i, b, false)?;
                }
                Some(TokKind::Punct) => {
                    let p = t.text(i);
                    if p == "[" || (p == "(" && t.text(i + 1) == "/") {
                        return Err(dep(
                            DepKind::Unknown,
                            self.tok_at(i),
                            "an array constructor is not analyzed",
                        ));
                    }
                    i += 1;
                }
                Some(TokKind::DotOp) => {
                    let op = self.lower(i);
                    const OPS: [&str; 11] = [
                        ".and.", ".or.", ".not.", ".eqv.", ".neqv.", ".eq.", ".ne.", ".lt.",
                        ".le.", ".gt.", ".ge.",
                    ];
                    if !OPS.contains(&op.as_str()) {
                        return Err(dep(
                            DepKind::Call,
                            self.tok_at(i),
                            format!("defined operator '{op}'"),
                        ));
                    }
                    i += 1;
                }
                _ => i += 1,
            }
        }
        Ok(())
    }

    /// The designator or function reference at name token `i` (up to `b` at most): the
    /// token after it.
    fn designator(&mut self, t: &Toks, i: usize, b: usize, write: bool) -> Found<usize> {
        let name = self.lower(i);
        let at = self.tok_at(i);
        let var = self.lookup(&name).map(Cow::into_owned);
        let j = i + 1;
        if t.text(j) == "(" {
            let close = t.after(j).unwrap_or(b).min(b.max(j + 1));
            let array = var.as_ref().is_some_and(Var::is_array);
            if array {
                let args = split_top(t, j + 1, close.saturating_sub(1), ",");
                let section = args
                    .iter()
                    .any(|r| split_top(t, r.start, r.end, ":").len() > 1);
                for r in &args {
                    self.expr(t, r.start, r.end)?;
                }
                let mut k = close;
                if t.text(k) == "%" {
                    return self.component(t, k, b, &name, var.as_ref(), at, write, true);
                }
                if t.text(k) == "(" {
                    if write {
                        return Err(dep(
                            DepKind::Unknown,
                            at,
                            format!("a substring of '{name}' is assigned"),
                        ));
                    }
                    let e = t.after(k).unwrap_or(b);
                    self.expr(t, k + 1, e.saturating_sub(1))?;
                    k = e;
                }
                self.accesses.push(Access {
                    name,
                    span: self.bytes(i..close),
                    write,
                    subs: if section {
                        Subs::Many
                    } else {
                        Subs::Elem(args)
                    },
                });
                return Ok(k);
            }
            let character = var.as_ref().is_some_and(
                |v| matches!(&v.ty, Type::Intrinsic { name, .. } if name == "character"),
            );
            if character {
                if write {
                    return Err(dep(
                        DepKind::Unknown,
                        at,
                        format!("a substring of '{name}' is assigned"),
                    ));
                }
                self.read_scalar(&name);
                self.expr(t, j + 1, close.saturating_sub(1))?;
                return Ok(close);
            }
            if write || !self.intrinsic(&name) {
                return Err(dep(DepKind::Call, at, format!("call to '{name}'")));
            }
            let args = split_top(t, j + 1, close.saturating_sub(1), ",");
            for (n, r) in args.iter().enumerate() {
                // An inquiry's array argument: its shape is read, not its elements.
                if n == 0
                    && INQUIRY.contains(&name.as_str())
                    && r.len() == 1
                    && t.kind(r.start) == Some(TokKind::Name)
                {
                    continue;
                }
                self.expr(t, r.start, r.end)?;
            }
            return Ok(close);
        }
        if t.text(j) == "%" {
            return self.component(t, j, b, &name, var.as_ref(), at, write, false);
        }
        match &var {
            Some(v) if v.is_array() => {
                self.accesses.push(Access {
                    name,
                    span: self.bytes(i..j),
                    write,
                    subs: Subs::Many,
                });
            }
            Some(v) if matches!(v.ty, Type::Derived { .. }) && !write => {
                return Err(dep(
                    DepKind::Unknown,
                    at,
                    format!(
                        "'{name}' of a derived type is read whole (a defined operator may be called)"
                    ),
                ));
            }
            _ if write => self.write_scalar(&name, i)?,
            _ => self.read_scalar(&name),
        }
        Ok(j)
    }

    fn read_scalar(&mut self, name: &str) {
        self.scalars.entry(name.to_string()).or_default().reads += 1;
    }

    /// The components after `%` at token `k` of variable `name` (an array element when
    /// `element`): read when every component is known and the last of intrinsic type.
    #[allow(clippy::too_many_arguments)]
    fn component(
        &mut self,
        t: &Toks,
        mut k: usize,
        b: usize,
        name: &str,
        var: Option<&Var>,
        at: usize,
        write: bool,
        element: bool,
    ) -> Found<usize> {
        if write && self.overlap.is_none() {
            // Its subscripts are still read below.
            self.overlap = Some(dep(
                DepKind::Alias,
                at,
                format!("'{name}' is written through a derived-type component"),
            ));
        }
        let unknown = || {
            dep(
                DepKind::Unknown,
                at,
                format!("a component of '{name}' whose type is not known"),
            )
        };
        let facts = &self.cx.front.facts;
        let mut ty = var.map(|v| v.ty.clone());
        while t.text(k) == "%" && k + 1 < b && t.is_name(k + 1) {
            let Some(Type::Derived {
                name: tn,
                class: false,
            }) = &ty
            else {
                return Err(unknown());
            };
            let comp = self.lower(k + 1);
            let c = facts
                .derived(tn)
                .and_then(|d| d.components.iter().find(|c| c.name == comp))
                .ok_or_else(unknown)?;
            ty = Some(c.ty.clone());
            k += 2;
            if t.text(k) == "(" {
                let e = t.after(k).unwrap_or(b);
                self.expr(t, k + 1, e.saturating_sub(1))?;
                k = e;
            }
        }
        if !matches!(ty, Some(Type::Intrinsic { .. })) {
            return Err(unknown());
        }
        if !element {
            self.read_scalar(name);
        } else {
            self.accesses.push(Access {
                name: name.to_string(),
                span: 0..0,
                write: false,
                subs: Subs::Many,
            });
        }
        Ok(k)
    }

    /// The arrays written: subscripts the same at every access, integer polynomials, that
    /// separate the iterations (an error when not); no other name may reach them (else the
    /// first array another name may reach, checked like the others: a possible overlap
    /// found first does not hide an accumulation after it).
    fn arrays(&self) -> Found<Option<Dependence>> {
        let mut overlap = None;
        let mut written: Vec<&str> = Vec::new();
        for a in &self.accesses {
            if a.write && !written.contains(&a.name.as_str()) {
                written.push(&a.name);
            }
        }
        let changed: HashSet<&str> = self
            .scalars
            .iter()
            .filter(|(_, s)| s.writes > 0)
            .map(|(n, _)| n.as_str())
            .chain(written.iter().copied())
            .collect();
        let own = self.own_range(&changed);
        for name in written {
            let all: Vec<&Access> = self.accesses.iter().filter(|a| a.name == name).collect();
            let w = all.iter().find(|a| a.write).expect("a write");
            let at = w.span.start;
            let v = self.lookup(name);
            if overlap.is_none()
                && (v.as_ref().is_some_and(|v| v.pointer || v.target)
                    || self.cx.shared_storage.contains(name))
            {
                overlap = Some(dep(
                    DepKind::Alias,
                    at,
                    format!(
                        "'{name}' is written, and another name may reach it (pointer, target, common or equivalence)"
                    ),
                ));
            }
            let src = self.cx.src;
            let shown = |a: &Access| src.get(a.span.clone()).unwrap_or(name).to_string();
            if let Some(m) = all.iter().find(|a| matches!(a.subs, Subs::Many)) {
                let what = if m.write { "written" } else { "read" };
                return Err(dep(
                    DepKind::Carried,
                    if m.span.is_empty() { at } else { m.span.start },
                    format!(
                        "'{}' is {what} as a whole or a section and '{name}' is written",
                        shown(m)
                    ),
                ));
            }
            let Subs::Elem(ws) = &w.subs else {
                unreachable!()
            };
            let polys: Option<Vec<Poly>> =
                ws.iter().map(|r| self.poly(r.clone(), &changed)).collect();
            let Some(polys) = polys else {
                return Err(dep(
                    DepKind::Carried,
                    at,
                    format!(
                        "the subscripts of '{}' are not integer polynomials of the loop variables",
                        shown(w)
                    ),
                ));
            };
            // Another access to the array: the dimensions where it has the write's subscript
            // must keep two iterations apart (`c(i, j - 1)` and `c(i, j)` in a loop over `i`),
            // which the same subscripts everywhere do.
            for a in &all {
                let Subs::Elem(s) = &a.subs else {
                    continue;
                };
                let same: Vec<Poly> = s
                    .iter()
                    .zip(&polys)
                    .filter(|(r, p)| self.poly((*r).clone(), &changed).as_ref() == Some(*p))
                    .map(|(_, p)| p.clone())
                    .collect();
                let apart = s.len() == polys.len()
                    && (same.len() == polys.len()
                        || poly::injective(&same, &self.var, &poly::Ranges::default())
                        || own.as_ref().is_some_and(|(lo, hi)| {
                            s.iter().zip(&polys).any(|(r, p)| {
                                self.poly(r.clone(), &changed)
                                    .is_some_and(|x| poly::disjoint(&x, p, &self.var, lo, hi))
                            })
                        }));
                if !apart {
                    let what = if a.write { "written" } else { "read" };
                    return Err(dep(
                        DepKind::Carried,
                        a.span.start,
                        format!("'{}' is {what} and '{}' is written", shown(a), shown(w)),
                    ));
                }
            }
            if !poly::injective(&polys, &self.var, &poly::Ranges::default()) {
                return Err(dep(
                    DepKind::Carried,
                    at,
                    format!(
                        "'{}' is written by more than one iteration of the loop over '{}'",
                        shown(w),
                        self.var
                    ),
                ));
            }
        }
        Ok(overlap)
    }

    /// The values the analyzed loop's variable takes, as `[lo, hi)`: `do v = lo, hi[, s]`
    /// with bounds the loop does not change and a constant step (a step above 1 takes some
    /// of them; a negative one runs from `hi` up to `lo`).
    fn own_range(&self, changed: &HashSet<&str>) -> Option<(Poly, Poly)> {
        let st = &self.cx.front.structure;
        let Kind::Do(h) = &st.stmts[st.loops[self.l].stmt()].kind else {
            return None;
        };
        let DoControl::Counted { lo, hi, step, .. } = &h.control else {
            return None;
        };
        let (lo, hi) = (
            self.poly(lo.clone(), changed)?,
            self.poly(hi.clone(), changed)?,
        );
        let step = match step {
            None => 1,
            Some(r) => self.poly(r.clone(), changed)?.as_const()?,
        };
        let one = Poly::constant(1);
        match step.signum() {
            1 => Some((lo, hi.add(&one)?)),
            -1 => Some((hi, lo.add(&one)?)),
            _ => None,
        }
    }

    /// The subscript at tokens `r` as an integer polynomial: loop variables, integer names
    /// not in `changed`, integer constants, `+`, `-`, `*`, parentheses.
    fn poly(&self, r: Range<usize>, changed: &HashSet<&str>) -> Option<Poly> {
        let mut p = PolyParser {
            w: self,
            i: r.start,
            end: r.end,
            changed,
        };
        let out = p.sum()?;
        (p.i == p.end).then_some(out)
    }

    /// The scalars written: reductions or `lastprivate` temporaries (`bytes`: the body's,
    /// `every`: the loop's).
    fn scalars(&self, bytes: Range<usize>, every: Range<usize>) -> Found<Clauses> {
        let mut names: Vec<(&String, &Scalar)> =
            self.scalars.iter().filter(|(_, s)| s.writes > 0).collect();
        names.sort_by_key(|(_, s)| s.first_write);
        let mut cl = Clauses::default();
        for (name, s) in names {
            // The variables of the loops inside are private to each iteration, in OpenACC
            // as in OpenMP (predetermined in the construct around their loop). A scalar
            // another name may reach is a possible overlap (the verdict unless worse).
            if (name != &self.var && self.loop_vars.contains(name.as_str())) || s.reached {
                continue;
            }
            let at = s.first_write;
            if let Some(Some(op)) = s.reduction
                && !self.loop_vars.contains(name.as_str())
                && s.reductions == s.writes
                && s.reads == s.reductions
            {
                if !self.reduction_type(name, op) {
                    return Err(dep(
                        DepKind::Scalar,
                        at,
                        format!(
                            "'{name}' is updated by reduction statements, but its type is not known to suit '{}'",
                            op.omp()
                        ),
                    ));
                }
                cl.reduction.push((op, s.spelled.clone()));
                continue;
            }
            if (self.cx.assigned_first)(bytes.clone(), name) {
                // Its value after the loop is never read: no last value to keep.
                if (self.cx.confined.iter()).any(|c| c.eq_ignore_ascii_case(name)) {
                    cl.private.push(s.spelled.clone());
                    continue;
                }
                // Each iteration's private copy is defined at its end: the last is the
                // value after the loop.
                if (self.cx.assigned_every)(every.clone(), name) {
                    cl.lastprivate.push(s.spelled.clone());
                    continue;
                }
                return Err(dep(
                    DepKind::LastValue,
                    at,
                    format!(
                        "'{name}' is assigned on some paths of an iteration only: its value after the loop is the last assigning iteration's"
                    ),
                ));
            }
            return Err(dep(
                DepKind::Scalar,
                at,
                format!(
                    "'{name}' is read before it is written in an iteration, and is not a reduction"
                ),
            ));
        }
        Ok(cl)
    }

    /// Whether the type of `name` suits reduction operator `op` (numbers; integers and
    /// reals for `max` and `min`).
    fn reduction_type(&self, name: &str, op: ReductionOp) -> bool {
        let Some(v) = self.lookup(name) else {
            return false;
        };
        let t = match &v.ty {
            Type::Intrinsic { name, .. } => name.as_str(),
            Type::Implicit(Some(t)) => t.as_str(),
            Type::Implicit(None) => match self.implicit_type(name) {
                Some(t) => t,
                None => return false,
            },
            _ => return false,
        };
        match op {
            ReductionOp::Add | ReductionOp::Mul => {
                matches!(
                    t,
                    "integer" | "real" | "double precision" | "complex" | "double complex"
                )
            }
            ReductionOp::Max | ReductionOp::Min => {
                matches!(t, "integer" | "real" | "double precision")
            }
            // Fortran spells the others with other names (`iand`, `.and.`): not inferred.
            _ => false,
        }
    }
}

/// The token ranges between top-level separators among `seps` (one-character punctuators)
/// in tokens `a..b`; `**` is no `*` separator.
fn split_top(t: &Toks, a: usize, b: usize, seps: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = a;
    let mut i = a;
    while i < b {
        if t.kind(i) == Some(TokKind::Punct) {
            let p = t.text(i);
            if p == "(" || p == "[" {
                i = t.after(i).unwrap_or(b);
                continue;
            }
            if p.len() == 1 && seps.contains(p.as_ref()) {
                out.push(start..i);
                start = i + 1;
            }
        }
        i += 1;
    }
    if a < b || !out.is_empty() {
        out.push(start..b.max(start));
    }
    out
}

struct PolyParser<'w, 'c, 'a, 'n> {
    w: &'w Walk<'c, 'a>,
    i: usize,
    end: usize,
    changed: &'n HashSet<&'n str>,
}

impl PolyParser<'_, '_, '_, '_> {
    fn text(&self) -> String {
        if self.i < self.end {
            self.w.lower(self.i)
        } else {
            String::new()
        }
    }

    fn sum(&mut self) -> Option<Poly> {
        let mut sign = 1;
        match self.text().as_str() {
            "-" => {
                sign = -1;
                self.i += 1;
            }
            "+" => self.i += 1,
            _ => {}
        }
        let mut out = self.term()?.scale(sign)?;
        loop {
            match self.text().as_str() {
                "+" => {
                    self.i += 1;
                    out = out.add(&self.term()?)?;
                }
                "-" => {
                    self.i += 1;
                    out = out.sub(&self.term()?)?;
                }
                _ => return Some(out),
            }
        }
    }

    fn term(&mut self) -> Option<Poly> {
        let mut out = self.factor()?;
        while self.text() == "*" {
            self.i += 1;
            out = out.mul(&self.factor()?)?;
        }
        Some(out)
    }

    fn factor(&mut self) -> Option<Poly> {
        if self.i >= self.end {
            return None;
        }
        let tok = self.text();
        let kind = self.w.cx.front.lexed.tokens[self.i].kind();
        self.i += 1;
        match kind {
            TokKind::Int => {
                let digits = tok.split('_').next()?;
                digits.parse::<i64>().ok().map(Poly::constant)
            }
            TokKind::Name => {
                if self.text() == "(" || self.text() == "%" {
                    return None;
                }
                if self.w.loop_vars.contains(&tok) {
                    return Some(Poly::atom(Atom::Loop(tok)));
                }
                let v = self.w.lookup(&tok)?;
                if self.changed.contains(tok.as_str()) || v.is_array() || !self.w.integer(&tok) {
                    return None;
                }
                Some(Poly::atom(Atom::Inv(tok)))
            }
            TokKind::Punct if tok == "(" => {
                let p = self.sum()?;
                (self.text() == ")").then(|| self.i += 1)?;
                Some(p)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::dependence::{DepKind, Nest, Verdict};
    use crate::fortran::Front;
    use crate::fortran::syntax::FortranSyntax;
    use crate::syntax::Syntax;

    const HEAD: &str = "subroutine s(n, m, a, b, c, d, idx, p, q, r, w)\n  implicit none\n  integer :: n, m, i, j, k, l, idx(n), ic\n  real :: a(n), b(n), c(n, n), d(n, n, n), s, x, y, z, w(n)\n  real, pointer :: p(:)\n  real, target :: q(n)\n  type :: t\n    real :: v(10)\n  end type\n  type(t) :: r\n";

    /// The nest of the program's `kernels loop` over `i` whose body is `body`.
    fn nest_of(decls: &str, body: &str) -> Nest {
        nest_confined(decls, body, &[])
    }

    /// [`nest_of`], nothing reading the `confined` names before or after the loop.
    fn nest_confined(decls: &str, body: &str, confined: &[&str]) -> Nest {
        let src = format!(
            "{HEAD}{decls}  !$acc kernels loop\n  do i = 1, n\n{body}  end do\nend subroutine\n"
        );
        let kind = crate::fortran::form::kind_of(std::path::Path::new("x.f90")).expect("Fortran");
        let tables = crate::rules::Tables::builtin();
        let front = Front::new(&src, kind, |s| {
            crate::directive::fortran_site_info(s, &tables)
        });
        let sx = FortranSyntax::new(&src, &front);
        let at = src.find("  do i").expect("loop") + 2;
        let head = sx.token_starting_at(at).expect("the loop's item");
        sx.dependence(head, head + 1, &[], confined, &[])
    }

    /// The outer loop's clauses (`reduction(+:s) lastprivate(x)`) or its dependence kind.
    fn outer(decls: &str, body: &str) -> Result<String, DepKind> {
        match nest_of(decls, body).outer() {
            Verdict::Independent(cl) => Ok(cl.omp().join(" ")),
            Verdict::Dependent(d) => Err(d.kind),
        }
    }

    #[track_caller]
    fn yes(body: &str, clauses: &str) {
        assert_eq!(outer("", body), Ok(clauses.to_string()), "{body}");
    }

    #[track_caller]
    fn no(decls: &str, body: &str, kind: DepKind) {
        assert_eq!(outer(decls, body), Err(kind), "{decls}{body}");
    }

    #[test]
    fn pure_intrinsics_are_sorted() {
        assert!(super::PURE.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn arrays_indexed_by_the_loop_variable() {
        yes("    a(i) = b(i) + 1\n", "");
        yes("    a(i + 1) = a(i + 1) * 2 + b(n - i)\n", "");
        yes("    c(i, 3) = c(i, 3) + sqrt(abs(b(i)))\n", "");
        yes("    a(2 * i - m) = max(b(i), 0.0)\n", "");
        yes("    a(i) = b(idx(i))\n", "");
        // Carried: another element of the written array, the same one for every i.
        no("", "    a(i + 1) = a(i)\n", DepKind::Carried);
        no("", "    a(i) = a(i - 1) + 1\n", DepKind::Carried);
        no("", "    a(1) = b(i)\n", DepKind::Carried);
        no("", "    a(idx(i)) = b(i)\n", DepKind::Carried);
        no("", "    a(m) = a(m) + b(i)\n", DepKind::Carried);
        // A subscript the loop changes, a whole array, a section.
        no("", "    ic = i + 1\n    a(ic) = 0\n", DepKind::Carried);
        no("", "    a = 0\n", DepKind::Carried);
        no(
            "",
            "    c(:, i) = 0\n    a(i) = c(1, i)\n",
            DepKind::Carried,
        );
        no("", "    a(i) = sum(a)\n", DepKind::Carried);
        // Non-polynomial subscripts.
        no("", "    a(i / 2) = 1\n", DepKind::Carried);
        // Another element of the array, kept apart by a dimension subscripted alike.
        yes("    c(i, m) = c(i, m - 1) + c(i, 1)\n", "");
        yes("    d(i, 2 * i, m) = d(i, 1, m + 1)\n", "");
        no("", "    c(i, m) = c(i + 1, m - 1)\n", DepKind::Carried);
        no("", "    c(i, m) = c(1, m - 1)\n", DepKind::Carried);
        no("", "    c(i, m) = c(m, m - 1)\n", DepKind::Carried);
        // A dimension alike that does not separate the iterations: `m` is the same for all.
        no("", "    c(m, i) = c(m, i + 1)\n", DepKind::Carried);
        no("", "    c(i, m) = c(ic, m)\n", DepKind::Carried);
    }

    /// Subscripts running opposite ways meet only where `i1 + i2` is reachable from
    /// `1 <= i <= n` (CloverLeaf's halo copies `d(j, 1 - k) = d(j, k)`).
    #[test]
    fn opposite_subscripts_apart_by_the_lower_bound() {
        yes("    a(1 - i) = a(i)\n", "");
        yes("    a(m + i) = a(m + 1 - i)\n", "");
        yes("    c(i, 0 - i) = c(i, i) * 2\n", "");
        // i = 1 writes a(2), which i = 2 reads; a reversal reaches every element twice.
        no("", "    a(3 - i) = a(i)\n", DepKind::Carried);
        no("", "    a(n + 1 - i) = a(i)\n", DepKind::Carried);
    }

    #[test]
    fn nests_collapse_when_tight_and_rectangular() {
        let n = nest_of(
            "",
            "    do j = 1, m\n      c(i, j) = c(i, j) + 1\n    end do\n",
        );
        assert!(n.outer().is_independent());
        assert_eq!(n.loops.len(), 2);
        assert_eq!((n.loops[1].depth, n.loops[1].parent), (1, Some(0)));
        assert!(n.loops[1].collapsible && n.loops[1].verdict.is_independent());
        assert_eq!(n.collapse(), 2);
        // The inner loop's variable is private to each iteration: no clause.
        assert_eq!(
            outer("", "    do j = 1, m\n      c(i, j) = 0\n    end do\n"),
            Ok(String::new())
        );
        // Labelled loops ending on one `continue`.
        // Labelled loops ending on one `continue`.
        let n = nest_of(
            "",
            "    do 10 j = 1, m\n      do 10 k = 1, m\n        d(i, j, k) = 1\n10  continue\n",
        );
        assert_eq!(n.collapse(), 3, "{n:?}");
        // Triangular, a bound the nest changes, a statement beside the inner loop.
        let tri = nest_of("", "    do j = 1, i\n      c(i, j) = 0\n    end do\n");
        assert!(!tri.loops[1].collapsible);
        assert_eq!(tri.collapse(), 1);
        let changed = nest_of(
            "",
            "    do j = 1, m\n      do k = 1, idx(j)\n        d(i, j, k) = 0\n      end do\n      idx(j) = 0\n    end do\n",
        );
        assert!(!changed.loops[2].collapsible);
        let beside = nest_of(
            "",
            "    a(i) = 0\n    do j = 1, m\n      c(i, j) = 0\n    end do\n",
        );
        assert!(!beside.loops[1].collapsible);
        // The inner loop over `j` writes `a(i)` at every `j`: dependent itself.
        let inner = nest_of(
            "",
            "    do j = 1, m\n      a(i) = a(i) + c(i, j)\n    end do\n",
        );
        assert!(inner.outer().is_independent());
        assert_eq!(
            match &inner.loops[1].verdict {
                Verdict::Dependent(d) => Some(d.kind),
                _ => None,
            },
            Some(DepKind::Carried)
        );
    }

    #[test]
    fn scalars_are_reductions_or_temporaries() {
        yes("    s = s + a(i)\n", "reduction(+:s)");
        yes("    s = a(i) * 2 + s\n", "reduction(+:s)");
        yes("    s = s - a(i)\n", "reduction(+:s)");
        yes("    s = s * a(i)\n", "reduction(*:s)");
        yes("    s = max(s, a(i))\n", "reduction(max:s)");
        yes("    s = min(a(i), s)\n", "reduction(min:s)");
        yes("    if (a(i) > 0) s = s + a(i)\n", "reduction(+:s)");
        yes("    x = a(i)\n    b(i) = x * x\n", "lastprivate(x)");
        // Assigned in every branch of a construct with a default branch: on every path.
        yes(
            "    x = a(i)\n    if (x > 0) then\n      y = x\n    else\n      y = -x\n    end if\n    b(i) = y\n",
            "lastprivate(x, y)",
        );
        yes(
            "    if (a(i) > 1) then\n      y = 1\n    else if (a(i) > 0) then\n      y = 2\n    else\n      if (b(i) > 0) then\n        y = 3\n      else\n        y = 4\n      end if\n    end if\n    b(i) = y\n",
            "lastprivate(y)",
        );
        yes(
            "    select case (idx(i))\n    case (1)\n      y = 1\n    case default\n      y = 2\n    end select\n    b(i) = y\n",
            "lastprivate(y)",
        );
        // A branch (or the default) without it, a loop inside (perhaps no iteration), a
        // `cycle` before it in a branch: some paths do not assign it (its value after the
        // loop may be an earlier iteration's).
        let some_paths = [
            "    if (a(i) > 1) then\n      y = 1\n    else if (a(i) > 0) then\n      y = 2\n    end if\n",
            "    if (a(i) > 1) then\n      y = 1\n    else if (a(i) > 0) then\n      b(i) = 0\n    else\n      y = 2\n    end if\n",
            "    if (a(i) > 1) then\n      y = 1\n    else\n      if (b(i) > 0) y = 2\n    end if\n",
            "    select case (idx(i))\n    case (1)\n      y = 1\n    case (2)\n      y = 2\n    end select\n",
            "    do j = 1, m\n      if (c(i, j) > 0) then\n        y = 1\n      else\n        y = 2\n      end if\n    end do\n",
            "    if (a(i) > 1) then\n      if (b(i) > 0) cycle\n      y = 1\n    else\n      y = 2\n    end if\n",
        ];
        for body in some_paths {
            no("", body, DepKind::LastValue);
        }
        // A `cycle` after the assignment leaves with it assigned, in a branch too; one of a
        // loop inside, or an `exit` of it, stays in the iteration.
        yes(
            "    if (a(i) > 1) then\n      y = 1\n    else\n      y = 2\n    end if\n    if (b(i) > 0) cycle\n    b(i) = y\n",
            "lastprivate(y)",
        );
        yes(
            "    if (a(i) > 1) then\n      y = 1\n      if (b(i) > 0) cycle\n    else\n      y = 2\n    end if\n",
            "lastprivate(y)",
        );
        yes(
            "    x = a(i)\n    do j = 1, m\n      if (c(i, j) < 0) exit\n      if (c(i, j) > 1) cycle\n      c(i, j) = x\n    end do\n",
            "lastprivate(x)",
        );
        // Read elsewhere, two operators, not a reduction form.
        no("", "    s = s + a(i)\n    b(i) = s\n", DepKind::Scalar);
        no("", "    s = s + a(i)\n    s = s * 2\n", DepKind::Scalar);
        no("", "    s = a(i) - s\n", DepKind::Scalar);
        no("", "    s = s / a(i)\n", DepKind::Scalar);
        no("", "    s = s + s * a(i)\n", DepKind::Scalar);
        no("", "    b(i) = x\n    x = a(i)\n", DepKind::Scalar);
        // Assigned on some paths only: its last value is the last assigning iteration's.
        no("", "    if (a(i) > 0) x = a(i)\n", DepKind::LastValue);
        no(
            "",
            "    if (a(i) > 0) cycle\n    x = a(i)\n    b(i) = x\n",
            DepKind::LastValue,
        );
        no(
            "",
            "    do j = 1, m\n      x = c(i, j)\n      c(i, j) = x\n    end do\n",
            DepKind::LastValue,
        );
        // `.and.` is spelled otherwise in Fortran: not inferred.
        no(
            "  logical :: f\n",
            "    f = f .and. a(i) > 0\n",
            DepKind::Scalar,
        );
    }

    #[test]
    fn control_leaving_the_loop() {
        yes("    if (a(i) < 0) cycle\n    a(i) = 1\n", "");
        yes(
            "    do j = 1, m\n      if (c(i, j) < 0) exit\n      c(i, j) = 1\n    end do\n",
            "",
        );
        no(
            "",
            "    if (a(i) < 0) exit\n    a(i) = 1\n",
            DepKind::Control,
        );
        no(
            "",
            "    if (a(i) < 0) return\n    a(i) = 1\n",
            DepKind::Control,
        );
        no(
            "",
            "    if (a(i) < 0) stop 1\n    a(i) = 1\n",
            DepKind::Control,
        );
        no(
            "",
            "    if (a(i) < 0) goto 10\n    a(i) = 1\n10  continue\n",
            DepKind::Control,
        );
        no("", "    i = i + 1\n", DepKind::Control);
        no("", "    do i = 1, 2\n    end do\n", DepKind::Control);
        no("", "    a(i) = 1\n    print *, a(i)\n", DepKind::Call);
        no(
            "",
            "    do while (a(i) > 1)\n      a(i) = a(i) / 2\n    end do\n",
            DepKind::Unknown,
        );
    }

    #[test]
    fn calls_and_aliases() {
        no("", "    call g(a(i))\n", DepKind::Call);
        no(
            "  real, external :: f\n",
            "    a(i) = f(b(i))\n",
            DepKind::Call,
        );
        // An unknown name with `(`: not a declared array.
        no("", "    a(i) = g(i)\n", DepKind::Call);
        // An intrinsic's name declared as something else.
        no("  real :: sqrt\n", "    a(i) = sqrt(b(i))\n", DepKind::Call);
        // Or defined by a statement function (which reads what iteration 1 writes).
        no(
            "  abs(x) = x + a(1)\n",
            "    a(i) = 2\n    b(i) = abs(1.0)\n",
            DepKind::Call,
        );
        yes("    a(i) = 2\n    b(i) = abs(1.0)\n", "");
        yes("    a(i) = sqrt(b(i)) + size(a)\n", "");
        // Written through a pointer, a target, a component; equivalence, common.
        no("", "    p(i) = 0\n", DepKind::Alias);
        no("", "    q(i) = 0\n", DepKind::Alias);
        no("", "    r%v(i) = 0\n", DepKind::Alias);
        yes("    a(i) = r%v(i) + q(i) + p(i)\n", "");
        no("  equivalence (a, w)\n", "    a(i) = 0\n", DepKind::Alias);
        no(
            "  real :: e(5)\n  common /blk/ e\n",
            "    e(i) = 0\n",
            DepKind::Alias,
        );
        no(
            "  equivalence (x, y)\n",
            "    x = a(i)\n    b(i) = x\n",
            DepKind::Alias,
        );
    }

    #[test]
    fn an_overlap_does_not_hide_an_accumulation_after_it() {
        // Alone, a possible overlap; after it, an accumulation at an invariant element, a
        // call, an exit: the worse problem is the verdict.
        for first in [
            "    p(i) = 0\n",
            "    q(i) = 0\n",
            "    r%v(i) = 0\n",
            "    w(i) = 0\n",
        ] {
            let decls = "  equivalence (a, w)\n";
            no(decls, first, DepKind::Alias);
            let acc = format!("{first}    b(m) = b(m) + c(i, 1)\n");
            no(decls, &acc, DepKind::Carried);
            no(decls, &format!("{first}    call g(b(i))\n"), DepKind::Call);
            no(
                decls,
                &format!("{first}    if (b(i) > 0) exit\n"),
                DepKind::Control,
            );
            // Two possible overlaps.
            no(decls, &format!("{first}    p(i) = 1\n"), DepKind::Alias);
        }
        // The accumulation first.
        no(
            "",
            "    b(m) = b(m) + c(i, 1)\n    p(i) = 0\n",
            DepKind::Carried,
        );
        // A scalar another name reaches: its use is not a scalar dependence, but an
        // accumulation after it is still one.
        let decls = "  equivalence (x, y)\n";
        no(decls, "    x = a(i)\n    b(i) = x\n", DepKind::Alias);
        no(decls, "    b(i) = x\n    x = a(i)\n", DepKind::Alias);
        no(
            decls,
            "    x = a(i)\n    b(m) = b(m) + x\n",
            DepKind::Carried,
        );
        // It still changes: a subscript using it is not invariant.
        no(
            "  integer :: k2\n  equivalence (k2, ic)\n",
            "    k2 = -i\n    b(i + k2) = 0\n",
            DepKind::Carried,
        );
    }

    #[test]
    fn constructs_not_analyzed() {
        no(
            "",
            "    where (c(:, i) > 0) c(:, i) = 0\n",
            DepKind::Unknown,
        );
        no("", "    forall (j = 1:m) c(j, i) = 0\n", DepKind::Unknown);
        no("", "    a(i) = sum([1.0, 2.0])\n", DepKind::Unknown);
        no(
            "",
            "    associate (v => a(i))\n      v = 0\n    end associate\n",
            DepKind::Unknown,
        );
        no(
            "",
            "    !$acc loop seq\n    do j = 1, m\n      c(i, j) = 0\n    end do\n",
            DepKind::Unknown,
        );
    }

    /// The plain loops of a `kernels` construct are analyzed; one whose `do` shares its line
    /// with another statement (no directive line can go before it) stays sequential, its
    /// verdict saying why.
    #[test]
    fn loops_of_kernels_constructs_are_analyzed_where_a_line_can_go_before_them() {
        let src = format!(
            "{HEAD}  !$acc kernels\n  do i = 1, n\n    a(i) = 0\n  end do\n  n = n; do i = 1, n\n    a(i) = 1\n  end do\n  !$acc end kernels\nend subroutine\n"
        );
        let kind = crate::fortran::form::kind_of(std::path::Path::new("x.f90")).expect("Fortran");
        let tables = crate::rules::Tables::builtin();
        let front = Front::new(&src, kind, |s| {
            crate::directive::fortran_site_info(s, &tables)
        });
        let sx = FortranSyntax::new(&src, &front);
        let verdict = |pat: &str| {
            let at = src.find(pat).expect("loop");
            let head = sx.token_starting_at(at).expect("the loop's item");
            sx.dependence(head, head + 1, &[], &[], &[]).outer().clone()
        };
        assert!(verdict("do i = 1, n\n    a(i) = 0").is_independent());
        match verdict("do i = 1, n\n    a(i) = 1") {
            Verdict::Dependent(d) => {
                assert!(d.reason.contains("shares its line"), "{d:?}")
            }
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn a_confined_temporary_of_an_inner_loop_is_private_to_the_outer_one() {
        // `j`'s loop may run no iteration: `x` holds the last value of an iteration that
        // ran it, unless nothing reads it after the loop.
        let body = "    do j = 1, m\n      x = c(i, j) * 2\n      c(i, j) = x + 1\n    end do\n";
        assert_eq!(outer("", body), Err(DepKind::LastValue));
        let clauses = |confined: &[&str]| match nest_confined("", body, confined).outer() {
            Verdict::Independent(cl) => Ok(cl.omp().join(" ")),
            Verdict::Dependent(d) => Err(d.kind),
        };
        assert_eq!(clauses(&["X"]), Ok("private(x)".to_string()));
        // Read before it is written: carried, confined or not.
        let carried = "    c(i, 1) = x\n    x = a(i)\n";
        let v = match nest_confined("", carried, &["x"]).outer() {
            Verdict::Independent(_) => None,
            Verdict::Dependent(d) => Some(d.kind),
        };
        assert_eq!(v, Some(DepKind::Scalar));
    }
}
