//! Jumps in C and C++ code: each `goto` with the label it reaches, each `case` or `default`
//! label with its `switch` (see `crate::syntax::Jump`).

use crate::lex::TokKind;
use crate::structure::Structure;
use crate::syntax::Jump;
use std::collections::HashMap;

/// Whether token `k` is an identifier that starts a labelled statement (`name:`).
fn is_label(st: &Structure, k: usize) -> bool {
    let toks = st.toks;
    if toks[k].kind != TokKind::Ident
        || st.text(k + 1) != ":"
        || matches!(
            st.text(k),
            "default" | "public" | "private" | "protected" | "case"
        )
    {
        return false;
    }
    k.checked_sub(1).is_none_or(|p| {
        matches!(st.text(p), ";" | "{" | "}" | ":") || toks[p].kind == TokKind::PpLine
    })
}

/// The label `name` a `goto` at token `g` jumps to: the first one found in the innermost
/// block around the `goto` that has one (labels are unique in a function).
fn label_for(
    st: &Structure,
    g: usize,
    name: &str,
    labels: &HashMap<&str, Vec<usize>>,
) -> Option<usize> {
    let candidates = labels.get(name)?;
    let mut at = g;
    while let Some((open, close)) = st.enclosing_brace(at) {
        let end = close.unwrap_or(usize::MAX);
        if let Some(&l) = candidates.iter().find(|&&l| open < l && l < end) {
            return Some(l);
        }
        at = open;
    }
    None
}

/// The `switch` keyword whose body holds the `case` label at token `c`.
fn switch_of(st: &Structure, c: usize) -> Option<usize> {
    let mut at = c;
    while let Some((open, _)) = st.enclosing_brace(at) {
        if let Some(close) = open.checked_sub(1).filter(|&p| st.text(p) == ")")
            && let Some(kw) = st.opener(close).and_then(|o| o.checked_sub(1))
        {
            match st.text(kw) {
                "switch" => return Some(kw),
                // A function body: the label is outside any switch.
                w if st.toks[kw].kind == TokKind::Ident && !matches!(w, "if" | "for" | "while") => {
                    return None;
                }
                _ => {}
            }
        }
        at = open;
    }
    None
}

/// Every `goto` with its label, then every `case`/`default` label with its `switch`.
pub(super) fn jumps(st: &Structure) -> Vec<Jump> {
    let toks = st.toks;
    let mut labels: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut gotos = Vec::new();
    let mut cases = Vec::new();
    let b = st.src.as_bytes();
    // Gotos, cases and labels are identifiers; but for `goto` and `case`, each is followed by
    // `:` (`default:` and `name:`). The bytes say so before any text is compared: a file has
    // hundreds of thousands of identifiers and a handful of jumps.
    let colon_at = |k: usize| toks.get(k).is_some_and(|t| &b[t.range()] == b":");
    for k in (0..toks.len()).filter(|&k| {
        toks[k].kind == TokKind::Ident
            && (colon_at(k + 1) || matches!(&b[toks[k].range()], b"goto" | b"case"))
    }) {
        match st.text(k) {
            "goto" if toks.get(k + 1).is_some_and(|t| t.kind == TokKind::Ident) => gotos.push(k),
            "case" => cases.push(k),
            "default" if st.text(k + 1) == ":" => cases.push(k),
            _ if is_label(st, k) => labels.entry(toks[k].text(st.src)).or_default().push(k),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for g in gotos {
        let label = st.text(g + 1);
        if let Some(l) = label_for(st, g, label, &labels) {
            out.push(Jump::Goto {
                from: g,
                to: l,
                label: label.to_string(),
            });
        }
    }
    for c in cases {
        if let Some(s) = switch_of(st, c) {
            out.push(Jump::Case {
                switch: s,
                label: c,
                word: st.text(c).to_string(),
            });
        }
    }
    out
}
