//! A site's facts from its region's tokens: each name resolved to the declaration it sees,
//! its uses and whether one of them writes it, read in runs of sites in parallel.

use super::declarations::{is_keyword, is_macro_like};
use super::{Decl, Decls, Syntax, note_unresolved};
use crate::hash::HashMap;
use crate::lex::{TokKind, is_scalar_word};
use crate::region::ForLoop;
use crate::semantic::SiteInput;
use crate::semantic::facts::{Declared, LoopShape, RegionVar, SiteFacts, VarKind};
use crate::structure::Structure;
use std::ops::Range;

impl<'a> Syntax<'a> {
    /// Whether the use of a variable at token `k` modifies it.
    pub(super) fn is_write(&self, k: usize, kind: VarKind) -> bool {
        if !self.writing_macros.is_empty() && self.macro_writes_argument(k) {
            return true;
        }
        let mut e = k + 1;
        if matches!(kind, VarKind::Array { .. } | VarKind::Struct) {
            loop {
                match self.text(e) {
                    "[" => match self.pair(e) {
                        Some(c) => e = c + 1,
                        None => break,
                    },
                    "." if self.is_ident(e + 1) => e += 2,
                    _ => break,
                }
            }
        }
        let next = self.text(e);
        if crate::lex::ASSIGNMENT_OPS.contains(&next) || matches!(next, "++" | "--") {
            return true;
        }
        let prev = k.checked_sub(1).map_or("", |p| self.text(p));
        if matches!(prev, "++" | "--") {
            return true;
        }
        if prev == "&" {
            let pp = k.checked_sub(2);
            return pp.is_none_or(|p| {
                let t = self.text(p);
                !(self.is_ident(p)
                    || matches!(self.toks[p].kind, TokKind::Number | TokKind::Literal)
                    || t == ")"
                    || t == "]")
            });
        }
        false
    }

    /// Whether the name at token `k` is, alone or in parentheses, an argument that a
    /// function-like macro of the file assigns (`SET(t, 1)` with `#define SET(x, v) x = v`).
    fn macro_writes_argument(&self, k: usize) -> bool {
        let mut j = k;
        let mut commas = 0;
        // Outward through the statement: a bracket closed before `k` is skipped whole.
        for _ in 0..1024 {
            let Some(p) = j.checked_sub(1) else {
                return false;
            };
            j = p;
            match self.text(j) {
                ")" | "]" => match self.pair(j) {
                    Some(open) => j = open,
                    None => return false,
                },
                "," => commas += 1,
                "(" => match j.checked_sub(1).filter(|&c| self.is_ident(c)) {
                    Some(callee) => {
                        return self
                            .writing_macros
                            .get(self.text(callee))
                            .is_some_and(|w| w.contains(&commas));
                    }
                    // Grouping parentheses around the name.
                    None if commas == 0 => {}
                    None => return false,
                },
                // A subscript (`SET(a[t], 1)` writes `a`), or the statement's start.
                "[" | ";" | "{" | "}" => return false,
                _ => {}
            }
        }
        false
    }

    /// The identifiers in tokens `r` that may name variables (not keywords, members, labels),
    /// as (token, name, offset).
    pub(super) fn names_in(
        &self,
        r: Range<usize>,
    ) -> impl Iterator<Item = (usize, &'a str, usize)> + '_ {
        r.filter(|&k| self.is_ident(k)).filter_map(|k| {
            let name = self.text(k);
            // The token before: `.` tested by its byte, the others (2 or 4 bytes) by text.
            let member_or_label = |p: usize| match self.byte(p) {
                Some(b) => b == b'.',
                None => matches!(self.text(p), "->" | "::" | "goto"),
            };
            let skip = is_keyword(name) || k.checked_sub(1).is_some_and(member_or_label);
            (!skip).then(|| (k, name, self.toks[k].start()))
        })
    }
    #[cfg(test)]
    /// Facts for one site; unresolved names are added to `unresolved`.
    pub fn site_facts(
        &self,
        st: &Structure,
        s: &SiteInput,
        unresolved: &mut Vec<String>,
    ) -> SiteFacts {
        self.sites_facts(st, &[s], unresolved)
            .pop()
            .unwrap_or_default()
    }

    /// [`Syntax::site_facts`] of each of `sites`, in their order. The variables of a
    /// statement are those of its own tokens and those its nested sites found (declared
    /// outside it too), so a nest of 10,000 loop directives is read once, not 10,000 times.
    /// Runs of sites whose statements do not overlap the ones before are read in parallel
    /// (a file of many directives side by side).
    pub fn sites_facts(
        &self,
        st: &Structure,
        sites: &[&SiteInput],
        unresolved: &mut Vec<String>,
    ) -> Vec<SiteFacts> {
        // Split where a site's statement starts after every statement before it.
        const RUN: usize = 256;
        let mut runs: Vec<Range<usize>> = Vec::new();
        let (mut from, mut end) = (0, 0);
        let split = crate::par::splits(sites.len());
        for (i, s) in sites.iter().enumerate() {
            let toks = s.stmt_toks.as_ref().filter(|_| s.vars);
            if split && i - from >= RUN && toks.is_none_or(|t| t.start >= end) {
                runs.push(from..i);
                from = i;
            }
            if let Some(t) = toks {
                end = end.max(t.end);
            }
        }
        runs.push(from..sites.len());
        // Each run fills its part of the one vector (runs' vectors joined would hold the
        // facts twice); its unresolved names are taken in the runs' order.
        let mut out = vec![SiteFacts::default(); sites.len()];
        let per_run: std::sync::Mutex<Vec<(usize, Vec<String>)>> = Default::default();
        crate::par::for_each_run_mut(&mut out, &runs, |r, part| {
            let mut names = Vec::new();
            let facts = self.run_facts(st, &sites[r.clone()], &mut names);
            for (o, f) in part.iter_mut().zip(facts) {
                *o = f;
            }
            let mut per_run = per_run.lock().unwrap_or_else(|e| e.into_inner());
            per_run.push((r.start, names));
        });
        let mut per_run = per_run.into_inner().unwrap_or_else(|e| e.into_inner());
        per_run.sort_by_key(|&(start, _)| start);
        for (_, names) in per_run {
            for n in &names {
                note_unresolved(unresolved, n);
            }
        }
        out
    }

    /// `sites_facts` of one run of sites.
    fn run_facts(
        &self,
        st: &Structure,
        sites: &[&SiteInput],
        unresolved: &mut Vec<String>,
    ) -> Vec<SiteFacts> {
        // The sites whose variables are collected: (site, tokens, bytes).
        let regions: Vec<(usize, Range<usize>, Range<usize>)> = sites
            .iter()
            .enumerate()
            .filter(|(_, s)| s.vars)
            .filter_map(|(i, s)| Some((i, s.stmt_toks.clone()?, s.stmt.clone()?)))
            .map(|(i, t, b)| (i, t.start..t.end.min(self.toks.len()), b))
            .collect();
        let names = self.resolve(regions.iter().map(|(_, t, _)| t.clone()));
        let mut vars = self.region_vars(&regions, &names);
        let mut out = Vec::with_capacity(sites.len());
        // Tokens already read for unresolved names: [from, to) (one interval, see below).
        let mut read = 0..0;
        let mut region = regions.iter().peekable();
        for (i, s) in sites.iter().enumerate() {
            let mut f = SiteFacts {
                exact: false,
                stmt: s.stmt.clone(),
                ..SiteFacts::default()
            };
            if s.is_loop
                && let Some(fl) = &s.for_loop
            {
                let depth = s.last_token.map_or(1, |t| loop_depth(st, t + 1, fl));
                f.loop_shape = Some(LoopShape {
                    var: fl.var.as_deref().map(String::from),
                    declared: fl.declared,
                    depth,
                });
            }
            if let Some((_, toks, bytes)) = region.next_if(|(r, ..)| *r == i) {
                // A name no declaration resolves, by its first use: tokens read for an
                // earlier site add none. A site's tokens start at or after those of the
                // sites before it, or the interval starts again.
                let from = if toks.start >= read.start && toks.start <= read.end {
                    toks.start.max(read.end)
                } else {
                    read = toks.start..toks.start;
                    toks.start
                };
                for &(k, n) in names_within(&names, from..toks.end) {
                    if let Resolved::Unknown(name) = n {
                        self.note_unresolved_use(unresolved, k, name);
                    }
                }
                read.end = read.end.max(toks.end);
                f.vars = std::mem::take(&mut vars[i]);
                for v in &f.vars {
                    if v.ty.kind == VarKind::Other {
                        note_unresolved(unresolved, &v.name);
                    }
                }
                debug_assert_eq!(f.stmt.as_ref(), Some(bytes));
                f.inner = Declared::new(self.declared.clone());
            }
            for name in &s.names {
                let decl = self.lookup(name, s.start);
                match decl {
                    Some(d) => {
                        f.names.insert(name.clone(), d.ty.clone());
                    }
                    None => note_unresolved(unresolved, name),
                }
                if s.last_token
                    .is_some_and(|k| self.unknown_parameter(name, decl, k))
                {
                    f.names.add_unknown_param(name.clone());
                }
            }
            out.push(f);
        }
        out
    }

    /// The name tokens of `ranges` (see `names_in`) with the declaration each resolves to,
    /// in token order: a run's regions hold a few names among many tokens.
    pub(super) fn resolve(
        &self,
        ranges: impl Iterator<Item = Range<usize>>,
    ) -> Vec<(usize, Resolved<'_, 'a>)> {
        let mut ranges: Vec<Range<usize>> = ranges.collect();
        ranges.sort_by_key(|r| r.start);
        let mut names = Vec::new();
        let mut done = 0;
        // Per name: its declarations and how many of them are before the token read last.
        // Tokens are read in order, so each name's declarations are passed once per run,
        // not searched once per use (`i` may have a declaration per loop of the file).
        // Searched while short (a run names a few variables), indexed beyond (see
        // `region_vars`).
        let mut seen: Vec<(&'a str, Option<&Decls>, usize)> = Vec::new();
        let mut index: HashMap<&'a str, usize> = HashMap::default();
        for r in ranges {
            for (k, name, at) in self.names_in(r.start.max(done)..r.end.max(done)) {
                let found = if seen.len() <= FEW_USES {
                    seen.iter().position(|e| e.0 == name)
                } else {
                    for (p, e) in seen.iter().enumerate().skip(index.len()) {
                        index.insert(e.0, p);
                    }
                    index.get(name).copied()
                };
                let p = found.unwrap_or_else(|| {
                    let decls = self.decls.get(name);
                    let before = decls.map_or(0, |d| d.list.partition_point(|d| d.offset <= at));
                    seen.push((name, decls, before));
                    seen.len() - 1
                });
                let (_, decls, before) = &mut seen[p];
                let decl = decls.and_then(|d| {
                    while d.list.get(*before).is_some_and(|d| d.offset <= at) {
                        *before += 1;
                    }
                    d.visible(*before, at)
                });
                let resolved = match decl {
                    Some(d) => Resolved::Decl(name, d),
                    None => Resolved::Unknown(name),
                };
                names.push((k, resolved));
            }
            done = done.max(r.end);
        }
        names
    }

    /// An unresolved name at token `k`, noted unless it is a call, a type, a label or a
    /// macro.
    fn note_unresolved_use(&self, unresolved: &mut Vec<String>, k: usize, name: &str) {
        let next = self.text(k + 1);
        let type_like = self.typedefs.contains_key(name)
            || self.macros.contains(&name)
            || next == "::"
            || self.is_ident(k + 1)
            || matches!(next, "*" | "&") && self.is_ident(k + 2)
            || is_scalar_word(name);
        if next != "("
            && !name.starts_with("acc_")
            && next != ":"
            && !is_macro_like(name)
            && !type_like
        {
            note_unresolved(unresolved, name);
        }
    }

    /// For each of `regions` (site, tokens, bytes), the variables its tokens use that are
    /// declared outside it, in order of first use (per site index; empty for the others).
    /// Regions are read innermost first; each reads its own tokens and takes the uses its
    /// nested regions found, keeping those declared outside it too.
    fn region_vars<'d>(
        &'d self,
        regions: &[(usize, Range<usize>, Range<usize>)],
        names: &[(usize, Resolved<'d, 'a>)],
    ) -> Vec<Vec<RegionVar>> {
        let sites = regions.iter().map(|(i, ..)| i + 1).max().unwrap_or(0);
        let mut out: Vec<Vec<RegionVar>> = vec![Vec::new(); sites];
        // Outermost first (by start, then longest); each region's nested regions, disjoint.
        let mut order: Vec<usize> = (0..regions.len()).collect();
        order.sort_by_key(|&r| (regions[r].1.start, std::cmp::Reverse(regions[r].1.end), r));
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); regions.len()];
        let mut stack: Vec<usize> = Vec::new();
        for &r in &order {
            let t = &regions[r].1;
            while let Some(&top) = stack.last() {
                let o = &regions[top].1;
                if o.start <= t.start && t.end <= o.end {
                    break;
                }
                stack.pop();
            }
            if let Some(&top) = stack.last() {
                let last_end = children[top].last().map_or(0, |&c| regions[c].1.end);
                if children[top].is_empty() || t.start >= last_end {
                    children[top].push(r);
                }
            }
            stack.push(r);
        }
        // Per region: its uses, one per name and declaration outside it.
        let mut uses: Vec<Vec<Use<'d>>> = vec![Vec::new(); regions.len()];
        for &r in order.iter().rev() {
            let (_, toks, bytes) = &regions[r];
            let mut found: Vec<Use<'d>> = Vec::new();
            // Where each (name, declaration) is in `found`: searched while `found` is short
            // (most regions use a few variables), indexed beyond.
            let mut index: HashMap<(&str, usize), usize> = HashMap::default();
            let mut add = |u: Use<'d>, found: &mut Vec<Use<'d>>| {
                let key = (u.name, u.decl.offset);
                let at = if found.len() <= FEW_USES {
                    found.iter().position(|e| (e.name, e.decl.offset) == key)
                } else {
                    for (p, e) in found.iter().enumerate().skip(index.len()) {
                        index.insert((e.name, e.decl.offset), p);
                    }
                    index.get(&key).copied()
                };
                match at {
                    Some(p) => {
                        let e: &mut Use<'d> = &mut found[p];
                        e.first = e.first.min(u.first);
                        e.writes.extend(u.writes);
                    }
                    None => found.push(u),
                }
            };
            // The region's names, but those of its nested regions (their uses are taken).
            let own = names_within(names, toks.clone());
            let mut e = 0;
            let mut nested = children[r].iter().peekable();
            while let Some(&(k, n)) = own.get(e) {
                if let Some(&&c) = nested.peek()
                    && regions[c].1.start <= k
                {
                    nested.next();
                    for u in std::mem::take(&mut uses[c]) {
                        if !bytes.contains(&u.decl.offset) {
                            add(u, &mut found);
                        }
                    }
                    let after = regions[c].1.end;
                    e += own[e..].partition_point(|&(t, _)| t < after);
                    continue;
                }
                e += 1;
                if let Resolved::Decl(name, d) = n
                    && !bytes.contains(&d.offset)
                {
                    let at = self.toks[k].start();
                    let writes = if self.is_write(k, d.ty.kind) {
                        vec![at]
                    } else {
                        Vec::new()
                    };
                    add(
                        Use {
                            name,
                            decl: d,
                            first: at,
                            writes,
                        },
                        &mut found,
                    );
                }
            }
            // A nested region at the very end (empty, or ending the statement).
            for &c in nested {
                for u in std::mem::take(&mut uses[c]) {
                    if !bytes.contains(&u.decl.offset) {
                        add(u, &mut found);
                    }
                }
            }
            for u in &mut found {
                u.writes.sort_unstable();
                u.writes.dedup();
            }
            // One variable per name: the declaration of its first use, every write.
            let mut by_name: Vec<&Use<'d>> = found.iter().collect();
            by_name.sort_by_key(|u| (u.name, u.first));
            // Sized up front: a vector grown from empty holds room for 4 (a site's worth).
            let mut vars: Vec<RegionVar> = Vec::with_capacity(by_name.len());
            for u in by_name {
                match vars.last_mut() {
                    Some(v) if v.name == u.name => v.add_writes(&u.writes),
                    _ => vars.push(RegionVar::new(
                        u.name,
                        u.decl.ty.clone(),
                        Some(u.decl.offset),
                        u.first,
                        u.writes.clone(),
                    )),
                }
            }
            vars.sort_by_key(|v| v.first_use());
            out[regions[r].0] = vars;
            uses[r] = found;
        }
        out
    }
}

/// How many variables a region's uses are searched among before they are indexed.
const FEW_USES: usize = 16;

/// How many perfectly nested `for` loops start at token `at` (at least 1, at most 64), where
/// `fl` is the loop there: the nest is walked from it, its header not read again.
pub(super) fn loop_depth(st: &Structure, at: usize, fl: &ForLoop) -> usize {
    let depth = if fl.for_tok() == at {
        st.nest_depth_of(fl, 64)
    } else {
        st.nest_depth(at, 64)
    };
    depth.max(1)
}

/// The entries of `names` (in token order) of the tokens `r`.
fn names_within<T>(names: &[(usize, T)], r: Range<usize>) -> &[(usize, T)] {
    let from = names.partition_point(|(k, _)| *k < r.start);
    let to = names.partition_point(|(k, _)| *k < r.end).max(from);
    &names[from..to]
}

/// What a name token of a region names.
#[derive(Clone, Copy)]
pub(super) enum Resolved<'d, 'a> {
    /// A name without a declaration.
    Unknown(&'a str),
    Decl(&'a str, &'d Decl),
}

/// The uses in a region of a name declared by one declaration outside it.
#[derive(Clone)]
struct Use<'d> {
    name: &'d str,
    decl: &'d Decl,
    /// Offset of the first.
    first: usize,
    /// Offsets of those that modify it.
    writes: Vec<usize>,
}
