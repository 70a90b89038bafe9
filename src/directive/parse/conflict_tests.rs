//! The conflict checks against the scans of the clauses before that they replaced.

use super::*;
use crate::directive::generated;

/// The loop-level conflicts and the merge with the other problems as they were: each
/// clause compared with those before it in its section, each problem with those found.
fn old_checks(src: &str, d: &Directive, t: &Tables, dialect: Dialect) -> Vec<ParseError> {
    let mut errs = super::super::check::directive(
        src,
        &d.name,
        d.name_span().start,
        d.arg.as_deref(),
        &d.clauses,
        t,
        dialect,
    );
    let mut conflicts: Vec<ParseError> = Vec::new();
    let mut section: Vec<&Clause> = Vec::new();
    for c in &d.clauses {
        if c.name == "device_type" {
            section.clear();
            continue;
        }
        let levels = ["gang", "worker", "vector", "independent", "auto"];
        let clash = |a: &str, b: &Clause| {
            (a == "seq" && levels.contains(&b.name.as_str()))
                || (b.name == "seq" && levels.contains(&a))
        };
        let explicit = ["gang", "worker", "vector", "independent"];
        if let Some(p) = section.iter().find(|p| {
            clash(&c.name, p)
                || (c.name == "auto" && explicit.contains(&p.name.as_str()))
                || (p.name == "auto" && explicit.contains(&c.name.as_str()))
        }) {
            conflicts.push(ParseError {
                offset: c.span().start,
                message: format!("'{}' conflicts with '{}'", c.spelled(), p.spelled()),
                rule: id::CONFLICTING_CLAUSES,
            });
        }
        section.push(c);
    }
    // The data and sharing conflicts (unchanged; on clauses of neither loop level), after
    // the loop levels', one per clause.
    let level_at = |at: usize| {
        d.clauses
            .iter()
            .any(|c| c.span().start == at && LOOP_LEVELS.contains(&c.name.as_str()))
    };
    let others = check_conflicts(&d.clauses, dialect);
    for e in others.into_iter().filter(|e| !level_at(e.offset)) {
        if !conflicts.iter().any(|x| x.offset == e.offset) {
            conflicts.push(e);
        }
    }
    for e in conflicts {
        if !errs.iter().any(|x| x.offset == e.offset) {
            errs.push(e);
        }
    }
    errs.sort_by_key(|e| e.offset);
    errs
}

#[test]
fn the_checks_find_what_the_scans_of_the_clauses_before_found() {
    let t = Tables::builtin();
    let mut failing = 0;
    for text in generated::directives(&t, 3000, 12) {
        for dialect in [Dialect::C, Dialect::Fortran] {
            let Ok(d) = grammar(&text, 0..text.len(), &t, dialect) else {
                continue;
            };
            let want = old_checks(&text, &d, &t, dialect);
            let got = checks(&text, &d, &t, dialect).err().unwrap_or_default();
            if want.is_empty() {
                // The sections' check runs only on a directive without other problems.
                assert!(
                    got.iter().all(|e| e.rule == id::DEVICE_TYPE_CLAUSE),
                    "{text}: {got:?}"
                );
                continue;
            }
            failing += 1;
            assert_eq!(got, want, "{text}");
        }
    }
    assert!(failing > 1000, "only {failing} directives with problems");
}
