//! C and C++ declarations and positions the checks of invalid OpenACC ask about (see
//! `crate::validate`): the function a declaration declares or a token is in, what a
//! directive stands in for where a statement must be, whether a declaration declares one
//! function.

use crate::lex::TokKind;
use crate::structure::Structure;
use crate::syntax::Position;
use std::ops::Range;

/// The `(` matching the `)` at token `close`.
fn opening_paren(st: &Structure, close: usize) -> Option<usize> {
    let mut depth = 0i32;
    let mut j = close;
    loop {
        match st.text(j) {
            ")" => depth += 1,
            "(" => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {}
        }
        j = j.checked_sub(1)?;
    }
}

/// The function a declaration or definition in tokens `r` declares.
/// Parentheses of attributes and type operators (`__attribute__((noinline))`) are skipped.
pub(super) fn declared_name(st: &Structure, r: Range<usize>) -> Option<String> {
    let mut k = r.start;
    while k < r.end {
        if st.text(k) != "(" {
            k += 1;
            continue;
        }
        let name = k.checked_sub(1)?;
        let word = st.text(name);
        if !matches!(
            word,
            "__attribute__" | "__declspec" | "alignas" | "_Alignas" | "decltype" | "__typeof__"
        ) {
            return (st.toks[name].kind == TokKind::Ident).then(|| word.to_string());
        }
        // Past the matching ')'.
        let mut depth = 0usize;
        while k < r.end {
            match st.text(k) {
                "(" => depth += 1,
                ")" => depth -= 1,
                _ => {}
            }
            k += 1;
            if depth == 0 {
                break;
            }
        }
    }
    None
}

/// The function whose body contains token `at`.
pub(super) fn function_of(st: &Structure, at: usize) -> Option<String> {
    let mut open = enclosing_brace(st, at)?;
    while let Some(outer) = enclosing_brace(st, open) {
        if st.text(outer.checked_sub(1)?) != ")" {
            break;
        }
        open = outer;
    }
    let close = open.checked_sub(1).filter(|&c| st.text(c) == ")")?;
    let name = opening_paren(st, close)?.checked_sub(1)?;
    (st.toks[name].kind == TokKind::Ident).then(|| st.text(name).to_string())
}

/// What the directive whose first token is `first` stands in for when it is where a
/// statement must be: the body of `if`, `else`, a loop, a label or a construct; or the
/// brackets it stands in where no directive may.
pub(super) fn position(st: &Structure, first: usize) -> Option<Position> {
    let toks = st.toks;
    if let Some(open) = st.bracket_around(first) {
        let name = open
            .checked_sub(1)
            .filter(|&n| toks[n].kind == TokKind::Ident)
            .map(|n| st.text(n).to_string());
        return Some(Position::Bracketed(
            st.text(open).chars().next().unwrap_or('('),
            name,
        ));
    }
    let mut k = first.checked_sub(1)?;
    while toks[k].kind == TokKind::PpLine {
        // A site on this line (other preprocessor lines are not statements).
        if let Some(s) = st.site_starting(k) {
            return Some(Position::Site(s));
        }
        k = k.checked_sub(1)?;
    }
    match st.text(k) {
        "else" | "do" => Some(Position::Body(st.text(k).to_string())),
        ")" => {
            let kw = st.text(opening_paren(st, k)?.checked_sub(1)?);
            matches!(kw, "if" | "while" | "for" | "switch").then(|| Position::Body(kw.to_string()))
        }
        ":" => {
            let before = k.checked_sub(1)?;
            let w = st.text(before);
            if w == "default" {
                return Some(Position::Default);
            }
            // `case …:` back to the previous statement boundary.
            let mut j = before;
            loop {
                match st.text(j) {
                    "case" => return Some(Position::Case),
                    ";" | "{" | "}" => break,
                    _ => {}
                }
                j = j.checked_sub(1)?;
            }
            let goto_label = toks[before].kind == TokKind::Ident
                && !matches!(w, "public" | "private" | "protected")
                && before.checked_sub(1).is_none_or(|p| {
                    matches!(st.text(p), ";" | "{" | "}") || toks[p].kind == TokKind::PpLine
                });
            goto_label.then(|| Position::Label(w.to_string()))
        }
        _ => None,
    }
}

/// The `{` of the innermost block, class or namespace body around token `at`.
fn enclosing_brace(st: &Structure, at: usize) -> Option<usize> {
    st.enclosing_brace(at).map(|(open, _)| open)
}

/// Whether tokens `r` declare exactly one function.
pub(super) fn function_declaration(st: &Structure, r: Range<usize>) -> Result<(), &'static str> {
    const TYPE_WORDS: [&str; 12] = [
        "void", "int", "char", "float", "double", "long", "short", "unsigned", "signed", "const",
        "volatile", "bool",
    ];
    let toks = st.toks;
    if (r.start..r.end).any(|k| st.text(k) == "operator") {
        return Ok(());
    }
    let mut depth = 0i32;
    let mut k = r.start;
    while k < r.end {
        let t = st.text(k);
        match t {
            "(" if depth == 0 => {
                let named = k > r.start
                    && toks[k - 1].kind == TokKind::Ident
                    && !TYPE_WORDS.contains(&st.text(k - 1));
                if !named {
                    return Err("it declares no function name before its parameters");
                }
                // After the parameters: a body, `;`, or the parts of a declarator.
                let mut j = k;
                let mut d = 0i32;
                while j < r.end {
                    match st.text(j) {
                        "(" => d += 1,
                        ")" => {
                            d -= 1;
                            if d == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                let mut d = 0i32;
                for j in j + 1..r.end {
                    match st.text(j) {
                        "(" | "[" => d += 1,
                        ")" | "]" => d -= 1,
                        "{" if d == 0 => return Ok(()),
                        "," if d == 0 => return Err("it declares more than one name"),
                        _ => {}
                    }
                }
                return Ok(());
            }
            "(" | "[" | "{" | "<" => depth += 1,
            ")" | "]" | "}" | ">" => depth -= 1,
            "=" | "," if depth == 0 => return Err("it declares a variable"),
            ";" if depth == 0 => return Err("it declares a variable"),
            _ => {}
        }
        k += 1;
    }
    Err("it declares a variable")
}
