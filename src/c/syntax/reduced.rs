//! [`updates::updated_only_by`] asked for many names of one loop (a gang loop whose
//! reduction lists thousands of scalars asks once per scalar): the loop's tokens are indexed
//! once, and each name is answered from its own mentions, not by a walk of the whole loop.

use super::assigned::LastAsked;
use super::updates;
use crate::hash::HashMap;
use crate::lex::{TokKind, Token};
use std::ops::Range;

/// The token range asked about, and once asked again, its index.
pub(super) struct Updates<'a> {
    toks: Range<usize>,
    index: Option<Index<'a>>,
}

/// [`updates::updated_only_by`] of the tokens `toks` of `all`, the same answer.
pub(super) fn updated_only_by<'a>(
    last: &LastAsked<Updates<'a>>,
    src: &'a str,
    all: &[Token],
    toks: Range<usize>,
    v: &str,
    op: &str,
) -> bool {
    let t = &all[toks.clone()];
    let entry = match last.take() {
        Some(Updates {
            toks: r,
            index: None,
        }) if r == toks => Updates {
            toks: r,
            index: Some(Index::new(src, t)),
        },
        Some(e) if e.toks == toks => e,
        _ => Updates { toks, index: None },
    };
    let answer = match &entry.index {
        None => updates::updated_only_by(src, t, v, op),
        Some(ix) => ix.updated_only_by(src, t, v, op),
    };
    last.put(entry);
    answer
}

/// No enclosing `(`.
const NONE: u32 = u32::MAX;

/// The tokens' texts, where each identifier is, and the `(` around each token.
struct Index<'a> {
    text: Vec<&'a str>,
    mentions: HashMap<&'a str, Vec<u32>>,
    /// [`updates::enclosing_open`] of each token, or [`NONE`].
    open: Vec<u32>,
}

impl<'a> Index<'a> {
    fn new(src: &'a str, toks: &[Token]) -> Self {
        let text: Vec<&str> = toks.iter().map(|t| t.text(src)).collect();
        let mut mentions: HashMap<&str, Vec<u32>> = HashMap::default();
        let mut open = Vec::with_capacity(toks.len());
        // The `(`s not closed yet: a `)` closes the latest, and one with none open is passed
        // over, as the backward count of `enclosing_open` does.
        let mut unclosed: Vec<u32> = Vec::new();
        for (k, t) in toks.iter().enumerate() {
            open.push(unclosed.last().copied().unwrap_or(NONE));
            match text[k] {
                "(" => unclosed.push(k as u32),
                ")" => {
                    unclosed.pop();
                }
                _ => {}
            }
            if t.kind == TokKind::Ident {
                mentions.entry(text[k]).or_default().push(k as u32);
            }
        }
        Index {
            text,
            mentions,
            open,
        }
    }

    /// The walk of [`updates::updated_only_by`], from one mention of `v` to the next.
    fn updated_only_by(&self, src: &str, toks: &[Token], v: &str, op: &str) -> bool {
        let Some(at) = self.mentions.get(v) else {
            return false;
        };
        let text = &self.text;
        let (mut any, mut k) = (false, 0);
        for &p in at {
            if (p as usize) < k {
                continue;
            }
            k = p as usize;
            let open = || (self.open[k] != NONE).then_some(self.open[k] as usize);
            let Some((next, update)) = updates::step(src, toks, text, k, v, op, open) else {
                return false;
            };
            any |= update;
            k = next;
        }
        any
    }
}

#[cfg(test)]
mod tests;
