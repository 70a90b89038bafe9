//! Fixture snapshots: `fixtures/translate/<case>/input.*` is translated with every profile
//! and compared with `expected.<profile>.*` (text) and `expected.<profile>.txt`
//! (diagnostics). `ACC2OMP_BLESS=1 cargo test --test fixtures` rewrites the snapshots.
//! Each expected output must be a fixed point and must compile with GCC and Clang.
//!
//! Every case runs twice: with libclang's facts (`expected.<profile>.*`) and in syntactic
//! mode, as with `--no-clang` (`expected.<profile>.syntactic.*`, present only where the
//! syntactic result differs). Without libclang the first run is skipped loudly (it fails
//! when `ACC2OMP_REQUIRE_TOOLS=1`).

mod common;

use acc2omp::diag::Located;
use acc2omp::options::Emit;
use acc2omp::profile::{OmpVersion, Profile};
use acc2omp::semantic::{Mode, SemanticConfig};
use acc2omp::{Options, migrate_source, migrate_text};
use rayon::prelude::*;
use serde::Deserialize;
use std::fs;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseOptions {
    #[serde(default)]
    omp_version_51: bool,
    #[serde(default)]
    assume_independent: bool,
    /// `--keep-openacc-guards`.
    #[serde(default)]
    keep_openacc_guards: bool,
    /// `--device-type NAME`.
    #[serde(default)]
    device_type: Option<String>,
    /// False when GCC rejects the input (error fixtures, OpenACC newer than GCC 12).
    #[serde(default = "yes")]
    input_compiles: bool,
    /// False when the OpenMP output cannot compile (e.g. 'collapse' deeper than the nest).
    #[serde(default = "yes")]
    outputs_compile: bool,
    /// `--emit` modes with a snapshot `expected.default.<mode>.<ext>` (syntactic facts).
    #[serde(default)]
    emit: Vec<String>,
}

struct Case {
    dir: PathBuf,
    input: PathBuf,
    opts: CaseOptions,
}

fn cases() -> Vec<Case> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/translate");
    let mut out = Vec::new();
    for e in fs::read_dir(&root).expect("fixtures/translate exists") {
        let dir = e.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let input = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_stem().is_some_and(|s| s == "input"))
            .unwrap_or_else(|| panic!("{} has no input file", dir.display()));
        // Fortran cases are `tests/fortran_fixtures.rs`'s.
        if acc2omp::fortran::form::kind_of(&input).is_some() {
            continue;
        }
        let opts = match fs::read_to_string(dir.join("options.toml")) {
            Ok(t) => toml::from_str(&t).unwrap_or_else(|e| panic!("{}: {e}", dir.display())),
            Err(_) => toml::from_str("").unwrap(),
        };
        out.push(Case { dir, input, opts });
    }
    out.sort_by(|a, b| a.dir.cmp(&b.dir));
    assert!(
        out.len() >= 10,
        "expected the fixture corpus, found {} cases",
        out.len()
    );
    out
}

fn options(case: &Case, profile: Profile) -> Options {
    emit_options(case, profile, Emit::Omp)
}

fn emit_options(case: &Case, profile: Profile, emit: Emit) -> Options {
    Options {
        profile,
        omp_version: if case.opts.omp_version_51 {
            OmpVersion::V51
        } else {
            OmpVersion::V50
        },
        assume_independent: case.opts.assume_independent,
        keep_openacc_guards: case.opts.keep_openacc_guards,
        device_type: case.opts.device_type.clone(),
        emit,
        ..Options::default()
    }
}

fn ext(p: &Path) -> String {
    p.extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The diagnostics as the CLI prints them, less clang's OpenACC checks: those come only with
/// libclang 21 and newer, and the snapshots must hold with every libclang the CI loads
/// (`tests/semantic.rs` checks them against the libclang loaded).
fn render_diags(name: &str, out: &acc2omp::Outcome) -> String {
    out.diagnostics
        .iter()
        .map(|d| Located::from(name, &out.index, d).render())
        .filter(|line| {
            !line.ends_with("[clang-openacc]") && !line.ends_with("[clang-openacc-strict]")
        })
        .map(|line| line + "\n")
        .collect()
}

fn check_or_bless(path: &Path, actual: &str, failures: &mut Vec<String>) {
    let bless = std::env::var("ACC2OMP_BLESS").is_ok_and(|v| v == "1");
    let expected = fs::read_to_string(path).ok();
    if expected.as_deref() == Some(actual) {
        return;
    }
    if bless {
        fs::write(path, actual).unwrap();
        return;
    }
    failures.push(match expected {
        None => format!(
            "{}: missing snapshot (run with ACC2OMP_BLESS=1)",
            path.display()
        ),
        Some(e) => {
            let diff = similar::TextDiff::from_lines(&e, actual)
                .unified_diff()
                .header("expected", "actual")
                .to_string();
            format!("{} differs:\n{diff}", path.display())
        }
    });
}

/// A syntactic-mode snapshot: kept only where it differs from the libclang-mode one.
fn check_syntactic(
    path: &Path,
    main: &Path,
    actual: &str,
    clang: Option<&str>,
    failures: &mut Vec<String>,
) {
    let bless = std::env::var("ACC2OMP_BLESS").is_ok_and(|v| v == "1");
    let main_text = fs::read_to_string(main).ok();
    let same = match clang {
        Some(c) => c == actual,
        None => !path.exists() && main_text.as_deref() == Some(actual),
    };
    if !same {
        check_or_bless(path, actual, failures);
    } else if path.exists() {
        if bless {
            fs::remove_file(path).unwrap();
        } else {
            failures.push(format!(
                "{}: stale (equal to the libclang-mode snapshot; run with ACC2OMP_BLESS=1)",
                path.display()
            ));
        }
    }
}

#[test]
fn snapshots_match_and_are_fixed_points() {
    let clang = common::libclang("fixture snapshots with libclang");
    let mut failures = Vec::new();
    for case in cases() {
        let input = fs::read_to_string(&case.input).unwrap();
        let name = case
            .input
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        for profile in Profile::ALL {
            let opts = options(&case, profile);
            let e = ext(&case.input);
            let p = profile.name();
            let syn = migrate_source(
                &input,
                Some(&case.input),
                &opts,
                &SemanticConfig::syntactic(),
            );
            let main_text = case.dir.join(format!("expected.{p}.{e}"));
            let main_diags = case.dir.join(format!("expected.{p}.txt"));
            let mut clang_out = None;
            if clang {
                let out =
                    migrate_source(&input, Some(&case.input), &opts, &SemanticConfig::default());
                if let Some(Mode::Syntactic { reason }) = &out.semantic {
                    failures.push(format!(
                        "{}: not analyzed with libclang: {reason}",
                        case.dir.display()
                    ));
                }
                check_or_bless(&main_text, &out.text, &mut failures);
                check_or_bless(&main_diags, &render_diags(&name, &out), &mut failures);
                clang_out = Some(out);
            }
            check_syntactic(
                &case.dir.join(format!("expected.{p}.syntactic.{e}")),
                &main_text,
                &syn.text,
                clang_out.as_ref().map(|o| o.text.as_str()),
                &mut failures,
            );
            check_syntactic(
                &case.dir.join(format!("expected.{p}.syntactic.txt")),
                &main_diags,
                &render_diags(&name, &syn),
                clang_out
                    .as_ref()
                    .map(|o| render_diags(&name, o))
                    .as_deref(),
                &mut failures,
            );
            let out = clang_out.unwrap_or(syn);
            let again = migrate_text(&out.text, &opts);
            if again.text != out.text {
                failures.push(format!(
                    "{} [{}]: output is not a fixed point",
                    case.dir.display(),
                    profile.name()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn files_without_openacc_are_byte_identical() {
    for case in cases() {
        let input = fs::read_to_string(&case.input).unwrap();
        if !input.contains("acc") {
            for profile in Profile::ALL {
                assert_eq!(
                    migrate_text(&input, &options(&case, profile)).text,
                    input,
                    "{}",
                    case.dir.display()
                );
            }
        }
    }
}

#[test]
fn inputs_and_expected_outputs_compile() {
    if !common::compilers("fixtures compile") {
        return;
    }
    let mut jobs = Vec::new();
    for case in cases() {
        if case.opts.input_compiles {
            jobs.push((case.input.clone(), "gcc-openacc"));
        }
        for profile in Profile::ALL {
            for mode in ["", ".syntactic"] {
                let p = case.dir.join(format!(
                    "expected.{}{mode}.{}",
                    profile.name(),
                    ext(&case.input)
                ));
                if p.exists() && !case.opts.omp_version_51 && case.opts.outputs_compile {
                    jobs.push((p.clone(), "gcc-openmp"));
                    jobs.push((p, "clang-openmp"));
                }
            }
        }
    }
    // Objects are not kept: compile to /dev/null, cached by content.
    let failures: Vec<String> = jobs
        .par_iter()
        .filter_map(|(path, how)| {
            let text = std::fs::read_to_string(path).unwrap();
            compiles(path, &text, how)
                .err()
                .map(|e| format!("{} ({how}):\n{e}", path.display()))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// An expected output that leaves directives unchanged does not build as OpenMP: the guard
/// names the directive.
#[test]
fn left_directives_stop_openmp_builds() {
    if !common::compilers("fixtures left directives") {
        return;
    }
    let mut checked = 0;
    let mut failures = Vec::new();
    for case in cases() {
        let p = case
            .dir
            .join(format!("expected.default.{}", ext(&case.input)));
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        let left = !acc2omp::scan::find_sites(&text, &acc2omp::lex::lex(&text)).is_empty();
        if !left || !case.opts.outputs_compile || case.opts.omp_version_51 {
            continue;
        }
        checked += 1;
        let mut flags: Vec<String> = vec!["-fopenmp".into(), "-fsyntax-only".into()];
        flags.push("-w".into());
        let file = common::cache::SourceFile {
            rel: p.file_name().unwrap().to_string_lossy().into_owned(),
            text: text.clone(),
        };
        match common::cache::check(common::gcc_for(&p), &flags, &[file], 0) {
            Err(e) if e.contains("is left unchanged") => {}
            Err(e) => failures.push(format!("{}: not the guard's error:\n{e}", p.display())),
            Ok(()) => failures.push(format!(
                "{}: builds as OpenMP with directives left unchanged",
                p.display()
            )),
        }
    }
    assert!(checked > 0, "no fixture leaves a directive unchanged");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

const MODES: [Emit; 3] = [Emit::OmpAcc, Emit::AccOmp, Emit::Dual];

/// A fixture translated in `mode` (default profile, syntactic facts: fast and the same
/// everywhere).
fn emitted(case: &Case, input: &str, mode: Emit) -> acc2omp::Outcome {
    let opts = emit_options(case, Profile::Default, mode);
    migrate_source(
        input,
        Some(&case.input),
        &opts,
        &SemanticConfig::syntactic(),
    )
}

fn rules(out: &acc2omp::Outcome) -> Vec<&'static str> {
    let mut r: Vec<&str> = out.diagnostics.iter().map(|d| d.rule.as_str()).collect();
    r.sort();
    r
}

/// Every fixture in every `--emit` mode: the mode's output is a fixed point, and every mode
/// run on it gives what that mode gives on the original (`--emit omp` on a `dual` file
/// finishes the migration exactly). The diagnostics are the original's.
#[test]
fn emit_modes_are_fixed_points_and_read_back() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in cases() {
        let input = fs::read_to_string(&case.input).unwrap();
        let name = case
            .input
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let outs: Vec<(Emit, acc2omp::Outcome)> = Emit::ALL
            .iter()
            .map(|&m| (m, emitted(&case, &input, m)))
            .collect();
        let omp_rules = rules(&outs[0].1);
        for (mode, out) in &outs[1..] {
            let m = mode.name();
            if rules(out) != omp_rules {
                failures.push(format!(
                    "{} [{m}]: diagnostics differ from --emit omp:\n{}",
                    case.dir.display(),
                    render_diags(&name, out)
                ));
            }
            if out.text == input && outs[0].1.text != input {
                failures.push(format!("{} [{m}]: nothing written", case.dir.display()));
            }
            for (other, expected) in &outs {
                let again = emitted(&case, &out.text, *other);
                if again.text != expected.text {
                    let diff = similar::TextDiff::from_lines(&expected.text, &again.text)
                        .unified_diff()
                        .header("expected", "actual")
                        .to_string();
                    failures.push(format!(
                        "{} [--emit {} on --emit {m} output] differs from --emit {} on the input:\n{diff}",
                        case.dir.display(),
                        other.name(),
                        other.name(),
                    ));
                }
            }
            checked += 1;
        }
        let e = ext(&case.input);
        for m in &case.opts.emit {
            let Some((_, out)) = outs.iter().find(|(x, _)| x.name() == m) else {
                failures.push(format!("{}: unknown emit mode {m}", case.dir.display()));
                continue;
            };
            let path = case.dir.join(format!("expected.default.{m}.{e}"));
            check_or_bless(&path, &out.text, &mut failures);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        checked >= 30 * MODES.len(),
        "only {checked} fixture modes checked"
    );
}

/// `dual` output builds as OpenACC (`gcc -fopenacc`, where the input does) and as OpenMP
/// (`gcc -fopenmp`, Clang offloading); `omp-acc` output builds as OpenMP and `acc-omp`
/// output as OpenACC.
#[test]
fn emit_outputs_compile() {
    if !common::compilers("emit outputs compile") {
        return;
    }
    let mut jobs = Vec::new();
    for case in cases() {
        let input = fs::read_to_string(&case.input).unwrap();
        let omp_ok = !case.opts.omp_version_51 && case.opts.outputs_compile;
        for mode in MODES {
            let text = emitted(&case, &input, mode).text;
            let builds: &[&str] = match mode {
                Emit::Dual => &["gcc-openacc", "gcc-openmp", "clang-openmp"],
                Emit::OmpAcc => &["gcc-openmp"],
                _ => &["gcc-openacc"],
            };
            for &b in builds {
                let ok = if b == "gcc-openacc" {
                    case.opts.input_compiles
                } else {
                    omp_ok
                };
                if ok {
                    jobs.push((case.input.clone(), mode, text.clone(), b));
                }
            }
        }
    }
    let failures: Vec<String> = jobs
        .par_iter()
        .filter_map(|(path, mode, text, how)| {
            compiles(path, text, how)
                .err()
                .map(|e| format!("{} --emit {} ({how}):\n{e}", path.display(), mode.name()))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Compile `text` (named after `path`) as `how` says: `gcc-openacc`, `gcc-openmp` or
/// `clang-openmp` (offloading). Objects are not kept; results are cached by content.
fn compiles(path: &Path, text: &str, how: &str) -> Result<(), String> {
    let (compiler, flags) = match how {
        "gcc-openacc" => (common::gcc_for(path), &["-fopenacc"][..]),
        "gcc-openmp" => (common::gcc_for(path), &["-fopenmp"][..]),
        _ => (common::clang_for(path), common::CLANG_OFFLOAD),
    };
    let mut flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
    flags.extend(["-c", "-o", "/dev/null"].map(String::from));
    // Outputs that leave a directive unchanged carry a guard that stops OpenMP builds
    // (checked by `left_directives_stop_openmp_builds`); here their OpenMP is checked.
    if how != "gcc-openacc" {
        flags.push("-DACC2OMP_ALLOW_UNTRANSLATED".to_string());
    }
    let file = common::cache::SourceFile {
        rel: path.file_name().unwrap().to_string_lossy().into_owned(),
        text: text.to_string(),
    };
    common::cache::check(compiler, &flags, &[file], 0)
}

fn yes() -> bool {
    true
}
