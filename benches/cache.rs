//! The result cache's figures (`cargo bench --bench cache`): the release CLI over a tree of
//! `ACC2OMP_BENCH_FILES` files (default 1000, the bundled programs and fixture inputs
//! repeated), with libclang, once with an empty cache and again over the unchanged tree, and
//! again after one header changed. Figures only: nothing here asserts a time, because the
//! machines are shared and noisy.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn sources(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dir in ["fixtures/programs", "fixtures/translate"] {
        for e in walk(&root.join(dir)) {
            let name = e.file_name().unwrap().to_string_lossy().to_string();
            let is_input = dir == "fixtures/programs" || name.starts_with("input.");
            let ext = e.extension().map(|x| x.to_string_lossy().to_string());
            if is_input
                && matches!(ext.as_deref(), Some("c" | "cpp" | "cc"))
                && let Ok(text) = std::fs::read_to_string(&e)
            {
                out.push((ext.unwrap(), text));
            }
        }
    }
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// One run over `tree` with the cache in `cache`: wall seconds and the summary line.
fn run(tree: &Path, cache: &Path) -> (f64, String) {
    let start = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_acc2omp"))
        .arg("migrate")
        .arg(tree)
        .arg("--cache-dir")
        .arg(cache)
        .arg("-v")
        .output()
        .expect("run acc2omp");
    let t = start.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("acc2omp: cache") || l.starts_with("acc2omp: using"))
        .collect();
    (t, lines.join("\n  "))
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let want: usize = std::env::var("ACC2OMP_BENCH_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let base = sources(root);
    assert!(!base.is_empty(), "no corpus sources found");
    let tmp = tempfile::tempdir().expect("tempdir");
    let tree = tmp.path().join("tree");
    let header = tree.join("common.h");
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::write(&header, "typedef double real_t;\n").unwrap();
    for i in 0..want {
        let (ext, text) = &base[i % base.len()];
        let dir = tree.join(format!("d{:03}", i / 100));
        std::fs::create_dir_all(&dir).unwrap();
        // Every tenth file includes the shared header.
        let text = if i % 10 == 0 {
            format!("#include \"../common.h\"\n{text}")
        } else {
            text.clone()
        };
        std::fs::write(dir.join(format!("f{i:05}.{ext}")), text).unwrap();
    }
    let cache = tmp.path().join("cache");
    println!("tree: {want} files");
    let (first, info) = run(&tree, &cache);
    println!("first run (empty cache): {first:.2} s\n  {info}");
    let (second, info) = run(&tree, &cache);
    println!(
        "second run (unchanged tree): {second:.3} s, {:.1}% of the first\n  {info}",
        100.0 * second / first
    );
    std::fs::write(&header, "typedef float real_t;\n").unwrap();
    let (third, info) = run(&tree, &cache);
    println!(
        "after a header change: {third:.2} s, {:.1}% of the first\n  {info}",
        100.0 * third / first
    );
    let size: u64 = walk(&cache)
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    println!("cache size: {:.1} MiB", size as f64 / 1048576.0);
}
