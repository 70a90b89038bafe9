//! The private, firstprivate and reduction clauses of a compute region's sites, indexed once
//! per region: a directive may list thousands of variables, and each variable written in the
//! region asks about each site around its writes.

use crate::directive::Directive;
use crate::hash::{HashMap, HashSet};
use crate::lang::Language;
use crate::translate::reductions::name_key;
use std::borrow::Cow;

/// The operators OpenMP's `reduction` takes as they are spelled in OpenACC.
const OPERATORS: [&str; 9] = ["+", "*", "max", "min", "&", "|", "^", "&&", "||"];

/// A region's `private`/`firstprivate`/`reduction` items by base name, compared as the
/// language compares names ([`name_key`]: a Fortran clause may spell a name in another case
/// than the statements).
pub(super) struct RegionClauses<'u> {
    /// (site, base name) of each item of those clauses.
    named: HashSet<(usize, Cow<'u, str>)>,
    /// Per base name, the sites whose `reduction` clauses name it, in the order of the
    /// region, each with the operator of its first such clause (None: not one of
    /// [`OPERATORS`], and then the site does not count as reducing it).
    reducers: HashMap<Cow<'u, str>, Vec<(usize, Option<&'static str>)>>,
    folded: bool,
}

impl<'u> RegionClauses<'u> {
    /// The index of the directives `sites` (site, directive), in the order of the region.
    pub(super) fn new(
        lang: &dyn Language,
        sites: impl IntoIterator<Item = (usize, &'u Directive)>,
    ) -> Self {
        let mut out = RegionClauses {
            named: HashSet::default(),
            reducers: HashMap::default(),
            folded: lang.folds_case(),
        };
        for (l, d) in sites {
            for k in &d.clauses {
                let reduction = match k.name.as_str() {
                    "reduction" => true,
                    "private" | "firstprivate" => false,
                    _ => continue,
                };
                let op = reduction.then(|| {
                    let op = k.modifier().unwrap_or("+");
                    OPERATORS.into_iter().find(|o| lang.same_name(o, op))
                });
                for x in k.items() {
                    let Some(b) = lang.base_name(&x.text) else {
                        continue;
                    };
                    let b = name_key(lang, b);
                    out.named.insert((l, b.clone()));
                    if let Some(op) = op {
                        let sites = out.reducers.entry(b).or_default();
                        // The first clause of a site that names it gives the operator.
                        if sites.last().is_none_or(|&(s, _)| s != l) {
                            sites.push((l, op));
                        }
                    }
                }
            }
        }
        out
    }

    /// Whether a `private`, `firstprivate` or `reduction` clause of site `l` names `v`.
    pub(super) fn names(&self, l: usize, v: &str) -> bool {
        self.named.contains(&(l, self.key(v)))
    }

    fn key<'v>(&self, v: &'v str) -> Cow<'v, str> {
        if self.folded && v.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(v.to_ascii_lowercase())
        } else {
            Cow::Borrowed(v)
        }
    }

    /// The sites whose reduction of `v` OpenMP can take, with its operator, in the order of
    /// the region.
    pub(super) fn reducers(&self, v: &str) -> Vec<(usize, &'static str)> {
        self.reducers
            .get(&self.key(v))
            .map(|s| {
                s.iter()
                    .filter_map(|&(l, op)| op.map(|op| (l, op)))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// One directive's `private`, `firstprivate` and `reduction` items by base name, with the
/// clauses that name each.
#[derive(Default)]
pub(crate) struct ClauseNames<'d> {
    /// Per base name, the clauses naming it ([`ClauseNames::bit`]).
    names: HashMap<Cow<'d, str>, u8>,
    /// Whether names are compared as the language compares them ([`name_key`]), not
    /// byte for byte.
    folded: bool,
}

impl<'d> ClauseNames<'d> {
    /// Names compared as the language compares them ([`Language::same_name`]).
    pub(crate) fn new(lang: &dyn Language, d: Option<&'d Directive>) -> Self {
        let folded = lang.folds_case();
        let mut names: HashMap<Cow<'d, str>, u8> = HashMap::default();
        for k in d.iter().flat_map(|d| &d.clauses) {
            let bit = Self::bit(&k.name);
            if bit == 0 {
                continue;
            }
            for x in k.items() {
                if let Some(b) = lang.base_name(&x.text) {
                    let key = if folded {
                        name_key(lang, b)
                    } else {
                        Cow::Borrowed(b)
                    };
                    *names.entry(key).or_default() |= bit;
                }
            }
        }
        ClauseNames { names, folded }
    }

    fn bit(clause: &str) -> u8 {
        match clause {
            "private" => 1,
            "firstprivate" => 2,
            "reduction" => 4,
            _ => 0,
        }
    }

    /// Whether one of `clauses` (of the three) names `v`.
    pub(crate) fn named(&self, clauses: &[&str], v: &str) -> bool {
        let mask = clauses.iter().fold(0, |m, c| m | Self::bit(c));
        let found = if self.folded && v.bytes().any(|b| b.is_ascii_uppercase()) {
            self.names.get(v.to_ascii_lowercase().as_str())
        } else {
            self.names.get(v)
        };
        found.is_some_and(|&b| b & mask != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directive::Dialect;
    use crate::directive::parse_directive_all_in;
    use crate::rules::Tables;

    /// The scan [`RegionClauses::names`] replaces.
    fn names_scan(lang: &dyn Language, d: &Directive, v: &str) -> bool {
        d.clauses.iter().any(|k| {
            matches!(k.name.as_str(), "private" | "firstprivate" | "reduction")
                && k.items().any(|x| {
                    lang.base_name(&x.text)
                        .is_some_and(|b| lang.same_name(b, v))
                })
        })
    }

    /// The scan [`RegionClauses::reducers`] replaces: the operator of a `reduction` clause
    /// of a directive on `v`.
    fn reduced_by(lang: &dyn Language, d: &Directive, v: &str) -> Option<&'static str> {
        let op = d
            .all("reduction")
            .find(|r| {
                r.items().any(|x| {
                    lang.base_name(&x.text)
                        .is_some_and(|b| lang.same_name(b, v))
                })
            })?
            .modifier()
            .unwrap_or("+");
        ["+", "*", "max", "min", "&", "|", "^", "&&", "||"]
            .into_iter()
            .find(|o| lang.same_name(o, op))
    }

    const NAMES: [&str; 10] = ["s", "t", "a", "x", "S", "p", "q", "n", "y", "z"];

    /// Whether the directives `texts` parse; if so, the index of them checked.
    fn check(lang: &dyn Language, dialect: Dialect, texts: &[String]) -> bool {
        let t = Tables::builtin();
        // (Lists the parser rejects, a name twice in one clause, never reach the index.)
        let Ok(dirs) = texts
            .iter()
            .map(|x| parse_directive_all_in(x, 0..x.len(), &t, dialect))
            .collect::<Result<Vec<Directive>, _>>()
        else {
            return false;
        };
        let index = RegionClauses::new(lang, dirs.iter().enumerate());
        for v in NAMES {
            for (l, d) in dirs.iter().enumerate() {
                assert_eq!(
                    index.names(l, v),
                    names_scan(lang, d, v),
                    "{v} at {l}: {texts:?}"
                );
            }
            let old: Vec<(usize, &str)> = dirs
                .iter()
                .enumerate()
                .filter_map(|(l, d)| reduced_by(lang, d, v).map(|op| (l, op)))
                .collect();
            assert_eq!(index.reducers(v), old, "{v}: {texts:?}");
            for d in &dirs {
                let names = ClauseNames::new(lang, Some(d));
                for set in [
                    &["private", "reduction"][..],
                    &["private", "firstprivate"],
                    &["private"],
                    &["reduction", "private", "firstprivate"],
                ] {
                    let old = d.clauses.iter().any(|k| {
                        set.contains(&k.name.as_str())
                            && k.items().any(|x| {
                                lang.base_name(&x.text)
                                    .is_some_and(|b| lang.same_name(b, v))
                            })
                    });
                    assert_eq!(names.named(set, v), old, "{v} in {set:?}: {texts:?}");
                }
            }
        }
        true
    }

    /// The index answers as the scans of every clause item it replaces, for generated
    /// directives: duplicates across clauses, different operators on one variable, a
    /// variable both private and reduced, members and array sections, operators OpenMP
    /// does not take.
    #[test]
    fn index_answers_as_the_scans() {
        let c = [
            "reduction(+:s,t)",
            "reduction(*:s)",
            "reduction(max:t,a[0:n])",
            "reduction(min:x)",
            "reduction(&&:s)",
            "reduction(+:x.y,p->q, z)",
            "private(s,a)",
            "firstprivate(t, S)",
            "reduction(||:n)",
            "reduction(+:s) reduction(min:s)",
            "reduction(^:y) private(y)",
        ];
        let f = [
            "reduction(+:s,t)",
            "reduction(*:S)",
            "reduction(max:t,a(1:n))",
            "reduction(MAX:x)",
            "reduction(.and.:s)",
            "reduction(+:x%y, z)",
            "private(s,a)",
            "firstprivate(t, S)",
            "reduction(iand:n)",
            "reduction(+:s) reduction(min:s)",
            "reduction(+:y) private(y)",
        ];
        let lists: [(&dyn Language, Dialect, &[&str]); 2] = [
            (&crate::c::lang::C, Dialect::C, &c),
            (&crate::fortran::lang::Fortran, Dialect::Fortran, &f),
        ];
        for (lang, dialect, clauses) in lists {
            let n = clauses.len();
            let mut checked = 0;
            for a in 0..n {
                for b in 0..n {
                    // (Constructs that take all three clauses: the index reads no name.)
                    let texts = [
                        format!("parallel {}", clauses[a]),
                        format!("parallel {} {}", clauses[b], clauses[(a + 3) % n]),
                        format!("serial {} {}", clauses[(a + b) % n], clauses[b]),
                        format!("parallel {}", clauses[(a * b + 1) % n]),
                    ];
                    checked += usize::from(check(lang, dialect, &texts));
                }
            }
            assert!(checked > n * n / 3, "{checked} of {} parse", n * n);
        }
    }
}
