//! Pointers named in data clauses without a section. Moving the pointer alone is right only
//! when the region uses its value and never what it points to; a region that dereferences it
//! would read a host address on a device with its own memory.

use crate::diag::Diagnostic;
use crate::directive::Clause;
use crate::lex::{TokKind, is_identifier, lex};
use crate::rules::id;
use crate::semantic::SiteFacts;

/// The error for the first of `plain` (pointers of `c` without a section and of no known
/// extent) that the construct's statement dereferences: the directive is then left unchanged.
/// Without a statement (`enter data`) the use is out of sight and the map stays, warned.
pub fn dereferenced(
    c: &Clause,
    plain: &[&str],
    facts: Option<&SiteFacts>,
    src: Option<&str>,
) -> Option<Diagnostic> {
    let code = Code::new(src?.get(facts?.stmt.clone()?)?);
    let p = plain.iter().find(|p| code.dereferences(p))?;
    Some(Diagnostic::new(
        c.span().start,
        id::POINTER_WITHOUT_EXTENT,
        format!(
            "'{}({p})' would move the pointer '{p}' itself, not the data it points to, and the region dereferences it: on a device with its own memory it would read a host address; the extent of what '{p}' points to is not known here, so the directive is left unchanged; give it, e.g. '{}({p}[0:n])'",
            c.spelled(),
            c.spelled()
        ),
    ))
}

/// The error for the first item of `c` whose type is not known here, named without a
/// section, which the construct's statement dereferences: a parameter of unknown type
/// (`Names::is_unknown_param`; an array parameter is a pointer in C), or, with facts from
/// syntax alone, a name no declaration of the file gives a known type (a global from a header
/// not read, or one whose declaration has errors). Nothing here tells a whole array from a
/// pointer, whose map moves the pointer alone (and `present(p)` of a pointer looks up what it
/// points to, not the pointer), so the directive is left unchanged.
pub fn unknown_parameter(
    c: &Clause,
    facts: Option<&SiteFacts>,
    src: Option<&str>,
) -> Option<Diagnostic> {
    let f = facts?;
    let code = Code::new(src?.get(f.stmt.clone()?)?);
    let parameter = |n: &str| f.names.is_unknown_param(n);
    // No declaration read at all (one of a type the syntax cannot classify, as
    // `struct pt p[100]`, is mapped as written, with `map-type-unknown`).
    let unknown = |n: &str| !f.exact && is_name(n) && f.type_of(n).is_none();
    let p = c
        .items()
        .map(|it| it.text.as_str())
        .find(|n| (parameter(n) || unknown(n)) && code.dereferences(n))?;
    let what = if parameter(p) {
        format!(
            "'{p}' is a parameter whose type is not known here (this file is translated from syntax alone, and a macro writes its declaration or it names a type the file does not define) and the region dereferences it: if it is declared as an array, C makes it a pointer and '{}({p})' would move only the pointer, so the region would read a host address on a device with its own memory",
            c.spelled()
        )
    } else {
        format!(
            "the type of '{p}' is not known here (this file is translated from syntax alone: it is declared in a header that was not read, or its declaration has errors) and the region dereferences it: if it is a pointer, '{}({p})' would {}, so the region would read a host address or an uninitialized pointer on a device with its own memory",
            c.spelled(),
            if matches!(c.name.as_str(), "present" | "no_create") {
                "look up the pointer variable instead of the data it points to"
            } else {
                "move only the pointer"
            }
        )
    };
    Some(Diagnostic::new(
        c.span().start,
        id::POINTER_WITHOUT_EXTENT,
        format!(
            "{what}; the directive is left unchanged; give the compile flags (-p, compile_commands.json) or the extent, e.g. '{}({p}[0:n])'",
            c.spelled()
        ),
    ))
}

/// Whether `item` is a plain name (not `this`, a section or a member).
fn is_name(item: &str) -> bool {
    item != "this" && is_identifier(item)
}

#[cfg(test)]
fn dereferences(code: &str, name: &str) -> bool {
    Code::new(code).dereferences(name)
}

/// A construct's statement, lexed once when a name is first looked up in it: a clause may
/// name thousands.
struct Code<'a> {
    code: &'a str,
    toks: std::cell::OnceCell<Vec<crate::lex::Token>>,
}

impl<'a> Code<'a> {
    fn new(code: &'a str) -> Self {
        Code {
            code,
            toks: std::cell::OnceCell::new(),
        }
    }

    /// Whether the statement dereferences the pointer `name` or may: a subscript, `->`,
    /// unary `*` (also `*(name + i)`), or the pointer passed to a call (a routine may
    /// dereference it). Uses inside directives do not count.
    fn dereferences(&self, name: &str) -> bool {
        let code = self.code;
        let toks = self.toks.get_or_init(|| {
            lex(code)
                .into_iter()
                .filter(|t| t.kind != TokKind::PpLine)
                .collect()
        });
        uses_as_pointer(toks, code, name)
    }
}

/// Whether the statement of `facts` subscripts `name`, applies `->` or unary `*` to it (its
/// value passed to a call aside): a variable of unknown type used so is a pointer or an
/// array.
pub fn accessed_through(facts: &SiteFacts, src: &str, name: &str) -> bool {
    let Some(code) = facts.stmt.clone().and_then(|r| src.get(r)) else {
        return true;
    };
    let toks: Vec<crate::lex::Token> = lex(code)
        .into_iter()
        .filter(|t| t.kind != TokKind::PpLine)
        .collect();
    uses_through(&toks, code, name, false)
}

fn uses_as_pointer(toks: &[crate::lex::Token], code: &str, name: &str) -> bool {
    uses_through(toks, code, name, true)
}

fn uses_through(toks: &[crate::lex::Token], code: &str, name: &str, calls: bool) -> bool {
    let text = |k: usize| toks.get(k).map_or("", |t| t.text(code));
    (0..toks.len()).any(|k| {
        if toks[k].kind != TokKind::Ident || text(k) != name {
            return false;
        }
        let prev = k.checked_sub(1).map_or("", text);
        if matches!(prev, "." | "->") {
            return false;
        }
        let next = text(k + 1);
        let star_before = |j: Option<usize>| j.is_some_and(|j| text(j) == "*");
        // (Strictly: `a * name` multiplies; only a `*` after no operand dereferences.)
        let unary = |j: usize| {
            calls
                || j.checked_sub(1).is_none_or(|p| {
                    let t = &toks[p];
                    !((matches!(t.kind, TokKind::Ident | TokKind::Number)
                        && !matches!(text(p), "return" | "case"))
                        || matches!(text(p), ")" | "]"))
                })
        };
        matches!(next, "[" | "->")
            || (prev == "*" && unary(k - 1))
            || (matches!(prev, "(" | "+" | "-") && star_before(k.checked_sub(2)) && unary(k - 2))
            || (calls
                && matches!(prev, "(" | ",")
                && matches!(next, ")" | ",")
                && in_call(toks, code, k))
    })
}

/// Whether token `k` is an argument of a call (inside parentheses that follow a name that is
/// not a keyword).
fn in_call(toks: &[crate::lex::Token], code: &str, k: usize) -> bool {
    let mut depth = 0i32;
    for j in (0..k).rev() {
        match toks[j].text(code) {
            ")" | "]" => depth += 1,
            "(" | "[" if depth > 0 => depth -= 1,
            "(" => {
                return j > 0
                    && toks[j - 1].kind == TokKind::Ident
                    && !matches!(
                        toks[j - 1].text(code),
                        "if" | "while" | "for" | "switch" | "return" | "sizeof"
                    );
            }
            "[" | ";" | "{" | "}" => return false,
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::{dereferences, is_name};

    #[test]
    fn plain_names_are_told_from_items() {
        for n in ["p", "_q", "a1", "\u{e9}t\u{e9}"] {
            assert!(is_name(n), "{n}");
        }
        for n in ["this", "", "1a", "a[0:n]", "s.x", "p->q", "*p"] {
            assert!(!is_name(n), "{n}");
        }
    }

    #[test]
    fn dereferences_are_told_from_uses_of_the_value() {
        for code in [
            "for (i = 0; i < n; i++) p[i] = 0;",
            "{ s->x = 1; }",
            "{ x = *p; }",
            "{ x = *(p + 1); }",
            "{ f(1, p); }",
            "{ g(p); }",
        ] {
            let name = if code.contains("s->") { "s" } else { "p" };
            assert!(dereferences(code, name), "{code}");
        }
        for code in [
            "{ if (p == 0) n = 1; }",
            "{ q = p; }",
            "{ t.p[0] = 1; s->p[1] = 2; }",
            "{\n#pragma acc loop present(p)\nfor (;;) break; }",
            "{ x = a * b; }",
        ] {
            assert!(!dereferences(code, "p"), "{code}");
        }
    }

    /// Without calls, and with a `*` after an operand read as a product.
    #[test]
    fn accesses_through_a_name_are_subscripts_arrows_and_unary_stars() {
        let through = |code: &str| {
            let toks: Vec<crate::lex::Token> = crate::lex::lex(code);
            super::uses_through(&toks, code, "p", false)
        };
        for code in [
            "{ p[0] = 1; }",
            "{ p->x = 1; }",
            "{ x = *p; }",
            "{ return *p; }",
            "{ x = a + *(p + 1); }",
            "{ x = (*p); }",
        ] {
            assert!(through(code), "{code}");
        }
        for code in [
            "{ c[x] = (a[x] + b[x]) * p; }",
            "{ x = y * (p + 1); }",
            "{ x = 2 * p; }",
            "{ p = fmax(p, a[i]); }",
            "{ s.p[0] = 1; }",
        ] {
            assert!(!through(code), "{code}");
        }
    }
}
