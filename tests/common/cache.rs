//! Content-addressed build cache for the compiler-backed tests: a program compiled once is
//! reused by every case (and every later run) that compiles the same sources with the same
//! compiler and flags.

use std::collections::HashMap;
use std::fs;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};

/// A 128-bit hex digest of `parts` (stable for one toolchain, which is all a cache in
/// `target/` needs).
pub fn digest(parts: &[&[u8]]) -> String {
    let (mut a, mut b) = (DefaultHasher::new(), DefaultHasher::new());
    0x5au8.hash(&mut b);
    for p in parts {
        p.hash(&mut a);
        p.hash(&mut b);
    }
    format!("{:016x}{:016x}", a.finish(), b.finish())
}

/// `target/acc2omp-test-cache/<sub>`, created on demand.
pub fn dir(sub: &str) -> PathBuf {
    let exe = Path::new(env!("CARGO_BIN_EXE_acc2omp"));
    // target/<profile>/acc2omp
    let target = exe
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("."));
    let d = target.join("acc2omp-test-cache").join(sub);
    fs::create_dir_all(&d).unwrap();
    d
}

/// Each value computed once per process, whichever thread asks first; the others wait.
pub struct Memo<K, V>(Mutex<HashMap<K, Arc<OnceLock<V>>>>);

impl<K: std::hash::Hash + Eq + Clone, V: Clone> Memo<K, V> {
    pub fn new() -> Self {
        Memo(Mutex::new(HashMap::new()))
    }

    pub fn get(&self, key: &K, make: impl FnOnce() -> V) -> V {
        let cell = self
            .0
            .lock()
            .unwrap()
            .entry(key.clone())
            .or_default()
            .clone();
        cell.get_or_init(make).clone()
    }
}

impl<K: std::hash::Hash + Eq + Clone, V: Clone> Default for Memo<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

/// The first line of `compiler --version`, part of every key.
fn compiler_id(compiler: &str) -> String {
    static IDS: OnceLock<Memo<String, String>> = OnceLock::new();
    IDS.get_or_init(Memo::new).get(&compiler.to_string(), || {
        Command::new(compiler)
            .arg("--version")
            .output()
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
            .unwrap_or_default()
    })
}

/// One source file of a build, at `rel` (a relative path: files include each other by it).
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub rel: String,
    pub text: String,
}

/// Compile and link `units` (indices into `files`, all of which are written out so that
/// `#include "…"` finds them) with `compiler flags … -lm`; returns the program, or the
/// compiler's messages. Results, failures included, are cached by content.
pub fn compile(
    compiler: &str,
    flags: &[String],
    files: &[SourceFile],
    units: &[usize],
) -> Result<PathBuf, String> {
    cached(compiler, flags, files, units, true)
}

/// Compile `files[unit]` without producing a program (`flags` say how far: `-fsyntax-only`,
/// `-S`); returns the compiler's messages on failure. Cached like [`compile`].
pub fn check(
    compiler: &str,
    flags: &[String],
    files: &[SourceFile],
    unit: usize,
) -> Result<(), String> {
    cached(compiler, flags, files, &[unit], false).map(|_| ())
}

/// [`check`] for several units compiled in one command (Fortran modules before their users).
pub fn check_units(
    compiler: &str,
    flags: &[String],
    files: &[SourceFile],
    units: &[usize],
) -> Result<(), String> {
    cached(compiler, flags, files, units, false).map(|_| ())
}

fn cached(
    compiler: &str,
    flags: &[String],
    files: &[SourceFile],
    units: &[usize],
    link: bool,
) -> Result<PathBuf, String> {
    let id = compiler_id(compiler);
    let mut parts: Vec<&[u8]> = vec![compiler.as_bytes(), id.as_bytes()];
    parts.extend(flags.iter().map(|f| f.as_bytes()));
    for f in files {
        parts.push(f.rel.as_bytes());
        parts.push(f.text.as_bytes());
    }
    let unit_list: Vec<String> = units.iter().map(|u| u.to_string()).collect();
    parts.extend(unit_list.iter().map(|u| u.as_bytes()));
    parts.push(if link { b"link" } else { b"check" });
    let key = digest(&parts);
    static BUILDS: OnceLock<Memo<String, Result<PathBuf, String>>> = OnceLock::new();
    BUILDS.get_or_init(Memo::new).get(&key, || {
        compile_uncached(&key, compiler, flags, files, units, link)
    })
}

fn compile_uncached(
    key: &str,
    compiler: &str,
    flags: &[String],
    files: &[SourceFile],
    units: &[usize],
    link: bool,
) -> Result<PathBuf, String> {
    let bin = dir("bin");
    let exe = bin.join(key);
    let err = bin.join(format!("{key}.err"));
    if exe.exists() {
        touch(&exe);
        return Ok(exe);
    }
    if let Ok(e) = fs::read_to_string(&err) {
        touch(&err);
        return Err(e);
    }
    let work = tempfile::tempdir_in(dir("tmp")).map_err(|e| e.to_string())?;
    for f in files {
        let p = work.path().join(&f.rel);
        fs::create_dir_all(p.parent().unwrap()).map_err(|e| e.to_string())?;
        fs::write(&p, &f.text).map_err(|e| e.to_string())?;
    }
    let out = work.path().join("a.out");
    let mut cmd = Command::new("timeout");
    cmd.args(["-k", "10", "300", compiler])
        .current_dir(work.path())
        .args(flags)
        .args(units.iter().map(|&u| &files[u].rel))
        .arg("-w")
        .stdin(Stdio::null());
    if link {
        cmd.arg("-o").arg(&out).arg("-lm");
    }
    let o = cmd.output().map_err(|e| format!("{compiler}: {e}"))?;
    // Publish atomically: parallel test processes may build the same key.
    if o.status.success() {
        if !link {
            fs::write(&out, b"").map_err(|e| e.to_string())?;
        }
        fs::rename(&out, &exe).map_err(|e| e.to_string())?;
        Ok(exe)
    } else {
        let mut msg = String::from_utf8_lossy(&o.stderr).into_owned();
        if o.status.code() == Some(124) {
            msg.push_str("\n(compiler timed out)");
        } else {
            let tmp = work.path().join("err");
            fs::write(&tmp, &msg).map_err(|e| e.to_string())?;
            fs::rename(&tmp, &err).map_err(|e| e.to_string())?;
        }
        Err(msg)
    }
}

/// Mark a cache entry as used, for [`prune`].
fn touch(path: &Path) {
    if let Ok(f) = fs::File::options().append(true).open(path) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
}

/// Remove cache entries unused for `days` days (the cache grows with every translator
/// change otherwise).
pub fn prune(days: u64) {
    let limit = std::time::Duration::from_secs(days * 86_400);
    for sub in ["bin", "runs"] {
        let Ok(entries) = fs::read_dir(dir(sub)) else {
            continue;
        };
        for e in entries.flatten() {
            let old = e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > limit);
            if old {
                let _ = fs::remove_file(e.path());
            }
        }
    }
}

/// Run a program whose result is deterministic (a reference build) once per cache: the exit
/// status and output are stored under the program's key and `env`.
pub fn run_once(
    exe: &Path,
    env: &[(&str, &str)],
    seconds: u32,
) -> Result<super::oracle::Ran, String> {
    let env_text: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut parts: Vec<&[u8]> = vec![exe.as_os_str().as_encoded_bytes()];
    parts.extend(env_text.iter().map(|e| e.as_bytes()));
    let path = dir("runs").join(digest(&parts));
    if let Ok(text) = fs::read_to_string(&path)
        && let Some((code, stdout)) = text.split_once('\n')
    {
        touch(&path);
        return Ok(super::oracle::Ran {
            stdout: stdout.to_string(),
            code: code.parse().ok(),
        });
    }
    let ran = super::oracle::run(exe, env, seconds)?;
    if !ran.timed_out() {
        let code = ran.code.map(|c| c.to_string()).unwrap_or_default();
        let tmp = dir("tmp").join(format!("run-{}", std::process::id()));
        let tmp = tmp.with_extension(digest(&parts));
        fs::write(&tmp, format!("{code}\n{}", ran.stdout)).map_err(|e| e.to_string())?;
        fs::rename(&tmp, &path).map_err(|e| e.to_string())?;
    }
    Ok(ran)
}
