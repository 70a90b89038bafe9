//! Reduction variables whose type OpenMP compilers miscompile.
//!
//! GCC 12 gets OpenMP `+` reductions of a `_Bool`/`bool` variable wrong in every form: a
//! `parallel for` combines the partial results without converting them back (a `_Bool`
//! holding 4), and `simd` (alone or combined) crashes at `-O1` and above. OpenACC compilers,
//! and Clang's OpenMP, are right. Such a directive is left unchanged with a warning; an
//! `int` variable (or `||` where no term is negative) gives the same result everywhere.

use crate::diag::Diagnostic;
use crate::directive::Item;
use crate::facts::SiteFacts;
use crate::hash::HashMap;
use crate::rules::id;
use crate::unit::Unit;

/// Directives with a `reduction(+: b)` of a `_Bool`/`bool` variable `b`.
pub fn check(u: &Unit) -> Vec<(usize, Diagnostic)> {
    let mut out = Vec::new();
    for i in 0..u.sites.len() {
        let Some(d) = u.dir(i) else { continue };
        let items: Vec<&Item> = d
            .clauses
            .iter()
            .filter(|c| c.name == "reduction" && c.modifier().map(str::trim) == Some("+"))
            .flat_map(|c| c.items())
            .collect();
        // Past a few items, the site's variables by name (a list may name thousands).
        let decls = (items.len() > FEW)
            .then(|| u.site_facts(i).map(declarations))
            .flatten();
        let found = items.into_iter().find(|it| match &decls {
            Some(decls) => {
                let name = it.text.trim();
                decls.get(name).copied().flatten().is_some_and(|at| {
                    u.syntax
                        .declaration_words(at, name)
                        .is_some_and(|w| is_bool(&w))
                })
            }
            None => declared_bool(u, i, it.text.trim()),
        });
        if let Some(it) = found {
            out.push((
                i,
                Diagnostic::new(
                    it.span().start,
                    id::REDUCTION_BOOL,
                    format!(
                        "'{}' is a _Bool/bool: GCC 12 miscompiles OpenMP '+' reductions of such variables (a wrong result, or a crash with 'simd'); declare it 'int', or reduce with '||' if no term is negative; the directive is left unchanged",
                        it.text.trim()
                    ),
                ),
            ));
        }
    }
    out
}

/// How many items a site's `+` reductions may have before its variables are looked up by
/// name rather than searched.
const FEW: usize = 8;

/// Whether `name`, as site `i` sees it, is declared `_Bool` or `bool` (spelled so in its
/// declaration; a typedef of it is not followed).
fn declared_bool(u: &Unit, i: usize, name: &str) -> bool {
    u.declaration_words(i, name).is_some_and(|w| is_bool(&w))
}

fn is_bool(words: &[String]) -> bool {
    words.iter().any(|w| matches!(w.as_str(), "_Bool" | "bool"))
}

/// The declaration of each variable of a site (None: in another file), by name: the first
/// variable of the name, as [`SiteFacts::var`] finds it.
fn declarations(f: &SiteFacts) -> HashMap<&str, Option<usize>> {
    let mut out = HashMap::default();
    for v in &f.vars {
        out.entry(v.name.as_str()).or_insert(v.decl());
    }
    out
}
