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
    /// The configuration's options as command-line arguments.
    config_args: Vec<OsString>,
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
        let (config_args, layer) = setup
            .config
            .as_ref()
            .map(|c| (c.args.clone(), c.selection.clone()))
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
        let selection = Selection::resolve(&[layer, self.cli_selection.clone()], &ids)
            .map_err(|e| whole(e.join("; ")))?;
        if let Some(p) = &a.compile_commands
            && !self.cli_database
            && !crate::semantic::compile_commands_path(p).is_file()
        {
            return Err(whole(format!(
                "-p {}: no compile_commands.json there",
                p.display()
            )));
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
            config_args,
        }))
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
