//! Gang loops whose control variable is narrower than `int` (`char`, `short`).
//!
//! GCC 12 computes the schedule of a `distribute` loop in the type of its control variable:
//! a number of teams that type cannot hold (256 teams for a `char`, 65536 for a `short`)
//! wraps, which divides by zero or hands iterations to the wrong teams. A region with such
//! a loop gets its teams bounded to what the type holds (`num_teams`); OpenACC's
//! `num_gangs` is an upper bound, and the loop has no more iterations than that anyway.

use super::Unit;
use super::loops::Decision;

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
                    .take_while(|&k| u.sites[k].span().start < pp.end)
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
    let (var, words) = match u.stmts[k].as_ref().and_then(|s| s.for_loop.as_ref()) {
        Some(f) => u.syntax.loop_variable(f)?,
        // In a macro body the statement is not in the file's token stream: read on.
        None if site.token().is_none() => u.syntax.loop_variable_after(site.span().end)?,
        None => return None,
    };
    // `for (i = 0; …)`: the type is where the variable is declared.
    let words = if words.is_empty() {
        u.declaration_words(k, &var)?
    } else {
        words
    };
    let has = |word: &str| words.iter().any(|w| w == word);
    if has("*") {
        return None;
    }
    let unsigned = has("unsigned");
    let (max, ty) = if has("char") {
        (if unsigned { 255 } else { 127 }, words.join(" "))
    } else if has("short") {
        (if unsigned { 65535 } else { 32767 }, words.join(" "))
    } else if let Some((m, w)) = words.iter().find_map(|w| fixed_width(w).map(|m| (m, w))) {
        (m, w.clone())
    } else if let Some(p) = words
        .iter()
        .find(|w| macro_params(u, k).iter().any(|m| m == *w))
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

/// The `#define` line whose body holds site `k` (its bytes).
fn enclosing_define(u: &Unit, k: usize) -> Option<std::ops::Range<usize>> {
    // A site of the token stream is not inside a macro.
    if u.sites[k].token().is_some() {
        return None;
    }
    u.syntax.macro_definition(u.sites[k].span().start)
}

/// The parameters of the function-like macro whose body holds site `k`, if any.
fn macro_params(u: &Unit, k: usize) -> Vec<String> {
    if u.sites[k].token().is_some() {
        return Vec::new();
    }
    u.syntax.macro_params(u.sites[k].span().start)
}
