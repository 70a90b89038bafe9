//! Path patterns of a configuration, as ruff reads them: `exclude` and `extend-exclude` (the
//! paths a walk skips) and the patterns of `per-file-ignores` (the files some rules are not
//! reported for). Patterns are gitignore's: relative to the directory of the configuration
//! that sets them; one without a `/` matches a name at any depth (`build`, `*_gen.c`), one
//! with a `/` a path from that directory (`src/legacy/*.c`), `!` re-includes.

use crate::select::{Layer, Selection};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Compiled patterns, each group relative to its directory.
#[derive(Debug, Default)]
pub struct Patterns {
    groups: Vec<(PathBuf, Gitignore)>,
}

impl Patterns {
    /// `rooted`: patterns with the (absolute) directory they are relative to.
    pub fn new(rooted: &[(PathBuf, Vec<String>)]) -> Result<Patterns, String> {
        let mut groups = Vec::new();
        for (root, patterns) in rooted.iter().filter(|(_, p)| !p.is_empty()) {
            let mut b = GitignoreBuilder::new(root);
            for p in patterns {
                b.add_line(None, p)
                    .map_err(|e| format!("'{p}' is not a valid pattern: {e}"))?;
            }
            groups.push((root.clone(), b.build().map_err(|e| e.to_string())?));
        }
        Ok(Patterns { groups })
    }

    /// Whether `path` (absolute, links resolved), or a directory above it, matches.
    pub fn matches(&self, path: &Path, is_dir: bool) -> bool {
        self.groups.iter().any(|(root, g)| {
            path.strip_prefix(root).is_ok_and(|rel| {
                !rel.as_os_str().is_empty()
                    && g.matched_path_or_any_parents(rel, is_dir).is_ignore()
            })
        })
    }
}

/// `per-file-ignores`: for files matching a pattern, rules that are not reported.
#[derive(Debug, Default)]
pub struct PerFileIgnores {
    entries: Vec<(Patterns, BTreeSet<String>)>,
}

impl PerFileIgnores {
    /// `entries`: (directory, pattern, rule patterns as `--ignore` takes them); `ids` the
    /// rules of the tables. A rule pattern that matches no rule is an error.
    pub fn new(
        entries: &[(PathBuf, String, Vec<String>)],
        ids: &[&str],
    ) -> Result<PerFileIgnores, Vec<String>> {
        let mut out = Vec::new();
        let mut errors = Vec::new();
        for (root, pattern, rules) in entries {
            let layer = Layer {
                select: Some(rules.clone()),
                ..Layer::default()
            };
            let rules = match Selection::resolve(&[layer], ids) {
                Ok(s) => ids
                    .iter()
                    .filter(|id| s.enabled(id))
                    .map(|id| id.to_string())
                    .collect(),
                Err(e) => {
                    let e = e
                        .iter()
                        .map(|m| m.replacen("select", "per-file-ignores", 1));
                    errors.extend(e.map(|m| format!("'{pattern}': {m}")));
                    continue;
                }
            };
            match Patterns::new(&[(root.clone(), vec![pattern.clone()])]) {
                Ok(p) => out.push((p, rules)),
                Err(e) => errors.push(format!("per-file-ignores: {e}")),
            }
        }
        if errors.is_empty() {
            Ok(PerFileIgnores { entries: out })
        } else {
            Err(errors)
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The rules not reported in the file at `path` (absolute, links resolved).
    pub fn ignored(&self, path: &Path) -> BTreeSet<&str> {
        self.entries
            .iter()
            .filter(|(p, _)| p.matches(path, false))
            .flat_map(|(_, r)| r.iter().map(String::as_str))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_gitignore_patterns_relative_to_their_directory() {
        let root = PathBuf::from("/p");
        let rooted = |v: &[&str]| vec![(root.clone(), v.iter().map(|s| s.to_string()).collect())];
        let p = Patterns::new(&rooted(&[
            "build",
            "src/legacy/*.c",
            "*_gen.h",
            "!keep_gen.h",
        ]))
        .unwrap();
        assert!(p.matches(Path::new("/p/build"), true));
        assert!(p.matches(Path::new("/p/a/build/x.c"), false));
        assert!(p.matches(Path::new("/p/src/legacy/old.c"), false));
        assert!(!p.matches(Path::new("/p/x/src/legacy/old.c"), false));
        assert!(p.matches(Path::new("/p/inc/t_gen.h"), false));
        assert!(!p.matches(Path::new("/p/inc/keep_gen.h"), false));
        assert!(!p.matches(Path::new("/q/build/x.c"), false));
        assert!(!p.matches(Path::new("/p/src/main.c"), false));
        assert!(Patterns::new(&rooted(&["src/{a,b"])).is_err());
    }

    #[test]
    fn per_file_ignores_expand_rule_patterns() {
        let ids = ["implicit-pointer", "runtime-wait", "runtime-memory"];
        let e = |p: &str, r: &[&str]| {
            (
                PathBuf::from("/p"),
                p.to_string(),
                r.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            )
        };
        let f = PerFileIgnores::new(
            &[
                e("tests/*.c", &["runtime-*"]),
                e("*.h", &["acc2omp-implicit-pointer"]),
            ],
            &ids,
        )
        .unwrap();
        let got: Vec<&str> = f.ignored(Path::new("/p/tests/t.c")).into_iter().collect();
        assert_eq!(got, ["runtime-memory", "runtime-wait"]);
        assert_eq!(
            f.ignored(Path::new("/p/a/b.h"))
                .into_iter()
                .collect::<Vec<_>>(),
            ["implicit-pointer"]
        );
        assert!(f.ignored(Path::new("/p/src/a.c")).is_empty());
        let err = PerFileIgnores::new(&[e("*.c", &["runtime-wiat"])], &ids).unwrap_err();
        assert!(err[0].contains("'runtime-wiat' matches no rule"), "{err:?}");
    }
}
