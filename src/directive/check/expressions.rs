//! Argument expressions, checked as text in the directive's language: an operand where an
//! operator must be (`num_gangs(1 i)`), an operator with nothing after it, a stray `:`; and
//! the bounds of sub-arrays read as text.

use super::Dialect;
use crate::directive::Item;
use crate::lex::{TokKind, Token, lex_range};
use std::ops::ControlFlow;

#[cfg(test)]
mod oracle_tests;

/// Words that may precede another word or a literal in an expression (`sizeof x`,
/// `(unsigned int) x`, `(struct s *) p`).
const LEADING_WORDS: [&str; 24] = [
    "sizeof",
    "alignof",
    "_Alignof",
    "__alignof__",
    "typeof",
    "__typeof__",
    "decltype",
    "const",
    "volatile",
    "struct",
    "union",
    "enum",
    "class",
    "typename",
    "signed",
    "unsigned",
    "short",
    "long",
    "int",
    "char",
    "new",
    "delete",
    "template",
    "operator",
];

/// Whether `t` is an operand token (a word, a number or a literal).
fn operand(t: &Token) -> bool {
    matches!(t.kind, TokKind::Ident | TokKind::Number | TokKind::Literal)
}

/// A problem with the expression `src[item]`, which must be C: two operands without an
/// operator between them, an operator with nothing after it, a stray `:`.
/// `star_ok`: a lone `*` is a valid item (`tile(*)`, `gang(static:*)`, `device_type(*)`).
pub fn malformed(src: &str, item: &Item, star_ok: bool) -> Option<(usize, String)> {
    malformed_lexed(src, item, &lex_range(src, item.span(), false), star_ok)
}

/// [`malformed`] of an item whose tokens `toks` are already lexed.
fn malformed_lexed(
    src: &str,
    item: &Item,
    toks: &[Token],
    star_ok: bool,
) -> Option<(usize, String)> {
    if star_ok && toks.len() == 1 && toks[0].text(src) == "*" {
        return None;
    }
    if !toks.iter().any(operand) {
        return Some((
            item.span().start,
            format!("expected an expression, not '{}'", item.text),
        ));
    }
    let text = |t: &Token| t.text(src);
    let mut stack = Levels::new();
    for (k, t) in toks.iter().enumerate() {
        let prev = k.checked_sub(1).map(|p| &toks[p]);
        let tx = text(t);
        if t.kind == TokKind::PpLine {
            return Some((t.start(), "unexpected '#' in a clause argument".into()));
        }
        if let Some(p) = prev {
            let pt = text(p);
            let words = operand(p)
                && matches!(t.kind, TokKind::Ident | TokKind::Number)
                && !(p.kind == TokKind::Ident && LEADING_WORDS.contains(&pt))
                && !(t.kind == TokKind::Ident && matches!(tx, "const" | "volatile"));
            let after_close = pt == "]" && matches!(t.kind, TokKind::Ident | TokKind::Number);
            let number_call = p.kind != TokKind::Ident && p.kind != TokKind::Punct && tx == "(";
            if words || after_close || number_call {
                return Some((
                    t.start(),
                    format!("expected an operator or ')' between '{pt}' and '{tx}'"),
                ));
            }
        }
        if t.kind != TokKind::Punct {
            continue;
        }
        match tx {
            "(" | "[" | "{" => stack.push((tx, false, 0)),
            ")" | "]" | "}" => {
                // `a[0:]`, `a[:]`: a section's bounds may be left out.
                let open_section = tx == "]" && stack.last_mut().1;
                if let Some(p) =
                    prev.filter(|p| dangling(text(p)) && !(open_section && text(p) == ":"))
                {
                    return Some((
                        p.start(),
                        format!("expected an expression after '{}'", text(p)),
                    ));
                }
                if stack.len() > 1 {
                    stack.pop();
                }
            }
            "?" => stack.last_mut().2 += 1,
            ":" => {
                let top = stack.last_mut();
                if top.2 > 0 {
                    top.2 -= 1;
                } else if top.0 == "[" && !top.1 {
                    top.1 = true;
                } else {
                    return Some((t.start(), "unexpected ':' in a clause argument".into()));
                }
            }
            "," if stack.len() == 1 => {
                return Some((t.start(), "unexpected ','".into()));
            }
            _ => {}
        }
    }
    match toks.last() {
        Some(t) if t.kind == TokKind::Punct && dangling(text(t)) => Some((
            t.start(),
            format!("expected an expression after '{}'", text(t)),
        )),
        _ => None,
    }
}

/// An open bracket of an item (the item itself first): its text, whether a `:` was seen in
/// it, the count of `?` waiting for their `:`.
type Level<'s> = (&'s str, bool, usize);

/// The open brackets of an item, innermost last: the first eight held inline (an item
/// seldom nests deeper), so most items are checked without an allocation.
struct Levels<'s> {
    inline: [Level<'s>; 8],
    len: usize,
    deeper: Vec<Level<'s>>,
}

impl<'s> Levels<'s> {
    /// The item's own level only.
    fn new() -> Self {
        Levels {
            inline: [("", false, 0); 8],
            len: 1,
            deeper: Vec::new(),
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn push(&mut self, level: Level<'s>) {
        match self.inline.get_mut(self.len) {
            Some(slot) => *slot = level,
            None => self.deeper.push(level),
        }
        self.len += 1;
    }

    /// Close the innermost bracket (the item's own level stays).
    fn pop(&mut self) {
        if self.len > 1 {
            self.len -= 1;
            if self.len >= self.inline.len() {
                self.deeper.pop();
            }
        }
    }

    fn last_mut(&mut self) -> &mut Level<'s> {
        match self.deeper.last_mut() {
            Some(top) => top,
            None => &mut self.inline[self.len - 1],
        }
    }
}

/// [`malformed`] for the directive's dialect.
pub(super) fn malformed_in(
    src: &str,
    item: &Item,
    star_ok: bool,
    dialect: Dialect,
) -> Option<(usize, String)> {
    match dialect {
        Dialect::C => malformed(src, item, star_ok),
        Dialect::Fortran => malformed_fortran(src, item, star_ok),
    }
}

/// [`malformed_in`] of an item whose C tokens `toks` are already lexed (a Fortran item is
/// lexed as Fortran).
pub(super) fn malformed_in_lexed(
    src: &str,
    item: &Item,
    toks: &[Token],
    star_ok: bool,
    dialect: Dialect,
) -> Option<(usize, String)> {
    match dialect {
        Dialect::C => malformed_lexed(src, item, toks, star_ok),
        Dialect::Fortran => malformed_fortran(src, item, star_ok),
    }
}

/// A problem with the Fortran expression `src[item]`: two operands without an operator
/// between them, an operator with nothing after it, a `:` outside parentheses, `%` not
/// followed by a component name. A common block name (`/blk/`) is an item too.
pub fn malformed_fortran(src: &str, item: &Item, star_ok: bool) -> Option<(usize, String)> {
    use crate::fortran::lex::{TokKind as F, lex_text};
    let text = item.text.trim();
    if star_ok && text == "*" {
        return None;
    }
    if let Some(name) = text.strip_prefix('/').and_then(|t| t.strip_suffix('/'))
        && crate::lex::is_identifier(name.trim())
    {
        return None;
    }
    let toks = lex_text(src, item.span());
    let operand = |k: F| matches!(k, F::Name | F::Int | F::Real | F::Str | F::Logical);
    if !toks.iter().any(|t| operand(t.kind())) {
        return Some((
            item.span().start,
            format!("expected an expression, not '{}'", item.text),
        ));
    }
    let text = |i: usize| &src[toks[i].start()..toks[i].end()];
    // An operator needs an operand after it; `:` may end a section bound (`a(1:)`).
    let dangling = |i: usize| {
        (toks[i].kind() == F::DotOp || toks[i].kind() == F::Punct)
            && !matches!(text(i), "(" | ")" | "[" | "]" | ":" | "*" | ",")
    };
    let mut depth = 0usize;
    for i in 0..toks.len() {
        let t = toks[i];
        if let Some(p) = i.checked_sub(1) {
            let adjacent = (operand(toks[p].kind()) || text(p) == ")") && operand(t.kind());
            if adjacent {
                return Some((
                    t.start(),
                    format!(
                        "expected an operator or ')' between '{}' and '{}'",
                        text(p),
                        text(i)
                    ),
                ));
            }
            if matches!(text(i), ")" | ",") && (dangling(p) || text(p) == "*") {
                return Some((
                    toks[p].start(),
                    format!("expected an expression after '{}'", text(p)),
                ));
            }
            if text(p) == "%" && t.kind() != F::Name {
                return Some((t.start(), "expected a component name after '%'".into()));
            }
        }
        match text(i) {
            "(" | "[" => depth += 1,
            ")" | "]" => depth = depth.saturating_sub(1),
            ":" if depth == 0 => {
                return Some((t.start(), "unexpected ':' in a clause argument".into()));
            }
            "," if depth == 0 => return Some((t.start(), "unexpected ','".into())),
            _ => {}
        }
    }
    let last = toks.len() - 1;
    (dangling(last) || text(last) == "*").then(|| {
        (
            toks[last].start(),
            format!("expected an expression after '{}'", text(last)),
        )
    })
}

/// An operator that needs an operand after it (`*` and `&` end pointer types in casts).
fn dangling(op: &str) -> bool {
    !matches!(
        op,
        "(" | "[" | "{" | ")" | "]" | "}" | "++" | "--" | "*" | "&" | "&&"
    ) && op
        .chars()
        .all(|c| !c.is_alphanumeric() && c != '_' && c != '"' && c != '\'')
}

/// The bounds of each `[lo:len]` of a sub-array item, as text.
pub fn section_bounds<'s>(src: &'s str, item: &Item) -> Vec<(usize, &'s str, Option<&'s str>)> {
    section_bounds_lexed(src, &lex_range(src, item.span(), false))
}

/// [`section_bounds`] of an item whose tokens are `toks`.
fn section_bounds_lexed<'s>(
    src: &'s str,
    toks: &[Token],
) -> Vec<(usize, &'s str, Option<&'s str>)> {
    let mut out = Vec::new();
    let _: ControlFlow<()> = each_section_bound(src, toks, |b| {
        out.push(b);
        ControlFlow::Continue(())
    });
    out
}

/// Each of [`section_bounds_lexed`] passed to `f` until it breaks: every clause item is
/// checked for a negative length without a vector of its bounds.
pub(super) fn each_section_bound<'s, B>(
    src: &'s str,
    toks: &[Token],
    mut f: impl FnMut((usize, &'s str, Option<&'s str>)) -> ControlFlow<B>,
) -> ControlFlow<B> {
    let mut depth = 0usize;
    let mut open = None;
    let mut colon = None;
    for t in toks {
        // Told apart by the byte of one-byte tokens, without slicing and comparing texts.
        let one_byte = (t.end() == t.start() + 1).then(|| src.as_bytes()[t.start()]);
        match one_byte {
            Some(b @ (b'[' | b'(' | b'{')) => {
                if depth == 0 && b == b'[' {
                    open = Some(t.end());
                    colon = None;
                }
                depth += 1;
            }
            Some(b':') if depth == 1 && open.is_some() => colon = Some(t.start()),
            Some(b']' | b')' | b'}') => {
                depth = depth.saturating_sub(1);
                if depth == 0
                    && let Some(o) = open.take()
                {
                    match colon {
                        Some(c) => f((o, &src[o..c], Some(&src[c + 1..t.start()])))?,
                        None => f((o, &src[o..t.start()], None))?,
                    }
                }
            }
            _ => {}
        }
    }
    ControlFlow::Continue(())
}

/// Whether a section bound (start or length) of an item is a positive integer literal: one
/// that may reach past its dimension's declared extent (`crate::semantic` then looks the
/// item's variable up for `crate::validate`).
pub fn positive_literal_bound(bounds: &[(usize, &str, Option<&str>)]) -> bool {
    let positive = |s: &str| super::integer_literal(s).flatten().is_some_and(|n| n > 0);
    bounds
        .iter()
        .any(|(_, lo, len)| positive(lo) || len.is_some_and(positive))
}

/// Whether the text of an item may hold a bound worth reading before its bounds are split:
/// a `-` (a negative bound), a second `[` (several dimensions) or a positive integer
/// literal (a digit but `0`, or a hexadecimal `0x`). Most items have none (`a[0:n]`), and a
/// site may have thousands.
pub fn literal_bound_possible(item: &[u8]) -> bool {
    item.iter().filter(|&&b| b == b'[').nth(1).is_some()
        || item
            .iter()
            .any(|&b| b == b'-' || (b'1'..=b'9').contains(&b))
        || item
            .windows(2)
            .any(|w| w[0] == b'0' && matches!(w[1], b'x' | b'X'))
}

/// `-1`, `- 3`: a negative integer literal.
pub fn negative_literal(text: &str) -> bool {
    let t = text.trim();
    t.strip_prefix('-')
        .map(str::trim_start)
        .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(s: &str) -> bool {
        let item = Item::new(s, 0..s.len());
        malformed(s, &item, false).is_some()
    }

    #[test]
    fn expressions() {
        for ok in [
            "n",
            "a[0:n]",
            "a[i][0:n*2]",
            "s.p[1:2]",
            "p->q[:n]",
            "f(a, b)",
            "(float) 1",
            "(unsigned int) x",
            "sizeof(double *)",
            "sizeof x",
            "c ? a : b",
            "a[c ? 1 : 2:n]",
            "a[0:]",
            "a[:][1:]",
            "-1",
            "std::max(a, b)",
            "\"s\" \"t\"",
            "x++",
            "(struct s *) p",
            "N * (M + 1)",
            "1.0e-3",
            "!flag",
            "&x",
            // Deeper than the levels held inline.
            "a[((((((((((b)))))))))) ? 1 : 2:n]",
            "a[f(g(h(i(j(k(l(m(n(o[c ? 1 : 2:n])))))))))][0:n]",
        ] {
            assert!(!bad(ok), "{ok}");
        }
        for no in [
            "1 i",
            "1 2",
            "a b",
            "1 +",
            "*",
            "num:5",
            "length:5",
            "a(1:3)",
            "a[1] b",
            "x =",
            "2 (x)",
            "a[((((((((((b))))))))):n)]",
            "f(g(h(i(j(k(l(m(n(o[1:2:3])))))))))",
            "f(g(h(i(j(k(l(m(n(o(1 2))))))))))",
        ] {
            assert!(bad(no), "{no}");
        }
    }

    #[test]
    fn negative_literals() {
        assert!(negative_literal(" -1") && negative_literal("- 3"));
        assert!(!negative_literal("-n") && !negative_literal("1") && !negative_literal("-"));
    }
}
