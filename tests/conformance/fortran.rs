//! GCC 12's Fortran OpenACC tests under the Fortran oracle (`tests/common/fortran.rs`).
//! Runtime tests (`libgomp.oacc-fortran`, self-checking) that exit 0 under
//! `gfortran -fopenacc` form the reference set; a test passes when its translation leaves no
//! OpenACC and exits 0 under gfortran -fopenmp and flang-22 offloading with separate memory
//! in forward and reverse loop order. Compile-only tests (`gfortran.dg/goacc`): no crash or
//! hang; the errors gfortran reports where a `dg-error` expects them are answered by a
//! diagnostic of the tool within two lines; in a file gfortran accepts, every OpenACC
//! directive is translated or diagnosed, the output (without the guard lines of directives left
//! as OpenACC, as C's guards are passed) passes `gfortran -fopenmp -fsyntax-only`
//! and (where flang-22 reads the original) `flang-22 -fopenmp -fsyntax-only`, and no line the
//! tool writes exceeds the source form's limit. `fortran_expectations.toml` records every
//! test that does not pass, with why.

use crate::common::cache::{self, SourceFile};
use crate::common::fortran::{self as fort, Build};
use crate::common::oracle::{self, Translation};
use crate::compile_only::{self, NEAR};
use crate::dg::{self, RunSpec, Target};
use crate::expectations::{self, Compile, File, Runtime};
use crate::runtime::{Status, first_error};
use crate::sources::{self, Files};
use libtest_mimic::{Failed, Trial};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const RUNTIME_DIR: &str = "libgomp/testsuite/libgomp.oacc-fortran";
const COMPILE_DIR: &str = "gcc/testsuite/gfortran.dg/goacc";

/// The builds a translated runtime test must pass.
pub const BUILDS: [Build; 3] = [
    Build::Gfortran,
    Build::FlangOffload,
    Build::FlangOffloadReverse,
];

const TARGET: Target = Target {
    cxx: false,
    fortran: true,
};

pub fn path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/fortran_expectations.toml")
}

const HEADER: &str = "# Conformance expectations for GCC 12's Fortran OpenACC tests that the translation does\n\
# not pass (tests/conformance/fortran.rs). Written by\n\
# `ACC2OMP_BLESS=1 cargo test --release --test conformance`, which keeps each entry's\n\
# `reason`; read the differences before committing. The suite fails when a test does\n\
# anything else than its entry says, including passing.\n\
#\n\
# [[runtime]]: a libgomp.oacc-fortran test of the reference set (it exits 0 under\n\
# gfortran -fopenacc) that is not fully translated or does not exit 0 in every build.\n\
# `builds` lists the builds that do not pass: gfortran (gfortran -fopenmp), flang-offload\n\
# (flang-22 offloading to the host device, separate memory), flang-offload-reverse (the same,\n\
# worksharing loops in reverse order).\n\
# [[compile]]: a gfortran.dg/goacc test where gfortran reports expected errors that the tool\n\
# does not diagnose within 2 lines (`missing_diagnostics`), OpenACC directives left without a\n\
# diagnostic (`untranslated`, how many), lines written past 132 (free form) or 72 (fixed\n\
# form) columns (`long_lines`), or a file gfortran accepts whose translation a compiler\n\
# rejects (`rejected_by`).\n";

/// Classes of runtime failures, in the order the file lists them.
const CLASSES: &[(&str, &str)] = &[
    (
        "silent-wrong",
        "SILENT WRONG: the translation is complete and builds, runs give a wrong result or abort, and the tool reported no error or warning",
    ),
    (
        "wrong-result",
        "wrong result or abort at run time, with errors or warnings reported (see rules)",
    ),
    (
        "compiler-limit",
        "a correct OpenMP translation that a compiler runs wrongly: each build that fails is one where a listed limit's reproducer (fortran_limits/NAME.f90, a minimal correct OpenMP program, checked by the case limit/NAME) fails too (whatever the tool warned of)",
    ),
    (
        "gfortran-rejects",
        "the translation does not compile with gfortran -fopenmp",
    ),
    (
        "flang-rejects",
        "the translation does not compile with flang-22 offloading",
    ),
    (
        "not-translated",
        "OpenACC is left (directive, acc_* name, openacc module or openacc_lib.h, _OPENACC); rules are the ids the tool reports",
    ),
    ("tool-crash", "the tool crashed or hung"),
];

pub struct RtTest {
    /// `libgomp.oacc-fortran/foo.f90`
    pub name: String,
    path: PathBuf,
    spec: RunSpec,
}

/// Runtime tests selected for the host, and how many Fortran candidates there are.
fn discover_runtime(root: &Path) -> (Vec<RtTest>, usize) {
    let dir = root.join(RUNTIME_DIR);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| fort::is_fortran(p));
    files.sort();
    let candidates = files.len();
    let tests = files
        .into_iter()
        .filter_map(|path| {
            let src = String::from_utf8_lossy(&fs::read(&path).ok()?).into_owned();
            let spec = dg::run_spec(&src, TARGET).ok()?;
            Some(RtTest {
                name: format!(
                    "libgomp.oacc-fortran/{}",
                    path.file_name().unwrap().to_string_lossy()
                ),
                path,
                spec,
            })
        })
        .collect();
    (tests, candidates)
}

pub struct RtOutcome {
    /// `Err`: not in the reference set (why).
    reference: Result<(), String>,
    crash: Option<String>,
    leftover: Option<String>,
    rules: Vec<String>,
    builds: BTreeMap<&'static str, Status>,
    directives: Directives,
    /// Builds where a compiler limit the entry names (verified) fails too.
    limited: BTreeSet<String>,
}

impl RtOutcome {
    fn passes_in(&self, b: Build) -> bool {
        self.crash.is_none()
            && self.leftover.is_none()
            && self.builds.get(b.name()) == Some(&Status::Pass)
    }

    fn passes(&self) -> bool {
        BUILDS.iter().all(|b| self.passes_in(*b))
    }

    fn class(&self) -> &'static str {
        if self.crash.is_some() {
            return "tool-crash";
        }
        if self.leftover.is_some() {
            return "not-translated";
        }
        let rejected = |b: Build| matches!(self.builds.get(b.name()), Some(Status::Rejected(_)));
        if rejected(Build::Gfortran) {
            return "gfortran-rejects";
        }
        if rejected(Build::FlangOffload) {
            return "flang-rejects";
        }
        let wrong: Vec<&str> = self
            .builds
            .iter()
            .filter(|(_, s)| matches!(s, Status::Wrong(_)))
            .map(|(b, _)| *b)
            .collect();
        if !wrong.is_empty() {
            // A limit the entry names, whose reproducer fails in every failing build, is the
            // cause whatever the tool warned of; without one, a warning makes the failure
            // reported and no warning makes it silent.
            return if wrong.iter().all(|b| self.limited.contains(*b)) {
                "compiler-limit"
            } else if !self.rules.is_empty() {
                "wrong-result"
            } else {
                "silent-wrong"
            };
        }
        "pass"
    }
}

/// A compiler limit of the oracle: `fortran_limits/NAME.f90`, a minimal correct OpenMP
/// program whose first line (`! fails: BUILD, …`) names the builds it fails in; it must
/// fail in those and pass in the others.
struct Limit {
    name: String,
    path: PathBuf,
    fails: Vec<String>,
}

fn limits_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/fortran_limits")
}

fn load_limits() -> Vec<Limit> {
    let mut paths: Vec<PathBuf> = fs::read_dir(limits_dir())
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    paths.retain(|p| fort::is_fortran(p));
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = fs::read_to_string(&path).unwrap_or_default();
            let fails = text
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("! fails:"))
                .map(|l| l.split(',').map(|b| b.trim().to_string()).collect())
                .unwrap_or_default();
            Limit {
                name: path.file_stem().unwrap().to_string_lossy().into_owned(),
                path,
                fails,
            }
        })
        .collect()
}

/// Whether the limit's program fails in exactly the builds it names (as the runtime tests
/// are built: `-O2`).
fn check_limit(l: &Limit) -> Result<(), String> {
    if l.fails.is_empty()
        || l.fails
            .iter()
            .any(|b| !BUILDS.iter().any(|x| x.name() == b))
    {
        return Err(format!(
            "{}: the first line must be '! fails: BUILD, …' with builds of {:?}",
            l.path.display(),
            BUILDS.map(|b| b.name())
        ));
    }
    let file = SourceFile {
        rel: format!("{}.f90", l.name),
        text: fs::read_to_string(&l.path).map_err(|e| e.to_string())?,
    };
    for b in BUILDS {
        let exe = fort::build_exe(b, &["-O2".to_string()], std::slice::from_ref(&file), &[0])
            .map_err(|e| format!("{}: does not build: {}", b.name(), fortran_error(&e)))?;
        let status = run_status(fort::run(b, &exe, &[], 60));
        let expected_to_fail = l.fails.iter().any(|x| x == b.name());
        match (expected_to_fail, status) {
            (true, Status::Pass) => {
                return Err(format!(
                    "{}: passes now: the limit is gone, drop it and re-bless the tests that name it",
                    b.name()
                ));
            }
            (false, s) if s != Status::Pass => {
                return Err(format!("{}: fails ({s:?}) but is not listed", b.name()));
            }
            _ => {}
        }
    }
    Ok(())
}

/// OpenACC directives of a test's sources: how many, how many the translation left, and how
/// many of those have no diagnostic of the tool within [`NEAR`] lines.
#[derive(Default, Clone, Copy)]
struct Directives {
    found: usize,
    left: usize,
    silent: usize,
}

impl std::ops::AddAssign for Directives {
    fn add_assign(&mut self, o: Directives) {
        self.found += o.found;
        self.left += o.left;
        self.silent += o.silent;
    }
}

fn directives(orig: &str, t: &Translation, name: &str, fixed: bool) -> Directives {
    let ours = compile_only::diagnostic_lines(&t.diagnostics, name);
    let left = fort::directive_starts(&t.text, fixed);
    // The diagnostics name lines of the original; the translation has lines added.
    let kept = fort::kept_lines(orig, &t.text);
    let silent = left
        .iter()
        .filter(|&&k| {
            let line = kept.get(k).copied().flatten().unwrap_or(k) + 1;
            !ours.iter().any(|&d| d.abs_diff(line) <= NEAR)
        })
        .count();
    Directives {
        found: fort::directive_starts(orig, fixed).len(),
        left: left.len(),
        silent,
    }
}

fn is_fixed(f: &SourceFile) -> bool {
    fort::is_fixed_form(Path::new(&f.rel))
}

/// Options of a test kept for the OpenMP builds: preprocessing, optimisation, debug info,
/// and for gfortran the language options.
fn kept_options(spec: &RunSpec, gfortran: bool) -> Vec<String> {
    let both = ["-D", "-U", "-I", "-O", "-g", "-cpp"];
    let gnu = [
        "-std=",
        "-fcray-pointer",
        "-ffree-line-length",
        "-ffixed-line-length",
    ];
    spec.options
        .iter()
        .filter(|o| {
            both.iter().any(|p| o.starts_with(p))
                || gfortran && gnu.iter().any(|p| o.starts_with(p))
        })
        .cloned()
        .collect()
}

fn translate_all(files: &Files) -> Vec<Translation> {
    sources::translate(files, false)
}

fn check_runtime(root: &Path, t: &RtTest, expected_wrong: &[&str]) -> RtOutcome {
    let mut out = RtOutcome {
        reference: Ok(()),
        crash: None,
        leftover: None,
        rules: Vec::new(),
        builds: BTreeMap::new(),
        directives: Directives::default(),
        limited: BTreeSet::new(),
    };
    let dir = t.path.parent().unwrap();
    let extra: Vec<PathBuf> = t.spec.sources.iter().map(|s| dir.join(s)).collect();
    let files = match sources::collect(root, &t.path, &extra) {
        Ok(f) => f,
        Err(e) => {
            out.reference = Err(e);
            return out;
        }
    };
    if let Err(e) = reference(t, &files) {
        out.reference = Err(e);
        return out;
    }
    let translations = translate_all(&files);
    for ((file, path), tr) in files.files.iter().zip(&files.paths).zip(&translations) {
        out.rules.extend(tr.rules());
        if let Some(b) = &tr.broken {
            out.crash.get_or_insert(b.clone());
        }
        let left = if fort::is_fortran(path) {
            let name = sources::tool_name(path, false);
            out.directives += directives(&file.text, tr, &name, is_fixed(file));
            fort::leftover_openacc(&tr.text, is_fixed(file))
        } else {
            oracle::leftover_openacc(&tr.text)
        };
        if out.leftover.is_none() {
            out.leftover = left;
        }
    }
    out.rules.sort();
    out.rules.dedup();
    if out.crash.is_some() || out.leftover.is_some() {
        return out;
    }
    let text = sources::translated(&files, &translations);
    out.builds = run_builds(t, &text, &files.units, expected_wrong);
    out
}

/// `text` (an OpenMP version of `t`'s files) built and run in every build.
fn run_builds(
    t: &RtTest,
    text: &[SourceFile],
    units: &[usize],
    expected_wrong: &[&str],
) -> BTreeMap<&'static str, Status> {
    let mut builds = BTreeMap::new();
    for b in BUILDS {
        let mut flags = vec![
            "-O2".to_string(),
            "-DACC_DEVICE_TYPE_host=1".into(),
            format!("-DACC_MEM_SHARED={}", u8::from(!b.separate_memory())),
        ];
        flags.push(include_flag(t));
        flags.extend(kept_options(&t.spec, b.compiler() == "gfortran"));
        let status = match fort::build_exe(b, &flags, text, units) {
            Err(e) => Status::Rejected(fortran_error(&e)),
            Ok(exe) => {
                let env: Vec<(&str, &str)> = t
                    .spec
                    .env
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect();
                let tries = if expected_wrong.contains(&b.name()) {
                    3
                } else {
                    1
                };
                let mut status = Status::Pass;
                for _ in 0..tries {
                    status = run_status(fort::run(b, &exe, &env, 60));
                    if status != Status::Pass {
                        break;
                    }
                }
                status
            }
        };
        builds.insert(b.name(), status);
    }
    builds
}

fn run_status(r: Result<crate::common::oracle::Ran, String>) -> Status {
    match r {
        Err(e) => Status::Wrong(e),
        Ok(r) if r.timed_out() => Status::Wrong("timed out after 60 s".into()),
        Ok(r) if r.code == Some(0) => Status::Pass,
        Ok(r) => Status::Wrong(match r.code {
            Some(c) => format!("exit status {c}"),
            None => "killed by a signal (abort)".into(),
        }),
    }
}

/// GCC's `include/` (`gomp-constants.h`, read by a test's C helper).
fn include_flag(t: &RtTest) -> String {
    let root = t.path.ancestors().nth(4).unwrap_or(Path::new("."));
    format!("-I{}", root.join("include").display())
}

/// The test under `gfortran -fopenacc` on the host, as GCC's testsuite builds it, must exit 0.
fn reference(t: &RtTest, files: &Files) -> Result<(), String> {
    let mut flags = dg::host_flags();
    flags.push(include_flag(t));
    flags.extend(t.spec.options.iter().cloned());
    let exe = fort::reference_exe(&flags, &files.files, &files.units)
        .map_err(|e| format!("gfortran -fopenacc rejects it: {}", fortran_error(&e)))?;
    let mut env = vec![("ACC_DEVICE_TYPE", "host")];
    env.extend(t.spec.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let r = cache::run_once(&exe, &env, 60)?;
    if r.code == Some(0) {
        Ok(())
    } else {
        Err(format!("gfortran -fopenacc build exits with {:?}", r.code))
    }
}

/// The first error of gfortran (`Error:` after a location line) or flang (`error:`).
fn fortran_error(msg: &str) -> String {
    msg.lines()
        .find(|l| l.contains("Error:"))
        .map(|l| l.trim().to_string())
        .unwrap_or_else(|| first_error(msg))
}

pub struct CtTest {
    /// `gfortran.dg/goacc/foo.f95`
    pub name: String,
    path: PathBuf,
}

fn discover_compile(root: &Path) -> Vec<CtTest> {
    let mut files: Vec<PathBuf> = fs::read_dir(root.join(COMPILE_DIR))
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| fort::is_fortran(p));
    files.sort();
    files
        .into_iter()
        .map(|path| CtTest {
            name: format!(
                "gfortran.dg/goacc/{}",
                path.file_name().unwrap().to_string_lossy()
            ),
            path,
        })
        .collect()
}

#[derive(Default)]
pub struct CtOutcome {
    crash: Option<String>,
    /// Expected error lines that gfortran reports.
    reported: Vec<usize>,
    /// Those of them without a diagnostic of the tool within [`NEAR`] lines.
    missing: Vec<usize>,
    /// gfortran accepts the file: its translation is checked.
    valid: bool,
    /// flang-22 rejects the original as plain Fortran (no flang check of the translation).
    flang_cannot_read: bool,
    rejected_by: Vec<(&'static str, String)>,
    directives: Directives,
    long_lines: Vec<usize>,
}

/// The test's files: modules it names in `dg-compile-aux-modules` first, then the test.
fn compile_files(root: &Path, t: &CtTest, src: &str) -> Result<Files, String> {
    let dir = t.path.parent().unwrap();
    let aux: Vec<PathBuf> = dg::directives(src)
        .iter()
        .filter(|d| d.name == "dg-compile-aux-modules")
        .filter_map(|d| d.args.first().map(|f| dir.join(f)))
        .collect();
    let mut files = sources::collect(root, &t.path, &aux)?;
    // Compile the modules before the test that uses them.
    files.units.rotate_left(1);
    Ok(files)
}

fn check_compile(root: &Path, t: &CtTest) -> CtOutcome {
    let mut out = CtOutcome::default();
    let src = match fs::read(&t.path) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => {
            out.crash = Some(e.to_string());
            return out;
        }
    };
    let files = match compile_files(root, t, &src) {
        Ok(f) => f,
        Err(e) => {
            out.crash = Some(e);
            return out;
        }
    };
    let options: Vec<String> = dg::directives(&src)
        .iter()
        .filter(|d| matches!(d.name.as_str(), "dg-options" | "dg-additional-options"))
        .filter(|d| TARGET.selector(d.args.get(1)))
        .flat_map(|d| dg::words(d.args.first().map_or("", |s| s)))
        .collect();
    // gfortran through the middle end (-S: many OpenACC errors come after parsing).
    let mut flags = vec!["-fopenacc".to_string(), "-fdiagnostics-plain-output".into()];
    flags.extend(options.iter().cloned());
    flags.push("-S".into());
    let gfortran = cache::check_units("gfortran", &flags, &files.files, &files.units);
    let translations = translate_all(&files);
    if let Some(b) = translations.iter().find_map(|t| t.broken.clone()) {
        out.crash = Some(b);
        return out;
    }
    let main = 0;
    let main_name = sources::tool_name(&files.paths[main], false);
    let fixed = is_fixed(&files.files[main]);
    let main_translation = &translations[main];
    out.directives = directives(&files.files[main].text, main_translation, &main_name, fixed);
    out.long_lines = fort::long_lines(&files.files[main].text, &main_translation.text, fixed);
    // A directive reported only as not translated does not answer a dg-error.
    let answers: Vec<&str> = main_translation
        .diagnostics
        .lines()
        .filter(|l| !l.ends_with("[not-translated]"))
        .collect();
    let ours: BTreeSet<usize> = compile_only::diagnostic_lines(&answers.join("\n"), &main_name);
    match gfortran {
        Err(e) => {
            let theirs = compile_only::lines_with(
                &e,
                &files.files[main].rel,
                &[": Error: ", ": Fatal Error: "],
            );
            out.reported = dg::expected_error_lines(&src, TARGET)
                .into_iter()
                .filter(|l| theirs.contains(l))
                .collect();
            out.missing = out
                .reported
                .iter()
                .copied()
                .filter(|&l| !ours.iter().any(|&o| o.abs_diff(l) <= NEAR))
                .collect();
        }
        Ok(()) => {
            out.valid = true;
            let text: Vec<SourceFile> = sources::translated(&files, &translations)
                .into_iter()
                .map(|s| SourceFile {
                    text: fort::without_guards(&s.text),
                    rel: s.rel,
                })
                .collect();
            let keep = |gfortran: bool| -> Vec<String> {
                let spec = RunSpec {
                    options: options.clone(),
                    ..RunSpec::default()
                };
                kept_options(&spec, gfortran)
            };
            let mut g = vec!["-fopenmp".to_string(), "-fsyntax-only".into()];
            g.extend(keep(true));
            if let Err(e) = cache::check_units("gfortran", &g, &text, &files.units) {
                out.rejected_by.push(("gfortran", fortran_error(&e)));
            }
            let mut plain = vec!["-fsyntax-only".to_string()];
            plain.extend(keep(false));
            if cache::check_units("flang-22", &plain, &files.files, &files.units).is_err() {
                out.flang_cannot_read = true;
            } else {
                let mut f = vec![
                    "-fopenmp".to_string(),
                    "-fopenmp-version=51".into(),
                    "-fsyntax-only".into(),
                ];
                f.extend(keep(false));
                let adapted: Vec<SourceFile> = text
                    .iter()
                    .map(|s| SourceFile {
                        rel: s.rel.clone(),
                        text: fort::flang_adapt(&s.text, is_fixed(s)).0,
                    })
                    .collect();
                if let Err(e) = cache::check_units("flang-22", &f, &adapted, &files.units) {
                    out.rejected_by.push(("flang", fortran_error(&e)));
                }
            }
        }
    }
    out
}

/// A hand translation of one runtime test (`fortran_samples.toml`).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Sample {
    test: String,
    edits: Vec<(usize, String)>,
    control: (usize, String),
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Samples {
    sample: Vec<Sample>,
}

fn samples_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/fortran_samples.toml")
}

/// `src` with `edits` applied; only lines with OpenACC may be edited.
fn apply(src: &str, edits: &[(usize, String)], fixed: bool) -> Result<String, String> {
    let acc = fort::openacc_lines(src, fixed);
    let mut lines: Vec<String> = src.lines().map(|l| format!("{l}\n")).collect();
    for (n, text) in edits {
        if *n == 0 || *n > lines.len() || !acc.contains(&(n - 1)) {
            return Err(format!("line {n} has no OpenACC to replace"));
        }
        lines[n - 1] = if text.is_empty() {
            String::new()
        } else {
            format!("{text}\n")
        };
    }
    Ok(lines.concat())
}

/// The hand translation passes every build; with the control edit, shared memory still
/// passes and separate memory fails.
fn check_sample(root: &Path, t: &RtTest, sample: &Sample) -> Result<(), String> {
    let files = sources::collect(root, &t.path, &[])?;
    if files.files.len() != 1 {
        return Err("samples must be single files".into());
    }
    let fixed = is_fixed(&files.files[0]);
    let src = &files.files[0].text;
    let good = apply(src, &sample.edits, fixed)?;
    if let Some(left) = fort::leftover_openacc(&good, fixed) {
        return Err(format!("OpenACC left in the hand translation: {left}"));
    }
    let as_files = |text: String| {
        vec![SourceFile {
            rel: files.files[0].rel.clone(),
            text,
        }]
    };
    let builds = run_builds(t, &as_files(good), &[0], &[]);
    if let Some((b, s)) = builds.iter().find(|(_, s)| **s != Status::Pass) {
        return Err(format!("the hand translation fails under {b}: {s:?}"));
    }
    let mut edits = sample.edits.clone();
    edits.retain(|(n, _)| *n != sample.control.0);
    edits.push(sample.control.clone());
    let bad = apply(src, &edits, fixed)?;
    let builds = run_builds(t, &as_files(bad), &[0], &[]);
    if builds.get(Build::Gfortran.name()) != Some(&Status::Pass) {
        return Err(format!(
            "the control should pass with shared memory: {:?}",
            builds.get(Build::Gfortran.name())
        ));
    }
    if builds.get(Build::FlangOffload.name()) == Some(&Status::Pass) {
        return Err("the control passes with separate memory: the oracle cannot see it".into());
    }
    Ok(())
}

fn sample_trials(root: &Path, tests: &[RtTest], selected: &dyn Fn(&str) -> bool) -> Vec<Trial> {
    let samples = match fs::read_to_string(samples_path())
        .map_err(|e| e.to_string())
        .and_then(|t| toml::from_str::<Samples>(&t).map_err(|e| e.to_string()))
    {
        Ok(s) => s.sample,
        Err(e) => {
            let e = format!("{}: {e}", samples_path().display());
            return vec![Trial::test("sample/fortran_samples.toml", move || {
                Err(e.into())
            })];
        }
    };
    let mut trials = Vec::new();
    for sample in samples {
        let name = format!("sample/{} [fortran]", sample.test);
        if !selected(&name) {
            continue;
        }
        let test = tests
            .iter()
            .find(|t| t.name == sample.test)
            .map(|t| RtTest {
                name: t.name.clone(),
                path: t.path.clone(),
                spec: t.spec.clone(),
            });
        let root = root.to_path_buf();
        trials.push(Trial::test(name, move || {
            let t = test.ok_or("not a host runtime test")?;
            check_sample(&root, &t, &sample).map_err(Failed::from)
        }));
    }
    trials
}

fn one_line(s: &str) -> String {
    let l = s.lines().next().unwrap_or("").trim();
    l.chars().take(160).collect()
}

fn runtime_entry(t: &RtTest, o: &RtOutcome, old: Option<&Runtime>) -> Option<Runtime> {
    if o.reference.is_err() || o.passes() {
        return None;
    }
    let builds: BTreeMap<String, String> = o
        .builds
        .iter()
        .filter(|(_, s)| **s != Status::Pass)
        .map(|(b, s)| (b.to_string(), s.word().to_string()))
        .collect();
    let detail = o
        .crash
        .clone()
        .or_else(|| {
            o.leftover
                .as_ref()
                .map(|l| format!("left: {}", one_line(l)))
        })
        .or_else(|| {
            o.builds.iter().find_map(|(b, s)| match s {
                Status::Pass => None,
                Status::Rejected(e) | Status::Wrong(e) => Some(format!("{b}: {}", one_line(e))),
            })
        })
        .unwrap_or_default();
    Some(Runtime {
        test: t.name.clone(),
        lang: "fortran".into(),
        class: o.class().into(),
        builds,
        rules: o.rules.clone(),
        detail,
        limits: old.map(|e| e.limits.clone()).unwrap_or_default(),
        reason: old.map(|e| e.reason.clone()).unwrap_or_default(),
    })
}

fn compile_entry(t: &CtTest, o: &CtOutcome, old: Option<&Compile>) -> Option<Compile> {
    let untranslated = if o.valid { o.directives.silent } else { 0 };
    if o.missing.is_empty()
        && o.rejected_by.is_empty()
        && untranslated == 0
        && o.long_lines.is_empty()
    {
        return None;
    }
    Some(Compile {
        test: t.name.clone(),
        lang: "fortran".into(),
        missing_diagnostics: o.missing.clone(),
        rejected_by: o.rejected_by.iter().map(|(w, _)| w.to_string()).collect(),
        untranslated,
        long_lines: o.long_lines.clone(),
        detail: o
            .rejected_by
            .first()
            .map(|(w, e)| format!("{w}: {}", one_line(e)))
            .unwrap_or_default(),
        reason: old.map(|e| e.reason.clone()).unwrap_or_default(),
    })
}

/// Every Fortran case of the conformance suite; prints the scores; with `bless`, rewrites
/// `fortran_expectations.toml`.
pub fn trials(
    root: &Path,
    selected: &dyn Fn(&str) -> bool,
    pool: &rayon::ThreadPool,
    bless: bool,
) -> Vec<Trial> {
    let (expect, load_error) = match expectations::load_from(&path()) {
        Ok(f) => (f, None),
        Err(e) => (File::default(), Some(e)),
    };
    let (all_rt, candidates) = discover_runtime(root);
    let all_ct = discover_compile(root);
    let rname = |t: &RtTest| format!("runtime/{} [fortran]", t.name);
    let cname = |t: &CtTest| format!("compile/{} [fortran]", t.name);
    let rt: Vec<&RtTest> = all_rt.iter().filter(|t| selected(&rname(t))).collect();
    let ct: Vec<&CtTest> = all_ct.iter().filter(|t| selected(&cname(t))).collect();
    let filtered = rt.len() < all_rt.len() || ct.len() < all_ct.len();
    let find_rt = |f: &File, t: &RtTest| f.runtime.iter().find(|e| e.test == t.name).cloned();
    let find_ct = |f: &File, t: &CtTest| f.compile.iter().find(|e| e.test == t.name).cloned();
    let rt_out: Vec<RtOutcome> = pool.install(|| {
        rt.par_iter()
            .map(|t| {
                let entry = find_rt(&expect, t);
                let wrong: Vec<&str> = entry
                    .iter()
                    .flat_map(|e| e.builds.iter())
                    .filter(|(_, s)| *s == "wrong")
                    .map(|(b, _)| b.as_str())
                    .collect();
                check_runtime(root, t, &wrong)
            })
            .collect()
    });
    let ct_out: Vec<CtOutcome> =
        pool.install(|| ct.par_iter().map(|t| check_compile(root, t)).collect());
    let limits = load_limits();
    let verified: Vec<Result<(), String>> =
        pool.install(|| limits.par_iter().map(check_limit).collect());
    let mut rt_out = rt_out;
    for (t, o) in rt.iter().zip(rt_out.iter_mut()) {
        let named = find_rt(&expect, t).map(|e| e.limits).unwrap_or_default();
        for (l, ok) in limits.iter().zip(&verified) {
            if ok.is_ok() && named.contains(&l.name) {
                o.limited.extend(l.fails.iter().cloned());
            }
        }
    }
    let actual_rt: Vec<Option<Runtime>> = rt
        .iter()
        .zip(&rt_out)
        .map(|(t, o)| runtime_entry(t, o, find_rt(&expect, t).as_ref()))
        .collect();
    let actual_ct: Vec<Option<Compile>> = ct
        .iter()
        .zip(&ct_out)
        .map(|(t, o)| compile_entry(t, o, find_ct(&expect, t).as_ref()))
        .collect();
    summary(candidates, &rt, &rt_out, &ct_out);

    let mut expect = expect;
    if bless && load_error.is_none() {
        let ran_rt = |test: &str| rt.iter().any(|t| t.name == test);
        let ran_ct = |test: &str| ct.iter().any(|t| t.name == test);
        expect.runtime.retain(|e| !ran_rt(&e.test));
        expect.runtime.extend(actual_rt.iter().flatten().cloned());
        expect.runtime.sort_by(|a, b| a.test.cmp(&b.test));
        expect.compile.retain(|e| !ran_ct(&e.test));
        expect.compile.extend(actual_ct.iter().flatten().cloned());
        expect.compile.sort_by(|a, b| a.test.cmp(&b.test));
        fs::write(path(), expectations::render_with(&expect, HEADER, CLASSES)).unwrap();
        eprintln!("conformance: blessed {}", path().display());
    }

    let unknown: Vec<String> = expect
        .runtime
        .iter()
        .flat_map(|e| e.limits.iter())
        .filter(|n| !limits.iter().any(|l| &l.name == *n))
        .map(|n| format!("limit {n} is not in fortran_limits/"))
        .collect();
    let mut file_errors: Vec<String> = load_error.into_iter().collect();
    file_errors.extend(unknown);
    if !filtered {
        for e in &expect.runtime {
            let known = rt_out
                .iter()
                .zip(&rt)
                .any(|(o, t)| t.name == e.test && o.reference.is_ok());
            if !known {
                file_errors.push(format!(
                    "[[runtime]] {} is not in the reference set",
                    e.test
                ));
            }
        }
        for e in &expect.compile {
            if !ct.iter().any(|t| t.name == e.test) {
                file_errors.push(format!("[[compile]] {} is not a test", e.test));
            }
        }
    }
    let mut trials = sample_trials(root, &all_rt, selected);
    for (l, ok) in limits.iter().zip(verified) {
        let name = format!("limit/{} [fortran]", l.name);
        if selected(&name) {
            trials.push(Trial::test(name, move || ok.map_err(Failed::from)));
        }
    }
    trials.push(Trial::test("fortran_expectations.toml", move || {
        if file_errors.is_empty() {
            Ok(())
        } else {
            Err(file_errors.join("\n").into())
        }
    }));
    for ((t, o), actual) in rt.iter().zip(&rt_out).zip(actual_rt) {
        if o.reference.is_err() {
            continue;
        }
        let expected = find_rt(&expect, t);
        trials.push(Trial::test(rname(t), move || {
            crate::compare_runtime(expected.as_ref(), actual.as_ref()).map_err(Failed::from)
        }));
    }
    for ((t, o), actual) in ct.iter().zip(&ct_out).zip(actual_ct) {
        let crash = o.crash.clone();
        let expected = find_ct(&expect, t);
        trials.push(Trial::test(cname(t), move || {
            if let Some(c) = crash {
                return Err(format!("the tool crashed or hung: {c}").into());
            }
            crate::compare_compile(expected.as_ref(), actual.as_ref()).map_err(Failed::from)
        }));
    }
    trials
}

fn summary(candidates: usize, rt: &[&RtTest], out: &[RtOutcome], ct_out: &[CtOutcome]) {
    let refset: Vec<&RtOutcome> = out.iter().filter(|o| o.reference.is_ok()).collect();
    let n = refset.len();
    println!(
        "\nconformance (Fortran): runtime tests: {candidates} candidates, {} run on the host, {n} pass under gfortran -fopenacc (the reference set)",
        rt.len()
    );
    let line = |what: &str, ok: usize| println!("  {what:<34} {ok} passed, {} failed", n - ok);
    for (b, what) in [
        (Build::Gfortran, "gfortran -fopenmp:"),
        (Build::FlangOffload, "flang-22 offload:"),
        (
            Build::FlangOffloadReverse,
            "flang-22 offload, reverse order:",
        ),
    ] {
        line(what, refset.iter().filter(|o| o.passes_in(b)).count());
    }
    line(
        "all three builds:",
        refset.iter().filter(|o| o.passes()).count(),
    );
    let mut classes: BTreeMap<&str, usize> = BTreeMap::new();
    for o in refset.iter().filter(|o| !o.passes()) {
        *classes.entry(o.class()).or_default() += 1;
    }
    let by_class: Vec<String> = CLASSES
        .iter()
        .filter_map(|(c, _)| classes.get(c).map(|k| format!("{c} {k}")))
        .collect();
    println!("  failures by class: {}", by_class.join(", "));
    let mut d = Directives::default();
    for o in out.iter().filter(|o| o.reference.is_ok()) {
        d += o.directives;
    }
    for o in ct_out {
        d += o.directives;
    }
    println!(
        "conformance (Fortran): OpenACC directives in the reference set and the compile-only tests: {} found, {} translated, {} left with a diagnostic, {} left without one",
        d.found,
        d.found - d.left,
        d.left - d.silent,
        d.silent
    );
    let reported: usize = ct_out.iter().map(|o| o.reported.len()).sum();
    let missing: usize = ct_out.iter().map(|o| o.missing.len()).sum();
    let valid = ct_out.iter().filter(|o| o.valid).count();
    let by = |w: &str| {
        ct_out
            .iter()
            .filter(|o| o.rejected_by.iter().any(|(x, _)| *x == w))
            .count()
    };
    println!(
        "conformance (Fortran): compile-only tests: {}, {} crashes or hangs; {reported} expected errors gfortran reports, {} diagnosed within 2 lines, {missing} not; {valid} valid files, translation rejected by gfortran {}, by flang {} (flang-22 cannot read {} originals); {} lines written past the length limit\n",
        ct_out.len(),
        ct_out.iter().filter(|o| o.crash.is_some()).count(),
        reported - missing,
        by("gfortran"),
        by("flang"),
        ct_out.iter().filter(|o| o.flang_cannot_read).count(),
        ct_out.iter().map(|o| o.long_lines.len()).sum::<usize>()
    );
}
