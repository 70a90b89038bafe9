//! [`updates::assigned_before_read`] asked for many names of one range (a region writing
//! thousands of scalars asks once per scalar): the range is lexed once and indexed, and each
//! name is answered from its own mentions, not by a walk of the whole range.

use super::updates;
use crate::hash::HashMap;
use crate::lex::{TokKind, Token, lex_range};
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

/// The byte range asked about: its tokens, and its index once asked again.
pub(super) enum Cached<'a> {
    Lexed(Range<usize>, Vec<Token>),
    Indexed(Range<usize>, Index<'a>),
}

/// [`updates::assigned_before_read`], the same answer.
pub(super) fn assigned_before_read<'a>(
    last: &LastAsked<Cached<'a>>,
    src: &'a str,
    range: Range<usize>,
    v: &str,
) -> bool {
    // Other names may match tokens the index does not hold.
    if !lexes_as_identifier(v) {
        return updates::assigned_before_read(src, range, v);
    }
    let entry = match last.take() {
        Some(Cached::Indexed(r, ix)) if r == range => Cached::Indexed(r, ix),
        Some(Cached::Lexed(r, toks)) if r == range => Cached::Indexed(r, Index::new(src, toks)),
        _ => Cached::Lexed(range.clone(), lex_range(src, range, false)),
    };
    let answer = match &entry {
        Cached::Lexed(_, toks) => updates::assigned_before_read_in(src, toks, v),
        Cached::Indexed(_, ix) => ix.assigned_before_read(src, v),
    };
    last.put(entry);
    answer
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

/// Whether every token whose text is `v` is an identifier (the index holds those only).
fn lexes_as_identifier(v: &str) -> bool {
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80;
    v.as_bytes()
        .first()
        .is_some_and(|c| !c.is_ascii_digit() && ident(*c))
        && v.bytes().all(ident)
}

/// One range's tokens, with what [`updates::assigned_before_read_in`] finds walking them.
pub(super) struct Index<'a> {
    toks: Vec<Token>,
    /// The positions of each identifier, ascending.
    by_name: HashMap<&'a str, Vec<u32>>,
    /// A `goto`, `case`, `default` or preprocessor conditional: no name is assigned first.
    blocked: bool,
    /// The `)` closing the header of the range's own `for`.
    header_close: Option<usize>,
    /// Brace depth before each token and after the last (`{` +1, `}` -1, from 0).
    depth: MinTree,
    /// From each token (and the end), the first `;`, `,` or closing bracket outside the
    /// brackets that open from there: where an assigned value starting there ends.
    stop: Vec<u32>,
}

impl<'a> Index<'a> {
    fn new(src: &'a str, toks: Vec<Token>) -> Self {
        let n = toks.len();
        let text = |k: usize| toks[k].text(src);
        let mut by_name: HashMap<&str, Vec<u32>> = HashMap::default();
        let mut blocked = false;
        let mut depth = Vec::with_capacity(n + 1);
        let mut d = 0i32;
        let mut open = Vec::new();
        let mut closes = vec![u32::MAX; n];
        for (k, t) in toks.iter().enumerate() {
            depth.push(d);
            let x = t.text(src);
            if t.kind == TokKind::Ident {
                by_name.entry(x).or_default().push(k as u32);
            }
            blocked |= matches!(x, "goto" | "case" | "default") || updates::conditional(src, t);
            match x {
                "{" => d += 1,
                "}" => d -= 1,
                _ => {}
            }
            match x {
                "(" | "[" | "{" => open.push(k),
                ")" | "]" | "}" => {
                    if let Some(o) = open.pop() {
                        closes[o] = k as u32;
                    }
                }
                _ => {}
            }
        }
        depth.push(d);
        let mut stop = vec![n as u32; n + 1];
        for k in (0..n).rev() {
            stop[k] = match text(k) {
                ";" | "," | ")" | "]" | "}" => k as u32,
                "(" | "[" | "{" if closes[k] == u32::MAX => n as u32,
                "(" | "[" | "{" => stop[closes[k] as usize + 1],
                _ => stop[k + 1],
            };
        }
        let header_close = updates::for_header_close(src, &toks);
        Index {
            toks,
            by_name,
            blocked,
            header_close,
            depth: MinTree::new(depth),
            stop,
        }
    }

    /// The walk of [`updates::assigned_before_read_in`] over the mentions of `v` only: the
    /// blocks between two of them change only how deep the walk is and which of its open
    /// blocks have an assignment.
    fn assigned_before_read(&self, src: &str, v: &str) -> bool {
        let Some(at) = self.by_name.get(v) else {
            return false;
        };
        if self.blocked {
            return false;
        }
        let toks = &self.toks;
        let text = |k: usize| toks[k].text(src);
        // The open blocks past the outermost (a `}` with none open closes nothing), and the
        // first of them where an assignment has run (then it has in all inside it too).
        let mut height = 0i32;
        let mut assigned: Option<i32> = None;
        let mut from = 0;
        let mut m = 0;
        while m < at.len() {
            let k = at[m] as usize;
            m += 1;
            // The braces from `from` to `k`: relative to the depth at `from`, the walk ends
            // at `end` and goes down to `low`.
            let base = self.depth.at(from);
            let (end, low) = (self.depth.at(k) - base, self.depth.min(from, k) - base);
            if assigned.is_some_and(|a| (height + low).max(0) < a) {
                assigned = None;
            }
            height = (height + end).max(end - low);
            let here = assigned.is_some();
            let own_statement = k == 0
                || matches!(text(k - 1), ";" | "{" | "}")
                || (k >= 2 && text(k - 1) == "(" && text(k - 2) == "for")
                || self.header_close == Some(k - 1);
            if !own_statement || toks.get(k + 1).map(|t| t.text(src)) != Some("=") {
                if !here {
                    return false;
                }
                from = k + 1;
                continue;
            }
            // The value reads the mentions in it.
            let j = self.stop.get(k + 2).map_or(toks.len(), |&s| s as usize);
            while m < at.len() && (at[m] as usize) < j {
                if !here {
                    return false;
                }
                m += 1;
            }
            assigned = assigned.or(Some(height));
            from = j;
        }
        true
    }
}

/// Values and the least of any run of them.
struct MinTree {
    n: usize,
    /// A binary tree: the values from `n` on, each node below `n` the least of its two.
    t: Vec<i32>,
}

impl MinTree {
    fn new(values: Vec<i32>) -> Self {
        let n = values.len();
        let mut t = vec![0; n];
        t.extend(values);
        for k in (1..n).rev() {
            t[k] = t[2 * k].min(t[2 * k + 1]);
        }
        MinTree { n, t }
    }

    fn at(&self, k: usize) -> i32 {
        self.t[self.n + k]
    }

    /// The least of the values `lo..=hi`.
    fn min(&self, lo: usize, hi: usize) -> i32 {
        let (mut l, mut r) = (lo + self.n, hi + 1 + self.n);
        let mut m = i32::MAX;
        while l < r {
            if l & 1 == 1 {
                m = m.min(self.t[l]);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                m = m.min(self.t[r]);
            }
            l >>= 1;
            r >>= 1;
        }
        m
    }
}

#[cfg(test)]
pub(super) mod tests;
