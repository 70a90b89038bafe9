//! The build id: a hash of the sources the binary is built from, so that the result cache
//! (`src/cache.rs`) never reuses what another build of the same version computed.

use std::hash::Hasher;
use std::path::Path;

fn add(h: &mut std::hash::DefaultHasher, path: &Path) {
    if path.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for e in entries {
            add(h, &e);
        }
    } else if let Ok(bytes) = std::fs::read(path) {
        h.write(path.to_string_lossy().as_bytes());
        h.write_usize(bytes.len());
        h.write(&bytes);
    }
}

fn main() {
    let inputs = ["src", "rules", "build.rs", "Cargo.toml", "Cargo.lock"];
    let mut h = std::hash::DefaultHasher::new();
    for i in inputs {
        println!("cargo:rerun-if-changed={i}");
        add(&mut h, Path::new(i));
    }
    println!("cargo:rustc-env=ACC2OMP_BUILD_ID={:016x}", h.finish());
}
