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
        let same = |x: &str, w: &str| match dialect {
            Dialect::C => x == w,
            Dialect::Fortran => x.eq_ignore_ascii_case(w),
        };
        // A modifier keyword is held as the table spells it (Fortran's in any case), so
        // that its uses compare it plainly; `Args::list` keeps it as written.
        let keyword = modifiers.iter().find(|x| same(x, word));
        let op = modifiers.iter().any(|x| x == "op");
        let ops: &[&str] = match dialect {
            Dialect::C => &REDUCTION_OPS,
            Dialect::Fortran => &FORTRAN_REDUCTION_OPS,
        };
        if keyword.is_some() || (op && ops.iter().any(|o| same(o, word))) {
            // `-` reduces by adding the partial results: it is a sum to every analysis,
            // and the printers spell it `+` (`crate::print::operators`). An operator keeps
            // its spelling: the OpenMP clause prints it.
            let text = match keyword {
                Some(k) => k.as_str(),
                None if word == "-" => "+",
                None => word,
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
        *first = devnum_queues(src, first.span(), dialect)?;
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

/// The keyword arguments of clause `clause` (canonical name) in their canonical lower case,
/// so that every use compares them plainly: Fortran spells `default(PRESENT)` and
/// `gang(STATIC: n)` in any case (C's are lower case, or invalid), and device types are
/// compared without case in both languages. Only an item that is a keyword is changed (the
/// keyword part of `static: n`); `Args::list`, printed where a clause is kept or renamed,
/// keeps the user's spelling. (A modifier is canonical from [`split_args`].)
pub(super) fn canonical_keywords(clause: &str, args: &mut Args, dialect: Dialect) {
    match (clause, dialect) {
        ("device_type", _) => {
            for it in &mut args.items {
                lower(it, usize::MAX);
            }
        }
        ("default", Dialect::Fortran) => {
            for it in &mut args.items {
                if it.text.eq_ignore_ascii_case("none") || it.text.eq_ignore_ascii_case("present") {
                    lower(it, usize::MAX);
                }
            }
        }
        // `num:`, `dim:`, `static:` (a `::` is no keyword's).
        ("gang", Dialect::Fortran) => {
            for it in &mut args.items {
                if let Some((k, v)) = it.text.split_once(':')
                    && !v.starts_with(':')
                    && ["num", "dim", "static"]
                        .iter()
                        .any(|w| w.eq_ignore_ascii_case(k.trim()))
                {
                    lower(it, k.len());
                }
            }
        }
        _ => {}
    }
}

/// The first `len` bytes of `it`'s text in lower case (ASCII: a keyword's letters).
fn lower(it: &mut Item, len: usize) {
    let len = len.min(it.text.len());
    if it.text.as_bytes()[..len].iter().any(u8::is_ascii_uppercase) {
        it.text.as_mut_str()[..len].make_ascii_lowercase();
    }
}

/// The first queue of `wait(devnum: d : [queues:] q, …)`, whose item `d : [queues:] q` holds
/// the device number too (OpenACC 3.x wait-argument).
fn devnum_queues(src: &str, r: Range<usize>, dialect: Dialect) -> Result<Item, ParseError> {
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
    let text = &src[q.clone()];
    if let Some(rest) = text.get(6..)
        && match dialect {
            Dialect::C => text.starts_with("queues"),
            Dialect::Fortran => text[..6].eq_ignore_ascii_case("queues"),
        }
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
