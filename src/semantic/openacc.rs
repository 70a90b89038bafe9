//! Clang's OpenACC front end (libclang 21 and newer, parsing with `-fopenacc`) as a second
//! reader of every directive: its errors about a directive reject that directive, and the
//! constructs it builds are compared with the directives our scanner found.
//!
//! Clang's OpenACC support differs from GCC's in places, so only errors that are about a
//! directive count: those located inside the directive's text, and OpenACC errors located in
//! the construct it applies to. A few rules Clang enforces and GCC does not, where the
//! translation is unambiguous, are warnings (`clang-openacc-strict`).

use super::SiteInput;
use super::clang::{ACC_FIRST, Construct, Parsed};
use crate::diag::Diagnostic;
use crate::rules::id;
use crate::scan;
use std::ops::Range;

/// Clang errors GCC does not give, on directives whose meaning is clear: (words the message
/// contains, what the directive means anyway).
const STRICTER_THAN_GCC: [(&[&str], &str); 6] = [
    (
        &["OpenACC 'routine' construct must have at least one"],
        "without a level clause the routine is 'seq'",
    ),
    (
        &["OpenACC 'data' construct must have at least one"],
        "without data clauses the construct maps nothing and is removed",
    ),
    (
        &["'present_or_c", "'declare'"],
        "'present_or_copyin' and 'present_or_create' are 'copyin' and 'create'",
    ),
    (
        &["'pc", "'declare'"],
        "'pcopyin' and 'pcreate' are 'copyin' and 'create'",
    ),
    (
        &["no valid clauses specified in OpenACC 'declare' directive"],
        "its clauses are valid as the previous warning says",
    ),
    // Any other operator is our own parse error first (the site then has no input here).
    (
        &["invalid reduction operator"],
        "takes '-' as a sum of the partial results, written '+'",
    ),
];

/// Clang errors left to our own checks: a negative lower bound is an error on an array
/// (`crate::validate`) and valid on a pointer into one; a reduction operator that differs
/// from the compute construct's is `reduction-conflict` (between loops GCC only warns); a
/// `collapse` deeper than the nest is `collapse-depth`; a `case` label inside a construct
/// whose `switch` is outside is `structured-block-branch`, at the `switch` as GCC says.
const DECIDED_HERE: [&str; 4] = [
    "OpenACC sub-array lower bound evaluated to negative value",
    "OpenACC 'reduction' variable must have the same operator in all nested constructs",
    "inner loops must be tightly nested inside a 'collapse' clause",
    "invalid branch into OpenACC Compute/Combined Construct",
];

/// Errors that say the parse lacks declarations (a `-D` or a header that the build has and
/// the parse did not): not a verdict on the directive. (A header not found,
/// `include_guess::missing_header`, makes every error of the file one.)
const UNRESOLVED: [&str; 2] = ["unknown type name", "undeclared identifier"];

/// How clang's syntax errors begin (a bracket or a statement left open or closed twice),
/// after which its recovery decides where the following code is.
const SYNTAX: [&str; 5] = [
    "expected ",
    "extraneous ",
    "unexpected ",
    "missing terminating",
    "function definition is not allowed here",
];

/// Whether a clang message is about OpenACC: it says so, or names a construct or clause
/// the way its OpenACC diagnostics do (`… on a 'parallel loop' construct`).
fn about_openacc(msg: &str) -> bool {
    let named = |what: &str| {
        msg.match_indices(what).any(|(k, w)| {
            !msg[k + w.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
        })
    };
    msg.contains("OpenACC") || named("' construct") || named("' clause")
}

/// Clang errors about clause combinations, which our parser checks per `device_type`
/// section (a device-specific `seq` replaces `gang`); clang 22 does not.
const COMBINATIONS: [&str; 2] = [
    "may not appear on the same construct as",
    "cannot combine with previous",
];

/// The directive a construct cursor kind stands for (320 + index).
const KINDS: [&str; 14] = [
    "compute",
    "loop",
    "combined",
    "data",
    "enter data",
    "exit data",
    "host_data",
    "wait",
    "init",
    "shutdown",
    "set",
    "update",
    "atomic",
    "cache",
];

fn kind_name(kind: i32) -> &'static str {
    usize::try_from(kind - ACC_FIRST)
        .ok()
        .and_then(|k| KINDS.get(k))
        .copied()
        .unwrap_or("unknown")
}

/// The construct kind clang builds for the directive `name` (None: a declaration).
fn expected_kind(name: &str) -> Option<&'static str> {
    match name {
        "parallel" | "serial" | "kernels" => Some("compute"),
        "parallel loop" | "serial loop" | "kernels loop" => Some("combined"),
        "routine" | "declare" => None,
        other => KINDS.iter().find(|k| **k == other).copied(),
    }
}

/// What the OpenACC front end says about a file.
#[derive(Debug, Default)]
pub struct Verdict {
    pub diags: Vec<Diagnostic>,
    /// Starts of the sites to leave unchanged.
    pub rejected: Vec<usize>,
}

/// A site as the check sees it.
pub struct Site<'a> {
    pub span: Range<usize>,
    /// None: the site is already rejected (its own errors were reported).
    pub input: Option<&'a SiteInput<'a>>,
}

/// Judge `sites` by `p`'s errors and constructs. The errors attributed to a directive are
/// removed from `p.errors`, so that they do not also discredit the facts of the regions
/// around it.
/// `line` names the line of an offset in messages (`Unit::line_at`).
pub fn check(
    src: &str,
    sites: &[Site],
    p: &mut Parsed,
    in_macros: bool,
    line: &dyn Fn(usize) -> usize,
) -> Verdict {
    let mut v = Verdict::default();
    let mut kept = Vec::new();
    // Without all its headers the parse sees other types and names than the compiler does:
    // clang's errors then only say that its checks were not used.
    let incomplete = p
        .errors
        .iter()
        .any(|(_, m)| super::include_guess::missing_header(m).is_some());
    // After a syntax error in the code (an unbalanced bracket), clang's recovery decides
    // where it parses the directives that follow (inside a function body or not), and the
    // recovery changes with the text around it: its errors on those directives are not a
    // verdict, which a second run could give otherwise.
    let broken = p
        .errors
        .iter()
        .filter(|(at, m)| {
            SYNTAX.iter().any(|w| m.starts_with(w))
                && !about_openacc(m)
                && !sites
                    .iter()
                    .any(|s| (s.span.contains(at) || s.span.end == *at) && *at != s.span.start)
        })
        .min_by_key(|(at, _)| *at)
        .map(|(at, m)| (*at, m.clone()));
    let mut doubtful: Vec<usize> = Vec::new();
    for (at, msg) in std::mem::take(&mut p.errors) {
        // A parse error at the very start of a directive (`expected expression` where an
        // unbalanced parenthesis before it left clang inside an expression) is about the
        // code around it, and clang's recovery differs once that code changes: not a verdict
        // on the directive, which a second run could then decide otherwise.
        let own = sites.iter().find(|s| {
            (s.span.contains(&at) || s.span.end == at)
                && (at != s.span.start || about_openacc(&msg))
        });
        let site = match own {
            Some(s) => Some(s),
            // An OpenACC error in a construct's statement (a branch into it, a loop variable
            // of the wrong type) belongs to the innermost construct.
            None if about_openacc(&msg) => innermost(sites, &p.constructs, at),
            None => None,
        };
        let Some(site) = site else {
            kept.push((at, msg));
            continue;
        };
        let Some(input) = site.input else { continue };
        if v.rejected.contains(&input.start) || DECIDED_HERE.iter().any(|m| msg.starts_with(m)) {
            continue;
        }
        let sections = src
            .get(site.span.clone())
            .is_some_and(|t| t.contains("device_type") || t.contains("dtype"));
        if sections && COMBINATIONS.iter().any(|m| msg.contains(m)) {
            continue;
        }
        // OpenACC allows a comma before the first clause (GCC too); clang 22 does not.
        if msg == "expected identifier"
            && src
                .get(site.span.clone())
                .is_some_and(|t| comma_first(t, input.name))
        {
            continue;
        }
        let after_broken = broken.as_ref().filter(|(b, _)| *b < input.start);
        if incomplete || after_broken.is_some() || UNRESOLVED.iter().any(|m| msg.contains(m)) {
            if !doubtful.contains(&input.start) {
                doubtful.push(input.start);
                let why = match after_broken {
                    _ if incomplete => "this file's includes are not all found (is a header path or a -D missing? see -p)".to_string(),
                    Some((b, m)) => format!("the code before it does not parse (line {}: {m})", line(*b)),
                    None => "a name in it is not declared in the parse (is a header path or a -D missing? see -p)".to_string(),
                };
                v.diags.push(Diagnostic::new(
                    input.start,
                    id::CLANG_PARSE_ERROR,
                    format!("clang: {msg}; {why}, so clang's OpenACC checks of this directive are not used"),
                ));
            }
            continue;
        }
        // Follow-on errors of an unresolved name (its clause dropped, so "must have at least
        // one clause") are not clang's verdict either.
        if doubtful.contains(&input.start) {
            continue;
        }
        let stricter = STRICTER_THAN_GCC
            .iter()
            .find(|(words, _)| words.iter().all(|w| msg.contains(w)));
        if let Some((_, meaning)) = stricter {
            v.diags.push(Diagnostic::new(
                input.start,
                id::CLANG_OPENACC_STRICT,
                format!("clang: {msg}; GCC accepts it and {meaning}"),
            ));
            continue;
        }
        // Inside the directive: at the directive; in its statement: where clang points.
        let (at, which) = if own.is_some() {
            (input.start, "the directive".to_string())
        } else {
            (
                at,
                format!("'acc {}' (line {})", input.name, line(input.start)),
            )
        };
        v.diags.push(Diagnostic::new(
            at,
            id::CLANG_OPENACC,
            format!("clang: {msg}; {which} is left unchanged"),
        ));
        v.rejected.push(input.start);
    }
    p.errors = kept;
    cross_check(
        (src, &p.includes),
        sites,
        &p.constructs,
        in_macros,
        line,
        &mut v,
    );
    v
}

/// Whether the directive `text` (`#pragma acc NAME, clause…` or `_Pragma("acc NAME, …")`)
/// has a comma right after its name.
fn comma_first(text: &str, name: &str) -> bool {
    let Some(at) = text.find("acc") else {
        return false;
    };
    let mut rest = &text[at + 3..];
    for word in name.split(' ') {
        rest = rest.trim_start();
        match rest.strip_prefix(word) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    rest.trim_start().starts_with(',')
}

/// The innermost site whose construct (directive and statement) contains `at`.
fn innermost<'s>(
    sites: &'s [Site<'s>],
    constructs: &[Construct],
    at: usize,
) -> Option<&'s Site<'s>> {
    constructs
        .iter()
        .filter(|c| {
            c.directive.start <= at && at < c.stmt.as_ref().map_or(c.directive.end, |s| s.end)
        })
        .max_by_key(|c| c.directive.start)
        .and_then(|c| sites.iter().find(|s| s.span.start == c.directive.start))
}

/// Each directive against the construct clang built from it, and each construct against the
/// directives: a different kind means a macro changed the directive; a construct where no
/// directive is written comes from a macro we cannot see.
fn cross_check(
    (src, includes): (&str, &[String]),
    sites: &[Site],
    constructs: &[Construct],
    in_macros: bool,
    line: &dyn Fn(usize) -> usize,
    v: &mut Verdict,
) {
    // Indexed: a file may have 100,000 directives.
    let by_start: crate::hash::HashMap<usize, &Construct> =
        constructs.iter().map(|c| (c.directive.start, c)).collect();
    let rejected: crate::hash::HashSet<usize> = v.rejected.iter().copied().collect();
    for s in sites {
        let Some(input) = s.input else { continue };
        if rejected.contains(&input.start) {
            continue;
        }
        let Some(c) = by_start.get(&s.span.start) else {
            continue;
        };
        let clang = kind_name(c.kind);
        if expected_kind(input.name).is_some_and(|k| k != clang) {
            v.diags.push(Diagnostic::new(
                input.start,
                id::CLANG_OPENACC_SITE,
                format!(
                    "clang builds an OpenACC '{clang}' construct from this 'acc {}' directive (a macro in it?); the directive is left unchanged",
                    input.name
                ),
            ));
            v.rejected.push(input.start);
        }
    }
    if in_macros {
        return;
    }
    for c in constructs {
        // Sites are in file order: only the last one starting at or before it can hold it.
        let k = sites.partition_point(|s| s.span.start <= c.directive.start);
        let spelled = k > 0 && {
            let s = &sites[k - 1];
            s.span.contains(&c.directive.start) || s.span.start == c.directive.start
        };
        if spelled {
            continue;
        }
        let message = match header_macro(src, c.directive.start, includes) {
            // The header's own run translates the directive its definition spells, as a
            // macro of this file would be.
            Some(h) if !h.wrapper => {
                v.diags.push(Diagnostic::new(
                    c.directive.start,
                    id::MACRO_OF_HEADER,
                    format!(
                        "clang finds an OpenACC '{}' construct at line {} built by '{}' of {} (line {}): its directive is translated there; migrate that header too",
                        kind_name(c.kind),
                        line(c.directive.start),
                        h.name,
                        h.header,
                        h.line
                    ),
                ));
                continue;
            }
            Some(h) => format!(
                "clang finds an OpenACC '{}' construct at line {} built by '{}', an OpenACC wrapper macro of {} (line {}): its uses are translated in the files that define it, not here (define it in this file, or write the directive out); it is not translated",
                kind_name(c.kind),
                line(c.directive.start),
                h.name,
                h.header,
                h.line
            ),
            None => format!(
                "clang finds an OpenACC '{}' construct at line {} that no directive of this file spells (a macro from another file?); it is not translated",
                kind_name(c.kind),
                line(c.directive.start)
            ),
        };
        v.diags.push(Diagnostic::new(
            c.directive.start,
            id::CLANG_OPENACC_SITE,
            message,
        ));
    }
}

/// A macro of a header whose definition spells an OpenACC directive.
struct HeaderMacro {
    name: String,
    header: String,
    line: usize,
    /// `#define ACC(x) P(acc x)`: the directive is in its uses, not in the definition.
    wrapper: bool,
}

/// The macro named at `at` in `src` when one of the headers the parse read defines it with
/// an OpenACC directive in its definition (`_Pragma("acc …")`, `P(acc …)`) or as an OpenACC
/// wrapper.
fn header_macro(src: &str, at: usize, includes: &[String]) -> Option<HeaderMacro> {
    let rest = src.as_bytes().get(at..)?;
    let len = rest
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    let name = src.get(at..at + len).filter(|n| !n.is_empty())?;
    for header in includes {
        let Ok(text) = std::fs::read_to_string(header) else {
            continue;
        };
        if !text.contains(name) {
            continue;
        }
        let toks = crate::lex::lex(&text);
        let wrappers = scan::pragma_wrappers(&text, &toks);
        let acc_wrappers = scan::acc_wrappers(&text, &toks, &wrappers);
        let sites = scan::find_sites(&text, &toks);
        for t in &toks {
            if t.kind != crate::lex::TokKind::PpLine || scan::defined_name(&text, t) != Some(name) {
                continue;
            }
            let wrapper = acc_wrappers.contains_key(name);
            let spells = sites
                .iter()
                .any(|s| t.start() <= s.span().start && s.span().end <= t.end() && !s.computed);
            if wrapper || spells {
                return Some(HeaderMacro {
                    name: name.to_string(),
                    header: header.clone(),
                    line: text[..t.start()].matches('\n').count() + 1,
                    wrapper,
                });
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(kind_name(320), "compute");
        assert_eq!(kind_name(333), "cache");
        assert_eq!(kind_name(400), "unknown");
        assert_eq!(expected_kind("kernels loop"), Some("combined"));
        assert_eq!(expected_kind("enter data"), Some("enter data"));
        assert_eq!(expected_kind("routine"), None);
        assert!(about_openacc(
            "inner loops must be tightly nested inside a 'collapse' clause"
        ));
        assert!(about_openacc(
            "invalid branch into OpenACC Compute/Combined Construct"
        ));
        assert!(!about_openacc("no matching constructor for 'S'"));
        assert!(!about_openacc("use of undeclared identifier 'x'"));
    }
}
