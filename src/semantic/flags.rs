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

/// Replace each `@file` argument by the arguments the file holds (shell-quoted, paths
/// relative to `dir`), recursively up to a depth that stops cycles.
fn expand_response_files(
    args: Vec<String>,
    dir: &Path,
    depth: usize,
) -> Result<Vec<String>, String> {
    let mut out = Vec::with_capacity(args.len());
    for a in args {
        let Some(name) = a.strip_prefix('@').filter(|n| !n.is_empty()) else {
            out.push(a);
            continue;
        };
        if depth == 0 {
            return Err(format!("response file @{name} nests too deeply"));
        }
        let path = Path::new(&absolute(dir, name)).to_path_buf();
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read response file {}: {e}", path.display()))?;
        let inner = shell_words::split(&text)
            .map_err(|e| format!("response file {}: {e}", path.display()))?;
        out.extend(expand_response_files(inner, dir, depth - 1)?);
    }
    Ok(out)
}

/// Keep `-I -isystem -iquote -idirafter -include -imacros -isysroot --sysroot -target -D -U
/// -std= -x -nostdinc`, with paths made absolute relative to `dir`. Everything else
/// (optimization, warnings, foreign compilers' flags, the source and output files) is
/// dropped, so no flag can break the parse.
pub fn filter(args: &[String], dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 1; // args[0] is the compiler
    while i < args.len() {
        let a = args[i].as_str();
        let next = args.get(i + 1).map(String::as_str);
        i += 1;
        if let Some(v) = a.strip_prefix("--sysroot=") {
            out.push(format!("--sysroot={}", absolute(dir, v)));
            continue;
        }
        if let Some(v) = a.strip_prefix("--target=") {
            out.push(format!("--target={v}"));
            continue;
        }
        let path_flag = [
            "-isystem",
            "-iquote",
            "-idirafter",
            "-isysroot",
            "-imacros",
            "-include",
            "--sysroot",
            "-I",
        ]
        .into_iter()
        .find(|f| a.starts_with(f) && (a.len() == f.len() || !f.starts_with("--")));
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
            "-target" => {
                if let Some(v) = next {
                    out.push("-target".into());
                    out.push(v.into());
                }
                i += 1;
            }
            "-nostdinc" | "-nostdinc++" | "-nostdlibinc" | "-nobuiltininc" => out.push(a.into()),
            "-o" | "-Xclang" | "-Xpreprocessor" | "-Xlinker" | "-mllvm" | "-MF" | "-MT" | "-MQ"
            | "-Xcompiler" | "-ccbin" | "-arch" => i += 1,
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
    /// Read a database; an error names what is wrong (JSON syntax with its line and column,
    /// a command line that does not split, a response file that cannot be read).
    fn parse(text: &str) -> Result<CompileDb, String> {
        let raw: Vec<RawEntry> = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let mut entries = Vec::with_capacity(raw.len());
        for (k, e) in raw.into_iter().enumerate() {
            let dir = PathBuf::from(&e.directory);
            let args = match (e.arguments, e.command) {
                (Some(a), _) => a,
                (None, Some(c)) => shell_words::split(&c)
                    .map_err(|err| format!("entry {}: command: {err}", k + 1))?,
                (None, None) => {
                    return Err(format!(
                        "entry {} has neither \"arguments\" nor \"command\"",
                        k + 1
                    ));
                }
            };
            let args = expand_response_files(args, &dir, 8)
                .map_err(|err| format!("entry {}: {err}", k + 1))?;
            let file = PathBuf::from(absolute(&dir, &e.file));
            let file = file.canonicalize().unwrap_or(file);
            entries.push(Entry {
                flags: filter(&args, &dir),
                file,
                dir,
            });
        }
        Ok(CompileDb { entries })
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

type Loaded = Result<Arc<CompileDb>, String>;
type Cache = Mutex<HashMap<PathBuf, Loaded>>;

/// `compile_commands.json` given as itself or as its directory (`-p`).
pub fn database_path(p: &Path) -> PathBuf {
    if p.is_dir() {
        p.join(DB_NAME)
    } else {
        p.to_path_buf()
    }
}

const DB_NAME: &str = "compile_commands.json";

/// The database at `path` (read once per process).
fn load(path: &Path) -> Loaded {
    static CACHE: std::sync::OnceLock<Cache> = std::sync::OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if let Some(hit) = cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
        return hit;
    }
    let db = std::fs::read_to_string(&key)
        .map_err(|e| e.to_string())
        .and_then(|t| CompileDb::parse(&t))
        .map(Arc::new);
    if let Ok(mut c) = cache.lock() {
        c.insert(key, db.clone());
    }
    db
}

fn absolute_file(file: &Path) -> PathBuf {
    let abs = if file.is_absolute() {
        file.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(file))
            .unwrap_or_else(|_| file.to_path_buf())
    };
    abs.canonicalize().unwrap_or_else(|_| normalize(&abs))
}

/// The database that applies to `file`: `db` (a file or directory) when given, else the
/// nearest `compile_commands.json` in its directory and their parents, or in their `build/`
/// subdirectories (where CMake and Meson write it), as clangd looks for it.
pub fn database_for(file: &Path, db: Option<&Path>) -> Option<PathBuf> {
    match db {
        Some(d) => Some(database_path(d)),
        None => absolute_file(file)
            .ancestors()
            .skip(1)
            .flat_map(|d| [d.join(DB_NAME), d.join("build").join(DB_NAME)])
            .find(|p| p.is_file()),
    }
}

/// Whether the database at `path` can be read: the reason when it cannot.
pub fn check(path: &Path) -> Result<(), String> {
    load(path).map(|_| ())
}

/// Parsing flags for `file`, and whether a compilation database was found.
pub fn flags_for(file: Option<&Path>, db: Option<&Path>) -> (Vec<String>, bool) {
    let Some(file) = file else {
        return (Vec::new(), false);
    };
    let abs = absolute_file(file);
    match database_for(&abs, db).map(|p| load(&p)) {
        Some(Ok(db)) => (
            db.flags_for(&abs)
                .map(<[String]>::to_vec)
                .unwrap_or_default(),
            true,
        ),
        _ => (Vec::new(), false),
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
    fn keeps_sysroot_target_and_include_order_flags() {
        let args = s(&[
            "clang",
            "-isysroot",
            "sdk",
            "--sysroot=/sr",
            "-target",
            "aarch64-linux-gnu",
            "--target=x86_64-linux-gnu",
            "-idirafter",
            "late",
            "-imacros",
            "m.h",
            "-nostdinc",
            "-isystemsys",
        ]);
        assert_eq!(
            filter(&args, Path::new("/p")),
            s(&[
                "-isysroot",
                "/p/sdk",
                "--sysroot=/sr",
                "-target",
                "aarch64-linux-gnu",
                "--target=x86_64-linux-gnu",
                "-idirafter",
                "/p/late",
                "-imacros",
                "/p/m.h",
                "-nostdinc",
                "-isystem",
                "/p/sys",
            ])
        );
    }

    #[test]
    fn response_files_and_malformed_databases() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::write(root.join("flags.rsp"), "-DA=1 '-DMSG=a b' @more.rsp").unwrap();
        std::fs::write(root.join("more.rsp"), "-Iinc").unwrap();
        let db = format!(
            r#"[{{"directory": "{0}", "file": "a.c", "command": "cc @flags.rsp -c a.c"}}]"#,
            root.display()
        );
        let parsed = CompileDb::parse(&db).unwrap();
        assert_eq!(
            parsed.entries[0].flags,
            vec![
                "-DA=1".to_string(),
                "-DMSG=a b".into(),
                "-I".into(),
                root.join("inc").to_string_lossy().into_owned()
            ]
        );
        std::fs::write(root.join("loop.rsp"), "@loop.rsp").unwrap();
        let bad = |t: &str| CompileDb::parse(t).err().unwrap_or_default();
        let looped = db.replace("@flags.rsp", "@loop.rsp");
        assert!(
            bad(&looped).contains("nests too deeply"),
            "{}",
            bad(&looped)
        );
        assert!(bad("[{\"directory\": \"/\", \"file\": 1}]").contains("line 1"));
        assert!(bad("[{\"directory\": \"/\", \"file\": \"a.c\"}]").contains("neither"));
        assert!(
            bad("[{\"directory\": \"/\", \"file\": \"a.c\", \"command\": \"cc 'x\"}]")
                .contains("entry 1")
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
        // -p takes the file itself too.
        let (f, found) = flags_for(
            Some(&root.join("src/a.c")),
            Some(&root.join("compile_commands.json")),
        );
        assert!(found && f.len() == 3);
    }

    #[test]
    fn finds_entries_in_build_subdirectories() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src/kernels")).unwrap();
        std::fs::create_dir_all(root.join("build")).unwrap();
        std::fs::write(root.join("src/kernels/a.c"), "").unwrap();
        let db = format!(
            r#"[{{"directory": "{0}/build", "file": "../src/kernels/a.c", "command": "gcc -DB=2 -c ../src/kernels/a.c"}}]"#,
            root.display()
        );
        std::fs::write(root.join("build/compile_commands.json"), db).unwrap();
        let (flags, found) = flags_for(Some(&root.join("src/kernels/a.c")), None);
        assert!(found);
        assert_eq!(flags, vec!["-DB=2".to_string()]);
    }
}
