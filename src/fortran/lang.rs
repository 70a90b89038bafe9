//! Expressions in Fortran, as the shared decisions read and build them: names are
//! case-insensitive, a component is `t%c`, an array element `a(i)` (which may also be a
//! function reference: read conservatively), logical operators are `.not.`/`.and.`.

/// Fortran expressions.
pub struct Fortran;

/// The intrinsic procedures of Fortran 2018 that are functions (sorted), and the functions of
/// `iso_c_binding`: a reference to one is no call of the program's (unless a declaration makes
/// the name something else), and none assigns its arguments.
pub const INTRINSIC_FUNCTIONS: &[&str] = &[
    "abs",
    "achar",
    "acos",
    "acosh",
    "adjustl",
    "adjustr",
    "aimag",
    "aint",
    "all",
    "allocated",
    "anint",
    "any",
    "asin",
    "asinh",
    "associated",
    "atan",
    "atan2",
    "atanh",
    "bessel_j0",
    "bessel_j1",
    "bessel_jn",
    "bessel_y0",
    "bessel_y1",
    "bessel_yn",
    "bge",
    "bgt",
    "bit_size",
    "ble",
    "blt",
    "btest",
    "c_associated",
    "c_funloc",
    "c_loc",
    "c_sizeof",
    "ceiling",
    "char",
    "cmplx",
    "command_argument_count",
    "conjg",
    "cos",
    "cosh",
    "count",
    "cshift",
    "dble",
    "digits",
    "dim",
    "dot_product",
    "dprod",
    "dshiftl",
    "dshiftr",
    "eoshift",
    "epsilon",
    "erf",
    "erfc",
    "erfc_scaled",
    "exp",
    "exponent",
    "extends_type_of",
    "findloc",
    "float",
    "floor",
    "fraction",
    "gamma",
    "huge",
    "hypot",
    "iachar",
    "iall",
    "iand",
    "iany",
    "ibclr",
    "ibits",
    "ibset",
    "ichar",
    "ieor",
    "image_index",
    "index",
    "int",
    "ior",
    "iparity",
    "is_contiguous",
    "is_iostat_end",
    "is_iostat_eor",
    "ishft",
    "ishftc",
    "kind",
    "lbound",
    "lcobound",
    "leadz",
    "len",
    "len_trim",
    "lge",
    "lgt",
    "lle",
    "llt",
    "log",
    "log10",
    "log_gamma",
    "logical",
    "maskl",
    "maskr",
    "matmul",
    "max",
    "maxexponent",
    "maxloc",
    "maxval",
    "merge",
    "merge_bits",
    "min",
    "minexponent",
    "minloc",
    "minval",
    "mod",
    "modulo",
    "nearest",
    "new_line",
    "nint",
    "norm2",
    "not",
    "null",
    "num_images",
    "pack",
    "parity",
    "popcnt",
    "poppar",
    "precision",
    "present",
    "product",
    "radix",
    "range",
    "rank",
    "real",
    "repeat",
    "reshape",
    "rrspacing",
    "same_type_as",
    "scale",
    "scan",
    "selected_char_kind",
    "selected_int_kind",
    "selected_real_kind",
    "set_exponent",
    "shape",
    "shifta",
    "shiftl",
    "shiftr",
    "sign",
    "sin",
    "sinh",
    "size",
    "sngl",
    "spacing",
    "spread",
    "sqrt",
    "storage_size",
    "sum",
    "tan",
    "tanh",
    "this_image",
    "tiny",
    "trailz",
    "transfer",
    "transpose",
    "trim",
    "ubound",
    "ucobound",
    "unpack",
    "verify",
];

/// Whether `name` (lower case) is an intrinsic function ([`INTRINSIC_FUNCTIONS`]).
pub fn is_intrinsic_function(name: &str) -> bool {
    INTRINSIC_FUNCTIONS.binary_search(&name).is_ok()
}

/// The keywords of the input/output statements.
pub const IO_KEYWORDS: [&str; 12] = [
    "read",
    "write",
    "print",
    "open",
    "close",
    "inquire",
    "rewind",
    "backspace",
    "flush",
    "wait",
    "endfile",
    "format",
];

/// The keywords of the other statements that a `(` may follow (an action statement's).
pub const PAREN_KEYWORDS: &[&str] = &[
    "allocate",
    "deallocate",
    "forall",
    "if",
    "nullify",
    "stop",
    "where",
    "while",
];

/// Whether `word` (lower case) is a statement keyword that a `(` may follow, in an action
/// statement or an I/O control list ([`IO_KEYWORDS`], [`PAREN_KEYWORDS`]).
pub fn is_paren_keyword(word: &str) -> bool {
    IO_KEYWORDS.contains(&word) || PAREN_KEYWORDS.contains(&word)
}

/// Keywords whose parentheses hold a condition or selector that is only read.
pub const CONDITION_KEYWORDS: &[&str] = &["if", "while", "case", "where", "forall"];

impl Fortran {
    pub fn name(&self) -> &'static str {
        "Fortran"
    }

    pub fn worksharing(&self) -> &'static str {
        "do"
    }

    pub fn is_identifier(&self, s: &str) -> bool {
        let b = s.as_bytes();
        b.first().is_some_and(u8::is_ascii_alphabetic)
            && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
    }

    /// `64`, `64_8`, `64_i8` (a kind parameter after `_`).
    pub fn is_int_literal(&self, s: &str) -> bool {
        let (digits, kind) = match s.trim().split_once('_') {
            Some((d, k)) => (d, Some(k)),
            None => (s.trim(), None),
        };
        !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && kind.is_none_or(|k| {
                !k.is_empty() && (self.is_identifier(k) || k.bytes().all(|b| b.is_ascii_digit()))
            })
    }

    /// Fortran expressions assign nothing; a parenthesis after a name may be a function
    /// reference, which may have side effects.
    pub fn has_side_effects(&self, e: &str) -> bool {
        e.contains('(')
    }

    pub fn writes_or_calls(&self, e: &str) -> bool {
        let b = e.as_bytes();
        let mut k = 0;
        while k < b.len() {
            if b[k].is_ascii_alphabetic() {
                let s = k;
                while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_') {
                    k += 1;
                }
                let dotted = s > 0 && b[s - 1] == b'.';
                if !dotted && e[k..].trim_start().starts_with('(') {
                    return true;
                }
            } else {
                k += 1;
            }
        }
        false
    }

    pub fn base_name<'e>(&self, item: &'e str) -> Option<&'e str> {
        let t = item.trim();
        let end = t
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(t.len());
        let name = &t[..end];
        self.is_identifier(name).then_some(name)
    }

    pub fn is_library_function(&self, name: &str) -> bool {
        is_intrinsic_function(&name.to_ascii_lowercase())
    }

    /// The names in `text`, outside character constants, leaving out `.and.`-style
    /// operators, logical constants and the kind or exponent letters of numbers.
    pub fn words<'t>(&self, text: &'t str) -> Vec<&'t str> {
        let b = text.as_bytes();
        let mut out = Vec::new();
        let mut k = 0;
        while k < b.len() {
            let c = b[k];
            if c == b'\'' || c == b'"' {
                k += 1;
                while k < b.len() && b[k] != c {
                    k += 1;
                }
                k += 1;
            } else if c.is_ascii_digit() {
                // A number with its exponent and kind (`1.5d0`, `2_8`, `1e-3_dp`).
                while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_' || b[k] == b'.')
                {
                    let exp = matches!(b[k], b'e' | b'E' | b'd' | b'D');
                    k += 1;
                    if exp && k < b.len() && matches!(b[k], b'+' | b'-') {
                        k += 1;
                    }
                }
            } else if c == b'.' {
                // `.and.`, `.true.`: skipped up to the closing dot.
                let e = b[k + 1..]
                    .iter()
                    .position(|x| !x.is_ascii_alphabetic())
                    .map_or(b.len(), |n| k + 1 + n);
                k = if e < b.len() && b[e] == b'.' && e > k + 1 {
                    e + 1
                } else {
                    k + 1
                };
            } else if c.is_ascii_alphabetic() {
                let s = k;
                while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_') {
                    k += 1;
                }
                out.push(&text[s..k]);
            } else {
                k += 1;
            }
        }
        out
    }

    /// The variables `expr` reads: its names, less intrinsic functions called and
    /// component names after `%`.
    pub fn identifiers<'e>(&self, expr: &'e str) -> Vec<&'e str> {
        let mut out = Vec::new();
        for w in self.words(expr) {
            let at = w.as_ptr() as usize - expr.as_ptr() as usize;
            let before = expr[..at].trim_end();
            let after = expr[at + w.len()..].trim_start();
            if before.ends_with('%') || (after.starts_with('(') && self.is_library_function(w)) {
                continue;
            }
            out.push(w);
        }
        out
    }

    /// `t%c` (and `t%c(1:n)`): the structure `t`, the component `c`. Fortran has no
    /// pointer access: a pointer component is reached the same way.
    pub fn member_of<'i>(&self, item: &'i str) -> Option<(&'i str, &'i str)> {
        let t = item.trim();
        let base = self.base_name(t)?;
        let rest = t[base.len()..].trim_start().strip_prefix('%')?;
        Some((base, self.base_name(rest)?))
    }

    pub fn member(&self, base: &str, member: &str) -> String {
        format!("{base}%{member}")
    }

    /// `a` or `a(:)`-style whole sections (every subscript a bare `:`).
    pub fn names_whole(&self, item: &str, base: &str) -> bool {
        let t = item.trim();
        let Some(rest) = t
            .get(..base.len())
            .filter(|h| h.eq_ignore_ascii_case(base))
            .map(|_| t[base.len()..].trim())
        else {
            return false;
        };
        rest.is_empty()
            || rest
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .is_some_and(|r| r.split(',').all(|s| s.trim() == ":"))
    }

    pub fn truth(&self) -> &'static str {
        ".true."
    }

    pub fn not(&self, e: &str) -> String {
        format!(".not. {e}")
    }

    pub fn and(&self, a: &str, b: &str) -> String {
        format!("{a} .and. {b}")
    }

    pub fn min(&self, e: &str, bound: u32) -> String {
        format!("min({e}, {bound})")
    }

    /// An element of an array the translation declares with a lower bound of 0.
    pub fn element(&self, array: &str, index: &str) -> String {
        format!("{array}({index})")
    }

    pub fn low_bits(&self, e: &str, mask: i64) -> String {
        format!("iand({e}, {mask})")
    }

    /// Fortran's iterator ranges include their upper bound.
    pub fn iterator_range(&self, count: i64) -> String {
        format!("0:{}", count - 1)
    }

    /// Fortran names no zero-length section of a pointer's target.
    pub fn zero_length(&self, _p: &str) -> Option<String> {
        None
    }

    /// A Fortran pointer names its target.
    pub fn pointee(&self, p: &str) -> String {
        p.to_string()
    }
}

/// The shared decisions reach Fortran's expressions through the seam's trait; the inherent
/// methods above are the implementation (a component is reached one way, `%`).
impl crate::lang::Language for Fortran {
    fn name(&self) -> &'static str {
        Fortran::name(self)
    }
    fn worksharing(&self) -> &'static str {
        Fortran::worksharing(self)
    }
    fn is_identifier(&self, s: &str) -> bool {
        Fortran::is_identifier(self, s)
    }
    fn is_int_literal(&self, s: &str) -> bool {
        Fortran::is_int_literal(self, s)
    }
    fn has_side_effects(&self, e: &str) -> bool {
        Fortran::has_side_effects(self, e)
    }
    fn writes_or_calls(&self, e: &str) -> bool {
        Fortran::writes_or_calls(self, e)
    }
    fn base_name<'e>(&self, item: &'e str) -> Option<&'e str> {
        Fortran::base_name(self, item)
    }
    fn is_library_function(&self, name: &str) -> bool {
        Fortran::is_library_function(self, name)
    }
    fn words<'t>(&self, text: &'t str) -> Vec<&'t str> {
        Fortran::words(self, text)
    }
    fn identifiers<'e>(&self, expr: &'e str) -> Vec<&'e str> {
        Fortran::identifiers(self, expr)
    }
    fn member_of<'i>(&self, item: &'i str) -> Option<(&'i str, &'i str, crate::lang::Access)> {
        Fortran::member_of(self, item).map(|(b, m)| (b, m, crate::lang::Access::Value))
    }
    fn member(&self, base: &str, member: &str, _access: crate::lang::Access) -> String {
        Fortran::member(self, base, member)
    }
    fn names_whole(&self, item: &str, base: &str) -> bool {
        Fortran::names_whole(self, item, base)
    }
    fn folds_case(&self) -> bool {
        true
    }
    fn typed_device_pointers(&self) -> bool {
        true
    }
    fn int_condition(&self, e: &str) -> String {
        format!("{e} /= 0")
    }
    fn presence_address(&self, item: &str, pointer: bool) -> String {
        match pointer {
            true => item.to_string(),
            false => format!("c_loc({item})"),
        }
    }
    fn truth(&self) -> &'static str {
        Fortran::truth(self)
    }
    fn not(&self, e: &str) -> String {
        Fortran::not(self, e)
    }
    fn and(&self, a: &str, b: &str) -> String {
        Fortran::and(self, a, b)
    }
    fn min(&self, e: &str, bound: u32) -> String {
        Fortran::min(self, e, bound)
    }
    fn element(&self, array: &str, index: &str) -> String {
        Fortran::element(self, array, index)
    }
    fn low_bits(&self, e: &str, mask: i64) -> String {
        Fortran::low_bits(self, e, mask)
    }
    fn iterator(&self, name: &str, count: i64) -> String {
        format!("{name} = {}", Fortran::iterator_range(self, count))
    }
    fn zero_length(&self, p: &str) -> Option<String> {
        Fortran::zero_length(self, p)
    }
    fn pointee(&self, p: &str) -> String {
        Fortran::pointee(self, p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intrinsic_functions_are_sorted() {
        assert!(INTRINSIC_FUNCTIONS.windows(2).all(|w| w[0] < w[1]));
    }

    /// One list of intrinsic functions: expressions know those the call reader knows.
    #[test]
    fn library_functions_are_the_intrinsic_functions() {
        for f in [
            "allocated",
            "associated",
            "len_trim",
            "maxloc",
            "Trim",
            "SQRT",
        ] {
            assert!(Fortran.is_library_function(f), "{f}");
        }
        assert!(!Fortran.is_library_function("work"));
        assert_eq!(Fortran.identifiers("allocated(a) .and. n > 0"), ["a", "n"]);
    }

    #[test]
    fn keywords_before_parentheses() {
        for k in ["allocate", "write", "inquire", "if", "where", "stop"] {
            assert!(is_paren_keyword(k), "{k}");
        }
        assert!(!is_paren_keyword("f"));
    }
}
