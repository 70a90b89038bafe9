//! Branches into and out of OpenACC structured blocks: a `goto` whose label is on the other
//! side of a construct's boundary, and a `case`/`default` label inside a construct whose
//! `switch` is outside it. OpenACC enters a construct only at its start and leaves it only
//! at its end; the OpenMP translation would make the same jump just as invalid (or outline
//! the region and lose it), so the construct is left unchanged with an error at the jump.
//! The language's front end finds the jumps (`Syntax::jumps`), so this holds with or
//! without libclang.

use crate::diag::Diagnostic;
use crate::rules::id;
use crate::syntax::Jump;
use crate::unit::Unit;
use std::ops::Range;

/// Directives whose statement is a structured block.
fn has_block(name: &str) -> bool {
    matches!(
        name,
        "parallel" | "serial" | "kernels" | "data" | "host_data" | "loop"
    ) || name.ends_with(" loop")
}

/// Blocks that hold exactly one of tokens `a` and `b`, innermost first (`blocks`: site and
/// token range of its statement).
fn crossed(blocks: &[(usize, Range<usize>)], a: usize, b: usize) -> Vec<(usize, bool)> {
    let mut out: Vec<(usize, bool, usize)> = blocks
        .iter()
        .filter(|(_, r)| r.contains(&a) != r.contains(&b))
        .map(|(i, r)| (*i, r.contains(&b), r.len()))
        .collect();
    out.sort_by_key(|x| x.2);
    out.into_iter().map(|(i, into, _)| (i, into)).collect()
}

/// Every jump across the boundary of a structured block: the construct stays unchanged.
pub fn check(u: &Unit) -> Vec<(usize, Diagnostic)> {
    let blocks: Vec<(usize, Range<usize>)> = (0..u.sites.len())
        .filter(|&i| u.dir(i).is_some_and(|d| has_block(&d.name)))
        .filter_map(|i| Some((i, u.stmts[i].as_ref()?.toks())))
        .collect();
    let mut out = Vec::new();
    if blocks.is_empty() {
        return out;
    }
    let at = |t: usize| u.syntax.token_range(t).start;
    let name = |i: usize| u.dir(i).map_or("", |d| d.name.as_str());
    let jumps = u.syntax.jumps();
    let mut outer = Vec::new();
    for j in jumps {
        let Jump::Goto {
            from: g,
            to: l,
            label,
        } = j
        else {
            continue;
        };
        let (g, l) = (*g, *l);
        let crossed = crossed(&blocks, g, l);
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
                                u.line_at(at(g)),
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
                    at(g),
                    id::STRUCTURED_BLOCK_BRANCH,
                    format!("this 'goto' {how}; the directive is left unchanged"),
                ),
            ));
        }
    }
    let mut seen = Vec::new();
    for j in jumps {
        let Jump::Case {
            switch: s,
            label: c,
            word,
        } = j
        else {
            continue;
        };
        let (s, c) = (*s, *c);
        for (i, into) in crossed(&blocks, s, c) {
            if !into || seen.contains(&(s, i)) {
                continue;
            }
            seen.push((s, i));
            out.push((
                i,
                Diagnostic::new(
                    at(s),
                    id::STRUCTURED_BLOCK_BRANCH,
                    format!(
                        "this 'switch' has a '{}' label (line {}) inside the structured block of 'acc {}' (line {}), which the switch is outside of: a construct may only be entered at its start (invalid entry to an OpenACC structured block); the directive is left unchanged",
                        word,
                        u.line_at(at(c)),
                        name(i),
                        u.line(i)
                    ),
                ),
            ));
        }
    }
    out
}
