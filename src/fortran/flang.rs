//! flang-22's symbols for a Fortran file, when flang is installed: the optional semantic mode
//! of Fortran, as libclang is C's. `flang -fc1 -fdebug-dump-symbols` resolves what the file
//! alone cannot say: the variables and derived types that `use` brings from modules of other
//! files (their compiled `.mod` files, found in the file's directory, its `-I` directories
//! and the compile database's). Those fill the facts that the declarations of the file leave
//! to implicit typing ([`super::facts::UnitFacts::imported`]); what the file declares is
//! read from its own text in both modes, so that both give the same output where both know.
//!
//! flang is looked for in `ACC2OMP_FLANG` (a path or a command), then `flang-22`,
//! `flang-new-22`, `flang-new` and `flang` on `PATH`; `--no-clang` turns it off. It runs
//! in a scratch directory (the modules it writes stay there) on a copy of the text, with a
//! time limit (`ACC2OMP_FLANG_TIMEOUT`, seconds, default 60) and a bound on what it prints;
//! a run that fails costs the file these facts, never the run.

use super::facts::{DerivedType, Facts, Intent, Type, Var};
use super::stmt::UnitKind;
use super::structure::Structure;
use crate::semantic::children;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// Output past this is not read (the symbols of the largest files are far smaller).
const MAX_OUTPUT: u64 = 64 << 20;

/// The flang found.
#[derive(Debug, Clone)]
pub struct Flang {
    pub path: PathBuf,
    /// As `--version` says it (`22.1.8`).
    pub version: String,
}

/// The flang this process uses (looked for once), or why there is none.
pub fn find() -> Result<&'static Flang, &'static str> {
    static FOUND: OnceLock<Result<Flang, String>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let named = std::env::var("ACC2OMP_FLANG")
                .ok()
                .filter(|s| !s.is_empty());
            let candidates: Vec<String> = match named {
                Some(n) => vec![n],
                None => ["flang-22", "flang-new-22", "flang-new", "flang"]
                    .map(String::from)
                    .to_vec(),
            };
            // Why each candidate on PATH was passed over: a broken install should say so.
            let mut passed = Vec::new();
            for c in candidates {
                let Some(path) = on_path(&c) else { continue };
                let mut cmd = Command::new(&path);
                cmd.arg("--version");
                // The whole flang timeout: a first start from a cold disk cache loads
                // ~250 MB of shared libraries and has taken 14 s on an idle machine.
                let why = match children::run(&mut cmd, timeout(), 1 << 16) {
                    Ok(ran) if ran.success => {
                        let text = String::from_utf8_lossy(&ran.stdout);
                        match version(&text) {
                            Some(v) => return Ok(Flang { path, version: v }),
                            None => "printed no flang version".to_string(),
                        }
                    }
                    Ok(_) => "failed".to_string(),
                    Err(e) => e,
                };
                passed.push(format!("`{} --version` {why}", path.display()));
            }
            if passed.is_empty() {
                Err("flang not found".to_string())
            } else {
                Err(format!("flang not usable: {}", passed.join("; ")))
            }
        })
        .as_ref()
        .map_err(String::as_str)
}

/// What identifies the flang a run uses, for the result cache's key.
pub fn identity(no_clang: bool) -> String {
    if no_clang {
        return "flang: none (--no-clang)".into();
    }
    match find() {
        Ok(f) => {
            let stamp = std::fs::metadata(&f.path)
                .ok()
                .map(|m| (m.len(), m.modified().ok()));
            format!("flang {} {} {stamp:?}", f.version, f.path.display())
        }
        Err(why) => format!("flang: none ({why})"),
    }
}

/// `command` as a path: itself when it names a file, else the first match on `PATH`.
fn on_path(command: &str) -> Option<PathBuf> {
    let p = Path::new(command);
    if p.components().count() > 1 {
        return p.is_file().then(|| p.to_path_buf());
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(command))
        .find(|c| c.is_file())
}

/// `flang version 22.1.8` → `22.1.8`.
fn version(text: &str) -> Option<String> {
    let line = text.lines().next()?;
    let rest = &line[line.find("flang")?..];
    let at = rest.find("version ")? + "version ".len();
    let v: String = rest[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    (!v.is_empty()).then_some(v)
}

/// How long one run of flang may take (`ACC2OMP_FLANG_TIMEOUT`, seconds; default 60).
fn timeout() -> Duration {
    children::limit_from_env("ACC2OMP_FLANG_TIMEOUT", 60)
}

/// flang's symbols for a file, and the files besides its text that they depend on.
#[derive(Debug)]
pub struct Symbols {
    pub dump: String,
    /// The `.mod` files flang read (transitively), the module sources compiled for it and
    /// the files they and the file include, the paths ahead of those in flang's search
    /// (which must stay absent) and the directories whose sources were searched for
    /// modules; `incomplete` where that list cannot be known.
    pub inputs: crate::facts::Inputs,
}

/// flang's symbols for `src` (the text of `path`, or of no file): the dump, or why there is
/// none. `flags` are the compile command's (`-D`, `-U`, `-I` are passed on); `wanted`, the
/// modules of other files that it uses (see [`build_modules`]).
pub fn symbols(
    flang: &Flang,
    src: &str,
    path: Option<&Path>,
    cpp: bool,
    fixed: bool,
    flags: &[String],
    wanted: &[String],
) -> Result<Symbols, String> {
    let dir = scratch().ok_or("no scratch directory")?;
    let name = path
        .and_then(Path::file_name)
        .map_or_else(|| PathBuf::from("input.f90"), PathBuf::from);
    let file = dir.path.join(&name);
    std::fs::write(&file, src).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(&flang.path);
    cmd.current_dir(&dir.path)
        .args(["-fc1", "-fdebug-dump-symbols", "-fopenacc"])
        .arg("-module-dir")
        .arg(&dir.path);
    cmd.arg(if fixed { "-ffixed-form" } else { "-ffree-form" });
    if cpp {
        cmd.arg("-cpp");
    }
    if let Some(d) = path.and_then(Path::parent) {
        let d = if d.as_os_str().is_empty() {
            Path::new(".")
        } else {
            d
        };
        if let Ok(abs) = std::path::absolute(d) {
            cmd.arg(format!("-I{}", abs.display()));
        }
    }
    let mut k = 0;
    while k < flags.len() {
        let f = &flags[k];
        if matches!(f.as_str(), "-I" | "-D" | "-U") {
            if let Some(v) = flags.get(k + 1) {
                cmd.arg(format!("{f}{v}"));
            }
            k += 2;
            continue;
        }
        if ["-I", "-D", "-U"].iter().any(|p| f.starts_with(p)) {
            cmd.arg(f);
        }
        k += 1;
    }
    // Modules the file uses that no `.mod` of its directories has: built here from the
    // sources of those directories that define them (the project not compiled yet).
    let search = search_dirs(path, flags);
    let builds = build_modules(flang, &dir.path, &search, wanted);
    if builds.built > 0 {
        cmd.arg(format!("-I{}", dir.path.display()));
    }
    cmd.arg(&name);
    let ran = children::run(&mut cmd, timeout(), MAX_OUTPUT)?;
    if ran.success {
        let dump = String::from_utf8_lossy(&ran.stdout).into_owned();
        let inputs = reads(src, cpp, &search, wanted, &dump, &builds);
        Ok(Symbols { dump, inputs })
    } else {
        Err("flang reported errors in the file".into())
    }
}

/// The directories flang reads modules from for `path`: its own and the `-I` directories
/// of `flags`, absolute.
fn search_dirs(path: Option<&Path>, flags: &[String]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(d) = path.and_then(Path::parent) {
        let d = if d.as_os_str().is_empty() {
            Path::new(".")
        } else {
            d
        };
        out.extend(std::path::absolute(d).ok());
    }
    let mut k = 0;
    while k < flags.len() {
        let dir = match flags[k].strip_prefix("-I") {
            Some("") => {
                k += 1;
                flags.get(k).map(String::as_str)
            }
            Some(d) => Some(d),
            None => None,
        };
        if let Some(abs) = dir.and_then(|d| std::path::absolute(d).ok()) {
            out.push(abs);
        }
        k += 1;
    }
    out.dedup();
    out
}

/// Fortran sources read per directory when looking for a module's (past it, none more).
const MAX_SOURCES: usize = 2000;
/// Largest source read when looking for a module's.
const MAX_SOURCE_BYTES: u64 = 4 << 20;

/// What a Fortran source text defines and uses: its `module` names and the modules its
/// `use` statements name (lower case; intrinsic ones left out).
fn module_lines(text: &str) -> (Vec<String>, Vec<String>) {
    let (mut defines, mut uses) = (Vec::new(), Vec::new());
    let word = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect::<String>()
            .to_ascii_lowercase()
    };
    for line in text.lines() {
        let l = line.trim_start().to_ascii_lowercase();
        if let Some(rest) = l.strip_prefix("module ") {
            let name = word(rest.trim_start());
            if !name.is_empty() && !matches!(name.as_str(), "procedure" | "subroutine" | "function")
            {
                defines.push(name);
            }
        } else if let Some(rest) = l.strip_prefix("use") {
            let rest = rest.trim_start();
            // `use m`, `use :: m`, `use, non_intrinsic :: m`; not `use, intrinsic :: m`.
            let rest = match rest.strip_prefix(',') {
                Some(r) if r.trim_start().starts_with("intrinsic") => continue,
                Some(r) => r.split_once("::").map_or("", |(_, m)| m),
                None if l
                    .as_bytes()
                    .get(3)
                    .is_some_and(|c| c.is_ascii_whitespace() || *c == b':') =>
                {
                    rest.strip_prefix("::").unwrap_or(rest)
                }
                None => continue,
            };
            let name = word(rest.trim_start());
            if !name.is_empty() {
                uses.push(name);
            }
        }
    }
    (defines, uses)
}

/// Build in `out` (flang's `-module-dir`) the `.mod` files of the modules `wanted` that no
/// directory of `search` has one of, from the Fortran sources of those directories that
/// define them, and of the modules those use in turn: `flang -fc1 -fsyntax-only`, run in
/// `out` on each source once a run, a module after those it uses. Nothing is written outside `out`. All of it within flang's time limit.
/// Returns how many sources compiled, and which were chosen.
fn build_modules(flang: &Flang, out: &Path, search: &[PathBuf], wanted: &[String]) -> Builds {
    let start = std::time::Instant::now();
    let has_mod = |m: &str| search.iter().any(|d| d.join(format!("{m}.mod")).is_file());
    let mut needed: Vec<String> = wanted.iter().filter(|m| !has_mod(m)).cloned().collect();
    let mut builds = Builds::default();
    if needed.is_empty() {
        return builds;
    }
    builds.searched = true;
    // Each source of the directories: its path, what it defines and uses (each directory
    // read once a run: every file of a project that uses a module asks).
    let mut sources: Vec<Source> = Vec::new();
    for d in search {
        sources.extend(scan(d).iter().cloned());
    }
    // The sources to compile: those defining a needed module, and what they need.
    let mut chosen: Vec<usize> = Vec::new();
    let mut k = 0;
    while k < needed.len() {
        let m = needed[k].clone();
        k += 1;
        if let Some(i) = sources.iter().position(|s| s.1.contains(&m))
            && !chosen.contains(&i)
        {
            chosen.push(i);
            for u in &sources[i].2 {
                if !needed.contains(u) && !has_mod(u) && !sources[i].1.contains(u) {
                    needed.push(u.clone());
                }
            }
        }
    }
    // Those a source uses first (a cycle, which flang rejects anyway, in the order found).
    let mut order: Vec<usize> = Vec::new();
    while order.len() < chosen.len() {
        let ready = chosen.iter().copied().find(|&i| {
            !order.contains(&i)
                && sources[i].2.iter().all(|m| {
                    chosen
                        .iter()
                        .all(|&j| j == i || order.contains(&j) || !sources[j].1.contains(m))
                })
        });
        let next = ready.or_else(|| chosen.iter().copied().find(|i| !order.contains(i)));
        order.extend(next);
    }
    let mut built = 0;
    builds.sources = order.iter().map(|&i| sources[i].0.clone()).collect();
    for i in order {
        let left = timeout().saturating_sub(start.elapsed());
        if left.is_zero() {
            builds.cut = true;
            break;
        }
        let p = &sources[i].0;
        let key = (p.clone(), search.to_vec());
        if let Some(mods) = lock(&BUILT).get(&key) {
            // Built for an earlier file of the run: its modules written again here.
            let ok = mods.as_ref().is_some_and(|mods| {
                mods.iter()
                    .all(|(m, bytes)| std::fs::write(out.join(m), bytes).is_ok())
            });
            built += usize::from(ok);
            continue;
        }
        let Some(kind) = super::form::kind_of(p) else {
            continue;
        };
        let mut cmd = Command::new(&flang.path);
        cmd.current_dir(out)
            .args(["-fc1", "-fsyntax-only", "-module-dir"])
            .arg(out)
            .arg(format!("-I{}", out.display()));
        for d in search {
            cmd.arg(format!("-I{}", d.display()));
        }
        cmd.arg(if kind.form == super::form::Form::Fixed {
            "-ffixed-form"
        } else {
            "-ffree-form"
        });
        if kind.cpp {
            cmd.arg("-cpp");
        }
        cmd.arg(p);
        let ran = children::run(&mut cmd, left, 1 << 20);
        // A time limit or a failure to start may not recur.
        builds.cut |= ran.is_err();
        let ok = ran.as_ref().is_ok_and(|r| r.success);
        if ok {
            let mods = sources[i].1.iter().filter_map(|m| {
                let name = format!("{m}.mod");
                Some((name.clone(), std::fs::read(out.join(&name)).ok()?))
            });
            lock(&BUILT).insert(key, Some(mods.collect()));
        } else if ran.is_ok() {
            // It fails for later files too (not what the time limit stopped).
            lock(&BUILT).insert(key, None);
        }
        built += usize::from(ok);
    }
    builds.built = built;
    builds
}

/// What [`build_modules`] did.
#[derive(Debug, Default)]
struct Builds {
    /// Sources compiled (this run or earlier in the process).
    built: usize,
    /// The sources chosen to compile, in order.
    sources: Vec<PathBuf>,
    /// Some module had no `.mod`: the directories' sources were searched.
    searched: bool,
    /// Stopped by the time limit (or a compile that did not run): the result may differ.
    cut: bool,
}

/// The files flang's run on `src` read besides it, as the result cache lists them: flang
/// has no dependency output, so they are found as flang finds them (`strace` of flang-22
/// shows it): a module `m` at the first `DIR/m.mod` of `search` (after the scratch
/// directory, where the modules built from source are), an include at the first `DIR/name`
/// of the including file's directory and then `search`. Each `.mod` read is listed with the
/// paths ahead of it, which must stay absent; a module found in none (built from source, or
/// flang's own) has all its paths absent. The modules are those the dump has scopes of
/// (but the file's own),
/// those `wanted`, those the built sources use and those each `.mod` read needs, in turn.
fn reads(
    src: &str,
    cpp: bool,
    search: &[PathBuf],
    wanted: &[String],
    dump: &str,
    builds: &Builds,
) -> crate::facts::Inputs {
    let mut inputs = crate::facts::Inputs {
        incomplete: builds.cut,
        ..Default::default()
    };
    // The file's own modules (flang reads no `.mod` of those), unless the preprocessor may
    // leave one out.
    let own = if cpp { Vec::new() } else { module_lines(src).0 };
    let mut mods: Vec<String> = wanted.to_vec();
    for s in scopes(dump) {
        if s.kind == "Module" && !s.name.is_empty() && !own.contains(&s.name) {
            mods.push(s.name);
        }
    }
    // (text, directory) of each file whose includes are read.
    let mut texts: Vec<(String, Option<PathBuf>)> = vec![(src.to_string(), None)];
    for p in &builds.sources {
        match std::fs::read(p) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                mods.extend(module_lines(&text).1);
                texts.push((text, p.parent().map(Path::to_path_buf)));
                inputs.files.push(p.clone());
            }
            Err(_) => inputs.incomplete = true,
        }
    }
    let mut k = 0;
    while k < mods.len() {
        let m = mods[k].clone();
        k += 1;
        if mods[..k - 1].contains(&m) {
            continue;
        }
        for d in search {
            let p = d.join(format!("{m}.mod"));
            if !p.exists() {
                inputs.absent.push(p);
                continue;
            }
            match std::fs::read(&p) {
                Ok(bytes) => mods.extend(mod_needs(&String::from_utf8_lossy(&bytes))),
                Err(_) => inputs.incomplete = true,
            }
            inputs.files.push(p);
            break;
        }
    }
    let mut t = 0;
    while t < texts.len() {
        let (text, dir) = texts[t].clone();
        t += 1;
        let Some(names) = includes(&text) else {
            inputs.incomplete = true;
            break;
        };
        let dirs: Vec<&PathBuf> = dir.iter().chain(search).collect();
        for name in names {
            let candidates: Vec<PathBuf> = if Path::new(&name).is_absolute() {
                vec![PathBuf::from(&name)]
            } else {
                dirs.iter().map(|d| d.join(&name)).collect()
            };
            for p in candidates {
                if !p.exists() {
                    inputs.absent.push(p);
                    continue;
                }
                if !inputs.files.contains(&p) {
                    match std::fs::read(&p) {
                        Ok(bytes) => texts.push((
                            String::from_utf8_lossy(&bytes).into_owned(),
                            p.parent().map(Path::to_path_buf),
                        )),
                        Err(_) => inputs.incomplete = true,
                    }
                    inputs.files.push(p);
                }
                break;
            }
        }
        // Nested includes: a bound on what a cycle reads.
        if texts.len() > 4096 {
            inputs.incomplete = true;
            break;
        }
    }
    if builds.searched {
        inputs.module_dirs = search.to_vec();
    }
    for v in [
        &mut inputs.files,
        &mut inputs.absent,
        &mut inputs.module_dirs,
    ] {
        v.sort();
        v.dedup();
    }
    inputs
}

/// The modules a `.mod` file needs: its `!need$ SUM n NAME` lines and its `use` lines.
fn mod_needs(text: &str) -> Vec<String> {
    let mut out = module_lines(text).1;
    for line in text.lines() {
        if let Some(rest) = line.trim_start_matches('\u{feff}').strip_prefix("!need$")
            && let Some(name) = rest.split_whitespace().last()
        {
            out.push(name.to_ascii_lowercase());
        }
    }
    out
}

/// The names a Fortran text includes (`include 'x'`, `#include "x"`, `#include <x>`), in
/// or out of a conditional block; None where one is not spelled out (`#include MACRO`,
/// an unclosed name).
fn includes(text: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for line in text.lines() {
        let squeezed: String = line
            .chars()
            .filter(|c| !c.is_whitespace())
            .take(10)
            .collect::<String>()
            .to_ascii_lowercase();
        let (open, close) = if squeezed.starts_with("#include") {
            let at = line.find(['"', '<']);
            match at.map(|i| &line[i..i + 1]) {
                Some("\"") => ('"', '"'),
                Some(_) => ('<', '>'),
                None => return None,
            }
        } else if squeezed.starts_with("include'") {
            ('\'', '\'')
        } else if squeezed.starts_with("include\"") {
            ('"', '"')
        } else {
            continue;
        };
        let from = line.find(open)? + 1;
        let len = line[from..].find(close)?;
        out.push(line[from..from + len].to_string());
    }
    Some(out)
}

/// A digest of what [`build_modules`] reads of directory `d`: its Fortran sources that
/// define modules, with the modules each defines and uses (read once a run).
pub fn module_sources_digest(d: &Path) -> [u8; 32] {
    use std::os::unix::ffi::OsStrExt;
    let mut h = blake3::Hasher::new();
    let mut field = |b: &[u8]| {
        h.update(&(b.len() as u64).to_le_bytes());
        h.update(b);
    };
    for (p, defines, uses) in scan(d).iter() {
        field(p.as_os_str().as_bytes());
        field(defines.join(",").as_bytes());
        field(uses.join(",").as_bytes());
    }
    *h.finalize().as_bytes()
}

/// A Fortran source of a searched directory: its path, the modules it defines and those
/// it uses.
type Source = (PathBuf, Vec<String>, Vec<String>);

/// Per source and search path, the `.mod` files its compile wrote (name, bytes), or None
/// where it did not compile: each module is built once a run.
type Built = HashMap<(PathBuf, Vec<PathBuf>), Option<Vec<(String, Vec<u8>)>>>;
static BUILT: OnceLock<Mutex<Built>> = OnceLock::new();

/// The sources of each directory read so far this run.
static SCANS: OnceLock<Mutex<HashMap<PathBuf, Arc<Vec<Source>>>>> = OnceLock::new();

/// The map behind `m`, created on first use (a poisoned lock is taken as it is).
fn lock<T: Default>(m: &OnceLock<Mutex<T>>) -> std::sync::MutexGuard<'_, T> {
    m.get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The Fortran sources of `d` that define modules (at most [`MAX_SOURCES`] read, each of at
/// most [`MAX_SOURCE_BYTES`]), read once a run.
fn scan(d: &Path) -> Arc<Vec<Source>> {
    if let Some(s) = lock(&SCANS).get(d) {
        return s.clone();
    }
    let mut sources = Vec::new();
    if let Ok(entries) = std::fs::read_dir(d) {
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| super::form::kind_of(p).is_some())
            .filter(|p| {
                std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() <= MAX_SOURCE_BYTES)
            })
            .collect();
        paths.sort();
        paths.truncate(MAX_SOURCES);
        for p in paths {
            let Ok(text) = std::fs::read(&p) else {
                continue;
            };
            let (defines, uses) = module_lines(&String::from_utf8_lossy(&text));
            if !defines.is_empty() {
                sources.push((p, defines, uses));
            }
        }
    }
    let sources = Arc::new(sources);
    lock(&SCANS).insert(d.to_path_buf(), sources.clone());
    sources
}

/// A directory removed when dropped.
struct Scratch {
    path: PathBuf,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

fn scratch() -> Option<Scratch> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let base = std::env::temp_dir();
    for _ in 0..16 {
        let n = N.fetch_add(1, Ordering::Relaxed);
        let path = base.join(format!("acc2omp-flang-{}-{n}", std::process::id()));
        if std::fs::create_dir(&path).is_ok() {
            return Some(Scratch { path });
        }
    }
    None
}

/// One symbol line of the dump.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Symbol {
    /// Lower case.
    name: String,
    /// The attributes in upper case (`ALLOCATABLE`, `INTENT(IN)`).
    attrs: Vec<String>,
    /// `Use from x in m`: the symbol and its module, lower case.
    used: Option<(String, String)>,
    /// `ObjectEntity … type: REAL(4)`.
    ty: Option<String>,
    /// `shape: 1_8:10_8,:`.
    shape: Option<String>,
    /// A derived type, with its scope's index once it is read.
    derived_type: bool,
    /// A derived type's components as its line lists them (`DerivedType components: a,b`).
    components: Vec<String>,
    /// The parent component of an extended type (`base_t (ParentComp)`).
    parent_comp: bool,
}

/// One scope of the dump.
#[derive(Debug, Clone, Default)]
struct Scope {
    /// `Module`, `MainProgram`, `Subprogram`, `DerivedType`, …
    kind: String,
    /// Lower case (empty for unnamed scopes).
    name: String,
    parent: Option<usize>,
    symbols: Vec<Symbol>,
}

/// The scopes of a dump, in order; indentation gives nesting (two spaces a level).
fn scopes(dump: &str) -> Vec<Scope> {
    let mut out: Vec<Scope> = Vec::new();
    // (indent, scope) of the open scopes.
    let mut open: Vec<(usize, usize)> = Vec::new();
    for line in dump.lines() {
        let indent = line.len() - line.trim_start().len();
        let text = line.trim();
        while open.last().is_some_and(|&(i, _)| i >= indent) {
            open.pop();
        }
        if let Some((kind, rest)) = text.split_once(" scope:")
            && !kind.contains([' ', ','])
        {
            let name = rest
                .split_whitespace()
                .next()
                .filter(|w| !w.contains('='))
                .unwrap_or("")
                .to_ascii_lowercase();
            out.push(Scope {
                kind: kind.to_string(),
                name,
                parent: open.last().map(|&(_, s)| s),
                symbols: Vec::new(),
            });
            open.push((indent, out.len() - 1));
            continue;
        }
        let Some(&(_, s)) = open.last() else { continue };
        if let Some(sym) = symbol(text) {
            out[s].symbols.push(sym);
        }
    }
    out
}

/// `a, ALLOCATABLE, PUBLIC size=48 offset=0: ObjectEntity type: REAL(4) shape: :`.
fn symbol(text: &str) -> Option<Symbol> {
    let (head, details) = text.split_once(": ")?;
    let head = head.split(" size=").next()?;
    let parent_comp = head.contains("(ParentComp)");
    let head = head.split(" (").next()?;
    let mut parts = head.split(", ");
    let name = parts.next()?.trim();
    if name.is_empty() || name.starts_with('.') || name.contains(' ') {
        return None;
    }
    let mut s = Symbol {
        name: name.to_ascii_lowercase(),
        attrs: parts.map(str::to_string).collect(),
        parent_comp,
        ..Symbol::default()
    };
    if let Some(u) = details.strip_prefix("Use from ") {
        let (sym, module) = u.split_once(" in ")?;
        s.used = Some((
            sym.trim().to_ascii_lowercase(),
            module.split_whitespace().next()?.to_ascii_lowercase(),
        ));
    } else if details.starts_with("ObjectEntity") {
        let after = |key: &str| {
            let at = details.find(key)? + key.len();
            details[at..].split_whitespace().next().map(str::to_string)
        };
        s.ty = after("type: ");
        s.shape = after("shape: ");
    } else if let Some(rest) = details.strip_prefix("DerivedType") {
        s.derived_type = true;
        if let Some(list) = rest.trim().strip_prefix("components:") {
            s.components = list
                .split(',')
                .map(|c| c.trim().to_ascii_lowercase())
                .filter(|c| !c.is_empty())
                .collect();
        }
    } else {
        return None;
    }
    Some(s)
}

/// `s` split at the commas outside parentheses and brackets (`1_8:int(n,kind=8),:` → two).
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut from) = (0usize, 0);
    for (k, c) in s.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&s[from..k]);
                from = k + 1;
            }
            _ => {}
        }
    }
    out.push(&s[from..]);
    out
}

/// `REAL(4)` → real, `(4)`; `TYPE(t)` and a parameterized `TYPE(t(k=8_4))` → the derived
/// type `t`; `CHARACTER(…)` keeps no kind.
fn type_of(t: &str) -> Option<Type> {
    let (word, rest) = match t.split_once('(') {
        Some((w, r)) => (w, r.strip_suffix(')').unwrap_or(r)),
        None => (t, ""),
    };
    let word = word.to_ascii_lowercase();
    Some(match word.as_str() {
        "type" | "class" => Type::Derived {
            // The type's parameters follow its name in parentheses.
            name: rest
                .split('(')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase(),
            class: word == "class",
        },
        "character" => Type::Intrinsic {
            name: word,
            kind: String::new(),
        },
        "real" | "integer" | "logical" | "complex" => Type::Intrinsic {
            name: word,
            kind: if rest.is_empty() {
                String::new()
            } else {
                format!("({rest})")
            },
        },
        _ => return None,
    })
}

/// A variable from an `ObjectEntity` line, named `name` where it is used.
fn var_of(name: &str, s: &Symbol) -> Option<Var> {
    let mut v = Var::new(name.to_string(), 0);
    v.ty = type_of(s.ty.as_deref()?)?;
    if let Some(shape) = &s.shape {
        let dims = split_top(shape);
        v.rank = dims.len();
        v.deferred = dims
            .iter()
            .any(|d| d.ends_with(':') || d.ends_with('*') || *d == ".." || d.is_empty());
    }
    for a in &s.attrs {
        match a.as_str() {
            "ALLOCATABLE" => v.allocatable = true,
            "POINTER" => v.pointer = true,
            "TARGET" => v.target = true,
            "PARAMETER" => v.parameter = true,
            "OPTIONAL" => v.optional = true,
            "VALUE" => v.value = true,
            "INTENT(IN)" => v.intent = Some(Intent::In),
            "INTENT(OUT)" => v.intent = Some(Intent::Out),
            "INTENT(INOUT)" => v.intent = Some(Intent::InOut),
            _ => {}
        }
    }
    Some(v)
}

/// Add to `facts` what `dump` says of the names each unit of the file uses from modules of
/// other files: their variables (as each unit sees them) and derived types, with the types
/// of their components at any depth (see [`qualified`]). Returns how many names it added.
pub fn import(facts: &mut Facts, st: &Structure, dump: &str) -> usize {
    let scopes = scopes(dump);
    let local_module = |m: &str| {
        st.units
            .iter()
            .any(|u| u.kind == UnitKind::Module && u.name.as_deref() == Some(m))
    };
    let mut added = 0;
    // The component types still to import: (name, defining module).
    let mut nested: Vec<(String, String)> = Vec::new();
    for u in 0..st.units.len() {
        let Some(scope) = unit_scope(&scopes, st, u) else {
            continue;
        };
        for s in &scopes[scope].symbols {
            let Some((name, m)) = &s.used else { continue };
            if local_module(m) || facts.units[u].var(&s.name).is_some() {
                continue;
            }
            let Some((target, name, home)) = resolve(&scopes, name.clone(), m.clone()) else {
                continue;
            };
            if target.derived_type {
                if facts.derived(&s.name).is_none()
                    && let Some(t) = derived(&scopes, &home, &name, u, &s.name, &mut nested, 0)
                {
                    facts.types.push(t);
                    added += 1;
                }
                continue;
            }
            // A variable keeps its type's name as its module writes it (a type its unit
            // does not name stays unknown here).
            if let Some(v) = var_of(&s.name, target) {
                facts.units[u].imported.push(v);
                added += 1;
            }
        }
    }
    // The types of components, under names no Fortran type has, so that no type of this
    // file hides them.
    let mut seen = 0;
    while let Some((name, home)) = nested.pop() {
        seen += 1;
        let q = qualified(&name, &home);
        if seen > 4096 || facts.derived(&q).is_some() {
            continue;
        }
        if let Some(t) = derived(&scopes, &home, &name, 0, &q, &mut nested, 0) {
            facts.types.push(t);
        }
    }
    added
}

/// The name under which a derived type `name` of module `module` that the file does not
/// name is imported: `name@module`, which no Fortran name spells.
fn qualified(name: &str, module: &str) -> String {
    format!("{name}@{module}")
}

/// The symbol `name` of module `m`, following re-exports (a few hops): the symbol, its
/// name and module where it is defined.
fn resolve(scopes: &[Scope], mut name: String, mut m: String) -> Option<(&Symbol, String, String)> {
    for _ in 0..8 {
        let scope = scopes.iter().find(|s| s.kind == "Module" && s.name == m)?;
        let s = scope.symbols.iter().find(|s| s.name == name)?;
        match &s.used {
            Some((n, next)) => (name, m) = (n.clone(), next.clone()),
            None => return Some((s, name, m)),
        }
    }
    None
}

/// The components of derived type `name` defined in module `home` (its `DerivedType` scope
/// there), as the type `local` of unit `u`: a parent type's components first, as the
/// file's own types have them; a component of a derived type names its type
/// [`qualified`], which is added to `nested` to import. None when a component its type's
/// line lists is not read (a procedure pointer, say): a type whose components are not all
/// known is not known. `depth`: parents followed so far.
fn derived(
    scopes: &[Scope],
    home: &str,
    name: &str,
    u: usize,
    local: &str,
    nested: &mut Vec<(String, String)>,
    depth: usize,
) -> Option<DerivedType> {
    let module = scopes
        .iter()
        .position(|s| s.kind == "Module" && s.name == home)?;
    let line = scopes[module]
        .symbols
        .iter()
        .find(|s| s.name == name && s.derived_type)?;
    let scope = scopes
        .iter()
        .find(|s| s.kind == "DerivedType" && s.name == name && s.parent == Some(module))?;
    let mut components = Vec::new();
    let mut read = Vec::new();
    for c in &scope.symbols {
        if c.parent_comp {
            if depth > 16 {
                return None;
            }
            // The parent type, as the module of this type sees it.
            let (_, pname, pm) = resolve(scopes, type_name(c)?, home.to_string())?;
            let parent = derived(scopes, &pm, &pname, u, local, nested, depth + 1)?;
            components.splice(0..0, parent.components);
            read.push(c.name.clone());
            continue;
        }
        let Some(mut v) = var_of(&c.name, c) else {
            continue;
        };
        if let Type::Derived { name: ty, .. } = &mut v.ty {
            let (_, n, m) = resolve(scopes, ty.clone(), home.to_string())?;
            *ty = qualified(&n, &m);
            nested.push((n, m));
        }
        read.push(c.name.clone());
        components.push(v);
    }
    if line.components.iter().any(|c| !read.contains(c)) {
        return None;
    }
    Some(DerivedType {
        name: local.to_string(),
        unit: u,
        components,
    })
}

/// The derived type's name of an `ObjectEntity` of a derived type (`TYPE(t)` → `t`).
fn type_name(s: &Symbol) -> Option<String> {
    match type_of(s.ty.as_deref()?)? {
        Type::Derived { name, .. } => Some(name),
        _ => None,
    }
}

/// The dump's scope of unit `u`: the same kind and name, under its host's scope.
fn unit_scope(scopes: &[Scope], st: &Structure, u: usize) -> Option<usize> {
    let unit = &st.units[u];
    let kind = match unit.kind {
        UnitKind::Module => "Module",
        UnitKind::Program => "MainProgram",
        UnitKind::Subroutine | UnitKind::Function => "Subprogram",
        _ => return None,
    };
    let name = unit.name.as_deref()?;
    let host = match unit.parent {
        Some(p) => Some(unit_scope(scopes, st, p)?),
        None => None,
    };
    scopes
        .iter()
        .position(|s| s.kind == kind && s.name == name && (host.is_none() || s.parent == host))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = "Global scope: size=0 alignment=1 sourceRange=0 bytes
  P: MainProgram
  MainProgram scope: P size=44 alignment=4 sourceRange=432 bytes
    a, ALLOCATABLE: Use from a in m2
    b size=40 offset=0: ObjectEntity type: REAL(4) shape: 1_8:10_8
    ps, POINTER: Use from ps in m2
    pt: Use from pt in m2
    t: Use from t in m2
    w: Use from w in m3
    OpenACCConstruct scope: size=0 alignment=1 sourceRange=220 bytes
  Module scope: m2 size=160 alignment=8 sourceRange=175 bytes
    a, ALLOCATABLE, PUBLIC size=48 offset=0: ObjectEntity type: REAL(4) shape: :
    ps, POINTER, PUBLIC size=24 offset=48: ObjectEntity type: REAL(8)
    pt, PUBLIC: DerivedType components: x,v
    t, PUBLIC size=56 offset=96: ObjectEntity type: TYPE(pt)
    DerivedType scope: pt size=56 alignment=8 instantiation of pt sourceRange=45 bytes
      v, ALLOCATABLE size=48 offset=8: ObjectEntity type: REAL(4) shape: :
      x size=4 offset=0: ObjectEntity type: REAL(4)
  Module scope: m3 size=4 alignment=4 sourceRange=10 bytes
    w, PUBLIC: Use from q in m2
";

    #[test]
    fn reads_scopes_and_symbols() {
        let s = scopes(DUMP);
        let kinds: Vec<(&str, &str)> = s
            .iter()
            .map(|s| (s.kind.as_str(), s.name.as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("Global", ""),
                ("MainProgram", "p"),
                ("OpenACCConstruct", ""),
                ("Module", "m2"),
                ("DerivedType", "pt"),
                ("Module", "m3"),
            ]
        );
        assert_eq!(s[4].parent, Some(3));
        let a = var_of("a", &s[3].symbols[0]).unwrap();
        assert!(a.allocatable && a.rank == 1 && a.deferred);
        let ps = var_of("ps", &s[3].symbols[1]).unwrap();
        assert!(ps.pointer && ps.rank == 0);
        assert_eq!(
            ps.ty,
            Type::Intrinsic {
                name: "real".into(),
                kind: "(8)".into()
            }
        );
    }

    #[test]
    fn imports_the_names_of_other_files_modules() {
        let src = "program p\n  use m2\n  use m3\n  real :: b(10)\nend program\n";
        let kind = super::super::form::kind_of(Path::new("p.f90")).unwrap();
        let front = super::super::Front::new(src, kind, |_| Default::default());
        let mut facts = front.facts.clone();
        let added = import(&mut facts, &front.structure, DUMP);
        // a, ps, t and the type pt; w's module does not say what q is.
        assert_eq!(added, 4);
        let a = facts.lookup(&front.structure, 0, "A").unwrap();
        assert!(a.allocatable && a.is_array());
        let t = facts.lookup(&front.structure, 0, "t").unwrap();
        assert!(matches!(t.ty, Type::Derived { ref name, .. } if name == "pt"));
        let pt = facts.derived("pt").unwrap();
        assert!(pt.components.iter().any(|c| c.name == "v" && c.allocatable));
        // What the file declares is its own.
        assert_eq!(
            facts.lookup(&front.structure, 0, "b"),
            front.facts.lookup(&front.structure, 0, "b")
        );
    }

    /// flang-22's own dump of `tests/flang/main.f90`, whose module (`tests/flang/shapes.f90`)
    /// is another file's: `flang-22 -fc1 -fsyntax-only -module-dir D shapes.f90`, then
    /// `flang-22 -fc1 -fdebug-dump-symbols -fopenacc -ffree-form -ID main.f90`.
    const FLANG_22_DUMP: &str = include_str!("../../tests/flang/main.dump");
    const MAIN: &str = include_str!("../../tests/flang/main.f90");
    const SHAPES: &str = include_str!("../../tests/flang/shapes.f90");

    fn named<'s>(scopes: &'s [Scope], kind: &str, name: &str) -> &'s Scope {
        scopes
            .iter()
            .find(|s| s.kind == kind && s.name == name)
            .unwrap_or_else(|| panic!("no {kind} scope {name}"))
    }

    fn var(scope: &Scope, name: &str) -> Var {
        let s = scope.symbols.iter().find(|s| s.name == name).unwrap();
        var_of(name, s).unwrap_or_else(|| panic!("{name}: {s:?}"))
    }

    #[test]
    fn reads_flang_22s_dump() {
        let s = scopes(FLANG_22_DUMP);
        let module = named(&s, "Module", "shapes");
        let sub = named(&s, "Subprogram", "s");
        assert_eq!(s[sub.parent.unwrap()].name, "shapes");
        // Bounds with calls in them: `1_8:int(n,kind=8),1_8:int(max(n,2_4),kind=8)`.
        let b = var(sub, "b");
        assert_eq!(
            (b.rank, b.deferred, b.intent),
            (2, false, Some(Intent::InOut))
        );
        let d = var(sub, "d");
        assert_eq!((d.rank, d.optional), (2, true));
        assert_eq!(
            d.ty,
            Type::Intrinsic {
                name: "real".into(),
                kind: "(8)".into()
            }
        );
        let a = var(module, "a");
        assert_eq!((a.rank, a.deferred, a.allocatable), (2, true, true));
        // Parameterized derived types: `TYPE(pt(k=8_4))`, `TYPE(grid(n=:))`.
        let derived = |name: &str| Type::Derived {
            name: name.into(),
            class: false,
        };
        assert_eq!(var(module, "q").ty, derived("pt"));
        let g = var(module, "g");
        assert_eq!((g.ty, g.allocatable), (derived("grid"), true));
        assert_eq!(var(module, "c").ty, derived("cell"));
        let grid = named(&s, "DerivedType", "grid");
        assert_eq!(var(grid, "v").rank, 2);
    }

    /// The facts of a program from flang's dump of it, its module being another file's.
    fn imported(dump: &str) -> (Facts, super::super::Front, usize) {
        let kind = super::super::form::kind_of(Path::new("main.f90")).unwrap();
        let front = super::super::Front::new(MAIN, kind, |_| Default::default());
        let mut facts = front.facts.clone();
        let added = import(&mut facts, &front.structure, dump);
        (facts, front, added)
    }

    #[test]
    fn imports_from_flang_22s_dump() {
        let (facts, front, added) = imported(FLANG_22_DUMP);
        // a, c, dp, g, label, p, q, sizes and the types cell, grid, pt.
        assert_eq!(added, 11);
        let st = &front.structure;
        let q = facts.lookup(st, 0, "q").unwrap();
        assert!(matches!(q.ty, Type::Derived { ref name, .. } if name == "pt"));
        let p = facts.lookup(st, 0, "p").unwrap();
        assert!(p.pointer && p.rank == 1 && p.deferred);
        let grid = facts.derived("grid").unwrap();
        assert!(grid.components.iter().any(|c| c.name == "v" && c.rank == 2));
        assert!(facts.derived("pt").is_some() && facts.derived("cell").is_some());
        let e = facts.lookup(st, 0, "e").unwrap();
        assert_eq!(Some(e), front.facts.lookup(st, 0, "e"));
    }

    /// The installed flang gives the facts of the recorded dump (skipped without flang-22,
    /// unless ACC2OMP_REQUIRE_TOOLS=1).
    #[test]
    fn installed_flang_agrees_with_the_recorded_dump() {
        let flang = match find() {
            Ok(flang) => flang,
            Err(why) => {
                assert!(
                    std::env::var("ACC2OMP_REQUIRE_TOOLS").as_deref() != Ok("1"),
                    "ACC2OMP_REQUIRE_TOOLS=1 but {why}"
                );
                eprintln!("SKIPPED installed_flang_agrees_with_the_recorded_dump: {why}");
                return;
            }
        };
        let dir = tempfile::tempdir().unwrap();
        let shapes = dir.path().join("shapes.f90");
        std::fs::write(&shapes, SHAPES).unwrap();
        let mut cmd = Command::new(&flang.path);
        cmd.current_dir(dir.path())
            .args(["-fc1", "-fsyntax-only", "-module-dir", "."])
            .arg(&shapes);
        let ran = children::run(&mut cmd, Duration::from_secs(120), 1 << 20).unwrap();
        assert!(ran.success, "flang could not compile the module");
        let main = dir.path().join("main.f90");
        let dump = symbols(flang, MAIN, Some(&main), false, false, &[], &[])
            .unwrap()
            .dump;
        let (live, _, n) = imported(&dump);
        let (recorded, _, m) = imported(FLANG_22_DUMP);
        assert_eq!(n, m);
        assert_eq!(format!("{live:?}"), format!("{recorded:?}"));
    }

    #[test]
    fn includes_and_mod_needs_are_read_or_said_unknown() {
        let text = "program p\n  include 'a.inc'\n  INCLUDE \"b.h\"\n#include \"c.h\"\n# include <d.h>\n  ! include 'no.inc'\nc     include 'no2.inc'\n  includes = 1\n";
        assert_eq!(
            includes(text).unwrap(),
            ["a.inc", "b.h", "c.h", "d.h"].map(String::from)
        );
        // A name only the preprocessor knows, or one not closed: not known.
        assert_eq!(includes("#include FOO\n"), None);
        assert_eq!(includes("  include 'x\n"), None);
        let m = "\u{feff}!mod$ v1 sum:7d77b194d5d48ad6\n!need$ 1f51d9d0f02f1d86 n basem\nmodule fields\nuse other,only:t\nend\n";
        assert_eq!(mod_needs(m), ["other", "basem"]);
    }

    #[test]
    fn module_lines_name_what_a_source_defines_and_uses() {
        let text = "module a\n  use b\n  use, intrinsic :: iso_c_binding\n  use :: c, only: x\n  use, non_intrinsic :: d\n  useful = 1\ncontains\nend module a\nmodule procedure f\nMODULE E\n";
        let (defines, uses) = module_lines(text);
        assert_eq!(defines, ["a", "e"]);
        assert_eq!(uses, ["b", "c", "d"]);
    }

    /// A type's components at any depth come under names no Fortran type has, a parent's
    /// flattened first (flang-22's dump of a program using `field_t` of module `mm`).
    #[test]
    fn imports_component_and_parent_types() {
        let dump = "Global scope: size=0 alignment=1 sourceRange=0 bytes
  MainProgram scope: u size=144 alignment=8 sourceRange=100 bytes
    field_t: Use from field_t in mm
  Module scope: mm size=0 alignment=1 sourceRange=131 bytes
    base_t, PUBLIC: Use from base_t in basem
    field_t, PUBLIC: DerivedType components: base_t,in
    inner_t, PUBLIC: DerivedType components: c
    DerivedType scope: inner_t size=48 alignment=8 instantiation of inner_t sourceRange=34 bytes
      c, ALLOCATABLE size=48 offset=0: ObjectEntity type: REAL(4) shape: :
    DerivedType scope: field_t size=96 alignment=8 instantiation of field_t sourceRange=66 bytes
      base_t (ParentComp) size=48 offset=0: ObjectEntity type: TYPE(base_t)
      in size=48 offset=48: ObjectEntity type: TYPE(inner_t)
  Module scope: basem size=0 alignment=1 sourceRange=64 bytes
    base_t, PUBLIC: DerivedType components: a
    DerivedType scope: base_t size=48 alignment=8 instantiation of base_t sourceRange=34 bytes
      a, ALLOCATABLE size=48 offset=0: ObjectEntity type: REAL(4) shape: :
";
        let src = "program u\n  use mm, only: field_t\n  type inner_t\n    integer :: n\n  end type\nend program\n";
        let kind = super::super::form::kind_of(Path::new("u.f90")).unwrap();
        let front = super::super::Front::new(src, kind, |_| Default::default());
        let mut facts = front.facts.clone();
        assert_eq!(import(&mut facts, &front.structure, dump), 1);
        let f = facts.derived("field_t").unwrap();
        let names: Vec<&str> = f.components.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "in"]);
        // The file's own `inner_t` does not hide the module's.
        let Type::Derived { name, .. } = &f.components[1].ty else {
            panic!("{:?}", f.components[1]);
        };
        assert_eq!(name, "inner_t@mm");
        let inner = facts.derived(name).unwrap();
        assert!(inner.components[0].allocatable);
        assert!(!facts.derived("inner_t").unwrap().components[0].allocatable);
    }

    #[test]
    fn version_from_the_first_line() {
        assert_eq!(
            version("Debian flang version 22.1.8 (1~deb12u1)\nTarget: x86_64").as_deref(),
            Some("22.1.8")
        );
        assert_eq!(version("gcc 12"), None);
    }
}
