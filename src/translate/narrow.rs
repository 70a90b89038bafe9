//! Gang loops whose control variable is narrower than `int` (`char`, `short`).
//!
//! GCC 12 computes the schedule of a `distribute` loop in the type of its control variable:
//! a number of teams that type cannot hold (256 teams for a `char`, 65536 for a `short`)
//! wraps, which divides by zero or hands iterations to the wrong teams. A region with such
//! a loop gets its teams bounded to what the type holds (`num_teams`); OpenACC's
//! `num_gangs` is an upper bound, and the loop has no more iterations than that anyway.

use super::Unit;
use super::loops::Decision;
use crate::lex::{TokKind, Token, lex_range};

/// What bounds the teams of a region: the largest count, the loop site and why.
#[derive(Debug, Clone)]
pub struct TeamsBound {
    pub max: u32,
    pub site: usize,
    pub why: String,
}

/// The tightest bound among the gang loops of compute construct `c` (itself, when combined).
/// In a macro body, where nesting is not known, the loop sites that follow `c` in the same
/// macro up to the next compute construct.
pub fn teams_bound(u: &Unit, c: usize, dec: &super::loops::Decisions) -> Option<TeamsBound> {
    let gang = |k: usize| match dec[k].as_ref().map(|x| (&x.decision, x.compute)) {
        Some((Decision::Par(l), compute)) => l.gang && (k == c || compute == Some(c)),
        Some((Decision::Orphan, _)) => u.dir(k).is_some_and(|d| d.has("gang")),
        _ => false,
    };
    let sites: Vec<usize> = match enclosing_define(u, c) {
        Some(pp) => std::iter::once(c)
            .chain(
                (c + 1..u.sites.len())
                    .take_while(|&k| u.sites[k].span.start < pp.end)
                    .take_while(|&k| u.dir(k).is_none_or(|d| d.compute_kind().is_none())),
            )
            .collect(),
        None => std::iter::once(c).chain(u.descendants(c)).collect(),
    };
    sites
        .into_iter()
        .filter(|&k| gang(k))
        .filter_map(|k| loop_bound(u, k))
        .min_by_key(|b| b.max)
}

/// The bound from the control variable of the loop that follows loop site `k`.
fn loop_bound(u: &Unit, k: usize) -> Option<TeamsBound> {
    let site = &u.sites[k];
    let toks: Vec<Token> = match u.stmts[k].as_ref().and_then(|s| s.for_loop.as_ref()) {
        Some(f) => u.structure.toks[f.for_tok..]
            .iter()
            .take(24)
            .copied()
            .collect(),
        // In a macro body the statement is not in the file's token stream: read on.
        None if site.token.is_none() => {
            let end = (site.span.end + 600).min(u.src.len());
            lex_range(u.src, site.span.end..end, false)
        }
        None => return None,
    };
    let text = |t: &Token| t.text(u.src);
    if toks.first().map(text) != Some("for") || toks.get(1).map(text) != Some("(") {
        return None;
    }
    let init: Vec<&str> = toks[2..]
        .iter()
        .map(text)
        .take_while(|t| !matches!(*t, "=" | ";" | "{" | ":" | ")"))
        .collect();
    let (var, words) = init.split_last()?;
    // `for (i = 0; …)`: the type is where the variable is declared.
    let declared;
    let words = if words.is_empty() {
        declared = u.declaration_words(k, var)?;
        &declared[..]
    } else {
        words
    };
    if words.contains(&"*") {
        return None;
    }
    let unsigned = words.contains(&"unsigned");
    let (max, ty) = if words.contains(&"char") {
        (if unsigned { 255 } else { 127 }, words.join(" "))
    } else if words.contains(&"short") {
        (if unsigned { 65535 } else { 32767 }, words.join(" "))
    } else if let Some((m, w)) = words.iter().find_map(|w| fixed_width(w).map(|m| (m, *w))) {
        (m, w.to_string())
    } else if let Some(p) = words
        .iter()
        .find(|w| macro_params(u, k).iter().any(|m| m == **w))
    {
        // A macro parameter: any type may come in; bound for the narrowest.
        return Some(TeamsBound {
            max: 127,
            site: k,
            why: format!(
                "the type of the loop variable '{var}' is the macro parameter '{p}', which may be a 'char'"
            ),
        });
    } else {
        return None;
    };
    Some(TeamsBound {
        max,
        site: k,
        why: format!("the loop variable '{var}' has type '{ty}'"),
    })
}

fn fixed_width(w: &str) -> Option<u32> {
    match w {
        "int8_t" | "int_least8_t" | "int_fast8_t" => Some(127),
        "uint8_t" | "uint_least8_t" | "uint_fast8_t" => Some(255),
        "int16_t" | "int_least16_t" => Some(32767),
        "uint16_t" | "uint_least16_t" => Some(65535),
        _ => None,
    }
}

/// The `#define` line whose body holds site `k`.
fn enclosing_define(u: &Unit, k: usize) -> Option<Token> {
    // A site of the token stream is not inside a macro.
    if u.sites[k].token.is_some() {
        return None;
    }
    let at = u.sites[k].span.start;
    let toks = u.structure.toks;
    let pp = toks[toks.partition_point(|t| t.start <= at).checked_sub(1)?];
    let define =
        pp.kind == TokKind::PpLine && pp.end > at && u.pp.directive(u.src, &pp) == Some("define");
    define.then_some(pp)
}

/// The parameters of the function-like macro whose body holds site `k`, if any.
fn macro_params(u: &Unit, k: usize) -> Vec<String> {
    let Some(pp) = enclosing_define(u, k) else {
        return Vec::new();
    };
    let inner = u.pp.inner(u.src, &pp);
    let words: Vec<&str> = inner.iter().map(|t| t.text(u.src)).collect();
    // `define NAME(` with the parenthesis right after the name.
    match (inner.get(1), inner.get(2)) {
        (Some(name), Some(open)) if open.start == name.end && open.text(u.src) == "(" => words[3..]
            .iter()
            .take_while(|w| **w != ")")
            .filter(|w| **w != ",")
            .map(|w| w.to_string())
            .collect(),
        _ => Vec::new(),
    }
}
