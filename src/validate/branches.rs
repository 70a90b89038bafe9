//! Branches into and out of OpenACC structured blocks: a `goto` whose label is on the other
//! side of a construct's boundary, and a `case`/`default` label inside a construct whose
//! `switch` is outside it. OpenACC enters a construct only at its start and leaves it only
//! at its end; the OpenMP translation would make the same jump just as invalid (or outline
//! the region and lose it), so the construct is left unchanged with an error at the jump.
//! Read from the tokens, so it holds with or without libclang.

use crate::diag::Diagnostic;
use crate::lex::TokKind;
use crate::rules::id;
use crate::unit::Unit;
use std::collections::HashMap;
use std::ops::Range;

/// Directives whose statement is a structured block.
fn has_block(name: &str) -> bool {
    matches!(
        name,
        "parallel" | "serial" | "kernels" | "data" | "host_data" | "loop"
    ) || name.ends_with(" loop")
}

struct Jumps<'u, 'a> {
    u: &'u Unit<'a>,
    /// (site, token range of its statement), in file order.
    blocks: Vec<(usize, Range<usize>)>,
}

impl Jumps<'_, '_> {
    fn text(&self, k: usize) -> &str {
        self.u.structure.text(k)
    }

    /// Whether token `k` is an identifier that starts a labelled statement (`name:`).
    fn is_label(&self, k: usize) -> bool {
        let toks = self.u.structure.toks;
        if toks[k].kind != TokKind::Ident
            || self.text(k + 1) != ":"
            || matches!(
                self.text(k),
                "default" | "public" | "private" | "protected" | "case"
            )
        {
            return false;
        }
        k.checked_sub(1).is_none_or(|p| {
            matches!(self.text(p), ";" | "{" | "}" | ":") || toks[p].kind == TokKind::PpLine
        })
    }

    /// The label `name` a `goto` at token `g` jumps to: the first one found in the innermost
    /// block around the `goto` that has one (labels are unique in a function).
    fn label_for(&self, g: usize, name: &str, labels: &HashMap<&str, Vec<usize>>) -> Option<usize> {
        let candidates = labels.get(name)?;
        let mut at = g;
        while let Some((open, close)) = self.u.structure.enclosing_brace(at) {
            let end = close.unwrap_or(usize::MAX);
            if let Some(&l) = candidates.iter().find(|&&l| open < l && l < end) {
                return Some(l);
            }
            at = open;
        }
        None
    }

    /// The `switch` keyword whose body holds the `case` label at token `c`.
    fn switch_of(&self, c: usize) -> Option<usize> {
        let st = &self.u.structure;
        let mut at = c;
        while let Some((open, _)) = st.enclosing_brace(at) {
            if let Some(close) = open.checked_sub(1).filter(|&p| self.text(p) == ")")
                && let Some(kw) = st.opener(close).and_then(|o| o.checked_sub(1))
            {
                match self.text(kw) {
                    "switch" => return Some(kw),
                    // A function body: the label is outside any switch.
                    w if st.toks[kw].kind == TokKind::Ident
                        && !matches!(w, "if" | "for" | "while") =>
                    {
                        return None;
                    }
                    _ => {}
                }
            }
            at = open;
        }
        None
    }

    /// Blocks that hold exactly one of tokens `a` and `b`, innermost first.
    fn crossed(&self, a: usize, b: usize) -> Vec<(usize, bool)> {
        let mut out: Vec<(usize, bool, usize)> = self
            .blocks
            .iter()
            .filter(|(_, r)| r.contains(&a) != r.contains(&b))
            .map(|(i, r)| (*i, r.contains(&b), r.len()))
            .collect();
        out.sort_by_key(|x| x.2);
        out.into_iter().map(|(i, into, _)| (i, into)).collect()
    }
}

/// Every jump across the boundary of a structured block: the construct stays unchanged.
pub fn check(u: &Unit) -> Vec<(usize, Diagnostic)> {
    let blocks: Vec<(usize, Range<usize>)> = (0..u.sites.len())
        .filter(|&i| u.dir(i).is_some_and(|d| has_block(&d.name)))
        .filter_map(|i| Some((i, u.stmts[i].as_ref()?.toks.clone())))
        .collect();
    let mut out = Vec::new();
    if blocks.is_empty() {
        return out;
    }
    let j = Jumps { u, blocks };
    let toks = u.structure.toks;
    let mut labels: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut gotos = Vec::new();
    let mut cases = Vec::new();
    for k in 0..toks.len() {
        match j.text(k) {
            "goto" if toks.get(k + 1).is_some_and(|t| t.kind == TokKind::Ident) => gotos.push(k),
            "case" => cases.push(k),
            "default" if j.text(k + 1) == ":" => cases.push(k),
            _ if j.is_label(k) => labels.entry(toks[k].text(u.src)).or_default().push(k),
            _ => {}
        }
    }
    let name = |i: usize| u.dir(i).map_or("", |d| d.name.as_str());
    let mut outer = Vec::new();
    for g in gotos {
        let label = j.text(g + 1);
        let Some(l) = j.label_for(g, label, &labels) else {
            continue;
        };
        let crossed = j.crossed(g, l);
        for (n, &(i, into)) in crossed.iter().enumerate() {
            // The innermost construct the jump crosses is reported at the jump, the ones
            // around it at their directive.
            if n > 0 {
                if !outer.contains(&i) {
                    outer.push(i);
                    let how = if into { "enters" } else { "leaves" };
                    out.push((
                        i,
                        Diagnostic::new(
                            u.at(i),
                            id::STRUCTURED_BLOCK_BRANCH,
                            format!(
                                "the 'goto' at line {} {how} the structured block of this 'acc {}' too, not only that of 'acc {}' (line {}); the directive is left unchanged",
                                u.line_at(toks[g].start),
                                name(i),
                                name(crossed[0].0),
                                u.line(crossed[0].0)
                            ),
                        ),
                    ));
                }
                continue;
            }
            let how = if into {
                format!(
                    "enters the structured block of 'acc {}' (line {}) from outside it: a construct may only be entered at its start (invalid entry to an OpenACC structured block)",
                    name(i),
                    u.line(i)
                )
            } else {
                format!(
                    "leaves the structured block of 'acc {}' (line {}) for the label '{label}' outside it: a construct may only be left at its end (invalid branch out of an OpenACC structured block)",
                    name(i),
                    u.line(i)
                )
            };
            out.push((
                i,
                Diagnostic::new(
                    toks[g].start,
                    id::STRUCTURED_BLOCK_BRANCH,
                    format!("this 'goto' {how}; the directive is left unchanged"),
                ),
            ));
        }
    }
    let mut seen = Vec::new();
    for c in cases {
        let Some(s) = j.switch_of(c) else { continue };
        for (i, into) in j.crossed(s, c) {
            if !into || seen.contains(&(s, i)) {
                continue;
            }
            seen.push((s, i));
            out.push((
                i,
                Diagnostic::new(
                    toks[s].start,
                    id::STRUCTURED_BLOCK_BRANCH,
                    format!(
                        "this 'switch' has a '{}' label (line {}) inside the structured block of 'acc {}' (line {}), which the switch is outside of: a construct may only be entered at its start (invalid entry to an OpenACC structured block); the directive is left unchanged",
                        j.text(c),
                        u.line_at(toks[c].start),
                        name(i),
                        u.line(i)
                    ),
                ),
            ));
        }
    }
    out
}
