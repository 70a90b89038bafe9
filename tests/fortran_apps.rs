//! Fortran applications under the Fortran oracle (`tests/common/fortran.rs`): miniWeather
//! (`../shared/corpus/miniweather/fortran/`, never copied into the repository) with its own
//! conservation check. The OpenACC original under `gfortran -fopenacc` is the reference; the
//! hand-written OpenMP twin (`miniWeather_mpi_openmp45.F90`) must pass under flang-22
//! offloading with separate memory, in forward and reverse loop order, which proves the
//! oracle on a real application; the tool's translation of the original is scored the same
//! way. MPI and PnetCDF are replaced by one-rank stand-in modules (`tests/fortran_apps/`):
//! Debian's modules are built by gfortran and cannot be read by flang, and the check needs
//! no output file. `tests/fortran_apps/expectations.toml` lists what is known not to pass;
//! an entry that starts passing fails the suite.
//!
//! `cargo test --release --test fortran_apps [-- FILTER]`.

mod common;

use acc2omp::profile::Profile;
use common::cache::{Memo, SourceFile};
use common::fortran::{self, Build};
use common::oracle::{self, Ran, Translation};
use libtest_mimic::{Arguments, Failed, Trial};
use serde::Deserialize;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The builds an application runs in: shared memory, and separate memory in both orders.
const BUILDS: [Build; 3] = [
    Build::Gfortran,
    Build::FlangOffload,
    Build::FlangOffloadReverse,
];

/// One application: an OpenACC original, its hand-written OpenMP twin, how to build them
/// and how to check a run.
struct App {
    name: &'static str,
    dir: PathBuf,
    original: &'static str,
    twin: &'static str,
    /// Options for every build (the app's own test configuration).
    flags: &'static [&'static str],
    /// gfortran needs more room than 132 columns for these sources.
    gfortran_flags: &'static [&'static str],
    check: fn(&str) -> Result<String, String>,
}

fn corpus() -> PathBuf {
    common::corpus_dir()
}

fn apps() -> Vec<App> {
    vec![App {
        name: "miniweather",
        dir: corpus().join("miniweather/fortran"),
        original: "miniWeather_mpi_openacc.F90",
        twin: "miniWeather_mpi_openmp45.F90",
        // TEST_DEFS of the app's CMakeLists.txt; NO_INFORM as its build scripts set it.
        flags: &[
            "-O2",
            "-D_NX=100",
            "-D_NZ=50",
            "-D_SIM_TIME=400",
            "-D_OUT_FREQ=400",
            "-D_DATA_SPEC=DATA_SPEC_THERMAL",
            "-DNO_INFORM",
        ],
        gfortran_flags: &["-ffree-line-length-none"],
        check: common::miniweather_check,
    }]
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Expectations {
    #[serde(default)]
    not_translated: Vec<NotTranslated>,
    #[serde(default)]
    oracle_limit: Vec<Limit>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NotTranslated {
    app: String,
    #[allow(dead_code)]
    reason: String,
}

/// Builds where a source of an application (`twin`, or `translation` for the tool's
/// output) gives a wrong result or does not build through a limit of a compiler.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Limit {
    app: String,
    source: String,
    builds: Vec<String>,
    #[allow(dead_code)]
    reason: String,
}

impl Expectations {
    fn path() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fortran_apps/expectations.toml")
    }

    fn load() -> Result<Expectations, String> {
        let text = fs::read_to_string(Self::path()).map_err(|e| e.to_string())?;
        toml::from_str(&text).map_err(|e| format!("{}: {e}", Self::path().display()))
    }

    fn not_translated(&self, app: &str) -> bool {
        self.not_translated.iter().any(|e| e.app == app)
    }

    fn limited(&self, app: &str, source: &str, build: Build) -> bool {
        self.oracle_limit.iter().any(|e| {
            e.app == app && e.source == source && e.builds.iter().any(|b| b == build.name())
        })
    }
}

type Outcome = Result<(), String>;

struct Suite {
    apps: Vec<App>,
    expect: Expectations,
    stubs: Vec<SourceFile>,
    translations: Memo<(&'static str, &'static str), Translation>,
}

impl Suite {
    fn app(&self, name: &str) -> &App {
        self.apps.iter().find(|a| a.name == name).unwrap()
    }

    /// The stand-in modules, then `name` with `text`.
    fn files(&self, name: &str, text: &str) -> (Vec<SourceFile>, Vec<usize>) {
        let mut files = self.stubs.clone();
        files.push(SourceFile {
            rel: name.to_string(),
            text: text.to_string(),
        });
        let units = (0..files.len()).collect();
        (files, units)
    }

    fn flags(app: &App, gfortran: bool) -> Vec<String> {
        let mut f: Vec<String> = app.flags.iter().map(|s| s.to_string()).collect();
        if gfortran {
            f.extend(app.gfortran_flags.iter().map(|s| s.to_string()));
        }
        f
    }

    fn read(app: &App, file: &str) -> Result<String, String> {
        let p = app.dir.join(file);
        fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))
    }

    fn check_run(app: &App, what: &str, ran: Result<Ran, String>) -> Outcome {
        let ran = ran?;
        if ran.code != Some(0) {
            return Err(format!("{what} exits with {:?}:\n{}", ran.code, ran.stdout));
        }
        let summary = (app.check)(&ran.stdout).map_err(|e| format!("{what}: {e}"))?;
        eprintln!("{}: {what}: {summary}", app.name);
        Ok(())
    }

    fn check_reference(&self, app: &App) -> Outcome {
        let src = Self::read(app, app.original)?;
        let (files, units) = self.files(app.original, &src);
        let exe = fortran::reference_exe(&Self::flags(app, true), &files, &units)
            .map_err(|e| format!("gfortran -fopenacc cannot compile the original:\n{e}"))?;
        Self::check_run(
            app,
            "the original under gfortran -fopenacc",
            common::cache::run_once(&exe, &[], 600),
        )
    }

    /// `text` (an OpenMP version of the app, `source` says which) under `build`; where a
    /// limit is listed, the build must still fail.
    fn check_build(&self, app: &App, source: &str, text: &str, build: Build) -> Outcome {
        let limited = self.expect.limited(app.name, source, build);
        let result = (|| {
            let (files, units) = self.files(app.original, text);
            let gfortran = build.compiler() == "gfortran";
            let exe = fortran::build_exe(build, &Self::flags(app, gfortran), &files, &units)
                .map_err(|e| format!("{} cannot compile the {source}:\n{e}", build.name()))?;
            // One team of one thread: a separate-memory run is deterministic, so its result
            // is kept with the program's.
            let ran = if build.separate_memory() {
                common::cache::run_once(&exe, &build.env(), 600)
            } else {
                fortran::run(build, &exe, &[], 600)
            };
            Self::check_run(app, &format!("the {source} under {}", build.name()), ran)
        })();
        match (result, limited) {
            (Ok(()), true) => Err(format!(
                "listed as an oracle limit in expectations.toml, but the {source} now passes under {}: remove the entry",
                build.name()
            )),
            (Err(_), true) => Ok(()),
            (r, false) => r,
        }
    }

    fn translation(&self, app: &App, profile: Profile) -> Result<Translation, String> {
        let src = Self::read(app, app.original)?;
        Ok(self.translations.get(&(app.name, profile.name()), || {
            oracle::translate(&src, app.original, &["-q", "--profile", profile.name()])
        }))
    }

    /// The tool's translation: complete, plain lines kept, line lengths held. While the
    /// app is listed as not translated, OpenACC must still be left.
    fn check_translation(&self, app: &App, profile: Profile) -> Result<String, String> {
        let t = self.translation(app, profile)?;
        if let Some(why) = &t.broken {
            return Err(format!("acc2omp failed: {why}"));
        }
        let left = fortran::leftover_openacc(&t.text, false);
        if self.expect.not_translated(app.name) {
            return match left {
                Some(_) => Ok(t.text),
                None => Err(format!(
                    "listed as not translated, but the {} profile leaves no OpenACC: remove the entry so that the builds score it",
                    profile.name()
                )),
            };
        }
        if let Some(l) = left {
            return Err(format!("OpenACC left: {l}\n{}", t.diagnostics));
        }
        let src = Self::read(app, app.original)?;
        let touched = fortran::touched_plain_lines(&src, &t.text, false);
        if !touched.is_empty() {
            return Err(format!(
                "lines without OpenACC changed:\n  {}",
                touched.join("\n  ")
            ));
        }
        let long = fortran::long_lines(&src, &t.text, false);
        if !long.is_empty() {
            return Err(format!("lines longer than 132 columns written at {long:?}"));
        }
        Ok(t.text)
    }
}

fn trial(name: String, f: impl FnOnce() -> Outcome + Send + 'static) -> Trial {
    Trial::test(name, move || f().map_err(Failed::from))
}

fn main() {
    let args = Arguments::from_args();
    if !fortran::tools("fortran_apps") {
        libtest_mimic::run(&args, Vec::new()).exit();
    }
    if common::corpus("fortran_apps").is_none() {
        libtest_mimic::run(&args, Vec::new()).exit();
    }
    let (expect, load_error) = match Expectations::load() {
        Ok(e) => (e, None),
        Err(e) => (Expectations::default(), Some(e)),
    };
    let stub = |name: &str, text: &str| SourceFile {
        rel: name.to_string(),
        text: text.to_string(),
    };
    let suite = Arc::new(Suite {
        apps: apps(),
        expect,
        stubs: vec![
            stub("mpi.f90", include_str!("fortran_apps/mpi.f90")),
            stub("pnetcdf.f90", include_str!("fortran_apps/pnetcdf.f90")),
        ],
        translations: Memo::new(),
    });
    let mut trials = vec![list_check(&suite, load_error)];
    for app in &suite.apps {
        let (s, name) = (suite.clone(), app.name);
        trials.push(trial(format!("{name}/reference"), move || {
            s.check_reference(s.app(name))
        }));
        for build in BUILDS {
            let s = suite.clone();
            trials.push(trial(format!("{name}/twin/{}", build.name()), move || {
                let app = s.app(name);
                let twin = Suite::read(app, app.twin)?;
                s.check_build(app, "twin", &twin, build)
            }));
        }
        let waiting = suite.expect.not_translated(name);
        for profile in Profile::ALL {
            let s = suite.clone();
            let case = if waiting {
                "not-yet-translated"
            } else {
                "translation"
            };
            trials.push(trial(
                format!("{name}/{}/{case}", profile.name()),
                move || s.check_translation(s.app(name), profile).map(|_| ()),
            ));
            if waiting {
                continue;
            }
            for build in BUILDS {
                let s = suite.clone();
                trials.push(trial(
                    format!("{name}/{}/{}", profile.name(), build.name()),
                    move || {
                        let app = s.app(name);
                        let text = s.check_translation(app, profile)?;
                        s.check_build(app, "translation", &text, build)
                    },
                ));
            }
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

/// The expectations name real applications, sources and builds.
fn list_check(suite: &Suite, load_error: Option<String>) -> Trial {
    let mut errors: Vec<String> = load_error.into_iter().collect();
    let known = |a: &str| suite.apps.iter().any(|x| x.name == a);
    for e in &suite.expect.not_translated {
        if !known(&e.app) {
            errors.push(format!("[[not_translated]] names an unknown app {}", e.app));
        }
    }
    for e in &suite.expect.oracle_limit {
        if !known(&e.app) {
            errors.push(format!("[[oracle_limit]] names an unknown app {}", e.app));
        }
        if !["twin", "translation"].contains(&e.source.as_str()) {
            errors.push(format!(
                "[[oracle_limit]] {}: unknown source {}",
                e.app, e.source
            ));
        }
        for b in &e.builds {
            if !BUILDS.iter().any(|k| k.name() == b) {
                errors.push(format!("[[oracle_limit]] {}: unknown build {b}", e.app));
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
