//! Expressions: assignment, conditional, binary operators by precedence, casts, unary,
//! postfix (subscripts, calls, members) and primary expressions.

use super::super::Expr;
use super::{FLOAT_TYPES, KEYWORDS, P, Parser, is_scalar_type, is_type_word};
use crate::lex::TokKind;

impl<'t> Parser<'t> {
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

    pub(super) fn assign(&mut self) -> P<Expr> {
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
