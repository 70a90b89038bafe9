//! GCC 12's OpenACC tests, fetched on first use: Debian's `gcc-12-source` package is
//! downloaded with `apt-get download` into a cache directory outside the repository and only
//! the members the suite reads are extracted. Nothing of it is ever committed.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Members of `gcc-12.2.0-dfsg.tar.xz` the suite reads.
const MEMBERS: &[&str] = &[
    "gcc-12.2.0/libgomp/testsuite/libgomp.oacc-c",
    "gcc-12.2.0/libgomp/testsuite/libgomp.oacc-c++",
    "gcc-12.2.0/libgomp/testsuite/libgomp.oacc-c-c++-common",
    "gcc-12.2.0/libgomp/testsuite/libgomp.oacc-fortran",
    "gcc-12.2.0/gcc/testsuite/c-c++-common/goacc",
    "gcc-12.2.0/gcc/testsuite/gcc.dg/goacc",
    "gcc-12.2.0/gcc/testsuite/g++.dg/goacc",
    "gcc-12.2.0/gcc/testsuite/gfortran.dg/goacc",
    "gcc-12.2.0/include/gomp-constants.h",
];

const INNER: &str = "usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz";

/// `$ACC2OMP_CACHE_DIR`, else `$XDG_CACHE_HOME/acc2omp`, else `~/.cache/acc2omp`.
pub fn cache_root() -> PathBuf {
    if let Some(d) = std::env::var_os("ACC2OMP_CACHE_DIR") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("acc2omp");
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into());
    PathBuf::from(home).join(".cache/acc2omp")
}

/// The extracted `gcc-12.2.0` tree, downloading and extracting it when missing.
pub fn tree() -> Result<PathBuf, String> {
    let dir = cache_root().join("gcc-12-source");
    let root = dir.join("gcc-12.2.0");
    let complete = || MEMBERS.iter().all(|m| dir.join(m).exists());
    if complete() {
        return Ok(root);
    }
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    eprintln!(
        "conformance: fetching GCC 12's tests into {} (once)",
        dir.display()
    );
    let inner = dir.join(INNER);
    if !inner.exists() {
        let deb = match find_deb(&dir) {
            Some(d) => d,
            None => {
                sh(
                    Command::new("apt-get")
                        .args(["download", "gcc-12-source"])
                        .current_dir(&dir),
                    "apt-get download gcc-12-source (run `apt-get update` first if the package is unknown)",
                )?;
                find_deb(&dir).ok_or("apt-get download left no .deb")?
            }
        };
        sh(
            Command::new("sh").arg("-c").arg(format!(
                "dpkg-deb --fsys-tarfile '{}' | tar -x -C '{}' './{INNER}'",
                deb.display(),
                dir.display()
            )),
            "extracting the GCC tarball from the package",
        )?;
        let _ = fs::remove_file(&deb);
    }
    sh(
        Command::new("tar")
            .arg("-xJf")
            .arg(&inner)
            .arg("-C")
            .arg(&dir)
            .args(MEMBERS),
        "extracting the tests from the GCC tarball",
    )?;
    let _ = fs::remove_dir_all(dir.join("usr"));
    if complete() {
        Ok(root)
    } else {
        Err(format!("{}: extraction incomplete", dir.display()))
    }
}

fn find_deb(dir: &Path) -> Option<PathBuf> {
    fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("gcc-12-source_"))
                && p.extension().is_some_and(|e| e == "deb")
        })
}

fn sh(cmd: &mut Command, what: &str) -> Result<(), String> {
    let o = cmd.output().map_err(|e| format!("{what}: {e}"))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed:\n{}",
            String::from_utf8_lossy(&o.stderr)
        ))
    }
}
