//! The oracle's Fortran builds, shared by the Fortran equivalence, application and
//! conformance suites. The reference is the OpenACC program under `gfortran -fopenacc`
//! (host fallback). OpenMP builds: `gfortran -fopenmp` (shared memory, default threads and 3
//! threads), `flang-22 -fopenmp` (target regions on the host) and flang-22 offloading to the
//! x86_64 host device of Debian's `liboffload-22`, where mapped data has its own device copy
//! so that a wrong `map` gives a wrong result. That device needs a GPU device runtime Debian
//! does not ship for x86: `device_stub.c` stands in for it (one team of one thread; the
//! `-reverse` build runs every worksharing loop backwards, so a loop with a dependence that
//! was made parallel gives a different result). Limits of this oracle are listed in
//! docs/testing.md.

use super::cache::{self, SourceFile};
use super::oracle::{self, Ran};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// How an OpenMP translation of a Fortran program is built and run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Build {
    /// `gfortran -fopenmp`, default thread count: shared memory.
    Gfortran,
    /// `gfortran -fopenmp` with `OMP_NUM_THREADS=3`.
    Gfortran3Threads,
    /// `flang-22 -fopenmp` without offload targets: target regions run on the host.
    Flang,
    /// flang-22 offloading to the host device: separate memory, loops in order.
    FlangOffload,
    /// The same program with every worksharing loop run in reverse order.
    FlangOffloadReverse,
}

impl Build {
    pub const ALL: [Build; 5] = [
        Build::Gfortran,
        Build::Gfortran3Threads,
        Build::Flang,
        Build::FlangOffload,
        Build::FlangOffloadReverse,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Build::Gfortran => "gfortran",
            Build::Gfortran3Threads => "gfortran-3threads",
            Build::Flang => "flang",
            Build::FlangOffload => "flang-offload",
            Build::FlangOffloadReverse => "flang-offload-reverse",
        }
    }

    pub fn from_name(name: &str) -> Option<Build> {
        Build::ALL.into_iter().find(|b| b.name() == name)
    }

    /// Whether the program runs on a device with memory separate from the host's.
    pub fn separate_memory(self) -> bool {
        matches!(self, Build::FlangOffload | Build::FlangOffloadReverse)
    }

    pub fn compiler(self) -> &'static str {
        match self {
            Build::Gfortran | Build::Gfortran3Threads => "gfortran",
            _ => "flang-22",
        }
    }

    /// Compiler flags (before the sources); `-w` and `-lm` come from the build cache.
    pub fn flags(self) -> Result<Vec<String>, String> {
        let mut f = vec!["-fopenmp".to_string()];
        if self.compiler() == "gfortran" {
            f.push("-foffload=disable".into());
        }
        if self.compiler() == "flang-22" {
            // flang-22 checks directives against OpenMP 3.1 unless told otherwise; 5.1 is
            // needed for has_device_addr (the Fortran spelling of a device address that
            // gfortran 12 also accepts).
            f.push("-fopenmp-version=51".into());
            let o = offload()?;
            if self.separate_memory() {
                f.push("-fopenmp-targets=x86_64-pc-linux-gnu".into());
                f.push("-Xoffload-linker".into());
                f.push(o.stub.display().to_string());
            }
            f.push(format!("-L{}", o.libs.display()));
        }
        Ok(f)
    }

    /// The run environment.
    pub fn env(self) -> Vec<(&'static str, &'static str)> {
        match self {
            Build::Gfortran | Build::Flang => vec![],
            Build::Gfortran3Threads => vec![("OMP_NUM_THREADS", "3")],
            Build::FlangOffload => vec![
                ("OMP_TARGET_OFFLOAD", "MANDATORY"),
                ("LIBOMP_USE_HIDDEN_HELPER_TASK", "0"),
            ],
            Build::FlangOffloadReverse => vec![
                ("OMP_TARGET_OFFLOAD", "MANDATORY"),
                ("LIBOMP_USE_HIDDEN_HELPER_TASK", "0"),
                ("ACC2OMP_DEVICE_LOOP_ORDER", "reverse"),
            ],
        }
    }
}

/// Packages the Fortran suites need (Debian bookworm, with bookworm-security for the 22s).
pub const PACKAGES: &str = "gfortran flang-22 clang-22 llvm-22 clang-tools-22 liboffload-22";

/// True when the Fortran compilers and the offloading toolchain are installed. Without
/// them: panic under `ACC2OMP_REQUIRE_TOOLS=1`, otherwise a loud skip message.
pub fn tools(test: &str) -> bool {
    let missing = missing_tools();
    if missing.is_empty() {
        return true;
    }
    if super::required() {
        panic!(
            "{test}: ACC2OMP_REQUIRE_TOOLS=1 but {missing:?} cannot be found; install {PACKAGES}"
        );
    }
    eprintln!("\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!");
    eprintln!("!!! SKIPPED {test}: {missing:?} not found (install {PACKAGES})");
    eprintln!("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n");
    false
}

fn missing_tools() -> Vec<String> {
    let mut missing: Vec<String> = ["gfortran", "gcc", "flang-22"]
        .into_iter()
        .filter(|c| {
            !Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .map(String::from)
        .collect();
    // flang-22 offloading runs these from its own directory.
    for tool in ["clang", "clang-linker-wrapper", "llvm-offload-binary"] {
        if !Path::new(LLVM_BIN).join(tool).exists() {
            missing.push(format!("{LLVM_BIN}/{tool}"));
        }
    }
    if find(LIBOMPTARGET).is_none() {
        missing.push(LIBOMPTARGET[0].into());
    }
    if find(LIBOMP).is_none() {
        missing.push("libomp.so.5".into());
    }
    missing
}

const LLVM_BIN: &str = "/usr/lib/llvm-22/bin";
const LIBOMPTARGET: &[&str] = &[
    "/usr/lib/llvm-22/lib/libomptarget.so.22.1",
    "/usr/lib/x86_64-linux-gnu/libomptarget.so.22.1",
];
const LIBOMP: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu/libomp.so.5",
    "/usr/lib/llvm-22/lib/libomp.so.5",
    "/usr/lib/llvm-19/lib/libomp.so.5",
];

fn find(candidates: &[&str]) -> Option<PathBuf> {
    candidates.iter().map(PathBuf::from).find(|p| p.exists())
}

/// What flang-22 offloading links against: the device runtime stand-in and a directory
/// with the unversioned `libomptarget.so` and `libomp.so` names (only Debian's `-dev`
/// packages ship them; `libomp-22-dev` would conflict with `libomp-19-dev`).
pub struct Offload {
    pub stub: PathBuf,
    pub libs: PathBuf,
}

pub fn offload() -> Result<&'static Offload, String> {
    static OFFLOAD: OnceLock<Result<Offload, String>> = OnceLock::new();
    OFFLOAD
        .get_or_init(|| {
            let source = include_str!("device_stub.c");
            let key = cache::digest(&[source.as_bytes(), b"gcc -O1 -fPIC -c"]);
            let libs = cache::dir(&format!("flang-offload-{}", &key[..16]));
            for (name, candidates) in [("libomptarget.so", LIBOMPTARGET), ("libomp.so", LIBOMP)] {
                let target = find(candidates).ok_or(format!("{} is missing", candidates[0]))?;
                publish(&libs.join(name), |tmp| {
                    std::os::unix::fs::symlink(&target, tmp).map_err(|e| e.to_string())
                })?;
            }
            let stub = libs.join("device_stub.o");
            publish(&stub, |tmp| {
                let src = tmp.with_extension("c");
                fs::write(&src, source).map_err(|e| e.to_string())?;
                let o = Command::new("gcc")
                    .args(["-O1", "-fPIC", "-c"])
                    .arg(&src)
                    .arg("-o")
                    .arg(tmp)
                    .output()
                    .map_err(|e| format!("gcc: {e}"))?;
                let _ = fs::remove_file(&src);
                if o.status.success() {
                    Ok(())
                } else {
                    Err(format!(
                        "gcc cannot compile the device stub:\n{}",
                        String::from_utf8_lossy(&o.stderr)
                    ))
                }
            })?;
            Ok(Offload { stub, libs })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Create `path` once through a temporary name (parallel test processes race for it).
fn publish(path: &Path, make: impl FnOnce(&Path) -> Result<(), String>) -> Result<(), String> {
    if path.exists() || path.is_symlink() {
        return Ok(());
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let _ = fs::remove_file(&tmp);
    make(&tmp)?;
    fs::rename(&tmp, path).map_err(|e| e.to_string())
}

/// The reference build: `gfortran -fopenacc` with `flags`.
pub fn reference_exe(
    flags: &[String],
    files: &[SourceFile],
    units: &[usize],
) -> Result<PathBuf, String> {
    let mut f: Vec<String> = super::HOST_OPENACC.iter().map(|s| s.to_string()).collect();
    f.extend(flags.iter().cloned());
    cache::compile("gfortran", &f, files, units)
}

/// The reference build of a program whose OpenACC meaning is its host program's: gfortran
/// without OpenACC.
pub fn host_exe(
    flags: &[String],
    files: &[SourceFile],
    units: &[usize],
) -> Result<PathBuf, String> {
    cache::compile("gfortran", flags, files, units)
}

/// `build` of `files` (units compiled and linked in order, so modules come first). flang-22
/// builds see the files through [`flang_adapt`].
pub fn build_exe(
    build: Build,
    flags: &[String],
    files: &[SourceFile],
    units: &[usize],
) -> Result<PathBuf, String> {
    let mut f = build.flags()?;
    f.extend(flags.iter().cloned());
    if build.compiler() == "flang-22" {
        let adapted: Vec<SourceFile> = files
            .iter()
            .map(|file| SourceFile {
                rel: file.rel.clone(),
                text: flang_adapt(&file.text, is_fixed_form(Path::new(&file.rel))).0,
            })
            .collect();
        return cache::compile(build.compiler(), &f, &adapted, units);
    }
    cache::compile(build.compiler(), &f, files, units)
}

/// flang-22 does not lower `depend` on `target update`, `target enter data`, `target exit
/// data` or `taskwait` ("not yet implemented"). Such one-line directives are made
/// synchronous: a `taskwait` first (waits for every earlier task, the dependences included),
/// then the directive without `depend` and `nowait`. This keeps the program's meaning (it
/// only waits more), so the rest of the program can still be checked with separate memory.
/// Returns the text and how many directives were rewritten.
pub fn flang_adapt(text: &str, fixed: bool) -> (String, usize) {
    let mut out = String::with_capacity(text.len());
    let mut count = 0;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let eol = &line[body.len()..];
        let lower = body.to_ascii_lowercase();
        let is_omp = sentinel(body, fixed).as_deref() == Some("$omp");
        // After the five characters of `!$omp` (`c$omp`, `*$omp` in fixed form).
        let directive = lower.trim_start().get(5..).unwrap_or("");
        let standalone = [
            "target update",
            "target enter data",
            "target exit data",
            "taskwait",
        ]
        .iter()
        .any(|d| directive.trim_start().starts_with(d));
        let continued = body.trim_end().ends_with('&')
            || (fixed && body.chars().nth(5).is_some_and(|c| c != ' ' && c != '0'));
        if !(is_omp && standalone && !continued && lower.contains("depend(")) {
            out.push_str(line);
            continue;
        }
        let lead = &body[..body.len() - body.trim_start().len()];
        let sentinel_text = &body.trim_start()[..5];
        out.push_str(&format!("{lead}{sentinel_text} taskwait{eol}"));
        let mut rest = body.to_string();
        while let Some(k) = rest.to_ascii_lowercase().find("depend(") {
            let mut depth = 0;
            let mut end = rest.len();
            for (i, c) in rest[k..].char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            end = k + i + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            rest.replace_range(k..end, "");
        }
        let kept: Vec<&str> = rest
            .split(' ')
            .filter(|w| !w.eq_ignore_ascii_case("nowait"))
            .collect();
        let mut kept = kept.join(" ").trim_end().to_string();
        if kept.trim_start().len() == sentinel_text.len() + " taskwait".len()
            && kept.to_ascii_lowercase().trim_start().ends_with("taskwait")
        {
            // `taskwait depend(...)`: the plain taskwait above does it.
            count += 1;
            continue;
        }
        while kept.contains("  ") {
            kept = kept.replace("  ", " ");
        }
        out.push_str(&format!("{lead}{}{eol}", kept.trim_start()));
        count += 1;
    }
    (out, count)
}

/// Run a program built for `build`.
pub fn run(
    build: Build,
    exe: &Path,
    extra_env: &[(&str, &str)],
    seconds: u32,
) -> Result<Ran, String> {
    let mut env = build.env();
    env.extend_from_slice(extra_env);
    oracle::run(exe, &env, seconds)
}

/// Fortran source files the tool reads (free and fixed form), by extension.
pub fn is_fortran(path: &Path) -> bool {
    path.extension().is_some_and(|e| {
        [
            "f90", "F90", "f95", "F95", "f03", "F03", "f08", "F08", "f", "F", "for", "FOR", "f77",
            "ftn",
        ]
        .iter()
        .any(|x| e == *x)
    })
}

/// Fixed source form, by extension (as gfortran and flang decide it).
pub fn is_fixed_form(path: &Path) -> bool {
    path.extension().is_some_and(|e| {
        ["f", "F", "for", "FOR", "f77", "ftn"]
            .iter()
            .any(|x| e == *x)
    })
}

/// Free form: 132 columns (gfortran's default); fixed form: 72.
pub fn line_limit(fixed: bool) -> usize {
    if fixed { 72 } else { 132 }
}

/// The directive sentinel a line starts with, lower-cased without its `!`/`c`/`*`:
/// `Some("$acc")`, `Some("$omp")`, `Some("$")` (conditional compilation), or `None`.
pub fn sentinel(line: &str, fixed: bool) -> Option<String> {
    let lower = line.to_ascii_lowercase();
    let rest = if fixed {
        let b = lower.as_bytes();
        if !matches!(b.first(), Some(b'!' | b'c' | b'*')) || b.get(1) != Some(&b'$') {
            return None;
        }
        // Columns 2-5 hold the rest of the sentinel (blank for `!$`), column 6 the
        // continuation mark.
        let cols: String = lower.chars().skip(1).take(4).collect();
        let word = cols.trim_end();
        return Some(word.to_string()).filter(|w| w.starts_with('$'));
    } else {
        let t = lower.trim_start();
        t.strip_prefix('!')?
    };
    if !rest.starts_with('$') {
        return None;
    }
    let word: String = rest
        .chars()
        .take_while(|c| *c == '$' || c.is_ascii_alphanumeric())
        .collect();
    let after = rest[word.len()..].chars().next();
    // A sentinel ends at a blank, `&`, or the end of the line.
    if after.is_none_or(|c| c.is_whitespace() || c == '&') {
        Some(word)
    } else {
        None
    }
}

/// A comment line that is no directive (fixed form: `c`, `C`, `*` or `!` in column 1;
/// free form: `!` first), or a blank line.
fn comment_only(line: &str, fixed: bool) -> bool {
    if sentinel(line, fixed).is_some() {
        return false;
    }
    let t = line.trim_start();
    t.is_empty()
        || t.starts_with('!')
        || (fixed && matches!(line.as_bytes().first(), Some(b'c' | b'C' | b'*')))
}

/// Code of a line without its comment and the contents of its strings (a string that
/// continues on the next line is cut at the line end: good enough to find names).
fn code_of(line: &str, fixed: bool) -> String {
    let body = match sentinel(line, fixed).as_deref() {
        Some("$") => {
            if fixed {
                line.get(6..).unwrap_or("").to_string()
            } else {
                line.trim_start()[2..].to_string()
            }
        }
        Some(_) => return String::new(),
        None if comment_only(line, fixed) => return String::new(),
        None => line.to_string(),
    };
    let mut out = String::new();
    let mut quote = None;
    for c in body.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                out.push(' ');
            }
            None if c == '!' => break,
            None => out.push(c),
        }
    }
    out
}

/// Whether `code` names OpenACC: an `acc_*` routine or constant, the `openacc` module (or
/// its `openacc_lib.h` include file), `openacc_version`, or `_OPENACC`. The GCC test
/// suite's own macros (`ACC_MEM_SHARED`, `ACC_DEVICE_TYPE_host`, which the harness defines)
/// and a program's own names that start with `openacc_` (`openacc_sgemm`) are not OpenACC.
fn names_openacc(code: &str) -> bool {
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map(str::to_ascii_lowercase)
        .any(|w| {
            (w.starts_with("acc_") && w != "acc_mem_shared" && !w.starts_with("acc_device_type_"))
                || matches!(
                    w.as_str(),
                    "openacc" | "openacc_lib" | "openacc_version" | "_openacc"
                )
        })
}

/// Lines (0-based) of `src` that carry OpenACC: directive lines (continuations included),
/// code naming `acc_*`/`openacc`, and preprocessor lines testing `_OPENACC`.
pub fn openacc_lines(src: &str, fixed: bool) -> BTreeSet<usize> {
    let mut lines = BTreeSet::new();
    for (k, line) in src.lines().enumerate() {
        let code = code_of(line, fixed);
        let include = code
            .trim_start()
            .to_ascii_lowercase()
            .starts_with("include");
        let acc = if line.trim_start().starts_with('#') || include {
            names_openacc(line)
        } else {
            sentinel(line, fixed).as_deref() == Some("$acc") || names_openacc(&code)
        };
        if acc {
            lines.insert(k);
        }
    }
    lines
}

/// `out` without the guard lines the tool writes above a directive it leaves as OpenACC
/// (`!$ include 'acc2omp: OpenACC at line N not translated'`, which stops every `-fopenmp`
/// build on purpose), so that compilers check the syntax of the rest, as C's guards are
/// passed with `-DACC2OMP_ALLOW_UNTRANSLATED`.
pub fn without_guards(out: &str) -> String {
    out.split_inclusive('\n')
        .filter(|l| {
            let l = l.trim_start().to_ascii_lowercase();
            let Some(rest) = l.strip_prefix("!$") else {
                return true;
            };
            !rest
                .trim_start()
                .starts_with("include 'acc2omp: openacc at line")
        })
        .collect()
}

/// For each line of `out` (a translation of `orig`), the line of `orig` it was kept from,
/// if any: lines are matched in order, each with the next equal line of `orig` not far
/// ahead (the tool inserts and rewrites lines, it never reorders them).
pub fn kept_lines(orig: &str, out: &str) -> Vec<Option<usize>> {
    const AHEAD: usize = 40;
    let orig: Vec<&str> = orig.lines().collect();
    let mut next = 0;
    out.lines()
        .map(|l| {
            let end = orig.len().min(next + AHEAD);
            let k = (next..end).find(|&k| orig[k] == l)?;
            next = k + 1;
            Some(k)
        })
        .collect()
}

/// The first line of a translation that still carries OpenACC.
pub fn leftover_openacc(out: &str, fixed: bool) -> Option<String> {
    let lines = openacc_lines(out, fixed);
    let first = *lines.first()?;
    out.lines().nth(first).map(|l| l.trim().to_string())
}

/// Lines (0-based) that start an OpenACC directive (not its continuation lines).
pub fn directive_starts(src: &str, fixed: bool) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut continued = false;
    for (k, line) in src.lines().enumerate() {
        let acc = sentinel(line, fixed).as_deref() == Some("$acc");
        if acc {
            let continuation = if fixed {
                line.chars().nth(5).is_some_and(|c| c != ' ' && c != '0')
            } else {
                continued
            };
            if !continuation {
                starts.push(k);
            }
            continued = !fixed && ends_with_ampersand(line);
        } else {
            continued = false;
        }
    }
    starts
}

fn ends_with_ampersand(line: &str) -> bool {
    // The directive text without a trailing comment.
    let mut text = line;
    if let Some(k) = line
        .trim_start()
        .strip_prefix('!')
        .and_then(|r| r.find('!'))
    {
        let start = line.len() - line.trim_start().len() + 1;
        text = &line[..start + k];
    }
    text.trim_end().ends_with('&')
}

/// Original lines without OpenACC that the translation changed or removed. Inserted lines
/// are allowed; a plain line may be split by inserted directive lines if its text is kept.
pub fn touched_plain_lines(orig: &str, out: &str, fixed: bool) -> Vec<String> {
    let acc = openacc_lines(orig, fixed);
    let diff = similar::TextDiff::from_lines(orig, out);
    let content = |s: &str| s.trim_end_matches(['\n', '\r']).to_string();
    let mut bad = Vec::new();
    for op in diff.ops() {
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
                similar::ChangeTag::Insert if sentinel(text, fixed).as_deref() != Some("$omp") => {
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

/// Lines (1-based) the translation wrote that exceed the source form's line length (comment
/// lines aside).
pub fn long_lines(orig: &str, out: &str, fixed: bool) -> Vec<usize> {
    let limit = line_limit(fixed);
    let diff = similar::TextDiff::from_lines(orig, out);
    diff.iter_all_changes()
        .filter(|c| c.tag() == similar::ChangeTag::Insert)
        .filter(|c| {
            let line = c.value().trim_end_matches(['\n', '\r']);
            line.chars().count() > limit && !comment_only(line, fixed)
        })
        .filter_map(|c| c.new_index().map(|k| k + 1))
        .collect()
}
