//! A compute construct that names OPTIONAL dummy arguments, in versions by their presence
//! (see `fortran::optional_args`): `if (present(b)) then`, the construct as translated,
//! `else`, a byte-exact copy of it whose directive leaves `b` out of its maps and names it
//! `has_device_addr`, `end if`. Two arguments give four versions; more are not built. The
//! copy of the region must be valid where the original is: no `!$acc` directive inside
//! (its translation would be needed twice), no construct name (each must be unique in the
//! unit), and statement labels only on the terminal statements of its labelled `do` loops:
//! each copy takes unused labels of the same width for them (see [`Relabel`]).

use super::super::{Form, Spelling, end_directive, indentation, limit, site_lines};
use crate::edit::Edit;
use crate::fortran::optional_args::{absent_clauses, tested};
use crate::hash::{HashMap, HashSet};
use crate::intent::{Action, Plan};

/// The most OPTIONAL arguments a construct's versions test.
const MOST: usize = 2;

/// Site `i`'s versions: the arguments tested, the region's bytes copied into each version,
/// where the versions after the first go, and the end directive's site.
pub(super) struct Versions {
    pub names: Vec<String>,
    body: std::ops::Range<usize>,
    at: usize,
    end: Option<usize>,
    labels: Relabel,
}

/// The labels of a region's `do` loops, written anew in each copy: where each is written
/// (its terminal statement's label, the `do` statement's reference), and per copy the
/// unused label that replaces each.
#[derive(Debug, Default)]
struct Relabel {
    at: Vec<(std::ops::Range<usize>, u32)>,
    fresh: Vec<Vec<(u32, u32)>>,
}

impl Relabel {
    /// The region's bytes `body` of `src` as copy `k` writes them.
    fn copy(&self, src: &str, body: &std::ops::Range<usize>, k: usize) -> String {
        let mut out = String::new();
        let mut from = body.start;
        for (r, old) in &self.at {
            let new = self.fresh[k]
                .iter()
                .find(|x| x.0 == *old)
                .map_or(*old, |x| x.1);
            out.push_str(&src[from..r.start]);
            out.push_str(&new.to_string());
            from = r.end;
        }
        out.push_str(&src[from..body.end]);
        out
    }
}

impl super::FortranPrinter<'_> {
    /// The versions of site `i` when its construct names OPTIONAL arguments: Ok(None) when
    /// it names none (or is no compute construct the printer rewrites alone), else why not.
    pub(super) fn versions(
        &self,
        u: &crate::unit::Unit,
        plans: &[Plan],
        i: usize,
    ) -> Result<Option<Versions>, String> {
        let Some(d) = u.dir(i) else { return Ok(None) };
        if d.compute_kind().is_none() || !matches!(plans[i].action, Action::Rewrite(_)) {
            return Ok(None);
        }
        let k = self.acc_sites[i];
        let vars = u.site_facts(i).map_or(&[][..], |f| &f.vars[..]);
        let names = tested(self.front, k, d, vars, u.tables);
        if names.is_empty() {
            return Ok(None);
        }
        if names.len() > MOST {
            return Err(format!(
                "it names {} OPTIONAL arguments: versions by their presence are built for at most {MOST}",
                names.len()
            ));
        }
        if self.shape(u, plans, i).is_some() {
            return Err("its directive becomes more than one line".into());
        }
        if !matches!(self.block(u, &plans[i], i), Ok(None)) {
            return Err("it needs a new scope".into());
        }
        let lines = &self.front.lines;
        let site = self.site(i);
        let start = lines.next(site.lines.end - 1);
        let stmt = u.stmts[i]
            .as_ref()
            .ok_or("the statement it applies to is not known")?;
        let (body, at, end) = match stmt.end() {
            // The `if` goes before the opener and `else … end if` after the end directive:
            // both must be written, or neither.
            Some(e) if !matches!(plans.get(e).map(|p| &p.action), Some(Action::Close { opener }) if *opener == i) =>
            {
                return Err("its end directive is not rewritten with it".into());
            }
            Some(e) => {
                let first = &lines.get(self.site(e).lines.start);
                (
                    start..first.start,
                    site_lines(self.site(e), &self.front.lines).end,
                    Some(e),
                )
            }
            None => {
                let Action::Rewrite(rw) = &plans[i].action else {
                    return Ok(None);
                };
                if super::loop_end::needs_end(&rw.name) {
                    return Err("its OpenMP construct needs an end directive after the loop".into());
                }
                let at = self
                    .after_statement(u, i)
                    .ok_or("the end of its statement is not known")?;
                (start..at, at, None)
            }
        };
        self.copyable(body.clone())?;
        let copies = (1 << names.len()) - 1;
        let labels = self.relabel(&body, copies)?;
        let v = Versions {
            names,
            body,
            at,
            end,
            labels,
        };
        self.versions_open(u, i, &v)?;
        Ok(Some(v))
    }

    /// Whether the bytes `body` can stand twice in their unit; else why not. The sites,
    /// tokens and statements are in source order: those starting in `body` are found by
    /// binary search (a file of thousands of such constructs asks once per construct).
    fn copyable(&self, body: std::ops::Range<usize>) -> Result<(), String> {
        let answer = self.copyable_within(body.clone());
        #[cfg(test)]
        assert_eq!(answer, self.copyable_scan(body));
        answer
    }

    fn copyable_within(&self, body: std::ops::Range<usize>) -> Result<(), String> {
        use crate::fortran::lines::Sentinel;
        let inside = |r: &std::ops::Range<usize>| body.start <= r.start && r.end <= body.end;
        let sites = starting_in(&self.front.sites, &body, |s| s.span.start);
        if sites
            .iter()
            .any(|s| s.sentinel == Sentinel::Acc && inside(&s.span))
        {
            return Err("its region holds an OpenACC directive".into());
        }
        // The copy is of the original bytes: what the runtime pass rewrites in the region
        // (`acc_*` names, `_OPENACC`, `!$` lines) would stay OpenACC in it.
        let lower = self.src[body.clone()].to_ascii_lowercase();
        if lower.contains("_openacc")
            || starting_in(&self.front.lexed.tokens, &body, |t| t.start())
                .iter()
                .any(|t| {
                    let r = t.range();
                    inside(&r) && self.src[r].to_ascii_lowercase().starts_with("acc_")
                })
        {
            return Err("its region uses the OpenACC runtime, which the copy would keep".into());
        }
        if sites
            .iter()
            .any(|s| s.sentinel == Sentinel::Conditional && inside(&s.span))
        {
            return Err("its region holds a '!$' conditional-compilation line".into());
        }
        // A construct not closed where it should be, copied twice between `if` and `end
        // if`, would be read differently by the next run: a translation that is no fixed point.
        let problems = &self.front.problems;
        let p = problems.partition_point(|p| p.offset < body.start);
        if problems.get(p).is_some_and(|p| p.offset < body.end) {
            return Err("its region holds a statement out of place (reported)".into());
        }
        let all = &self.front.lexed.stmts;
        let first = all.partition_point(|s| s.span().start < body.start);
        let stmts = &self.front.structure.stmts;
        for (k, s) in all.iter().enumerate().skip(first) {
            if s.span().start >= body.end {
                break;
            }
            if !inside(&s.span()) {
                continue;
            }
            if stmts.get(k).is_some_and(|c| c.name().is_some()) {
                return Err("its region holds a construct name".into());
            }
        }
        Ok(())
    }

    /// The labels of region `body` rewritten in its `copies` copies: only the terminal
    /// statements of `do` loops in it may have one, referenced by nothing else in it (an
    /// integer of that value anywhere in the region keeps it one version, as a `goto` or
    /// I/O reference would need to be rewritten too); each copy takes unused labels of the
    /// same width, which keeps a fixed-form statement in its columns.
    fn relabel(&self, body: &std::ops::Range<usize>, copies: usize) -> Result<Relabel, String> {
        let lx = &self.front.lexed;
        let st = &self.front.structure;
        let inside = |r: &std::ops::Range<usize>| body.start <= r.start && r.end <= body.end;
        let first = lx.stmts.partition_point(|s| s.span().start < body.start);
        let mut at: Vec<(std::ops::Range<usize>, u32)> = Vec::new();
        let mut refs: Vec<usize> = Vec::new();
        let mut ends: Vec<(usize, u32)> = Vec::new();
        let mut headers: Vec<std::ops::Range<usize>> = Vec::new();
        for (k, s) in lx.stmts.iter().enumerate().skip(first) {
            if s.span().start >= body.end {
                break;
            }
            if !inside(&s.span()) {
                continue;
            }
            // A `do` statement's only label position is the token after the keyword: its
            // bounds (`do 10 i = 1, 10`) are no references.
            if lx.text(self.src, s.toks().start).eq_ignore_ascii_case("do") {
                headers.push(s.toks());
            }
            if let Some(lp) = st.loop_at(k).map(|l| &st.loops[l])
                && let Some(v) = lp.label()
            {
                // `do 10 …`: the keyword, then the label as its own token.
                let t = s.toks().start;
                let tok = &lx.tokens[t + 1..s.toks().end.min(t + 2)];
                if !lx.text(self.src, t).eq_ignore_ascii_case("do")
                    || tok.first().is_none_or(|x| {
                        x.split() || lx.text(self.src, t + 1).parse::<u32>().ok() != Some(v)
                    })
                {
                    return Err("its region holds a statement label".into());
                }
                let e = lp.end().ok_or("its region holds a statement label")?;
                ends.push((e, v));
                refs.push(t + 1);
                at.push((tok[0].range(), v));
            }
            if let Some(l) = &s.label {
                if !ends.contains(&(k, l.value)) {
                    return Err("its region holds a statement label".into());
                }
                at.push((l.span.clone(), l.value));
            }
        }
        if at.is_empty() {
            return Ok(Relabel::default());
        }
        let mut old: Vec<u32> = at.iter().map(|x| x.1).collect();
        old.sort_unstable();
        old.dedup();
        // Any other integer of a label's value: a reference this does not rewrite.
        let base = lx.tokens.partition_point(|t| t.start() < body.start);
        let toks = starting_in(&lx.tokens, body, |t| t.start());
        for (j, t) in toks.iter().enumerate() {
            if t.kind() == crate::fortran::lex::TokKind::Int
                && !refs.contains(&(base + j))
                && !headers.iter().any(|h| h.contains(&(base + j)))
                && lx
                    .text(self.src, base + j)
                    .parse::<u32>()
                    .is_ok_and(|v| old.binary_search(&v).is_ok())
            {
                return Err("its region holds a statement label".into());
            }
        }
        at.sort_by_key(|x| x.0.start);
        // Labels are unique in their unit, and every region of the unit copied takes fresh
        // ones: each label of the unit, in order, gets its own fresh labels for the most
        // copies a region makes (three), whichever region holds it and whether or not that
        // region is copied, so that no two copies meet (and the walk stays within the unit:
        // a file may hold thousands of such regions).
        const MOST: usize = 3;
        if copies > MOST {
            return Err("its region holds a statement label".into());
        }
        let unit = st
            .unit_of(first)
            .map(|u| &st.units[u].span)
            .ok_or("its region holds a statement label")?;
        let lo = lx.stmts.partition_point(|s| s.span().start < unit.start);
        let hi = lo + lx.stmts[lo..].partition_point(|s| s.span().start < unit.end);
        let labels: Vec<u32> = lx.stmts[lo..hi]
            .iter()
            .filter_map(|s| Some(s.label.as_ref()?.value))
            .collect();
        let mut used: HashSet<u32> = labels.iter().copied().collect();
        let mut given: HashMap<u32, Vec<u32>> = HashMap::default();
        for &v in &labels {
            if given.contains_key(&v) {
                continue;
            }
            let width = v.to_string().len() as u32;
            let mut next = 10u32.pow(width - 1).max(1);
            let mut mine = Vec::with_capacity(MOST);
            while mine.len() < MOST && next < 10u32.pow(width) {
                if used.insert(next) {
                    mine.push(next);
                }
                next += 1;
            }
            given.insert(v, mine);
        }
        let mut fresh = vec![Vec::new(); copies];
        for &v in &old {
            for (k, copy) in fresh.iter_mut().enumerate() {
                let Some(&new) = given.get(&v).and_then(|m| m.get(k)) else {
                    let width = v.to_string().len();
                    return Err(format!(
                        "its region holds labels, and no unused label of {width} digits is left for their copies"
                    ));
                };
                copy.push((v, new));
            }
        }
        Ok(Relabel { at, fresh })
    }

    /// [`Self::copyable`] by a walk of the whole file's sites, tokens and statements.
    #[cfg(test)]
    fn copyable_scan(&self, body: std::ops::Range<usize>) -> Result<(), String> {
        let inside = |r: &std::ops::Range<usize>| body.start <= r.start && r.end <= body.end;
        if self
            .front
            .sites
            .iter()
            .any(|s| s.sentinel == crate::fortran::lines::Sentinel::Acc && inside(&s.span))
        {
            return Err("its region holds an OpenACC directive".into());
        }
        let lower = self.src[body.clone()].to_ascii_lowercase();
        if lower.contains("_openacc")
            || self.front.lexed.tokens.iter().any(|t| {
                let r = t.range();
                inside(&r) && self.src[r].to_ascii_lowercase().starts_with("acc_")
            })
        {
            return Err("its region uses the OpenACC runtime, which the copy would keep".into());
        }
        if self
            .front
            .sites
            .iter()
            .any(|s| s.sentinel == crate::fortran::lines::Sentinel::Conditional && inside(&s.span))
        {
            return Err("its region holds a '!$' conditional-compilation line".into());
        }
        if self.front.problems.iter().any(|p| body.contains(&p.offset)) {
            return Err("its region holds a statement out of place (reported)".into());
        }
        let stmts = &self.front.structure.stmts;
        for (k, s) in self.front.lexed.stmts.iter().enumerate() {
            if !inside(&s.span()) {
                continue;
            }
            if stmts.get(k).is_some_and(|c| c.name().is_some()) {
                return Err("its region holds a construct name".into());
            }
        }
        Ok(())
    }

    /// The indentation of a statement written before site `i` (column 7 in fixed form).
    pub(super) fn statement_indent(&self, i: usize) -> String {
        let site = self.site(i);
        match Spelling::of(self.src, site).form {
            Form::Free => indentation(self.src, site).to_string(),
            Form::Fixed => " ".repeat(6),
        }
    }

    /// Statement `text` written before site `i`, continued to fit its form's limit.
    pub(super) fn statement_lines(&self, i: usize, text: &str, eol: &str) -> Option<String> {
        let form = Spelling::of(self.src, self.site(i)).form;
        fitted(form, &self.statement_indent(i), text, eol)
    }

    /// The `if` line before site `i` (with its terminator), or why it cannot be written.
    pub(super) fn versions_open(
        &self,
        u: &crate::unit::Unit,
        i: usize,
        v: &Versions,
    ) -> Result<String, String> {
        let line = format!("if ({}) then", presence(&v.names));
        let head = self
            .statement_lines(i, &line, u.eol)
            .ok_or_else(|| format!("'{line}' cannot be continued within the line-length limit"))?;
        // The `else if` lines of the other versions.
        for present in present_sets(&v.names) {
            let line = format!("else if ({}) then", presence(&present));
            if !present.is_empty() && self.statement_lines(i, &line, u.eol).is_none() {
                return Err(format!(
                    "'{line}' cannot be continued within the line-length limit"
                ));
            }
        }
        Ok(format!("{head}{}", u.eol))
    }

    /// The versions after the first and the `end if`, inserted after the construct.
    pub(super) fn versions_rest(
        &self,
        u: &crate::unit::Unit,
        plans: &[Plan],
        i: usize,
        v: &Versions,
    ) -> Option<Edit> {
        let d = u.dir(i)?;
        let Action::Rewrite(rw) = &plans[i].action else {
            return None;
        };
        let eol = u.eol;
        let site = self.site(i);
        let sp = Spelling::of(self.src, site);
        let indent = indentation(self.src, site);
        let stmt_indent = self.statement_indent(i);
        let (name, clauses) = Self::parts(d, rw, &site.text);
        let mut text = String::new();
        for (k, present) in present_sets(&v.names).into_iter().enumerate() {
            let body = v.labels.copy(self.src, &v.body, k);
            let close = match v.end {
                Some(e) => {
                    let end = end_directive(sp, indentation(self.src, self.site(e)), &name, eol);
                    format!("{body}{}", end.strip_suffix(eol).unwrap_or(&end))
                }
                None => body,
            };
            let absent: Vec<String> = v
                .names
                .iter()
                .filter(|x| !present.contains(x))
                .cloned()
                .collect();
            let head = match present.is_empty() {
                true => format!("{stmt_indent}else"),
                false => {
                    self.statement_lines(i, &format!("else if ({}) then", presence(&present)), eol)?
                }
            };
            let mut parts = vec![name.clone()];
            parts.extend(absent_clauses(&clauses, &absent).into_iter().map(|c| c.1));
            let opener = super::super::directive_lines(sp, indent, &parts.join(" "), eol);
            text.push_str(&format!("{eol}{head}{eol}{opener}{eol}{close}"));
        }
        text.push_str(&format!("{eol}{stmt_indent}end if"));
        Some(Edit::insert(v.at, text))
    }
}

/// The sets of `names` present in the versions after the first (all present), the empty
/// one last.
fn present_sets(names: &[String]) -> Vec<Vec<String>> {
    let n = names.len();
    (0..(1usize << n) - 1)
        .rev()
        .map(|mask| {
            (0..n)
                .filter(|b| mask & (1 << (n - 1 - b)) != 0)
                .map(|b| names[b].clone())
                .collect()
        })
        .collect()
}

/// Statement `text` in `form` from `indent`, continued at blanks where it passes the
/// line-length limit (`&` at the end of the line in free form, `&` in column 6 in fixed
/// form), without the last line's terminator; None when a word alone passes it.
pub(super) fn fitted(form: Form, indent: &str, text: &str, eol: &str) -> Option<String> {
    let max = limit(form);
    let (first, next, tail) = match form {
        Form::Free => (indent.to_string(), format!("{indent}    "), " &"),
        Form::Fixed => (" ".repeat(6), format!("{}&", " ".repeat(5)), ""),
    };
    if first.len() + text.len() <= max {
        return Some(format!("{first}{text}"));
    }
    let mut lines = Vec::new();
    let mut line = first.clone();
    let mut empty = true;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let lead = if empty { "" } else { " " };
        if line.len() + lead.len() + word.len() + tail.len() <= max {
            line.push_str(lead);
            line.push_str(word);
            empty = false;
            continue;
        }
        if next.len() + word.len() + tail.len() <= max && !empty {
            line.push_str(tail);
            lines.push(std::mem::replace(&mut line, format!("{next}{word}")));
            continue;
        }
        // A word longer than a line: fixed form ignores blanks, so it may go on across
        // lines; free form would need `&` inside a token.
        if form == Form::Free {
            return None;
        }
        line.push_str(lead);
        for c in word.chars() {
            if line.len() == max {
                lines.push(std::mem::replace(&mut line, next.clone()));
            }
            line.push(c);
        }
        empty = false;
    }
    lines.push(line);
    Some(lines.join(eol))
}

/// `present(b) .and. present(c)`.
fn presence(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("present({n})"))
        .collect::<Vec<_>>()
        .join(" .and. ")
}

impl super::FortranPrinter<'_> {
    /// The edits of versions for site `i`: the `if` line before an opener, the other
    /// versions after its construct (after the loop, or after the end directive site `i`
    /// closes).
    pub(super) fn versions_edits(
        &self,
        u: &crate::unit::Unit,
        plans: &[Plan],
        i: usize,
    ) -> Vec<Edit> {
        let mut out = Vec::new();
        if let Ok(Some(v)) = self.versions(u, plans, i) {
            let at = self.front.lines.get(self.site(i).lines.start).start;
            if let Ok(open) = self.versions_open(u, i, &v) {
                out.push(Edit::insert(at, open));
            }
            if v.end.is_none() {
                out.extend(self.versions_rest(u, plans, i, &v));
            }
        }
        if let Action::Close { opener } = plans[i].action
            && let Ok(Some(v)) = self.versions(u, plans, opener)
            && v.end == Some(i)
        {
            out.extend(self.versions_rest(u, plans, opener, &v));
        }
        out
    }

    /// What the review says of OPTIONAL arguments in translated directives: a note where
    /// data directives are split or a construct gets versions; else the warning.
    pub(super) fn optional_review(
        &self,
        u: &crate::unit::Unit,
        plans: &[Plan],
    ) -> Vec<crate::diag::Diagnostic> {
        use crate::rules::id;
        let mut out = Vec::new();
        for (i, plan) in plans.iter().enumerate() {
            let (Some(d), Action::Rewrite(rw)) = (u.dir(i), &plan.action) else {
                continue;
            };
            let k = self.acc_sites[i];
            let vars = u.site_facts(i).map_or(&[][..], |f| &f.vars[..]);
            // The clauses are rendered only for a directive that may split.
            let text = &self.site(i).text;
            let name = Self::name_part(d, rw, text);
            let split = !crate::fortran::queues::involved(d, plan)
                && crate::fortran::optional_args::may_split(&name)
                && crate::fortran::optional_args::split_shape(
                    self.front,
                    k,
                    &name,
                    &Self::clause_parts(d, rw, text),
                    &[],
                )
                .is_some();
            let versions = self.versions(u, plans, i);
            let why = match &versions {
                Err(why) => Some(why.clone()),
                _ => None,
            };
            if split {
                out.push(crate::diag::Diagnostic::new(
                    u.at(i),
                    id::FORTRAN_OPTIONAL_VERSIONS,
                    format!("the OPTIONAL arguments of '{name}' move to directives of their own under 'if(present(…))': OpenACC ignores a data clause on an absent argument, and OpenMP maps of one are not portable (flang-22 maps it at address 0)"),
                ));
            } else if let Ok(Some(v)) = versions {
                let names = crate::diag::quoted_names(&v.names);
                let copied = if v.labels.at.is_empty() {
                    "the region copied byte for byte"
                } else {
                    "the region copied byte for byte but for the labels of its do loops, fresh in each copy"
                };
                out.push(crate::diag::Diagnostic::new(
                    u.at(i),
                    id::FORTRAN_OPTIONAL_VERSIONS,
                    format!("the construct names the OPTIONAL argument(s) {names}: it is written in versions by their presence ('if (present(…)) then' … 'else' … 'end if', {copied}); where an argument is absent, its maps are left out and 'has_device_addr' passes its null address, as OpenACC ignores a data clause on an absent argument and OpenMP maps of one are not portable"),
                ));
                let alloc = crate::fortran::optional_args::allocatables(self.front, k, &v.names);
                if !alloc.is_empty() {
                    let alloc = crate::diag::quoted_names(&alloc);
                    out.push(crate::diag::Diagnostic::new(
                        u.at(i),
                        id::FORTRAN_OPTIONAL_MAP,
                        format!("{alloc}: flang-22 crashes on a target region that names an absent OPTIONAL ALLOCATABLE or POINTER argument, in every form of its clauses (the version without it included); gfortran runs it"),
                    ));
                }
            } else if let Some(mut w) = crate::fortran::optional_args::warning(
                self.front,
                k,
                self.site(i),
                d,
                vars,
                u.tables,
            ) {
                if let Some(why) = why {
                    w.message.push_str(&format!(
                        "; versions by the arguments' presence are not built: {why}"
                    ));
                }
                out.push(w);
            }
        }
        out
    }
}

impl super::FortranPrinter<'_> {
    /// A `data` construct whose `no_create` items all moved to directives under a
    /// presence test (`optional_args::split_shape`): the note, in place of the
    /// `no-create-alloc` warnings of its plan.
    pub(super) fn no_create_review(
        &self,
        u: &crate::unit::Unit,
        plans: &mut [Plan],
    ) -> Vec<crate::diag::Diagnostic> {
        use crate::fortran::optional_args::{IS_PRESENT, no_create_items};
        use crate::rules::id;
        let mut out = Vec::new();
        for i in 0..plans.len() {
            let Some(d) = u.dir(i) else { continue };
            if d.name != "data" || !matches!(plans[i].action, Action::Rewrite(_)) {
                continue;
            }
            let all = d
                .clauses
                .iter()
                .filter(|c| c.name == "no_create")
                .flat_map(|c| c.items())
                .count();
            let moved = no_create_items(self.front, self.acc_sites[i], d);
            if all == 0 || moved.len() != all {
                continue;
            }
            let Some(shape) = self.shape(u, plans, i) else {
                continue;
            };
            let tested = shape
                .after
                .iter()
                .chain([&shape.main])
                .filter(|t| t.contains(IS_PRESENT))
                .count();
            if tested != all {
                continue;
            }
            plans[i].diags.retain(|x| x.rule != id::NO_CREATE_ALLOC);
            out.push(crate::diag::Diagnostic::new(
                u.at(i),
                id::FORTRAN_NO_CREATE,
                format!(
                    "'no_create({})' has no OpenMP counterpart: each item is mapped by a 'target data' of its own under 'if({IS_PRESENT}(…))', so data that is not present is not allocated and stays on the host, as in OpenACC",
                    moved.join(", ")
                ),
            ));
        }
        out
    }
}

/// The items of `all` (ascending by `start`) that start in `body`.
fn starting_in<'a, T>(
    all: &'a [T],
    body: &std::ops::Range<usize>,
    start: impl Fn(&T) -> usize,
) -> &'a [T] {
    let a = all.partition_point(|x| start(x) < body.start);
    let b = a + all[a..].partition_point(|x| start(x) < body.end);
    &all[a..b]
}

#[cfg(test)]
mod tests {
    use super::{Form, fitted};

    /// Files of many routines whose constructs name an OPTIONAL argument, their regions
    /// holding what keeps a copy out (a directive, a `!$` line, a label, a construct name, the
    /// runtime) or not, before and after other routines: [`super::FortranPrinter::copyable`]
    /// asserts in tests that the search by position answers as the walk of the whole file.
    #[test]
    fn regions_searched_by_position_as_by_the_walk() {
        use crate::engine::migrate_source;
        use crate::options::Options;
        use crate::semantic::SemanticConfig;
        let bodies = [
            "    a(i) = a(i) + b(i)\n",
            "    !$acc loop seq\n    do j = 1, 2\n      a(i) = b(i)\n    end do\n",
            "!$  a(i) = 0\n    a(i) = b(i)\n",
            "    if (i > 0) goto 10\n10  a(i) = b(i)\n",
            "    blk: block\n      a(i) = b(i)\n    end block blk\n",
            "    a(i) = b(i) + acc_get_num_devices(1)\n",
            "#ifdef _OPENACC\n    a(i) = b(i)\n#endif\n",
            "    if (i > 0) then\n      a(i) = b(i)\n",
        ];
        let (mut kept, mut built) = (0, 0);
        for seed in 0..bodies.len() {
            let mut src = String::new();
            for k in 0..12 {
                let body = bodies[(seed + k * 3) % bodies.len()];
                src.push_str(&format!(
                    "subroutine f{k}(n, a, b)\n  integer :: n, i, j\n  real :: a(n)\n  real, optional :: b(n)\n!$  a(1) = 0\n  !$acc parallel loop copy(a) copyin(b)\n  do i = 1, n\n{body}  end do\n10 continue\nend subroutine f{k}\n"
                ));
            }
            let out = migrate_source(
                &src,
                Some(std::path::Path::new("t.F90")),
                &Options::default(),
                &SemanticConfig::syntactic(),
            );
            built += out.text.matches("if (present(b)) then").count();
            kept += out
                .diagnostics
                .iter()
                .filter(|d| {
                    d.message
                        .contains("versions by the arguments' presence are not built")
                })
                .count();
        }
        assert!(built > 10 && kept > 10, "{built} {kept}");
    }

    /// A region the structure could not read (a construct not closed in it, or a loop not
    /// closed at all) gets no versions: copied twice, it would read differently next time,
    /// and the second run would change the first one's output.
    #[test]
    fn a_region_out_of_place_gets_no_versions_and_a_second_run_changes_nothing() {
        use crate::engine::migrate_source;
        use crate::options::Options;
        use crate::semantic::SemanticConfig;
        let head = "subroutine s(n, b, c, y)\n  integer :: n, i, l\n  real, optional :: b(4), c(4)\n  real :: y(4)\n";
        let cases = [
            // The loop after the directive is never closed (`end do` closes the inner one).
            "  !$acc data copyin(b) if(n > 0)\n  !$acc parallel loop copy(c)\n  do i = 1, 4\n    if (present(b)) y(l loop copy(c)\n  do l = 1, 4\n    y(l) = 1\n  end do\n  !$acc end data\nend subroutine\n",
            // The loop is closed, an `if` in it is not.
            "  !$acc parallel loop copy(c)\n  do i = 1, 4\n    if (n > 0) then\n      y(i) = 1\n  end do\nend subroutine\n",
        ];
        let run = |src: &str| {
            migrate_source(
                src,
                Some(std::path::Path::new("t.f90")),
                &Options::default(),
                &SemanticConfig::syntactic(),
            )
        };
        for body in cases {
            let first = run(&format!("{head}{body}"));
            assert!(!first.text.contains("present(c)) then"), "{}", first.text);
            assert_eq!(run(&first.text).text, first.text);
        }
    }

    #[test]
    fn statements_fit_their_form() {
        let short = "if (present(b)) then";
        assert_eq!(
            fitted(Form::Fixed, "", short, "\n").unwrap(),
            format!("      {short}")
        );
        let long = format!(
            "else if (present({}) .and. present({})) then",
            "a".repeat(40),
            "b".repeat(40)
        );
        let fixed = fitted(Form::Fixed, "", &long, "\n").unwrap();
        for l in fixed.lines() {
            assert!(l.len() <= 72, "{l}");
        }
        assert!(fixed.lines().skip(1).all(|l| l.starts_with("     &")));
        let joined: String = fixed
            .lines()
            .map(|l| &l[6..])
            .collect::<String>()
            .replace(' ', "");
        assert_eq!(joined, long.replace(' ', ""));
        let word = format!("if (present({})) then", "c".repeat(63));
        let fixed = fitted(Form::Fixed, "", &word, "\n").unwrap();
        assert!(fixed.lines().all(|l| l.len() <= 72));
        let free = fitted(Form::Free, "    ", &long.repeat(2), "\n").unwrap();
        for l in free.lines() {
            assert!(l.len() <= 132, "{l}");
        }
        assert!(free.lines().next().unwrap().ends_with(" &"));
        assert!(free.starts_with("    else if"));
    }
}
