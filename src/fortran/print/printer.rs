//! The Fortran printer of one file, the language's `Printer`: which plans it can write in
//! place, the lines of each rewritten site, queue and declare edits, review notes and
//! guard lines. It puts the layout pieces of its parent module together.

use super::{
    Form, Spelling, directive_lines, guard_line, indentation, removal, rewrite_lines, site_lines,
};
use crate::fortran::lines::LineKind;
use crate::fortran::sites::Site;

mod host_data;
mod inserted;
mod loop_end;
mod scope;
mod versions;

/// The variable of the loop over the gangs (`Insert::GangLoop`).
const GANG_VAR: &str = "acc2omp_gang";

/// The Fortran printer of one file: it rewrites a translated directive's lines as
/// `!$omp` lines in the site's spelling and form, writes the end directive of what the
/// opener became, and puts the guard line above a directive left as OpenACC.
pub struct FortranPrinter<'a> {
    src: &'a str,
    front: &'a crate::fortran::Front,
    /// Per seam site (the `!$acc` sites, in order): its index in `front.sites`.
    acc_sites: Vec<usize>,
    /// Per program unit: the first site whose OpenMP names the queue objects (where their
    /// declaration is added).
    first_queue_sites: std::sync::OnceLock<std::collections::HashMap<Option<usize>, usize>>,
    /// Where each preprocessor line starts, ascending.
    preprocessor_starts: std::sync::OnceLock<Vec<usize>>,
    /// [`crate::translate::queues::has_async`] of the unit at that address: a search of
    /// the whole file, asked once per `data` site.
    has_async: std::sync::OnceLock<(usize, bool)>,
    /// [`crate::fortran::declare::DeclarativeEnds`], read once for the `declare` sites.
    declarative_ends: std::sync::OnceLock<crate::fortran::declare::DeclarativeEnds>,
    /// Per `do` loop end (`DoLoop::end`): the first loop's start ([`Self::shares_termination`]).
    first_loop_by_end: std::sync::OnceLock<std::collections::HashMap<Option<usize>, usize>>,
}

impl<'a> FortranPrinter<'a> {
    pub fn new(src: &'a str, front: &'a crate::fortran::Front) -> Self {
        let acc_sites = front
            .sites
            .iter()
            .enumerate()
            .filter(|(_, s)| s.sentinel == crate::fortran::lines::Sentinel::Acc)
            .map(|(k, _)| k)
            .collect();
        FortranPrinter {
            src,
            front,
            acc_sites,
            first_queue_sites: std::sync::OnceLock::new(),
            preprocessor_starts: std::sync::OnceLock::new(),
            has_async: std::sync::OnceLock::new(),
            declarative_ends: std::sync::OnceLock::new(),
            first_loop_by_end: std::sync::OnceLock::new(),
        }
    }

    /// Whether the file of `u` has asynchronous work, asked of the unit once.
    fn has_async(&self, u: &crate::unit::Unit) -> bool {
        let key = std::ptr::from_ref(u) as usize;
        match self
            .has_async
            .get_or_init(|| (key, crate::translate::queues::has_async(u)))
        {
            &(k, known) if k == key => known,
            _ => crate::translate::queues::has_async(u),
        }
    }

    /// Whether a preprocessor line starts in `bytes`.
    fn preprocessor_in(&self, bytes: std::ops::Range<usize>) -> bool {
        let starts = self.preprocessor_starts.get_or_init(|| {
            (self.front.lines.iter())
                .filter(|l| l.kind == LineKind::Preprocessor)
                .map(|l| l.start)
                .collect()
        });
        let k = starts.partition_point(|&at| at < bytes.start);
        starts.get(k).is_some_and(|&at| at < bytes.end)
    }

    fn site(&self, i: usize) -> &Site {
        &self.front.sites[self.acc_sites[i]]
    }

    /// Whether the printer writes `plan` of site `i` (a rewrite in place, nothing added
    /// around it but a new scope, no preprocessor line between its lines); else why not.
    fn writes(
        &self,
        plan: &crate::intent::Plan,
        i: usize,
        d: Option<&crate::directive::Directive>,
    ) -> Result<(), &'static str> {
        use crate::intent::{Action, Insert};
        let queued = d.is_some_and(|d| crate::fortran::queues::involved(d, plan));
        if queued && !crate::fortran::queues::writable(plan) {
            return Err("it needs directives or declarations added around it");
        }
        // A declarative directive (`routine`, `declare`) stands in the unit it applies to:
        // `declare target` there covers the unit to its end (no end directive), and a data
        // lifetime's exits are the unit's `return` and end statements.
        let declarative = self.front.structure.regions[self.acc_sites[i]].applies
            == crate::fortran::structure::Applies::Declarative;
        // Directives before loops of its region: checked by `inserted_lines`.
        let exits_only = plan.inserts.iter().all(|x| match x {
            Insert::GangLoop { .. } | Insert::BeforeStatement { .. } => true,
            _ => declarative && matches!(x, Insert::AtExits { .. }),
        });
        // A `host_data … if_present`'s constructs before its own: written by its shape.
        let nested = d.is_some_and(host_data::is_if_present);
        // `copyout … finalize`'s update is written before the directive unless the
        // directive takes a shape of its own (OPTIONAL arguments, components).
        let finalize = updates_first(d, plan)
            && match (d, &plan.action) {
                (Some(d), Action::Rewrite(rw)) => self
                    .special_shape(i, d, &Self::parts(d, rw, &self.site(i).text))
                    .is_none(),
                _ => false,
            };
        if !queued
            && ((!plan.before.is_empty() && !nested && !finalize)
                || !exits_only
                || (plan.end_after_stmt.is_some() && !declarative))
        {
            return Err("it needs directives or declarations added around it");
        }
        let cpp = self
            .front
            .lines
            .range(self.site(i).lines.clone())
            .any(|l| l.kind == LineKind::Preprocessor);
        match &plan.action {
            Action::Rewrite(_) | Action::Close { .. } | Action::Remove if cpp => {
                Err("a preprocessor line stands between its lines")
            }
            Action::Rewrite(_) | Action::Close { .. } | Action::Unchanged | Action::Remove => {
                Ok(())
            }
            Action::Calls(_) if cpp => Err("a preprocessor line stands between its lines"),
            Action::Calls(c) => self.calls_lines(i, c, "\n").map(|_| ()),
        }
    }

    /// The local copies a plan asks for that are control variables of the `do` loops of
    /// the site's statement: Fortran makes them private already (OpenMP's predetermined
    /// rules), so no copy is needed; a `simd` construct names them `private` so that the
    /// variable outside keeps its value, as OpenACC's private loop variable does (`simd`
    /// makes it linear and writes the last value back).
    fn private_controls(&self, u: &crate::unit::Unit, i: usize, plan: &mut crate::intent::Plan) {
        use crate::intent::{Action, OmpClause};
        let Some(stmt) = u.stmts[i].as_ref() else {
            return;
        };
        let st = &self.front.structure;
        let controls: Vec<String> = st
            .loops_starting_in(stmt.bytes())
            .iter()
            .filter_map(|lp| lp.var().map(String::from))
            .collect();
        let is_control = |v: &String| controls.iter().any(|c| c.eq_ignore_ascii_case(v));
        let (ctl, other): (Vec<String>, Vec<String>) =
            plan.scope.locals.drain(..).partition(is_control);
        plan.scope.locals = other;
        // Only `simd` writes the last value back; elsewhere dropping the copy is enough. A
        // deferred construct (`nowait`) names every control variable: gfortran 12 writes the
        // last values back into the frame of a procedure that may have returned.
        if let Action::Rewrite(rw) = &mut plan.action
            && rw.name.has("simd")
        {
            let deferred = rw.append.iter().any(|c| c.name == "nowait")
                || rw.ops.iter().any(|op| {
                    matches!(op, crate::intent::ClauseOp::Replace(cs) if cs.iter().any(|c| c.name == "nowait"))
                });
            let ctl = if deferred { controls.clone() } else { ctl };
            let written = |v: &str| {
                u.dir(i).is_some_and(|d| {
                    d.clauses.iter().any(|c| {
                        c.name == "private"
                            && c.items().any(|it| it.text.trim().eq_ignore_ascii_case(v))
                    })
                })
            };
            for v in ctl {
                let named = written(&v)
                    || rw.append.iter().any(|c| {
                        c.name == "private"
                            && c.arg.as_deref().is_some_and(|a| a.eq_ignore_ascii_case(&v))
                    });
                if !named {
                    rw.append.push(OmpClause::new("private", v));
                }
            }
        }
    }

    /// The OpenMP text of a rewrite of directive `d` (whose text is `text`).
    fn render(d: &crate::directive::Directive, rw: &crate::intent::Rewrite, text: &str) -> String {
        Self::joined(&Self::parts(d, rw, text))
    }

    /// The OpenMP text of a rewrite's `parts`: its name and its clauses' texts.
    fn joined((name, clauses): &(String, Vec<(String, String)>)) -> String {
        let mut parts = vec![name.as_str()];
        parts.extend(clauses.iter().map(|c| c.1.as_str()));
        parts.join(" ")
    }

    /// The OpenMP name (with the directive's argument) and clauses, each as its name and
    /// text, of a rewrite of directive `d`.
    fn parts(
        d: &crate::directive::Directive,
        rw: &crate::intent::Rewrite,
        text: &str,
    ) -> (String, Vec<(String, String)>) {
        (
            Self::name_part(d, rw, text),
            Self::clause_parts(d, rw, text),
        )
    }

    /// The OpenMP name of a rewrite of directive `d`, with the directive's argument.
    fn name_part(
        d: &crate::directive::Directive,
        rw: &crate::intent::Rewrite,
        text: &str,
    ) -> String {
        let mut name = crate::fortran::construct_name::spelled(&rw.name);
        if !rw.drop_arg
            && let Some(a) = &d.arg
        {
            name.push_str(&format!("({})", &text[a.span()]));
        }
        name
    }

    /// The OpenMP clauses of a rewrite of directive `d`, each as its name and text.
    fn clause_parts(
        d: &crate::directive::Directive,
        rw: &crate::intent::Rewrite,
        text: &str,
    ) -> Vec<(String, String)> {
        use crate::intent::ClauseOp;
        let mut clauses = Vec::new();
        for (c, op) in d.clauses.iter().zip(&rw.ops) {
            match op {
                ClauseOp::Keep => clauses.push((c.name.to_string(), text[c.span()].to_string())),
                ClauseOp::Replace(t) => {
                    clauses.extend(t.iter().map(|o| (o.name.to_string(), o.text())));
                }
                ClauseOp::Drop => {}
            }
        }
        clauses.extend(rw.append.iter().map(|o| (o.name.to_string(), o.text())));
        for (_, text) in &mut clauses {
            if let Some(t) = crate::print::operators::minus_as_plus(text) {
                *text = t;
            }
        }
        clauses
    }

    /// The queue shape of site `i` (a rewrite with queue work), or None.
    fn shape(
        &self,
        u: &crate::unit::Unit,
        plans: &[crate::intent::Plan],
        i: usize,
    ) -> Option<crate::fortran::queues::Shape> {
        let d = u.dir(i)?;
        let crate::intent::Action::Rewrite(rw) = &plans[i].action else {
            return None;
        };
        if let Some(s) = self.if_present_shape(d, &plans[i], rw, i) {
            return Some(s);
        }
        self.shape_of(u, plans, i, &Self::parts(d, rw, &self.site(i).text))
    }

    /// What `shape` gives past its `if_present` test, from `parts` of site `i`'s rewrite
    /// (computed once by a caller that also renders them).
    fn shape_of(
        &self,
        u: &crate::unit::Unit,
        plans: &[crate::intent::Plan],
        i: usize,
        parts: &(String, Vec<(String, String)>),
    ) -> Option<crate::fortran::queues::Shape> {
        let d = u.dir(i)?;
        let wait_at_end = d.name == "data"
            && self.has_async(u)
            && u.stmts[i]
                .as_ref()
                .is_some_and(|s| self.preprocessor_in(s.bytes()));
        let (name, clauses) = parts;
        // (`writes` lets it through only without a special shape.)
        if !crate::fortran::queues::involved(d, &plans[i]) && updates_first(Some(d), &plans[i]) {
            return Some(crate::fortran::queues::Shape {
                before: plans[i].before.iter().map(|b| b.text("do")).collect(),
                main: Self::joined(parts),
                ..Default::default()
            });
        }
        let k = self.acc_sites[i];
        let split = crate::fortran::target_split::firstprivate_split(self.front, k, name, clauses);
        let unclosed = crate::fortran::target_split::unclosed_block(self.front, k, name);
        if !wait_at_end && !split && !unclosed && !crate::fortran::queues::involved(d, &plans[i]) {
            return self.special_shape(i, d, parts);
        }
        // A split without queue work is one without `nowait`.
        let undeferred =
            self.frame_bound(u, i) || (split && !clauses.iter().any(|c| c.0 == "nowait"));
        Some(crate::fortran::queues::shape(
            name,
            clauses.clone(),
            &plans[i],
            wait_at_end,
            undeferred,
        ))
    }

    /// The shape of a rewrite without queue work that is more than its directive: a test
    /// of OPTIONAL arguments around it, a component's update as an empty `target`.
    fn special_shape(
        &self,
        i: usize,
        d: &crate::directive::Directive,
        (name, clauses): &(String, Vec<(String, String)>),
    ) -> Option<crate::fortran::queues::Shape> {
        let k = self.acc_sites[i];
        let no_create = crate::fortran::optional_args::no_create_items(self.front, k, d);
        crate::fortran::optional_args::split_shape(self.front, k, name, clauses, &no_create)
            .or_else(|| crate::fortran::component_update::shape(self.front, k, d, name, clauses))
    }

    /// Whether offset `at` lies inside a statement's text (a directive line between its
    /// continued lines): statements are in file order, so one binary search.
    fn inside_statement(&self, at: usize) -> bool {
        let stmts = &self.front.lexed.stmts;
        let n = stmts.partition_point(|s| s.span().start < at);
        n > 0 && stmts[n - 1].span().end > at
    }

    /// Whether site `i`'s rewrite adds an end directive after the last line of its
    /// statement: a combined loop directive without its end directive whose OpenMP is a
    /// block construct (`target` around a sequential loop, a `target` split off for a queue).
    fn ends_after_statement(
        &self,
        u: &crate::unit::Unit,
        plans: &[crate::intent::Plan],
        i: usize,
    ) -> bool {
        let (Some(d), crate::intent::Action::Rewrite(rw)) = (u.dir(i), &plans[i].action) else {
            return false;
        };
        if d.name == "declare" || u.stmts[i].as_ref().is_none_or(|s| s.end().is_some()) {
            return false;
        }
        match self.shape(u, plans, i) {
            Some(s) => !s.after_stmt.is_empty(),
            None => d.name.ends_with(" loop") && loop_end::needs_end(&rw.name),
        }
    }

    /// A compute construct on a queue that names a dummy argument of its procedure (in a
    /// clause or its region): gfortran 12 reads a dummy's address from the procedure's frame
    /// when a deferred `target` task runs, after the procedure may have returned (a crash,
    /// or a wrong result for an assumed-shape array); such a construct keeps its queue
    /// dependences without `nowait`.
    fn frame_bound(&self, u: &crate::unit::Unit, i: usize) -> bool {
        let Some(d) = u.dir(i) else { return false };
        if d.compute_kind().is_none() || d.find("async").is_none() {
            return false;
        }
        let site = self.site(i);
        let Some(unit) = crate::fortran::queues::unit_at(self.front, site.span.start) else {
            return false;
        };
        let dummies = crate::fortran::queues::dummies(self.src, self.front, unit);
        if dummies.is_empty() {
            return false;
        }
        let extent = self.front.structure.regions[self.acc_sites[i]].extent();
        let lx = &self.front.lexed;
        let stmts: Vec<usize> = (0..lx.stmts.len())
            .filter(|&k| extent.contains(&lx.stmts[k].span().start))
            .collect();
        let used = match (stmts.first(), stmts.last()) {
            (Some(&a), Some(&b)) => {
                crate::fortran::facts::uses(self.src, lx, &self.front.structure, a..b + 1)
            }
            _ => Vec::new(),
        };
        let text = site.text.to_ascii_lowercase();
        let words: Vec<&str> = text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .collect();
        dummies
            .iter()
            .any(|n| used.iter().any(|x| &x.name == n) || words.contains(&n.as_str()))
    }

    /// Directive lines `texts` in site `i`'s spelling, each followed by `eol`.
    fn lines_of(&self, i: usize, texts: &[String], eol: &str) -> String {
        let site = self.site(i);
        let sp = Spelling::of(self.src, site);
        let indent = indentation(self.src, site);
        texts
            .iter()
            .map(|t| match crate::fortran::optional_args::is_statement(t) {
                true => {
                    let line = self.statement_lines(i, t, eol);
                    format!(
                        "{}{eol}",
                        line.unwrap_or_else(|| format!("{}{t}", self.statement_indent(i)))
                    )
                }
                false => format!("{}{eol}", directive_lines(sp, indent, t, eol)),
            })
            .collect()
    }

    /// The edits of a site with queue work: its lines, the directives around it, the end
    /// of a split construct after its statement, the declaration of the queue objects in
    /// the first such site of its program unit.
    fn queue_edits(
        &self,
        u: &crate::unit::Unit,
        plans: &[crate::intent::Plan],
        i: usize,
        shape: &crate::fortran::queues::Shape,
    ) -> Vec<crate::edit::Edit> {
        use crate::edit::Edit;
        let eol = u.eol;
        let site = self.site(i);
        let Some(main) = rewrite_lines(self.src, &self.front.lines, site, &shape.main, eol) else {
            return Vec::new();
        };
        let before = self.lines_of(i, &shape.before, eol);
        let after = self.lines_of(i, &shape.after, eol);
        let after = after.strip_suffix(eol).unwrap_or(&after);
        let sep = if after.is_empty() { "" } else { eol };
        let mut out = vec![Edit::replace(
            site_lines(site, &self.front.lines),
            format!("{before}{main}{sep}{after}"),
        )];
        let open = u.stmts[i].as_ref().filter(|s| s.end().is_none());
        if let (Some(stmt), false) = (open, shape.after_stmt.is_empty()) {
            let lines = &self.front.lines;
            let Some(last) = lines.last_starting_before(stmt.bytes().end) else {
                return Vec::new();
            };
            let ends = self.lines_of(i, &shape.after_stmt, eol);
            let ends = ends.strip_suffix(eol).unwrap_or(&ends);
            let at = lines.get(last).end;
            out.push(Edit::replace(at..at, format!("{eol}{ends}")));
        }
        if shape.names_queues() {
            let unit = crate::fortran::queues::unit_at(self.front, site.span.start);
            let firsts = self.first_queue_sites.get_or_init(|| {
                let mut m = std::collections::HashMap::new();
                for k in 0..plans.len() {
                    if self.shape(u, plans, k).is_some_and(|s| s.names_queues()) {
                        let at = self.site(k).span.start;
                        m.entry(crate::fortran::queues::unit_at(self.front, at))
                            .or_insert(k);
                    }
                }
                m
            });
            if firsts.get(&unit) == Some(&i)
                && let Some(unit) = unit
                && let Some((r, t)) =
                    crate::fortran::queues::declaration(self.src, self.front, unit, eol)
            {
                out.push(Edit::replace(r, t));
            }
        }
        out
    }

    /// Whether front-end site `k` stands in a module (or submodule).
    fn in_module(&self, k: usize) -> bool {
        use crate::fortran::stmt::UnitKind;
        let st = &self.front.structure;
        st.regions[k]
            .unit()
            .is_some_and(|u| matches!(st.units[u].kind, UnitKind::Module | UnitKind::Submodule))
    }

    /// A `declare` the printer cannot write (offset, reason); an allocatable module
    /// variable leaves a module's `declare target` (its device copy follows `allocate`).
    fn declare_review(
        &self,
        d: &crate::directive::Directive,
        plan: &mut crate::intent::Plan,
        i: usize,
    ) -> Option<(usize, String)> {
        use crate::intent::{Action, ClauseOp};
        let k = self.acc_sites[i];
        let Action::Rewrite(rw) = &mut plan.action else {
            return None;
        };
        let module = self.in_module(k);
        if let Some(r) = crate::fortran::declare::refusal(self.src, self.front, k, d, module) {
            return Some(r);
        }
        let alloc = crate::fortran::declare::allocatables(self.front, k, d);
        if !module || alloc.is_empty() {
            return None;
        }
        for op in &mut rw.ops {
            let ClauseOp::Replace(cs) = op else { continue };
            for c in cs.iter_mut() {
                let Some(a) = &c.arg else { continue };
                let kept: Vec<&str> = a
                    .split(", ")
                    .filter(|x| !alloc.iter().any(|y| y.eq_ignore_ascii_case(x)))
                    .collect();
                c.arg = Some(kept.join(", ").into());
            }
            cs.retain(|c| c.arg.as_deref().is_some_and(|a| !a.is_empty()));
        }
        if rw
            .ops
            .iter()
            .all(|op| matches!(op, ClauseOp::Replace(cs) if cs.is_empty()))
        {
            plan.action = Action::Remove;
        }
        None
    }

    /// The edits of a translated `declare`: the directive in place or after the unit's
    /// specification part, the exit data at the unit's exits, and, in a module, the data
    /// directives at each `allocate` and `deallocate` of its allocatable variables.
    fn declare_edits(
        &self,
        u: &crate::unit::Unit,
        plan: &crate::intent::Plan,
        i: usize,
    ) -> Vec<crate::edit::Edit> {
        use crate::edit::Edit;
        use crate::fortran::declare::{
            DeclarativeEnds, Side, allocatables, allocations, enter_point,
        };
        use crate::intent::{Action, Insert};
        let (k, site) = (self.acc_sites[i], self.site(i));
        let Some(d) = u.dir(i) else {
            return Vec::new();
        };
        let sp = Spelling::of(self.src, site);
        let indent = indentation(self.src, site);
        let module = self.in_module(k);
        // A subprogram's data directive with OPTIONAL items: split as a standalone one.
        let line = |text: &str, clauses: &[(String, String)]| {
            let name = ["target enter data", "target exit data"]
                .into_iter()
                .find(|n| text.starts_with(n));
            let shape = name.filter(|_| !module).and_then(|n| {
                crate::fortran::optional_args::split_shape(self.front, k, n, clauses, &[])
            });
            match shape {
                Some(sh) => {
                    let all: Vec<String> = sh
                        .before
                        .into_iter()
                        .chain([sh.main])
                        .chain(sh.after)
                        .collect();
                    self.lines_of(i, &all, u.eol)
                }
                None => format!("{}{}", directive_lines(sp, indent, text, u.eol), u.eol),
            }
        };
        let mut out = Vec::new();
        match &plan.action {
            Action::Rewrite(rw) => {
                let parts = Self::parts(d, rw, &site.text);
                let text = Self::joined(&parts);
                let clauses = parts.1;
                // Asked only outside modules, whose `declare` becomes `declare target` in place.
                let ends =
                    || (self.declarative_ends).get_or_init(|| DeclarativeEnds::new(self.front));
                match (!module)
                    .then(|| enter_point(self.front, k, ends()))
                    .flatten()
                {
                    Some(at) => {
                        let Some((range, kept)) = removal(self.src, &self.front.lines, site, u.eol)
                        else {
                            return Vec::new();
                        };
                        out.push(Edit::replace(range, kept));
                        out.push(Edit::insert(at, line(&text, &clauses)));
                    }
                    None => out.extend(self.replace(i, &text, u.eol)),
                }
            }
            _ => {
                if let Some((range, kept)) = removal(self.src, &self.front.lines, site, u.eol) {
                    out.push(Edit::replace(range, kept));
                }
            }
        }
        for x in &plan.inserts {
            let Insert::AtExits {
                returns,
                end,
                directive,
            } = x
            else {
                continue;
            };
            let clauses: Vec<(String, String)> = directive
                .clauses
                .iter()
                .map(|c| (c.name.to_string(), c.text()))
                .collect();
            for &at in returns.iter().chain(end) {
                let l = &self.front.lines.get(self.front.lines.line_of(at));
                out.push(Edit::insert(l.start, line(&directive.text("do"), &clauses)));
            }
        }
        if module {
            let lx = &self.front.lexed;
            for name in allocatables(self.front, k, d) {
                let Some(v) = self.front.structure.regions[k]
                    .unit()
                    .and_then(|un| self.front.facts.lookup(&self.front.structure, un, &name))
                else {
                    continue;
                };
                for a in allocations(self.src, self.front, &v).unwrap_or_default() {
                    let stmt = &lx.stmts[a.stmt];
                    let lines = &self.front.lines;
                    let first = &lines.get(stmt.lines().start);
                    let ws = &self.src[first.start..stmt.span().start];
                    let ind = if ws.trim().is_empty() { ws } else { indent };
                    let vars = a.vars.join(", ");
                    let (at, text) = match a.side {
                        Side::After => {
                            let last = &lines.get(stmt.lines().end - 1);
                            let text = format!("target enter data map(alloc: {vars})");
                            let body =
                                format!("{}{}", directive_lines(sp, ind, &text, u.eol), u.eol);
                            if last.next == last.end {
                                (
                                    last.end,
                                    format!("{}{}", u.eol, body.trim_end_matches(['\r', '\n'])),
                                )
                            } else {
                                (last.next, body)
                            }
                        }
                        Side::Before => {
                            let text = format!("target exit data map(delete: {vars})");
                            (
                                first.start,
                                format!("{}{}", directive_lines(sp, ind, &text, u.eol), u.eol),
                            )
                        }
                    };
                    out.push(Edit::insert(at, text));
                }
            }
        }
        out
    }

    /// The edits of site `i`'s own plan (its lines, the end directive of what it became),
    /// without a new scope around it.
    fn own_edits(
        &self,
        u: &crate::unit::Unit,
        plans: &[crate::intent::Plan],
        i: usize,
        d: &crate::directive::Directive,
    ) -> Vec<crate::edit::Edit> {
        use crate::intent::Action;
        match &plans[i].action {
            Action::Rewrite(_) | Action::Remove if d.name == "declare" => {
                self.declare_edits(u, &plans[i], i)
            }
            Action::Rewrite(rw) => {
                // `shape` in two steps, its parts rendered below when it gives none.
                if let Some(shape) = self.if_present_shape(d, &plans[i], rw, i) {
                    return self.queue_edits(u, plans, i, &shape);
                }
                let parts = Self::parts(d, rw, &self.site(i).text);
                if let Some(shape) = self.shape_of(u, plans, i, &parts) {
                    return self.queue_edits(u, plans, i, &shape);
                }
                let text = Self::joined(&parts);
                let mut edits = self.replace(i, &text, u.eol);
                if !edits.is_empty() {
                    edits.extend(self.loop_end(u, d, i, &rw.name));
                }
                edits
            }
            Action::Remove => {
                let site = self.site(i);
                // The end directive of a loop removed with a new scope (its private
                // variables' local copies) gives its place to the `end block`.
                let close = u
                    .ancestors(i)
                    .find(|&o| u.stmts[o].as_ref().and_then(|s| s.end()) == Some(i))
                    .filter(|&o| matches!(plans[o].action, Action::Remove))
                    .and_then(|o| self.block(u, &plans[o], o).ok().flatten())
                    .map_or(String::new(), |b| format!("{}{}", b.close, u.eol));
                match removal(self.src, &self.front.lines, site, u.eol) {
                    Some((range, text)) => {
                        vec![crate::edit::Edit::replace(range, format!("{close}{text}"))]
                    }
                    None => Vec::new(),
                }
            }
            Action::Calls(c) => {
                let site = self.site(i);
                let lines = self.calls_lines(i, c, u.eol);
                match (lines, removal(self.src, &self.front.lines, site, u.eol)) {
                    (Ok(text), Some((range, comments))) => vec![crate::edit::Edit::replace(
                        range,
                        format!("{text}{}{comments}", u.eol),
                    )],
                    _ => Vec::new(),
                }
            }
            Action::Close { opener } => match &plans[*opener].action {
                Action::Rewrite(_) if let Some(shape) = self.shape(u, plans, *opener) => {
                    let text = self.lines_of(i, &shape.close, u.eol);
                    let text = text.strip_suffix(u.eol).unwrap_or(&text);
                    let site = self.site(i);
                    match rewrite_lines(self.src, &self.front.lines, site, "", u.eol) {
                        Some(rest) => {
                            let comments = rest.split_once(u.eol).map_or("", |(_, c)| c);
                            let sep = if comments.is_empty() { "" } else { u.eol };
                            vec![crate::edit::Edit::replace(
                                site_lines(site, &self.front.lines),
                                format!("{text}{sep}{comments}"),
                            )]
                        }
                        None => Vec::new(),
                    }
                }
                Action::Rewrite(rw) => self.replace(
                    i,
                    &format!("end {}", crate::fortran::construct_name::spelled(&rw.name)),
                    u.eol,
                ),
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    /// The lines of the runtime statements `c` that replace site `i` (`set`).
    fn calls_lines(
        &self,
        i: usize,
        c: &crate::intent::Calls,
        eol: &str,
    ) -> Result<String, &'static str> {
        let site = self.site(i);
        let form = Spelling::of(self.src, site).form;
        super::runtime_calls::lines(c, form, indentation(self.src, site), eol)
    }

    /// The loop over the gangs a plan asks for (`Insert::GangLoop`): `do` after the lines of
    /// the construct's directive (and of the construct split from it), `end do` before the
    /// lines of its end directive; its variable is declared in the plan's `block`.
    fn gang_loop(
        &self,
        u: &crate::unit::Unit,
        plans: &[crate::intent::Plan],
        i: usize,
        edits: &mut Vec<crate::edit::Edit>,
    ) {
        use crate::intent::{Action, Insert};
        let (opener, text) = match plans[i].action {
            Action::Close { opener } => (opener, "end do".to_string()),
            _ => (i, String::new()),
        };
        let Some(gangs) = plans[opener].inserts.iter().find_map(|x| match x {
            Insert::GangLoop { gangs } => Some(gangs),
            _ => None,
        }) else {
            return;
        };
        let site = self.site(opener);
        // Conditional-compilation lines: a build without OpenMP runs the body once, as the
        // host runs one gang (and needs no OpenMP routine).
        let indent = match Spelling::of(self.src, site).form {
            Form::Free => format!("{}!$ ", indentation(self.src, site)),
            Form::Fixed => "!$    ".to_string(),
        };
        let site_i = self.site(i);
        let lines = &self.front.lines;
        if opener == i {
            let after = lines.next(site_i.lines.end - 1);
            // The host test is in the body: gfortran 12 rejects a runtime call in the loop's
            // bounds, which are strictly nested in `teams`.
            let head = format!(
                "{indent}do {GANG_VAR} = 1, {gangs}{eol}{indent}  if ({GANG_VAR} > 1 .and. omp_is_initial_device()) cycle{eol}",
                eol = u.eol
            );
            edits.push(crate::edit::Edit::insert(after, head));
        } else {
            edits.push(crate::edit::Edit::insert(
                lines.start(site_i.lines.start),
                format!("{indent}{text}{}", u.eol),
            ));
        }
    }

    /// The edit that replaces site `i`'s lines with the directive `text`.
    fn replace(&self, i: usize, text: &str, eol: &str) -> Vec<crate::edit::Edit> {
        let site = self.site(i);
        match rewrite_lines(self.src, &self.front.lines, site, text, eol) {
            Some(t) => vec![crate::edit::Edit::replace(
                site_lines(site, &self.front.lines),
                t,
            )],
            None => Vec::new(),
        }
    }
}

impl crate::print::Printer for FortranPrinter<'_> {
    fn site_edits(
        &self,
        u: &crate::unit::Unit,
        plans: &[crate::intent::Plan],
        i: usize,
    ) -> Vec<crate::edit::Edit> {
        use crate::intent::Action;
        let Some(d) = u.dir(i) else {
            return Vec::new();
        };
        let mut edits = self.own_edits(u, plans, i, d);
        if edits.is_empty() {
            return edits;
        }
        // The `if` of versions opens before everything at the site's first line.
        for (n, e) in self.versions_edits(u, plans, i).into_iter().enumerate() {
            match n {
                0 if e.range.start == self.front.lines.get(self.site(i).lines.start).start => {
                    edits.insert(0, e)
                }
                _ => edits.push(e),
            }
        }
        self.gang_loop(u, plans, i, &mut edits);
        edits.extend(self.inserted_lines(u, &plans[i], i).unwrap_or_default());
        // A new scope: `block` before the site's lines, `end block` after its statement
        // (or after the end directive of an opener that has a scope).
        let close_of = match &plans[i].action {
            Action::Close { opener } => Some(*opener),
            _ => None,
        };
        if close_of.is_none()
            && let Ok(Some(b)) = self.block(u, &plans[i], i)
        {
            let at = self.front.lines.get(self.site(i).lines.start).start;
            edits.insert(0, crate::edit::Edit::insert(at, b.open));
            if u.stmts[i].as_ref().is_some_and(|s| s.end().is_none())
                && let Some(at) = self.after_statement(u, i)
            {
                edits.push(crate::edit::Edit::insert(
                    at,
                    format!("{}{}", u.eol, b.close),
                ));
            }
        }
        if let Some(o) = close_of
            && let Ok(Some(b)) = self.block(u, &plans[o], o)
        {
            let at = site_lines(self.site(i), &self.front.lines).end;
            edits.push(crate::edit::Edit::insert(
                at,
                format!("{}{}", u.eol, b.close),
            ));
        }
        edits
    }

    fn locate(&self, _u: &crate::unit::Unit, i: usize, offset: usize) -> usize {
        let site = self.site(i);
        if offset < site.span.start && offset <= site.text.len() {
            site.file_offset(offset)
        } else {
            offset
        }
    }

    /// Plans this printer cannot write yet stay OpenACC; an `end` directive closes what its
    /// opener became (or stays with it).
    fn review(
        &self,
        u: &crate::unit::Unit,
        plans: &mut [crate::intent::Plan],
    ) -> Vec<crate::diag::Diagnostic> {
        use crate::intent::Action;
        let mut out = Vec::new();
        // A decision places a diagnostic about a clause at the clause's offset in the
        // directive's joined text (the seam site's `unescaped`): mapped back to the file. An
        // offset before the site that the text could hold is one of those.
        for (i, p) in plans.iter_mut().enumerate() {
            let site = self.site(i);
            // A diagnostic per clause at most, in clause order: mapped in one walk of the lines.
            let mut offsets = site.offsets();
            for d in &mut p.diags {
                if d.offset < site.span.start && d.offset <= site.text.len() {
                    d.offset = offsets.file_offset(d.offset);
                    d.end = None;
                }
            }
        }
        let all: Vec<(usize, &crate::directive::Directive)> = (0..plans.len())
            .filter_map(|j| Some((self.acc_sites[j], u.dir(j)?)))
            .collect();
        let mapped = crate::fortran::deep_maps::mapped(self.front, self.src, &all);
        for i in 0..plans.len() {
            let Some(d) = u.dir(i) else { continue };
            if d.name.starts_with("end ") {
                continue;
            }
            // Between the lines of a continued statement, lines written there would split it
            // (or a continuation would then continue one of them).
            if self.inside_statement(self.front.sites[self.acc_sites[i]].span.start) {
                plans[i].unchanged();
                plans[i].diags.clear();
                out.push(crate::diag::Diagnostic::new(
                    u.at(i),
                    crate::rules::id::NOT_TRANSLATED,
                    format!(
                        "'acc {}' stands between the lines of a continued statement; the directive is left unchanged",
                        d.name
                    ),
                ));
                continue;
            }
            // An end directive after the statement's last line would take the code that
            // follows the statement there into the construct.
            if self.shares_last_line(u, i) && self.ends_after_statement(u, plans, i) {
                plans[i].unchanged();
                plans[i].diags.clear();
                out.push(crate::diag::Diagnostic::new(
                    u.at(i),
                    crate::rules::id::NOT_TRANSLATED,
                    format!(
                        "the OpenMP for 'acc {}' needs an end directive after its loop, but code follows the loop on its last line, which would then be inside the construct; the directive is left unchanged",
                        d.name
                    ),
                ));
                continue;
            }
            let plan = &mut plans[i];
            crate::fortran::simd_collapse::drop_simd(self.src, self.front, self.acc_sites[i], plan);
            crate::fortran::target_split::scalar_privates(
                self.src,
                self.front,
                &mapped,
                self.acc_sites[i],
                d,
                plan,
            );
            self.private_controls(u, i, plan);
            // The shared reason speaks of C's braces.
            for dg in &mut plan.diags {
                if dg.rule == crate::rules::id::DECLARE_RETURN {
                    dg.message = "this statement leaves the unit, so the 'declare' data lifetime ends here, but no 'target exit data' line can go before it (the action of a logical 'if', a statement sharing its line, a label a jump may reach, or an 'entry'); write it alone on its line without a label; the directive is left unchanged".into();
                }
            }
            if let Some((at, why)) = (d.name == "declare")
                .then(|| self.declare_review(d, plan, i))
                .flatten()
                .or_else(|| {
                    crate::fortran::deep_maps::refusal(self.front, self.acc_sites[i], d, &mapped)
                })
                .or_else(|| self.if_present_refusal(u, i, d))
                .or_else(|| k_maps(self.front, self.acc_sites[i], d, plan, &mapped).err())
            {
                plan.unchanged();
                plan.diags.clear();
                out.push(crate::diag::Diagnostic::new(
                    at,
                    crate::rules::id::NOT_TRANSLATED,
                    why,
                ));
                continue;
            }
            // A loop over the gangs is synchronous already (its note says so).
            let gang_loop = plan
                .inserts
                .iter()
                .any(|x| matches!(x, crate::intent::Insert::GangLoop { .. }));
            if matches!(plan.action, Action::Rewrite(_)) && !gang_loop && self.frame_bound(u, i) {
                out.push(crate::diag::Diagnostic::new(
                    u.at(i),
                    crate::rules::id::ASYNC_QUEUES,
                    "this construct names a dummy argument: its 'target' keeps the queue's dependences without 'nowait' (the host waits for it), since gfortran 12 reads a dummy's address from the procedure's frame when a deferred target task runs, which may be after the procedure returned",
                ));
            }
            let written = self
                .writes(plan, i, Some(d))
                .and_then(|()| self.inserted_lines(u, plan, i).map(|_| ()))
                .map_err(str::to_string);
            if let Err(why) = written.and_then(|()| self.scope_writable(u, plan, i)) {
                plan.unchanged();
                out.push(crate::diag::Diagnostic::new(
                    u.at(i),
                    crate::rules::id::NOT_TRANSLATED,
                    format!(
                        "the OpenMP for 'acc {}' cannot be written in Fortran yet ({why}); the directive is left unchanged",
                        d.name
                    ),
                ));
            }
        }
        // A construct this review leaves keeps its loops OpenACC too, as in planning: an inner
        // `loop` translated alone would be OpenMP inside OpenACC, and the next run would
        // read the pair differently.
        crate::translate::keep_inside_unchanged(u, plans);
        crate::fortran::nested_simd::add_safelen(u, plans);
        out.extend(crate::fortran::common_blocks::name_members(
            self.src,
            self.front,
            &self.acc_sites,
            plans,
            &|i| u.at(i),
        ));
        out.extend(self.optional_review(u, plans));
        out.extend(self.no_create_review(u, plans));
        // An update of components that becomes a `target` region with `always` maps.
        for (i, plan) in plans.iter().enumerate() {
            if let (Some(d), Action::Rewrite(rw)) = (u.dir(i), &plan.action)
                && d.name == "update"
                && self
                    .shape(u, plans, i)
                    .is_some_and(|s| s.after == ["end target"])
            {
                let (name, _) = Self::parts(d, rw, &self.site(i).text);
                out.push(crate::diag::Diagnostic::new(
                    u.at(i),
                    crate::rules::id::FORTRAN_UPDATE_COMPONENT,
                    format!("'{name}' of a derived-type component (rejected by gfortran 12) becomes an empty 'target' region whose 'always' maps copy the same data; presence is not checked"),
                ));
            }
        }
        // The end directives: the end of what the opener became, or left with it.
        for c in 0..plans.len() {
            let Some(end) = u.stmts[c].as_ref().and_then(|s| s.end()) else {
                continue;
            };
            let opened = matches!(plans[c].action, Action::Rewrite(_))
                && u.dir(c).is_some()
                && self.writes(&plans[end], end, u.dir(end)).is_ok();
            // A construct removed (a `data` that maps nothing) takes its end with it.
            let removed = matches!(plans[c].action, Action::Remove) && u.dir(c).is_some();
            let p = &mut plans[end];
            p.diags.clear();
            if opened {
                p.action = Action::Close { opener: c };
            } else if removed {
                p.action = Action::Remove;
            } else {
                p.unchanged();
            }
        }
        out
    }

    fn guards(
        &self,
        u: &crate::unit::Unit,
        left: &[(usize, Option<String>)],
    ) -> Vec<crate::edit::Edit> {
        let mut out = Vec::new();
        if left.is_empty() {
            return out;
        }
        // The first site at each offset, read once.
        let mut site_at = std::collections::HashMap::new();
        for (k, s) in self.front.sites.iter().enumerate() {
            site_at.entry(s.span.start).or_insert(k);
        }
        for (at, _) in left {
            let Some(&k) = site_at.get(at) else {
                continue;
            };
            let site = &self.front.sites[k];
            let first = &self.front.lines.get(site.lines.start);
            // A guard already above it (a second run): kept as it is.
            let prev = self
                .front
                .lines
                .range(0..site.lines.start)
                .rev()
                .find(|l| l.kind != LineKind::Blank);
            if prev.is_some_and(|l| {
                self.src[l.start..l.end]
                    .trim_start()
                    .to_ascii_lowercase()
                    .starts_with("!$ include 'acc2omp: openacc at line")
                    || self.src[l.start..l.end]
                        .to_ascii_lowercase()
                        .starts_with("!$    include 'acc2omp: openacc at line")
            }) {
                continue;
            }
            let sp = Spelling::of(self.src, site);
            let line = guard_line(sp, indentation(self.src, site), u.line_at(*at));
            out.push(crate::edit::Edit::replace(
                first.start..first.start,
                format!("{line}{}", u.eol),
            ));
        }
        out
    }
}

/// The map clauses of front-end site `k` (directive `d`) under Rule K
/// (`crate::fortran::deep_maps::k_map`): a clause some of whose items change becomes one
/// `map` clause per run of items mapped alike. Err: the clause is not the one `map` the
/// rule can edit (offset, reason).
fn k_maps(
    front: &crate::fortran::Front,
    k: usize,
    d: &crate::directive::Directive,
    plan: &mut crate::intent::Plan,
    mapped: &crate::fortran::deep_maps::Mapped,
) -> Result<(), (usize, String)> {
    use crate::intent::{Action, ClauseOp, OmpClause};
    let (Action::Rewrite(rw), Some(unit)) = (
        &mut plan.action,
        front.structure.regions.get(k).and_then(|r| r.unit()),
    ) else {
        return Ok(());
    };
    for (c, op) in d.clauses.iter().zip(rw.ops.iter_mut()) {
        let items: Vec<&str> = c.items().map(|it| it.text.trim()).collect();
        let ks: Vec<_> = items
            .iter()
            .map(|it| crate::fortran::deep_maps::k_map(front, unit, d, &c.name, it, mapped))
            .collect();
        if ks.iter().all(Option::is_none) {
            continue;
        }
        let refuse = || {
            let why = format!(
                "the map of '{}' under the deep-copy rule could not be written; the directive is left unchanged",
                c.spelled()
            );
            (front.sites[k].span.start, why)
        };
        let ClauseOp::Replace(v) = op else {
            return Err(refuse());
        };
        let [one] = v.as_slice() else {
            return Err(refuse());
        };
        let arg = one.arg.as_deref().unwrap_or_default();
        use crate::fortran::queues::split_outside_parentheses as split;
        let top = split(arg, ':');
        let (Some(head), Some(list), None) = (top.first(), top.get(1), top.get(2)) else {
            return Err(refuse());
        };
        let texts = split(list, ',');
        // The modifiers without the map type, which the rule's replaces.
        let mut mods = split(head, ',');
        mods.pop();
        if one.name != "map" || texts.len() != items.len() {
            return Err(refuse());
        }
        let mut out: Vec<(String, Vec<&str>)> = Vec::new();
        for (t, kk) in texts.iter().zip(&ks) {
            let prefix = match kk {
                None => head.to_string(),
                Some((always, ty)) => {
                    let mut m = mods.clone();
                    if *always && !m.iter().any(|x| x == "always") {
                        m.insert(0, "always".to_string());
                    }
                    m.push(ty.to_string());
                    m.join(", ")
                }
            };
            match out.last_mut() {
                Some((p, list)) if *p == prefix => list.push(t.as_str()),
                _ => out.push((prefix, vec![t.as_str()])),
            }
        }
        *v = out
            .into_iter()
            .map(|(p, list)| OmpClause::new("map", format!("{p}: {}", list.join(", "))))
            .collect();
    }
    Ok(())
}

/// Whether `plan` of an `exit data` puts only `target update` directives before its own:
/// `copyout(x) finalize` is `target update from(x)` and then `map(delete: x)` (the
/// reference count set to zero), written as lines before the directive. Not of a component
/// (`p%x`), which gfortran 12 rejects in `target update`.
fn updates_first(d: Option<&crate::directive::Directive>, plan: &crate::intent::Plan) -> bool {
    d.is_some_and(|d| d.name == "exit data")
        && !plan.before.is_empty()
        && plan.before.iter().all(|b| {
            b.name.starts_with("target update")
                && b.name.after("target update").is_none()
                && b.clauses
                    .iter()
                    .all(|c| !c.arg.as_deref().is_some_and(|a| a.contains('%')))
        })
}
