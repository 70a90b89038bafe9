//! Reading one statement's tokens: keywords run together in one token (`enddo`), matching
//! brackets, the top-level punctuator and designators.

use crate::fortran::lex::{Lexed, Stmt, TokKind};

/// Reading the tokens of one statement.
pub struct Toks<'a> {
    pub src: &'a str,
    pub lx: &'a Lexed,
    pub end: usize,
    /// For each token of the statement, one past its matching bracket (`usize::MAX`: none).
    after: Vec<usize>,
    first: usize,
}

impl<'a> Toks<'a> {
    pub fn new(src: &'a str, lx: &'a Lexed, s: &Stmt) -> Self {
        let mut after = vec![usize::MAX; s.toks().len()];
        let mut open = Vec::new();
        // Brackets are punctuators of one byte: compared as bytes (every statement is read).
        for i in s.toks() {
            let r = lx.tokens[i].range();
            if lx.tokens[i].kind() != TokKind::Punct || r.len() != 1 {
                continue;
            }
            match src.as_bytes()[r.start] {
                b'(' | b'[' => open.push(i),
                b')' | b']' => {
                    if let Some(o) = open.pop() {
                        after[o - s.toks().start] = i + 1;
                    }
                }
                _ => {}
            }
        }
        Toks {
            src,
            lx,
            end: s.toks().end,
            after,
            first: s.toks().start,
        }
    }

    pub fn text(&self, i: usize) -> std::borrow::Cow<'a, str> {
        if i < self.end {
            self.lx.text(self.src, i)
        } else {
            std::borrow::Cow::Borrowed("")
        }
    }

    /// Token `i` is `w` (case ignored).
    pub fn is(&self, i: usize, w: &str) -> bool {
        i < self.end && self.lx.is(self.src, i, w)
    }

    pub fn kind(&self, i: usize) -> Option<TokKind> {
        (i < self.end).then(|| self.lx.tokens[i].kind())
    }

    pub fn is_name(&self, i: usize) -> bool {
        self.kind(i) == Some(TokKind::Name)
    }

    /// One past the bracket matching the opener at `i`.
    pub fn after(&self, i: usize) -> Option<usize> {
        (i >= self.first && i < self.end)
            .then(|| self.after[i - self.first])
            .filter(|&a| a != usize::MAX)
    }

    /// The keywords `words` at `i`, where one token may hold several of them run together
    /// (`enddo`, `endblockdata`, `goto`, `doubleprecision`): the index after them.
    pub fn seq(&self, mut i: usize, words: &[&str]) -> Option<usize> {
        let mut w = 0;
        while w < words.len() {
            if !self.is_name(i) {
                return None;
            }
            let t = self.text(i);
            let mut rest = t.as_bytes();
            while !rest.is_empty() {
                let word = words.get(w)?.as_bytes();
                if rest.len() < word.len() || !rest[..word.len()].eq_ignore_ascii_case(word) {
                    return None;
                }
                rest = &rest[word.len()..];
                w += 1;
            }
            i += 1;
        }
        Some(i)
    }

    /// The first token at bracket depth 0 from `i` that is `p` (a punctuator).
    pub fn find_top(&self, mut i: usize, p: &str) -> Option<usize> {
        while i < self.end {
            if self.kind(i) == Some(TokKind::Punct) {
                let t = self.text(i);
                if t == p {
                    return Some(i);
                }
                if t == "(" || t == "[" {
                    i = self.after(i)?;
                    continue;
                }
            }
            i += 1;
        }
        None
    }

    /// A designator at `i` (`a`, `a(1:n)%b`, `x[2]`): the index after it.
    pub fn designator(&self, mut i: usize) -> Option<usize> {
        if !self.is_name(i) {
            return None;
        }
        i += 1;
        loop {
            match self.text(i).as_ref() {
                "(" | "[" => i = self.after(i)?,
                "%" if self.is_name(i + 1) => i += 2,
                _ => return Some(i),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The matching brackets as `Toks::new` found them before, by comparing texts.
    fn after_by_text(src: &str, lx: &Lexed, s: &Stmt) -> Vec<usize> {
        let mut after = vec![usize::MAX; s.toks().len()];
        let mut open = Vec::new();
        for i in s.toks() {
            if lx.tokens[i].kind() != TokKind::Punct {
                continue;
            }
            match &src[lx.tokens[i].range()] {
                "(" | "[" => open.push(i),
                ")" | "]" => {
                    if let Some(o) = open.pop() {
                        after[o - s.toks().start] = i + 1;
                    }
                }
                _ => {}
            }
        }
        after
    }

    #[test]
    fn brackets_match_the_text_comparison() {
        let cases = [
            (
                "x.f90",
                "a(i, b(j)) = [1, (k, k = 1, 2)] // 'x(' // \"])\"\nif ((x) .eq. 1) y = z(:)%w(2)\r\nc(1:2) = f(&\n  g(3)) ! (\nx = (/ 1, 2 /) + é(1)\n",
            ),
            (
                "x.f",
                "      a(i, b(j)) = f(1,\n     &  (2))\nc comment (\n      x = y((3)\n",
            ),
        ];
        let mut matched = 0;
        for (name, src) in cases {
            let kind = crate::fortran::form::kind_of(std::path::Path::new(name)).expect("Fortran");
            let lx = crate::fortran::lex::lex(src, &crate::fortran::lines::scan(src, kind));
            for s in &lx.stmts {
                let t = Toks::new(src, &lx, s);
                matched += t.after.iter().filter(|&&a| a != usize::MAX).count();
                assert_eq!(t.after, after_by_text(src, &lx, s), "{src}");
            }
        }
        assert!(matched >= 12, "{matched}");
    }
}
