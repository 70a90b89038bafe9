//! Functions a C file defines whose calls cannot count gangs: gang-redundant code that calls
//! one gives the same result however many gangs run it, as its body writes only its own
//! locals and calls only such functions or the math library. Read from the file's tokens,
//! conservatively: anything this reading does not follow (a write through a pointer, a
//! member or a global, a `static` local, a preprocessor line, a macro of the file, a call of
//! a function not defined here, C++) makes the function not inert.

use crate::hash::HashMap;
use crate::lex::{TokKind, Token, lex};
use crate::unit::Unit;
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

/// Words whose presence in a body this reading does not follow.
const UNFOLLOWED: [&str; 12] = [
    "static",
    "extern",
    "volatile",
    "asm",
    "__asm",
    "__asm__",
    "_Thread_local",
    "thread_local",
    "new",
    "delete",
    "this",
    "throw",
];

/// Names followed by `(` that are not calls.
const NOT_CALLS: [&str; 8] = [
    "if", "for", "while", "switch", "return", "sizeof", "_Alignof", "alignof",
];

/// The calls of a file's functions that cannot count gangs, decided once per function.
pub struct Callees<'s> {
    src: &'s str,
    toks: Vec<Token>,
    /// Brace depth before each token.
    depth: Vec<u32>,
    /// The matching bracket of each opening and closing one.
    pair: HashMap<usize, usize>,
    /// Names of the file's `#define`s.
    macros: Vec<&'s str>,
    cxx: bool,
    known: HashMap<String, bool>,
}

/// A local variable of a function body: where its scope begins and ends (tokens), and what
/// a write may reach through it.
struct Local<'s> {
    name: &'s str,
    /// The token that declares it in the body (None: a parameter).
    at: Option<usize>,
    scope: Range<usize>,
    /// Declared with `*` (or `&`): a write of an element reaches what it points to.
    pointer: bool,
    /// Array dimensions declared (`[…]` groups after the name).
    dims: usize,
}

impl<'s> Callees<'s> {
    pub fn new(src: &'s str) -> Self {
        let toks = lex(src);
        let text = |k: usize| toks[k].text(src);
        let mut depth = Vec::with_capacity(toks.len());
        let mut pair = HashMap::default();
        let mut open: Vec<usize> = Vec::new();
        let mut d = 0u32;
        for (k, t) in toks.iter().enumerate() {
            depth.push(d);
            if t.kind != TokKind::Punct {
                continue;
            }
            match text(k) {
                "{" | "(" | "[" => {
                    d += u32::from(text(k) == "{");
                    open.push(k);
                }
                c @ ("}" | ")" | "]") => {
                    d = d.saturating_sub(u32::from(c == "}"));
                    if let Some(o) = open.pop() {
                        pair.insert(o, k);
                        pair.insert(k, o);
                    }
                }
                _ => {}
            }
        }
        let macros = toks
            .iter()
            .filter(|t| t.kind == TokKind::PpLine)
            .filter_map(|t| {
                let rest = t.text(src).trim_start_matches('#').trim_start();
                let name = rest.strip_prefix("define")?.trim_start();
                let end = name
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(name.len());
                Some(&name[..end])
            })
            .collect();
        let cxx = toks.iter().any(|t| match t.kind {
            TokKind::Ident => matches!(
                t.text(src),
                "class"
                    | "template"
                    | "namespace"
                    | "operator"
                    | "public"
                    | "nullptr"
                    | "std"
                    | "using"
                    | "typename"
            ),
            TokKind::Punct => t.text(src) == "::",
            TokKind::PpLine => {
                let l: String = t.text(src).split_whitespace().collect();
                l.starts_with("#include<") && !l.contains(".h>")
            }
            _ => false,
        });
        Callees {
            src,
            toks,
            depth,
            pair,
            macros,
            cxx,
            known: HashMap::default(),
        }
    }

    fn text(&self, k: usize) -> &'s str {
        self.toks.get(k).map_or("", |t| t.text(self.src))
    }

    fn is_ident(&self, k: usize) -> bool {
        self.toks.get(k).is_some_and(|t| t.kind == TokKind::Ident)
    }

    /// Whether calling `name` cannot change a result by how often it runs: every definition
    /// of it in the file (none: not inert) writes only its own locals and calls only inert
    /// functions or math library functions `lib` knows.
    pub fn inert(&mut self, name: &str, lib: &dyn Fn(&str) -> bool) -> bool {
        if self.cxx {
            return false;
        }
        let mut stack = Vec::new();
        self.inert_in(name, lib, &mut stack)
    }

    fn inert_in(
        &mut self,
        name: &str,
        lib: &dyn Fn(&str) -> bool,
        stack: &mut Vec<String>,
    ) -> bool {
        if let Some(&k) = self.known.get(name) {
            return k;
        }
        // A recursive call adds no effect of its own.
        if stack.iter().any(|s| s == name) {
            return true;
        }
        let defs = self.definitions(name);
        if defs.is_empty() {
            return false;
        }
        stack.push(name.to_string());
        let mut ok = true;
        for (params, body) in defs {
            let Some(callees) = self.own_effects_free(params, body) else {
                ok = false;
                break;
            };
            if !callees
                .iter()
                .all(|c| lib(c) || self.inert_in(c, lib, stack))
            {
                ok = false;
                break;
            }
        }
        stack.pop();
        // Inside a cycle the answer assumed the callers inert: kept only at its head.
        if stack.is_empty() || !ok {
            self.known.insert(name.to_string(), ok);
        }
        ok
    }

    /// The definitions of `name` at file scope: the tokens inside its parentheses and inside
    /// its braces.
    fn definitions(&self, name: &str) -> Vec<(Range<usize>, Range<usize>)> {
        let mut out = Vec::new();
        for k in 1..self.toks.len() {
            if self.depth[k] != 0 || !self.is_ident(k) || self.text(k) != name {
                continue;
            }
            if self.text(k + 1) != "(" || matches!(self.text(k - 1), "." | "->") {
                continue;
            }
            let Some(&close) = self.pair.get(&(k + 1)) else {
                continue;
            };
            if self.text(close + 1) != "{" {
                continue;
            }
            let Some(&end) = self.pair.get(&(close + 1)) else {
                continue;
            };
            out.push((k + 2..close, close + 2..end));
        }
        out
    }

    /// Whether the body `body` of a function with parameters `params` writes only its own
    /// locals and has nothing this reading does not follow: the functions it calls, or None.
    fn own_effects_free(&self, params: Range<usize>, body: Range<usize>) -> Option<Vec<&'s str>> {
        let mut locals = self.parameters(params, body.clone());
        self.declarations(body.clone(), &mut locals)?;
        let mut calls = Vec::new();
        for k in body.clone() {
            let t = self.text(k);
            match self.toks[k].kind {
                TokKind::PpLine => return None,
                TokKind::Ident => {
                    if UNFOLLOWED.contains(&t) || self.macros.contains(&t) {
                        return None;
                    }
                    if self.text(k + 1) == "(" && !NOT_CALLS.contains(&t) {
                        if TYPE_WORDS.contains(&t) || matches!(self.text(k - 1), "." | "->") {
                            return None;
                        }
                        calls.push(t);
                    }
                }
                TokKind::Punct => {
                    let target = match t {
                        "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "&=" | "|=" | "^=" | "<<="
                        | ">>=" => Some(k - 1),
                        "++" | "--" => {
                            let prev = k.checked_sub(1).map_or("", |p| self.text(p));
                            if (self.is_ident(k - 1) && !STATEMENT_WORDS.contains(&prev))
                                || matches!(prev, "]" | ")")
                            {
                                Some(k - 1)
                            } else {
                                self.prefix_target(k + 1, body.end)
                            }
                        }
                        "::" => return None,
                        _ => None,
                    };
                    if let Some(e) = target
                        && !self.local_write(e, k, &locals)
                    {
                        return None;
                    }
                    if matches!(t, "++" | "--") && target.is_none() {
                        return None;
                    }
                }
                _ => {}
            }
        }
        Some(calls)
    }

    /// The last token of the operand of a prefix `++`/`--` whose operand starts at `k`: a
    /// name and its subscripts.
    fn prefix_target(&self, k: usize, end: usize) -> Option<usize> {
        if !self.is_ident(k) {
            return None;
        }
        let mut e = k;
        while self.text(e + 1) == "[" {
            e = *self.pair.get(&(e + 1))?;
        }
        (e < end && !matches!(self.text(e + 1), "." | "->" | "(")).then_some(e)
    }

    /// Whether the lvalue ending at token `e`, written at token `at`, is one of `locals`
    /// (or an element of a local array) and no more.
    fn local_write(&self, e: usize, at: usize, locals: &[Local]) -> bool {
        let mut x = e;
        let mut groups = 0;
        while self.text(x) == "]" {
            let Some(&o) = self.pair.get(&x) else {
                return false;
            };
            groups += 1;
            x = o - 1;
        }
        if !self.is_ident(x) || matches!(self.text(x - 1), "." | "->" | "::") {
            return false;
        }
        let name = self.text(x);
        // The declaration's own initializer (`int *p = q;`, `double t[2] = {…}`).
        if locals.iter().any(|l| l.at == Some(x)) {
            return true;
        }
        if matches!(self.text(x - 1), "*" | "&") {
            return false;
        }
        // The innermost declaration in scope at the write.
        locals
            .iter()
            .filter(|l| l.name == name && l.scope.contains(&at))
            .max_by_key(|l| l.scope.start)
            .is_some_and(|l| {
                if l.pointer {
                    groups == 0
                } else {
                    groups <= l.dims
                }
            })
    }

    /// The parameters passed by value (no `*`, `&`, `[` or `(`), in scope in `body`.
    fn parameters(&self, params: Range<usize>, body: Range<usize>) -> Vec<Local<'s>> {
        let mut out = Vec::new();
        for piece in self.split_top(params) {
            if piece
                .clone()
                .any(|k| matches!(self.text(k), "*" | "&" | "&&" | "[" | "(" | "..."))
            {
                continue;
            }
            if let Some(k) = piece.rev().find(|&k| self.is_ident(k))
                && !TYPE_WORDS.contains(&self.text(k))
            {
                out.push(Local {
                    name: self.text(k),
                    at: None,
                    scope: body.start..body.end,
                    pointer: false,
                    dims: 0,
                });
            }
        }
        out
    }

    /// `r` split at its commas outside brackets.
    fn split_top(&self, r: Range<usize>) -> Vec<Range<usize>> {
        let mut out = Vec::new();
        let mut start = r.start;
        let mut k = r.start;
        while k < r.end {
            match self.text(k) {
                "(" | "[" | "{" => k = self.pair.get(&k).copied().unwrap_or(r.end),
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

    /// Adds the variables declared in `body` to `locals`: declaration statements start a
    /// block, follow a `;`, `{` or `}`, or open a `for` header. None when one is not read.
    fn declarations(&self, body: Range<usize>, locals: &mut Vec<Local<'s>>) -> Option<()> {
        for s in body.clone() {
            let prev = self.text(s - 1);
            let for_init = prev == "(" && self.text(s - 2) == "for";
            if !(matches!(prev, ";" | "{" | "}") || for_init) || !self.starts_declaration(s) {
                continue;
            }
            // The statement's end: its `;` outside brackets.
            let mut end = s;
            while end < body.end && self.text(end) != ";" {
                if matches!(self.text(end), "(" | "[" | "{") {
                    end = *self.pair.get(&end)?;
                }
                end += 1;
            }
            let scope_end = if for_init {
                let close = *self.pair.get(&(s - 1))?;
                match self.text(close + 1) {
                    "{" => *self.pair.get(&(close + 1))?,
                    // Up to the first `;` of the body (no further: conservative).
                    _ => (close + 1..body.end)
                        .find(|&k| self.text(k) == ";" && self.depth[k] == self.depth[close])?,
                }
            } else {
                self.enclosing_close(s, body.end)
            };
            for (n, piece) in self.split_top(s..end).into_iter().enumerate() {
                // The declarator, before any initializer.
                let decl = piece.start
                    ..(piece.clone())
                        .find(|&k| self.text(k) == "=")
                        .unwrap_or(piece.end);
                let Some(name) = self.declarator_name(decl.clone()) else {
                    continue;
                };
                // The first piece holds the type: its name is after the type's words.
                if n == 0 && name == s {
                    continue;
                }
                // A function's declaration, or a reference (which writes what it names).
                if decl
                    .clone()
                    .any(|k| matches!(self.text(k), "(" | "&" | "&&"))
                {
                    continue;
                }
                let pointer = (decl.start..name).any(|k| self.text(k) == "*");
                let mut dims = 0;
                let mut k = name + 1;
                while k < decl.end && self.text(k) == "[" {
                    dims += 1;
                    k = self.pair.get(&k).map_or(decl.end, |c| c + 1);
                }
                locals.push(Local {
                    name: self.text(name),
                    at: Some(name),
                    scope: name..scope_end,
                    pointer,
                    dims,
                });
            }
        }
        Some(())
    }

    /// The name a declarator in `decl` declares: its last name outside brackets that is not
    /// a type word.
    fn declarator_name(&self, decl: Range<usize>) -> Option<usize> {
        let mut k = decl.end;
        while k > decl.start {
            k -= 1;
            if self.text(k) == "]" {
                k = *self.pair.get(&k)?;
                continue;
            }
            if self.is_ident(k) && !TYPE_WORDS.contains(&self.text(k)) {
                return Some(k);
            }
        }
        None
    }

    /// Whether the statement at token `s` declares variables: it starts with a type word, or
    /// with two names (a type's and a variable's).
    fn starts_declaration(&self, s: usize) -> bool {
        let first = self.text(s);
        if !self.is_ident(s) || STATEMENT_WORDS.contains(&first) {
            return false;
        }
        TYPE_WORDS.contains(&first)
            || (self.is_ident(s + 1) && !STATEMENT_WORDS.contains(&self.text(s + 1)))
    }

    /// The `}` closing the innermost block around token `s`, or `end`.
    fn enclosing_close(&self, s: usize, end: usize) -> usize {
        let d = self.depth[s];
        (s..end)
            .find(|&k| self.text(k) == "}" && self.depth[k] == d)
            .unwrap_or(end)
    }
}

/// Whether the call of `name` in a region of `u` cannot count gangs (C only).
pub fn inert_call<'s>(u: &Unit<'s>, callees: &mut Option<Callees<'s>>, name: &str) -> bool {
    if u.lang.name() != "C" {
        return false;
    }
    let c = callees.get_or_insert_with(|| Callees::new(u.src));
    let lang = u.lang;
    c.inert(name, &|f| lang.is_library_function(f))
}

#[cfg(test)]
mod tests {
    use super::Callees;

    fn inert(src: &str, f: &str) -> bool {
        Callees::new(src).inert(f, &|n| matches!(n, "sqrt" | "fabs"))
    }

    #[test]
    fn functions_writing_only_their_locals_are_inert() {
        for (src, f) in [
            ("static int sq(int x) { return x * x; }", "sq"),
            (
                "double h(int n, const double *a) { double s = 0; int i, j; for (i = 0; i < n; i++) s += a[i]; j = 2; return sqrt(s) + j; }",
                "h",
            ),
            (
                "int t(int k) { int v[4] = {0}; v[k & 3]++; ++v[0]; k -= 1; return ++k + v[1]; }",
                "t",
            ),
            (
                "int p(const int *a) { const int *q = a; q++; return *q; }",
                "p",
            ),
            (
                "int f(int n) { return n <= 1 ? 1 : n * f(n - 1); }\nint g(int n) { return f(n) + sq(n); }\nint sq(int x) { return x * x; }",
                "g",
            ),
            (
                "int loop(int n) { int s = 0; for (int i = 0; i < n; ++i) { s += i; } return s; }",
                "loop",
            ),
        ] {
            assert!(inert(src, f), "{src}");
        }
    }

    #[test]
    fn functions_with_outside_effects_are_not_inert() {
        for (src, f) in [
            ("int g; void bump(void) { g++; }", "bump"),
            ("int g; void set(int v) { g = v; }", "set"),
            ("void w(int *p) { *p = 1; }", "w"),
            ("void w(int *p) { p[0] = 1; }", "w"),
            ("void w(int *p) { int *q = p; q[0] = 1; }", "w"),
            (
                "struct s { int a; }; void w(struct s *p) { p->a = 1; }",
                "w",
            ),
            ("void w(int n) { printf(\"%d\\n\", n); }", "w"),
            ("int c(void) { static int n; return ++n; }", "c"),
            (
                "int g; int f(void) { { int g; g = 1; } g = 2; return 0; }",
                "f",
            ),
            ("int g; int f(void) { g = 2; int g = 1; return g; }", "f"),
            (
                "int i; int f(int n) { for (int i = 0; i < n; i++) ; i = 3; return 0; }",
                "f",
            ),
            ("int a, b; int f(void) { a = 1, b = 2; return 0; }", "f"),
            ("typedef int *ip; void f(ip p) { p[1] = 2; }", "f"),
            (
                "typedef int *ip; void f(void) { ip a[2]; a[0][1] = 2; }",
                "f",
            ),
            ("int g; void f(void) { int *p = &g; *p = 1; }", "f"),
            ("void f(int n) {\n#pragma acc atomic\n n++; }", "f"),
            ("#define BUMP g++\nint g; void f(void) { BUMP; }", "f"),
            ("int g; void f(void) { int &r = g; r = 1; }", "f"),
            ("void ext(void); void f(void) { ext(); }", "f"),
            ("int h(void); int f(void) { return h(); }", "f"),
            ("namespace n { int g; } int f(int x) { return x; }", "f"),
            (
                "int g; int f(int n) { if (n) g = 1; else g = 2; return 0; }",
                "f",
            ),
            ("int g[4]; void f(void) { g[0] = 1; }", "f"),
            ("void f(int n) { int x; (x) = n; }", "f"),
            (
                "int g; int f(void) { int t[4 + g]; g = 1; return t[0]; }",
                "f",
            ),
        ] {
            assert!(!inert(src, f), "{src}");
        }
    }
}
