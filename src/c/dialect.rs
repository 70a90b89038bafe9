//! Expressions in C and C++ (see [`Dialect`]).

use crate::lang::Dialect;

/// C and C++ expressions.
pub struct C;

impl Dialect for C {
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

    fn iterator_range(&self, count: i64) -> String {
        format!("0:{count}")
    }

    fn zero_length(&self, p: &str) -> Option<String> {
        Some(format!("{p}[:0]"))
    }

    fn pointee(&self, p: &str) -> String {
        format!("{p}[0:1]")
    }
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
}
