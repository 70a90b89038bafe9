use super::*;
use crate::c::syntax::assigned::tests::{Rng, block};
use crate::lex::lex;

/// Generated functions, token ranges asked about several names and parts each (every text
/// of the range and one it lacks): the same answer as the walk over the range.
#[test]
fn the_listed_mentions_answer_as_the_walk() {
    let mut r = Rng(0x2545_f491_4f6c_dd1d);
    let (mut yes, mut no) = (0, 0);
    for _ in 0..300 {
        let src = format!("void g(int a, int b) {{ {} }}", block(&mut r, 0));
        let toks = lex(&src);
        let last = LastAsked::default();
        for _ in 0..4 {
            let start = r.below(toks.len());
            let toks_r = start..start + r.below(toks.len() - start) + 1;
            let bytes = toks[toks_r.start].start()..toks[toks_r.end - 1].start() + 1;
            let names: Vec<&str> = toks[toks_r.clone()]
                .iter()
                .map(|t| t.text(&src))
                .chain(["absent"])
                .collect();
            for _ in 0..3 {
                // A part of the range, sometimes empty or past it.
                let a = bytes.start + r.below(bytes.len() + 1);
                let skip = a..a + r.below(bytes.end + 2 - a);
                for v in &names {
                    let want = scan(&src, &toks[toks_r.clone()], &skip, v);
                    let got = mentions_outside(&last, &src, &toks, toks_r.clone(), &skip, v);
                    assert_eq!(got, want, "{v} in {toks_r:?} outside {skip:?} of {src}");
                    if want {
                        yes += 1;
                    } else {
                        no += 1;
                    }
                }
            }
        }
    }
    assert!(yes > 1_000 && no > 1_000, "{yes} {no}");
}
