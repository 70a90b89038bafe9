//! Which files to process and how they are read. Named files are always processed (a
//! symbolic link as its target); directories are walked with `.gitignore` and `.ignore`
//! honoured, hidden entries and what the configurations exclude skipped, and only C/C++
//! sources taken; a symbolic link to a file found in the walk is followed when its target
//! stays inside the walked directory and reported otherwise; a link to a directory is never
//! walked through, and reported unless the walk reaches that directory by its real path. A
//! file reached under several names is processed once. Only regular files are read: a FIFO
//! or a device is reported, never opened in a way that blocks.

use crate::rules::{RuleId, id};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

pub use crate::file::{Stamp, kind, open_regular, read, size_text};

/// The one list of source extensions: what a walk takes, what the pre-commit hooks
/// (`.pre-commit-hooks.yaml`) pass and what the README lists (a test compares them).
pub const EXTENSIONS: [&str; 12] = [
    "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "C", "cu", "cuh", "inl",
];

fn extension_in(path: &Path, list: &[&str]) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| list.contains(&e))
}

pub fn is_source(path: &Path) -> bool {
    extension_in(path, &EXTENSIONS)
}

/// A Fortran source (`crate::fortran::form::EXTENSIONS`): walked and read with the Fortran
/// front end (never as C).
pub fn is_fortran(path: &Path) -> bool {
    crate::fortran::form::kind_of(path).is_some()
}

/// A file to process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    /// The name it was found under (shown in messages and diffs).
    pub name: PathBuf,
    /// The regular file itself: `name` with symbolic links resolved.
    pub target: PathBuf,
}

/// A path that is not processed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub path: PathBuf,
    /// `io-error` (named on the command line, or unreadable) or `skipped-path` (found in a walk).
    pub rule: RuleId,
    pub message: String,
}

/// What a walk found: files in order of first appearance, one per file (device and inode).
#[derive(Debug, Default)]
pub struct Walk {
    pub files: Vec<Input>,
    pub skipped: Vec<Skipped>,
    seen: std::collections::HashSet<(u64, u64)>,
}

impl Walk {
    fn add(&mut self, name: PathBuf, target: PathBuf, meta: &std::fs::Metadata) {
        if self.seen.insert((meta.dev(), meta.ino())) {
            self.files.push(Input { name, target });
        }
    }

    fn skip(&mut self, path: &Path, rule: RuleId, message: String) {
        self.skipped.push(Skipped {
            path: path.to_path_buf(),
            rule,
            message,
        });
    }
}

/// Which paths a walk leaves out (the configurations' `exclude`): asked with a path's
/// absolute real path and whether it is a directory.
pub type Exclude = std::sync::Arc<dyn Fn(&Path, bool) -> bool + Send + Sync>;

/// Files under `paths`.
#[cfg(test)]
fn collect(paths: &[PathBuf]) -> Walk {
    collect_excluding(paths, None, false)
}

/// Files under `paths`, without what `exclude` matches: in a walk always, and among the
/// paths named only when `force` (`--force-exclude`), as ruff has it.
pub fn collect_excluding(paths: &[PathBuf], exclude: Option<&Exclude>, force: bool) -> Walk {
    let mut w = Walk::default();
    for p in paths {
        let meta = std::fs::metadata(p);
        if let (true, Some(ex), Ok(m)) = (force, exclude, &meta)
            && std::fs::canonicalize(p).is_ok_and(|real| ex(&real, m.is_dir()))
        {
            continue;
        }
        match meta {
            Err(e) => w.skip(p, id::IO_ERROR, e.to_string()),
            Ok(m) if m.is_dir() => walk_dir(&mut w, p, exclude),
            Ok(m) if m.is_file() => match std::fs::canonicalize(p) {
                Ok(target) => w.add(p.clone(), target, &m),
                Err(e) => w.skip(p, id::IO_ERROR, e.to_string()),
            },
            Ok(m) => w.skip(
                p,
                id::IO_ERROR,
                format!(
                    "{}, not a regular file; it is skipped",
                    kind(&m.file_type())
                ),
            ),
        }
    }
    w
}

fn walk_dir(w: &mut Walk, root: &Path, exclude: Option<&Exclude>) {
    let real_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let mut ignores = crate::ignores::Ignores::default();
    // The directory a problem with an ignore file stops walking: the file's own directory,
    // or the whole root when it is above it.
    let unreadable = |w: &mut Walk, u: crate::ignores::Unreadable, dir: &Path| {
        let why = format!(
            "{}; the directory {} is not walked (which of its files are ignored is unknown)",
            u.why,
            display(dir)
        );
        w.skip(&u.file, id::IO_ERROR, why);
    };
    if let Err(u) = ignores.enter(&real_root) {
        return unreadable(w, u, root);
    }
    let found_before = w.files.len();
    // Sources and directories the ignore files left out: named when they were all there was.
    let mut ignored = 0usize;
    let mut walker = walkdir::WalkDir::new(root).sort_by_file_name().into_iter();
    // Links come after the regular files, so that a file is named by its real path.
    let mut links = Vec::new();
    // The directories walked, relative to the root: real paths, since links are not walked.
    let mut walked = std::collections::HashSet::new();
    while let Some(entry) = walker.next() {
        let e = match entry {
            Ok(e) => e,
            Err(e) => {
                // Blamed on what cannot be read, not on the root.
                let at = e.path().unwrap_or(root).to_path_buf();
                let what = e
                    .io_error()
                    .map_or_else(|| e.to_string(), |io| io.to_string());
                let why = if e.path().is_some_and(|p| p.is_dir()) {
                    format!("cannot read directory: {what}; it is skipped")
                } else {
                    format!("{what}; it is skipped")
                };
                w.skip(&at, id::IO_ERROR, why);
                continue;
            }
        };
        let t = e.file_type();
        if e.depth() == 0 {
            // The root itself, even when it is named by a link.
            walked.insert(PathBuf::new());
            continue;
        }
        let rel = e.path().strip_prefix(root).unwrap_or(e.path());
        let abs = real_root.join(rel);
        let hidden = e.file_name().as_encoded_bytes().starts_with(b".");
        // An excluded directory is not entered.
        let by_ignores = ignores.ignored(&abs, t.is_dir(), hidden);
        if by_ignores || exclude.is_some_and(|ex| ex(&abs, t.is_dir())) {
            if by_ignores && !hidden && (t.is_dir() || is_source(e.path()) || is_fortran(e.path()))
            {
                ignored += 1;
            }
            if t.is_dir() {
                walker.skip_current_dir();
            }
            continue;
        }
        if t.is_symlink() {
            // Any name: a link to a directory is not walked through.
            links.push(e.into_path());
            continue;
        }
        if t.is_dir() {
            if let Err(u) = ignores.enter(&abs) {
                walker.skip_current_dir();
                unreadable(w, u, e.path());
                continue;
            }
            walked.insert(rel.to_path_buf());
            continue;
        }
        if !is_source(e.path()) && !is_fortran(e.path()) {
            continue;
        }
        if t.is_file() {
            match e.metadata() {
                Ok(m) => w.add(e.path().to_path_buf(), e.path().to_path_buf(), &m),
                Err(err) => w.skip(e.path(), id::IO_ERROR, err.to_string()),
            }
        } else {
            let why = format!("{}, not a regular file; it is skipped", kind(&t));
            w.skip(e.path(), id::SKIPPED_PATH, why);
        }
    }
    for link in links {
        follow_link(w, &link, &real_root, &walked);
    }
    // A directory named and found empty because an ignore file (often one above it, such
    // as a cache's `*`) leaves out everything in it: said, not a silent "0 files".
    if w.files.len() == found_before && ignored > 0 {
        w.skip(
            root,
            id::SKIPPED_PATH,
            format!(
                "no file in this directory is processed: the ignore files (.gitignore, .ignore, git's excludes) in it or above it leave out all of it ({ignored} sources and directories); name the files to process them"
            ),
        );
    }
}

/// A symbolic link met in a walk: its target when it is a source file inside the tree. A
/// directory inside the tree is walked under its own name (`walked`, relative to the root);
/// one outside, or one the walk skips (hidden, ignored), is reported, as is a link that
/// leads nowhere unless its name says it is not a source (`README.md`).
fn follow_link(
    w: &mut Walk,
    link: &Path,
    real_root: &Path,
    walked: &std::collections::HashSet<PathBuf>,
) {
    let source = is_source(link) || is_fortran(link);
    let target = match std::fs::canonicalize(link) {
        Ok(t) => t,
        Err(e) => {
            if source || link.extension().is_none() {
                let why = format!("symbolic link that cannot be followed ({e}); it is skipped");
                w.skip(link, id::SKIPPED_PATH, why);
            }
            return;
        }
    };
    let meta = std::fs::metadata(&target);
    let is_dir = meta.as_ref().is_ok_and(|m| m.is_dir());
    if !source && !is_dir {
        return;
    }
    if !target.starts_with(real_root) {
        let why = if is_dir {
            format!(
                "symbolic link to the directory {}, outside the walked directory; its files are skipped (name it to process them)",
                target.display()
            )
        } else {
            format!(
                "symbolic link to {}, outside the walked directory; it is skipped (name it to process it)",
                target.display()
            )
        };
        return w.skip(link, id::SKIPPED_PATH, why);
    }
    match meta {
        Ok(m) if m.is_file() => w.add(link.to_path_buf(), target, &m),
        // A directory inside the tree is walked under its own name.
        Ok(m) if m.is_dir() => {
            let rel = target.strip_prefix(real_root).unwrap_or(&target);
            if !walked.contains(rel) {
                let why = format!(
                    "symbolic link to the directory {}, which the walk skips (hidden or ignored); its files are skipped (name it to process them)",
                    target.display()
                );
                w.skip(link, id::SKIPPED_PATH, why)
            }
        }
        Ok(m) => {
            let why = format!("symbolic link to {}; it is skipped", kind(&m.file_type()));
            w.skip(link, id::SKIPPED_PATH, why)
        }
        Err(e) => w.skip(link, id::SKIPPED_PATH, format!("{e}; it is skipped")),
    }
}

/// How a path is shown: relative to the current directory when it is below it.
pub fn display(path: &Path) -> String {
    let shown = std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(&cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf());
    let s = shown.to_string_lossy().into_owned();
    s.strip_prefix("./").map(str::to_string).unwrap_or(s)
}

/// Where a file is, for the names `--diff` and `--check` give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// Relative to the current directory, without `.` components: `a/b.c`, or `../x/b.c`
    /// when the file is outside it.
    pub relative: Vec<u8>,
    /// The absolute path, without its leading `/`.
    pub absolute: Vec<u8>,
    /// Whether the file is below the current directory.
    pub inside: bool,
}

/// Where `path` is relative to the current directory. A name without `..` is taken as
/// written; one with `..` (or an absolute one) by the real path of its directory, so that
/// `../cwd/a.c` is `a.c`, `sub/../a.c` is `a.c`, and `../a.c` stays outside.
pub fn place(path: &Path) -> Place {
    use std::os::unix::ffi::OsStrExt;
    use std::path::Component;
    let join = |parts: &[&[u8]]| parts.join(&b'/');
    let cwd = std::env::current_dir().ok();
    let lexical = path.is_relative() && !path.components().any(|c| c == Component::ParentDir);
    // The file's absolute path: its directory resolved (when it can be), its name as given.
    let absolute = match (lexical, &cwd) {
        (true, Some(cwd)) => cwd.join(path),
        _ => {
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
            let real = dir.map_or_else(|| cwd.clone(), |d| std::fs::canonicalize(d).ok());
            match (real, path.file_name()) {
                (Some(r), Some(n)) => r.join(n),
                _ => cwd
                    .as_ref()
                    .map_or_else(|| path.to_path_buf(), |c| c.join(path)),
            }
        }
    };
    let parts = |p: &Path| -> Vec<Vec<u8>> {
        let mut out: Vec<Vec<u8>> = Vec::new();
        for c in p.components() {
            match c {
                Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
                // Only where the directory could not be resolved.
                Component::ParentDir if out.last().is_some_and(|l| l != b"..") => {
                    out.pop();
                }
                other => out.push(other.as_os_str().as_bytes().to_vec()),
            }
        }
        out
    };
    let abs = parts(&absolute);
    let abs_refs: Vec<&[u8]> = abs.iter().map(Vec::as_slice).collect();
    let (relative, inside) = if lexical {
        let rel = parts(path);
        let refs: Vec<&[u8]> = rel.iter().map(Vec::as_slice).collect();
        (join(&refs), true)
    } else {
        let here = cwd.as_deref().map(parts).unwrap_or_default();
        let common = here.iter().zip(&abs).take_while(|(a, b)| a == b).count();
        let mut rel: Vec<&[u8]> = vec![b".."; here.len() - common];
        rel.extend(abs_refs[common..].iter().copied());
        (join(&rel), common == here.len())
    };
    Place {
        relative,
        absolute: join(&abs_refs),
        inside,
    }
}

/// The path as a diff names it, without `a/`: relative to the current directory, or, when
/// `absolute` (some file of the diff is outside the current directory), the absolute path
/// without its leading `/`, as `git diff --no-index` names an absolute path: `git -C /
/// apply` applies it.
pub fn diff_name(path: &Path, absolute: bool) -> Vec<u8> {
    let p = place(path);
    if absolute { p.absolute } else { p.relative }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_and_readme_list_the_walks_extensions() {
        let hooks = include_str!("../.pre-commit-hooks.yaml");
        let all: Vec<&str> = EXTENSIONS
            .iter()
            .copied()
            .chain(crate::fortran::form::EXTENSIONS.iter().map(|(e, _)| *e))
            .collect();
        let files = format!("files: '\\.({})$'", all.join("|"));
        let hook_ids = hooks.lines().filter(|l| l.starts_with("- id:")).count();
        assert_eq!(hook_ids, 2, "{hooks}");
        assert_eq!(
            hooks.matches(files.as_str()).count(),
            hook_ids,
            "{files}\n{hooks}"
        );
        assert_eq!(hooks.matches("require_serial: true").count(), hook_ids);
        let readme = include_str!("../README.md");
        let listed: Vec<String> = EXTENSIONS.iter().map(|e| format!(".{e}")).collect();
        let listed = format!("`{}`", listed.join(" "));
        assert!(readme.contains(&listed), "README should list {listed}");
        // Fortran names are not C sources, and no name is both.
        assert!(
            EXTENSIONS
                .iter()
                .all(|e| !is_fortran(Path::new(&format!("a.{e}"))))
        );
        assert!(is_fortran(Path::new("a.F90")) && !is_source(Path::new("a.F90")));
        assert!(is_source(Path::new("k.cuh")));
    }

    #[test]
    fn same_file_under_several_names_is_taken_once() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.c"), "x").unwrap();
        let a = d.path().join("a.c");
        let dot_a = d.path().join(".").join("a.c");
        let w = collect(&[a.clone(), dot_a, d.path().to_path_buf()]);
        assert_eq!(w.files.len(), 1);
        assert_eq!(w.files[0].name, a);
    }

    /// A named directory whose sources an ignore file above it leaves out (a cache's `*`)
    /// is reported, not found silently empty; one with a source kept is not.
    #[test]
    fn a_directory_left_empty_by_ignore_files_is_reported() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(".gitignore"), "*\n").unwrap();
        let sub = d.path().join("tests");
        std::fs::create_dir_all(sub.join("deeper")).unwrap();
        std::fs::write(sub.join("a.c"), "int a;\n").unwrap();
        std::fs::write(sub.join("deeper/b.f90"), "end\n").unwrap();
        let w = collect(std::slice::from_ref(&sub));
        assert!(w.files.is_empty());
        assert_eq!(w.skipped.len(), 1, "{:?}", w.skipped);
        assert_eq!(w.skipped[0].path, sub);
        assert_eq!(w.skipped[0].rule, id::SKIPPED_PATH);
        assert!(
            w.skipped[0]
                .message
                .contains("leave out all of it (2 sources and directories)")
        );
        std::fs::write(d.path().join(".gitignore"), "a.c\n").unwrap();
        let w = collect(std::slice::from_ref(&sub));
        assert_eq!(w.files.len(), 1);
        assert!(w.skipped.is_empty(), "{:?}", w.skipped);
    }

    #[test]
    fn fifo_is_reported_not_opened() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f.c");
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let w = collect(std::slice::from_ref(&p));
        assert!(w.files.is_empty());
        assert!(
            w.skipped[0].message.starts_with("a FIFO"),
            "{:?}",
            w.skipped
        );
        let e = read(&p, crate::file::SETTINGS_LIMIT).unwrap_err();
        assert!(e.to_string().contains("a FIFO"), "{e}");
        let w = collect(&[d.path().to_path_buf()]);
        assert_eq!(w.skipped[0].rule, id::SKIPPED_PATH);
    }

    #[test]
    fn links_inside_the_tree_are_followed_others_reported() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("o.c"), "o").unwrap();
        let d = tempfile::tempdir().unwrap();
        let tree = d.path().join("tree");
        std::fs::create_dir_all(tree.join("sub")).unwrap();
        std::fs::write(tree.join("sub/real.c"), "r").unwrap();
        std::os::unix::fs::symlink("sub/real.c", tree.join("in.c")).unwrap();
        std::os::unix::fs::symlink("sub/missing.c", tree.join("dangling.c")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("o.c"), tree.join("out.c")).unwrap();
        std::fs::write(tree.join("x.c"), "x").unwrap();
        std::os::unix::fs::symlink("../x.c", tree.join("sub/again.c")).unwrap();
        std::fs::create_dir_all(tree.join(".hidden")).unwrap();
        std::fs::write(tree.join(".hidden/h.c"), "h").unwrap();
        std::os::unix::fs::symlink(".hidden/h.c", tree.join("shown.c")).unwrap();
        // Directory links: outside (reported), inside (its files by their real path),
        // to a directory the walk skips (reported), dangling (reported unless the name is
        // not a source's).
        std::fs::create_dir(outside.path().join("r")).unwrap();
        std::fs::write(outside.path().join("r/x.c"), "o").unwrap();
        std::os::unix::fs::symlink(outside.path().join("r"), tree.join("outdir")).unwrap();
        std::os::unix::fs::symlink("sub", tree.join("subdir")).unwrap();
        std::os::unix::fs::symlink(".hidden", tree.join("hiddendir")).unwrap();
        std::os::unix::fs::symlink("nowhere", tree.join("gone")).unwrap();
        std::os::unix::fs::symlink("nowhere.md", tree.join("notes.md")).unwrap();
        std::os::unix::fs::symlink(".", tree.join("sub/self")).unwrap();
        let w = collect(std::slice::from_ref(&tree));
        let names: Vec<_> = w
            .files
            .iter()
            .map(|f| f.name.strip_prefix(&tree).unwrap().to_path_buf())
            .collect();
        // Each file once, under its real name.
        assert_eq!(
            names,
            [
                Path::new("sub/real.c"),
                Path::new("x.c"),
                Path::new("shown.c")
            ],
            "{w:?}"
        );
        assert_eq!(
            w.files[2].target,
            tree.join(".hidden/h.c").canonicalize().unwrap()
        );
        let skipped: Vec<_> = w
            .skipped
            .iter()
            .map(|s| s.path.file_name().unwrap())
            .collect();
        assert_eq!(
            skipped,
            ["dangling.c", "gone", "hiddendir", "out.c", "outdir"]
        );
        let why = |i: usize| w.skipped[i].message.as_str();
        assert!(why(1).starts_with("symbolic link that cannot be followed"));
        assert!(why(2).contains("which the walk skips (hidden or ignored)"));
        assert!(why(3).contains("outside the walked directory"));
        assert!(
            why(4).starts_with("symbolic link to the directory ")
                && why(4).contains(", outside the walked directory; its files are skipped"),
            "{}",
            why(4)
        );
        assert!(w.skipped.iter().all(|s| s.rule == id::SKIPPED_PATH));
        // Named on the command line, a directory link is walked.
        let w = collect(&[tree.join("outdir")]);
        assert_eq!(w.files.len(), 1, "{w:?}");
        assert!(w.skipped.is_empty(), "{w:?}");
        // Named on the command line, a link is processed as its target.
        let w = collect(&[tree.join("out.c")]);
        assert_eq!(
            w.files[0].target,
            outside.path().join("o.c").canonicalize().unwrap()
        );
    }

    #[test]
    fn diff_names_drop_dot_components() {
        assert_eq!(diff_name(Path::new("./a/./b.c"), false), b"a/b.c");
        assert_eq!(diff_name(Path::new("/abs/b.c"), true), b"abs/b.c");
        let cwd = std::env::current_dir().unwrap();
        let here = cwd.file_name().unwrap().to_str().unwrap();
        let p = place(Path::new(&format!("../{here}/src/./x.c")));
        assert_eq!((p.relative.as_slice(), p.inside), (&b"src/x.c"[..], true));
        let p = place(Path::new("src/../Cargo.toml"));
        assert_eq!(
            (p.relative.as_slice(), p.inside),
            (&b"Cargo.toml"[..], true)
        );
        let p = place(Path::new("../x.c"));
        assert_eq!((p.relative.as_slice(), p.inside), (&b"../x.c"[..], false));
        let parent = cwd.parent().unwrap().join("x.c");
        let abs = parent.to_str().unwrap().trim_start_matches('/').as_bytes();
        assert_eq!(p.absolute, abs);
        assert_eq!(place(&parent), p);
    }
}
