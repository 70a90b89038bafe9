//! Fortran equivalence: every program of `fixtures/programs/fortran/` (self-checking OpenACC
//! Fortran, free and fixed form) runs under `gfortran -fopenacc` (the reference). Its hand
//! translation to OpenMP (`expected/`, the reference translation a reviewer compares the
//! tool's against) must give the reference output in every build of the Fortran oracle
//! (`tests/common/fortran.rs`): gfortran -fopenmp with default and 3 threads, flang-22 on
//! the host, and flang-22 offloading with separate memory in forward and reverse loop order.
//! Broken copies of the hand translations (`controls.toml`) must fail where the oracle should
//! see the mistake: this proves the oracle before the tool translates Fortran.
//!
//! Then the tool's translation in each profile is scored the same way: no OpenACC left, no
//! line without OpenACC changed, line lengths of the source form held, a fixed point, and the
//! reference output in every build. `expectations.toml` lists the programs the tool does not
//! translate yet (`[[not_translated]]`) and known failures; an entry that no longer holds
//! fails the suite, so the list stays true.
//!
//! `cargo test --release --test fortran_equivalence [-- FILTER]`; `ACC2OMP_PROGRAMS=a,b`
//! limits the programs.

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

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/programs/fortran")
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Expectations {
    #[serde(default)]
    not_translated: Vec<NotTranslated>,
    #[serde(default)]
    oracle_limit: Vec<BuildsEntry>,
    #[serde(default)]
    expected_failure: Vec<BuildsEntry>,
}

/// A program the tool leaves OpenACC in (in every profile).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NotTranslated {
    program: String,
    #[allow(dead_code)]
    reason: String,
}

/// Builds where a program gives a wrong result or does not build. `[[oracle_limit]]`: a
/// limit of a compiler of the oracle, for the hand translation and the tool's alike;
/// `[[expected_failure]]`: a known bug of the tool's translation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BuildsEntry {
    program: String,
    builds: Vec<String>,
    /// Profiles affected (tool's translation only); all when absent.
    #[serde(default)]
    profiles: Vec<String>,
    #[allow(dead_code)]
    reason: String,
}

impl BuildsEntry {
    fn covers(&self, program: &str, profile: Option<Profile>, build: Build) -> bool {
        self.program == program
            && self.builds.iter().any(|b| b == build.name())
            && profile.is_none_or(|p| {
                self.profiles.is_empty() || self.profiles.iter().any(|x| x == p.name())
            })
    }
}

impl Expectations {
    fn load() -> Result<Expectations, String> {
        let path = root().join("expectations.toml");
        let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    fn not_translated(&self, program: &str) -> bool {
        self.not_translated.iter().any(|e| e.program == program)
    }

    /// Whether `build` is expected to fail for the hand translation (`profile` None) or the
    /// tool's translation in `profile`.
    fn fails(&self, program: &str, profile: Option<Profile>, build: Build) -> bool {
        self.oracle_limit
            .iter()
            .any(|e| e.covers(program, None, build))
            || profile.is_some()
                && self
                    .expected_failure
                    .iter()
                    .any(|e| e.covers(program, profile, build))
    }
}

/// A broken copy of a hand translation that the oracle must catch.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct Control {
    program: String,
    /// `map`: a data-mapping mistake (shared memory hides it, separate memory shows it);
    /// `order`: a loop with a dependence made parallel (reverse order shows it);
    /// `scope`: a local copy dropped (no build hides it: it shows in all of them).
    kind: String,
    replace: String,
    with: String,
    #[allow(dead_code)]
    reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Controls {
    control: Vec<Control>,
}

struct Program {
    name: String,
    src: String,
    /// The hand translation.
    expected: Result<String, String>,
    fixed: bool,
}

impl Program {
    fn file(&self, text: &str) -> Vec<SourceFile> {
        vec![SourceFile {
            rel: self.name.clone(),
            text: text.to_string(),
        }]
    }
}

fn program_paths() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(root())
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.is_file() && fortran::is_fortran(p));
    v.sort();
    v
}

type Outcome = Result<(), String>;

/// Work shared by the cases, each piece done once.
struct Suite {
    programs: Vec<Program>,
    expect: Expectations,
    references: Memo<String, Result<Ran, String>>,
    translations: Memo<(String, &'static str), Translation>,
    runs: Memo<(PathBuf, Build), Result<Ran, String>>,
}

const FLAGS: &[&str] = &["-O1"];

/// The marker of a program whose reference is its build without OpenACC.
const HOST_MARKER: &str = "Reference: the program built without OpenACC";

impl Program {
    /// The compiler flags of every build of the program: `-O1`, or those of a first line
    /// `! flags: …` (a program about what optimisation does, as vectorisation at `-O2`).
    fn flags(&self) -> Vec<String> {
        let first = self.src.lines().next().unwrap_or("");
        match first.strip_prefix("! flags:") {
            Some(f) => f.split_whitespace().map(str::to_string).collect(),
            None => FLAGS.iter().map(|s| s.to_string()).collect(),
        }
    }
}

impl Suite {
    fn program(&self, name: &str) -> &Program {
        self.programs.iter().find(|p| p.name == name).unwrap()
    }

    fn reference(&self, p: &Program) -> Result<Ran, String> {
        self.references.get(&p.name, || {
            // A program whose OpenACC reading is undefined where compilers differ (a
            // `private` copy read before it is assigned) says which result it means.
            let exe = if p.src.contains(HOST_MARKER) {
                fortran::host_exe(&p.flags(), &p.file(&p.src), &[0])
                    .map_err(|e| format!("gfortran cannot compile the original:\n{e}"))?
            } else {
                fortran::reference_exe(&p.flags(), &p.file(&p.src), &[0])
                    .map_err(|e| format!("gfortran -fopenacc cannot compile the original:\n{e}"))?
            };
            common::cache::run_once(&exe, &[], 60)
        })
    }

    fn check_reference(&self, p: &Program) -> Outcome {
        let r = self.reference(p)?;
        if r.code == Some(0) {
            Ok(())
        } else {
            Err(format!(
                "the original exits with {:?} under gfortran -fopenacc (the programs check themselves):\n{}",
                r.code, r.stdout
            ))
        }
    }

    /// Build `text` (an OpenMP version of `p`) for `build` and compare its run with the
    /// reference.
    fn check_build(&self, p: &Program, text: &str, build: Build) -> Outcome {
        let reference = self.reference(p)?;
        let exe = fortran::build_exe(build, &p.flags(), &p.file(text), &[0])
            .map_err(|e| format!("{} cannot compile it:\n{e}", build.name()))?;
        let got = self
            .runs
            .get(&(exe.clone(), build), || fortran::run(build, &exe, &[], 60))?;
        if got == reference {
            Ok(())
        } else {
            Err(format!(
                "{} build differs from gfortran -fopenacc (exit {:?} vs {:?}); {}",
                build.name(),
                got.code,
                reference.code,
                oracle::first_difference(&reference.stdout, &got.stdout)
            ))
        }
    }

    /// `check_build` where `expected_to_fail` says the build must not give the reference.
    fn check_build_expecting(
        &self,
        p: &Program,
        text: &str,
        build: Build,
        expected_to_fail: bool,
    ) -> Outcome {
        match (self.check_build(p, text, build), expected_to_fail) {
            (Ok(()), true) => Err(format!(
                "listed in expectations.toml as failing in {}, but it now gives the reference result: remove the entry",
                build.name()
            )),
            (Err(_), true) => Ok(()),
            (r, false) => r,
        }
    }

    /// A translation's text (hand-written or the tool's) as a file of the project would
    /// have it: no OpenACC, plain lines kept, line lengths held.
    fn check_text(&self, p: &Program, text: &str) -> Outcome {
        if let Some(left) = fortran::leftover_openacc(text, p.fixed) {
            return Err(format!("OpenACC left: {left}"));
        }
        let touched = fortran::touched_plain_lines(&p.src, text, p.fixed);
        if !touched.is_empty() {
            return Err(format!(
                "lines without OpenACC changed:\n  {}",
                touched.join("\n  ")
            ));
        }
        let long = fortran::long_lines(&p.src, text, p.fixed);
        if !long.is_empty() {
            return Err(format!(
                "lines longer than {} columns written at {long:?}",
                fortran::line_limit(p.fixed)
            ));
        }
        Ok(())
    }

    fn translation(&self, p: &Program, profile: Profile) -> Translation {
        self.translations
            .get(&(p.name.clone(), profile.name()), || {
                oracle::translate(&p.src, &p.name, &["-q", "--profile", profile.name()])
            })
    }

    /// The tool's translation in `profile`: complete, a fixed point, and a file of the
    /// project (`check_text`). A program listed as not translated must still have OpenACC
    /// left.
    fn check_translation(&self, p: &Program, profile: Profile) -> Outcome {
        let t = self.translation(p, profile);
        if let Some(why) = &t.broken {
            return Err(format!("acc2omp failed: {why}"));
        }
        let left = fortran::leftover_openacc(&t.text, p.fixed);
        if self.expect.not_translated(&p.name) {
            return match left {
                Some(_) => Ok(()),
                None => Err(format!(
                    "listed as not translated in expectations.toml, but the {} profile leaves no OpenACC: remove the entry so that the builds score the translation",
                    profile.name()
                )),
            };
        }
        self.check_text(p, &t.text)
            .map_err(|e| format!("{e}\n{}", t.diagnostics))?;
        let again = oracle::translate(&t.text, &p.name, &["-q", "--profile", profile.name()]);
        if again.text != t.text {
            return Err(format!(
                "a second run changes the translation: {}",
                oracle::first_difference(&t.text, &again.text)
            ));
        }
        Ok(())
    }

    fn check_control(&self, c: &Control) -> Outcome {
        let p = self.program(&c.program);
        let good = p.expected.clone()?;
        let bad = good.replace(&c.replace, &c.with);
        // Shared memory (gfortran) cannot see a map mistake; forward order cannot see a
        // dependence made parallel; the other build must see it.
        let (hides, shows) = match c.kind.as_str() {
            "map" => (Build::Gfortran, Build::FlangOffload),
            "scope" => {
                for b in [Build::Gfortran, Build::FlangOffload] {
                    if self.check_build(p, &bad, b).is_ok() {
                        return Err(format!(
                            "the broken copy gives the reference result under {}: the oracle cannot see this mistake",
                            b.name()
                        ));
                    }
                }
                return Ok(());
            }
            _ => (Build::FlangOffload, Build::FlangOffloadReverse),
        };
        self.check_build(p, &bad, hides).map_err(|e| {
            format!(
                "the control should pass where its mistake cannot show ({}): {e}",
                hides.name()
            )
        })?;
        match self.check_build(p, &bad, shows) {
            Err(_) => Ok(()),
            Ok(()) => Err(format!(
                "the broken copy gives the reference result under {}: the oracle cannot see this mistake",
                shows.name()
            )),
        }
    }
}

fn trial(name: String, f: impl FnOnce() -> Outcome + Send + 'static) -> Trial {
    Trial::test(name, move || f().map_err(Failed::from))
}

fn main() {
    let args = Arguments::from_args();
    if !fortran::tools("fortran_equivalence") {
        libtest_mimic::run(&args, Vec::new()).exit();
    }
    let (expect, expect_error) = match Expectations::load() {
        Ok(e) => (e, None),
        Err(e) => (Expectations::default(), Some(e)),
    };
    let controls_path = root().join("controls.toml");
    let controls: Result<Vec<Control>, String> = fs::read_to_string(&controls_path)
        .map_err(|e| e.to_string())
        .and_then(|t| toml::from_str::<Controls>(&t).map_err(|e| e.to_string()))
        .map(|c| c.control)
        .map_err(|e| format!("{}: {e}", controls_path.display()));
    let mut paths = program_paths();
    let all = paths.len();
    if let Ok(only) = std::env::var("ACC2OMP_PROGRAMS") {
        let words: Vec<&str> = only.split(',').filter(|w| !w.is_empty()).collect();
        paths.retain(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            words.iter().any(|w| name.contains(w))
        });
    }
    let programs: Vec<Program> = paths
        .iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let hand = root().join("expected").join(&name);
            Program {
                src: fs::read_to_string(path).unwrap(),
                expected: fs::read_to_string(&hand)
                    .map_err(|e| format!("no hand translation {}: {e}", hand.display())),
                fixed: fortran::is_fixed_form(path),
                name,
            }
        })
        .collect();
    let waiting = programs
        .iter()
        .filter(|p| expect.not_translated(&p.name))
        .count();
    eprintln!(
        "fortran_equivalence: {} programs, {waiting} listed as not translated by the tool yet",
        programs.len()
    );
    let mut trials = vec![list_check(all, &expect, expect_error, &controls)];
    trials.push(trial(
        "test-of-the-test/detector".into(),
        detector_self_check,
    ));
    let suite = Arc::new(Suite {
        programs,
        expect,
        references: Memo::new(),
        translations: Memo::new(),
        runs: Memo::new(),
    });
    for p in &suite.programs {
        let (s, name) = (suite.clone(), p.name.clone());
        trials.push(trial(format!("{name}/reference"), move || {
            s.check_reference(s.program(&name))
        }));
        let (s, name) = (suite.clone(), p.name.clone());
        trials.push(trial(format!("{name}/hand/translation"), move || {
            let p = s.program(&name);
            s.check_text(p, &p.expected.clone()?)
        }));
        for profile in Profile::ALL {
            let (s, name) = (suite.clone(), p.name.clone());
            let case = if suite.expect.not_translated(&p.name) {
                "not-yet-translated"
            } else {
                "translation"
            };
            trials.push(trial(
                format!("{name}/{}/{case}", profile.name()),
                move || s.check_translation(s.program(&name), profile),
            ));
        }
    }
    // Builds, ordered build by build so that parallel cases work on different programs.
    for build in Build::ALL {
        for p in &suite.programs {
            let (s, name) = (suite.clone(), p.name.clone());
            let fails = suite.expect.fails(&p.name, None, build);
            trials.push(trial(format!("{name}/hand/{}", build.name()), move || {
                let p = s.program(&name);
                s.check_build_expecting(p, &p.expected.clone()?, build, fails)
            }));
        }
    }
    for build in Build::ALL {
        for profile in Profile::ALL {
            for p in suite
                .programs
                .iter()
                .filter(|p| !suite.expect.not_translated(&p.name))
            {
                let (s, name) = (suite.clone(), p.name.clone());
                let fails = suite.expect.fails(&p.name, Some(profile), build);
                trials.push(trial(
                    format!("{name}/{}/{}", profile.name(), build.name()),
                    move || {
                        let p = s.program(&name);
                        let t = s.translation(p, profile);
                        s.check_translation(p, profile)?;
                        s.check_build_expecting(p, &t.text, build, fails)
                    },
                ));
            }
        }
    }
    for c in controls.unwrap_or_default() {
        if suite.programs.iter().any(|p| p.name == c.program) {
            let s = suite.clone();
            trials.push(trial(
                format!("{}/control-{}", c.program, c.kind),
                move || s.check_control(&c),
            ));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

/// The lists name real programs and builds, every program has a hand translation, and the
/// controls cover both kinds.
fn list_check(
    all: usize,
    expect: &Expectations,
    load_error: Option<String>,
    controls: &Result<Vec<Control>, String>,
) -> Trial {
    let mut errors: Vec<String> = load_error.into_iter().collect();
    if all < 15 {
        errors.push(format!(
            "fixtures/programs/fortran has {all} programs, expected at least 15"
        ));
    }
    let exists = |p: &str| root().join(p).is_file();
    for p in program_paths() {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if !root().join("expected").join(&name).is_file() {
            errors.push(format!("{name} has no hand translation in expected/"));
        }
    }
    for e in &expect.not_translated {
        if !exists(&e.program) {
            errors.push(format!(
                "[[not_translated]] names a missing program {}",
                e.program
            ));
        }
    }
    for e in expect.oracle_limit.iter().chain(&expect.expected_failure) {
        if !exists(&e.program) {
            errors.push(format!("an entry names a missing program {}", e.program));
        }
        for b in &e.builds {
            if Build::from_name(b).is_none() {
                errors.push(format!("{}: unknown build {b}", e.program));
            }
        }
        for p in &e.profiles {
            if !Profile::ALL.iter().any(|k| k.name() == p) {
                errors.push(format!("{}: unknown profile {p}", e.program));
            }
        }
    }
    match controls {
        Err(e) => errors.push(e.clone()),
        Ok(cs) => {
            for kind in ["map", "order", "scope"] {
                if !cs.iter().any(|c| c.kind == kind) {
                    errors.push(format!("controls.toml has no control of kind {kind}"));
                }
            }
            for c in cs {
                if !["map", "order", "scope"].contains(&c.kind.as_str()) {
                    errors.push(format!("{}: unknown control kind {}", c.program, c.kind));
                }
                let hand = fs::read_to_string(root().join("expected").join(&c.program))
                    .unwrap_or_default();
                if hand.matches(&c.replace).count() != 1 {
                    errors.push(format!(
                        "{}: the control's text {:?} is not found exactly once in the hand translation",
                        c.program, c.replace
                    ));
                }
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

/// The OpenACC detector the suites rely on, on lines whose answer is known.
fn detector_self_check() -> Outcome {
    let free = "program p\n  !$acc parallel loop &\n  !$acc& copy(a) ! c\n  do i = 1, n\n  !$ACC end parallel loop\n  !$omp target\n  !$ use openacc\n  x = 1 ! acc_init\n  s = 'acc_x'\n  call acc_wait(1)\n#ifdef _OPENACC\n  !$accx\nend\n";
    let got: Vec<usize> = fortran::openacc_lines(free, false).into_iter().collect();
    if got != [1, 2, 4, 6, 9, 10] {
        return Err(format!("free form: OpenACC lines {got:?}"));
    }
    if fortran::directive_starts(free, false) != [1, 4] {
        return Err(format!(
            "free form: directive starts {:?}",
            fortran::directive_starts(free, false)
        ));
    }
    let fixed = "      program p\nc$acc parallel loop\nc$acc& copy(a)\n*$ACC kernels\n!$acc end kernels\nc     acc_x comment\n!$    call acc_wait(1)\n     x = 1\nC$OMP TARGET\n      end\n";
    let got: Vec<usize> = fortran::openacc_lines(fixed, true).into_iter().collect();
    if got != [1, 2, 3, 4, 6] {
        return Err(format!("fixed form: OpenACC lines {got:?}"));
    }
    if fortran::directive_starts(fixed, true) != [1, 3, 4] {
        return Err(format!(
            "fixed form: directive starts {:?}",
            fortran::directive_starts(fixed, true)
        ));
    }
    let orig = "  x = 1\n  !$acc kernels\n  y = 2\n";
    let out = "  x = 1\n  !$omp target\n  !$omp parallel\n  y = 2\n";
    if !fortran::touched_plain_lines(orig, out, false).is_empty() {
        return Err("an inserted directive line counted as a change".into());
    }
    if fortran::touched_plain_lines(orig, "  x = 1\n  y = 3\n", false).is_empty() {
        return Err("a changed plain line went unseen".into());
    }
    let (adapted, n) = fortran::flang_adapt(
        "  !$omp target update from(a) depend(inout: q(1)) nowait\n  !$omp taskwait depend(in: q)\n  !$omp target teams nowait depend(in: q)\n",
        false,
    );
    if n != 2
        || adapted
            != "  !$omp taskwait\n  !$omp target update from(a)\n  !$omp taskwait\n  !$omp target teams nowait depend(in: q)\n"
    {
        return Err(format!("flang_adapt gave {n} rewrites:\n{adapted}"));
    }
    let long = format!("  x = 1\n  !$omp {}\n", "a".repeat(140));
    if fortran::long_lines("  x = 1\n", &long, false) != [2] {
        return Err("a long inserted line went unseen".into());
    }
    Ok(())
}
