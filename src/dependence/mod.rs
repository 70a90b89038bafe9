//! Dependence test for loops in `kernels` regions: can the iterations of a `for` loop run in
//! any order, and with which clauses?
//!
//! A loop is independent when
//! - it is in canonical form (`i = lo; i < hi; i++`/`i += c`, `hi` read every iteration like
//!   any other expression) and its body does not assign `i`, `break` out, `return`, `goto`
//!   or `switch`;
//! - every array written is indexed by subscripts that are integer polynomials of the loop
//!   variables and of values the loop does not change, the same for every access to that
//!   array (reads included), and two different iterations cannot reach the same element:
//!   the loop variable alone in a dimension, dimensions that together separate it, or a
//!   flattened index `(i*n + j)*m + k` whose inner loops keep `0 <= j < n`, `0 <= k < m`;
//!   an access at other subscripts may also be one that never meets the write: in a loop
//!   over `0 <= j < m`, the rows `c[(i - 1)*m + j]` and `c[i*m + j]` of a flattened array
//!   ([`poly::disjoint`]);
//! - no other array that may overlap a written one is accessed: distinct declared arrays
//!   and structs, pairs of `restrict` pointers, and a declared array with a `restrict`
//!   pointer cannot overlap; anything else may (`b` may alias `a`). Accesses through a
//!   pointer loaded from memory (`p->q[i]`, `a[i][j]` with `double **a`, a local pointer)
//!   may reach anything: written, they make the loop dependent; read, they may not meet a
//!   write;
//! - calls are to known pure functions only (`math.h`: `sqrt`, `fabs`, `fmax`, `exp`, …);
//! - every scalar from outside the loop that is written is either assigned before it is
//!   read on every path of each iteration (`lastprivate`: also assigned on every path, so
//!   its value after the loop is the last iteration's) or updated only by reduction
//!   statements of one operator (`s += e`, `s = s * e`, `s = fmax(s, e)`,
//!   `s = s > e ? s : e`, `if (e > m) m = e`, `n++`, …).
//!
//! Variables declared inside the loop are private to each iteration. Names are resolved
//! through the facts of the loop's site (variables declared outside it, with their types
//! from libclang or from declarations found in the tokens), declarations inside the loop,
//! enumerators and macros of the file (object- and function-like macros defined once are
//! expanded, so `IDX(i, j)` and `MAX(m, a[i])` are seen as written); any other name (a
//! macro from a header, a type we cannot name) makes the loop dependent. The syntactic
//! facts only ever make the test more conservative: unknown types and shapes count as
//! "may alias anything".
//!
//! In a file that looks like C++ (`::`, `class`, `template`, a standard header without
//! `.h`, ...), a class object used as a whole and `operator[]` count as calls.
//!
//! Assumptions, as OpenACC compilers make them: subscripts stay inside their array
//! dimension (`a[i][j]` with `j` past the row is not another row), a pointer indexed in
//! more than one iteration points into an array (so it does not reach a scalar whose
//! address the file never takes), the math functions do not need `errno`, and the
//! operators of class-typed array elements (`v[i] + v[j]`) have no side effects.

mod poly;
mod syntax;

#[cfg(test)]
pub(crate) use syntax::{MAX_NESTING, NESTED};

use crate::facts::{RegionVar, VarKind, VarType};
use crate::hash::{HashMap, HashSet};
use crate::lex::{TokKind, Token};
use poly::{Atom, Poly, Ranges};
use std::collections::BTreeMap;
use syntax::{Declarator, Expr, For, ForInit, Macros, Parser, Shape, Stmt};

/// A reduction operator, as OpenMP spells it in `reduction(op:var)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReductionOp {
    Add,
    Mul,
    Max,
    Min,
    BitAnd,
    BitOr,
    BitXor,
    And,
    Or,
}

impl ReductionOp {
    pub fn omp(self) -> &'static str {
        match self {
            ReductionOp::Add => "+",
            ReductionOp::Mul => "*",
            ReductionOp::Max => "max",
            ReductionOp::Min => "min",
            ReductionOp::BitAnd => "&",
            ReductionOp::BitOr => "|",
            ReductionOp::BitXor => "^",
            ReductionOp::And => "&&",
            ReductionOp::Or => "||",
        }
    }
}

/// Clauses an independent loop needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Clauses {
    /// `reduction(op:var)`, in order of first use.
    pub reduction: Vec<(ReductionOp, String)>,
    /// Scalars from outside the loop that every iteration assigns before reading them and
    /// on every path: `lastprivate(var)` (each iteration has its own copy; after the loop
    /// the variable holds the last iteration's value, as it would sequentially).
    pub lastprivate: Vec<String>,
}

impl Clauses {
    /// The clauses as OpenMP clause names and arguments: (`reduction`, `+:s`),
    /// (`lastprivate`, `t`).
    pub fn clauses(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        for (op, v) in &self.reduction {
            out.push(("reduction", format!("{}:{v}", op.omp())));
        }
        if !self.lastprivate.is_empty() {
            out.push(("lastprivate", self.lastprivate.join(", ")));
        }
        out
    }

    /// The clauses as OpenMP text: `reduction(+:s) lastprivate(t)`.
    pub fn omp(&self) -> Vec<String> {
        self.clauses()
            .into_iter()
            .map(|(name, arg)| format!("{name}({arg})"))
            .collect()
    }
}

/// What kind of dependence (or doubt) was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DepKind {
    /// Two iterations may access the same element, at least one writing it.
    Carried,
    /// A written array may overlap another array or pointer the loop accesses.
    Alias,
    /// A call to a function not known to be pure.
    Call,
    /// A scalar read before it is written in an iteration, and not a reduction.
    Scalar,
    /// A scalar assigned on some paths only: its value after the loop is the last
    /// assigning iteration's.
    LastValue,
    /// The loop's control: not canonical, `break`, `return`, `goto`, the loop variable
    /// assigned in the body.
    Control,
    /// Code the test does not analyze (unknown names and types, unsupported constructs).
    Unknown,
}

/// Why a loop is not known to be independent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependence {
    pub kind: DepKind,
    /// Byte offset of the access, call or statement that causes it.
    pub at: usize,
    /// Names the dependence: "'a[i - 1]' is read and 'a[i]' is written", "'b' may alias
    /// 'a'", "call to 'f'".
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Independent(Clauses),
    Dependent(Dependence),
}

impl Verdict {
    pub fn is_independent(&self) -> bool {
        matches!(self, Verdict::Independent(_))
    }
}

/// The verdict for one `for` loop of a nest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopReport {
    /// Byte offset of its `for`.
    pub at: usize,
    /// Its control variable.
    pub var: Option<String>,
    /// 0 for the analyzed loop, 1 for loops directly in its body, ...
    pub depth: usize,
    /// Index of the enclosing loop in `Nest::loops`.
    pub parent: Option<usize>,
    /// The only statement of its parent's body, with bounds and step that the parent does
    /// not change and that do not use the parent's variable: it can be collapsed with it.
    pub collapsible: bool,
    /// Independence with respect to its own variable, enclosing loop variables fixed.
    pub verdict: Verdict,
}

/// Verdicts for a loop and every `for` loop nested in it (outside `while`/`do` bodies),
/// outermost first, each before the loops inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nest {
    pub loops: Vec<LoopReport>,
}

impl Nest {
    /// How many perfectly nested independent loops, from the outermost, can be collapsed
    /// into one parallel loop (0 when the outermost loop is dependent).
    pub fn collapse(&self) -> usize {
        self.collapse_at(0)
    }

    /// How many perfectly nested independent loops, from loop `k`, can be collapsed into one
    /// parallel loop (0 when loop `k` is dependent).
    pub fn collapse_at(&self, k: usize) -> usize {
        let mut n = 0;
        let mut cur = k;
        while let Some(l) = self.loops.get(cur) {
            if !l.verdict.is_independent() || (n > 0 && !l.collapsible) {
                break;
            }
            n += 1;
            match self.collapsible_child(cur) {
                Some(c) => cur = c,
                None => break,
            }
        }
        n
    }

    fn collapsible_child(&self, k: usize) -> Option<usize> {
        self.loops
            .iter()
            .position(|c| c.parent == Some(k) && c.collapsible)
    }

    /// The last of the `depth` loops collapsed from loop `k`.
    pub fn last_collapsed(&self, k: usize, depth: usize) -> usize {
        let mut last = k;
        for _ in 1..depth {
            match self.collapsible_child(last) {
                Some(c) => last = c,
                None => break,
            }
        }
        last
    }

    /// The independent innermost loops (no loop inside them) nested in loop `k`.
    pub fn innermost_inside(&self, k: usize) -> Vec<usize> {
        let under = |i: usize| {
            let mut p = self.loops[i].parent;
            while let Some(q) = p {
                if q == k {
                    return true;
                }
                p = self.loops[q].parent;
            }
            false
        };
        (0..self.loops.len())
            .filter(|&i| under(i) && self.loops[i].verdict.is_independent() && !self.has_inner(i))
            .collect()
    }

    /// Whether loop `k` has loops inside it.
    pub fn has_inner(&self, k: usize) -> bool {
        self.loops.iter().any(|c| c.parent == Some(k))
    }

    /// The outermost loop's verdict.
    pub fn outer(&self) -> &Verdict {
        &self.loops[0].verdict
    }
}

/// What the test needs from the file.
pub struct Input<'a> {
    pub src: &'a str,
    /// The file's tokens.
    pub toks: &'a [Token],
    /// Token index of the loop's `for`.
    pub for_tok: usize,
    /// One past the loop statement's last token.
    pub end: usize,
    /// The variables the loop uses that are declared outside it.
    pub vars: &'a [RegionVar],
}

/// Dependence verdicts for the loop at `input.for_tok` and the loops nested in it.
#[cfg(test)]
pub fn analyze(input: &Input) -> Nest {
    let pp = crate::lex::PpLines::new(input.src, input.toks);
    analyze_in(input, &FileInfo::new(input.src, input.toks, &pp))
}

/// Dependence verdicts for the loop at `input.for_tok` and the loops nested in it, with the
/// file's facts computed once for all its loops.
pub fn analyze_in(input: &Input, file: &FileInfo) -> Nest {
    let at = input.toks.get(input.for_tok).map_or(0, |t| t.start);
    let dependent = |d: Dependence| Nest {
        loops: vec![LoopReport {
            at,
            var: None,
            depth: 0,
            parent: None,
            collapsible: false,
            verdict: Verdict::Dependent(d),
        }],
    };
    if input.for_tok >= input.end || input.end > input.toks.len() {
        return dependent(unknown(at, "the loop's statement is not known"));
    }
    let toks = match file
        .macros
        .expand(input.src, input.toks, input.for_tok..input.end, at)
    {
        Ok(t) => t,
        Err(e) => return dependent(unknown(at, e)),
    };
    let mut p = Parser::new(&toks);
    let f = match p.for_stmt() {
        Ok(f) if p.at_end() => f,
        Ok(_) => return dependent(unknown(at, "tokens after the loop statement")),
        Err(e) if e.control => return dependent(dep(DepKind::Control, e.at, e.what)),
        Err(e) => return dependent(unknown(e.at, format!("{}: not analyzed", e.what))),
    };
    let mut outside: HashMap<String, Var> = HashMap::default();
    for v in input.vars {
        outside.insert(v.name.clone(), Var::outside(shape_of(&v.ty)));
    }
    let mut nest = Nest { loops: Vec::new() };
    analyze_loop(file, &f, outside, None, 0, false, &mut nest);
    nest
}

fn unknown(at: usize, what: impl Into<String>) -> Dependence {
    Dependence {
        kind: DepKind::Unknown,
        at,
        reason: what.into(),
    }
}

fn dep(kind: DepKind, at: usize, reason: impl Into<String>) -> Dependence {
    Dependence {
        kind,
        at,
        reason: reason.into(),
    }
}

fn shape_of(t: &VarType) -> Shape {
    match t.kind {
        VarKind::Scalar => Shape::Scalar { integer: false },
        VarKind::Pointer => Shape::Pointer {
            dims: t.dims,
            restrict: t.restrict,
        },
        VarKind::Array { .. } => Shape::Array { dims: t.dims },
        VarKind::Struct => Shape::Object,
        VarKind::Other => Shape::Unknown,
    }
}

/// Facts about the whole file.
pub struct FileInfo {
    macros: Macros,
    /// Names whose address is taken somewhere (`&x`, a C++ reference bound to `x`).
    addressed: HashSet<String>,
    /// Enumerators.
    enums: HashSet<String>,
    /// The file looks like C++: a struct value may have operators (calls).
    cxx: bool,
}

/// Constants of the standard headers that are safe to read.
const CONSTANTS: &[&str] = &[
    "true",
    "false",
    "NULL",
    "nullptr",
    "M_PI",
    "M_PI_2",
    "M_PI_4",
    "M_1_PI",
    "M_2_PI",
    "M_E",
    "M_LN2",
    "M_LN10",
    "M_SQRT2",
    "M_SQRT1_2",
    "DBL_MAX",
    "DBL_MIN",
    "DBL_EPSILON",
    "FLT_MAX",
    "FLT_MIN",
    "FLT_EPSILON",
    "INT_MAX",
    "INT_MIN",
    "UINT_MAX",
    "LONG_MAX",
    "LONG_MIN",
    "LLONG_MAX",
    "LLONG_MIN",
    "SIZE_MAX",
    "HUGE_VAL",
    "HUGE_VALF",
    "INFINITY",
    "NAN",
];

/// Functions without side effects whose result depends only on their arguments.
const PURE: &[&str] = &[
    "sqrt",
    "cbrt",
    "fabs",
    "abs",
    "labs",
    "llabs",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "pow",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "floor",
    "ceil",
    "round",
    "lround",
    "llround",
    "trunc",
    "rint",
    "lrint",
    "nearbyint",
    "fmod",
    "remainder",
    "fmax",
    "fmin",
    "fdim",
    "fma",
    "hypot",
    "erf",
    "erfc",
    "tgamma",
    "copysign",
    "ldexp",
    "scalbn",
    "ilogb",
    "logb",
    "isnan",
    "isinf",
    "isfinite",
    "isnormal",
    "signbit",
];

fn is_pure(name: &str) -> bool {
    let base = name.strip_prefix("std::").unwrap_or(name);
    if name.starts_with("std::") && matches!(base, "min" | "max") {
        return true;
    }
    // `sqrtf`, `fabsl`: the float and long double variants.
    PURE.contains(&base)
        || (!name.starts_with("std::")
            && (base.strip_suffix('f').or_else(|| base.strip_suffix('l')))
                .is_some_and(|b| PURE.contains(&b)))
}

impl FileInfo {
    pub fn new(src: &str, toks: &[Token], pp: &crate::lex::PpLines) -> Self {
        let text = |k: usize| toks.get(k).map_or("", |t| t.text(src));
        let mut addressed = HashSet::default();
        let mut enums = HashSet::default();
        for k in 0..toks.len() {
            match text(k) {
                "&" => {
                    let unary = k == 0 || {
                        let p = &toks[k - 1];
                        let pt = p.text(src);
                        !(matches!(p.kind, TokKind::Number | TokKind::Literal)
                            || (p.kind == TokKind::Ident
                                && !matches!(pt, "return" | "case" | "sizeof"))
                            || pt == ")"
                            || pt == "]")
                    };
                    let next = toks.get(k + 1).filter(|t| t.kind == TokKind::Ident);
                    if let Some(n) = next {
                        if unary {
                            addressed.insert(n.text(src).to_string());
                        } else if text(k + 2) == "="
                            && toks.get(k + 3).is_some_and(|t| t.kind == TokKind::Ident)
                        {
                            // `T &r = x;` binds a reference to `x`.
                            addressed.insert(text(k + 3).to_string());
                        }
                    }
                }
                "enum" => {
                    let mut j = k + 1;
                    if toks.get(j).is_some_and(|t| t.kind == TokKind::Ident) {
                        j += 1;
                    }
                    if text(j) != "{" {
                        continue;
                    }
                    let mut depth = 0;
                    while j < toks.len() {
                        match text(j) {
                            "{" | "(" => depth += 1,
                            "}" | ")" => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ if depth == 1
                                && toks[j].kind == TokKind::Ident
                                && matches!(text(j - 1), "{" | ",")
                                && matches!(text(j + 1), "=" | "," | "}") =>
                            {
                                enums.insert(text(j).to_string());
                            }
                            _ => {}
                        }
                        j += 1;
                    }
                }
                _ => {}
            }
        }
        let cxx = toks.iter().any(|t| match t.kind {
            TokKind::Ident => matches!(
                t.text(src),
                "class" | "template" | "namespace" | "operator" | "public" | "nullptr" | "std"
            ),
            TokKind::Punct => t.text(src) == "::",
            // `#include <vector>`: a standard header without `.h`.
            TokKind::PpLine => {
                let l: String = t.text(src).split_whitespace().collect();
                l.starts_with("#include<") && !l.contains(".h>")
            }
            _ => false,
        });
        FileInfo {
            macros: Macros::new(src, toks, pp),
            addressed,
            enums,
            cxx,
        }
    }

    /// A name that is a constant: an enumerator, a standard constant not redefined here.
    fn is_constant(&self, name: &str) -> bool {
        self.enums.contains(name) || (CONSTANTS.contains(&name) && !self.macros.is_macro(name))
    }
}

#[derive(Debug, Clone)]
struct Var {
    shape: Shape,
    /// Declared inside the analyzed loop: private to each iteration.
    local: bool,
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
    fn outside(shape: Shape) -> Var {
        Var {
            shape,
            local: false,
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
    ranges: Ranges,
    /// `[lo, hi)` of the analyzed loop's variable, when its bounds are polynomials.
    own: Option<(Poly, Poly)>,
    children: Vec<Child<'f>>,
    /// The reduction statement being walked: (variable, operator).
    in_reduction: Option<(String, ReductionOp)>,
}

type R = Result<(), Dependence>;

/// Analyze `f` (depth `depth`) and, recursively, the loops directly in its body.
fn analyze_loop(
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

/// Names an expression mentions (not called function names nor members).
fn names_in(e: &Expr, out: &mut Vec<String>) {
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

fn mentions(e: &Expr, name: &str) -> bool {
    let mut n = Vec::new();
    names_in(e, &mut n);
    n.iter().any(|x| x == name)
}

/// Names assigned (`=`, `op=`, `++`, `--`) in an expression.
fn assigned_in_expr(e: &Expr, out: &mut HashSet<String>) {
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

fn assigned_in_stmt(s: &Stmt, out: &mut HashSet<String>) {
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
fn only_loop(s: &Stmt) -> Option<&For> {
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
fn increment(e: &Expr) -> Option<(&str, Option<&Expr>)> {
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
fn condition<'e>(e: &'e Expr, var: &str) -> Option<(&'e Expr, &'static str)> {
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

/// The terms of a chain of `op` (`a + b - c` for `+`), with signs.
fn chain<'e>(e: &'e Expr, op: &str, neg: bool, out: &mut Vec<(bool, &'e Expr)>) {
    match e {
        Expr::Binary(_, o, l, r) if *o == op || (op == "+" && *o == "-") => {
            chain(l, op, neg, out);
            chain(r, op, if *o == "-" { !neg } else { neg }, out);
        }
        _ => out.push((neg, e)),
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
        self.memory()?;
        Ok(clauses)
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
                    loop_var: false,
                    control: false,
                    value,
                    exact,
                },
            );
        }
        Ok(())
    }

    /// The value of `e` as a polynomial of loop variables and invariants.
    fn poly(&self, e: &Expr) -> Option<Poly> {
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
    fn integer_operands(&self, e: &Expr) -> bool {
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

    /// `s op= e`, `s = s op e`, `s = fmax(s, e)`, `s = s > e ? s : e`, `s++` on an outside
    /// scalar: (s, operator, operands to evaluate).
    fn reduction_stmt<'e>(&self, e: &'e Expr) -> Option<(String, ReductionOp, Vec<&'e Expr>)> {
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
    fn if_reduction<'e>(
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

    fn scalar_read(&mut self, name: &str, at: usize) {
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

    fn scalar_write(&mut self, name: &str, at: usize) {
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

    /// Evaluate `e` for its value.
    fn value(&mut self, e: &Expr) -> R {
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
            return Err(dep(
                DepKind::Alias,
                at,
                format!("'{text}' is written through a pointer the analysis cannot follow"),
            ));
        }
        self.unknown_reads.push((at, text));
        Ok(())
    }

    /// Private and reduction scalars, or the scalar dependence.
    fn scalar_clauses(&self) -> Result<Clauses, Dependence> {
        let mut c = Clauses::default();
        for name in &self.order {
            let u = &self.scalars[name];
            let Some(w) = u.written else { continue };
            match u.exposed {
                None => {
                    if self.exits.as_ref().is_some_and(|e| e.contains(name)) {
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

    /// Memory dependences between the recorded accesses.
    fn memory(&self) -> R {
        let writes: Vec<&Access> = self.accesses.iter().filter(|a| a.write).collect();
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
            for a in self.accesses.iter().filter(|a| a.root != w.root) {
                if may_alias(w.class, a.class) {
                    return Err(dep(
                        DepKind::Alias,
                        a.at,
                        format!(
                            "'{}' may alias '{}' (pointers without 'restrict')",
                            a.root, w.root
                        ),
                    ));
                }
            }
            if let Some((at, text)) = self.unknown_reads.first() {
                return Err(dep(
                    DepKind::Alias,
                    *at,
                    format!(
                        "'{text}' is read through a pointer the analysis cannot follow and may alias '{}'",
                        w.root
                    ),
                ));
            }
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
