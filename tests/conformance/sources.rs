//! A test's source files (the test, the files it includes with `#include "…"`, its
//! `dg-additional-sources`) and their translations, laid out relative to the GCC tree so
//! that includes such as `../../../gcc/testsuite/…` still resolve in a copy.

use crate::common::cache::SourceFile;
use crate::common::oracle::{self, Translation};
use std::fs;
use std::path::{Path, PathBuf};

/// The files of one test; `units[0]` is the test itself.
pub struct Files {
    pub files: Vec<SourceFile>,
    /// Where each file is in the GCC tree.
    pub paths: Vec<PathBuf>,
    pub units: Vec<usize>,
}

/// Collect `main` and `extra` (paths in the tree) with everything they include locally.
pub fn collect(root: &Path, main: &Path, extra: &[PathBuf]) -> Result<Files, String> {
    let mut f = Files {
        files: Vec::new(),
        paths: Vec::new(),
        units: Vec::new(),
    };
    for p in std::iter::once(main).chain(extra.iter().map(PathBuf::as_path)) {
        let k = add(root, p, &mut f)?;
        f.units.push(k);
    }
    Ok(f)
}

fn add(root: &Path, path: &Path, f: &mut Files) -> Result<usize, String> {
    let path = fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if let Some(k) = f.paths.iter().position(|p| *p == path) {
        return Ok(k);
    }
    let rel = path
        .strip_prefix(root)
        .map_err(|_| format!("{} is outside the GCC tree", path.display()))?
        .to_string_lossy()
        .into_owned();
    let text = fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let text = String::from_utf8_lossy(&text).into_owned();
    let k = f.files.len();
    f.files.push(SourceFile {
        rel,
        text: text.clone(),
    });
    f.paths.push(path.clone());
    let dir = path.parent().unwrap().to_path_buf();
    for inc in local_includes(&text) {
        let p = dir.join(&inc);
        if p.is_file() {
            add(root, &p, f)?;
        }
    }
    Ok(k)
}

/// The names in `#include "…"` lines and Fortran `include '…'` lines.
fn local_includes(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let (l, quotes) = match l.strip_prefix('#') {
                Some(directive) => (directive.trim_start().strip_prefix("include")?, &['"'][..]),
                None => {
                    let word = l.get(..7)?;
                    if !word.eq_ignore_ascii_case("include") {
                        return None;
                    }
                    (&l[7..], &['"', '\''][..])
                }
            };
            let l = l.trim_start();
            let q = l.chars().next().filter(|c| quotes.contains(c))?;
            let l = &l[1..];
            Some(l[..l.find(q)?].to_string())
        })
        .collect()
}

/// Every file translated; the name given to the tool is the file's path in the tree (with
/// `.C` appended for a C file built as C++, so that the tool parses it as C++).
pub fn translate(f: &Files, cxx: bool) -> Vec<Translation> {
    f.paths
        .iter()
        .zip(&f.files)
        .map(|(p, file)| {
            let name = tool_name(p, cxx);
            oracle::translate(&file.text, &name, &["-q", "--no-config"])
        })
        .collect()
}

pub fn tool_name(p: &Path, cxx: bool) -> String {
    let name = p.to_string_lossy().into_owned();
    let c_like = p.extension().is_some_and(|e| e == "c" || e == "h");
    if cxx && c_like {
        format!("{name}.C")
    } else {
        name
    }
}

/// `f` with each file replaced by its translation.
pub fn translated(f: &Files, t: &[Translation]) -> Vec<SourceFile> {
    f.files
        .iter()
        .zip(t)
        .map(|(file, t)| SourceFile {
            rel: file.rel.clone(),
            text: t.text.clone(),
        })
        .collect()
}
