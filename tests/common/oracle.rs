//! The oracle's builds and runs: how a translation is compiled and under which environment
//! it runs, shared by the equivalence and conformance suites.

use acc2omp::lex::{TokKind, lex};
use acc2omp::scan::find_sites;
use std::path::Path;
use std::process::{Command, Stdio};

/// How a translation is built and run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Build {
    /// `gcc -fopenmp` at the default thread count.
    Gcc,
    /// `gcc -fopenmp` with `OMP_NUM_THREADS=3`.
    Gcc3Threads,
    /// `clang-19 -fopenmp` without offloading: target regions run on the host.
    ClangHost,
    /// Clang's host offloading (a device with separate memory), one team.
    ClangOffload,
    /// Clang's host offloading with 4 teams of up to 3 threads: redundant execution and
    /// races between teams show.
    ClangOffload4Teams,
    /// `gcc` without OpenMP: OpenMP code conventionally builds and runs serially.
    Serial,
}

impl Build {
    pub fn name(self) -> &'static str {
        match self {
            Build::Gcc => "gcc",
            Build::Gcc3Threads => "gcc-3threads",
            Build::ClangHost => "clang",
            Build::ClangOffload => "clang-offload",
            Build::ClangOffload4Teams => "clang-offload-4teams",
            Build::Serial => "serial",
        }
    }

    pub fn from_name(name: &str) -> Option<Build> {
        [
            Build::Gcc,
            Build::Gcc3Threads,
            Build::ClangHost,
            Build::ClangOffload,
            Build::ClangOffload4Teams,
            Build::Serial,
        ]
        .into_iter()
        .find(|b| b.name() == name)
    }

    /// Compiler and flags for a C (`cxx` false) or C++ translation.
    pub fn compiler(self, cxx: bool) -> (&'static str, &'static [&'static str]) {
        match (self, cxx) {
            (Build::Gcc | Build::Gcc3Threads, false) => ("gcc", super::GCC_OPENMP),
            (Build::Gcc | Build::Gcc3Threads, true) => ("g++", super::GCC_OPENMP),
            (Build::ClangHost, false) => ("clang-19", &["-fopenmp"]),
            (Build::ClangHost, true) => ("clang++-19", &["-fopenmp"]),
            (Build::Serial, false) => ("gcc", &[]),
            (Build::Serial, true) => ("g++", &[]),
            (_, false) => ("clang-19", super::CLANG_OFFLOAD),
            (_, true) => ("clang++-19", super::CLANG_OFFLOAD),
        }
    }

    /// Whether the program runs on a device with memory separate from the host's.
    pub fn separate_memory(self) -> bool {
        matches!(self, Build::ClangOffload | Build::ClangOffload4Teams)
    }

    /// The run environment.
    pub fn env(self) -> Vec<(&'static str, &'static str)> {
        let libomp = [
            ("LD_LIBRARY_PATH", "/usr/lib/llvm-19/lib"),
            ("LIBOMP_USE_HIDDEN_HELPER_TASK", "0"),
        ];
        match self {
            Build::Gcc | Build::Serial => vec![],
            Build::Gcc3Threads => vec![("OMP_NUM_THREADS", "3")],
            Build::ClangHost | Build::ClangOffload => libomp.to_vec(),
            // A larger KMP_TEAMS_THREAD_LIMIT, or any OMP_TEAMS_THREAD_LIMIT, trips a libomp 19
            // assertion.
            Build::ClangOffload4Teams => [
                &libomp[..],
                &[
                    ("OMP_NUM_TEAMS", "4"),
                    ("KMP_TEAMS_THREAD_LIMIT", "8"),
                    ("OMP_NUM_THREADS", "3"),
                ],
            ]
            .concat(),
        }
    }
}

/// What a program did: its standard output and exit status (`None`: killed by a signal,
/// `Some(124)`: timed out).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ran {
    pub stdout: String,
    pub code: Option<i32>,
}

impl Ran {
    pub fn timed_out(&self) -> bool {
        self.code == Some(124)
    }
}

/// Run `exe` with extra environment variables and a time limit in seconds.
pub fn run(exe: &Path, env: &[(&str, &str)], seconds: u32) -> Result<Ran, String> {
    let mut cmd = Command::new("timeout");
    cmd.args(["-k", "5", &seconds.to_string()])
        .arg(exe)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        // Threads that spin at barriers take hundreds of times longer on a loaded machine
        // (up to the time limit: a false failure); sleeping changes no result.
        .env("OMP_WAIT_POLICY", "passive");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().map_err(|e| e.to_string())?;
    super::offload_images::sweep();
    Ok(Ran {
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        code: o.status.code(),
    })
}

/// What `acc2omp migrate` made of one file.
#[derive(Clone, Debug)]
pub struct Translation {
    pub text: String,
    pub diagnostics: String,
    /// The tool crashed, hung or exited with status 2.
    pub broken: Option<String>,
}

impl Translation {
    /// Rule ids of the errors and warnings reported, sorted and without duplicates.
    pub fn rules(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .diagnostics
            .lines()
            .filter(|l| l.contains(": error: ") || l.contains(": warning: "))
            .filter_map(|l| {
                let open = l.rfind('[')?;
                l[open + 1..].strip_suffix(']').map(str::to_string)
            })
            .collect();
        ids.sort();
        ids.dedup();
        ids
    }
}

/// Translate `src` as standard input named `name` with extra `migrate` arguments.
pub fn translate(src: &str, name: &str, args: &[&str]) -> Translation {
    let mut child = match Command::new("timeout")
        .args([
            "-k",
            "5",
            "60",
            env!("CARGO_BIN_EXE_acc2omp"),
            "migrate",
            "-",
        ])
        .args(["--stdin-filename", name])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            return Translation {
                text: String::new(),
                diagnostics: String::new(),
                broken: Some(e.to_string()),
            };
        }
    };
    use std::io::Write;
    let mut stdin = child.stdin.take().unwrap();
    let src = src.to_string();
    // Write from another thread: a large output must not block a full input pipe.
    let writer = std::thread::spawn(move || stdin.write_all(src.as_bytes()));
    let o = child.wait_with_output().unwrap();
    let _ = writer.join();
    let diagnostics = String::from_utf8_lossy(&o.stderr).into_owned();
    let broken = match o.status.code() {
        Some(0 | 1) if !diagnostics.contains("panicked") => None,
        Some(124) => Some("timed out after 60 s".to_string()),
        code => Some(format!("exit status {code:?}: {diagnostics}")),
    };
    Translation {
        text: String::from_utf8_lossy(&o.stdout).into_owned(),
        diagnostics,
        broken,
    }
}

/// What OpenACC is left in a translation: a directive, an `acc_*` name, `openacc.h` or
/// `_OPENACC`.
pub fn leftover_openacc(out: &str) -> Option<String> {
    let toks = lex(out);
    if let Some(s) = find_sites(out, &toks).first() {
        return Some(out[s.span()].to_string());
    }
    toks.iter()
        .map(|t| t.text(out))
        .find(|t| t.starts_with("acc_") || t.contains("openacc.h") || *t == "_OPENACC")
        .map(str::to_string)
}

/// Whether `out` still has OpenACC directives.
pub fn has_directives(out: &str) -> bool {
    !find_sites(out, &lex(out)).is_empty()
}

/// Line numbers (0-based) of `src` that carry OpenACC: directive sites, `acc_*` names,
/// `openacc.h`, `_OPENACC`.
pub fn openacc_lines(src: &str) -> std::collections::BTreeSet<usize> {
    let toks = lex(src);
    let line_of = |o: usize| src[..o].matches('\n').count();
    let mut lines = std::collections::BTreeSet::new();
    for s in find_sites(src, &toks) {
        lines.extend(line_of(s.span().start)..=line_of(s.span().end));
    }
    for t in &toks {
        let text = t.text(src);
        let acc = match t.kind {
            TokKind::Ident => text.starts_with("acc_") || text == "_OPENACC",
            TokKind::PpLine => {
                text.contains("openacc.h") || text.contains("_OPENACC") || text.contains("acc_")
            }
            _ => false,
        };
        if acc {
            lines.extend(line_of(t.start())..=line_of(t.end()));
        }
    }
    lines
}

pub fn first_difference(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    for k in 0..e.len().max(a.len()) {
        if e.get(k) != a.get(k) {
            return format!(
                "first differing line {}: expected {:?}, got {:?}",
                k + 1,
                e.get(k),
                a.get(k)
            );
        }
    }
    "outputs differ only in the trailing newline".into()
}
