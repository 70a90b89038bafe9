//! Finding and loading libclang at run time (14 and newer), one `CXIndex` per thread.
//!
//! Search order: `LIBCLANG_PATH` (a file or a directory), `llvm-config --libdir`, the usual
//! system directories, then the PyPI `libclang` wheel. Among the libraries found, the newest
//! version wins. clang-sys keeps the loaded library per thread, so the library is loaded once
//! per process and installed on each worker thread that parses.

use clang_sys::{CXIndex, SharedLibrary};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

/// Set in the environment of a libclang worker process (`worker::spawn`).
pub(super) const WORKER_ENV: &str = "ACC2OMP_LIBCLANG_WORKER";

/// Whether this process is a libclang worker.
pub(super) fn is_worker() -> bool {
    std::env::var_os(WORKER_ENV).is_some()
}

/// A loaded libclang.
pub struct Library {
    lib: Arc<SharedLibrary>,
    /// As libclang reports it: `19.1.7`.
    pub version: String,
    pub path: PathBuf,
    /// `-resource-dir` to pass (clang's builtin headers), when libclang would not find its own.
    pub resource_dir: Option<PathBuf>,
    /// Why LIBCLANG_PATH was passed over, when it was set and this library is not from it.
    pub note: Option<String>,
}

impl Library {
    /// Whether this libclang has an OpenACC front end (`-fopenacc`, clang 21 and newer).
    pub fn openacc(&self) -> bool {
        parse_version(&self.version)
            .first()
            .is_some_and(|&m| m >= 21)
    }
}

/// A library file found on disk, with the version its name or location suggests.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Candidate {
    path: PathBuf,
    version: Vec<u32>,
    wheel: bool,
    /// Found through LIBCLANG_PATH.
    env: bool,
}

fn parse_version(s: &str) -> Vec<u32> {
    s.split('.').map_while(|p| p.parse::<u32>().ok()).collect()
}

/// The version in a file name (`libclang-19.so.1` → 19, `libclang.so.18.1` → 18.1) or in a
/// parent directory (`/usr/lib/llvm-17/lib/libclang.so` → 17).
fn version_of(path: &Path) -> Vec<u32> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if let Some(rest) = name.strip_prefix("libclang-") {
        let v = parse_version(rest.split(".so").next().unwrap_or(""));
        if !v.is_empty() {
            return v;
        }
    }
    if let Some(rest) = name.strip_prefix("libclang.so.") {
        let v = parse_version(rest);
        if v.first().is_some_and(|&m| m > 3) {
            return v;
        }
    }
    for dir in path.ancestors().skip(1) {
        let d = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if let Some(rest) = d.strip_prefix("llvm-").or_else(|| d.strip_prefix("llvm")) {
            let v = parse_version(rest);
            if !v.is_empty() {
                return v;
            }
        }
    }
    Vec::new()
}

fn is_libclang_name(name: &str) -> bool {
    (name == "libclang.so" || name.starts_with("libclang.so.") || name.starts_with("libclang-"))
        && name.contains(".so")
        && !name.contains("-cpp")
        && !name.starts_with("libclang-rt")
}

fn libraries_in(dir: &Path, out: &mut Vec<Candidate>, wheel: bool) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    // Names first: a system directory holds thousands of files, and sorting their paths
    // was most of the search's work.
    let mut names: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_str().is_some_and(is_libclang_name))
        .map(|e| e.path())
        .collect();
    names.sort();
    for p in names {
        if p.is_file() {
            let version = version_of(&p);
            out.push(Candidate {
                path: p,
                version,
                wheel,
                env: false,
            });
        }
    }
}

/// Directories matching `prefix*suffix` under `parent` (a one-level glob).
fn glob_dirs(parent: &str, prefix: &str, suffix: &str) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(prefix))
        })
        .map(|e| e.path().join(suffix))
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

/// The output of `cmd args` (trimmed), when it succeeds within a minute: a first start of an
/// LLVM tool from a cold disk cache loads its shared libraries and has taken 14 s.
fn run(cmd: &str, args: &[&str]) -> Option<String> {
    let mut c = Command::new(cmd);
    c.args(args);
    let ran = super::children::run(&mut c, std::time::Duration::from_secs(60), 1 << 16).ok()?;
    ran.success
        .then(|| String::from_utf8_lossy(&ran.stdout).trim().to_string())
}

/// site-packages directories that may hold the `libclang` wheel, without running Python.
fn site_packages() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(v) = std::env::var_os(var) {
            roots.push(PathBuf::from(v).join("lib"));
        }
    }
    if let Some(home) = std::env::var_os("HOME") {
        let home = PathBuf::from(home);
        roots.push(home.join(".local/lib"));
        for v in glob_dirs(&home.join(".pyenv/versions").to_string_lossy(), "", "lib") {
            roots.push(v);
        }
    }
    roots.extend(["/usr/local/lib", "/usr/lib", "/opt/conda/lib"].map(PathBuf::from));
    let mut out = Vec::new();
    for r in roots {
        for py in glob_dirs(&r.to_string_lossy(), "python3", "") {
            for sub in ["site-packages", "dist-packages"] {
                let d = py.join(sub);
                if d.is_dir() {
                    out.push(d);
                }
            }
        }
    }
    out.push(PathBuf::from("/usr/lib/python3/dist-packages"));
    out
}

/// The wheel's library and version (`libclang-18.1.1.dist-info`).
fn wheel_in(site: &Path, out: &mut Vec<Candidate>) {
    let native = site.join("clang/native");
    let before = out.len();
    libraries_in(&native, out, true);
    if out.len() == before {
        return;
    }
    let version = std::fs::read_dir(site)
        .ok()
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_str()?.to_string();
            let v = n.strip_prefix("libclang-")?.strip_suffix(".dist-info")?;
            Some(parse_version(v))
        })
        .max()
        .unwrap_or_default();
    for c in &mut out[before..] {
        if c.version.is_empty() {
            c.version = version.clone();
        }
    }
}

/// Where the search looked: each directory (or file) in order, for the error message.
type Looked = Vec<String>;

fn candidates(looked: &mut Looked) -> Vec<Candidate> {
    let mut out = Vec::new();
    // LIBCLANG_PATH comes first, but a wrong one must not hide a library installed in the
    // usual places.
    if let Some(p) = std::env::var_os("LIBCLANG_PATH") {
        let p = PathBuf::from(p);
        looked.push(format!("LIBCLANG_PATH={}", p.display()));
        if p.is_file() {
            let version = version_of(&p);
            out.push(Candidate {
                path: p,
                version,
                wheel: false,
                env: false,
            });
        } else {
            libraries_in(&p, &mut out, false);
        }
    }
    for c in &mut out {
        c.env = true;
    }
    // A worker process is given the library that the command line chose, as a file: it
    // loads that one without searching again (the search ran `llvm-config` and read a
    // dozen directories, a tenth of the worker's own work on a large file).
    if is_worker() && out.len() == 1 && out[0].path.is_file() {
        return out;
    }
    if let Some(dir) = run("llvm-config", &["--libdir"]) {
        looked.push(format!("{dir} (llvm-config --libdir)"));
        libraries_in(Path::new(&dir), &mut out, false);
    }
    let mut dirs = glob_dirs("/usr/lib", "llvm-", "lib");
    dirs.extend(glob_dirs("/usr/local", "llvm", "lib"));
    dirs.extend(glob_dirs("/usr/lib", "", "").into_iter().filter(|d| {
        d.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with("-linux-gnu"))
    }));
    dirs.extend(["/usr/lib64", "/usr/lib", "/usr/local/lib"].map(PathBuf::from));
    looked.push("/usr/lib/llvm-*/lib, /usr/local/llvm*/lib, /usr/lib/*-linux-gnu, /usr/lib64, /usr/lib, /usr/local/lib".into());
    for d in dirs {
        libraries_in(&d, &mut out, false);
    }
    looked.push("the PyPI libclang wheel (clang/native in site-packages)".into());
    for site in site_packages() {
        wheel_in(&site, &mut out);
    }
    let has_wheel = out.iter().any(|c| c.wheel);
    if out.is_empty() && !has_wheel {
        // Last resort: ask Python where the wheel is.
        if let Some(dir) = run(
            "python3",
            &[
                "-c",
                "import clang, os; print(os.path.dirname(os.path.dirname(clang.__file__)))",
            ],
        ) {
            wheel_in(Path::new(&dir), &mut out);
        }
    }
    // Canonical paths: libclang finds its builtin headers relative to the real file.
    let mut seen = Vec::new();
    out.retain_mut(|c| {
        if let Ok(real) = c.path.canonicalize() {
            c.path = real;
        }
        if seen.contains(&c.path) {
            false
        } else {
            seen.push(c.path.clone());
            true
        }
    });
    // LIBCLANG_PATH's libraries first, then the newest; among equal versions the search
    // order decides.
    out.sort_by(|a, b| (b.env, &b.version).cmp(&(a.env, &a.version)));
    out
}

/// `-resource-dir` (clang's builtin headers) for a library that may not find its own: the
/// system clang of the same major version, or for the PyPI wheel (which ships none) the newest.
fn resource_dir(c: &Candidate) -> Option<PathBuf> {
    let mut found: Vec<(Vec<u32>, PathBuf)> = Vec::new();
    for root in ["/usr/lib", "/usr/local/lib"] {
        let mut parents = glob_dirs(root, "llvm", "lib/clang");
        parents.push(PathBuf::from(root).join("clang"));
        for p in parents {
            for d in glob_dirs(&p.to_string_lossy(), "", "") {
                let v = parse_version(&d.file_name()?.to_string_lossy());
                if d.join("include/stddef.h").is_file() {
                    found.push((v, d));
                }
            }
        }
    }
    found.sort();
    let major = c.version.first();
    let wheel = c.wheel || c.path.parent().is_some_and(|p| p.ends_with("clang/native"));
    let same = found
        .iter()
        .rev()
        .find(|(v, _)| v.first() == major && major.is_some());
    let own = c.path.parent().map(|l| l.join("clang")).is_some_and(|d| {
        glob_dirs(&d.to_string_lossy(), "", "include")
            .iter()
            .any(|i| i.join("stddef.h").is_file())
    });
    match same {
        Some((_, d)) => Some(d.clone()),
        None if wheel || !own => found.pop().map(|x| x.1),
        None => None,
    }
}

/// Functions the semantic layer calls; a library lacking one is not used.
fn has_required(lib: &SharedLibrary) -> bool {
    let f = &lib.functions;
    f.clang_createIndex.is_some()
        && f.clang_disposeIndex.is_some()
        && f.clang_parseTranslationUnit2.is_some()
        && f.clang_disposeTranslationUnit.is_some()
        && f.clang_getTranslationUnitCursor.is_some()
        && f.clang_visitChildren.is_some()
        && f.clang_getCursorKind.is_some()
        && f.clang_getCursorExtent.is_some()
        && f.clang_getCursorLocation.is_some()
        && f.clang_getRangeStart.is_some()
        && f.clang_getRangeEnd.is_some()
        && f.clang_getFileLocation.is_some()
        && f.clang_Location_isFromMainFile.is_some()
        && f.clang_getCursorReferenced.is_some()
        && f.clang_getCursorSpelling.is_some()
        && f.clang_getCString.is_some()
        && f.clang_disposeString.is_some()
        && f.clang_getCursorType.is_some()
        && f.clang_getCanonicalType.is_some()
        && f.clang_isConstQualifiedType.is_some()
        && f.clang_getArraySize.is_some()
        && f.clang_getArrayElementType.is_some()
        && f.clang_getPointeeType.is_some()
        && f.clang_Type_getSizeOf.is_some()
        && f.clang_getNumDiagnostics.is_some()
        && f.clang_getDiagnostic.is_some()
        && f.clang_getDiagnosticSeverity.is_some()
        && f.clang_getDiagnosticLocation.is_some()
        && f.clang_getDiagnosticSpelling.is_some()
        && f.clang_disposeDiagnostic.is_some()
        && f.clang_getFile.is_some()
        && f.clang_getSkippedRanges.is_some()
        && f.clang_disposeSourceRangeList.is_some()
        && f.clang_tokenize.is_some()
        && f.clang_getTokenKind.is_some()
        && f.clang_getTokenExtent.is_some()
        && f.clang_disposeTokens.is_some()
        && f.clang_getLocationForOffset.is_some()
        && f.clang_getRange.is_some()
        && f.clang_getClangVersion.is_some()
}

/// Load the library at `path` through clang-sys (which only takes `LIBCLANG_PATH`).
fn load_file(path: &Path) -> Result<SharedLibrary, String> {
    static ENV: Mutex<()> = Mutex::new(());
    let _guard = ENV.lock().unwrap_or_else(|e| e.into_inner());
    let previous = std::env::var_os("LIBCLANG_PATH");
    // SAFETY: this runs once per process (under `LOADED` and `ENV`), before any libclang
    // code exists to read the environment; Rust's own environment accesses are locked.
    unsafe { std::env::set_var("LIBCLANG_PATH", path) };
    let r = std::panic::catch_unwind(clang_sys::load_manually);
    // SAFETY: as above.
    unsafe {
        match previous {
            Some(v) => std::env::set_var("LIBCLANG_PATH", v),
            None => std::env::remove_var("LIBCLANG_PATH"),
        }
    }
    match r {
        Ok(r) => r,
        Err(_) => Err(format!("loading {} failed", path.display())),
    }
}

fn load() -> Result<Library, String> {
    let mut looked = Vec::new();
    let found = candidates(&mut looked);
    load_first(&found, &looked)
}

/// Load the first usable library of `found`; the error names every place in `looked`.
fn load_first(found: &[Candidate], looked: &[String]) -> Result<Library, String> {
    if found.is_empty() {
        return Err(format!(
            "libclang not found; looked in {}. Install it (Debian/Ubuntu: apt install libclang1-19; \
             or pip install libclang) or set LIBCLANG_PATH to its directory",
            looked.join("; ")
        ));
    }
    let mut errors = Vec::new();
    let env_set = std::env::var_os("LIBCLANG_PATH").is_some();
    for c in found {
        match load_file(&c.path) {
            Ok(lib) if has_required(&lib) => {
                let lib = Arc::new(lib);
                clang_sys::set_library(Some(lib.clone()));
                let version = version_string();
                let resource_dir = resource_dir(c);
                let mut notes = Vec::new();
                if env_set && !c.env {
                    let why = if errors.is_empty() {
                        "holds no libclang".to_string()
                    } else {
                        errors.join("; ")
                    };
                    notes.push(format!("LIBCLANG_PATH passed over: {why}"));
                }
                if c.wheel && resource_dir.is_none() {
                    // The wheel ships no builtin headers (stddef.h, stdarg.h ...).
                    notes.push(
                        "clang's builtin headers (lib/clang/N/include/stddef.h) were not found for the PyPI libclang wheel: install clang (e.g. apt install clang-19) so that files including <stddef.h> parse".into(),
                    );
                }
                return Ok(Library {
                    lib,
                    version,
                    path: c.path.clone(),
                    resource_dir,
                    note: (!notes.is_empty()).then(|| notes.join("; ")),
                });
            }
            Ok(_) => errors.push(format!("{}: too old", c.path.display())),
            Err(e) => errors.push(e),
        }
    }
    Err(format!(
        "libclang could not be loaded: {}; looked in {}",
        errors.join("; "),
        looked.join("; ")
    ))
}

/// `19.1.7` from `Ubuntu clang version 19.1.7 (++...)`.
fn version_string() -> String {
    let full = unsafe { super::clang::take_string(clang_sys::clang_getClangVersion()) };
    full.split_whitespace()
        .skip_while(|w| *w != "version")
        .nth(1)
        .unwrap_or(&full)
        .to_string()
}

/// The process-wide library, loaded on first use.
pub fn library() -> Result<&'static Library, &'static str> {
    static LOADED: OnceLock<Result<Library, String>> = OnceLock::new();
    LOADED.get_or_init(load).as_ref().map_err(|e| e.as_str())
}

struct ThreadIndex {
    lib: Arc<SharedLibrary>,
    index: CXIndex,
}

impl Drop for ThreadIndex {
    fn drop(&mut self) {
        // Through our own handle: clang-sys's thread-local library may be gone already.
        if let Some(dispose) = self.lib.functions.clang_disposeIndex {
            unsafe { dispose(self.index) };
        }
    }
}

thread_local! {
    static INDEX: RefCell<Option<ThreadIndex>> = const { RefCell::new(None) };
}

/// Run `f` with this thread's index (created on first use), libclang installed on the thread.
pub fn with_index<R>(f: impl FnOnce(&Library, CXIndex) -> R) -> Result<R, String> {
    let lib = library().map_err(str::to_string)?;
    if !clang_sys::is_loaded() {
        clang_sys::set_library(Some(lib.lib.clone()));
    }
    let index = INDEX.with(|slot| {
        let mut slot = slot.borrow_mut();
        if slot.is_none() {
            let index = unsafe { clang_sys::clang_createIndex(0, 0) };
            if index.is_null() {
                return None;
            }
            *slot = Some(ThreadIndex {
                lib: lib.lib.clone(),
                index,
            });
        }
        slot.as_ref().map(|t| t.index)
    });
    match index {
        Some(ix) => Ok(f(lib, ix)),
        None => Err("libclang could not create an index".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_say_where_the_search_looked() {
        let looked = vec!["LIBCLANG_PATH=/x".to_string(), "/usr/lib/llvm-*/lib".into()];
        let e = load_first(&[], &looked).err().unwrap_or_default();
        assert!(
            e.starts_with("libclang not found; looked in LIBCLANG_PATH=/x; /usr/lib/llvm-*/lib.")
                && e.contains("apt install libclang1-19"),
            "{e}"
        );
        let d = tempfile::tempdir().unwrap();
        let fake = d.path().join("libclang-99.so");
        std::fs::write(&fake, "not a library").unwrap();
        let c = Candidate {
            version: version_of(&fake),
            path: fake,
            wheel: false,
            env: true,
        };
        let e = load_first(&[c], &looked).err().unwrap_or_default();
        assert!(
            e.starts_with("libclang could not be loaded: ")
                && e.contains("libclang-99.so")
                && e.ends_with("looked in LIBCLANG_PATH=/x; /usr/lib/llvm-*/lib"),
            "{e}"
        );
    }

    /// The libraries of a directory: those a sort of all its paths, then a look at each
    /// name, finds, in that order.
    #[test]
    fn libraries_in_a_directory_as_before() {
        let d = tempfile::tempdir().unwrap();
        let names = [
            "libclang-cpp.so.19",
            "libclang.so.18.1",
            "libc.so.6",
            "libclang-19.so.1",
            "libclang.so",
            "libclang-rt.so",
            "libclang.a",
            "libclang-17.so",
            "libclangBasic.so",
        ];
        for n in names {
            std::fs::write(d.path().join(n), "").unwrap();
        }
        std::fs::create_dir(d.path().join("libclang-20.so")).unwrap();
        let mut old: Vec<PathBuf> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        old.sort();
        old.retain(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(is_libclang_name)
                && p.is_file()
        });
        let mut out = Vec::new();
        libraries_in(d.path(), &mut out, false);
        let new: Vec<PathBuf> = out.into_iter().map(|c| c.path).collect();
        assert_eq!(new, old);
        assert_eq!(new.len(), 4);
    }

    #[test]
    fn versions_from_names_and_directories() {
        assert_eq!(version_of(Path::new("/x/libclang-19.so.1")), vec![19]);
        assert_eq!(
            version_of(Path::new("/x/libclang-14.0.6.so")),
            vec![14, 0, 6]
        );
        assert_eq!(version_of(Path::new("/x/libclang.so.18.1")), vec![18, 1]);
        assert_eq!(
            version_of(Path::new("/usr/lib/llvm-17/lib/libclang.so.1")),
            vec![17]
        );
        assert!(version_of(Path::new("/opt/libclang.so")).is_empty());
        assert!(is_libclang_name("libclang-19.so.1") && is_libclang_name("libclang.so"));
        assert!(!is_libclang_name("libclang-cpp.so.19.1") && !is_libclang_name("libclang.a"));
    }
}
