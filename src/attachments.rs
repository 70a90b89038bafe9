//! Explicit pointer attachments of one file: which detaches undo an explicit attach.
//!
//! OpenACC counts attachments apart from the data's references; OpenMP has one reference
//! count. `acc_attach(&s.p)` becomes a zero-length map of `s.p[:0]`, which attaches and
//! holds one reference to the target's data, so the matching `acc_detach` must release it.
//! A detach of a pointer that a data clause attached (`enter data copyin(s.p[0:n])` with `s`
//! present: the manual deep copy OpenACC guides teach) has no such reference to release:
//! releasing `s.p[:0]` there drops the data's own reference, and the next `copyout` finds it
//! gone. OpenMP ends that attachment itself when the target is unmapped and restores the host
//! pointer when the structure is copied back, so such a detach is removed.

use crate::directive::Directive;
use crate::lex::{TokKind, Token, lex_range, strip_parens};
use crate::scan::Site;
use crate::source::LineIndex;
use std::collections::HashMap;

/// What the attachments are read from: a file's tokens and its directives.
pub struct Input<'a> {
    pub src: &'a str,
    pub toks: &'a [Token],
    pub sites: &'a [Site],
    /// Each site's directive (None: left unchanged).
    pub dirs: &'a [Option<Directive>],
    pub lines: &'a LineIndex,
}

impl Input<'_> {
    fn dir(&self, i: usize) -> Option<&Directive> {
        self.dirs[i].as_ref()
    }
    fn at(&self, i: usize) -> usize {
        self.sites[i].span().start
    }
    fn line_at(&self, offset: usize) -> usize {
        self.lines.line_col(offset).0
    }
}

/// Routines that attach (`true`) or detach (`false`) the pointer their first argument
/// points to.
fn routine(name: &str) -> Option<bool> {
    match name {
        "acc_attach" | "acc_attach_async" => Some(true),
        "acc_detach" | "acc_detach_async" | "acc_detach_finalize" | "acc_detach_finalize_async" => {
            Some(false)
        }
        _ => None,
    }
}

#[derive(Debug, Clone)]
struct Event {
    at: usize,
    line: usize,
    /// Offset of the `{` of the outermost block holding it (its function's body).
    function: Option<usize>,
    pointer: String,
    attach: bool,
}

/// What a detach undoes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detach {
    /// An explicit attach of the same pointer earlier in the same function.
    Explicit,
    /// Nothing explicit: a data clause attached the pointer.
    Implicit,
    /// No explicit attach in this function, but the file attaches explicitly in another
    /// function (which may attach this pointer): the line of the first such attach.
    Unknown(usize),
}

/// The explicit attaches and detaches of a file, decided in one pass.
#[derive(Debug, Default)]
pub struct Attachments {
    /// Each detach (offset, pointer) and whether an earlier explicit attach in its function
    /// is still open.
    detaches: HashMap<(usize, String), bool>,
    /// Explicit attaches that their function does not detach, by member name (`u` of
    /// `f->u`: other functions name the structure otherwise): the function and line of the
    /// first two functions (enough to know whether one is not the detach's own).
    open: HashMap<String, Vec<(Option<usize>, usize)>>,
    /// Members whose pointers a data clause may attach: an item that maps a section through
    /// the member (`copyin(s.p[0:n])`). Detaches of other members undo explicit attaches.
    implicit: std::collections::HashSet<String>,
}

impl Attachments {
    pub fn of(u: &Input) -> Self {
        let events = events(u);
        let implicit = implicit_members(u);
        let mut count: HashMap<(Option<usize>, &str), isize> = HashMap::new();
        let mut first: HashMap<(Option<usize>, &str), usize> = HashMap::new();
        let mut detaches = HashMap::new();
        for e in &events {
            let key = (e.function, e.pointer.as_str());
            let n = count.entry(key).or_default();
            if e.attach {
                *n += 1;
                first.entry(key).or_insert(e.line);
            } else {
                detaches.insert((e.at, e.pointer.clone()), *n > 0);
                *n -= 1;
            }
        }
        let mut open: HashMap<String, Vec<(Option<usize>, usize)>> = HashMap::new();
        let mut left: Vec<_> = count
            .iter()
            .filter(|(_, n)| **n > 0)
            .filter_map(|(k, _)| first.get(k).map(|line| (k.0, k.1, *line)))
            .collect();
        left.sort_by_key(|&(_, _, line)| line);
        for (function, pointer, line) in left {
            let seen = open.entry(member(pointer).to_string()).or_default();
            if seen.len() < 2 && seen.iter().all(|(f, _)| *f != function) {
                seen.push((function, line));
            }
        }
        Attachments {
            detaches,
            open,
            implicit,
        }
    }

    /// What the detach of `pointer` at offset `at` undoes (a detach in a macro body, not
    /// in the file's statements: anything the file attaches explicitly).
    pub fn detach(&self, at: usize, pointer: &str) -> Detach {
        let pointer = normalize(pointer);
        let m = member(&pointer);
        let open = self.open.get(m).map_or(&[][..], Vec::as_slice);
        // No data clause attaches this member: whatever is detached was attached explicitly.
        if !self.implicit.contains(m) {
            return Detach::Explicit;
        }
        if self.detaches.get(&(at, pointer)) == Some(&true) {
            return Detach::Explicit;
        }
        // An explicit attach left open anywhere (in another function, or in this one by an
        // earlier call) may be the one undone here.
        match open.first() {
            Some((_, line)) => Detach::Unknown(*line),
            None => Detach::Implicit,
        }
    }
}

/// The explicit attaches and detaches of a file, in source order.
fn events(u: &Input) -> Vec<Event> {
    let src = u.src;
    let toks = u.toks;
    let mut events = Vec::new();
    // Outermost `{` of each token, from a running depth (unbalanced input: best effort).
    let mut depth = 0usize;
    let mut outer = None;
    let mut pending: Vec<(usize, Option<usize>, String, bool)> = Vec::new();
    let site_at = |at: usize| u.sites.binary_search_by_key(&at, |s| s.span().start).ok();
    let mut k = 0;
    while k < toks.len() {
        let t = &toks[k];
        match (t.kind, t.text(src)) {
            (TokKind::Punct, "{") => {
                if depth == 0 {
                    outer = Some(t.start());
                }
                depth += 1;
            }
            (TokKind::Punct, "}") => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    outer = None;
                }
            }
            (TokKind::Ident, name) if toks.get(k + 1).map(|n| n.text(src)) == Some("(") => {
                if let Some(attach) = routine(name)
                    && let Some(p) = first_argument(src, &toks[k + 2..])
                {
                    pending.push((t.start(), outer, p, attach));
                }
            }
            (TokKind::PpLine, _) => match site_at(t.start()) {
                Some(site) => clause_events(u, site, outer, &mut pending),
                // Translated ones (a run on its own output decides as the first did).
                None => omp_events(src, t, outer, &mut pending),
            },
            _ => {}
        }
        k += 1;
    }
    events.extend(
        pending
            .into_iter()
            .map(|(at, function, pointer, attach)| Event {
                at,
                line: u.line_at(at),
                function,
                pointer,
                attach,
            }),
    );
    events
}

/// Members a data clause item maps a section through (`s.p[0:n]`, `a->next[:1]`), also in
/// translated `map` clauses (a run on its own output decides as the first did).
fn implicit_members(u: &Input) -> std::collections::HashSet<String> {
    let mut out = std::collections::HashSet::new();
    let mut section = |text: &str| {
        let text = normalize(text);
        if let Some(open) = text.find('[')
            && !text.ends_with("[:0]")
        {
            let m = member(&text[..open]);
            if m.len() < open {
                out.insert(m.to_string());
            }
        }
    };
    let src = u.src;
    for t in u.toks.iter().filter(|t| t.kind == TokKind::PpLine) {
        let line = &src[t.start()..t.end()];
        if !line.contains("omp") || !line.contains("map") {
            continue;
        }
        let inner = lex_range(src, t.start() + 1..t.end(), false);
        let words: Vec<&str> = inner.iter().map(|k| k.text(src)).collect();
        if words.get(..3) != Some(&["pragma", "omp", "target"][..]) {
            continue;
        }
        for (_, items) in map_clauses(&words, 3) {
            for item in items {
                section(&item.concat());
            }
        }
    }
    for d in u.dirs.iter().flatten() {
        for c in d.clauses.iter().filter(|c| {
            c.name != "attach" && crate::directive::DATA_CLAUSES.contains(&c.name.as_str())
        }) {
            for it in c.items() {
                section(&it.text);
            }
        }
    }
    out
}

/// `attach(...)` on `enter data` and `detach(...)` on `exit data`, one event per item.
fn clause_events(
    u: &Input,
    site: usize,
    outer: Option<usize>,
    out: &mut Vec<(usize, Option<usize>, String, bool)>,
) {
    let Some(d) = u.dir(site) else {
        return;
    };
    let want = match d.name.as_str() {
        "enter data" => "attach",
        "exit data" => "detach",
        _ => return,
    };
    for c in d.clauses.iter().filter(|c| c.name == want) {
        for item in c.items() {
            // Keyed by the site's offset: a directive is one event per pointer.
            out.push((u.at(site), outer, normalize(&item.text), want == "attach"));
        }
    }
}

/// `#pragma omp target enter data map(alloc: p[:0])` and `… exit data map(release: p[:0])`:
/// the translations of explicit attaches and detaches.
fn omp_events(
    src: &str,
    t: &Token,
    outer: Option<usize>,
    out: &mut Vec<(usize, Option<usize>, String, bool)>,
) {
    let inner = lex_range(src, t.start() + 1..t.end(), false);
    let words: Vec<&str> = inner.iter().map(|k| k.text(src)).collect();
    let attach = match words.get(..5) {
        Some(["pragma", "omp", "target", "enter", "data"]) => true,
        Some(["pragma", "omp", "target", "exit", "data"]) => false,
        _ => return,
    };
    let kind = if attach { "alloc" } else { "release" };
    for (_, items) in map_clauses(&words, 5)
        .into_iter()
        .filter(|(k, _)| *k == Some(kind))
    {
        for item in items {
            push_zero_length(&item, t.start(), outer, attach, out);
        }
    }
}

/// The `map([modifiers,] type: items)` clauses in an OpenMP directive's words from `from`
/// on: each one's map type and its items, split at top-level commas.
fn map_clauses<'w>(words: &[&'w str], from: usize) -> Vec<(Option<&'w str>, Vec<Vec<&'w str>>)> {
    let mut out = Vec::new();
    let mut k = from;
    while k + 1 < words.len() {
        if words[k] == "map" && words[k + 1] == "(" {
            let mut j = k + 2;
            let mut kind = None;
            let word = |w: &&str| *w == "," || w.chars().all(|c| c.is_alphanumeric() || c == '_');
            if let Some(c) = words[j..].iter().take(4).position(|w| *w == ":")
                && c >= 1
                && words[j..j + c].iter().all(word)
            {
                kind = Some(words[j + c - 1]);
                j += c + 1;
            }
            let mut items = Vec::new();
            let (mut depth, mut start) = (0usize, j);
            while j < words.len() {
                match words[j] {
                    "(" | "[" => depth += 1,
                    ")" if depth == 0 => break,
                    ")" | "]" => depth = depth.saturating_sub(1),
                    "," if depth == 0 => {
                        items.push(words[start..j].to_vec());
                        start = j + 1;
                    }
                    _ => {}
                }
                j += 1;
            }
            items.push(words[start..j.min(words.len())].to_vec());
            out.push((kind, items));
            k = j;
        }
        k += 1;
    }
    out
}

/// An item `p [ : 0 ]` of a zero-length map, as an event for `p`.
fn push_zero_length(
    item: &[&str],
    at: usize,
    outer: Option<usize>,
    attach: bool,
    out: &mut Vec<(usize, Option<usize>, String, bool)>,
) {
    if let Some(p) = item.strip_suffix(&["[", ":", "0", "]"][..])
        && !p.is_empty()
    {
        out.push((at, outer, p.concat(), attach));
    }
}

/// The first argument of a call whose `(` was just passed, as the pointer it addresses:
/// `(void **)&s.p` → `s.p`.
fn first_argument(src: &str, toks: &[Token]) -> Option<String> {
    let mut depth = 0usize;
    let mut end = None;
    for (j, t) in toks.iter().enumerate() {
        match t.text(src) {
            "(" | "[" => depth += 1,
            ")" | "]" if depth == 0 => {
                end = Some(j);
                break;
            }
            ")" | "]" => depth -= 1,
            "," if depth == 0 => {
                end = Some(j);
                break;
            }
            _ => {}
        }
    }
    let end = end?;
    let (first, last) = (toks.first()?, toks.get(end.checked_sub(1)?)?);
    Some(normalize(&src[first.start()..last.end()]))
}

/// The member a pointer expression names (`f->u` → `u`, `s.a[i].p` → `p`), or the whole.
fn member(pointer: &str) -> &str {
    let cut = pointer
        .rfind("->")
        .map(|k| k + 2)
        .max(pointer.rfind('.').map(|k| k + 1));
    cut.map_or(pointer, |k| &pointer[k..])
}

/// A pointer as the detaches compare it: the pointer an address names (`(void **)&s.p` →
/// `s.p`, see [`pointer_of_address`]), without spaces.
pub fn normalize(text: &str) -> String {
    let p = pointer_of_address(text).unwrap_or_else(|| text.to_string());
    p.split_whitespace().collect()
}

/// The pointer whose address `arg` is: `&p`, `(void **)&s.p`, `(void**)&(a->p)` give `p`,
/// `s.p`, `a->p`; None for any other form.
pub(crate) fn pointer_of_address(arg: &str) -> Option<String> {
    let mut t = arg.trim();
    loop {
        // A cast to a pointer type: `(void **)`, `(T**)`.
        if let Some(rest) = t.strip_prefix('(')
            && let Some(close) = rest.find(')')
            && rest[..close].trim_end().ends_with('*')
            && rest[..close]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || " _*".contains(c))
        {
            t = rest[close + 1..].trim_start();
            continue;
        }
        break;
    }
    let p = strip_parens(t.strip_prefix('&')?.trim_start()).trim();
    let ok = !p.is_empty()
        && p.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.->[] ".contains(c))
        && p.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    ok.then(|| p.to_string())
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn pointers_are_compared_without_casts_and_spaces() {
        assert_eq!(normalize("(void **)&s.p"), "s.p");
        assert_eq!(normalize("(void**) & g -> cells"), "g->cells");
        assert_eq!(normalize("&(f.u)"), "f.u");
        assert_eq!(normalize("f.u"), "f.u");
        assert_eq!(normalize("(void **)&a[i].p"), "a[i].p");
    }

    #[test]
    fn open_attaches_are_matched_by_member() {
        assert_eq!(super::member("f->u"), "u");
        assert_eq!(super::member("s.a[i].p"), "p");
        assert_eq!(super::member("p"), "p");
    }
}
