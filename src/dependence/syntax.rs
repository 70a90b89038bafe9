//! The loop's tokens as the compiler sees them (the file's own object- and function-like
//! macros expanded), parsed into a small C statement/expression tree. Anything outside the
//! subset the dependence test understands is a parse error, which makes the loop dependent.

use crate::hash::HashMap;
use crate::lex::{TokKind, Token};

/// A token of the loop after macro expansion; `at` is where it (or its macro use) is in
/// the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tk {
    pub text: String,
    pub at: usize,
    pub kind: TokKind,
}

/// A macro of the file that can be expanded: defined once, never `#undef`ined, no `#`/`##`.
#[derive(Debug, Clone)]
struct Macro {
    params: Option<Vec<String>>,
    body: Vec<Tk>,
    defined_at: usize,
}

/// The file's expandable macros.
pub struct Macros {
    defs: HashMap<String, Option<Macro>>,
}

const MAX_EXPANDED: usize = 100_000;

impl Macros {
    pub fn new(src: &str, toks: &[Token], pp: &crate::lex::PpLines) -> Self {
        let mut defs: HashMap<String, Option<Macro>> = HashMap::default();
        for t in toks.iter().filter(|t| t.kind == TokKind::PpLine) {
            let line = pp.inner(src, t);
            let word = |k: usize| line.get(k).map(|x| x.text(src));
            match word(0) {
                Some("define") => {}
                Some("undef") => {
                    if let Some(n) = word(1) {
                        defs.insert(n.to_string(), None);
                    }
                    continue;
                }
                _ => continue,
            }
            let Some(name) = line.get(1).filter(|x| x.kind == TokKind::Ident) else {
                continue;
            };
            let key = name.text(src).to_string();
            // `#define F(x)`: the parenthesis touches the name.
            let mut k = 2;
            let params = if line
                .get(2)
                .is_some_and(|p| p.text(src) == "(" && p.start == name.end)
            {
                let mut ps = Vec::new();
                k = 3;
                let mut ok = false;
                while let Some(p) = line.get(k) {
                    k += 1;
                    match p.text(src) {
                        ")" => {
                            ok = true;
                            break;
                        }
                        "," => {}
                        w if p.kind == TokKind::Ident => ps.push(w.to_string()),
                        _ => break,
                    }
                }
                if !ok {
                    defs.insert(key, None);
                    continue;
                }
                Some(ps)
            } else {
                None
            };
            let body: Vec<Tk> = line[k.min(line.len())..]
                .iter()
                .map(|x| Tk {
                    text: x.text(src).to_string(),
                    at: x.start,
                    kind: x.kind,
                })
                .collect();
            let usable = !body.iter().any(|b| b.text == "#" || b.text == "##");
            let entry = usable.then_some(Macro {
                params,
                body,
                defined_at: t.start,
            });
            // Defined twice (e.g. in `#if` branches): which one applies is unknown.
            match defs.get(&key) {
                Some(_) => {
                    defs.insert(key, None);
                }
                None => {
                    defs.insert(key, entry);
                }
            }
        }
        Macros { defs }
    }

    /// Whether `name` is a macro of the file (expandable or not).
    pub fn is_macro(&self, name: &str) -> bool {
        self.defs.contains_key(name)
    }

    /// The tokens `toks[range]` with the file's macros expanded (those defined before
    /// `before`). Preprocessor lines are kept as they are.
    pub fn expand(
        &self,
        src: &str,
        toks: &[Token],
        range: std::ops::Range<usize>,
        before: usize,
    ) -> Result<Vec<Tk>, String> {
        let input: Vec<Tk> = toks[range]
            .iter()
            .map(|t| Tk {
                text: t.text(src).to_string(),
                at: t.start,
                kind: t.kind,
            })
            .collect();
        let mut out = Vec::new();
        self.expand_into(&input, &[], before, 0, &mut out)?;
        Ok(out)
    }

    fn expand_into(
        &self,
        input: &[Tk],
        hidden: &[String],
        before: usize,
        depth: usize,
        out: &mut Vec<Tk>,
    ) -> Result<(), String> {
        if depth > 32 {
            return Err("macros nested too deeply".into());
        }
        let mut k = 0;
        while k < input.len() {
            if out.len() > MAX_EXPANDED {
                return Err("the loop is too large".into());
            }
            let t = &input[k];
            let m = (t.kind == TokKind::Ident && !hidden.contains(&t.text))
                .then(|| self.defs.get(&t.text))
                .flatten()
                .and_then(|m| m.as_ref())
                .filter(|m| m.defined_at < before);
            let Some(m) = m else {
                out.push(t.clone());
                k += 1;
                continue;
            };
            let mut hide = hidden.to_vec();
            hide.push(t.text.clone());
            let relocate = |b: &Tk| Tk {
                at: t.at,
                ..b.clone()
            };
            match &m.params {
                None => {
                    let body: Vec<Tk> = m.body.iter().map(relocate).collect();
                    self.expand_into(&body, &hide, before, depth + 1, out)?;
                    k += 1;
                }
                Some(params) => {
                    if input.get(k + 1).is_none_or(|p| p.text != "(") {
                        out.push(t.clone());
                        k += 1;
                        continue;
                    }
                    // Arguments: split at commas outside brackets.
                    let mut args: Vec<Vec<Tk>> = vec![Vec::new()];
                    let mut level = 0i32;
                    let mut j = k + 2;
                    let mut closed = false;
                    while j < input.len() {
                        let a = &input[j];
                        match a.text.as_str() {
                            "(" | "[" | "{" => level += 1,
                            ")" | "]" | "}" if level == 0 => {
                                if a.text == ")" {
                                    closed = true;
                                }
                                break;
                            }
                            ")" | "]" | "}" => level -= 1,
                            "," if level == 0 => {
                                args.push(Vec::new());
                                j += 1;
                                continue;
                            }
                            _ => {}
                        }
                        if let Some(last) = args.last_mut() {
                            last.push(a.clone());
                        }
                        j += 1;
                    }
                    if !closed {
                        return Err(format!("unbalanced arguments of macro '{}'", t.text));
                    }
                    if params.is_empty() && args.len() == 1 && args[0].is_empty() {
                        args.clear();
                    }
                    if args.len() != params.len() {
                        return Err(format!(
                            "macro '{}' used with another argument count",
                            t.text
                        ));
                    }
                    // Arguments are expanded before substitution, the result rescanned.
                    let mut expanded = Vec::new();
                    for a in &args {
                        let mut e = Vec::new();
                        self.expand_into(a, hidden, before, depth + 1, &mut e)?;
                        expanded.push(e);
                    }
                    let mut body = Vec::new();
                    for b in &m.body {
                        match params.iter().position(|p| *p == b.text) {
                            Some(p) if b.kind == TokKind::Ident => {
                                body.extend(expanded[p].iter().cloned())
                            }
                            _ => body.push(relocate(b)),
                        }
                    }
                    self.expand_into(&body, &hide, before, depth + 1, out)?;
                    k = j + 1;
                }
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Num(usize, String),
    Str(usize),
    Name(usize, String),
    /// A call of a named function (`std::max` included).
    Call(usize, String, Vec<Expr>),
    Index(usize, Box<Expr>, Box<Expr>),
    /// `.m` (false) or `->m` (true).
    Member(usize, Box<Expr>, String, bool),
    /// Prefix operators: `- + ! ~ * & ++ --`.
    Unary(usize, &'static str, Box<Expr>),
    /// Postfix `++`/`--`.
    Postfix(usize, &'static str, Box<Expr>),
    Binary(usize, &'static str, Box<Expr>, Box<Expr>),
    Assign(usize, &'static str, Box<Expr>, Box<Expr>),
    Cond(usize, Box<Expr>, Box<Expr>, Box<Expr>),
    /// `(type) e`; true when the type is an integer type.
    Cast(usize, bool, Box<Expr>),
    /// `sizeof`/`alignof`: not evaluated; the text identifies it.
    Sizeof(usize, String),
}

impl Expr {
    pub fn at(&self) -> usize {
        match self {
            Expr::Num(a, _)
            | Expr::Str(a)
            | Expr::Name(a, _)
            | Expr::Call(a, ..)
            | Expr::Index(a, ..)
            | Expr::Member(a, ..)
            | Expr::Unary(a, ..)
            | Expr::Postfix(a, ..)
            | Expr::Binary(a, ..)
            | Expr::Assign(a, ..)
            | Expr::Cond(a, ..)
            | Expr::Cast(a, ..)
            | Expr::Sizeof(a, _) => *a,
        }
    }

    /// Structural equality, ignoring positions.
    pub fn same(&self, o: &Expr) -> bool {
        self.show() == o.show()
    }

    /// The expression as C text, parenthesized where precedence needs it.
    pub fn show(&self) -> String {
        match self {
            Expr::Num(_, s) | Expr::Name(_, s) | Expr::Sizeof(_, s) => s.clone(),
            Expr::Str(_) => "\"...\"".into(),
            Expr::Call(_, f, args) => format!(
                "{f}({})",
                args.iter().map(Expr::show).collect::<Vec<_>>().join(", ")
            ),
            Expr::Index(_, b, i) => format!("{}[{}]", b.operand(15), i.show()),
            Expr::Member(_, b, m, arrow) => {
                format!("{}{}{m}", b.operand(15), if *arrow { "->" } else { "." })
            }
            Expr::Unary(_, op, e) => format!("{op}{}", e.operand(14)),
            Expr::Postfix(_, op, e) => format!("{}{op}", e.operand(15)),
            Expr::Binary(_, op, l, r) => {
                let p = binary_prec(op);
                format!("{} {op} {}", l.operand(p), r.operand(p + 1))
            }
            Expr::Assign(_, op, l, r) => format!("{} {op} {}", l.show(), r.show()),
            Expr::Cond(_, c, t, e) => {
                format!("{} ? {} : {}", c.operand(2), t.show(), e.operand(1))
            }
            Expr::Cast(_, _, e) => format!("(cast){}", e.operand(14)),
        }
    }

    fn prec(&self) -> u8 {
        match self {
            Expr::Binary(_, op, ..) => binary_prec(op),
            Expr::Assign(..) => 0,
            Expr::Cond(..) => 1,
            Expr::Unary(..) | Expr::Cast(..) => 14,
            _ => 15,
        }
    }

    /// The text of `self` as an operand of an operator of precedence `min`.
    fn operand(&self, min: u8) -> String {
        if self.prec() < min {
            format!("({})", self.show())
        } else {
            self.show()
        }
    }
}

/// C precedence of a binary operator (higher binds tighter).
pub fn binary_prec(op: &str) -> u8 {
    match op {
        "," => 0,
        "||" => 2,
        "&&" => 3,
        "|" => 4,
        "^" => 5,
        "&" => 6,
        "==" | "!=" => 7,
        "<" | ">" | "<=" | ">=" => 8,
        "<<" | ">>" => 9,
        "+" | "-" => 10,
        _ => 11,
    }
}

/// One declarator of a declaration statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Declarator {
    pub at: usize,
    pub name: String,
    pub shape: Shape,
    pub init: Vec<Expr>,
}

/// What a declaration says about a variable's storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Scalar {
        integer: bool,
    },
    Pointer {
        dims: u8,
        restrict: bool,
    },
    Array {
        dims: u8,
    },
    /// A struct, or a value of a type we cannot name (a typedef): member access stays in
    /// its storage, subscripts do not.
    Object,
    /// References and `auto`: may alias anything.
    Unknown,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    Expr(Expr),
    Decl(Vec<Declarator>),
    Block(Vec<Stmt>),
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    For(Box<For>),
    While(Expr, Box<Stmt>),
    DoWhile(Box<Stmt>, Expr),
    Continue(usize),
    Break(usize),
    Empty,
}

#[derive(Debug, Clone, PartialEq)]
pub struct For {
    pub at: usize,
    pub init: ForInit,
    pub cond: Option<Expr>,
    pub incr: Option<Expr>,
    pub body: Stmt,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ForInit {
    None,
    Decl(Vec<Declarator>),
    Expr(Expr),
}

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

    pub fn expr(&mut self) -> P<Expr> {
        let outer = self.depth;
        let mut e = self.assign()?;
        while self.peek() == "," {
            let at = self.here();
            self.pos += 1;
            self.deeper(1)?;
            let r = self.assign()?;
            e = Expr::Binary(at, ",", Box::new(e), Box::new(r));
        }
        self.depth = outer;
        Ok(e)
    }

    fn assign(&mut self) -> P<Expr> {
        self.nested(Self::assign_at)
    }

    fn assign_at(&mut self) -> P<Expr> {
        let lhs = self.cond()?;
        let op: Option<&'static str> = match self.peek() {
            "=" => Some("="),
            "+=" => Some("+="),
            "-=" => Some("-="),
            "*=" => Some("*="),
            "/=" => Some("/="),
            "%=" => Some("%="),
            "&=" => Some("&="),
            "|=" => Some("|="),
            "^=" => Some("^="),
            "<<=" => Some("<<="),
            ">>=" => Some(">>="),
            _ => None,
        };
        match op {
            Some(op) => {
                let at = self.here();
                self.pos += 1;
                let rhs = self.assign()?;
                Ok(Expr::Assign(at, op, Box::new(lhs), Box::new(rhs)))
            }
            None => Ok(lhs),
        }
    }

    fn cond(&mut self) -> P<Expr> {
        let c = self.binary(0)?;
        if self.peek() != "?" {
            return Ok(c);
        }
        let at = self.here();
        self.pos += 1;
        let t = self.expr()?;
        self.expect(":")?;
        let e = self.cond_or_assign()?;
        Ok(Expr::Cond(at, Box::new(c), Box::new(t), Box::new(e)))
    }

    fn cond_or_assign(&mut self) -> P<Expr> {
        self.assign()
    }

    fn binary(&mut self, min: u8) -> P<Expr> {
        const OPS: &[(&str, u8)] = &[
            ("||", 1),
            ("&&", 2),
            ("|", 3),
            ("^", 4),
            ("&", 5),
            ("==", 6),
            ("!=", 6),
            ("<", 7),
            (">", 7),
            ("<=", 7),
            (">=", 7),
            ("<<", 8),
            (">>", 8),
            ("+", 9),
            ("-", 9),
            ("*", 10),
            ("/", 10),
            ("%", 10),
        ];
        let outer = self.depth;
        let mut lhs = self.unary()?;
        loop {
            let p = self.peek();
            let Some(&(op, prec)) = OPS.iter().find(|(o, _)| *o == p) else {
                break;
            };
            if prec < min.max(1) {
                break;
            }
            let at = self.here();
            self.pos += 1;
            self.deeper(1)?;
            let rhs = self.binary(prec + 1)?;
            lhs = Expr::Binary(at, op, Box::new(lhs), Box::new(rhs));
        }
        self.depth = outer;
        Ok(lhs)
    }

    /// `( type-words *... )` of a cast: its length in tokens and whether the type is an
    /// integer type, or None.
    fn cast_type(&self) -> Option<(usize, bool)> {
        if self.peek() != "(" {
            return None;
        }
        let mut k = 1;
        let mut words = Vec::new();
        while is_type_word(self.peek_at(k)) {
            words.push(self.peek_at(k));
            k += 1;
        }
        let scalar = words.iter().any(|w| is_scalar_type(w));
        if !scalar
            || words
                .iter()
                .any(|w| matches!(*w, "struct" | "union" | "enum"))
        {
            return None;
        }
        let mut stars = 0;
        while matches!(self.peek_at(k), "*" | "const" | "volatile") {
            if self.peek_at(k) == "*" {
                stars += 1;
            }
            k += 1;
        }
        if self.peek_at(k) != ")" || stars > 0 {
            return None;
        }
        let integer = !words.iter().any(|w| FLOAT_TYPES.contains(w));
        Some((k + 1, integer))
    }

    fn unary(&mut self) -> P<Expr> {
        let at = self.here();
        if let Some((n, integer)) = self.cast_type() {
            self.pos += n;
            let e = self.nested(Self::unary)?;
            return Ok(Expr::Cast(at, integer, Box::new(e)));
        }
        let op: Option<&'static str> = match self.peek() {
            "-" => Some("-"),
            "+" => Some("+"),
            "!" => Some("!"),
            "~" => Some("~"),
            "*" => Some("*"),
            "&" => Some("&"),
            "++" => Some("++"),
            "--" => Some("--"),
            _ => None,
        };
        if let Some(op) = op {
            self.pos += 1;
            let e = self.nested(Self::unary)?;
            return Ok(Expr::Unary(at, op, Box::new(e)));
        }
        if matches!(self.peek(), "sizeof" | "alignof" | "_Alignof") {
            // Not evaluated: keep its text as an opaque constant.
            let start = self.pos;
            self.pos += 1;
            if self.peek() == "(" {
                let mut depth = 0;
                loop {
                    match self.peek() {
                        "(" => depth += 1,
                        ")" => {
                            depth -= 1;
                            if depth == 0 {
                                self.pos += 1;
                                break;
                            }
                        }
                        "" => return self.fail("unbalanced sizeof"),
                        _ => {}
                    }
                    self.pos += 1;
                }
            } else {
                self.nested(Self::unary)?;
            }
            let text: Vec<&str> = self.toks[start..self.pos]
                .iter()
                .map(|t| t.text.as_str())
                .collect();
            return Ok(Expr::Sizeof(at, text.join(" ")));
        }
        self.postfix()
    }

    fn postfix(&mut self) -> P<Expr> {
        let outer = self.depth;
        let mut e = self.primary()?;
        loop {
            let at = self.here();
            if matches!(self.peek(), "[" | "(" | "." | "->" | "++" | "--") {
                self.deeper(1)?;
            }
            match self.peek() {
                "[" => {
                    self.pos += 1;
                    let i = self.expr()?;
                    self.expect("]")?;
                    e = Expr::Index(at, Box::new(e), Box::new(i));
                }
                "(" => {
                    let Expr::Name(_, f) = &e else {
                        return self.fail("a call through an expression");
                    };
                    let f = f.clone();
                    self.pos += 1;
                    let args = self.list(")")?;
                    e = Expr::Call(e.at(), f, args);
                }
                "." | "->" => {
                    let arrow = self.peek() == "->";
                    self.pos += 1;
                    if self.kind_at(0) != Some(TokKind::Ident) {
                        return self.fail("a member access the analysis does not understand");
                    }
                    let m = self.bump().text.clone();
                    e = Expr::Member(at, Box::new(e), m, arrow);
                }
                "++" => {
                    self.pos += 1;
                    e = Expr::Postfix(at, "++", Box::new(e));
                }
                "--" => {
                    self.pos += 1;
                    e = Expr::Postfix(at, "--", Box::new(e));
                }
                _ => {
                    self.depth = outer;
                    return Ok(e);
                }
            }
        }
    }

    fn primary(&mut self) -> P<Expr> {
        let at = self.here();
        match self.kind_at(0) {
            Some(TokKind::Number) => {
                let t = self.bump().text.clone();
                Ok(Expr::Num(at, t))
            }
            Some(TokKind::Literal) => {
                self.pos += 1;
                while self.kind_at(0) == Some(TokKind::Literal) {
                    self.pos += 1;
                }
                Ok(Expr::Str(at))
            }
            Some(TokKind::Ident)
                if !KEYWORDS.contains(&self.peek()) && !is_type_word(self.peek()) =>
            {
                let mut name = self.bump().text.clone();
                while self.peek() == "::" && self.kind_at(1) == Some(TokKind::Ident) {
                    self.pos += 1;
                    name.push_str("::");
                    name.push_str(&self.bump().text.clone());
                }
                if self.peek() == "<" && name.contains("::") {
                    return self.fail(format!("template '{name}<...>'"));
                }
                Ok(Expr::Name(at, name))
            }
            Some(TokKind::Punct) if self.peek() == "(" => {
                self.pos += 1;
                if self.peek() == "{" {
                    return self.fail("a statement expression");
                }
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            _ if self.at_end() => self.fail("the loop ends early"),
            _ => self.fail(format!("'{}' in the loop", self.peek())),
        }
    }
}
