//! [`updates::assigned_before_read`] asked for many names of one range (a region writing
//! thousands of scalars asks once per scalar): the range is lexed once, and asked again,
//! walked once for every name, not once per name.

use super::updates;
use crate::hash::HashMap;
use crate::lex::{Token, lex_range};
use std::ops::Range;
use std::sync::Mutex;
use std::thread::ThreadId;

/// What each thread asked about last (the decisions of one site run on one thread, those of
/// other sites on others meanwhile).
pub(super) struct LastAsked<T>(Mutex<Vec<(ThreadId, T)>>);

impl<T> Default for LastAsked<T> {
    fn default() -> Self {
        LastAsked(Mutex::new(Vec::new()))
    }
}

impl<T> LastAsked<T> {
    /// This thread's entry, taken out while it is used.
    pub(super) fn take(&self) -> Option<T> {
        let me = std::thread::current().id();
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let k = all.iter().position(|(t, _)| *t == me)?;
        Some(all.swap_remove(k).1)
    }

    pub(super) fn put(&self, entry: T) {
        let me = std::thread::current().id();
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((me, entry));
    }
}

/// The byte range asked about: its tokens, and once asked again, per name it mentions
/// whether it is assigned before any read.
pub(super) enum Cached<'a> {
    Lexed(Range<usize>, Vec<Token>),
    Indexed(Range<usize>, HashMap<&'a str, bool>),
}

/// [`updates::assigned_before_read`], the same answer.
pub(super) fn assigned_before_read<'a>(
    last: &LastAsked<Cached<'a>>,
    src: &'a str,
    range: Range<usize>,
    v: &str,
) -> bool {
    let entry = match last.take() {
        Some(Cached::Indexed(r, ix)) if r == range => Cached::Indexed(r, ix),
        Some(Cached::Lexed(r, toks)) if r == range => Cached::Indexed(r, index(src, &toks)),
        _ => Cached::Lexed(range.clone(), lex_range(src, range, false)),
    };
    let answer = match &entry {
        Cached::Lexed(_, toks) => updates::assigned_before_read_in(src, toks, v),
        Cached::Indexed(_, ix) => ix.get(v).copied().unwrap_or(false),
    };
    last.put(entry);
    answer
}

/// Per name of `toks`: [`updates::assigned_before_read_in`], all found in one walk.
fn index<'a>(src: &'a str, toks: &[Token]) -> HashMap<&'a str, bool> {
    let mut names = walk::All::default();
    let Some(first) = walk::assigned_first(src, toks, &mut names) else {
        return HashMap::default();
    };
    names
        .0
        .into_iter()
        .map(|(name, id)| (name, first[id as usize]))
        .collect()
}

/// Whether every iteration of the `for` loop at bytes `range` (in braces of its own or not)
/// assigns `v` on every path through its body: a plain assignment that runs whenever the
/// body does ([`walk::assigned_to_end`]). No where the body may end early (`break`,
/// `continue`, `return`, `throw`, even in an inner loop), or the range is no such loop.
pub(super) fn assigned_every_iteration(src: &str, range: Range<usize>, v: &str) -> bool {
    let toks = lex_range(src, range, false);
    let text = |t: &Token| t.text(src);
    // The brace after `open` that closes it.
    let close = |toks: &[Token], open: usize| {
        let mut depth = 0i32;
        (open..toks.len()).find(|&j| {
            match text(&toks[j]) {
                "{" => depth += 1,
                "}" => depth -= 1,
                _ => {}
            }
            depth == 0
        })
    };
    let mut t: &[Token] = &toks;
    while t.first().is_some_and(|x| text(x) == "{") && close(t, 0) == Some(t.len() - 1) {
        t = &t[1..t.len() - 1];
    }
    let Some(h) = updates::for_header_close(src, t) else {
        return false;
    };
    let body = &t[h + 1..];
    let whole = match body.first().map(text) {
        Some("{") => close(body, 0) == Some(body.len() - 1),
        Some(_) => {
            let semis = body.iter().filter(|x| text(x) == ";").count();
            semis == 1
                && body.last().is_some_and(|x| text(x) == ";")
                && !body.iter().any(|x| matches!(text(x), "{" | "}"))
        }
        None => false,
    };
    let jumps = body
        .iter()
        .any(|x| matches!(text(x), "break" | "continue" | "return" | "throw"));
    if !whole || jumps {
        return false;
    }
    let mut names = walk::All::default();
    let Some(end) = walk::assigned_to_end(src, body, &mut names) else {
        return false;
    };
    names.0.get(v).is_some_and(|&id| end[id as usize])
}

/// The token range asked about, and once asked again, the first token of each text there.
pub(super) struct Firsts<'a> {
    toks: Range<usize>,
    first: Option<HashMap<&'a str, u32>>,
}

/// [`updates::first_mention_in_for_init`] of the tokens `toks` of `all`, the same answer.
pub(super) fn first_mention_in_for_init<'a>(
    last: &LastAsked<Firsts<'a>>,
    src: &'a str,
    all: &[Token],
    toks: Range<usize>,
    v: &str,
) -> bool {
    let entry = match last.take() {
        Some(Firsts {
            toks: r,
            first: None,
        }) if r == toks => {
            let mut first = HashMap::default();
            for (k, t) in all[toks.clone()].iter().enumerate() {
                first.entry(t.text(src)).or_insert(k as u32);
            }
            Firsts {
                toks: r,
                first: Some(first),
            }
        }
        Some(e) if e.toks == toks => e,
        _ => Firsts {
            toks: toks.clone(),
            first: None,
        },
    };
    let t = &all[toks];
    let answer = match &entry.first {
        None => updates::first_mention_in_for_init(src, t, v),
        Some(first) => first.get(v).is_some_and(|&k| {
            let k = k as usize;
            k >= 2 && t[k - 1].text(src) == "(" && t[k - 2].text(src) == "for"
        }),
    };
    last.put(entry);
    answer
}

pub(super) mod walk;

#[cfg(test)]
pub(super) mod tests;
