//! The value of a loop count (`collapse(n)`): an integer constant expression of literals,
//! `+ - * / %` (division truncating, as C's and Fortran's) and parentheses, whose names a
//! caller may resolve (C macros and enumerators, Fortran named constants).

use super::Dialect;

/// The value of `text` as an integer constant expression of literals; None for anything
/// else (a name, a real, a kind parameter) or an overflow.
pub fn constant(text: &str, dialect: Dialect) -> Option<i64> {
    evaluate(text, dialect, &mut |_| None)
}

/// The value of `text` with its names' values from `name` (None: not a constant, and
/// neither is the expression).
pub fn evaluate(
    text: &str,
    dialect: Dialect,
    name: &mut dyn FnMut(&str) -> Option<i64>,
) -> Option<i64> {
    let b: Vec<u8> = text.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    let mut e = Eval {
        b: &b,
        k: 0,
        dialect,
        name,
    };
    let v = e.sum(0)?;
    (e.k == b.len()).then_some(v)
}

struct Eval<'a, 'n> {
    b: &'a [u8],
    k: usize,
    dialect: Dialect,
    name: &'n mut dyn FnMut(&str) -> Option<i64>,
}

impl Eval<'_, '_> {
    fn sum(&mut self, depth: usize) -> Option<i64> {
        let mut v = self.product(depth)?;
        while let Some(&op @ (b'+' | b'-')) = self.b.get(self.k) {
            self.k += 1;
            let r = self.product(depth)?;
            v = if op == b'+' {
                v.checked_add(r)?
            } else {
                v.checked_sub(r)?
            };
        }
        Some(v)
    }

    fn product(&mut self, depth: usize) -> Option<i64> {
        let mut v = self.factor(depth)?;
        while let Some(&op @ (b'*' | b'/' | b'%')) = self.b.get(self.k) {
            // `**` is a power, `%` Fortran's component selector: not read.
            if self.b.get(self.k + 1) == Some(&b'*')
                || (op == b'%' && self.dialect == Dialect::Fortran)
            {
                return None;
            }
            self.k += 1;
            let r = self.factor(depth)?;
            v = match op {
                b'*' => v.checked_mul(r)?,
                b'/' => v.checked_div(r)?,
                _ => v.checked_rem(r)?,
            };
        }
        Some(v)
    }

    fn factor(&mut self, depth: usize) -> Option<i64> {
        // (Nesting is bounded: a hostile text must not exhaust the stack.)
        if depth > 64 {
            return None;
        }
        let b = self.b;
        match b.get(self.k)? {
            b'(' => {
                self.k += 1;
                let v = self.sum(depth + 1)?;
                (b.get(self.k) == Some(&b')')).then(|| self.k += 1)?;
                Some(v)
            }
            b'+' | b'-' => {
                let neg = b[self.k] == b'-';
                self.k += 1;
                let v = self.factor(depth + 1)?;
                if neg { v.checked_neg() } else { Some(v) }
            }
            c if c.is_ascii_digit() => {
                let start = self.k;
                while b.get(self.k).is_some_and(u8::is_ascii_digit) {
                    self.k += 1;
                }
                let digits = std::str::from_utf8(&b[start..self.k]).ok()?;
                // C: an octal or hexadecimal literal is not read; `u`/`l` suffixes are.
                if self.dialect == Dialect::C {
                    if digits.len() > 1 && digits.starts_with('0') {
                        return None;
                    }
                    while b.get(self.k).is_some_and(|c| b"uUlL".contains(c)) {
                        self.k += 1;
                    }
                }
                // A kind parameter (`2_8`), a real (`2.`), a suffix not read: not a count.
                if b.get(self.k)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'.')
                {
                    return None;
                }
                digits.parse().ok()
            }
            c if c.is_ascii_alphabetic() || *c == b'_' => {
                let start = self.k;
                while b
                    .get(self.k)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
                {
                    self.k += 1;
                }
                // A call or an array element is not a constant.
                if matches!(b.get(self.k), Some(b'(' | b'[' | b'%' | b'.')) {
                    return None;
                }
                (self.name)(std::str::from_utf8(&b[start..self.k]).ok()?)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collapse_counts_are_constant_expressions_of_literals() {
        for (t, v) in [
            ("2", Some(2)),
            (" 3 - 1 ", Some(2)),
            ("(1+1)", Some(2)),
            ("2*3/2", Some(3)),
            ("7/2", Some(3)),
            ("-(-2)", Some(2)),
            ("n", None),
            ("2_8", None),
            ("2.", None),
            ("2**1", None),
            ("1/0", None),
            ("(2", None),
            ("2)", None),
            ("", None),
            ("99999999999999999999", None),
            ("7%4", None),
        ] {
            assert_eq!(constant(t, Dialect::Fortran), v, "{t:?}");
        }
        assert_eq!(
            constant(
                &format!("{}2{}", "(".repeat(100), ")".repeat(100)),
                Dialect::Fortran
            ),
            None
        );
        for (t, v) in [
            ("2u", Some(2)),
            ("3UL - 1", Some(2)),
            ("7%4", Some(3)),
            ("010", None),
            ("0x2", None),
            ("0", Some(0)),
            ("f(2)", None),
            ("a[1]", None),
        ] {
            assert_eq!(constant(t, Dialect::C), v, "{t:?}");
        }
    }

    #[test]
    fn names_resolve_through_the_caller() {
        let mut names = |n: &str| match n {
            "N" => Some(2),
            "m_1" => Some(3),
            _ => None,
        };
        assert_eq!(evaluate("N * m_1 - 4", Dialect::C, &mut names), Some(2));
        assert_eq!(evaluate("N + K", Dialect::C, &mut names), None);
        assert_eq!(evaluate("N(1)", Dialect::C, &mut names), None);
    }
}
