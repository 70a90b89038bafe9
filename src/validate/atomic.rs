//! The statement of an `atomic` construct must have one of the forms OpenACC (2.12) lists
//! for its kind: `read` `v = x;`, `write` `x = expr;`, `update` (the default) `x++;`,
//! `x binop= expr;`, `x = x binop expr;` …, `capture` `v = x++;`, `v = x binop= expr;` … or
//! a block of two such statements. Another statement (a call, a plain assignment under
//! `update`) is an error, as GCC and clang give, and the directive is left unchanged:
//! translated, it would be OpenMP that compilers reject. Read from the tokens in every mode;
//! a statement using a macro of the file is left to the compiler (its expansion decides).

use crate::diag::Diagnostic;
use crate::rules::id;
use crate::unit::Unit;

/// `binop` of the update forms.
const BINOPS: [&str; 9] = ["+", "*", "-", "/", "&", "^", "|", "<<", ">>"];

/// `binop=`.
const COMPOUND: [&str; 9] = ["+=", "*=", "-=", "/=", "&=", "^=", "|=", "<<=", ">>="];

/// Any assignment operator (`%=` is not an atomic one, but splits an expression the same).
fn is_assignment(t: &str) -> bool {
    crate::lex::ASSIGNMENT_OPS.contains(&t)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Read,
    Write,
    Update,
    Capture,
}

/// The statement's tokens as text, brackets paired.
struct Expr<'t> {
    toks: &'t [&'t str],
}

impl<'t> Expr<'t> {
    /// Indices of the tokens outside brackets.
    fn top(&self) -> Vec<usize> {
        let mut out = Vec::new();
        let mut depth = 0usize;
        for (k, t) in self.toks.iter().enumerate() {
            match *t {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth = depth.saturating_sub(1),
                _ if depth == 0 => out.push(k),
                _ => {}
            }
        }
        out
    }

    /// An operand: tokens, none an assignment or a comma outside brackets.
    fn operand(toks: &[&str]) -> bool {
        let e = Expr { toks };
        !toks.is_empty()
            && e.top()
                .iter()
                .all(|&k| !is_assignment(toks[k]) && toks[k] != ",")
    }

    /// The first assignment operator outside brackets.
    fn assignment(&self) -> Option<usize> {
        self.top()
            .into_iter()
            .find(|&k| is_assignment(self.toks[k]))
    }

    /// `x++`, `x--`, `++x`, `--x`: the operand `x`.
    fn step(toks: &'t [&'t str]) -> Option<&'t [&'t str]> {
        let x = match (toks.first(), toks.last()) {
            (Some(&("++" | "--")), _) => &toks[1..],
            (_, Some(&("++" | "--"))) => &toks[..toks.len() - 1],
            _ => return None,
        };
        Expr::operand(x).then_some(x)
    }

    /// An update: `x++` …, `x binop= expr`, `x = x binop expr`, `x = expr binop x`.
    fn update(toks: &'t [&'t str]) -> bool {
        if Expr::step(toks).is_some() {
            return true;
        }
        let e = Expr { toks };
        let Some(a) = e.assignment() else {
            return false;
        };
        let (x, op, rhs) = (&toks[..a], toks[a], &toks[a + 1..]);
        if !Expr::operand(x) || !Expr::operand(rhs) {
            return false;
        }
        if COMPOUND.contains(&op) {
            return true;
        }
        op == "="
            && ((rhs.starts_with(x)
                && rhs.get(x.len()).is_some_and(|b| BINOPS.contains(b))
                && rhs.len() > x.len() + 1)
                || (rhs.ends_with(x)
                    && rhs.len() > x.len() + 1
                    && BINOPS.contains(&rhs[rhs.len() - x.len() - 1])))
    }

    /// `lhs = rhs` with a plain `=`: both sides.
    fn plain(toks: &'t [&'t str]) -> Option<(&'t [&'t str], &'t [&'t str])> {
        let a = Expr { toks }.assignment()?;
        (toks[a] == "=").then(|| (&toks[..a], &toks[a + 1..]))
    }

    /// `v = x`, `x = expr`: an lvalue on the left (not a lone constant).
    fn read(toks: &'t [&'t str]) -> bool {
        let constant = |t: &[&str]| matches!(t, [one] if one.starts_with(|c: char| c.is_ascii_digit() || c == '"' || c == '\''));
        Expr::plain(toks).is_some_and(|(v, x)| Expr::operand(v) && Expr::operand(x) && !constant(v))
    }

    /// One expression statement (without its `;`) of the kind.
    fn statement(toks: &'t [&'t str], kind: Kind) -> bool {
        match kind {
            Kind::Read | Kind::Write => Expr::read(toks),
            Kind::Update => Expr::update(toks),
            Kind::Capture => {
                Expr::plain(toks).is_some_and(|(v, rest)| Expr::operand(v) && Expr::update(rest))
            }
        }
    }
}

/// Whether the statement `toks` (with its `;` or braces) has a form `kind` allows.
fn valid(toks: &[&str], kind: Kind) -> bool {
    if let Some(inner) = toks
        .strip_prefix(&["{"])
        .and_then(|t| t.strip_suffix(&["}"]))
    {
        // A block: two statements, under `capture` only.
        if kind != Kind::Capture {
            return false;
        }
        let parts: Vec<&[&str]> = inner.split(|t| *t == ";").collect();
        return matches!(parts.as_slice(), [a, b, []] if [a, b].iter().all(|s| {
            Expr::update(s) || Expr::read(s)
        }));
    }
    let Some(body) = toks.strip_suffix(&[";"]) else {
        return false;
    };
    Expr::statement(body, kind)
}

/// The `atomic` directives whose statement has no atomic form, with the error.
pub fn check(u: &Unit) -> Vec<(usize, Diagnostic)> {
    let mut out = Vec::new();
    for i in 0..u.sites.len() {
        let (Some(d), Some(st)) = (u.dir(i).filter(|d| d.name == "atomic"), &u.stmts[i]) else {
            continue;
        };
        let kind = if d.has("read") {
            Kind::Read
        } else if d.has("write") {
            Kind::Write
        } else if d.has("capture") {
            Kind::Capture
        } else {
            Kind::Update
        };
        let Some(text) = u.syntax.statement_words(&st.toks()) else {
            continue;
        };
        if valid(&text, kind) {
            continue;
        }
        let form = match kind {
            Kind::Read => "'v = x;'",
            Kind::Write => "'x = expr;'",
            Kind::Update => {
                "'x++;', 'x binop= expr;', 'x = x binop expr;' or 'x = expr binop x;' (binop one of + * - / & ^ | << >>)"
            }
            Kind::Capture => {
                "'v = x++;', 'v = x binop= expr;', 'v = x = x binop expr;' or a block of a read and an update"
            }
        };
        let name = match kind {
            Kind::Read => "atomic read",
            Kind::Write => "atomic write",
            Kind::Update => "atomic update",
            Kind::Capture => "atomic capture",
        };
        out.push((
            i,
            Diagnostic::new(
                u.syntax.token_range(st.toks().start).start,
                id::ATOMIC_FORM,
                format!(
                    "the statement of 'acc {name}' (line {}) is not an atomic form: it must be {form}; the directive is left unchanged",
                    u.line(i)
                ),
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str, kind: Kind) -> bool {
        let toks = crate::lex::lex(s);
        let text: Vec<&str> = toks.iter().map(|t| t.text(s)).collect();
        valid(&text, kind)
    }

    #[test]
    fn forms() {
        use Kind::*;
        for (s, kind) in [
            ("v = x;", Read),
            ("v = a[i].f;", Read),
            ("x = n * 2 + 1;", Write),
            ("x++;", Update),
            ("--a[i];", Update),
            ("x += f(y, 2);", Update),
            ("a[b[i]] <<= 1;", Update),
            ("x = x * (n + 1);", Update),
            ("s.t = 2.0 / s.t;", Update),
            ("v = x++;", Capture),
            ("v = x -= 2;", Capture),
            ("v = x = x + 1;", Capture),
            ("{ v = x; x += 1; }", Capture),
            ("{ x++; v = x; }", Capture),
        ] {
            assert!(ok(s, kind), "{s}");
        }
        for (s, kind) in [
            ("v = 3;", Update),
            ("f(n, a, x);", Update),
            ("v += 1;", Read),
            ("x = y + 1;", Update),
            ("x %= 3;", Update),
            ("x = x;", Update),
            ("v = x, w = y;", Read),
            ("{ v = x; x += 1; }", Update),
            ("{ v = x; f(); }", Capture),
            ("v = x;", Capture),
            ("x = 1;", Update),
            ("x++", Update),
            ("3 = x;", Write),
        ] {
            assert!(!ok(s, kind), "{s}");
        }
    }
}
