//! Which rules are reported: `select`, `extend-select` and `ignore`, as ruff has them, from
//! `acc2omp.toml` and the command line. The result is a value, so that each file can get
//! its own once configuration follows the file.
//!
//! A pattern is a rule id (`implicit-pointer`, also written `acc2omp-implicit-pointer` as in
//! NOLINT comments), a glob (`runtime-*`), or `ALL`. Layers apply in order (configuration,
//! then command line): a layer's `select` replaces the set, `extend-select` adds to it,
//! `ignore` removes from it.

use std::collections::BTreeSet;

/// One source of selections (`acc2omp.toml`, the command line).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layer {
    pub select: Option<Vec<String>>,
    pub extend_select: Vec<String>,
    pub ignore: Vec<String>,
}

/// The rules that are reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    enabled: BTreeSet<String>,
}

/// `*` matches any run of characters.
pub fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, rest)) => {
            let Some(t) = text.strip_prefix(head) else {
                return false;
            };
            (0..=t.len()).any(|k| t.is_char_boundary(k) && glob(rest, &t[k..]))
        }
    }
}

/// The closest of `known` to `word`, as ` (did you mean 'x'?)`, or nothing.
pub fn suggest<'k>(word: &str, known: impl IntoIterator<Item = &'k str>) -> String {
    known
        .into_iter()
        .map(|k| (strsim::damerau_levenshtein(word, k), k))
        .filter(|(d, k)| *d > 0 && *d <= 2.max(k.len() / 3))
        .min()
        .map_or(String::new(), |(_, k)| format!(" (did you mean '{k}'?)"))
}

impl Selection {
    /// Every rule.
    #[cfg(test)]
    pub fn all(ids: &[&str]) -> Selection {
        Selection {
            enabled: ids.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// Apply `layers` in order to the rules `ids`; a pattern matching no rule is an error
    /// (with the closest id).
    pub fn resolve(layers: &[Layer], ids: &[&str]) -> Result<Selection, Vec<String>> {
        let mut errors = Vec::new();
        let mut expand = |patterns: &[String], what: &str| -> BTreeSet<String> {
            let mut out = BTreeSet::new();
            for p in patterns {
                let p = p.trim();
                let bare = p.strip_prefix("acc2omp-").unwrap_or(p);
                let matched: Vec<&str> = if bare == "ALL" {
                    ids.to_vec()
                } else {
                    ids.iter().copied().filter(|id| glob(bare, id)).collect()
                };
                if matched.is_empty() {
                    errors.push(format!(
                        "{what}: '{p}' matches no rule{} (see `acc2omp rules`)",
                        suggest(bare, ids.iter().copied())
                    ));
                }
                out.extend(matched.into_iter().map(str::to_string));
            }
            out
        };
        let mut enabled: BTreeSet<String> = ids.iter().map(|s| s.to_string()).collect();
        for l in layers {
            if let Some(s) = &l.select {
                enabled = expand(s, "select");
            }
            enabled.extend(expand(&l.extend_select, "extend-select"));
            for id in expand(&l.ignore, "ignore") {
                enabled.remove(&id);
            }
        }
        if errors.is_empty() {
            Ok(Selection { enabled })
        } else {
            Err(errors)
        }
    }

    pub fn enabled(&self, rule: &str) -> bool {
        self.enabled.contains(rule)
    }

    /// This selection without `rules` (a file's `per-file-ignores`).
    pub fn without<'r>(&self, rules: impl IntoIterator<Item = &'r str>) -> Selection {
        let mut s = self.clone();
        for r in rules {
            s.enabled.remove(r);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDS: &[&str] = &[
        "implicit-pointer",
        "runtime-memory",
        "runtime-wait",
        "io-error",
    ];

    fn layer(select: Option<&[&str]>, extend: &[&str], ignore: &[&str]) -> Layer {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        Layer {
            select: select.map(v),
            extend_select: v(extend),
            ignore: v(ignore),
        }
    }

    #[test]
    fn layers_select_extend_and_ignore_in_order() {
        let s = Selection::resolve(&[layer(None, &[], &["runtime-*"])], IDS).unwrap();
        assert!(s.enabled("implicit-pointer") && !s.enabled("runtime-wait"));
        let s = Selection::resolve(
            &[
                layer(Some(&["acc2omp-implicit-pointer"]), &[], &[]),
                layer(None, &["runtime-wait"], &[]),
            ],
            IDS,
        )
        .unwrap();
        assert!(s.enabled("implicit-pointer") && s.enabled("runtime-wait"));
        assert!(!s.enabled("runtime-memory") && !s.enabled("io-error"));
        // A later select starts again.
        let s = Selection::resolve(
            &[layer(None, &[], &["ALL"]), layer(Some(&["ALL"]), &[], &[])],
            IDS,
        )
        .unwrap();
        assert_eq!(s, Selection::all(IDS));
    }

    #[test]
    fn unknown_patterns_are_errors_with_a_suggestion() {
        let e = Selection::resolve(&[layer(Some(&["implicit-pointr"]), &[], &["nope-*"])], IDS)
            .unwrap_err();
        assert_eq!(e.len(), 2);
        assert!(
            e[0].contains("'implicit-pointr' matches no rule (did you mean 'implicit-pointer'?)"),
            "{e:?}"
        );
    }

    #[test]
    fn globs() {
        assert!(glob("runtime-*", "runtime-wait") && glob("*", "") && glob("a*b*c", "aXbYc"));
        assert!(!glob("runtime-*", "implicit") && !glob("a*c", "ab"));
    }
}
