//! Checks of a Fortran directive's clause arguments against the declarations of the
//! program unit it stands in, which the directive text alone cannot make (gfortran makes
//! them): an argument that must be a scalar integer (`async`, `wait`, `num_gangs`, …) or a
//! scalar logical (`if`) that is a variable of another type, a whole array, an array
//! section or a constant of another type; a named constant (`parameter`) where a data
//! clause needs a variable. Names declared only implicitly are not judged.

use std::borrow::Cow;

use super::Front;
use super::facts::{Type, Var};
use crate::diag::Diagnostic;
use crate::directive::count::constant;
use crate::directive::{DATA_CLAUSES, Dialect, Directive, Item};
use crate::rules::id;

/// Clauses whose arguments are scalar integer expressions.
const INTEGERS: [&str; 8] = [
    "async",
    "wait",
    "num_gangs",
    "num_workers",
    "vector_length",
    "gang",
    "worker",
    "vector",
];

/// Clauses whose arguments are scalar logical expressions.
const LOGICALS: [&str; 1] = ["if"];

/// The first clause argument of `d` that contradicts the declarations of unit `unit`, as
/// a diagnostic at a byte offset of `d`'s text (the caller maps it to the file).
pub fn check(front: &Front, unit: usize, d: &Directive) -> Option<Diagnostic> {
    let var = |name: &str| {
        front
            .facts
            .lookup(&front.structure, unit, name)
            .filter(|v| v.at != 0 && !matches!(v.ty, Type::Implicit(_)))
    };
    for c in &d.clauses {
        // The structure took the nest from the count as written: a count it could not
        // evaluate (a named constant) was read as 1, so the collapsed loops are not known.
        if c.name == "collapse"
            && let Some(it) = c.items().next()
            && constant(&it.text, Dialect::Fortran).is_none()
        {
            let count = it.text.trim();
            return Some(Diagnostic::new(
                it.span().start,
                id::COLLAPSE_UNKNOWN,
                format!(
                    "'collapse({count})': the count is not an integer constant of literals, so the nest it names cannot be checked; write it as a literal; the directive is left unchanged"
                ),
            ));
        }
        let want = if INTEGERS.contains(&c.name.as_str()) {
            Some("integer")
        } else if LOGICALS.contains(&c.name.as_str()) {
            Some("logical")
        } else {
            None
        };
        // Items that must be variables: data clauses, and `update`'s motion clauses.
        let data = DATA_CLAUSES.contains(&c.name.as_str())
            || matches!(c.name.as_str(), "host" | "device")
            || (c.name == "self" && d.name == "update");
        for it in c.items() {
            let why = match want {
                Some(ty) => not_scalar_of(it, ty, &var),
                None if data => named_constant(it, &var),
                None => None,
            };
            if let Some(why) = why {
                let clause = &c.spelled();
                let msg = match want {
                    Some(ty) => format!(
                        "'{clause}' takes a scalar {ty} expression: {why}; the directive is left unchanged"
                    ),
                    None => format!(
                        "'{clause}' takes variables: {why}; the directive is left unchanged"
                    ),
                };
                return Some(Diagnostic::new(it.span().start, id::INVALID_ARGUMENT, msg));
            }
        }
    }
    None
}

/// Why item `it` is not a scalar of intrinsic type `ty`, when its declarations say so.
fn not_scalar_of<'a>(
    it: &Item,
    ty: &str,
    var: &dyn Fn(&str) -> Option<Cow<'a, Var>>,
) -> Option<String> {
    // `num: n`, `length: n`, `devnum: d`: the expression after the keyword.
    let text = it.text.trim();
    let text = match text.split_once(':') {
        Some((k, rest)) if is_name(k.trim()) && !rest.starts_with(':') => rest.trim(),
        _ => text,
    };
    let lower = text.to_ascii_lowercase();
    if ty != "logical" && (lower == ".true." || lower == ".false.") {
        return Some(format!("'{text}' is a logical constant"));
    }
    let (name, subscript) = match text.find('(') {
        Some(k) if text.ends_with(')') => (text[..k].trim(), Some(&text[k + 1..text.len() - 1])),
        _ => (text, None),
    };
    if !is_name(name) {
        return None;
    }
    let v = var(name)?;
    if v.parameter && v.rank == 0 && type_name(&v) == Some(ty) {
        return None;
    }
    match subscript {
        None if v.rank > 0 => return Some(format!("'{name}' is an array")),
        Some(s) if v.rank > 0 && s.contains(':') => {
            return Some(format!("'{text}' is an array section"));
        }
        Some(_) if v.rank == 0 => return None,
        _ => {}
    }
    let declared = type_name(&v)?;
    (declared != ty).then(|| format!("'{name}' is {}", with_article(declared)))
}

/// Why item `it` is not a variable: a named constant.
fn named_constant<'a>(it: &Item, var: &dyn Fn(&str) -> Option<Cow<'a, Var>>) -> Option<String> {
    let text = it.text.trim();
    let name = text.split(['(', '%']).next().unwrap_or(text).trim();
    if !is_name(name) {
        return None;
    }
    let v = var(name)?;
    v.parameter.then(|| {
        format!("'{name}' is a named constant (parameter), not a variable: it needs no copy")
    })
}

/// The intrinsic type keyword of `v`'s declaration (`integer`, `real`, …); None for a
/// derived type.
fn type_name(v: &Var) -> Option<&str> {
    match &v.ty {
        Type::Intrinsic { name, .. } => Some(match name.as_str() {
            "double precision" | "doubleprecision" => "real",
            "double complex" | "doublecomplex" => "complex",
            n => n,
        }),
        _ => None,
    }
}

fn with_article(ty: &str) -> String {
    let article = if ty.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {ty}")
}

fn is_name(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}
