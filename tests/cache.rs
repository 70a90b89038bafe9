//! The result cache: a run that reads translations back prints and writes exactly what a run
//! without the cache does, in every output format; a change to a header, a compile flag, the
//! configuration or a rules file is seen; a damaged or hostile cache directory is a miss,
//! never a failure or a hang.

mod common;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const DEFS_POINTER: &str =
    "#ifdef VEC_ARRAY\ntypedef double vec[100];\n#else\ntypedef double *vec;\n#endif\n";
const DEFS_ARRAY: &str = "typedef double vec[100];\n";

const A_C: &str = r#"#include "defs.h"
vec x;
void f(int n) {
  #pragma acc parallel loop
  for (int i = 0; i < n; i++) x[i] = i;
}
"#;

const B_C: &str = r#"#include <stdlib.h>
void g(int n, double *y) {
  #pragma acc parallel loop bogus(y) copy(y[0:n])
  for (int i = 0; i < n; i++) y[i] = 0;
  #pragma acc kernels copy(y[0:n]) // NOLINT(acc2omp-kernels-sequential)
  for (int i = 1; i < n; i++) y[i] += y[i - 1];
  #pragma acc data copy(y[0:n])
  {
    #pragma acc parallel loop
    for (int i = 0; i < n; i++) y[i] *= 2;
  }
  void *p = acc_malloc(8);
  acc_free(p);
}
"#;

/// A small project: a header whose type changes the facts (pointer or array, chosen by a
/// flag of the compilation database), a configuration, a rules file.
fn project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    fs::create_dir_all(p.join("src")).unwrap();
    fs::create_dir_all(p.join("include")).unwrap();
    fs::write(p.join("include/defs.h"), DEFS_POINTER).unwrap();
    fs::write(p.join("src/a.c"), A_C).unwrap();
    fs::write(p.join("src/b.c"), B_C).unwrap();
    fs::write(p.join("src/c.c"), B_C.replace("bogus(y) ", "")).unwrap();
    database(p, "-DOTHER");
    fs::write(p.join("acc2omp.toml"), "rules = \"rules.toml\"\n").unwrap();
    rules(p, "warning");
    d
}

fn database(p: &Path, flag: &str) {
    let dir = p.display();
    let db = format!(
        r#"[{{"directory": "{dir}", "arguments": ["cc", "-Iinclude", "{flag}", "-c", "src/a.c"], "file": "src/a.c"}}]"#
    );
    fs::write(p.join("compile_commands.json"), db).unwrap();
}

fn rules(p: &Path, severity: &str) {
    let text = format!("[[rule]]\nid = \"implicit-pointer\"\nseverity = \"{severity}\"\n");
    fs::write(p.join("rules.toml"), text).unwrap();
}

/// The binary in `dir` with the cache in `cache` (None: `--no-cache`).
fn acc2omp(dir: &Path, cache: Option<&Path>, args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_acc2omp"));
    c.current_dir(dir).arg("migrate").args(args);
    c.env_remove("ACC2OMP_NO_CACHE")
        .env_remove("ACC2OMP_CACHE_DIR");
    match cache {
        Some(dir) => c.arg("--cache-dir").arg(dir),
        None => c.arg("--no-cache"),
    };
    c.output().unwrap()
}

/// What a run shows: its status, standard output and error (but the line `-v` prints about
/// the cache itself).
fn shown(o: &Output) -> String {
    let err: String = String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| !l.starts_with("acc2omp: cache "))
        .map(|l| format!("{l}\n"))
        .collect();
    format!(
        "status {:?}\n--- stdout\n{}--- stderr\n{err}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
    )
}

/// Files read back and files translated in a run with the cache in `cache`.
fn hits(dir: &Path, cache: &Path, args: &[&str]) -> (usize, usize) {
    let mut all = args.to_vec();
    all.push("-v");
    let o = acc2omp(dir, Some(cache), &all);
    let err = String::from_utf8_lossy(&o.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("acc2omp: cache "))
        .unwrap_or_else(|| panic!("no cache line:\n{err}"));
    let n: Vec<usize> = line
        .split(": ")
        .last()
        .unwrap()
        .split(' ')
        .filter_map(|w| w.parse().ok())
        .collect();
    (n[0], n[1])
}

/// The libclang-backed mode where libclang loads (else syntactic, loudly), and syntactic.
fn modes() -> Vec<&'static [&'static str]> {
    let mut m: Vec<&[&str]> = vec![&["--no-clang"]];
    if common::libclang("the result cache with libclang") {
        m.push(&[]);
    }
    m
}

#[test]
fn cached_runs_print_and_write_what_uncached_runs_do() {
    let d = project();
    let p = d.path();
    let out = |name: &str| p.join("out").join(name);
    fs::create_dir_all(p.join("out")).unwrap();
    let formats = ["text", "concise", "json", "json-lines", "sarif", "github"];
    let mut cases: Vec<Vec<String>> = Vec::new();
    for f in formats {
        cases.push(vec!["--output-format".into(), f.into()]);
        if f != "sarif" {
            cases.push(vec![
                "--output-format".into(),
                f.into(),
                "--statistics".into(),
            ]);
        }
        cases.push(vec![
            "--output-format".into(),
            f.into(),
            "-o".into(),
            out(f).display().to_string(),
        ]);
    }
    cases.push(vec!["--diff".into()]);
    cases.push(vec!["--check".into()]);
    cases.push(vec!["-v".into()]);
    cases.push(vec!["--emit".into(), "dual".into(), "--diff".into()]);
    cases.push(vec!["--profile".into(), "loop".into(), "--diff".into()]);
    cases.push(vec![
        "--export-fixes".into(),
        out("fixes.yaml").display().to_string(),
    ]);
    cases.push(vec![
        "--report".into(),
        out("report.md").display().to_string(),
    ]);
    cases.push(vec![
        "--report".into(),
        out("report.html").display().to_string(),
    ]);
    for mode in modes() {
        let cache = tempfile::tempdir().unwrap();
        for case in &cases {
            let mut args: Vec<&str> = case.iter().map(String::as_str).collect();
            args.extend(mode.iter().copied());
            let files = |_: ()| -> Vec<(String, Vec<u8>)> {
                let mut v: Vec<_> = fs::read_dir(p.join("out"))
                    .unwrap()
                    .map(|e| {
                        let e = e.unwrap();
                        (
                            e.file_name().to_string_lossy().into_owned(),
                            fs::read(e.path()).unwrap(),
                        )
                    })
                    .collect();
                v.sort();
                v
            };
            let plain = shown(&acc2omp(p, None, &args));
            let plain_files = files(());
            let cold = shown(&acc2omp(p, Some(cache.path()), &args));
            let cold_files = files(());
            let (read_back, total) = hits(p, cache.path(), &args);
            assert_eq!(read_back, total, "{args:?}: not every file read back");
            let warm = shown(&acc2omp(p, Some(cache.path()), &args));
            assert_eq!(plain, cold, "{args:?}: first run with the cache");
            assert_eq!(plain, warm, "{args:?}: run reading the cache");
            assert_eq!(plain_files, cold_files, "{args:?}");
            assert_eq!(plain_files, files(()), "{args:?}");
        }
        // --write: the same bytes written from a translation read back.
        let originals: Vec<(String, String)> = ["src/a.c", "src/b.c", "src/c.c"]
            .iter()
            .map(|f| (f.to_string(), fs::read_to_string(p.join(f)).unwrap()))
            .collect();
        let restore = || {
            for (f, t) in &originals {
                fs::write(p.join(f), t).unwrap();
            }
        };
        let written = || -> Vec<String> {
            originals
                .iter()
                .map(|(f, _)| fs::read_to_string(p.join(f)).unwrap())
                .collect()
        };
        let mut args = vec!["--write", "--emit", "omp-acc"];
        args.extend(mode.iter().copied());
        let plain = shown(&acc2omp(p, None, &args));
        let plain_files = written();
        restore();
        assert_eq!(
            hits(p, cache.path(), &args[1..]).0,
            0,
            "a new mode is a new key"
        );
        let warm = shown(&acc2omp(p, Some(cache.path()), &args));
        assert_eq!(plain, warm);
        assert_eq!(plain_files, written());
        restore();
    }
}

/// Runs over the project in its current state: with the cache (which must not read back
/// `a.c`) and without, which must agree; returns what they showed.
fn rerun_after_change(p: &Path, cache: &Path, args: &[&str], what: &str) -> String {
    let (read_back, total) = hits(p, cache, args);
    assert!(read_back < total, "{what}: every file was read back");
    let cached = shown(&acc2omp(p, Some(cache), args));
    assert_eq!(cached, shown(&acc2omp(p, None, args)), "{what}");
    cached
}

#[test]
fn a_changed_header_flag_configuration_or_rules_file_is_seen() {
    if !common::libclang("the result cache's headers") {
        return;
    }
    let d = project();
    let p = d.path();
    let cache = tempfile::tempdir().unwrap();
    let args = ["src/a.c", "src/b.c"];
    let first = shown(&acc2omp(p, Some(cache.path()), &args));
    assert!(first.contains("pointer 'x'"), "{first}");
    assert_eq!(hits(p, cache.path(), &args), (2, 2));
    // The header: x becomes an array (no implicit-pointer warning).
    fs::write(p.join("include/defs.h"), DEFS_ARRAY).unwrap();
    let after = rerun_after_change(p, cache.path(), &args, "header");
    assert!(!after.contains("pointer 'x'"), "{after}");
    assert_eq!(hits(p, cache.path(), &args), (2, 2));
    // A flag of the compilation database, with the header back.
    fs::write(p.join("include/defs.h"), DEFS_POINTER).unwrap();
    assert_eq!(shown(&acc2omp(p, Some(cache.path()), &args)), first);
    database(p, "-DVEC_ARRAY");
    let after = rerun_after_change(p, cache.path(), &args, "compile flag");
    assert!(!after.contains("pointer 'x'"), "{after}");
    database(p, "-DOTHER");
    assert_eq!(shown(&acc2omp(p, Some(cache.path()), &args)), first);
    // The rules file: the warning becomes an error.
    rules(p, "error");
    let after = rerun_after_change(p, cache.path(), &args, "rules file");
    assert!(after.contains("error: pointer 'x'"), "{after}");
    rules(p, "warning");
    // The configuration: another profile.
    fs::write(
        p.join("acc2omp.toml"),
        "rules = \"rules.toml\"\nprofile = \"loop\"\n",
    )
    .unwrap();
    let after = rerun_after_change(
        p,
        cache.path(),
        &["src/a.c", "src/b.c", "--diff"],
        "configuration",
    );
    assert!(after.contains("target teams loop"), "{after}");
}

#[test]
fn a_damaged_or_hostile_cache_is_a_miss() {
    let d = project();
    let p = d.path();
    let args = ["--no-clang", "--diff"];
    let expected = shown(&acc2omp(p, None, &args));
    let cache = tempfile::tempdir().unwrap();
    let c = cache.path();
    assert_eq!(shown(&acc2omp(p, Some(c), &args)), expected);
    let entries: Vec<std::path::PathBuf> = walk(&c.join("migrate-v2"));
    assert_eq!(entries.len(), 4, "{entries:?}");
    let damage: [&dyn Fn(&Path); 8] = [
        // Truncated, a byte flipped, empty, garbage.
        &|e| {
            let b = fs::read(e).unwrap();
            fs::write(e, &b[..b.len() / 2]).unwrap()
        },
        &|e| {
            let mut b = fs::read(e).unwrap();
            let k = b.len() - 40;
            b[k] ^= 1;
            fs::write(e, b).unwrap()
        },
        &|e| fs::write(e, b"").unwrap(),
        &|e| fs::write(e, vec![0xff; 100_000]).unwrap(),
        // A FIFO (opening it to read would block), a directory, links to a device and to
        // nowhere.
        &|e| {
            fs::remove_file(e).unwrap();
            let name = std::ffi::CString::new(e.as_os_str().as_encoded_bytes()).unwrap();
            assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        },
        &|e| {
            fs::remove_file(e).unwrap();
            fs::create_dir(e).unwrap()
        },
        &|e| {
            fs::remove_file(e).unwrap();
            std::os::unix::fs::symlink("/dev/zero", e).unwrap()
        },
        &|e| {
            fs::remove_file(e).unwrap();
            std::os::unix::fs::symlink("/nonexistent", e).unwrap()
        },
    ];
    for (k, harm) in damage.iter().enumerate() {
        let cache = tempfile::tempdir().unwrap();
        let c = cache.path();
        acc2omp(p, Some(c), &args);
        for e in walk(&c.join("migrate-v2")) {
            harm(&e);
        }
        let start = Instant::now();
        assert_eq!(shown(&acc2omp(p, Some(c), &args)), expected, "damage {k}");
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "damage {k}: too slow"
        );
    }
    // The cache directory is a file, or cannot be written.
    let f = cache.path().join("file");
    fs::write(&f, "").unwrap();
    assert_eq!(shown(&acc2omp(p, Some(&f), &args)), expected);
    // An entry another file's key would find is not taken for it: entries name their key.
    let cache = tempfile::tempdir().unwrap();
    let c = cache.path();
    acc2omp(p, Some(c), &args);
    let entries = walk(&c.join("migrate-v2"));
    let one = fs::read(&entries[0]).unwrap();
    for e in &entries[1..] {
        fs::write(e, &one).unwrap();
    }
    assert_eq!(shown(&acc2omp(p, Some(c), &args)), expected);
}

/// Regular files under `dir` (entries), sorted.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = e.path();
        if e.file_type().unwrap().is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

#[test]
fn concurrent_runs_share_a_cache() {
    let d = project();
    let p = d.path();
    let args = ["--no-clang", "--diff"];
    let expected = shown(&acc2omp(p, None, &args));
    let cache = tempfile::tempdir().unwrap();
    for _ in 0..3 {
        let runs: Vec<_> = (0..6)
            .map(|_| {
                let mut c = Command::new(env!("CARGO_BIN_EXE_acc2omp"));
                c.current_dir(p)
                    .arg("migrate")
                    .args(args)
                    .arg("--cache-dir")
                    .arg(cache.path())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped());
                c.spawn().unwrap()
            })
            .collect();
        for r in runs {
            assert_eq!(shown(&r.wait_with_output().unwrap()), expected);
        }
    }
    // No temporary file is left.
    let left: Vec<_> = walk(&cache.path().join("migrate-v2"))
        .into_iter()
        .filter(|e| e.file_name().unwrap().to_string_lossy().starts_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn the_cache_directory_ignores_itself_and_clean_removes_it() {
    let d = project();
    let p = d.path();
    let git = |args: &[&str]| {
        Command::new("git")
            .current_dir(p)
            .args(args)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let has_git = git(&["init", "-q"]).is_ok();
    // Chosen in the configuration, relative to it.
    fs::write(
        p.join("acc2omp.toml"),
        "rules = \"rules.toml\"\ncache-dir = \".acc2omp_cache\"\n",
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_acc2omp"))
        .current_dir(p)
        .args(["migrate", "--no-clang", "-v"])
        .env_remove("ACC2OMP_CACHE_DIR")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(".acc2omp_cache: 0 of 4 file(s) read back"),
        "{err}"
    );
    let cache = p.join(".acc2omp_cache");
    assert_eq!(fs::read_to_string(cache.join(".gitignore")).unwrap(), "*\n");
    assert!(
        fs::read_to_string(cache.join("CACHEDIR.TAG"))
            .unwrap()
            .starts_with("Signature: 8a477f597d28d172789f06886806bc55")
    );
    if has_git {
        let status = git(&["status", "--porcelain", "--untracked-files=all"]).unwrap();
        assert!(!status.contains("acc2omp_cache"), "{status}");
    }
    // `--no-cache` neither reads nor writes it.
    fs::remove_dir_all(&cache).unwrap();
    let o = acc2omp(p, None, &["--no-clang", "-v"]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("acc2omp: cache"));
    assert!(!cache.exists());
    // `acc2omp clean` finds it as `migrate` does, and removes it.
    Command::new(env!("CARGO_BIN_EXE_acc2omp"))
        .current_dir(p)
        .args(["migrate", "--no-clang", "-q"])
        .env_remove("ACC2OMP_CACHE_DIR")
        .output()
        .unwrap();
    assert!(cache.join("migrate-v2").is_dir());
    let o = Command::new(env!("CARGO_BIN_EXE_acc2omp"))
        .current_dir(p)
        .arg("clean")
        .env_remove("ACC2OMP_CACHE_DIR")
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("removed the cache"));
    assert!(!cache.exists());
    // A directory holding other files keeps them.
    let other = tempfile::tempdir().unwrap();
    fs::write(other.path().join("keep"), "").unwrap();
    acc2omp(p, Some(other.path()), &["--no-clang", "-q"]);
    let o = Command::new(env!("CARGO_BIN_EXE_acc2omp"))
        .args(["clean", "--cache-dir"])
        .arg(other.path())
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(other.path().join("keep").exists() && !other.path().join("migrate-v2").exists());
}
