//! Arguments of a directive or clause: split at top-level commas, an optional leading
//! `modifier:`, reduction operators, and `wait(devnum: d : queues)`.

use super::cursor::quoted_end;
use super::{Args, Dialect, Item, ParseError};
use crate::rules::id;
use std::ops::Range;

/// C's reduction operators; GCC also takes `-` (a sum, as OpenMP up to 5.1 does).
const REDUCTION_OPS: [&str; 10] = ["+", "-", "*", "max", "min", "&", "|", "^", "&&", "||"];
/// Fortran's reduction operators and intrinsics (case-insensitive); gfortran also takes
/// `-` (a sum, as in OpenMP).
const FORTRAN_REDUCTION_OPS: [&str; 12] = [
    "+", "*", "-", "max", "min", "iand", "ior", "ieor", ".and.", ".or.", ".eqv.", ".neqv.",
];
/// The reduction operators whose result does not depend on how many equal copies are
/// combined (`x op x == x`): `max`, `min`, the bitwise and logical `and` and `or`, in C and in
/// Fortran.
const IDEMPOTENT_OPS: [&str; 10] = [
    "max", "min", "&", "|", "&&", "||", "iand", "ior", ".and.", ".or.",
];

/// Whether combining reduction operator `op`'s copies counts them (`+`, `-`, `*`, `^`,
/// `ieor`, `.eqv.`, `.neqv.`, and any operator not known here): gang-redundant code whose
/// reduction copies are all equal gives a result that depends on the number of gangs. Case
/// is ignored (Fortran).
pub fn counts_copies(op: &str) -> bool {
    let op = op.trim();
    !IDEMPOTENT_OPS.iter().any(|o| o.eq_ignore_ascii_case(op))
}

/// `r` without surrounding whitespace, `\` line continuations and comments.
fn trimmed(src: &str, r: Range<usize>) -> Range<usize> {
    let (mut a, mut b) = (r.start, r.end);
    loop {
        let s = &src[a..b];
        let t = s.trim_start();
        a += s.len() - t.len();
        if let Some(rest) = t.strip_prefix('\\') {
            let nl = rest.len() - rest.trim_start_matches([' ', '\t', '\r']).len();
            if rest[nl..].starts_with('\n') {
                a += 1 + nl + 1;
                continue;
            }
        }
        if let Some(e) = t.strip_prefix("/*").and_then(|c| c.find("*/")) {
            a += e + 4;
            continue;
        }
        break;
    }
    loop {
        let s = &src[a..b];
        let t = s.trim_end();
        b -= s.len() - t.len();
        if let Some(rest) = t.strip_suffix('\\') {
            b = a + rest.len();
            continue;
        }
        if let Some(o) = t.strip_suffix("*/").and_then(|c| c.rfind("/*")) {
            b = a + o;
            continue;
        }
        break;
    }
    if a >= b { r.start..r.start } else { a..b }
}

/// Split `src[inner]` at top-level commas (and one leading `modifier:` when allowed).
pub(super) fn split_args(
    src: &str,
    inner: Range<usize>,
    modifiers: &[String],
    dialect: Dialect,
) -> Result<Args, ParseError> {
    let b = src.as_bytes();
    let mut pieces = Vec::new();
    let mut depth = 0i32;
    let mut start = inner.start;
    let mut colon = None;
    let mut i = inner.start;
    while i < inner.end {
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'"' | b'\'' => {
                i = quoted_end(b, i, dialect).min(inner.end);
                continue;
            }
            b'/' if dialect == Dialect::C && b.get(i + 1) == Some(&b'*') => {
                i = src[i + 2..inner.end]
                    .find("*/")
                    .map_or(inner.end, |e| i + 2 + e + 2);
                continue;
            }
            b'#' => {
                return Err(ParseError {
                    offset: i,
                    rule: id::PARSE_ERROR,
                    message: "unexpected '#' in a clause argument".into(),
                });
            }
            b',' if depth == 0 => {
                pieces.push(start..i);
                start = i + 1;
            }
            b':' if depth == 0 && colon.is_none() && pieces.is_empty() => {
                let double = b.get(i + 1) == Some(&b':') || (i > 0 && b[i - 1] == b':');
                if !double {
                    colon = Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    pieces.push(start..inner.end);
    let mut modifier = None;
    if let Some(c) = colon {
        let m = trimmed(src, inner.start..c);
        let word = &src[m.clone()];
        let ok = match dialect {
            Dialect::C => modifiers
                .iter()
                .any(|x| x == word || (x == "op" && REDUCTION_OPS.contains(&word))),
            Dialect::Fortran => modifiers.iter().any(|x| {
                x.eq_ignore_ascii_case(word)
                    || (x == "op"
                        && FORTRAN_REDUCTION_OPS
                            .iter()
                            .any(|o| o.eq_ignore_ascii_case(word)))
            }),
        };
        if ok {
            // `-` reduces by adding the partial results: it is a sum to every analysis,
            // and the printers spell it `+` (`crate::print::operators`).
            let text = if word == "-" && modifiers.iter().any(|x| x == "op") {
                "+"
            } else {
                word
            };
            modifier = Some(Box::new(Item::new(text, m)));
            pieces[0] = c + 1..pieces[0].end;
        } else if modifiers.iter().any(|x| x == "op") {
            return Err(ParseError {
                offset: m.start,
                rule: id::PARSE_ERROR,
                message: format!("unknown reduction operator '{word}'"),
            });
        }
    } else if modifiers.iter().any(|x| x == "op") {
        return Err(ParseError {
            offset: inner.start,
            rule: id::PARSE_ERROR,
            message: "reduction needs 'operator: list'".into(),
        });
    }
    let mut items = Vec::with_capacity(pieces.len());
    for p in pieces {
        let r = trimmed(src, p);
        if r.is_empty() {
            return Err(ParseError {
                offset: r.start,
                rule: id::PARSE_ERROR,
                message: "empty argument".into(),
            });
        }
        items.push(Item::new(&src[r.clone()], r));
    }
    if modifier.as_ref().is_some_and(|m| m.text == "devnum")
        && let Some(first) = items.first_mut()
    {
        *first = devnum_queues(src, first.span())?;
    }
    // The items as written: comments and continuations stay; plain outer spaces go.
    let list_start = match items.first() {
        Some(_) => {
            let from = modifier
                .as_ref()
                .map_or(inner.start, |_| colon.unwrap_or(0) + 1);
            let all = &src[from..inner.end];
            match all.trim_start() {
                t if t.starts_with('\\') => from,
                t => inner.end - t.len(),
            }
        }
        None => inner.end,
    };
    let list = match src[list_start..inner.end].trim_end() {
        t if t.ends_with('\\') => src[list_start..inner.end].into(),
        t => t.into(),
    };
    Ok(Args::new(
        inner,
        modifier,
        // Allocated at its length: no spare room to give back.
        items.into_boxed_slice(),
        list,
        list_start,
    ))
}

/// The first queue of `wait(devnum: d : [queues:] q, …)`, whose item `d : [queues:] q` holds
/// the device number too (OpenACC 3.x wait-argument).
fn devnum_queues(src: &str, r: Range<usize>) -> Result<Item, ParseError> {
    let b = src.as_bytes();
    let mut depth = 0i32;
    let mut colon = None;
    for i in r.clone() {
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b':' if depth == 0 && b.get(i + 1) != Some(&b':') && (i == 0 || b[i - 1] != b':') => {
                colon = Some(i);
                break;
            }
            _ => {}
        }
    }
    let Some(c) = colon else {
        return Err(ParseError {
            offset: r.start,
            rule: id::PARSE_ERROR,
            message: "'devnum:' needs a device number and the queues: 'devnum: d : queues'".into(),
        });
    };
    let mut q = trimmed(src, c + 1..r.end);
    if let Some(rest) = src[q.clone()].strip_prefix("queues")
        && rest.trim_start().starts_with(':')
    {
        let after = q.end - rest.trim_start().len() + 1;
        q = trimmed(src, after..q.end);
    }
    if q.is_empty() || trimmed(src, r.start..c).is_empty() {
        return Err(ParseError {
            offset: r.start,
            rule: id::PARSE_ERROR,
            message: "'devnum:' needs a device number and the queues: 'devnum: d : queues'".into(),
        });
    }
    Ok(Item::new(&src[q.clone()], q))
}

#[cfg(test)]
mod tests {
    use super::{FORTRAN_REDUCTION_OPS, REDUCTION_OPS, counts_copies};

    #[test]
    fn operators_that_count_copies_are_told_from_idempotent_ones() {
        let counting = ["+", "*", "^", "-", "ieor", ".eqv.", ".neqv."];
        for op in REDUCTION_OPS.iter().chain(&FORTRAN_REDUCTION_OPS) {
            assert_eq!(counts_copies(op), counting.contains(op), "{op}");
        }
        assert!(!counts_copies(" MAX "));
        assert!(!counts_copies(".OR."));
        // An operator not known here is taken to count them.
        assert!(counts_copies("f"));
    }
}
