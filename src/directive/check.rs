//! Checks of a parsed directive beyond its clause grammar, so that invalid OpenACC is
//! reported instead of rewritten: required clauses, clauses allowed once, argument counts,
//! argument expressions that cannot be C (`num_gangs(1 i)`), negative sub-array bounds,
//! sub-arrays where only variables may appear, and the names `routine` and `default` take.

mod expressions;

use super::{Args, Clause, Dialect, Item, ParseError};
use crate::lex::{TokKind, Token, lex_range};
use crate::rules::Tables;
use crate::rules::{RuleId, id};
use expressions::{each_section_bound, malformed_in, malformed_in_lexed};
pub use expressions::{
    literal_bound_possible, negative_literal, positive_literal_bound, section_bounds,
};
use std::ops::ControlFlow;

fn err(offset: usize, rule: RuleId, message: String) -> ParseError {
    ParseError {
        offset,
        message,
        rule,
    }
}

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

/// A negative constant length in a sub-array. (A negative lower bound is valid on a pointer
/// into an array; `crate::validate` checks it on arrays.)
fn negative_length(src: &str, it: &Item) -> Result<(), ParseError> {
    negative_length_lexed(src, it, &lex_range(src, it.span(), false))
}

/// [`negative_length`] of an item whose tokens are `toks`.
fn negative_length_lexed(src: &str, it: &Item, toks: &[Token]) -> Result<(), ParseError> {
    let found = each_section_bound(src, toks, |(at, _, len)| match len {
        Some(len) if negative_literal(len) => ControlFlow::Break(err(
            at,
            id::INVALID_ARGUMENT,
            format!("negative length '{}' in '{}'", len.trim(), it.text),
        )),
        _ => ControlFlow::Continue(()),
    });
    match found {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

/// Whether Fortran `enter data`/`exit data` `name` with `clauses` does nothing: no data
/// clause (gfortran takes that), no `wait` (whose waiting is not nothing), and an `if`
/// condition without parentheses (one with them may call a function, whose effects the
/// directive's removal would drop). The translation removes such a directive.
pub fn no_op_data(name: &str, clauses: &[Clause], dialect: Dialect) -> bool {
    dialect == Dialect::Fortran
        && matches!(name, "enter data" | "exit data")
        && clauses.iter().all(|c| match c.name.as_str() {
            "async" | "finalize" => true,
            "if" => !c.list_text().contains('('),
            _ => false,
        })
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
        && !clauses
            .iter()
            .any(|c| rule.requires.iter().any(|r| *r == c.name))
        && !no_op_data(name, clauses, dialect)
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
    let mut section = Section::default();
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

/// What the checks of a clause need of the clauses before it in its `device_type` section:
/// the clause kinds there, and the first clause of each routine level. A directive may have
/// tens of thousands of clauses: this is read in a time bounded by the number of clause
/// kinds, not by the clauses before.
#[derive(Default)]
struct Section<'c> {
    /// Canonical names, each once (a clause table's worth at most).
    names: Vec<&'c str>,
    /// The first clause of each of [`ROUTINE_LEVELS`] and its place in the section.
    levels: [Option<(usize, &'c Clause)>; 4],
    len: usize,
}

impl<'c> Section<'c> {
    fn clear(&mut self) {
        *self = Section::default();
    }

    fn push(&mut self, c: &'c Clause) {
        if !self.has(&c.name) {
            self.names.push(&c.name);
        }
        if let Some(k) = ROUTINE_LEVELS.iter().position(|l| *l == c.name)
            && self.levels[k].is_none()
        {
            self.levels[k] = Some((self.len, c));
        }
        self.len += 1;
    }

    fn has(&self, name: &str) -> bool {
        self.names.contains(&name)
    }

    /// The first clause of a routine level other than `name`.
    fn other_level(&self, name: &str) -> Option<&'c Clause> {
        ROUTINE_LEVELS
            .iter()
            .zip(&self.levels)
            .filter(|(l, _)| **l != name)
            .filter_map(|(_, first)| *first)
            .min_by_key(|(at, _)| *at)
            .map(|(_, c)| c)
    }
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
                a.span().start,
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
                it.span().start,
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
    section: &Section,
    t: &Tables,
    dialect: Dialect,
) -> Result<(), ParseError> {
    let data_self = c.name == "self" && name == "update";
    let Some(rule) = t.clause(&c.name) else {
        return Ok(());
    };
    against_section(name, c, rule.once && !data_self, section)?;
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
            it.span().start,
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
            args.items[max].span().start,
            id::INVALID_ARGUMENT,
            match max {
                1 => format!("'{}' takes one argument", c.spelled()),
                n => format!("'{}' takes at most {n} arguments", c.spelled()),
            },
        ));
    }
    clause_items(src, name, c, args, t, dialect)
}

/// A clause allowed `once` already in its section, or a second level of a routine.
fn against_section(
    name: &str,
    c: &Clause,
    once: bool,
    section: &Section,
) -> Result<(), ParseError> {
    if once && section.has(&c.name) {
        return Err(err(
            c.span().start,
            id::DUPLICATE_CLAUSE,
            format!("clause '{}' appears more than once", c.spelled()),
        ));
    }
    // A routine has one level of parallelism (per device_type section).
    if name == "routine"
        && ROUTINE_LEVELS.contains(&c.name.as_str())
        && let Some(p) = section.other_level(&c.name)
    {
        return Err(err(
            c.span().start,
            id::CONFLICTING_CLAUSES,
            format!(
                "'{}' conflicts with '{}': a routine has one level of parallelism",
                c.spelled(),
                p.spelled()
            ),
        ));
    }
    Ok(())
}

/// An integer literal's value (`10`, `0x1F`, `017`, `0b11`, `1'000u`); None for another
/// expression, Some(None) for one too large for any integer type.
pub fn integer_literal(text: &str) -> Option<Option<u64>> {
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
    lone_floating_lexed(src, &lex_range(src, item.span(), false))
}

/// [`lone_floating`] of an item whose tokens are `toks`.
fn lone_floating_lexed(src: &str, toks: &[Token]) -> bool {
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

/// `collapse`'s count, when it is a literal or a constant expression of literals: a
/// positive integer that fits a type (`toks`: the item's tokens). (Counts with names are
/// checked against the declarations of the file.)
fn collapse_count(
    src: &str,
    c: &Clause,
    it: &Item,
    toks: &[Token],
    dialect: Dialect,
) -> Option<String> {
    let text = it.text.trim();
    let bad = |why: String| {
        Some(format!(
            "'{}' takes a positive integer constant, {why}",
            c.spelled()
        ))
    };
    if negative_literal(text) {
        return bad(format!("not '{text}'"));
    }
    match integer_literal(text) {
        Some(Some(0)) => bad(format!("not '{text}'")),
        None if super::count::constant(text, dialect).is_some_and(|v| v <= 0) => {
            bad(format!("not '{text}'"))
        }
        Some(None) => bad(format!("and '{text}' is too large for any integer type")),
        _ if lone_floating_lexed(src, toks) => bad(format!("not the floating constant '{text}'")),
        _ => None,
    }
}

fn floating(c: &Clause, it: &Item) -> String {
    format!(
        "'{}' takes an integer expression, not the floating constant '{}'",
        c.spelled(),
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
        // (The keyword is canonical: `parse::args::canonical_keywords`.)
        if !matches!(&args.items[..], [v] if v.text == "none" || v.text == "present") {
            return bad(
                args.span().start,
                format!(
                    "'default' takes 'none' or 'present', not '{}'",
                    c.list_text().trim()
                ),
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
                it.span().start,
                format!(
                    "'{}(*)' stands alone: '*' cannot be listed with device types",
                    c.spelled()
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
                    if !matches!(k, "num" | "dim" | "static") {
                        return bad(
                            it.span().start,
                            format!("'gang' takes 'num:', 'dim:' or 'static:', not '{k}:'"),
                        );
                    }
                    let from = it.span().start + it.text.len() - v.len();
                    let v = Item::new(v, from..it.span().end);
                    if let Some((at, why)) = malformed_in(src, &v, k == "static", dialect) {
                        return bad(at, why);
                    }
                    if lone_floating(src, &v) {
                        return bad(v.span().start, floating(c, &v));
                    }
                    continue;
                }
                _ => (it, false),
            },
            "tile" => (it, true),
            _ => (it, false),
        };
        // The item's tokens, lexed once for every check below.
        let toks = lex_range(src, it.span(), false);
        if let Some((at, why)) = malformed_in_lexed(src, expr, &toks, star_ok, dialect) {
            return bad(at, why);
        }
        if c.name == "collapse"
            && let Some(why) = collapse_count(src, c, expr, &toks, dialect)
        {
            return bad(it.span().start, why);
        }
        if INTEGERS.contains(&c.name.as_str()) && lone_floating_lexed(src, &toks) {
            return bad(expr.span().start, floating(c, expr));
        }
        let maps = t.clause(&c.name).is_some_and(|r| r.map.is_some());
        let variables = VARIABLE_LISTS.contains(&c.name.as_str())
            || maps
            || (c.name == "self" && name == "update");
        let first = toks.first().copied();
        if variables
            && let Some(f) = first.filter(|f| matches!(f.kind, TokKind::Literal | TokKind::Number))
        {
            return bad(
                f.start(),
                format!(
                    "'{}' takes variables, array elements, sub-arrays or members, not '{}'",
                    c.spelled(),
                    it.text.trim()
                ),
            );
        }
        if VARIABLES_ONLY.contains(&c.name.as_str()) && it.text.contains(subscript(dialect)) {
            return bad(
                it.span().start,
                format!(
                    "'{}' takes variables, not sub-arrays or elements ('{}')",
                    c.spelled(),
                    it.text
                ),
            );
        }
        // Fortran bounds are lower and upper bounds, and arrays may start below zero.
        if (maps || SECTIONS.contains(&c.name.as_str())) && dialect == Dialect::C {
            negative_length_lexed(src, it, &toks)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod section_tests;
#[cfg(test)]
mod tests {
    use super::*;

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
}
