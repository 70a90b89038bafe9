//! `acc2omp migrate`: read, translate, write or print, then report.
//!
//! This file holds the run (inputs, configurations, cache, writes); `files` reads and
//! translates the inputs, `finish` prints and writes what the run found.

mod files;
mod finish;

use super::args::{MigrateArgs, OutputFormat};
use super::pipe;
use super::settings::{Configs, Settings};
use crate::cache::{self, Cache};
use crate::diag::Located;
use crate::engine::FileOutcome;
use crate::output::{
    self, Entry, FileView, Hidden, RunView, Summary, unified_diff, write_unified_diff_of_changes,
};
use crate::rules::id;
use crate::select::Selection;
use crate::semantic::{self, SemanticConfig};
use crate::suppress::{Suppressions, unmatched_message};
use crate::walk::{self, Input, Stamp};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use files::{process, read_stdin, translate_files};
use finish::{finish, profiles};

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
    /// Its translation went past the memory limit while other files were translated too:
    /// to be translated again alone.
    retry: bool,
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
        if !semantic::compile_commands_present(&db) {
            eprintln!(
                "acc2omp: -p {}: no compile_commands.json there",
                p.display()
            );
            return 2;
        }
    }
    // Also without --write: a signal must not leave child processes behind.
    if let Err(e) = crate::write::clean_up_on_signals(semantic::stop_children) {
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
    let limit = a.max_file_size.saturating_mul(1 << 20);
    let memory = a
        .max_memory
        .unwrap_or_else(crate::memory::default_limit_mib);
    crate::memory::set_limit(usize::try_from(memory.saturating_mul(1 << 20)).unwrap_or(usize::MAX));
    let mut results = Vec::new();
    // Standard input too large to translate: what was read of it, echoed with the rest.
    let mut stdin_head = None;
    if stdin {
        let read = read_stdin(limit).map(|b| (b, None)).map_err(|(e, head)| {
            stdin_head = Some(head);
            e
        });
        if let Some((_, s)) = work.pop() {
            results.push(process(a.stdin_filename.clone(), None, read, s, None));
        }
    } else {
        let cache = (!a.no_cache)
            .then(|| a.cache_dir.clone().or_else(cache::default_dir))
            .flatten()
            .map(|dir| {
                let tools = format!(
                    "{}; {}",
                    semantic::libclang_identity(&sem),
                    crate::fortran::flang::identity(sem.no_clang)
                );
                Cache::new(&dir, &tools)
            });
        match translate_files(work, a.jobs, limit, cache.as_ref()) {
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
            if let Some(head) = stdin_head.as_ref().filter(|_| !a.diff && !a.check) {
                // Too large to translate: echoed as it came, the rest straight through.
                let _ = pipe::write(&mut stdout, head)
                    .and_then(|_| std::io::copy(&mut std::io::stdin().lock(), &mut stdout))
                    .and_then(|_| stdout.flush());
            } else if !a.diff && !a.check {
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
            // Sized first: a large file has hundreds of thousands, copied as they grew.
            let mut changes =
                Vec::with_capacity(out.fixes.iter().map(|f| f.replacements.len()).sum());
            changes.extend(
                out.fixes
                    .iter()
                    .flat_map(|f| &f.replacements)
                    .map(|x| (x.offset, x.length, x.text.len())),
            );
            // Written as it is made, through a buffer: standard output flushes at each line.
            use std::io::Write;
            let mut w = std::io::BufWriter::with_capacity(1 << 16, &mut stdout);
            let (old, new) = (&r.original, &out.output);
            let done = write_unified_diff_of_changes(&mut w, &name, old, new, &mut changes)
                .and_then(|_| w.flush());
            let _ = pipe::ended(done);
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
