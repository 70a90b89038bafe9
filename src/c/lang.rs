//! Expressions in C and C++ (see [`Language`]).

use crate::lang::{Access, Language};
use crate::lex::{TokKind, Token};

/// Names that mark a file as C++ (a `::`, or a standard header without `.h`, does too).
const CXX_WORDS: [&str; 9] = [
    "class",
    "template",
    "namespace",
    "operator",
    "public",
    "nullptr",
    "std",
    "using",
    "typename",
];

/// Whether tokens `toks` of `src` read as C++, whatever the file's name says.
pub fn looks_like_cxx(src: &str, toks: &[Token]) -> bool {
    toks.iter().any(|t| {
        let text = t.text(src);
        match t.kind {
            TokKind::Ident => CXX_WORDS.contains(&text),
            TokKind::Punct => text == "::",
            // `#include <vector>`: a standard header without `.h`.
            TokKind::PpLine => {
                let line: String = text.split_whitespace().collect();
                line.starts_with("#include<") && !line.contains(".h>")
            }
            _ => false,
        }
    })
}

/// C and C++ expressions.
pub struct C;

impl Language for C {
    fn name(&self) -> &'static str {
        "C"
    }

    fn worksharing(&self) -> &'static str {
        "for"
    }

    fn is_identifier(&self, s: &str) -> bool {
        crate::lex::is_identifier(s)
    }

    fn is_int_literal(&self, s: &str) -> bool {
        let t = s.trim().trim_end_matches(['u', 'U', 'l', 'L']);
        !t.is_empty()
            && (t.bytes().all(|b| b.is_ascii_digit())
                || (t.len() > 2
                    && (t.starts_with("0x") || t.starts_with("0X"))
                    && t[2..].bytes().all(|b| b.is_ascii_hexdigit())))
    }

    fn has_side_effects(&self, e: &str) -> bool {
        let b = e.as_bytes();
        e.contains('(')
            || e.contains("++")
            || e.contains("--")
            || b.iter().enumerate().any(|(k, &ch)| {
                ch == b'='
                    && b.get(k + 1) != Some(&b'=')
                    && k.checked_sub(1)
                        .is_none_or(|p| !matches!(b[p], b'=' | b'!' | b'<' | b'>'))
            })
    }

    fn writes_or_calls(&self, e: &str) -> bool {
        let toks = crate::lex::lex(e);
        toks.iter().enumerate().any(|(k, t)| {
            let s = t.text(e);
            matches!(s, "++" | "--")
                || (s.ends_with('=') && !matches!(s, "==" | "!=" | "<=" | ">="))
                || (s == "(" && k > 0 && toks[k - 1].kind == crate::lex::TokKind::Ident)
        })
    }

    fn base_name<'e>(&self, item: &'e str) -> Option<&'e str> {
        base_name(item)
    }

    fn identifiers<'e>(&self, expr: &'e str) -> Vec<&'e str> {
        identifiers(expr)
    }

    fn member_of<'i>(&self, item: &'i str) -> Option<(&'i str, &'i str, Access)> {
        let t = item.trim();
        let base = base_name(t)?;
        let rest = t[base.len()..].trim_start();
        let (access, rest) = if let Some(r) = rest.strip_prefix("->") {
            (Access::Pointer, r)
        } else if let Some(r) = rest.strip_prefix('.') {
            (Access::Value, r)
        } else {
            return None;
        };
        Some((base, base_name(rest)?, access))
    }

    fn member(&self, base: &str, member: &str, access: Access) -> String {
        match access {
            Access::Value => format!("{base}.{member}"),
            Access::Pointer => format!("{base}->{member}"),
        }
    }

    fn names_whole(&self, item: &str, base: &str) -> bool {
        let t = item.trim();
        t == base
            || t.strip_prefix('*').is_some_and(|r| r.trim() == base)
            || t.strip_prefix(base)
                .is_some_and(|r| r.trim_start().starts_with('['))
    }

    fn is_library_function(&self, name: &str) -> bool {
        MATH.contains(&name)
    }

    fn words<'t>(&self, text: &'t str) -> Vec<&'t str> {
        crate::lex::lex_range(text, 0..text.len(), false)
            .iter()
            .filter(|t| t.kind == crate::lex::TokKind::Ident)
            .map(|t| t.text(text))
            .collect()
    }

    fn truth(&self) -> &'static str {
        "1"
    }

    fn not(&self, e: &str) -> String {
        format!("!({e})")
    }

    fn and(&self, a: &str, b: &str) -> String {
        format!("{a} && {b}")
    }

    fn min(&self, e: &str, bound: u32) -> String {
        let e = if self.is_identifier(e) {
            e.to_string()
        } else {
            self.group(e)
        };
        format!("{e} < {bound} ? {e} : {bound}")
    }

    fn element(&self, array: &str, index: &str) -> String {
        format!("{array}[{index}]")
    }

    fn low_bits(&self, e: &str, mask: i64) -> String {
        format!("{e} & {mask}")
    }

    fn iterator(&self, name: &str, count: i64) -> String {
        format!("int {name} = 0:{count}")
    }

    fn zero_length(&self, p: &str) -> Option<String> {
        Some(format!("{p}[:0]"))
    }

    fn pointee(&self, p: &str) -> String {
        format!("{p}[0:1]")
    }
}

/// The C math library: functions that are no routine of the file.
const MATH: &[&str] = &[
    "sqrt", "sqrtf", "fabs", "fabsf", "abs", "labs", "exp", "expf", "log", "logf", "log10", "pow",
    "powf", "sin", "sinf", "cos", "cosf", "tan", "atan", "atan2", "floor", "ceil", "fmax", "fmin",
    "fmaxf", "fminf", "fmod", "round", "trunc", "hypot", "cbrt", "erf", "tanh", "sinh", "cosh",
    "asin", "acos", "copysign", "isnan", "isinf", "min", "max",
];

/// The identifier a clause item starts with (`a` in `a[0:n]`).
pub fn base_name(item: &str) -> Option<&str> {
    let t = item.trim();
    let end = t
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(t.len());
    let name = &t[..end];
    (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then_some(name)
}

/// Identifiers in an expression, except called function names.
pub fn identifiers(expr: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = expr.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_alphabetic() || b[i] == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            if !expr[i..].trim_start().starts_with('(') {
                out.push(&expr[s..i]);
            }
        } else if b[i].is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_in_c() {
        let c = C;
        assert_eq!(c.and(&c.group("a > 0"), &c.not("s")), "(a > 0) && !(s)");
        assert_eq!(c.min("n", 127), "n < 127 ? n : 127");
        assert_eq!(c.min("n + 1", 127), "(n + 1) < 127 ? (n + 1) : 127");
        assert_eq!(
            c.element("acc2omp_queue", &c.low_bits(&c.group("q"), 63)),
            "acc2omp_queue[(q) & 63]"
        );
        assert!(c.is_int_literal("0x40") && c.is_int_literal("64u") && !c.is_int_literal("n"));
        assert!(
            c.has_side_effects("i++")
                && c.has_side_effects("f(x)")
                && !c.has_side_effects("a <= b")
        );
    }

    #[test]
    fn cxx_is_told_by_its_words_scope_operator_and_headers() {
        let cxx = |s: &str| looks_like_cxx(s, &crate::lex::lex_range(s, 0..s.len(), true));
        assert!(cxx("using T = int;"));
        assert!(cxx("int x = ::y;"));
        assert!(cxx("#include <vector>\nint x;"));
        assert!(!cxx("#include <stdio.h>\nint class_count; /* class */"));
    }
}
