//! [`Syntax::mentions_outside`](crate::syntax::Syntax::mentions_outside) asked for many
//! names of one range (a gang loop writing thousands of scalars asks once per scalar whether
//! its construct mentions it outside the loop): the range's tokens are listed by text once,
//! and each name is answered from the first and last of its mentions.

use super::assigned::LastAsked;
use crate::hash::HashMap;
use crate::lex::Token;
use std::ops::Range;

/// The token range asked about, and once asked again, where each text is first and last.
pub(super) struct Mentions<'a> {
    toks: Range<usize>,
    spans: Option<HashMap<&'a str, (u32, u32)>>,
}

/// Whether a token of `all[toks]` whose text is `v` starts outside the bytes `skip`.
pub(super) fn mentions_outside<'a>(
    last: &LastAsked<Mentions<'a>>,
    src: &'a str,
    all: &[Token],
    toks: Range<usize>,
    skip: &Range<usize>,
    v: &str,
) -> bool {
    let t = &all[toks.clone()];
    let entry = match last.take() {
        Some(Mentions {
            toks: r,
            spans: None,
        }) if r == toks => Mentions {
            toks: r,
            spans: Some(spans(src, t)),
        },
        Some(e) if e.toks == toks => e,
        _ => Mentions { toks, spans: None },
    };
    let answer = match &entry.spans {
        None => scan(src, t, skip, v),
        // Tokens come in source order: one starts outside `skip` if the first starts before
        // it or the last at or after its end.
        Some(s) => s.get(v).is_some_and(|&(first, last)| {
            let (first, last) = (t[first as usize].start(), t[last as usize].start());
            first < skip.start || last >= skip.end
        }),
    };
    last.put(entry);
    answer
}

/// The walk the index replaces: every token compared.
pub(super) fn scan(src: &str, toks: &[Token], skip: &Range<usize>, v: &str) -> bool {
    toks.iter()
        .any(|t| t.text(src) == v && !skip.contains(&{ t.start() }))
}

/// The first and last token of each text.
fn spans<'a>(src: &'a str, toks: &[Token]) -> HashMap<&'a str, (u32, u32)> {
    let mut out: HashMap<&str, (u32, u32)> = HashMap::default();
    for (k, t) in toks.iter().enumerate() {
        let k = k as u32;
        out.entry(t.text(src))
            .and_modify(|s| s.1 = k)
            .or_insert((k, k));
    }
    out
}

#[cfg(test)]
mod tests;
