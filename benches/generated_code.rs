//! Speed of the generated code (`cargo bench --bench generated_code`).
//!
//! Each program in `benches/programs/` is built from the original with `gcc -O2 -fopenacc`
//! (the sequential host reference) and, translated in each profile, with `clang-19 -O2
//! -fopenmp` (host, no offload) and `gcc -O2 -fopenmp`; optionally also with Clang's host
//! offloading. `ACC2OMP_BENCH_RUNS` rounds (default 3) run every build once each, with
//! `OMP_NUM_THREADS=2`; every output must equal the reference's, and the median wall time,
//! the median CPU time (user + system) and the ratio of median wall times translated/original
//! are printed. Running the builds in rounds spreads a change of machine load over all of them.
//! Figures only: nothing here asserts a time, because the machines are shared and noisy; the
//! load average is printed before and after.
//!
//! Environment:
//! - `ACC2OMP_BENCH_RUNS=N` runs per build (median reported).
//! - `ACC2OMP_BENCH_PROGRAMS=word,word` only programs whose names contain a word.
//! - `ACC2OMP_BENCH_PROFILES=default,clacc` profiles (default: all).
//! - `ACC2OMP_BENCH_THREADS=N` threads (default 2).
//! - `OMP_WAIT_POLICY` is passed on (printed): on a loaded machine the runtimes' default
//!   spinning at barriers costs more than the mapping does; `passive` shows the mapping.
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

mod common;
use common::{env_list, loadavg, median};

const OFFLOAD_ENV: [(&str, &str); 2] = [
    ("LD_LIBRARY_PATH", "/usr/lib/llvm-19/lib"),
    ("LIBOMP_USE_HIDDEN_HELPER_TASK", "0"),
];

struct Build {
    program: String,
    label: String,
    exe: PathBuf,
    offload: bool,
}

/// One run: wall and CPU seconds (CPU from GNU time when it is there), stdout.
struct Run {
    wall: f64,
    cpu: Option<f64>,
    stdout: String,
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

/// Runs `b` once, stopped after `limit` seconds.
fn run(b: &Build, threads: &str, times: &Path, timed: bool, limit: f64) -> Result<Run, String> {
    let mut cmd = Command::new("timeout");
    cmd.args(["-s", "KILL", &format!("{limit:.0}")]);
    if timed {
        cmd.args(["/usr/bin/time", "-f", "%e %U %S", "-o"])
            .arg(times);
    }
    cmd.arg(&b.exe).env("OMP_NUM_THREADS", threads);
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
            "exited with {}: {}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    let measured = timed
        .then(|| std::fs::read_to_string(times).ok())
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
    Ok(Run {
        wall: measured.map_or(wall, |m| m.0),
        cpu: measured.map(|m| m.1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
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

/// What to build.
struct Config {
    exe: &'static str,
    profiles: Vec<String>,
    extra_args: Vec<String>,
    extra_dir: Option<PathBuf>,
    offload: bool,
}

/// The builds of one program: the reference first.
fn builds(prog: &Path, dir: &Path, cfg: &Config, problems: &mut Vec<String>) -> Vec<Build> {
    let name = prog.file_stem().unwrap().to_string_lossy().to_string();
    let mut out = Vec::new();
    let reference = Build {
        program: name.clone(),
        label: "gcc -fopenacc (seq)".into(),
        exe: dir.join("ref"),
        offload: false,
    };
    if let Err(e) = compile(
        "gcc",
        &["-O2", "-fopenacc", "-foffload=disable"],
        prog,
        &reference.exe,
    ) {
        problems.push(format!("{name}: the reference does not build:\n{e}"));
        return out;
    }
    out.push(reference);
    // (label, translated source)
    let mut sources: Vec<(String, PathBuf)> = Vec::new();
    for p in &cfg.profiles {
        match translate(cfg.exe, prog, p, &cfg.extra_args) {
            Ok(text) => {
                let path = dir.join(format!("{p}.c"));
                std::fs::write(&path, text).unwrap();
                sources.push((p.clone(), path));
            }
            Err(e) => problems.push(format!("{name}: translation ({p}) failed: {e}")),
        }
    }
    if let Some(d) = &cfg.extra_dir {
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
    let mut compilers = vec![
        ("clang", "clang-19", vec!["-O2", "-fopenmp"], false),
        (
            "gcc",
            "gcc",
            vec!["-O2", "-fopenmp", "-foffload=disable"],
            false,
        ),
    ];
    if cfg.offload {
        compilers.push((
            "clang-offload",
            "clang-19",
            vec!["-O2", "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu"],
            true,
        ));
    }
    for (label, src) in &sources {
        for (cname, cc, flags, off) in &compilers {
            let b = Build {
                program: name.clone(),
                label: format!("{label} {cname}"),
                exe: dir.join(format!("{}-{cname}", label.replace(':', "_"))),
                offload: *off,
            };
            match compile(cc, flags, src, &b.exe) {
                Ok(()) => out.push(b),
                Err(e) => problems.push(format!("{name}: {} does not build:\n{e}", b.label)),
            }
        }
    }
    out
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
    let cfg = Config {
        exe,
        profiles: env_list("ACC2OMP_BENCH_PROFILES")
            .unwrap_or_else(|| vec!["default".into(), "clacc".into(), "loop".into()]),
        extra_args: std::env::var("ACC2OMP_BENCH_ARGS")
            .map(|v| v.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
        extra_dir: std::env::var("ACC2OMP_BENCH_EXTRA").ok().map(PathBuf::from),
        offload: std::env::var("ACC2OMP_BENCH_OFFLOAD").is_ok_and(|v| v == "1"),
    };
    let only = env_list("ACC2OMP_BENCH_PROGRAMS");
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

    let tmp = tempfile::tempdir().expect("tempdir");
    let mut problems = Vec::new();
    let mut all: Vec<Build> = Vec::new();
    for prog in &programs {
        let name = prog.file_stem().unwrap().to_string_lossy().to_string();
        let dir = tmp.path().join(&name);
        std::fs::create_dir_all(&dir).unwrap();
        all.extend(builds(prog, &dir, &cfg, &mut problems));
    }

    println!(
        "generated code: {runs} round(s), every build once per round, medians; OMP_NUM_THREADS={threads}; OMP_WAIT_POLICY={}; load average {}",
        std::env::var("OMP_WAIT_POLICY").unwrap_or_else(|_| "(unset)".into()),
        loadavg()
    );
    // Rounds: every build runs once per round, so a change of load touches all of them.
    let times = tmp.path().join("time.txt");
    let mut results: Vec<Vec<Run>> = all.iter().map(|_| Vec::new()).collect();
    let mut failed: Vec<Option<String>> = vec![None; all.len()];
    let mut reference_wall: std::collections::HashMap<String, f64> = Default::default();
    for _ in 0..runs {
        for (k, b) in all.iter().enumerate() {
            if failed[k].is_some() {
                continue;
            }
            let is_ref = b.label.starts_with("gcc -fopenacc");
            let limit = if is_ref {
                3600.0
            } else {
                timeout.unwrap_or_else(|| {
                    (30.0 * reference_wall.get(&b.program).copied().unwrap_or(1.0)).max(20.0)
                })
            };
            match run(b, &threads, &times, timed, limit) {
                Ok(r) => {
                    if is_ref {
                        reference_wall.entry(b.program.clone()).or_insert(r.wall);
                    }
                    results[k].push(r);
                }
                Err(e) => failed[k] = Some(e),
            }
        }
    }

    println!(
        "{:<22} {:<26} {:>8} {:>8} {:>7}  output",
        "program", "build", "wall s", "cpu s", "ratio"
    );
    let mut reference: Option<(f64, String)> = None;
    for (k, b) in all.iter().enumerate() {
        let is_ref = b.label.starts_with("gcc -fopenacc");
        let rs = &results[k];
        if let Some(e) = &failed[k] {
            let ratio = match (&reference, e.starts_with("timeout")) {
                (Some((w, _)), true) => {
                    format!(">{:.0}", timeout.unwrap_or((30.0 * w).max(20.0)) / w)
                }
                _ => "-".into(),
            };
            println!(
                "{:<22} {:<26} {:>8} {:>8} {:>7}  {e}",
                b.program, b.label, "-", "-", ratio
            );
            if !e.starts_with("timeout") {
                problems.push(format!("{} {}: {e}", b.program, b.label));
            }
            if is_ref {
                reference = None;
            }
            continue;
        }
        let wall = median(rs.iter().map(|r| r.wall).collect());
        let cpu: Vec<f64> = rs.iter().filter_map(|r| r.cpu).collect();
        let cpu = if cpu.is_empty() {
            "-".to_string()
        } else {
            format!("{:.3}", median(cpu))
        };
        let out = rs.first().map(|r| r.stdout.clone()).unwrap_or_default();
        if is_ref {
            reference = Some((wall, out));
            println!(
                "{:<22} {:<26} {:>8.3} {:>8} {:>7}  reference",
                b.program, b.label, wall, cpu, "1.00"
            );
            continue;
        }
        let Some((ref_wall, ref_out)) = &reference else {
            continue;
        };
        let same = rs.iter().all(|r| r.stdout == *ref_out);
        if !same {
            problems.push(format!(
                "{} {}: the output differs from the reference",
                b.program, b.label
            ));
        }
        println!(
            "{:<22} {:<26} {:>8.3} {:>8} {:>7.2}  {}",
            b.program,
            b.label,
            wall,
            cpu,
            wall / ref_wall,
            if same { "same" } else { "DIFFERENT" }
        );
    }
    println!("load average after: {}", loadavg());
    if !problems.is_empty() {
        println!("\n{}", problems.join("\n"));
        std::process::exit(1);
    }
}
