//! GCC's compile-only OpenACC tests (`gcc/testsuite/{c-c++-common,gcc.dg,g++.dg}/goacc`):
//! the tool must never crash or hang on them; where gcc reports the errors a test expects,
//! the tool must report something within two lines; a valid file's translation must pass
//! `gcc -fopenmp -fsyntax-only` and `clang-19 -fopenmp -fsyntax-only`.

use crate::common::cache;
use crate::dg::{self, Target};
use crate::runtime::first_error;
use crate::sources;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// How far from an expected error line a diagnostic of the tool may be.
pub const NEAR: usize = 2;

pub struct Test {
    /// `c-c++-common/goacc/foo.c`
    pub name: String,
    pub path: PathBuf,
    pub cxx: bool,
}

impl Test {
    pub fn lang(&self) -> &'static str {
        if self.cxx { "c++" } else { "c" }
    }
}

pub fn discover(root: &Path) -> Vec<Test> {
    let mut tests = Vec::new();
    for (dir, langs) in [
        ("c-c++-common/goacc", &[false, true][..]),
        ("gcc.dg/goacc", &[false][..]),
        ("g++.dg/goacc", &[true][..]),
    ] {
        let mut files: Vec<PathBuf> = fs::read_dir(root.join("gcc/testsuite").join(dir))
            .map(|r| r.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        files.retain(|p| {
            p.extension()
                .is_some_and(|e| ["c", "C", "cc"].iter().any(|x| e == *x))
        });
        files.sort();
        for p in files {
            for &cxx in langs {
                tests.push(Test {
                    name: format!("{dir}/{}", p.file_name().unwrap().to_string_lossy()),
                    path: p.clone(),
                    cxx,
                });
            }
        }
    }
    tests
}

#[derive(Default)]
pub struct Outcome {
    /// The tool crashed or hung.
    pub crash: Option<String>,
    /// Expected error lines that gcc reports.
    pub reported: Vec<usize>,
    /// Those of them without a diagnostic of the tool within [`NEAR`] lines.
    pub missing: Vec<usize>,
    /// gcc compiles the file: its translation is checked.
    pub valid: bool,
    /// Compilers that reject a valid file's translation (`gcc`, `clang`), with their error.
    pub rejected_by: Vec<(&'static str, String)>,
}

pub fn check(root: &Path, t: &Test) -> Outcome {
    let mut out = Outcome::default();
    let files = match sources::collect(root, &t.path, &[]) {
        Ok(f) => f,
        Err(e) => {
            out.crash = Some(e);
            return out;
        }
    };
    let src = &files.files[0].text;
    let target = Target {
        cxx: t.cxx,
        fortran: false,
    };
    let options: Vec<String> = dg::directives(src)
        .iter()
        .filter(|d| matches!(d.name.as_str(), "dg-options" | "dg-additional-options"))
        .filter(|d| target.selector(d.args.get(1)))
        .flat_map(|d| dg::words(d.args.first().map_or("", |s| s)))
        .collect();
    let lang = if t.cxx {
        vec!["-x".to_string(), "c++".into()]
    } else {
        vec![]
    };
    let (gcc, gxx_clang) = if t.cxx {
        ("g++", "clang++-19")
    } else {
        ("gcc", "clang-19")
    };
    // gcc itself, through the middle end (many OpenACC errors come after parsing).
    let mut flags = vec!["-fopenacc".to_string()];
    flags.extend(lang.iter().cloned());
    flags.extend(options.iter().cloned());
    flags.extend(["-S".into(), "-o".into(), "/dev/null".into()]);
    let gcc_result = cache::check(gcc, &flags, &files.files, 0);
    let translations = sources::translate(&files, t.cxx);
    if let Some(b) = translations.iter().find_map(|t| t.broken.clone()) {
        out.crash = Some(b);
        return out;
    }
    let main_name = sources::tool_name(&files.paths[0], t.cxx);
    let ours: BTreeSet<usize> = diagnostic_lines(&translations[0].diagnostics, &main_name);
    match gcc_result {
        Err(e) => {
            let gcc_lines = error_lines(&e, &files.files[0].rel);
            out.reported = dg::expected_error_lines(src, target)
                .into_iter()
                .filter(|l| gcc_lines.contains(l))
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
            let text = sources::translated(&files, &translations);
            for (who, compiler) in [("gcc", gcc), ("clang", gxx_clang)] {
                let mut flags = vec!["-fopenmp".to_string()];
                flags.extend(lang.iter().cloned());
                flags.extend(
                    options
                        .iter()
                        .filter(|o| ["-D", "-U", "-I", "-std="].iter().any(|p| o.starts_with(p)))
                        .cloned(),
                );
                // The guards of directives left unchanged stop OpenMP builds: the syntax of
                // the rest is what is checked here.
                flags.push("-DACC2OMP_ALLOW_UNTRANSLATED".to_string());
                flags.push("-fsyntax-only".into());
                if let Err(e) = cache::check(compiler, &flags, &text, 0) {
                    out.rejected_by.push((who, first_error(&e)));
                }
            }
        }
    }
    out
}

/// Lines of `file` where a compiler reports an error.
fn error_lines(stderr: &str, file: &str) -> BTreeSet<usize> {
    lines_with(stderr, file, &[": error: "])
}

/// Lines of `name` where the tool reports an error or a warning.
pub fn diagnostic_lines(diags: &str, name: &str) -> BTreeSet<usize> {
    lines_with(diags, name, &[": error: ", ": warning: "])
}

/// Line numbers of `file:LINE:COL: severity:` messages with one of `severities`.
pub fn lines_with(messages: &str, file: &str, severities: &[&str]) -> BTreeSet<usize> {
    messages
        .lines()
        .filter(|l| severities.iter().any(|s| l.contains(s)))
        .filter_map(|l| {
            l.strip_prefix(file)?
                .strip_prefix(':')?
                .split(':')
                .next()?
                .parse()
                .ok()
        })
        .collect()
}
