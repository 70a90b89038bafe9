//! The `acc2omp` command line.

use crate::config;
use crate::diag::Located;
use crate::engine::{FileOutcome, migrate_bytes};
use crate::output::unified_diff;
use crate::profile::{OmpVersion, Profile};
use crate::rules::{Severity, tables};
use crate::semantic::{self, Mode, SemanticConfig};
use crate::translate::Options;
use crate::walk::{self, Input, Stamp};
use clap::{Args, Parser, Subcommand};
use rayon::prelude::*;
use std::ffi::OsString;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(
    name = "acc2omp",
    version,
    about = "Migrate OpenACC C/C++ sources to OpenMP offload"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Translate the OpenACC in files and directories.
    // An option given twice takes its last value: acc2omp.toml's options come first.
    #[command(args_override_self = true)]
    Migrate(MigrateArgs),
    /// List every diagnostic rule id.
    Rules(ConfigArgs),
    /// Explain one rule, with an example.
    Explain {
        id: String,
        #[command(flatten)]
        cfg: ConfigArgs,
    },
}

/// Where the rule tables and default options come from.
#[derive(Args)]
struct ConfigArgs {
    /// A rules file merged over the built-in tables (after acc2omp.toml's).
    #[arg(long, value_name = "FILE")]
    rules: Option<PathBuf>,
    /// Use this configuration file instead of the nearest acc2omp.toml.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Do not read any acc2omp.toml.
    #[arg(long, conflicts_with = "config")]
    no_config: bool,
}

/// `migrate` options an acc2omp.toml cannot set (by id).
const NOT_CONFIGURABLE: &[&str] = &[
    "paths",
    "diff",
    "write",
    "check",
    "stdin_filename",
    "rules",
    "config",
    "no_config",
];

#[derive(Args)]
struct MigrateArgs {
    /// Files or directories; `-` reads standard input.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Print a unified diff (git apply accepts it); exit 1 if anything would change.
    #[arg(long, group = "mode")]
    diff: bool,
    /// Rewrite files in place, atomically.
    #[arg(long, visible_alias = "in-place", group = "mode")]
    write: bool,
    /// List files that would change; exit 1 if any.
    #[arg(long, group = "mode")]
    check: bool,
    /// Mapping profile.
    #[arg(long, value_enum, default_value_t = Profile::Default)]
    profile: Profile,
    /// Highest OpenMP version the output may use.
    #[arg(long, value_enum, default_value_t = OmpVersion::V50)]
    omp_version: OmpVersion,
    /// Treat `kernels` loops of unknown independence as independent.
    #[arg(long)]
    assume_independent: bool,
    /// Keep `#include <openacc.h>` and `_OPENACC` tests (dual-build guards) unchanged.
    #[arg(long)]
    keep_openacc_guards: bool,
    /// Device type whose `device_type(…)` clauses apply (e.g. nvidia, radeon, host);
    /// default: none, only `device_type(*)` clauses apply.
    #[arg(long, value_name = "NAME", value_parser = parse_device_type)]
    device_type: Option<String>,
    /// Name used for standard input in messages.
    #[arg(long, default_value = "<stdin>")]
    stdin_filename: String,
    /// Worker threads (default: all cores, at least 2).
    #[arg(short = 'j', long)]
    jobs: Option<usize>,
    /// Hide notes and the summary.
    #[arg(short, long)]
    quiet: bool,
    /// Also write all diagnostics as JSON to this file.
    #[arg(long, value_name = "FILE")]
    export_diagnostics: Option<PathBuf>,
    /// Also write the changes as clang-tidy fixes (YAML for clang-apply-replacements).
    #[arg(long, value_name = "FILE")]
    export_fixes: Option<PathBuf>,
    /// Do not use libclang: facts about types and statements come from syntax alone.
    #[arg(long)]
    no_clang: bool,
    /// Directory with the compile_commands.json to take flags from (default: searched in
    /// the parent directories of each file).
    #[arg(short = 'p', value_name = "DIR")]
    compile_commands: Option<PathBuf>,
    /// Print which configuration and rules files are used and how each file was analyzed
    /// (libclang or syntactic, and why).
    #[arg(short, long)]
    verbose: bool,
    #[command(flatten)]
    cfg: ConfigArgs,
}

/// One input after translation.
struct FileResult {
    display: String,
    /// The file; None for standard input.
    input: Option<Input>,
    original: Vec<u8>,
    /// What the file was when read (for the lost-update check before a write).
    stamp: Option<Stamp>,
    outcome: Option<FileOutcome>,
    diags: Vec<Located>,
}

impl FileResult {
    fn changed(&self) -> bool {
        self.outcome
            .as_ref()
            .is_some_and(|o| o.output != self.original)
    }
}

fn process(
    display: String,
    input: Option<Input>,
    read: std::io::Result<(Vec<u8>, Option<Stamp>)>,
    opts: &Options,
    sem: &SemanticConfig,
) -> FileResult {
    let mut r = FileResult {
        display,
        input,
        original: Vec::new(),
        stamp: None,
        outcome: None,
        diags: Vec::new(),
    };
    match read {
        Ok((bytes, stamp)) => (r.original, r.stamp) = (bytes, stamp),
        Err(e) => {
            let why = format!("cannot read file: {e}; it is skipped");
            r.diags.push(Located::file(&r.display, "io-error", why));
            return r;
        }
    }
    let name = match &r.input {
        Some(i) => Some(i.target.clone()),
        None => (r.display != "<stdin>").then(|| PathBuf::from(&r.display)),
    };
    match migrate_bytes(&r.original, name.as_deref(), opts, sem) {
        Ok(out) => {
            r.diags = out
                .diagnostics
                .iter()
                .map(|d| Located::from(&r.display, &out.index, d))
                .collect();
            r.outcome = Some(out);
        }
        Err(d) => r.diags.push(Located::file(&r.display, d.rule, d.message)),
    }
    r
}

/// Read the configuration and rules files and install the tables; None after printing why not.
fn setup(c: &ConfigArgs, start: PathBuf) -> Option<config::Setup> {
    let req = config::Request {
        rules: c.rules.as_deref(),
        config: c.config.as_deref(),
        no_config: c.no_config,
        start,
    };
    let options = MigrateArgs::augment_args(clap::Command::new("migrate"));
    let setup = match config::setup(&req, &options, NOT_CONFIGURABLE) {
        Ok(s) => s,
        Err(errors) => {
            for e in errors {
                eprintln!("{e}");
            }
            return None;
        }
    };
    if crate::rules::install(setup.tables.clone()).is_err() {
        eprintln!("acc2omp: internal error: the rule tables were read before the configuration");
        return None;
    }
    Some(setup)
}

fn cwd() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
}

pub fn main() -> i32 {
    let argv: Vec<OsString> = std::env::args_os().collect();
    let parse = |argv: &[OsString]| match Cli::try_parse_from(argv) {
        Ok(c) => Ok(c),
        Err(e) => {
            let _ = e.print();
            Err(if e.use_stderr() { 2 } else { 0 })
        }
    };
    let cli = match parse(&argv) {
        Ok(c) => c,
        Err(code) => return code,
    };
    match cli.cmd {
        Cmd::Migrate(a) => {
            let stdin_name =
                (a.stdin_filename != "<stdin>").then(|| PathBuf::from(&a.stdin_filename));
            let start = config::search_start(&a.paths, stdin_name.as_deref());
            let Some(setup) = setup(&a.cfg, start) else {
                return 2;
            };
            let a = if setup.args.is_empty() {
                a
            } else {
                // The configuration's options go right after `migrate`, so that the
                // command line's own come later and win.
                let at = argv.len().min(2);
                let mut with = argv[..at].to_vec();
                with.extend(setup.args.iter().cloned());
                with.extend(argv[at..].iter().cloned());
                match parse(&with) {
                    Ok(Cli {
                        cmd: Cmd::Migrate(a),
                    }) => a,
                    Ok(_) => a,
                    Err(code) => return code,
                }
            };
            if a.verbose {
                for n in &setup.notes {
                    eprintln!("acc2omp: {n}");
                }
            }
            migrate(a)
        }
        Cmd::Rules(c) => {
            if setup(&c, cwd()).is_none() {
                return 2;
            }
            for r in &tables().diagnostics {
                println!("{:<22} {:<8} {}", r.id, r.severity.as_str(), r.summary);
            }
            0
        }
        Cmd::Explain { id, cfg } => match setup(&cfg, cwd()).map(|_| tables().diagnostic(&id)) {
            None => 2,
            Some(Some(r)) => {
                println!(
                    "{} ({})\n\n{}\n\n{}",
                    r.id,
                    r.severity.as_str(),
                    r.summary,
                    r.doc.trim()
                );
                if let (Some(b), Some(a)) = (&r.before, &r.after) {
                    println!("\nBefore:\n\n{}\nAfter:\n\n{}", indent(b), indent(a));
                }
                0
            }
            Some(None) => {
                eprintln!("acc2omp: unknown rule '{id}' (see `acc2omp rules`)");
                2
            }
        },
    }
}

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
            Mode::Clang { .. } => format!("{n} file(s) with {}", m.describe()),
            Mode::Syntactic { reason } => format!("{n} syntactic ({reason})"),
        })
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("; {}", parts.join(", "))
    }
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("    {l}\n")).collect()
}

/// A device type is an identifier, as in `device_type(nvidia)`.
fn parse_device_type(s: &str) -> Result<String, String> {
    let ok = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(s.to_string())
    } else {
        Err(format!(
            "'{s}' is not a device type name (an identifier such as nvidia, radeon or host)"
        ))
    }
}

fn migrate(a: MigrateArgs) -> i32 {
    let opts = Options {
        profile: a.profile,
        omp_version: a.omp_version,
        assume_independent: a.assume_independent,
        keep_openacc_guards: a.keep_openacc_guards,
        device_type: a.device_type.clone(),
    };
    let sem = SemanticConfig {
        no_clang: a.no_clang,
        compile_commands: a.compile_commands.clone(),
        isolate: true,
    };
    if let Some(dir) = &a.compile_commands
        && !dir.join("compile_commands.json").is_file()
    {
        eprintln!(
            "acc2omp: -p {}: no compile_commands.json in this directory",
            dir.display()
        );
        return 2;
    }
    let stdin = a.paths.iter().any(|p| p.as_os_str() == "-");
    if stdin && a.paths.len() > 1 {
        eprintln!("acc2omp: '-' (standard input) cannot be combined with other paths");
        return 2;
    }
    if a.write
        && let Err(e) = crate::write::clean_up_on_signals()
    {
        eprintln!("acc2omp: cannot watch for signals: {e}");
        return 2;
    }
    // Load libclang once, before the worker threads need it.
    let loaded = semantic::preload(&sem);
    if a.verbose {
        match &loaded {
            Ok(lib) => eprintln!("acc2omp: using {lib}"),
            Err(why) => eprintln!("acc2omp: syntactic mode: {why}"),
        }
    }
    let mut report = Report::default();
    let mut results = Vec::new();
    if stdin {
        let mut buf = Vec::new();
        let read = std::io::stdin().read_to_end(&mut buf).map(|_| (buf, None));
        results.push(process(a.stdin_filename.clone(), None, read, &opts, &sem));
    } else {
        let found = walk::collect(&a.paths);
        for s in &found.skipped {
            let d = Located::file(&walk::display(&s.path), s.rule, &s.message);
            if s.rule == "io-error" {
                report.status = 2;
            }
            report.add(d, a.quiet);
        }
        match translate_files(&found.files, a.jobs, &opts, &sem) {
            Ok(r) => results = r,
            Err(e) => {
                eprintln!("acc2omp: cannot start worker threads: {e}");
                return 2;
            }
        }
    }
    results.sort_by(|x, y| x.display.cmp(&y.display));
    let mut stdout = std::io::stdout().lock();
    let mut writer = crate::write::Writer::default();
    for r in &results {
        for d in &r.diags {
            report.add(d.clone(), a.quiet);
        }
        if a.verbose
            && let Some(m) = r.outcome.as_ref().and_then(|o| o.semantic.as_ref())
        {
            eprintln!("{}: analyzed with {}", r.display, m.describe());
        }
        let Some(input) = &r.input else {
            // Standard input: the translation, or the input itself when it cannot be
            // translated (an editor filter must never empty its buffer).
            report.changed += usize::from(r.changed());
            if !a.diff && !a.check {
                let out = r.outcome.as_ref().map_or(&r.original, |o| &o.output);
                let _ = stdout.write_all(out);
            } else if r.changed() && a.diff {
                let name = a.stdin_filename.trim_start_matches('/').as_bytes();
                let out = r.outcome.as_ref().map_or(&r.original, |o| &o.output);
                let _ = stdout.write_all(&unified_diff(name, &r.original, out));
            }
            continue;
        };
        let (Some(out), true) = (&r.outcome, r.changed()) else {
            continue;
        };
        if a.diff {
            let name = walk::diff_name(&input.name);
            let _ = stdout.write_all(&unified_diff(&name, &r.original, &out.output));
            report.changed += 1;
        } else if a.check {
            let _ = writeln!(stdout, "{}", r.display);
            report.changed += 1;
        } else if a.write {
            let Some(stamp) = &r.stamp else { continue };
            let (done, removed) = writer.replace(&input.target, stamp, &r.original, &out.output);
            for t in removed {
                let why = "removed a temporary file left by an interrupted run";
                report.add(Located::file(&walk::display(&t), "temp-file", why), a.quiet);
            }
            match done {
                Ok(w) => {
                    report.changed += 1;
                    if let Some(why) = w.owner_changed {
                        report.add(Located::file(&r.display, "file-owner", why), a.quiet);
                    }
                }
                Err(e) => {
                    if e.rule == "io-error" {
                        report.status = 2;
                    }
                    report.add(Located::file(&r.display, e.rule, e.message), a.quiet);
                }
            }
        } else {
            report.changed += 1;
        }
    }
    let _ = stdout.flush();
    if let Some(path) = &a.export_fixes {
        export_fixes(path, &results, &mut report, a.quiet);
    }
    if let Some(path) = &a.export_diagnostics {
        let json = serde_json::to_string_pretty(&report.all).unwrap_or_else(|_| "[]".into());
        if let Err(e) = std::fs::write(path, json + "\n") {
            eprintln!("acc2omp: cannot write {}: {e}", path.display());
            report.status = 2;
        }
    }
    if !a.quiet {
        let with_acc = results
            .iter()
            .filter(|r| r.outcome.as_ref().is_some_and(|o| o.sites > 0))
            .count();
        let directives: usize = results
            .iter()
            .filter_map(|r| r.outcome.as_ref())
            .map(|o| o.sites)
            .sum();
        let verb = if a.write {
            "rewritten"
        } else if a.diff || a.check {
            "would change"
        } else {
            "to change"
        };
        eprintln!(
            "acc2omp: {} file(s), {with_acc} with OpenACC ({directives} directive(s)), {} {verb}; {} error(s), {} warning(s){} [profile {}]",
            results.len(),
            report.changed,
            report.errors,
            report.warnings,
            modes_summary(&results),
            a.profile.name()
        );
    }
    if report.status != 0 {
        return report.status;
    }
    if report.errors > 0 || ((a.diff || a.check) && report.changed > 0) {
        1
    } else {
        0
    }
}

/// Diagnostics printed so far and the counts the summary and exit status need.
#[derive(Default)]
struct Report {
    all: Vec<Located>,
    errors: usize,
    warnings: usize,
    /// Files changed (written, with `--write`).
    changed: usize,
    /// 2 after a fatal I/O error.
    status: i32,
}

impl Report {
    fn add(&mut self, d: Located, quiet: bool) {
        match d.severity {
            "off" => return,
            "error" => self.errors += 1,
            "warning" => self.warnings += 1,
            _ => {}
        }
        if !(quiet && d.severity == Severity::Note.as_str()) {
            eprintln!("{}", d.render());
        }
        self.all.push(d);
    }
}

/// Read and translate the files in parallel (a progress bar on a terminal).
fn translate_files(
    files: &[Input],
    jobs: Option<usize>,
    opts: &Options,
    sem: &SemanticConfig,
) -> Result<Vec<FileResult>, rayon::ThreadPoolBuildError> {
    let jobs = jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .max(2)
    });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()?;
    let bar = (std::io::stderr().is_terminal() && files.len() > 1).then(|| {
        let b = indicatif::ProgressBar::new(files.len() as u64);
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} files {msg}")
        {
            b.set_style(style);
        }
        b
    });
    let results = pool.install(|| {
        files
            .par_iter()
            .map(|f| {
                let read = walk::read(&f.target).map(|(b, s)| (b, Some(s)));
                let r = process(walk::display(&f.name), Some(f.clone()), read, opts, sem);
                if let Some(b) = &bar {
                    b.inc(1);
                }
                r
            })
            .collect()
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(results)
}

/// `--export-fixes FILE`: the changes as clang-tidy fixes, the real files' absolute paths.
fn export_fixes(path: &Path, results: &[FileResult], report: &mut Report, quiet: bool) {
    let files: Vec<(String, &[u8], &[u8])> = results
        .iter()
        .filter(|r| r.changed())
        .filter_map(|r| {
            let out = r.outcome.as_ref()?;
            let name = match &r.input {
                Some(i) => std::path::absolute(&i.target).unwrap_or_else(|_| i.target.clone()),
                None => PathBuf::from(&r.display),
            };
            Some((
                name.to_string_lossy().into_owned(),
                r.original.as_slice(),
                out.output.as_slice(),
            ))
        })
        .collect();
    let (yaml, not_text) = crate::output::fixes_yaml(&files);
    for name in not_text {
        let why =
            "its changes are not UTF-8 text, which a fixes file cannot hold; they are not exported";
        report.add(Located::file(&name, "io-error", why), quiet);
        report.status = 2;
    }
    if let Err(e) = std::fs::write(path, yaml) {
        eprintln!("acc2omp: cannot write {}: {e}", path.display());
        report.status = 2;
    }
}
