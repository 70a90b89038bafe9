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
use super::lex::Lexed;
use super::lines::Sentinel;
use super::sites::Site;
use super::stmt::{Classified, ConstructKind, UnitKind};
use std::ops::Range;

mod build;
mod directives;
mod unit_index;

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

/// The controls of a `do concurrent` or `do while` loop (kept apart: most loops are
/// counted).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OtherControl {
    /// `do concurrent`: its indices and its mask.
    pub concurrent: Vec<ConcurrentIndex>,
    pub mask: Option<Range<usize>>,
    /// `do while`: the condition.
    pub condition: Option<Range<usize>>,
}

/// A byte range held in 32 bits each end ([`super::lines::MAX_LEN`] bounds a file), or
/// none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span32([u32; 2]);

impl Span32 {
    const NONE: Span32 = Span32([u32::MAX, u32::MAX]);

    fn new(r: Option<Range<usize>>) -> Span32 {
        r.map_or(Span32::NONE, |r| Span32([r.start as u32, r.end as u32]))
    }

    fn get(self) -> Option<Range<usize>> {
        (self.0[0] != u32::MAX).then(|| self.0[0] as usize..self.0[1] as usize)
    }
}

/// The shape of a `do` loop, in 88 bytes (a file has one per loop): statement indices and
/// byte offsets in 32 bits ([`super::lines::MAX_LEN`] bounds a file), `u32::MAX` for none,
/// behind accessors. Byte ranges are file offsets of the expressions as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoLoop {
    stmt: u32,
    end: u32,
    pub kind: DoKind,
    /// The `do 10` label (`u32::MAX`: none; labels have at most 5 digits).
    label: u32,
    var: Option<Box<str>>,
    var_span: Span32,
    lo: Span32,
    hi: Span32,
    step: Span32,
    /// `do concurrent` and `do while` loops: their controls.
    pub other: Option<Box<OtherControl>>,
    /// The end of [`DoLoop::body`], which starts after the `do` statement.
    body_end: u32,
    span: [u32; 2],
    parent: u32,
}

impl DoLoop {
    /// The `do` statement.
    pub fn stmt(&self) -> usize {
        self.stmt as usize
    }

    /// The statement that ends it: `end do`, or the labelled statement that terminates a
    /// `do 10 …` loop (several loops may share it).
    pub fn end(&self) -> Option<usize> {
        get32(self.end)
    }

    /// The `do 10` label.
    pub fn label(&self) -> Option<u32> {
        (self.label != u32::MAX).then_some(self.label)
    }

    /// The control variable, lower case.
    pub fn var(&self) -> Option<&str> {
        self.var.as_deref()
    }

    /// The statements executed in each iteration: after the `do` statement up to its `end
    /// do` or terminal `continue`, or up to and including another labelled terminal
    /// statement (an action statement, run in each iteration).
    pub fn body(&self) -> Range<usize> {
        self.stmt as usize + 1..self.body_end as usize
    }

    /// Bytes from the `do` statement (its label or construct name) to the end of its end
    /// statement.
    pub fn span(&self) -> Range<usize> {
        self.span[0] as usize..self.span[1] as usize
    }

    /// The loop it is directly in.
    pub fn parent(&self) -> Option<usize> {
        get32(self.parent)
    }

    /// Where the control variable is written.
    pub fn var_span(&self) -> Option<Range<usize>> {
        self.var_span.get()
    }

    /// The bounds and step of a counted loop.
    pub fn lo(&self) -> Option<Range<usize>> {
        self.lo.get()
    }

    pub fn hi(&self) -> Option<Range<usize>> {
        self.hi.get()
    }

    pub fn step(&self) -> Option<Range<usize>> {
        self.step.get()
    }

    /// `do concurrent`: its indices.
    pub fn concurrent(&self) -> &[ConcurrentIndex] {
        self.other.as_ref().map_or(&[], |o| &o.concurrent)
    }

    /// `do concurrent`: its mask.
    pub fn mask(&self) -> Option<&Range<usize>> {
        self.other.as_ref()?.mask.as_ref()
    }

    /// `do while`: the condition.
    pub fn condition(&self) -> Option<&Range<usize>> {
        self.other.as_ref()?.condition.as_ref()
    }
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
    /// outermost first: a tight nest's loops are numbered in a row; empty when no `do`
    /// follows) and the combined directive's `end`.
    Loop {
        loops: Range<usize>,
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

/// One directive site in its context, in 56 bytes (a file has one per site): indices and
/// offsets in 32 bits ([`super::lines::MAX_LEN`] bounds a file), `u32::MAX` for none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    pub applies: Applies,
    unit: u32,
    parent: u32,
    extent: [u32; 2],
}

fn opt32(v: Option<usize>) -> u32 {
    v.map_or(u32::MAX, |v| v as u32)
}

fn get32(v: u32) -> Option<usize> {
    (v != u32::MAX).then_some(v as usize)
}

impl Region {
    fn new(applies: Applies, unit: Option<usize>) -> Region {
        Region {
            applies,
            unit: opt32(unit),
            parent: u32::MAX,
            extent: [0, 0],
        }
    }

    /// The program unit it is in.
    pub fn unit(&self) -> Option<usize> {
        get32(self.unit)
    }

    /// The OpenACC site whose region holds it.
    pub fn parent(&self) -> Option<usize> {
        get32(self.parent)
    }

    /// Bytes of the directive and what it applies to, through its end directive.
    pub fn extent(&self) -> Range<usize> {
        self.extent[0] as usize..self.extent[1] as usize
    }

    fn set_extent(&mut self, r: Range<usize>) {
        self.extent = [r.start as u32, r.end as u32];
    }
}

/// The structure of one file.
#[derive(Debug, Clone, Default)]
pub struct Structure {
    /// Per statement.
    pub stmts: Vec<Classified>,
    /// Per statement: the unit it belongs to (`u32::MAX`: none).
    pub stmt_unit: Vec<u32>,
    pub units: Vec<Unit>,
    pub loops: Vec<DoLoop>,
    /// Per site (the same indices as the sites).
    pub regions: Vec<Region>,
    pub problems: Vec<Problem>,
    /// Per statement: the loop it starts (`u32::MAX`: none).
    loop_at: Vec<u32>,
    /// Per loop: where its `do` statement starts. A search of a plain array of offsets, not
    /// of the large loops and statements they index (a cache miss per step).
    loop_starts: Vec<usize>,
    /// The innermost unit of each byte ([`Structure::unit_at`]).
    unit_index: unit_index::UnitIndex,
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
    /// The constructs read so far: only the build reads them (and tests, through
    /// [`Structure::with_constructs`]).
    all_constructs: Vec<Construct>,
    /// Per construct: its loop (`u32::MAX`: not a `do`).
    construct_loop: Vec<u32>,
    /// The constructs open, innermost last.
    constructs: Vec<usize>,
    acc: Vec<OpenAcc>,
    items: Vec<Item>,
    /// Per statement and per site: its index in `items`.
    stmt_item: Vec<usize>,
    site_item: Vec<usize>,
    /// The loops open, innermost last.
    open_loops: Vec<usize>,
    /// The file's preprocessor conditional lines (`#if`, `#else`, …): offset, kind, and the
    /// index of its group's `#endif` here (`u32::MAX`: never closed).
    conditionals: Vec<(usize, Conditional, u32)>,
}

/// What a preprocessor conditional line does to its group.
#[derive(Clone, Copy)]
enum Conditional {
    /// `#if`, `#ifdef`, `#ifndef`: opens a group.
    Open,
    /// `#elif`, `#else`, …: starts another branch.
    Other,
    /// `#endif`.
    Close,
}

/// The preprocessor conditional lines of `src`, in order (a `#` first on its line, after
/// blanks), each with the index of its group's `#endif`.
fn conditional_lines(src: &str) -> Vec<(usize, Conditional, u32)> {
    let b = src.as_bytes();
    let lines: Vec<(usize, Conditional)> = memchr::memchr_iter(b'#', b)
        .filter(|&p| {
            let ls = memchr::memrchr(b'\n', &b[..p]).map_or(0, |n| n + 1);
            b[ls..p].iter().all(|c| matches!(c, b' ' | b'\t'))
        })
        .filter_map(|p| {
            let end = memchr::memchr(b'\n', &b[p..]).map_or(b.len(), |n| p + n);
            let kind = match crate::lex::conditional(src.get(p..end)?)? {
                "if" | "ifdef" | "ifndef" => Conditional::Open,
                "endif" => Conditional::Close,
                _ => Conditional::Other,
            };
            Some((p, kind))
        })
        .collect();
    let mut out: Vec<(usize, Conditional, u32)> =
        lines.iter().map(|&(p, k)| (p, k, u32::MAX)).collect();
    // The lines of each group still open, innermost last.
    let mut open: Vec<Vec<usize>> = Vec::new();
    for (c, &(_, kind)) in lines.iter().enumerate() {
        match kind {
            Conditional::Open => open.push(vec![c]),
            _ => {
                let Some(group) = open.last_mut() else {
                    continue;
                };
                group.push(c);
                if matches!(kind, Conditional::Close) {
                    for g in open.pop().unwrap_or_default() {
                        out[g].2 = u32::try_from(c).unwrap_or(u32::MAX);
                    }
                }
            }
        }
    }
    out
}

impl Structure {
    /// The structure of a file: its statements (`lx`), its sites and what is known of
    /// each site (`infos`, one per site).
    pub fn new(src: &str, lx: &Lexed, sites: &[Site], infos: &[SiteInfo]) -> Structure {
        Structure::with_constructs(src, lx, sites, infos).0
    }

    /// As [`Structure::new`], with the file's constructs in the order they begin (the
    /// structure itself does not keep them: nothing after the build reads them).
    pub fn with_constructs(
        src: &str,
        lx: &Lexed,
        sites: &[Site],
        infos: &[SiteInfo],
    ) -> (Structure, Vec<Construct>) {
        let mut items = Vec::with_capacity(lx.stmts.len() + sites.len());
        let (mut a, mut b) = (0, 0);
        while a < lx.stmts.len() || b < sites.len() {
            let stmt_first = match (lx.stmts.get(a), sites.get(b)) {
                (Some(st), Some(si)) => st.span().start <= si.span.start,
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
            all_constructs: Vec::new(),
            construct_loop: Vec::new(),
            constructs: Vec::new(),
            acc: Vec::new(),
            items,
            stmt_item,
            site_item,
            open_loops: Vec::new(),
            conditionals: conditional_lines(src),
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
        // Kept as long as the file's translation: the room left by doubling is given back.
        bld.s.loops.shrink_to_fit();
        bld.s.loop_starts = (bld.s.loops.iter())
            .map(|lp| lx.stmts[lp.stmt()].span().start)
            .collect();
        bld.s.unit_index = unit_index::UnitIndex::new(&bld.s.units);
        (bld.s, bld.all_constructs)
    }

    /// The innermost program unit (not an interface body) holding byte `at`.
    pub fn unit_at(&self, at: usize) -> Option<usize> {
        self.unit_index.at(at)
    }

    /// The loop a `do` statement starts.
    pub fn loop_at(&self, stmt: usize) -> Option<usize> {
        self.loop_at
            .get(stmt)
            .copied()
            .filter(|&l| l != u32::MAX)
            .map(|l| l as usize)
    }

    /// The loops whose `do` statement is in `stmts`, in file order: a binary search, since
    /// loops are added as their `do` statements are read, in file order.
    pub fn loops_in(&self, stmts: Range<usize>) -> &[DoLoop] {
        let from = self.loops.partition_point(|lp| lp.stmt() < stmts.start);
        let to = from + self.loops[from..].partition_point(|lp| lp.stmt() < stmts.end);
        &self.loops[from..to]
    }

    /// The loops whose `do` statement starts in `bytes`, in file order.
    pub fn loops_starting_in(&self, bytes: Range<usize>) -> &[DoLoop] {
        let from = self.loop_starts.partition_point(|&at| at < bytes.start);
        let to = from + self.loop_starts[from..].partition_point(|&at| at < bytes.end);
        &self.loops[from..to]
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
        let (out, broken) = self.tight_prefix(lx, sites, outer, n);
        match broken {
            None => Ok(out),
            Some((offset, why)) => Err(Problem {
                offset,
                related: Some(offset),
                rule: Some(crate::rules::id::COLLAPSE_DEPTH),
                message: format!(
                    "the loop directive asks for {n} nested loops, but the loop at depth {} {why}",
                    out.len()
                ),
            }),
        }
    }

    /// The loops tightly nested from `outer`, at most `n` of them (outermost first), and
    /// where and why the nest breaks before `n`. A nest's loops do not depend on `n`, so
    /// this is also the longest tight nest up to `n`; no message is formatted here, as
    /// callers that only want the loops ask for it once per loop directive.
    pub fn tight_prefix(
        &self,
        lx: &Lexed,
        sites: &[Site],
        outer: usize,
        n: usize,
    ) -> (Vec<usize>, Option<(usize, &'static str)>) {
        let mut out = vec![outer];
        while out.len() < n {
            let l = &self.loops[*out.last().unwrap_or(&outer)];
            let inner_stmt = l.stmt() + 1;
            let Some(inner) = self
                .loop_at(inner_stmt)
                .filter(|_| inner_stmt < l.body().end)
            else {
                let at = lx
                    .stmts
                    .get(inner_stmt)
                    .map_or(l.span().end, |s| s.span().start);
                return (out, Some((at, "holds no do loop as its first statement")));
            };
            let m = &self.loops[inner];
            // Tightly nested: nothing between the two `do` statements and nothing between
            // the inner loop's end and the outer loop's end.
            let gap = lx.stmts[l.stmt()].span().end..lx.stmts[inner_stmt].span().start;
            let from = sites.partition_point(|s| s.span.start < gap.start);
            if let Some(site) = sites[from..]
                .iter()
                .take_while(|s| s.span.start < gap.end)
                .find(|s| s.sentinel == Sentinel::Acc)
            {
                return (
                    out,
                    Some((site.span.start, "is separated from the next by a directive")),
                );
            }
            // (A labelled terminal action statement of the outer loop alone runs after the
            // inner loop in each iteration.)
            let tight_end = match (m.end(), l.end()) {
                (Some(me), Some(le)) => me == le || me + 1 == le && l.body().end == le,
                _ => false,
            };
            if !tight_end {
                let at = m
                    .end()
                    .and_then(|e| lx.stmts.get(e + 1))
                    .map_or(m.span().end, |s| s.span().start);
                return (out, Some((at, "has statements after the inner loop")));
            }
            out.push(inner);
        }
        (out, None)
    }
}

/// The bytes of tokens `r` (non-empty).
fn bytes(lx: &Lexed, r: &Range<usize>) -> Option<Range<usize>> {
    (!r.is_empty()).then(|| lx.tokens[r.start].start()..lx.tokens[r.end - 1].end())
}
