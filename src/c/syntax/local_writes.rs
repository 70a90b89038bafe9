//! Whether a C function writes nothing but its own locals (see
//! `crate::syntax::Syntax::writes_only_locals`), read from its tokens conservatively: a
//! write this reading does not follow (through a pointer, a member or a global, a `static`
//! local, a preprocessor line, a macro of the file, C++) makes the answer no. Its calls are
//! left to the caller (`calls_in`).

use super::Macro;
use crate::hash::HashMap;
use crate::lex::{ASSIGNMENT_OPS, TokKind};
use crate::structure::Structure;
use std::ops::Range;

/// Words after which a name does not start a declaration statement.
const STATEMENT_WORDS: [&str; 16] = [
    "return", "case", "default", "goto", "else", "do", "sizeof", "if", "while", "for", "switch",
    "break", "continue", "typedef", "_Alignof", "alignof",
];

/// Type specifiers and qualifiers that start a declaration.
const TYPE_WORDS: [&str; 17] = [
    "void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "_Bool",
    "bool", "const", "struct", "union", "enum", "register", "auto",
];

/// Words this reading does not follow: storage that outlives a call, code it cannot see
/// (`asm`; `_Pragma` as a preprocessor line), C++ objects.
const UNFOLLOWED: [&str; 13] = [
    "static",
    "extern",
    "volatile",
    "asm",
    "__asm",
    "__asm__",
    "_Thread_local",
    "thread_local",
    "_Pragma",
    "new",
    "delete",
    "this",
    "throw",
];

/// A variable of a function: where its scope begins and ends (tokens), and what a write
/// reaches through it.
struct Local<'t> {
    name: &'t str,
    /// The token that declares it in the body (None: a parameter).
    at: Option<usize>,
    scope: Range<usize>,
    /// Declared with `*`: a write of an element reaches what it points to.
    pointer: bool,
    /// Array dimensions declared (`[…]` groups after the name).
    dims: usize,
}

/// Whether the function whose body (inside its braces) is `body` writes only its parameters
/// passed by value and the variables it declares, and holds nothing unfollowed.
pub(super) fn writes_only_locals(
    st: &Structure,
    macros: &HashMap<String, Macro>,
    body: &Range<usize>,
) -> bool {
    // The parameters: between the `(` and the `)` before the body's `{`.
    let Some(params) = body
        .start
        .checked_sub(2)
        .and_then(|close| Some(st.opener(close)? + 1..close))
    else {
        return false;
    };
    let mut locals = parameters(st, params, body);
    if declarations(st, body, &mut locals).is_none() {
        return false;
    }
    body.clone().all(|k| {
        let t = st.text(k);
        match st.toks[k].kind {
            TokKind::PpLine => false,
            // `calls_in` does not list builtins; some write through their arguments.
            TokKind::Ident => {
                !(UNFOLLOWED.contains(&t)
                    || macros.contains_key(t)
                    || (t.starts_with("__builtin") && st.text(k + 1) == "("))
            }
            TokKind::Punct if ASSIGNMENT_OPS.contains(&t) => local_write(st, k - 1, k, &locals),
            TokKind::Punct if matches!(t, "++" | "--") => {
                let prev = st.text(k - 1);
                let postfix = (is_name(st, k - 1) && !STATEMENT_WORDS.contains(&prev))
                    || matches!(prev, "]" | ")");
                let target = if postfix {
                    Some(k - 1)
                } else {
                    prefix_operand(st, k + 1, body.end)
                };
                target.is_some_and(|e| local_write(st, e, k, &locals))
            }
            _ => true,
        }
    })
}

fn is_name(st: &Structure, k: usize) -> bool {
    st.toks.get(k).is_some_and(|t| t.kind == TokKind::Ident)
}

/// The closing bracket of the opening one at token `k`.
fn closer(st: &Structure, k: usize) -> Option<usize> {
    st.matching(k).map(|after| after - 1)
}

/// The last token of the operand of a prefix `++`/`--` that starts at token `k`: a name and
/// its subscripts.
fn prefix_operand(st: &Structure, k: usize, end: usize) -> Option<usize> {
    if !is_name(st, k) {
        return None;
    }
    let mut e = k;
    while st.text(e + 1) == "[" {
        e = closer(st, e + 1)?;
    }
    (e < end && !matches!(st.text(e + 1), "." | "->" | "(")).then_some(e)
}

/// Whether the lvalue ending at token `e`, written at token `at`, is one of `locals` (or an
/// element of a local array) and no more.
fn local_write(st: &Structure, e: usize, at: usize, locals: &[Local]) -> bool {
    let mut x = e;
    let mut subscripts = 0;
    while st.text(x) == "]" {
        let Some(open) = st.opener(x) else {
            return false;
        };
        subscripts += 1;
        x = open - 1;
    }
    if !is_name(st, x) || matches!(st.text(x - 1), "." | "->") {
        return false;
    }
    // The declaration's own initializer (`int *p = q;`, `double t[2] = {…}`).
    if locals.iter().any(|l| l.at == Some(x)) {
        return true;
    }
    if matches!(st.text(x - 1), "*" | "&") {
        return false;
    }
    // The innermost declaration in scope at the write.
    let name = st.text(x);
    locals
        .iter()
        .filter(|l| l.name == name && l.scope.contains(&at))
        .max_by_key(|l| l.scope.start)
        .is_some_and(|l| {
            if l.pointer {
                subscripts == 0
            } else {
                subscripts <= l.dims
            }
        })
}

/// The parameters passed by value (no `*`, `&`, `[` or `(`), in scope in `body`.
fn parameters<'t>(st: &'t Structure, params: Range<usize>, body: &Range<usize>) -> Vec<Local<'t>> {
    let mut out = Vec::new();
    for piece in split_at_commas(st, params) {
        if piece
            .clone()
            .any(|k| matches!(st.text(k), "*" | "&" | "&&" | "[" | "(" | "..."))
        {
            continue;
        }
        if let Some(k) = piece.rev().find(|&k| is_name(st, k))
            && !TYPE_WORDS.contains(&st.text(k))
        {
            out.push(Local {
                name: st.text(k),
                at: None,
                scope: body.clone(),
                pointer: false,
                dims: 0,
            });
        }
    }
    out
}

/// `r` split at its commas outside brackets.
fn split_at_commas(st: &Structure, r: Range<usize>) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = r.start;
    let mut k = r.start;
    while k < r.end {
        match st.text(k) {
            "(" | "[" | "{" => k = closer(st, k).unwrap_or(r.end),
            "," => {
                out.push(start..k);
                start = k + 1;
            }
            _ => {}
        }
        k += 1;
    }
    out.push(start..r.end.max(start));
    out
}

/// Adds the variables declared in `body` to `locals`: declaration statements start a block,
/// follow a `;`, `{` or `}`, or open a `for` header. None when one is not read.
fn declarations<'t>(
    st: &'t Structure,
    body: &Range<usize>,
    locals: &mut Vec<Local<'t>>,
) -> Option<()> {
    for s in body.clone() {
        let prev = st.text(s - 1);
        let for_init = prev == "(" && st.text(s - 2) == "for";
        if !(matches!(prev, ";" | "{" | "}") || for_init) || !starts_declaration(st, s) {
            continue;
        }
        // The statement's end: its `;` outside brackets.
        let mut end = s;
        while end < body.end && st.text(end) != ";" {
            if matches!(st.text(end), "(" | "[" | "{") {
                end = closer(st, end)?;
            }
            end += 1;
        }
        let scope_end = if for_init {
            let close = closer(st, s - 1)?;
            match st.text(close + 1) {
                "{" => closer(st, close + 1)?,
                // Up to the first `;` of the body in the same block (no further:
                // conservative).
                _ => {
                    let block = |k: usize| st.enclosing_brace(k).map(|(open, _)| open);
                    (close + 1..body.end)
                        .find(|&k| st.text(k) == ";" && block(k) == block(close))?
                }
            }
        } else {
            // The end of the innermost block around the statement.
            st.enclosing_brace(s)
                .and_then(|(_, close)| close)
                .unwrap_or(body.end)
        };
        for (n, piece) in split_at_commas(st, s..end).into_iter().enumerate() {
            // The declarator, before any initializer.
            let decl = piece.start
                ..piece
                    .clone()
                    .find(|&k| st.text(k) == "=")
                    .unwrap_or(piece.end);
            let Some(name) = declarator_name(st, decl.clone()) else {
                continue;
            };
            // The first piece holds the type: its name is after the type's words.
            if n == 0 && name == s {
                continue;
            }
            // A function's declaration, or a reference (which writes what it names).
            if decl.clone().any(|k| matches!(st.text(k), "(" | "&" | "&&")) {
                continue;
            }
            let mut dims = 0;
            let mut k = name + 1;
            while k < decl.end && st.text(k) == "[" {
                dims += 1;
                k = closer(st, k).map_or(decl.end, |c| c + 1);
            }
            locals.push(Local {
                name: st.text(name),
                at: Some(name),
                scope: name..scope_end,
                pointer: (decl.start..name).any(|k| st.text(k) == "*"),
                dims,
            });
        }
    }
    Some(())
}

/// The name a declarator in `decl` declares: its last name outside brackets that is not a
/// type word.
fn declarator_name(st: &Structure, decl: Range<usize>) -> Option<usize> {
    let mut k = decl.end;
    while k > decl.start {
        k -= 1;
        if st.text(k) == "]" {
            k = st.opener(k)?;
            continue;
        }
        if is_name(st, k) && !TYPE_WORDS.contains(&st.text(k)) {
            return Some(k);
        }
    }
    None
}

/// Whether the statement at token `s` declares variables: it starts with a type word, or
/// with two names (a type's and a variable's).
fn starts_declaration(st: &Structure, s: usize) -> bool {
    let first = st.text(s);
    if !is_name(st, s) || STATEMENT_WORDS.contains(&first) {
        return false;
    }
    TYPE_WORDS.contains(&first)
        || (is_name(st, s + 1) && !STATEMENT_WORDS.contains(&st.text(s + 1)))
}
