//! Text utilities: templates and their placeholders, argument purity, token separation.

use crate::edit::Edit;
pub(super) use crate::lex::strip_parens;
use crate::lex::{TokKind, Token, lex};
use std::ops::Range;

/// Whether `toks` (an argument) is free of side effects: no assignment, increment, or call.
/// A parenthesized cast followed by `(` counts as a call: conservative.
pub(super) fn pure(src: &str, toks: &[Token]) -> bool {
    for (k, t) in toks.iter().enumerate() {
        let s = t.text(src);
        let next_open = toks.get(k + 1).is_some_and(|n| n.text(src) == "(");
        let impure = match t.kind {
            TokKind::PpLine => true,
            TokKind::Punct => {
                crate::lex::ASSIGNMENT_OPS.contains(&s)
                    || matches!(s, "++" | "--")
                    || (next_open && matches!(s, ")" | "]" | ">"))
            }
            TokKind::Ident => {
                matches!(s, "new" | "delete" | "throw" | "co_await" | "co_yield")
                    || (next_open
                        && !matches!(
                            s,
                            "sizeof"
                                | "alignof"
                                | "_Alignof"
                                | "__alignof__"
                                | "typeof"
                                | "__typeof__"
                                | "decltype"
                                | "offsetof"
                        ))
            }
            _ => false,
        };
        if impure {
            return false;
        }
    }
    true
}

/// How often argument `k` occurs in `template` (`{k}`, or a queue placeholder `{qk}`, …).
pub(super) fn placeholder_uses(template: &str, k: usize) -> usize {
    template.matches(&format!("{{{k}}}")).count()
        + ["q", "Q", "R", "async", "enter", "wait", "ptr"]
            .iter()
            .map(|p| template.matches(&format!("{{{p}{k}}}")).count())
            .sum::<usize>()
}

/// `template` with `{0}`, `{1}`, … replaced by `args`, in one pass (an argument's own text is
/// never scanned for placeholders).
#[cfg(test)]
pub(super) fn fill(template: &str, args: &[String]) -> String {
    fill_with(template, args, &|_| None)
}

/// `fill`, also replacing named placeholders (`{q0}`, `{async2}`) by what `extra` gives.
pub(super) fn fill_with(
    template: &str,
    args: &[String],
    extra: &dyn Fn(&str) -> Option<String>,
) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let letters = after.bytes().take_while(u8::is_ascii_alphabetic).count();
        let digits = after[letters..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        let key = &after[..letters + digits];
        let closed = digits > 0 && after[letters + digits..].starts_with('}');
        let value = match key.parse::<usize>() {
            Ok(k) => args.get(k).cloned(),
            Err(_) => extra(key),
        };
        match value {
            Some(v) if closed => {
                out.push_str(&v);
                rest = &after[letters + digits + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The named placeholders of a template (`q0`, `Q1`, `async2`, `wait3`, `ptr0`; `bytes`).
pub(super) fn named_keys(template: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let letters = after.bytes().take_while(u8::is_ascii_alphabetic).count();
        let digits = after[letters..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        if letters > 0 && after[letters + digits..].starts_with('}') {
            let key = after[..letters + digits].to_string();
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        rest = after;
    }
    keys
}

/// Whether `text` has `word` in it: the places of its last byte are found with `memchr` and
/// each is compared, faster than `str::contains` (which builds a searcher per call) for the
/// short texts (identifiers, directive lines, edits) it is asked about hundreds of thousands
/// of times. The words asked about end in `_` (`acc_`, `omp_`), a byte few texts have.
pub(super) fn has(text: &str, word: &str) -> bool {
    let (text, word) = (text.as_bytes(), word.as_bytes());
    let Some((&last, _)) = word.split_last() else {
        return true;
    };
    memchr::memchr_iter(last, text).any(|k| text[..=k].ends_with(word))
}

/// Indexes of the tokens among `toks[range]` (tokens of `src`, in source order) with `acc_`
/// in their text, in order: every runtime routine (`__builtin_goacc_…` too), openacc.h name
/// and profiling name has it, and so has a preprocessor line that holds one. One search of
/// the text finds them, so that the passes looking for these names cost next to nothing in
/// a file without them, however many tokens it has.
pub(super) fn acc_tokens(src: &str, toks: &[Token], range: Range<usize>) -> Vec<usize> {
    let toks = &toks[range.clone()];
    let (Some(first), Some(last)) = (toks.first(), toks.last()) else {
        return Vec::new();
    };
    let (from, to) = (first.start(), last.end());
    let mut out: Vec<usize> = Vec::new();
    let mut k = 0;
    for at in memchr::memmem::find_iter(&src.as_bytes()[from..to], b"acc_") {
        let at = from + at;
        // The token holding `at`, if any (a comment or a blank holds none).
        k += toks[k..].partition_point(|t| t.end() <= at);
        let Some(t) = toks.get(k) else { break };
        if t.start() <= at && out.last() != Some(&(range.start + k)) {
            out.push(range.start + k);
        }
    }
    out
}

/// `text` without its `/* … */` comments.
pub(super) fn without_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(k) = rest.find("/*") {
        out.push_str(&rest[..k]);
        rest = rest[k..].find("*/").map_or("", |e| &rest[k + e + 2..]);
    }
    out.push_str(rest);
    out
}

/// Whether inserted C text names one of `routines` (prefixes of OpenMP routine names) outside
/// comments, string literals (a weak reference's target) and longer identifiers (the
/// `acc2omp_omp_…` weak references of the helpers).
pub(super) fn names_routine(text: &str, routines: &[&str]) -> bool {
    if !routines.iter().any(|r| has(text, r)) {
        return false;
    }
    let code = without_comments(text);
    routines.iter().any(|r| {
        code.match_indices(r).any(|(k, _)| {
            !code[..k]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '"')
        })
    })
}

/// Whether a template calls an OpenMP routine (`omp_…`, not the `acc2omp_` helpers).
pub(super) fn calls_omp(template: &str) -> bool {
    if !has(template, "omp_") {
        return false;
    }
    template.match_indices("omp_").any(|(k, _)| {
        !template[..k]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// `src[range]` with the edits inside it applied.
pub(super) fn apply_within(src: &str, range: &Range<usize>, edits: &[Edit]) -> String {
    let mut inside: Vec<&Edit> = edits
        .iter()
        .filter(|e| range.start <= e.range.start && e.range.end <= range.end)
        .collect();
    inside.sort_by_key(|e| e.range.start);
    let mut out = String::new();
    let mut pos = range.start;
    for e in inside {
        if e.range.start < pos {
            continue;
        }
        out.push_str(&src[pos..e.range.start]);
        out.push_str(&e.text);
        pos = e.range.end;
    }
    out.push_str(&src[pos..range.end]);
    out
}

/// `text` on one line, for a directive: as written when it has no line break or `//`
/// comment, else its tokens joined by single blanks. None if a token itself spans lines.
pub(super) fn one_line(text: &str) -> Option<String> {
    if !text.contains(['\n', '\r']) && !text.contains("//") {
        return Some(text.to_string());
    }
    let toks = lex(text);
    let mut out = String::new();
    let mut end = None;
    for t in &toks {
        let s = t.text(text);
        if t.kind == TokKind::PpLine || s.contains(['\n', '\r']) {
            return None;
        }
        if end.is_some_and(|e| e < t.start()) {
            out.push(' ');
        }
        out.push_str(s);
        end = Some(t.end());
    }
    Some(out)
}

/// What a routine becomes, for a message (`r`: an expression template, or directives
/// `#pragma omp a / #pragma omp b`; None: nothing).
pub(super) fn describe(r: &Option<String>) -> String {
    let Some(r) = r else {
        return "nothing".into();
    };
    if let Some(p) = r.strip_prefix("#pragma omp ") {
        let names: Vec<String> = p
            .split(" / #pragma omp ")
            .map(|p| {
                let words: Vec<&str> = p.split(' ').take_while(|w| !w.contains('(')).collect();
                format!("'#pragma omp {}'", words.join(" "))
            })
            .collect();
        return names.join(" then ");
    }
    let mut t = r.trim_start_matches(['!', '(']);
    // A leading queue placeholder (`({wait3}omp_target_memcpy(…))`) names no routine.
    if t.starts_with('{')
        && let Some(e) = t.find('}')
    {
        t = &t[e + 1..];
    }
    let name: String = t
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    format!("'{}'", if name.is_empty() { t } else { &name })
}

/// A replacement must not paste itself onto a neighbouring identifier or number (`f()x`
/// would become `0x`): a space keeps them apart.
pub(super) fn separate_tokens(src: &str, e: &mut Edit) {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    if e.text.ends_with(word) && src[e.range.end..].starts_with(word) {
        e.text.push(' ');
    }
    if e.text.starts_with(word) && src[..e.range.start].ends_with(word) {
        e.text.insert(0, ' ');
    }
}

/// Whether only blanks, comments that end on this line, or a `//` comment follow `pos` on
/// its line (so a directive line may end there).
pub(super) fn rest_of_line_empty(src: &str, pos: usize) -> bool {
    let mut rest = &src[pos..];
    loop {
        rest = rest.trim_start_matches([' ', '\t']);
        if rest.is_empty()
            || rest.starts_with('\n')
            || rest.starts_with("\r\n")
            || rest.starts_with("//")
        {
            return true;
        }
        if let Some(body) = rest.strip_prefix("/*") {
            match body.find("*/") {
                Some(e) if !body[..e].contains('\n') => rest = &body[e + 2..],
                _ => return false,
            }
        } else {
            return false;
        }
    }
}

/// End of the line terminator at `end` (or `end` itself).
pub(super) fn after_eol(src: &str, end: usize) -> usize {
    let rest = &src[end..];
    if rest.starts_with("\r\n") {
        end + 2
    } else if rest.starts_with('\n') {
        end + 1
    } else {
        end
    }
}
