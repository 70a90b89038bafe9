//! The bounds of sub-arrays read by the bytes of one-byte tokens, against the same read
//! comparing token texts (as it was) on generated items.

use super::*;

/// `section_bounds_lexed` as it was, comparing token texts.
fn old_section_bounds_lexed<'s>(
    src: &'s str,
    toks: &[Token],
) -> Vec<(usize, &'s str, Option<&'s str>)> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut open = None;
    let mut colon = None;
    for t in toks {
        match t.text(src) {
            "[" | "(" | "{" => {
                if depth == 0 && t.text(src) == "[" {
                    open = Some(t.end());
                    colon = None;
                }
                depth += 1;
            }
            ":" if depth == 1 && open.is_some() => colon = Some(t.start()),
            "]" | ")" | "}" => {
                depth = depth.saturating_sub(1);
                if depth == 0
                    && let Some(o) = open.take()
                {
                    match colon {
                        Some(c) => out.push((o, &src[o..c], Some(&src[c + 1..t.start()]))),
                        None => out.push((o, &src[o..t.start()], None)),
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Items of tokens that the checks tell apart (brackets, `:`, `?`, `,`, words, numbers,
/// literals, multi-byte operators), joined with and without blanks.
fn items() -> Vec<String> {
    const PIECES: [&str; 24] = [
        "a", "n", "0", "-", "3", "[", "]", "(", ")", "{", "}", ":", "?", ",", "*", "->", "::",
        "\"s\"", "1.5", "sizeof", "const", "+", "&&", "#x",
    ];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        usize::try_from(state % n as u64).unwrap_or(0)
    };
    let mut out: Vec<String> = ["a[0:n]", "a[ - 3 : 5 ]", "a[0:-1][1:2]", "a[c ? 1 : 2:n]"]
        .map(String::from)
        .to_vec();
    for _ in 0..20_000 {
        let len = 1 + next(9);
        let mut s = String::new();
        for _ in 0..len {
            s.push_str(PIECES[next(PIECES.len())]);
            if next(3) == 0 {
                s.push(' ');
            }
        }
        out.push(s);
    }
    out
}

#[test]
fn section_bounds_by_byte_match_those_by_text() {
    for s in items() {
        let src = format!("x({s})");
        let item = Item::new(s.as_str(), 2..2 + s.len());
        let toks = lex_range(&src, item.span(), false);
        let bounds = old_section_bounds_lexed(&src, &toks);
        assert_eq!(section_bounds_lexed(&src, &toks), bounds, "{s}");
        // A break stops at the first bound it breaks at.
        let first_len = each_section_bound(&src, &toks, |b| match b.2 {
            Some(_) => ControlFlow::Break(b.0),
            None => ControlFlow::Continue(()),
        });
        let want = bounds.iter().find(|b| b.2.is_some()).map(|b| b.0);
        assert_eq!(first_len.break_value(), want, "{s}");
    }
}
