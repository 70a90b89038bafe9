//! One file's directives with what is known about them: the translation unit the
//! semantic layer, the checks and the translators read.

use crate::directive::Directive;
use crate::facts::{FileFacts, SiteFacts};
use crate::region::{ForLoop, Stmt};
use crate::rules::Tables;
use crate::scan::Site;
use crate::source::LineIndex;

/// Everything known about one file's directives.
pub struct Unit<'a> {
    pub src: &'a str,
    pub sites: Vec<Site>,
    pub dirs: Vec<Option<Directive>>,
    pub stmts: Vec<Option<Stmt>>,
    pub parent: Vec<Option<usize>>,
    pub children: Vec<Vec<usize>>,
    /// The file's code around its directives, as its language reads it: what the checks
    /// and decisions ask about statements, loops, blocks and calls.
    pub syntax: &'a dyn crate::syntax::Syntax,
    /// Semantic facts (libclang or syntactic), when the engine computed them.
    pub facts: Option<&'a FileFacts>,
    /// Each site's entry of `facts`, looked up once (passes ask for it many times per site).
    pub site_facts: Vec<Option<&'a SiteFacts>>,
    /// The rule tables the file is translated with.
    pub tables: &'a Tables,
    /// The file's language: how its expressions are read and written.
    pub lang: &'static dyn crate::lang::Language,
    /// Lines of `src`: line numbers in messages without rescanning the file.
    pub lines: &'a LineIndex,
    /// The file's line of an offset of `src`, where they differ: a file holding acc2omp's
    /// own `--emit` output is translated as the original it stands for, and its diagnostics
    /// point into the file, so the lines their messages name must be the file's too.
    pub file_lines: Option<&'a (dyn Fn(usize) -> usize + Sync)>,
    /// The line terminator `src` mostly uses (`source::line_ending`), for inserted lines.
    pub eol: &'static str,
    /// Indexes of the site tree, built when first asked (see [`SiteIndex`]).
    pub index: std::sync::OnceLock<SiteIndex>,
    /// While alternative directives are planned one at a time (`crate::alternatives`): each
    /// alternative compiled out → the one compiled in its place, found at its tokens too.
    pub compiled_in: crate::hash::HashMap<usize, usize>,
}

/// Indexes of a file's site tree, so that a site asks about the sites nested in it or around
/// it in time independent of the nest's depth (a nest of 20,000 `data` constructs would
/// otherwise take 20,000 x 20,000 steps). Directives only ever become unparsed after it is
/// built (rejected): lists by directive or clause name may name sites whose directive is
/// gone, which callers check.
#[derive(Debug, Default)]
pub struct SiteIndex {
    /// One past the last descendant of each site: sites nest in source order, so the
    /// descendants of `i` are `i + 1..end[i]`. Empty when some site's descendants are not
    /// contiguous (overlapping ranges): then the tree is walked.
    end: Vec<usize>,
    /// Sites by directive name, ascending.
    named: crate::hash::HashMap<String, Vec<usize>>,
    /// Sites by the names of their clauses, ascending.
    with_clause: crate::hash::HashMap<String, Vec<usize>>,
    /// The nearest compute construct around or at each site when the index was built.
    compute: Vec<Option<usize>>,
    /// The nearest `routine` without a name around or at each site then.
    routine: Vec<Option<usize>>,
    /// Tokens naming a runtime routine with a queue argument (`acc_*_async`), ascending.
    async_calls: Vec<usize>,
    /// Tokens that may start an OpenMP directive, ascending: `#pragma omp` lines, `_Pragma`,
    /// and a name followed by `(omp` (a pragma wrapper macro).
    omp_pragmas: Vec<usize>,
}

impl SiteIndex {
    fn new(u: &Unit) -> Self {
        let n = u.sites.len();
        let mut end: Vec<usize> = (1..=n).collect();
        let mut contiguous = true;
        for i in (0..n).rev() {
            let mut next = i + 1;
            for &c in &u.children[i] {
                contiguous &= c == next;
                next = end[c];
            }
            end[i] = next;
        }
        if !contiguous {
            end.clear();
        }
        // The sites and the tokens are read side by side: a file may have millions of tokens.
        let ((named, with_clause, compute, routine), (async_calls, omp_pragmas)) =
            rayon::join(|| Self::by_site(u), || Self::by_token(u));
        SiteIndex {
            end,
            named,
            with_clause,
            compute,
            routine,
            async_calls,
            omp_pragmas,
        }
    }

    /// Sites by directive and clause name, the compute construct and `routine` around each.
    #[allow(clippy::type_complexity)]
    fn by_site(
        u: &Unit,
    ) -> (
        crate::hash::HashMap<String, Vec<usize>>,
        crate::hash::HashMap<String, Vec<usize>>,
        Vec<Option<usize>>,
        Vec<Option<usize>>,
    ) {
        let mut named: crate::hash::HashMap<String, Vec<usize>> = Default::default();
        let mut with_clause: crate::hash::HashMap<String, Vec<usize>> = Default::default();
        // A name is copied once, not once per site.
        fn add(map: &mut crate::hash::HashMap<String, Vec<usize>>, name: &str, i: usize) {
            match map.get_mut(name) {
                Some(list) if list.last() == Some(&i) => {}
                Some(list) => list.push(i),
                None => {
                    map.insert(name.to_string(), vec![i]);
                }
            }
        }
        for i in 0..u.sites.len() {
            if let Some(d) = u.dir(i) {
                add(&mut named, &d.name, i);
                for c in &d.clauses {
                    add(&mut with_clause, &c.name, i);
                }
            }
        }
        let compute = nearest(u, is_compute);
        let routine = nearest(u, is_routine);
        (named, with_clause, compute, routine)
    }

    /// Tokens of runtime calls with a queue argument and of OpenMP pragmas.
    fn by_token(u: &Unit) -> (Vec<usize>, Vec<usize>) {
        (u.syntax.async_calls(), u.syntax.omp_directive_tokens())
    }
}

fn is_compute(u: &Unit<'_>, i: usize) -> bool {
    u.dir(i).is_some_and(|d| d.compute_kind().is_some())
}

fn is_routine(u: &Unit<'_>, i: usize) -> bool {
    u.dir(i)
        .is_some_and(|d| d.name == "routine" && d.arg.is_none())
}

/// For each site, the nearest one around or at it that is `is`.
fn nearest(u: &Unit, is: fn(&Unit, usize) -> bool) -> Vec<Option<usize>> {
    let mut out: Vec<Option<usize>> = vec![None; u.sites.len()];
    nearest_into(u, is, &mut out);
    out
}

/// [`nearest`] written into `out` (one entry per site), in place: each entry reads only those
/// before it, already written.
fn nearest_into(u: &Unit, is: fn(&Unit, usize) -> bool, out: &mut [Option<usize>]) {
    for i in 0..u.sites.len() {
        out[i] = if is(u, i) {
            Some(i)
        } else {
            // The parent comes first in source order, or the tree is walked.
            u.parent[i].and_then(|p| if p < i { out[p] } else { u.nearest_walk(p, is) })
        };
    }
}

impl<'a> Unit<'a> {
    /// The file's explicit pointer attachments (see `crate::attachments`).
    pub fn attachments(&self) -> &crate::attachments::Attachments {
        self.syntax.attachments(&self.sites, &self.dirs, self.lines)
    }

    pub fn dir(&self, i: usize) -> Option<&Directive> {
        self.dirs[i].as_ref()
    }

    /// The header macros the file expands (`FileFacts::header_macros`).
    pub fn header_macros(&self) -> &[crate::facts::HeaderMacro] {
        self.facts.map_or(&[], |f| &f.header_macros)
    }

    /// Semantic facts about site `i`.
    pub fn site_facts(&self, i: usize) -> Option<&SiteFacts> {
        self.site_facts.get(i).copied().flatten()
    }

    /// The words before `var` in its declaration (`signed char i;` → `signed char`), from the
    /// declaration the facts of site `k` point to.
    pub fn declaration_words(&self, k: usize, var: &str) -> Option<Vec<String>> {
        let at = self.site_facts(k)?.var(var)?.decl()?;
        self.syntax.declaration_words(at, var)
    }

    /// Offset of the site, for diagnostics.
    pub fn at(&self, i: usize) -> usize {
        self.sites[i].span().start
    }

    /// The token where the loop nest of site `i` is read: its statement's first (past
    /// directives stacked on it, and alternatives to it in other branches of a
    /// preprocessor conditional), else the token after the site.
    pub fn nest_token(&self, i: usize) -> Option<usize> {
        match &self.stmts[i] {
            Some(s) => Some(s.toks().start),
            None => self.sites[i].token().map(|t| t + 1),
        }
    }

    /// The site whose directive starts at token `t` (after preprocessor lines), as
    /// [`Syntax::site_at`](crate::syntax::Syntax::site_at), or the alternative compiled in
    /// its place.
    pub fn site_at(&self, t: usize) -> Option<usize> {
        let s = self.syntax.site_at(t)?;
        Some(self.compiled_in.get(&s).copied().unwrap_or(s))
    }

    /// Line of site `i`.
    pub fn line(&self, i: usize) -> usize {
        self.line_at(self.at(i))
    }

    /// Line of byte `offset` of `src`, as messages name it (in the file).
    pub fn line_at(&self, offset: usize) -> usize {
        match self.file_lines {
            Some(f) => f(offset),
            None => self.lines.line_col(offset).0,
        }
    }

    /// The indexes of the site tree.
    pub fn index(&self) -> &SiteIndex {
        self.index.get_or_init(|| SiteIndex::new(self))
    }

    /// Brings the index's nearest compute construct and `routine` of each site up to date
    /// after directives were left unchanged (rejected): a stale answer walks the tree, which
    /// for a nest of rejected constructs is a walk to the root per site. The rest of the
    /// index stays (its lists are checked by their callers).
    pub fn refresh_nearest(&mut self) {
        // Out of the unit while it is rewritten in place (a second list per site would add
        // to a large file's peak); the walk below does not read it.
        let Some(mut ix) = self.index.take() else {
            return;
        };
        if ix.compute.len() == self.sites.len() && ix.routine.len() == self.sites.len() {
            nearest_into(self, is_compute, &mut ix.compute);
            nearest_into(self, is_routine, &mut ix.routine);
            let _ = self.index.set(ix);
        }
    }

    /// Nearest enclosing compute construct (a combined directive is its own).
    pub fn compute_of(&self, i: usize) -> Option<usize> {
        self.nearest(i, &self.index().compute, is_compute)
    }

    /// Nearest enclosing `routine` without a name (`i` itself included).
    pub fn routine_of(&self, i: usize) -> Option<usize> {
        self.nearest(i, &self.index().routine, is_routine)
    }

    /// The nearest site around or at `i` that `is`, from `known` (the index's answer).
    /// Directives only become unparsed after the index is built: the site found then is the
    /// answer if it still `is`, none then means none now.
    fn nearest(
        &self,
        i: usize,
        known: &[Option<usize>],
        is: fn(&Unit, usize) -> bool,
    ) -> Option<usize> {
        match known.get(i).copied() {
            Some(None) => None,
            Some(Some(c)) if is(self, c) => Some(c),
            _ => self.nearest_walk(i, is),
        }
    }

    /// [`Unit::nearest`] by walking the enclosing sites.
    fn nearest_walk(&self, i: usize, is: fn(&Unit, usize) -> bool) -> Option<usize> {
        let mut cur = Some(i);
        while let Some(c) = cur {
            if is(self, c) {
                return Some(c);
            }
            cur = self.parent[c];
        }
        None
    }

    /// Enclosing sites, innermost first.
    pub fn ancestors(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(self.parent[i], |&p| self.parent[p])
    }

    /// All sites nested in `i`, in source order.
    pub fn descendants(&self, i: usize) -> Vec<usize> {
        if let Some(r) = self.subtree(i) {
            return r.collect();
        }
        let mut out = Vec::new();
        let mut stack: Vec<usize> = self.children[i].iter().rev().copied().collect();
        while let Some(c) = stack.pop() {
            out.push(c);
            stack.extend(self.children[c].iter().rev());
        }
        out
    }

    /// The sites nested in `i` (`descendants`), as a range of site indices, when the
    /// index has it.
    pub fn subtree(&self, i: usize) -> Option<std::ops::Range<usize>> {
        self.index().end.get(i).map(|&e| i + 1..e)
    }

    /// Consecutive whole trees of top-level sites, each range at least `min` sites long (but
    /// the last): work on the sites of one range never reads or changes another's. One range
    /// when the index has no subtree ends.
    pub fn tree_runs(&self, min: usize) -> Vec<std::ops::Range<usize>> {
        let n = self.sites.len();
        let end = &self.index().end;
        if end.len() != n {
            return std::iter::once(0..n).collect();
        }
        let (mut runs, mut from, mut i) = (Vec::new(), 0, 0);
        while i < n {
            if i - from >= min {
                runs.push(from..i);
                from = i;
            }
            i = end[i].max(i + 1);
        }
        runs.push(from..n);
        runs
    }

    /// Whether some directive had clause `clause` when the index was built.
    pub fn any_with_clause(&self, clause: &str) -> bool {
        self.index().with_clause.contains_key(clause)
    }

    /// Whether the file calls a runtime routine with a queue argument (`acc_*_async`).
    pub fn has_async_calls(&self) -> bool {
        !self.index().async_calls.is_empty()
    }

    /// The sites nested in `i` whose directive was named `name` when the index was built
    /// (check `dir`), in source order.
    pub fn nested_named(&self, i: usize, name: &str) -> Vec<usize> {
        self.nested_in(i, self.index().named.get(name), |d| d.name == name)
    }

    /// The sites nested in `i` whose directive had a clause `clause` when the index was
    /// built (check `dir`), in source order.
    pub fn nested_with_clause(&self, i: usize, clause: &str) -> Vec<usize> {
        self.nested_in(i, self.index().with_clause.get(clause), |d| d.has(clause))
    }

    fn nested_in(
        &self,
        i: usize,
        list: Option<&Vec<usize>>,
        test: impl Fn(&Directive) -> bool,
    ) -> Vec<usize> {
        match self.subtree(i) {
            Some(r) => {
                let list = list.map_or(&[][..], Vec::as_slice);
                let from = list.partition_point(|&k| k < r.start);
                let to = list.partition_point(|&k| k < r.end);
                list[from..to].to_vec()
            }
            None => self
                .descendants(i)
                .into_iter()
                .filter(|&k| self.dir(k).is_some_and(&test))
                .collect(),
        }
    }

    /// The tokens of `toks` that may start an OpenMP directive (see `SiteIndex`).
    pub fn omp_pragmas(&self, toks: std::ops::Range<usize>) -> &[usize] {
        let list = &self.index().omp_pragmas;
        let from = list.partition_point(|&t| t < toks.start);
        let to = list.partition_point(|&t| t < toks.end);
        &list[from..to.max(from)]
    }

    /// Whether tokens `toks` call a runtime routine with a queue argument (`acc_*_async`).
    pub fn calls_async_routine(&self, toks: std::ops::Range<usize>) -> bool {
        let calls = &self.index().async_calls;
        let k = calls.partition_point(|&t| t < toks.start);
        calls.get(k).is_some_and(|&t| t < toks.end)
    }

    pub fn is_loop(&self, i: usize) -> bool {
        self.dir(i)
            .is_some_and(|d| d.name == "loop" || d.is_combined())
    }

    /// The `for` loop that is the whole body of `kernels` construct `c` when no loop
    /// directive precedes it (`kernels` + `for`, or `kernels` + `{ for }`): a loop the
    /// OpenACC compiler would parallelize if it proves the iterations independent.
    pub fn bare_loop(&self, c: usize) -> Option<ForLoop> {
        let d = self.dir(c)?;
        if d.compute_kind() != Some("kernels") || d.is_combined() {
            return None;
        }
        let stmt = self.stmts[c].as_ref()?;
        let s = self.syntax.statements_in(&stmt.toks());
        match s.as_slice() {
            [first] if self.site_at(*first).is_none() => self.syntax.loop_at(*first),
            _ => None,
        }
    }

    /// The loop site that is the whole body of compute construct `c` (`kernels` +
    /// `acc loop` + `for`), if any.
    pub fn single_loop_site(&self, c: usize) -> Option<usize> {
        let stmt = self.stmts[c].as_ref()?;
        let s = self.syntax.statements_in(&stmt.toks());
        let (&first, rest) = s.split_first()?;
        let l = self
            .site_at(first)
            .filter(|&l| self.is_loop(l) && self.parent[l] == Some(c))?;
        // Fortran lists the directive apart from its `do` (and an optional `!$acc end loop`):
        // the rest of the body must be the loop's own statement.
        let own = self.stmts[l].as_ref()?;
        let inside = |t: usize| {
            own.toks().contains(&t) || self.site_at(t).is_some_and(|e| Some(e) == own.end())
        };
        rest.iter().all(|&t| inside(t)).then_some(l)
    }
}
