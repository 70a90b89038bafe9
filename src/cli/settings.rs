//! What each file is translated with: the options, tables and rule selection of its nearest
//! `acc2omp.toml` (or of `--config FILE`, for every file), under the command line's own.
//!
//! Options are of two kinds. Those in [`PER_FILE`] follow the file: they come from its
//! configuration. The others (output, exit status, jobs, …) concern the whole run and come
//! from the run's configuration: `--config FILE`, else the `acc2omp.toml` of the current
//! directory or its parents, as ruff has it. Set in another configuration, they are reported
//! (`config-run-option`) and ignored. Each configuration is read once.

use super::args::{Cli, Cmd, MigrateArgs, NOT_CONFIGURABLE, PER_FILE};
use crate::config::{self, Finder};
use crate::diag::{Diagnostic, Located};
use crate::exclude::{Patterns, PerFileIgnores};
use crate::options::Options;
use crate::overrides::FileError;
use crate::rules::Tables;
use crate::rules::id;
use crate::select::{Layer, Selection};
use crate::semantic::SemanticConfig;
use crate::source::LineIndex;
use clap::{Args, Parser};
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What one configuration gives the files that have it.
pub struct Settings {
    /// The configuration as messages show it; None without one.
    pub config: Option<String>,
    pub opts: Options,
    pub sem: SemanticConfig,
    pub selection: Selection,
    /// `per-file-ignores`: rules not reported in some of its files.
    pub per_file_ignores: PerFileIgnores,
    /// The configuration's options as command-line arguments.
    config_args: Vec<OsString>,
    fingerprint: std::sync::OnceLock<[u8; 32]>,
}

impl Settings {
    /// The rules reported in the file at `path`.
    pub fn selection_for(&self, path: Option<&Path>) -> std::borrow::Cow<'_, Selection> {
        let real = path
            .filter(|_| !self.per_file_ignores.is_empty())
            .and_then(|p| std::fs::canonicalize(p).ok());
        match real {
            Some(p) => {
                std::borrow::Cow::Owned(self.selection.without(self.per_file_ignores.ignored(&p)))
            }
            None => std::borrow::Cow::Borrowed(&self.selection),
        }
    }

    /// A hash of everything in these settings that a file's translation depends on (the
    /// result cache's key): the options and the tables.
    pub fn fingerprint(&self) -> &[u8; 32] {
        self.fingerprint.get_or_init(|| {
            let (o, t) = (&self.opts, &self.opts.tables);
            let text = format!(
                "{:?}",
                (
                    (o.profile, o.omp_version, o.assume_independent),
                    (o.keep_openacc_guards, &o.device_type, o.emit),
                    (&t.directives, &t.clauses, &t.diagnostics, &t.runtime),
                    (self.sem.no_clang, &self.sem.compile_commands),
                )
            );
            *blake3::hash(text.as_bytes()).as_bytes()
        })
    }
}

/// `to` relative to the directory `from` (both absolute), with `..` as needed.
fn pathdiff(to: &Path, from: &Path) -> String {
    let (t, f): (Vec<_>, Vec<_>) = (to.components().collect(), from.components().collect());
    let common = t.iter().zip(&f).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..f.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c);
    }
    out.display().to_string()
}

/// A configuration that cannot be used: its files are not translated.
pub struct Broken {
    /// The configuration as messages show it.
    pub config: String,
}

/// The settings of every configuration a run meets, each resolved once.
pub struct Configs {
    argv: Vec<OsString>,
    rules: Option<PathBuf>,
    /// `--config FILE` (for every file), or `--no-config`: no search.
    fixed: Option<Option<PathBuf>>,
    cli_selection: Layer,
    /// `-p` is on the command line (whose missing database is the run's error).
    cli_database: bool,
    /// The run's configuration.
    pub run: Option<PathBuf>,
    finder: Finder,
    resolved: HashMap<Option<PathBuf>, Result<Arc<Settings>, Arc<Broken>>>,
    /// Problems found in configurations, not yet reported.
    pub reports: Vec<Located>,
    /// What was read, for `-v`.
    pub notes: Vec<String>,
}

/// The `migrate` options an `acc2omp.toml` may set.
fn options() -> clap::Command {
    MigrateArgs::augment_args(clap::Command::new("migrate"))
}

impl Configs {
    /// `argv` is the whole command line, `cli` what it says alone.
    pub fn new(argv: &[OsString], cli: &MigrateArgs) -> Configs {
        let cfg = &cli.cfg;
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let fixed = if cfg.no_config {
            Some(None)
        } else {
            cfg.config.clone().map(Some)
        };
        let mut finder = Finder::default();
        let run = match &fixed {
            Some(f) => f.clone(),
            None => finder.nearest(&cwd),
        };
        Configs {
            argv: argv.to_vec(),
            rules: cfg.rules.clone(),
            fixed,
            cli_selection: Layer {
                select: cli.select.clone(),
                extend_select: cli.extend_select.clone(),
                ignore: cli.ignore.clone(),
            },
            cli_database: cli.compile_commands.is_some(),
            run,
            finder,
            resolved: HashMap::new(),
            reports: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// What a walk leaves out: each path is matched against the `exclude` patterns of the
    /// configuration of its directory (each configuration read here once).
    pub fn excluder(&self) -> crate::walk::Exclude {
        type Seen = (Finder, HashMap<PathBuf, Arc<Patterns>>);
        let fixed = self.fixed.clone();
        let state: std::sync::Mutex<Seen> = Default::default();
        Arc::new(move |path: &Path, is_dir: bool| {
            let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
            let (finder, loaded) = &mut *st;
            let config = match &fixed {
                Some(f) => f.clone(),
                None => finder.for_file(path),
            };
            let Some(config) = config else {
                return false;
            };
            let patterns = loaded
                .entry(config)
                .or_insert_with_key(|c| {
                    // A configuration with errors excludes nothing (its files are reported).
                    let loaded = config::load(c, &options(), NOT_CONFIGURABLE).ok();
                    let p = loaded.and_then(|c| Patterns::new(&c.excludes()).ok());
                    Arc::new(p.unwrap_or_default())
                })
                .clone();
            drop(st);
            patterns.matches(path, is_dir)
        })
    }

    /// The configuration of the file at `path` (standard input: the would-be file, else the
    /// current directory).
    pub fn config_of(&mut self, path: Option<&Path>) -> Option<PathBuf> {
        if let Some(f) = &self.fixed {
            return f.clone();
        }
        match path {
            Some(p) => self.finder.for_file(p),
            None => self.run.clone(),
        }
    }

    /// The run's options: the command line over the run's configuration, and that
    /// configuration's settings. Its problems are the run's: they are returned, to be
    /// printed with exit status 2.
    pub fn run_args(&mut self) -> Result<(MigrateArgs, Arc<Settings>), Vec<String>> {
        let run = self.run.clone();
        let settings = self
            .resolve(run.as_deref())
            .map_err(|e| e.iter().map(ToString::to_string).collect::<Vec<_>>())?;
        self.resolved.insert(run, Ok(settings.clone()));
        let args = self.parse(&settings.config_args).map_err(|e| vec![e])?;
        Ok((args, settings))
    }

    /// The settings of configuration `config` (None: none), resolved on first use. A
    /// broken configuration's problems go to [`Configs::reports`] once.
    pub fn get(&mut self, config: Option<PathBuf>) -> Result<Arc<Settings>, Arc<Broken>> {
        if let Some(r) = self.resolved.get(&config) {
            return r.clone();
        }
        let r = self.resolve(config.as_deref()).map_err(|errors| {
            let tables = Tables::builtin();
            self.reports
                .extend(errors.iter().map(|e| located(&tables, e)));
            Arc::new(Broken {
                config: config.as_deref().map(config::display).unwrap_or_default(),
            })
        });
        self.resolved.insert(config, r.clone());
        r
    }

    fn resolve(&mut self, path: Option<&Path>) -> Result<Arc<Settings>, Vec<FileError>> {
        let shown = path.map(config::display);
        let setup = self.setup(path)?;
        let (config_args, mut layers, per_file) = setup
            .config
            .as_ref()
            .map(|c| (c.args.clone(), c.selection_layers(), c.per_file_ignores()))
            .unwrap_or_default();
        let whole = |message: String| {
            vec![FileError::whole(
                shown.as_deref().unwrap_or("acc2omp"),
                id::CONFIG_FILE,
                message,
            )]
        };
        let a = self.parse(&config_args).map_err(whole)?;
        let tables = Arc::new(setup.tables);
        let ids: Vec<&str> = tables.diagnostics.iter().map(|r| r.id.as_str()).collect();
        // The configuration's own rule ids first: an unknown one on the command line is the
        // command line's error, not the configuration's.
        Selection::resolve(&layers, &ids).map_err(|e| whole(e.join("; ")))?;
        layers.push(self.cli_selection.clone());
        let selection = Selection::resolve(&layers, &ids).map_err(|e| {
            let e: Vec<String> = e.iter().map(|m| format!("--{m}")).collect();
            vec![FileError::whole("acc2omp", id::COMMAND_LINE, e.join("; "))]
        })?;
        let per_file_ignores =
            PerFileIgnores::new(&per_file, &ids).map_err(|e| whole(e.join("; ")))?;
        if let Some(p) = &a.compile_commands
            && !self.cli_database
            && !crate::semantic::compile_commands_path(p).is_file()
        {
            return Err(whole(format!(
                "-p {}: no compile_commands.json there",
                p.display()
            )));
        }
        if let Some(c) = &setup.config
            && c.extends.is_none()
            && a.compile_commands.is_none()
        {
            self.report_lost_database(c, &tables);
        }
        // Options of the whole run set where they do not apply.
        if let Some(c) = &setup.config
            && path != self.run.as_deref()
        {
            let index = LineIndex::new(&c.text);
            let run = self.run.as_deref().map_or_else(
                || "--config FILE, or the acc2omp.toml of the current directory or a parent; there is none".to_string(),
                config::display,
            );
            for (_, span) in c
                .options
                .iter()
                .filter(|(id, _)| !PER_FILE.contains(&id.as_str()))
            {
                let key = &c.text[span.clone()];
                let mut d = Diagnostic::new(
                    span.start,
                    id::CONFIG_RUN_OPTION,
                    format!(
                        "`{key}` applies to the whole run, so it is read only from the run's configuration ({run}); it is ignored here"
                    ),
                );
                d.rate(&tables);
                d.end = Some(span.end);
                self.reports.push(Located::from(&c.display, &index, &d));
            }
        }
        let mut notes = setup.notes;
        match (path, &self.fixed) {
            (None, None) => notes.push(format!("config: no {} found", config::FILE_NAME)),
            (None, Some(_)) => notes.push("config: none (--no-config)".to_string()),
            _ => {}
        }
        self.notes.append(&mut notes);
        Ok(Arc::new(Settings {
            config: shown,
            opts: Options {
                profile: a.profile,
                omp_version: a.omp_version,
                assume_independent: a.assume_independent,
                keep_openacc_guards: a.keep_openacc_guards,
                device_type: a.device_type.clone(),
                emit: a.emit,
                tables,
            },
            sem: SemanticConfig {
                no_clang: a.no_clang,
                compile_commands: a.compile_commands.clone(),
                isolate: true,
            },
            selection,
            per_file_ignores,
            config_args,
            fingerprint: Default::default(),
        }))
    }

    /// A configuration that does not extend its parent loses the parent's `compile-commands`
    /// (configurations are not merged): a note says so, since its files then lose facts.
    fn report_lost_database(&mut self, c: &config::Config, tables: &Tables) {
        let Some(parent) = c.dir.parent().and_then(|d| self.finder.nearest(d)) else {
            return;
        };
        let Ok(p) = config::load(&parent, &options(), NOT_CONFIGURABLE) else {
            return;
        };
        // Its options as arguments, with those of what it extends: `-p` is the database.
        if !p.args.iter().any(|a| a == "-p") {
            return;
        }
        let shown = config::display(&parent);
        let rel = pathdiff(&parent, &c.dir);
        let mut d = Diagnostic::new(
            0,
            id::CONFIG_EXTEND,
            format!(
                "this configuration replaces {shown}, whose `compile-commands` its files therefore do not get (configurations are not merged): add `extend = \"{rel}\"` to keep that configuration's keys, or set `compile-commands` here"
            ),
        );
        d.rate(tables);
        self.reports
            .push(Located::from(&c.display, &LineIndex::new(&c.text), &d));
    }

    fn setup(&self, path: Option<&Path>) -> Result<config::Setup, Vec<FileError>> {
        let req = config::Request {
            rules: self.rules.as_deref(),
            config: path,
        };
        config::setup(&req, &options(), NOT_CONFIGURABLE)
    }

    /// The command line with a configuration's arguments right after `migrate`, so that
    /// the command line's own come later and win.
    fn parse(&self, config_args: &[OsString]) -> Result<MigrateArgs, String> {
        let at = self.argv.len().min(2);
        let mut with = self.argv[..at].to_vec();
        with.extend(config_args.iter().cloned());
        with.extend(self.argv[at..].iter().cloned());
        match Cli::try_parse_from(&with) {
            Ok(Cli {
                cmd: Cmd::Migrate(a),
            }) => Ok(*a),
            Ok(_) => Err("not a migrate command".into()),
            Err(e) => Err(e
                .render()
                .to_string()
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .map(|l| l.trim().trim_start_matches("error: "))
                .collect::<Vec<_>>()
                .join(" ")),
        }
    }
}

/// A configuration or rules file problem as a diagnostic of the run.
fn located(tables: &Tables, e: &FileError) -> Located {
    let (line, column) = e.pos.unwrap_or((1, 1));
    Located {
        line,
        column,
        end: (line, column),
        ..Located::file(tables, &e.path, e.rule, e.message.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_file_options_are_configurable_options() {
        let ids: Vec<String> = options()
            .get_arguments()
            .map(|a| a.get_id().to_string())
            .collect();
        for id in PER_FILE {
            assert!(ids.iter().any(|i| i == id), "{id} is not a migrate option");
            assert!(!NOT_CONFIGURABLE.contains(id), "{id}");
        }
    }
}
