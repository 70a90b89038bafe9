//! Throughput and memory figures (`cargo bench --bench throughput`).
//!
//! Builds a corpus from the bundled programs and fixture inputs (repeated until it holds
//! `ACC2OMP_BENCH_FILES` files, default 2000, plus as many files without OpenACC), then reports:
//! in-process scan+translate speed per file in syntactic mode, and the wall time and peak RSS
//! of the release CLI over the whole tree with `--no-clang` and with libclang (without the
//! result cache: `cargo bench --bench cache` measures it).
//! Figures only: nothing here asserts a time, because the machines are shared and noisy.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use acc2omp::semantic::SemanticConfig;
use acc2omp::{Options, migrate_source};

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
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Runs the command; returns its stderr and its peak resident set in KiB, read from the
/// monotonic high-water mark `VmHWM` of `/proc/PID/status` until the process exits.
fn run_measured(cmd: &mut Command) -> (String, u64) {
    use std::io::Read;
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run acc2omp");
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    while child.try_wait().expect("wait").is_none() {
        if let Ok(st) = std::fs::read_to_string(&status) {
            for l in st.lines().filter(|l| l.starts_with("VmHWM:")) {
                let kib = l.split_whitespace().nth(1).and_then(|v| v.parse().ok());
                peak = peak.max(kib.unwrap_or(0));
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    (reader.join().unwrap(), peak)
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let want: usize = std::env::var("ACC2OMP_BENCH_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let base = sources(root);
    assert!(!base.is_empty(), "no corpus sources found");

    let tmp = tempfile::tempdir().expect("tempdir");
    let mut bytes = 0usize;
    let mut corpus = Vec::with_capacity(want);
    for i in 0..want {
        let (ext, text) = &base[i % base.len()];
        let dir = tmp.path().join(format!("d{:03}", i / 100));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(format!("f{i:05}.{ext}"));
        std::fs::write(&p, text).unwrap();
        // A file without OpenACC beside each one: the walk and the fast path are measured too.
        let plain = text.replace("acc", "xcc");
        std::fs::write(dir.join(format!("plain{i:05}.{ext}")), &plain).unwrap();
        bytes += text.len() + plain.len();
        corpus.push((p, text.clone()));
    }
    let mib = bytes as f64 / (1024.0 * 1024.0);
    println!(
        "corpus: {} files ({} with OpenACC), {:.1} MiB",
        2 * want,
        want,
        mib
    );

    // In-process, one thread, syntactic mode: the cost of our own pipeline.
    let opts = Options::default();
    let sem = SemanticConfig::syntactic();
    let start = Instant::now();
    let mut sites = 0usize;
    for (p, text) in &corpus {
        sites += migrate_source(text, Some(p), &opts, &sem).sites;
    }
    let t = start.elapsed().as_secs_f64();
    let acc_mib = corpus.iter().map(|(_, t)| t.len()).sum::<usize>() as f64 / 1048576.0;
    println!(
        "in-process syntactic: {:.3} s, {:.0} files/s, {:.1} MiB/s, {:.0} directives/s",
        t,
        corpus.len() as f64 / t,
        acc_mib / t,
        sites as f64 / t
    );

    // The CLI over the whole tree (walk, parallel workers, diff output).
    let exe = env!("CARGO_BIN_EXE_acc2omp");
    for (label, extra) in [("--no-clang", vec!["--no-clang"]), ("libclang", vec![])] {
        let start = Instant::now();
        let (stderr, peak_kib) = run_measured(
            Command::new(exe)
                .arg("migrate")
                .arg(tmp.path())
                .arg("--diff")
                .arg("--no-cache")
                .args(&extra),
        );
        let t = start.elapsed().as_secs_f64();
        let summary = stderr
            .lines()
            .rev()
            .find(|l| l.starts_with("acc2omp:"))
            .unwrap_or("")
            .to_string();
        println!(
            "cli {label}: {:.2} s wall, {:.0} files/s, {:.1} MiB/s, peak RSS {} MiB",
            t,
            (2 * want) as f64 / t,
            mib / t,
            peak_kib / 1024
        );
        println!("  {summary}");
    }
}
