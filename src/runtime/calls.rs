//! Finding runtime calls in tokens: an `acc_…` name of `rules/runtime.toml` followed by `(`
//! that is not a member (`x.acc_wait(`), a qualified name (`ns::acc_wait(`) or a declaration
//! (`void acc_wait(`, `int *acc_x(` at the start of a declaration).

use super::names::{rename, vendor_note};
use super::{Cx, Scope};
use crate::edit::Edit;
use crate::lex::{TokKind, Token};
use crate::rules::RuntimeRule;
use crate::rules::id;
use std::ops::Range;

/// Identifiers after which `name(` is still an expression, not a declaration.
pub(super) const EXPR_KEYWORDS: &[&str] = &[
    "return",
    "else",
    "do",
    "case",
    "sizeof",
    "throw",
    "co_return",
    "co_yield",
    "co_await",
    "new",
    "delete",
    "and",
    "or",
    "not",
    "__extension__",
];

/// Type keywords: `int *acc_x(` declares a function.
pub(super) const TYPE_KEYWORDS: &[&str] = &[
    "void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "_Bool",
    "bool", "auto", "size_t", "wchar_t",
];

/// Words that may open a declaration before its type.
pub(super) const DECL_SPECIFIERS: &[&str] = &[
    "static",
    "extern",
    "inline",
    "__inline",
    "__inline__",
    "const",
    "volatile",
    "typedef",
    "register",
    "thread_local",
    "_Thread_local",
    "constexpr",
    "struct",
    "union",
    "enum",
    "friend",
    "virtual",
];

/// A call: token indices of its name, `(` and `)`, and each argument's token range.
pub(super) struct Call {
    pub(super) name: usize,
    pub(super) open: usize,
    pub(super) close: usize,
    pub(super) args: Vec<Range<usize>>,
}

impl<'a> Cx<'a> {
    /// Edits for the runtime calls and openacc.h names among `toks[range]` (nested calls
    /// handled inside out).
    pub(super) fn calls(&mut self, toks: &[Token], range: Range<usize>, scope: Scope) -> Vec<Edit> {
        let mut edits = Vec::new();
        // Where the next call may start (after the last one translated, arguments included).
        let mut next = range.start;
        // Every runtime routine, type and constant has `acc_` in it: other tokens are never
        // looked at (most files have none).
        for i in super::text::acc_tokens(self.src, toks, range.clone()) {
            // Theirs starts it (`my_acc_x` has it too).
            let t = &toks[i];
            let b = &self.src.as_bytes()[t.start()..t.end()];
            if i < next
                || t.kind != TokKind::Ident
                || !(b.starts_with(b"acc_") || b.starts_with(b"__builtin_goacc_"))
                || self.unchanged.contains(t.start())
            {
                continue;
            }
            next = i + 1;
            let Some(rule) = self.routine_at(toks, i, range.start, range.end) else {
                edits.extend(self.openacc_name(toks, i, range.start));
                continue;
            };
            match self.parse_call(toks, i, range.end) {
                Ok(Some(call)) => {
                    next = call.close + 1;
                    edits.extend(self.call(toks, &call, rule, scope));
                }
                Ok(None) => {}
                Err(why) => {
                    let name = self.text(&toks[i]).to_string();
                    self.handled.insert(toks[i].range());
                    self.diag(
                        toks[i].start(),
                        id::RUNTIME_NOT_TRANSLATED,
                        format!("'{name}' is not translated: {why}; the call is left unchanged"),
                    );
                }
            }
        }
        edits
    }

    /// An openacc.h type or constant at `toks[i]` becomes the helper name that models it.
    fn openacc_name(&mut self, toks: &[Token], i: usize, start: usize) -> Option<Edit> {
        let t = &toks[i];
        // Names in a directive (`P(acc wait(acc_async_noval))`) go with its translation.
        if t.kind != TokKind::Ident || self.handled.contains(t.start()) || self.in_site(t.start()) {
            return None;
        }
        let name = self.text(t);
        let r = rename(name)?;
        let member = i
            .checked_sub(1)
            .filter(|&p| p >= start)
            .is_some_and(|p| matches!(self.text(&toks[p]), "." | "->" | "::"));
        if member {
            return None;
        }
        if r.vendor {
            self.diag(t.start(), id::RUNTIME_DEVICE, vendor_note(name));
        }
        self.handled.insert(t.range());
        Some(Edit::replace(t.range(), r.to))
    }

    /// The table entry when `toks[i]` starts a call of a runtime routine.
    pub(super) fn routine_at(
        &self,
        toks: &[Token],
        i: usize,
        start: usize,
        end: usize,
    ) -> Option<&'a RuntimeRule> {
        let t = &toks[i];
        let name = self.text(t);
        // GCC's OpenACC builtins are in the table too: they exist only under -fopenacc.
        if t.kind != TokKind::Ident
            || !(name.starts_with("acc_") || name.starts_with("__builtin_goacc_"))
        {
            return None;
        }
        let rule = self.opts.tables.runtime(self.text(t))?;
        let open = toks[..end].get(i + 1)?;
        (self.text(open) == "(" && self.is_call(toks, i, start)).then_some(rule)
    }

    /// Whether `toks[i]` followed by `(` is a call rather than a member, a qualified name or
    /// a declaration. Syntactic and conservative: `T name(` and `T *name(` at the start of a
    /// declaration are declarations. Tokens before `start` (a macro's name) are not looked at.
    pub(super) fn is_call(&self, toks: &[Token], i: usize, start: usize) -> bool {
        let Some(p) = i.checked_sub(1).filter(|&p| p >= start) else {
            return true;
        };
        match self.text(&toks[p]) {
            "." | "->" => return false,
            // `::acc_wait(` is the global routine; `ns::acc_wait(` is someone else's.
            "::" => {
                return p == 0
                    || !(toks[p - 1].kind == TokKind::Ident || self.text(&toks[p - 1]) == ">");
            }
            _ => {}
        }
        let mut q = p;
        while q > start
            && matches!(
                self.text(&toks[q]),
                "*" | "&" | "&&" | "const" | "volatile" | "restrict" | "__restrict"
            )
        {
            q -= 1;
        }
        let t = &toks[q];
        let word = self.text(t);
        if t.kind != TokKind::Ident || EXPR_KEYWORDS.contains(&word) {
            return true;
        }
        if q == p || TYPE_KEYWORDS.contains(&word) {
            return false;
        }
        // `a * acc_x(` multiplies; `T *acc_x(` declares when T opens a declaration.
        match q.checked_sub(1).filter(|&k| k >= start).map(|k| &toks[k]) {
            None => false,
            Some(b) => {
                !(b.kind == TokKind::PpLine
                    || matches!(self.text(b), ";" | "{" | "}")
                    || DECL_SPECIFIERS.contains(&self.text(b)))
            }
        }
    }

    /// The call whose name is `toks[i]`; None if it is not closed before `end`.
    pub(super) fn parse_call(
        &self,
        toks: &[Token],
        i: usize,
        end: usize,
    ) -> Result<Option<Call>, &'static str> {
        let open = i + 1;
        let mut stack: Vec<&str> = Vec::new();
        let mut args = Vec::new();
        let mut arg_start = open + 1;
        for (j, t) in toks.iter().enumerate().take(end).skip(open) {
            if t.kind == TokKind::PpLine {
                return Err("a preprocessor line is inside its arguments");
            }
            let text = self.text(t);
            match text {
                "(" | "[" | "{" => stack.push(text),
                ")" | "]" | "}" => {
                    let want = match text {
                        ")" => "(",
                        "]" => "[",
                        _ => "{",
                    };
                    if stack.pop() != Some(want) {
                        return Err("its parentheses do not balance");
                    }
                    let depth = stack.len();
                    if depth == 0 {
                        if j > open + 1 || !args.is_empty() {
                            args.push(arg_start..j);
                        }
                        if args.iter().any(|a: &Range<usize>| a.is_empty()) {
                            return Err("an argument is empty");
                        }
                        return Ok(Some(Call {
                            name: i,
                            open,
                            close: j,
                            args,
                        }));
                    }
                }
                "," if stack.len() == 1 => {
                    args.push(arg_start..j);
                    arg_start = j + 1;
                }
                // Only a block (a lambda, a statement expression) holds statements.
                ";" | "#" if !stack.contains(&"{") => {
                    return Err("its arguments are not an expression");
                }
                _ => {}
            }
        }
        Ok(None)
    }

    /// Runtime calls written inside a `#pragma` line cannot be edited here: report them.
    pub(super) fn calls_in_directive(&mut self, inner: &[Token]) {
        let src = self.src;
        let Some(model) = inner.get(1).map(|t| t.text(src)) else {
            return;
        };
        if model != "acc" && model != "omp" {
            return;
        }
        for k in 2..inner.len() {
            let t = &inner[k];
            let name = t.text(src);
            if t.kind == TokKind::Ident
                && name.starts_with("acc_")
                && self.opts.tables.runtime(name).is_some()
                && inner.get(k + 1).is_some_and(|n| n.text(src) == "(")
            {
                self.handled.insert(t.range());
                self.diag(
                    t.start(),
                    id::RUNTIME_IN_DIRECTIVE,
                    format!("'{name}' inside a directive is not translated; rewrite it by hand"),
                );
            }
        }
    }
}
