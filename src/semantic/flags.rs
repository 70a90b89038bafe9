//! Compiler flags from `compile_commands.json`: found with `-p DIR` or in the file's parent
//! directories (clang-tidy's convention), reduced to the flags that matter for parsing.

use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

#[derive(Deserialize)]
struct RawEntry {
    directory: String,
    file: String,
    #[serde(default)]
    arguments: Option<Vec<String>>,
    #[serde(default)]
    command: Option<String>,
}

#[derive(Debug)]
struct Entry {
    file: PathBuf,
    dir: PathBuf,
    flags: Vec<String>,
}

#[derive(Debug, Default)]
pub struct CompileDb {
    entries: Vec<Entry>,
}

/// `a/./b/../c` → `a/c`, without touching the file system.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn absolute(dir: &Path, p: &str) -> String {
    let p = Path::new(p);
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        dir.join(p)
    };
    normalize(&abs).to_string_lossy().into_owned()
}

/// Split a shell command line (quotes and backslashes as a POSIX shell does).
pub fn shell_split(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut has = false;
    let mut chars = s.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('\''), c) => cur.push(c),
            (Some(_), '\\') => match chars.next() {
                Some(n @ ('"' | '\\' | '$' | '`')) => cur.push(n),
                Some(n) => {
                    cur.push('\\');
                    cur.push(n);
                }
                None => {}
            },
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                has = true;
            }
            (None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                    has = true;
                }
            }
            (None, c) if c.is_whitespace() => {
                if has || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if has || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Keep `-I -isystem -iquote -D -U -include -std= -x`, with paths made absolute relative to
/// `dir`. Everything else (optimization, warnings, foreign compilers' flags, the source and
/// output files) is dropped, so no flag can break the parse.
pub fn filter(args: &[String], dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 1; // args[0] is the compiler
    while i < args.len() {
        let a = args[i].as_str();
        let next = args.get(i + 1).map(String::as_str);
        i += 1;
        let path_flag = ["-isystem", "-iquote", "-include", "-I"]
            .into_iter()
            .find(|f| a.starts_with(f));
        if let Some(f) = path_flag {
            let joined = &a[f.len()..];
            let value = if joined.is_empty() {
                i += 1;
                next
            } else if f == "-I" || !joined.starts_with('-') {
                Some(joined)
            } else {
                None
            };
            if let Some(v) = value {
                out.push(f.to_string());
                out.push(absolute(dir, v));
            }
            continue;
        }
        match a {
            "-D" | "-U" => {
                if let Some(v) = next {
                    out.push(format!("{a}{v}"));
                }
                i += 1;
            }
            "-x" => {
                if let Some(v) = next
                    && matches!(v, "c" | "c++" | "c-header" | "c++-header")
                {
                    out.push("-x".into());
                    out.push(v.into());
                }
                i += 1;
            }
            // Flags whose value is the next argument and must not be read as a flag.
            "-o" | "-Xclang" | "-Xpreprocessor" | "-Xlinker" | "-mllvm" | "-MF" | "-MT" | "-MQ"
            | "-Xcompiler" | "-ccbin" | "-arch" | "-target" | "-imacros" => i += 1,
            _ if (a.starts_with("-D") || a.starts_with("-U")) && a.len() > 2 => {
                out.push(a.to_string())
            }
            _ if a.starts_with("-std=") => out.push(a.to_string()),
            _ if a.starts_with("-x") && a.len() > 2 => {
                if matches!(&a[2..], "c" | "c++" | "c-header" | "c++-header") {
                    out.push("-x".into());
                    out.push(a[2..].to_string());
                }
            }
            _ => {}
        }
    }
    out
}

impl CompileDb {
    fn parse(text: &str) -> Option<CompileDb> {
        let raw: Vec<RawEntry> = serde_json::from_str(text).ok()?;
        let entries = raw
            .into_iter()
            .map(|e| {
                let dir = PathBuf::from(&e.directory);
                let args = match (e.arguments, e.command) {
                    (Some(a), _) => a,
                    (None, Some(c)) => shell_split(&c),
                    (None, None) => Vec::new(),
                };
                let file = PathBuf::from(absolute(&dir, &e.file));
                let file = file.canonicalize().unwrap_or(file);
                Entry {
                    flags: filter(&args, &dir),
                    file,
                    dir,
                }
            })
            .collect();
        Some(CompileDb { entries })
    }

    /// Flags of the entry for `file`, else of an entry in the same directory (as clang-tidy
    /// infers flags for headers).
    fn flags_for(&self, file: &Path) -> Option<&[String]> {
        let exact = self.entries.iter().find(|e| e.file == file);
        let near = || {
            self.entries
                .iter()
                .find(|e| e.file.parent() == file.parent())
                .or_else(|| {
                    self.entries
                        .iter()
                        .find(|e| file.parent().is_some_and(|p| p.starts_with(&e.dir)))
                })
        };
        exact.or_else(near).map(|e| e.flags.as_slice())
    }
}

type Cache = Mutex<HashMap<PathBuf, Option<Arc<CompileDb>>>>;

fn load(dir: &Path) -> Option<Arc<CompileDb>> {
    static CACHE: std::sync::OnceLock<Cache> = std::sync::OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(hit) = cache.lock().ok()?.get(dir) {
        return hit.clone();
    }
    let db = std::fs::read_to_string(dir.join("compile_commands.json"))
        .ok()
        .and_then(|t| CompileDb::parse(&t))
        .map(Arc::new);
    if let Ok(mut c) = cache.lock() {
        c.insert(dir.to_path_buf(), db.clone());
    }
    db
}

/// Parsing flags for `file`, and whether a compilation database was found.
pub fn flags_for(file: Option<&Path>, db_dir: Option<&Path>) -> (Vec<String>, bool) {
    let Some(file) = file else {
        return (Vec::new(), false);
    };
    let abs = if file.is_absolute() {
        file.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(file))
            .unwrap_or_else(|_| file.to_path_buf())
    };
    let abs = abs.canonicalize().unwrap_or_else(|_| normalize(&abs));
    let db = match db_dir {
        Some(d) => load(&d.canonicalize().unwrap_or_else(|_| d.to_path_buf())),
        None => abs.ancestors().skip(1).find_map(load),
    };
    match db {
        Some(db) => (
            db.flags_for(&abs)
                .map(<[String]>::to_vec)
                .unwrap_or_default(),
            true,
        ),
        None => (Vec::new(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn keeps_only_parsing_flags_with_absolute_paths() {
        let args = s(&[
            "nvc",
            "-acc",
            "-gpu=cc80",
            "-Iinc",
            "-I",
            "../x",
            "-isystem",
            "/sys",
            "-DN=4",
            "-D",
            "M",
            "-UX",
            "-std=c11",
            "-O3",
            "-o",
            "-Ifake.o",
            "-c",
            "a.c",
            "-include",
            "cfg.h",
            "-Xclang",
            "-I/bad",
            "-x",
            "cuda",
            "-minfo=accel",
        ]);
        assert_eq!(
            filter(&args, Path::new("/p/build")),
            s(&[
                "-I",
                "/p/build/inc",
                "-I",
                "/p/x",
                "-isystem",
                "/sys",
                "-DN=4",
                "-DM",
                "-UX",
                "-std=c11",
                "-include",
                "/p/build/cfg.h",
            ])
        );
    }

    #[test]
    fn splits_command_lines() {
        assert_eq!(
            shell_split(r#"cc -DMSG="a b" -I'x y' a\ b.c """#),
            s(&["cc", "-DMSG=a b", "-Ix y", "a b.c", ""])
        );
    }

    #[test]
    fn finds_entries_in_parent_directories() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.c"), "").unwrap();
        let db = format!(
            r#"[{{"directory": "{0}", "file": "src/a.c", "command": "gcc -Iinclude -DA=1 -fopenacc -c src/a.c"}}]"#,
            root.display()
        );
        std::fs::write(root.join("compile_commands.json"), db).unwrap();
        let (flags, found) = flags_for(Some(&root.join("src/a.c")), None);
        assert!(found);
        assert_eq!(
            flags,
            vec![
                "-I".to_string(),
                root.join("include").to_string_lossy().into_owned(),
                "-DA=1".into()
            ]
        );
        let (_, found) = flags_for(Some(&root.join("src/a.c")), Some(&root.join("src")));
        assert!(!found);
    }
}
