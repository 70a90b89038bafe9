//! Speed of the generated code on real applications (`cargo bench --bench real_code [-- NPB]`).
//!
//! - **NAS Parallel Benchmarks**, the C OpenACC port uhhpctools/openacc-npb (BT CG EP FT LU MG
//!   SP), from the directory given as argument or in `ACC2OMP_NPB`: a copy the user fetched
//!   (it has no licence, so it is never part of this repository); class `ACC2OMP_NPB_CLASS`
//!   (default W). Each benchmark's folder is copied, configured by its `setparams`, translated
//!   in place with a compilation database (`-I../common`) and built by its own Makefile
//!   (`-O3 -mcmodel=medium`): the original sequentially (OpenACC ignored; `openacc.h` and
//!   libgomp for its `acc_*` calls) and the translation with `-fopenmp`, each with gcc and
//!   clang-19. A translation calling `omp_target_*` routines (MG's `acc_malloc`) links only
//!   with Clang's offloading runtime, so its Clang build offloads to the host
//!   (`-fopenmp-targets=x86_64-pc-linux-gnu`, shown as `clang-offload`). A run counts only
//!   when the benchmark prints `Verification = SUCCESSFUL`; the time is the process's.
//!   With `ACC2OMP_NPB_OMP`, a fetched copy of NPB's hand-written OpenMP C version
//!   (benchmark-subsetting/NPB3.0-omp-C: the same problem classes), each benchmark it has is
//!   also built with the same flags and `-fopenmp` and timed as the `hand` column: what the
//!   benchmark's authors' own parallelisation gets on the same machine.
//! - **PolyBench-ACC** from `../shared/corpus/polybench-acc` (`ACC2OMP_POLYBENCH`): each
//!   kernel's OpenACC original built sequentially, its translation, and the corpus's
//!   hand-written OpenMP version (`OpenMP/`), with gcc and clang-19 `-O2`; the time is the
//!   kernel's own (`-DPOLYBENCH_TIME`), dataset `ACC2OMP_POLYBENCH_DATASET` (default
//!   `STANDARD`; `SMALL`, `LARGE`, …). First a `SMALL_DATASET` build of the translation must
//!   print the arrays the original prints (`-DPOLYBENCH_DUMP_ARRAYS`, to 0.01, NaN as NaN).
//!   What the applications suite knows (`tests/applications/expectations.toml`) is used: an
//!   original that cannot serve as a reference is not measured, and one that races in a host
//!   build is timed without the comparison, its row marked `*`; these and hand-written
//!   versions that do not build, fail or time out (NPB's too; the row then has no `hand`
//!   figures) are listed after the tables, and are not failures.
//!
//! Every build runs once per round, the builds of a program one after another, so that a
//! change of the machine's load touches all of them; at the end, what one `parallel for` and
//! one `target` region of a few shapes cost each compiler's host runtime is measured
//! (`benches/region_cost.c`; `ACC2OMP_BENCH_SUITES=regions` runs only that); the ratios
//! translated/sequential and translated/hand-written are taken within each round and printed
//! as min/median/max, with the ratio of median CPU times (user + system of the process), and
//! the regions one more run of each translation enters (`benches/count_regions.c`
//! preloaded: GCC's `target` regions, the kernels of Clang's offloading runtime; `-` for
//! Clang's host runtime, whose forks it cannot count). Figures only: nothing is
//! asserted about time (shared, noisy machines); the machine and its load average are printed.
//! Exit status 1 when a build, a verification or an array check of an original or a
//! translation fails.
//!
//! Environment:
//! - `ACC2OMP_BENCH_RUNS=N` rounds (default 3); `ACC2OMP_BENCH_THREADS=N` (default 2).
//! - `ACC2OMP_BENCH_SUITES=npb,polybench` (default both; NPB only with a path).
//! - `ACC2OMP_BENCH_PROGRAMS=word,word` only programs whose names contain a word (`BT`, `gemm`).
//! - `ACC2OMP_BENCH_COMPILERS=gcc,clang` (default both); `ACC2OMP_BENCH_PROFILE` (default
//!   `default`) and `ACC2OMP_BENCH_ARGS` (more `migrate` arguments).
//! - `OMP_WAIT_POLICY`: `passive` unless set (threads sleep at barriers: on a shared machine
//!   the runtimes' spinning costs more than the mapping).
//! - `ACC2OMP_BENCH_TIMEOUT=S` seconds before a run is stopped (default 20 times the
//!   sequential run of the same round, at least 30).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{env_list, loadavg, median};

const OFFLOAD_ENV: [(&str, &str); 2] = [
    ("LD_LIBRARY_PATH", "/usr/lib/llvm-19/lib"),
    ("LIBOMP_USE_HIDDEN_HELPER_TASK", "0"),
];
const NPB: [&str; 7] = ["BT", "CG", "EP", "FT", "LU", "MG", "SP"];
/// What every NPB build is given: its `make.def` flags, and what its C89-era sources need.
const NPB_FLAGS: &str =
    "-O3 -mcmodel=medium -w -fgnu89-inline -Wno-error=implicit-function-declaration";

struct Config {
    tool: &'static str,
    profile: String,
    tool_args: Vec<String>,
    compilers: Vec<String>,
    only: Option<Vec<String>>,
    tmp: PathBuf,
}

/// One executable and how to run it.
struct Exe {
    path: PathBuf,
    dir: PathBuf,
    env: Vec<(&'static str, &'static str)>,
}

/// A program built with one compiler: the sequential original, the translation and, for
/// PolyBench, the hand-written OpenMP version.
struct Program {
    suite: &'static str,
    name: String,
    compiler: String,
    seq: Exe,
    translated: Exe,
    hand: Option<Exe>,
    /// The original races (tests/applications/expectations.toml): the translation's arrays
    /// were not checked against it, and the row is marked.
    races: bool,
}

/// What the applications suite knows about PolyBench's originals
/// (`tests/applications/expectations.toml`): those that cannot serve as a reference, and
/// those that race in a build of this benchmark (gcc or clang on the host).
#[derive(Default)]
struct Known {
    no_reference: Vec<(String, String)>,
    /// (kernel, build) pairs.
    races: Vec<(String, String)>,
}

impl Known {
    fn read() -> Known {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/applications/expectations.toml");
        let Some(t) = std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.parse::<toml::Table>().ok())
        else {
            return Known::default();
        };
        let entries = |key: &str| -> Vec<toml::Table> {
            (t.get(key).and_then(|v| v.as_array()).into_iter().flatten())
                .filter_map(|v| v.as_table().cloned())
                .collect()
        };
        let text =
            |e: &toml::Table, k: &str| e.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
        let name = |e: &toml::Table| text(e, "app").trim_start_matches("polybench/").to_string();
        let mut known = Known::default();
        for e in entries("reference") {
            known.no_reference.push((name(&e), text(&e, "reason")));
        }
        for e in entries("failure") {
            if e.get("varies").and_then(|v| v.as_bool()) != Some(true) {
                continue;
            }
            for b in (e
                .get("builds")
                .and_then(|v| v.as_array())
                .into_iter()
                .flatten())
            .filter_map(|b| b.as_str())
            {
                known.races.push((name(&e), b.to_string()));
            }
        }
        known
    }

    fn no_reference(&self, name: &str) -> Option<&str> {
        (self.no_reference.iter())
            .find(|(n, _)| n == name)
            .map(|(_, r)| r.as_str())
    }

    fn races(&self, name: &str, compiler: &str) -> bool {
        (self.races.iter()).any(|(n, b)| n == name && b == compiler)
    }
}

/// The first line of a compiler's log that reports an error.
fn first_error(log: &str) -> &str {
    (log.lines())
        .find(|l| l.contains("error"))
        .or_else(|| log.lines().next())
        .unwrap_or("")
        .trim()
}

/// One run's seconds: the measured time (process or kernel), and the process's CPU time.
#[derive(Clone, Copy)]
struct Sample {
    time: f64,
    cpu: f64,
}

fn selected(cfg: &Config, name: &str) -> bool {
    cfg.only
        .as_ref()
        .is_none_or(|w| w.iter().any(|w| name.contains(w.as_str())))
}

/// Runs `cmd`, its output in `log`; an error names the log's tail.
fn sh(cmd: &mut Command, log: &Path) -> Result<(), String> {
    let out = std::fs::File::create(log).map_err(|e| e.to_string())?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let status = cmd
        .stdout(out)
        .stderr(err)
        .status()
        .map_err(|e| format!("{cmd:?}: {e}"))?;
    if status.success() {
        return Ok(());
    }
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let tail: Vec<&str> = text.lines().rev().take(12).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Err(format!(
        "{} failed ({}):\n{}",
        log.display(),
        status,
        tail.join("\n")
    ))
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let name = e.file_name();
        if name == ".git" {
            continue;
        }
        let ty = e.file_type()?;
        if ty.is_dir() {
            copy_dir(&e.path(), &to.join(&name))?;
        } else if ty.is_file() {
            std::fs::copy(e.path(), to.join(&name))?;
        }
    }
    Ok(())
}

/// A compilation database for the `.c` files of `dir` with `flags`.
fn compile_db(dir: &Path, flags: &[String]) -> std::io::Result<()> {
    let mut entries = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    files.sort();
    for f in files {
        let mut args = vec!["cc".to_string(), "-c".into()];
        args.extend(flags.iter().cloned());
        args.push(f.display().to_string());
        entries.push(serde_json::json!({
            "directory": dir.display().to_string(),
            "file": f.display().to_string(),
            "arguments": args,
        }));
    }
    std::fs::write(
        dir.join("compile_commands.json"),
        serde_json::to_string_pretty(&entries).expect("json"),
    )
}

/// Translates the C files under `dir` in place, with the compilation database in `db`.
fn translate(cfg: &Config, dir: &Path, db: &Path, log: &Path) -> Result<(), String> {
    let mut cmd = Command::new(cfg.tool);
    cmd.args(["migrate", "--write", "-q", "--exit-zero", "--profile"])
        .arg(&cfg.profile)
        .arg("-p")
        .arg(db)
        .args(&cfg.tool_args)
        .arg(dir);
    sh(&mut cmd, log)
}

fn compiler_command(c: &str) -> &'static str {
    if c == "gcc" { "gcc" } else { "clang-19" }
}

/// A folder holding only GCC's `openacc.h`, so that clang can build the original.
fn openacc_include(tmp: &Path) -> Option<PathBuf> {
    let o = Command::new("gcc")
        .arg("-print-file-name=include")
        .output()
        .ok()?;
    let gcc = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
    let dir = tmp.join("include");
    std::fs::create_dir_all(&dir).ok()?;
    std::fs::copy(gcc.join("openacc.h"), dir.join("openacc.h")).ok()?;
    Some(dir)
}

fn calls_omp_target(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|r| {
        r.flatten().any(|e| {
            e.path().extension().is_some_and(|x| x == "c")
                && std::fs::read_to_string(e.path()).is_ok_and(|s| s.contains("omp_target_"))
        })
    })
}

/// NPB's hand-written OpenMP C version (`ACC2OMP_NPB_OMP`: a fetched copy of
/// benchmark-subsetting/NPB3.0-omp-C, or any tree with its layout: `BT/`, `common/`,
/// `config/`, `sys/` and a top-level Makefile), built with compiler `c` into its own copy,
/// once for all benchmarks: the executable of benchmark `b`, or why there is none (a note,
/// not a failure: it is a yardstick, not what is measured).
fn npb_hand(cfg: &Config, root: &Path, b: &str, class: &str, c: &str) -> Result<Exe, String> {
    let dir = cfg.tmp.join(format!("npb-omp-{c}"));
    if !dir.join("config/make.def").exists() {
        copy_dir(root, &dir).map_err(|e| e.to_string())?;
        let cc = compiler_command(c);
        // The same flags as the translation's build, so that only the code differs.
        let def = format!(
            "CC = {cc}\nCLINK = {cc}\nC_LIB = -lm -fopenmp\nC_INC = -I../common\n\
             CFLAGS = {NPB_FLAGS} -fopenmp\nCLINKFLAGS = -fopenmp\nUCC = gcc\n\
             BINDIR = ../bin\nRAND = randdp\nWTIME = wtime.c\n"
        );
        std::fs::create_dir_all(dir.join("bin")).map_err(|e| e.to_string())?;
        std::fs::write(dir.join("config/make.def"), def).map_err(|e| e.to_string())?;
    }
    let log = dir.join(format!("make-{b}.log"));
    sh(
        Command::new("make")
            .arg(b)
            .arg(format!("CLASS={class}"))
            .current_dir(&dir),
        &log,
    )
    .map_err(|e| {
        format!(
            "{e}: {}",
            first_error(&std::fs::read_to_string(&log).unwrap_or_default())
        )
    })?;
    let exe = dir
        .join("bin")
        .join(format!("{}.{class}", b.to_lowercase()));
    if !exe.exists() {
        return Err(format!("no {}", exe.display()));
    }
    Ok(Exe {
        path: exe,
        dir: dir.join("bin"),
        env: Vec::new(),
    })
}

/// The NPB programs: one per benchmark and compiler, with the hand-written OpenMP version
/// from `hand_root` where it has the benchmark.
fn npb_programs(
    cfg: &Config,
    root: &Path,
    hand_root: Option<&Path>,
    class: &str,
    problems: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> Vec<Program> {
    let mut out = Vec::new();
    let Some(include) = openacc_include(&cfg.tmp) else {
        problems.push("NPB: GCC's openacc.h not found (gcc -print-file-name=include)".into());
        return out;
    };
    for b in NPB.iter().filter(|b| selected(cfg, b)) {
        let src = root.join(b);
        let Some(sub) = std::fs::read_dir(&src).ok().and_then(|r| {
            r.flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .find(|n| n.starts_with(b) && src.join(n).is_dir())
        }) else {
            problems.push(format!("NPB {b}: no benchmark folder in {}", src.display()));
            continue;
        };
        let lower = b.to_lowercase();
        let base = cfg.tmp.join("npb").join(b);
        // The translation, made once in its own copy, and copied for each compiler.
        let translated = base.join("translated");
        let prepared = copy_dir(&src, &translated)
            .map_err(|e| e.to_string())
            .and_then(|()| {
                let bench = translated.join(&sub);
                sh(
                    Command::new("make")
                        .args(["-C", "../sys", "all", "UCC=gcc"])
                        .current_dir(&bench),
                    &base.join("setparams.log"),
                )?;
                sh(
                    Command::new("../sys/setparams")
                        .args([&lower, class])
                        .current_dir(&bench),
                    &base.join("setparams.log"),
                )?;
                compile_db(&bench, &["-I../common".into()]).map_err(|e| e.to_string())?;
                translate(cfg, &translated, &bench, &base.join("translate.log"))
            });
        if let Err(e) = prepared {
            problems.push(format!("NPB {b}: {e}"));
            continue;
        }
        for c in &cfg.compilers {
            let cc = compiler_command(c);
            let mut built = Vec::new();
            for variant in ["seq", "translated"] {
                let dir = base.join(format!("{variant}-{c}"));
                let from = if variant == "seq" { &src } else { &translated };
                let offload = variant == "translated"
                    && c != "gcc"
                    && calls_omp_target(&translated.join(&sub));
                let (flags, libs) = match variant {
                    "seq" => (
                        format!("{NPB_FLAGS} -I{}", include.display()),
                        "-lm -lgomp".to_string(),
                    ),
                    _ if offload => (
                        format!("{NPB_FLAGS} -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu"),
                        "-lm".into(),
                    ),
                    _ => (format!("{NPB_FLAGS} -fopenmp"), "-lm".into()),
                };
                let bench = dir.join(&sub);
                let r = copy_dir(from, &dir)
                    .map_err(|e| e.to_string())
                    .and_then(|()| {
                        sh(
                            Command::new("make")
                                .arg(format!("CC={cc}"))
                                .arg(format!("CLINK={cc}"))
                                .arg("UCC=gcc")
                                .arg(format!("CLASS={class}"))
                                .arg(format!("CFLAGS={flags}"))
                                .arg(format!("CLINKFLAGS={flags}"))
                                .arg(format!("C_LIB={libs}"))
                                .current_dir(&bench),
                            &base.join(format!("make-{variant}-{c}.log")),
                        )
                    });
                let exe = bench.join(format!("{lower}.{class}.x"));
                match r {
                    Ok(()) if exe.exists() => built.push((
                        Exe {
                            path: exe,
                            dir: bench,
                            env: if offload {
                                OFFLOAD_ENV.to_vec()
                            } else {
                                Vec::new()
                            },
                        },
                        offload,
                    )),
                    Ok(()) => problems.push(format!("NPB {b} {variant} {c}: no {}", exe.display())),
                    Err(e) => problems.push(format!("NPB {b} {variant} {c}: {e}")),
                }
            }
            if built.len() == 2 {
                let (translated, offload) = built.pop().expect("two");
                let (seq, _) = built.pop().expect("two");
                let hand = hand_root.filter(|h| h.join(b).is_dir()).and_then(|h| {
                    match npb_hand(cfg, h, b, class, c) {
                        Ok(e) => Some(e),
                        Err(e) => {
                            notes.push(format!("NPB {b} {c}: the hand-written OpenMP: {e}"));
                            None
                        }
                    }
                });
                out.push(Program {
                    suite: "npb",
                    name: format!("{b}.{class}"),
                    compiler: if offload {
                        format!("{c}-offload")
                    } else {
                        c.clone()
                    },
                    seq,
                    translated,
                    hand,
                    races: false,
                });
            }
        }
    }
    out
}

/// The kernels of PolyBench-ACC: (name, path of the OpenACC source relative to `OpenACC/`).
fn polybench_kernels(root: &Path) -> Vec<(String, PathBuf)> {
    fn walk(dir: &Path, rel: &Path, out: &mut Vec<(String, PathBuf)>) {
        let Ok(r) = std::fs::read_dir(dir) else {
            return;
        };
        for e in r.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let p = e.path();
            if p.is_dir() && name != "utilities" {
                walk(&p, &rel.join(&name), out);
            } else if p.extension().is_some_and(|x| x == "c")
                && p.file_stem().is_some_and(|s| Some(s) == dir.file_name())
            {
                out.push((name.trim_end_matches(".c").to_string(), rel.join(&name)));
            }
        }
    }
    let mut out = Vec::new();
    walk(&root.join("OpenACC"), Path::new(""), &mut out);
    out.sort();
    out
}

fn polybench_compile(
    cc: &str,
    openmp: bool,
    defines: &[&str],
    src: &Path,
    root: &Path,
    exe: &Path,
    log: &Path,
) -> Result<(), String> {
    let mut cmd = Command::new(cc);
    cmd.args(["-O2", "-w"]);
    if openmp {
        cmd.arg("-fopenmp");
        if cc == "gcc" {
            // The host build even where GCC's GPU offloading is installed.
            cmd.arg("-foffload=disable");
        }
    }
    cmd.arg(format!("-I{}", root.join("common").display()))
        .arg(format!("-I{}", src.parent().expect("file").display()))
        .args(defines)
        .arg(src)
        .arg(root.join("common/polybench.c"))
        .arg("-lm")
        .arg("-o")
        .arg(exe);
    sh(&mut cmd, log)
}

/// The numbers a program prints, compared to 0.01 (PolyBench prints two decimals).
fn same_numbers(a: &str, b: &str) -> bool {
    let nums = |s: &str| -> Vec<f64> {
        s.split_whitespace()
            .filter_map(|w| w.parse::<f64>().ok())
            .collect()
    };
    let (x, y) = (nums(a), nums(b));
    !x.is_empty() && x.len() == y.len() && x.iter().zip(&y).all(|(&p, &q)| same_number(p, q))
}

/// Two printed values agree: within 0.01, or both NaN (PolyBench's gramschmidt prints
/// `-nan` from its own divisions by zero), or the same infinity.
fn same_number(p: f64, q: f64) -> bool {
    if p.is_nan() || q.is_nan() {
        return p.is_nan() && q.is_nan();
    }
    if p.is_infinite() || q.is_infinite() {
        return p == q;
    }
    (p - q).abs() <= 0.01 + 1e-9 * p.abs().max(q.abs())
}

fn polybench_programs(
    cfg: &Config,
    root: &Path,
    dataset: &str,
    problems: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> Vec<Program> {
    let mut out = Vec::new();
    let define = format!("-D{dataset}_DATASET");
    let known = Known::read();
    for (name, rel) in polybench_kernels(root) {
        if !selected(cfg, &name) {
            continue;
        }
        if let Some(reason) = known.no_reference(&name) {
            notes.push(format!("{name}: not measured, no reference: {reason}"));
            continue;
        }
        let src = root.join("OpenACC").join(&rel);
        let hand_src = root.join("OpenMP").join(&rel);
        let base = cfg.tmp.join("polybench").join(&name);
        // Array extents are macros of the dataset: each dataset has its own translation.
        let translated = |dataset: &str| -> Result<PathBuf, String> {
            let dir = base.join(format!("translated-{dataset}"));
            copy_dir(src.parent().expect("file"), &dir).map_err(|e| e.to_string())?;
            let flags = [
                format!("-I{}", root.join("common").display()),
                format!("-D{dataset}_DATASET"),
            ];
            compile_db(&dir, &flags).map_err(|e| e.to_string())?;
            translate(
                cfg,
                &dir,
                &dir,
                &base.join(format!("translate-{dataset}.log")),
            )?;
            Ok(dir.join(rel.file_name().expect("file")))
        };
        let (tr_src, check_src) = match (translated(dataset), translated("SMALL")) {
            (Ok(t), Ok(c)) => (t, c),
            (Err(e), _) | (_, Err(e)) => {
                problems.push(format!("{name}: {e}"));
                continue;
            }
        };
        // The translation's arrays against the original's, on the small dataset.
        // The arrays a SMALL_DATASET build prints: the original's (gcc), each translation's.
        let dump = |label: &str, cc: &str, s: &Path, omp: bool| -> Result<String, String> {
            let exe = base.join(format!("check-{label}-{cc}"));
            let flags = ["-DSMALL_DATASET", "-DPOLYBENCH_DUMP_ARRAYS"];
            polybench_compile(cc, omp, &flags, s, root, &exe, &base.join("check.log"))?;
            // (A bound: some originals take minutes on a loaded machine, e.g. correlation.)
            let o = Command::new("timeout")
                .arg("300")
                .arg(&exe)
                .env("OMP_NUM_THREADS", "2")
                .stdout(Stdio::null())
                .output()
                .map_err(|e| e.to_string())?;
            if !o.status.success() {
                return Err(format!("{label} exited with {}", o.status));
            }
            Ok(String::from_utf8_lossy(&o.stderr).into_owned())
        };
        let reference = match dump("seq", "gcc", &src, false) {
            Ok(d) => d,
            Err(e) => {
                problems.push(format!("{name}: {e}"));
                continue;
            }
        };
        // Whether the translation prints the original's arrays; Err when it cannot run.
        let check = |cc: &str| -> Result<bool, String> {
            Ok(same_numbers(
                &reference,
                &dump("translated", cc, &check_src, true)?,
            ))
        };
        for c in &cfg.compilers {
            let cc = compiler_command(c);
            let races = known.races(&name, c);
            match check(cc) {
                Ok(true) => {}
                // A racy original's result is not the translation's to match: timed anyway.
                Ok(false) if races => notes.push(format!(
                    "{name} {c}: arrays not compared: the original races (tests/applications/expectations.toml)"
                )),
                Ok(false) => {
                    problems.push(format!(
                        "{name} {c}: the translation prints other arrays than the original (SMALL_DATASET)"
                    ));
                    continue;
                }
                Err(e) => {
                    problems.push(format!("{name} {c}: {e}"));
                    continue;
                }
            }
            let mut exes = Vec::new();
            for (label, s, omp) in [
                ("seq", &src, false),
                ("translated", &tr_src, true),
                ("hand", &hand_src, true),
            ] {
                if label == "hand" && !s.exists() {
                    continue;
                }
                let exe = base.join(format!("{label}-{c}"));
                match polybench_compile(
                    cc,
                    omp,
                    &["-DPOLYBENCH_TIME", &define],
                    s,
                    root,
                    &exe,
                    &base.join(format!("{label}-{c}.log")),
                ) {
                    Ok(()) => exes.push(Exe {
                        path: exe,
                        dir: base.clone(),
                        env: Vec::new(),
                    }),
                    // The corpus's hand-written twin is a reference, not the translation.
                    Err(_) if label == "hand" => {
                        let log = std::fs::read_to_string(base.join(format!("hand-{c}.log")))
                            .unwrap_or_default();
                        notes.push(format!(
                            "{name} {c}: the hand-written OpenMP does not build: {}",
                            first_error(&log)
                        ));
                    }
                    Err(e) => problems.push(format!("{name} {label} {c}: {e}")),
                }
            }
            if exes.len() >= 2 && exes[0].path.ends_with(format!("seq-{c}")) {
                let mut it = exes.into_iter();
                let seq = it.next().expect("two");
                let translated = it.next().expect("two");
                out.push(Program {
                    suite: "polybench",
                    name: name.clone(),
                    compiler: c.clone(),
                    seq,
                    translated,
                    hand: it.next(),
                    races,
                });
            }
        }
    }
    out
}

/// The region-cost probe (`benches/region_cost.c`): what one `parallel for` and one
/// `target` region of each shape cost the host runtime, entered 20,000 times around a loop
/// of 64 iterations.
const REGIONS: &str = include_str!("region_cost.c");
const COUNTER: &str = include_str!("count_regions.c");

/// `benches/count_regions.c` built as a library to preload; None if it does not build.
fn region_counter(cfg: &Config) -> Option<PathBuf> {
    let src = cfg.tmp.join("count_regions.c");
    let lib = cfg.tmp.join("count_regions.so");
    std::fs::write(&src, COUNTER).ok()?;
    sh(
        Command::new("gcc")
            .args(["-O2", "-shared", "-fPIC"])
            .arg(&src)
            .arg("-o")
            .arg(&lib)
            .arg("-ldl"),
        &cfg.tmp.join("count_regions.log"),
    )
    .ok()?;
    Some(lib)
}

/// The regions one run of the translation `p` enters, counted with `counter` preloaded:
/// GCC's `target` regions (each with its `parallel`), or the kernels Clang's offloading
/// runtime launches; None for Clang's host runtime (its fork is not counted) or a failed run.
fn regions_of(p: &Program, counter: &Path, threads: &str) -> Option<u64> {
    let key = match p.compiler.as_str() {
        "gcc" => "target=",
        c if c.ends_with("-offload") => "__tgt_target_kernel=",
        _ => return None,
    };
    let o = command(&p.translated, threads)
        .env("LD_PRELOAD", counter)
        .stdout(Stdio::null())
        .output()
        .ok()?;
    let err = String::from_utf8_lossy(&o.stderr);
    let line = err.lines().find(|l| l.starts_with("COUNT "))?;
    let at = line.find(key)? + key.len();
    let digits: String = line[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// Microseconds per region of each shape of the probe, wall and CPU (user + system), median
/// of `runs`, under each compiler's host runtime: plain `-fopenmp`, and for clang also its
/// offloading runtime on the host (`clang-offload`). Rows: (label, per build: text).
fn region_costs(
    cfg: &Config,
    threads: &str,
    runs: usize,
) -> (Vec<String>, Vec<(String, Vec<String>)>) {
    let src = cfg.tmp.join("region_cost.c");
    if std::fs::write(&src, REGIONS).is_err() {
        return (Vec::new(), Vec::new());
    }
    let mut builds: Vec<(String, Vec<&str>)> = Vec::new();
    for c in &cfg.compilers {
        builds.push((c.clone(), vec!["-fopenmp"]));
        if c != "gcc" {
            builds.push((
                format!("{c}-offload"),
                vec!["-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu"],
            ));
        }
    }
    let mut labels: Vec<String> = Vec::new();
    let mut columns = Vec::new();
    for (name, flags) in &builds {
        let exe = cfg.tmp.join(format!("region-cost-{name}"));
        let built = sh(
            Command::new(compiler_command(name))
                .arg("-O2")
                .args(flags)
                .arg(&src)
                .arg("-o")
                .arg(&exe),
            &cfg.tmp.join(format!("region-cost-{name}.log")),
        );
        // Per label: the runs' (wall, cpu).
        let mut samples: Vec<(String, Vec<f64>, Vec<f64>)> = Vec::new();
        for _ in 0..runs {
            if built.is_err() {
                break;
            }
            let Ok(o) = Command::new(&exe)
                .env("OMP_NUM_THREADS", threads)
                .envs(OFFLOAD_ENV)
                .output()
            else {
                break;
            };
            if !o.status.success() {
                break;
            }
            for line in String::from_utf8_lossy(&o.stdout).lines() {
                let f: Vec<&str> = line.split('\t').collect();
                let [label, wall, cpu, _sys] = f[..] else {
                    continue;
                };
                let (Ok(wall), Ok(cpu)) = (wall.parse::<f64>(), cpu.parse::<f64>()) else {
                    continue;
                };
                match samples.iter_mut().find(|s| s.0 == label) {
                    Some(s) => {
                        s.1.push(wall);
                        s.2.push(cpu);
                    }
                    None => samples.push((label.to_string(), vec![wall], vec![cpu])),
                }
            }
        }
        for (label, _, _) in &samples {
            if !labels.contains(label) {
                labels.push(label.clone());
            }
        }
        columns.push((name.clone(), samples));
    }
    let table = columns
        .into_iter()
        .map(|(name, samples)| {
            let cells = labels
                .iter()
                .map(|l| match samples.iter().find(|s| &s.0 == l) {
                    Some((_, w, c)) => {
                        format!("{:.1} / {:.1}", median(w.clone()), median(c.clone()))
                    }
                    None => "not measured".into(),
                })
                .collect();
            (name, cells)
        })
        .collect();
    (labels, table)
}

/// CPU seconds of the children waited for so far.
fn children_cpu() -> f64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid rusage to fill.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// The command that runs `e` in its directory on `threads` threads, its stack unlimited
/// (BT and SP need it).
fn command(e: &Exe, threads: &str) -> Command {
    let mut c = Command::new("sh");
    c.args([
        "-c",
        "ulimit -s unlimited 2>/dev/null || ulimit -s \"$(ulimit -H -s)\"; exec \"$0\"",
    ])
    .arg(&e.path)
    .current_dir(&e.dir)
    .env("OMP_NUM_THREADS", threads)
    .envs(e.env.iter().copied());
    c
}

/// Runs `e` once, stopped after `limit` seconds.
fn run(e: &Exe, suite: &str, threads: &str, limit: f64, out: &Path) -> Result<Sample, String> {
    let stdout = std::fs::File::create(out).map_err(|e| e.to_string())?;
    let cpu0 = children_cpu();
    let start = Instant::now();
    let mut child = command(e, threads)
        .stdout(stdout)
        .stderr(Stdio::null())
        .spawn()
        .map_err(|x| x.to_string())?;
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|x| x.to_string())? {
            break s;
        }
        if start.elapsed().as_secs_f64() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("timeout (> {limit:.0} s)"));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let wall = start.elapsed().as_secs_f64();
    let cpu = children_cpu() - cpu0;
    let text = std::fs::read_to_string(out).unwrap_or_default();
    if !status.success() {
        return Err(format!("exited with {status}"));
    }
    let time = match suite {
        "npb" => {
            let ok = text.lines().any(|l| {
                let l: String = l.split_whitespace().collect();
                l == "Verification=SUCCESSFUL"
            });
            if !ok {
                return Err("verification failed".into());
            }
            wall
        }
        _ => text
            .lines()
            .rev()
            .find_map(|l| l.trim().parse::<f64>().ok())
            .ok_or("no kernel time printed")?,
    };
    Ok(Sample { time, cpu })
}

/// `min/median/max` of `v`.
fn spread(v: &[f64]) -> String {
    if v.is_empty() {
        return "-".into();
    }
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{min:.2}/{:.2}/{max:.2}", median(v.to_vec()))
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "?".into());
    let n = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cpu}, {n} hardware threads")
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let runs: usize = std::env::var("ACC2OMP_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(3);
    let threads = std::env::var("ACC2OMP_BENCH_THREADS").unwrap_or_else(|_| "2".into());
    if std::env::var_os("OMP_WAIT_POLICY").is_none() {
        // SAFETY: no other thread runs yet.
        unsafe { std::env::set_var("OMP_WAIT_POLICY", "passive") };
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let cfg = Config {
        tool: env!("CARGO_BIN_EXE_acc2omp"),
        profile: std::env::var("ACC2OMP_BENCH_PROFILE").unwrap_or_else(|_| "default".into()),
        tool_args: std::env::var("ACC2OMP_BENCH_ARGS")
            .map(|v| v.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
        compilers: env_list("ACC2OMP_BENCH_COMPILERS")
            .unwrap_or_else(|| vec!["gcc".into(), "clang".into()]),
        only: env_list("ACC2OMP_BENCH_PROGRAMS"),
        tmp: tmp.path().to_path_buf(),
    };
    let suites =
        env_list("ACC2OMP_BENCH_SUITES").unwrap_or_else(|| vec!["npb".into(), "polybench".into()]);
    let npb = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .or_else(|| std::env::var("ACC2OMP_NPB").ok())
        .map(PathBuf::from);
    let timeout: Option<f64> = std::env::var("ACC2OMP_BENCH_TIMEOUT")
        .ok()
        .and_then(|v| v.parse().ok());

    let mut problems = Vec::new();
    // Not failures: what could not be measured or compared, and why.
    let mut notes: Vec<String> = Vec::new();
    let mut programs = Vec::new();
    if suites.iter().any(|s| s == "npb") {
        match &npb {
            Some(dir) => {
                let class = std::env::var("ACC2OMP_NPB_CLASS").unwrap_or_else(|_| "W".into());
                let hand = std::env::var_os("ACC2OMP_NPB_OMP").map(PathBuf::from);
                programs.extend(npb_programs(
                    &cfg,
                    dir,
                    hand.as_deref(),
                    &class,
                    &mut problems,
                    &mut notes,
                ));
            }
            None => println!(
                "NPB skipped: give the path of a copy of uhhpctools/openacc-npb (`cargo bench --bench real_code -- DIR` or ACC2OMP_NPB=DIR)"
            ),
        }
    }
    if suites.iter().any(|s| s == "polybench") {
        let pb = std::env::var("ACC2OMP_POLYBENCH")
            .map(PathBuf::from)
            .unwrap_or_else(|_| root.join("../shared/corpus/polybench-acc"));
        let dataset =
            std::env::var("ACC2OMP_POLYBENCH_DATASET").unwrap_or_else(|_| "STANDARD".into());
        if pb.join("OpenACC").is_dir() {
            programs.extend(polybench_programs(
                &cfg,
                &pb,
                &dataset,
                &mut problems,
                &mut notes,
            ));
        } else {
            println!(
                "PolyBench skipped: {} not found (ACC2OMP_POLYBENCH)",
                pb.display()
            );
        }
    }

    println!(
        "real code: {}; {runs} round(s); OMP_NUM_THREADS={threads}; OMP_WAIT_POLICY={}; profile {}; load average {}",
        machine(),
        std::env::var("OMP_WAIT_POLICY").unwrap_or_default(),
        cfg.profile,
        loadavg()
    );
    // Per program: samples of (seq, translated, hand), and the first error.
    type Samples = [Vec<Sample>; 3];
    let mut samples: Vec<Samples> = programs.iter().map(|_| Default::default()).collect();
    let mut failed: Vec<Option<String>> = vec![None; programs.len()];
    // A hand-written version that fails or times out is a note: the row stays, without it.
    let mut hand_failed: Vec<Option<String>> = vec![None; programs.len()];
    let out = cfg.tmp.join("run.txt");
    for _ in 0..runs {
        for (k, p) in programs.iter().enumerate() {
            if failed[k].is_some() {
                continue;
            }
            let mut round: [Option<Sample>; 3] = [None; 3];
            let hand = p.hand.as_ref().filter(|_| hand_failed[k].is_none());
            for (slot, e) in [Some(&p.seq), Some(&p.translated), hand]
                .into_iter()
                .enumerate()
            {
                let Some(e) = e else { continue };
                let limit = match (slot, round[0]) {
                    (0, _) => 3600.0,
                    (_, Some(s)) => timeout.unwrap_or((20.0 * s.time).max(30.0)),
                    (_, None) => timeout.unwrap_or(600.0),
                };
                match run(e, p.suite, &threads, limit, &out) {
                    Ok(s) => round[slot] = Some(s),
                    Err(err) if slot == 2 => {
                        notes.push(format!(
                            "{} {}: the hand-written version: {err}",
                            p.name, p.compiler
                        ));
                        hand_failed[k] = Some(err);
                    }
                    Err(err) => {
                        let which = ["sequential", "translation", "hand-written"][slot];
                        failed[k] = Some(format!("{which}: {err}"));
                        break;
                    }
                }
            }
            if failed[k].is_none() {
                for (slot, s) in round.into_iter().enumerate() {
                    samples[k][slot].extend(s);
                }
            }
        }
    }
    // The regions each translation enters, from one more run (not timed).
    let counter = region_counter(&cfg);
    let regions: Vec<Option<u64>> = (programs.iter().enumerate())
        .map(|(k, p)| {
            (failed[k].is_none())
                .then(|| regions_of(p, counter.as_deref()?, &threads))
                .flatten()
        })
        .collect();
    let (labels, table) = region_costs(&cfg, &threads, runs);
    println!(
        "\none region (benches/region_cost.c), microseconds per region, wall / CPU, median of {runs}:"
    );
    print!("{:<48}", "construct");
    for (name, _) in &table {
        print!(" {name:>16}");
    }
    println!();
    for (k, label) in labels.iter().enumerate() {
        print!("{label:<48}");
        for (_, cells) in &table {
            print!(" {:>16}", cells[k]);
        }
        println!();
    }
    println!("load average after: {}", loadavg());

    for suite in ["npb", "polybench"] {
        let rows: Vec<usize> = (0..programs.len())
            .filter(|&k| programs[k].suite == suite)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let what = if suite == "npb" { "process" } else { "kernel" };
        println!(
            "\n{:<18} {:<14} {:>9} {:>9} {:>16} {:>7} {:>9} {:>16} {:>7} {:>9}",
            suite,
            "compiler",
            "seq s",
            "transl s",
            "transl/seq",
            "cpu",
            "hand s",
            "transl/hand",
            "cpu",
            "regions"
        );
        println!(
            "({what} time, median; ratios per round min/median/max; cpu: ratio of median CPU times;"
        );
        println!(
            " regions: target regions (gcc) or kernels (clang-offload) one run of the translation enters)"
        );
        for k in rows {
            let p = &programs[k];
            if let Some(e) = &failed[k] {
                println!("{:<18} {:<14} {e}", p.name, p.compiler);
                problems.push(format!("{} {}: {e}", p.name, p.compiler));
                continue;
            }
            let [seq, tr, hand] = &samples[k];
            // Ratios only from rounds that timed every build.
            let hand: &Vec<Sample> = if hand_failed[k].is_some() {
                &Vec::new()
            } else {
                hand
            };
            let med = |v: &Vec<Sample>, f: fn(&Sample) -> f64| median(v.iter().map(f).collect());
            let ratios = |v: &Vec<Sample>| -> Vec<f64> {
                tr.iter().zip(v).map(|(t, s)| t.time / s.time).collect()
            };
            let cpu = |v: &Vec<Sample>| med(tr, |s| s.cpu) / med(v, |s| s.cpu);
            let (hand_t, hand_r, hand_c) = if hand.is_empty() {
                ("-".to_string(), "-".to_string(), "-".to_string())
            } else {
                (
                    format!("{:.3}", med(hand, |s| s.time)),
                    spread(&ratios(hand)),
                    format!("{:.2}", cpu(hand)),
                )
            };
            println!(
                "{:<18} {:<14} {:>9.3} {:>9.3} {:>16} {:>7.2} {:>9} {:>16} {:>7} {:>9}",
                if p.races {
                    format!("{} *", p.name)
                } else {
                    p.name.clone()
                },
                p.compiler,
                med(seq, |s| s.time),
                med(tr, |s| s.time),
                spread(&ratios(seq)),
                cpu(seq),
                hand_t,
                hand_r,
                hand_c,
                regions[k].map_or("-".to_string(), |n| n.to_string())
            );
        }
    }
    if programs.iter().any(|p| p.races) {
        println!("(*: the original races; the translation's arrays were not compared with it)");
    }
    if !notes.is_empty() {
        println!("\n{}", notes.join("\n"));
    }
    if !problems.is_empty() {
        println!("\n{}", problems.join("\n"));
        drop(tmp);
        std::process::exit(1);
    }
}
