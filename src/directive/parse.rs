//! The directive parser: the grammar (name, argument, clauses allowed there) and the checks
//! after it, for C and Fortran directive text. `cursor` reads the text and the name,
//! `args` splits argument lists.

mod args;
mod cursor;

use super::{Args, Clause, Dialect, Directive, Item};
use crate::rules::{ArgPresence, DirectiveKind, Tables};
use crate::rules::{RuleId, id};
pub use args::counts_copies;
use args::{canonical_keywords, split_args};
use cursor::{Cursor, read_name};
use std::ops::Range;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub offset: usize,
    pub message: String,
    pub rule: RuleId,
}

const ATOMIC_KINDS: [&str; 4] = ["read", "write", "update", "capture"];

/// The name of the directive in `src[range]`, when its words name a known directive, even
/// if the rest does not parse (an unparsed construct still takes its statement).
pub fn directive_name(src: &str, range: Range<usize>, t: &Tables) -> Option<String> {
    directive_name_in(src, range, t, Dialect::C)
}

/// As [`directive_name`], for directive text in `dialect` (Fortran: also the `end`
/// directives, named for the construct they end).
pub fn directive_name_in(
    src: &str,
    range: Range<usize>,
    t: &Tables,
    dialect: Dialect,
) -> Option<String> {
    let mut cur = Cursor::new(src, range, dialect);
    let (name, _) = read_name(&mut cur).ok()?;
    let construct = name.strip_prefix("end ").unwrap_or(&name);
    t.directive(construct).map(|_| name.into())
}

/// Parse the directive text `src[range]` (what follows `acc`). Offsets stay absolute.
#[cfg(test)]
pub fn parse_directive(
    src: &str,
    range: Range<usize>,
    t: &Tables,
) -> Result<Directive, ParseError> {
    parse_directive_all(src, range, t).map_err(|mut e| e.remove(0))
}

/// The directive text `src[range]` parsed, with every problem the checks after the grammar
/// find (in source order; never empty).
pub fn parse_directive_all(
    src: &str,
    range: Range<usize>,
    t: &Tables,
) -> Result<Directive, Vec<ParseError>> {
    parse_directive_all_in(src, range, t, Dialect::C)
}

/// As [`parse_directive`], for directive text in `dialect`.
#[cfg(test)]
pub fn parse_directive_in(
    src: &str,
    range: Range<usize>,
    t: &Tables,
    dialect: Dialect,
) -> Result<Directive, ParseError> {
    parse_directive_all_in(src, range, t, dialect).map_err(|mut e| e.remove(0))
}

/// As [`parse_directive_all`], for directive text in `dialect`. Fortran: names are
/// case-insensitive (the IR holds them in lower case, `Clause::spelled` as written),
/// arguments are Fortran (`a(1:n)`, `t%b`, `.and.`, `/common/`), and the `end` directives
/// parse to `end <construct>` with no clauses.
pub fn parse_directive_all_in(
    src: &str,
    range: Range<usize>,
    t: &Tables,
    dialect: Dialect,
) -> Result<Directive, Vec<ParseError>> {
    let d = grammar(src, range, t, dialect).map_err(|e| vec![e])?;
    checks(src, &d, t, dialect)?;
    Ok(d)
}

/// The checks after the grammar of the directive `d` read from `src`: every problem found
/// (in source order; never empty).
pub(super) fn checks(
    src: &str,
    d: &Directive,
    t: &Tables,
    dialect: Dialect,
) -> Result<(), Vec<ParseError>> {
    let (name, clauses) = (&d.name, &d.clauses);
    let mut errs = super::check::directive(
        src,
        name,
        d.name_span().start,
        d.arg.as_deref(),
        clauses,
        t,
        dialect,
    );
    let conflicts = check_conflicts(clauses, dialect);
    if !conflicts.is_empty() {
        // One problem per offset: the first found.
        let mut taken: crate::hash::HashSet<usize> = errs.iter().map(|e| e.offset).collect();
        errs.extend(conflicts.into_iter().filter(|e| taken.insert(e.offset)));
    }
    if errs.is_empty() {
        return super::device_type::check_sections(name, clauses).map_err(|e| vec![e]);
    }
    errs.sort_by_key(|e| e.offset);
    Err(errs)
}

/// The grammar alone, without the checks of [`parse_directive_all_in`]: the name, argument
/// and clauses of a directive left unchanged for a check (`routine(4) seq`).
pub fn parse_grammar_in(
    src: &str,
    range: Range<usize>,
    t: &Tables,
    dialect: Dialect,
) -> Result<Directive, ParseError> {
    grammar(src, range, t, dialect)
}

thread_local! {
    /// The clauses of the directive being read, moved to a vector of their number once all
    /// are read: the directive keeps it for the whole run (one per directive), with no
    /// spare room and without growing it.
    static READ: std::cell::RefCell<Vec<Clause>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The directive's grammar: its name, argument and clauses, each clause allowed there.
fn grammar(
    src: &str,
    range: Range<usize>,
    t: &Tables,
    dialect: Dialect,
) -> Result<Directive, ParseError> {
    let mut cur = Cursor::new(src, range, dialect);
    let (name, name_span) = read_name(&mut cur)?;
    if let Some(construct) = name.strip_prefix("end ") {
        return end_directive(&mut cur, &name, construct, name_span, t);
    }
    let Some(rule) = t.directive(&name) else {
        return Err(cur.err(
            name_span.start,
            id::UNKNOWN_DIRECTIVE,
            format!("unknown OpenACC directive '{name}'"),
        ));
    };
    let mut arg = None;
    if rule.arg != ArgPresence::None {
        if cur.peek() == Some(b'(') {
            let inner = cur.parens()?;
            let mods = if name == "wait" {
                vec!["devnum".to_string(), "queues".to_string()]
            } else {
                vec![]
            };
            arg = Some(split_args(src, inner, &mods, dialect)?);
        } else if rule.arg == ArgPresence::Required {
            return Err(cur.err(
                cur.pos,
                id::PARSE_ERROR,
                format!("'{name}' needs a parenthesized argument"),
            ));
        }
    }
    let mut read = READ.take();
    read.clear();
    // A comma separates two clauses; one before the first clause is accepted too (OpenACC
    // compilers differ; GCC rejects it). Two in a row or one at the end leave a clause out.
    let mut comma: Option<usize> = None;
    loop {
        match cur.peek() {
            None => {
                if let Some(at) = comma {
                    return Err(cur.err(at, id::PARSE_ERROR, "expected a clause after ','".into()));
                }
                break;
            }
            Some(b',') => {
                if comma.is_some() {
                    return Err(cur.err(
                        cur.pos,
                        id::PARSE_ERROR,
                        "expected a clause before ','".into(),
                    ));
                }
                comma = Some(cur.pos);
                cur.pos += 1;
                continue;
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {}
            Some(_) => {
                let ch = src[cur.pos..].chars().next().unwrap_or(' ');
                // A control character (a NUL byte) shown as an escape: `'\0'`.
                let shown: String = if ch.is_control() {
                    ch.escape_debug().collect()
                } else {
                    ch.to_string()
                };
                return Err(cur.err(
                    cur.pos,
                    id::PARSE_ERROR,
                    format!("unexpected '{shown}' in directive"),
                ));
            }
        }
        comma = None;
        let w = cur.word().unwrap_or(cur.pos..cur.pos);
        let spelled = &src[w.clone()];
        let crule = match dialect {
            Dialect::C => t.clause(spelled),
            Dialect::Fortran => t.clause(&spelled.to_ascii_lowercase()),
        };
        let Some(crule) = crule else {
            return Err(cur.err(
                w.start,
                id::UNKNOWN_CLAUSE,
                format!("unknown clause '{spelled}' on 'acc {name}'"),
            ));
        };
        if !t.allowed(crule, &name) {
            return Err(cur.err(
                w.start,
                id::CLAUSE_NOT_ALLOWED,
                format!("clause '{spelled}' is not allowed on 'acc {name}'"),
            ));
        }
        let mut args = None;
        let mut span = w.clone();
        if cur.peek() == Some(b'(') {
            if crule.args == ArgPresence::None {
                return Err(cur.err(
                    cur.pos,
                    id::PARSE_ERROR,
                    format!("clause '{spelled}' takes no argument"),
                ));
            }
            let inner = cur.parens()?;
            span.end = inner.end + 1;
            let mut a = split_args(src, inner, &crule.modifiers, dialect)?;
            canonical_keywords(&crule.name, &mut a, dialect);
            args = Some(a);
        } else if crule.args == ArgPresence::Required {
            return Err(cur.err(
                w.end,
                id::PARSE_ERROR,
                format!("clause '{spelled}' needs an argument"),
            ));
        }
        let clause = Clause::new(crule.name.as_str(), spelled, span, args);
        read.push(clause);
    }
    // Collected from an exact-size iterator: allocated once, at its length.
    let clauses: Box<[Clause]> = read.drain(..).collect();
    READ.set(read);
    if rule.kind == DirectiveKind::Atomic
        && clauses
            .iter()
            .filter(|c| ATOMIC_KINDS.contains(&c.name.as_str()))
            .count()
            > 1
    {
        return Err(cur.err(
            name_span.start,
            id::PARSE_ERROR,
            "more than one atomic kind".into(),
        ));
    }
    let end = clauses
        .last()
        .map(|c| c.span().end)
        .or(arg.as_ref().map(|a| a.span().end + 1))
        .unwrap_or(name_span.end);
    Ok(Directive::new(
        super::DirectiveName::new(&name),
        name_span,
        arg.map(Box::new),
        clauses,
        std::mem::take(&mut cur.comments),
        end,
    ))
}

/// A Fortran `end` directive: it ends a construct of the tables and takes no clauses.
fn end_directive(
    cur: &mut Cursor,
    name: &str,
    construct: &str,
    name_span: Range<usize>,
    t: &Tables,
) -> Result<Directive, ParseError> {
    if t.directive(construct).is_none() {
        return Err(cur.err(
            name_span.start,
            id::UNKNOWN_DIRECTIVE,
            format!("unknown OpenACC directive '{name}'"),
        ));
    }
    if cur.peek().is_some() {
        return Err(cur.err(
            cur.pos,
            id::PARSE_ERROR,
            format!("'{name}' takes no clauses"),
        ));
    }
    let end = name_span.end;
    Ok(Directive::new(
        name.into(),
        name_span,
        None,
        Box::default(),
        Vec::new(),
        end,
    ))
}

/// `seq` with a parallelism clause, and a variable in more than one of
/// private/firstprivate/reduction (the seeds: contradictory initialization).
fn check_conflicts(clauses: &[Clause], dialect: Dialect) -> Vec<ParseError> {
    let mut errs: Vec<ParseError> = Vec::new();
    // The clauses with a problem (a directive may have tens of thousands of them).
    let mut reported: crate::hash::HashSet<usize> = Default::default();
    let mut err = |c: &Clause, rule: RuleId, message: String| {
        // One problem per clause.
        if reported.insert(c.span().start) {
            errs.push(ParseError {
                offset: c.span().start,
                message,
                rule,
            });
        }
    };
    // The first clause of each loop level in the `device_type` section, with its place: the
    // first clause a clause conflicts with is the earliest of them it conflicts with.
    let mut section: [Option<(usize, &Clause)>; LOOP_LEVELS.len()] = Default::default();
    for (k, c) in clauses.iter().enumerate() {
        if c.name == "device_type" {
            section = Default::default();
            continue;
        }
        // Only a loop level conflicts with one.
        let Some(l) = LOOP_LEVELS.iter().position(|l| *l == c.name) else {
            continue;
        };
        let first = LOOP_LEVELS
            .iter()
            .zip(&section)
            .filter(|(level, _)| levels_conflict(&c.name, level))
            .filter_map(|(_, first)| *first)
            .min_by_key(|(at, _)| *at);
        if let Some((_, p)) = first {
            err(
                c,
                id::CONFLICTING_CLAUSES,
                format!("'{}' conflicts with '{}'", c.spelled(), p.spelled()),
            );
        }
        section[l].get_or_insert((k, c));
    }
    // OpenACC leaves this open, but GCC rejects it and OpenMP compilers reject a variable in
    // two map clauses: the user must say which data clause is meant.
    let data = super::DATA_CLAUSES;
    // Maps, not lists: a clause may have hundreds of thousands of items. A directive with
    // fewer than two items in these clauses (most of them) has nothing to compare.
    let mut mapped: crate::hash::HashMap<String, &Clause> = Default::default();
    let data_clauses = || clauses.iter().filter(|c| data.contains(&c.name.as_str()));
    let compared = several_items(data_clauses());
    for c in data_clauses().filter(|_| compared) {
        for item in c.items() {
            let var = section_base(&item.text, dialect);
            if let Some(other) = mapped.get(&var) {
                let (what, rule) = match other.name == c.name {
                    true => ("twice in", id::DUPLICATE_CLAUSE),
                    false => ("in both", id::CONFLICTING_CLAUSES),
                };
                let clauses = match other.name == c.name {
                    true => format!("'{}'", c.spelled()),
                    false => format!("'{}' and '{}'", other.spelled(), c.spelled()),
                };
                err(
                    c,
                    rule,
                    format!("'{var}' appears {what} {clauses}; give each variable one data clause"),
                );
                continue;
            }
            mapped.insert(var, c);
        }
    }
    let sharing = ["private", "firstprivate", "reduction"];
    // The first clause kind each variable is in: any other kind conflicts with it.
    let mut seen: crate::hash::HashMap<std::borrow::Cow<str>, &str> = Default::default();
    let sharing_clauses = || {
        clauses
            .iter()
            .filter(|c| sharing.contains(&c.name.as_str()))
    };
    let compared = several_items(sharing_clauses());
    for c in sharing_clauses().filter(|_| compared) {
        for item in c.items() {
            // Fortran names are case-insensitive.
            let key = match dialect {
                Dialect::C => std::borrow::Cow::Borrowed(item.text.as_str()),
                Dialect::Fortran => {
                    std::borrow::Cow::Owned(item.text.as_str().to_ascii_lowercase())
                }
            };
            if let Some(other) = seen.get(&key).filter(|k| **k != c.name) {
                err(
                    c,
                    id::CONFLICTING_CLAUSES,
                    format!("'{}' is in both '{other}' and '{}'", item.text, c.spelled()),
                );
                continue;
            }
            seen.entry(key).or_insert(&c.name);
        }
    }
    errs
}

/// The clauses [`levels_conflict`] compares: no other clause conflicts with one.
const LOOP_LEVELS: [&str; 6] = ["seq", "gang", "worker", "vector", "independent", "auto"];

/// Whether the loop clauses `a` and `b` (canonical names) contradict each other: `seq` with
/// any level, and `auto` with an explicit one (`auto` asks the compiler to choose what
/// `gang`, `worker`, `vector` state; GCC rejects the pair; the translation could honour
/// only one of them).
fn levels_conflict(a: &str, b: &str) -> bool {
    let levels = ["gang", "worker", "vector", "independent", "auto"];
    let explicit = ["gang", "worker", "vector", "independent"];
    (a == "seq" && levels.contains(&b))
        || (b == "seq" && levels.contains(&a))
        || (a == "auto" && explicit.contains(&b))
        || (b == "auto" && explicit.contains(&a))
}

/// Whether `clauses` have two items or more in all.
fn several_items<'c>(clauses: impl Iterator<Item = &'c Clause>) -> bool {
    clauses.flat_map(Clause::items).nth(1).is_some()
}

/// The variable an item names: `a[0:n]` → `a`, `s.p[1:2]` → `s.p`, `m[k].b[0:n]` →
/// `m[k].b` (trailing subscripts removed), spaces removed. Fortran: `a(1:n)` → `a`,
/// `t%b(:)` → `t%b`, in lower case.
fn section_base(item: &str, dialect: Dialect) -> String {
    let mut t: String = item.chars().filter(|c| !c.is_whitespace()).collect();
    let (open_c, close_c) = match dialect {
        Dialect::C => ('[', ']'),
        Dialect::Fortran => {
            t.make_ascii_lowercase();
            ('(', ')')
        }
    };
    while t.ends_with(close_c) {
        let mut depth = 0i32;
        let open = t.char_indices().rev().find_map(|(k, c)| {
            if c == close_c {
                depth += 1;
            } else if c == open_c {
                depth -= 1;
            }
            (depth == 0).then_some(k)
        });
        match open {
            Some(k) if k > 0 => t.truncate(k),
            _ => break,
        }
    }
    t
}

#[cfg(test)]
mod conflict_tests;
#[cfg(test)]
mod fortran_tests;
#[cfg(test)]
mod tests;
