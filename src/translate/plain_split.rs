//! `kernels` regions whose body is two or more plain loop nests (no loop directive), each
//! proven independent: as with [`split`](super::split), every nest is a kernel of its own in
//! OpenACC, so it becomes the combined construct a `kernels loop` over it would
//! (`target teams distribute parallel for [simd]` with the inferred clauses), and the
//! construct a data region with its data clauses (or nothing). The `target` region with a
//! `parallel for` per nest that such a region maps to otherwise runs every nest on one team
//! of a GPU (one multiprocessor): the shape of the canonical Jacobi example.
//!
//! Done on the construct's finished plan (after the implicit data), since the nests have no
//! directive to rename: the construct's implicit maps of the scalars the region writes go
//! to each nest that names them (`map(tofrom: err)`), so every value passes through the host
//! between nests, as [`split`](super::split) keeps no scalar on the data region: a nest
//! that reads a scalar an earlier one wrote gets the value that one copied back.

use super::split::array_data_clauses;
use crate::diag::Diagnostic;
use crate::facts::VarKind;
use crate::intent::{Action, ClauseOp, Construct, Insert, OmpClause, OmpDirective, Plan};
use crate::profile::Profile;
use crate::rules::id;
use crate::unit::Unit;

/// Split `kernels` construct `c` (mapped to `target`, its plain loops planned) when its
/// body is plain loop nests, two or more, each planned as a parallel loop; its plan then
/// maps a data region and each nest's directive is the combined construct.
pub fn split(u: &Unit, c: usize, profile: Profile, plan: &mut Plan) {
    if profile != Profile::Default {
        return;
    }
    let Some(found) = nests(u, c, plan) else {
        return;
    };
    let Some((kept, scalars)) = construct_maps(u, c, plan) else {
        return;
    };
    let n = found.len();
    let mut directives = Vec::with_capacity(n);
    for &k in &found {
        let Insert::BeforeStatement {
            directive, region, ..
        } = &plan.inserts[k]
        else {
            return;
        };
        let text = region.as_ref().map_or("", |r| &u.src[r.clone()]);
        match nest_directive(u, directive, text, &scalars) {
            Ok(d) => directives.push(d),
            Err(kept) => {
                plan.diags.push(Diagnostic::new(
                    u.at(c),
                    id::KERNELS_SPLIT,
                    format!(
                        "kernels region of {n} plain loop nests kept as one target region: a nest would need 'lastprivate({kept})' on 'target teams distribute parallel do', which flang does not implement; a GPU runs the region on one team"
                    ),
                ));
                return;
            }
        }
    }
    for (k, d) in found.into_iter().zip(directives) {
        if let Insert::BeforeStatement { directive, .. } = &mut plan.inserts[k] {
            *directive = d;
        }
    }
    let Action::Rewrite(rw) = &mut plan.action else {
        return;
    };
    rw.append = kept;
    let clauses = rw.append.len()
        + (rw.ops.iter())
            .map(|op| match op {
                ClauseOp::Keep => 1,
                ClauseOp::Drop => 0,
                ClauseOp::Replace(cs) => cs.len(),
            })
            .sum::<usize>();
    if clauses == 0 {
        plan.action = Action::Remove;
    } else {
        rw.name = Construct::of("target data");
    }
    plan.diags.push(Diagnostic::new(
        u.at(c),
        id::KERNELS_SPLIT,
        format!(
            "kernels region of {n} plain loop nests whose outer loops run in parallel: each nest becomes a target construct of its own, as it is a kernel of its own in OpenACC{}",
            if clauses == 0 {
                ""
            } else {
                ", inside a 'target data' region with the construct's data clauses"
            }
        ),
    ));
}

/// The combined construct of a nest whose parallel loop directive inside the `target`
/// region was `directive` and whose source is `text`: `target teams distribute` before it,
/// and a map of each scalar of `scalars` (written by the region) that the nest names and
/// does not make private. A `lastprivate` item that is not so mapped is dropped: its value
/// would stay in the target region's copy. Err (the items) where flang-22 could not build
/// the construct: a `lastprivate` left on one without `simd` ("not yet implemented" for
/// `distribute parallel do`), which the worksharing loop in one `target` region avoids.
fn nest_directive(
    u: &Unit,
    directive: &OmpDirective,
    text: &str,
    scalars: &[(String, String)],
) -> Result<OmpDirective, String> {
    let simd = directive.name == Construct::of("parallel for simd");
    let name = if simd {
        Construct::of("target teams distribute parallel for simd")
    } else {
        Construct::of("target teams distribute parallel for")
    };
    let key = |n: &str| crate::lang::name_key(u.lang, n).into_owned();
    let listed = |clause: &str| -> Vec<String> {
        (directive.clauses.iter())
            .filter(|c| c.name == clause)
            .filter_map(|c| c.arg.as_deref())
            .flat_map(split_items)
            .map(key)
            .collect()
    };
    // A scalar private to the nest's iterations passes no value: no map.
    let private = listed("private");
    let named: Vec<&(String, String)> = (scalars.iter())
        .filter(|(_, v)| mentions(u, text, v) && !private.contains(&key(v)))
        .collect();
    let mapped = |v: &str| named.iter().any(|(_, n)| key(n) == key(v));
    let mut clauses = Vec::with_capacity(directive.clauses.len() + 1);
    for c in &directive.clauses {
        if c.name != "lastprivate" {
            clauses.push(c.clone());
            continue;
        }
        let kept: Vec<&str> = (c.arg.as_deref().map(split_items).unwrap_or_default())
            .into_iter()
            .filter(|v| mapped(v))
            .collect();
        if kept.is_empty() {
            continue;
        }
        if u.lang.folds_case() && !simd {
            return Err(kept.join(", "));
        }
        clauses.push(OmpClause::new("lastprivate", kept.join(", ")));
    }
    let mut kinds: Vec<&str> = named.iter().map(|(k, _)| k.as_str()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    for kind in kinds {
        let items: Vec<&str> = (named.iter())
            .filter(|(k, _)| k == kind)
            .map(|(_, v)| v.as_str())
            .collect();
        clauses.push(OmpClause::new(
            "map",
            format!("{kind}: {}", items.join(", ")),
        ));
    }
    Ok(OmpDirective::new(name, clauses))
}

/// The indexes in `plan.inserts` of the parallel loop directives of the nests that are the
/// body of construct `c`; None unless that body is nothing but such nests, two or more, and
/// the plan nothing but a rewritten `target` with directives before statements.
fn nests(u: &Unit, c: usize, plan: &Plan) -> Option<Vec<usize>> {
    let d = u.dir(c)?;
    if d.name != "kernels" || array_data_clauses(u, c, d).is_none() {
        return None;
    }
    let Action::Rewrite(rw) = &plan.action else {
        return None;
    };
    let plain = rw.name == Construct::of("target")
        && !rw.drop_arg
        && plan.before.is_empty()
        && plan.scope.is_empty()
        && plan.end_after_stmt.is_none()
        && (plan.inserts.iter()).all(|x| matches!(x, Insert::BeforeStatement { .. }));
    if !plain {
        return None;
    }
    let stmt = u.stmts[c].as_ref()?;
    let end = stmt.end();
    // No directive inside: a Fortran end directive closes the construct.
    if u.descendants(c).iter().any(|&k| Some(k) != end) {
        return None;
    }
    let sx = u.syntax;
    let mut out = Vec::new();
    for t in sx.statements_in(&stmt.toks()) {
        if end.is_some() && sx.site_at(t) == end {
            continue;
        }
        if sx.is_preprocessor_line(t) || sx.site_at(t).is_some() {
            return None;
        }
        let f = sx.loop_at(t)?;
        let k = plan.inserts.iter().position(|x| {
            matches!(x, Insert::BeforeStatement { stmt, directive, .. }
                if *stmt == f.for_tok()
                    && (directive.name == Construct::of("parallel for simd")
                        || directive.name == Construct::of("parallel for")))
        })?;
        out.push(k);
    }
    (out.len() >= 2).then_some(out)
}

/// The construct's clauses added by the translation that stay on the data region, and the
/// scalars among their items that go to the nests instead, as (map type, name); None where
/// a clause other than a map was added or an item is neither an array nor a scalar.
#[allow(clippy::type_complexity)]
fn construct_maps(
    u: &Unit,
    c: usize,
    plan: &Plan,
) -> Option<(Vec<OmpClause>, Vec<(String, String)>)> {
    let Action::Rewrite(rw) = &plan.action else {
        return None;
    };
    let replaced = rw.ops.iter().flat_map(|op| match op {
        ClauseOp::Replace(cs) => cs.as_slice(),
        _ => &[],
    });
    if replaced.clone().any(|x| x.name != "map") || rw.ops.contains(&ClauseOp::Keep) {
        return None;
    }
    let facts = u.site_facts(c)?;
    let mut kept = Vec::new();
    let mut scalars = Vec::new();
    for clause in &rw.append {
        let arg = clause.arg.as_deref().filter(|_| clause.name == "map")?;
        let (kind, items) = match arg.split_once(':') {
            Some((k, rest)) if u.lang.is_identifier(k.trim()) => (k.trim(), rest),
            _ => ("tofrom", arg),
        };
        let mut arrays = Vec::new();
        for item in split_items(items) {
            let name = u.lang.base_name(item)?;
            let whole = item == name;
            match facts.type_of(name).map(|t| &t.kind) {
                Some(VarKind::Scalar) if whole => scalars.push((kind.to_string(), item.into())),
                Some(VarKind::Array { .. }) => arrays.push(item),
                _ if !whole => arrays.push(item),
                _ => return None,
            }
        }
        if !arrays.is_empty() {
            let arg = format!("{kind}: {}", arrays.join(", "));
            kept.push(OmpClause::new("map", arg));
        }
    }
    Some((kept, scalars))
}

/// The items of a clause's list, trimmed: split at the commas outside brackets.
fn split_items(list: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut from) = (0usize, 0);
    for (k, b) in list.bytes().enumerate() {
        match b {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                out.push(list[from..k].trim());
                from = k + 1;
            }
            _ => {}
        }
    }
    out.push(list[from..].trim());
    out.retain(|s| !s.is_empty());
    out
}

/// Whether `text` (a loop nest's source) names `var` as a whole word (as the language
/// compares names; a mention in a comment counts too, which only adds a map).
fn mentions(u: &Unit, text: &str, var: &str) -> bool {
    let key = crate::lang::name_key(u.lang, var);
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
    let bytes = text.as_bytes();
    let mut k = 0;
    while k < bytes.len() {
        if !word(bytes[k]) {
            k += 1;
            continue;
        }
        let start = k;
        while k < bytes.len() && word(bytes[k]) {
            k += 1;
        }
        if crate::lang::name_key(u.lang, &text[start..k]) == key {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::split_items;

    #[test]
    fn items_split_at_top_level_commas() {
        assert_eq!(split_items(" t, err"), ["t", "err"]);
        assert_eq!(
            split_items("a[0:n][0:m], b(1:n, 2), c"),
            ["a[0:n][0:m]", "b(1:n, 2)", "c"]
        );
        assert!(split_items(" ").is_empty());
    }
}
