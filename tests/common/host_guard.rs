//! The host-address guard (`host_guard.c`, preloaded): under Clang's host offloading a target
//! region that dereferences a host pointer reads the host's memory and passes, where a GPU
//! stops with an illegal memory access. With the guard, the heap memory the program allocates
//! is inaccessible while a target region runs, so such a region dies of SIGSEGV.

use super::cache;
use std::fs;
use std::process::Command;
use std::sync::OnceLock;

/// The guard library, built once (gcc) in the test cache.
pub fn library() -> Result<&'static str, String> {
    static LIB: OnceLock<Result<String, String>> = OnceLock::new();
    LIB.get_or_init(|| {
        let source = include_str!("host_guard.c");
        let flags = ["-O2", "-shared", "-fPIC"];
        let key = cache::digest(&[source.as_bytes(), flags.join(" ").as_bytes()]);
        let lib = cache::dir("host-guard").join(format!("{}.so", &key[..16]));
        if !lib.exists() {
            let tmp = lib.with_extension(format!("tmp{}", std::process::id()));
            let src = tmp.with_extension("c");
            fs::write(&src, source).map_err(|e| e.to_string())?;
            let o = Command::new("gcc")
                .args(flags)
                .arg(&src)
                .arg("-o")
                .arg(&tmp)
                .arg("-ldl")
                .output()
                .map_err(|e| format!("gcc: {e}"))?;
            let _ = fs::remove_file(&src);
            if !o.status.success() {
                return Err(format!(
                    "gcc cannot build the host guard:\n{}",
                    String::from_utf8_lossy(&o.stderr)
                ));
            }
            fs::rename(&tmp, &lib).map_err(|e| e.to_string())?;
        }
        Ok(lib.to_string_lossy().into_owned())
    })
    .as_ref()
    .map(String::as_str)
    .map_err(Clone::clone)
}

/// The environment that preloads the guard.
pub fn env() -> Result<(&'static str, &'static str), String> {
    Ok(("LD_PRELOAD", library()?))
}
