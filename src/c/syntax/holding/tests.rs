use super::*;
use crate::c::syntax::assigned::tests::{Rng, block};
use crate::lex::lex;

/// Every token of every block of generated functions (nested blocks, branches without
/// braces, loops, labels, `case`, `#if`), asked in an order that repeats ranges: the same
/// statement as the walk over the block's statements.
#[test]
fn the_listed_statements_answer_as_the_walk() {
    let mut r = Rng(0x5851_f42d_4c95_7f2d);
    let mut found = 0;
    for _ in 0..400 {
        let src = format!("void g(void) {{ {} }}", block(&mut r, 0));
        let toks = lex(&src);
        let st = Structure::new(&src, &toks, &[]);
        let last = LastAsked::default();
        let blocks: Vec<Range<usize>> = (0..toks.len())
            .filter(|&k| toks[k].text(&src) == "{")
            .filter_map(|k| Some(k..st.matching(k)?))
            .collect();
        for range in &blocks {
            for _ in 0..2 {
                for t in range.clone() {
                    let want = blocks::statement_of(&st, range.clone(), t);
                    let got = statement_of(&last, &st, range.clone(), t);
                    assert_eq!(got, want, "token {t} of {range:?} in {src}");
                    found += want.is_some() as usize;
                }
            }
        }
    }
    assert!(found > 10_000, "{found}");
}

#[test]
fn ranges_are_forgotten_past_the_limit() {
    let src = format!("void g(void) {{ {{ b; c; }} {} }}", "a; ".repeat(100));
    let toks = lex(&src);
    let st = Structure::new(&src, &toks, &[]);
    let last = LastAsked::default();
    // `{` is token 5; `b` 7, `c` 9.
    for k in 0..RANGES + 2 {
        let range = 5..toks.len() - 1 - k;
        assert_eq!(statement_of(&last, &st, range.clone(), 7), Some(7..9));
        assert_eq!(statement_of(&last, &st, range, 9), Some(9..11));
    }
    assert!(last.take().is_some_and(|b| b.0.len() <= RANGES + 1));
}
