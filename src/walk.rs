//! Which files to process: named files always; directories walked with `.gitignore`
//! honoured, hidden entries skipped, and only C/C++ sources taken.

use std::path::{Path, PathBuf};

pub const EXTENSIONS: [&str; 11] = [
    "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "C", "cu", "inl",
];

pub fn is_source(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.contains(&e))
}

/// Files under `paths`, sorted and without duplicates; errors are (path, message).
pub fn collect(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<(PathBuf, String)>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for p in paths {
        match std::fs::metadata(p) {
            Err(e) => errors.push((p.clone(), e.to_string())),
            Ok(m) if m.is_dir() => {
                let walker = ignore::WalkBuilder::new(p)
                    .hidden(true)
                    .git_ignore(true)
                    .require_git(false)
                    .build();
                for entry in walker {
                    match entry {
                        Ok(e)
                            if e.file_type().is_some_and(|t| t.is_file())
                                && is_source(e.path()) =>
                        {
                            files.push(e.into_path())
                        }
                        Ok(_) => {}
                        Err(e) => errors.push((p.clone(), e.to_string())),
                    }
                }
            }
            Ok(_) => files.push(p.clone()),
        }
    }
    files.sort();
    files.dedup();
    (files, errors)
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
