//! The end of a run: diagnostics in the requested format, the files `--output-file`,
//! `--export-fixes` and `--report` name, the summary line and hints, the exit status.

use super::FileResult;
use crate::cli::args::{Color, MigrateArgs, OutputFormat};
use crate::cli::pipe;
use crate::cli::settings::Settings;
use crate::diag::Located;
use crate::output::{self, RunView};
use crate::semantic::Mode;
use std::io::Write;
use std::path::Path;

/// `; 2 file(s) with libclang 19.1.7, 1 syntactic (libclang not found)`.
fn modes_summary(results: &[FileResult]) -> String {
    let mut counts: std::collections::BTreeMap<&Mode, usize> = Default::default();
    for m in results
        .iter()
        .filter_map(|r| r.outcome.as_ref()?.semantic.as_ref())
    {
        *counts.entry(m).or_default() += 1;
    }
    let parts: Vec<String> = counts
        .iter()
        .map(|(m, n)| match m {
            Mode::Clang { .. } | Mode::Flang { .. } => {
                format!("{n} file(s) with {}", m.describe())
            }
            Mode::Syntactic { reason } => format!("{n} syntactic ({reason})"),
        })
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("; {}", parts.join(", "))
    }
}

fn color_choice(c: Color) -> anstream::ColorChoice {
    match c {
        Color::Auto => anstream::ColorChoice::Auto,
        Color::Always => anstream::ColorChoice::Always,
        Color::Never => anstream::ColorChoice::Never,
    }
}

/// The profiles the files were translated with, in the order first met (the run's when
/// there are no files).
pub(super) fn profiles(run: &Settings, results: &[FileResult]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for r in results {
        let n = r.settings.opts.profile.name();
        if !names.contains(&n) {
            names.push(n);
        }
    }
    if names.is_empty() {
        names.push(run.opts.profile.name());
    }
    names.join(", ")
}

/// Print the diagnostics, the summary and hints; write the requested files; the exit status.
pub(super) fn finish(
    a: &MigrateArgs,
    view: &RunView,
    results: &[FileResult],
    status: &mut i32,
) -> i32 {
    let choice = color_choice(a.color);
    let mut err = anstream::AutoStream::new(std::io::stderr(), choice).lock();
    let quiet_filter = |v: &RunView| -> String {
        let concise = a.output_format == OutputFormat::Concise;
        if !a.quiet {
            return output::text::render(v, concise);
        }
        // -q hides notes.
        let mut out = String::new();
        for e in v.shown().filter(|e| e.diag.severity != "note") {
            out.push_str(&output::text::header(e));
            out.push('\n');
            if !concise && let Some(s) = output::text::snippet(v, e) {
                out.push_str(&s);
                out.push('\n');
            }
        }
        out
    };
    // `--statistics` replaces the diagnostics by their counts, in the format's own form.
    let machine = match (a.output_format, a.statistics) {
        (OutputFormat::Text | OutputFormat::Concise, _) => None,
        (OutputFormat::Json, false) => Some(output::json::render(view)),
        (OutputFormat::Json, true) => Some(output::json::render_statistics(view)),
        (OutputFormat::JsonLines, false) => Some(output::json::render_lines(view)),
        (OutputFormat::JsonLines, true) => Some(output::json::render_statistics_lines(view)),
        (OutputFormat::Sarif, _) => Some(output::sarif::render(view)),
        (OutputFormat::Github, false) => Some(output::github::render(view)),
        (OutputFormat::Github, true) => Some(output::github::render_statistics(view)),
    };
    let text = || {
        if a.statistics {
            output::statistics_table(view)
        } else {
            quiet_filter(view)
        }
    };
    match (machine, &a.output_file) {
        (None, None) => {
            let _ = err.write_all(text().as_bytes());
        }
        (None, Some(path)) => {
            let plain = anstream::adapter::strip_str(&text()).to_string();
            write_file(path, plain.as_bytes(), status);
        }
        (Some(m), None) => {
            let _ = pipe::write(&mut std::io::stdout(), m.as_bytes());
        }
        (Some(m), Some(path)) => write_file(path, m.as_bytes(), status),
    }
    let s = &view.summary;
    // Directives libclang was asked for but that were translated from syntax (a file whose
    // configuration says `no-clang` asked for syntax).
    let fell_back: usize = results
        .iter()
        .filter(|r| !r.settings.sem.no_clang)
        .filter_map(|r| r.outcome.as_ref())
        .map(|o| o.fell_back)
        .sum();
    if let Some(path) = &a.export_fixes {
        let (yaml, not_text) = output::clang_tidy::render(view);
        for (file, line) in not_text {
            let _ = writeln!(
                err,
                "{file}:{line}:1: error: this change is not UTF-8 text, which a fixes file cannot hold; it is exported without replacements [io-error]"
            );
            *status = 2;
        }
        write_file(path, yaml.as_bytes(), status);
    }
    if let Some(path) = &a.export_diagnostics {
        let all: Vec<&Located> = view.shown().map(|e| &e.diag).collect();
        let json = serde_json::to_string_pretty(&all).unwrap_or_else(|_| "[]".into());
        write_file(path, (json + "\n").as_bytes(), status);
        if !a.quiet {
            let _ = writeln!(
                err,
                "acc2omp: --export-diagnostics is deprecated: use --output-format json --output-file FILE"
            );
        }
    }
    if let Some(path) = &a.report {
        let report = crate::report::render(view, path, &mode_of(a));
        write_file(path, report.as_bytes(), status);
    }
    if !a.quiet {
        let verb = if a.write {
            "rewritten"
        } else if a.diff || a.check {
            "would change"
        } else {
            "to change"
        };
        let mut hidden = Vec::new();
        if s.suppressed > 0 {
            hidden.push(format!("{} suppressed by NOLINT", s.suppressed));
        }
        if s.ignored > 0 {
            hidden.push(format!("{} not selected", s.ignored));
        }
        let hidden = if hidden.is_empty() {
            String::new()
        } else {
            format!(" ({})", hidden.join(", "))
        };
        let fell_back = if fell_back > 0 {
            format!("; {fell_back} directive(s) translated from syntax alone")
        } else {
            String::new()
        };
        let _ = writeln!(
            err,
            "acc2omp: {} file(s), {} with OpenACC ({} directive(s)), {} {verb}; {} error(s), {} warning(s){hidden}{}{fell_back} [profile {}]",
            s.files,
            s.with_openacc,
            s.directives,
            s.changed,
            s.errors,
            s.warnings,
            modes_summary(results),
            view.profile
        );
        let offload = results
            .iter()
            .filter(|r| r.outcome.as_ref().is_some_and(|o| o.offload_routines))
            .count();
        if offload > 0 {
            let _ = writeln!(
                err,
                "acc2omp: {offload} file(s) now call OpenMP device-memory routines (omp_target_*), which need the offloading runtime (libomptarget) to link: build with an offload target, e.g. clang -fopenmp --offload-arch=<gpu> (or -fopenmp-targets=x86_64-pc-linux-gnu to offload to the host); clang -fopenmp alone cannot link them (GCC's libgomp has them)"
            );
        }
        if s.changed > 0 && !a.write && results.iter().any(|r| r.input.is_some()) {
            let _ = writeln!(err, "acc2omp: run with --write to apply the changes");
        }
    }
    if a.require_clang && fell_back > 0 {
        let _ = writeln!(
            err,
            "acc2omp: --require-clang: {fell_back} directive(s) were translated from syntax alone (see the clang-* diagnostics)"
        );
        *status = 2;
    }
    if *status != 0 {
        return *status;
    }
    if a.exit_zero {
        return 0;
    }
    i32::from(s.errors > 0 || ((a.diff || a.check) && s.changed > 0))
}

fn mode_of(a: &MigrateArgs) -> String {
    if a.write {
        "--write".into()
    } else if a.diff {
        "--diff".into()
    } else if a.check {
        "--check".into()
    } else {
        "no mode (nothing written)".into()
    }
}

fn write_file(path: &Path, bytes: &[u8], status: &mut i32) {
    if let Err(e) = std::fs::write(path, bytes) {
        eprintln!("acc2omp: cannot write {}: {e}", path.display());
        *status = 2;
    }
}
