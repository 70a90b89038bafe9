//! Functions and calls in C and C++ code (see `crate::syntax::Syntax`): which functions a
//! file defines and their bodies, which enclose a token, which calls a statement makes, the
//! OpenMP `declare target` regions and the tokens of OpenMP directives and queue routines.

use crate::hash::HashMap;
use crate::lex::{PpLines, TokKind};
use crate::structure::Structure;
use crate::syntax::Call;
use std::ops::Range;

/// Names of the functions defined in the file (`name(…) {`).
pub(super) fn defined_functions<'s>(st: &Structure<'s>) -> Vec<&'s str> {
    let toks = st.toks;
    let mut out = Vec::new();
    for (k, t) in toks.iter().enumerate() {
        if t.kind != TokKind::Punct || t.text(st.src) != "{" || k == 0 {
            continue;
        }
        if let Some(name) = function_name_before(st, k) {
            out.push(name);
        }
    }
    out
}

/// The bodies (the tokens inside the braces) of the functions defined at file scope, by
/// name, in order: read once per file (a question per call would read the file per call).
pub(super) fn function_bodies<'s>(st: &Structure<'s>) -> HashMap<&'s str, Vec<Range<usize>>> {
    let mut out: HashMap<&str, Vec<Range<usize>>> = HashMap::default();
    for (k, t) in st.toks.iter().enumerate() {
        if t.kind != TokKind::Punct || t.text(st.src) != "{" || st.enclosing_brace(k).is_some() {
            continue;
        }
        if let Some(name) = function_name_before(st, k)
            && let Some(close) = st.matching(k)
        {
            out.entry(name).or_default().push(k + 1..close - 1);
        }
    }
    out
}

/// For a `{` at token `k`: the name of the function whose body it opens.
fn function_name_before<'s>(st: &Structure<'s>, k: usize) -> Option<&'s str> {
    let toks = st.toks;
    let text = |k: usize| toks[k].text(st.src);
    let mut p = k;
    while p > 0
        && matches!(
            text(p - 1),
            "const" | "noexcept" | "override" | "final" | "mutable" | "volatile"
        )
    {
        p -= 1;
    }
    if p == 0 || text(p - 1) != ")" {
        return None;
    }
    let mut depth = 0i32;
    let mut q = p - 1;
    loop {
        match text(q) {
            ")" => depth += 1,
            "(" => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
        q = q.checked_sub(1)?;
    }
    let name = q.checked_sub(1)?;
    (toks[name].kind == TokKind::Ident
        && !matches!(text(name), "for" | "while" | "if" | "switch" | "catch"))
    .then(|| text(name))
}

/// Names of the functions whose bodies enclose token `t`, innermost first.
pub(super) fn enclosing_functions<'s>(st: &Structure<'s>, t: usize) -> Vec<&'s str> {
    let mut out = Vec::new();
    let mut at = t;
    while let Some((open, _)) = st.enclosing_brace(at) {
        out.extend(function_name_before(st, open));
        at = open;
    }
    out
}

/// Token indices of OpenMP `declare target` and `end declare target` lines, in order, with
/// how many `declare target` regions are open after each.
pub(super) fn declare_target_lines(st: &Structure) -> Vec<(usize, i32)> {
    let mut declare_target = Vec::new();
    for (k, tok) in st.toks.iter().enumerate() {
        if tok.kind != TokKind::PpLine {
            continue;
        }
        let words: Vec<&str> = tok
            .text(st.src)
            .split_whitespace()
            .map(|w| w.trim_start_matches('#'))
            .collect();
        match words.as_slice() {
            [.., "omp", "end", "declare", "target"] => declare_target.push((k, -1)),
            [.., "omp", "declare", "target"] => declare_target.push((k, 1)),
            _ => {}
        }
    }
    let mut open = 0;
    for (_, d) in &mut declare_target {
        open += *d;
        *d = open;
    }
    declare_target
}

/// The calls in tokens `r`: a name followed by `(` that is not a keyword or a builtin.
pub(super) fn calls_in(st: &Structure, r: Range<usize>) -> Vec<Call> {
    let toks = st.toks;
    r.filter_map(|k| {
        let (t, next) = (toks.get(k)?, toks.get(k + 1)?);
        let name = t.text(st.src);
        if t.kind != TokKind::Ident || next.text(st.src) != "(" {
            return None;
        }
        if matches!(
            name,
            "if" | "for"
                | "while"
                | "switch"
                | "return"
                | "sizeof"
                | "_Alignof"
                | "alignof"
                | "_Pragma"
                | "defined"
        ) || name.starts_with("__builtin")
        {
            return None;
        }
        let member = k > 0 && matches!(toks[k - 1].text(st.src), "." | "->");
        Some(Call {
            tok: k,
            name: name.to_string(),
            member,
            hidden: true,
        })
    })
    .collect()
}

/// Tokens naming a runtime routine with a queue argument (`acc_*_async`).
pub(super) fn async_calls(st: &Structure) -> Vec<usize> {
    // Such a name starts with `acc_`: only the tokens where those bytes start are read, not
    // every token of the file.
    holding(st, b"acc_")
        .filter(|&(at, k)| {
            let t = &st.toks[k];
            t.kind == TokKind::Ident && t.start() == at && t.text(st.src).ends_with("_async")
        })
        .map(|(_, k)| k)
        .collect()
}

/// Tokens that may start an OpenMP directive: `#pragma omp` lines, `_Pragma`, and a name
/// followed by `(omp` (a pragma wrapper macro).
pub(super) fn omp_directive_tokens(st: &Structure, pp: &PpLines) -> Vec<usize> {
    // Each such token holds `omp` or `_Pragma`, or is two before an `omp`: only the tokens
    // where those bytes stand are tested, not every token of the file.
    let src = st.src;
    let mut out: Vec<usize> = holding(st, b"omp")
        .flat_map(|(_, k)| [Some(k), k.checked_sub(2)])
        .chain(holding(st, b"_Pragma").map(|(_, k)| Some(k)))
        .flatten()
        .collect();
    out.sort_unstable();
    out.dedup();
    out.retain(|&k| omp_directive_token(st, pp, src, k));
    out
}

/// Whether token `k` may start an OpenMP directive (see [`omp_directive_tokens`]).
fn omp_directive_token(st: &Structure, pp: &PpLines, src: &str, k: usize) -> bool {
    let toks = st.toks;
    match toks[k].kind {
        TokKind::PpLine => {
            let inner = pp.head(src, &toks[k]);
            matches!(inner.as_ref(), [p, o, ..] if p.text(src) == "pragma" && o.text(src) == "omp")
        }
        TokKind::Ident => st.is(k, "_Pragma") || (st.is(k + 1, "(") && st.is(k + 2, "omp")),
        _ => false,
    }
}

/// Each place `needle` stands in the file's text, with the token holding it (none between
/// tokens: in a comment or blanks), in order.
fn holding<'s>(st: &'s Structure, needle: &'s [u8]) -> impl Iterator<Item = (usize, usize)> + 's {
    let toks = st.toks;
    memchr::memmem::find_iter(st.src.as_bytes(), needle).filter_map(move |at| {
        let k = toks.partition_point(|t| t.start() <= at).checked_sub(1)?;
        (at < toks[k].end()).then_some((at, k))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lex::lex;

    /// The scans of every token these searches replace.
    fn omp_directive_tokens_by_scan(st: &Structure, pp: &PpLines) -> Vec<usize> {
        (0..st.toks.len())
            .filter(|&k| omp_directive_token(st, pp, st.src, k))
            .collect()
    }

    fn async_calls_by_scan(st: &Structure) -> Vec<usize> {
        (st.toks.iter().enumerate())
            .filter(|(_, t)| {
                t.kind == TokKind::Ident && {
                    let w = t.text(st.src);
                    w.starts_with("acc_") && w.ends_with("_async")
                }
            })
            .map(|(k, _)| k)
            .collect()
    }

    /// The index of function bodies answers what a scan of every token per name found.
    #[test]
    fn function_bodies_are_those_a_scan_per_name_finds() {
        let by_scan = |st: &Structure, name: &str| -> Vec<Range<usize>> {
            (0..st.toks.len())
                .filter(|&k| st.text(k) == "{" && st.enclosing_brace(k).is_none())
                .filter(|&k| function_name_before(st, k) == Some(name))
                .filter_map(|k| Some(k + 1..st.matching(k)? - 1))
                .collect()
        };
        for src in [
            "static int sq(int x) { return x * x; }\nint g(void) { for (int i = 0; i < 2; i++) { sq(i); } return 0; }\n",
            "#if A\nvoid f(int n) { n++; }\n#else\nvoid f(int n) { n--; }\n#endif\nvoid h(void) { f(1); }\n",
            "struct S { int m(void) const { return 1; } };\nint S2::k(int a) noexcept { if (a) { return a; } return 0; }\n",
            "void f(void) { int (*p)(int) = 0; { } }\nvoid f(void);\nvoid f(void) { }\n",
            "int x = 1; void broken( { }\n",
        ] {
            let toks = lex(src);
            let st = Structure::new(src, &toks, &[]);
            let index = function_bodies(&st);
            for name in ["sq", "g", "f", "h", "m", "k", "broken", "x", "missing"] {
                let got = index.get(name).cloned().unwrap_or_default();
                assert_eq!(got, by_scan(&st, name), "{name} in {src:?}");
            }
        }
    }

    #[test]
    fn searched_tokens_are_those_every_token_scanned_finds() {
        let pieces = [
            "#pragma omp parallel\n",
            "#pragma acc parallel loop\n",
            "# pragma  omp for\n",
            "#pragma ompx\n",
            "#pragma\\\n omp target\n",
            "#pragma somp\n",
            "#define P(x) _Pragma(#x)\n",
            "_Pragma(\"omp barrier\") ",
            "P(omp barrier) ",
            "P (omp) ",
            "(omp) ",
            "omp ",
            "x_Pragma ",
            "_Pragmas ",
            "compute(a, b); ",
            "/* omp _Pragma acc_x_async */ ",
            "\"omp\" ",
            "acc_copyin_async(a, n, 1); ",
            "xacc_wait_async(1); ",
            "acc_wait_async; ",
            "acc_async_test(1); ",
            "my_acc_update_async(1); ",
            "// acc_wait_async\n",
            "{ int omp = 1; f(omp); }\n",
            "a(",
            ")",
            "\n",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let (mut omp, mut calls) = (0, 0);
        for n in 0..400 {
            let mut src = String::new();
            for _ in 0..n % 40 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                src.push_str(pieces[(seed % pieces.len() as u64) as usize]);
            }
            let toks = lex(&src);
            let st = Structure::new(&src, &toks, &[]);
            let pp = PpLines::new(&src, &toks);
            assert_eq!(
                omp_directive_tokens(&st, &pp),
                omp_directive_tokens_by_scan(&st, &pp),
                "{src:?}"
            );
            assert_eq!(async_calls(&st), async_calls_by_scan(&st), "{src:?}");
            omp += omp_directive_tokens(&st, &pp).len();
            calls += async_calls(&st).len();
        }
        assert!(omp > 100 && calls > 100, "{omp} {calls}");
    }
}
