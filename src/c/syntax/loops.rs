//! Loops and the statements around them in C and C++ (see `crate::syntax::Syntax`).

use crate::hash::HashMap;
use crate::lex::{PpLines, TokKind, Token, lex_range};
use crate::region::ForLoop;
use crate::structure::Structure;
use std::ops::Range;

/// The statements nested in the statement at `s` that is not a loop, and whether each runs
/// repeatedly: a block's statements, the branches of an `if`, the body of a `while` or `do`.
pub(super) fn nested_statements(st: &Structure, s: usize) -> Vec<(usize, bool)> {
    let Some(end) = st.stmt_end(s) else {
        return Vec::new();
    };
    match st.text(s) {
        "{" => st
            .statements_in(&(s..end))
            .into_iter()
            .map(|c| (c, false))
            .collect(),
        "if" | "while" => {
            let open = st.skip_pp(s + 1);
            let Some(body) = st.matching(open) else {
                return Vec::new();
            };
            let Some(body_end) = st.stmt_end(body) else {
                return Vec::new();
            };
            let is_if = st.text(s) == "if";
            let mut out = vec![(body, !is_if)];
            let e = st.skip_pp(body_end);
            if is_if && e < end && st.text(e) == "else" {
                out.push((e + 1, false));
            }
            out
        }
        "do" => vec![(s + 1, true)],
        _ => Vec::new(),
    }
}

/// The loop that is the whole body of loop `outer` (inside braces or not).
pub(super) fn inner_loop(st: &Structure, outer: &ForLoop) -> Option<ForLoop> {
    let braced = usize::from(st.text(outer.body().start) == "{");
    st.for_loop_at(st.skip_pp(outer.body().start + braced))
}

/// The `for` tokens of the file by the control variable their init names (assigned or
/// declared), in token order.
pub(super) fn loops_by_var(st: &Structure) -> HashMap<String, Vec<u32>> {
    let mut out: HashMap<String, Vec<u32>> = HashMap::default();
    for k in 0..st.toks.len() {
        if !st.is(k, "for") {
            continue;
        }
        let toks = &st.toks[k..];
        if let Some((var, _)) = loop_variable(st.src, &toks[..toks.len().min(24)])
            && let Ok(k) = u32::try_from(k)
        {
            out.entry(var).or_default().push(k);
        }
    }
    out
}

/// The innermost `for` loop whose body holds token `t` and whose control variable is
/// `var`, of those `by_var` lists (from [`loops_by_var`]): searched back from `t` to the
/// start of the function around it.
pub(super) fn loop_around(
    st: &Structure,
    by_var: &HashMap<String, Vec<u32>>,
    t: usize,
    var: &str,
) -> Option<ForLoop> {
    let fors = by_var.get(var)?;
    let from = super::blocks::function_first_token(st, t).unwrap_or(0);
    let before = fors.partition_point(|&k| (k as usize) < t);
    fors[..before]
        .iter()
        .rev()
        .map(|&k| k as usize)
        .take_while(|&k| k >= from)
        .filter_map(|k| st.for_loop_at(k))
        .find(|f| f.body().contains(&t) && f.var.as_deref() == Some(var))
}

/// The first name of `names` in the header of loop `f` (its init, condition and step).
pub(super) fn header_mentions(st: &Structure, f: &ForLoop, names: &[&str]) -> Option<usize> {
    let head = f.for_tok() + 2..f.body().start.saturating_sub(1);
    head.clone()
        .find(|&j| st.toks[j].kind == TokKind::Ident && names.contains(&st.text(j)))
}

/// The control variable of the `for` loop in `toks` (from its `for`), and the words of its
/// declaration in the init (empty when the init assigns it).
pub(super) fn loop_variable(src: &str, toks: &[Token]) -> Option<(String, Vec<String>)> {
    let text = |t: &Token| t.text(src);
    if toks.first().map(text) != Some("for") || toks.get(1).map(text) != Some("(") {
        return None;
    }
    // The init's words, up to its `=` (or the header's end): sliced, not collected.
    let init = &toks[2..];
    let n = init
        .iter()
        .position(|t| matches!(text(t), "=" | ";" | "{" | ":" | ")"))
        .unwrap_or(init.len());
    let (var, words) = init[..n].split_last()?;
    Some((
        text(var).to_string(),
        words.iter().map(|w| text(w).to_string()).collect(),
    ))
}

/// [`loop_variable`] of the loop at token `f`.
pub(super) fn loop_variable_at(st: &Structure, f: &ForLoop) -> Option<(String, Vec<String>)> {
    let toks = &st.toks[f.for_tok()..];
    loop_variable(st.src, &toks[..toks.len().min(24)])
}

/// [`loop_variable`] of a loop in a macro body, read from the text after byte `from`.
pub(super) fn loop_variable_after(src: &str, from: usize) -> Option<(String, Vec<String>)> {
    let end = (from + 600).min(src.len());
    loop_variable(src, &lex_range(src, from..end, false))
}

/// The `#define` line whose body holds byte `at`.
pub(super) fn macro_definition(st: &Structure, pp: &PpLines, at: usize) -> Option<Range<usize>> {
    let toks = st.toks;
    let line = toks[toks.partition_point(|t| t.start() <= at).checked_sub(1)?];
    let define = line.kind == TokKind::PpLine
        && line.end() > at
        && pp.directive(st.src, &line) == Some("define");
    define.then(|| line.range())
}

/// The parameters of the function-like macro whose body holds byte `at`.
pub(super) fn macro_params(st: &Structure, pp: &PpLines, at: usize) -> Vec<String> {
    let Some(r) = macro_definition(st, pp, at) else {
        return Vec::new();
    };
    let k = st.toks.partition_point(|t| t.start() < r.start);
    let inner = pp.inner(st.src, &st.toks[k]);
    let words: Vec<&str> = inner.iter().map(|t| t.text(st.src)).collect();
    // `define NAME(` with the parenthesis right after the name.
    match (inner.get(1), inner.get(2)) {
        (Some(name), Some(open)) if open.start() == name.end() && open.text(st.src) == "(" => words
            [3..]
            .iter()
            .take_while(|w| **w != ")")
            .filter(|w| **w != ",")
            .map(|w| w.to_string())
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `loop_variable` as it was, collecting the init's words first.
    fn old_loop_variable(src: &str, toks: &[Token]) -> Option<(String, Vec<String>)> {
        let text = |t: &Token| t.text(src);
        if toks.first().map(text) != Some("for") || toks.get(1).map(text) != Some("(") {
            return None;
        }
        let init: Vec<&str> = toks[2..]
            .iter()
            .map(text)
            .take_while(|t| !matches!(*t, "=" | ";" | "{" | ":" | ")"))
            .collect();
        let (var, words) = init.split_last()?;
        Some((
            var.to_string(),
            words.iter().map(|w| w.to_string()).collect(),
        ))
    }

    /// The line of the loop `loop_around` finds for the token `at` (a word of the source),
    /// with variable `var`.
    fn around(src: &str, at: &str, var: &str) -> Option<usize> {
        let toks = crate::lex::lex(src);
        let st = Structure::new(src, &toks, &[]);
        let by_var = loops_by_var(&st);
        let t = (0..toks.len()).find(|&k| st.text(k) == at).unwrap();
        let f = loop_around(&st, &by_var, t, var)?;
        Some(src[..toks[f.for_tok()].start()].matches('\n').count() + 1)
    }

    #[test]
    fn loop_around_finds_the_innermost_enclosing_loop_of_the_variable() {
        let src = "void f(int n) {\n\
                   int i, j;\n\
                   for (i = 0; i < n; i++) {\n\
                     for (int i = 0; i < 2; i++)\n\
                       for (j = 0; j < n; j++)\n\
                         HERE;\n\
                     for (j = 0; j < n; j++) g();\n\
                     THERE;\n\
                   }\n\
                   AFTER;\n\
                   }\n";
        // The innermost of two loops of `i`, through a body without braces.
        assert_eq!(around(src, "HERE", "i"), Some(4));
        assert_eq!(around(src, "HERE", "j"), Some(5));
        // A loop before, not around.
        assert_eq!(around(src, "THERE", "j"), None);
        assert_eq!(around(src, "THERE", "i"), Some(3));
        assert_eq!(around(src, "AFTER", "i"), None);
        assert_eq!(around(src, "HERE", "k"), None);
    }

    #[test]
    fn loop_variable_matches_the_collecting_read() {
        for src in [
            "for (int i = 0; i < n; i++)",
            "for (i = 0; i < n; i++)",
            "for (unsigned long long k=0;;)",
            "for (;;)",
            "for (auto &x : v)",
            "for (int i",
            "for (",
            "for",
            "for (const std::size_t j{0}; j < n; ++j)",
            "for (x)",
            "while (i < n)",
            "",
        ] {
            let toks = crate::lex::lex(src);
            for n in 0..=toks.len() {
                assert_eq!(
                    loop_variable(src, &toks[..n]),
                    old_loop_variable(src, &toks[..n]),
                    "{src} ({n} tokens)"
                );
            }
        }
    }
}
