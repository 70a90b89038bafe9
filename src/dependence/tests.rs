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
    let restrict = |name: &str| {
        let ty = VarType {
            kind: VarKind::Pointer,
            dims: 1,
            restrict: true,
            ..VarType::unknown()
        };
        RegionVar::new(name, Arc::new(ty), None, 0, Vec::new())
    };
    let vars = vec![restrict("a"), restrict("b"), scalar("n"), scalar("t")];
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
