//! `collapse(x)` whose count has names, read from the file in every mode (libclang's value
//! is not used, so both modes decide alike): the names are object-like macros defined once
//! in the file (or `-D` flags), enumerators and, in C++, `const` variables initialized
//! with constants.
//!
//! - a value that is not positive is an error, as `collapse(0)` is;
//! - a positive value is checked against the nest (`collapse-depth`) as a literal is;
//! - a non-const variable is an error (GCC: "collapse argument needs positive constant
//!   integer expression");
//! - a count that cannot be evaluated here (a macro of a header) leaves the directive
//!   unchanged with a warning (`collapse-unknown`). Translating it as written would check
//!   nothing: the nest the count names may not be tightly nested, and what the translation
//!   decides about the collapsed loops (their variables, the check of the nest) would be
//!   decided for one loop. No directive of GCC's OpenACC tests or of the corpus has such a
//!   count, so leaving it costs nothing there, while a guess could build into wrong code.

use super::syntactic::Syntax;
use crate::dependence::Macros;
use crate::diag::Diagnostic;
use crate::directive::Directive;
use crate::directive::count::{constant, evaluate};
use crate::directive::{Dialect, Item};
use crate::hash::HashMap;
use crate::lex::{TokKind, Token, lex_range};
use crate::rules::id;
use crate::structure::Structure;
use crate::unit::Unit;
use std::cell::OnceCell;

/// What the names of a file evaluate to, built when a count first needs them.
pub(super) struct Names<'a> {
    src: &'a str,
    toks: &'a [Token],
    defines: &'a [String],
    macros: OnceCell<Macros>,
    enums: OnceCell<HashMap<String, Option<i64>>>,
    cxx: OnceCell<bool>,
}

impl<'a> Names<'a> {
    pub(super) fn new(structure: &'a Structure<'a>, defines: &'a [String]) -> Self {
        Names {
            src: structure.src,
            toks: structure.toks,
            defines,
            macros: OnceCell::new(),
            enums: OnceCell::new(),
            cxx: OnceCell::new(),
        }
    }

    fn cxx(&self) -> bool {
        *self
            .cxx
            .get_or_init(|| crate::c::lang::looks_like_cxx(self.src, self.toks))
    }

    fn macros(&self) -> &Macros {
        self.macros.get_or_init(|| {
            let pp = crate::lex::PpLines::new(self.src, self.toks);
            Macros::new(self.src, self.toks, &pp, &[])
        })
    }

    /// The value of the expression at `range` of the file, seen from offset `before`
    /// (macros defined before it); `depth` bounds chains of constants.
    fn value(
        &self,
        syntax: &Syntax,
        range: std::ops::Range<usize>,
        before: usize,
        depth: usize,
    ) -> Option<i64> {
        if depth > 8 {
            return None;
        }
        let toks = lex_range(self.src, range, false);
        let expanded = self
            .macros()
            .expand(self.src, &toks, 0..toks.len(), before)
            .ok()?;
        let text: Vec<&str> = expanded.iter().map(|t| t.text.as_str()).collect();
        evaluate(&text.join(" "), Dialect::C, &mut |name| {
            self.name(syntax, name, before, depth)
        })
    }

    /// A name left after macro expansion: a `-D` flag, an enumerator, a const variable.
    fn name(&self, syntax: &Syntax, name: &str, before: usize, depth: usize) -> Option<i64> {
        if self.macros().is_macro(name) {
            // Defined twice, `#undef`ined, or after the directive: its value here is unknown.
            return None;
        }
        if let Some(v) = self.defines.iter().find_map(|d| match d.split_once('=') {
            Some((n, v)) if n == name => Some(v),
            None if d == name => Some("1"),
            _ => None,
        }) {
            return constant(v, Dialect::C);
        }
        if let Some(v) = self.enums().get(name) {
            return *v;
        }
        let k = syntax_token(self.toks, before)?;
        let (decl, is_const, _) = syntax.variable(name, k)?;
        if !is_const || !self.cxx() {
            return None;
        }
        // `const int n = e` (the declaration's offset is its name's).
        let at = self.toks.partition_point(|t| t.start() < decl);
        if self
            .toks
            .get(at + 1)
            .is_none_or(|t| t.text(self.src) != "=")
        {
            return None;
        }
        let end = initializer_end(self.src, self.toks, at + 2)?;
        let range = self.toks[at + 2].start()..self.toks[end - 1].end();
        self.value(syntax, range, decl, depth + 1)
    }

    /// The file's enumerators (None: defined twice, or with a value not read here).
    fn enums(&self) -> &HashMap<String, Option<i64>> {
        self.enums.get_or_init(|| {
            let (src, toks) = (self.src, self.toks);
            let mut out: HashMap<String, Option<i64>> = HashMap::default();
            for (k, t) in toks.iter().enumerate() {
                if t.text(src) != "enum" {
                    continue;
                }
                // `enum {`, `enum E {`, `enum class E : int {`: the body's `{`.
                let Some(open) = (k + 1..toks.len().min(k + 8))
                    .take_while(|&j| toks[j].text(src) != ";")
                    .find(|&j| toks[j].text(src) == "{")
                else {
                    continue;
                };
                let mut next = Some(0i64);
                let mut j = open + 1;
                while let Some(n) = toks.get(j).filter(|n| n.kind == TokKind::Ident) {
                    let name = n.text(src).to_string();
                    let v = if toks.get(j + 1).is_some_and(|e| e.text(src) == "=") {
                        let Some(end) = initializer_end(src, toks, j + 2) else {
                            break;
                        };
                        // Literals, macros and the enumerators before it.
                        let v = self
                            .macros()
                            .expand(src, toks, j + 2..end, n.start())
                            .ok()
                            .and_then(|e| {
                                let text: Vec<&str> = e.iter().map(|t| t.text.as_str()).collect();
                                evaluate(&text.join(" "), Dialect::C, &mut |m| {
                                    out.get(m).copied().flatten()
                                })
                            });
                        j = end;
                        v
                    } else {
                        j += 1;
                        next
                    };
                    next = v.and_then(|v| v.checked_add(1));
                    let dup = out.contains_key(&name);
                    out.insert(name, if dup { None } else { v });
                    if toks.get(j).is_none_or(|c| c.text(src) != ",") {
                        break;
                    }
                    j += 1;
                }
            }
            out
        })
    }
}

/// The first token at or after offset `at`.
fn syntax_token(toks: &[Token], at: usize) -> Option<usize> {
    let k = toks.partition_point(|t| t.start() < at);
    (k < toks.len()).then_some(k)
}

/// One past the last token of the initializer starting at token `k`: up to a `,`, `;` or
/// closing bracket outside brackets.
fn initializer_end(src: &str, toks: &[Token], k: usize) -> Option<usize> {
    let mut level = 0usize;
    for (j, t) in toks.iter().enumerate().skip(k) {
        match t.text(src) {
            "(" | "[" | "{" => level += 1,
            ")" | "]" | "}" if level == 0 => return (j > k).then_some(j),
            ")" | "]" | "}" => level -= 1,
            "," | ";" if level == 0 => return (j > k).then_some(j),
            _ => {}
        }
    }
    None
}

/// The problem with directive `d`'s `collapse` count, when it has names: an error that
/// leaves the directive unchanged (`true`), or a warning.
pub(super) fn check(
    unit: &Unit,
    syntax: &Syntax,
    names: &Names,
    structure: &Structure,
    d: &Directive,
    tok: usize,
) -> Option<(Diagnostic, bool)> {
    let it = d.find("collapse")?.items().last()?;
    let (text, item) = count_item(it);
    if constant(text, Dialect::C).is_some()
        || !text.contains(|c: char| c.is_alphabetic() || c == '_')
    {
        // Literals: the directive's own checks, and the nest check of the translation.
        return None;
    }
    let at = item.start;
    if crate::lex::is_identifier(text)
        && let Some((decl, false, _)) = syntax.variable(text, tok)
    {
        return Some((
            Diagnostic::new(
                at,
                id::INVALID_ARGUMENT,
                format!(
                    "'collapse' takes a positive integer constant, and '{text}' is a variable (declared at line {}); the directive is left unchanged",
                    unit.line_at(decl)
                ),
            ),
            true,
        ));
    }
    // C takes no variable as a constant expression, const or not (C++ takes a const one).
    if crate::lex::is_identifier(text)
        && let Some((decl, true, _)) = syntax.variable(text, tok)
        && !names.cxx()
    {
        return Some((
            Diagnostic::new(
                at,
                id::INVALID_ARGUMENT,
                format!(
                    "'collapse' takes a positive integer constant, and '{text}' is a const variable (declared at line {}), not a constant expression in C; the directive is left unchanged",
                    unit.line_at(decl)
                ),
            ),
            true,
        ));
    }
    let Some(n) = names.value(syntax, item.clone(), at, 0) else {
        return Some((
            Diagnostic::new(
                at,
                id::COLLAPSE_UNKNOWN,
                format!(
                    "the value of 'collapse({text})' is not known from this file (a macro of a header, or a name that is not a constant): the nest it names cannot be checked; the directive is left unchanged"
                ),
            ),
            true,
        ));
    };
    if n <= 0 {
        return Some((
            Diagnostic::new(
                at,
                id::INVALID_ARGUMENT,
                format!(
                    "'collapse' takes a positive integer constant, not '{text}' ({n}); the directive is left unchanged"
                ),
            ),
            true,
        ));
    }
    let n = usize::try_from(n).ok()?;
    let depth = structure.nest_depth(tok + 1, n);
    (depth < n).then(|| {
        let pos = structure
            .nest_break(tok + 1, n)
            .map_or(at, |b| structure.toks[b].start());
        (
            Diagnostic::new(pos, id::COLLAPSE_DEPTH, format!("'collapse({text})' ({n}, line {}) but only {depth} perfectly nested loops follow", unit.line_at(at))),
            false,
        )
    })
}

/// The count of a `collapse` item, without a `force:` modifier, and its range.
fn count_item(it: &Item) -> (&str, std::ops::Range<usize>) {
    let span = it.span();
    let (text, from) = match it.text.split_once(':') {
        Some((_, rest)) => (rest, span.end - rest.len()),
        None => (it.text.as_str(), span.start),
    };
    let lead = text.len() - text.trim_start().len();
    let text = text.trim();
    (text, from + lead..from + lead + text.len())
}
