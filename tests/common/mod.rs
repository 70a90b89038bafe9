//! Shared helpers for tests that need the compilers.
#![allow(dead_code)]

pub mod cache;
pub mod fortran;
pub mod host_guard;
pub mod offload_images;
pub mod oracle;

use std::path::Path;
use std::process::{Command, Output};

/// Whether CI demands the compiler-backed tests (set by `.ci/run`).
pub fn required() -> bool {
    std::env::var("ACC2OMP_REQUIRE_TOOLS").is_ok_and(|v| v == "1")
}

/// The shared corpus of public OpenACC applications (`ACC2OMP_CORPUS`, by default
/// `../shared/corpus` beside the repository), or None with a loud message when it is not
/// there: it is data beside a checkout, not a tool CI installs, so its suites skip without it.
pub fn corpus(suite: &str) -> Option<std::path::PathBuf> {
    let dir = corpus_dir();
    if dir.is_dir() {
        return Some(dir);
    }
    eprintln!(
        "\n!!! SKIPPED {suite}: {} is missing (the shared application corpus; set ACC2OMP_CORPUS)\n",
        dir.display()
    );
    None
}

/// Where the shared corpus is looked for (see [`corpus`]).
pub fn corpus_dir() -> std::path::PathBuf {
    std::env::var_os("ACC2OMP_CORPUS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus")
        })
}

fn runs(cmd: &str) -> bool {
    Command::new(cmd)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// True when gcc, g++, clang-19 and clang++-19 all run. Without them: panic in CI,
/// otherwise a loud skip message.
pub fn compilers(test: &str) -> bool {
    let missing: Vec<&str> = ["gcc", "g++", "clang-19", "clang++-19"]
        .into_iter()
        .filter(|c| !runs(c))
        .collect();
    if missing.is_empty() {
        return true;
    }
    if required() {
        panic!(
            "{test}: ACC2OMP_REQUIRE_TOOLS=1 but {missing:?} cannot be run; install clang-19 and libomp-19-dev"
        );
    }
    eprintln!("\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!");
    eprintln!("!!! SKIPPED {test}: {missing:?} not found (install clang-19, libomp-19-dev)");
    eprintln!("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n");
    false
}

pub fn is_cxx(path: &Path) -> bool {
    path.extension().is_some_and(|e| e != "c")
}

/// Compile `src` (written to `path`) to an object or program; returns stderr on failure.
pub fn compile(
    compiler: &str,
    flags: &[&str],
    path: &Path,
    out: &Path,
    link: bool,
) -> Result<(), String> {
    let mut cmd = Command::new(compiler);
    cmd.args(flags).arg(path).arg("-o").arg(out).arg("-w");
    if !link {
        cmd.arg("-c");
    } else {
        cmd.arg("-lm");
    }
    let o = cmd.output().map_err(|e| format!("{compiler}: {e}"))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&o.stderr).into_owned())
    }
}

pub const CLANG_OFFLOAD: &[&str] = &["-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu"];

/// The reference build's flags: OpenACC on the host. Where GCC's nvptx or amdgcn offloading
/// is installed, plain `-fopenacc` also builds device code (which needs `-foffload=-lm` for
/// math and fails without a GPU); the reference is the host fallback either way.
pub const HOST_OPENACC: &[&str] = &["-fopenacc", "-foffload=disable"];

/// GCC's OpenMP build of a translation on the host, for the same reason.
pub const GCC_OPENMP: &[&str] = &["-fopenmp", "-foffload=disable"];

pub fn gcc_for(path: &Path) -> &'static str {
    if is_cxx(path) { "g++" } else { "gcc" }
}

pub fn clang_for(path: &Path) -> &'static str {
    if is_cxx(path) {
        "clang++-19"
    } else {
        "clang-19"
    }
}

/// True when libclang loads. Without it: panic in CI, otherwise a loud skip message.
/// `ACC2OMP_EXPECT_LIBCLANG=N` (set by `.ci/run`) makes another major version a failure, so
/// that each run proves which libclang path it tested.
pub fn libclang(test: &str) -> bool {
    match acc2omp::semantic::preload(&acc2omp::semantic::SemanticConfig::default()) {
        Ok(loaded) => {
            if let Ok(want) = std::env::var("ACC2OMP_EXPECT_LIBCLANG") {
                assert_eq!(
                    libclang_major(&loaded).map(|m| m.to_string()).as_deref(),
                    Some(want.as_str()),
                    "{test}: loaded {loaded}"
                );
            }
            true
        }
        Err(why) => {
            if required() {
                panic!(
                    "{test}: ACC2OMP_REQUIRE_TOOLS=1 but libclang cannot be loaded ({why}); install libclang1-19"
                );
            }
            eprintln!(
                "\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
            );
            eprintln!(
                "!!! SKIPPED {test}: libclang cannot be loaded ({why}); install libclang1-19"
            );
            eprintln!(
                "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
            );
            false
        }
    }
}

/// The release binary's translation of `src` (named `name`) with `profile`.
pub fn translate(src: &str, name: &str, profile: acc2omp::profile::Profile) -> String {
    use std::io::Write;
    use std::process::Stdio;
    let mut c = Command::new(env!("CARGO_BIN_EXE_acc2omp"))
        .args([
            "migrate",
            "-",
            "-q",
            "--stdin-filename",
            name,
            "--profile",
            profile.name(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(src.as_bytes()).unwrap();
    String::from_utf8_lossy(&c.wait_with_output().unwrap().stdout).into_owned()
}

/// The major version in `preload`'s answer (`libclang 22.1.8 (/usr/lib/…)`).
pub fn libclang_major(loaded: &str) -> Option<u32> {
    loaded
        .strip_prefix("libclang ")?
        .split('.')
        .next()?
        .parse()
        .ok()
}

/// The release binary run in `dir` with `args`, `input` on its standard input.
pub fn run_with_input(dir: &Path, args: &[&str], input: &str) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut c = Command::new(env!("CARGO_BIN_EXE_acc2omp"))
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    c.wait_with_output().unwrap()
}

/// The release binary run in `dir` with `args`.
pub fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_acc2omp"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// miniWeather's `build/check_output.sh` with the tolerances its CMakeLists.txt gives for
/// double precision (`tol` 1.e-13 for mass, 4.5e-5 for total energy): the relative change
/// of mass is below 1e-13 in magnitude, that of total energy is negative and below 4.5e-5 in
/// magnitude, neither is NaN.
pub fn miniweather_check(stdout: &str) -> Result<String, String> {
    let value = |label: &str| -> Result<f64, String> {
        let line = stdout
            .lines()
            .find(|l| l.contains(label))
            .ok_or(format!("no {label} line in the output"))?;
        let word = line
            .split_whitespace()
            .nth(1)
            .ok_or(format!("no value on the {label} line"))?;
        word.parse::<f64>()
            .map_err(|e| format!("{label} value {word:?}: {e}"))
    };
    let (mass, te) = (value("d_mass")?, value("d_te")?);
    let summary = format!("d_mass {mass:e}, d_te {te:e}");
    if mass.is_nan() || te.is_nan() {
        return Err(format!("NaN: {summary}"));
    }
    if mass.abs() >= 1e-13 {
        return Err(format!("mass change too large: {summary}"));
    }
    if te >= 0.0 {
        return Err(format!("total energy change must be negative: {summary}"));
    }
    if te.abs() >= 4.5e-5 {
        return Err(format!("total energy change too large: {summary}"));
    }
    Ok(summary)
}
