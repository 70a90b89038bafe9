//! `use openacc`, `use omp_lib`, `!$` lines and `_OPENACC` guards of the Fortran runtime
//! translation.

use super::{Cx, is_openacc_name};
use crate::diag::Diagnostic;
use crate::edit::Edit;
use crate::fortran::form::Form;
use crate::fortran::lex::TokKind;
use crate::fortran::lines::{LineKind, Sentinel};
use crate::fortran::stmt::Kind;
use crate::rules::id;
use crate::runtime::guard;
use std::collections::BTreeMap;
use std::ops::Range;

/// A `use` statement of one of the modules this pass reads (or a `!$ use` line).
pub(super) struct Use {
    unit: Option<usize>,
    module: String,
    /// The module name token.
    name: Range<usize>,
    /// `only:` — the bytes of the list after the colon (possibly empty) and the names in it.
    only: Option<(Range<usize>, Vec<String>)>,
    /// A rename (`local => name`) in the statement.
    renames: bool,
    /// Where a line after the statement goes, and the text before `use` on its line.
    after: usize,
    prefix: String,
}

impl Cx<'_> {
    /// `use` statements (code and `!$` lines).
    pub(super) fn use_statements(&self) -> Vec<Use> {
        let front = self.front;
        let mut out = Vec::new();
        for (si, s) in front.lexed.stmts.iter().enumerate() {
            if front.structure.stmts[si].kind != Kind::Use {
                continue;
            }
            let toks: Vec<(String, Range<usize>)> = (s.toks())
                .map(|k| (self.text(k), front.lexed.tokens[k].range()))
                .collect();
            let line = &front.lines.get(s.lines().end - 1);
            let first = &front.lines.get(s.lines().start);
            let prefix = self.src[first.start..s.span().start].to_string();
            if let Some(u) = parse_use(
                &toks,
                front.structure.unit_of(si),
                s.span().end,
                line.next,
                prefix,
            ) {
                out.push(u);
            }
        }
        for (k, site) in front.sites.iter().enumerate() {
            if site.sentinel != Sentinel::Conditional || site.pieces.len() != 1 {
                continue;
            }
            let p = &site.pieces[0];
            let toks: Vec<(String, Range<usize>)> =
                crate::fortran::lex::lex_text(self.src, p.body())
                    .iter()
                    .map(|t| (self.src[t.range()].to_string(), t.range()))
                    .collect();
            let line = &front.lines.get(p.line());
            let prefix = self.src[line.start..p.body().start].to_string();
            let end = toks.last().map_or(p.body().end, |t| t.1.end);
            if let Some(u) = parse_use(
                &toks,
                front.structure.regions[k].unit(),
                end,
                line.next,
                prefix,
            ) {
                out.push(u);
            }
        }
        out
    }

    /// Calls on `!$` lines (other than `use`) stay, with a diagnostic.
    pub(super) fn conditional_lines(&mut self) {
        let front = self.front;
        for (k, site) in front.sites.iter().enumerate() {
            if site.sentinel != Sentinel::Conditional {
                continue;
            }
            let first = site.text.split_whitespace().next().unwrap_or("");
            if first.eq_ignore_ascii_case("use") {
                continue;
            }
            for p in &site.pieces {
                for t in crate::fortran::lex::lex_text(self.src, p.body()) {
                    let lower = self.src[t.range()].to_ascii_lowercase();
                    if t.kind() == TokKind::Name && is_openacc_name(&lower) {
                        let unit = front.structure.regions[k].unit();
                        if self.opts.tables.runtime(&lower).is_some() {
                            let why = "calls on conditional-compilation ('!$') lines are not translated; write the call as a statement".to_string();
                            self.refuse(t.start(), id::RUNTIME_FORTRAN_HELPER, &lower, unit, why);
                        } else {
                            self.left.push((lower, t.start(), unit));
                        }
                    }
                }
            }
        }
    }

    /// Units `u` and its hosts (interface bodies have none).
    pub(super) fn hosts(&self, u: usize) -> Vec<usize> {
        let units = &self.front.structure.units;
        let mut out = vec![u];
        let mut k = u;
        while let Some(p) = units[k].parent.filter(|_| !units[k].interface) {
            out.push(p);
            k = p;
        }
        out
    }

    /// `use openacc` → `use omp_lib` (or kept, `use omp_lib` after it), `use omp_lib` and
    /// `c_loc` where units need them.
    pub(super) fn modules(&mut self, uses: &[Use]) {
        let n = self.front.structure.units.len();
        // Per unit: the OpenMP names its calls and those of the units it contains need, and
        // the first OpenACC name that stays there.
        let mut sub_names: Vec<Vec<String>> = vec![Vec::new(); n];
        let mut sub_left: Vec<Option<(String, usize)>> = vec![None; n];
        for u in 0..n {
            for h in self.hosts(u) {
                for name in &self.omp_names[u] {
                    if !sub_names[h].contains(name) {
                        sub_names[h].push(name.clone());
                    }
                }
            }
        }
        for (name, at, unit) in &self.left {
            let hs = match unit {
                Some(u) => self.hosts(*u),
                None => (0..n).collect(),
            };
            for h in hs {
                if sub_left[h].as_ref().is_none_or(|(_, a)| at < a) {
                    sub_left[h] = Some((name.clone(), *at));
                }
            }
        }
        let mut inserts: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        let mut has_omp = vec![false; n];
        let mut has_cloc = vec![false; n];
        // Where a unit's added `use` lines go: after its `use openacc`, else its last `use`.
        let mut place: Vec<Option<(usize, String, bool)>> = vec![None; n];
        for u in uses {
            let Some(k) = u.unit else { continue };
            match u.module.as_str() {
                "openacc" | "omp_lib" => has_omp[k] = true,
                "iso_c_binding" => {
                    has_cloc[k] |= u
                        .only
                        .as_ref()
                        .is_none_or(|(_, l)| l.iter().any(|x| x == "c_loc"))
                }
                _ => {}
            }
            if !place[k].as_ref().is_some_and(|p| p.2) {
                place[k] = Some((u.after, u.prefix.clone(), u.module == "openacc"));
            }
        }
        let mut all = vec![];
        for u in uses.iter().filter(|u| u.module == "openacc") {
            let Some(k) = u.unit else { continue };
            let left = sub_left[k].clone().or_else(|| {
                u.renames
                    .then(|| ("a renamed name".to_string(), u.name.start))
            });
            match left {
                None => {
                    let upper = self.src[u.name.clone()]
                        .bytes()
                        .all(|b| !b.is_ascii_lowercase());
                    self.edits.push(Edit::replace(
                        u.name.clone(),
                        if upper { "OMP_LIB" } else { "omp_lib" },
                    ));
                    if let Some((list, _)) = &u.only {
                        let mut names = sub_names[k].clone();
                        names.sort();
                        let text = if names.is_empty() {
                            String::new()
                        } else {
                            format!(" {}", names.join(", "))
                        };
                        self.edits.push(Edit::replace(list.clone(), text));
                    }
                }
                Some((name, at)) => {
                    let line = self.line_no(at);
                    let added = if !sub_names[k].is_empty() {
                        let text = format!("{}use omp_lib{}", u.prefix, self.eol);
                        inserts.entry(u.after).or_default().push(text);
                        " ('use omp_lib' is added after it)"
                    } else {
                        ""
                    };
                    all.push(Diagnostic::new(
                        u.name.start,
                        id::OPENACC_INCLUDE_KEPT,
                        format!("'use openacc' is kept{added}: '{name}' (line {line}) stays untranslated; remove it once the OpenACC names are rewritten"),
                    ));
                }
            }
        }
        self.diags.extend(all);
        self.openacc_includes(&sub_left);
        // Units that call OpenMP routines without reaching omp_lib or openacc.
        for (u, spot) in place.iter().enumerate() {
            let hs = self.hosts(u);
            let need_omp = !self.omp_names[u].is_empty() && !hs.iter().any(|&h| has_omp[h]);
            let need_cloc = self.cloc[u] && !hs.iter().any(|&h| has_cloc[h]);
            if !need_omp && !need_cloc {
                continue;
            }
            let (at, prefix) = match spot.clone() {
                Some((a, p, _)) => (a, p),
                None => match self.after_header(u) {
                    Some(p) => p,
                    None => continue,
                },
            };
            let v = inserts.entry(at).or_default();
            if need_omp {
                v.push(format!("{prefix}use omp_lib{}", self.eol));
            }
            if need_cloc {
                v.push(format!(
                    "{prefix}use, intrinsic :: iso_c_binding, only: c_loc{}",
                    self.eol
                ));
            }
        }
        for (at, texts) in inserts {
            self.edits.push(Edit::insert(at, texts.concat()));
        }
    }

    /// After the header statement of unit `u`: the position and an indentation.
    pub(super) fn after_header(&self, u: usize) -> Option<(usize, String)> {
        let front = self.front;
        let unit = &front.structure.units[u];
        let Some(h) = unit.header else {
            return self.before_first(u);
        };
        let s = &front.lexed.stmts[h];
        let first = &front.lines.get(s.lines().start);
        let last = &front.lines.get(s.lines().end - 1);
        let lead = &self.src[first.start..s.span().start];
        let indent = match first.form {
            Form::Free if lead.trim().is_empty() => format!("{lead}  "),
            Form::Free => "  ".to_string(),
            Form::Fixed => " ".repeat(lead.len().max(6)),
        };
        Some((last.next, indent))
    }

    /// A main program without a `program` statement: the start of the line of its first
    /// statement (when only blanks are before it), and that statement's indentation.
    fn before_first(&self, u: usize) -> Option<(usize, String)> {
        let front = self.front;
        let unit = &front.structure.units[u];
        let first = unit.spec.start.min(unit.exec.start);
        let s = front.lexed.stmts.get(first)?;
        let line = &front.lines.get(s.lines().start);
        let lead = &self.src[line.start..s.span().start];
        (lead.trim().is_empty() && s.label.is_none()).then(|| (line.start, lead.to_string()))
    }

    /// `_OPENACC` → `_OPENMP` in `#if`, `#ifdef`, `#ifndef`, `#elif` of preprocessed files.
    pub(super) fn guards(&mut self) {
        if !self.front.kind.cpp || self.opts.keep_openacc_guards {
            return;
        }
        let src = self.src;
        let mut stack: Vec<bool> = Vec::new();
        let front = self.front;
        for line in front.lines.iter() {
            if line.kind != LineKind::Preprocessor {
                continue;
            }
            let toks = crate::lex::lex_range(src, line.start..line.end, true);
            let Some(pp) = toks
                .first()
                .filter(|t| t.kind == crate::lex::TokKind::PpLine)
            else {
                continue;
            };
            let inner = crate::lex::lex_range(src, pp.start() + 1..pp.end(), false);
            let Some(kw) = inner.first().map(|t| t.text(src)) else {
                continue;
            };
            match kw {
                "if" | "ifdef" | "ifndef" => stack.push(false),
                "endif" => {
                    stack.pop();
                    continue;
                }
                "elif" | "elifdef" | "elifndef" => {}
                _ => continue,
            }
            let (edits, diags) = guard(src, kw, &inner[1..], stack.last_mut());
            self.edits.extend(edits);
            self.diags.extend(diags);
        }
    }
}

/// A `use` statement's tokens (text, file range): the module it names and its lists.
fn parse_use(
    toks: &[(String, Range<usize>)],
    unit: Option<usize>,
    end: usize,
    after: usize,
    prefix: String,
) -> Option<Use> {
    let is = |k: usize, w: &str| toks.get(k).is_some_and(|t| t.0.eq_ignore_ascii_case(w));
    if !is(0, "use") {
        return None;
    }
    let mut k = 1;
    if is(k, ",") {
        k += 2;
    }
    if is(k, "::") {
        k += 1;
    }
    let (module, name) = toks
        .get(k)
        .map(|t| (t.0.to_ascii_lowercase(), t.1.clone()))?;
    let renames = toks.iter().any(|t| t.0 == "=>");
    let only = (is(k + 1, ",") && is(k + 2, "only") && is(k + 3, ":")).then(|| {
        let list = toks[k + 3].1.end..end;
        let names = toks[k + 4..]
            .iter()
            .filter(|t| t.0 != ",")
            .map(|t| t.0.to_ascii_lowercase())
            .collect();
        (list, names)
    });
    Some(Use {
        unit,
        module,
        name,
        only,
        renames,
        after,
        prefix,
    })
}

impl Cx<'_> {
    /// `include 'openacc_lib.h'` is removed where nothing of OpenACC stays in its unit and
    /// the units it contains (`use omp_lib` is added where OpenMP routines are called: the
    /// OpenMP include file is not on flang's default include path).
    fn openacc_includes(&mut self, sub_left: &[Option<(String, usize)>]) {
        let front = self.front;
        for (si, s) in front.lexed.stmts.iter().enumerate() {
            if front.structure.stmts[si].kind != Kind::Include {
                continue;
            }
            let file = self.text(s.toks().start + 1);
            let file = file.trim_matches(['"', '\'']).to_ascii_lowercase();
            let Some(u) = front.structure.unit_of(si) else {
                continue;
            };
            if file != "openacc_lib.h" || sub_left[u].is_some() {
                continue;
            }
            if let Ok(lines) = self.own_lines(si, s.toks().len() == 2, false) {
                let first = front.lines.get(lines.start).start;
                let last = &front.lines.get(lines.end - 1);
                self.edits.push(Edit::delete(first..last.next));
            }
        }
    }
}
