//! GCC's OpenACC runtime tests (`libgomp/testsuite/libgomp.oacc-*`): the reference is the
//! test built with `gcc -fopenacc` on the host (exit 0 required to enter the reference set);
//! the translation must be complete and exit 0 in every build.

use crate::common::cache;
use crate::common::oracle::{self, Build};
use crate::dg::{self, RunSpec, Target};
use crate::sources::{self, Files};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

pub const BUILDS: [Build; 4] = [
    Build::Gcc,
    Build::ClangHost,
    Build::ClangOffload,
    Build::ClangOffload4Teams,
];

pub struct Test {
    /// `libgomp.oacc-c-c++-common/foo.c`
    pub name: String,
    pub path: PathBuf,
    pub cxx: bool,
    pub spec: RunSpec,
}

impl Test {
    pub fn lang(&self) -> &'static str {
        if self.cxx { "c++" } else { "c" }
    }
}

/// Runtime tests selected for the host, and how many candidates were not.
pub fn discover(root: &Path) -> (Vec<Test>, usize) {
    let suite = root.join("libgomp/testsuite");
    let mut candidates = Vec::new();
    for (dir, exts, langs) in [
        ("libgomp.oacc-c-c++-common", &["c"][..], &[false, true][..]),
        ("libgomp.oacc-c", &["c"][..], &[false][..]),
        ("libgomp.oacc-c++", &["C"][..], &[true][..]),
    ] {
        let mut files: Vec<PathBuf> = fs::read_dir(suite.join(dir))
            .map(|r| r.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        files.retain(|p| p.extension().is_some_and(|e| exts.iter().any(|x| e == *x)));
        files.sort();
        for p in files {
            for &cxx in langs {
                candidates.push((
                    format!("{dir}/{}", p.file_name().unwrap().to_string_lossy()),
                    p.clone(),
                    cxx,
                ));
            }
        }
    }
    let total = candidates.len();
    let tests: Vec<Test> = candidates
        .into_iter()
        .filter_map(|(name, path, cxx)| {
            let src = String::from_utf8_lossy(&fs::read(&path).ok()?).into_owned();
            let target = Target {
                cxx,
                fortran: false,
            };
            let spec = dg::run_spec(&src, target).ok()?;
            Some(Test {
                name,
                path,
                cxx,
                spec,
            })
        })
        .collect();
    let skipped = total - tests.len();
    (tests, skipped)
}

/// What one build of the translation did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Pass,
    /// The compiler rejected the translation (its first error).
    Rejected(String),
    /// Non-zero exit, a signal or a time-out.
    Wrong(String),
}

impl Status {
    pub fn word(&self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Rejected(_) => "rejected",
            Status::Wrong(_) => "wrong",
        }
    }
}

pub struct Outcome {
    /// `Err`: not in the reference set (why).
    pub reference: Result<(), String>,
    /// The tool crashed, hung or failed (its message).
    pub crash: Option<String>,
    /// What OpenACC is left, if any.
    pub leftover: Option<String>,
    /// The test calls GCC's OpenACC-only builtins (`__builtin_goacc_parlevel_id`), which
    /// exist only under `-fopenacc` and have no counterpart to translate to.
    pub gcc_builtin: Option<String>,
    /// Rule ids of the errors and warnings the tool reported.
    pub rules: Vec<String>,
    pub builds: BTreeMap<&'static str, Status>,
}

impl Outcome {
    pub fn passes(&self) -> bool {
        self.crash.is_none()
            && self.leftover.is_none()
            && self.gcc_builtin.is_none()
            && self.builds.len() == BUILDS.len()
            && self.builds.values().all(|s| *s == Status::Pass)
    }

    pub fn passes_in(&self, b: Build) -> bool {
        self.crash.is_none()
            && self.leftover.is_none()
            && self.gcc_builtin.is_none()
            && self.builds.get(b.name()) == Some(&Status::Pass)
    }

    /// The class of failure, for the expectations file and the summary.
    pub fn class(&self) -> &'static str {
        if self.crash.is_some() {
            return "tool-crash";
        }
        if self.leftover.is_some() {
            return "not-translated";
        }
        if self.gcc_builtin.is_some() {
            return "gcc-builtin";
        }
        let rejected = |names: &[&str]| {
            self.builds.iter().find_map(|(b, s)| match s {
                Status::Rejected(e) if names.contains(b) => Some(e.clone()),
                _ => None,
            })
        };
        if rejected(&["gcc"]).is_some() {
            return "gcc-rejects";
        }
        if let Some(e) = rejected(&["clang", "clang-offload", "clang-offload-4teams"]) {
            return if toolchain_limit(&e) {
                "toolchain-limit"
            } else {
                "clang-rejects"
            };
        }
        if self.builds.values().any(|s| matches!(s, Status::Wrong(_))) {
            return if self.rules.is_empty() {
                "silent-wrong"
            } else {
                "wrong-result"
            };
        }
        "pass"
    }
}

/// Clang errors for GNU C extensions that the OpenACC test itself uses, and the device
/// memory routines that `clang -fopenmp` without offload targets does not link (they live
/// in libomptarget).
fn toolchain_limit(error: &str) -> bool {
    [
        "function definition is not allowed here",
        "fields must have a constant size",
        "undefined reference to `omp_target_",
    ]
    .iter()
    .any(|p| error.contains(p))
}

fn include_flag(root: &Path) -> String {
    format!("-I{}", root.join("include").display())
}

/// Options of the test kept for the OpenMP builds: macros, include paths, language standard,
/// optimisation, debug info. GCC-only and OpenACC-only options are dropped.
fn kept_options(spec: &RunSpec) -> Vec<String> {
    spec.options
        .iter()
        .filter(|o| {
            ["-D", "-U", "-I", "-std=", "-O", "-g"]
                .iter()
                .any(|p| o.starts_with(p))
        })
        .cloned()
        .collect()
}

/// Build and run `t`; `expected` holds the builds expected to give a wrong result (a run that
/// passes there is repeated, so a race that shows now and then stays a failure).
pub fn check(root: &Path, t: &Test, expected_wrong: &[&str]) -> Outcome {
    let mut out = Outcome {
        reference: Ok(()),
        crash: None,
        leftover: None,
        gcc_builtin: None,
        rules: Vec::new(),
        builds: BTreeMap::new(),
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
    let lang = if t.cxx {
        vec!["-x".to_string(), "c++".into()]
    } else {
        vec![]
    };
    if let Err(e) = reference(root, t, &files, &lang) {
        out.reference = Err(e);
        return out;
    }
    let translations = sources::translate(&files, t.cxx);
    for tr in &translations {
        out.rules.extend(tr.rules());
        if let Some(b) = &tr.broken {
            out.crash.get_or_insert(b.clone());
        }
        if out.leftover.is_none() {
            out.leftover = oracle::leftover_openacc(&tr.text);
        }
        if let Some(k) = tr.text.find("__builtin_goacc_") {
            let name: String = tr.text[k..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.gcc_builtin.get_or_insert(name);
        }
    }
    out.rules.sort();
    out.rules.dedup();
    if out.crash.is_some() || out.leftover.is_some() || out.gcc_builtin.is_some() {
        return out;
    }
    let text = sources::translated(&files, &translations);
    for b in BUILDS {
        let (compiler, flags) = b.compiler(t.cxx);
        let mut flags: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
        flags.extend(lang.iter().cloned());
        let shared = if b.separate_memory() { 0 } else { 1 };
        flags.extend([
            "-O2".into(),
            "-DACC_DEVICE_TYPE_host=1".into(),
            format!("-DACC_MEM_SHARED={shared}"),
            include_flag(root),
        ]);
        flags.extend(kept_options(&t.spec));
        let status = match cache::compile(compiler, &flags, &text, &files.units) {
            Err(e) => Status::Rejected(first_error(&e)),
            Ok(exe) => {
                let mut env = b.env();
                env.extend(t.spec.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
                let tries = if expected_wrong.contains(&b.name()) {
                    3
                } else {
                    1
                };
                let mut status = Status::Pass;
                for _ in 0..tries {
                    status = match oracle::run(&exe, &env, 60) {
                        Err(e) => Status::Wrong(e),
                        Ok(r) if r.timed_out() => Status::Wrong("timed out after 60 s".into()),
                        Ok(r) if r.code == Some(0) => Status::Pass,
                        Ok(r) => Status::Wrong(match r.code {
                            Some(c) => format!("exit status {c}"),
                            None => "killed by a signal (abort)".into(),
                        }),
                    };
                    if status != Status::Pass {
                        break;
                    }
                }
                status
            }
        };
        out.builds.insert(b.name(), status);
    }
    out
}

/// The test built with `gcc -fopenacc` (`g++` for C++) must exit 0.
fn reference(root: &Path, t: &Test, files: &Files, lang: &[String]) -> Result<(), String> {
    let compiler = if t.cxx { "g++" } else { "gcc" };
    let mut flags: Vec<String> = crate::common::HOST_OPENACC
        .iter()
        .map(|s| s.to_string())
        .collect();
    flags.extend(lang.iter().cloned());
    flags.extend(dg::host_flags());
    flags.push(include_flag(root));
    flags.extend(t.spec.options.iter().cloned());
    let exe = cache::compile(compiler, &flags, &files.files, &files.units)
        .map_err(|e| format!("{compiler} -fopenacc rejects it: {}", first_error(&e)))?;
    let mut env = vec![("ACC_DEVICE_TYPE", "host")];
    env.extend(t.spec.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let r = cache::run_once(&exe, &env, 60)?;
    if r.code == Some(0) {
        Ok(())
    } else {
        Err(format!(
            "{compiler} -fopenacc build exits with {:?}",
            r.code
        ))
    }
}

/// The first `error:` line of a compiler's output, without the path.
pub fn first_error(msg: &str) -> String {
    let line = msg
        .lines()
        .find(|l| l.contains("error:") && !l.contains("linker command failed"))
        .or_else(|| msg.lines().find(|l| l.contains("undefined reference")))
        .or_else(|| msg.lines().next())
        .unwrap_or("");
    match line.find("error:") {
        Some(k) => {
            let loc = line[..k].trim_end_matches([':', ' ']);
            let file_line = loc.rsplit_once('/').map_or(loc, |(_, f)| f).to_string();
            format!("{file_line}: {}", &line[k..])
        }
        None => match line.find("undefined reference") {
            Some(k) => line[k..].to_string(),
            None => line.to_string(),
        },
    }
}
