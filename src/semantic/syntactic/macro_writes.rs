//! Which parameters a function-like macro of the file assigns: `#define SET(x, v) x = v`
//! writes its first argument, which a call `SET(t, 1)` spells as a plain argument. Read by
//! the syntactic facts, which see the call, not its expansion.

use crate::lex::{ASSIGNMENT_OPS, TokKind, lex};

/// For the text after a macro's name (`(x, v) x = v`): the indexes of the parameters its
/// body assigns, increments, decrements or takes the address of; None for an object-like
/// macro or one whose parameter list cannot be read.
pub(super) fn written_params(after_name: &str) -> Option<Vec<usize>> {
    let list = after_name.strip_prefix('(')?;
    let close = list.find(')')?;
    let params: Vec<&str> = list[..close].split(',').map(str::trim).collect();
    let body = &list[close + 1..];
    let toks = lex(body);
    let text = |k: usize| toks.get(k).map_or("", |t| t.text(body));
    let mut out = Vec::new();
    for (k, t) in toks.iter().enumerate() {
        if t.kind != TokKind::Ident {
            continue;
        }
        let Some(p) = params.iter().position(|p| *p == t.text(body)) else {
            continue;
        };
        // The operand around the parameter: `(x)` as the hygienic style writes it, then
        // subscripts and members (`x[i] = 0`, `x.f = 0` write the argument's object).
        let (mut s, mut e) = (k, k + 1);
        while s > 0 && text(s - 1) == "(" && text(e) == ")" {
            s -= 1;
            e += 1;
        }
        loop {
            match text(e) {
                "[" => {
                    let mut depth = 0;
                    while e < toks.len() {
                        match text(e) {
                            "[" => depth += 1,
                            "]" => depth -= 1,
                            _ => {}
                        }
                        e += 1;
                        if depth == 0 {
                            break;
                        }
                    }
                }
                "." => e += 2,
                _ => break,
            }
        }
        let next = text(e);
        let prev = s.checked_sub(1).map_or("", text);
        if ASSIGNMENT_OPS.contains(&next)
            || matches!(next, "++" | "--")
            || matches!(prev, "++" | "--" | "&")
        {
            out.push(p);
        }
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assigned_parameters_are_found_in_any_style() {
        assert_eq!(written_params("(x, v) x = v"), Some(vec![0]));
        assert_eq!(written_params("(x, v) ((x) = (v))"), Some(vec![0]));
        assert_eq!(
            written_params("(a, b) { double t = a; a = b; b = t; }"),
            Some(vec![0, 1])
        );
        assert_eq!(written_params("(x) (x)++"), Some(vec![0]));
        assert_eq!(written_params("(p, x) f(&x, p)"), Some(vec![1]));
        assert_eq!(written_params("(a, i) a[(i) + 1] = 0"), Some(vec![0]));
        assert_eq!(written_params("(s, v) s.f += v"), Some(vec![0]));
        // Read only: comparisons, arithmetic, `==`.
        assert_eq!(
            written_params("(a, b) ((a) > (b) ? (a) : (b))"),
            Some(vec![])
        );
        assert_eq!(written_params("(a, b) ((a) == (b))"), Some(vec![]));
        assert_eq!(written_params(" 4096"), None);
    }
}
