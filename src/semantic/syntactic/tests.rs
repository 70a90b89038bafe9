use super::*;
use crate::lex::lex;
use crate::semantic::SiteInput;
use crate::semantic::facts::{SiteFacts, VarType};

fn ty(src: &str, name: &str, at: &str) -> Option<VarType> {
    let toks = lex(src);
    let s = Syntax::new(src, &toks);
    s.lookup(name, src.find(at).unwrap())
        .map(|d| (*d.ty).clone())
}

fn kind(src: &str, name: &str) -> Option<VarKind> {
    ty(src, name, "@").map(|t| t.kind)
}

#[test]
fn declarations_by_shape() {
    let src = "typedef double real; typedef struct P { int x; } P;\n\
               void f(int n, double *a, float b[], const int c, real r, P p, P *pp) {\n\
               double s = 0, *q = a, arr[10]; const double k = 1; int *const cp = 0;\n\
               struct Q *sq; unsigned u; size_t z; foo_t w; const double *pc;\n\
               for (int i = 0, j = 1; i < n; i++) { int inner; }\n@ }";
    assert_eq!(kind(src, "n"), Some(VarKind::Scalar));
    assert_eq!(kind(src, "a"), Some(VarKind::Pointer));
    assert_eq!(kind(src, "b"), Some(VarKind::Pointer));
    assert_eq!(kind(src, "r"), Some(VarKind::Scalar));
    assert_eq!(kind(src, "p"), Some(VarKind::Struct));
    assert_eq!(kind(src, "pp"), Some(VarKind::Pointer));
    assert_eq!(kind(src, "s"), Some(VarKind::Scalar));
    assert_eq!(kind(src, "q"), Some(VarKind::Pointer));
    assert_eq!(kind(src, "arr"), Some(VarKind::Array { extent: Some(10) }));
    assert_eq!(kind(src, "sq"), Some(VarKind::Pointer));
    assert_eq!(kind(src, "u"), Some(VarKind::Scalar));
    assert_eq!(kind(src, "z"), Some(VarKind::Scalar));
    assert_eq!(kind(src, "w"), Some(VarKind::Other));
    assert_eq!(
        kind(src, "i"),
        None,
        "for-init variables are scoped to the loop"
    );
    assert_eq!(kind(src, "inner"), None);
    assert_eq!(kind(src, "x"), None, "struct members are not variables");
    assert!(ty(src, "c", "@").unwrap().is_const);
    assert!(ty(src, "k", "@").unwrap().is_const);
    assert!(ty(src, "cp", "@").unwrap().is_const);
    assert!(!ty(src, "pc", "@").unwrap().is_const);
    assert!(!ty(src, "q", "@").unwrap().is_const);
    let src = "extern int w[]; int d[] = {1}; void f(int p[]) { @ }";
    assert!(ty(src, "w", "@").unwrap().incomplete);
    assert!(!ty(src, "d", "@").unwrap().incomplete);
    assert!(!ty(src, "p", "@").unwrap().incomplete);
}

#[test]
fn declarations_after_a_defined_tag() {
    let src = "void f(void) { struct pt { int a, b; } pts[100]; static struct { int c; } one;\n\
               union u { int i; float f; } *pu; enum e { A, B } col; typedef struct { int d; } T;\n\
               class D : B { int m; } dd; @ }";
    assert_eq!(kind(src, "pts"), Some(VarKind::Array { extent: Some(100) }));
    assert_eq!(kind(src, "one"), Some(VarKind::Struct));
    assert_eq!(kind(src, "pu"), Some(VarKind::Pointer));
    assert_eq!(kind(src, "col"), Some(VarKind::Scalar));
    assert_eq!(kind(src, "T"), None, "a typedef names a type");
    assert_eq!(kind(src, "a"), None, "members are not variables");
    assert_eq!(kind(src, "dd"), None, "base classes are not read");
}

#[test]
fn restrict_and_dimensions() {
    let src = "double g[4][5]; void f(double *restrict p, double *q, double **pp, \
               double (*restrict rows)[8], double a[][8], double *v[], int n) {\n\
               double *restrict *inner; double loc[3]; @ }";
    let t = |n: &str| ty(src, n, "@").unwrap();
    assert_eq!((t("g").dims, t("g").restrict), (2, false));
    assert_eq!((t("p").dims, t("p").restrict), (1, true));
    assert_eq!((t("q").dims, t("q").restrict), (1, false));
    assert_eq!((t("pp").dims, t("pp").restrict), (1, false));
    assert_eq!((t("rows").dims, t("rows").restrict), (2, true));
    assert_eq!((t("a").dims, t("a").kind), (2, VarKind::Pointer));
    assert_eq!(t("v").dims, 1, "a[] of pointers");
    assert!(
        !t("inner").restrict,
        "the pointed-to pointer is restrict, not this one"
    );
    assert_eq!(t("loc").dims, 1);
    assert_eq!(t("n").dims, 0);
}

#[test]
fn typedef_struct_bodies_do_not_make_pointers() {
    let src = "typedef struct { double *x; void (*f)(int); } F; typedef F *PF;\n\
               void g(F s, PF p) { @ }";
    assert_eq!(kind(src, "s"), Some(VarKind::Struct));
    assert_eq!(kind(src, "p"), Some(VarKind::Pointer));
}

#[test]
fn array_parameters_keep_their_bounds() {
    let src = "#define N 8\nvoid g(int n, double a[N][4], double b[], double c[n]) { @ }";
    let t = ty(src, "a", "@").unwrap();
    assert_eq!(t.kind, VarKind::Pointer);
    assert_eq!(t.param_section("a").as_deref(), Some("a[0:N][0:4]"));
    assert_eq!(ty(src, "b", "@").unwrap().param_section("b"), None);
    assert_eq!(ty(src, "c", "@").unwrap().param_section("c"), None);
    // A typedef'd array: a pointer whose bound is not written at the parameter.
    let src = "#define N 8\ntypedef double vec_t[N];\nvoid g(vec_t v) { @ }";
    let t = ty(src, "v", "@").unwrap();
    assert_eq!(t.kind, VarKind::Pointer);
    assert_eq!(t.param_section("v"), None);
}

#[test]
fn long_declarations() {
    // 60,000 declarators in one declaration, a `for` init and a parameter list: each
    // declarator's scans stop at the comma before it (quadratic before).
    let n = 20_000;
    let list = |f: &dyn Fn(usize) -> String| (0..n).map(f).collect::<Vec<_>>().join(", ");
    let src = format!(
        "void f(int n, {}) {{\ndouble {};\nfor (int {}; n < 1; n++) {{}}\n@ }}",
        list(&|i| format!("float *p{i}")),
        list(&|i| match i % 4 {
            0 => format!("s{i} = {i}"),
            1 => format!("*s{i}"),
            2 => format!("s{i}[2] = {{{i}, 1}}"),
            _ => format!("s{i}"),
        }),
        list(&|i| format!("k{i} = 0")),
    );
    let toks = lex(&src);
    let sx = Syntax::new(&src, &toks);
    let at = src.find('@').unwrap();
    let kind = |name: &str| sx.lookup(name, at).map(|d| d.ty.kind);
    for i in [0, 1, 2, 3, n / 2 + 1, n - 2, n - 1] {
        let want = match i % 4 {
            1 => VarKind::Pointer,
            2 => VarKind::Array { extent: Some(2) },
            _ => VarKind::Scalar,
        };
        assert_eq!(kind(&format!("s{i}")), Some(want), "s{i}");
        assert_eq!(kind(&format!("p{i}")), Some(VarKind::Pointer), "p{i}");
        assert_eq!(kind(&format!("k{i}")), None, "k{i} is scoped to the loop");
    }
}

#[test]
fn expressions_are_not_declarations() {
    let src = "int g; void f(int a) { g = a; f(a); return; x = y; (double) a; @ }";
    assert_eq!(kind(src, "g"), Some(VarKind::Scalar));
    assert_eq!(kind(src, "y"), None);
    assert_eq!(kind(src, "x"), None);
}

/// Every statement starting with `for`, `{`, `if` or `while` of `src` as a site that
/// collects variables (nested, side by side, two sites on one statement).
fn statement_sites(src: &str, toks: &[Token]) -> Vec<SiteInput<'static>> {
    let st = Structure::new(src, toks, &[]);
    let mut out = Vec::new();
    for (k, t) in toks.iter().enumerate() {
        if !matches!(t.text(src), "for" | "{" | "if" | "while") {
            continue;
        }
        let Some(end) = st.stmt_end(k) else { continue };
        for twice in 0..1 + usize::from(t.text(src) == "for") {
            out.push(SiteInput {
                name: "parallel",
                start: t.start() + twice,
                end: t.start() + twice,
                last_token: None,
                stmt: Some(t.start()..toks[end - 1].end()),
                stmt_toks: Some(k..end),
                for_loop: None,
                vars: true,
                is_loop: false,
                names: vec!["n".into(), "zz".into()],
            });
        }
    }
    out
}

/// Many sites side by side are read in runs, in parallel: the same facts, and the same
/// first unresolved names, as each site read alone.
#[test]
fn runs_of_sites_have_the_facts_of_sites_read_alone() {
    let mut src = String::from("int g; double x;\n");
    for k in 0..120 {
        src.push_str(&format!(
            "void f{k}(int n, double *a) {{\n\
             for (int i = 0; i < n; i++) {{ a[i] += x * g + u{k}; }}\n\
             {{ int t = {k}; for (int j = 0; j < n; j++) {{ a[j] = t + v{}; x++; }} }}\n\
             while (n > 0) {{ n--; if (n > 2) {{ g = n; }} }}\n\
             }}\n",
            k % 7
        ));
    }
    let toks = lex(&src);
    let sx = Syntax::new(&src, &toks);
    let st = Structure::new(&src, &toks, &[]);
    let sites = statement_sites(&src, &toks);
    assert!(sites.len() > 3 * 256, "{}", sites.len());
    let all: Vec<&SiteInput> = sites.iter().collect();
    let mut unresolved = Vec::new();
    let together = sx.sites_facts(&st, &all, &mut unresolved);
    assert_eq!(together.len(), sites.len());
    let mut alone_unresolved = Vec::new();
    for (s, t) in sites.iter().zip(&together) {
        let alone = sx.site_facts(&st, s, &mut alone_unresolved);
        assert_eq!(alone.vars, t.vars, "site at {}", s.start);
        assert_eq!(alone.names, t.names, "site at {}", s.start);
        assert_eq!(alone.stmt, t.stmt, "site at {}", s.start);
    }
    assert_eq!(unresolved, alone_unresolved);
    assert_eq!(unresolved.len(), UNRESOLVED_SHOWN);
}

/// With libclang's facts for most sites, the others' are read alone: those a mask marks are
/// the facts all sites read together give, the others left default.
#[test]
fn masked_site_facts_are_those_read_together() {
    let src = "double s, w[8]; int c;\n\
               void g(int n, double *p, double *q) {\n\
               for (int i = 0; i < n; i++) {\n\
                 double t = p[i] * s; v1 = t;\n\
                 for (int j = 0; j < n; j++) { q[j] += t; c++; double s = j; w[c] = s; }\n\
                 { int i = 1; { p[i] = i; } q[i] = v2; }\n\
                 while (n > c) { int k = c; w[k] = n--; }\n\
               }\n\
               for (int i = 0; i < n; i++) q[i] = p[i] + s;\n\
               }\n";
    let toks = lex(src);
    let sx = Syntax::new(src, &toks);
    let st = Structure::new(src, &toks, &[]);
    let sites = statement_sites(src, &toks);
    let all: Vec<&SiteInput> = sites.iter().collect();
    let n = all.len();
    assert!(n > 10, "{n}");
    let facts = |need: Option<&[bool]>| {
        crate::semantic::syntactic_site_facts(&sx, &st, &all, need, &mut Vec::new())
    };
    let show = |f: &SiteFacts| format!("{f:?}");
    let together = facts(None);
    let masks: [Vec<bool>; 6] = [
        vec![true; n],
        vec![false; n],
        (0..n).map(|k| k % 2 == 0).collect(),
        (0..n).map(|k| k % 3 == 1).collect(),
        (0..n).map(|k| k == 0).collect(),
        (0..n).map(|k| k + 1 == n).collect(),
    ];
    for need in &masks {
        let masked = facts(Some(need));
        assert_eq!(masked.len(), n);
        for k in 0..n {
            let expected = if need[k] {
                show(&together[k])
            } else {
                show(&SiteFacts::default())
            };
            assert_eq!(show(&masked[k]), expected, "site {k}, mask {need:?}");
        }
    }
}

#[test]
fn nested_sites_have_the_facts_of_sites_read_alone() {
    let src = "int g, h[4]; double x;\n\
               void f(int n, double *a, double *b, int m) {\n\
               for (int i = 0; i < n; i++) {\n\
                 double t = a[i]; u1 = t;\n\
                 for (int j = 0; j < m; j++) { a[j] += t * x; g++; int x = j; b[x] = x; }\n\
                 while (m > 0) { int n = 2; m -= n; h[n] = g; }\n\
                 if (t > 0) { double a = 1; b[i] = a + u2; } else x = 2;\n\
                 { int i = 3; { int i = 4; b[i] = i; } a[i] = i; }\n\
                 for (int k = 0; k < n; k++) for (int l = k; l < n; l++) x += a[k] * b[l] + g;\n\
                 n = m; f(m, &x, b, n);\n\
               }\n\
               }\n";
    let toks = lex(src);
    let sx = Syntax::new(src, &toks);
    let st = Structure::new(src, &toks, &[]);
    let sites = statement_sites(src, &toks);
    assert!(sites.len() > 15, "{}", sites.len());
    let all: Vec<&SiteInput> = sites.iter().collect();
    let mut unresolved = Vec::new();
    let together = sx.sites_facts(&st, &all, &mut unresolved);
    let mut alone_unresolved = Vec::new();
    for (s, t) in sites.iter().zip(&together) {
        let alone = sx.site_facts(&st, s, &mut alone_unresolved);
        assert_eq!(alone.vars, t.vars, "site at {}", s.start);
        assert_eq!(alone.names, t.names, "site at {}", s.start);
        for name in ["i", "j", "t", "x", "n", "a", "g", "k", "l", "m"] {
            assert_eq!(alone.declared_inside(name), t.declared_inside(name));
        }
    }
    assert_eq!(unresolved, alone_unresolved);
    assert_eq!(unresolved, ["u1", "u2", "zz"]);
    // The outer loop, in order of first use: `x` is the global (written three times;
    // the inner `x` shadows it only in its block), `a[j] +=` writes through `a`, not `a`.
    let outer = &together[0];
    let shown: Vec<(&str, usize)> = outer
        .vars
        .iter()
        .map(|v| (v.name.as_str(), v.writes().len()))
        .collect();
    assert_eq!(
        shown,
        [
            ("n", 1),
            ("a", 0),
            ("m", 1),
            ("x", 3),
            ("g", 1),
            ("b", 0),
            ("h", 1)
        ]
    );
    assert!(outer.declared_inside("t") && !outer.declared_inside("g"));
}

#[test]
fn writes() {
    let src = "void f(int n, double *a) { int s, t, u, v, w; s = 1; t += 2; u++; --v; g(&w); a[0] = n * 2; }";
    let toks = lex(src);
    let sx = Syntax::new(src, &toks);
    let at = |pat: &str| {
        let off = src.rfind(pat).unwrap();
        toks.iter().position(|t| t.start() == off).unwrap()
    };
    for (pat, w) in [
        ("s = 1", true),
        ("t +=", true),
        ("u++", true),
        ("v;", true),
        ("w)", true),
        ("a[0]", false),
        ("n * 2", false),
    ] {
        assert_eq!(sx.is_write(at(pat), VarKind::Scalar), w, "{pat}");
    }
}

#[test]
fn parameters_of_unknown_type() {
    let src = "void f(int n, double ARR_2D(A, N, M, n, m), vec_t v, double *p, double q[4],\n\
               foo_t w) {\n\
               int loc; ARR_1D(z, n);\n\
               struct S { int k; };\n\
               for (int i = 0; i < n; i++) { foo_t w = 0; @ }\n\
               }\n\
               int main(void) { @@ }";
    let toks = lex(src);
    let s = Syntax::new(src, &toks);
    let at = |mark: &str| {
        let o = src.find(mark).unwrap();
        toks.iter().position(|t| t.start() >= o).unwrap()
    };
    let unknown = |name: &str, mark: &str| {
        let k = at(mark);
        s.unknown_parameter(name, s.lookup(name, toks[k].start()), k)
    };
    // A macro writes A's declarator; v's type is a typedef the file does not define.
    assert!(unknown("A", "@"));
    assert!(unknown("v", "@"));
    for known in ["n", "p", "q", "loc", "z", "k"] {
        assert!(!unknown(known, "@"), "{known}");
    }
    let cxx = "void g(int (&arr)[8], std::vector<double> &v, T &r, real_t x) { @ }";
    let toks = lex(cxx);
    let s2 = Syntax::new(cxx, &toks);
    let k = toks.iter().position(|t| t.text(cxx) == "@").unwrap();
    let unknown_cxx = |name: &str| s2.unknown_parameter(name, s2.lookup(name, toks[k].start()), k);
    assert!(unknown_cxx("x"));
    for reference in ["arr", "v", "r"] {
        assert!(!unknown_cxx(reference), "{reference}");
    }
    // The block's own `w` shadows the parameter.
    assert!(!unknown("w", "@"));
    assert!(!unknown("A", "@@"), "not a parameter of main");
}

/// The keyword table answers as the lists it is built from, and its shape filter rules out
/// no keyword (only words no keyword has the length and first letter of).
#[test]
fn keywords_are_the_lists() {
    use declarations::{NOT_A_TYPE, QUALIFIERS, is_keyword};
    for w in [QUALIFIERS, crate::lex::SCALAR_WORDS, NOT_A_TYPE].concat() {
        assert!(is_keyword(w), "{w}");
    }
    let others = [
        "struct", "union", "class", "enum", "auto", "typedef", "void",
    ];
    for w in others {
        assert!(is_keyword(w), "{w}");
    }
    for w in [
        "", "i", "n", "a", "fo", "fort", "in", "inte", "Int", "structs", "x_t", "NULLS", "_",
    ] {
        assert!(!is_keyword(w), "{w}");
    }
    let long = "a".repeat(70);
    assert!(!is_keyword(&long));
    // What each word is, as the lists say.
    let all = [QUALIFIERS, crate::lex::SCALAR_WORDS, NOT_A_TYPE, &others].concat();
    for w in all {
        let expected = declarations::Keyword {
            qualifier: QUALIFIERS.contains(&w),
            not_a_type: NOT_A_TYPE.contains(&w),
        };
        assert_eq!(declarations::keyword(w), Some(expected), "{w}");
    }
}

/// `lookup` finds what a scan of every declaration of the name finds: the last one before
/// the use whose scope holds it (shadowing, nested blocks, `for` inits, parameters, names
/// a macro or a typedef also spells).
#[test]
fn lookup_is_the_innermost_visible_declaration() {
    let src = "#define N 4\n#define i_max 9\ntypedef int idx;\nint i, n, a[N];\n\
               void f(int n, double *a) {\n\
                 for (int i = 0; i < n; i++) { int n = i; a[i] = n; { int a = n; a += i; } a[n] = 0; }\n\
                 { int i = 1; { int i = 2; n = i; } n = i; for (idx i = 0; i < n; i++) n -= i; }\n\
                 i = n; int N2 = N; if (int k = n) { n = k; } a[i] = k;\n\
               }\n\
               void g(void) { n = i; for (int i = 0, n = 2; i < n; i++) { a[i] = n; } a[n] = i; }\n";
    let toks = lex(src);
    let sx = Syntax::new(src, &toks);
    let mut checked = 0;
    for t in toks.iter().filter(|t| t.kind == TokKind::Ident) {
        let (name, at) = (t.text(src), t.start());
        let scanned = sx.decls.get(name).and_then(|d| {
            d.list
                .iter()
                .filter(|d| d.offset <= at && d.scope.contains(&at))
                .max_by_key(|d| d.offset)
        });
        let found = sx.lookup(name, at);
        assert_eq!(
            found.map(|d| d.offset),
            scanned.map(|d| d.offset),
            "{name} at {at}"
        );
        checked += usize::from(found.is_some());
    }
    assert!(checked > 50, "{checked}");
}

/// Two declarations of one name in one scope (two `#if` branches) leave the later one only
/// the extents both share: the build may see either.
#[test]
fn extents_two_branches_disagree_on_are_unknown() {
    let src = "#ifdef BIG\ndouble a[100][4], b[3];\n#else\ndouble a[10][4], b[3];\n#endif\n\
               double c[5];\nvoid f(void) { double c[6]; c[0] = a[0][0] + b[0]; }\n";
    let toks = lex(src);
    let sx = Syntax::new(src, &toks);
    let at = src.rfind("c[0]").unwrap();
    let extents = |name: &str| sx.lookup(name, at).map(|d| d.ty.extents.clone());
    assert_eq!(extents("a"), Some(vec![None, Some(4)]));
    assert!(matches!(
        sx.lookup("a", at).unwrap().ty.kind,
        VarKind::Array { extent: None }
    ));
    assert_eq!(extents("b"), Some(vec![Some(3)]));
    // A declaration in an inner scope is not a second one of the outer.
    assert_eq!(extents("c"), Some(vec![Some(6)]));
}

/// A region using more variables than are searched without an index: the same variables,
/// first uses and writes as a region using few.
#[test]
fn regions_of_many_variables() {
    let names: Vec<String> = (0..40).map(|k| format!("v{k}")).collect();
    let mut src = format!("int {};\nvoid f(void) {{\n", names.join(", "));
    src.push_str("{\n");
    for (k, n) in names.iter().enumerate() {
        // Each variable read, then written where `k` is even; `v0` once more at the end.
        src.push_str(&format!("g({n});\n"));
        if k % 2 == 0 {
            src.push_str(&format!("{n} = 1;\n"));
        }
    }
    src.push_str("v0++;\n}\n}\n");
    let toks = lex(&src);
    let sx = Syntax::new(&src, &toks);
    let st = Structure::new(&src, &toks, &[]);
    let sites: Vec<SiteInput> = statement_sites(&src, &toks)
        .into_iter()
        .filter(|s| {
            s.stmt
                .as_ref()
                .is_some_and(|r| src[r.clone()].starts_with("{\ng("))
        })
        .collect();
    assert_eq!(sites.len(), 1);
    let f = sx.site_facts(&st, &sites[0], &mut Vec::new());
    let shown: Vec<(&str, usize, Vec<usize>)> = f
        .vars
        .iter()
        .map(|v| (v.name.as_str(), v.first_use(), v.writes().to_vec()))
        .collect();
    let expected: Vec<(&str, usize, Vec<usize>)> = names
        .iter()
        .enumerate()
        .map(|(k, n)| {
            let first = src.find(&format!("g({n})")).unwrap() + 2;
            let mut writes = Vec::new();
            if k % 2 == 0 {
                writes.push(src.find(&format!("\n{n} = 1")).unwrap() + 1);
            }
            if k == 0 {
                writes.push(src.find("v0++").unwrap());
            }
            (n.as_str(), first, writes)
        })
        .collect();
    assert_eq!(shown, expected);
}

/// A loop's depth walked from its loop already read is the nest's depth.
#[test]
fn loop_depth_is_the_nest_depth() {
    let src = "void f(int n, double *a, double **b) {\n\
               for (int i = 0; i < n; i++) a[i] += 1;\n\
               for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) b[i][j] = 0;\n\
               for (int i = 0; i < n; i++) { for (int j = 0; j < n; j++) b[i][j] = 0; }\n\
               for (int i = 0; i < n; i++) { a[i] = 0; for (int j = 0; j < n; j++) b[i][j] = 0; }\n\
               for (int i = 0; i < n; i++)\n#pragma acc loop\nfor (int j = 0; j < n; j++) b[i][j] = 0;\n\
               for (int i = 0; i < n; i++)\n#define X 1\nfor (int j = 0; j < n; j++) b[i][j] = 0;\n\
               for (int i = 0; i < n; i++) _Pragma(\"acc loop\") for (int j = 0; j < n; j++) b[i][j] = 0;\n\
               for (int i = 0; i < n; i++) ;\n\
               for (;;) break;\n\
               }\n";
    let toks = lex(src);
    // The directives as sites taking a statement: `#pragma acc loop` and `_Pragma(...)`.
    let sites: Vec<Option<(usize, usize, bool)>> = toks
        .iter()
        .enumerate()
        .filter_map(|(k, t)| match t.text(src) {
            "#pragma acc loop" => Some(Some((k, k, true))),
            "_Pragma" => Some(Some((k, k + 3, true))),
            _ => None,
        })
        .collect();
    assert_eq!(sites.len(), 2);
    let st = Structure::new(src, &toks, &sites);
    let mut depths = Vec::new();
    for (k, t) in toks.iter().enumerate() {
        if t.text(src) != "for" {
            continue;
        }
        let fl = st.for_loop_at(k).unwrap();
        let depth = uses::loop_depth(&st, k, &fl);
        assert_eq!(depth, st.nest_depth(k, 64).max(1), "loop at {}", t.start());
        depths.push(depth);
    }
    assert_eq!(depths, [1, 2, 1, 2, 1, 1, 1, 2, 1, 2, 1, 2, 1, 1, 1]);
}

/// Sources with blocks, for and if declarations and directives around them (stacked,
/// standing for a statement, between a `for` header and its body), and broken brackets.
const SCOPED: &[&str] = &[
    "int i, n; double a[9];\nvoid f(int n, double *a) {\n\
     #pragma acc parallel loop\nfor (int i = 0; i < n; i++) a[i] += 1;\n\
     #pragma acc parallel loop\nfor (int i = 0; i < n; i++)\n#pragma acc wait\na[i] = i;\n\
     for (int i = 0; i < n; i++)\n#pragma acc loop\nfor (int j = 0; j < i; j++) a[j] = i;\n\
     for (int i = 0; i < n; i++) if (i) a[i] = 0;\n#pragma acc update self(a)\nelse a[i] = 1;\n\
     for (int i = 0; i < n; i++) { int k = i; a[k] = i; }\n\
     for (int i = 0; i < n; i++) do a[i]--; while (a[i] > 0);\n\
     if (int k = n) a[k] = 0; else a[0] = k;\n\
     while (int w = n) { n -= w; }\n\
     for (int i = 0; i < n; i++) _Pragma(\"acc wait\") a[i] = i;\n\
     for (int i = 0; i < n; i++) ;\n\
     for (int i = 0; i < n; i++) {}\n\
     i = n;\n}\n",
    "void g(int n) { ( { int x; ) int y; } { int z; ] z = 1; } int w; }\n\
     void h(int m) { [ ( { int u; } ) int v; ] { int t; ( } t = m; ) }\n\
     int tail(int q) { { { int r = q; } } } } int after;\n",
];

/// The sites of `src` for a structure that has them: each `#pragma acc` line and
/// `_Pragma`, taking a statement unless it is a `wait` or an `update`.
fn pragma_sites(src: &str, toks: &[Token]) -> Vec<Option<(usize, usize, bool)>> {
    let mut out = Vec::new();
    for (k, t) in toks.iter().enumerate() {
        let text = t.text(src);
        if t.kind == TokKind::PpLine && text.contains("acc") {
            let stmt = !text.contains("wait") && !text.contains("update");
            out.push(Some((k, k, stmt)));
        } else if text == "_Pragma" {
            out.push(Some((k, k + 3, false)));
        }
    }
    out
}

/// A declaration's scope is that of the structure without sites, whether the structure
/// `Syntax` reads has the file's sites or not (its own is asked only where the two agree).
#[test]
fn scopes_do_not_depend_on_sites() {
    for src in SCOPED {
        let toks = lex(src);
        let sited = Structure::new(src, &toks, &pragma_sites(src, &toks));
        let with = Syntax::with_defines(&sited, &[]);
        let without = Syntax::new(src, &toks);
        let scopes = |s: &Syntax| {
            let mut all: Vec<(String, usize, Range<usize>)> = (s.decls.iter())
                .flat_map(|(n, d)| {
                    d.list
                        .iter()
                        .map(|d| (n.to_string(), d.offset, d.scope.clone()))
                })
                .collect();
            all.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
            all
        };
        assert_eq!(scopes(&with), scopes(&without), "{src}");
        assert!(scopes(&with).len() > 5);
        // The `for` bodies without directives are read with the structure that has them.
        if src.contains("pragma") {
            assert!(with.statements.get().is_some());
        }
    }
}

/// The innermost block and matching brackets as the per-token tables they replace had them:
/// a closer matches the innermost opener of its kind and closes those opened after it.
#[test]
fn blocks_and_pairs_are_the_per_token_tables() {
    for src in SCOPED {
        let toks = lex(src);
        let sx = Syntax::new(src, &toks);
        let mut pair = vec![None; toks.len()];
        let mut block = vec![None; toks.len()];
        let mut stack: Vec<(usize, u8)> = Vec::new();
        for (i, t) in toks.iter().enumerate() {
            block[i] = stack
                .iter()
                .rev()
                .find(|(_, b)| *b == b'{')
                .map(|&(o, _)| o);
            let text = t.text(src);
            if t.kind != TokKind::Punct {
                continue;
            }
            match text {
                "(" | "[" | "{" => stack.push((i, text.as_bytes()[0])),
                ")" | "]" | "}" => {
                    let open = BRACKETS.iter().find(|(_, c)| *c == text.as_bytes()[0]);
                    let kind = open.map_or(0, |(o, _)| *o);
                    if let Some(p) = stack.iter().rposition(|(_, b)| *b == kind) {
                        let o = stack[p].0;
                        stack.truncate(p);
                        pair[o] = Some(i);
                        pair[i] = Some(o);
                    }
                }
                _ => {}
            }
        }
        for i in 0..toks.len() + 2 {
            assert_eq!(
                sx.pair(i),
                pair.get(i).copied().flatten(),
                "pair {i} in {src}"
            );
            assert_eq!(
                sx.block(i),
                block.get(i).copied().flatten(),
                "block {i} in {src}"
            );
        }
    }
}

/// Names resolved in one pass over a run's regions are those a lookup per name finds.
#[test]
fn resolved_names_are_the_lookups() {
    let mut src = String::from("int i, n; double a[9];\nvoid f(int n, double *a) {\n");
    for k in 0..50 {
        src.push_str(&format!(
            "for (int i = 0; i < n; i++) {{ a[i] += {k}; {{ int n = i; a[n] = i; }} }}\n\
             i = n; {{ double i = a[{k}]; n = i; }}\n"
        ));
    }
    src.push_str("}\nvoid g(void) { n = i; }\n");
    let toks = lex(&src);
    let sx = Syntax::new(&src, &toks);
    // Overlapping and nested ranges, out of order.
    let ranges = [40..400, 0..toks.len(), 300..900, 1000..1200, 5..6];
    let names = sx.resolve(ranges.iter().cloned());
    assert!(names.len() > 500);
    assert!(names.windows(2).all(|w| w[0].0 < w[1].0));
    for &(k, r) in &names {
        let t = &toks[k];
        let expected = sx.lookup(t.text(&src), t.start()).map(|d| d.offset);
        let got = match r {
            uses::Resolved::Decl(_, d) => Some(d.offset),
            uses::Resolved::Unknown(_) => None,
        };
        assert_eq!(got, expected, "{} at {}", t.text(&src), t.start());
    }
}

/// The four passes over the tokens that `read_tokens` makes one: the blocks, the macros, the
/// type names (tags, then typedefs), and the declarator candidates.
fn found_by_passes<'a>(s: &mut Syntax<'a>) -> Found<'a> {
    let mut found = Found::default();
    let pp: Vec<usize> = (0..s.toks.len())
        .filter(|&i| s.toks[i].kind == TokKind::PpLine)
        .collect();
    for i in pp {
        s.collect_macro(i, &mut found.bodies);
    }
    for i in 0..s.toks.len() {
        let t = s.toks[i];
        if t.kind == TokKind::Ident && (4..=7).contains(&(t.end() - t.start())) {
            s.collect_tag(i, &mut found.typedefs);
        }
    }
    found.declarators = (0..s.toks.len())
        .filter(|&k| s.may_declare(k))
        .map(index32)
        .collect();
    found
}

#[test]
fn one_pass_over_the_tokens_finds_what_four_did() {
    let mut files: Vec<String> = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p
                .extension()
                .is_some_and(|x| ["c", "cpp", "h", "cc", "hpp"].iter().any(|e| x == *e))
            {
                files.push(std::fs::read_to_string(&p).unwrap_or_default());
            }
        }
    }
    files.push(
        "#define T double\ntypedef struct S { int a; } S; enum E { A }; class C;\n\
                #define F(x) x\nT v; S s; union U { int i; } u; typedef T arr[3];\n"
            .to_string(),
    );
    assert!(files.len() > 100, "{}", files.len());
    let (mut decls, mut types) = (0, 0);
    for src in &files {
        let toks = lex(src);
        let st = Structure::new(src, &toks, &[]);
        let mut one = Syntax::with_defines(&st, &[]);
        let mut old = Syntax::with_defines(&st, &[]);
        old.typedefs.clear();
        old.macros.clear();
        let by_passes = found_by_passes(&mut old);
        one.typedefs.clear();
        one.macros.clear();
        let found = one.read_tokens();
        assert_eq!(found.bodies, by_passes.bodies, "{src}");
        assert_eq!(found.typedefs, by_passes.typedefs, "{src}");
        assert_eq!(found.declarators, by_passes.declarators, "{src}");
        assert_eq!(one.macros, old.macros, "{src}");
        assert_eq!(one.typedefs, old.typedefs, "{src}");
        decls += found.declarators.len();
        types += one.typedefs.len();
    }
    assert!(decls > 1000 && types > 2, "{decls} {types}");
}
