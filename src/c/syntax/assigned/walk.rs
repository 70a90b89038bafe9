//! The walk behind [`super::updates::assigned_before_read`]: one pass over a range's tokens
//! that follows one name, or every name at once (a range asked about again).
//!
//! A name counts as assigned from a plain assignment `v = e` (after `e` is read) that is a
//! statement of its own, or the init of a `for`, until the block it is in
//! closes (a block that is a statement of its own passes it on); after an `if` whose every
//! branch, an `else` among them, assigns it (in braces or not alike); never after a loop (it may run no iteration)
//! or as a `?:`, `&&` or `for` header part. Any other
//! mention reads. Jumps out (`break`, `continue`, `return`) only leave paths out of what
//! follows in their loop, where nothing assigned inside counts; a `goto`, `case`, `default`
//! or preprocessor conditional answers no for every name, and a label keeps branches from
//! counting (a jump from outside the range may reach it).

use crate::c::syntax::updates::{conditional, for_header_close};
use crate::hash::HashMap;
use crate::lex::{TokKind, Token};

/// The names a walk follows, each by a small id.
pub(in crate::c::syntax) trait Names<'a> {
    /// A read before any assignment answers the walk (it follows one name).
    const STOP_AT_READ: bool;
    fn id(&mut self, text: &'a str) -> Option<u32>;
}

/// One name.
pub(in crate::c::syntax) struct One<'v>(pub &'v str);

impl<'a> Names<'a> for One<'_> {
    const STOP_AT_READ: bool = true;
    fn id(&mut self, text: &'a str) -> Option<u32> {
        (text == self.0).then_some(0)
    }
}

/// Every identifier, numbered as first met.
#[derive(Default)]
pub(in crate::c::syntax) struct All<'a>(pub HashMap<&'a str, u32>);

impl<'a> Names<'a> for All<'a> {
    const STOP_AT_READ: bool = false;
    fn id(&mut self, text: &'a str) -> Option<u32> {
        let n = self.0.len() as u32;
        Some(*self.0.entry(text).or_insert(n))
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The range itself.
    Root,
    /// Braces that are no branch: a loop body, an initializer, a lambda, a block after a
    /// label or a directive.
    Block,
    /// A block that is a statement of its own, run once whenever the one before it runs.
    Bare,
    /// The branch of an `if` in braces.
    Braced,
    /// The branch of an `if` without braces, from token `start` to its `;` or, where it is
    /// an `if` itself, to that one's end.
    Unbraced(usize),
    /// An `if` statement: its condition, then a branch expected, then one ended (an `else`
    /// may follow).
    Cond,
    Expect,
    After,
}

struct Frame {
    kind: Kind,
    /// Parentheses and brackets open in it: a statement starts only outside them.
    parens: u32,
    /// The names that became assigned in it.
    assigned: Vec<u32>,
    /// An `if`: its branches ended, whether one is the `else`, per name how many assigned it.
    /// (A branch without braces counts as one in braces: `if (c) x = 1;` is `if (c) { x = 1; }`.)
    ended: u32,
    default: bool,
    counts: HashMap<u32, u32>,
}

impl Frame {
    fn new(kind: Kind) -> Frame {
        Frame {
            kind,
            parens: 0,
            assigned: Vec::new(),
            ended: 0,
            default: false,
            counts: HashMap::default(),
        }
    }
}

#[derive(Default)]
struct State {
    /// Per name: mentioned, assigned on every path to here, read with no assignment before
    /// on some path, inside its own assigned value.
    mentioned: Vec<bool>,
    assigned: Vec<bool>,
    exposed: Vec<bool>,
    pending: Vec<bool>,
    frames: Vec<Frame>,
    /// The assignments whose value is being read: the bracket depth at the name, the name.
    values: Vec<(i32, u32)>,
}

impl State {
    fn top(&mut self) -> &mut Frame {
        self.frames.last_mut().expect("the root frame stays")
    }

    fn grow(&mut self, id: u32) {
        let n = id as usize + 1;
        if self.mentioned.len() < n {
            self.mentioned.resize(n, false);
            self.assigned.resize(n, false);
            self.exposed.resize(n, false);
            self.pending.resize(n, false);
        }
    }

    fn assign(&mut self, id: u32) {
        if !self.assigned[id as usize] {
            self.assigned[id as usize] = true;
            self.top().assigned.push(id);
        }
    }

    /// The top frame closes: what it assigned is forgotten.
    fn pop(&mut self) -> Frame {
        let mut f = self.frames.pop().expect("not the root frame");
        for &i in &f.assigned {
            self.assigned[i as usize] = false;
        }
        f.assigned.clear();
        f
    }

    /// The top frame, a branch, ends: what it assigned is counted for its `if`.
    fn end_branch(&mut self) {
        let mut f = self.frames.pop().expect("a branch");
        let top = self.frames.last_mut().expect("its if");
        for &i in &f.assigned {
            self.assigned[i as usize] = false;
            *top.counts.entry(i).or_insert(0) += 1;
        }
        f.assigned.clear();
        top.ended += 1;
        top.kind = Kind::After;
    }

    /// The top frame, an `if` with its last branch ended, closes: with an `else`, what every
    /// branch assigned is assigned after it. Where it was a branch of its own, that ends.
    fn end_if(&mut self) {
        let f = self.pop();
        if f.default {
            let mut all: Vec<u32> = f
                .counts
                .iter()
                .filter(|&(_, &n)| n == f.ended)
                .map(|(&i, _)| i)
                .collect();
            all.sort_unstable();
            for i in all {
                self.assign(i);
            }
        }
        if matches!(self.top().kind, Kind::Unbraced(_)) {
            self.end_branch();
        }
    }

    /// Drops the `if` frames on top (a shape the walk does not follow), counting nothing.
    fn leave_ifs(&mut self) {
        while matches!(
            self.top().kind,
            Kind::Cond | Kind::Expect | Kind::After | Kind::Unbraced(_)
        ) {
            self.pop();
        }
    }
}

/// Per name id (of those `names` met): whether it is assigned before any read. None when a
/// jump or a preprocessor conditional leaves no name assigned first; with
/// [`Names::STOP_AT_READ`], an early answer of no for the one name.
pub(in crate::c::syntax) fn assigned_first<'a, N: Names<'a>>(
    src: &'a str,
    toks: &[Token],
    names: &mut N,
) -> Option<Vec<bool>> {
    walk(src, toks, names).map(|(first, _)| first)
}

/// Per name id (of those `names` met): whether it is assigned on every path to the end of
/// the tokens (none while a branch or block the walk follows is still open). Jumps are not
/// looked at: the caller rules them out. None as [`assigned_first`].
pub(in crate::c::syntax) fn assigned_to_end<'a, N: Names<'a>>(
    src: &'a str,
    toks: &[Token],
    names: &mut N,
) -> Option<Vec<bool>> {
    walk(src, toks, names).map(|(_, end)| end)
}

/// [`assigned_first`] and [`assigned_to_end`], found in one walk.
fn walk<'a, N: Names<'a>>(
    src: &'a str,
    toks: &[Token],
    names: &mut N,
) -> Option<(Vec<bool>, Vec<bool>)> {
    let text = |k: usize| toks[k].text(src);
    let mut labelled = false;
    for (k, t) in toks.iter().enumerate() {
        let x = t.text(src);
        if matches!(x, "goto" | "case" | "default") || conditional(src, t) {
            return None;
        }
        labelled |= x == ":"
            && k >= 1
            && toks[k - 1].kind == TokKind::Ident
            && (k == 1 || matches!(text(k - 2), ";" | "{" | "}" | ")" | ":" | "else"));
    }
    let header_close = for_header_close(src, toks);
    // Where a statement may start at `k` (outside parentheses, seen from the top frame).
    let starts = |k: usize, f: &Frame| {
        f.parens == 0
            && (k == 0
                || matches!(text(k - 1), ";" | "{" | "}")
                || header_close == Some(k - 1)
                || f.kind == Kind::Unbraced(k))
    };
    let mut s = State::default();
    s.frames.push(Frame::new(Kind::Root));
    let mut depth = 0i32;
    for (k, t) in toks.iter().enumerate() {
        let x = t.text(src);
        // A value ends at its `;` or `,`, or the bracket that closes around it.
        while let Some(&(d, id)) = s.values.last()
            && d == depth
            && matches!(x, ";" | "," | ")" | "]" | "}")
        {
            s.values.pop();
            s.pending[id as usize] = false;
            s.assign(id);
        }
        // After a branch: an `else`, or the end of the `if`.
        let mut taken = false;
        while s.top().kind == Kind::After {
            if x == "else" && !s.top().default {
                s.top().default = true;
                s.top().kind = Kind::Expect;
                taken = true;
                break;
            }
            s.end_if();
        }
        if taken {
            continue;
        }
        if s.top().kind == Kind::Expect {
            match x {
                "{" => {
                    s.frames.push(Frame::new(Kind::Braced));
                    depth += 1;
                    continue;
                }
                ";" => {
                    let f = s.top();
                    f.ended += 1;
                    f.kind = Kind::After;
                    continue;
                }
                "for" | "while" | "do" | "switch" | "else" | "try" | ")" | "]" | "}" => {
                    s.leave_ifs()
                }
                _ if t.kind == TokKind::PpLine => s.leave_ifs(),
                _ => s.frames.push(Frame::new(Kind::Unbraced(k))),
            }
        }
        match x {
            "{" => {
                let bare = !labelled && s.top().kind != Kind::Expect && starts(k, s.top());
                let bare = bare && header_close.is_none_or(|h| h + 1 != k);
                s.frames
                    .push(Frame::new(if bare { Kind::Bare } else { Kind::Block }));
                depth += 1;
            }
            "}" => {
                depth -= 1;
                s.leave_ifs();
                match s.top().kind {
                    Kind::Block => {
                        s.pop();
                    }
                    Kind::Braced => s.end_branch(),
                    Kind::Bare => {
                        // What it assigned stays assigned around it.
                        let mut f = s.frames.pop().expect("not the root frame");
                        s.top().assigned.append(&mut f.assigned);
                    }
                    _ => {}
                }
            }
            "(" | "[" => {
                s.top().parens += 1;
                depth += 1;
            }
            ")" | "]" => {
                depth -= 1;
                let f = s.top();
                if f.parens > 0 {
                    f.parens -= 1;
                    if f.parens == 0 && f.kind == Kind::Cond {
                        f.kind = Kind::Expect;
                    }
                }
            }
            ";" => {
                let f = s.top();
                if matches!(f.kind, Kind::Unbraced(_)) && f.parens == 0 {
                    s.end_branch();
                }
            }
            "if" if !labelled
                && starts(k, s.top())
                && (toks.get(k + 1).is_some_and(|t| t.text(src) == "(")
                    || (toks.get(k + 1).is_some_and(|t| t.text(src) == "constexpr")
                        && toks.get(k + 2).is_some_and(|t| t.text(src) == "("))) =>
            {
                s.frames.push(Frame::new(Kind::Cond));
            }
            _ if t.kind == TokKind::Ident => {
                let Some(id) = names.id(x) else { continue };
                s.grow(id);
                let i = id as usize;
                s.mentioned[i] = true;
                let f = s.frames.last().expect("the root frame stays");
                // (The init of a `for` without braces around, in a branch or a loop's body,
                // counts after the `for` too.)
                let own = starts(k, f)
                    || (k >= 2 && text(k - 1) == "(" && text(k - 2) == "for" && f.parens == 1);
                if own && !s.pending[i] && toks.get(k + 1).is_some_and(|t| t.text(src) == "=") {
                    s.pending[i] = true;
                    s.values.push((depth, id));
                } else if !s.assigned[i] {
                    s.exposed[i] = true;
                    if N::STOP_AT_READ {
                        return Some((vec![false], vec![false]));
                    }
                }
            }
            _ => {}
        }
    }
    let first = s
        .mentioned
        .iter()
        .zip(&s.exposed)
        .map(|(&m, &e)| m && !e)
        .collect();
    // A value, or an `if` whose last branch ended, at the very end.
    while let Some((_, id)) = s.values.pop() {
        s.pending[id as usize] = false;
        s.assign(id);
    }
    while s.top().kind == Kind::After {
        s.end_if();
    }
    let closed = s.frames.len() == 1;
    let end = s.assigned.iter().map(|&a| a && closed).collect();
    Some((first, end))
}
