//! OpenMP directives already in a C or C++ file, read back: a run on acc2omp's own output
//! decides as the first did (see `crate::syntax::OmpRead`).

use crate::lex::{PpLines, TokKind, Token, lex_range};
use crate::structure::Structure;
use crate::syntax::OmpRead;

/// The OpenMP directives (`#pragma omp`, `_Pragma("omp …")`, a pragma wrapper macro
/// `P(omp …)`) that start at tokens `starts`, a wrapper's argument read up to token `end`.
pub(super) fn omp_directives(
    st: &Structure,
    pp: &PpLines,
    starts: &[usize],
    end: usize,
) -> Vec<OmpRead> {
    let src = st.src;
    let toks = st.toks;
    let mut out = Vec::new();
    for &k in starts {
        let t = &toks[k];
        let words = match t.kind {
            TokKind::PpLine => {
                let inner = pp.head(src, t);
                match inner.as_ref() {
                    [p, o, rest @ ..] if p.text(src) == "pragma" && o.text(src) == "omp" => {
                        rest.to_vec()
                    }
                    _ => continue,
                }
            }
            TokKind::Ident if t.text(src) == "_Pragma" => {
                let (Some(open), Some(lit)) = (toks.get(k + 1), toks.get(k + 2)) else {
                    continue;
                };
                let text = lit.text(src);
                // The string's content, after any encoding prefix (`L`, `u8`, …).
                let Some(q) = text.find('"') else { continue };
                if open.text(src) != "("
                    || lit.kind != TokKind::Literal
                    || text[..q].contains('R')
                    || !text[q + 1..].ends_with('"')
                {
                    continue;
                }
                let inner = lex_range(src, lit.start() + q + 1..lit.end() - 1, false);
                match inner.split_first() {
                    Some((o, rest)) if o.text(src) == "omp" => rest.to_vec(),
                    _ => continue,
                }
            }
            // A pragma wrapper macro, `P(omp …)` for `#define P(x) _Pragma(#x)`: nothing
            // else takes `omp` and a directive name as its argument.
            TokKind::Ident
                if toks.get(k + 1).is_some_and(|t| t.text(src) == "(")
                    && toks.get(k + 2).is_some_and(|t| t.text(src) == "omp") =>
            {
                let mut depth = 0usize;
                let mut words = Vec::new();
                for t in &toks[k + 1..end.min(toks.len())] {
                    match t.text(src) {
                        "(" => depth += 1,
                        ")" => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 {
                        break;
                    }
                    words.push(*t);
                }
                // Without `(` and `omp`.
                words.drain(..words.len().min(2));
                words
            }
            _ => continue,
        };
        out.push(read(src, k, t.start(), &words));
    }
    out
}

/// The OpenMP directive `words` (after `omp`) at token `tok` and byte `at`: its name, whether
/// it has `nowait`, its `depend` clauses.
fn read(src: &str, tok: usize, at: usize, words: &[Token]) -> OmpRead {
    let text = |k: usize| words.get(k).map_or("", |t| t.text(src));
    // `depend(…)` clauses: (dependence type, the source text of each item).
    let mut depends: Vec<(&str, Vec<&str>)> = Vec::new();
    let mut nowait = false;
    let mut k = 1;
    while k < words.len() {
        match text(k) {
            "nowait" => nowait = true,
            "depend" if text(k + 1) == "(" => {
                let mut depth = 0usize;
                let mut kind = "";
                let (mut items, mut item) = (Vec::new(), None::<(usize, usize)>);
                let mut j = k + 1;
                while j < words.len() {
                    let w = text(j);
                    match w {
                        "(" | "[" => depth += 1,
                        ")" | "]" => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 {
                        break;
                    }
                    if depth == 1 && (w == ":" || w == "," || w == "(") {
                        if w == ":" {
                            kind = text(j - 1);
                            item = None;
                        } else if let Some((a, b)) = item.take() {
                            items.push(&src[a..b]);
                        }
                    } else if depth >= 1 && !(depth == 1 && w == "(") {
                        let t = &words[j];
                        item = Some(item.map_or((t.start(), t.end()), |(a, _)| (a, t.end())));
                    }
                    j += 1;
                }
                if let Some((a, b)) = item {
                    items.push(&src[a..b]);
                }
                // `depend(iterator(…), in: …)`: every queue.
                if text(k + 2) == "iterator" {
                    items.clear();
                    kind = "iterator";
                }
                depends.push((kind, items));
                k = j;
            }
            _ => {}
        }
        k += 1;
    }
    OmpRead {
        tok,
        at,
        name: text(0).to_string(),
        nowait,
        depends: depends
            .into_iter()
            .map(|(kind, items)| {
                (
                    kind.to_string(),
                    items.into_iter().map(str::to_string).collect(),
                )
            })
            .collect(),
    }
}
