//! Checks of a parsed directive beyond its clause grammar, so that invalid OpenACC is
//! reported instead of rewritten: required clauses, clauses allowed once, argument counts,
//! argument expressions that cannot be C (`num_gangs(1 i)`), negative sub-array bounds,
//! sub-arrays where only variables may appear, and the names `routine` and `default` take.

use super::{Args, Clause, Dialect, Item, ParseError};
use crate::lex::{TokKind, Token, lex_range};
use crate::rules::Tables;
use crate::rules::{RuleId, id};

fn err(offset: usize, rule: RuleId, message: String) -> ParseError {
    ParseError {
        offset,
        message,
        rule,
    }
}

/// Words that may precede another word or a literal in an expression (`sizeof x`,
/// `(unsigned int) x`, `(struct s *) p`).
const LEADING_WORDS: [&str; 24] = [
    "sizeof",
    "alignof",
    "_Alignof",
    "__alignof__",
    "typeof",
    "__typeof__",
    "decltype",
    "const",
    "volatile",
    "struct",
    "union",
    "enum",
    "class",
    "typename",
    "signed",
    "unsigned",
    "short",
    "long",
    "int",
    "char",
    "new",
    "delete",
    "template",
    "operator",
];

/// Clauses whose items are plain variables (no sub-arrays): OpenMP has no sections in the
/// clauses they become, or OpenACC allows none.
const VARIABLES_ONLY: [&str; 4] = ["private", "firstprivate", "deviceptr", "use_device"];

const ROUTINE_LEVELS: [&str; 4] = ["gang", "worker", "vector", "seq"];

/// Clauses whose items are variables, array elements, sub-arrays or members, besides the
/// mapping ones (with a `map` type in the table) and `self` on `update`.
const VARIABLE_LISTS: [&str; 12] = [
    "private",
    "firstprivate",
    "reduction",
    "deviceptr",
    "attach",
    "detach",
    "delete",
    "use_device",
    "host",
    "device",
    "device_resident",
    "link",
];

/// Clauses whose arguments are integer expressions.
const INTEGERS: [&str; 12] = [
    "async",
    "wait",
    "num_gangs",
    "num_workers",
    "vector_length",
    "collapse",
    "gang",
    "worker",
    "vector",
    "tile",
    "default_async",
    "device_num",
];

/// Clauses besides the mapping ones (with a `map` type in the table) whose items may name
/// sub-arrays, checked for negative bounds.
const SECTIONS: [&str; 7] = [
    "attach",
    "detach",
    "delete",
    "host",
    "device",
    "self",
    "reduction",
];

/// Whether `t` is an operand token (a word, a number or a literal).
fn operand(t: &Token) -> bool {
    matches!(t.kind, TokKind::Ident | TokKind::Number | TokKind::Literal)
}

/// A problem with the expression `src[item]`, which must be C: two operands without an
/// operator between them, an operator with nothing after it, a stray `:`.
/// `star_ok`: a lone `*` is a valid item (`tile(*)`, `gang(static:*)`, `device_type(*)`).
pub fn malformed(src: &str, item: &Item, star_ok: bool) -> Option<(usize, String)> {
    let toks = lex_range(src, item.span.clone(), false);
    if star_ok && toks.len() == 1 && toks[0].text(src) == "*" {
        return None;
    }
    if !toks.iter().any(operand) {
        return Some((
            item.span.start,
            format!("expected an expression, not '{}'", item.text),
        ));
    }
    let text = |t: &Token| t.text(src);
    // Per open bracket: its text, whether a `:` was seen in it, pending `?` count.
    let mut stack: Vec<(&str, bool, usize)> = vec![("", false, 0)];
    for (k, t) in toks.iter().enumerate() {
        let prev = k.checked_sub(1).map(|p| &toks[p]);
        let tx = text(t);
        if t.kind == TokKind::PpLine {
            return Some((t.start, "unexpected '#' in a clause argument".into()));
        }
        if let Some(p) = prev {
            let pt = text(p);
            let words = operand(p)
                && matches!(t.kind, TokKind::Ident | TokKind::Number)
                && !(p.kind == TokKind::Ident && LEADING_WORDS.contains(&pt))
                && !(t.kind == TokKind::Ident && matches!(tx, "const" | "volatile"));
            let after_close = pt == "]" && matches!(t.kind, TokKind::Ident | TokKind::Number);
            let number_call = p.kind != TokKind::Ident && p.kind != TokKind::Punct && tx == "(";
            if words || after_close || number_call {
                return Some((
                    t.start,
                    format!("expected an operator or ')' between '{pt}' and '{tx}'"),
                ));
            }
        }
        if t.kind != TokKind::Punct {
            continue;
        }
        match tx {
            "(" | "[" | "{" => stack.push((tx, false, 0)),
            ")" | "]" | "}" => {
                // `a[0:]`, `a[:]`: a section's bounds may be left out.
                let open_section = tx == "]" && stack.last().is_some_and(|s| s.1);
                if let Some(p) =
                    prev.filter(|p| dangling(text(p)) && !(open_section && text(p) == ":"))
                {
                    return Some((
                        p.start,
                        format!("expected an expression after '{}'", text(p)),
                    ));
                }
                if stack.len() > 1 {
                    stack.pop();
                }
            }
            "?" => {
                if let Some(top) = stack.last_mut() {
                    top.2 += 1;
                }
            }
            ":" => {
                let Some(top) = stack.last_mut() else {
                    continue;
                };
                if top.2 > 0 {
                    top.2 -= 1;
                } else if top.0 == "[" && !top.1 {
                    top.1 = true;
                } else {
                    return Some((t.start, "unexpected ':' in a clause argument".into()));
                }
            }
            "," if stack.len() == 1 => {
                return Some((t.start, "unexpected ','".into()));
            }
            _ => {}
        }
    }
    match toks.last() {
        Some(t) if t.kind == TokKind::Punct && dangling(text(t)) => Some((
            t.start,
            format!("expected an expression after '{}'", text(t)),
        )),
        _ => None,
    }
}

/// [`malformed`] for the directive's dialect.
fn malformed_in(
    src: &str,
    item: &Item,
    star_ok: bool,
    dialect: Dialect,
) -> Option<(usize, String)> {
    match dialect {
        Dialect::C => malformed(src, item, star_ok),
        Dialect::Fortran => malformed_fortran(src, item, star_ok),
    }
}

/// A problem with the Fortran expression `src[item]`: two operands without an operator
/// between them, an operator with nothing after it, a `:` outside parentheses, `%` not
/// followed by a component name. A common block name (`/blk/`) is an item too.
pub fn malformed_fortran(src: &str, item: &Item, star_ok: bool) -> Option<(usize, String)> {
    use crate::fortran::lex::{TokKind as F, lex_text};
    let text = item.text.trim();
    if star_ok && text == "*" {
        return None;
    }
    if let Some(name) = text.strip_prefix('/').and_then(|t| t.strip_suffix('/'))
        && crate::lex::is_identifier(name.trim())
    {
        return None;
    }
    let toks = lex_text(src, item.span.clone());
    let operand = |k: F| matches!(k, F::Name | F::Int | F::Real | F::Str | F::Logical);
    if !toks.iter().any(|t| operand(t.kind)) {
        return Some((
            item.span.start,
            format!("expected an expression, not '{}'", item.text),
        ));
    }
    let text = |i: usize| &src[toks[i].start..toks[i].end];
    // An operator needs an operand after it; `:` may end a section bound (`a(1:)`).
    let dangling = |i: usize| {
        (toks[i].kind == F::DotOp || toks[i].kind == F::Punct)
            && !matches!(text(i), "(" | ")" | "[" | "]" | ":" | "*" | ",")
    };
    let mut depth = 0usize;
    for i in 0..toks.len() {
        let t = toks[i];
        if let Some(p) = i.checked_sub(1) {
            let adjacent = (operand(toks[p].kind) || text(p) == ")") && operand(t.kind);
            if adjacent {
                return Some((
                    t.start,
                    format!(
                        "expected an operator or ')' between '{}' and '{}'",
                        text(p),
                        text(i)
                    ),
                ));
            }
            if matches!(text(i), ")" | ",") && (dangling(p) || text(p) == "*") {
                return Some((
                    toks[p].start,
                    format!("expected an expression after '{}'", text(p)),
                ));
            }
            if text(p) == "%" && t.kind != F::Name {
                return Some((t.start, "expected a component name after '%'".into()));
            }
        }
        match text(i) {
            "(" | "[" => depth += 1,
            ")" | "]" => depth = depth.saturating_sub(1),
            ":" if depth == 0 => {
                return Some((t.start, "unexpected ':' in a clause argument".into()));
            }
            "," if depth == 0 => return Some((t.start, "unexpected ','".into())),
            _ => {}
        }
    }
    let last = toks.len() - 1;
    (dangling(last) || text(last) == "*").then(|| {
        (
            toks[last].start,
            format!("expected an expression after '{}'", text(last)),
        )
    })
}

/// An operator that needs an operand after it (`*` and `&` end pointer types in casts).
fn dangling(op: &str) -> bool {
    !matches!(
        op,
        "(" | "[" | "{" | ")" | "]" | "}" | "++" | "--" | "*" | "&" | "&&"
    ) && op
        .chars()
        .all(|c| !c.is_alphanumeric() && c != '_' && c != '"' && c != '\'')
}

/// The bounds of each `[lo:len]` of a sub-array item, as text.
pub fn section_bounds<'s>(src: &'s str, item: &Item) -> Vec<(usize, &'s str, Option<&'s str>)> {
    let toks = lex_range(src, item.span.clone(), false);
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut open = None;
    let mut colon = None;
    for t in &toks {
        match t.text(src) {
            "[" | "(" | "{" => {
                if depth == 0 && t.text(src) == "[" {
                    open = Some(t.end);
                    colon = None;
                }
                depth += 1;
            }
            ":" if depth == 1 && open.is_some() => colon = Some(t.start),
            "]" | ")" | "}" => {
                depth = depth.saturating_sub(1);
                if depth == 0
                    && let Some(o) = open.take()
                {
                    match colon {
                        Some(c) => out.push((o, &src[o..c], Some(&src[c + 1..t.start]))),
                        None => out.push((o, &src[o..t.start], None)),
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// A negative constant length in a sub-array. (A negative lower bound is valid on a pointer
/// into an array; `crate::validate` checks it on arrays.)
fn negative_length(src: &str, it: &Item) -> Result<(), ParseError> {
    for (at, _, len) in section_bounds(src, it) {
        if let Some(len) = len.filter(|l| negative_literal(l)) {
            return Err(err(
                at,
                id::INVALID_ARGUMENT,
                format!("negative length '{}' in '{}'", len.trim(), it.text),
            ));
        }
    }
    Ok(())
}

/// `-1`, `- 3`: a negative integer literal.
pub fn negative_literal(text: &str) -> bool {
    let t = text.trim();
    t.strip_prefix('-')
        .map(str::trim_start)
        .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()))
}

/// Checks of one directive; `name` is canonical, offsets are absolute in `src`. Every
/// problem is reported (at most one per clause), as compilers do.
pub(super) fn directive(
    src: &str,
    name: &str,
    name_start: usize,
    arg: Option<&Args>,
    clauses: &[Clause],
    t: &Tables,
    dialect: Dialect,
) -> Vec<ParseError> {
    let mut errs = Vec::new();
    if let Some(rule) = t.directive(name)
        && !rule.requires.is_empty()
        && !clauses.iter().any(|c| rule.requires.contains(&c.name))
    {
        errs.push(err(
            name_start,
            id::MISSING_CLAUSE,
            format!(
                "'acc {name}' needs at least one of '{}'",
                rule.requires.join("', '")
            ),
        ));
    }
    if let Some(a) = arg
        && let Err(e) = directive_arg(src, name, a, dialect)
    {
        errs.push(e);
    }
    let mut section: Vec<&Clause> = Vec::new();
    for c in clauses {
        if c.name == "device_type" {
            section.clear();
            if let Some(args) = &c.args
                && let Err(e) = clause_items(src, name, c, args, t, dialect)
            {
                errs.push(e);
            }
            continue;
        }
        if let Err(e) = clause(src, name, c, &section, t, dialect) {
            errs.push(e);
        }
        section.push(c);
    }
    errs
}

/// The parenthesized argument of `routine`, `wait` or `cache`.
/// The character that opens a subscript or section in `dialect`.
fn subscript(dialect: Dialect) -> char {
    match dialect {
        Dialect::C => '[',
        Dialect::Fortran => '(',
    }
}

fn directive_arg(src: &str, name: &str, a: &Args, dialect: Dialect) -> Result<(), ParseError> {
    if name == "routine" {
        let ok = a.items.len() == 1
            && a.items[0]
                .text
                .split("::")
                .all(|p| crate::lex::is_identifier(p.trim()))
            && a.modifier.is_none();
        if !ok {
            return Err(err(
                a.span.start,
                id::INVALID_ARGUMENT,
                "'routine' takes the name of one function".into(),
            ));
        }
    }
    if name == "wait" && a.list.contains("queues") {
        return Ok(());
    }
    for it in &a.items {
        if let Some((at, why)) = malformed_in(src, it, false, dialect) {
            return Err(err(at, id::INVALID_ARGUMENT, why));
        }
        if name != "cache" {
            continue;
        }
        if !it.text.contains(subscript(dialect)) {
            return Err(err(
                it.span.start,
                id::INVALID_ARGUMENT,
                format!(
                    "'cache' takes array elements or sub-arrays, not '{}'",
                    it.text
                ),
            ));
        }
        if dialect == Dialect::C {
            negative_length(src, it)?;
        }
    }
    Ok(())
}

/// One clause, after the clauses of its `device_type` section in `section`.
fn clause(
    src: &str,
    name: &str,
    c: &Clause,
    section: &[&Clause],
    t: &Tables,
    dialect: Dialect,
) -> Result<(), ParseError> {
    let data_self = c.name == "self" && name == "update";
    let Some(rule) = t.clause(&c.name) else {
        return Ok(());
    };
    if rule.once && !data_self && section.iter().any(|p| p.name == c.name) {
        return Err(err(
            c.span.start,
            id::DUPLICATE_CLAUSE,
            format!("clause '{}' appears more than once", c.spelled),
        ));
    }
    // A routine has one level of parallelism (per device_type section).
    if name == "routine"
        && ROUTINE_LEVELS.contains(&c.name.as_str())
        && let Some(p) = section
            .iter()
            .find(|p| p.name != c.name && ROUTINE_LEVELS.contains(&p.name.as_str()))
    {
        return Err(err(
            c.span.start,
            id::CONFLICTING_CLAUSES,
            format!(
                "'{}' conflicts with '{}': a routine has one level of parallelism",
                c.spelled, p.spelled
            ),
        ));
    }
    let Some(args) = &c.args else {
        return Ok(());
    };
    if name == "declare"
        && let Some(it) = args
            .items
            .iter()
            .find(|it| it.text.contains(subscript(dialect)))
    {
        return Err(err(
            it.span.start,
            id::INVALID_ARGUMENT,
            format!(
                "'declare' takes variables, not sub-arrays or elements ('{}')",
                it.text
            ),
        ));
    }
    if let Some(max) = rule.max_items.filter(|_| !data_self)
        && args.items.len() > max
    {
        return Err(err(
            args.items[max].span.start,
            id::INVALID_ARGUMENT,
            match max {
                1 => format!("'{}' takes one argument", c.spelled),
                n => format!("'{}' takes at most {n} arguments", c.spelled),
            },
        ));
    }
    clause_items(src, name, c, args, t, dialect)
}

/// An integer literal's value (`10`, `0x1F`, `017`, `0b11`, `1'000u`); None for another
/// expression, Some(None) for one too large for any integer type.
fn integer_literal(text: &str) -> Option<Option<u64>> {
    let t = text.trim().trim_end_matches(['u', 'U', 'l', 'L', 'z', 'Z']);
    let digits: String = t.chars().filter(|&c| c != '\'').collect();
    let (radix, body) = if let Some(h) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        (16, h)
    } else if let Some(b) = digits
        .strip_prefix("0b")
        .or_else(|| digits.strip_prefix("0B"))
    {
        (2, b)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits.as_str())
    };
    if body.is_empty() || !body.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    Some(u64::from_str_radix(body, radix).ok())
}

/// A floating constant (`1.5`, `1e23`, `.5f`, `0x1p3`), alone in the expression `src[item]`
/// (maybe signed or parenthesized).
fn lone_floating(src: &str, item: &Item) -> bool {
    let toks = lex_range(src, item.span.clone(), false);
    let mut numbers = toks.iter().filter(|t| t.kind != TokKind::Punct);
    let (Some(n), None) = (numbers.next(), numbers.next()) else {
        return false;
    };
    let text = n.text(src);
    let hex = text.starts_with("0x") || text.starts_with("0X");
    n.kind == TokKind::Number
        && (text.contains('.')
            || (!hex && text.contains(['e', 'E']))
            || (hex && text.contains(['p', 'P'])))
}

/// `collapse`'s count, when it is a literal: a positive integer that fits a type.
fn collapse_count(src: &str, c: &Clause, it: &Item) -> Option<String> {
    let text = it.text.trim();
    let bad = |why: String| {
        Some(format!(
            "'{}' takes a positive integer constant, {why}",
            c.spelled
        ))
    };
    if negative_literal(text) {
        return bad(format!("not '{text}'"));
    }
    match integer_literal(text) {
        Some(Some(0)) => bad(format!("not '{text}'")),
        Some(None) => bad(format!("and '{text}' is too large for any integer type")),
        _ if lone_floating(src, it) => bad(format!("not the floating constant '{text}'")),
        _ => None,
    }
}

fn floating(c: &Clause, it: &Item) -> String {
    format!(
        "'{}' takes an integer expression, not the floating constant '{}'",
        c.spelled,
        it.text.trim()
    )
}

fn clause_items(
    src: &str,
    name: &str,
    c: &Clause,
    args: &Args,
    t: &Tables,
    dialect: Dialect,
) -> Result<(), ParseError> {
    let bad = |at: usize, why: String| Err(err(at, id::INVALID_ARGUMENT, why));
    if c.name == "default" {
        let v = c.list_text().trim();
        let value = match dialect {
            Dialect::C => std::borrow::Cow::Borrowed(v),
            Dialect::Fortran => std::borrow::Cow::Owned(v.to_ascii_lowercase()),
        };
        if value != "none" && value != "present" {
            return bad(
                args.span.start,
                format!("'default' takes 'none' or 'present', not '{v}'"),
            );
        }
        return Ok(());
    }
    if c.name == "device_type" {
        // `*` or a list of names.
        if args.items.len() > 1
            && let Some(it) = args.items.iter().find(|it| it.text == "*")
        {
            return bad(
                it.span.start,
                format!(
                    "'{}(*)' stands alone: '*' cannot be listed with device types",
                    c.spelled
                ),
            );
        }
        return Ok(());
    }
    if c.name == "wait" && args.list.contains("queues") {
        return Ok(());
    }
    for it in &args.items {
        let (expr, star_ok) = match c.name.as_str() {
            // `num:e`, `dim:e`, `static:e` or `static:*`, or a bare `e`.
            "gang" => match it.text.split_once(':') {
                Some((k, v)) if !v.starts_with(':') => {
                    let k = k.trim();
                    let k = match dialect {
                        Dialect::C => std::borrow::Cow::Borrowed(k),
                        Dialect::Fortran => std::borrow::Cow::Owned(k.to_ascii_lowercase()),
                    };
                    if !matches!(&*k, "num" | "dim" | "static") {
                        return bad(
                            it.span.start,
                            format!("'gang' takes 'num:', 'dim:' or 'static:', not '{k}:'"),
                        );
                    }
                    let from = it.span.start + it.text.len() - v.len();
                    let v = Item {
                        text: v.to_string(),
                        span: from..it.span.end,
                    };
                    if let Some((at, why)) = malformed_in(src, &v, k == "static", dialect) {
                        return bad(at, why);
                    }
                    if lone_floating(src, &v) {
                        return bad(v.span.start, floating(c, &v));
                    }
                    continue;
                }
                _ => (it, false),
            },
            "tile" => (it, true),
            _ => (it, false),
        };
        if let Some((at, why)) = malformed_in(src, expr, star_ok, dialect) {
            return bad(at, why);
        }
        if c.name == "collapse"
            && let Some(why) = collapse_count(src, c, expr)
        {
            return bad(it.span.start, why);
        }
        if INTEGERS.contains(&c.name.as_str()) && lone_floating(src, expr) {
            return bad(expr.span.start, floating(c, expr));
        }
        let variables = VARIABLE_LISTS.contains(&c.name.as_str())
            || t.clause(&c.name).is_some_and(|r| r.map.is_some())
            || (c.name == "self" && name == "update");
        let first = lex_range(src, it.span.clone(), false).into_iter().next();
        if variables
            && let Some(f) = first.filter(|f| matches!(f.kind, TokKind::Literal | TokKind::Number))
        {
            return bad(
                f.start,
                format!(
                    "'{}' takes variables, array elements, sub-arrays or members, not '{}'",
                    c.spelled,
                    it.text.trim()
                ),
            );
        }
        if VARIABLES_ONLY.contains(&c.name.as_str()) && it.text.contains(subscript(dialect)) {
            return bad(
                it.span.start,
                format!(
                    "'{}' takes variables, not sub-arrays or elements ('{}')",
                    c.spelled, it.text
                ),
            );
        }
        let maps = t.clause(&c.name).is_some_and(|r| r.map.is_some());
        // Fortran bounds are lower and upper bounds, and arrays may start below zero.
        if (maps || SECTIONS.contains(&c.name.as_str())) && dialect == Dialect::C {
            negative_length(src, it)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(s: &str) -> bool {
        let item = Item {
            text: s.to_string(),
            span: 0..s.len(),
        };
        malformed(s, &item, false).is_some()
    }

    #[test]
    fn expressions() {
        for ok in [
            "n",
            "a[0:n]",
            "a[i][0:n*2]",
            "s.p[1:2]",
            "p->q[:n]",
            "f(a, b)",
            "(float) 1",
            "(unsigned int) x",
            "sizeof(double *)",
            "sizeof x",
            "c ? a : b",
            "a[c ? 1 : 2:n]",
            "a[0:]",
            "a[:][1:]",
            "-1",
            "std::max(a, b)",
            "\"s\" \"t\"",
            "x++",
            "(struct s *) p",
            "N * (M + 1)",
            "1.0e-3",
            "!flag",
            "&x",
        ] {
            assert!(!bad(ok), "{ok}");
        }
        for no in [
            "1 i", "1 2", "a b", "1 +", "*", "num:5", "length:5", "a(1:3)", "a[1] b", "x =",
            "2 (x)",
        ] {
            assert!(bad(no), "{no}");
        }
    }

    #[test]
    fn directives() {
        let rule = |s: &str| {
            super::super::parse_directive(s, 0..s.len(), &Tables::builtin())
                .err()
                .map(|e| e.rule)
        };
        for (bad, want) in [
            ("update", id::MISSING_CLAUSE),
            ("update if(c)", id::MISSING_CLAUSE),
            ("enter data async(1)", id::MISSING_CLAUSE),
            ("exit data finalize", id::MISSING_CLAUSE),
            ("host_data if(c)", id::MISSING_CLAUSE),
            ("declare", id::MISSING_CLAUSE),
            ("set if(c)", id::MISSING_CLAUSE),
            ("parallel num_gangs(1 i)", id::INVALID_ARGUMENT),
            ("parallel num_workers(1, i)", id::INVALID_ARGUMENT),
            ("parallel async(1, 2)", id::INVALID_ARGUMENT),
            ("parallel default(shared)", id::INVALID_ARGUMENT),
            ("parallel copy(a[0:-3])", id::INVALID_ARGUMENT),
            ("parallel firstprivate(b[1:2])", id::INVALID_ARGUMENT),
            ("host_data use_device(x[4])", id::INVALID_ARGUMENT),
            ("declare create(v[1:3])", id::INVALID_ARGUMENT),
            ("loop worker(length:5)", id::INVALID_ARGUMENT),
            ("loop gang(foo:5)", id::INVALID_ARGUMENT),
            ("wait(1, *)", id::INVALID_ARGUMENT),
            ("routine(f, g) seq", id::INVALID_ARGUMENT),
            ("routine(4) seq", id::INVALID_ARGUMENT),
            ("cache(s)", id::INVALID_ARGUMENT),
            (
                "parallel device_type(radeon, *) num_gangs(8)",
                id::INVALID_ARGUMENT,
            ),
            ("cache(a[2:-5])", id::INVALID_ARGUMENT),
            ("routine gang worker", id::CONFLICTING_CLAUSES),
            ("routine seq seq", id::DUPLICATE_CLAUSE),
            ("loop vector vector", id::DUPLICATE_CLAUSE),
        ] {
            assert_eq!(rule(bad), Some(want), "{bad}");
        }
        for ok in [
            "update self(a) self(b)",
            "update device(a[0:n]) if_present",
            "parallel num_gangs(a, b, c)",
            "loop gang(num:4, static:*) worker vector",
            "loop tile(*, 8)",
            "parallel copy(a[0:], b[:][1:])",
            "parallel copy(p[-1:2])",
            "routine(ns::f) seq",
            "routine gang device_type(nvidia) worker",
            "wait(devnum: 1: queues: 2, 3)",
            "parallel device_type(*) num_gangs(2)",
        ] {
            assert_eq!(rule(ok), None, "{ok}");
        }
    }

    #[test]
    fn negative_literals() {
        assert!(negative_literal(" -1") && negative_literal("- 3"));
        assert!(!negative_literal("-n") && !negative_literal("1") && !negative_literal("-"));
    }
}
