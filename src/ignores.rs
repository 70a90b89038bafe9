//! The ignore files a directory walk honours (`.ignore`, `.gitignore`, `.git/info/exclude`,
//! and the user's global excludes), with the precedence the `ignore` crate gives them, but
//! read as every file a repository gives: only regular files of bounded size, opened without
//! blocking (a `.gitignore` that is a FIFO or a link to `/dev/zero` must not hang the run).
//! A directory whose ignore files cannot be read is not walked: which of its files are
//! ignored is unknown, and rewriting an ignored (vendored, generated) file is worse than
//! reporting the directory.

use crate::file::{SETTINGS_LIMIT, read};
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The rules one directory adds.
#[derive(Default)]
struct Rules {
    ignore: Option<Gitignore>,
    git: Option<Gitignore>,
    exclude: Option<Gitignore>,
}

/// An ignore file that cannot be read, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    pub file: PathBuf,
    pub why: String,
}

/// The rules of the directories met so far, by absolute path.
pub struct Ignores {
    dirs: HashMap<PathBuf, Arc<Rules>>,
    global: Gitignore,
}

impl Default for Ignores {
    fn default() -> Self {
        Ignores {
            dirs: HashMap::new(),
            global: Gitignore::global().0,
        }
    }
}

impl Ignores {
    /// Read the rules of `dir` and of every directory above it (once each).
    pub fn enter(&mut self, dir: &Path) -> Result<(), Unreadable> {
        for d in dir.ancestors().collect::<Vec<_>>().into_iter().rev() {
            if !self.dirs.contains_key(d) {
                let rules = read_rules(d)?;
                self.dirs.insert(d.to_path_buf(), Arc::new(rules));
            }
        }
        Ok(())
    }

    /// Whether the entry at the absolute `path` is ignored (`hidden`: its name starts with
    /// a dot, which skips it unless a rule lists it as not ignored). Its directories must
    /// have been entered.
    pub fn ignored(&self, path: &Path, is_dir: bool, hidden: bool) -> bool {
        let (mut ignore, mut git, mut exclude) = (Match::None, Match::None, Match::None);
        for d in path.ancestors().skip(1) {
            let Some(r) = self.dirs.get(d) else { continue };
            let test = |m: &mut Match<()>, g: &Option<Gitignore>| {
                if m.is_none()
                    && let Some(g) = g
                {
                    *m = g.matched(path, is_dir).map(|_| ());
                }
            };
            test(&mut ignore, &r.ignore);
            test(&mut git, &r.git);
            test(&mut exclude, &r.exclude);
        }
        let m = ignore
            .or(git)
            .or(exclude)
            .or(self.global.matched(path, is_dir).map(|_| ()));
        match m {
            Match::Ignore(_) => true,
            Match::Whitelist(_) => false,
            Match::None => hidden,
        }
    }
}

/// The rules `dir` adds: its `.ignore` and `.gitignore`, and the `info/exclude` of the
/// repository whose `.git` it holds.
fn read_rules(dir: &Path) -> Result<Rules, Unreadable> {
    let mut r = Rules {
        ignore: file(dir, &dir.join(".ignore"))?,
        git: file(dir, &dir.join(".gitignore"))?,
        exclude: None,
    };
    let dot_git = dir.join(".git");
    match std::fs::metadata(&dot_git) {
        Ok(m) if m.is_dir() => r.exclude = file(dir, &dot_git.join("info/exclude"))?,
        // A worktree: `gitdir: PATH`, whose `commondir` names the repository.
        Ok(_) => {
            if let Some(common) = common_dir(&dot_git)? {
                r.exclude = file(dir, &common.join("info/exclude"))?;
            }
        }
        Err(_) => {}
    }
    Ok(r)
}

/// The repository directory a `.git` file leads to (its `gitdir`, then that directory's
/// `commondir`), as the `ignore` crate finds it; None when it leads nowhere.
fn common_dir(dot_git: &Path) -> Result<Option<PathBuf>, Unreadable> {
    let Some(first) = first_line(dot_git)? else {
        return Ok(None);
    };
    let Some(git_dir) = first.strip_prefix("gitdir: ").map(PathBuf::from) else {
        return Ok(None);
    };
    let Some(common) = first_line(&git_dir.join("commondir"))? else {
        return Ok(None);
    };
    Ok(Some(if common.starts_with('.') {
        git_dir.join(common)
    } else {
        PathBuf::from(common)
    }))
}

/// A file's bytes; None when there is no such file.
fn bytes(path: &Path) -> Result<Option<Vec<u8>>, Unreadable> {
    match read(path, SETTINGS_LIMIT) {
        Ok((b, _)) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        // A directory that cannot be searched: the walk reports the directory itself.
        Err(e)
            if e.kind() == std::io::ErrorKind::PermissionDenied
                && std::fs::symlink_metadata(path).is_err() =>
        {
            Ok(None)
        }
        Err(e) => Err(Unreadable {
            file: path.to_path_buf(),
            why: e.to_string(),
        }),
    }
}

fn first_line(path: &Path) -> Result<Option<String>, Unreadable> {
    Ok(bytes(path)?.map(|b| {
        let text = String::from_utf8_lossy(&b);
        text.lines().next().unwrap_or("").to_string()
    }))
}

/// The rules of the ignore file `path`, matched relative to `dir`; None when there is none.
fn file(dir: &Path, path: &Path) -> Result<Option<Gitignore>, Unreadable> {
    let Some(b) = bytes(path)? else {
        return Ok(None);
    };
    let mut builder = GitignoreBuilder::new(dir);
    let text = String::from_utf8_lossy(&b);
    // A line that is not a valid glob is passed over, as git does.
    for (k, line) in text.lines().enumerate() {
        let line = if k == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            line
        };
        let _ = builder.add_line(Some(path.to_path_buf()), line);
    }
    Ok(builder.build().ok().filter(|g| !g.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_and_whitelists() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("sub/deep")).unwrap();
        std::fs::write(root.join(".gitignore"), "*.gen.c\nbuild/\n!keep.gen.c\n").unwrap();
        std::fs::write(root.join("sub/.gitignore"), "!x.gen.c\n").unwrap();
        // `.ignore` wins over `.gitignore` wherever it is.
        std::fs::write(root.join(".ignore"), "sub/deep/y.c\n").unwrap();
        std::fs::write(root.join("sub/deep/.gitignore"), "!y.c\n").unwrap();
        let mut ig = Ignores::default();
        ig.enter(&root.join("sub/deep")).unwrap();
        ig.enter(&root.join("build")).unwrap();
        let at = |p: &str| root.join(p);
        assert!(ig.ignored(&at("a.gen.c"), false, false));
        assert!(!ig.ignored(&at("keep.gen.c"), false, false));
        assert!(ig.ignored(&at("sub/a.gen.c"), false, false));
        assert!(!ig.ignored(&at("sub/x.gen.c"), false, false));
        assert!(ig.ignored(&at("build"), true, false));
        assert!(!ig.ignored(&at("build"), false, false));
        assert!(ig.ignored(&at("sub/deep/y.c"), false, false));
        assert!(ig.ignored(&at(".hidden.c"), false, true));
        std::fs::write(root.join("sub/.ignore"), "!.shown.c\n").unwrap();
        let mut ig = Ignores::default();
        ig.enter(&root.join("sub")).unwrap();
        assert!(!ig.ignored(&at("sub/.shown.c"), false, true));
    }

    #[test]
    fn ignore_files_that_are_not_regular_are_refused_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let fifo = std::ffi::CString::new(root.join(".gitignore").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let e = Ignores::default().enter(&root).unwrap_err();
        assert_eq!(e.file, root.join(".gitignore"));
        assert!(e.why.contains("a FIFO, not a regular file"), "{}", e.why);
        std::fs::remove_file(root.join(".gitignore")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join(".ignore")).unwrap();
        let e = Ignores::default().enter(&root).unwrap_err();
        assert!(e.why.contains("a character device"), "{}", e.why);
        // A worktree's `.git` file leading to a FIFO.
        std::fs::remove_file(root.join(".ignore")).unwrap();
        std::fs::create_dir_all(root.join("repo/info")).unwrap();
        std::fs::write(root.join("repo/commondir"), "../repo\n").unwrap();
        let exclude = root.join("repo/info/exclude");
        let c = std::ffi::CString::new(exclude.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        std::fs::write(
            root.join(".git"),
            format!("gitdir: {}\n", root.join("repo").display()),
        )
        .unwrap();
        let e = Ignores::default().enter(&root).unwrap_err();
        assert!(e.file.ends_with("info/exclude"), "{e:?}");
    }
}
