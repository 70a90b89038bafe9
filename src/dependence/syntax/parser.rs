//! A recursive-descent parser of the expanded tokens into the tree: statements and
//! declarations here, expressions in `expressions`. Anything else is [`Unsupported`].

mod expressions;

use super::macros::Tk;
use super::{Declarator, Expr, For, ForInit, Shape, Stmt};
use crate::lex::TokKind;

/// A parse failure: where and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    pub at: usize,
    pub what: String,
    /// Control flow that leaves the loop (`return`, `goto`, `switch`, labels).
    pub control: bool,
}

type P<T> = Result<T, Unsupported>;

/// Arithmetic type words (`int32_t` and the like included).
fn is_scalar_type(w: &str) -> bool {
    crate::lex::is_scalar_word(w) || matches!(w, "signed" | "unsigned")
}
const FLOAT_TYPES: &[&str] = &[
    "float",
    "double",
    "_Complex",
    "_Float16",
    "__fp16",
    "_Float128",
    "__bf16",
    "float_t",
    "double_t",
];
const QUALIFIERS: &[&str] = &[
    "const",
    "volatile",
    "register",
    "restrict",
    "__restrict",
    "__restrict__",
];

fn is_type_word(w: &str) -> bool {
    is_scalar_type(w)
        || QUALIFIERS.contains(&w)
        || matches!(
            w,
            "struct" | "union" | "enum" | "static" | "auto" | "void" | "extern"
        )
}

/// Keywords that are never a variable, function or type name.
const KEYWORDS: &[&str] = &[
    "if",
    "else",
    "for",
    "while",
    "do",
    "switch",
    "case",
    "default",
    "break",
    "continue",
    "return",
    "goto",
    "sizeof",
    "typedef",
    "asm",
    "__asm__",
    "try",
    "catch",
    "throw",
    "new",
    "delete",
    "this",
    "operator",
    "template",
    "typename",
    "alignof",
    "_Alignof",
    "decltype",
    "static_assert",
    "_Static_assert",
    "co_return",
    "co_await",
    "co_yield",
    "using",
];

/// How deeply a loop the parser reads may nest, in units of one chained operand: `a + b + c`,
/// `a, b, c` and `a[0][0]` are read iteratively but build a tree as deep as the chain, which
/// the analysis walks recursively. A nested statement, parenthesized, unary or assignment
/// expression or braced initializer costs [`NESTED`] units (the parser recurses through
/// several functions for it): 100 levels, or 500 chained operands. A deeper loop is not
/// analyzed (it is dependent), so neither the parser nor the analysis of its tree can exhaust
/// a thread's stack (2 MiB for the worker threads, also in a debug build).
pub const MAX_NESTING: usize = 500;
/// The units of [`MAX_NESTING`] one nested statement or expression costs.
pub const NESTED: usize = 5;

pub struct Parser<'t> {
    toks: &'t [Tk],
    pos: usize,
    /// Where the last token is (for errors at the end).
    end_at: usize,
    /// Statements and expressions being read, at most [`MAX_NESTING`].
    depth: usize,
}

impl<'t> Parser<'t> {
    pub fn new(toks: &'t [Tk]) -> Self {
        let end_at = toks.last().map_or(0, |t| t.at);
        Parser {
            toks,
            pos: 0,
            end_at,
            depth: 0,
        }
    }

    /// `read` one level deeper, or a failure beyond [`MAX_NESTING`].
    fn nested<T>(&mut self, read: impl FnOnce(&mut Self) -> P<T>) -> P<T> {
        let outer = self.depth;
        self.deeper(NESTED)?;
        let r = read(self);
        self.depth = outer;
        r
    }

    /// `units` deeper, or a failure beyond [`MAX_NESTING`]: a nested read, or one more
    /// operand of a chain. The caller restores the depth when it returns.
    fn deeper(&mut self, units: usize) -> P<()> {
        if self.depth + units > MAX_NESTING {
            return self.fail("the loop is nested too deeply");
        }
        self.depth += units;
        Ok(())
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    fn peek(&self) -> &str {
        self.toks.get(self.pos).map_or("", |t| t.text.as_str())
    }
    fn peek_at(&self, k: usize) -> &str {
        self.toks.get(self.pos + k).map_or("", |t| t.text.as_str())
    }
    fn kind_at(&self, k: usize) -> Option<TokKind> {
        self.toks.get(self.pos + k).map(|t| t.kind)
    }
    fn here(&self) -> usize {
        self.toks.get(self.pos).map_or(self.end_at, |t| t.at)
    }
    fn bump(&mut self) -> &Tk {
        let t = &self.toks[self.pos.min(self.toks.len() - 1)];
        self.pos += 1;
        t
    }
    fn fail<T>(&self, what: impl Into<String>) -> P<T> {
        Err(Unsupported {
            at: self.here(),
            what: what.into(),
            control: false,
        })
    }

    fn fail_control<T>(&self, what: impl Into<String>) -> P<T> {
        Err(Unsupported {
            at: self.here(),
            what: what.into(),
            control: true,
        })
    }
    fn expect(&mut self, s: &str) -> P<()> {
        if self.peek() == s {
            self.pos += 1;
            Ok(())
        } else if self.at_end() {
            self.fail(format!("expected '{s}' at the end of the loop"))
        } else {
            self.fail(format!("expected '{s}', found '{}'", self.peek()))
        }
    }

    /// One statement.
    pub fn stmt(&mut self) -> P<Stmt> {
        self.nested(Self::stmt_at)
    }

    fn stmt_at(&mut self) -> P<Stmt> {
        // Preprocessor lines: loop directives and harmless pragmas only.
        while self.kind_at(0) == Some(TokKind::PpLine) {
            let text: String = self.peek().split_whitespace().collect::<Vec<_>>().join(" ");
            let body = text.trim_start_matches('#').trim_start();
            let harmless = body.starts_with("pragma")
                && !body.starts_with("pragma acc")
                && !body.starts_with("pragma omp");
            let acc_loop =
                body.starts_with("pragma acc loop") || body.starts_with("pragma acc cache");
            if !(harmless || acc_loop) {
                return self.fail(format!("'{text}' in the loop"));
            }
            self.pos += 1;
        }
        let at = self.here();
        match self.peek() {
            "{" => {
                self.pos += 1;
                let mut body = Vec::new();
                while self.peek() != "}" {
                    if self.at_end() {
                        return self.fail("unbalanced braces");
                    }
                    body.push(self.stmt()?);
                }
                self.pos += 1;
                Ok(Stmt::Block(body))
            }
            ";" => {
                self.pos += 1;
                Ok(Stmt::Empty)
            }
            "if" => {
                self.pos += 1;
                self.expect("(")?;
                let c = self.expr()?;
                self.expect(")")?;
                let then = self.stmt()?;
                let els = if self.peek() == "else" {
                    self.pos += 1;
                    Some(Box::new(self.stmt()?))
                } else {
                    None
                };
                Ok(Stmt::If(c, Box::new(then), els))
            }
            "for" => {
                let f = self.for_stmt()?;
                Ok(Stmt::For(Box::new(f)))
            }
            "while" => {
                self.pos += 1;
                self.expect("(")?;
                let c = self.expr()?;
                self.expect(")")?;
                Ok(Stmt::While(c, Box::new(self.stmt()?)))
            }
            "do" => {
                self.pos += 1;
                let body = self.stmt()?;
                self.expect("while")?;
                self.expect("(")?;
                let c = self.expr()?;
                self.expect(")")?;
                self.expect(";")?;
                Ok(Stmt::DoWhile(Box::new(body), c))
            }
            "continue" => {
                self.pos += 1;
                self.expect(";")?;
                Ok(Stmt::Continue(at))
            }
            "break" => {
                self.pos += 1;
                self.expect(";")?;
                Ok(Stmt::Break(at))
            }
            w @ ("return" | "goto" | "switch" | "case" | "default" | "try" | "throw" | "asm"
            | "__asm__") => self.fail_control(format!("'{w}' in the loop")),
            _ if self.kind_at(0) == Some(TokKind::Ident) && self.peek_at(1) == ":" => {
                self.fail_control("a label in the loop")
            }
            _ if self.starts_decl() => {
                let d = self.decl()?;
                self.expect(";")?;
                Ok(Stmt::Decl(d))
            }
            _ => {
                let e = self.expr()?;
                self.expect(";")?;
                Ok(Stmt::Expr(e))
            }
        }
    }

    /// `for (init; cond; incr) body`, at `for`.
    pub fn for_stmt(&mut self) -> P<For> {
        let at = self.here();
        self.expect("for")?;
        self.expect("(")?;
        let init = if self.peek() == ";" {
            ForInit::None
        } else if self.starts_decl() {
            ForInit::Decl(self.decl()?)
        } else {
            ForInit::Expr(self.expr()?)
        };
        if self.peek() == ":" {
            return self.fail("a range-based for loop");
        }
        self.expect(";")?;
        let cond = if self.peek() == ";" {
            None
        } else {
            Some(self.expr()?)
        };
        self.expect(";")?;
        let incr = if self.peek() == ")" {
            None
        } else {
            Some(self.expr()?)
        };
        self.expect(")")?;
        let body = self.stmt()?;
        Ok(For {
            at,
            init,
            cond,
            incr,
            body,
        })
    }

    /// Whether a declaration starts here: type words, or `Name Name` / `Name *Name` (a
    /// typedef'd type), or `std::` types.
    fn starts_decl(&self) -> bool {
        let w = self.peek();
        if is_type_word(w) {
            return true;
        }
        if self.kind_at(0) != Some(TokKind::Ident) || KEYWORDS.contains(&w) {
            return false;
        }
        let mut k = 1;
        while self.peek_at(k) == "::" && self.kind_at(k + 1) == Some(TokKind::Ident) {
            k += 2;
        }
        if self.peek_at(k) == "<" {
            return true; // a template type; `decl` rejects it
        }
        while matches!(self.peek_at(k), "*" | "&" | "&&") || QUALIFIERS.contains(&self.peek_at(k)) {
            k += 1;
        }
        self.kind_at(k) == Some(TokKind::Ident)
            && !KEYWORDS.contains(&self.peek_at(k))
            && matches!(self.peek_at(k + 1), "=" | ";" | "," | "[" | ")")
    }

    /// A declaration (without its `;`).
    fn decl(&mut self) -> P<Vec<Declarator>> {
        let mut words: Vec<String> = Vec::new();
        let mut named = false; // a typedef/struct name was seen
        loop {
            let w = self.peek().to_string();
            if matches!(w.as_str(), "struct" | "union" | "enum") {
                self.pos += 1;
                if self.kind_at(0) != Some(TokKind::Ident) {
                    return self.fail("an anonymous type in a declaration");
                }
                self.pos += 1;
                if self.peek() == "{" {
                    return self.fail("a type defined in the loop");
                }
                words.push("struct".into());
                named = true;
            } else if is_type_word(&w) {
                self.pos += 1;
                words.push(w);
            } else if !named
                && self.kind_at(0) == Some(TokKind::Ident)
                && !KEYWORDS.contains(&w.as_str())
                && !words.iter().any(|x| is_scalar_type(x))
            {
                self.pos += 1;
                let mut name = w;
                while self.peek() == "::" && self.kind_at(1) == Some(TokKind::Ident) {
                    self.pos += 1;
                    name.push_str("::");
                    name.push_str(&self.bump().text.clone());
                }
                if self.peek() == "<" {
                    return self.fail("a template type in a declaration");
                }
                words.push(name);
                named = true;
            } else {
                break;
            }
        }
        if words
            .iter()
            .any(|w| matches!(w.as_str(), "static" | "extern"))
        {
            return self.fail("a static or extern variable in the loop");
        }
        let scalar = words.iter().any(|w| is_scalar_type(w));
        let float = words.iter().any(|w| FLOAT_TYPES.contains(&w.as_str()));
        let base_known = scalar && !named;
        let auto = words.iter().any(|w| w == "auto");
        let mut out = Vec::new();
        loop {
            let (mut stars, mut refs, mut restrict) = (0u8, false, false);
            loop {
                match self.peek() {
                    "*" => {
                        stars = stars.saturating_add(1);
                        restrict = false;
                    }
                    "&" | "&&" => refs = true,
                    "restrict" | "__restrict" | "__restrict__" => restrict = true,
                    "const" | "volatile" => {}
                    _ => break,
                }
                self.pos += 1;
            }
            if self.kind_at(0) != Some(TokKind::Ident) || KEYWORDS.contains(&self.peek()) {
                return self.fail("a declarator the analysis does not understand");
            }
            let at = self.here();
            let name = self.bump().text.clone();
            let mut dims = 0u8;
            while self.peek() == "[" {
                self.pos += 1;
                if self.peek() != "]" {
                    self.expr()?;
                }
                self.expect("]")?;
                dims = dims.saturating_add(1);
            }
            let shape = if refs || auto {
                Shape::Unknown
            } else if dims > 0 {
                // Elements that are pointers or typedef'd arrays: deeper subscripts load.
                Shape::Array { dims }
            } else if stars > 0 {
                Shape::Pointer { dims: 1, restrict }
            } else if base_known {
                Shape::Scalar { integer: !float }
            } else {
                Shape::Object
            };
            let mut init = Vec::new();
            match self.peek() {
                "=" => {
                    self.pos += 1;
                    if self.peek() == "{" {
                        init = self.brace_list()?;
                    } else {
                        init.push(self.assign()?);
                    }
                }
                "(" | "{" => return self.fail("a C++ initializer in the loop"),
                _ => {}
            }
            out.push(Declarator {
                at,
                name,
                shape,
                init,
            });
            if self.peek() == "," {
                self.pos += 1;
                continue;
            }
            break;
        }
        Ok(out)
    }

    fn brace_list(&mut self) -> P<Vec<Expr>> {
        self.expect("{")?;
        self.nested(|p| p.list("}"))
    }

    /// Comma-separated expressions (nested `{...}` flattened) up to `close`, consumed.
    fn list(&mut self, close: &str) -> P<Vec<Expr>> {
        let mut out = Vec::new();
        while self.peek() != close {
            if self.peek() == "{" {
                out.extend(self.brace_list()?);
            } else {
                out.push(self.assign()?);
            }
            if self.peek() == "," {
                self.pos += 1;
            } else {
                break;
            }
        }
        self.expect(close)?;
        Ok(out)
    }
}
