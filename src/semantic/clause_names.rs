//! Clause arguments checked against the file's declarations, from syntax in every mode, so
//! that both modes decide alike and a second run decides as the first did:
//! - `collapse(x)` whose count has names (`collapse_count`);
//! - a variable in two `declare` directives of one scope (OpenACC 2.13; GCC: "variable used
//!   more than once with '#pragma acc declare'"). Clang finds it too, but only while both
//!   directives are OpenACC: once the first is translated, the second would pass. Both are
//!   left unchanged, so every run finds the pair.

use super::collapse_count;
use super::syntactic::Syntax;
use crate::diag::Diagnostic;
use crate::rules::id;
use crate::semantic::base_name;
use crate::structure::Structure;
use crate::unit::Unit;
use std::collections::HashMap;

/// Errors, and the starts of the directives to leave unchanged.
pub(super) fn check(
    unit: &Unit,
    syntax: &Syntax,
    structure: &Structure,
    defines: &[String],
) -> (Vec<Diagnostic>, Vec<usize>) {
    let names = collapse_count::Names::new(structure, defines);
    let (mut diags, mut rejected) = (Vec::new(), Vec::new());
    // A local variable by its declaration; a global one (declared again or not, or in
    // another file) by its name, and one of another file by its name and the block of the
    // directive.
    let mut declared: HashMap<(String, Option<usize>), (usize, usize)> = HashMap::new();
    for i in 0..unit.sites.len() {
        let (Some(d), Some(tok)) = (unit.dir(i), unit.sites[i].token()) else {
            continue;
        };
        let at = |offset: usize| {
            if unit.sites[i].unescaped.is_some() {
                unit.at(i)
            } else {
                offset
            }
        };
        if let Some((mut diag, reject)) =
            collapse_count::check(unit, syntax, &names, structure, d, tok)
        {
            if reject {
                diag.offset = at(diag.offset);
                rejected.push(unit.at(i));
            }
            diags.push(diag);
            if reject {
                continue;
            }
        }
        if d.name != "declare" {
            continue;
        }
        for it in d.clauses.iter().flat_map(|c| c.items()) {
            let Some(name) = base_name(&it.text) else {
                continue;
            };
            let key = match syntax.variable(name, tok) {
                Some((_, _, true)) => (name.to_string(), None),
                Some((decl, _, false)) => (String::new(), Some(decl)),
                None => (name.to_string(), syntax.block_at(tok)),
            };
            let Some(&(first, first_at)) = declared.get(&key) else {
                declared.insert(key, (i, it.span().start));
                continue;
            };
            let (line, here) = (unit.line(first), unit.line(i));
            let both = if first == i {
                "; the directive is left unchanged"
            } else {
                "; both directives are left unchanged"
            };
            diags.push(Diagnostic::new(
                at(it.span().start),
                id::DECLARE_DUPLICATE,
                format!("'{name}' is already in the 'declare' directive at line {line}: a variable may be in one 'declare' directive of its scope, once{both}"),
            ));
            if first != i && !rejected.contains(&unit.at(first)) {
                let at_first = if unit.sites[first].unescaped.is_some() {
                    unit.at(first)
                } else {
                    first_at
                };
                diags.push(Diagnostic::new(
                    at_first,
                    id::DECLARE_DUPLICATE,
                    format!("'{name}' is in the 'declare' directive at line {here} too: a variable may be in one 'declare' directive of its scope, once; both directives are left unchanged"),
                ));
                rejected.push(unit.at(first));
            }
            if !rejected.contains(&unit.at(i)) {
                rejected.push(unit.at(i));
            }
        }
    }
    (diags, rejected)
}
