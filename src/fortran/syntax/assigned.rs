//! Which names each run of a range of statements assigns before any read (no read sees a
//! value from before the range): the answer of [`super::FortranSyntax::assigned_before_read`],
//! found for every name of the range in one pass over its statements.
//!
//! A name counts as assigned from a whole assignment (`v = e`, after `e` is read) or a
//! counted `do` statement (its variable) on, within the construct it is in: after an `if`
//! construct (or `select`) only when every branch, an `else` (`case default`) among them,
//! assigns it; never after a loop (it may run no iteration), a logical `if` or another
//! construct (`block`, `associate`, `where`, …). A mention that is not an assignment (a
//! call's argument, an I/O item, a partial assignment `v(1:2) = …` or `v%c = …`) reads.
//! Jumps out of a construct (`cycle`, `exit`, `return`) only leave paths out, so they change
//! nothing here ([`assigned_every_iteration`] follows them); a jump to a label (`goto`,
//! `err=`, an alternate return) or a preprocessor conditional in the range answers no for
//! every name.

use crate::fortran::Front;
use crate::fortran::facts::uses;
use crate::fortran::lines::LineKind;
use crate::fortran::stmt::{ConstructKind, DoControl, Kind, Toks};
use crate::hash::HashMap;
use std::ops::Range;

/// Per name (lower case) the range mentions: whether it is assigned before any read.
pub(super) fn assigned_first(
    src: &str,
    front: &Front,
    range: Range<usize>,
) -> HashMap<String, bool> {
    let lx = &front.lexed;
    let from = lx.stmts.partition_point(|s| s.span().start < range.start);
    let to = from + lx.stmts[from..].partition_point(|s| s.span().start < range.end);
    let mut w = Walk::default();
    if blocked(src, front, &range, from..to) {
        return HashMap::default();
    }
    w.frames.push(Frame::new(Construct::Root));
    for k in from..to {
        if !w.statement(src, front, k) {
            return HashMap::default();
        }
        // The loops that statement `k` ends (labelled loops may share it).
        while matches!(w.frames.last(), Some(f) if f.kind.ends(k)) {
            w.pop();
        }
    }
    if w.frames.len() != 1 {
        return HashMap::default();
    }
    let Walk { ids, exposed, .. } = w;
    ids.into_iter()
        .map(|(name, id)| {
            let first = !exposed[id as usize];
            (name, first)
        })
        .collect()
}

/// Per name (lower case) the `do` loop starting the range mentions: whether each of its
/// iterations assigns it on every path, as [`assigned_first`] follows paths, to the end of
/// the body and to every `cycle` of the loop. A `cycle` or `exit` of a loop inside changes
/// nothing (what a loop inside assigns is forgotten after it). Empty where an iteration may
/// end otherwise (`exit` of the loop or of a construct around, `cycle` of a loop outside,
/// `return`, `stop`, a `goto`) or the range starts with no `do`.
pub(super) fn assigned_every_iteration(
    src: &str,
    front: &Front,
    range: Range<usize>,
) -> HashMap<String, bool> {
    let (lx, st) = (&front.lexed, &front.structure);
    let from = lx.stmts.partition_point(|s| s.span().start < range.start);
    let to = from + lx.stmts[from..].partition_point(|s| s.span().start < range.end);
    let Some(end) = st.loop_at(from).and_then(|l| st.loops[l].end()) else {
        return HashMap::default();
    };
    if !matches!(st.stmts[from].kind, Kind::Do(_))
        || end >= to
        || blocked(src, front, &range, from..to)
    {
        return HashMap::default();
    }
    let mut w = Walk {
        every: true,
        ..Walk::default()
    };
    w.frames.push(Frame::new(Construct::Root));
    for k in from..=end {
        if !w.statement(src, front, k) {
            return HashMap::default();
        }
        // The loops inside that statement `k` ends (the last may share the loop's own).
        while w.frames.len() > 2 && matches!(w.frames.last(), Some(f) if f.kind.ends(k)) {
            w.pop();
        }
    }
    // The body's end: the outer loop's frame is the only one open in the root.
    if w.frames.len() != 2 {
        return HashMap::default();
    }
    let Walk {
        ids, assigned, cut, ..
    } = w;
    ids.into_iter()
        .map(|(name, id)| {
            let i = id as usize;
            let at_cycles = cut.as_ref().is_none_or(|c| c.get(i) == Some(&true));
            (name, assigned[i] && at_cycles)
        })
        .collect()
}

/// A label some jump may reach (any labelled statement but a `format` and the `continue`
/// or `end do` ending a labelled `do` of the range, which a jump reaches only as `cycle`
/// would), or a preprocessor conditional (a configuration may leave an assignment out).
fn blocked(src: &str, front: &Front, range: &Range<usize>, stmts: Range<usize>) -> bool {
    let (lx, st) = (&front.lexed, &front.structure);
    let ends: Vec<usize> = st
        .loops_in(stmts.clone())
        .iter()
        .filter(|lp| lp.label().is_some())
        .filter_map(|lp| lp.end())
        .collect();
    let label_reached = stmts.clone().any(|k| {
        lx.stmts[k].label.is_some()
            && st.stmts[k].kind != Kind::Format
            && !(matches!(
                st.stmts[k].kind,
                Kind::Continue | Kind::End(ConstructKind::Do)
            ) && ends.contains(&k))
    });
    if label_reached {
        return true;
    }
    let lines = &front.lines;
    if lines.is_empty() {
        return false;
    }
    let (a, b) = (lines.line_of(range.start), lines.line_of(range.end));
    lines.range(a..(b + 1).min(lines.len())).any(|l| {
        l.kind == LineKind::Preprocessor && {
            let d = src[l.start..l.end].trim_start_matches('#').trim_start();
            d.starts_with("if") || d.starts_with("el") || d.starts_with("endif")
        }
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Construct {
    /// The range itself.
    Root,
    /// A `do` loop: its `do` and end statements.
    Loop { stmt: usize, end: usize },
    /// An `if` or `select` construct: each branch starts where the one before started.
    Branches(ConstructKind),
    /// Another construct, run once or not at all as a whole (`block`, `where`, …).
    Other(ConstructKind),
}

impl Construct {
    /// A loop that statement `k` ends.
    fn ends(self, k: usize) -> bool {
        matches!(self, Construct::Loop { end, .. } if end == k)
    }
}

struct Frame {
    kind: Construct,
    /// The names that became assigned in this frame (in its current branch).
    assigned: Vec<u32>,
    /// Branches: those ended, whether one is the default (`else`, `case default`), per
    /// name how many of them assigned it, and whether a branch is open (`select` has none
    /// before its first `case`).
    ended: u32,
    default: bool,
    counts: HashMap<u32, u32>,
    open: bool,
}

impl Frame {
    fn new(kind: Construct) -> Frame {
        Frame {
            kind,
            assigned: Vec::new(),
            ended: 0,
            default: false,
            counts: HashMap::default(),
            open: matches!(kind, Construct::Branches(ConstructKind::If)),
        }
    }
}

#[derive(Default)]
struct Walk {
    ids: HashMap<String, u32>,
    /// Per name: whether it is assigned on every path to here (reset as frames close).
    assigned: Vec<bool>,
    /// Per name: a read with no assignment before on some path.
    exposed: Vec<bool>,
    frames: Vec<Frame>,
    /// The walk of [`assigned_every_iteration`]: the loop is `frames[1]`, and a jump that
    /// ends its iteration elsewhere than at its end or a `cycle` of it answers no.
    every: bool,
    /// Per name: whether it was assigned at every `cycle` of that loop (None: none yet).
    cut: Option<Vec<bool>>,
}

impl Walk {
    fn id(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.ids.get(name) {
            return i;
        }
        let i = self.ids.len() as u32;
        self.ids.insert(name.to_string(), i);
        self.assigned.push(false);
        self.exposed.push(false);
        i
    }

    fn read(&mut self, name: &str) {
        let i = self.id(name) as usize;
        if !self.assigned[i] {
            self.exposed[i] = true;
        }
    }

    /// `name` assigned on every path through the innermost frame from here.
    fn assign(&mut self, name: &str) {
        let i = self.id(name);
        self.assign_id(i);
    }

    fn assign_id(&mut self, i: u32) {
        if !self.assigned[i as usize] {
            self.assigned[i as usize] = true;
            if let Some(f) = self.frames.last_mut() {
                f.assigned.push(i);
            }
        }
    }

    /// The innermost frame's open branch ends: what it assigned is counted, then forgotten
    /// (the next branch starts from the state before the construct).
    fn end_branch(&mut self) {
        let Some(f) = self.frames.last_mut() else {
            return;
        };
        if !f.open {
            return;
        }
        f.ended += 1;
        for i in f.assigned.drain(..) {
            self.assigned[i as usize] = false;
            *f.counts.entry(i).or_insert(0) += 1;
        }
    }

    /// The innermost frame closes: what it assigned is forgotten, but for a construct with
    /// a default branch, what every branch assigned stays assigned around it.
    fn pop(&mut self) {
        let Some(mut f) = self.frames.pop() else {
            return;
        };
        for i in f.assigned.drain(..) {
            self.assigned[i as usize] = false;
        }
        if matches!(f.kind, Construct::Branches(_)) && f.default {
            let mut all: Vec<u32> = f
                .counts
                .iter()
                .filter(|&(_, &n)| n == f.ended)
                .map(|(&i, _)| i)
                .collect();
            all.sort_unstable();
            for i in all {
                self.assign_id(i);
            }
        }
    }

    /// Statement `k`, or the action of its logical `if`, starting at token `first`, as a
    /// jump in the walk of [`assigned_every_iteration`]: false where it may end the
    /// iteration elsewhere than at its end or a `cycle` of the loop (which cuts what is
    /// assigned); a `cycle` or `exit` of a loop inside changes nothing. Other walks: true
    /// (a jump only leaves paths out).
    fn jump(&mut self, src: &str, front: &Front, k: usize, first: usize) -> bool {
        let lx = &front.lexed;
        let w = lx.lower(src, first);
        if !self.every
            || !["cycle", "exit", "return", "stop", "error", "go", "goto"].contains(&w.as_str())
        {
            return true;
        }
        if w != "cycle" && w != "exit" {
            return false;
        }
        let st = &front.structure;
        let name = (first + 1 < lx.stmts[k].toks().end).then(|| lx.lower(src, first + 1));
        // The loop it cycles or exits: named, or the innermost.
        let target = self.frames.iter().rposition(|f| match f.kind {
            Construct::Loop { stmt, .. } => name.as_ref().is_none_or(|n| {
                st.stmts[stmt]
                    .name()
                    .is_some_and(|t| lx.lower(src, t) == *n)
            }),
            _ => false,
        });
        match target {
            Some(1) if w == "cycle" => {
                match &mut self.cut {
                    Some(c) => c.iter_mut().zip(&self.assigned).for_each(|(c, a)| *c &= *a),
                    None => self.cut = Some(self.assigned.clone()),
                }
                true
            }
            Some(l) => l > 1,
            None => false,
        }
    }

    /// Reads every name statement `k` mentions.
    fn read_all(&mut self, src: &str, front: &Front, k: usize) {
        let (lx, st) = (&front.lexed, &front.structure);
        for u in uses(src, lx, st, k..k + 1) {
            self.read(&u.name);
        }
    }

    /// Statement `k`; false where the range cannot be answered.
    fn statement(&mut self, src: &str, front: &Front, k: usize) -> bool {
        let (lx, st) = (&front.lexed, &front.structure);
        let kind = &st.stmts[k].kind;
        let top = self.frames.last().map(|f| f.kind);
        match kind {
            Kind::Assignment(eq) => {
                let whole = *eq == lx.stmts[k].toks().start + 1;
                let list = uses(src, lx, st, k..k + 1);
                // The value (and subscripts) first, then the variable.
                for u in &list {
                    if u.read || (u.written && !whole) {
                        self.read(&u.name);
                    }
                }
                if whole && let Some(u) = list.iter().find(|u| u.written) {
                    self.assign(&u.name.clone());
                }
            }
            Kind::Do(h) => {
                let Some(end) = st.loop_at(k).and_then(|l| st.loops[l].end()) else {
                    return false;
                };
                let list = uses(src, lx, st, k..k + 1);
                for u in &list {
                    if u.read {
                        self.read(&u.name);
                    }
                }
                match &h.control {
                    // Its variable is assigned before the first iteration, even of none.
                    DoControl::Counted { .. } => {
                        for u in list.iter().filter(|u| u.written) {
                            self.assign(&u.name);
                        }
                        self.frames
                            .push(Frame::new(Construct::Loop { stmt: k, end }));
                    }
                    // The indices are the construct's own.
                    DoControl::Concurrent(_) => {
                        self.frames
                            .push(Frame::new(Construct::Loop { stmt: k, end }));
                        for u in list.iter().filter(|u| u.written) {
                            self.assign(&u.name);
                        }
                    }
                    DoControl::While(_) | DoControl::Forever => {
                        self.frames
                            .push(Frame::new(Construct::Loop { stmt: k, end }));
                    }
                }
            }
            Kind::IfThen => {
                self.read_all(src, front, k);
                self.frames
                    .push(Frame::new(Construct::Branches(ConstructKind::If)));
            }
            Kind::ElseIf | Kind::Else if top == Some(Construct::Branches(ConstructKind::If)) => {
                self.end_branch();
                self.read_all(src, front, k);
                if let Some(f) = self.frames.last_mut() {
                    f.default |= matches!(kind, Kind::Else);
                }
            }
            Kind::Select => {
                self.read_all(src, front, k);
                self.frames
                    .push(Frame::new(Construct::Branches(ConstructKind::Select)));
            }
            Kind::Case if top == Some(Construct::Branches(ConstructKind::Select)) => {
                self.end_branch();
                self.read_all(src, front, k);
                let toks = lx.stmts[k].toks();
                let default = toks
                    .clone()
                    .skip(1)
                    .take(1)
                    .any(|t| lx.text(src, t).eq_ignore_ascii_case("default"));
                if let Some(f) = self.frames.last_mut() {
                    f.open = true;
                    f.default |= default;
                }
            }
            Kind::End(ConstructKind::Do) => {
                // Its loop closes after it (a labelled terminal statement runs first).
                if !top.is_some_and(|c| c.ends(k)) {
                    return false;
                }
            }
            Kind::End(c @ (ConstructKind::If | ConstructKind::Select)) => {
                if top != Some(Construct::Branches(*c)) {
                    return false;
                }
                self.end_branch();
                self.pop();
            }
            Kind::End(c) => {
                if top != Some(Construct::Other(*c)) {
                    return false;
                }
                self.pop();
            }
            Kind::IfStmt(action) => {
                // An assignment of the action may not run: its variable is not assigned
                // after it, and not read by it either.
                let action = *action;
                let whole = lx.text(src, action + 1) == "=";
                for u in uses(src, lx, st, k..k + 1) {
                    if u.read || !whole {
                        self.read(&u.name);
                    } else {
                        self.id(&u.name);
                    }
                }
                let t = Toks::new(src, lx, &lx.stmts[k]);
                let assignment = t
                    .designator(action)
                    .is_some_and(|d| matches!(t.text(d).as_ref(), "=" | "=>"));
                if !assignment && !self.jump(src, front, k, action) {
                    return false;
                }
            }
            Kind::Jump => {
                self.read_all(src, front, k);
                if !self.jump(src, front, k, lx.stmts[k].toks().start) {
                    return false;
                }
            }
            Kind::Block
            | Kind::Associate
            | Kind::Critical
            | Kind::ChangeTeam
            | Kind::WhereConstruct
            | Kind::ForallConstruct => {
                self.read_all(src, front, k);
                let Some(c) = kind.opens() else { return false };
                self.frames.push(Frame::new(Construct::Other(c)));
            }
            Kind::ElseWhere if top == Some(Construct::Other(ConstructKind::Where)) => {
                self.read_all(src, front, k);
            }
            Kind::Goto | Kind::ArithmeticIf => return false,
            other if other.is_spec() => {}
            Kind::Unit(_) | Kind::EndUnit(_) | Kind::Contains | Kind::ElseIf | Kind::Else => {
                return false;
            }
            Kind::Case | Kind::ElseWhere => return false,
            _ => self.read_all(src, front, k),
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answer for `v` over the program's `kernels loop` (from its `do` to the end): `do`
    /// statement `head`, body `body`.
    fn every_in(head: &str, body: &str, v: &str) -> bool {
        let src = format!(
            "subroutine s(n, a)\n  integer :: n, i, j, x\n  real :: a(n)\n  do k = 1, n\n  !$acc kernels loop independent\n  {head}\n{body}  end do\n  end do\n99 continue\nend subroutine\n"
        );
        let kind = crate::fortran::form::kind_of(std::path::Path::new("x.f90")).expect("Fortran");
        let front = Front::new(&src, kind, |_| Default::default());
        let at = src.find(&format!("  {head}")).expect("loop");
        let end = src.rfind("  end do").expect("end");
        assigned_every_iteration(&src, &front, at..end)
            .get(v)
            .copied()
            .unwrap_or(false)
    }

    fn every(body: &str, v: &str) -> bool {
        every_in("do i = 1, n", body, v)
    }

    #[test]
    fn assigned_every_iteration_of_the_loop() {
        let yes = [
            "    x = i\n    a(i) = x\n",
            "    if (a(i) > 10) then\n      x = i\n    else\n      x = -i\n    end if\n",
            "    select case (i)\n    case (1)\n      x = 1\n    case default\n      x = 2\n    end select\n",
            // A `format` is no jump's target.
            "    x = i\n10  format (i5)\n",
        ];
        for b in yes {
            assert!(every(b, "x"), "{b}");
        }
        let no = [
            "    if (a(i) > 10) x = i\n",
            "    if (a(i) > 10) then\n      x = i\n    end if\n",
            "    if (a(i) > 10) then\n      x = i\n    else if (a(i) < 0) then\n      x = -i\n    end if\n",
            "    select case (i)\n    case (1)\n      x = 1\n    case (2)\n      x = 2\n    end select\n",
            "    do j = 1, n\n      x = j\n    end do\n",
            "    a(i) = 0\n",
            "    x = i\n20  a(i) = 0\n",
        ];
        for b in no {
            assert!(!every(b, "x"), "{b}");
        }
    }

    /// A `cycle` of the loop ends an iteration: what is not assigned there is not assigned
    /// on every path. One of a loop inside, or an `exit` of it, changes nothing; a jump
    /// that leaves the loop (or a construct of its body) answers no.
    #[test]
    fn jumps_in_the_iteration() {
        let yes = [
            "    x = i\n    if (a(i) < 0) cycle\n    a(i) = x\n",
            "    if (a(i) > 10) then\n      x = i\n      if (a(i) > 20) cycle\n    else\n      x = -i\n    end if\n",
            "    if (a(i) > 10) then\n      x = i\n      cycle\n    end if\n    x = 0\n",
            "    do j = 1, n\n      if (a(j) < 0) cycle\n      if (a(j) > 1) exit\n    end do\n    x = i\n",
            "    x = i\n    do j = 1, n\n      if (a(j) < 0) cycle outer\n    end do\n",
            // Variables named like jump statements.
            "    exit = i\n    if (a(i) > 0) cycle = 1\n    stop(1) = 2\n    x = exit\n",
        ];
        for b in yes {
            assert!(every_in("outer: do i = 1, n", b, "x"), "{b}");
        }
        let no = [
            "    if (a(i) < 0) cycle\n    x = i\n",
            "    if (a(i) > 10) then\n      cycle\n    else\n      x = -i\n    end if\n",
            "    do j = 1, n\n      if (a(j) < 0) cycle outer\n      x = j\n    end do\n    x = i\n",
            "    x = i\n    if (a(i) < 0) exit\n",
            "    x = i\n    do j = 1, n\n      if (a(j) < 0) exit outer\n    end do\n",
            "    x = i\n    if (a(i) < 0) return\n",
            "    x = i\n    if (a(i) < 0) stop\n",
            "    x = i\n    if (a(i) < 0) go to 99\n",
            "    x = i\n    if (a(i) < 0) cycle other\n",
            "    b: if (a(i) > 10) then\n      if (a(i) > 20) exit b\n      x = i\n    else\n      x = -i\n    end if b\n",
        ];
        for b in no {
            assert!(!every_in("outer: do i = 1, n", b, "x"), "{b}");
        }
    }
}
