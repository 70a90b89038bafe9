use super::*;
use crate::c::syntax::assigned::tests::Rng;
use crate::lex::lex_range;

const NAMES: [&str; 5] = ["s", "t", "u", "x", "i"];
const OPS: [&str; 7] = ["+", "*", "max", "min", "|", "&", "^"];

/// A statement of the update shapes `updated_only_by` tells apart, and others that mention
/// a name (members, calls, stray parentheses).
fn statement(r: &mut Rng, depth: usize) -> String {
    let (v, w) = (NAMES[r.below(NAMES.len())], NAMES[r.below(NAMES.len())]);
    let leaf = depth > 2;
    match r.below(if leaf { 14 } else { 19 }) {
        0 => format!("{v} += {w};"),
        1 => format!("{v} = {v} + a[{w}];"),
        2 => format!("{v} *= {w};"),
        3 => format!("if ({w} > {v}) {v} = {w};"),
        4 => format!("if (a[i] * ({w} + 1) < {v}) {{ {v} = a[i] * ({w} + 1); }}"),
        5 => format!("{v} = {v} > {w} ? {v} : {w};"),
        6 => format!("{v} = fmax({v}, {w});"),
        7 => format!("{v} = fmin({w}, {v});"),
        8 => format!("{v}++;"),
        9 => format!("{v} |= {w}; {w} ^= 1;"),
        10 => format!("q.{v} = {w}; p->{v} += 1;"),
        11 => format!("f({v}, {w});"),
        12 => format!("{v} = {w};"),
        13 => [") ", "( ", "(("][r.below(3)].to_string(),
        14 => format!("if (c) {}", statement(r, depth + 1)),
        15 => format!(
            "for (int {v} = 0; {v} < n; {v}++) {{ {} {} }}",
            statement(r, depth + 1),
            statement(r, depth + 1)
        ),
        16 => format!("g({});", statement(r, depth + 1).trim_end_matches(';')),
        17 => format!("{{ {} }}", statement(r, depth + 1)),
        _ => format!("while ({v} < {w}) {}", statement(r, depth + 1)),
    }
}

#[test]
fn the_index_answers_as_the_walk() {
    let mut r = Rng(0x2545_f491_4f6c_dd1d);
    let mut agreed = [0usize; 2];
    for _ in 0..3000 {
        let n = 1 + r.below(8);
        let body: String = (0..n).map(|_| statement(&mut r, 0) + " ").collect();
        let toks = lex_range(&body, 0..body.len(), false);
        let text: Vec<&str> = toks.iter().map(|t| t.text(&body)).collect();
        let ix = Index::new(&body, &toks);
        for k in 0..toks.len() {
            let open = (ix.open[k] != NONE).then_some(ix.open[k] as usize);
            assert_eq!(open, updates::enclosing_open(&text, k), "{body} at {k}");
        }
        for v in NAMES {
            for op in OPS {
                let walk = updates::updated_only_by(&body, &toks, v, op);
                assert_eq!(
                    ix.updated_only_by(&body, &toks, v, op),
                    walk,
                    "{v} by {op} in: {body}"
                );
                agreed[walk as usize] += 1;
            }
        }
    }
    // Both answers are common, so the comparison means something.
    assert!(agreed[0] > 1000 && agreed[1] > 1000, "{agreed:?}");
}

#[test]
fn a_range_asked_again_is_indexed_and_another_is_not() {
    let src = "s += a[i]; t = fmax(t, b[i]); u = u + 1;";
    let toks = lex_range(src, 0..src.len(), false);
    let last = LastAsked::default();
    let all = 0..toks.len();
    assert!(updated_only_by(&last, src, &toks, all.clone(), "s", "+"));
    assert!(last.take().is_some_and(|e| e.index.is_none()));
    last.put(Updates {
        toks: all.clone(),
        index: None,
    });
    assert!(updated_only_by(&last, src, &toks, all.clone(), "t", "max"));
    assert!(!updated_only_by(&last, src, &toks, all.clone(), "s", "*"));
    assert!(updated_only_by(&last, src, &toks, all.clone(), "u", "+"));
    let e = last.take().unwrap();
    assert!(e.toks == all && e.index.is_some());
    last.put(e);
    assert!(updated_only_by(&last, src, &toks, 0..4, "s", "+"));
    assert!(
        last.take()
            .is_some_and(|e| e.toks == (0..4) && e.index.is_none())
    );
}
