//! `default(none)` on a compute construct: every variable the region references must have a
//! data attribute (OpenACC 3.3, 2.5.16). The translation drops the clause, so its check is
//! made here, from the variables the semantic facts find in the region: an unlisted one is an
//! error at its first use and the construct stays OpenACC.
//!
//! A variable has a data attribute when it is in a data, `private`, `firstprivate` or
//! `reduction` clause of the construct, in a data clause of an enclosing `data` construct,
//! in a `declare` directive, or is predetermined: the variable of a loop a loop directive
//! applies to. Where we cannot be sure, nothing is reported: names in any clause of a
//! directive inside the region (a loop's `private` or `reduction`), variables declared in
//! another file (a header's `declare` is not seen), const scalars (C++ folds them).

use crate::diag::Diagnostic;
use crate::directive::{DATA_CLAUSES, Directive};
use crate::facts::VarKind;
use crate::lang::{Language, name_key};
use crate::rules::id;
use crate::unit::Unit;
use std::borrow::Cow;
use std::collections::HashSet;

/// Adds the variables `d` gives a data attribute to, by [`name_key`] (a Fortran clause may
/// spell a name in another case than the statements).
fn listed<'d>(l: &dyn Language, d: &'d Directive, into: &mut HashSet<Cow<'d, str>>) {
    for c in &d.clauses {
        let name = c.name.as_str();
        if DATA_CLAUSES.contains(&name) || matches!(name, "private" | "firstprivate" | "reduction")
        {
            into.extend(
                c.items()
                    .filter_map(|i| l.base_name(&i.text))
                    .map(|b| name_key(l, b)),
            );
        }
    }
}

/// Whether `d` asks for `default(none)`.
fn default_none(d: &Directive) -> bool {
    d.all("default")
        .any(|c| c.items().any(|v| v.text == "none"))
}

/// The variables of compute constructs with `default(none)` that have no data attribute.
pub fn check(u: &Unit) -> Vec<(usize, Diagnostic)> {
    let mut out = Vec::new();
    let candidates: Vec<usize> = (0..u.sites.len())
        .filter(|&i| {
            u.dir(i)
                .is_some_and(|d| d.compute_kind().is_some() && default_none(d))
        })
        .collect();
    if candidates.is_empty() {
        return out;
    }
    let mut declared: HashSet<Cow<str>> = HashSet::new();
    for d in u.dirs.iter().flatten().filter(|d| d.name == "declare") {
        listed(u.lang, d, &mut declared);
    }
    for i in candidates {
        let (Some(d), Some(f)) = (u.dir(i), u.site_facts(i)) else {
            continue;
        };
        let mut known: HashSet<Cow<str>> = declared.clone();
        listed(u.lang, d, &mut known);
        for a in u.ancestors(i) {
            if let Some(ad) = u.dir(a).filter(|ad| ad.name == "data") {
                listed(u.lang, ad, &mut known);
            }
        }
        // Any name in the text of a directive inside the region (parsed or not), and the
        // variables of the loops loop directives apply to.
        let mut nested: HashSet<String> = HashSet::new();
        for k in std::iter::once(i).chain(u.descendants(i)) {
            let s = &u.sites[k];
            if k != i {
                let text = s.unescaped.as_deref().unwrap_or(u.src);
                for w in u.lang.words(&text[s.text()]) {
                    nested.insert(name_key(u.lang, w).into_owned());
                }
            }
            if u.is_loop(k)
                && let Some(tok) = s.token()
            {
                nested.extend(
                    u.syntax
                        .nest_loops(tok + 1, 64)
                        .into_iter()
                        .filter_map(|l| l.var.map(|v| name_key(u.lang, &v).into_owned())),
                );
            }
        }
        let kind = d.compute_kind().unwrap_or("parallel");
        for v in &f.vars {
            let name = v.name.as_str();
            let const_scalar = v.ty.is_const && v.ty.kind == VarKind::Scalar;
            let unsure =
                v.decl().is_none() || const_scalar || (!f.exact && v.ty.kind == VarKind::Other);
            let key = name_key(u.lang, name);
            if unsure || known.contains(&*key) || nested.contains(&*key) {
                continue;
            }
            out.push((
                i,
                Diagnostic::new(
                    v.first_use(),
                    id::DEFAULT_NONE_UNLISTED,
                    format!(
                        "'{name}' is not listed in a data clause of the enclosing '{kind}' construct with default(none) (line {}); 'acc {}' is left unchanged",
                        u.line(i),
                        d.name
                    ),
                ),
            ));
        }
    }
    out
}
