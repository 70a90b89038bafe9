//! Blocks, statements and declarations in C and C++ (see `crate::syntax::Syntax`).

use crate::lex::TokKind;
use crate::structure::Structure;
use crate::syntax::Exits;
use std::ops::Range;

/// The token index of the `}` closing the block that contains token `at`, or None at file,
/// namespace or `extern "C"` scope.
pub(super) fn block_end(st: &Structure, at: usize) -> Option<usize> {
    let t = st.toks;
    let (open, close) = st.enclosing_brace(at)?;
    if open > 0 {
        let prev = t[open - 1];
        let block_keyword = matches!(
            prev.text(st.src),
            "else" | "do" | "try" | "const" | "noexcept" | "override" | "final" | "mutable"
        );
        if (prev.kind == TokKind::Ident && !block_keyword) || prev.kind == TokKind::Literal {
            return None;
        }
    }
    close
}

/// The `extern` declaration statement of `name` in the block around token `last`, before it.
pub(super) fn extern_decl(st: &Structure, name: &str, last: usize) -> Option<Range<usize>> {
    let t = st.toks;
    let text = |k: usize| t[k].text(st.src);
    let mut depth = 0i32;
    let mut end = None;
    for k in (0..last).rev() {
        if t[k].kind == TokKind::PpLine {
            continue;
        }
        match text(k) {
            "}" => depth += 1,
            "{" if depth == 0 => return None,
            "{" => depth -= 1,
            ";" if depth == 0 => end = Some(k),
            _ => {}
        }
        if depth != 0 || text(k) != name {
            continue;
        }
        // The statement holding `name`: back to the previous `;`, `{` or `}`.
        let mut s = k;
        while s > 0 && !matches!(text(s - 1), ";" | "{" | "}") && t[s - 1].kind != TokKind::PpLine {
            s -= 1;
        }
        let e = end?;
        if (s..k).any(|j| text(j) == "extern") {
            return Some(t[s].start()..t[e].end());
        }
        return None;
    }
    None
}

/// Start of the line where the file-scope function around token `last` begins (its return
/// type), or None when that function is nested in a class or namespace.
pub(super) fn function_start(st: &Structure, last: usize) -> Option<usize> {
    let s = st.toks.get(function_first_token(st, last)?)?.start();
    Some(st.src[..s].rfind('\n').map_or(0, |p| p + 1))
}

/// Whether `name` is declared between the first token of the function around token `t`
/// and `t`: a parameter or a local (`T name;`, `T *name,`, `T name[…]`, `T &name)`, and a
/// later declarator of a declaration, `T a, *name;`). Outside any function: no; in a function
/// nested in a class or namespace (not read here): yes.
pub(super) fn declared_in_function(st: &Structure, t: usize, name: &str) -> bool {
    let Some(first) = function_first_token(st, t) else {
        return st.enclosing_brace(t).is_some();
    };
    let toks = st.toks;
    let text = |k: usize| toks[k].text(st.src);
    let word = |k: usize| {
        toks[k].kind == TokKind::Ident && !matches!(text(k), "return" | "sizeof" | "case" | "goto")
    };
    (first.max(2)..t).any(|k| {
        if text(k) != name || !matches!(text(k + 1), ";" | "=" | "," | ")" | "[") {
            return false;
        }
        // `T *name`, `T **name`, `T &name`, not `x = *name`.
        if word(k - 1) || (matches!(text(k - 1), "*" | "&") && (word(k - 2) || text(k - 2) == "*"))
        {
            return true;
        }
        // `T a, *name`: after a comma, only where the statement reads as a declaration
        // (`f(a, name)` and `x = a, name;` are uses).
        let mut p = k - 1;
        while p > first && matches!(text(p), "*" | "&") {
            p -= 1;
        }
        if text(p) != "," {
            return false;
        }
        is_declaration(st, declarator_list_start(st, p)..k + 1)
    })
}

/// The first token of the file-scope function around token `last` (its return type), or
/// None when that function is nested in a class or namespace.
pub(super) fn function_first_token(st: &Structure, last: usize) -> Option<usize> {
    let t = st.toks;
    let text = |k: usize| t[k].text(st.src);
    let mut open = None;
    let mut at = last;
    while let Some((o, _)) = st.enclosing_brace(at) {
        open = Some(o);
        at = o;
    }
    // `open` is now the outermost `{` before `last` still open there: the function body.
    let open = open?;
    // A function body follows the parameter list (and maybe `const`, `noexcept`, ...).
    let mut p = open.checked_sub(1)?;
    while matches!(text(p), "const" | "noexcept" | "override" | "final") {
        p = p.checked_sub(1)?;
    }
    if text(p) != ")" {
        return None;
    }
    let mut k = open;
    while k > 0 {
        let p = k - 1;
        if t[p].kind == TokKind::PpLine || matches!(text(p), ";" | "}") {
            break;
        }
        if text(p) == "{" {
            return None;
        }
        k = p;
    }
    Some(k)
}

/// Whether `name` is declared as an array before offset `before` (`T name[...]`): the last
/// declarator of `name` there decides. A mention counts only where the words from its
/// statement's start to it read as a declaration (`double a, p[4]`, `(int n, double *p)`), so
/// `x = *p;`, `f(n, p)` and `y = a * p[1];` are uses, not declarations.
pub(super) fn declared_as_array(st: &Structure, name: &str, before: usize) -> bool {
    let t = st.toks;
    let src = st.src;
    let mut found = None;
    for k in 1..t.len().saturating_sub(1) {
        if t[k].start() >= before {
            break;
        }
        if t[k].text(src) != name || !matches!(t[k + 1].text(src), "[" | ";" | "=" | "," | ")") {
            continue;
        }
        let first = declarator_list_start(st, k);
        if is_declaration(st, first..k + 1) {
            found = Some(t[k + 1].text(src) == "[");
        }
    }
    found.unwrap_or(false)
}

/// Whether the directive whose first token is `first` is the statement of an
/// `if`/`else`/loop without braces, a label, or another directive: a line inserted before it
/// would take its place.
pub(super) fn is_body(st: &Structure, first: usize) -> bool {
    let Some(p) = first.checked_sub(1) else {
        return false;
    };
    let t = &st.toks[p];
    let text = t.text(st.src);
    if t.kind == TokKind::PpLine {
        return text[1..].trim_start().starts_with("pragma");
    }
    matches!(text, ")" | "else" | "do" | ":")
}

/// The statement holding token `t`, directly in the region or in a compound statement in it
/// (through `{ }` only: an `if` or a plain loop is wrapped whole). The walk over each block's
/// statements: the oracle of `holding::statement_of`.
#[cfg(test)]
pub(super) fn statement_of(st: &Structure, range: Range<usize>, t: usize) -> Option<Range<usize>> {
    statement_of_with(st, range, |r| holding_in(st, r, t))
}

/// [`statement_of`], with the statement of a region or block holding the token found by
/// `holding`.
pub(super) fn statement_of_with(
    st: &Structure,
    mut range: Range<usize>,
    mut holding: impl FnMut(&Range<usize>) -> Option<Range<usize>>,
) -> Option<Range<usize>> {
    for _ in 0..200 {
        let s = holding(&range)?;
        if st.toks[st.skip_pp(s.start)].text(st.src) == "{" && s != range {
            range = s;
            continue;
        }
        return (s != range || st.toks[s.start].text(st.src) != "{").then_some(s);
    }
    None
}

/// The statement of `range` (a statement, or the statements of a block) holding token `t`;
/// none past a statement whose end is not found.
pub(super) fn holding_in(st: &Structure, range: &Range<usize>, t: usize) -> Option<Range<usize>> {
    for s in st.statements_in(range) {
        let e = st.stmt_end(s)?;
        if (s..e).contains(&t) {
            return Some(s..e);
        }
    }
    None
}

/// A declaration statement (`int on = f();`, `const T *p = …;`): two names in a row before
/// any `=`, `(` or `;`.
pub(super) fn is_declaration(st: &Structure, s: Range<usize>) -> bool {
    let toks = &st.toks[s];
    let mut prev_name = false;
    for t in toks {
        let text = t.text(st.src);
        if matches!(text, "=" | "(" | ";" | "{" | "[") {
            return false;
        }
        let name = t.kind == TokKind::Ident
            && !matches!(
                text,
                "return" | "if" | "else" | "for" | "while" | "do" | "switch"
            );
        if name && prev_name {
            return true;
        }
        prev_name = name || (prev_name && matches!(text, "*" | "&"));
    }
    false
}

/// The exits of the block closed at token `close` after token `last`: each `return` (its
/// offset), and the block's end unless it ends with a `return`; Err with the offset of a
/// `return` that does not start its line after a statement.
pub(super) fn scope_exits(st: &Structure, last: usize, close: usize) -> Result<Exits, usize> {
    let toks = st.toks;
    let src = st.src;
    let mut returns = Vec::new();
    for k in last + 1..close {
        if toks[k].kind != TokKind::Ident || toks[k].text(src) != "return" {
            continue;
        }
        let line_start = src[..toks[k].start()].rfind('\n').map_or(0, |p| p + 1);
        let first_on_line = src[line_start..toks[k].start()].trim().is_empty();
        let after_statement =
            matches!(toks[k - 1].text(src), ";" | "{" | "}") || toks[k - 1].kind == TokKind::PpLine;
        if !first_on_line || !after_statement {
            return Err(toks[k].start());
        }
        returns.push(toks[k].start());
    }
    // A block that ends with `return` needs nothing more at its closing brace.
    let ends_with_return = (last + 1..close)
        .rev()
        .find(|&k| toks[k].text(src) == "return")
        .is_some_and(|r| {
            let mut depth = 0i32;
            let mut k = r;
            while k < close {
                match toks[k].text(src) {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" => depth -= 1,
                    ";" if depth == 0 => break,
                    _ => {}
                }
                k += 1;
            }
            k + 1 == close
        });
    Ok(Exits {
        returns,
        end: (!ends_with_return).then(|| toks[close].start()),
    })
}

/// Whether token `t` is directly in the compound statement `block`.
pub(super) fn directly_in(st: &Structure, block: &Range<usize>, t: usize) -> bool {
    let toks = st.toks;
    let mut depth = 0i32;
    for x in &toks[block.start + 1..t.min(block.end)] {
        match x.text(st.src) {
            "{" => depth += 1,
            "}" => depth -= 1,
            _ => {}
        }
    }
    depth == 0 && toks[block.start].text(st.src) == "{"
}

/// The first token of the declaration or parameter list holding token `k`: after the last
/// `;`, brace, parenthesis or preprocessor line before it.
fn declarator_list_start(st: &Structure, k: usize) -> usize {
    st.toks[..k]
        .iter()
        .rposition(|t| {
            t.kind == TokKind::PpLine || matches!(t.text(st.src), ";" | "{" | "}" | "(" | ")")
        })
        .map_or(0, |p| p + 1)
}

/// The words before `var` in the declaration whose name is at byte `at`.
pub(super) fn declaration_words(st: &Structure, at: usize, var: &str) -> Option<Vec<String>> {
    let toks = st.toks;
    let name = toks.partition_point(|t| t.start() < at);
    if toks.get(name).map(|t| t.text(st.src)) != Some(var) {
        return None;
    }
    let first = declarator_list_start(st, name);
    Some(
        toks[first..name]
            .iter()
            .map(|t| t.text(st.src).to_string())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lex::lex;

    #[test]
    fn locals_by_any_declarator_of_a_declaration() {
        let local = |src: &str| {
            let toks = lex(src);
            let st = Structure::new(src, &toks, &[]);
            let at = toks.len() - 2;
            declared_in_function(&st, at, "g")
        };
        assert!(local("void f(void) { double g; x; }"));
        assert!(local("void f(void) { double a, g; x; }"));
        assert!(local("void f(void) { struct s a, *g = 0; x; }"));
        assert!(local("void f(int n, struct s *g) { x; }"));
        assert!(!local("double a, g; void f(void) { use(a, g); x; }"));
        assert!(!local("struct s g; void f(int a) { y = a, g; x; }"));
        assert!(!local("struct s g; void f(void) { return a, g; x; }"));
    }

    #[test]
    fn arrays_by_their_declarator_not_by_their_uses() {
        let array = |src: &str, name: &str| {
            let toks = lex(src);
            let st = Structure::new(src, &toks, &[]);
            declared_as_array(&st, name, src.len())
        };
        assert!(array(
            "double p[4]; void f(int n) { use(n, p); x = *p; }",
            "p"
        ));
        assert!(array("double a, p[4]; void f(void) { y = a * p[1]; }", "p"));
        assert!(array("void f(int n, double p[]) { g(n, p); }", "p"));
        assert!(!array(
            "double *p; void f(int n) { use(n, p[0]); y = a * p[1]; }",
            "p"
        ));
        assert!(!array("void f(int n, double *p) { g(n, p[2]); }", "p"));
        // The innermost declaration before the site decides.
        assert!(!array(
            "double p[4]; void f(void) { double *p = q; use(p); }",
            "p"
        ));
    }
}
