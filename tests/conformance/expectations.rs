//! `tests/conformance/expectations.toml`: every test that is not expected to pass, with its
//! class and reason. A test that does something else than its entry says (or fails without
//! an entry, or passes with one) fails the suite; `ACC2OMP_BLESS=1` rewrites the file from
//! the results, keeping the hand-written `reason` of each entry.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::PathBuf;

pub fn path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/expectations.toml")
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct File {
    /// The major version of the libclang the results were recorded with: clang's OpenACC
    /// front end (21 and newer) adds errors, so the suite runs only with that version.
    #[serde(default)]
    pub libclang: Option<u32>,
    #[serde(default)]
    pub runtime: Vec<Runtime>,
    #[serde(default)]
    pub compile: Vec<Compile>,
}

/// A runtime test that does not pass in every build.
#[derive(Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct Runtime {
    pub test: String,
    pub lang: String,
    pub class: String,
    /// Builds that do not pass: `rejected` or `wrong`.
    #[serde(default)]
    pub builds: BTreeMap<String, String>,
    /// Rule ids of the errors and warnings the tool reports (information).
    #[serde(default)]
    pub rules: Vec<String>,
    /// What went wrong first (information).
    #[serde(default)]
    pub detail: String,
    /// Fortran: the compiler limits (`fortran_limits/NAME.f90`) that make the builds fail.
    #[serde(default)]
    pub limits: Vec<String>,
    #[serde(default)]
    pub reason: String,
}

/// A compile-only test with missing diagnostics or a translation a compiler rejects.
#[derive(Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct Compile {
    pub test: String,
    pub lang: String,
    /// Lines where gcc reports an error the test expects and the tool reports nothing near.
    #[serde(default)]
    pub missing_diagnostics: Vec<usize>,
    /// Compilers rejecting the translation of a valid file.
    #[serde(default)]
    pub rejected_by: Vec<String>,
    /// Fortran: directives left in the output without a diagnostic of the tool near them.
    #[serde(default)]
    pub untranslated: usize,
    /// Fortran: lines the translation wrote past the source form's length limit.
    #[serde(default)]
    pub long_lines: Vec<usize>,
    #[serde(default)]
    pub detail: String,
    #[serde(default)]
    pub reason: String,
}

pub fn load() -> Result<File, String> {
    load_from(&path())
}

pub fn load_from(path: &std::path::Path) -> Result<File, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display())),
        Err(_) => Ok(File::default()),
    }
}

pub fn bless() -> bool {
    std::env::var("ACC2OMP_BLESS").is_ok_and(|v| v == "1")
}

fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn list<T: ToString>(v: &[T], quote: bool) -> String {
    let items: Vec<String> = v
        .iter()
        .map(|x| {
            if quote {
                q(&x.to_string())
            } else {
                x.to_string()
            }
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// Classes of runtime failures, in the order the file lists them.
pub const CLASSES: &[(&str, &str)] = &[
    (
        "silent-wrong",
        "SILENT WRONG: the translation is complete and builds, runs give a wrong result or abort, and the tool reported no error or warning",
    ),
    (
        "wrong-result",
        "wrong result or abort at run time, with errors or warnings reported (see rules)",
    ),
    (
        "gcc-rejects",
        "the translation does not compile with gcc -fopenmp",
    ),
    (
        "clang-rejects",
        "the translation does not compile with clang-19",
    ),
    (
        "toolchain-limit",
        "clang-19 rejects a GNU extension the test itself uses (not a translation problem)",
    ),
    (
        "not-translated",
        "OpenACC is left (directive, acc_* name, openacc.h or _OPENACC); rules are the ids the tool reports",
    ),
    (
        "gcc-builtin",
        "the test calls GCC's OpenACC-only builtins (__builtin_goacc_*), which exist only under -fopenacc",
    ),
    ("tool-crash", "the tool crashed or hung"),
];

pub fn render(f: &File) -> String {
    render_with(f, HEADER, CLASSES)
}

const HEADER: &str = "# Conformance expectations: GCC 12's OpenACC tests that the translation does not pass.\n\
         # Written by `ACC2OMP_BLESS=1 cargo test --release --test conformance`, which keeps\n\
         # each entry's `reason`; read the differences before committing. The suite fails when\n\
         # a test does anything else than its entry says, including passing.\n\
         #\n\
         # [[runtime]]: a libgomp.oacc-* test of the reference set (it passes under gcc -fopenacc)\n\
         # that is not fully translated or does not exit 0 in every build. `builds` lists the\n\
         # builds that do not pass: gcc (gcc -fopenmp), clang (clang-19 -fopenmp, host),\n\
         # clang-offload (host offloading, one team), clang-offload-4teams (4 teams, 3 threads).\n\
         # [[compile]]: a goacc compile-only test where gcc reports expected errors that the\n\
         # tool does not diagnose within 2 lines (`missing_diagnostics`), or a valid file\n\
         # whose translation a compiler rejects (`rejected_by`).\n";

/// The file's text: `header`, then the runtime entries by class in the order of `classes`,
/// then the compile-only entries.
pub fn render_with(f: &File, header: &str, classes: &[(&str, &str)]) -> String {
    let mut s = String::from(header);
    if let Some(v) = f.libclang {
        let _ = write!(
            s,
            "\n# Recorded with libclang {v}; the suite refuses to compare runs with another one.\nlibclang = {v}\n"
        );
    }
    for (class, doc) in classes {
        let entries: Vec<&Runtime> = f.runtime.iter().filter(|r| r.class == *class).collect();
        if entries.is_empty() {
            continue;
        }
        let _ = write!(s, "\n# ---- {class}: {doc} ({} tests)\n", entries.len());
        for r in entries {
            let builds: Vec<String> = r
                .builds
                .iter()
                .map(|(b, st)| format!("{b} = {}", q(st)))
                .collect();
            let _ = write!(
                s,
                "\n[[runtime]]\ntest = {}\nlang = {}\nclass = {}\n",
                q(&r.test),
                q(&r.lang),
                q(&r.class)
            );
            if !builds.is_empty() {
                let _ = writeln!(s, "builds = {{ {} }}", builds.join(", "));
            }
            if !r.rules.is_empty() {
                let _ = writeln!(s, "rules = {}", list(&r.rules, true));
            }
            let _ = writeln!(s, "detail = {}", q(&r.detail));
            if !r.limits.is_empty() {
                let _ = writeln!(s, "limits = {}", list(&r.limits, true));
            }
            let _ = writeln!(s, "reason = {}", q(&r.reason));
        }
    }
    if !f.compile.is_empty() {
        let _ = write!(
            s,
            "\n# ---- compile-only tests ({} entries)\n",
            f.compile.len()
        );
    }
    for c in &f.compile {
        let _ = write!(
            s,
            "\n[[compile]]\ntest = {}\nlang = {}\n",
            q(&c.test),
            q(&c.lang)
        );
        if !c.missing_diagnostics.is_empty() {
            let _ = writeln!(
                s,
                "missing_diagnostics = {}",
                list(&c.missing_diagnostics, false)
            );
        }
        if c.untranslated > 0 {
            let _ = writeln!(s, "untranslated = {}", c.untranslated);
        }
        if !c.long_lines.is_empty() {
            let _ = writeln!(s, "long_lines = {}", list(&c.long_lines, false));
        }
        if !c.rejected_by.is_empty() {
            let _ = writeln!(s, "rejected_by = {}", list(&c.rejected_by, true));
            let _ = writeln!(s, "detail = {}", q(&c.detail));
        }
        let _ = writeln!(s, "reason = {}", q(&c.reason));
    }
    s
}
