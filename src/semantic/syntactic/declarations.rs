//! Declarations found by their shape: specifiers, declarators, typedefs, object-like macros
//! that name types, and the scope each declaration is visible in; `lookup` finds the one a
//! use sees.

use super::{Decl, Decls, Syntax};
use crate::directive::integer_literal;
use crate::hash::HashMap;
use crate::lex::{SCALAR_WORDS, TokKind, is_scalar_word};
use crate::semantic::facts::{VarKind, VarType};
use crate::structure::Structure;
use std::ops::Range;
use std::sync::Arc;

pub(super) const QUALIFIERS: &[&str] = &[
    "const",
    "volatile",
    "static",
    "extern",
    "register",
    "restrict",
    "__restrict",
    "__restrict__",
    "inline",
    "thread_local",
    "_Thread_local",
    "constexpr",
    "mutable",
    "typename",
    "signed",
    "unsigned",
    "__extension__",
];

pub(super) const NOT_A_TYPE: &[&str] = &[
    "return",
    "case",
    "goto",
    "sizeof",
    "else",
    "do",
    "if",
    "while",
    "for",
    "switch",
    "break",
    "continue",
    "default",
    "new",
    "delete",
    "throw",
    "typedef",
    "operator",
    "using",
    "namespace",
    "template",
    "public",
    "private",
    "protected",
    "friend",
    "virtual",
    "explicit",
    "alignof",
    "_Alignof",
    "decltype",
    "typeid",
    "static_assert",
    "_Static_assert",
    "asm",
    "__asm__",
    "co_return",
    "co_await",
    "co_yield",
    "true",
    "false",
    "nullptr",
    "this",
    "NULL",
    "void",
    "static_cast",
    "dynamic_cast",
    "const_cast",
    "reinterpret_cast",
    "noexcept",
    "concept",
    "requires",
];

/// The words above and the type keywords, with what they are: asked about every identifier.
struct Keywords {
    /// The words of each shape (see `shape`), with what they are: a word is compared with
    /// the few of its length and first byte, not hashed.
    by_shape: Vec<Vec<(&'static str, Keyword)>>,
    /// Per length below 64, a bit per first byte (modulo 64) of the words of that length:
    /// most identifiers are ruled out without reading them.
    shapes: [u64; 64],
}

#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(super) struct Keyword {
    /// In `QUALIFIERS`.
    pub(super) qualifier: bool,
    /// In `NOT_A_TYPE`.
    pub(super) not_a_type: bool,
}

/// `w`'s shape: (length, first byte modulo 64), None for a length past the tables.
#[inline]
fn shape(w: &str) -> Option<(usize, u8)> {
    let first = *w.as_bytes().first()?;
    (w.len() < 64).then_some((w.len(), first % 64))
}

static KEYWORDS: std::sync::LazyLock<Keywords> = std::sync::LazyLock::new(|| {
    let types = [
        "struct", "union", "class", "enum", "auto", "typedef", "void",
    ];
    let mut by_shape: Vec<Vec<(&'static str, Keyword)>> = vec![Vec::new(); 64 * 64];
    let mut shapes = [0u64; 64];
    for w in [QUALIFIERS, SCALAR_WORDS, NOT_A_TYPE, &types].concat() {
        let Some((len, first)) = shape(w) else {
            continue;
        };
        let bucket = &mut by_shape[len * 64 + usize::from(first)];
        if bucket.iter().any(|(x, _)| *x == w) {
            continue;
        }
        bucket.push((
            w,
            Keyword {
                qualifier: QUALIFIERS.contains(&w),
                not_a_type: NOT_A_TYPE.contains(&w),
            },
        ));
        shapes[len] |= 1u64 << first;
    }
    Keywords { by_shape, shapes }
});

/// Inlined where names are read: most are ruled out by their shape, without a call.
#[inline]
pub(super) fn keyword(w: &str) -> Option<Keyword> {
    let k = &*KEYWORDS;
    let (len, first) = shape(w)?;
    if k.shapes[len] & (1u64 << first) == 0 {
        return None;
    }
    keyword_of_shape(k, w, len * 64 + usize::from(first))
}

#[inline(never)]
fn keyword_of_shape(k: &Keywords, w: &str, bucket: usize) -> Option<Keyword> {
    k.by_shape[bucket]
        .iter()
        .find(|(x, _)| *x == w)
        .map(|&(_, kw)| kw)
}

#[inline]
pub(super) fn is_keyword(w: &str) -> bool {
    keyword(w).is_some()
}

fn is_qualifier(w: &str) -> bool {
    keyword(w).is_some_and(|k| k.qualifier)
}

pub(super) fn is_macro_like(w: &str) -> bool {
    w.len() > 1
        && w.bytes().any(|b| b.is_ascii_uppercase())
        && w.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// What the backward scans of `declarator` and `scope` found from a comma between
/// declarators, kept while `collect_decls` runs: the scans of the next declarator of the
/// declaration stop at that comma, so a declaration of 100,000 declarators is read in
/// linear time.
#[derive(Default)]
struct Scans {
    /// The first declarator's delimiter, for the declarator after each comma.
    delims: HashMap<usize, Option<usize>>,
    /// The open parenthesis a declaration is in, scanning back from each comma.
    opens: HashMap<usize, Option<usize>>,
}
impl<'a> Syntax<'a> {
    /// The kind a list of specifier words gives (no declarator operators).
    fn spec_kind(&self, spec: &[usize]) -> VarKind {
        let words = || spec.iter().map(|&i| self.text(i));
        if words().any(|w| matches!(w, "struct" | "union" | "class")) {
            return VarKind::Struct;
        }
        if words().any(|w| w == "enum") {
            return VarKind::Scalar;
        }
        let mut kind = None;
        for w in words() {
            if is_qualifier(w) {
                continue;
            }
            if is_scalar_word(w) {
                kind = Some(kind.unwrap_or(VarKind::Scalar));
            } else if let Some(k) = self.typedefs.get(w) {
                kind = Some(*k);
            } else {
                return VarKind::Other;
            }
        }
        kind.unwrap_or(if words().any(|w| matches!(w, "signed" | "unsigned")) {
            VarKind::Scalar
        } else {
            VarKind::Other
        })
    }

    /// For a preprocessor line `i`: the name it `#define`s, with the (name, body) of an
    /// object-like macro in `bodies`.
    pub(super) fn collect_macro(&mut self, i: usize, bodies: &mut Vec<(&'a str, &'a str)>) {
        let line = self.text(i);
        let rest = line.get(1..).unwrap_or("").trim_start();
        if let Some(r) = rest.strip_prefix("define") {
            let r = r.trim_start();
            let end = r
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(r.len());
            if end > 0 {
                self.macros.push(&r[..end]);
                if !r[end..].starts_with('(') {
                    bodies.push((&r[..end], &r[end..]));
                } else {
                    let text = r[end..].replace("\\\r\n", " ").replace("\\\n", " ");
                    if let Some(written) = super::macro_writes::written_params(&text)
                        && !written.is_empty()
                    {
                        // Defined twice (`#if` branches): either may be the one in effect.
                        let all = self.writing_macros.entry(&r[..end]).or_default();
                        all.extend(written);
                        all.sort_unstable();
                        all.dedup();
                    }
                }
            }
        }
    }

    /// The kind of type a macro body names (`double`, `unsigned long`, `real_t *`), if it is
    /// one.
    pub(super) fn macro_type(&self, body: &str) -> Option<VarKind> {
        let body = body.split("//").next().unwrap_or("");
        let body = body.split("/*").next().unwrap_or("");
        let body = body.replace(['\\', '\n', '\r'], " ");
        let pointer = body.contains('*');
        let mut kind = None;
        for w in body.replace('*', " ").split_whitespace() {
            if is_qualifier(w) {
                continue;
            }
            let k = if is_scalar_word(w) {
                VarKind::Scalar
            } else {
                *self.typedefs.get(w)?
            };
            kind = Some(kind.unwrap_or(k));
        }
        let kind = kind.or_else(|| {
            (body.contains("signed") || body.contains("unsigned")).then_some(VarKind::Scalar)
        })?;
        Some(if pointer { VarKind::Pointer } else { kind })
    }

    /// For an identifier `i`: the type `struct S`, `class C`, `enum E` names, or a
    /// `typedef`'s position in `typedefs` (they are read after all the tags).
    pub(super) fn collect_tag(&mut self, i: usize, typedefs: &mut Vec<usize>) {
        let kind = match self.text(i) {
            "struct" | "class" | "union" => VarKind::Struct,
            "enum" => VarKind::Scalar,
            "typedef" => {
                typedefs.push(i);
                return;
            }
            _ => return,
        };
        if self.is_ident(i + 1) && !is_keyword(self.text(i + 1)) {
            self.typedefs.insert(self.text(i + 1).to_string(), kind);
        }
    }

    /// The types the `typedef`s at `typedefs` (ascending) name.
    pub(super) fn collect_typedefs(&mut self, typedefs: &[usize]) {
        // One past the last typedef read (one inside another's braces is not read).
        let mut next = 0;
        for &i in typedefs {
            if i < next {
                continue;
            }
            let start = i + 1;
            let mut j = start;
            while j < self.toks.len() && self.text(j) != ";" {
                if self.text(j) == "{"
                    && let Some(e) = self.pair(j)
                {
                    j = e;
                }
                j += 1;
            }
            let mut name_at = j.saturating_sub(1);
            let mut array = false;
            while name_at > start && self.text(name_at) == "]" {
                array = true;
                name_at = self.pair(name_at).map_or(start, |o| o.saturating_sub(1));
            }
            if name_at > start && self.is_ident(name_at) {
                let name = self.text(name_at).to_string();
                // The declarator's tokens, without a struct/union/enum body.
                let mut body: Vec<usize> = Vec::new();
                let mut k = start;
                while k < name_at {
                    body.push(k);
                    if self.text(k) == "{"
                        && let Some(e) = self.pair(k)
                    {
                        k = e;
                    }
                    k += 1;
                }
                let has_paren = body.iter().any(|&k| self.text(k) == "(");
                let kind = if has_paren {
                    VarKind::Other
                } else if array {
                    VarKind::Array { extent: None }
                } else if body.iter().any(|&k| self.text(k) == "*") {
                    VarKind::Pointer
                } else {
                    let head: Vec<usize> = body
                        .iter()
                        .copied()
                        .take_while(|&k| self.text(k) != "{")
                        .collect();
                    self.spec_kind(&head)
                };
                self.typedefs.insert(name, kind);
            }
            next = j + 1;
        }
    }

    /// For a `}` at `j` that closes a struct/class/union/enum body defined in a declaration
    /// (`struct pt { int a, b; } pts[100]`): the token before its `{`, the tag's name or its
    /// keyword, where the declaration's specifiers end.
    fn defined_tag(&self, j: usize) -> Option<usize> {
        let tag = |i: usize| matches!(self.text(i), "struct" | "class" | "union" | "enum");
        if self.text(j) != "}" {
            return None;
        }
        let before = self.pair(j)?.checked_sub(1)?;
        let named = self.is_ident(before) && before.checked_sub(1).is_some_and(tag);
        (named || tag(before)).then_some(before)
    }

    /// For a `{` at `o`: whether it opens a struct/class/union/enum body.
    pub(super) fn is_aggregate_body(&self, o: usize) -> bool {
        let mut j = o;
        while j > 0 {
            j -= 1;
            match self.text(j) {
                "struct" | "class" | "union" | "enum" => return true,
                ";" | "{" | "}" | ")" | "=" => return false,
                _ => {}
            }
            if self.toks[j].kind == TokKind::PpLine {
                return false;
            }
        }
        false
    }

    /// For a `{` at `o`: a namespace or `extern "C"` body, which is not a scope.
    pub(super) fn is_namespace_body(&self, o: usize) -> bool {
        let mut j = o;
        while j > 0 {
            j -= 1;
            match self.text(j) {
                "namespace" => return true,
                "extern" => return self.text(j + 1).starts_with('"'),
                "::" | "inline" => {}
                t if self.is_ident(j) || t.starts_with('"') => {}
                _ => return false,
            }
        }
        false
    }

    pub(super) fn byte_range(&self, open: usize) -> Range<usize> {
        let close = self.pair(open).unwrap_or(self.toks.len() - 1);
        self.toks[open].start()..self.toks[close].end()
    }

    /// Scope of a declaration whose specifiers follow token `delim` (or start the file).
    fn scope(
        &self,
        k: usize,
        delim: Option<usize>,
        scans: &mut Scans,
    ) -> Option<(Range<usize>, bool)> {
        let whole = 0..self.src.len();
        // Inside parentheses: a parameter, a `for` init or a condition declaration.
        let mut depth = 0i32;
        let mut j = k;
        let mut open = None;
        // The first comma passed outside brackets: the scan from it finds the same.
        let mut comma = None;
        while j > 0 {
            j -= 1;
            match self.text(j) {
                ")" | "]" => depth += 1,
                "(" | "[" if depth == 0 => {
                    open = (self.text(j) == "(").then_some(j);
                    break;
                }
                "(" | "[" => depth -= 1,
                "{" | "}" | ";" => break,
                "," if depth == 0 => {
                    if let Some(&o) = scans.opens.get(&j) {
                        open = o;
                        break;
                    }
                    comma.get_or_insert(j);
                }
                _ => {}
            }
        }
        if let Some(c) = comma {
            scans.opens.insert(c, open);
        }
        if let Some(p) = open
            && delim.is_some_and(|d| d >= p)
        {
            let before = p.checked_sub(1).map_or("", |b| self.text(b));
            let close = self.pair(p)?;
            if matches!(before, "for" | "if" | "while" | "switch") {
                let end = self.toks.get(close + 1).map_or(self.src.len(), |_| {
                    let st = if self.plain_statement(close + 1) {
                        self.st
                    } else {
                        self.statements
                            .get_or_init(|| Structure::new(self.src, self.toks, &[]))
                    };
                    st.stmt_end(close + 1)
                        .map_or(self.src.len(), |e| self.toks[e - 1].end())
                });
                return Some((self.toks[p - 1].start()..end, false));
            }
            // A function definition's parameter: its body follows the `)`.
            let mut b = close + 1;
            while b < self.toks.len() {
                match self.text(b) {
                    "{" => return Some((self.byte_range(b), true)),
                    "const" | "noexcept" | "override" | "final" | "volatile" | "&" | "&&"
                    | "->" | "::" | "<" | ">" | "*" => b += 1,
                    _ if self.is_ident(b) => b += 1,
                    "(" => b = self.pair(b)? + 1,
                    _ => return None,
                }
            }
            return None;
        }
        let mut block = self.block(k);
        while let Some(o) = block.filter(|&o| self.is_namespace_body(o)) {
            block = self.block(o);
        }
        match block {
            Some(o) if self.is_aggregate_body(o) => None,
            Some(o) => Some((self.byte_range(o), false)),
            None => Some((whole, false)),
        }
    }

    /// Whether the statement at token `i` is one whose end the file's structure finds as a
    /// structure without sites would (a scope ends where the statement does, directives
    /// aside): an expression, declaration or block, which is read up to its `;` or `}`.
    /// Directives change only where statements that hold statements end (`for`, `if`, a
    /// directive taking a statement, a directive standing for one).
    fn plain_statement(&self, i: usize) -> bool {
        self.toks[i].kind != TokKind::PpLine
            && self.st.site_starting(i).is_none()
            && !matches!(self.text(i), "for" | "while" | "switch" | "if" | "do")
    }

    /// Walk back over specifier tokens ending at `j`: (specifiers, delimiter before them).
    fn specifiers(&self, mut j: usize) -> Option<(Vec<usize>, Option<usize>)> {
        let mut spec = Vec::new();
        loop {
            let t = self.text(j);
            if self.is_ident(j) {
                if keyword(t).is_some_and(|w| w.not_a_type) && t != "void" {
                    return None;
                }
                spec.push(j);
            } else if t == "::" {
                spec.push(j);
            } else if t == ">" {
                // Template arguments: back to the matching `<`.
                let mut depth = 0;
                let mut k = j;
                loop {
                    match self.text(k) {
                        ">" => depth += 1,
                        "<" => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        ";" | "{" | "}" => return None,
                        _ => {}
                    }
                    if k == 0 {
                        return None;
                    }
                    k -= 1;
                }
                spec.push(j);
                j = k;
            } else {
                let ok = matches!(t, ";" | "{" | "}" | "(" | "," | ")" | ":")
                    || self.toks[j].kind == TokKind::PpLine;
                return (ok && !spec.is_empty()).then_some((spec, Some(j)));
            }
            if j == 0 {
                return (!spec.is_empty()).then_some((spec, None));
            }
            j -= 1;
        }
    }

    /// Whether token `k` can name a declarator: an identifier followed by one of the tokens
    /// that end a declarator name. Most tokens are ruled out here, before their own text is
    /// read (asked of every token).
    #[inline]
    pub(super) fn may_declare(&self, k: usize) -> bool {
        self.is_ident(k)
            && matches!(
                self.byte(k + 1),
                Some(b'=' | b';' | b',' | b'[' | b')' | b':' | b'{' | b'(')
            )
    }

    /// A declaration whose declarator name is token `k`.
    fn declarator(&self, k: usize, scans: &mut Scans) -> Option<Decl> {
        if !self.may_declare(k) {
            return None;
        }
        let mut next = self.text(k + 1);
        if is_keyword(self.text(k)) {
            return None;
        }
        // `T name(args);` in a function body is a C++ direct-initialized variable.
        let direct_init = next == "("
            && k > 0
            && self.is_ident(k - 1)
            && self.block(k).is_some_and(|o| !self.is_aggregate_body(o));
        if next == "(" && !direct_init {
            return None;
        }
        // `struct S {`, `class D : B {`, `struct S;` name a type.
        let tag = k
            .checked_sub(1)
            .is_some_and(|p| matches!(self.text(p), "struct" | "class" | "union" | "enum"));
        if tag && matches!(next, "{" | ";" | ":") {
            return None;
        }
        let mut j = k.checked_sub(1)?;
        let (mut stars, mut refs, mut var_const, mut restrict) = (0, false, false, false);
        loop {
            match self.text(j) {
                "*" => stars += 1,
                "&" | "&&" => refs = true,
                "const" if stars == 0 && !refs => var_const = true,
                "restrict" | "__restrict" | "__restrict__" if stars == 0 => restrict = true,
                "const" | "volatile" | "restrict" | "__restrict" | "__restrict__" => {}
                _ => break,
            }
            j = j.checked_sub(1)?;
        }
        // `double (*h)[M]`, `void (*fp)(int)`, `int (&r)[4]`.
        let mut paren = false;
        if self.text(j) == "("
            && next == ")"
            && matches!(self.text(k + 2), "[" | "(")
            && (stars > 0 || refs)
        {
            paren = true;
            next = ")";
            j = j.checked_sub(1)?;
        }
        let (spec, delim) = if self.text(j) == "," {
            // `int a, *b`: the specifiers of the declaration's first declarator.
            let mut s = j;
            let mut depth = 0i32;
            let delim = loop {
                if s == 0 {
                    break None;
                }
                s -= 1;
                match self.text(s) {
                    ")" | "]" => depth += 1,
                    "}" => {
                        // An initializer `= { ... }` is skipped; a block's end delimits.
                        match self.pair(s) {
                            Some(o) if o > 0 && self.text(o - 1) == "=" => s = o,
                            _ if depth == 0 => break Some(s),
                            _ => depth += 1,
                        }
                    }
                    "(" if depth == 0 => break Some(s),
                    "(" | "[" | "{" if depth > 0 => depth -= 1,
                    "{" | ";" if depth == 0 => break Some(s),
                    // The previous declarator's comma: the same delimiter.
                    "," if depth == 0 => {
                        if let Some(&d) = scans.delims.get(&s) {
                            break d;
                        }
                    }
                    _ if self.toks[s].kind == TokKind::PpLine => break Some(s),
                    _ => {}
                }
            };
            scans.delims.insert(j, delim);
            if let Some(d) = delim
                && self.text(d) == "("
                && d.checked_sub(1).is_none_or(|b| self.text(b) != "for")
            {
                return None;
            }
            let first = delim.map_or(0, |d| d + 1);
            // tokens of the first declarator: up to `=`, `,`, `[` at depth 0
            let mut e = first;
            while e < j && !matches!(self.text(e), "=" | "," | "[" | "{" | "(") {
                e += 1;
            }
            // e: one past the first declarator's name
            let mut n = e.checked_sub(1)?;
            if !self.is_ident(n) || n < first {
                return None;
            }
            while n > first && matches!(self.text(n - 1), "*" | "&" | "&&" | "const") {
                n -= 1;
            }
            if n == first {
                return None;
            }
            let (spec, _) = self.specifiers(n - 1)?;
            (spec, delim)
        } else if let Some(tag) = self.defined_tag(j) {
            // `struct pt { int a, b; } pts[100];`: the specifiers end with the tag.
            self.specifiers(tag)?
        } else {
            self.specifiers(j)?
        };
        if spec
            .iter()
            .any(|&s| matches!(self.text(s), "typedef" | "return"))
        {
            return None;
        }
        let (scope, param) = self.scope(k, delim, scans)?;
        let spec_const = spec.iter().any(|&s| self.text(s) == "const");
        // `extern int a[];`: an array of unknown size without an initializer.
        let incomplete = !param
            && next == "["
            && self.text(k + 2) == "]"
            && matches!(self.text(k + 3), ";" | ",");
        let kind = if paren && refs {
            VarKind::Other
        } else if paren {
            VarKind::Pointer
        } else if next == "[" {
            if param {
                VarKind::Pointer
            } else {
                let extent = (self.text(k + 3) == "]")
                    .then(|| integer_literal(self.text(k + 2)).flatten())
                    .flatten();
                VarKind::Array { extent }
            }
        } else if refs {
            VarKind::Other
        } else if stars > 0 {
            VarKind::Pointer
        } else {
            match self.spec_kind(&spec) {
                // A parameter of a typedef'd array type (`vec_t a`) is a pointer in C.
                VarKind::Array { .. } if param => VarKind::Pointer,
                k => k,
            }
        };
        // Subscripts inside one object: the declarator's own `[...]` groups, plus the
        // pointer's (not for a typedef'd type, whose shape is unknown here).
        let groups = self.bracket_groups(if paren { k + 2 } else { k + 1 });
        let dims = match kind {
            VarKind::Pointer if paren => 1 + groups,
            // A parameter `T a[][M]` points to arrays; `T *a[]` to pointers.
            VarKind::Pointer if param && next == "[" => {
                if stars > 0 {
                    1
                } else {
                    groups
                }
            }
            VarKind::Pointer if stars > 0 => 1,
            VarKind::Array { .. } => groups,
            _ => 0,
        };
        // `[N][M]` after the name: constant extents when written as integers.
        let mut extents = Vec::new();
        let mut b = k + 1;
        while self.text(b) == "[" && !paren && extents.len() < 16 {
            let Some(close) = self.pair(b) else {
                break;
            };
            let extent = (close == b + 2)
                .then(|| integer_literal(self.text(b + 1)).flatten())
                .flatten();
            extents.push(if param && extents.is_empty() {
                None
            } else {
                extent
            });
            b = close + 1;
        }
        if matches!(kind, VarKind::Pointer) && extents.is_empty() && !paren {
            extents.push(None);
        }
        // A parameter declared as an array: its bounds, where they are constants (literals
        // and the file's macros; a bound that names a variable may have changed since).
        let param_dims = (param && next == "[" && !paren).then(|| {
            crate::semantic::facts::spelled_dims(self.src, self.toks[k].end())
                .into_iter()
                .map(|b| Some(b).filter(|b| self.constant_bound(b)))
                .collect()
        });
        let global = !param
            && (scope == (0..self.src.len()) || spec.iter().any(|&s| self.text(s) == "extern"));
        Some(Decl {
            offset: self.toks[k].start(),
            scope,
            global,
            ty: std::sync::Arc::new(VarType {
                kind,
                is_const: var_const || (spec_const && stars == 0),
                incomplete,
                restrict: restrict && kind == VarKind::Pointer && stars > 0,
                extents,
                dims,
                param_dims,
            }),
        })
    }

    /// How many `[...]` groups follow one another from token `i`.
    fn bracket_groups(&self, mut i: usize) -> u8 {
        let mut n = 0u8;
        while self.text(i) == "[" && n < 16 {
            match self.pair(i) {
                Some(c) => i = c + 1,
                None => break,
            }
            n += 1;
        }
        n
    }

    /// Whether an array bound is a constant from syntax alone: integer literals, `sizeof`,
    /// and names the file `#define`s or spells like macros.
    fn constant_bound(&self, b: &str) -> bool {
        !b.trim().is_empty()
            && crate::semantic::identifiers(b)
                .iter()
                .all(|n| *n == "sizeof" || self.macros.contains(n) || is_macro_like(n))
    }

    /// The declarations whose declarator may be named by the tokens `candidates`
    /// (ascending: those [`may_declare`](Self::may_declare) holds for).
    pub(super) fn collect_decls(&mut self, candidates: &[u32]) {
        let mut lists: HashMap<&'a str, Vec<Decl>> = HashMap::default();
        let mut scans = Scans::default();
        // Declarations of one type share it, and so do the sites' variables they declare.
        let mut types = crate::semantic::facts::Types::default();
        for &k in candidates {
            let k = k as usize;
            if let Some(mut d) = self.declarator(k, &mut scans) {
                d.ty = types.share(Arc::unwrap_or_clone(d.ty));
                lists.entry(self.text(k)).or_default().push(d);
            }
        }
        let mut declared = HashMap::default();
        for (name, mut list) in lists {
            list.sort_by_key(|d| d.offset);
            if list.len() > 1 {
                forget_conflicting_extents(&mut list);
            }
            declared.insert(name.to_string(), list.iter().map(|d| d.offset).collect());
            // For each declaration, 1 + the nearest earlier one whose scope ends later (0: none).
            let mut wider = vec![0; list.len()];
            let mut stack: Vec<usize> = Vec::new();
            for (i, d) in list.iter().enumerate() {
                while stack
                    .last()
                    .is_some_and(|&t| list[t].scope.end <= d.scope.end)
                {
                    stack.pop();
                }
                wider[i] = stack.last().map_or(0, |&t| t + 1);
                stack.push(i);
            }
            self.decls.insert(name, Decls { list, wider });
        }
        self.declared = Arc::new(declared);
    }

    /// The innermost declaration of `name` visible at `at`: the last one before `at` whose
    /// scope contains it. Logarithmic, not linear: a file may declare `i` in 100,000 loops.
    pub(super) fn lookup(&self, name: &str, at: usize) -> Option<&Decl> {
        let decls = self.decls.get(name)?;
        decls.visible(decls.list.partition_point(|d| d.offset <= at), at)
    }
}

/// A name declared twice in one scope with different extents (`double a[100];` and
/// `double a[10];` in two `#if` branches): syntax cannot tell which one the build sees, so
/// the later one, which `lookup` answers with, keeps no extent that the two do not share
/// (checks against an extent would refuse what the other branch makes valid).
fn forget_conflicting_extents(list: &mut [Decl]) {
    let mut last_in: HashMap<(usize, usize), usize> = HashMap::default();
    for i in 0..list.len() {
        let scope = (list[i].scope.start, list[i].scope.end);
        if let Some(&j) = last_in.get(&scope) {
            let (earlier, later) = (&list[j].ty.extents, &list[i].ty.extents);
            let shared: Vec<Option<u64>> = (later.iter().enumerate())
                .map(|(k, e)| e.filter(|_| earlier.get(k) == Some(e)))
                .collect();
            if shared != *later {
                let mut ty = VarType::clone(&list[i].ty);
                if let VarKind::Array { extent } = &mut ty.kind {
                    *extent = shared.first().copied().flatten();
                }
                ty.extents = shared;
                list[i].ty = Arc::new(ty);
            }
        }
        last_in.insert(scope, i);
    }
}

impl Decls {
    /// The innermost declaration visible at `at`, where `j` declarations are at or before it.
    pub(super) fn visible(&self, mut j: usize, at: usize) -> Option<&Decl> {
        let Decls { list, wider } = self;
        while j > 0 {
            let d = &list[j - 1];
            if d.scope.contains(&at) {
                return Some(d);
            }
            // A scope that ends before `at`: so do those of the declarations between it and
            // the nearest earlier one whose scope ends later.
            j = if d.scope.end <= at {
                wider[j - 1]
            } else {
                j - 1
            };
        }
        None
    }
}
