//! The same facts from tokens alone: declarations found by their shape (`T x`, `T *p`,
//! `T a[N]`, parameters, `for` inits, simple typedefs), uses and writes by the tokens around
//! them. Used without libclang and for regions libclang cannot vouch for.
//!
//! This file holds the token tables (matching brackets, enclosing blocks) and the queries
//! other passes ask; `declarations` reads the declarations once per file, `uses` reads each
//! site's region against them.

mod declarations;
mod macro_writes;
mod parameters;
mod uses;

use super::facts::{VarKind, VarType};
use crate::hash::HashMap;
use crate::lex::{TokKind, Token};
use crate::structure::Structure;
use std::ops::Range;
use std::sync::Arc;

/// No token (in `Syntax`'s per-token tables).
const NONE: u32 = u32::MAX;

/// The brackets `Syntax` pairs, (opener, closer).
const BRACKETS: [(u8, u8); 3] = [(b'(', b')'), (b'[', b']'), (b'{', b'}')];

/// A token index in a per-token table (files have fewer than 4 billion tokens; a larger
/// index reads as "none").
fn index32(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(NONE)
}

#[derive(Debug, Clone)]
struct Decl {
    offset: usize,
    scope: Range<usize>,
    ty: Arc<VarType>,
    /// Static storage shared by the whole program: at file or namespace scope, or `extern`
    /// in a block (a function's own `static` is not).
    global: bool,
}

/// The declarations of one name.
struct Decls {
    /// By offset.
    list: Vec<Decl>,
    /// For `lookup`'s skips (see `collect_decls`).
    wider: Vec<usize>,
}

/// What [`Syntax::read_tokens`] finds in its pass over the file's tokens.
#[derive(Default)]
struct Found<'a> {
    /// `Syntax::blocks`.
    blocks: Vec<(u32, u32)>,
    /// The (name, body) of object-like macros.
    bodies: Vec<(&'a str, &'a str)>,
    /// The `typedef` keywords.
    typedefs: Vec<usize>,
    /// The tokens that may name a declarator (`may_declare`), 32-bit as the per-token
    /// tables.
    declarators: Vec<u32>,
}

pub struct Syntax<'a> {
    src: &'a str,
    toks: &'a [Token],
    /// The file's statements and matching brackets (`pair`).
    st: &'a Structure<'a>,
    /// Where the innermost enclosing `{` changes: (first token, that `{` or `NONE`), by
    /// token. A table per token would hold 4 bytes a token; blocks change at braces only.
    blocks: Vec<(u32, u32)>,
    /// Declarations of each name.
    decls: HashMap<&'a str, Decls>,
    /// Offsets of the declarations of each name, ascending (the names a region declares),
    /// shared with the sites' facts.
    declared: Arc<HashMap<String, Vec<usize>>>,
    typedefs: HashMap<String, VarKind>,
    /// Names `#define`d in the file.
    macros: Vec<&'a str>,
    /// The file's function-like macros that assign parameters: the parameters' indexes.
    writing_macros: HashMap<&'a str, Vec<usize>>,
    /// Statement ends, built once when a `for`/`if` declaration needs its scope.
    statements: std::sync::OnceLock<Structure<'a>>,
}

impl<'a> Syntax<'a> {
    #[cfg(test)]
    pub fn new(src: &'a str, toks: &'a [Token]) -> Self {
        let st = Box::leak(Box::new(Structure::new(src, toks, &[])));
        Self::with_defines(st, &[])
    }

    /// `st`: the file's structure, whose brackets are paired as `Syntax` reads them.
    /// `defines`: `-D` flags of the file's compile command (`NAME=VALUE`), which can name
    /// types (`-DDATA_TYPE=double`) as `#define`s in the file can.
    pub fn with_defines(st: &'a Structure<'a>, defines: &[String]) -> Self {
        let (src, toks) = (st.src, st.toks);
        let mut s = Syntax {
            src,
            toks,
            st,
            blocks: Vec::new(),
            decls: HashMap::default(),
            declared: Arc::default(),
            typedefs: HashMap::default(),
            macros: Vec::new(),
            writing_macros: HashMap::default(),
            statements: std::sync::OnceLock::new(),
        };
        // One pass over the tokens (a large file has millions): the blocks, the type names
        // and macros, and the tokens that may name a declarator, read once the file's type
        // names are all known.
        let found = s.read_tokens();
        s.blocks = found.blocks;
        s.collect_typedefs(&found.typedefs);
        let from_flags = defines.iter().filter_map(|d| {
            let (name, value) = d.split_once('=')?;
            Some((name.trim(), value))
        });
        for (name, body) in found.bodies.into_iter().chain(from_flags) {
            if let Some(kind) = s.macro_type(body) {
                s.typedefs.entry(name.to_string()).or_insert(kind);
            }
        }
        s.collect_decls(&found.declarators);
        s
    }

    /// What the pass over the tokens finds: the blocks, the macros, the type names `struct`
    /// and the like give (in `self`), the `typedef`s and the tokens that may name a
    /// declarator.
    fn read_tokens(&mut self) -> Found<'a> {
        let (src, toks) = (self.src, self.toks);
        let mut found = Found::default();
        let blocks = &mut found.blocks;
        let mut stack: Vec<usize> = Vec::new();
        // Positions in `stack` of its `(`, `[` and `{`: the innermost block and the opener a
        // closer matches without scanning 100,000 open parentheses. A closer matches the
        // innermost opener of its kind and closes those above it (as `Structure` pairs them).
        let mut opens: [Vec<usize>; 3] = Default::default();
        let bytes = src.as_bytes();
        for (i, t) in toks.iter().enumerate() {
            match t.kind {
                // One byte long and punctuation (its text not sliced: every token is read).
                TokKind::Punct if t.end() == t.start() + 1 => {}
                TokKind::Ident => {
                    if self.may_declare(i) {
                        found.declarators.push(index32(i));
                    }
                    // The words `collect_tags` reads are 4 to 7 bytes long: most
                    // identifiers are not sliced.
                    if (4..=7).contains(&(t.end() - t.start())) {
                        self.collect_tag(i, &mut found.typedefs);
                    }
                    continue;
                }
                TokKind::PpLine => {
                    self.collect_macro(i, &mut found.bodies);
                    continue;
                }
                _ => continue,
            }
            let b = bytes[t.start()];
            match b {
                b'(' | b'[' | b'{' => {
                    let kind = BRACKETS.iter().position(|&(o, _)| o == b).unwrap_or(0);
                    opens[kind].push(stack.len());
                    stack.push(i);
                    if b == b'{' {
                        blocks.push((index32(i + 1), index32(i)));
                    }
                }
                b')' | b']' | b'}' => {
                    let kind = BRACKETS.iter().position(|&(_, c)| c == b).unwrap_or(0);
                    if let Some(&pos) = opens[kind].last() {
                        stack.truncate(pos);
                        let inner = opens[2].last().copied();
                        for v in &mut opens {
                            while v.last().is_some_and(|&b| b >= pos) {
                                v.pop();
                            }
                        }
                        if inner.is_some_and(|b| b >= pos) {
                            let top = opens[2].last().map_or(NONE, |&p| index32(stack[p]));
                            blocks.push((index32(i + 1), top));
                        }
                    }
                }
                _ => {}
            }
        }
        found.blocks.shrink_to_fit();
        found
    }

    /// The bracket matching bracket token `i`.
    fn pair(&self, i: usize) -> Option<usize> {
        // `matching` and `opener` answer for brackets only: tested by the one byte.
        match self.byte(i)? {
            b'(' | b'[' | b'{' => self.st.matching(i).map(|after| after - 1),
            b')' | b']' | b'}' => self.st.opener(i),
            _ => None,
        }
    }

    /// The innermost `{` around token `i`.
    fn block(&self, i: usize) -> Option<usize> {
        if i >= self.toks.len() {
            return None;
        }
        let i = u32::try_from(i).ok()?;
        let n = self.blocks.partition_point(|&(from, _)| from <= i);
        let &(_, b) = self.blocks.get(n.checked_sub(1)?)?;
        (b != NONE).then_some(b as usize)
    }

    fn text(&self, i: usize) -> &'a str {
        self.toks.get(i).map_or("", |t| t.text(self.src))
    }

    /// Token `i`'s byte when it is one byte long (tested without slicing its text).
    fn byte(&self, i: usize) -> Option<u8> {
        let t = self.toks.get(i)?;
        (t.end() == t.start() + 1).then(|| self.src.as_bytes()[t.start()])
    }

    fn is_ident(&self, i: usize) -> bool {
        self.toks.get(i).is_some_and(|t| t.kind == TokKind::Ident)
    }

    /// Where the local variable `name` that token `k` sees is declared, when that is not
    /// the block `k` is in (a parameter belongs to its function's body).
    pub fn declared_outside_block(&self, name: &str, k: usize) -> Option<usize> {
        let d = self.lookup(name, self.toks.get(k)?.start())?;
        let block = self.block(k).map(|o| self.byte_range(o));
        (d.scope != (0..self.src.len()) && !d.global && Some(&d.scope) != block.as_ref())
            .then_some(d.offset)
    }

    /// The variable `name` that token `k` sees, declared in this file: the declaration's
    /// offset, whether it is const-qualified, and whether it has static storage shared by the
    /// whole program (its declarations all name one object). None for a macro, an enum
    /// constant, a function or a variable declared in another file.
    pub fn variable(&self, name: &str, k: usize) -> Option<(usize, bool, bool)> {
        let d = self.lookup(name, self.toks.get(k)?.start())?;
        Some((d.offset, d.ty.is_const, d.global))
    }

    /// The block token `k` is in, as the offset of its `{` (None: file scope).
    pub fn block_at(&self, k: usize) -> Option<usize> {
        self.block(k).map(|o| self.toks[o].start())
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
mod tests;
