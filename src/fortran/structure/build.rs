//! Building the structure, statement by statement: program units, their specification and
//! execution parts, constructs and `do` loops (see [`super::Structure::new`]).

use super::Problem;
use super::{
    Builder, ConcurrentIndex, Construct, DoKind, DoLoop, OtherControl, Span32, Unit, bytes, opt32,
};
use crate::fortran::lex::{Lexed, Stmt};
use crate::fortran::stmt::{
    Classified, ConstructKind, DoControl, DoHead, Kind, Toks, UnitKind, classify,
};
use std::ops::Range;

impl Builder<'_> {
    pub(super) fn problem(&mut self, offset: usize, message: String) {
        self.s.problems.push(Problem {
            offset,
            message,
            related: None,
            rule: None,
        });
    }

    pub(super) fn stmt(&self, i: usize) -> &Stmt {
        &self.lx.stmts[i]
    }

    pub(super) fn name_of(&self, tok: usize) -> String {
        self.lx.lower(self.src, tok)
    }

    pub(super) fn statement(&mut self, i: usize) {
        let st = self.stmt(i).clone();
        let c = classify(self.src, self.lx, &st);
        let kind = c.kind.clone();
        let at = st.span().start;
        match &kind {
            Kind::Unit(u) => self.open_unit(i, *u, &c),
            Kind::EndUnit(u) => {
                self.ensure_unit(i);
                self.close_unit(i, *u);
            }
            _ => self.ensure_unit(i),
        }
        if let Some(&u) = self.units.last() {
            self.s.stmt_unit[i] = u as u32;
        }
        let top = self.constructs.last().copied();
        let top_kind = top.map(|t| self.all_constructs[t].kind);
        match &kind {
            Kind::Contains if top_kind == Some(ConstructKind::Type) => {}
            Kind::Contains => {
                if let Some(&u) = self.units.last() {
                    self.close_constructs_of_unit(at);
                    let unit = &mut self.s.units[u];
                    unit.contains = Some(i);
                    if unit.exec.start == usize::MAX {
                        unit.spec.end = i;
                    } else {
                        unit.exec.end = i;
                    }
                }
            }
            Kind::ElseIf | Kind::Else if top_kind != Some(ConstructKind::If) => {
                self.problem(at, "'else' outside an 'if' construct".into());
            }
            Kind::Case if top_kind != Some(ConstructKind::Select) => {
                self.problem(at, "'case' outside a 'select' construct".into());
            }
            Kind::ElseWhere if top_kind != Some(ConstructKind::Where) => {
                self.problem(at, "'elsewhere' outside a 'where' construct".into());
            }
            Kind::End(k) => self.end_construct(i, *k),
            _ => {}
        }
        if let Some(k) = kind.opens() {
            self.open_construct(i, k, &c);
        }
        // The execution part starts at the first statement that is not a specification.
        let executable = !kind.is_spec()
            && !matches!(kind, Kind::Unit(_) | Kind::EndUnit(_) | Kind::Contains)
            && !self.in_spec_block();
        if executable && let Some(&u) = self.units.last() {
            let unit = &mut self.s.units[u];
            if unit.exec.start == usize::MAX && unit.contains.is_none() {
                unit.spec.end = i;
                unit.exec.start = i;
            }
        }
        self.s.stmts.push(c);
        // A labelled statement ends the labelled `do` loops waiting for its label. A
        // `continue` ending them is their `end do`: it does nothing in the iterations, and
        // what follows it (a directive, a statement) is after the loops.
        if let Some(label) = st.label.as_ref().map(|l| l.value) {
            let end_do = matches!(kind, Kind::End(ConstructKind::Do) | Kind::Continue);
            let mut closed = false;
            while let Some(&top) = self.constructs.last() {
                let waiting = self.construct_loop[top] != u32::MAX
                    && self.s.loops[self.construct_loop[top] as usize].label() == Some(label);
                if !waiting {
                    break;
                }
                self.close_top_construct(i, end_do);
                closed = true;
            }
            if closed
                && end_do
                && let Some(c) = self.s.stmts.last_mut()
            {
                c.kind = Kind::End(ConstructKind::Do);
            }
        }
    }

    /// Inside an `interface`, `type` or `enum` block (its statements declare).
    pub(super) fn in_spec_block(&self) -> bool {
        self.constructs.last().is_some_and(|&c| {
            matches!(
                self.all_constructs[c].kind,
                ConstructKind::Interface | ConstructKind::Type | ConstructKind::Enum
            )
        })
    }

    /// A statement outside any unit starts a main program without `program` statement.
    pub(super) fn ensure_unit(&mut self, i: usize) {
        if !self.units.is_empty() {
            return;
        }
        // Its directives before that statement (a file that opens with them) are its own:
        // it begins where the unit before it ended.
        let at = self.s.units.iter().map(|u| u.span.end).max().unwrap_or(0);
        self.s.units.push(Unit {
            kind: UnitKind::Program,
            name: None,
            header: None,
            end: None,
            spec: i..i,
            exec: usize::MAX..usize::MAX,
            contains: None,
            parent: None,
            interface: false,
            span: at..at,
        });
        let u = self.s.units.len() - 1;
        self.units.push(u);
        for (k, r) in self.s.regions.iter_mut().enumerate() {
            if r.unit().is_none() && self.sites[k].span.start >= at {
                r.unit = u as u32;
            }
        }
        for o in self.acc.iter_mut().filter(|o| o.unit.is_none()) {
            o.unit = Some(u);
        }
    }

    pub(super) fn open_unit(&mut self, i: usize, kind: UnitKind, c: &Classified) {
        let t = Toks::new(self.src, self.lx, self.stmt(i));
        let mut k = c.rest();
        // `submodule (parent) name`: the name follows the parenthesis.
        if kind == UnitKind::Submodule && t.text(k) == "(" {
            k = t.after(k).unwrap_or(k);
        }
        let name = t.is_name(k).then(|| self.name_of(k));
        let interface = self
            .constructs
            .last()
            .is_some_and(|&t| self.all_constructs[t].kind == ConstructKind::Interface);
        let at = self.stmt(i).span().start;
        self.s.units.push(Unit {
            kind,
            name,
            header: Some(i),
            end: None,
            spec: i + 1..i + 1,
            exec: usize::MAX..usize::MAX,
            contains: None,
            parent: self.units.last().copied(),
            interface,
            span: at..at,
        });
        self.units.push(self.s.units.len() - 1);
    }

    /// Constructs and OpenACC regions left open in the current unit: reported, closed.
    pub(super) fn close_constructs_of_unit(&mut self, at: usize) {
        let unit = self.units.last().copied();
        let header = unit
            .and_then(|u| self.s.units[u].header)
            .map_or(0, |h| self.stmt(h).span().start);
        while let Some(&top) = self.constructs.last() {
            let begin = self.stmt(self.all_constructs[top].begin).span().start;
            if begin < header {
                break;
            }
            let what = construct_word(self.all_constructs[top].kind);
            self.problem(
                begin,
                format!("this {what} is not closed before the end of its program unit"),
            );
            self.close_top_construct(usize::MAX, false);
        }
        while let Some(open) = self.acc.last() {
            if open.unit != unit {
                break;
            }
            let (site, name) = (open.site, open.name.clone());
            self.problem(
                self.sites[site].span.start,
                format!("'acc {name}' has no 'end {name}' before the end of its program unit"),
            );
            self.acc.pop();
        }
        let _ = at;
    }

    pub(super) fn close_unit(&mut self, i: usize, kind: Option<UnitKind>) {
        let at = self.stmt(i).span().start;
        self.close_constructs_of_unit(at);
        let Some(u) = self.units.pop() else {
            return;
        };
        let unit = &mut self.s.units[u];
        if let Some(k) = kind
            && k != unit.kind
        {
            let (want, got) = (unit_word(unit.kind), unit_word(k));
            self.problem(at, format!("'end {got}' ends a {want}"));
        }
        let unit = &mut self.s.units[u];
        unit.end = Some(i);
        if unit.exec.start == usize::MAX {
            if unit.contains.is_none() {
                unit.spec.end = i;
            }
            unit.exec = i..i;
        } else if unit.contains.is_none() {
            unit.exec.end = i;
        }
        let end = self.lx.stmts[i].span().end;
        let start = unit
            .header
            .map_or(unit.span.start, |h| self.lx.stmts[h].span().start);
        unit.span = start..end;
    }

    pub(super) fn open_construct(&mut self, i: usize, kind: ConstructKind, c: &Classified) {
        let index = self.all_constructs.len();
        let name = c.name().map(|t| self.name_of(t));
        self.all_constructs.push(Construct {
            kind,
            begin: i,
            end: None,
            parent: self.constructs.last().copied(),
            name,
        });
        self.construct_loop.push(u32::MAX);
        self.constructs.push(index);
        if let Kind::Do(head) = &c.kind {
            self.new_loop(i, index, head);
        }
    }

    pub(super) fn new_loop(&mut self, i: usize, construct: usize, head: &DoHead) {
        let lx = self.lx;
        let st = self.stmt(i);
        let mut l = DoLoop {
            stmt: i as u32,
            end: u32::MAX,
            kind: DoKind::Forever,
            label: head.label.unwrap_or(u32::MAX),
            var: None,
            var_span: Span32::NONE,
            lo: Span32::NONE,
            hi: Span32::NONE,
            step: Span32::NONE,
            other: None,
            body_end: i as u32 + 1,
            span: [st.span().start as u32, st.span().end as u32],
            parent: opt32(self.open_loops.last().copied()),
        };
        match &head.control {
            DoControl::Counted { var, lo, hi, step } => {
                l.kind = DoKind::Counted;
                l.var = Some(self.name_of(*var).into());
                l.var_span = Span32::new(Some(lx.tokens[*var].range()));
                l.lo = Span32::new(bytes(lx, lo));
                l.hi = Span32::new(bytes(lx, hi));
                l.step = Span32::new(step.as_ref().and_then(|s| bytes(lx, s)));
            }
            DoControl::While(c) => {
                l.kind = DoKind::While;
                l.other = Some(Box::new(OtherControl {
                    condition: bytes(lx, c),
                    ..OtherControl::default()
                }));
            }
            DoControl::Concurrent(h) => {
                l.kind = DoKind::Concurrent;
                let (indices, mask) = concurrent_header(self.src, lx, st, h.clone());
                l.other = Some(Box::new(OtherControl {
                    concurrent: indices,
                    mask,
                    condition: None,
                }));
            }
            DoControl::Forever => {}
        }
        let index = self.s.loops.len();
        self.s.loop_at[i] = index as u32;
        self.construct_loop[construct] = index as u32;
        self.open_loops.push(index);
        self.s.loops.push(l);
    }

    /// Close the innermost construct at statement `i` (`usize::MAX`: left open), which is
    /// an `end` statement (`end_stmt`) or a labelled `do`'s terminal statement.
    pub(super) fn close_top_construct(&mut self, i: usize, end_stmt: bool) {
        let Some(top) = self.constructs.pop() else {
            return;
        };
        let l = self.construct_loop[top];
        if l != u32::MAX {
            self.open_loops.pop();
        }
        if i == usize::MAX {
            return;
        }
        self.all_constructs[top].end = Some(i);
        // OpenACC regions opened inside it must have ended with it.
        let begin = self.stmt(self.all_constructs[top].begin).span().start;
        while let Some(open) = self.acc.last() {
            if self.sites[open.site].span.start < begin {
                break;
            }
            let name = open.name.clone();
            let at = self.sites[open.site].span.start;
            let what = construct_word(self.all_constructs[top].kind);
            self.problem(
                at,
                format!("'acc {name}' has no 'end {name}' before the end of the {what} it is in"),
            );
            self.acc.pop();
        }
        if l != u32::MAX {
            let st_end = self.lx.stmts[i].span().end;
            let lp = &mut self.s.loops[l as usize];
            lp.end = i as u32;
            // A labelled terminal statement other than `end do` (or `continue`) runs in each
            // iteration.
            lp.body_end = (if end_stmt { i } else { i + 1 }) as u32;
            lp.span[1] = st_end as u32;
        }
    }

    pub(super) fn end_construct(&mut self, i: usize, kind: ConstructKind) {
        let at = self.stmt(i).span().start;
        let what = construct_word(kind);
        let Some(pos) = self
            .constructs
            .iter()
            .rposition(|&c| self.all_constructs[c].kind == kind)
        else {
            self.problem(
                at,
                format!("'end {}' without an open {what}", end_word(kind)),
            );
            return;
        };
        // An OpenACC region opened inside the construct is still open: the `end` statement
        // is out of place (gfortran reads it so), and the construct stays open for the
        // statement that closes it after the region's end directive.
        let begin = self
            .stmt(self.all_constructs[self.constructs[pos]].begin)
            .span()
            .start;
        if let Some(open) = self.acc.last()
            && self.sites[open.site].span.start > begin
        {
            let name = open.name.clone();
            let end = end_word(kind);
            self.problem(
                at,
                format!("'end {end}' inside the 'acc {name}' region opened in this {what}: 'end {name}' must come first"),
            );
            return;
        }
        while self.constructs.len() > pos + 1 {
            let top = self.constructs[self.constructs.len() - 1];
            let begin = self.stmt(self.all_constructs[top].begin).span().start;
            let inner = construct_word(self.all_constructs[top].kind);
            self.problem(
                begin,
                format!("this {inner} is not closed before 'end {}'", end_word(kind)),
            );
            self.close_top_construct(usize::MAX, false);
        }
        self.close_top_construct(i, true);
    }

    /// At the end of the file: what is still open.
    pub(super) fn finish(&mut self) {
        let end = self.src.len();
        while !self.units.is_empty() {
            let u = self.units[self.units.len() - 1];
            if self.s.units[u].header.is_some() {
                let at = self.s.units[u]
                    .header
                    .map_or(0, |h| self.stmt(h).span().start);
                let what = unit_word(self.s.units[u].kind);
                self.problem(at, format!("this {what} has no 'end' statement"));
            }
            self.close_constructs_of_unit(end);
            self.units.pop();
            let unit = &mut self.s.units[u];
            let last = self.lx.stmts.len();
            if unit.exec.start == usize::MAX {
                if unit.contains.is_none() {
                    unit.spec.end = last;
                }
                unit.exec = last..last;
            } else if unit.contains.is_none() {
                unit.exec.end = last;
            }
            unit.span.end = self.lx.stmts.last().map_or(unit.span.end, |s| s.span().end);
        }
        for open in std::mem::take(&mut self.acc) {
            self.problem(
                self.sites[open.site].span.start,
                format!("'acc {0}' has no 'end {0}'", open.name),
            );
        }
    }
}

/// The `do concurrent` header's indices and mask (`h`: tokens inside its parentheses).
fn concurrent_header(
    src: &str,
    lx: &Lexed,
    st: &Stmt,
    h: Range<usize>,
) -> (Vec<ConcurrentIndex>, Option<Range<usize>>) {
    let t = Toks::new(src, lx, st);
    let mut start = h.start;
    // `integer :: i = …`: a type for the indices.
    if let Some(c) = (h.start..h.end).find(|&k| t.text(k) == "::") {
        start = c + 1;
    }
    let mut indices = Vec::new();
    let mut mask = None;
    while start < h.end {
        let comma = t
            .find_top(start, ",")
            .filter(|&c| c < h.end)
            .unwrap_or(h.end);
        let piece = start..comma;
        if t.is_name(start) && t.text(start + 1) == "=" {
            let c1 = t.find_top(start + 2, ":").filter(|&c| c < comma);
            let c2 = c1.and_then(|c| t.find_top(c + 1, ":").filter(|&c| c < comma));
            if let Some(c1) = c1 {
                let lo = bytes(lx, &(start + 2..c1));
                let hi = bytes(lx, &(c1 + 1..c2.unwrap_or(comma)));
                if let (Some(lo), Some(hi)) = (lo, hi) {
                    indices.push(ConcurrentIndex {
                        var: lx.lower(src, start),
                        var_span: lx.tokens[start].range(),
                        lo,
                        hi,
                        step: c2.and_then(|c| bytes(lx, &(c + 1..comma))),
                    });
                }
            }
        } else {
            mask = bytes(lx, &piece);
        }
        start = comma + 1;
    }
    (indices, mask)
}

fn construct_word(k: ConstructKind) -> &'static str {
    match k {
        ConstructKind::Do => "do loop",
        ConstructKind::If => "if construct",
        ConstructKind::Select => "select construct",
        ConstructKind::Block => "block construct",
        ConstructKind::Associate => "associate construct",
        ConstructKind::Critical => "critical construct",
        ConstructKind::Where => "where construct",
        ConstructKind::Forall => "forall construct",
        ConstructKind::Team => "change team construct",
        ConstructKind::Interface => "interface block",
        ConstructKind::Type => "derived type definition",
        ConstructKind::Enum => "enum definition",
    }
}

fn end_word(k: ConstructKind) -> &'static str {
    match k {
        ConstructKind::Do => "do",
        ConstructKind::If => "if",
        ConstructKind::Select => "select",
        ConstructKind::Block => "block",
        ConstructKind::Associate => "associate",
        ConstructKind::Critical => "critical",
        ConstructKind::Where => "where",
        ConstructKind::Forall => "forall",
        ConstructKind::Team => "team",
        ConstructKind::Interface => "interface",
        ConstructKind::Type => "type",
        ConstructKind::Enum => "enum",
    }
}

fn unit_word(k: UnitKind) -> &'static str {
    match k {
        UnitKind::Program => "program",
        UnitKind::Module => "module",
        UnitKind::Submodule => "submodule",
        UnitKind::Subroutine => "subroutine",
        UnitKind::Function => "function",
        UnitKind::BlockData => "block data",
    }
}

#[cfg(test)]
mod tests {
    use super::DoLoop;

    /// One per loop: 160 bytes and a `String`, before the indices and offsets were 32-bit, the
    /// body's start derived from the `do` statement and its construct dropped.
    #[test]
    fn a_loop_is_88_bytes() {
        assert!(std::mem::size_of::<DoLoop>() <= 88);
    }
}
