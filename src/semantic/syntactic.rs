//! The same facts from tokens alone: declarations found by their shape (`T x`, `T *p`,
//! `T a[N]`, parameters, `for` inits, simple typedefs), uses and writes by the tokens around
//! them. Used without libclang and for regions libclang cannot vouch for.

use super::SiteInput;
use super::facts::{Declared, LoopShape, RegionVar, SiteFacts, VarKind, VarType};
use crate::hash::{HashMap, HashSet};
use crate::lex::{SCALAR_WORDS, TokKind, Token, is_scalar_word};
use crate::structure::Structure;
use std::ops::Range;
use std::sync::Arc;

const QUALIFIERS: &[&str] = &[
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

const NOT_A_TYPE: &[&str] = &[
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

/// The words above and the type keywords, in one set: asked about every identifier.
static KEYWORDS: std::sync::LazyLock<HashSet<&'static str>> = std::sync::LazyLock::new(|| {
    let types = [
        "struct", "union", "class", "enum", "auto", "typedef", "void",
    ];
    [QUALIFIERS, SCALAR_WORDS, NOT_A_TYPE, &types]
        .concat()
        .into_iter()
        .collect()
});

fn is_keyword(w: &str) -> bool {
    KEYWORDS.contains(w)
}

fn is_macro_like(w: &str) -> bool {
    w.len() > 1
        && w.bytes().any(|b| b.is_ascii_uppercase())
        && w.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

fn int_literal(s: &str) -> Option<u64> {
    let t = s.trim_end_matches(['u', 'U', 'l', 'L']);
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else {
        t.parse().ok()
    }
}

#[derive(Debug, Clone)]
struct Decl {
    offset: usize,
    scope: Range<usize>,
    ty: VarType,
    /// Static storage shared by the whole program: at file or namespace scope, or `extern`
    /// in a block (a function's own `static` is not).
    global: bool,
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

/// No token (in `Syntax`'s per-token tables).
const NONE: u32 = u32::MAX;

/// A token index in a per-token table (files have fewer than 4 billion tokens; a larger
/// index reads as "none").
fn index32(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(NONE)
}

pub struct Syntax<'a> {
    src: &'a str,
    toks: &'a [Token],
    /// Matching bracket of each bracket token (`NONE`: none), per token.
    pair: Vec<u32>,
    /// Innermost enclosing `{` of each token (`NONE`: none).
    block: Vec<u32>,
    /// Declarations of each name, by offset.
    decls: HashMap<&'a str, Vec<Decl>>,
    /// Per name, for `lookup`'s skips (see `collect_decls`).
    wider: HashMap<&'a str, Vec<usize>>,
    /// Offsets of the declarations of each name, ascending (the names a region declares),
    /// shared with the sites' facts.
    declared: Arc<HashMap<String, Vec<usize>>>,
    typedefs: HashMap<String, VarKind>,
    /// Names `#define`d in the file.
    macros: Vec<&'a str>,
    /// Statement ends, built once when a `for`/`if` declaration needs its scope.
    statements: std::sync::OnceLock<Structure<'a>>,
}

impl<'a> Syntax<'a> {
    #[cfg(test)]
    pub fn new(src: &'a str, toks: &'a [Token]) -> Self {
        Self::with_defines(src, toks, &[])
    }

    /// `defines`: `-D` flags of the file's compile command (`NAME=VALUE`), which can name
    /// types (`-DDATA_TYPE=double`) as `#define`s in the file can.
    pub fn with_defines(src: &'a str, toks: &'a [Token], defines: &[String]) -> Self {
        let mut pair = vec![NONE; toks.len()];
        let mut block = vec![NONE; toks.len()];
        let mut stack: Vec<usize> = Vec::new();
        // Positions in `stack` of its `(`, `[` and `{`: the innermost block and the opener a
        // closer matches without scanning 100,000 open parentheses.
        let mut opens: [Vec<usize>; 3] = Default::default();
        for (i, t) in toks.iter().enumerate() {
            block[i] = opens[2].last().map_or(NONE, |&p| index32(stack[p]));
            if t.kind != TokKind::Punct {
                continue;
            }
            let tx = t.text(src);
            match tx {
                "(" | "[" | "{" => {
                    opens[["(", "[", "{"].iter().position(|o| *o == tx).unwrap_or(0)]
                        .push(stack.len());
                    stack.push(i);
                }
                ")" | "]" | "}" => {
                    let kind = [")", "]", "}"].iter().position(|c| *c == tx).unwrap_or(0);
                    if let Some(&pos) = opens[kind].last() {
                        let o = stack[pos];
                        stack.truncate(pos);
                        for v in &mut opens {
                            while v.last().is_some_and(|&b| b >= pos) {
                                v.pop();
                            }
                        }
                        pair[o] = index32(i);
                        pair[i] = index32(o);
                    }
                }
                _ => {}
            }
        }
        let mut s = Syntax {
            src,
            toks,
            pair,
            block,
            decls: HashMap::default(),
            wider: HashMap::default(),
            declared: Arc::default(),
            typedefs: HashMap::default(),
            macros: Vec::new(),
            statements: std::sync::OnceLock::new(),
        };
        let bodies = s.collect_macros();
        s.collect_typedefs();
        let from_flags = defines.iter().filter_map(|d| {
            let (name, value) = d.split_once('=')?;
            Some((name.trim(), value))
        });
        for (name, body) in bodies.into_iter().chain(from_flags) {
            if let Some(kind) = s.macro_type(body) {
                s.typedefs.entry(name.to_string()).or_insert(kind);
            }
        }
        s.collect_decls();
        s
    }

    /// The bracket matching bracket token `i`.
    fn pair(&self, i: usize) -> Option<usize> {
        self.pair
            .get(i)
            .filter(|&&p| p != NONE)
            .map(|&p| p as usize)
    }

    /// The innermost `{` around token `i`.
    fn block(&self, i: usize) -> Option<usize> {
        self.block
            .get(i)
            .filter(|&&b| b != NONE)
            .map(|&b| b as usize)
    }

    fn text(&self, i: usize) -> &'a str {
        self.toks.get(i).map_or("", |t| t.text(self.src))
    }

    fn is_ident(&self, i: usize) -> bool {
        self.toks.get(i).is_some_and(|t| t.kind == TokKind::Ident)
    }

    /// The kind a list of specifier words gives (no declarator operators).
    fn spec_kind(&self, spec: &[usize]) -> VarKind {
        let words: Vec<&str> = spec.iter().map(|&i| self.text(i)).collect();
        if words
            .iter()
            .any(|w| matches!(*w, "struct" | "union" | "class"))
        {
            return VarKind::Struct;
        }
        if words.contains(&"enum") {
            return VarKind::Scalar;
        }
        let mut kind = None;
        for w in &words {
            if QUALIFIERS.contains(w) {
                continue;
            }
            if is_scalar_word(w) {
                kind = Some(kind.unwrap_or(VarKind::Scalar));
            } else if let Some(k) = self.typedefs.get(*w) {
                kind = Some(*k);
            } else {
                return VarKind::Other;
            }
        }
        kind.unwrap_or(
            if words.contains(&"signed") || words.contains(&"unsigned") {
                VarKind::Scalar
            } else {
                VarKind::Other
            },
        )
    }

    /// Names `#define`d in the file; returns the (name, body) of object-like macros.
    fn collect_macros(&mut self) -> Vec<(&'a str, &'a str)> {
        let mut bodies = Vec::new();
        for t in self.toks.iter().filter(|t| t.kind == TokKind::PpLine) {
            let line = t.text(self.src);
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
                    }
                }
            }
        }
        bodies
    }

    /// The kind of type a macro body names (`double`, `unsigned long`, `real_t *`), if it is
    /// one.
    fn macro_type(&self, body: &str) -> Option<VarKind> {
        let body = body.split("//").next().unwrap_or("");
        let body = body.split("/*").next().unwrap_or("");
        let body = body.replace(['\\', '\n', '\r'], " ");
        let pointer = body.contains('*');
        let mut kind = None;
        for w in body.replace('*', " ").split_whitespace() {
            if QUALIFIERS.contains(&w) {
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

    fn collect_typedefs(&mut self) {
        // `struct S`, `class C`, `enum E` name types.
        for i in 0..self.toks.len().saturating_sub(1) {
            let kind = match self.text(i) {
                "struct" | "class" | "union" => VarKind::Struct,
                "enum" => VarKind::Scalar,
                _ => continue,
            };
            if self.is_ident(i + 1) && !is_keyword(self.text(i + 1)) {
                self.typedefs.insert(self.text(i + 1).to_string(), kind);
            }
        }
        let mut i = 0;
        while i < self.toks.len() {
            if self.text(i) != "typedef" {
                i += 1;
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
            i = j + 1;
        }
    }

    /// For a `{` at `o`: whether it opens a struct/class/union/enum body.
    fn is_aggregate_body(&self, o: usize) -> bool {
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
    fn is_namespace_body(&self, o: usize) -> bool {
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

    fn byte_range(&self, open: usize) -> Range<usize> {
        let close = self.pair(open).unwrap_or(self.toks.len() - 1);
        self.toks[open].start..self.toks[close].end
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
                    let st = self
                        .statements
                        .get_or_init(|| Structure::new(self.src, self.toks, &[]));
                    st.stmt_end(close + 1)
                        .map_or(self.src.len(), |e| self.toks[e - 1].end)
                });
                return Some((self.toks[p - 1].start..end, false));
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

    /// Walk back over specifier tokens ending at `j`: (specifiers, delimiter before them).
    fn specifiers(&self, mut j: usize) -> Option<(Vec<usize>, Option<usize>)> {
        let mut spec = Vec::new();
        loop {
            let t = self.text(j);
            if self.is_ident(j) {
                if NOT_A_TYPE.contains(&t) && t != "void" {
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

    /// A declaration whose declarator name is token `k`.
    fn declarator(&self, k: usize, scans: &mut Scans) -> Option<Decl> {
        let name = self.text(k);
        if !self.is_ident(k) || is_keyword(name) {
            return None;
        }
        let mut next = self.text(k + 1);
        // `T name(args);` in a function body is a C++ direct-initialized variable.
        let direct_init = next == "("
            && self.block(k).is_some_and(|o| !self.is_aggregate_body(o))
            && k > 0
            && self.is_ident(k - 1);
        if !matches!(next, "=" | ";" | "," | "[" | ")" | ":" | "{") && !direct_init {
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
                    .then(|| int_literal(self.text(k + 2)))
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
                .then(|| int_literal(self.text(b + 1)))
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
            super::facts::spelled_dims(self.src, self.toks[k].end)
                .into_iter()
                .map(|b| Some(b).filter(|b| self.constant_bound(b)))
                .collect()
        });
        let global = !param
            && (scope == (0..self.src.len()) || spec.iter().any(|&s| self.text(s) == "extern"));
        Some(Decl {
            offset: self.toks[k].start,
            scope,
            global,
            ty: VarType {
                kind,
                is_const: var_const || (spec_const && stars == 0),
                incomplete,
                restrict: restrict && kind == VarKind::Pointer && stars > 0,
                extents,
                dims,
                param_dims,
            },
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
            && super::identifiers(b)
                .iter()
                .all(|n| *n == "sizeof" || self.macros.contains(n) || is_macro_like(n))
    }

    fn collect_decls(&mut self) {
        let mut out: HashMap<&'a str, Vec<Decl>> = HashMap::default();
        let mut scans = Scans::default();
        for k in 0..self.toks.len() {
            if let Some(d) = self.declarator(k, &mut scans) {
                out.entry(self.text(k)).or_default().push(d);
            }
        }
        let mut declared = HashMap::default();
        for (name, list) in &mut out {
            list.sort_by_key(|d| d.offset);
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
            self.wider.insert(name, wider);
        }
        self.declared = Arc::new(declared);
        self.decls = out;
    }

    /// The innermost declaration of `name` visible at `at`: the last one before `at` whose
    /// scope contains it. Logarithmic, not linear: a file may declare `i` in 100,000 loops.
    fn lookup(&self, name: &str, at: usize) -> Option<&Decl> {
        let list = self.decls.get(name)?;
        let wider = self.wider.get(name)?;
        let mut j = list.partition_point(|d| d.offset <= at);
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

    /// Whether the use of a variable at token `k` modifies it.
    fn is_write(&self, k: usize, kind: VarKind) -> bool {
        let mut e = k + 1;
        if matches!(kind, VarKind::Array { .. } | VarKind::Struct) {
            loop {
                match self.text(e) {
                    "[" => match self.pair(e) {
                        Some(c) => e = c + 1,
                        None => break,
                    },
                    "." if self.is_ident(e + 1) => e += 2,
                    _ => break,
                }
            }
        }
        let next = self.text(e);
        if crate::lex::ASSIGNMENT_OPS.contains(&next) || matches!(next, "++" | "--") {
            return true;
        }
        let prev = k.checked_sub(1).map_or("", |p| self.text(p));
        if matches!(prev, "++" | "--") {
            return true;
        }
        if prev == "&" {
            let pp = k.checked_sub(2);
            return pp.is_none_or(|p| {
                let t = self.text(p);
                !(self.is_ident(p)
                    || matches!(self.toks[p].kind, TokKind::Number | TokKind::Literal)
                    || t == ")"
                    || t == "]")
            });
        }
        false
    }

    /// The identifiers in tokens `r` that may name variables (not keywords, members, labels),
    /// as (token, name, offset).
    fn names_in(&self, r: Range<usize>) -> impl Iterator<Item = (usize, &'a str, usize)> + '_ {
        r.filter(|&k| self.is_ident(k)).filter_map(|k| {
            let name = self.text(k);
            let prev = k.checked_sub(1).map_or("", |p| self.text(p));
            let skip = is_keyword(name) || matches!(prev, "." | "->" | "::" | "goto");
            (!skip).then(|| (k, name, self.toks[k].start))
        })
    }

    /// Where the local variable `name` that token `k` sees is declared, when that is not
    /// the block `k` is in (a parameter belongs to its function's body).
    pub fn declared_outside_block(&self, name: &str, k: usize) -> Option<usize> {
        let d = self.lookup(name, self.toks.get(k)?.start)?;
        let block = self.block(k).map(|o| self.byte_range(o));
        (d.scope != (0..self.src.len()) && !d.global && Some(&d.scope) != block.as_ref())
            .then_some(d.offset)
    }

    /// The variable `name` that token `k` sees, declared in this file: the declaration's
    /// offset, whether it is const-qualified, and whether it has static storage shared by the
    /// whole program (its declarations all name one object). None for a macro, an enum
    /// constant, a function or a variable declared in another file.
    pub fn variable(&self, name: &str, k: usize) -> Option<(usize, bool, bool)> {
        let d = self.lookup(name, self.toks.get(k)?.start)?;
        Some((d.offset, d.ty.is_const, d.global))
    }

    /// The block token `k` is in, as the offset of its `{` (None: file scope).
    pub fn block_at(&self, k: usize) -> Option<usize> {
        self.block(k).map(|o| self.toks[o].start)
    }

    /// The variables of static storage shared by the whole program (see `Decl::global`)
    /// that tokens `body` use, not const: (name, declaration offset, first use), in order of
    /// first use.
    pub fn global_uses(&self, body: Range<usize>) -> Vec<(&'a str, usize, usize)> {
        let mut out: Vec<(&'a str, usize, usize)> = Vec::new();
        for (k, name, at) in self.names_in(body) {
            // A call: `extern int f(int);` in a block reads as a variable to `declarator`. An
            // address (`&g`): GCC does not ask for a `declare` then.
            if self.text(k + 1) == "(" || k.checked_sub(1).is_some_and(|p| self.text(p) == "&") {
                continue;
            }
            if let Some(d) = self.lookup(name, at)
                && d.global
                && d.offset != at
                && !d.ty.is_const
                && !out.iter().any(|(_, o, _)| *o == d.offset)
            {
                out.push((name, d.offset, at));
            }
        }
        out
    }

    #[cfg(test)]
    /// Facts for one site; unresolved names are added to `unresolved`.
    pub fn site_facts(
        &self,
        st: &Structure,
        s: &SiteInput,
        unresolved: &mut Vec<String>,
    ) -> SiteFacts {
        self.sites_facts(st, &[s], unresolved)
            .pop()
            .unwrap_or_default()
    }

    /// [`Syntax::site_facts`] of each of `sites`, in their order. The variables of a
    /// statement are those of its own tokens and those its nested sites found (declared
    /// outside it too), so a nest of 10,000 loop directives is read once, not 10,000 times.
    /// Runs of sites whose statements do not overlap the ones before are read in parallel
    /// (a file of many directives side by side).
    pub fn sites_facts(
        &self,
        st: &Structure,
        sites: &[&SiteInput],
        unresolved: &mut Vec<String>,
    ) -> Vec<SiteFacts> {
        // Split where a site's statement starts after every statement before it.
        const RUN: usize = 256;
        let mut runs: Vec<Range<usize>> = Vec::new();
        let (mut from, mut end) = (0, 0);
        let split = crate::par::splits(sites.len());
        for (i, s) in sites.iter().enumerate() {
            let toks = s.stmt_toks.as_ref().filter(|_| s.vars);
            if split && i - from >= RUN && toks.is_none_or(|t| t.start >= end) {
                runs.push(from..i);
                from = i;
            }
            if let Some(t) = toks {
                end = end.max(t.end);
            }
        }
        runs.push(from..sites.len());
        let per_run = crate::par::map_runs(&runs, |r| {
            let mut names = Vec::new();
            let facts = self.run_facts(st, &sites[r.clone()], &mut names);
            (facts, names)
        });
        let mut out = Vec::with_capacity(sites.len());
        for (facts, names) in per_run {
            out.extend(facts);
            for n in &names {
                note_unresolved(unresolved, n);
            }
        }
        out
    }

    /// `sites_facts` of one run of sites.
    fn run_facts(
        &self,
        st: &Structure,
        sites: &[&SiteInput],
        unresolved: &mut Vec<String>,
    ) -> Vec<SiteFacts> {
        // The sites whose variables are collected: (site, tokens, bytes).
        let regions: Vec<(usize, Range<usize>, Range<usize>)> = sites
            .iter()
            .enumerate()
            .filter(|(_, s)| s.vars)
            .filter_map(|(i, s)| Some((i, s.stmt_toks.clone()?, s.stmt.clone()?)))
            .map(|(i, t, b)| (i, t.start..t.end.min(self.toks.len()), b))
            .collect();
        // Names of the regions' tokens, from the first one's on.
        let base = regions.iter().map(|(_, t, _)| t.start).min().unwrap_or(0);
        let names = self.resolve(base, regions.iter().map(|(_, t, _)| t.clone()));
        let mut vars = self.region_vars(&regions, base, &names);
        let mut out = Vec::with_capacity(sites.len());
        // Tokens already read for unresolved names: [from, to) (one interval, see below).
        let mut read = 0..0;
        let mut region = regions.iter().peekable();
        for (i, s) in sites.iter().enumerate() {
            let mut f = SiteFacts {
                exact: false,
                stmt: s.stmt.clone(),
                ..SiteFacts::default()
            };
            if s.is_loop
                && let Some(fl) = &s.for_loop
            {
                let depth = s.last_token.map_or(1, |t| st.nest_depth(t + 1, 64).max(1));
                f.loop_shape = Some(LoopShape {
                    var: fl.var.clone(),
                    declared: fl.declared,
                    depth,
                });
            }
            if let Some((_, toks, bytes)) = region.next_if(|(r, ..)| *r == i) {
                // A name no declaration resolves, by its first use: tokens read for an
                // earlier site add none. A site's tokens start at or after those of the
                // sites before it, or the interval starts again.
                let from = if toks.start >= read.start && toks.start <= read.end {
                    toks.start.max(read.end)
                } else {
                    read = toks.start..toks.start;
                    toks.start
                };
                let unknown = names.get(from - base..toks.end - base).unwrap_or_default();
                for (k, n) in (from..).zip(unknown) {
                    if let Resolved::Unknown(name) = *n {
                        self.note_unresolved_use(unresolved, k, name);
                    }
                }
                read.end = read.end.max(toks.end);
                f.vars = std::mem::take(&mut vars[i]);
                for v in &f.vars {
                    if v.ty.kind == VarKind::Other {
                        note_unresolved(unresolved, &v.name);
                    }
                }
                f.inner = Declared::new(self.declared.clone(), bytes.clone());
            }
            for name in &s.names {
                match self.lookup(name, s.start) {
                    Some(d) => {
                        f.names.insert(name.clone(), d.ty.clone());
                    }
                    None => note_unresolved(unresolved, name),
                }
            }
            out.push(f);
        }
        out
    }

    /// The declaration each name token of `ranges` resolves to (the others: `Skip`), from
    /// token `base` (the first of the ranges) on.
    fn resolve(
        &self,
        base: usize,
        ranges: impl Iterator<Item = Range<usize>>,
    ) -> Vec<Resolved<'_, 'a>> {
        let mut ranges: Vec<Range<usize>> = ranges.collect();
        let end = ranges.iter().map(|r| r.end).max().unwrap_or(base);
        let mut names = vec![Resolved::Skip; end.saturating_sub(base)];
        ranges.sort_by_key(|r| r.start);
        let mut done = 0;
        for r in ranges {
            for (k, name, at) in self.names_in(r.start.max(done)..r.end.max(done)) {
                names[k - base] = match self.lookup(name, at) {
                    Some(d) => Resolved::Decl(name, d),
                    None => Resolved::Unknown(name),
                };
            }
            done = done.max(r.end);
        }
        names
    }

    /// An unresolved name at token `k`, noted unless it is a call, a type, a label or a
    /// macro.
    fn note_unresolved_use(&self, unresolved: &mut Vec<String>, k: usize, name: &str) {
        let next = self.text(k + 1);
        let type_like = self.typedefs.contains_key(name)
            || self.macros.contains(&name)
            || next == "::"
            || self.is_ident(k + 1)
            || matches!(next, "*" | "&") && self.is_ident(k + 2)
            || is_scalar_word(name);
        if next != "("
            && !name.starts_with("acc_")
            && next != ":"
            && !is_macro_like(name)
            && !type_like
        {
            note_unresolved(unresolved, name);
        }
    }

    /// For each of `regions` (site, tokens, bytes), the variables its tokens use that are
    /// declared outside it, in order of first use (per site index; empty for the others).
    /// Regions are read innermost first; each reads its own tokens and takes the uses its
    /// nested regions found, keeping those declared outside it too.
    fn region_vars<'d>(
        &'d self,
        regions: &[(usize, Range<usize>, Range<usize>)],
        base: usize,
        names: &[Resolved<'d, 'a>],
    ) -> Vec<Vec<RegionVar>> {
        let sites = regions.iter().map(|(i, ..)| i + 1).max().unwrap_or(0);
        let mut out: Vec<Vec<RegionVar>> = vec![Vec::new(); sites];
        // Outermost first (by start, then longest); each region's nested regions, disjoint.
        let mut order: Vec<usize> = (0..regions.len()).collect();
        order.sort_by_key(|&r| (regions[r].1.start, std::cmp::Reverse(regions[r].1.end), r));
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); regions.len()];
        let mut stack: Vec<usize> = Vec::new();
        for &r in &order {
            let t = &regions[r].1;
            while let Some(&top) = stack.last() {
                let o = &regions[top].1;
                if o.start <= t.start && t.end <= o.end {
                    break;
                }
                stack.pop();
            }
            if let Some(&top) = stack.last() {
                let last_end = children[top].last().map_or(0, |&c| regions[c].1.end);
                if children[top].is_empty() || t.start >= last_end {
                    children[top].push(r);
                }
            }
            stack.push(r);
        }
        // Per region: its uses, one per name and declaration outside it.
        let mut uses: Vec<Vec<Use<'d>>> = vec![Vec::new(); regions.len()];
        for &r in order.iter().rev() {
            let (_, toks, bytes) = &regions[r];
            let mut found: Vec<Use<'d>> = Vec::new();
            let mut index: HashMap<(&str, usize), usize> = HashMap::default();
            let mut add =
                |u: Use<'d>, found: &mut Vec<Use<'d>>| match index.get(&(u.name, u.decl.offset)) {
                    Some(&p) => {
                        let e: &mut Use<'d> = &mut found[p];
                        e.first = e.first.min(u.first);
                        e.writes.extend(u.writes);
                    }
                    None => {
                        index.insert((u.name, u.decl.offset), found.len());
                        found.push(u);
                    }
                };
            let mut k = toks.start;
            let mut nested = children[r].iter().peekable();
            while k < toks.end {
                if let Some(&&c) = nested.peek()
                    && regions[c].1.start <= k
                {
                    nested.next();
                    for u in std::mem::take(&mut uses[c]) {
                        if !bytes.contains(&u.decl.offset) {
                            add(u, &mut found);
                        }
                    }
                    k = k.max(regions[c].1.end);
                    continue;
                }
                if let Resolved::Decl(name, d) = names[k - base]
                    && !bytes.contains(&d.offset)
                {
                    let at = self.toks[k].start;
                    let writes = if self.is_write(k, d.ty.kind) {
                        vec![at]
                    } else {
                        Vec::new()
                    };
                    add(
                        Use {
                            name,
                            decl: d,
                            first: at,
                            writes,
                        },
                        &mut found,
                    );
                }
                k += 1;
            }
            // A nested region at the very end (empty, or ending the statement).
            for &c in nested {
                for u in std::mem::take(&mut uses[c]) {
                    if !bytes.contains(&u.decl.offset) {
                        add(u, &mut found);
                    }
                }
            }
            for u in &mut found {
                u.writes.sort_unstable();
                u.writes.dedup();
            }
            // One variable per name: the declaration of its first use, every write.
            let mut by_name: Vec<&Use<'d>> = found.iter().collect();
            by_name.sort_by_key(|u| (u.name, u.first));
            // Sized up front: a vector grown from empty holds room for 4 (a site's worth).
            let mut vars: Vec<RegionVar> = Vec::with_capacity(by_name.len());
            for u in by_name {
                match vars.last_mut() {
                    Some(v) if v.name == u.name => {
                        v.writes.extend(&u.writes);
                        v.writes.sort_unstable();
                    }
                    _ => vars.push(RegionVar {
                        name: u.name.to_string(),
                        ty: u.decl.ty.clone(),
                        decl: Some(u.decl.offset),
                        first_use: u.first,
                        writes: u.writes.clone(),
                    }),
                }
            }
            vars.sort_by_key(|v| v.first_use);
            out[regions[r].0] = vars;
            uses[r] = found;
        }
        out
    }
}

/// What a token of a region names.
#[derive(Clone, Copy)]
enum Resolved<'d, 'a> {
    /// Not a name that may be a variable (or outside every region).
    Skip,
    /// A name without a declaration.
    Unknown(&'a str),
    Decl(&'a str, &'d Decl),
}

/// The uses in a region of a name declared by one declaration outside it.
#[derive(Clone)]
struct Use<'d> {
    name: &'d str,
    decl: &'d Decl,
    /// Offset of the first.
    first: usize,
    /// Offsets of those that modify it.
    writes: Vec<usize>,
}

/// How many unresolved names the `syntactic-facts` note lists.
pub const UNRESOLVED_SHOWN: usize = 8;

/// Add `name` to the first `UNRESOLVED_SHOWN` distinct unresolved names (a bounded list:
/// a clause may name hundreds of thousands).
pub fn note_unresolved(unresolved: &mut Vec<String>, name: &str) {
    if unresolved.len() < UNRESOLVED_SHOWN && !unresolved.iter().any(|u| u == name) {
        unresolved.push(name.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lex::lex;

    fn ty(src: &str, name: &str, at: &str) -> Option<VarType> {
        let toks = lex(src);
        let s = Syntax::new(src, &toks);
        s.lookup(name, src.find(at).unwrap()).map(|d| d.ty.clone())
    }

    fn kind(src: &str, name: &str) -> Option<VarKind> {
        ty(src, name, "@").map(|t| t.kind)
    }

    #[test]
    fn declarations_by_shape() {
        let src = "typedef double real; typedef struct P { int x; } P;\n\
                   void f(int n, double *a, float b[], const int c, real r, P p, P *pp) {\n\
                   double s = 0, *q = a, arr[10]; const double k = 1; int *const cp = 0;\n\
                   struct Q *sq; unsigned u; size_t z; foo_t w; const double *pc;\n\
                   for (int i = 0, j = 1; i < n; i++) { int inner; }\n@ }";
        assert_eq!(kind(src, "n"), Some(VarKind::Scalar));
        assert_eq!(kind(src, "a"), Some(VarKind::Pointer));
        assert_eq!(kind(src, "b"), Some(VarKind::Pointer));
        assert_eq!(kind(src, "r"), Some(VarKind::Scalar));
        assert_eq!(kind(src, "p"), Some(VarKind::Struct));
        assert_eq!(kind(src, "pp"), Some(VarKind::Pointer));
        assert_eq!(kind(src, "s"), Some(VarKind::Scalar));
        assert_eq!(kind(src, "q"), Some(VarKind::Pointer));
        assert_eq!(kind(src, "arr"), Some(VarKind::Array { extent: Some(10) }));
        assert_eq!(kind(src, "sq"), Some(VarKind::Pointer));
        assert_eq!(kind(src, "u"), Some(VarKind::Scalar));
        assert_eq!(kind(src, "z"), Some(VarKind::Scalar));
        assert_eq!(kind(src, "w"), Some(VarKind::Other));
        assert_eq!(
            kind(src, "i"),
            None,
            "for-init variables are scoped to the loop"
        );
        assert_eq!(kind(src, "inner"), None);
        assert_eq!(kind(src, "x"), None, "struct members are not variables");
        assert!(ty(src, "c", "@").unwrap().is_const);
        assert!(ty(src, "k", "@").unwrap().is_const);
        assert!(ty(src, "cp", "@").unwrap().is_const);
        assert!(!ty(src, "pc", "@").unwrap().is_const);
        assert!(!ty(src, "q", "@").unwrap().is_const);
        let src = "extern int w[]; int d[] = {1}; void f(int p[]) { @ }";
        assert!(ty(src, "w", "@").unwrap().incomplete);
        assert!(!ty(src, "d", "@").unwrap().incomplete);
        assert!(!ty(src, "p", "@").unwrap().incomplete);
    }

    #[test]
    fn restrict_and_dimensions() {
        let src = "double g[4][5]; void f(double *restrict p, double *q, double **pp, \
                   double (*restrict rows)[8], double a[][8], double *v[], int n) {\n\
                   double *restrict *inner; double loc[3]; @ }";
        let t = |n: &str| ty(src, n, "@").unwrap();
        assert_eq!((t("g").dims, t("g").restrict), (2, false));
        assert_eq!((t("p").dims, t("p").restrict), (1, true));
        assert_eq!((t("q").dims, t("q").restrict), (1, false));
        assert_eq!((t("pp").dims, t("pp").restrict), (1, false));
        assert_eq!((t("rows").dims, t("rows").restrict), (2, true));
        assert_eq!((t("a").dims, t("a").kind), (2, VarKind::Pointer));
        assert_eq!(t("v").dims, 1, "a[] of pointers");
        assert!(
            !t("inner").restrict,
            "the pointed-to pointer is restrict, not this one"
        );
        assert_eq!(t("loc").dims, 1);
        assert_eq!(t("n").dims, 0);
    }

    #[test]
    fn typedef_struct_bodies_do_not_make_pointers() {
        let src = "typedef struct { double *x; void (*f)(int); } F; typedef F *PF;\n\
                   void g(F s, PF p) { @ }";
        assert_eq!(kind(src, "s"), Some(VarKind::Struct));
        assert_eq!(kind(src, "p"), Some(VarKind::Pointer));
    }

    #[test]
    fn array_parameters_keep_their_bounds() {
        let src = "#define N 8\nvoid g(int n, double a[N][4], double b[], double c[n]) { @ }";
        let t = ty(src, "a", "@").unwrap();
        assert_eq!(t.kind, VarKind::Pointer);
        assert_eq!(t.param_section("a").as_deref(), Some("a[0:N][0:4]"));
        assert_eq!(ty(src, "b", "@").unwrap().param_section("b"), None);
        assert_eq!(ty(src, "c", "@").unwrap().param_section("c"), None);
        // A typedef'd array: a pointer whose bound is not written at the parameter.
        let src = "#define N 8\ntypedef double vec_t[N];\nvoid g(vec_t v) { @ }";
        let t = ty(src, "v", "@").unwrap();
        assert_eq!(t.kind, VarKind::Pointer);
        assert_eq!(t.param_section("v"), None);
    }

    #[test]
    fn long_declarations() {
        // 60,000 declarators in one declaration, a `for` init and a parameter list: each
        // declarator's scans stop at the comma before it (quadratic before).
        let n = 20_000;
        let list = |f: &dyn Fn(usize) -> String| (0..n).map(f).collect::<Vec<_>>().join(", ");
        let src = format!(
            "void f(int n, {}) {{\ndouble {};\nfor (int {}; n < 1; n++) {{}}\n@ }}",
            list(&|i| format!("float *p{i}")),
            list(&|i| match i % 4 {
                0 => format!("s{i} = {i}"),
                1 => format!("*s{i}"),
                2 => format!("s{i}[2] = {{{i}, 1}}"),
                _ => format!("s{i}"),
            }),
            list(&|i| format!("k{i} = 0")),
        );
        let toks = lex(&src);
        let sx = Syntax::new(&src, &toks);
        let at = src.find('@').unwrap();
        let kind = |name: &str| sx.lookup(name, at).map(|d| d.ty.kind);
        for i in [0, 1, 2, 3, n / 2 + 1, n - 2, n - 1] {
            let want = match i % 4 {
                1 => VarKind::Pointer,
                2 => VarKind::Array { extent: Some(2) },
                _ => VarKind::Scalar,
            };
            assert_eq!(kind(&format!("s{i}")), Some(want), "s{i}");
            assert_eq!(kind(&format!("p{i}")), Some(VarKind::Pointer), "p{i}");
            assert_eq!(kind(&format!("k{i}")), None, "k{i} is scoped to the loop");
        }
    }

    #[test]
    fn expressions_are_not_declarations() {
        let src = "int g; void f(int a) { g = a; f(a); return; x = y; (double) a; @ }";
        assert_eq!(kind(src, "g"), Some(VarKind::Scalar));
        assert_eq!(kind(src, "y"), None);
        assert_eq!(kind(src, "x"), None);
    }

    /// Every statement starting with `for`, `{`, `if` or `while` of `src` as a site that
    /// collects variables (nested, side by side, two sites on one statement).
    fn statement_sites(src: &str, toks: &[Token]) -> Vec<SiteInput> {
        let st = Structure::new(src, toks, &[]);
        let mut out = Vec::new();
        for (k, t) in toks.iter().enumerate() {
            if !matches!(t.text(src), "for" | "{" | "if" | "while") {
                continue;
            }
            let Some(end) = st.stmt_end(k) else { continue };
            for twice in 0..1 + usize::from(t.text(src) == "for") {
                out.push(SiteInput {
                    name: "parallel".into(),
                    start: t.start + twice,
                    end: t.start + twice,
                    last_token: None,
                    stmt: Some(t.start..toks[end - 1].end),
                    stmt_toks: Some(k..end),
                    for_loop: None,
                    vars: true,
                    is_loop: false,
                    names: vec!["n".into(), "zz".into()],
                });
            }
        }
        out
    }

    /// Many sites side by side are read in runs, in parallel: the same facts, and the same
    /// first unresolved names, as each site read alone.
    #[test]
    fn runs_of_sites_have_the_facts_of_sites_read_alone() {
        let mut src = String::from("int g; double x;\n");
        for k in 0..120 {
            src.push_str(&format!(
                "void f{k}(int n, double *a) {{\n\
                 for (int i = 0; i < n; i++) {{ a[i] += x * g + u{k}; }}\n\
                 {{ int t = {k}; for (int j = 0; j < n; j++) {{ a[j] = t + v{}; x++; }} }}\n\
                 while (n > 0) {{ n--; if (n > 2) {{ g = n; }} }}\n\
                 }}\n",
                k % 7
            ));
        }
        let toks = lex(&src);
        let sx = Syntax::new(&src, &toks);
        let st = Structure::new(&src, &toks, &[]);
        let sites = statement_sites(&src, &toks);
        assert!(sites.len() > 3 * 256, "{}", sites.len());
        let all: Vec<&SiteInput> = sites.iter().collect();
        let mut unresolved = Vec::new();
        let together = sx.sites_facts(&st, &all, &mut unresolved);
        assert_eq!(together.len(), sites.len());
        let mut alone_unresolved = Vec::new();
        for (s, t) in sites.iter().zip(&together) {
            let alone = sx.site_facts(&st, s, &mut alone_unresolved);
            assert_eq!(alone.vars, t.vars, "site at {}", s.start);
            assert_eq!(alone.names, t.names, "site at {}", s.start);
            assert_eq!(alone.stmt, t.stmt, "site at {}", s.start);
        }
        assert_eq!(unresolved, alone_unresolved);
        assert_eq!(unresolved.len(), UNRESOLVED_SHOWN);
    }

    #[test]
    fn nested_sites_have_the_facts_of_sites_read_alone() {
        let src = "int g, h[4]; double x;\n\
                   void f(int n, double *a, double *b, int m) {\n\
                   for (int i = 0; i < n; i++) {\n\
                     double t = a[i]; u1 = t;\n\
                     for (int j = 0; j < m; j++) { a[j] += t * x; g++; int x = j; b[x] = x; }\n\
                     while (m > 0) { int n = 2; m -= n; h[n] = g; }\n\
                     if (t > 0) { double a = 1; b[i] = a + u2; } else x = 2;\n\
                     { int i = 3; { int i = 4; b[i] = i; } a[i] = i; }\n\
                     for (int k = 0; k < n; k++) for (int l = k; l < n; l++) x += a[k] * b[l] + g;\n\
                     n = m; f(m, &x, b, n);\n\
                   }\n\
                   }\n";
        let toks = lex(src);
        let sx = Syntax::new(src, &toks);
        let st = Structure::new(src, &toks, &[]);
        let sites = statement_sites(src, &toks);
        assert!(sites.len() > 15, "{}", sites.len());
        let all: Vec<&SiteInput> = sites.iter().collect();
        let mut unresolved = Vec::new();
        let together = sx.sites_facts(&st, &all, &mut unresolved);
        let mut alone_unresolved = Vec::new();
        for (s, t) in sites.iter().zip(&together) {
            let alone = sx.site_facts(&st, s, &mut alone_unresolved);
            assert_eq!(alone.vars, t.vars, "site at {}", s.start);
            assert_eq!(alone.names, t.names, "site at {}", s.start);
            for name in ["i", "j", "t", "x", "n", "a", "g", "k", "l", "m"] {
                assert_eq!(alone.declared_inside(name), t.declared_inside(name));
            }
        }
        assert_eq!(unresolved, alone_unresolved);
        assert_eq!(unresolved, ["u1", "u2", "zz"]);
        // The outer loop, in order of first use: `x` is the global (written three times;
        // the inner `x` shadows it only in its block), `a[j] +=` writes through `a`, not `a`.
        let outer = &together[0];
        let shown: Vec<(&str, usize)> = outer
            .vars
            .iter()
            .map(|v| (v.name.as_str(), v.writes.len()))
            .collect();
        assert_eq!(
            shown,
            [
                ("n", 1),
                ("a", 0),
                ("m", 1),
                ("x", 3),
                ("g", 1),
                ("b", 0),
                ("h", 1)
            ]
        );
        assert!(outer.declared_inside("t") && !outer.declared_inside("g"));
    }

    #[test]
    fn writes() {
        let src = "void f(int n, double *a) { int s, t, u, v, w; s = 1; t += 2; u++; --v; g(&w); a[0] = n * 2; }";
        let toks = lex(src);
        let sx = Syntax::new(src, &toks);
        let at = |pat: &str| {
            let off = src.rfind(pat).unwrap();
            toks.iter().position(|t| t.start == off).unwrap()
        };
        for (pat, w) in [
            ("s = 1", true),
            ("t +=", true),
            ("u++", true),
            ("v;", true),
            ("w)", true),
            ("a[0]", false),
            ("n * 2", false),
        ] {
            assert_eq!(sx.is_write(at(pat), VarKind::Scalar), w, "{pat}");
        }
    }
}
