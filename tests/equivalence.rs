//! Proof of equivalence: every program in `fixtures/programs/` is translated with each
//! profile; the original runs under `gcc -fopenacc` (the reference), the translation under
//! `gcc -fopenmp` (default threads, and 3 threads) and under
//! `clang-19 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu` (a host device with separate
//! memory, so a wrong map shows up as a wrong result) with one team and with 4 teams (so
//! redundant execution and races between teams show up), and under `clang-19 -fopenmp` alone
//! (no offload target: the program links without the offloading runtime and the host is the
//! only device). Output and exit status must match;
//! no OpenACC may remain; every line without OpenACC stays byte-identical. Each program is
//! also translated with `--emit dual` and that one file is built with `gcc -fopenacc` (it must
//! give the reference result), `gcc -fopenmp` and Clang offloading with 4 teams.
//!
//! Each program x profile x build is its own case (`program/profile/build`), so a filter
//! selects cases: `cargo test --release --test equivalence -- jacobi` or `-- 4teams`.
//! Compiled programs are cached by content under `target/acc2omp-test-cache/`.
//!
//! Clang's offloading compiles take nine tenths of the suite's CPU time: by default only the
//! `default` profile's translation is built with them, the `clacc` and `loop` translations
//! and the `dual` file are built with gcc only (`gcc -fopenacc` too for `dual`).
//! `ACC2OMP_FULL_MATRIX=1` (set by `.ci/run`) runs every profile in every build.
//!
//! `known_gaps.toml` lists programs that cannot be translated exactly (`[[gap]]`, with the
//! diagnostic the tool gives) and builds where a program is known to compute a wrong result
//! (`[[expected_failure]]`); both fail once the program computes the right result.

mod common;

use acc2omp::profile::Profile;
use common::cache::{self, Memo, SourceFile};
use common::oracle::{self, Build, Ran, Translation};
use libtest_mimic::{Arguments, Failed, Trial};
use serde::Deserialize;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const BUILDS: [Build; 5] = [
    Build::Gcc,
    Build::ClangOffload,
    Build::Gcc3Threads,
    Build::ClangOffload4Teams,
    Build::ClangHost,
];

/// The run environment of `build`; offloading with one team runs under the host guard
/// (`common::host_guard`), so that a region that dereferences a host pointer dies as on a GPU.
fn guarded_env(build: Build) -> Result<Vec<(&'static str, &'static str)>, String> {
    let mut env = build.env();
    if build == Build::ClangOffload {
        env.push(common::host_guard::env()?);
    }
    // Without an offload target no task is a hidden helper's; disabling them there trips a
    // libomp 19 assertion (new_gtid < __kmp_threads_capacity) at num_threads(48).
    if build == Build::ClangHost {
        env.retain(|(k, _)| *k != "LIBOMP_USE_HIDDEN_HELPER_TASK");
    }
    Ok(env)
}

/// OpenMP builds of the `--emit dual` files.
const DUAL_BUILDS: [Build; 2] = [Build::Gcc, Build::ClangOffload4Teams];

/// Whether every profile and `dual` run in every build (`ACC2OMP_FULL_MATRIX`, not `0`).
fn full_matrix() -> bool {
    std::env::var("ACC2OMP_FULL_MATRIX").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Whether `profile` (None: `dual`) in `build` is a case of this run's matrix: without the
/// full matrix, only the default profile is built with Clang (a compile ten times gcc's).
fn in_matrix(full: bool, profile: Option<Profile>, build: Build) -> bool {
    full || profile == Some(Profile::Default) || matches!(build, Build::Gcc | Build::Gcc3Threads)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Expectations {
    #[serde(default)]
    gap: Vec<Gap>,
    #[serde(default)]
    expected_failure: Vec<ExpectedFailure>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Gap {
    program: String,
    /// The diagnostic rule the tool reports for the construct it cannot translate exactly.
    rule: String,
    #[allow(dead_code)]
    reason: String,
}

/// A translation the tool gives without a diagnostic that computes a wrong result in some
/// builds: known bugs, listed so that the suite stays green while they are open.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectedFailure {
    program: String,
    builds: Vec<String>,
    /// Profiles affected; all when absent.
    #[serde(default)]
    profiles: Vec<String>,
    /// The class of bug (e.g. `redundant-execution`, `race`).
    #[allow(dead_code)]
    class: String,
    #[allow(dead_code)]
    reason: String,
}

impl ExpectedFailure {
    fn covers(&self, profile: Profile, build: Build) -> bool {
        self.builds.iter().any(|b| b == build.name())
            && (self.profiles.is_empty() || self.profiles.iter().any(|p| p == profile.name()))
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/programs")
}

fn program_paths() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(root())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "c" || e == "cpp"))
        .collect();
    v.sort();
    v
}

fn expectations() -> Expectations {
    let text = fs::read_to_string(root().join("known_gaps.toml")).unwrap_or_default();
    toml::from_str(&text).expect("known_gaps.toml parses")
}

struct Program {
    name: String,
    stem: String,
    src: String,
    cxx: bool,
}

impl Program {
    fn load(path: &Path) -> Program {
        Program {
            name: path.file_name().unwrap().to_string_lossy().into_owned(),
            stem: path.file_stem().unwrap().to_string_lossy().into_owned(),
            src: fs::read_to_string(path).unwrap(),
            cxx: common::is_cxx(path),
        }
    }

    fn file(&self, text: &str) -> Vec<SourceFile> {
        vec![SourceFile {
            rel: self.name.clone(),
            text: text.to_string(),
        }]
    }
}

/// Work shared by the cases, each piece done once.
struct Suite {
    programs: Vec<Program>,
    references: Memo<String, Result<Ran, String>>,
    translations: Memo<(String, &'static str), Translation>,
    /// Runs of one program under one build: profiles often give the same translation.
    runs: Memo<(PathBuf, Build), Result<Ran, String>>,
    /// `--emit dual` translations (default profile).
    duals: Memo<String, Translation>,
}

type Outcome = Result<(), String>;

impl Suite {
    fn program(&self, name: &str) -> &Program {
        self.programs.iter().find(|p| p.name == name).unwrap()
    }

    fn reference(&self, p: &Program) -> Result<Ran, String> {
        self.references.get(&p.name, || {
            let gcc = if p.cxx { "g++" } else { "gcc" };
            let exe = cache::compile(
                gcc,
                &strings(&[common::HOST_OPENACC, &["-O1"]].concat()),
                &p.file(&p.src),
                &[0],
            )
            .map_err(|e| format!("gcc -fopenacc cannot compile the original:\n{e}"))?;
            cache::run_once(&exe, &[], 60)
        })
    }

    fn translation(&self, p: &Program, profile: Profile) -> Translation {
        self.translations
            .get(&(p.name.clone(), profile.name()), || {
                oracle::translate(&p.src, &p.name, &["-q", "--profile", profile.name()])
            })
    }

    /// The translation's text when it is complete.
    fn translated(&self, p: &Program, profile: Profile) -> Result<String, String> {
        let t = self.translation(p, profile);
        if let Some(why) = &t.broken {
            return Err(format!("acc2omp failed: {why}"));
        }
        if let Some(left) = oracle::leftover_openacc(&t.text) {
            return Err(format!(
                "OpenACC left in the translation: {left}\n{}",
                t.diagnostics
            ));
        }
        Ok(t.text)
    }

    /// No OpenACC left and no line without OpenACC touched.
    fn check_translation(&self, p: &Program, profile: Profile) -> Outcome {
        let out = self.translated(p, profile)?;
        let touched = touched_plain_lines(&p.src, &out);
        if touched.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "lines without OpenACC changed:\n  {}",
                touched.join("\n  ")
            ))
        }
    }

    /// Build `text` (a translation of `p`) and run it `runs` times; the first run that
    /// differs from the reference is the error.
    fn check_build(&self, p: &Program, text: &str, build: Build, runs: usize) -> Outcome {
        let reference = self.reference(p)?;
        let (compiler, flags) = build.compiler(p.cxx);
        let mut flags = strings(flags);
        flags.push("-O1".into());
        let exe = cache::compile(compiler, &flags, &p.file(text), &[0])
            .map_err(|e| format!("{compiler} cannot compile the translation:\n{e}"))?;
        let env = guarded_env(build)?;
        // The clang host build runs with libomp's hidden helper threads (see `guarded_env`),
        // which now and then abort a program with `nowait` target tasks (killed by a signal,
        // as `async_runs` meets too: libomp 19's "Assertion failure at kmp_tasking.cpp(4368):
        // task_team != __null", measured in 57 of 400 runs of async_queue_join.c's `loop`
        // translation on an idle machine, and three runs in a row under CI's load): such a
        // run is retried, five times at most; a program that dies every time still fails.
        let run = || {
            let mut r = oracle::run(&exe, &env, 60);
            for _ in 0..5 {
                match &r {
                    Ok(got) if build == Build::ClangHost && got.code.is_none() => {
                        r = oracle::run(&exe, &env, 60)
                    }
                    _ => break,
                }
            }
            r
        };
        for k in 0..runs {
            let got = if k == 0 {
                self.runs.get(&(exe.clone(), build), &run)?
            } else {
                run()?
            };
            if got != reference {
                return Err(format!(
                    "{} build differs from gcc -fopenacc (exit {:?} vs {:?}); {}",
                    build.name(),
                    got.code,
                    reference.code,
                    oracle::first_difference(&reference.stdout, &got.stdout)
                ));
            }
        }
        Ok(())
    }

    /// When the original builds and runs serially with the reference result, so does the
    /// translation (`#include <omp.h>` and helpers that call OpenMP are guarded).
    fn check_serial(&self, p: &Program) -> Outcome {
        let reference = self.reference(p)?;
        let (compiler, flags) = Build::Serial.compiler(p.cxx);
        let mut flags = strings(flags);
        flags.push("-O1".into());
        let serial_original = cache::compile(compiler, &flags, &p.file(&p.src), &[0])
            .ok()
            .and_then(|exe| cache::run_once(&exe, &[], 60).ok());
        if serial_original.as_ref() != Some(&reference) {
            // Not a serial program (it calls the OpenACC runtime, or relies on OpenACC).
            return Ok(());
        }
        let text = self.translated(p, Profile::Default)?;
        self.check_build(p, &text, Build::Serial, 1)
    }

    /// A translation with directives left unchanged must not compile under `build`: the
    /// guard before them stops it with an error naming the directive.
    fn check_refused(&self, p: &Program, text: &str, build: Build) -> Outcome {
        let (compiler, flags) = build.compiler(p.cxx);
        match cache::compile(compiler, &strings(flags), &p.file(text), &[0]) {
            Ok(_) => Err(format!(
                "{} builds a translation that leaves OpenACC directives unchanged (it would ignore them)",
                build.name()
            )),
            Err(e) if e.contains("acc2omp: 'acc ") && e.contains("is left unchanged") => Ok(()),
            Err(e) => Err(format!(
                "{} rejects the translation, but not with the guard of a directive left unchanged:\n{e}",
                build.name()
            )),
        }
    }

    /// The `--emit dual` translation: complete, a fixed point, and `--emit omp` on it gives
    /// the `--emit omp` translation of the original.
    fn dual(&self, p: &Program) -> Result<String, String> {
        let t = self.duals.get(&p.name, || {
            oracle::translate(&p.src, &p.name, &["-q", "--emit", "dual"])
        });
        if let Some(why) = &t.broken {
            return Err(format!("acc2omp --emit dual failed: {why}"));
        }
        if t.diagnostics.contains("[emit-") {
            return Err(format!("--emit dual refused:\n{}", t.diagnostics));
        }
        Ok(t.text)
    }

    fn check_dual_translation(&self, p: &Program) -> Outcome {
        let dual = self.dual(p)?;
        let omp = self.translated(p, Profile::Default)?;
        let again = oracle::translate(&dual, &p.name, &["-q", "--emit", "dual"]);
        if again.text != dual {
            return Err(format!(
                "--emit dual on its own output changes it:\n{}",
                oracle::first_difference(&dual, &again.text)
            ));
        }
        let finished = oracle::translate(&dual, &p.name, &["-q"]);
        if finished.text != omp {
            return Err(format!(
                "--emit omp on the dual file differs from --emit omp on the original: {}",
                oracle::first_difference(&omp, &finished.text)
            ));
        }
        Ok(())
    }

    /// The dual file built as OpenACC (`gcc -fopenacc`) gives the reference result.
    fn check_dual_openacc(&self, p: &Program) -> Outcome {
        let reference = self.reference(p)?;
        let dual = self.dual(p)?;
        let gcc = if p.cxx { "g++" } else { "gcc" };
        let exe = cache::compile(
            gcc,
            &strings(&[common::HOST_OPENACC, &["-O1"]].concat()),
            &p.file(&dual),
            &[0],
        )
        .map_err(|e| format!("gcc -fopenacc cannot compile the dual file:\n{e}"))?;
        let got = cache::run_once(&exe, &[], 60)?;
        if got != reference {
            return Err(format!(
                "dual file under gcc -fopenacc differs from the original (exit {:?} vs {:?}); {}",
                got.code,
                reference.code,
                oracle::first_difference(&reference.stdout, &got.stdout)
            ));
        }
        Ok(())
    }

    fn check_profile_build(
        &self,
        p: &Program,
        profile: Profile,
        build: Build,
        runs: usize,
    ) -> Outcome {
        let text = self.translated(p, profile)?;
        self.check_build(p, &text, build, runs)
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// Original lines without OpenACC that the translation changed or removed.
fn touched_plain_lines(orig: &str, out: &str) -> Vec<String> {
    let acc = oracle::openacc_lines(orig);
    let diff = similar::TextDiff::from_lines(orig, out);
    let mut bad = Vec::new();
    let content = |s: &str| s.trim_end_matches(['\n', '\r']).to_string();
    for op in diff.ops() {
        // A plain line split by inserted OpenMP lines (code after the `}` that ends a routine
        // goes after its `end declare target`) keeps its text: not a change.
        let (mut removed, mut kept, mut deleted) = (String::new(), String::new(), Vec::new());
        for change in diff.iter_changes(op) {
            let text = change.value();
            match change.tag() {
                similar::ChangeTag::Delete => {
                    let line = change.old_index().unwrap_or(0);
                    if !acc.contains(&line) {
                        removed.push_str(&content(text));
                        deleted.push(format!("line {}: {}", line + 1, text.trim_end()));
                    }
                }
                similar::ChangeTag::Insert if !text.trim_start().starts_with("#pragma omp") => {
                    kept.push_str(&content(text));
                }
                _ => {}
            }
        }
        if !deleted.is_empty() && removed != kept {
            bad.extend(deleted);
        }
    }
    bad
}

fn trial(name: String, f: impl FnOnce() -> Outcome + Send + 'static) -> Trial {
    Trial::test(name, move || f().map_err(Failed::from))
}

fn main() {
    let args = Arguments::from_args();
    if !common::compilers("equivalence") {
        libtest_mimic::run(&args, Vec::new()).exit();
    }
    cache::prune(14);
    let expect = expectations();
    let mut paths = program_paths();
    assert!(
        paths.len() >= 40,
        "the corpus has {} programs, expected at least 40",
        paths.len()
    );
    // `ACC2OMP_PROGRAMS=a,b` runs only programs whose names contain one of the words.
    if let Ok(only) = std::env::var("ACC2OMP_PROGRAMS") {
        let words: Vec<&str> = only.split(',').filter(|w| !w.is_empty()).collect();
        paths.retain(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            words.iter().any(|w| name.contains(w))
        });
    }
    let suite = Arc::new(Suite {
        programs: paths.iter().map(|p| Program::load(p)).collect(),
        references: Memo::new(),
        translations: Memo::new(),
        runs: Memo::new(),
        duals: Memo::new(),
    });
    let full = full_matrix();
    let mut trials = list_errors(&expect);
    let gap_of = |name: &str| expect.gap.iter().find(|g| g.program == name);
    // Cases are ordered build by build so that parallel cases work on different programs.
    for p in &suite.programs {
        if let Some(g) = gap_of(&p.name) {
            let (s, name, rule) = (suite.clone(), p.name.clone(), g.rule.clone());
            trials.push(trial(format!("{name}/known-gap"), move || {
                check_gap(&s, &name, &rule)
            }));
        }
    }
    for profile in Profile::ALL {
        for p in suite.programs.iter().filter(|p| gap_of(&p.name).is_none()) {
            let (s, name) = (suite.clone(), p.name.clone());
            trials.push(trial(
                format!("{name}/{}/translation", profile.name()),
                move || s.check_translation(s.program(&name), profile),
            ));
        }
    }
    let mut left_out = 0;
    for build in BUILDS {
        for profile in Profile::ALL {
            if !in_matrix(full, Some(profile), build) {
                left_out += suite
                    .programs
                    .iter()
                    .filter(|p| gap_of(&p.name).is_none())
                    .count();
                continue;
            }
            for p in suite.programs.iter().filter(|p| gap_of(&p.name).is_none()) {
                let (s, name) = (suite.clone(), p.name.clone());
                let expected_to_fail = expect
                    .expected_failure
                    .iter()
                    .any(|e| e.program == p.name && e.covers(profile, build));
                let case = format!("{name}/{}/{}", profile.name(), build.name());
                trials.push(trial(case, move || {
                    let p = s.program(&name);
                    if !expected_to_fail {
                        return s.check_profile_build(p, profile, build, 1);
                    }
                    // A race may give the right result now and then: only a result that is
                    // right three times in a row counts as fixed.
                    match s.check_profile_build(p, profile, build, 3) {
                        Ok(()) => Err(format!(
                            "listed as an expected failure in known_gaps.toml, but the {} build now gives the reference result: remove it from the entry",
                            build.name()
                        )),
                        Err(_) => Ok(()),
                    }
                }));
            }
        }
    }
    // `--emit dual`: the same file built as OpenACC and as OpenMP (default profile; the
    // OpenMP builds where that translation is a known failure are covered above).
    for p in suite.programs.iter().filter(|p| gap_of(&p.name).is_none()) {
        let (s, name) = (suite.clone(), p.name.clone());
        trials.push(trial(format!("{name}/dual/translation"), move || {
            s.check_dual_translation(s.program(&name))
        }));
        let (s, name) = (suite.clone(), p.name.clone());
        trials.push(trial(format!("{name}/dual/gcc-openacc"), move || {
            s.check_dual_openacc(s.program(&name))
        }));
        for build in DUAL_BUILDS {
            if !in_matrix(full, None, build) {
                left_out += 1;
                continue;
            }
            let known = expect
                .expected_failure
                .iter()
                .any(|e| e.program == p.name && e.covers(Profile::Default, build));
            if known {
                continue;
            }
            let (s, name) = (suite.clone(), p.name.clone());
            trials.push(trial(format!("{name}/dual/{}", build.name()), move || {
                let p = s.program(&name);
                let dual = s.dual(p)?;
                s.check_build(p, &dual, build, 1)
            }));
        }
    }
    // Without OpenMP: a program whose original builds serially (OpenACC ignored) with the
    // reference result must do so translated too.
    for p in suite.programs.iter().filter(|p| gap_of(&p.name).is_none()) {
        let (s, name) = (suite.clone(), p.name.clone());
        trials.push(trial(format!("{name}/default/serial"), move || {
            s.check_serial(s.program(&name))
        }));
    }
    trials.extend(tests_of_the_test::trials(&suite));
    trials.extend(async_runs::trials(&suite));
    if left_out > 0 {
        eprintln!(
            "equivalence: default matrix: {left_out} cases not run (the clacc and loop \
             translations and the dual files built with Clang offloading); \
             ACC2OMP_FULL_MATRIX=1 runs them, as .ci/run does"
        );
    }
    libtest_mimic::run(&args, trials).exit();
}

/// Entries of `known_gaps.toml` that name nothing real are a failing case.
fn list_errors(expect: &Expectations) -> Vec<Trial> {
    let mut errors = Vec::new();
    for g in &expect.gap {
        if !root().join(&g.program).exists() {
            errors.push(format!("[[gap]] names a missing program {}", g.program));
        }
    }
    for e in &expect.expected_failure {
        if !root().join(&e.program).exists() {
            errors.push(format!(
                "[[expected_failure]] names a missing program {}",
                e.program
            ));
        }
        for b in &e.builds {
            if !BUILDS.iter().any(|k| k.name() == b) {
                errors.push(format!(
                    "[[expected_failure]] {}: unknown build {b}",
                    e.program
                ));
            }
        }
        for p in &e.profiles {
            if !Profile::ALL.iter().any(|k| k.name() == p) {
                errors.push(format!(
                    "[[expected_failure]] {}: unknown profile {p}",
                    e.program
                ));
            }
        }
        if expect.gap.iter().any(|g| g.program == e.program) {
            errors.push(format!(
                "{} is both a [[gap]] and an [[expected_failure]]",
                e.program
            ));
        }
    }
    vec![trial("known_gaps.toml".into(), move || {
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("\n"))
        }
    })]
}

/// A known gap must still be reported, and must still fail somewhere.
fn check_gap(s: &Suite, name: &str, rule: &str) -> Outcome {
    let p = s.program(name);
    s.reference(p)?;
    let mut reported = false;
    let mut failures = 0;
    for profile in Profile::ALL {
        reported |= s
            .translation(p, profile)
            .diagnostics
            .contains(&format!("[{rule}]"));
        failures += usize::from(s.check_translation(p, profile).is_err());
        for build in BUILDS {
            failures += usize::from(s.check_profile_build(p, profile, build, 1).is_err());
        }
    }
    if !reported {
        return Err(format!(
            "listed as a known gap, but the tool no longer reports [{rule}]"
        ));
    }
    if failures == 0 {
        return Err(
            "listed as a known gap but now translates exactly: remove it from known_gaps.toml"
                .into(),
        );
    }
    // A directive left unchanged must never build silently into a program that ignores it.
    for profile in Profile::ALL {
        let t = s.translation(p, profile);
        if !oracle::has_directives(&t.text) {
            continue;
        }
        for build in BUILDS {
            s.check_refused(p, &t.text, build)
                .map_err(|e| format!("{}: {e}", profile.name()))?;
        }
    }
    Ok(())
}

/// Tests of the test: broken translations that the oracle must catch.
mod tests_of_the_test {
    use super::*;

    fn program(name: &str, src: &str) -> Program {
        Program {
            name: name.into(),
            stem: name.trim_end_matches(".c").into(),
            src: src.into(),
            cxx: false,
        }
    }

    fn expect_caught(s: &Suite, p: &Program, text: &str, build: Build) -> Outcome {
        match s.check_build(p, text, build, 1) {
            Err(_) => Ok(()),
            Ok(()) => Err(format!(
                "the broken translation gives the reference result under {}:\n{text}",
                build.name()
            )),
        }
    }

    pub fn trials(suite: &Arc<Suite>) -> Vec<Trial> {
        let s = suite.clone();
        let broken_map = trial("test-of-the-test/broken-map".into(), move || {
            let p = program(
                "broken_map.c",
                "#include <stdio.h>\n#define N 1000\nint main(void) {\n  static double a[N], b[N];\n  for (int i = 0; i < N; i++) a[i] = i;\n  #pragma acc parallel loop copyin(a) copyout(b)\n  for (int i = 0; i < N; i++) b[i] = 2 * a[i];\n  double s = 0;\n  for (int i = 0; i < N; i++) s += b[i];\n  printf(\"%.1f\\n\", s);\n  return 0;\n}\n",
            );
            let good = s.translated(&p, Profile::Default)?;
            if !good.contains("map(from: b)") {
                return Err(format!("unexpected translation:\n{good}"));
            }
            s.check_build(&p, &good, Build::ClangOffload, 1)?;
            expect_caught(
                &s,
                &p,
                &good.replace("map(from: b)", "map(to: b)"),
                Build::ClangOffload,
            )
        });
        let s = suite.clone();
        let stripped = trial("test-of-the-test/worksharing-stripped".into(), move || {
            let p = program(
                "redundant.c",
                "#include <stdio.h>\n#define N 4096\nint main(void) {\n  static int a[N];\n  for (int i = 0; i < N; i++) a[i] = i;\n  #pragma acc parallel loop copy(a)\n  for (int i = 0; i < N; i++) a[i] += 1;\n  long s = 0;\n  for (int i = 0; i < N; i++) s += a[i];\n  printf(\"%ld\\n\", s);\n  return 0;\n}\n",
            );
            let good = s.translated(&p, Profile::Default)?;
            let bad = strip_worksharing(&good);
            if bad == good {
                return Err(format!("no worksharing to strip in:\n{good}"));
            }
            s.check_build(&p, &good, Build::ClangOffload4Teams, 1)?;
            // One team hides the redundant execution; four teams must show it.
            s.check_build(&p, &bad, Build::ClangOffload, 1)
                .map_err(|e| format!("the stripped copy should pass with one team: {e}"))?;
            expect_caught(&s, &p, &bad, Build::ClangOffload4Teams)
        });
        vec![broken_map, stripped]
    }

    /// `text` with `target teams distribute parallel for …` turned into `target teams`: every
    /// team runs the whole loop.
    pub fn strip_worksharing(text: &str) -> String {
        let mut out = Vec::new();
        for line in text.split_inclusive('\n') {
            let Some(k) = line.find("#pragma omp target teams") else {
                out.push(line.to_string());
                continue;
            };
            let head = k + "#pragma omp target teams".len();
            let mut rest = &line[head..];
            loop {
                let t = rest.trim_start();
                match ["distribute", "parallel", "for", "simd", "loop"]
                    .iter()
                    .find(|w| t.starts_with(*w))
                {
                    Some(w) => rest = &t[w.len()..],
                    None => break,
                }
            }
            out.push(format!("{} {}", &line[..head], rest.trim_start()));
        }
        out.concat()
    }
}

/// Async queues with real concurrency: the programs that use `async` are run with libomp's
/// hidden helper threads, so their `nowait` target tasks overlap unless `depend` orders them.
/// The test of the test strips every `depend` from one translation and requires a wrong
/// result in some run.
mod async_runs {
    use super::*;

    /// Runs with hidden helper threads on; a run that libomp aborts (killed by a signal) is
    /// retried.
    fn run_async(exe: &Path, runs: usize) -> Result<Vec<Ran>, String> {
        let env = [("LD_LIBRARY_PATH", "/usr/lib/llvm-19/lib")];
        let mut out = Vec::new();
        let mut aborted = 0;
        while out.len() < runs && aborted < 10 {
            let r = oracle::run(exe, &env, 60)?;
            if r.code.is_none_or(|c| c >= 128) {
                aborted += 1;
            } else {
                out.push(r);
            }
        }
        if out.len() < runs {
            return Err(format!("libomp aborted {aborted} runs"));
        }
        Ok(out)
    }

    fn check(s: &Suite, p: &Program, text: &str, should_match: bool) -> Outcome {
        let reference = s.reference(p)?;
        let (compiler, flags) = Build::ClangOffload.compiler(p.cxx);
        let exe = cache::compile(compiler, &strings(flags), &p.file(text), &[0])
            .map_err(|e| format!("{compiler} cannot compile the translation:\n{e}"))?;
        let runs = if should_match { 3 } else { 8 };
        let got = run_async(&exe, runs)?;
        match (should_match, got.iter().find(|g| **g != reference)) {
            (true, Some(bad)) => Err(format!(
                "under hidden helper threads the translation differs from gcc -fopenacc (exit {:?} vs {:?}); {}",
                bad.code,
                reference.code,
                oracle::first_difference(&reference.stdout, &bad.stdout)
            )),
            (false, None) => Err(format!(
                "the copy without depend gave the right result in all {runs} runs: the test cannot see queue order"
            )),
            _ => Ok(()),
        }
    }

    pub fn trials(suite: &Arc<Suite>) -> Vec<Trial> {
        let asyncs: Vec<String> = suite
            .programs
            .iter()
            .filter(|p| p.src.contains("async"))
            .map(|p| p.name.clone())
            .collect();
        let mut trials = Vec::new();
        let all = std::env::var("ACC2OMP_PROGRAMS").is_err();
        if all && asyncs.len() < 4 {
            trials.push(trial("async/corpus".into(), move || {
                Err(format!("only {} programs use async", asyncs.len()))
            }));
            return trials;
        }
        for name in asyncs {
            let s = suite.clone();
            trials.push(trial(format!("{name}/default/hidden-helpers"), move || {
                let p = s.program(&name);
                let text = s.translated(p, Profile::Default)?;
                check(&s, p, &text, true)
            }));
        }
        if suite.programs.iter().any(|p| p.stem == "async_queue_order") {
            let s = suite.clone();
            trials.push(trial(
                "test-of-the-test/async-without-depend".into(),
                move || {
                    let p = s.program("async_queue_order.c");
                    let good = s.translated(p, Profile::Default)?;
                    let stripped = strip_depend(&good);
                    if stripped == good {
                        return Err("no depend clause in the translation".into());
                    }
                    check(&s, p, &stripped, false)
                },
            ));
        }
        trials
    }

    /// `text` without its `depend(...)` clauses.
    fn strip_depend(text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(k) = rest.find(" depend(") {
            out.push_str(&rest[..k]);
            let mut depth = 0;
            let mut end = rest.len();
            for (i, ch) in rest[k + 1..].char_indices() {
                match ch {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            end = k + 1 + i + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            rest = &rest[end..];
        }
        out.push_str(rest);
        out
    }
}
