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
//!   ([`poly::disjoint`]), or subscripts running opposite ways that the loop's bounds keep
//!   apart (`a[10 - j]` and `a[j]` over `1 <= j < 5`);
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

mod exprs;
mod file_info;
pub(crate) mod poly;
mod syntax;
#[cfg(test)]
mod tests;
mod walk;

pub use file_info::FileInfo;
pub(crate) use syntax::Macros;
#[cfg(test)]
pub(crate) use syntax::{MAX_NESTING, NESTED};

use crate::facts::{RegionVar, VarKind, VarType};
use crate::hash::HashMap;
use crate::lex::Token;
use syntax::{Parser, Shape};
use walk::{Var, analyze_loop};

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
    /// Scalars from outside the loop that every iteration assigns before reading them, but
    /// not on every path, and whose values before and after the loop nothing reads (the
    /// caller's `confined` names): `private(var)`.
    pub private: Vec<String>,
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
        if !self.private.is_empty() {
            out.push(("private", self.private.join(", ")));
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
    /// Those of `vars` whose values before and after the loop nothing reads: private where
    /// an iteration may not assign them.
    pub confined: &'a [&'a str],
}

/// Dependence verdicts for the loop at `input.for_tok` and the loops nested in it.
#[cfg(test)]
pub fn analyze(input: &Input) -> Nest {
    let pp = crate::lex::PpLines::new(input.src, input.toks);
    analyze_in(input, &FileInfo::new(input.src, input.toks, &pp, &[]))
}

/// Dependence verdicts for the loop at `input.for_tok` and the loops nested in it, with the
/// file's facts computed once for all its loops.
pub fn analyze_in(input: &Input, file: &FileInfo) -> Nest {
    let at = input.toks.get(input.for_tok).map_or(0, |t| t.start());
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
        let mut var = Var::outside(shape_of(&v.ty));
        var.confined = input.confined.contains(&v.name.as_str());
        outside.insert(v.name.to_string(), var);
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
