//! Verdicts that depend on the order of the problems in a loop: a possible overlap of
//! different arrays (`DepKind::Alias`, which an asserted independence covers) is the verdict
//! only when nothing worse follows it.

use super::*;
use crate::facts::{RegionVar, VarKind, VarType};
use crate::lex::lex;
use std::sync::Arc;

/// A pointer parameter (`double *name`, or `double **name` with `dims` 1 too).
fn pointer(name: &str) -> RegionVar {
    let ty = VarType {
        kind: VarKind::Pointer,
        dims: 1,
        ..VarType::unknown()
    };
    RegionVar::new(name, Arc::new(ty), None, 0, Vec::new())
}

/// A `restrict` pointer parameter (`double *restrict name`).
fn restricted(name: &str) -> RegionVar {
    let ty = VarType {
        kind: VarKind::Pointer,
        dims: 1,
        restrict: true,
        ..VarType::unknown()
    };
    RegionVar::new(name, Arc::new(ty), None, 0, Vec::new())
}

fn scalar(name: &str) -> RegionVar {
    let ty = VarType {
        kind: VarKind::Scalar,
        ..VarType::unknown()
    };
    RegionVar::new(name, Arc::new(ty), None, 0, Vec::new())
}

/// The kind of the verdict for the loop `src` (the whole text), over `n`, with pointers `ptrs`
/// and scalars `i`, `n`.
fn kind(src: &str, ptrs: &[&str]) -> Option<DepKind> {
    let toks = lex(src);
    let mut vars: Vec<RegionVar> = ptrs.iter().map(|p| pointer(p)).collect();
    vars.push(scalar("i"));
    vars.push(scalar("n"));
    let input = Input {
        src,
        toks: &toks,
        for_tok: 0,
        end: toks.len(),
        vars: &vars,
        confined: &[],
    };
    match analyze(&input).outer() {
        Verdict::Independent(_) => None,
        Verdict::Dependent(d) => Some(d.kind),
    }
}

#[test]
fn an_overlap_does_not_hide_an_accumulation_after_it() {
    let p = ["a", "u", "v", "y", "x"];
    // Alone, each write: a possible overlap; an accumulation at an invariant element.
    let overlap = "for (int j = 0; j < n; j++) a[i * n + j] = a[i * n + j] + u[i] * v[j];";
    assert_eq!(kind(overlap, &p), Some(DepKind::Alias));
    let acc = "for (int j = 0; j < n; j++) x[i] = x[i] + y[j];";
    assert_eq!(kind(acc, &p), Some(DepKind::Carried));
    // Both, the overlap first: the accumulation is the verdict.
    let both = "for (int j = 0; j < n; j++) { a[i * n + j] = a[i * n + j] + u[i] * v[j]; \
                x[i] = x[i] + a[i * n + j] * y[j]; }";
    assert_eq!(kind(both, &p), Some(DepKind::Carried));
    // The accumulation first.
    let both = "for (int j = 0; j < n; j++) { x[i] = x[i] + y[j]; a[i * n + j] = u[j]; }";
    assert_eq!(kind(both, &p), Some(DepKind::Carried));
}

#[test]
fn a_write_through_a_loaded_pointer_does_not_end_the_walk() {
    let p = ["a", "y", "x"];
    let overlap = "for (int j = 0; j < n; j++) a[i][j] = y[j];";
    assert_eq!(kind(overlap, &p), Some(DepKind::Alias));
    // What follows the write is still analyzed: an accumulation, a call, a `break`.
    let acc = "for (int j = 0; j < n; j++) { a[i][j] = y[j]; x[i] = x[i] + y[j]; }";
    assert_eq!(kind(acc, &p), Some(DepKind::Carried));
    let call = "for (int j = 0; j < n; j++) { a[i][j] = y[j]; g(y); }";
    assert_eq!(kind(call, &p), Some(DepKind::Call));
    let brk = "for (int j = 0; j < n; j++) { a[i][j] = y[j]; if (y[j] > 0) break; }";
    assert_eq!(kind(brk, &p), Some(DepKind::Control));
    // Two possible overlaps: still one.
    let two = "for (int j = 0; j < n; j++) { a[i][j] = y[j]; x[j] = y[j]; }";
    assert_eq!(kind(two, &p), Some(DepKind::Alias));
}

/// The outer verdict for `src` over restrict pointers `a`, `b` and scalars `n`, `t`, with
/// the `confined` names.
fn verdict_confined(src: &str, confined: &[&str]) -> Verdict {
    let toks = lex(src);
    let vars = vec![restricted("a"), restricted("b"), scalar("n"), scalar("t")];
    let input = Input {
        src,
        toks: &toks,
        for_tok: 0,
        end: toks.len(),
        vars: &vars,
        confined,
    };
    analyze(&input).outer().clone()
}

#[test]
fn a_confined_temporary_of_an_inner_loop_is_private_to_the_outer_one() {
    // The inner loop may run no iteration: after the outer loop, `t` would hold the value
    // of the last iteration that ran it, which nothing reads when it is confined.
    let src = "for (int j = 0; j < n; j++) for (int k = 0; k < n; k++) \
               { t = a[j * n + k] * 2; b[j * n + k] = t + 1; }";
    let Verdict::Dependent(d) = verdict_confined(src, &[]) else {
        panic!("a last value to keep");
    };
    assert_eq!(d.kind, DepKind::LastValue);
    let Verdict::Independent(cl) = verdict_confined(src, &["t"]) else {
        panic!("confined: private");
    };
    assert_eq!(cl.private, ["t"]);
    assert!(cl.lastprivate.is_empty());
    assert_eq!(cl.omp(), ["private(t)"]);
    // Assigned on every path: the last value, unless nothing reads it.
    let every = "for (int j = 0; j < n; j++) { t = a[j]; b[j] = t; }";
    let Verdict::Independent(cl) = verdict_confined(every, &[]) else {
        panic!("independent");
    };
    assert_eq!(cl.lastprivate, ["t"]);
    let Verdict::Independent(cl) = verdict_confined(every, &["t"]) else {
        panic!("independent");
    };
    assert_eq!(
        (cl.lastprivate.len(), cl.private),
        (0, vec!["t".to_string()])
    );
    // Read before it is written in an iteration: a carried value, confined or not.
    let carried = "for (int j = 0; j < n; j++) { b[j] = t; t = a[j]; }";
    let Verdict::Dependent(d) = verdict_confined(carried, &["t"]) else {
        panic!("carried");
    };
    assert_eq!(d.kind, DepKind::Scalar);
}

/// The verdict's kind for loop `src` with the given header macros; the file (`defs` then the
/// loop) may define or `#undef` names too. Arrays `a`, `b` restrict; scalars `i`, `n`, `w`.
fn kind_with_headers(
    defs: &str,
    src: &str,
    header: &[crate::facts::HeaderMacro],
) -> Option<DepKind> {
    let text = format!("{defs}{src}");
    let toks = lex(&text);
    let vars = vec![
        restricted("a"),
        restricted("b"),
        scalar("i"),
        scalar("n"),
        scalar("w"),
    ];
    let for_tok = toks
        .iter()
        .position(|t| t.text(&text) == "for")
        .expect("a loop");
    let input = Input {
        src: &text,
        toks: &toks,
        for_tok,
        end: toks.len(),
        vars: &vars,
        confined: &[],
    };
    let pp = crate::lex::PpLines::new(&text, &toks);
    match analyze_in(&input, &FileInfo::new(&text, &toks, &pp, header)).outer() {
        Verdict::Independent(_) => None,
        Verdict::Dependent(d) => Some(d.kind),
    }
}

#[test]
fn header_macros_are_expanded_unless_the_file_defines_the_name() {
    let mac = |name: &str, params: Option<&[&str]>, body: &str| crate::facts::HeaderMacro {
        name: name.into(),
        params: params.map(|p| p.iter().map(|s| s.to_string()).collect()),
        body: body.into(),
    };
    let header = [
        mac("N", None, "4096"),
        mac("NN", None, "(N + 2)"),
        mac("BOUND", Some(&["x", "y"]), "y"),
        mac("W", None, "w"),
        mac("PASTE", Some(&["x"]), "a ## x"),
        mac("INFINITY", None, "(__builtin_inff ())"),
    ];
    let copy = "for (int j = 0; j < N; j++) a[j] = b[j];";
    // Without them the bound is an unknown name; with them a constant.
    assert_eq!(kind_with_headers("", copy, &[]), Some(DepKind::Unknown));
    assert_eq!(kind_with_headers("", copy, &header), None);
    // Nested and function-like: `NN` through `N`, `BOUND(N, n)` to the scalar `n`.
    let nested = "for (int j = 0; j < NN; j++) a[j] = b[j] + BOUND(N, n);";
    assert_eq!(kind_with_headers("", nested, &header), None);
    // A macro for a scalar the loop writes is that scalar.
    let writes = "for (int j = 0; j < W; j++) { a[j] = b[j]; w = j; }";
    assert_eq!(
        kind_with_headers("", writes, &header),
        Some(DepKind::Scalar)
    );
    // A standard constant stays one, not its header's builtin call.
    let inf = "for (int j = 0; j < n; j++) a[j] = b[j] < 0 ? INFINITY : b[j];";
    assert_eq!(kind_with_headers("", inf, &header), None);
    // Token pasting is not expanded: a call of an unknown function.
    let paste = "for (int j = 0; j < n; j++) PASTE(x)[j] = b[j];";
    assert_eq!(kind_with_headers("", paste, &header), Some(DepKind::Call));
    // The file's own `#undef` or `#define` of the name wins over the header's.
    assert_eq!(
        kind_with_headers("#undef N\n", copy, &header),
        Some(DepKind::Unknown)
    );
    assert_eq!(kind_with_headers("#define N w\n", copy, &header), None);
    let redefined = "for (int j = 0; j < N; j++) { a[j] = b[j]; w = 1; }";
    assert_eq!(
        kind_with_headers("#define N w\n", redefined, &header),
        Some(DepKind::Scalar)
    );
}

/// Subscripts running opposite ways: apart where the bounds keep `j1 + j2` out of reach.
#[test]
fn opposite_subscripts_apart_by_the_bounds() {
    let p = ["a"];
    // 1 <= j < 5: a[10 - j] is a[6..9], a[j] a[1..4].
    let apart = "for (int j = 1; j < 5; j++) a[10 - j] = a[j] + 1;";
    assert_eq!(kind(apart, &p), None);
    // 1 <= j <= 5: j = 5 writes a[3], which j = 3 reads.
    let meet = "for (int j = 1; j <= 5; j++) a[8 - j] = a[j] + 1;";
    assert_eq!(kind(meet, &p), Some(DepKind::Carried));
    // A reversal: every element twice.
    let rev = "for (int j = 0; j < n; j++) a[n - 1 - j] = a[j];";
    assert_eq!(kind(rev, &p), Some(DepKind::Carried));
}
