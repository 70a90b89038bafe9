//! C and C++ applications of the shared corpus (`../shared/corpus/`, never copied into the
//! repository) under the oracle: PolyBench-ACC's kernels (`MINI_DATASET`, the arrays dumped
//! with `-DPOLYBENCH_DUMP_ARRAYS`) and miniWeather C++ (its own conservation check, one MPI
//! rank of Debian's Open MPI, PnetCDF). The original under `gcc -fopenacc` is the reference;
//! the translation, made with a compile database (`-p`, "db") and without one ("nodb"), is
//! built with `gcc -fopenmp` and `clang-19 -fopenmp` (2 threads) and with Clang's host
//! offloading (separate memory) with one team, with 4 teams and with one team under the host
//! guard (`common::host_guard`: a region that dereferences a host pointer dies, as on a GPU),
//! and must give the reference's result. `tests/applications/expectations.toml` lists the originals that cannot serve as a
//! reference and the known failures, each with its reason; a listed failure that passes fails
//! the suite, unless it is listed as one whose result varies from run to run (then reported):
//! such an entry tolerates only an output that differs from the reference, never a build
//! failure or a crash. NPB (no licence, so not in the corpus) has a script of its own:
//! `tests/applications/npb.sh`.
//!
//! `cargo test --release --test applications [-- FILTER]`.

mod common;

use common::cache::{self, Memo, SourceFile};
use common::oracle::{self, Translation};
use libtest_mimic::{Arguments, Failed, Trial};
use serde::Deserialize;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

/// How a translation is built and run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Build {
    Gcc,
    Clang,
    ClangOffload,
    ClangOffload4Teams,
    /// Clang's host offloading with the host's heap made inaccessible while target regions
    /// run (`common::host_guard`): a region that dereferences a host pointer dies, as on a GPU.
    ClangOffloadGuarded,
}

const BUILDS: [Build; 5] = [
    Build::Gcc,
    Build::Clang,
    Build::ClangOffload,
    Build::ClangOffload4Teams,
    Build::ClangOffloadGuarded,
];

/// With a compile database (`-p`) and without one.
const MODES: [&str; 2] = ["db", "nodb"];

impl Build {
    fn oracle(self) -> oracle::Build {
        match self {
            Build::Gcc => oracle::Build::Gcc,
            Build::Clang => oracle::Build::ClangHost,
            Build::ClangOffload | Build::ClangOffloadGuarded => oracle::Build::ClangOffload,
            Build::ClangOffload4Teams => oracle::Build::ClangOffload4Teams,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Build::ClangOffloadGuarded => "clang-offload-guarded",
            _ => self.oracle().name(),
        }
    }

    /// The run environment: shared-memory builds at 2 threads.
    fn env(self) -> Result<Vec<(&'static str, &'static str)>, String> {
        let mut env = self.oracle().env();
        if matches!(self, Build::Gcc | Build::Clang) {
            env.push(("OMP_NUM_THREADS", "2"));
        }
        if self == Build::ClangOffloadGuarded {
            env.push(common::host_guard::env()?);
        }
        Ok(env)
    }
}

/// One application: its source files (the first is the one with OpenACC), compile flags, and
/// how a run is compared.
struct App {
    name: String,
    /// Files by the name the build sees (all in one directory) and their path in the corpus.
    files: Vec<(String, PathBuf)>,
    /// Indices into `files` of the translation units.
    units: Vec<usize>,
    /// Flags for every build and for the compile database.
    flags: Vec<String>,
    /// Flags after the sources (libraries).
    libs: Vec<String>,
    cxx: bool,
    /// Seconds a run may take.
    seconds: u32,
    check: Check,
}

#[derive(Clone, Copy)]
enum Check {
    /// The output (stdout, then stderr without libomp's `OMP:` notes) equals the reference's.
    SameOutput,
    /// miniWeather's `build/check_output.sh`.
    MiniWeather,
}

fn corpus() -> PathBuf {
    common::corpus_dir()
}

fn polybench() -> Vec<App> {
    let root = corpus().join("polybench-acc/OpenACC");
    let utilities = root.join("utilities");
    let mut kernels = Vec::new();
    for group in ["datamining", "linear-algebra", "medley", "stencils"] {
        let mut stack = vec![root.join(group)];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "c") {
                    kernels.push(p);
                }
            }
        }
    }
    kernels.sort();
    kernels
        .into_iter()
        .map(|c| {
            let stem = c.file_stem().unwrap().to_string_lossy().into_owned();
            let h = c.with_extension("h");
            App {
                name: format!("polybench/{stem}"),
                files: vec![
                    (format!("{stem}.c"), c.clone()),
                    (format!("{stem}.h"), h),
                    ("polybench.c".into(), utilities.join("polybench.c")),
                    ("polybench.h".into(), utilities.join("polybench.h")),
                ],
                units: vec![0, 2],
                // `#include <polybench.h>`: the build's directory is on the include path.
                flags: ["-O1", "-I.", "-DMINI_DATASET", "-DPOLYBENCH_DUMP_ARRAYS"]
                    .map(String::from)
                    .to_vec(),
                libs: Vec::new(),
                cxx: false,
                seconds: 60,
                check: Check::SameOutput,
            }
        })
        .collect()
}

/// `mpicxx --showme:OPT` split into words.
fn mpi_flags(opt: &str) -> Option<Vec<String>> {
    let o = Command::new("mpicxx").arg(opt).output().ok()?;
    o.status.success().then(|| {
        String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .map(String::from)
            .collect()
    })
}

fn miniweather() -> Option<App> {
    let (compile, link) = (mpi_flags("--showme:compile")?, mpi_flags("--showme:link")?);
    let mut flags: Vec<String> = [
        // TEST_DEFS of the app's CMakeLists.txt (double precision).
        "-O2",
        "-D_NX=100",
        "-D_NZ=50",
        "-D_SIM_TIME=400",
        "-D_OUT_FREQ=400",
        "-D_DATA_SPEC=DATA_SPEC_THERMAL",
        "-DNO_INFORM",
    ]
    .map(String::from)
    .to_vec();
    flags.extend(compile);
    // The build cache puts every flag before the sources: the libraries are kept although
    // nothing before them uses them yet.
    let mut libs = vec!["-Wl,--no-as-needed".to_string()];
    libs.extend(link);
    libs.push("-lpnetcdf".into());
    let file = "miniWeather_mpi_openacc.cpp";
    Some(App {
        name: "miniweather-cxx".into(),
        files: vec![(file.into(), corpus().join("miniweather/c").join(file))],
        units: vec![0],
        flags,
        libs,
        cxx: true,
        seconds: 600,
        check: Check::MiniWeather,
    })
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Expectations {
    #[serde(default)]
    reference: Vec<Reference>,
    #[serde(default)]
    failure: Vec<Failure>,
}

/// An original that `gcc -fopenacc` does not build or run: no reference.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Reference {
    app: String,
    #[allow(dead_code)]
    reason: String,
}

/// Builds where the translation (migrated in `modes`) is known not to give the reference's
/// result.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Failure {
    app: String,
    modes: Vec<String>,
    builds: Vec<String>,
    /// The result changes from run to run (a race in the original): a listed case that passes
    /// is reported, not failed; one that fails to build or run fails.
    #[serde(default)]
    varies: bool,
    #[allow(dead_code)]
    reason: String,
}

impl Expectations {
    fn path() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/applications/expectations.toml")
    }

    fn load() -> Result<Expectations, String> {
        let text = fs::read_to_string(Self::path()).map_err(|e| e.to_string())?;
        toml::from_str(&text).map_err(|e| format!("{}: {e}", Self::path().display()))
    }

    fn no_reference(&self, app: &str) -> bool {
        self.reference.iter().any(|r| r.app == app)
    }

    /// Whether the case is listed as failing, and then whether its result varies.
    fn fails(&self, app: &str, mode: &str, build: Build) -> Option<bool> {
        self.failure
            .iter()
            .find(|f| {
                f.app == app
                    && f.modes.iter().any(|m| m == mode)
                    && f.builds.iter().any(|b| b == build.name())
            })
            .map(|f| f.varies)
    }
}

/// What a run printed: stdout, then stderr without libomp's notes (`OMP: Warning …`).
struct Output {
    code: Option<i32>,
    text: String,
}

/// Run `exe` in a directory of its own (miniWeather writes `output.nc`).
fn run(exe: &Path, env: &[(&str, &str)], seconds: u32) -> Result<Output, String> {
    let dir = tempfile::tempdir_in(cache::dir("tmp")).map_err(|e| e.to_string())?;
    let mut cmd = Command::new("timeout");
    cmd.args(["-k", "5", &seconds.to_string()])
        .arg(exe)
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .env("OMP_WAIT_POLICY", "passive");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().map_err(|e| e.to_string())?;
    let stderr = String::from_utf8_lossy(&o.stderr);
    let kept: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("OMP: ")).collect();
    Ok(Output {
        code: o.status.code(),
        text: format!("{}{}", String::from_utf8_lossy(&o.stdout), kept.join("\n")),
    })
}

type Outcome = Result<(), String>;

struct Suite {
    apps: Vec<App>,
    expect: Expectations,
    translations: Memo<(String, &'static str), Result<Translation, String>>,
    references: Memo<String, Result<String, String>>,
}

impl Suite {
    fn app(&self, name: &str) -> &App {
        self.apps.iter().find(|a| a.name == name).unwrap()
    }

    /// The app's files, the first replaced by `text` when given.
    fn files(app: &App, text: Option<&str>) -> Result<Vec<SourceFile>, String> {
        app.files
            .iter()
            .enumerate()
            .map(|(k, (rel, path))| {
                let text = match (k, text) {
                    (0, Some(t)) => t.to_string(),
                    _ => {
                        fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?
                    }
                };
                Ok(SourceFile {
                    rel: rel.clone(),
                    text,
                })
            })
            .collect()
    }

    fn build(
        app: &App,
        compiler: &str,
        flags: &[&str],
        text: Option<&str>,
    ) -> Result<PathBuf, String> {
        let files = Self::files(app, text)?;
        let mut all: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
        all.extend(app.flags.iter().cloned());
        all.extend(app.libs.iter().cloned());
        cache::compile(compiler, &all, &files, &app.units)
    }

    /// The reference's output (or, for miniWeather, its check's summary).
    fn reference(&self, app: &App) -> Result<String, String> {
        self.references.get(&app.name, || {
            let gcc = if app.cxx { "g++" } else { "gcc" };
            let exe = Self::build(app, gcc, common::HOST_OPENACC, None)
                .map_err(|e| format!("{gcc} -fopenacc cannot compile the original:\n{e}"))?;
            let out = run(&exe, &[("OMP_NUM_THREADS", "2")], app.seconds)?;
            if out.code != Some(0) {
                return Err(format!(
                    "the original exits with {:?} under {gcc} -fopenacc",
                    out.code
                ));
            }
            match app.check {
                Check::SameOutput => Ok(out.text),
                Check::MiniWeather => common::miniweather_check(&out.text),
            }
        })
    }

    /// The original must serve as a reference, or fail to, as listed.
    fn check_reference(&self, app: &App) -> Outcome {
        match (self.reference(app), self.expect.no_reference(&app.name)) {
            (Ok(_), true) => Err(
                "listed in [[reference]] but the original builds and runs: remove the entry".into(),
            ),
            (Err(_), true) => Ok(()),
            (Err(e), false) => Err(e),
            (Ok(_), false) => Ok(()),
        }
    }

    /// The translation in `mode`: with a compile database holding the app's flags, or as a
    /// user without one would run it.
    fn translation(&self, app: &App, mode: &'static str) -> Result<Translation, String> {
        self.translations.get(&(app.name.clone(), mode), || {
            let (rel, path) = &app.files[0];
            let src = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let name = path.to_string_lossy().into_owned();
            if mode == "nodb" {
                return Ok(oracle::translate(&src, &name, &["-q"]));
            }
            let dir = tempfile::tempdir_in(cache::dir("tmp")).map_err(|e| e.to_string())?;
            // The corpus keeps headers next to the sources of the build's flat directory,
            // except PolyBench's utilities.
            let mut args = vec!["gcc".to_string(), "-c".to_string()];
            args.extend(app.flags.iter().cloned());
            if let Some((_, h)) = app.files.iter().find(|(r, _)| r == "polybench.h") {
                args.push(format!("-I{}", h.parent().unwrap().display()));
            }
            args.push(rel.clone());
            let entry = serde_json::json!([{
                "directory": path.parent().unwrap(),
                "file": path,
                "arguments": args,
            }]);
            fs::write(dir.path().join("compile_commands.json"), entry.to_string())
                .map_err(|e| e.to_string())?;
            let db = dir.path().to_string_lossy().into_owned();
            Ok(oracle::translate(&src, &name, &["-q", "-p", &db]))
        })
    }

    /// The translation: the tool does not fail and leaves no OpenACC.
    fn check_translation(&self, app: &App, mode: &'static str) -> Result<String, String> {
        let t = self.translation(app, mode)?;
        if let Some(why) = &t.broken {
            return Err(format!("acc2omp failed: {why}"));
        }
        if let Some(l) = oracle::leftover_openacc(&t.text) {
            return Err(format!("OpenACC left: {l}\n{}", t.diagnostics));
        }
        Ok(t.text)
    }

    fn check_build(&self, app: &App, mode: &'static str, build: Build) -> Outcome {
        let listed = self.expect.fails(&app.name, mode, build);
        let result = (|| {
            let reference = self.reference(app).map_err(Miss::Broken)?;
            let text = self.check_translation(app, mode).map_err(Miss::Broken)?;
            let (compiler, flags) = build.oracle().compiler(app.cxx);
            let exe = Self::build(app, compiler, flags, Some(&text)).map_err(|e| {
                Miss::Broken(format!(
                    "{} cannot compile the translation:\n{e}",
                    build.name()
                ))
            })?;
            let env = build.env().map_err(Miss::Broken)?;
            let out = run(&exe, &env, app.seconds).map_err(Miss::Broken)?;
            if out.code != Some(0) {
                return Err(Miss::Broken(format!(
                    "exits with {:?}:\n{}",
                    out.code, out.text
                )));
            }
            match app.check {
                Check::SameOutput if out.text != reference => Err(Miss::Differs(format!(
                    "output differs from the reference: {}",
                    oracle::first_difference(&reference, &out.text)
                ))),
                Check::SameOutput => Ok(()),
                Check::MiniWeather => common::miniweather_check(&out.text)
                    .map(|s| eprintln!("{} {mode} {}: {s}", app.name, build.name()))
                    .map_err(Miss::Differs),
            }
        })();
        match (result, listed) {
            (Ok(()), Some(true)) => {
                eprintln!(
                    "applications: {} ({mode}, {}) passed this time; it is listed as one whose result varies",
                    app.name,
                    build.name()
                );
                Ok(())
            }
            (Ok(()), Some(false)) => Err(format!(
                "listed in [[failure]], but the translation ({mode}) now passes under {}: remove it from the entry",
                build.name()
            )),
            // A result that varies is a different output, never a build failure or a crash.
            (Err(Miss::Broken(why)), Some(true)) => Err(format!(
                "listed with `varies = true`, which tolerates only an output that differs from the reference, but: {why}"
            )),
            (Err(_), Some(_)) => Ok(()),
            (Err(Miss::Broken(why) | Miss::Differs(why)), None) => Err(why),
            (Ok(()), None) => Ok(()),
        }
    }
}

/// Why a build does not give the reference's result.
enum Miss {
    /// It builds and runs to the end, and prints something else.
    Differs(String),
    /// No reference, no translation, no build, or the run fails.
    Broken(String),
}

fn trial(name: String, f: impl FnOnce() -> Outcome + Send + 'static) -> Trial {
    Trial::test(name, move || f().map_err(Failed::from))
}

fn main() {
    let args = Arguments::from_args();
    if !common::compilers("applications") {
        libtest_mimic::run(&args, Vec::new()).exit();
    }
    if common::corpus("applications").is_none() {
        libtest_mimic::run(&args, Vec::new()).exit();
    }
    let mut apps = polybench();
    match miniweather() {
        Some(app) => apps.push(app),
        None if common::required() => {
            panic!(
                "applications: ACC2OMP_REQUIRE_TOOLS=1 but mpicxx cannot be run; install libopenmpi-dev and libpnetcdf-dev"
            )
        }
        None => eprintln!(
            "\n!!! SKIPPED miniweather-cxx: mpicxx not found (install libopenmpi-dev, libpnetcdf-dev)\n"
        ),
    }
    let (expect, load_error) = match Expectations::load() {
        Ok(e) => (e, None),
        Err(e) => (Expectations::default(), Some(e)),
    };
    let suite = Arc::new(Suite {
        apps,
        expect,
        translations: Memo::new(),
        references: Memo::new(),
    });
    let mut trials = vec![list_check(&suite, load_error)];
    for app in &suite.apps {
        let name = app.name.clone();
        let s = suite.clone();
        let n = name.clone();
        trials.push(trial(format!("{name}/reference"), move || {
            s.check_reference(s.app(&n))
        }));
        if suite.expect.no_reference(&name) {
            continue;
        }
        for mode in MODES {
            let (s, n) = (suite.clone(), name.clone());
            trials.push(trial(format!("{name}/{mode}/translation"), move || {
                s.check_translation(s.app(&n), mode).map(|_| ())
            }));
            for build in BUILDS {
                let (s, n) = (suite.clone(), name.clone());
                trials.push(trial(
                    format!("{name}/{mode}/{}", build.name()),
                    move || s.check_build(s.app(&n), mode, build),
                ));
            }
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

/// The expectations name real applications, modes and builds.
fn list_check(suite: &Suite, load_error: Option<String>) -> Trial {
    let mut errors: Vec<String> = load_error.into_iter().collect();
    let known = |a: &str| suite.apps.iter().any(|x| x.name == a);
    for e in &suite.expect.reference {
        if !known(&e.app) {
            errors.push(format!("[[reference]] names an unknown app {}", e.app));
        }
    }
    for e in &suite.expect.failure {
        if !known(&e.app) {
            errors.push(format!("[[failure]] names an unknown app {}", e.app));
        }
        if suite.expect.no_reference(&e.app) {
            errors.push(format!(
                "[[failure]] {}: the app has no reference (listed in [[reference]]), so its builds are never run",
                e.app
            ));
        }
        for m in &e.modes {
            if !MODES.contains(&m.as_str()) {
                errors.push(format!("[[failure]] {}: unknown mode {m}", e.app));
            }
        }
        for b in &e.builds {
            if !BUILDS.iter().any(|k| k.name() == b) {
                errors.push(format!("[[failure]] {}: unknown build {b}", e.app));
            }
        }
    }
    trial("expectations.toml".into(), move || {
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("\n"))
        }
    })
}
