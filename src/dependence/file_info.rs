//! What the test knows about the whole file, computed once for all its loops: macros,
//! enumerators, names whose address is taken, whether it looks like C++, and the standard
//! constants and pure functions a loop may use.

use super::syntax::Macros;
use crate::hash::HashSet;
use crate::lex::{TokKind, Token};

/// Facts about the whole file.
pub struct FileInfo {
    pub(super) macros: Macros,
    /// Names whose address is taken somewhere (`&x`, a C++ reference bound to `x`).
    pub(super) addressed: HashSet<String>,
    /// Enumerators.
    enums: HashSet<String>,
    /// The file looks like C++: a struct value may have operators (calls).
    pub(super) cxx: bool,
}

/// Constants of the standard headers that are safe to read.
const CONSTANTS: &[&str] = &[
    "true",
    "false",
    "NULL",
    "nullptr",
    "M_PI",
    "M_PI_2",
    "M_PI_4",
    "M_1_PI",
    "M_2_PI",
    "M_E",
    "M_LN2",
    "M_LN10",
    "M_SQRT2",
    "M_SQRT1_2",
    "DBL_MAX",
    "DBL_MIN",
    "DBL_EPSILON",
    "FLT_MAX",
    "FLT_MIN",
    "FLT_EPSILON",
    "INT_MAX",
    "INT_MIN",
    "UINT_MAX",
    "LONG_MAX",
    "LONG_MIN",
    "LLONG_MAX",
    "LLONG_MIN",
    "SIZE_MAX",
    "HUGE_VAL",
    "HUGE_VALF",
    "INFINITY",
    "NAN",
];

/// Functions without side effects whose result depends only on their arguments.
const PURE: &[&str] = &[
    "sqrt",
    "cbrt",
    "fabs",
    "abs",
    "labs",
    "llabs",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "pow",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "floor",
    "ceil",
    "round",
    "lround",
    "llround",
    "trunc",
    "rint",
    "lrint",
    "nearbyint",
    "fmod",
    "remainder",
    "fmax",
    "fmin",
    "fdim",
    "fma",
    "hypot",
    "erf",
    "erfc",
    "tgamma",
    "copysign",
    "ldexp",
    "scalbn",
    "ilogb",
    "logb",
    "isnan",
    "isinf",
    "isfinite",
    "isnormal",
    "signbit",
];

pub(super) fn is_pure(name: &str) -> bool {
    let base = name.strip_prefix("std::").unwrap_or(name);
    if name.starts_with("std::") && matches!(base, "min" | "max") {
        return true;
    }
    // `sqrtf`, `fabsl`: the float and long double variants.
    PURE.contains(&base)
        || (!name.starts_with("std::")
            && (base.strip_suffix('f').or_else(|| base.strip_suffix('l')))
                .is_some_and(|b| PURE.contains(&b)))
}

impl FileInfo {
    pub fn new(
        src: &str,
        toks: &[Token],
        pp: &crate::lex::PpLines,
        header_macros: &[crate::facts::HeaderMacro],
    ) -> Self {
        // The standard constants stay constants: their headers define them through
        // compiler builtins (`INFINITY` is `(__builtin_inff ())`, `DBL_MAX` `__DBL_MAX__`).
        let header_macros: Vec<crate::facts::HeaderMacro> = header_macros
            .iter()
            .filter(|m| !CONSTANTS.contains(&m.name.as_str()))
            .cloned()
            .collect();
        let text = |k: usize| toks.get(k).map_or("", |t| t.text(src));
        let mut addressed = HashSet::default();
        let mut enums = HashSet::default();
        for k in 0..toks.len() {
            match text(k) {
                "&" => {
                    let unary = k == 0 || {
                        let p = &toks[k - 1];
                        let pt = p.text(src);
                        !(matches!(p.kind, TokKind::Number | TokKind::Literal)
                            || (p.kind == TokKind::Ident
                                && !matches!(pt, "return" | "case" | "sizeof"))
                            || pt == ")"
                            || pt == "]")
                    };
                    let next = toks.get(k + 1).filter(|t| t.kind == TokKind::Ident);
                    if let Some(n) = next {
                        if unary {
                            addressed.insert(n.text(src).to_string());
                        } else if text(k + 2) == "="
                            && toks.get(k + 3).is_some_and(|t| t.kind == TokKind::Ident)
                        {
                            // `T &r = x;` binds a reference to `x`.
                            addressed.insert(text(k + 3).to_string());
                        }
                    }
                }
                "enum" => {
                    let mut j = k + 1;
                    if toks.get(j).is_some_and(|t| t.kind == TokKind::Ident) {
                        j += 1;
                    }
                    if text(j) != "{" {
                        continue;
                    }
                    let mut depth = 0;
                    while j < toks.len() {
                        match text(j) {
                            "{" | "(" => depth += 1,
                            "}" | ")" => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ if depth == 1
                                && toks[j].kind == TokKind::Ident
                                && matches!(text(j - 1), "{" | ",")
                                && matches!(text(j + 1), "=" | "," | "}") =>
                            {
                                enums.insert(text(j).to_string());
                            }
                            _ => {}
                        }
                        j += 1;
                    }
                }
                _ => {}
            }
        }
        let cxx = crate::c::lang::looks_like_cxx(src, toks);
        FileInfo {
            macros: Macros::new(src, toks, pp, &header_macros),
            addressed,
            enums,
            cxx,
        }
    }

    /// A name that is a constant: an enumerator, a standard constant not redefined here.
    pub(super) fn is_constant(&self, name: &str) -> bool {
        self.enums.contains(name) || (CONSTANTS.contains(&name) && !self.macros.is_macro(name))
    }
}
