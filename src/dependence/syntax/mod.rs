//! The loop's tokens as the compiler sees them (the file's own object- and function-like
//! macros expanded), parsed into a small C statement/expression tree. Anything outside the
//! subset the dependence test understands is a parse error, which makes the loop dependent.
//!
//! This module holds the tree; `macros` expands the tokens, `parser` reads them.

mod macros;
mod parser;

pub use macros::Macros;
pub use parser::Parser;
#[cfg(test)]
pub(crate) use parser::{MAX_NESTING, NESTED};

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
