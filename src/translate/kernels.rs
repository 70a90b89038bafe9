//! `kernels` loops the dependence test (`crate::dependence`) proves independent: OpenACC
//! compilers parallelize them, so the translation does too, with the `reduction` and
//! `lastprivate` clauses the test infers; the others stay sequential with a
//! `kernels-sequential` warning that names the dependence found.

use super::{Mode, Options, Unit};
use crate::dependence::{Clauses, Nest, Verdict};
use crate::diag::Diagnostic;
use crate::intent::{Construct, Insert, OmpClause, OmpDirective, Plan};
use crate::profile::Profile;
use crate::rules::id;

/// The dependence verdicts for kernels loop `i`: a loop site, or (`bare`) the plain loop that
/// is the whole body of kernels construct `i`.
fn nest(u: &Unit, i: usize) -> Option<Nest> {
    if u.is_loop(i) {
        let f = u.stmts.get(i)?.as_ref()?.for_loop.as_ref()?;
        // Its `private` scalars are each iteration's own: no value before or after the loop
        // is theirs to keep (the variable outside keeps its own).
        let private: Vec<&str> = u
            .dir(i)
            .map(|d| {
                d.all("private")
                    .flat_map(|c| c.items())
                    .map(|x| x.text.trim())
                    .collect()
            })
            .unwrap_or_default();
        return for_loop_in(u, i, f.for_tok(), &private);
    }
    let f = u.bare_loop(i)?;
    for_loop_in(u, i, f.for_tok(), &[])
}

/// Dependence verdicts for the `for` loop at token `for_tok` inside the statement of site
/// `i` (a plain loop of a `kernels` region), with the facts of site `i`: a variable
/// declared in the region outside the loop is unknown there, so the loop is dependent.
/// Nothing reads the `confined` variables before or after the loop.
fn for_loop_in(u: &Unit, i: usize, for_tok: usize, confined: &[&str]) -> Option<Nest> {
    let stmt = u.stmts.get(i)?.as_ref()?;
    let end = u.syntax.stmt_end(for_tok)?;
    if !(stmt.toks().contains(&for_tok) && end <= stmt.toks().end) {
        return None;
    }
    let none = Vec::new();
    let vars = u.site_facts(i).map_or(&none, |f| &f.vars);
    Some(
        u.syntax
            .dependence(for_tok, end, vars, confined, u.header_macros()),
    )
}

/// The scalars of kernels construct `c` that the plain loop at token `for_tok` assigns and
/// that its function mentions nowhere else (their declaration aside): their values before
/// and after the loop are never read, so each iteration may have its own.
fn confined_to_loop<'u>(u: &'u Unit, c: usize, for_tok: usize) -> Vec<&'u str> {
    let sx = u.syntax;
    let Some(end) = sx.stmt_end(for_tok).and_then(|e| e.checked_sub(1)) else {
        return Vec::new();
    };
    let bytes = sx.token_range(for_tok).start..sx.token_range(end).end;
    let Some(facts) = u.site_facts(c) else {
        return Vec::new();
    };
    (facts.vars.iter())
        .filter(|v| v.ty.kind == crate::facts::VarKind::Scalar)
        .filter(|v| v.writes().iter().any(|w| bytes.contains(w)))
        .filter(|v| {
            v.decl()
                .is_some_and(|d| sx.confined_to(u.at(c), d, std::slice::from_ref(&bytes), &v.name))
        })
        .map(|v| v.name.as_str())
        .collect()
}

/// What the test says about kernels loop `i` (a loop site without levels or `independent`,
/// or the bare loop of kernels construct `i`) in a construct of mapping `mode`.
pub enum Proof {
    /// Independent: the clauses to add (`reduction(+:s)`, `lastprivate(t)`, `collapse(2)`).
    Independent(Vec<OmpClause>),
    /// Not proven: why, for the `kernels-sequential` warning.
    Sequential(String),
}

/// Decides kernels loop `i` of compute construct `c`. Inferred reductions need a construct
/// that combines them: the loop's own combined construct (or bare loop), or a `target`
/// region where the loop opens its own `parallel for`.
pub fn prove(u: &Unit, i: usize, c: usize, mode: Mode) -> Proof {
    let Some(n) = nest(u, i) else {
        return Proof::Sequential("its loop is not analyzed".into());
    };
    match n.outer() {
        Verdict::Dependent(d) => {
            Proof::Sequential(format!("{} (line {})", d.reason, u.line_at(d.at)))
        }
        Verdict::Independent(cl) => {
            if !cl.reduction.is_empty() && i != c && mode != Mode::Target {
                return Proof::Sequential(format!(
                    "its reduction ({}) would need the enclosing 'target teams' to combine it",
                    cl.omp().join(" ")
                ));
            }
            let mut out = omp_clauses(cl);
            // Loop sites inside keep their own directives: no collapse over them.
            let k = n.collapse();
            if k > 1 && !u.descendants(i).iter().any(|&s| u.is_loop(s)) {
                out.push(OmpClause::new("collapse", k.to_string()));
            }
            Proof::Independent(out)
        }
    }
}

/// Whether the test finds loop site `i` independent with a reduction its own clauses do not
/// name: one to infer (`kernels-reduction`).
pub fn infers_reduction(u: &Unit, i: usize) -> bool {
    let named = |v: &str| {
        u.dir(i).is_some_and(|d| {
            d.all("reduction")
                .any(|c| c.items().any(|x| u.lang.same_name(x.text.trim(), v)))
        })
    };
    nest(u, i).is_some_and(|n| {
        matches!(n.outer(), Verdict::Independent(cl) if cl.reduction.iter().any(|(_, v)| !named(v)))
    })
}

/// The `kernels-sequential` warning for loop `line`, with the reason the test gave.
pub fn sequential(at: usize, line: usize, why: &str) -> Diagnostic {
    Diagnostic::new(
        at,
        id::KERNELS_SEQUENTIAL,
        format!(
            "loop at line {line} in a kernels region runs sequentially: {why}; mark it 'independent' if its iterations are independent, or pass --assume-independent"
        ),
    )
}

/// The plain `for` loops of a `kernels` construct `c` mapped to `target` (several
/// statements, or a bare loop that stays sequential): each loop the test proves independent
/// gets its own `parallel for` directive with the inferred clauses, outermost first. Loops
/// are found among the region's statements and inside blocks and `if`/`else` branches. A
/// loop holding a loop directive stays sequential (the directive maps its own loop).
///
/// Loops that run once per iteration of an enclosing loop that stays sequential (a loop with
/// a dependence, `while`, `do`) get no `parallel for`: a parallel region per iteration of
/// the enclosing loop costs a fork and join each time, which made such nests several times
/// slower than their sequential original on a CPU (100x with GCC's host fallback). In the
/// default profile their independent innermost loops get `simd` instead.
pub fn plain_loops(u: &Unit, c: usize, opts: &Options, plan: &mut Plan) {
    let Some(stmt) = u.stmts[c].as_ref() else {
        return;
    };
    if u.is_loop(c) {
        return;
    }
    let mut w = Plain {
        u,
        c,
        opts,
        plan,
        arrays: Vec::new(),
    };
    if let Some(f) = u.bare_loop(c) {
        // Its `kernels-sequential` warning came with the construct's mapping.
        if let Some(n) = for_loop_in(u, c, f.for_tok(), &[]) {
            w.inside(&n, 0);
        }
        return;
    }
    for s in u.syntax.statements_in(&stmt.toks()) {
        w.statement(s, 0, false);
    }
    if let Some(&first) = w.arrays.first() {
        let lines: Vec<String> = w.arrays.iter().map(|&s| u.line_at(s).to_string()).collect();
        let what = match lines.len() {
            1 => format!("the array statement at line {} runs", lines[0]),
            _ => format!("the array statements at lines {} run", lines.join(", ")),
        };
        w.plan.diags.push(Diagnostic::new(
            first,
            id::KERNELS_ARRAY_STATEMENT,
            format!(
                "{what} on one device thread: this kernels region becomes 'target', and no OpenMP construct for array statements builds correctly with both gfortran and flang; write them as 'do' loops to have them parallelized"
            ),
        ));
    }
}

/// Walks the statements of kernels construct `c` for [`plain_loops`].
struct Plain<'u, 'a, 'p> {
    u: &'u Unit<'a>,
    c: usize,
    opts: &'u Options,
    plan: &'p mut Plan,
    /// The first bytes of the array statements met (Fortran), which run on one thread.
    arrays: Vec<usize>,
}

impl Plain<'_, '_, '_> {
    /// The statement starting at token `s` (nesting depth `depth`, bounded for hostile input),
    /// run once per iteration of a sequential loop when `seq`.
    fn statement(&mut self, s: usize, depth: usize, seq: bool) {
        let sx = self.u.syntax;
        let s = sx.skip_preprocessor(s);
        if depth > 64 || sx.site_at(s).is_some() {
            return;
        }
        if sx.array_statement(s) {
            self.arrays.push(sx.token_range(s).start);
        }
        if let Some(f) = sx.loop_at(s) {
            if self.directed(&f) {
                return;
            }
            if self.holds_loop_site(&f) {
                self.statements(f.body(), depth + 1, true);
            } else if let Some(n) = for_loop_in(
                self.u,
                self.c,
                f.for_tok(),
                &confined_to_loop(self.u, self.c, f.for_tok()),
            ) {
                if seq {
                    self.vectorize(&n);
                } else {
                    self.nest(&n, &f);
                }
            }
            return;
        }
        for (c, repeated) in sx.nested_statements(s) {
            self.statement(c, depth + 1, seq || repeated);
        }
    }

    fn statements(&mut self, r: std::ops::Range<usize>, depth: usize, seq: bool) {
        for s in self.u.syntax.statements_in(&r) {
            self.statement(s, depth, seq);
        }
    }

    /// Whether a loop site of the construct begins inside loop `f`.
    fn holds_loop_site(&self, f: &crate::region::ForLoop) -> bool {
        let sx = self.u.syntax;
        let Some(last) = f.body().end.checked_sub(1) else {
            return true;
        };
        let bytes = sx.token_range(f.for_tok()).start..sx.token_range(last).end;
        self.u
            .descendants(self.c)
            .into_iter()
            .any(|k| self.u.is_loop(k) && bytes.contains(&self.u.at(k)))
    }

    /// Whether a loop site of the construct applies to loop `f` or to a loop around it: in
    /// a language whose directive is a statement of its own (Fortran), the loop after it.
    /// That nest is the site's.
    fn directed(&self, f: &crate::region::ForLoop) -> bool {
        let at = self.u.syntax.token_range(f.for_tok()).start;
        self.u.descendants(self.c).into_iter().any(|k| {
            self.u.is_loop(k)
                && self.u.stmts[k].as_ref().is_some_and(|s| {
                    s.for_loop
                        .as_ref()
                        .is_some_and(|l| l.for_tok() == f.for_tok())
                        || s.bytes().contains(&at)
                })
        })
    }

    /// The outermost loop of nest `n`, whose `for` is `f`: parallel when independent;
    /// otherwise a warning, and `simd` on the loops inside where they allow it.
    fn nest(&mut self, n: &Nest, f: &crate::region::ForLoop) {
        let u = self.u;
        let at = u.syntax.token_range(f.for_tok()).start;
        match n.outer() {
            Verdict::Independent(cl) => {
                let mut clauses = omp_clauses(cl);
                let depth = n.collapse();
                if depth > 1 {
                    clauses.insert(0, OmpClause::new("collapse", depth.to_string()));
                }
                let clauses = lastprivate_of(f, clauses);
                // Default profile: `simd` on this loop when the collapsed loops are the
                // whole nest, else on the independent innermost loops inside.
                let last = n.last_collapsed(0, depth.max(1));
                if self.opts.profile != Profile::Default {
                    self.insert(f, Construct::of("parallel for"), clauses);
                } else if !n.has_inner(last) {
                    self.insert(f, Construct::of("parallel for simd"), clauses);
                } else {
                    self.insert(f, Construct::of("parallel for"), clauses);
                    for i in n.innermost_inside(last) {
                        self.simd(n, i);
                    }
                }
            }
            Verdict::Dependent(d) => {
                if self.opts.assume_independent {
                    let clauses = lastprivate_of(f, Vec::new());
                    self.insert(f, self.parallel_name(), clauses);
                    return;
                }
                let why = format!("{} (line {})", d.reason, u.line_at(d.at));
                let line = u.line_at(at);
                self.plan.diags.push(sequential(at, line, &why));
                self.inside(n, 0);
            }
        }
    }

    /// Nest `n`, run once per iteration of a sequential loop: `simd` on its independent
    /// innermost loops (default profile).
    fn vectorize(&mut self, n: &Nest) {
        if n.has_inner(0) {
            self.inside(n, 0);
        } else if self.opts.profile == Profile::Default {
            self.simd(n, 0);
        }
    }

    /// The loops inside loop `k` of nest `n`, which stays sequential: `simd` on the
    /// independent innermost ones (default profile).
    fn inside(&mut self, n: &Nest, k: usize) {
        if self.opts.profile == Profile::Default {
            for i in n.innermost_inside(k) {
                self.simd(n, i);
            }
        }
    }

    /// `simd` with its clauses on the innermost independent loop `i` of nest `n`.
    fn simd(&mut self, n: &Nest, i: usize) {
        let Verdict::Independent(cl) = &n.loops[i].verdict else {
            return;
        };
        let Some(f) = self.for_at(n.loops[i].at) else {
            return;
        };
        let clauses = lastprivate_of(&f, omp_clauses(cl));
        self.insert(&f, Construct::of("simd"), clauses);
    }

    /// The plain `for` whose keyword starts at byte `at` (not one a macro expansion made).
    fn for_at(&self, at: usize) -> Option<crate::region::ForLoop> {
        let sx = self.u.syntax;
        let t = sx.token_starting_at(at)?;
        sx.site_at(t)
            .is_none()
            .then(|| sx.loop_at(t))
            .flatten()
            .filter(|f| f.for_tok() == t && !self.holds_loop_site(f) && !self.directed(f))
    }

    fn parallel_name(&self) -> Construct {
        match self.opts.profile {
            Profile::Default => Construct::of("parallel for simd"),
            _ => Construct::of("parallel for"),
        }
    }

    fn insert(&mut self, f: &crate::region::ForLoop, name: Construct, clauses: Vec<OmpClause>) {
        let sx = self.u.syntax;
        let region = f
            .body()
            .end
            .checked_sub(1)
            .map(|end| sx.token_range(f.for_tok()).start..sx.token_range(end).end);
        self.plan.inserts.push(Insert::BeforeStatement {
            stmt: f.for_tok(),
            directive: OmpDirective::new(name, clauses),
            region,
        });
    }
}

/// The clauses the dependence test infers.
fn omp_clauses(cl: &Clauses) -> Vec<OmpClause> {
    cl.clauses()
        .into_iter()
        .map(|(name, arg)| OmpClause::new(name, arg))
        .collect()
}

/// `clauses` with `lastprivate(i)` for the control variable of `f` when it is declared
/// outside the loop (its value after the loop is used as sequentially), unless named.
pub(super) fn lastprivate_of(
    f: &crate::region::ForLoop,
    mut clauses: Vec<OmpClause>,
) -> Vec<OmpClause> {
    if let Some(v) = f.var.as_ref().filter(|_| !f.declared)
        && !clauses.iter().any(|c| {
            c.name == "lastprivate"
                && c.arg
                    .as_deref()
                    .is_some_and(|l| l.split(", ").any(|x| x == v))
        })
    {
        clauses.push(OmpClause::new("lastprivate", v.clone()));
    }
    clauses
}
