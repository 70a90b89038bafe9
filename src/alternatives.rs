//! Alternative directives: directives before one statement, each in its own branch of a
//! preprocessor conditional group (`#ifdef __GNUC__` / `#pragma acc parallel loop tile(*,*)`
//! / `#else` / `#pragma acc parallel loop tile(8,8)` / `#endif` / `for …`). A build compiles
//! one of them, so each is planned as if it were the only one: the others compiled out, the
//! directives inside the statement nested in it (read in file order, they nest in the last
//! alternative only). What the alternatives share is translated once, so it must come out
//! the same under each: each alternative's edits stay on its own lines, and the directives
//! inside the statement and around it print the same. Otherwise all of them are left
//! unchanged, with the constructs around them (as `crate::validate::enclosing`).

use crate::diag::Diagnostic;
use crate::edit::Edit;
use crate::intent::{Action, Plan};
use crate::print::Printer;
use crate::rules::id;
use crate::unit::Unit;
use std::ops::Range;

/// The most alternatives before one statement that are planned one by one.
const MAX_ALTERNATIVES: usize = 8;

/// Plans every site of a unit, as the plan phase does.
pub type Replan<'r> = dyn Fn(&Unit) -> Vec<Plan> + 'r;

/// Gives each alternative the plan made as if it were the only one (the others compiled out,
/// the statement's directives nested in it), and leaves unchanged, with a diagnostic each,
/// the alternatives (and what is nested in them) that cannot be translated one by one.
pub fn review(
    u: &mut Unit,
    plans: &mut [Plan],
    printer: &dyn Printer,
    replan: &Replan,
) -> Vec<Diagnostic> {
    let groups = groups(u);
    if groups.is_empty() {
        return Vec::new();
    }
    // What the alternatives of each group share: the directives inside the statement
    // (nested in the last alternative as read) and those around it. One translation of
    // each must serve every alternative.
    let shared: Vec<Vec<usize>> = groups
        .iter()
        .map(|g| {
            let last = g[g.len() - 1];
            let mut v = u.descendants(last);
            v.extend(u.ancestors(last));
            v
        })
        .collect();
    let printed = |u: &Unit, plans: &[Plan], sites: &[usize]| -> Vec<Vec<Edit>> {
        sites
            .iter()
            .map(|&k| printer.site_edits(u, plans, k))
            .collect()
    };
    // Each round plans the whole file again: a bound for hostile input.
    let mut why: Vec<Option<String>> = groups
        .iter()
        .map(|g| {
            (g.len() > MAX_ALTERNATIVES).then(|| {
                format!("more than {MAX_ALTERNATIVES} alternatives are not planned one by one")
            })
        })
        .collect();
    // The shared directives' edits in round 0, and the plans each group takes.
    let mut first: Vec<Vec<Vec<Edit>>> = vec![Vec::new(); groups.len()];
    let mut taken: Vec<Vec<(usize, Plan)>> = vec![Vec::new(); groups.len()];
    // Round `r` plans the file once with alternative `r` of every group that has one as
    // the only directive before its statement.
    let rounds = (groups.iter().zip(&why))
        .filter(|(_, w)| w.is_none())
        .map(|(g, _)| g.len())
        .max()
        .unwrap_or(0);
    for r in 0..rounds {
        let mut moved: Vec<(usize, usize)> = Vec::new();
        let mut aside = Vec::new();
        for (g, _) in (groups.iter().zip(&why)).filter(|(g, w)| r < g.len() && w.is_none()) {
            let (a, last) = (g[r], g[g.len() - 1]);
            if a != last {
                move_children(u, last, a);
                moved.push((last, a));
            }
            // The others are compiled out: no directive, no statement, in no tree.
            for &m in g.iter().filter(|&&m| m != a) {
                let parent = u.parent[m].take();
                if let Some(p) = parent {
                    u.children[p].retain(|&c| c != m);
                }
                aside.push((m, u.dirs[m].take(), u.stmts[m].take(), parent));
                u.compiled_in.insert(m, a);
            }
        }
        u.index = Default::default();
        let again = replan(u);
        for (k, g) in groups.iter().enumerate() {
            if r >= g.len() || why[k].is_some() {
                continue;
            }
            let a = g[r];
            if let Some(w) = own_lines_conflict(u, &again, printer, a) {
                why[k] = Some(w);
                continue;
            }
            let edits = printed(u, &again, &shared[k]);
            // The shared directives keep the plans of the round of the last alternative,
            // whose tree is the one printed (an end directive's plan names its opener).
            if r + 1 == g.len() {
                taken[k].extend(shared[k].iter().map(|&s| (s, again[s].clone())));
            }
            if r == 0 {
                first[k] = edits;
            } else if let Some(j) = (0..edits.len()).find(|&j| edits[j] != first[k][j]) {
                why[k] = Some(format!(
                    "the directive at line {} would be translated differently under the one at line {} than under the one at line {}",
                    u.line(shared[k][j]),
                    u.line(a),
                    u.line(g[0]),
                ));
                continue;
            }
            taken[k].push((a, again[a].clone()));
        }
        u.compiled_in.clear();
        for (m, d, st, parent) in aside.into_iter().rev() {
            u.dirs[m] = d;
            u.stmts[m] = st;
            u.parent[m] = parent;
            if let Some(p) = parent {
                let at = u.children[p].partition_point(|&c| c < m);
                u.children[p].insert(at, m);
            }
        }
        for &(from, to) in moved.iter().rev() {
            move_children(u, to, from);
        }
    }
    u.index = Default::default();
    for (t, w) in taken.into_iter().zip(&why) {
        if w.is_none() {
            for (k, p) in t {
                plans[k] = p;
            }
        }
    }
    let mut out = Vec::new();
    for (g, why) in groups.iter().zip(why) {
        let Some(why) = why else { continue };
        // A long chain is named by its ends: each of its directives gets the message.
        let lines = match g.as_slice() {
            [first, .., last] if g.len() > 4 => format!(
                "{}, ..., {} ({} in all)",
                u.line(*first),
                u.line(*last),
                g.len()
            ),
            _ => (g.iter().map(|&i| u.line(i).to_string()))
                .collect::<Vec<_>>()
                .join(", "),
        };
        for &i in g {
            let translated = u.dir(i).is_some() && plans[i].action != Action::Unchanged;
            // Their plans' notes are about a translation that no longer happens.
            for k in std::iter::once(i).chain(u.descendants(i)) {
                plans[k].unchanged();
                plans[k].diags.clear();
            }
            if !translated {
                continue;
            }
            let name = u.dir(i).map_or_else(String::new, |d| d.name.to_string());
            out.push(Diagnostic::new(
                u.at(i),
                id::ALTERNATIVE_DIRECTIVES,
                format!(
                    "'acc {name}' is one of the alternative directives at lines {} (one per branch of a preprocessor conditional, before one statement), and {why}; they are left unchanged",
                    lines
                ),
            ));
        }
        // As `crate::validate::enclosing`: translated around OpenACC, the constructs around
        // them would make a mix that reads otherwise when run again.
        let ancestors: Vec<usize> = u.ancestors(g[0]).collect();
        for a in ancestors {
            if u.dir(a).is_none() || plans[a].action == Action::Unchanged {
                continue;
            }
            for k in std::iter::once(a).chain(u.descendants(a)) {
                plans[k].unchanged();
                plans[k].diags.clear();
            }
            let name = u.dir(a).map_or_else(String::new, |d| d.name.to_string());
            out.push(Diagnostic::new(
                u.at(a),
                id::ENCLOSING_ERROR,
                format!(
                    "'acc {name}' is left unchanged because the directive at line {} inside it is",
                    u.line(g[0])
                ),
            ));
        }
    }
    out
}

/// Runs of consecutive sites that apply to the same statement (sites are in file order: the
/// alternatives before one statement come one after another).
fn groups(u: &Unit) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut last: Option<(usize, Range<usize>)> = None;
    for (i, st) in u.stmts.iter().enumerate() {
        let Some(st) = st else { continue };
        let toks = st.toks();
        if let Some((j, t)) = &last
            && *t == toks
        {
            match out.last_mut() {
                Some(g) if g.last() == Some(j) => g.push(i),
                _ => out.push(vec![*j, i]),
            }
        }
        last = Some((i, toks));
    }
    out
}

/// Nests the sites nested in `from` in `to` instead (the tree's indexes are built again).
fn move_children(u: &mut Unit, from: usize, to: usize) {
    let children = std::mem::take(&mut u.children[from]);
    for &c in &children {
        u.parent[c] = Some(to);
    }
    u.children[to].extend(children);
    u.index = Default::default();
}

/// Why alternative `i` cannot be translated on its own: an edit of its translation (under
/// `plans`) outside its own lines.
fn own_lines_conflict(u: &Unit, plans: &[Plan], printer: &dyn Printer, i: usize) -> Option<String> {
    if u.dir(i).is_none() || plans[i].action == Action::Unchanged {
        return None;
    }
    let own = own_lines(u, i);
    let edits = printer.site_edits(u, plans, i);
    let e = edits
        .iter()
        .find(|e| e.range.start < own.start || e.range.end > own.end)?;
    Some(format!(
        "the translation of the one at line {} edits line {}, outside its own lines",
        u.line(i),
        u.line_at(e.range.start.min(u.src.len()))
    ))
}

/// The bytes of the lines site `i` stands on, with the last line's end.
fn own_lines(u: &Unit, i: usize) -> Range<usize> {
    let span = u.sites[i].span();
    let start = u.lines.line_start(span.start);
    let b = u.src.as_bytes();
    let end =
        memchr::memchr(b'\n', &b[span.end.min(b.len())..]).map_or(b.len(), |n| span.end + n + 1);
    start..end
}
