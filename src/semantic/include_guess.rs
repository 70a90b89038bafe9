//! Headers the parse did not find, looked for where a project's build most plausibly has them
//! when there is no compile database: PolyBench's kernels `#include <polybench.h>`, which
//! lives in `utilities/` three directories up and which its Makefile passes with `-I`.
//!
//! The search goes from the source's directory up through its ancestors, to the repository's
//! root (the first with `.git`, `.hg` or `.svn`) or `LEVELS` directories up, and at each looks
//! in the directory and its immediate subdirectories; the nearest level holding the name
//! decides. Two files of that name at that level: no guess.

use crate::diag::Diagnostic;
use crate::rules::id;
use std::path::{Path, PathBuf};

/// Ancestors searched above the source's directory when no repository root comes first.
const LEVELS: usize = 4;
/// Subdirectories of one directory looked into (a directory of thousands is not a project's
/// include layout).
const SUBDIRS: usize = 256;

/// Where the headers that were not found were found: per header, the offset of the error
/// about it and its name.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Guess {
    /// Headers looked for.
    pub looked: usize,
    /// The directory to add with `-I`.
    pub found: Vec<(usize, String, PathBuf)>,
    /// The files of that name at the nearest level that has one (two or more).
    pub ambiguous: Vec<(usize, String, Vec<PathBuf>)>,
    /// Headers missing from a header rather than from the file: the name and that header.
    pub by: Vec<(String, PathBuf)>,
}

impl Guess {
    /// Whether no header was looked for (the result then depends on no directory's listing).
    pub fn is_empty(&self) -> bool {
        self.looked == 0
    }

    /// Adds what `other` found.
    pub fn extend(&mut self, other: Guess) {
        self.looked += other.looked;
        self.found.extend(other.found);
        self.ambiguous.extend(other.ambiguous);
        self.by.extend(other.by);
    }

    /// `user` with the directories found added (`-I`), or None when none was.
    pub fn flags(&self, user: &[String]) -> Option<Vec<String>> {
        let mut out = user.to_vec();
        let mut dirs: Vec<&Path> = Vec::new();
        for (_, _, d) in &self.found {
            if !dirs.contains(&d.as_path()) {
                dirs.push(d);
                out.push("-I".into());
                out.push(d.to_string_lossy().into_owned());
            }
        }
        (!dirs.is_empty()).then_some(out)
    }

    /// What was guessed for `file`, and whether the parse with the guess is `kept` (it has
    /// fewer errors); directories relative to the file's.
    pub fn notes(&self, file: &Path, kept: bool) -> Vec<Diagnostic> {
        let here = file.parent().unwrap_or(file);
        let rel = |d: &Path| relative(here, d).display().to_string();
        // 'name', or 'name' (included by 'header'), as the message names it.
        let named = |name: &str| match self.by.iter().find(|(n, _)| n == name) {
            Some((_, h)) => format!("'{name}' (included by '{}')", rel(h)),
            None => format!("'{name}'"),
        };
        let mut out = Vec::new();
        for (at, name, dir) in &self.found {
            let dir = rel(dir);
            let what = if kept {
                format!(
                    "this file is parsed with -I {dir}, where the only file of that name near it lies (a guess"
                )
            } else {
                format!(
                    "the only file of that name near it lies in {dir}, but the parse with -I {dir} has no fewer errors, so it is not used (see"
                )
            };
            out.push(Diagnostic::new(*at, id::INCLUDE_GUESSED, format!("{} is not on the include path and no compile_commands.json was found: {what}; -p with the build's compile database gives its exact flags)", named(name))));
        }
        for (at, name, files) in &self.ambiguous {
            let places: Vec<String> = files.iter().map(|f| rel(f.parent().unwrap_or(f))).collect();
            out.push(Diagnostic::new(*at, id::INCLUDE_GUESSED, format!("{} is not on the include path and no compile_commands.json was found; files of that name lie in {}, so none is guessed: give the build's flags (-p, compile_commands.json)", named(name), places.join(" and "))));
        }
        out
    }
}

/// The header a libclang error says was not found (`'name' file not found`, also with
/// `, did you mean '…'?` or `with <angled> include; …` after it), or None for any other
/// message: the one reading of that error for the parse, its checks and the guess.
pub fn missing_header(msg: &str) -> Option<&str> {
    msg.strip_prefix('\'')
        .and_then(|m| m.split_once("' file not found"))
        .map(|(n, _)| n)
}

/// The names of the headers libclang's errors (`'name' file not found`) say were not found,
/// with the error's offset, in order.
pub fn missing(errors: &[(usize, String)]) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    for (at, msg) in errors {
        let Some(name) = missing_header(msg) else {
            continue;
        };
        let relative = Path::new(name).is_relative() && !name.split('/').any(|c| c == "..");
        if relative && !name.is_empty() && !out.iter().any(|(_, n)| n == name) {
            out.push((*at, name.to_string()));
        }
    }
    out
}

/// The headers that headers included by `file` (an absolute path) did not find, each looked
/// for near the header that includes it, as `#include "..."` searches from the including
/// file's directory: `missing` holds the offset of the file's `#include` that led there, the
/// error and the header's path. Headers outside the directories searched for `file`'s own
/// (system headers) are not looked into.
pub fn guess_in_headers(file: &Path, missing: &[(usize, String, String)]) -> Guess {
    let mut g = Guess::default();
    let Some(top) = levels(file).pop() else {
        return g;
    };
    // Each header once, in the order of the errors.
    let mut headers: Vec<&str> = Vec::new();
    for (_, _, h) in missing {
        if !headers.contains(&h.as_str()) {
            headers.push(h);
        }
    }
    for header in headers {
        let path = Path::new(header);
        if !path.is_absolute() || !path.starts_with(&top) {
            continue;
        }
        let errors: Vec<(usize, String)> = missing
            .iter()
            .filter(|(_, _, h)| h == header)
            .map(|(at, m, _)| (*at, m.clone()))
            .collect();
        let names: Vec<(usize, String)> = self::missing(&errors)
            .into_iter()
            .filter(|(_, n)| !g.by.iter().any(|(m, _)| m == n))
            .collect();
        g.extend(guess(path, &names));
        g.by.extend(names.into_iter().map(|(_, n)| (n, path.to_path_buf())));
    }
    g
}

/// Look for each of `missing` (offset, name) near `file` (an absolute path).
pub fn guess(file: &Path, missing: &[(usize, String)]) -> Guess {
    let mut g = Guess {
        looked: missing.len(),
        ..Guess::default()
    };
    if missing.is_empty() {
        return g;
    }
    let levels = levels(file);
    let subdirs: Vec<Vec<PathBuf>> = levels.iter().map(|d| subdirectories(d)).collect();
    for (at, name) in missing {
        for (dir, subs) in levels.iter().zip(&subdirs) {
            let mut hits: Vec<PathBuf> = std::iter::once(dir)
                .chain(subs)
                .map(|d| d.join(name))
                .filter(|p| p.is_file())
                .map(|p| p.canonicalize().unwrap_or(p))
                .collect();
            // One file reached by two paths (a symlinked directory) is one hit; sorted, so
            // the files listed do not depend on the directory's order.
            hits.sort();
            hits.dedup();
            match hits.len() {
                0 => continue,
                1 => {
                    let depth = Path::new(name).components().count();
                    if let Some(d) = hits[0].ancestors().nth(depth) {
                        g.found.push((*at, name.clone(), d.to_path_buf()));
                    }
                }
                _ => g.ambiguous.push((*at, name.clone(), hits)),
            }
            break;
        }
    }
    g
}

/// The source's directory and its ancestors searched, nearest first.
fn levels(file: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in file.ancestors().skip(1).take(LEVELS + 1) {
        // Never the file system's root.
        if dir.parent().is_none() {
            break;
        }
        out.push(dir.to_path_buf());
        if [".git", ".hg", ".svn"].iter().any(|m| dir.join(m).exists()) {
            break;
        }
    }
    out
}

/// The visible subdirectories of `dir`, sorted (at most `SUBDIRS`).
fn subdirectories(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    // Sorted before the cut: which directories are kept does not depend on the order the
    // file system lists them in.
    out.sort();
    out.truncate(SUBDIRS);
    out
}

/// `to` as a path relative to the directory `from` (both absolute), for messages that do
/// not depend on where the project lies.
pub fn relative(from: &Path, to: &Path) -> PathBuf {
    let common = from
        .components()
        .zip(to.components())
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = PathBuf::new();
    for _ in from.components().skip(common) {
        out.push("..");
    }
    for c in to.components().skip(common) {
        out.push(c);
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn missing_headers_are_read_from_the_errors() {
        let errors = vec![
            (10, "'polybench.h' file not found".to_string()),
            (
                30,
                "'sys/x.h' file not found, did you mean 'sys/X.h'?".to_string(),
            ),
            (40, "'polybench.h' file not found".to_string()),
            (50, "'/abs/a.h' file not found".to_string()),
            (60, "'../up.h' file not found".to_string()),
            (70, "use of undeclared identifier 'A'".to_string()),
        ];
        assert_eq!(
            missing(&errors),
            vec![(10, "polybench.h".to_string()), (30, "sys/x.h".to_string())]
        );
    }

    #[test]
    fn headers_are_found_at_the_nearest_level_and_only_when_unique() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let w = |p: &str| {
            let p = root.join(p);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, "").unwrap();
        };
        w("suite/.git/HEAD");
        w("suite/group/kernels/k1/k1.c");
        w("suite/group/kernels/k2/k2.h");
        w("suite/utilities/bench.h");
        w("common/bench.h");
        w("suite/inc/sys/cfg.h");
        w("suite/a/twice.h");
        w("suite/b/twice.h");
        w("suite/group/near.h");
        w("suite/far/near.h");
        w("above/outside.h");
        let file = root.join("suite/group/kernels/k1/k1.c");
        let names: Vec<(usize, String)> = [
            "bench.h",
            "sys/cfg.h",
            "twice.h",
            "near.h",
            "k2.h",
            "none.h",
        ]
        .iter()
        .enumerate()
        .map(|(k, n)| (k, n.to_string()))
        .collect();
        let g = guess(&file, &names);
        let found: Vec<(&str, PathBuf)> = g
            .found
            .iter()
            .map(|(_, n, d)| (n.as_str(), d.strip_prefix(&root).unwrap().to_path_buf()))
            .collect();
        let p = PathBuf::from;
        assert_eq!(
            found,
            vec![
                ("bench.h", p("suite/utilities")),
                ("sys/cfg.h", p("suite/inc")),
                ("near.h", p("suite/group")),
                ("k2.h", p("suite/group/kernels/k2")),
            ]
        );
        assert_eq!(
            g.ambiguous,
            vec![(
                2,
                "twice.h".to_string(),
                vec![root.join("suite/a/twice.h"), root.join("suite/b/twice.h")]
            )]
        );
        let flags = g.flags(&["-DX".to_string()]).unwrap();
        assert_eq!(flags.len(), 9, "{flags:?}");
        let notes = g.notes(&file, true);
        assert_eq!(notes.len(), 5);
        assert!(
            notes[0].message.contains("-I ../../../utilities"),
            "{}",
            notes[0].message
        );
        assert!(notes[4].message.contains("../../../a and ../../../b"));
        // The repository's root bounds the search.
        let outside = guess(&file, &[(0, "outside.h".to_string())]);
        assert!(outside.found.is_empty() && !outside.is_empty());
        assert_eq!(
            relative(
                &root.join("suite/group/kernels/k1"),
                &root.join("suite/utilities")
            ),
            Path::new("../../../utilities")
        );
        assert_eq!(relative(&root, &root), Path::new("."));
    }

    #[test]
    fn headers_missing_from_headers_are_looked_for_near_them() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        for p in [".git/HEAD", "src/a.c", "include/grid.h", "config/sizes.h"] {
            let p = root.join(p);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, "").unwrap();
        }
        let header = root.join("include/grid.h").display().to_string();
        let missing = vec![
            (7, "'sizes.h' file not found".to_string(), header.clone()),
            (7, "'sizes.h' file not found".to_string(), header),
            // A system header's missing include is not looked for.
            (
                9,
                "'x.h' file not found".to_string(),
                "/usr/include/y.h".into(),
            ),
        ];
        let g = guess_in_headers(&root.join("src/a.c"), &missing);
        assert_eq!(g.looked, 1);
        assert_eq!(g.found, vec![(7, "sizes.h".into(), root.join("config"))]);
        let notes = g.notes(&root.join("src/a.c"), true);
        assert!(
            notes[0].message.starts_with(
                "'sizes.h' (included by '../include/grid.h') is not on the include path"
            ),
            "{}",
            notes[0].message
        );
    }

    #[test]
    fn one_reading_of_the_missing_header_error() {
        assert_eq!(missing_header("'a.h' file not found"), Some("a.h"));
        assert_eq!(
            missing_header("'sys/x.h' file not found, did you mean 'sys/X.h'?"),
            Some("sys/x.h")
        );
        assert_eq!(
            missing_header("'a.h' file not found with <angled> include; use \"quotes\" instead"),
            Some("a.h")
        );
        assert_eq!(missing_header("use of undeclared identifier 'file'"), None);
        assert_eq!(missing_header("module 'm' not found"), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_header_reached_twice_is_one_file_listed_once_in_order() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        for p in [".git/HEAD", "src/a.c", "b/x.h", "c/x.h"] {
            let p = root.join(p);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, "").unwrap();
        }
        // `a` and `d` are `c` under other names: listed before and after `b`.
        std::os::unix::fs::symlink(root.join("c"), root.join("a")).unwrap();
        std::os::unix::fs::symlink(root.join("c"), root.join("d")).unwrap();
        let g = guess(&root.join("src/a.c"), &[(1, "x.h".to_string())]);
        assert_eq!(
            g.ambiguous,
            vec![(
                1,
                "x.h".to_string(),
                vec![root.join("b/x.h"), root.join("c/x.h")]
            )]
        );
        // Headers missing from one header, in errors that name it apart, are looked into once.
        let h = |n: &str| root.join(n).display().to_string();
        let missing = vec![
            (7, "'y.h' file not found".to_string(), h("b/x.h")),
            (8, "'z.h' file not found".to_string(), h("c/x.h")),
            (9, "'y.h' file not found".to_string(), h("b/x.h")),
        ];
        let g = guess_in_headers(&root.join("src/a.c"), &missing);
        assert_eq!(g.looked, 2);
        assert_eq!(
            g.by,
            vec![
                ("y.h".to_string(), root.join("b/x.h")),
                ("z.h".to_string(), root.join("c/x.h"))
            ]
        );
    }
}
