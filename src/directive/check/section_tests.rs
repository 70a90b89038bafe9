//! [`Section`] against the scans of the clauses before it that it replaced.

use super::*;
use crate::directive::{Dialect, generated, parse_grammar_in};

/// The check as it was: the clauses before in the section, searched.
fn old_against(name: &str, c: &Clause, once: bool, section: &[&Clause]) -> Option<ParseError> {
    if once && section.iter().any(|p| p.name == c.name) {
        return Some(err(
            c.span().start,
            id::DUPLICATE_CLAUSE,
            format!("clause '{}' appears more than once", c.spelled()),
        ));
    }
    if name == "routine"
        && ROUTINE_LEVELS.contains(&c.name.as_str())
        && let Some(p) = section
            .iter()
            .find(|p| p.name != c.name && ROUTINE_LEVELS.contains(&p.name.as_str()))
    {
        return Some(err(
            c.span().start,
            id::CONFLICTING_CLAUSES,
            format!(
                "'{}' conflicts with '{}': a routine has one level of parallelism",
                c.spelled(),
                p.spelled()
            ),
        ));
    }
    None
}

#[test]
fn a_section_finds_what_the_scan_of_the_clauses_before_found() {
    let t = Tables::builtin();
    let mut compared = 0;
    for text in generated::directives(&t, 3000, 12) {
        for dialect in [Dialect::C, Dialect::Fortran] {
            let Ok(d) = parse_grammar_in(&text, 0..text.len(), &t, dialect) else {
                continue;
            };
            let (mut section, mut old) = (Section::default(), Vec::new());
            for c in &d.clauses {
                if c.name == "device_type" {
                    section.clear();
                    old.clear();
                    continue;
                }
                let once = t.clause(&c.name).is_some_and(|r| r.once);
                let want = old_against(&d.name, c, once, &old);
                let got = against_section(&d.name, c, once, &section).err();
                compared += usize::from(want.is_some());
                assert_eq!(got, want, "{text}");
                section.push(c);
                old.push(c);
            }
        }
    }
    assert!(compared > 500, "only {compared} problems compared");
}
