//! `kernels` regions that are a sequence of loop nests, each with its loop directive: in
//! OpenACC every such nest is a kernel of its own, launched one after the other (the gangs
//! of one finish before the next starts). One `target` region would run them all on one
//! team, and one `target teams` region would let a team start the next loop before the
//! others finish this one. So the region becomes a data region around them (its data
//! clauses; nothing where it has none) and each loop a `kernels loop`, which maps as the
//! combined construct does: `target teams distribute parallel for` per loop.
//!
//! `if` constructs around the nests stay on the host, between the target constructs, where
//! the host decides as the device would: each condition reads only literals and scalar
//! variables that the region does not write and that no directive of the file maps (so no
//! device copy of them may differ from the host's).
//!
//! Done on the unit's directives before planning, so every later phase (loop decisions,
//! implicit data, reductions, the printers) sees and maps a data construct and combined
//! constructs, as if the file had been written so.

use crate::diag::Diagnostic;
use crate::directive::DATA_CLAUSES;
use crate::facts::VarKind;
use crate::intent::{Action, Plan};
use crate::rules::id;
use crate::unit::Unit;

/// Data clauses a `data` construct takes with the meaning they have on `kernels`: the
/// lifetime clauses but `delete` (copy, copyin, copyout, create, no_create, present).
const REGION_CLAUSES: &[&str] = DATA_CLAUSES.split_at(6).0;

/// Split every `kernels` construct of `u` that is a sequence of loop nests (see the module
/// documentation); the `kernels-split` note for each. Returns the sites split.
pub fn split(u: &mut Unit) -> (Vec<usize>, Vec<Diagnostic>) {
    let mapped = std::sync::OnceLock::new();
    let found: Vec<(usize, Nests)> = (0..u.sites.len())
        .filter_map(|c| nests_of(u, c, &mapped).map(|l| (c, l)))
        .collect();
    let mut diags = Vec::with_capacity(found.len());
    for (c, nests) in &found {
        let n = nests.loops.len();
        diags.push(Diagnostic::new(
            u.at(*c),
            id::KERNELS_SPLIT,
            format!(
                "kernels region of {n} loop nest{}{}: each nest becomes a target construct of its own, as it is a kernel of its own in OpenACC{}{}",
                if n == 1 { "" } else { "s" },
                if nests.ifs { " in 'if' constructs" } else { "" },
                if nests.ifs {
                    ", and the conditions are decided on the host (they read scalars the region does not assign and no directive maps)"
                } else {
                    ""
                },
                if u.dir(*c).is_some_and(|d| d.clauses.is_empty()) {
                    ""
                } else {
                    ", inside a 'target data' region with the construct's data clauses"
                }
            ),
        ));
        if let Some(d) = u.dirs[*c].as_mut() {
            d.name = "data".into();
        }
        for &l in &nests.loops {
            if let Some(d) = u.dirs[l].as_mut() {
                d.name = "kernels loop".into();
            }
        }
    }
    if !found.is_empty() {
        // The index lists sites by directive name and their compute constructs.
        u.index = Default::default();
    }
    (found.into_iter().map(|(c, _)| c).collect(), diags)
}

/// A split construct without clauses has nothing left to do: its directive goes (and its
/// Fortran end directive with it).
pub fn remove_empty(u: &Unit, split: &[usize], plans: &mut [Plan]) {
    for &c in split {
        if u.dir(c).is_some_and(|d| d.clauses.is_empty()) {
            plans[c] = Plan::new(Action::Remove);
        }
    }
}

/// A split construct with a directive in it left unchanged stays OpenACC whole: its loops
/// are kernels of one `kernels` region only together (a loop left alone in a data region
/// would be an orphaned loop to the next run, and read otherwise).
pub fn keep_whole(u: &Unit, split: &[usize], plans: &mut [Plan]) -> Vec<usize> {
    let mut kept_whole = Vec::new();
    for &c in split {
        let inner = u.descendants(c);
        // A loop left, or a directive that did not parse; or the construct itself (its data
        // region lost around translated loops). Other directives left alone (`atomic` with
        // `if`) read the same on the next run.
        let left = inner.iter().copied().find(|&i| match u.dir(i) {
            None => true,
            Some(d) => plans[i].action == Action::Unchanged && d.name.ends_with("loop"),
        });
        let left = match (left, plans[c].action == Action::Unchanged) {
            (Some(l), _) => l,
            (None, true) if inner.iter().any(|&i| plans[i].action != Action::Unchanged) => c,
            _ => continue,
        };
        kept_whole.push(c);
        if left == c {
            for i in inner {
                plans[i] = Plan::new(Action::Unchanged);
            }
            continue;
        }
        let l = left;
        let mut kept = Plan::new(Action::Unchanged);
        kept.diags = vec![Diagnostic::new(
            u.at(c),
            id::NOT_TRANSLATED,
            format!(
                "the kernels region is not split into a kernel per loop nest: the directive at line {} in it is left unchanged, so the region stays OpenACC whole; the directive is left unchanged",
                u.line(l)
            ),
        )]
        .into();
        plans[c] = kept;
        for i in inner {
            if plans[i].action != Action::Unchanged {
                plans[i] = Plan::new(Action::Unchanged);
            }
        }
    }
    kept_whole
}

/// The loop nests of a `kernels` construct to split, and whether `if` constructs hold them.
struct Nests {
    loops: Vec<usize>,
    ifs: bool,
}

/// The names the file's directives name in their clauses (base names, as keys of
/// [`crate::lang::name_key`]); None where one names a common block (`/blk/`), whose
/// variables are not listed.
type Mapped = Option<crate::hash::HashSet<String>>;

/// The loop nests of `kernels` construct `c` when its body is loop nests, each the statement
/// of a loop directive of its own (a Fortran `end loop` after it), two or more, or any in
/// `if` constructs whose conditions the host decides as the device would; and its clauses
/// are data clauses over arrays: nothing else runs in the region, so splitting it changes no
/// result.
fn nests_of(u: &Unit, c: usize, mapped: &std::sync::OnceLock<Mapped>) -> Option<Nests> {
    let d = u.dir(c)?;
    if d.name != "kernels" {
        return None;
    }
    array_data_clauses(u, c, d)?;
    let stmt = u.stmts[c].as_ref()?;
    // A preprocessor conditional in the region (`#ifdef` around alternative loop
    // directives) decides which directives there are: the region is read whole, where the
    // alternatives are translated together.
    let sx = u.syntax;
    if stmt
        .toks()
        .any(|t| sx.is_preprocessor_line(t) && sx.site_at(t).is_none())
    {
        return None;
    }
    let mut nests = Nests {
        loops: Vec::new(),
        ifs: false,
    };
    // Statement lists still to read (a branch's): a worklist, as `if` constructs nest
    // without bound.
    let mut lists = vec![u.syntax.statements_in(&stmt.toks())];
    while let Some(body) = lists.pop() {
        let mut covered: Option<(std::ops::Range<usize>, Option<usize>)> = None;
        // Fortran lists the statements of an `if` construct among the region's.
        let mut skip = 0;
        for &t in &body {
            if t < skip {
                continue;
            }
            if let Some((own, end)) = &covered
                && (own.contains(&t) || (end.is_some() && u.site_at(t) == *end))
            {
                continue;
            }
            let Some(l) = u.site_at(t) else {
                let construct = u.syntax.if_construct(t)?;
                for (cond, stmts) in construct.branches {
                    if let Some(cond) = cond
                        && !host_decides(u, c, t, &cond, mapped)
                    {
                        return None;
                    }
                    lists.push(stmts);
                }
                skip = construct.end;
                nests.ifs = true;
                continue;
            };
            if !u.is_loop(l) || u.parent[l] != Some(c) || u.dir(l)?.name != "loop" {
                return None;
            }
            let own = u.stmts[l].as_ref()?;
            own.for_loop.as_ref()?;
            covered = Some((own.toks(), own.end()));
            nests.loops.push(l);
        }
    }
    // One nest alone is split only out of an `if`: a region of one loop maps as a combined
    // construct does already.
    nests.loops.sort_unstable();
    (nests.loops.len() >= 2 || (nests.ifs && !nests.loops.is_empty())).then_some(nests)
}

/// Some where the clauses of construct `c` (directive `d`) are data clauses over arrays
/// only, which a data region around the split nests can take.
pub(super) fn array_data_clauses(
    u: &Unit,
    c: usize,
    d: &crate::directive::Directive,
) -> Option<()> {
    let facts = u.site_facts(c);
    for clause in &d.clauses {
        if !REGION_CLAUSES.contains(&clause.name.as_str()) {
            return None;
        }
        // A scalar mapped around the loops would be read from the host by the loops that
        // do not assign it (a scalar not mapped by the construct itself is firstprivate).
        for item in clause.items() {
            let text = item.text.trim();
            let name = u.lang.base_name(text)?;
            let rest = text[name.len()..].trim_start();
            // A member (`s%a`, `s.a`, `p->a`) maps its structure too: not split.
            if !text.starts_with(name) || rest.starts_with(['%', '.', '-']) {
                return None;
            }
            let array = !rest.is_empty()
                || facts
                    .and_then(|f| f.type_of(name))
                    .is_some_and(|t| matches!(t.kind, VarKind::Array { .. }));
            if !array {
                return None;
            }
        }
    }
    Some(())
}

/// Whether the host decides condition `cond` (its tokens) of the `if` at token `t` in
/// `kernels` construct `c` as the device would: it reads only literals, operators and
/// scalar variables of the function (or constants) that the region does not assign and no
/// directive of the file maps, in no COMMON or EQUIVALENCE (whose storage another file's
/// directives may map), so the device's copy is the host's value (no array element,
/// call, member or dereference, whose value the device may hold apart).
fn host_decides(
    u: &Unit,
    c: usize,
    t: usize,
    cond: &[String],
    mapped: &std::sync::OnceLock<Mapped>,
) -> bool {
    let Some(facts) = u.site_facts(c) else {
        return false;
    };
    let fortran = u.lang.folds_case();
    let Some(file) = mapped.get_or_init(|| mapped_names(u)) else {
        return false;
    };
    // The constructs around the region, and the region's own clauses.
    let mut around = crate::hash::HashSet::default();
    for a in std::iter::once(c).chain(u.ancestors(c)) {
        if let Some(d) = u.dir(a)
            && !names_into(u, d, &mut around)
        {
            return false;
        }
    }
    let mapped = |name: &str| {
        let key = crate::lang::name_key(u.lang, name);
        file.contains(key.as_ref()) || around.contains(key.as_ref())
    };
    let operand = |k: usize| {
        k.checked_sub(1)
            .and_then(|k| cond.get(k))
            .is_some_and(|p| p == ")" || !is_operator(p, fortran))
    };
    for (k, tok) in cond.iter().enumerate() {
        let tok = tok.as_str();
        if is_literal(tok) {
            continue;
        }
        if is_operator(tok, fortran) {
            // C's unary `*` and `&` read through a pointer or take an address.
            if !fortran && matches!(tok, "*" | "&") && !operand(k) {
                return false;
            }
            continue;
        }
        if !u.lang.is_identifier(tok) || cond.get(k + 1).is_some_and(|n| n == "(") {
            return false;
        }
        let Some(v) = facts.var(tok) else {
            return false;
        };
        let ok = v.ty.kind == VarKind::Scalar
            && v.writes().is_empty()
            && v.decl().is_some()
            && (v.ty.is_const || u.syntax.declared_in_function(t, tok))
            && !u.syntax.shared_storage(tok)
            && !mapped(tok);
        if !ok {
            return false;
        }
    }
    true
}

/// A number, character or string literal, or a Fortran logical one.
fn is_literal(tok: &str) -> bool {
    let b = tok.as_bytes();
    match b.first() {
        Some(b'0'..=b'9' | b'\'' | b'"') => true,
        Some(b'.') => {
            b.get(1).is_some_and(u8::is_ascii_digit)
                || [".true.", ".false."]
                    .iter()
                    .any(|l| tok.len() >= l.len() && tok[..l.len()].eq_ignore_ascii_case(l))
        }
        _ => false,
    }
}

/// An operator that computes a value from its operands (and parentheses): no assignment,
/// member access, subscript or comma.
fn is_operator(tok: &str, fortran: bool) -> bool {
    const BOTH: [&str; 10] = ["(", ")", "==", "<", ">", "<=", ">=", "+", "-", "*"];
    const C: [&str; 14] = [
        "/", "!=", "!", "&&", "||", "%", "~", "^", "|", "&", "<<", ">>", "?", ":",
    ];
    const FORTRAN: [&str; 16] = [
        "/", "/=", "**", "//", ".eq.", ".ne.", ".lt.", ".le.", ".gt.", ".ge.", ".and.", ".or.",
        ".not.", ".eqv.", ".neqv.", ".xor.",
    ];
    BOTH.contains(&tok)
        || if fortran {
            FORTRAN.iter().any(|o| o.eq_ignore_ascii_case(tok))
        } else {
            C.contains(&tok)
        }
}

/// The names of the clause items of the file's directives that may leave data on the device
/// past their own extent (see [`Mapped`]): all but structured `data`, `host_data`, compute
/// and loop constructs, which [`host_decides`] reads where they enclose the region. In
/// Fortran all: a dummy argument is its caller's variable, which a construct around a call
/// may map.
fn mapped_names(u: &Unit) -> Mapped {
    let mut out = crate::hash::HashSet::default();
    let fortran = u.lang.folds_case();
    for (i, d) in u.dirs.iter().enumerate() {
        let Some(d) = d else { continue };
        if !fortran
            && (matches!(d.name.as_str(), "data" | "host_data")
                || d.compute_kind().is_some()
                || u.is_loop(i))
        {
            continue;
        }
        if !names_into(u, d, &mut out) {
            return None;
        }
    }
    Some(out)
}

/// Add the names of the clause items of `d` to `out`; false where one names a common block.
fn names_into(
    u: &Unit,
    d: &crate::directive::Directive,
    out: &mut crate::hash::HashSet<String>,
) -> bool {
    for item in d.clauses.iter().flat_map(|c| c.items()) {
        let text = item.text.trim();
        if text.starts_with('/') {
            return false;
        }
        if let Some(name) = u.lang.base_name(text) {
            out.insert(crate::lang::name_key(u.lang, name).into_owned());
        }
    }
    true
}
