//! What the Fortran front end answers about the code around a file's directives (the seam's
//! [`Syntax`]). Its positions (the "tokens" of the seam) are the file's *items*: each
//! statement and each directive site is one, in file order, so that a site has a position
//! among the statements as a `#pragma` line has among C tokens. Questions about C-only
//! syntax (macros, `extern`, `switch`, braces) have the answer "none" here; questions this
//! front end cannot answer yet get the answer that makes a decision leave the directive
//! unchanged (no loop, no statements, unknown dependences), never one that licenses a
//! translation.

use super::Front;
use super::lex::TokKind;
use super::structure::{Applies, DoKind};
use crate::attachments::Attachments;
use crate::dependence::Nest;
use crate::directive::Directive;
use crate::facts::{HeaderMacro, RegionVar};
use crate::hash::{HashMap, HashSet};
use crate::lang::Access;
use crate::region::{ForLoop, Stmt};
use crate::scan::Site;
use crate::source::LineIndex;
use crate::syntax::{Call, Exits, Jump, MemberUses, OmpRead, Position, Syntax};
use items::Items;
use std::ops::Range;

mod array_statement;
mod assigned;
mod confined;
mod if_construct;
mod items;
mod unseen_writes;

/// A statement or a directive site of the file, in file order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item {
    Stmt(usize),
    /// A site of [`Front::sites`] (any sentinel).
    Site(usize),
}

/// The Fortran answers for one file.
pub struct FortranSyntax<'a> {
    pub src: &'a str,
    pub front: &'a Front,
    /// Statements and sites in file order, with their byte ranges.
    items: Items,
    /// Per statement and per site of the front end: its item. In 32 bits, as [`Items`].
    stmt_item: Vec<u32>,
    site_item: Vec<u32>,
    /// Per site of the front end: its index among the OpenACC sites (the seam's sites;
    /// `u32::MAX`: not one).
    acc_index: Vec<u32>,
    attachments: std::sync::OnceLock<Attachments>,
    /// Per range given to `assigned_before_read`, its names assigned first: a region's
    /// scalars are asked of one range or a few, one by one.
    assigned_first: std::sync::Mutex<HashMap<Range<usize>, Answers>>,
    /// Per loop given to `assigned_every_iteration`, its names assigned on every path (the
    /// dependence test asks for each temporary).
    assigned_every: std::sync::Mutex<HashMap<Range<usize>, Answers>>,
    /// The names of the file's `equivalence` statements (lower case), found once.
    equivalenced: std::sync::OnceLock<HashSet<String>>,
    /// For the dependence test: names of COMMON and EQUIVALENCE statements, and of program
    /// units ([`dependence_names`]), found once.
    dependence_names: std::sync::OnceLock<(HashSet<String>, HashSet<String>)>,
    /// The bytes of the compute constructs that may get versions by the presence of OPTIONAL
    /// arguments ([`optional_extents`]), found once.
    optional_extents: std::sync::OnceLock<Vec<Range<usize>>>,
    /// The units in the order of their first byte (ties in index order): `unit_around`
    /// searches back from `at`.
    units_by_start: Vec<u32>,
    /// The exits [`Syntax::scope_exits`] last found, with their unit: the `declare`
    /// directives of a unit ask for the same ones, one after the other.
    unit_exits: std::sync::Mutex<Option<UnitExits>>,
    /// The unit last asked which names only some of its bytes use.
    confined: confined::Memo,
    /// Per `if (…) then` statement, its `end if` statement, found when first asked.
    if_ends: std::sync::OnceLock<HashMap<usize, usize>>,
}

/// Per name of a range, whether it is assigned before any read (shared, found once).
type Answers = std::sync::Arc<HashMap<String, bool>>;

/// The answers for `range` kept in `cache`, else found by `find` and kept. Found outside the
/// lock (another thread asking meanwhile finds its own).
fn cached(
    cache: &std::sync::Mutex<HashMap<Range<usize>, Answers>>,
    range: Range<usize>,
    find: impl FnOnce(Range<usize>) -> HashMap<String, bool>,
) -> Answers {
    if let Some(a) = cache.lock().ok().and_then(|m| m.get(&range).cloned()) {
        return a;
    }
    let a = std::sync::Arc::new(find(range.clone()));
    if let Ok(mut m) = cache.lock() {
        m.insert(range, a.clone());
    }
    a
}

/// A unit and its exits (`Exits` fields) or the offset of one that takes no directive line.
type UnitExits = (usize, Result<(Vec<usize>, Option<usize>), usize>);

impl<'a> FortranSyntax<'a> {
    pub fn new(src: &'a str, front: &'a Front) -> Self {
        let stmts = &front.lexed.stmts;
        let sites = &front.sites;
        let mut items = Items::with_capacity(stmts.len() + sites.len());
        let mut stmt_item = vec![0; stmts.len()];
        let mut site_item = vec![0; sites.len()];
        let (mut a, mut b) = (0, 0);
        while a < stmts.len() || b < sites.len() {
            let stmt_first = match (stmts.get(a), sites.get(b)) {
                (Some(st), Some(si)) => st.span().start <= si.span.start,
                (Some(_), None) => true,
                _ => false,
            };
            let k = items.len() as u32;
            if stmt_first {
                stmt_item[a] = k;
                items.push(Item::Stmt(a), stmts[a].span());
                a += 1;
            } else {
                site_item[b] = k;
                items.push(Item::Site(b), sites[b].span.clone());
                b += 1;
            }
        }
        let mut acc_index = vec![u32::MAX; sites.len()];
        let mut n = 0;
        for (i, s) in sites.iter().enumerate() {
            if s.sentinel == super::lines::Sentinel::Acc {
                acc_index[i] = n;
                n += 1;
            }
        }
        FortranSyntax {
            src,
            front,
            items,
            stmt_item,
            site_item,
            acc_index,
            attachments: Default::default(),
            assigned_first: Default::default(),
            assigned_every: Default::default(),
            equivalenced: Default::default(),
            dependence_names: Default::default(),
            optional_extents: Default::default(),
            unit_exits: Default::default(),
            confined: Default::default(),
            if_ends: Default::default(),
            units_by_start: {
                let units = &front.structure.units;
                let mut order: Vec<u32> = (0..units.len() as u32).collect();
                order.sort_by_key(|&u| (units[u as usize].span.start, u));
                order
            },
        }
    }

    /// The item of site `i` of the front end.
    pub fn site_item(&self, i: usize) -> usize {
        self.site_item[i] as usize
    }

    /// The item of statement `i`.
    pub fn stmt_item(&self, i: usize) -> usize {
        self.stmt_item[i] as usize
    }

    /// The seam's index of site `i` of the front end, if it is an OpenACC site.
    fn acc_index(&self, i: usize) -> Option<usize> {
        let n = self.acc_index[i];
        (n != u32::MAX).then_some(n as usize)
    }

    /// The byte range of item `t` (which exists).
    fn span(&self, t: usize) -> Range<usize> {
        self.items.span(t).expect("an item")
    }

    /// The items from statement `from` through the item before statement `to` (or the end).
    fn stmt_items(&self, stmts: &Range<usize>) -> Range<usize> {
        let n = self.front.lexed.stmts.len();
        let start = if stmts.start < n {
            self.stmt_item(stmts.start)
        } else {
            self.items.len()
        };
        let end = if stmts.end < n {
            self.stmt_item(stmts.end)
        } else {
            self.items.len()
        };
        start..end.max(start)
    }

    /// The loop of structure loop `l`, as the shared decisions see a loop: counted loops only
    /// (a `do while`, `do concurrent` or endless `do` has none).
    pub fn for_loop(&self, l: usize) -> Option<ForLoop> {
        let lp = &self.front.structure.loops[l];
        if lp.kind != DoKind::Counted {
            return None;
        }
        let first = self.stmt_item(lp.stmt());
        // The body: the items after the `do` statement up to its end statement (a labelled
        // terminal statement other than `end do` is part of the body).
        let body = self.stmt_items(&lp.body());
        Some(ForLoop::new(
            match (lp.var(), lp.var_span()) {
                (Some(v), Some(r)) => Some(super::site_facts::spelled(self.src, r.start, v).into()),
                (v, _) => v.map(Into::into),
            },
            false,
            first,
            first + 1..body.end.max(first + 1),
        ))
    }

    /// The statement a seam site applies to, from the structure (None where it applies to
    /// nothing).
    pub fn stmt_of(&self, fsite: usize) -> Option<Stmt> {
        let st = &self.front.structure;
        let region = st.regions.get(fsite)?;
        let at = self.site_item(fsite);
        match &region.applies {
            // An `atomic` without `end atomic`: its one statement.
            Applies::Atomic { body, end: None } => {
                let items = self.stmt_items(body);
                let last = self.front.lexed.stmts.get(body.end.checked_sub(1)?)?;
                (!items.is_empty()).then(|| {
                    Stmt::new(
                        items.clone(),
                        self.span(items.start).start..last.span().end,
                        None,
                        None,
                    )
                })
            }
            Applies::Block { end, .. } | Applies::Atomic { end, .. } => {
                let end = (*end)?;
                let end_item = self.site_item(end);
                Some(Stmt::new(
                    at + 1..end_item,
                    self.items
                        .span(at + 1)
                        .map_or(self.span(at).end, |s| s.start)
                        ..self.front.sites[end].span.end,
                    None,
                    self.acc_index(end),
                ))
            }
            Applies::Loop { loops, end } => {
                let outer = loops.clone().next()?;
                let lp = &st.loops[outer];
                let first = self.stmt_item(lp.stmt());
                let last = lp.end().map_or(first, |e| self.stmt_item(e));
                let bytes_end = match end {
                    Some(e) => self.front.sites[*e].span.end,
                    None => lp.span().end,
                };
                Some(Stmt::new(
                    first..last + 1,
                    lp.span().start..bytes_end,
                    self.for_loop(outer),
                    end.and_then(|e| self.acc_index(e)),
                ))
            }
            _ => None,
        }
    }

    /// The statement of a `routine` without a name at site `fsite`: the rest of the program
    /// unit it stands in, through its `end` statement (the function it makes device code, as
    /// C's is the function after it).
    pub fn unit_rest(&self, fsite: usize) -> Option<Stmt> {
        let u = self.front.structure.regions.get(fsite)?.unit()?;
        let end = self.front.structure.units[u].end?;
        let at = self.site_item(fsite);
        let end_item = self.stmt_item(end);
        (end_item > at).then(|| {
            Stmt::new(
                at + 1..end_item + 1,
                self.span(at + 1).start..self.span(end_item).end,
                None,
                None,
            )
        })
    }

    /// The innermost program unit around byte `at`.
    fn unit_around(&self, at: usize) -> Option<usize> {
        // The last to start of those that hold `at` (the innermost): searched back from the
        // last unit to start at or before it, past the procedures that end before it.
        let units = &self.front.structure.units;
        let order = &self.units_by_start;
        let before = order.partition_point(|&u| units[u as usize].span.start <= at);
        order[..before]
            .iter()
            .rev()
            .map(|&u| u as usize)
            .find(|&u| units[u].span.contains(&at))
    }

    /// Whether statement `k` starts its line and ends before the next statement's line (a
    /// directive line can go before or after it without moving another statement).
    pub fn own_lines(&self, k: usize) -> bool {
        let stmts = &self.front.lexed.stmts;
        let lines = stmts[k].lines();
        let before = k == 0 || stmts[k - 1].lines().end <= lines.start;
        let after = stmts
            .get(k + 1)
            .is_none_or(|n| n.lines().start >= lines.end);
        before && after
    }

    fn loop_starting(&self, t: usize) -> Option<usize> {
        match self.items.get(t)? {
            Item::Stmt(s) => self.front.structure.loop_at(s),
            Item::Site(_) => None,
        }
    }

    /// The loops tightly nested from the loop at item `t`, at most `limit`.
    fn nest(&self, t: usize, limit: usize) -> Vec<usize> {
        let Some(l) = self.loop_starting(t) else {
            return Vec::new();
        };
        // As many as are tight, up to `limit`.
        self.front
            .structure
            .tight_prefix(&self.front.lexed, &self.front.sites, l, limit.max(1))
            .0
    }
}

impl Syntax for FortranSyntax<'_> {
    fn token_range(&self, t: usize) -> Range<usize> {
        self.items.span(t).unwrap_or(self.src.len()..self.src.len())
    }

    fn token_count(&self) -> usize {
        self.items.len()
    }

    fn token_starting_at(&self, at: usize) -> Option<usize> {
        self.items.starting_at(at)
    }

    fn statement_words(&self, _stmt: &Range<usize>) -> Option<Vec<&str>> {
        None
    }

    fn is_preprocessor_line(&self, _t: usize) -> bool {
        false
    }

    fn skip_preprocessor(&self, t: usize) -> usize {
        t
    }

    fn stmt_end(&self, t: usize) -> Option<usize> {
        match self.items.get(t)? {
            Item::Stmt(s) => match self.front.structure.loop_at(s) {
                Some(l) => Some(
                    self.front.structure.loops[l]
                        .end()
                        .map_or(t + 1, |e| self.stmt_item(e) + 1),
                ),
                None => Some(t + 1),
            },
            Item::Site(_) => Some(t + 1),
        }
    }

    fn statements_in(&self, stmt: &Range<usize>) -> Vec<usize> {
        let mut out = Vec::new();
        let mut t = stmt.start;
        while t < stmt.end {
            out.push(t);
            t = self.stmt_end(t).unwrap_or(t + 1).max(t + 1);
        }
        out
    }

    fn nested_statements(&self, _s: usize) -> Vec<(usize, bool)> {
        Vec::new()
    }

    fn may_write_unseen(&self, bytes: Range<usize>, name: &str) -> bool {
        unseen_writes::may_write(self.src, self.front, bytes, &name.to_ascii_lowercase())
    }

    fn array_statement(&self, s: usize) -> bool {
        match self.items.get(s) {
            Some(Item::Stmt(k)) => array_statement::is(self.src, self.front, k),
            _ => false,
        }
    }

    fn is_block(&self, _stmt: &Range<usize>) -> bool {
        false
    }

    fn if_construct(&self, t: usize) -> Option<crate::syntax::IfConstruct> {
        if_construct::at(self, t)
    }

    fn loop_at(&self, t: usize) -> Option<ForLoop> {
        self.for_loop(self.loop_starting(t)?)
    }

    fn site_at(&self, t: usize) -> Option<usize> {
        match self.items.get(t)? {
            Item::Site(i) => self.acc_index(i),
            Item::Stmt(_) => None,
        }
    }

    fn nest_depth(&self, t: usize, limit: usize) -> usize {
        self.nest(t, limit).len()
    }

    fn nest_break(&self, t: usize, limit: usize) -> Option<usize> {
        let n = self.nest(t, limit);
        if n.len() >= limit || n.is_empty() {
            return None;
        }
        let last = &self.front.structure.loops[*n.last()?];
        Some(
            self.stmt_item
                .get(last.stmt() + 1)
                .map_or(t, |&k| k as usize),
        )
    }

    fn nest_loops(&self, t: usize, limit: usize) -> Vec<ForLoop> {
        self.nest(t, limit)
            .into_iter()
            .map_while(|l| self.for_loop(l))
            .collect()
    }

    /// Loops nest: the innermost around `t` is the last to start before it or one of the
    /// loops that one is in.
    fn loop_around(&self, t: usize, var: &str) -> Option<ForLoop> {
        let at = self.token_range(t).start;
        let st = &self.front.structure;
        let mut l = st.loops_starting_in(0..at).len().checked_sub(1)?;
        loop {
            let lp = &st.loops[l];
            if lp.kind == DoKind::Counted
                && lp.span().contains(&at)
                && lp.var().is_some_and(|v| v.eq_ignore_ascii_case(var))
            {
                return self.for_loop(l);
            }
            l = lp.parent()?;
        }
    }

    fn inner_loop(&self, outer: &ForLoop) -> Option<ForLoop> {
        let n = self.nest(outer.for_tok(), 2);
        n.get(1).and_then(|&l| self.for_loop(l))
    }

    fn header_mentions(&self, f: &ForLoop, names: &[&str]) -> Option<usize> {
        let l = self.loop_starting(f.for_tok())?;
        let lp = &self.front.structure.loops[l];
        for r in [lp.lo(), lp.hi(), lp.step()].into_iter().flatten() {
            let text = &self.src[r.clone()];
            for w in super::lang::Fortran.words(text) {
                if names.iter().any(|n| n.eq_ignore_ascii_case(w)) {
                    return Some(r.start + (w.as_ptr() as usize - text.as_ptr() as usize));
                }
            }
        }
        None
    }

    fn loop_variable_after(&self, _from: usize) -> Option<(String, Vec<String>)> {
        None
    }

    fn loop_variable(&self, f: &ForLoop) -> Option<(String, Vec<String>)> {
        Some((f.var.as_deref()?.into(), Vec::new()))
    }

    fn macro_params(&self, _at: usize) -> Vec<String> {
        Vec::new()
    }

    fn macro_definition(&self, _at: usize) -> Option<Range<usize>> {
        None
    }

    /// The `end` statement of the innermost program unit around item `t`; None in a module
    /// (its specification part is where OpenMP's `declare target` gives variables a device
    /// copy for the whole program, as C's file scope).
    fn block_end(&self, t: usize) -> Option<usize> {
        use super::stmt::UnitKind;
        let u = &self.front.structure.units[self.unit_around(self.token_range(t).start)?];
        if matches!(u.kind, UnitKind::Module | UnitKind::Submodule) {
            return None;
        }
        u.end.map(|e| self.stmt_item(e))
    }

    /// The exits of the program unit around item `from`: its `return` statements and the
    /// statement that ends its execution part (`contains` or `end`). Err at a `return`,
    /// `entry` or end statement that a directive line cannot go before: the action of a
    /// logical `if`, one sharing its line with another statement, one with a label (a jump
    /// to it would skip the directive), or a second entry point.
    fn scope_exits(&self, from: usize, _close: usize) -> Result<Exits, usize> {
        let at = self.token_range(from).start;
        let u = self.unit_around(at).ok_or(at)?;
        let unit = &self.front.structure.units[u];
        let close = unit.contains.or(unit.end).ok_or(at)?;
        let mut memo = self.unit_exits.lock().unwrap_or_else(|e| e.into_inner());
        let found = match memo.as_ref() {
            Some((v, found)) if *v == u => found.clone(),
            _ => {
                let found = unit_exits(self, u, close);
                *memo = Some((u, found.clone()));
                found
            }
        };
        found.map(|(returns, end)| Exits { returns, end })
    }

    fn extern_declaration(&self, _name: &str, _before: usize) -> Option<Range<usize>> {
        None
    }

    fn shared_storage(&self, name: &str) -> bool {
        let (shared, _) = self
            .dependence_names
            .get_or_init(|| dependence_names(self.src, self.front));
        shared.contains(name.to_ascii_lowercase().as_str())
    }

    fn declared_in_function(&self, _t: usize, _name: &str) -> bool {
        // Not read in Fortran: every name counts as the unit's own.
        true
    }

    fn function_start(&self, _t: usize) -> Option<usize> {
        None
    }

    fn is_body(&self, _first: usize) -> bool {
        false
    }

    fn conditional_in(&self, _toks: Range<usize>) -> bool {
        // The front end reads every branch of a preprocessor conditional as code, so no
        // decision rests on one branch being the one compiled; the printer waits for every
        // queue at the end of a data region with a conditional in it (`super::queues`).
        false
    }

    fn directly_in(&self, block: &Range<usize>, t: usize) -> bool {
        block.contains(&t)
    }

    fn statement_holding(&self, region: Range<usize>, t: usize) -> Option<Range<usize>> {
        self.statements_in(&region)
            .into_iter()
            .map(|s| s..self.stmt_end(s).unwrap_or(s + 1))
            .find(|r| r.contains(&t))
    }

    fn is_declaration(&self, stmt: Range<usize>) -> bool {
        match self.items.get(stmt.start) {
            Some(Item::Stmt(s)) => self.front.structure.stmts[s].kind.is_spec(),
            _ => false,
        }
    }

    fn declared_as_array(&self, _name: &str, _before: usize) -> bool {
        false
    }

    fn declaration_words(&self, _at: usize, _var: &str) -> Option<Vec<String>> {
        None
    }

    fn defined_functions(&self) -> Vec<String> {
        self.front
            .structure
            .units
            .iter()
            .filter(|u| !u.interface)
            .filter_map(|u| u.name.clone())
            .collect()
    }

    /// A procedure's effects are not read yet: none is shown to write only its locals.
    fn function_bodies(&self, _name: &str) -> Vec<Range<usize>> {
        Vec::new()
    }

    fn writes_only_locals(&self, _body: &Range<usize>) -> bool {
        false
    }

    fn enclosing_functions(&self, t: usize) -> Vec<String> {
        let at = self.token_range(t).start;
        let mut out: Vec<(usize, String)> = self
            .front
            .structure
            .units
            .iter()
            .filter(|u| u.span.contains(&at))
            .filter_map(|u| Some((u.span.start, u.name.clone()?)))
            .collect();
        out.sort_by_key(|(s, _)| std::cmp::Reverse(*s));
        out.into_iter().map(|(_, n)| n).collect()
    }

    /// The statement of a `routine` without a name is the rest of its program unit
    /// ([`FortranSyntax::unit_rest`]): the unit's name (lower case).
    fn declared_function(&self, stmt: &Range<usize>) -> Option<String> {
        let at = self.token_range(stmt.start).start;
        self.front.structure.units[self.unit_around(at)?]
            .name
            .clone()
    }

    fn name_before_parens(&self, stmt: &Range<usize>) -> Option<String> {
        self.declared_function(stmt)
    }

    fn function_of(&self, t: usize) -> Option<String> {
        self.enclosing_functions(t).into_iter().next()
    }

    fn declares_one_function(&self, _stmt: Range<usize>) -> Result<(), &'static str> {
        Err("a Fortran routine is not read yet")
    }

    /// In the specification part of a subroutine, function or interface body.
    fn routine_in_unit(&self, t: usize) -> Option<Result<(), &'static str>> {
        use super::stmt::UnitKind;
        let st = &self.front.structure;
        let at = self.token_range(t).start;
        let placed = self.unit_around(at).is_some_and(|u| {
            let unit = &st.units[u];
            let exec = self.front.lexed.stmts.get(unit.exec.start);
            matches!(unit.kind, UnitKind::Subroutine | UnitKind::Function)
                && exec.is_none_or(|e| at < e.span().start)
        });
        Some(if placed {
            Ok(())
        } else {
            Err("must be in the specification part of a subroutine, function or interface body")
        })
    }

    fn position(&self, _first: usize) -> Option<Position> {
        None
    }

    fn directive_follows(&self, t: usize) -> bool {
        matches!(self.items.get(t + 1), Some(Item::Site(_)))
    }

    fn statement_after(&self, last: usize) -> Option<Stmt> {
        match self.items.get(last)? {
            Item::Site(i) => self.stmt_of(i),
            Item::Stmt(_) => None,
        }
    }

    fn jumps(&self) -> &[Jump] {
        &[]
    }

    fn in_declare_target(&self, _t: usize) -> bool {
        false
    }

    /// The calls of the statements among items `toks` (each at its statement's item):
    /// `call` statements and function references ([`super::calls`]).
    fn calls_in(&self, toks: Range<usize>) -> Vec<Call> {
        let mut stmts = self.items.stmts_in(toks);
        let (Some(first), last) = (stmts.next(), stmts.next_back()) else {
            return Vec::new();
        };
        let last = last.unwrap_or(first);
        super::calls::calls(self.src, self.front, first..last + 1)
            .into_iter()
            .map(|c| Call {
                tok: self.stmt_item(c.stmt),
                name: c.name,
                member: c.member,
                hidden: c.hidden,
            })
            .collect()
    }

    fn async_calls(&self) -> Vec<usize> {
        Vec::new()
    }

    fn omp_directive_tokens(&self) -> Vec<usize> {
        Vec::new()
    }

    fn omp_directives(&self, _starts: &[usize], _end: usize) -> Vec<OmpRead> {
        Vec::new()
    }

    fn updated_only_by(&self, _stmt: &Range<usize>, _v: &str, _op: &str) -> bool {
        false
    }

    fn reduction_op(&self, _at: usize, _v: &str) -> Option<&'static str> {
        None
    }

    /// Every read of `v` in each run of `range` follows an assignment of it on every path
    /// there ([`assigned::assigned_first`]), and `v` is no pointer, target or equivalenced
    /// name (another name may read or write its storage).
    fn assigned_before_read(&self, range: Range<usize>, v: &str) -> bool {
        let name = v.to_ascii_lowercase();
        let (lx, st) = (&self.front.lexed, &self.front.structure);
        let from = lx.stmts.partition_point(|s| s.span().start < range.start);
        if let Some(u) = st.stmt_unit.get(from).map(|&u| u as usize)
            && let Some(var) = self.front.facts.lookup(st, u, &name)
            && (var.pointer || var.target)
        {
            return false;
        }
        let equivalenced = self.equivalenced.get_or_init(|| {
            let mut names = HashSet::default();
            for (k, c) in st.stmts.iter().enumerate() {
                if c.kind == super::stmt::Kind::Equivalence {
                    for t in lx.stmts[k].toks() {
                        names.insert(lx.text(self.src, t).to_ascii_lowercase());
                    }
                }
            }
            names
        });
        if equivalenced.contains(&name) {
            return false;
        }
        let answers = cached(&self.assigned_first, range, |r| {
            assigned::assigned_first(self.src, self.front, r)
        });
        answers.get(&name).copied().unwrap_or(false)
    }

    fn assigned_every_iteration(&self, range: Range<usize>, v: &str) -> bool {
        let answers = cached(&self.assigned_every, range, |r| {
            assigned::assigned_every_iteration(self.src, self.front, r)
        });
        answers
            .get(&v.to_ascii_lowercase())
            .copied()
            .unwrap_or(false)
    }

    fn confined_to(&self, at: usize, decl: usize, inside: &[Range<usize>], v: &str) -> bool {
        let Some(u) = self.unit_around(at) else {
            return false;
        };
        confined::confined_to(
            self.src,
            self.front,
            &self.confined,
            u,
            decl,
            inside,
            v,
            |r| self.assigned_before_read(r, v),
        )
    }

    fn mentions_outside(&self, _toks: Range<usize>, _skip: &Range<usize>, _v: &str) -> bool {
        true
    }

    fn first_mention_in_loop_init(&self, _toks: Range<usize>, _v: &str) -> bool {
        false
    }

    fn member_uses(
        &self,
        toks: Range<usize>,
        skip: &[Range<usize>],
        base: &str,
        _access: Access,
    ) -> MemberUses {
        let stmts: Vec<usize> = self.items.stmts_in(toks).collect();
        let (Some(&first), Some(&last)) = (stmts.first(), stmts.last()) else {
            return MemberUses::default();
        };
        let skip: Vec<Range<usize>> = skip
            .iter()
            .filter(|r| !r.is_empty() && r.end <= self.items.len())
            .map(|r| self.span(r.start).start..self.span(r.end - 1).end)
            .collect();
        super::members::member_uses(self.src, self.front, first..last + 1, &skip, base)
    }

    fn attachments(
        &self,
        _sites: &[Site],
        _dirs: &[Option<Directive>],
        _lines: &LineIndex,
    ) -> &Attachments {
        self.attachments.get_or_init(Attachments::default)
    }

    /// The dependence test of [`super::dependence`] for the loop at item `head`. Only a
    /// combined `kernels loop` becomes a parallel loop in Fortran yet: the printer adds no
    /// directive lines inside a `kernels` construct (before a plain loop, or around the
    /// `loop` directives of a construct whose loops run in parallel), so the loops of other
    /// nests, and those inside, are reported dependent, an independent one with that
    /// reason.
    fn dependence(
        &self,
        head: usize,
        _end: usize,
        _vars: &[RegionVar],
        confined: &[&str],
        _header_macros: &[HeaderMacro],
    ) -> Nest {
        use crate::dependence::{DepKind, Dependence, LoopReport, Verdict};
        let at = self.token_range(head).start;
        let Some(l) = self.loop_starting(head) else {
            return Nest {
                loops: vec![LoopReport {
                    at,
                    var: None,
                    depth: 0,
                    parent: None,
                    collapsible: false,
                    verdict: Verdict::Dependent(Dependence {
                        kind: DepKind::Control,
                        at,
                        reason: "not a 'do' loop".into(),
                    }),
                }],
            };
        };
        let (shared, procedures) = self
            .dependence_names
            .get_or_init(|| dependence_names(self.src, self.front));
        let assigned = |r: Range<usize>, v: &str| self.assigned_before_read(r, v);
        let every = |r: Range<usize>, v: &str| self.assigned_every_iteration(r, v);
        let cx = super::dependence::Context {
            src: self.src,
            front: self.front,
            shared_storage: shared,
            procedures,
            assigned_first: &assigned,
            assigned_every: &every,
            confined,
        };
        let mut nest = super::dependence::nest(&cx, l);
        if let Some(r) = nest.loops.first_mut() {
            r.at = at;
        }
        // A name the directive also names is spelled as it spells it (the clauses it gets
        // are compared with the directive's by their text).
        if let Some(Item::Site(s)) = head.checked_sub(1).and_then(|p| self.items.get(p)) {
            let words = super::lang::Fortran.words(&self.front.sites[s].text);
            let respell = |n: &mut String| {
                if let Some(w) = words.iter().find(|w| w.eq_ignore_ascii_case(n)) {
                    *n = w.to_string();
                }
            };
            for r in &mut nest.loops {
                if let Verdict::Independent(cl) = &mut r.verdict {
                    cl.reduction.iter_mut().for_each(|(_, n)| respell(n));
                    cl.lastprivate.iter_mut().for_each(respell);
                    cl.private.iter_mut().for_each(respell);
                }
            }
        }
        // The printer writes a directive line before a loop with none of its own: where it
        // cannot (the `do` shares its line; versions by OPTIONAL arguments' presence copy
        // the region without added lines), the loops stay sequential.
        let unprintable = if self.directed(head, l) {
            None
        } else if let Some(Item::Site(s)) = head.checked_sub(1).and_then(|p| self.items.get(p))
            && self.front.sites[s].sentinel != super::lines::Sentinel::Acc
        {
            Some("a directive of another kind stands before its 'do' statement")
        } else if !self.front.lines.first_on_line(self.src, at) {
            Some(
                "its 'do' statement shares its line with another statement, before which no directive can go",
            )
        } else if self.in_optional_construct(at) {
            Some(
                "its construct names OPTIONAL arguments, whose versions by presence copy the region without the directives added to it",
            )
        } else {
            None
        };
        if let Some(why) = unprintable {
            for r in &mut nest.loops {
                if let Verdict::Independent(cl) = &r.verdict {
                    let clauses = cl.omp().join(" ");
                    r.verdict = Verdict::Dependent(Dependence {
                        kind: DepKind::Unknown,
                        at: r.at,
                        reason: format!(
                            "its iterations are independent{}{clauses}, but {why}",
                            if clauses.is_empty() { "" } else { " with " }
                        ),
                    });
                }
            }
        }
        nest
    }
}

/// The bytes (directive through end directive, merged where they overlap) of the compute
/// constructs whose directive or statements hold a name of an OPTIONAL argument of their
/// unit: a superset of those the printer writes in versions by presence
/// (`optional_args::tested` reads their clauses and facts).
fn optional_extents(src: &str, front: &Front) -> Vec<Range<usize>> {
    let st = &front.structure;
    let lx = &front.lexed;
    let mut out: Vec<Range<usize>> = Vec::new();
    for (k, site) in front.sites.iter().enumerate() {
        let Some(unit) = st.regions.get(k).and_then(|r| r.unit()) else {
            continue;
        };
        if !super::is_compute_site(site) || !front.facts.any_optional(st, unit) {
            continue;
        }
        let words = super::lang::Fortran.words(&site.text);
        let optional = |w: &str| front.facts.lookup(st, unit, w).is_some_and(|v| v.optional);
        let extent = st.regions[k].extent();
        let first = lx.tokens.partition_point(|t| t.start() < extent.start);
        let named = words.iter().any(|w| optional(w))
            || lx.tokens[first..]
                .iter()
                .enumerate()
                .take_while(|(_, t)| t.start() < extent.end)
                .any(|(j, t)| t.kind() == TokKind::Name && optional(&lx.text(src, first + j)));
        if named {
            out.push(extent);
        }
    }
    out.sort_by_key(|r| r.start);
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(out.len());
    for r in out {
        match merged.last_mut() {
            Some(m) if r.start <= m.end => m.end = m.end.max(r.end),
            _ => merged.push(r),
        }
    }
    merged
}

/// The names of the file's COMMON and EQUIVALENCE statements (another name may reach their
/// storage), and of the procedures that may shadow an intrinsic, lower case: its program
/// units, and the statement functions (`abs(x) = x + c`, an assignment to `name(…)` that is
/// no declared array's element; the dependence test looks the arrays up first).
fn dependence_names(src: &str, front: &Front) -> (HashSet<String>, HashSet<String>) {
    use super::stmt::Kind;
    let (lx, st) = (&front.lexed, &front.structure);
    let mut shared = HashSet::default();
    let mut procedures: HashSet<String> = st.units.iter().filter_map(|u| u.name.clone()).collect();
    for (k, c) in st.stmts.iter().enumerate() {
        let toks = lx.stmts[k].toks();
        if matches!(c.kind, Kind::Common | Kind::Equivalence) {
            for t in toks {
                if lx.tokens[t].kind() == super::lex::TokKind::Name {
                    shared.insert(lx.lower(src, t));
                }
            }
        } else if matches!(c.kind, Kind::Assignment(_))
            && toks.len() > 1
            && lx.tokens[toks.start].kind() == super::lex::TokKind::Name
            && lx.text(src, toks.start + 1) == "("
        {
            procedures.insert(lx.lower(src, toks.start));
        }
    }
    (shared, procedures)
}

impl FortranSyntax<'_> {
    /// Whether byte `at` is inside a compute construct that may get versions by the
    /// presence of OPTIONAL arguments.
    fn in_optional_construct(&self, at: usize) -> bool {
        let extents = self
            .optional_extents
            .get_or_init(|| optional_extents(self.src, self.front));
        let k = extents.partition_point(|r| r.start <= at);
        k > 0 && extents[k - 1].contains(&at)
    }

    /// Whether a loop directive applies to structure loop `l`, at item `head`: the site just
    /// before it applies to a nest starting with it (its own line is rewritten).
    fn directed(&self, head: usize, l: usize) -> bool {
        let Some(Item::Site(s)) = head.checked_sub(1).and_then(|p| self.items.get(p)) else {
            return false;
        };
        matches!(
            self.front.structure.regions.get(s).map(|r| &r.applies),
            Some(Applies::Loop { loops, .. }) if loops.clone().next() == Some(l)
        )
    }
}

/// The exits of unit `u`, whose execution part ends at statement `close`.
fn unit_exits(
    sx: &FortranSyntax,
    u: usize,
    close: usize,
) -> Result<(Vec<usize>, Option<usize>), usize> {
    use super::stmt::Kind;
    let st = &sx.front.structure;
    let lx = &sx.front.lexed;
    let unit = &st.units[u];
    let word = |k: usize, tok: usize| lx.lower(sx.src, tok) == "return" && k < close;
    let mut returns = Vec::new();
    let mut last_return = false;
    for k in unit.spec.start..close {
        if st.unit_of(k) != Some(u) {
            continue;
        }
        let stmt = &lx.stmts[k];
        let first = stmt.toks().start;
        last_return = false;
        match &st.stmts[k].kind {
            Kind::Entry => return Err(stmt.span().start),
            Kind::IfStmt(action) if word(k, *action) => return Err(stmt.span().start),
            Kind::Jump if word(k, first) => {
                if stmt.label.is_some() || !sx.own_lines(k) {
                    return Err(stmt.span().start);
                }
                returns.push(stmt.span().start);
                last_return = true;
            }
            _ => {}
        }
    }
    let end = &lx.stmts[close];
    if end.label.is_some() || !sx.own_lines(close) {
        return Err(end.span().start);
    }
    Ok((returns, (!last_return).then_some(end.span().start)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::Syntax;

    /// The nest as it was found before `tight_prefix`: `tight_nest` asked for `limit`
    /// loops, then for 2, 3, … until it failed.
    fn nest_by_retries(sx: &FortranSyntax, t: usize, limit: usize) -> Vec<usize> {
        let Some(l) = sx.loop_starting(t) else {
            return Vec::new();
        };
        let (st, f) = (&sx.front.structure, sx.front);
        match st.tight_nest(&f.lexed, &f.sites, l, limit.max(1)) {
            Ok(v) => v,
            Err(_) => {
                let mut out = vec![l];
                for n in 2..=limit {
                    match st.tight_nest(&f.lexed, &f.sites, l, n) {
                        Ok(v) => out = v,
                        Err(_) => break,
                    }
                }
                out
            }
        }
    }

    #[test]
    fn nests_match_the_retrying_search() {
        let free = [
            "subroutine s(n, a)\n  integer :: n, i, j, k\n  real :: a(n, n, n)\n  !$acc parallel loop collapse(3)\n  do i = 1, n\n    do j = 1, n\n      do k = 1, n\n        a(i, j, k) = 0\n      end do\n    end do\n  end do\nend subroutine\n",
            "subroutine s(n, a)\n  integer :: n, i, j\n  real :: a(n, n)\n  !$acc parallel loop collapse(2)\n  do i = 1, n\n    a(i, 1) = 1 ! not tight\n    do j = 1, n\n      a(i, j) = 0\n    end do\n  end do\nend subroutine\n",
            "subroutine s(n, a)\r\n  integer :: n, i, j\r\n  real :: a(n, n)\r\n  !$acc parallel loop collapse(2)\r\n  do i = 1, n\r\n    !$acc loop\r\n    do j = 1, &\r\n        n\r\n      a(i, j) = 0\r\n    end do\r\n    a(i, 1) = 2\r\n  end do\r\nend subroutine\r\n",
            "subroutine s(n, a)\n  integer :: n, i, j\n  real :: a(n, n)\n  !$acc kernels\n  do 10 i = 1, n\n  do 10 j = 1, n\n    a(i, j) = 0\n10 continue\n  !$acc end kernels\n  do i = 1, n\n    do j = 1, n\n      print *, 'a ! b'\n    end do\n    print *, i\n  end do\nend subroutine\n",
        ];
        let fixed = "      subroutine s(n, a)\n      integer n, i, j\n      real a(n, n)\nc$acc parallel loop collapse(2)\n      do i = 1, n\n        do j = 1,\n     &    n\n          a(i, j) = 0\n        end do\n      end do\n      end\n";
        let cases = free.iter().map(|s| (*s, "x.f90")).chain([(fixed, "x.f")]);
        let mut loops = 0;
        for (src, name) in cases {
            let kind = crate::fortran::form::kind_of(std::path::Path::new(name)).expect("Fortran");
            let front = Front::new(src, kind, |_| Default::default());
            let sx = FortranSyntax::new(src, &front);
            for t in 0..sx.token_count() {
                loops += usize::from(sx.loop_starting(t).is_some());
                for limit in 0..5 {
                    assert_eq!(
                        sx.nest(t, limit),
                        nest_by_retries(&sx, t, limit),
                        "{src}: item {t}, limit {limit}"
                    );
                }
            }
        }
        assert!(loops >= 12, "{loops} loops");
    }

    /// The items as they were kept before they were packed (one enum and one range each,
    /// with the indices of statements and sites), found by sorting: in file order, a
    /// statement before a site that starts with it.
    fn old_items(front: &Front) -> (Vec<Item>, Vec<Range<usize>>, Vec<usize>, Vec<usize>) {
        let (stmts, sites) = (&front.lexed.stmts, &front.sites);
        let mut order: Vec<(usize, bool, usize)> = (stmts.iter().enumerate())
            .map(|(i, s)| (s.span().start, false, i))
            .chain(
                sites
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (s.span.start, true, i)),
            )
            .collect();
        order.sort_unstable();
        let item = |&(_, site, i): &(usize, bool, usize)| {
            if site { Item::Site(i) } else { Item::Stmt(i) }
        };
        let items: Vec<Item> = order.iter().map(item).collect();
        let spans = (items.iter())
            .map(|it| match *it {
                Item::Stmt(i) => stmts[i].span(),
                Item::Site(i) => sites[i].span.clone(),
            })
            .collect();
        let at = |it: Item| items.iter().position(|&x| x == it).expect("an item");
        let stmt_item = (0..stmts.len()).map(|i| at(Item::Stmt(i))).collect();
        let site_item = (0..sites.len()).map(|i| at(Item::Site(i))).collect();
        (items, spans, stmt_item, site_item)
    }

    #[test]
    fn packed_items_match_the_old_ones() {
        let src = "module m\n  integer :: x\nend module\nsubroutine s(n, a)\n  use m\n  integer :: n, i\n  real :: a(n)\n  !$ x = 1\n  !$acc data copy(a) &\n  !$acc& copyin(x)\n  !$omp barrier\n  !$acc parallel loop\n  do i = 1, n; a(i) = 0; end do\n  !$acc end data\n  !$acc wait\nend subroutine\n";
        let kind = crate::fortran::form::kind_of(std::path::Path::new("x.f90")).expect("Fortran");
        let front = Front::new(src, kind, |_| Default::default());
        let sx = FortranSyntax::new(src, &front);
        let (items, spans, stmt_item, site_item) = old_items(&front);
        assert_eq!(sx.token_count(), items.len());
        for t in 0..items.len() + 1 {
            assert_eq!(sx.items.get(t), items.get(t).copied(), "{t}");
            assert_eq!(sx.items.span(t), spans.get(t).cloned(), "{t}");
            for to in t..items.len() + 2 {
                let old: Vec<usize> = items[t.min(items.len())..to.min(items.len())]
                    .iter()
                    .filter_map(|it| match it {
                        Item::Stmt(i) => Some(*i),
                        Item::Site(_) => None,
                    })
                    .collect();
                assert_eq!(sx.items.stmts_in(t..to).collect::<Vec<_>>(), old);
            }
        }
        for at in 0..=src.len() {
            let k = spans.partition_point(|s| s.start < at);
            let old = (spans.get(k).map(|s| s.start) == Some(at)).then_some(k);
            assert_eq!(sx.token_starting_at(at), old, "{at}");
        }
        assert!((0..stmt_item.len()).all(|i| sx.stmt_item(i) == stmt_item[i]));
        assert!((0..site_item.len()).all(|i| sx.site_item(i) == site_item[i]));
        let acc: Vec<Option<usize>> = (0..front.sites.len()).map(|i| sx.acc_index(i)).collect();
        assert_eq!(acc, [None, Some(0), None, Some(1), Some(2), Some(3)]);
    }

    /// The answer for `v` in the body of the program's one `parallel loop` (from its `do`
    /// to the end).
    fn first_in_loop(body: &str, decls: &str, v: &str) -> bool {
        let src = format!(
            "subroutine s(n, a)\n  integer :: n, i, j\n  real :: a(n), b, c, x, y, q\n{decls}  !$acc parallel loop\n  do i = 1, n\n{body}  end do\nend subroutine\n"
        );
        let kind = crate::fortran::form::kind_of(std::path::Path::new("x.f90")).expect("Fortran");
        let front = Front::new(&src, kind, |_| Default::default());
        let sx = FortranSyntax::new(&src, &front);
        let at = src.find("  do i").expect("loop");
        let end = src.rfind("end subroutine").expect("end");
        sx.assigned_before_read(at..end, v)
    }

    /// Temporaries each iteration assigns before reading them, through constructs.
    #[test]
    fn assigned_before_read_through_constructs() {
        let yes = [
            // An `if` block around both the assignment and the reads.
            (
                "    if (a(i) > 0) then\n      x = a(i)\n      a(i) = x * 2\n    end if\n",
                "x",
            ),
            // Both branches assign, then it is read after the construct.
            (
                "    if (a(i) > 0) then\n      x = 1\n    else if (a(i) < -1) then\n      x = 2\n    else\n      x = 3\n    end if\n    a(i) = x\n",
                "x",
            ),
            // `select case` with a default.
            (
                "    select case (i)\n    case (1)\n      x = 1\n    case default\n      x = 2\n    end select\n    a(i) = x\n",
                "X",
            ),
            // Before an inner loop that reads it; the inner loop's own variable.
            (
                "    x = a(i)\n    do j = 1, 3\n      a(i) = a(i) + x\n    end do\n",
                "x",
            ),
            (
                "    do j = 1, 3\n      a(i) = a(i) + j\n    end do\n    a(i) = a(i) + j\n",
                "j",
            ),
            // Assigned and read inside an inner loop's iteration, in a nested `if`.
            (
                "    do j = 1, 3\n      if (j > 1) then\n        y = j\n        a(i) = y\n      end if\n    end do\n",
                "y",
            ),
            // A jump out of a branch only leaves paths out.
            (
                "    do j = 1, 3\n      if (j > 2) cycle\n      y = j\n      a(i) = y\n    end do\n",
                "y",
            ),
            // Written only under a logical `if`, never read.
            ("    if (a(i) > 0) q = 1\n", "q"),
        ];
        for (body, v) in yes {
            assert!(first_in_loop(body, "", v), "{v} in\n{body}");
        }
        let no = [
            // Read before the assignment.
            ("    a(i) = x\n    x = a(i)\n", "x"),
            ("    x = x + a(i)\n", "x"),
            // Read in the condition.
            ("    if (x > 0) then\n      x = 1\n    end if\n", "x"),
            (
                "    if (a(i) > 0) then\n      y = 1\n    else if (y > 0) then\n      y = 2\n    end if\n",
                "y",
            ),
            // Assigned only in the `then` branch (no `else`), read after.
            (
                "    if (a(i) > 0) then\n      x = 1\n    end if\n    a(i) = x\n",
                "x",
            ),
            (
                "    if (a(i) > 0) then\n      x = 1\n    else if (a(i) < 0) then\n      x = 2\n    end if\n    a(i) = x\n",
                "x",
            ),
            (
                "    if (a(i) > 0) then\n      x = 1\n    else\n      b = 2\n    end if\n    a(i) = x\n",
                "x",
            ),
            // A branch that reads it first.
            (
                "    if (a(i) > 0) then\n      x = 1\n    else\n      a(i) = x\n      x = 2\n    end if\n",
                "x",
            ),
            // `select case` without a default.
            (
                "    select case (i)\n    case (1)\n      x = 1\n    case (2:)\n      x = 2\n    end select\n    a(i) = x\n",
                "x",
            ),
            // Assigned in a loop body, read after the loop (it may run no iteration).
            (
                "    do j = 1, n\n      x = j\n    end do\n    a(i) = x\n",
                "x",
            ),
            (
                "    do while (a(i) > 0)\n      x = 1\n      a(i) = a(i) - x\n    end do\n    a(i) = x\n",
                "x",
            ),
            // A logical `if`'s assignment may not run.
            ("    if (a(i) > 0) x = 1\n    a(i) = x\n", "x"),
            // Passed to a call before an assignment (the procedure may read it).
            ("    call g(x)\n    x = 1\n    a(i) = x\n", "x"),
            ("    if (a(i) > 0) call g(x)\n    x = 1\n", "x"),
            // A jump to a label, and a block whose declaration may hide it.
            ("    if (a(i) > 0) goto 10\n    x = 1\n10  a(i) = x\n", "x"),
            (
                "    block\n      real :: x\n      x = 1\n    end block\n    a(i) = x\n",
                "x",
            ),
        ];
        for (body, v) in no {
            assert!(!first_in_loop(body, "", v), "{v} in\n{body}");
        }
        // A pointer, a target or an equivalenced scalar: another name reaches its storage.
        let body = "    x = a(i)\n    a(i) = x\n";
        assert!(first_in_loop(body, "", "x"));
        for decls in [
            "  real, target :: t\n  target :: x\n",
            "  equivalence (x, y)\n",
            "  pointer :: x\n",
        ] {
            assert!(!first_in_loop(body, decls, "x"), "{decls}");
        }
        // A partial assignment (a substring) reads the rest.
        let src = "subroutine s(n, a)\n  integer :: n, i\n  real :: a(n)\n  character(4) :: t\n  !$acc parallel loop\n  do i = 1, n\n    t(1:2) = 'ab'\n    a(i) = len_trim(t)\n  end do\nend subroutine\n";
        let kind = crate::fortran::form::kind_of(std::path::Path::new("x.f90")).expect("Fortran");
        let front = Front::new(src, kind, |_| Default::default());
        let sx = FortranSyntax::new(src, &front);
        let at = src.find("  do i").expect("loop");
        let end = src.rfind("end subroutine").expect("end");
        assert!(!sx.assigned_before_read(at..end, "t"));
    }

    /// `unit_around` as it was: a search of every unit.
    fn unit_around_searching(sx: &FortranSyntax, at: usize) -> Option<usize> {
        let units = &sx.front.structure.units;
        (0..units.len())
            .filter(|&u| units[u].span.contains(&at))
            .max_by_key(|&u| units[u].span.start)
    }

    /// Modules, contained and internal procedures, interface bodies, a main program without
    /// `program`: at every byte, the unit found back from its start is the searched one.
    #[test]
    fn unit_around_matches_the_search() {
        let srcs = [
            "module m\n  real :: a\ncontains\n  real function r0(x)\n    !$acc routine seq\n    real :: x\n    r0 = x\n  end function r0\n  subroutine f(n)\n    interface\n      subroutine g(y)\n        real :: y\n      end subroutine\n      subroutine h(y)\n        real :: y\n      end subroutine\n    end interface\n    integer :: n\n    !$acc parallel\n    a = 1\n    !$acc end parallel\n  contains\n    subroutine inner\n      a = 2\n    end subroutine\n  end subroutine f\nend module m\n!$acc routine(q) seq\nx = 1\nend\nsubroutine t\nend subroutine\n",
            "!$acc wait\n  x = 1\nend\n",
            "subroutine s\n  x = 1\n",
        ];
        let mut found = 0;
        for src in srcs {
            let kind =
                crate::fortran::form::kind_of(std::path::Path::new("x.f90")).expect("Fortran");
            let front = Front::new(src, kind, |_| Default::default());
            let sx = FortranSyntax::new(src, &front);
            for at in 0..=src.len() + 1 {
                let old = unit_around_searching(&sx, at);
                assert_eq!(sx.unit_around(at), old, "{at}");
                found += usize::from(old.is_some());
            }
        }
        assert!(found > 500, "{found}");
    }

    /// 400,000 items of a file of 100,000 directives held 17.6 MB unpacked (44 bytes an item).
    #[test]
    fn items_are_packed() {
        assert_eq!(std::mem::size_of::<Item>(), 16);
        let src = "subroutine s\n  !$acc wait\n  x = 1\nend subroutine\n";
        let kind = crate::fortran::form::kind_of(std::path::Path::new("x.f90")).expect("Fortran");
        let front = Front::new(src, kind, |_| Default::default());
        let sx = FortranSyntax::new(src, &front);
        let n = sx.items.len();
        assert_eq!(n, 4);
        let held = sx.items.held()
            + sx.stmt_item.capacity() * size_of_val(&sx.stmt_item[0])
            + sx.site_item.capacity() * size_of_val(&sx.site_item[0])
            + sx.acc_index.capacity() * size_of_val(&sx.acc_index[0]);
        assert!(held <= 20 * n, "{held} bytes for {n} items");
    }
}
