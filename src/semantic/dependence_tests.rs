//! Loop bodies and their verdicts, with the facts of both the syntactic reading and
//! libclang (when it loads).

use super::SiteInput;
use super::syntactic::Syntax;
use crate::dependence::*;
use crate::facts::RegionVar;
use crate::lex::{Token, lex};
use crate::structure::Structure;

const PRELUDE: &str = "#include <math.h>\n#include <stdio.h>\n";

/// The facts of the first `for` loop of `src`: (token index of `for`, end, vars).
fn site(src: &str, toks: &[Token]) -> (usize, usize, SiteInput<'static>) {
    let st = Structure::new(src, toks, &[]);
    let for_tok = toks
        .iter()
        .position(|t| t.text(src) == "for")
        .expect("a for loop");
    let end = st.stmt_end(for_tok).expect("the loop's end");
    let start = toks[for_tok].start();
    let input = SiteInput {
        name: "kernels",
        start,
        end: start,
        last_token: None,
        stmt: Some(start..toks[end - 1].end()),
        stmt_toks: Some(for_tok..end),
        for_loop: None,
        vars: true,
        is_loop: false,
        names: Vec::new(),
    };
    (for_tok, end, input)
}

fn syntactic_vars(src: &str, toks: &[Token], input: &SiteInput) -> Vec<RegionVar> {
    let st = Structure::new(src, toks, &[]);
    let mut unresolved = Vec::new();
    Syntax::new(src, toks)
        .site_facts(&st, input, &mut unresolved)
        .vars
}

/// libclang's facts, or None when libclang cannot be loaded.
fn clang_vars(src: &str, toks: &[Token], input: &SiteInput, cxx: bool) -> Option<Vec<RegionVar>> {
    let name = if cxx {
        "/tmp/acc2omp-dep-test.cpp"
    } else {
        "/tmp/acc2omp-dep-test.c"
    };
    let r = super::load::with_index(|lib, index| {
        // With clang's OpenACC front end (when this libclang has one) and without it: the
        // constructs it adds around nested loops must not change the facts.
        let args = super::clang::arguments(lib, name, &[]);
        let plain: Vec<String> = args.iter().filter(|a| *a != "-fopenacc").cloned().collect();
        let facts = |args: &[String]| {
            let parsed =
                super::clang::parse(index, name, src, args).expect("libclang parses the case");
            assert!(
                parsed.errors.is_empty(),
                "libclang errors ({args:?}): {:?}\n{src}",
                parsed.errors
            );
            match parsed.site_facts(src, toks, input) {
                Ok(f) => f.vars,
                Err(e) => panic!("libclang ({args:?}) does not see the loop: {e:?}\n{src}"),
            }
        };
        let vars = facts(&args);
        if plain.len() != args.len() {
            assert_eq!(vars, facts(&plain), "-fopenacc changes the facts of\n{src}");
        }
        vars
    });
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            if std::env::var("ACC2OMP_REQUIRE_TOOLS").is_ok_and(|v| v == "1") {
                panic!("libclang is required: {e}");
            }
            eprintln!("!!! dependence tests: libclang not loaded ({e}); syntactic facts only");
            None
        }
    }
}

fn nest_with(src: &str, vars: &[RegionVar]) -> Nest {
    let toks = lex(src);
    let (for_tok, end, _) = site(src, &toks);
    analyze(&Input {
        src,
        toks: &toks,
        for_tok,
        end,
        vars,
        confined: &[],
    })
}

/// Both readings of `src`: (syntactic, libclang).
fn nests(src: &str, cxx: bool) -> (Nest, Option<Nest>) {
    let toks = lex(src);
    let (_, _, input) = site(src, &toks);
    let syn = nest_with(src, &syntactic_vars(src, &toks, &input));
    let exact = clang_vars(src, &toks, &input, cxx).map(|v| nest_with(src, &v));
    (syn, exact)
}

/// The verdict as text: `indep: <clauses>` or `dep <Kind>: <reason>`.
fn show(v: &Verdict) -> String {
    match v {
        Verdict::Independent(c) if c.omp().is_empty() => "indep".to_string(),
        Verdict::Independent(c) => format!("indep: {}", c.omp().join(" ")),
        Verdict::Dependent(d) => format!("dep {:?}: {}", d.kind, d.reason),
    }
}

fn matches(got: &str, want: &str) -> bool {
    if want.starts_with("indep") {
        got == want
    } else {
        got.starts_with(want.split(':').next().unwrap_or(want))
            && got.contains(want.split_once(": ").map_or("", |x| x.1))
    }
}

struct Case {
    name: &'static str,
    /// Declarations and the function header (up to its `{`).
    pre: &'static str,
    /// The loop (and anything after it in the function).
    code: &'static str,
    /// `indep: clauses` or `dep Kind: part of the reason`.
    want: &'static str,
    /// What the syntactic facts give when it differs (more conservative).
    syntactic: Option<&'static str>,
}

const G: &str =
    "double a[1000], b[1000], c[1000]; int idx[1000]; double m2[100][100], m3[100][100];\n";

fn case(name: &'static str, pre: &'static str, code: &'static str, want: &'static str) -> Case {
    Case {
        name,
        pre,
        code,
        want,
        syntactic: None,
    }
}

impl Case {
    fn with_syntactic(self, s: &'static str) -> Case {
        Case {
            syntactic: Some(s),
            ..self
        }
    }
}

fn run(cases: &[Case], cxx: bool) {
    let mut failures = Vec::new();
    for c in cases {
        let src = format!("{PRELUDE}{G}{}\n{}\n}}\n", c.pre, c.code);
        let (syn, exact) = nests(&src, cxx);
        let got = show(syn.outer());
        let want_syn = c.syntactic.unwrap_or(c.want);
        if !matches(&got, want_syn) {
            failures.push(format!(
                "{} (syntactic): got `{got}`, want `{want_syn}`",
                c.name
            ));
        }
        if let Some(e) = exact {
            let got = show(e.outer());
            if !matches(&got, c.want) {
                failures.push(format!(
                    "{} (libclang): got `{got}`, want `{}`",
                    c.name, c.want
                ));
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

const F: &str =
    "void f(int n, double s, double m, double p, int cnt, int flags, int ok, double t, int j) {";

#[test]
fn independent_loops() {
    run(
        &[
            case(
                "elementwise",
                F,
                "for (int i = 0; i < n; i++) a[i] = b[i] * 2.0 + c[i];",
                "indep",
            ),
            case(
                "update in place",
                F,
                "for (int i = 0; i < n; i++) a[i] += b[i];",
                "indep",
            ),
            case(
                "sum",
                F,
                "for (int i = 0; i < n; i++) s += a[i];",
                "indep: reduction(+:s)",
            ),
            case(
                "sum spelled out",
                F,
                "for (int i = 0; i < n; i++) s = s + a[i] * b[i];",
                "indep: reduction(+:s)",
            ),
            case(
                "sum on the right",
                F,
                "for (int i = 0; i < n; i++) s = a[i] + s;",
                "indep: reduction(+:s)",
            ),
            case(
                "difference",
                F,
                "for (int i = 0; i < n; i++) s -= a[i];",
                "indep: reduction(+:s)",
            ),
            case(
                "chain",
                F,
                "for (int i = 0; i < n; i++) s = s + a[i] - b[i];",
                "indep: reduction(+:s)",
            ),
            case(
                "product",
                F,
                "for (int i = 0; i < n; i++) p = p * a[i];",
                "indep: reduction(*:p)",
            ),
            case(
                "fmax",
                F,
                "for (int i = 0; i < n; i++) m = fmax(m, a[i]);",
                "indep: reduction(max:m)",
            ),
            case(
                "fmax swapped",
                F,
                "for (int i = 0; i < n; i++) m = fmax(a[i], m);",
                "indep: reduction(max:m)",
            ),
            case(
                "fmin",
                F,
                "for (int i = 0; i < n; i++) m = fmin(m, a[i] * 2);",
                "indep: reduction(min:m)",
            ),
            case(
                "ternary max",
                F,
                "for (int i = 0; i < n; i++) m = m > a[i] ? m : a[i];",
                "indep: reduction(max:m)",
            ),
            case(
                "ternary max 2",
                F,
                "for (int i = 0; i < n; i++) m = a[i] > m ? a[i] : m;",
                "indep: reduction(max:m)",
            ),
            case(
                "ternary min",
                F,
                "for (int i = 0; i < n; i++) m = a[i] < m ? a[i] : m;",
                "indep: reduction(min:m)",
            ),
            case(
                "ternary min 2",
                F,
                "for (int i = 0; i < n; i++) m = m <= a[i] ? m : a[i];",
                "indep: reduction(min:m)",
            ),
            case(
                "if max",
                F,
                "for (int i = 0; i < n; i++) if (a[i] > m) m = a[i];",
                "indep: reduction(max:m)",
            ),
            case(
                "if max reversed",
                F,
                "for (int i = 0; i < n; i++) if (m < a[i]) m = a[i];",
                "indep: reduction(max:m)",
            ),
            case(
                "if min braces",
                F,
                "for (int i = 0; i < n; i++) { if (a[i] < m) { m = a[i]; } }",
                "indep: reduction(min:m)",
            ),
            case(
                "count",
                F,
                "for (int i = 0; i < n; i++) if (a[i] > 0) cnt++;",
                "indep: reduction(+:cnt)",
            ),
            case(
                "bitwise or",
                F,
                "for (int i = 0; i < n; i++) flags |= idx[i];",
                "indep: reduction(|:flags)",
            ),
            case(
                "logical and",
                F,
                "for (int i = 0; i < n; i++) ok = ok && a[i] > 0;",
                "indep: reduction(&&:ok)",
            ),
            case(
                "two reductions",
                F,
                "for (int i = 0; i < n; i++) { s += a[i]; m = fmax(m, a[i]); b[i] = a[i]; }",
                "indep: reduction(+:s) reduction(max:m)",
            ),
            case(
                "temporary from outside",
                F,
                "for (int i = 0; i < n; i++) { t = a[i] * 2; b[i] = t + 1; }",
                "indep: lastprivate(t)",
            ),
            case(
                "temporary assigned then summed",
                F,
                "for (int i = 0; i < n; i++) { t = 0; t += a[i]; b[i] = t; }",
                "indep: lastprivate(t)",
            ),
            case(
                "local temporary",
                F,
                "for (int i = 0; i < n; i++) { double u = a[i]; b[i] = u * u; }",
                "indep",
            ),
            case(
                "inner loop variable from outside",
                F,
                "for (int i = 0; i < 100; i++) for (j = 0; j < 100; j++) m2[i][j] = 0;",
                "indep: lastprivate(j)",
            ),
            case(
                "2-D copy",
                F,
                "for (int i = 0; i < 100; i++) for (int k = 0; k < 100; k++) m2[i][k] = m3[i][k] * 2;",
                "indep",
            ),
            case(
                "row recurrence",
                F,
                "for (int i = 0; i < 100; i++) for (int k = 1; k < 100; k++) m2[i][k] = m2[i][k - 1] + 1;",
                "indep",
            ),
            case(
                "stencil on another array",
                F,
                "for (int i = 1; i < n - 1; i++) b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3;",
                "indep",
            ),
            case(
                "indirect read",
                F,
                "for (int i = 0; i < n; i++) b[i] = a[idx[i]];",
                "indep",
            ),
            case(
                "math",
                F,
                "for (int i = 0; i < n; i++) b[i] = sqrt(fabs(a[i])) + exp(c[i]) + powf(2.0f, 3.0f);",
                "indep",
            ),
            case(
                "continue",
                F,
                "for (int i = 0; i < n; i++) { if (a[i] < 0) continue; b[i] = a[i]; }",
                "indep",
            ),
            case(
                "temporary with continue",
                F,
                "for (int i = 0; i < n; i++) { t = a[i]; if (t < 0) continue; b[i] = t; }",
                "indep: lastprivate(t)",
            ),
            case(
                "step 2",
                F,
                "for (int i = 0; i < n; i += 2) a[i] = b[i];",
                "indep",
            ),
            case(
                "downward",
                F,
                "for (int i = n - 1; i >= 0; i--) a[i] = b[i];",
                "indep",
            ),
            case(
                "assigned control variable",
                "void f(int n) { int i;",
                "for (i = 0; i < n; i++) a[i] = b[i];",
                "indep",
            ),
            // Declarators after a struct body (the syntactic reading sees them too).
            case(
                "struct member read",
                "struct P { double s; } pp;\nvoid f(int n) {",
                "for (int i = 0; i < n; i++) a[i] = b[i] * pp.s;",
                "indep",
            ),
            case(
                "struct member read, separate declaration",
                "struct P { double s; };\nstruct P pp;\nvoid f(int n) {",
                "for (int i = 0; i < n; i++) a[i] = b[i] * pp.s;",
                "indep",
            ),
            case(
                "array of structs",
                "struct Q { double x, y; } pts[1000];\nvoid f(int n) {",
                "for (int i = 0; i < n; i++) pts[i].x = pts[i].y * 2;",
                "indep",
            ),
            case(
                "array of structs, separate declaration",
                "struct Q { double x, y; };\nstruct Q pts[1000];\nvoid f(int n) {",
                "for (int i = 0; i < n; i++) pts[i].x = pts[i].y * 2;",
                "indep",
            ),
            case(
                "local array",
                F,
                "for (int i = 0; i < n; i++) { double w[3]; w[0] = a[i]; w[1] = b[i]; c[i] = w[0] + w[1]; }",
                "indep",
            ),
            case(
                "cast of the variable",
                F,
                "for (int i = 0; i < n; i++) a[i] = (double)i * 0.5;",
                "indep",
            ),
            case(
                "conditional value",
                F,
                "for (int i = 0; i < n; i++) a[i] = (i > 0) ? b[i] : 0.0;",
                "indep",
            ),
            case(
                "read after write",
                F,
                "for (int i = 0; i < n; i++) { a[i] = b[i]; c[i] = a[i]; }",
                "indep",
            ),
            case(
                "sizeof",
                F,
                "for (int i = 0; i < n; i++) a[i] = sizeof(double) * b[i];",
                "indep",
            ),
            case(
                "enumerator",
                "enum { K = 3 };\nvoid f(int n) {",
                "for (int i = 0; i < n; i++) a[i] = b[i] * K;",
                "indep",
            ),
            case(
                "constant macro",
                "#define SCALE 2.0\nvoid f(int n) {",
                "for (int i = 0; i < n; i++) a[i] = b[i] * SCALE;",
                "indep",
            ),
            case(
                "standard constant",
                F,
                "for (int i = 0; i < n; i++) a[i] = b[i] * M_PI;",
                "indep",
            ),
            case(
                "max macro",
                "#define MAX(x, y) ((x) > (y) ? (x) : (y))\nvoid f(int n, double m) {",
                "for (int i = 0; i < n; i++) m = MAX(m, a[i]);",
                "indep: reduction(max:m)",
            ),
            case(
                "restrict pointers",
                "void f(int n, double *restrict x, const double *restrict y) {",
                "for (int i = 0; i < n; i++) x[i] = 2 * y[i];",
                "indep",
            ),
            case(
                "restrict pointer and array",
                "void f(int n, double *restrict x) {",
                "for (int i = 0; i < n; i++) x[i] = a[i] + b[i];",
                "indep",
            ),
            case(
                "one pointer",
                "void f(int n, double *x) {",
                "for (int i = 0; i < n; i++) x[i] = x[i] * 2;",
                "indep",
            ),
            case(
                "pointer arithmetic",
                "void f(int n, double *restrict x, double *restrict y) {",
                "for (int i = 0; i < n; i++) *(x + i) = *(y + i) + 1;",
                "indep",
            ),
            case(
                "flattened nest",
                "void f(int n, double *restrict x, const double *restrict y) {",
                "for (int i = 0; i < n; i++) for (int k = 0; k < n; k++) x[i * n + k] = y[i * n + k] + 1;",
                "indep",
            ),
            case(
                "upper triangle flattened",
                "void f(int n, double *restrict x) {",
                "for (int i = 0; i < n; i++) for (int k = i; k < n; k++) x[i * n + k] = x[i * n + k] * 2;",
                "indep",
            ),
            case(
                "lower triangle flattened",
                "void f(int n, double *restrict x) {",
                "for (int i = 0; i < n; i++) for (int k = 0; k <= i; k++) x[i * n + k] = 0;",
                "indep",
            ),
            case(
                "lower triangle flattened, rows past the width",
                "void f(int n, double *restrict x) {",
                "for (int i = 0; i <= n; i++) for (int k = 0; k < i; k++) x[i * n + k] = 0;",
                "indep",
            ),
            case(
                "strict upper triangle flattened",
                "void f(int n, double *restrict x) {",
                "for (int i = 1; i < n; i++) for (int k = 2 * i + 1; k < n; k++) x[i * n + k] = 0;",
                "indep",
            ),
            case(
                "flattened by a macro",
                "#define IDX(r, q) ((r) * n + (q))\nvoid f(int n, double *restrict x, const double *restrict y) {",
                "for (int i = 1; i < n - 1; i++) for (int k = 1; k < n - 1; k++) x[IDX(i, k)] = y[IDX(i - 1, k)] + y[IDX(i, k + 1)];",
                "indep",
            ),
            case(
                "flattened through a local",
                "double flat[10000];\nvoid f(int n) {",
                "for (int i = 0; i < 100; i++) for (int k = 0; k < 100; k++) { const int at = i * 100 + k; flat[at] = flat[at] * 2; }",
                "indep",
            ),
            case(
                "pointer to rows",
                "void f(int n, double (*restrict u)[100], double (*restrict v)[100]) {",
                "for (int i = 1; i < n; i++) for (int k = 0; k < 100; k++) u[i][k] = v[i - 1][k];",
                "indep",
            ),
            case(
                "acc loop inside",
                F,
                "for (int i = 0; i < 100; i++) {\n#pragma acc loop vector\n for (int k = 0; k < 100; k++) m2[i][k] = 1; }",
                "indep",
            ),
            case(
                "local struct",
                "struct P { double x, y; };\nvoid f(int n) {",
                "for (int i = 0; i < n; i++) { struct P q; q.x = a[i]; q.y = b[i]; c[i] = q.x * q.y; }",
                "indep",
            ),
        ],
        false,
    );
}

#[test]
fn dependent_loops() {
    run(
        &[
            case(
                "recurrence",
                F,
                "for (int i = 1; i < n; i++) a[i] = a[i - 1] + b[i];",
                "dep Carried: 'a[i - 1]' is read and 'a[i]' is written",
            ),
            case(
                "forward",
                F,
                "for (int i = 0; i < n - 1; i++) a[i + 1] = a[i];",
                "dep Carried: 'a[i]' is read and 'a[i + 1]' is written",
            ),
            case(
                "same element",
                F,
                "for (int i = 0; i < n; i++) a[0] = b[i];",
                "dep Carried: 'a[0]' may be written by more than one iteration",
            ),
            case(
                "indirect write",
                F,
                "for (int i = 0; i < n; i++) a[idx[i]] = b[i];",
                "dep Carried: 'a[idx[i]]' is written at a subscript that is not an affine",
            ),
            case(
                "indirect read of the written array",
                F,
                "for (int i = 0; i < n; i++) a[i] = a[idx[i]];",
                "dep Carried: 'a[idx[i]]' is read",
            ),
            case(
                "reversal",
                F,
                "for (int i = 0; i < n; i++) a[n - 1 - i] = a[i];",
                "dep Carried",
            ),
            case(
                "the next even element",
                F,
                "for (int i = 0; i < 500; i++) a[2 * i] = a[2 * i + 2];",
                "dep Carried",
            ),
            case(
                "modulo subscript",
                F,
                "for (int i = 0; i < n; i++) c[i % 4] += a[i];",
                "dep Carried: 'c[i % 4]' is written at a subscript",
            ),
            case(
                "columns",
                F,
                "for (int i = 0; i < 100; i++) for (int k = 0; k < 100; k++) a[k] += m2[i][k];",
                "dep Carried: 'a[k]' may be written by more than one iteration",
            ),
            case(
                "pointers may alias",
                "void f(int n, double *x, double *y) {",
                "for (int i = 0; i < n; i++) x[i] = y[i] + 1;",
                "dep Alias: 'y' may alias 'x'",
            ),
            case(
                "one restrict",
                "void f(int n, double *restrict x, double *y) {",
                "for (int i = 0; i < n; i++) x[i] = y[i] + 1;",
                "dep Alias: 'y' may alias 'x'",
            ),
            case(
                "array and pointer",
                "void f(int n, double *x) {",
                "for (int i = 0; i < n; i++) a[i] = x[i];",
                "dep Alias: 'x' may alias 'a'",
            ),
            case(
                "call",
                "double g(double);\nvoid f(int n) {",
                "for (int i = 0; i < n; i++) b[i] = g(a[i]);",
                "dep Call: call to 'g'",
            ),
            case(
                "printf",
                F,
                "for (int i = 0; i < n; i++) printf(\"%f\", a[i]);",
                "dep Call: call to 'printf'",
            ),
            case(
                "header macro call",
                F,
                "for (int i = 0; i < n; i++) b[i] = isgreater(a[i], 0.0);",
                "dep Call: call to 'isgreater'",
            ),
            case(
                "carried scalar",
                F,
                "for (int i = 0; i < n; i++) { s = s * 0.5 + a[i]; b[i] = s; }",
                "dep Scalar: 's' is read before it is written",
            ),
            case(
                "sum also read",
                F,
                "for (int i = 0; i < n; i++) { s += a[i]; b[i] = s; }",
                "dep Scalar: 's' is read before",
            ),
            case(
                "conditional temporary",
                F,
                "for (int i = 0; i < n; i++) { if (a[i] > 0) t = a[i]; b[i] = t; }",
                "dep Scalar: 't' is read before",
            ),
            case(
                "last value",
                F,
                "for (int i = 0; i < n; i++) if (a[i] > 0) t = b[i];",
                "dep LastValue: 't' is not assigned in every iteration",
            ),
            case(
                "argmax",
                F,
                "for (int i = 0; i < n; i++) if (a[i] > m) { m = a[i]; cnt = i; }",
                "dep Scalar: 'm' is read before",
            ),
            case(
                "mixed operators",
                F,
                "for (int i = 0; i < n; i++) { s += a[i]; s *= 2; }",
                "dep Scalar: 's' is updated with different reduction operators",
            ),
            case(
                "compaction",
                F,
                "for (int i = 0; i < n; i++) if (a[i] > 0) b[cnt++] = a[i];",
                "dep Scalar: 'cnt' is read before",
            ),
            case(
                "post-increment read",
                F,
                "for (int i = 0; i < n; i++) b[i] = cnt++;",
                "dep Scalar: 'cnt'",
            ),
            case(
                "bound changed",
                F,
                "for (int i = 0; i < n; i++) { if (a[i] < 0) n--; b[i] = 1; }",
                "dep Scalar: 'n' is read before",
            ),
            case(
                "break",
                F,
                "for (int i = 0; i < n; i++) { if (a[i] < 0) break; b[i] = a[i]; }",
                "dep Control: 'break' leaves the loop early",
            ),
            case(
                "return",
                F,
                "for (int i = 0; i < n; i++) { if (a[i] < 0) return; b[i] = a[i]; }",
                "dep Control: 'return' in the loop",
            ),
            case(
                "goto",
                F,
                "for (int i = 0; i < n; i++) { if (a[i] < 0) goto out; b[i] = a[i]; }\nout:;",
                "dep Control: 'goto' in the loop",
            ),
            case(
                "switch",
                F,
                "for (int i = 0; i < n; i++) switch (idx[i]) { case 0: b[i] = 1; }",
                "dep Control: 'switch'",
            ),
            case(
                "control variable assigned",
                F,
                "for (int i = 0; i < n; i++) { b[i] = 1; i += 1; }",
                "dep Control: the loop variable 'i' is assigned",
            ),
            case(
                "multiplying step",
                "void f(int n) { int i;",
                "for (i = 1; i < n; i *= 2) a[i] = 1;",
                "dep Control: not in canonical form",
            ),
            case(
                "not-equal condition",
                F,
                "for (int i = 0; i != n; i++) a[i] = 1;",
                "dep Control: not in canonical form",
            ),
            case(
                "floating control variable",
                F,
                "for (double x = 0; x < 1; x += 0.5) a[0] = x;",
                "dep Control: one integer control variable",
            ),
            case(
                "header constant",
                "#include <stdlib.h>\nvoid f(int n) {",
                "for (int i = 0; i < n; i++) b[i] = a[i] / RAND_MAX;",
                "dep Unknown: 'RAND_MAX' is not a variable",
            ),
            case(
                "macro defined twice",
                "#ifdef D\n#define SC 2\n#else\n#define SC 3\n#endif\nvoid f(int n) {",
                "for (int i = 0; i < n; i++) a[i] = SC;",
                "dep Unknown: 'SC' is not a variable",
            ),
            case(
                "macro with side effects",
                "#define BUMP(x) ((x)++)\nvoid f(int n, int cnt) {",
                "for (int i = 0; i < n; i++) { BUMP(cnt); b[i] = cnt; }",
                "dep Scalar: 'cnt' is read before",
            ),
            case(
                "pointer to pointers",
                "void f(int n, double **rows) {",
                "for (int i = 0; i < n; i++) rows[i][0] = 1;",
                "dep Alias: 'rows[i][0]' is written through a pointer",
            ),
            case(
                "member pointer written",
                "struct S { double *v; };\nvoid f(int n, struct S *sp) {",
                "for (int i = 0; i < n; i++) sp->v[i] = 1;",
                "dep Alias: 'sp->v[i]' is written through a pointer",
            ),
            case(
                "member of a struct variable",
                "struct S { double *v; };\nstruct S sv;\nvoid f(int n) {",
                "for (int i = 0; i < n; i++) sv.v[i] = a[i];",
                "dep Alias: 'sv.v[i]' is written through a pointer",
            ),
            case(
                "member through a pointer",
                "struct S { double *v; };\nvoid f(int n, struct S *sp) {",
                "for (int i = 0; i < n; i++) b[i] = sp->v[i];",
                "dep Alias: 'sp->v[i]' is read through a pointer the analysis cannot follow and may alias 'b'",
            ),
            case(
                "scalar member written",
                "struct S { double x; };\nvoid f(int n, struct S *sp) {",
                "for (int i = 0; i < n; i++) sp->x = a[i];",
                "dep Carried: 'sp->x' may be written by more than one iteration",
            ),
            case(
                "dereference written",
                "void f(int n, double *x) {",
                "for (int i = 0; i < n; i++) *x = a[i];",
                "dep Carried: '*x' may be written",
            ),
            case(
                "local pointer",
                "void f(int n, double *restrict x) {",
                "for (int i = 0; i < n; i++) { double *q = x + i; q[0] = 1; }",
                "dep Alias: 'q[0]' is written through a pointer",
            ),
            case(
                "static local",
                F,
                "for (int i = 0; i < n; i++) { static double keep; keep = a[i]; b[i] = keep; }",
                "dep Unknown: a static or extern variable",
            ),
            case(
                "address taken",
                F,
                "for (int i = 0; i < n; i++) { double *q = &a[i]; b[i] = *q; }",
                "dep Unknown: the address of 'a[i]' is taken",
            ),
            case(
                "scalar whose address is taken",
                "void f(int n, double *x) { double sc = 1; double *ps = &sc; (void)ps;",
                "for (int i = 0; i < n; i++) x[i] = sc;",
                "dep Alias: 'x' may point to 'sc'",
            ),
            case(
                "triangular flattened, from before the row",
                "void f(int n, double *restrict x) {",
                "for (int i = 0; i < n; i++) for (int k = i - 1; k < n; k++) x[i * n + k] = 0;",
                "dep Carried: 'x[i * n + k]' may be written by more than one iteration",
            ),
            case(
                "triangular flattened, negative rows",
                "void f(int n, double *restrict x) {",
                "for (int i = -1; i < n; i++) for (int k = i; k < n; k++) x[i * n + k + n] = 0;",
                "dep Carried: 'x[i * n + k + n]' may be written by more than one iteration",
            ),
            case(
                "lower triangle flattened, past the row",
                "void f(int n, double *restrict x) {",
                "for (int i = 0; i < n; i++) for (int k = 0; k < i + 2; k++) x[i * n + k] = 0;",
                "dep Carried: 'x[i * n + k]' may be written by more than one iteration",
            ),
            case(
                "lower triangle flattened, twice as wide",
                "void f(int n, double *restrict x) {",
                "for (int i = 0; i < n; i++) for (int k = 0; k < 2 * i; k++) x[i * n + k] = 0;",
                "dep Carried: 'x[i * n + k]' may be written by more than one iteration",
            ),
            case(
                "flattened past the row",
                "void f(int n, double *restrict x) {",
                "for (int i = 0; i < n; i++) for (int k = 0; k <= n; k++) x[i * n + k] = 0;",
                "dep Carried",
            ),
            case(
                "stride may be zero",
                "void f(int n, int m, double *restrict x) {",
                "for (int i = 0; i < n; i++) x[i * m] = 0;",
                "dep Carried",
            ),
            case(
                "atomic directive inside",
                F,
                "for (int i = 0; i < n; i++) {\n#pragma acc atomic update\n s += a[i]; }",
                "dep Unknown: '#pragma acc atomic update' in the loop",
            ),
            case(
                "conditional compilation inside",
                F,
                "for (int i = 0; i < n; i++) {\n#ifdef X\n a[i] = 1;\n#endif\n }",
                "dep Unknown: '#ifdef X' in the loop",
            ),
            case(
                "row used as a pointer",
                F,
                "for (int i = 0; i < 100; i++) { double *r = m2[i]; r[0] = 1; }",
                "dep Unknown: 'm2[i]' is used as a pointer",
            ),
            case(
                "struct assigned",
                "struct P { double x; };\nstruct P p1, p2;\nvoid f(int n) {",
                "for (int i = 0; i < n; i++) { p1 = p2; a[i] = 1; }",
                "dep Unknown: 'p1' is assigned as a whole",
            ),
            case(
                "function pointer",
                "void f(int n, double (*fp)(double)) {",
                "for (int i = 0; i < n; i++) b[i] = fp(a[i]);",
                "dep Call: call to 'fp'",
            ),
            case(
                "unknown type",
                "typedef struct { double v; } cell_t;\nvoid f(int n, cell_t *cells) {",
                "for (int i = 0; i < n; i++) cells[i].v = 0;",
                "indep",
            ),
        ],
        false,
    );
}

#[test]
fn cxx_references() {
    run(
        &[
            Case {
                name: "reference parameter",
                pre: "void f(int n, double &acc) {",
                code: "for (int i = 0; i < n; i++) acc += a[i];",
                want: "dep Unknown: the type of 'acc' is not known",
                syntactic: None,
            },
            case(
                "local reference",
                "void f(int n) {",
                "for (int i = 0; i < n; i++) { double &r = a[i]; r = 2; }",
                "dep Unknown: 'r' may be a reference",
            ),
            case(
                "std::max",
                "#include <algorithm>\nvoid f(int n, double m) {",
                "for (int i = 0; i < n; i++) m = std::max(m, a[i]);",
                "indep: reduction(max:m)",
            ),
            case(
                "class operators",
                "struct V { double x; V operator*(double k) const { return V{x * k}; } };\nvoid f(int n, V w0) {",
                "for (int i = 0; i < n; i++) { a[i] = (w0 * b[i]).x; }",
                "dep Call: 'w0' is a class object used as a whole",
            ),
            case(
                "class members only",
                "struct V { double x, y; };\nV vs[1000];\nvoid f(int n) {",
                "for (int i = 0; i < n; i++) vs[i].x = vs[i].y * 2;",
                "indep",
            ),
            case(
                "operator[]",
                "#include <vector>\nvoid f(int n, std::vector<double> &v, std::vector<double> w) {",
                "for (int i = 0; i < n; i++) a[i] = w[i];",
                "dep Call: 'w[i]' calls 'operator[]' of 'w'",
            )
            .with_syntactic("dep Unknown: the type of 'w' is not known"),
        ],
        true,
    );
}

/// The inner loop of a row recurrence over a flattened array: row `i` (fixed in the loop over
/// `j`) against the rows before it.
#[test]
fn flattened_rows() {
    const R: &str =
        "void f(int i, int m, int n, double x, double *restrict c, const double *restrict b) {";
    run(
        &[
            case(
                "previous row",
                R,
                "for (int j = 0; j < m; j++) c[i * m + j] = c[(i - 1) * m + j] + b[i * m + j];",
                "indep",
            ),
            case(
                "row as the second term",
                R,
                "for (int j = 0; j < m; j++) c[j + m * i] = c[j + m * (i - 1)];",
                "indep",
            ),
            case(
                "width first",
                R,
                "for (int j = 0; j < m; j++) c[m * i + j] = c[m * (i - 1) + j] * 2;",
                "indep",
            ),
            case(
                "parenthesized row",
                R,
                "for (int j = 0; j < m; j++) c[(i)*m + j] = c[(i - 1) * m + j];",
                "indep",
            ),
            case(
                "inclusive bound",
                R,
                "for (int j = 0; j <= m - 1; j++) c[i * m + j] = c[(i - 1) * m + j];",
                "indep",
            ),
            case(
                "downwards",
                R,
                "for (int j = m - 1; j >= 0; j--) c[i * m + j] = c[(i - 1) * m + j];",
                "indep",
            ),
            case(
                "two rows back and the next row",
                R,
                "for (int j = 0; j < m; j++) c[i * m + j] = c[(i - 2) * m + j] + c[(i + 1) * m + j];",
                "indep",
            ),
            case(
                "shifted read, shorter row",
                R,
                "for (int j = 0; j < m - 1; j++) c[i * m + j] = c[(i - 1) * m + j + 1];",
                "indep",
            ),
            case(
                "both neighbours, interior points",
                R,
                "for (int j = 1; j < m - 1; j++) c[i * m + j] = c[(i - 1) * m + j - 1] + c[(i - 1) * m + j + 1];",
                "indep",
            ),
            case(
                "constant width",
                "#define M 64\ndouble g[64 * 64];\nvoid f(int i) {",
                "for (int j = 1; j < M - 1; j++) g[i * M + j] = g[(i - 1) * M + j - 1] + g[(i - 1) * M + j + 1];",
                "indep",
            ),
            case(
                "constant width, whole row",
                "#define M 64\ndouble g[64 * 64];\nvoid f(int i) {",
                "for (int j = 0; j < M; j++) g[i * M + j] = g[(i - 1) * M + j] + g[(i + 1) * M + j];",
                "indep",
            ),
            case(
                "half a row apart",
                R,
                "for (int j = 0; j < m; j++) c[2 * i * m + j] = c[(2 * i - 1) * m + j];",
                "indep",
            ),
            case(
                "interleaved pairs",
                R,
                "for (int j = 0; j < m; j++) c[2 * (i * m + j)] = c[2 * ((i - 1) * m + j) + 1];",
                "indep",
            ),
            case(
                "real and imaginary parts",
                R,
                "for (int j = 0; j < m; j++) c[2 * j] = c[2 * j + 1] * 2;",
                "indep",
            ),
            case(
                "even and odd elements",
                F,
                "for (int i = 0; i < 500; i++) a[2 * i] = a[2 * i + 1];",
                "indep",
            ),
            case(
                "another row of a 2-D array",
                "double t[64][4096];\nvoid f(int i, int m) {",
                "for (int j = 0; j < m; j++) t[i][i * m + j] = t[i][(i - 1) * m + j];",
                "indep",
            ),
        ],
        false,
    );
    run(
        &[
            // j = m - 1 reads c[i*m], which j = 0 wrote.
            case(
                "shifted read, whole row",
                R,
                "for (int j = 0; j < m; j++) c[i * m + j] = c[(i - 1) * m + j + 1];",
                "dep Carried: 'c[(i - 1) * m + j + 1]' is read and 'c[i * m + j]' is written",
            ),
            case(
                "same row shifted",
                R,
                "for (int j = 0; j < m; j++) c[i * m + j] = c[i * m + j + 1];",
                "dep Carried: 'c[i * m + j + 1]' is read",
            ),
            case(
                "past the row",
                R,
                "for (int j = 0; j <= m; j++) c[i * m + j] = c[(i - 1) * m + j];",
                "dep Carried: 'c[(i - 1) * m + j]' is read",
            ),
            case(
                "two rows long",
                R,
                "for (int j = 0; j < 2 * m; j++) c[i * m + j] = c[(i - 1) * m + j];",
                "dep Carried: 'c[(i - 1) * m + j]' is read",
            ),
            case(
                "another width",
                R,
                "for (int j = 0; j < n; j++) c[i * m + j] = c[(i - 1) * m + j];",
                "dep Carried: 'c[(i - 1) * m + j]' is read",
            ),
            case(
                "from an unknown start",
                R,
                "for (int j = n; j < n + m; j++) c[i * m + j] = c[(i - 1) * m + j];",
                "dep Carried: 'c[(i - 1) * m + j]' is read",
            ),
            case(
                "a row and a half long",
                R,
                "for (int j = 0; j < m + m / 2; j++) c[i * m + j] = c[(i - 1) * m + j];",
                "dep Carried: 'c[(i - 1) * m + j]' is read",
            ),
            case(
                "interleaved, overlapping",
                R,
                "for (int j = 0; j < m; j++) c[2 * (i * m + j)] = c[2 * ((i - 1) * m + j) + 2];",
                "dep Carried",
            ),
            case(
                "other strides",
                R,
                "for (int j = 0; j < m; j++) c[i * m + j] = c[(i - 1) * m + 2 * j];",
                "dep Carried",
            ),
            case(
                "a width from a cast",
                R,
                "for (int j = 0; j < x; j++) c[j] = c[j + (int)x];",
                "dep Carried: 'c[j + (cast)x]' is read",
            ),
            case(
                "a width through a converted local",
                R,
                "for (int j = 0; j < x; j++) { const int w = x; c[j] = c[j + w]; }",
                "dep Carried: 'c[j + w]' is read",
            ),
            case(
                "the row changes in the loop",
                R,
                "for (int j = 0; j < m; j++) { c[i * m + j] = c[(i - 1) * m + j]; i = i + 0; }",
                "dep",
            ),
        ],
        false,
    );
}

/// Per-loop verdicts of a nest, outermost first: (depth, collapsible, verdict).
fn nest_report(pre: &str, code: &str) -> (Vec<(usize, bool, String)>, usize) {
    let src = format!("{PRELUDE}{G}{pre}\n{code}\n}}\n");
    let (syn, exact) = nests(&src, false);
    let n = exact.unwrap_or(syn);
    (
        n.loops
            .iter()
            .map(|l| (l.depth, l.collapsible, show(&l.verdict)))
            .collect(),
        n.collapse(),
    )
}

#[test]
fn nests_report_every_loop() {
    // A row sum: the inner loop is a reduction of a scalar local to the outer one.
    let (loops, collapse) = nest_report(
        F,
        "for (int i = 0; i < 100; i++) { double r = 0; for (int k = 0; k < 100; k++) r += m2[i][k]; b[i] = r; }",
    );
    assert_eq!(
        loops,
        vec![
            (0, false, "indep".to_string()),
            (1, false, "indep: reduction(+:r)".to_string())
        ]
    );
    assert_eq!(collapse, 1);

    // Matrix product: i and j collapse, k is a reduction.
    let (loops, collapse) = nest_report(
        F,
        "for (int i = 0; i < 100; i++) for (int q = 0; q < 100; q++) { double r = 0; for (int k = 0; k < 100; k++) r += m3[i][k] * m3[k][q]; m2[i][q] = r; }",
    );
    assert_eq!(loops.len(), 3);
    assert_eq!(loops[1], (1, true, "indep".to_string()));
    assert_eq!(loops[2], (2, false, "indep: reduction(+:r)".to_string()));
    assert_eq!(collapse, 2);

    // A row recurrence: only the outer loop is independent.
    let (loops, collapse) = nest_report(
        F,
        "for (int i = 0; i < 100; i++) for (int k = 1; k < 100; k++) m2[i][k] = m2[i][k - 1] * 0.5;",
    );
    assert_eq!(loops[0].2, "indep");
    assert!(
        loops[1]
            .2
            .starts_with("dep Carried: 'm2[i][k - 1]' is read"),
        "{loops:?}"
    );
    assert_eq!(collapse, 1);

    // A row recurrence over a flattened array: the outer loop carries it, the inner loop
    // is independent.
    let (loops, collapse) = nest_report(
        "void f(int n, int m, double *restrict c, const double *restrict b) {",
        "for (int i = 1; i < n; i++) for (int j = 0; j < m; j++) c[i * m + j] = c[(i - 1) * m + j] + b[i * m + j];",
    );
    assert_eq!(
        loops[0].2,
        "dep Carried: 'c[(i - 1) * m + j]' is read and 'c[i * m + j]' is written: the element of another iteration"
    );
    assert_eq!(loops[1].2, "indep");
    assert_eq!(collapse, 0);

    // Column sums: the outer loop carries, the inner does not.
    let (loops, collapse) = nest_report(
        F,
        "for (int i = 0; i < 100; i++) for (int k = 0; k < 100; k++) a[k] += m2[i][k];",
    );
    assert!(loops[0].2.starts_with("dep Carried"), "{loops:?}");
    assert_eq!(loops[1].2, "indep");
    assert_eq!(collapse, 0);

    // A triangular nest cannot collapse.
    let (loops, collapse) = nest_report(
        F,
        "for (int i = 0; i < 100; i++) for (int k = i; k < 100; k++) m2[i][k] = 0;",
    );
    assert_eq!((loops[0].2.as_str(), loops[1].1), ("indep", false));
    assert_eq!(collapse, 1);

    // Three perfectly nested loops, an acc loop directive between them.
    let (loops, collapse) = nest_report(
        "double cube[10][10][10];\nvoid f(void) {",
        "for (int i = 0; i < 10; i++)\n#pragma acc loop\n for (int q = 0; q < 10; q++) for (int k = 0; k < 10; k++) cube[i][q][k] = i + q + k;",
    );
    assert_eq!(loops.len(), 3);
    assert_eq!(collapse, 3);
}

#[test]
fn syntactic_facts_are_more_conservative() {
    // An unknown typedef: libclang knows it is a double, the syntactic reading does not.
    let src = format!(
        "{PRELUDE}{G}#define DECLARE_REAL typedef double real;\nDECLARE_REAL\nvoid f(int n, real s) {{\nfor (int i = 0; i < n; i++) s += a[i];\n}}\n"
    );
    let (syn, exact) = nests(&src, false);
    assert!(
        matches!(syn.outer(), Verdict::Dependent(d) if d.kind == DepKind::Unknown),
        "{syn:?}"
    );
    if let Some(e) = exact {
        assert_eq!(show(e.outer()), "indep: reduction(+:s)");
    }
    // The same through a nest with an inner loop directive, which clang's OpenACC front end
    // (libclang 21+) makes a construct node around the inner loop.
    let src = format!(
        "{PRELUDE}{G}#define DECLARE_REAL typedef double real;\nDECLARE_REAL\nvoid f(real s) {{\nfor (int i = 0; i < 100; i++)\n#pragma acc loop\n for (int j = 0; j < 100; j++) m2[i][j] = s * j;\n}}\n"
    );
    let (syn, exact) = nests(&src, false);
    assert!(
        matches!(syn.outer(), Verdict::Dependent(d) if d.kind == DepKind::Unknown),
        "{syn:?}"
    );
    if let Some(e) = exact {
        assert_eq!(show(e.outer()), "indep");
        assert_eq!(e.collapse(), 2);
    }
}

#[test]
fn no_facts_means_dependent() {
    let src = "void f(int n, double *x) { for (int i = 0; i < n; i++) x[i] = 0; }";
    let n = nest_with(src, &[]);
    assert!(matches!(n.outer(), Verdict::Dependent(d) if d.kind == DepKind::Unknown));
}

#[test]
fn hostile_input_does_not_panic() {
    for code in [
        "for (",
        "for (int i = 0; i < n; i++)",
        "for (int i = 0; i < n; i++) { a[i] = ; }",
        "for (int i = 0; i < n; i++) a[i] = ((((((((((1))))))))));",
        "for (int i = 0; i < n; i++) a[i] = b[i] ? : 1;",
        "for (int i = 0; i < n; i++) a[[i]] = 1;",
        "for (;;) {}",
        "for (int i = 0; i < n; i++) R(R(R(R(1))));",
    ] {
        let src = format!("#define R(x) R(x)\nvoid f(int n) {{ {code} }}");
        let toks = lex(&src);
        if let Some(for_tok) = toks.iter().position(|t| t.text(&src) == "for") {
            let _ = analyze(&Input {
                src: &src,
                toks: &toks,
                for_tok,
                end: toks.len(),
                vars: &[],
                confined: &[],
            });
        }
    }
}

/// Loops nested `k` deep in each way the parser recurses or builds a deep tree.
fn deep_loops(k: usize) -> Vec<(&'static str, String)> {
    let loops = |open: &str, close: &str| {
        let mut s = String::new();
        for d in 0..k {
            s.push_str(&format!("for (int j{d} = 0; j{d} < 10; j{d}++) {open}"));
        }
        s.push_str("a[j0] = 1;");
        s.push_str(&close.repeat(k));
        s
    };
    let body = |code: String| format!("for (int i = 0; i < 100; i++) {code}");
    let r = |s: &str| s.repeat(k);
    vec![
        (
            "parentheses",
            body(format!("a[i] = {}a[i]{};", r("("), r(")"))),
        ),
        ("negations", body(format!("a[i] = {}a[i];", r("- ")))),
        ("casts", body(format!("a[i] = {}a[i];", r("(int)")))),
        ("sizeof", body(format!("a[i] = sizeof {}s;", r("- ")))),
        ("assignments", body(format!("a[i] = {}1;", r("s = ")))),
        ("conditionals", body(format!("a[i] = {}2;", r("s ? 1 : ")))),
        (
            "subscripts",
            body(format!("a[i] = {}i{};", r("idx["), r("]"))),
        ),
        ("calls", body(format!("a[i] = {}s{};", r("sin("), r(")")))),
        ("sums", body(format!("a[i] = {}1;", r("s + ")))),
        ("commas", body(format!("a[i] = ({}1);", r("s, ")))),
        ("members", body(format!("a[i] = q{}->m;", r("->n")))),
        ("postfix", body(format!("a[i] = m2[i]{};", r("[0]")))),
        ("blocks", body(format!("{}a[i] = 1;{}", r("{"), r("}")))),
        ("ifs", body(format!("{}a[i] = 1;", r("if (s) ")))),
        (
            "else ifs",
            body(format!("{}a[i] = 2;", r("if (s) a[i] = 1; else "))),
        ),
        ("whiles", body(format!("{}a[i] = 1;", r("while (s) ")))),
        (
            "dos",
            body(format!("{}a[i] = 1;{}", r("do "), r(" while (s);"))),
        ),
        (
            "initializers",
            body(format!(
                "{{ double t[1] = {}1{}; a[i] = t[0]; }}",
                r("{"),
                r("}")
            )),
        ),
        ("loops", loops("", "")),
        ("braced loops", loops("{", "}")),
    ]
}

/// Shapes of [`deep_loops`] that nest by chaining operands.
const CHAINS: &[&str] = &["sums", "commas", "members"];

/// Verdicts of loops nested `k` deep (the shapes `pick` takes), analyzed on a thread with a
/// small stack: 512 KiB (the analysis needs at most about 210 KiB at the bound), or 1.5 MiB
/// in a debug build (1.15 MiB), below the 2 MiB of a worker thread.
fn deep_verdicts(k: usize, pick: fn(&str) -> bool) -> Vec<(&'static str, String)> {
    let stack = if cfg!(debug_assertions) {
        3 << 19
    } else {
        1 << 19
    };
    std::thread::Builder::new()
        .stack_size(stack)
        .spawn(move || {
            deep_loops(k)
                .into_iter()
                .filter(|(name, _)| pick(name))
                .map(|(name, code)| {
                    let src = format!(
                        "{G}struct S {{ struct S *n; double m; }};\n{F}\nstruct S *q = 0;\n{code}\n}}\n"
                    );
                    let toks = lex(&src);
                    let (_, _, input) = site(&src, &toks);
                    let n = nest_with(&src, &syntactic_vars(&src, &toks, &input));
                    (name, show(n.outer()))
                })
                .collect()
        })
        .expect("a thread")
        .join()
        .expect("no crash")
}

#[test]
fn deep_nesting_is_bounded() {
    // Beyond the bound: not analyzed (dependent), and no stack overflow.
    for (name, got) in deep_verdicts(3000, |_| true) {
        assert!(
            got.starts_with("dep Unknown: the loop is nested too deeply"),
            "{name}: {got}"
        );
    }
    // Within it: analyzed as usual, the whole tree walked.
    let levels = crate::dependence::MAX_NESTING / crate::dependence::NESTED;
    for (name, got) in deep_verdicts(levels / 2 - 4, |_| true) {
        assert!(!got.contains("nested too deeply"), "{name}: {got}");
    }
    for (name, got) in deep_verdicts(crate::dependence::MAX_NESTING - 20, |name| {
        CHAINS.contains(&name)
    }) {
        assert!(!got.contains("nested too deeply"), "{name}: {got}");
    }
}

/// The variables of the first loop of `src` that libclang's facts count as written (None
/// without libclang).
fn written_by_libclang(src: &str, cxx: bool) -> Option<Vec<String>> {
    let toks = lex(src);
    let (_, _, input) = site(src, &toks);
    let vars = clang_vars(src, &toks, &input, cxx)?;
    Some(
        vars.iter()
            .filter(|v| !v.writes().is_empty())
            .map(|v| v.name.to_string())
            .collect(),
    )
}

/// A variable named only inside a macro's expansion (`_PB_N` for `n`): libclang's facts
/// count it as read where an implicit conversion takes its value, and as written anywhere
/// else (the tokens around it are the macro use's, not its own).
#[test]
fn uses_spelled_by_macros_are_written_only_where_the_tree_may_write() {
    let src = "#define BOUND n\n#define ALL(x) (x)\n#define SET(x) x = 0\n#define BUMP t++\n\
               #define AT(i) a[i]\n\
               void f(int n, int m, int t, int u, double *a) {\n\
               for (int i = 0; i < BOUND; i++) { AT(i) = ALL(m) + 1; SET(u); BUMP; }\n}\n";
    let Some(written) = written_by_libclang(src, false) else {
        return;
    };
    let written = |name: &str| written.contains(&name.to_string());
    assert!(!written("n"), "a loop bound read through a macro");
    assert!(!written("m"), "an operand read through a macro");
    assert!(written("u"), "assigned through a macro");
    assert!(written("t"), "incremented through a macro");
    assert!(!written("a"), "a pointer whose element is assigned");
}

/// C++: an argument bound to a reference parameter may be assigned through it; one bound to
/// a `const` reference is read.
#[test]
fn arguments_bound_to_references_are_written() {
    let src = "static void twice(double &x, double v) { x = 2 * v; }\n\
               static double get(const double &v) { return v; }\n\
               void f(int n, double t, double u, double *a) {\n\
               for (int i = 0; i < n; i++) { twice(t, 1.0); a[i] = get(u); }\n}\n";
    let Some(written) = written_by_libclang(src, true) else {
        return;
    };
    let written = |name: &str| written.contains(&name.to_string());
    assert!(written("t"), "bound to 'double &'");
    assert!(!written("u"), "bound to 'const double &'");
}
