//! The structure of a Fortran file around its directives: program units (with their
//! specification and execution parts), constructs, `do` loops, and what each OpenACC
//! directive applies to.
//!
//! - A block construct (`parallel`, `kernels`, `serial`, `data`, `host_data`) runs to its
//!   `end` directive, which must close it in the same program unit and the same Fortran
//!   construct it was opened in.
//! - A loop directive (`loop`, `parallel loop`, …) applies to the `do` statement after it,
//!   and with `collapse(n)` or `tile(…)` to the tightly nested loops below it; a combined
//!   directive's `end … loop` may follow the loop's end.
//! - `atomic` applies to the statement after it, or to the two before `end atomic`.
//!
//! Only other directive sites (`!$omp`, `!$` lines), comment, blank and preprocessor lines
//! may stand between a directive and what it applies to. Every mismatch is a [`Problem`]
//! at the directive or statement concerned.

use super::Problem;
use super::lex::{Lexed, Stmt};
use super::lines::Sentinel;
use super::sites::Site;
use super::stmt::{Classified, ConstructKind, DoControl, Kind, Toks, UnitKind, classify};
use std::ops::Range;

/// What the structure needs to know of each site (see [`Structure::new`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SiteInfo {
    /// The canonical OpenACC directive name (`parallel loop`, `end data`); None for other
    /// sentinels and for text that names no directive.
    pub name: Option<String>,
    /// Loop directives: how many loops of the nest it applies to (`collapse(n)`, the
    /// number of `tile` sizes; 1 otherwise).
    pub nest: usize,
}

/// A program unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub kind: UnitKind,
    /// Lower case; None for a main program without a `program` statement.
    pub name: Option<String>,
    /// Its first statement (None: a main program without `program`).
    pub header: Option<usize>,
    /// Its `end` statement.
    pub end: Option<usize>,
    /// The specification part (statement indices, after the header).
    pub spec: Range<usize>,
    /// The execution part (empty for modules and interface bodies).
    pub exec: Range<usize>,
    /// The `contains` statement.
    pub contains: Option<usize>,
    /// The host unit (a module for a module procedure, a program or procedure for an
    /// internal procedure; an interface body's host is the unit holding the interface).
    pub parent: Option<usize>,
    /// An interface body (a declaration of a procedure defined elsewhere).
    pub interface: bool,
    /// Bytes from its first statement to the end of its `end` statement.
    pub span: Range<usize>,
}

/// A construct (`do`, `if`, `select`, `block`, …, `interface` and `type` blocks too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Construct {
    pub kind: ConstructKind,
    pub begin: usize,
    /// The statement that ends it (`end do`, or a labelled `do`'s terminal statement).
    pub end: Option<usize>,
    pub parent: Option<usize>,
    /// The construct name (`outer: do`), lower case.
    pub name: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DoKind {
    /// `do i = lo, hi [, step]`.
    Counted,
    /// `do concurrent (…)`.
    Concurrent,
    /// `do while (…)`.
    While,
    /// `do` without control.
    Forever,
}

/// One index of a `do concurrent` header (`i = lo:hi[:step]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConcurrentIndex {
    pub var: String,
    pub var_span: Range<usize>,
    pub lo: Range<usize>,
    pub hi: Range<usize>,
    pub step: Option<Range<usize>>,
}

/// The shape of a `do` loop. Byte ranges are file offsets of the expressions as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoLoop {
    /// Its construct in [`Structure::constructs`].
    pub construct: usize,
    /// The `do` statement.
    pub stmt: usize,
    /// The statement that ends it: `end do`, or the labelled statement that terminates a
    /// `do 10 …` loop (several loops may share it).
    pub end: Option<usize>,
    pub kind: DoKind,
    /// The `do 10` label.
    pub label: Option<u32>,
    /// The control variable, lower case, and where it is written.
    pub var: Option<String>,
    pub var_span: Option<Range<usize>>,
    pub lo: Option<Range<usize>>,
    pub hi: Option<Range<usize>>,
    pub step: Option<Range<usize>>,
    /// `do concurrent`: its indices and its mask.
    pub concurrent: Vec<ConcurrentIndex>,
    pub mask: Option<Range<usize>>,
    /// `do while`: the condition.
    pub condition: Option<Range<usize>>,
    /// The statements executed in each iteration: after the `do` statement up to its `end
    /// do`, or up to and including a labelled terminal statement other than `end do`.
    pub body: Range<usize>,
    /// Bytes from the `do` statement (its label or construct name) to the end of its end
    /// statement.
    pub span: Range<usize>,
    /// The loop it is directly in.
    pub parent: Option<usize>,
}

/// What an OpenACC directive applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applies {
    /// A block construct: the statements up to its `end` directive (`end`: that site).
    Block {
        body: Range<usize>,
        end: Option<usize>,
    },
    /// A loop directive: the loops of the nest (indices into [`Structure::loops`],
    /// outermost first; empty when no `do` follows) and the combined directive's `end`.
    Loop {
        loops: Vec<usize>,
        end: Option<usize>,
    },
    /// `atomic`: its statement(s) and the `end atomic` site.
    Atomic {
        body: Range<usize>,
        end: Option<usize>,
    },
    /// An `end` directive and the site it closes.
    End { opener: Option<usize> },
    /// An executable directive that applies to nothing (`update`, `wait`, `enter data`, …).
    Standalone,
    /// `declare` and `routine`.
    Declarative,
    /// Not an OpenACC directive (`!$omp`, `!$`), or text naming no directive.
    Nothing,
}

/// One directive site in its context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    pub applies: Applies,
    /// The program unit it is in.
    pub unit: Option<usize>,
    /// The innermost construct it is in.
    pub construct: Option<usize>,
    /// The OpenACC site whose region holds it.
    pub parent: Option<usize>,
    /// Bytes of the directive and what it applies to, through its end directive.
    pub extent: Range<usize>,
}

/// The structure of one file.
#[derive(Debug, Clone, Default)]
pub struct Structure {
    /// Per statement.
    pub stmts: Vec<Classified>,
    /// Per statement: the unit it belongs to (`u32::MAX`: none).
    pub stmt_unit: Vec<u32>,
    pub units: Vec<Unit>,
    pub constructs: Vec<Construct>,
    pub loops: Vec<DoLoop>,
    /// Per site (the same indices as the sites).
    pub regions: Vec<Region>,
    pub problems: Vec<Problem>,
    /// Per statement: the loop it starts (`u32::MAX`: none).
    loop_at: Vec<u32>,
    /// Per construct: its loop (`u32::MAX`: not a `do`).
    construct_loop: Vec<u32>,
}

/// A statement or a site, in file order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    Stmt(usize),
    Site(usize),
}

const BLOCKS: [&str; 5] = ["parallel", "kernels", "serial", "data", "host_data"];
const LOOPS: [&str; 4] = ["loop", "parallel loop", "kernels loop", "serial loop"];
const STANDALONE: [&str; 8] = [
    "enter data",
    "exit data",
    "update",
    "wait",
    "cache",
    "init",
    "shutdown",
    "set",
];

/// An open OpenACC block construct.
struct OpenAcc {
    site: usize,
    name: String,
    /// The innermost construct open when it was opened.
    construct: Option<usize>,
    unit: Option<usize>,
}

struct Builder<'a> {
    src: &'a str,
    lx: &'a Lexed,
    sites: &'a [Site],
    infos: &'a [SiteInfo],
    s: Structure,
    units: Vec<usize>,
    constructs: Vec<usize>,
    acc: Vec<OpenAcc>,
    items: Vec<Item>,
    /// Per statement and per site: its index in `items`.
    stmt_item: Vec<usize>,
    site_item: Vec<usize>,
    /// The loops open, innermost last.
    open_loops: Vec<usize>,
}

impl Structure {
    /// The structure of a file: its statements (`lx`), its sites and what is known of
    /// each site (`infos`, one per site).
    pub fn new(src: &str, lx: &Lexed, sites: &[Site], infos: &[SiteInfo]) -> Structure {
        let mut items = Vec::with_capacity(lx.stmts.len() + sites.len());
        let (mut a, mut b) = (0, 0);
        while a < lx.stmts.len() || b < sites.len() {
            let stmt_first = match (lx.stmts.get(a), sites.get(b)) {
                (Some(st), Some(si)) => st.span.start <= si.span.start,
                (Some(_), None) => true,
                _ => false,
            };
            if stmt_first {
                items.push(Item::Stmt(a));
                a += 1;
            } else {
                items.push(Item::Site(b));
                b += 1;
            }
        }
        let mut stmt_item = vec![0; lx.stmts.len()];
        let mut site_item = vec![0; sites.len()];
        for (k, it) in items.iter().enumerate() {
            match *it {
                Item::Stmt(i) => stmt_item[i] = k,
                Item::Site(i) => site_item[i] = k,
            }
        }
        let mut bld = Builder {
            src,
            lx,
            sites,
            infos,
            s: Structure {
                stmts: Vec::with_capacity(lx.stmts.len()),
                stmt_unit: vec![u32::MAX; lx.stmts.len()],
                loop_at: vec![u32::MAX; lx.stmts.len()],
                regions: Vec::with_capacity(sites.len()),
                ..Structure::default()
            },
            units: Vec::new(),
            constructs: Vec::new(),
            acc: Vec::new(),
            items,
            stmt_item,
            site_item,
            open_loops: Vec::new(),
        };
        for k in 0..bld.items.len() {
            match bld.items[k] {
                Item::Stmt(i) => bld.statement(i),
                Item::Site(i) => bld.site(i),
            }
        }
        bld.finish();
        bld.associate();
        bld.nest();
        bld.s.problems.sort_by_key(|p| p.offset);
        bld.s
    }

    /// The loop a `do` statement starts.
    pub fn loop_at(&self, stmt: usize) -> Option<usize> {
        self.loop_at
            .get(stmt)
            .copied()
            .filter(|&l| l != u32::MAX)
            .map(|l| l as usize)
    }

    /// The unit statement `stmt` belongs to.
    pub fn unit_of(&self, stmt: usize) -> Option<usize> {
        self.stmt_unit
            .get(stmt)
            .copied()
            .filter(|&u| u != u32::MAX)
            .map(|u| u as usize)
    }

    /// The loops tightly nested from `outer`, at most `n` of them (outermost first), or
    /// why the nest is shorter (`offset` and `related`: where it breaks). `lx` and `sites`
    /// as given to `new`.
    pub fn tight_nest(
        &self,
        lx: &Lexed,
        sites: &[Site],
        outer: usize,
        n: usize,
    ) -> Result<Vec<usize>, Problem> {
        let mut out = vec![outer];
        while out.len() < n {
            let l = &self.loops[*out.last().unwrap_or(&outer)];
            let depth = out.len();
            let problem = |offset: usize, why: &str| Problem {
                offset,
                related: Some(offset),
                message: format!(
                    "the loop directive asks for {n} nested loops, but the loop at depth {depth} {why}"
                ),
            };
            let inner_stmt = l.stmt + 1;
            let Some(inner) = self.loop_at(inner_stmt).filter(|_| inner_stmt < l.body.end) else {
                let at = lx
                    .stmts
                    .get(inner_stmt)
                    .map_or(l.span.end, |s| s.span.start);
                return Err(problem(at, "holds no do loop as its first statement"));
            };
            let m = &self.loops[inner];
            // Tightly nested: nothing between the two `do` statements and nothing between
            // the inner loop's end and the outer loop's end.
            let gap = lx.stmts[l.stmt].span.end..lx.stmts[inner_stmt].span.start;
            let from = sites.partition_point(|s| s.span.start < gap.start);
            if let Some(site) = sites[from..]
                .iter()
                .take_while(|s| s.span.start < gap.end)
                .find(|s| s.sentinel == Sentinel::Acc)
            {
                return Err(problem(
                    site.span.start,
                    "is separated from the next by a directive",
                ));
            }
            let tight_end = match (m.end, l.end) {
                (Some(me), Some(le)) => me == le || me + 1 == le,
                _ => false,
            };
            if !tight_end {
                let at = m
                    .end
                    .and_then(|e| lx.stmts.get(e + 1))
                    .map_or(m.span.end, |s| s.span.start);
                return Err(problem(at, "has statements after the inner loop"));
            }
            out.push(inner);
        }
        Ok(out)
    }
}

/// The bytes of tokens `r` (non-empty).
fn bytes(lx: &Lexed, r: &Range<usize>) -> Option<Range<usize>> {
    (!r.is_empty()).then(|| lx.tokens[r.start].start..lx.tokens[r.end - 1].end)
}

impl Builder<'_> {
    fn problem(&mut self, offset: usize, message: String) {
        self.s.problems.push(Problem {
            offset,
            message,
            related: None,
        });
    }

    fn stmt(&self, i: usize) -> &Stmt {
        &self.lx.stmts[i]
    }

    fn name_of(&self, tok: usize) -> String {
        self.lx.lower(self.src, tok)
    }

    fn statement(&mut self, i: usize) {
        let st = self.stmt(i).clone();
        let c = classify(self.src, self.lx, &st);
        let kind = c.kind.clone();
        let at = st.span.start;
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
        let top_kind = top.map(|t| self.s.constructs[t].kind);
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
        // A labelled statement ends the labelled `do` loops waiting for its label.
        if let Some(label) = st.label.as_ref().map(|l| l.value) {
            let end_do = matches!(kind, Kind::End(ConstructKind::Do));
            while let Some(&top) = self.constructs.last() {
                let waiting = self.s.construct_loop[top] != u32::MAX
                    && self.s.loops[self.s.construct_loop[top] as usize].label == Some(label);
                if !waiting {
                    break;
                }
                self.close_top_construct(i, end_do);
            }
        }
    }

    /// Inside an `interface`, `type` or `enum` block (its statements declare).
    fn in_spec_block(&self) -> bool {
        self.constructs.last().is_some_and(|&c| {
            matches!(
                self.s.constructs[c].kind,
                ConstructKind::Interface | ConstructKind::Type | ConstructKind::Enum
            )
        })
    }

    /// A statement outside any unit starts a main program without `program` statement.
    fn ensure_unit(&mut self, i: usize) {
        if !self.units.is_empty() {
            return;
        }
        let at = self.stmt(i).span.start;
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
        self.units.push(self.s.units.len() - 1);
    }

    fn open_unit(&mut self, i: usize, kind: UnitKind, c: &Classified) {
        let t = Toks::new(self.src, self.lx, self.stmt(i));
        let mut k = c.rest;
        // `submodule (parent) name`: the name follows the parenthesis.
        if kind == UnitKind::Submodule && t.text(k) == "(" {
            k = t.after(k).unwrap_or(k);
        }
        let name = t.is_name(k).then(|| self.name_of(k));
        let interface = self
            .constructs
            .last()
            .is_some_and(|&t| self.s.constructs[t].kind == ConstructKind::Interface);
        let at = self.stmt(i).span.start;
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
    fn close_constructs_of_unit(&mut self, at: usize) {
        let unit = self.units.last().copied();
        let header = unit
            .and_then(|u| self.s.units[u].header)
            .map_or(0, |h| self.stmt(h).span.start);
        while let Some(&top) = self.constructs.last() {
            let begin = self.stmt(self.s.constructs[top].begin).span.start;
            if begin < header {
                break;
            }
            let what = construct_word(self.s.constructs[top].kind);
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

    fn close_unit(&mut self, i: usize, kind: Option<UnitKind>) {
        let at = self.stmt(i).span.start;
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
        let end = self.lx.stmts[i].span.end;
        let start = unit
            .header
            .map_or(unit.span.start, |h| self.lx.stmts[h].span.start);
        unit.span = start..end;
    }

    fn open_construct(&mut self, i: usize, kind: ConstructKind, c: &Classified) {
        let index = self.s.constructs.len();
        let name = c.name.map(|t| self.name_of(t));
        self.s.constructs.push(Construct {
            kind,
            begin: i,
            end: None,
            parent: self.constructs.last().copied(),
            name,
        });
        self.s.construct_loop.push(u32::MAX);
        self.constructs.push(index);
        if let Kind::Do(head) = &c.kind {
            self.new_loop(i, index, head);
        }
    }

    fn new_loop(&mut self, i: usize, construct: usize, head: &super::stmt::DoHead) {
        let lx = self.lx;
        let st = self.stmt(i);
        let mut l = DoLoop {
            construct,
            stmt: i,
            end: None,
            kind: DoKind::Forever,
            label: head.label,
            var: None,
            var_span: None,
            lo: None,
            hi: None,
            step: None,
            concurrent: Vec::new(),
            mask: None,
            condition: None,
            body: i + 1..i + 1,
            span: st.span.clone(),
            parent: self.open_loops.last().copied(),
        };
        match &head.control {
            DoControl::Counted { var, lo, hi, step } => {
                l.kind = DoKind::Counted;
                l.var = Some(self.name_of(*var));
                l.var_span = Some(lx.tokens[*var].range());
                l.lo = bytes(lx, lo);
                l.hi = bytes(lx, hi);
                l.step = step.as_ref().and_then(|s| bytes(lx, s));
            }
            DoControl::While(c) => {
                l.kind = DoKind::While;
                l.condition = bytes(lx, c);
            }
            DoControl::Concurrent(h) => {
                l.kind = DoKind::Concurrent;
                let (indices, mask) = concurrent_header(self.src, lx, st, h.clone());
                l.concurrent = indices;
                l.mask = mask;
            }
            DoControl::Forever => {}
        }
        let index = self.s.loops.len();
        self.s.loop_at[i] = index as u32;
        self.s.construct_loop[construct] = index as u32;
        self.open_loops.push(index);
        self.s.loops.push(l);
    }

    /// Close the innermost construct at statement `i` (`usize::MAX`: left open), which is
    /// an `end` statement (`end_stmt`) or a labelled `do`'s terminal statement.
    fn close_top_construct(&mut self, i: usize, end_stmt: bool) {
        let Some(top) = self.constructs.pop() else {
            return;
        };
        let l = self.s.construct_loop[top];
        if l != u32::MAX {
            self.open_loops.pop();
        }
        if i == usize::MAX {
            return;
        }
        self.s.constructs[top].end = Some(i);
        // OpenACC regions opened inside it must have ended with it.
        let begin = self.stmt(self.s.constructs[top].begin).span.start;
        while let Some(open) = self.acc.last() {
            if self.sites[open.site].span.start < begin {
                break;
            }
            let name = open.name.clone();
            let at = self.sites[open.site].span.start;
            let what = construct_word(self.s.constructs[top].kind);
            self.problem(
                at,
                format!("'acc {name}' has no 'end {name}' before the end of the {what} it is in"),
            );
            self.acc.pop();
        }
        if l != u32::MAX {
            let st_end = self.lx.stmts[i].span.end;
            let lp = &mut self.s.loops[l as usize];
            lp.end = Some(i);
            // A labelled terminal statement other than `end do` runs in each iteration.
            lp.body = lp.stmt + 1..if end_stmt { i } else { i + 1 };
            lp.span.end = st_end;
        }
    }

    fn end_construct(&mut self, i: usize, kind: ConstructKind) {
        let at = self.stmt(i).span.start;
        let what = construct_word(kind);
        let Some(pos) = self
            .constructs
            .iter()
            .rposition(|&c| self.s.constructs[c].kind == kind)
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
            .stmt(self.s.constructs[self.constructs[pos]].begin)
            .span
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
            let begin = self.stmt(self.s.constructs[top].begin).span.start;
            let inner = construct_word(self.s.constructs[top].kind);
            self.problem(
                begin,
                format!("this {inner} is not closed before 'end {}'", end_word(kind)),
            );
            self.close_top_construct(usize::MAX, false);
        }
        self.close_top_construct(i, true);
    }

    fn site(&mut self, k: usize) {
        let site = &self.sites[k];
        let name = self.infos.get(k).and_then(|i| i.name.clone());
        let unit = self.units.last().copied();
        let construct = self.constructs.last().copied();
        let applies = match (site.sentinel, name.as_deref()) {
            (Sentinel::Acc, Some(n)) if BLOCKS.contains(&n) => {
                self.acc.push(OpenAcc {
                    site: k,
                    name: n.to_string(),
                    construct,
                    unit,
                });
                Applies::Block {
                    body: 0..0,
                    end: None,
                }
            }
            (Sentinel::Acc, Some(n))
                if n.strip_prefix("end ").is_some_and(|b| BLOCKS.contains(&b)) =>
            {
                let opener = self.end_block(k, &n[4..]);
                Applies::End { opener }
            }
            (Sentinel::Acc, Some(n)) if LOOPS.contains(&n) => Applies::Loop {
                loops: Vec::new(),
                end: None,
            },
            (Sentinel::Acc, Some("atomic")) => Applies::Atomic {
                body: 0..0,
                end: None,
            },
            (Sentinel::Acc, Some(n)) if n.starts_with("end ") => Applies::End { opener: None },
            (Sentinel::Acc, Some("declare" | "routine")) => Applies::Declarative,
            (Sentinel::Acc, Some(n)) if STANDALONE.contains(&n) => Applies::Standalone,
            _ => Applies::Nothing,
        };
        self.s.regions.push(Region {
            applies,
            unit,
            construct,
            parent: None,
            extent: site.span.clone(),
        });
    }

    /// `end <name>` at site `k`: the open block construct it closes.
    fn end_block(&mut self, k: usize, name: &str) -> Option<usize> {
        let at = self.sites[k].span.start;
        let Some(pos) = self.acc.iter().rposition(|o| o.name == name) else {
            self.problem(at, format!("'end {name}' without an open 'acc {name}'"));
            return None;
        };
        // An end directive in another unit or construct than its opener is out of place
        // (gfortran reads it so): the region stays open for the end directive after it.
        let open = &self.acc[pos];
        if open.unit != self.units.last().copied()
            || open.construct != self.constructs.last().copied()
        {
            self.problem(
                at,
                format!(
                    "'end {name}' is not in the same program unit and construct as its 'acc {name}'"
                ),
            );
            return None;
        }
        while self.acc.len() > pos + 1 {
            let inner = self.acc.pop()?;
            self.problem(
                self.sites[inner.site].span.start,
                format!("'acc {0}' has no 'end {0}' before 'end {name}'", inner.name),
            );
        }
        let open = self.acc.pop()?;
        let body_start = self.item_stmt_after(self.site_item[open.site]);
        let body_end = self.item_stmt_after(self.site_item[k]);
        if let Applies::Block { body, end } = &mut self.s.regions[open.site].applies {
            *body = body_start..body_end.max(body_start);
            *end = Some(k);
        }
        self.s.regions[open.site].extent.end = self.sites[k].span.end;
        Some(open.site)
    }

    /// The index of the first statement after item `item` (or the number of statements).
    fn item_stmt_after(&self, item: usize) -> usize {
        self.items[item + 1..]
            .iter()
            .find_map(|it| match it {
                Item::Stmt(i) => Some(*i),
                Item::Site(_) => None,
            })
            .unwrap_or(self.lx.stmts.len())
    }

    /// At the end of the file: what is still open.
    fn finish(&mut self) {
        let end = self.src.len();
        while !self.units.is_empty() {
            let u = self.units[self.units.len() - 1];
            if self.s.units[u].header.is_some() {
                let at = self.s.units[u]
                    .header
                    .map_or(0, |h| self.stmt(h).span.start);
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
            unit.span.end = self.lx.stmts.last().map_or(unit.span.end, |s| s.span.end);
        }
        for open in std::mem::take(&mut self.acc) {
            self.problem(
                self.sites[open.site].span.start,
                format!("'acc {0}' has no 'end {0}'", open.name),
            );
        }
    }

    /// The next item after `item` that is not an `!$omp` or `!$` site.
    fn next_item(&self, item: usize) -> Option<(usize, Item)> {
        (item + 1..self.items.len())
            .map(|k| (k, self.items[k]))
            .find(|(_, it)| match it {
                Item::Site(s) => self.sites[*s].sentinel == Sentinel::Acc,
                Item::Stmt(_) => true,
            })
    }

    /// The acc site at `item`, when its name is `name`.
    fn site_named(&self, item: Option<(usize, Item)>, name: &str) -> Option<usize> {
        match item? {
            (_, Item::Site(s))
                if self.infos.get(s).and_then(|i| i.name.as_deref()) == Some(name) =>
            {
                Some(s)
            }
            _ => None,
        }
    }

    /// Loop and atomic directives: what follows them.
    fn associate(&mut self) {
        for k in 0..self.sites.len() {
            let name = self.infos.get(k).and_then(|i| i.name.clone());
            let at = self.sites[k].span.start;
            match &self.s.regions[k].applies {
                Applies::Loop { .. } => {
                    let name = name.unwrap_or_default();
                    let next = self.next_item(self.site_item[k]);
                    let Some((_, Item::Stmt(s))) = next else {
                        self.problem(at, format!("'acc {name}' must be followed by a do loop"));
                        continue;
                    };
                    let Some(l) = self.s.loop_at(s) else {
                        self.problem(
                            self.stmt(s).span.start,
                            format!(
                                "'acc {name}' must be followed by a do loop, not this statement"
                            ),
                        );
                        continue;
                    };
                    let kind = self.s.loops[l].kind;
                    if matches!(kind, DoKind::While | DoKind::Forever) {
                        let what = if kind == DoKind::While {
                            "'do while'"
                        } else {
                            "a 'do' without loop control"
                        };
                        self.problem(
                            self.stmt(s).span.start,
                            format!("'acc {name}' needs a counted do loop: {what} has no iteration count to share among gangs, workers and vector lanes"),
                        );
                    }
                    let n = self.infos.get(k).map_or(1, |i| i.nest.max(1));
                    // Reported at the directive, which is what stays untranslated.
                    let loops = match self.s.tight_nest(self.lx, self.sites, l, n) {
                        Ok(v) => v,
                        Err(p) => {
                            self.s.problems.push(Problem { offset: at, ..p });
                            vec![l]
                        }
                    };
                    let mut end = None;
                    let mut extent_end = self.s.loops[l].span.end;
                    if let Some(e) = self.s.loops[l].end
                        && let Some(site) = self
                            .site_named(self.next_item(self.stmt_item[e]), &format!("end {name}"))
                    {
                        end = Some(site);
                        self.s.regions[site].applies = Applies::End { opener: Some(k) };
                        extent_end = self.sites[site].span.end;
                    }
                    self.s.regions[k].applies = Applies::Loop { loops, end };
                    self.s.regions[k].extent.end = extent_end;
                }
                Applies::Atomic { .. } => {
                    let next = self.next_item(self.site_item[k]);
                    let Some((i1, Item::Stmt(s1))) = next else {
                        self.problem(at, "'acc atomic' must be followed by a statement".into());
                        continue;
                    };
                    let after1 = self.next_item(i1);
                    let mut body = s1..s1 + 1;
                    let mut end = self.site_named(after1, "end atomic");
                    if end.is_none()
                        && let Some((i2, Item::Stmt(s2))) = after1
                        && let Some(e) = self.site_named(self.next_item(i2), "end atomic")
                    {
                        body = s1..s2 + 1;
                        end = Some(e);
                    }
                    let last = body.end - 1;
                    let mut extent_end = self.stmt(last).span.end;
                    if let Some(e) = end {
                        self.s.regions[e].applies = Applies::End { opener: Some(k) };
                        extent_end = self.sites[e].span.end;
                    }
                    self.s.regions[k].applies = Applies::Atomic { body, end };
                    self.s.regions[k].extent.end = extent_end;
                }
                _ => {}
            }
        }
        // End directives that nothing opened.
        for k in 0..self.sites.len() {
            if let Applies::End { opener: None } = self.s.regions[k].applies
                && let Some(name) = self.infos.get(k).and_then(|i| i.name.clone())
                && !name
                    .strip_prefix("end ")
                    .is_some_and(|b| BLOCKS.contains(&b))
            {
                let what = &name[4..];
                let after = if what == "atomic" {
                    "its statement"
                } else {
                    "its do loop"
                };
                self.problem(
                    self.sites[k].span.start,
                    format!("'{name}' does not follow an 'acc {what}' and {after}"),
                );
            }
        }
    }

    /// Each OpenACC site's enclosing one, by containment of extents.
    fn nest(&mut self) {
        let ranges: Vec<Option<Range<usize>>> = self
            .s
            .regions
            .iter()
            .zip(self.sites)
            .map(|(r, s)| {
                (s.sentinel == Sentinel::Acc && !matches!(r.applies, Applies::End { .. }))
                    .then(|| r.extent.clone())
            })
            .collect();
        let parents = crate::region::nesting(&ranges);
        for (r, p) in self.s.regions.iter_mut().zip(parents) {
            r.parent = p;
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
