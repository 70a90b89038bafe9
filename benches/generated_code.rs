//! Speed of the generated code (`cargo bench --bench generated_code`).
//!
//! Each program in `benches/programs/` is built from the original with `gcc -O2 -fopenacc`
//! (the sequential host reference) and, translated in each profile, with `clang-19 -O2
//! -fopenmp` (host, no offload) and `gcc -O2 -fopenmp`; optionally also with Clang's host
//! offloading. Every build runs `ACC2OMP_BENCH_RUNS` times (default 3) with
//! `OMP_NUM_THREADS=2`; the output must equal the reference's, and the median wall time, the
//! median CPU time (user + system) and the ratio translated/original are printed.
//! Figures only: nothing here asserts a time, because the machines are shared and noisy; the
//! load average is printed before and after.
//!
//! Environment:
//! - `ACC2OMP_BENCH_RUNS=N` runs per build (median reported).
//! - `ACC2OMP_BENCH_PROGRAMS=word,word` only programs whose names contain a word.
//! - `ACC2OMP_BENCH_PROFILES=default,clacc` profiles (default: all).
//! - `ACC2OMP_BENCH_THREADS=N` threads (default 2).
//! - `ACC2OMP_BENCH_OFFLOAD=1` adds `clang-19 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu`.
//! - `ACC2OMP_BENCH_EXTRA=DIR` adds hand-written translations `DIR/<program>.<label>.c`.
//! - `ACC2OMP_BENCH_ARGS="..."` extra `migrate` arguments (e.g. `--assume-independent`).
//! - `ACC2OMP_BENCH_TIMEOUT=S` seconds after which a run is stopped (default: 30 times the
//!   reference, at least 20 s); the build is then reported as `timeout`.
//!
//! Exit status 1 when an output differs from the reference's.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const OFFLOAD_ENV: [(&str, &str); 2] = [
    ("LD_LIBRARY_PATH", "/usr/lib/llvm-19/lib"),
    ("LIBOMP_USE_HIDDEN_HELPER_TASK", "0"),
];

struct Build {
    label: String,
    exe: PathBuf,
    offload: bool,
}

/// Median wall and CPU seconds of `runs` runs, and the output of the first.
struct Timing {
    wall: f64,
    cpu: Option<f64>,
    stdout: String,
}

fn env_list(name: &str) -> Option<Vec<String>> {
    std::env::var(name).ok().map(|v| {
        v.split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn compile(cc: &str, flags: &[&str], src: &Path, out: &Path) -> Result<(), String> {
    let o = Command::new(cc)
        .args(flags)
        .arg(src)
        .arg("-o")
        .arg(out)
        .arg("-lm")
        .output()
        .map_err(|e| format!("{cc}: {e}"))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&o.stderr).into_owned())
    }
}

fn gnu_time() -> bool {
    Command::new("/usr/bin/time")
        .args(["-f", "%e", "true"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `b` `runs` times, each stopped after `limit` seconds; wall and CPU from GNU time
/// when it is there.
fn run(
    b: &Build,
    runs: usize,
    threads: &str,
    dir: &Path,
    timed: bool,
    limit: f64,
) -> Result<Timing, String> {
    let mut walls = Vec::new();
    let mut cpus = Vec::new();
    let mut first = None;
    let times = dir.join("time.txt");
    for _ in 0..runs {
        let mut cmd = Command::new("timeout");
        cmd.args(["-s", "KILL", &format!("{limit:.0}")]);
        if timed {
            cmd.args(["/usr/bin/time", "-f", "%e %U %S", "-o"])
                .arg(&times);
        }
        cmd.arg(&b.exe);
        cmd.env("OMP_NUM_THREADS", threads);
        if b.offload {
            cmd.envs(OFFLOAD_ENV);
        }
        let start = Instant::now();
        let o = cmd.output().map_err(|e| e.to_string())?;
        let wall = start.elapsed().as_secs_f64();
        if o.status.code().is_none() || o.status.code() == Some(137) {
            return Err(format!("timeout (> {limit:.0} s)"));
        }
        if !o.status.success() {
            return Err(format!(
                "{} exited with {}: {}",
                b.label,
                o.status,
                String::from_utf8_lossy(&o.stderr)
            ));
        }
        let measured = timed
            .then(|| std::fs::read_to_string(&times).ok())
            .flatten()
            .and_then(|t| {
                let v: Vec<f64> = t
                    .lines()
                    .last()?
                    .split_whitespace()
                    .filter_map(|x| x.parse().ok())
                    .collect();
                (v.len() == 3).then(|| (v[0], v[1] + v[2]))
            });
        match measured {
            Some((w, c)) => {
                walls.push(w);
                cpus.push(c);
            }
            None => walls.push(wall),
        }
        first.get_or_insert_with(|| String::from_utf8_lossy(&o.stdout).into_owned());
    }
    Ok(Timing {
        wall: median(walls),
        cpu: (!cpus.is_empty()).then(|| median(cpus)),
        stdout: first.unwrap_or_default(),
    })
}

fn translate(exe: &str, src: &Path, profile: &str, extra: &[String]) -> Result<String, String> {
    let o = Command::new(exe)
        .args(["migrate", "-", "--stdin-filename"])
        .arg(src)
        .args(["--profile", profile, "-q"])
        .args(extra)
        .stdin(std::fs::File::open(src).map_err(|e| e.to_string())?)
        .output()
        .map_err(|e| e.to_string())?;
    if o.stdout.is_empty() {
        return Err(String::from_utf8_lossy(&o.stderr).into_owned());
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exe = env!("CARGO_BIN_EXE_acc2omp");
    let runs: usize = std::env::var("ACC2OMP_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(3);
    let threads = std::env::var("ACC2OMP_BENCH_THREADS").unwrap_or_else(|_| "2".into());
    let profiles = env_list("ACC2OMP_BENCH_PROFILES")
        .unwrap_or_else(|| vec!["default".into(), "clacc".into(), "loop".into()]);
    let only = env_list("ACC2OMP_BENCH_PROGRAMS");
    let offload = std::env::var("ACC2OMP_BENCH_OFFLOAD").is_ok_and(|v| v == "1");
    let extra_dir = std::env::var("ACC2OMP_BENCH_EXTRA").ok().map(PathBuf::from);
    let extra_args: Vec<String> = std::env::var("ACC2OMP_BENCH_ARGS")
        .map(|v| v.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    let timeout: Option<f64> = std::env::var("ACC2OMP_BENCH_TIMEOUT")
        .ok()
        .and_then(|v| v.parse().ok());
    let timed = gnu_time();

    let mut programs: Vec<PathBuf> = std::fs::read_dir(root.join("benches/programs"))
        .expect("benches/programs")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .filter(|p| {
            let name = p.file_stem().unwrap().to_string_lossy();
            only.as_ref()
                .is_none_or(|w| w.iter().any(|w| name.contains(w.as_str())))
        })
        .collect();
    programs.sort();

    println!(
        "generated code: {} run(s) per build, median; OMP_NUM_THREADS={threads}; load average {}",
        runs,
        loadavg()
    );
    println!(
        "{:<22} {:<24} {:>8} {:>8} {:>7}  output",
        "program", "build", "wall s", "cpu s", "ratio"
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut mismatches = 0;
    for prog in &programs {
        let name = prog.file_stem().unwrap().to_string_lossy().to_string();
        let dir = tmp.path().join(&name);
        std::fs::create_dir_all(&dir).unwrap();
        let reference = Build {
            label: "gcc -fopenacc (seq)".into(),
            exe: dir.join("ref"),
            offload: false,
        };
        if let Err(e) = compile("gcc", &["-O2", "-fopenacc"], prog, &reference.exe) {
            println!("{name}: reference does not build:\n{e}");
            mismatches += 1;
            continue;
        }
        let ref_t = match run(&reference, runs, &threads, &dir, timed, 3600.0) {
            Ok(t) => t,
            Err(e) => {
                println!("{name}: {e}");
                mismatches += 1;
                continue;
            }
        };
        let limit = timeout.unwrap_or((30.0 * ref_t.wall).max(20.0));
        let fmt_cpu = |c: Option<f64>| c.map_or("-".to_string(), |c| format!("{c:.3}"));
        println!(
            "{:<22} {:<24} {:>8.3} {:>8} {:>7}  reference",
            name,
            reference.label,
            ref_t.wall,
            fmt_cpu(ref_t.cpu),
            "1.00"
        );
        // (label, translated source)
        let mut sources: Vec<(String, PathBuf)> = Vec::new();
        for p in &profiles {
            match translate(exe, prog, p, &extra_args) {
                Ok(text) => {
                    let path = dir.join(format!("{p}.c"));
                    std::fs::write(&path, text).unwrap();
                    sources.push((p.clone(), path));
                }
                Err(e) => {
                    println!("{name}: translation ({p}) failed: {e}");
                    mismatches += 1;
                }
            }
        }
        if let Some(d) = &extra_dir {
            let mut hand: Vec<PathBuf> = std::fs::read_dir(d)
                .map(|r| r.flatten().map(|e| e.path()).collect())
                .unwrap_or_default();
            hand.sort();
            for h in hand {
                let f = h.file_name().unwrap().to_string_lossy().to_string();
                if let Some(label) = f
                    .strip_prefix(&format!("{name}."))
                    .and_then(|r| r.strip_suffix(".c"))
                {
                    sources.push((format!("hand:{label}"), h.clone()));
                }
            }
        }
        for (label, src) in &sources {
            let mut builds = vec![
                ("clang", "clang-19", vec!["-O2", "-fopenmp"], false),
                ("gcc", "gcc", vec!["-O2", "-fopenmp"], false),
            ];
            if offload {
                builds.push((
                    "clang-offload",
                    "clang-19",
                    vec!["-O2", "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu"],
                    true,
                ));
            }
            for (cname, cc, flags, off) in builds {
                let b = Build {
                    label: format!("{label} {cname}"),
                    exe: dir.join(format!("{}-{cname}", label.replace(':', "_"))),
                    offload: off,
                };
                if let Err(e) = compile(cc, &flags, src, &b.exe) {
                    println!("{name}: {} does not build:\n{e}", b.label);
                    mismatches += 1;
                    continue;
                }
                match run(&b, runs, &threads, &dir, timed, limit) {
                    Ok(t) => {
                        let same = t.stdout == ref_t.stdout;
                        if !same {
                            mismatches += 1;
                        }
                        println!(
                            "{:<22} {:<24} {:>8.3} {:>8} {:>7.2}  {}",
                            name,
                            b.label,
                            t.wall,
                            fmt_cpu(t.cpu),
                            t.wall / ref_t.wall,
                            if same { "same" } else { "DIFFERENT" }
                        );
                    }
                    Err(e) if e.starts_with("timeout") => {
                        println!(
                            "{:<22} {:<24} {:>8} {:>8} {:>7}  {e}",
                            name,
                            b.label,
                            "-",
                            "-",
                            format!(">{:.0}", limit / ref_t.wall)
                        );
                    }
                    Err(e) => {
                        println!("{name}: {e}");
                        mismatches += 1;
                    }
                }
            }
        }
    }
    println!("load average after: {}", loadavg());
    if mismatches > 0 {
        println!("{mismatches} build(s) failed or printed a different output");
        std::process::exit(1);
    }
}
