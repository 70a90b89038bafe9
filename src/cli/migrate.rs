//! `acc2omp migrate`: read, translate, write or print, then report.

use super::args::{Color, MigrateArgs, OutputFormat};
use super::pipe;
use super::settings::{Configs, Settings};
use crate::cache::{self, Cache};
use crate::diag::Located;
use crate::engine::{FileOutcome, migrate_bytes};
use crate::output::{
    self, Entry, FileView, Hidden, RunView, Summary, unified_diff, unified_diff_of_changes,
};
use crate::rules::id;
use crate::select::Selection;
use crate::semantic::{self, Mode, SemanticConfig};
use crate::suppress::{Suppressions, unmatched_message};
use crate::walk::{self, Input, Stamp};
use rayon::prelude::*;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    /// Its configuration's settings.
    settings: Arc<Settings>,
}

impl FileResult {
    fn changed(&self) -> bool {
        self.outcome
            .as_ref()
            .is_some_and(|o| o.output != self.original)
    }

    /// The line terminator its line index uses (CR in a CR-only file).
    fn terminator(&self) -> u8 {
        if !self.original.contains(&b'\n') && self.original.contains(&b'\r') {
            b'\r'
        } else {
            b'\n'
        }
    }
}

fn process(
    display: String,
    input: Option<Input>,
    read: std::io::Result<(Vec<u8>, Option<Stamp>)>,
    settings: Arc<Settings>,
    cache: Option<&Cache>,
) -> FileResult {
    let mut r = FileResult {
        display,
        input,
        original: Vec::new(),
        stamp: None,
        outcome: None,
        diags: Vec::new(),
        settings,
    };
    let (opts, sem) = (&r.settings.opts, &r.settings.sem);
    match read {
        Ok((bytes, stamp)) => (r.original, r.stamp) = (bytes, stamp),
        Err(e) => {
            let why = format!("cannot read file: {e}; it is skipped");
            r.diags
                .push(Located::file(&opts.tables, &r.display, id::IO_ERROR, why));
            return r;
        }
    }
    let name = match &r.input {
        Some(i) => Some(i.target.clone()),
        None => (r.display != "<stdin>").then(|| PathBuf::from(&r.display)),
    };
    // A file (not standard input) may have its translation kept from an earlier run.
    let key = match (cache, &r.input) {
        (Some(c), Some(i)) => {
            let db = sem.compile_commands.as_deref();
            let (flags, found) = semantic::compile_flags_for(Some(&i.target), db);
            let k = c.key(
                r.settings.fingerprint(),
                &flags,
                found,
                &i.target,
                &r.original,
            );
            Some((c, k))
        }
        _ => None,
    };
    let kept = key
        .as_ref()
        .and_then(|(c, k)| c.get(k, &r.original, &opts.tables));
    let result = kept.map(Ok).unwrap_or_else(|| {
        let out = migrate_bytes(&r.original, name.as_deref(), opts, sem);
        if let (Some((c, k)), Ok(o)) = (&key, &out) {
            c.put(k, &r.original, o, &opts.tables);
        }
        out
    });
    match result {
        Ok(out) => {
            r.diags = out
                .diagnostics
                .iter()
                .map(|d| Located::from(&r.display, &out.index, d))
                .collect();
            r.outcome = Some(out);
        }
        Err(d) => r
            .diags
            .push(Located::file(&opts.tables, &r.display, d.rule, d.message)),
    }
    r
}

/// Diagnostics of the run and the counts the summary and exit status need.
struct Collected {
    entries: Vec<Entry>,
    summary: Summary,
    /// 2 after a fatal error.
    status: i32,
}

impl Collected {
    /// Report `d` unless the rule selection (the file's) or, in file `i`, a NOLINT comment
    /// hides it.
    fn add(&mut self, selection: &Selection, d: Located, file: Option<(usize, &Suppressions)>) {
        if d.severity == "off" {
            return;
        }
        let hidden = if !selection.enabled(d.rule) {
            self.summary.ignored += 1;
            Some(Hidden::Ignored)
        } else if d.range.is_some() && file.is_some_and(|(_, s)| s.suppresses(d.line, d.rule)) {
            self.summary.suppressed += 1;
            Some(Hidden::Suppressed)
        } else {
            match d.severity {
                "error" => self.summary.errors += 1,
                "warning" => self.summary.warnings += 1,
                _ => self.summary.notes += 1,
            }
            None
        };
        self.entries.push(Entry {
            diag: d,
            file: file.map(|f| f.0),
            hidden,
        });
    }

    /// A diagnostic that is not about a translated file (walks, writes); `fatal` for I/O
    /// failures, which make the run fail whatever is selected.
    fn add_loose(&mut self, selection: &Selection, d: Located, fatal: bool) {
        if fatal {
            self.status = 2;
        }
        self.add(selection, d, None);
    }
}

/// Read and translate the files in parallel (a progress bar on a terminal).
fn translate_files(
    files: Vec<(Option<Input>, Arc<Settings>)>,
    jobs: Option<usize>,
    cache: Option<&Cache>,
) -> Result<Vec<FileResult>, rayon::ThreadPoolBuildError> {
    let jobs = jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .max(2)
    });
    // Every recursive reading is bounded well within 2 MiB; 8 MiB (address space only, as
    // a main thread's) leaves a margin for hostile inputs on any build.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .stack_size(8 << 20)
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
            .into_par_iter()
            .filter_map(|(f, settings)| {
                let f = f?;
                let read = walk::read(&f.target).map(|(b, s)| (b, Some(s)));
                let r = process(walk::display(&f.name), Some(f), read, settings, cache);
                if let Some(b) = &bar {
                    b.inc(1);
                }
                Some(r)
            })
            .collect()
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(results)
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

fn color_choice(c: Color) -> anstream::ColorChoice {
    match c {
        Color::Auto => anstream::ColorChoice::Auto,
        Color::Always => anstream::ColorChoice::Always,
        Color::Never => anstream::ColorChoice::Never,
    }
}

/// Every compilation database the files use must be readable: a broken one is an error,
/// never silently a run without flags.
fn check_databases(work: &[(Option<Input>, Arc<Settings>)]) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut errors = Vec::new();
    let dbs = work
        .iter()
        .filter_map(|(f, s)| match &s.sem.compile_commands {
            Some(p) => Some(semantic::compile_commands_path(p)),
            None => semantic::compile_commands_for(&f.as_ref()?.target, None),
        });
    for db in dbs {
        if seen.insert(db.clone())
            && let Err(e) = semantic::check_compile_commands(&db)
        {
            errors.push(format!(
                "acc2omp: {}: not a usable compilation database: {e}",
                walk::display(&db)
            ));
        }
    }
    errors
}

/// Translate what `a` names, each file with the settings of its configuration.
pub fn run(a: MigrateArgs, run: &Arc<Settings>, mut configs: Configs) -> i32 {
    let tables = &run.opts.tables;
    let stdin = a.paths.iter().any(|p| p.as_os_str() == "-");
    if stdin && a.paths.len() > 1 {
        eprintln!("acc2omp: '-' (standard input) cannot be combined with other paths");
        return 2;
    }
    if a.statistics && a.output_format == OutputFormat::Sarif {
        eprintln!(
            "acc2omp: --statistics has no SARIF form (a SARIF log lists results): use --output-format json"
        );
        return 2;
    }
    let machine_to_stdout = a.output_format.for_machines() && a.output_file.is_none();
    if machine_to_stdout && (a.diff || (stdin && !a.check)) {
        eprintln!(
            "acc2omp: --output-format {} writes to standard output, which {} uses: add --output-file FILE",
            format!("{:?}", a.output_format).to_lowercase(),
            if a.diff {
                "--diff"
            } else {
                "standard input's translation"
            }
        );
        return 2;
    }
    if let Some(p) = &a.compile_commands {
        let db = semantic::compile_commands_path(p);
        if !db.is_file() {
            eprintln!(
                "acc2omp: -p {}: no compile_commands.json there",
                p.display()
            );
            return 2;
        }
    }
    if a.write
        && let Err(e) = crate::write::clean_up_on_signals()
    {
        eprintln!("acc2omp: cannot watch for signals: {e}");
        return 2;
    }
    let mut c = Collected {
        entries: Vec::new(),
        summary: Summary::default(),
        status: 0,
    };
    // The inputs, each with its configuration's settings.
    let mut work: Vec<(Option<Input>, Arc<Settings>)> = Vec::new();
    let stdin_name = (a.stdin_filename != "<stdin>").then(|| PathBuf::from(&a.stdin_filename));
    let mut add = |c: &mut Collected, configs: &mut Configs, input: Option<Input>| {
        let path = match &input {
            Some(i) => Some(i.name.clone()),
            None => stdin_name.clone(),
        };
        let config = configs.config_of(path.as_deref());
        let settings = configs.get(config);
        // A configuration's own problems, the first time it is met.
        for d in std::mem::take(&mut configs.reports) {
            let fatal = d.is_error();
            c.add_loose(&run.selection, d, fatal);
        }
        match settings {
            Ok(s) => work.push((input, s)),
            Err(b) => {
                let shown = path.map_or_else(|| a.stdin_filename.clone(), |p| walk::display(&p));
                let why = format!("not translated: its configuration {} has errors", b.config);
                c.add_loose(
                    &run.selection,
                    Located::file(tables, &shown, id::CONFIG_FILE, why),
                    true,
                );
            }
        }
    };
    if stdin {
        add(&mut c, &mut configs, None);
    } else {
        let exclude = configs.excluder();
        let found = walk::collect_excluding(&a.paths, Some(&exclude), a.force_exclude);
        for s in &found.skipped {
            let d = Located::file(tables, &walk::display(&s.path), s.rule, &s.message);
            c.add_loose(&run.selection, d, s.rule == id::IO_ERROR);
        }
        for f in found.files {
            add(&mut c, &mut configs, Some(f));
        }
    }
    if a.verbose {
        for n in &configs.notes {
            eprintln!("acc2omp: {n}");
        }
    }
    // Load libclang once, before the worker threads need it (unless no file uses it).
    let sem = SemanticConfig {
        no_clang: if work.is_empty() {
            run.sem.no_clang
        } else {
            work.iter().all(|(_, s)| s.sem.no_clang)
        },
        ..SemanticConfig::default()
    };
    let loaded = semantic::preload(&sem);
    match &loaded {
        Ok(lib) if a.verbose => eprintln!("acc2omp: using {lib}"),
        Err(why) if a.require_clang => {
            eprintln!("acc2omp: --require-clang: {why}");
            return 2;
        }
        Err(why) if a.verbose => eprintln!("acc2omp: syntactic mode: {why}"),
        _ => {}
    }
    // Also without libclang: the syntactic facts use the database's -D flags.
    let errors = check_databases(&work);
    if !errors.is_empty() {
        for e in errors {
            eprintln!("{e}");
        }
        return 2;
    }
    let mut results = Vec::new();
    if stdin {
        let mut buf = Vec::new();
        let read = std::io::stdin().read_to_end(&mut buf).map(|_| (buf, None));
        if let Some((_, s)) = work.pop() {
            results.push(process(a.stdin_filename.clone(), None, read, s, None));
        }
    } else {
        let cache = (!a.no_cache)
            .then(|| a.cache_dir.clone().or_else(cache::default_dir))
            .flatten()
            .map(|dir| Cache::new(&dir, &semantic::libclang_identity(&sem)));
        match translate_files(work, a.jobs, cache.as_ref()) {
            Ok(r) => results = r,
            Err(e) => {
                eprintln!("acc2omp: cannot start worker threads: {e}");
                return 2;
            }
        }
        if let Some(c) = &cache {
            c.prune();
            if a.verbose {
                let hits = c.hits.load(std::sync::atomic::Ordering::Relaxed);
                let misses = c.misses.load(std::sync::atomic::Ordering::Relaxed);
                eprintln!(
                    "acc2omp: cache {}: {hits} of {} file(s) read back",
                    c.dir().display(),
                    hits + misses
                );
            }
        }
    }
    results.sort_by(|x, y| x.display.cmp(&y.display));
    let mut stdout = std::io::stdout().lock();
    let mut writer = crate::write::Writer::default();
    let mut written = vec![false; results.len()];
    // A diff with a file outside the current directory names every file by its absolute
    // path (git refuses `..` in a name): `git -C / apply` applies it.
    let absolute = a.diff
        && results.iter().any(|r| {
            r.changed()
                && r.input
                    .as_ref()
                    .is_some_and(|i| !walk::place(&i.name).inside)
        });
    for (i, r) in results.iter().enumerate() {
        let sup = Suppressions::parse(&r.original, r.terminator());
        let selection = r
            .settings
            .selection_for(r.input.as_ref().map(|i| i.target.as_path()));
        let mut diags = r.diags.clone();
        if !sup.unmatched.is_empty() {
            let index = crate::source::LineIndex::of_bytes(&r.original, r.terminator());
            for &(at, begin) in &sup.unmatched {
                let rule = id::NOLINT_UNMATCHED;
                let mut d = crate::diag::Diagnostic::new(at, rule, unmatched_message(begin));
                d.rate(&r.settings.opts.tables);
                d.end = Some(at + if begin { "NOLINTBEGIN" } else { "NOLINTEND" }.len());
                diags.push(Located::from(&r.display, &index, &d));
            }
            diags.sort_by_key(|d| d.range.as_ref().map(|x| x.start));
        }
        for d in diags {
            c.add(&selection, d, Some((i, &sup)));
        }
        if a.verbose {
            if let Some(m) = r.outcome.as_ref().and_then(|o| o.semantic.as_ref()) {
                eprintln!("{}: analyzed with {}", r.display, m.describe());
            }
            let config = r.settings.config.as_deref().unwrap_or("none");
            eprintln!("{}: configuration {config}", r.display);
        }
        let Some(input) = &r.input else {
            // Standard input: the translation, or the input itself when it cannot be
            // translated (an editor filter must never empty its buffer).
            c.summary.changed += usize::from(r.changed());
            let out = r.outcome.as_ref().map_or(&r.original, |o| &o.output);
            if !a.diff && !a.check {
                let _ = pipe::write(&mut stdout, out);
            } else if r.changed() && a.diff {
                let name = a.stdin_filename.trim_start_matches('/').as_bytes();
                let _ = pipe::write(&mut stdout, &unified_diff(name, &r.original, out));
            }
            continue;
        };
        let (Some(out), true) = (&r.outcome, r.changed()) else {
            continue;
        };
        if a.diff {
            let name = walk::diff_name(&input.name, absolute);
            let mut changes: Vec<(usize, usize, usize)> = out
                .fixes
                .iter()
                .flat_map(|f| &f.replacements)
                .map(|x| (x.offset, x.length, x.text.len()))
                .collect();
            let diff = unified_diff_of_changes(&name, &r.original, &out.output, &mut changes);
            let _ = pipe::write(&mut stdout, &diff);
            c.summary.changed += 1;
        } else if a.check {
            // As `git status` names it: relative to the current directory, quoted when it
            // has a newline, a quote or bytes that are not ASCII.
            let mut line = output::diff::quote_path(&walk::place(&input.name).relative);
            line.push(b'\n');
            let _ = if machine_to_stdout {
                pipe::write(&mut std::io::stderr(), &line)
            } else {
                pipe::write(&mut stdout, &line)
            };
            c.summary.changed += 1;
        } else if a.write {
            let Some(stamp) = &r.stamp else { continue };
            let (done, removed) = writer.replace(&input.target, stamp, &r.original, &out.output);
            for t in removed {
                let why = "removed a temporary file left by an interrupted run";
                c.add_loose(
                    &run.selection,
                    Located::file(tables, &walk::display(&t), id::TEMP_FILE, why),
                    false,
                );
            }
            match done {
                Ok(w) => {
                    c.summary.changed += 1;
                    written[i] = true;
                    if let Some(why) = w.owner_changed {
                        c.add_loose(
                            &run.selection,
                            Located::file(tables, &r.display, id::FILE_OWNER, why),
                            false,
                        );
                    }
                }
                Err(e) => {
                    let fatal = e.rule == id::IO_ERROR;
                    c.add_loose(
                        &run.selection,
                        Located::file(tables, &r.display, e.rule, e.message),
                        fatal,
                    );
                }
            }
        } else {
            c.summary.changed += 1;
        }
    }
    let _ = stdout.flush();
    drop(stdout);
    let s = &mut c.summary;
    s.files = results.len();
    for o in results.iter().filter_map(|r| r.outcome.as_ref()) {
        s.with_openacc += usize::from(o.sites > 0);
        s.directives += o.sites;
        s.fell_back += o.fell_back;
    }
    let view = RunView {
        files: results
            .iter()
            .map(|r| FileView {
                display: r.display.clone(),
                abs: r
                    .input
                    .as_ref()
                    .map(|i| std::path::absolute(&i.target).unwrap_or_else(|_| i.target.clone())),
                source: &r.original,
                terminator: r.terminator(),
                fixes: r.outcome.as_ref().map_or(&[][..], |o| &o.fixes),
                fix_starts: FileView::fix_starts(r.outcome.as_ref().map_or(&[][..], |o| &o.fixes)),
                changed: r.changed(),
                sites: r.outcome.as_ref().map_or(0, |o| o.sites),
                mode: r.outcome.as_ref().and_then(|o| o.semantic.as_ref()),
                fell_back: r.outcome.as_ref().map_or(0, |o| o.fell_back),
                config: r.settings.config.as_deref(),
                profile: r.settings.opts.profile.name(),
            })
            .collect(),
        entries: std::mem::take(&mut c.entries),
        summary: c.summary.clone(),
        profile: profiles(run, &results),
        tables,
    };
    let r = finish(&a, &view, &results, &mut c.status);
    // The process ends next: freeing every file's text, fixes and diagnostics one by one
    // would only delay it (a tenth of the run on a single large file).
    std::mem::forget(view);
    std::mem::forget(results);
    r
}

/// The profiles the files were translated with, in the order first met (the run's when
/// there are no files).
fn profiles(run: &Settings, results: &[FileResult]) -> String {
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
fn finish(a: &MigrateArgs, view: &RunView, results: &[FileResult], status: &mut i32) -> i32 {
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
