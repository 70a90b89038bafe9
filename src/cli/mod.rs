//! The `acc2omp` command line.

mod args;
mod man;
mod migrate;
mod pipe;
mod settings;

use crate::config;
use args::{Cli, Cmd, ConfigArgs, MigrateArgs, NOT_CONFIGURABLE};
use clap::{Args, CommandFactory, Parser};
use std::ffi::OsString;
use std::path::PathBuf;

/// Read the configuration of the current directory (or `--config`) and the rules files and
/// merge the tables; None after printing why not.
fn setup(c: &ConfigArgs) -> Option<config::Setup> {
    let found = match (&c.config, c.no_config) {
        (_, true) => None,
        (Some(p), _) => Some(p.clone()),
        (None, false) => config::discover(&cwd()),
    };
    let req = config::Request {
        rules: c.rules.as_deref(),
        config: found.as_deref(),
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
    Some(setup)
}

/// Write a command's output; the exit status (2 when it cannot be written).
fn print(bytes: &[u8]) -> i32 {
    match pipe::write(&mut std::io::stdout().lock(), bytes) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("acc2omp: cannot write to standard output: {e}");
            2
        }
    }
}

fn cwd() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
}

pub fn main() -> i32 {
    pipe::quiet_on_closed_streams();
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
            let mut configs = settings::Configs::new(&argv, &a);
            let (mut run, run_settings) = match configs.run_args() {
                Ok(r) => r,
                Err(errors) => {
                    for e in errors {
                        eprintln!("{e}");
                    }
                    return 2;
                }
            };
            if run.paths.is_empty() {
                run.paths.push(PathBuf::from("."));
            }
            migrate::run(run, &run_settings, configs)
        }
        Cmd::Rules(c) => {
            let Some(setup) = setup(&c) else {
                return 2;
            };
            let t = &setup.tables;
            let w = t.diagnostics.iter().map(|r| r.id.len()).max().unwrap_or(0);
            let mut out = String::new();
            for r in &t.diagnostics {
                let line = format!("{:<w$}  {:<7}  {}\n", r.id, r.severity.as_str(), r.summary);
                out.push_str(&line);
            }
            print(out.as_bytes())
        }
        Cmd::Explain { id, cfg } => {
            let Some(setup) = setup(&cfg) else {
                return 2;
            };
            let t = &setup.tables;
            let bare = id.strip_prefix("acc2omp-").unwrap_or(&id);
            match t.diagnostic(bare) {
                Some(r) => print(crate::output::explain(r).as_bytes()),
                None => {
                    let hint =
                        crate::select::suggest(bare, t.diagnostics.iter().map(|r| r.id.as_str()));
                    eprintln!("acc2omp: unknown rule '{id}'{hint} (see `acc2omp rules`)");
                    2
                }
            }
        }
        Cmd::Completions { shell } => {
            let mut cmd = Cli::command();
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut cmd, "acc2omp", &mut out);
            print(&out)
        }
        Cmd::Clean {
            cache_dir,
            config,
            no_config,
        } => {
            // As `migrate` finds it: the command line, the configuration, the environment.
            let configured = || {
                let c = ConfigArgs {
                    rules: None,
                    config: config.clone(),
                    no_config,
                };
                let setup = setup(&c)?;
                setup.config?.args.iter().find_map(|a| {
                    let a = a.to_str()?;
                    a.strip_prefix("--cache-dir=").map(PathBuf::from)
                })
            };
            let dir = cache_dir
                .or_else(configured)
                .or_else(|| std::env::var_os("ACC2OMP_CACHE_DIR").map(PathBuf::from))
                .or_else(crate::cache::default_dir);
            let Some(dir) = dir else {
                eprintln!("acc2omp: no cache directory: HOME is not set (use --cache-dir)");
                return 2;
            };
            match crate::cache::clean(&dir) {
                Ok(true) => {
                    eprintln!("acc2omp: removed the cache in {}", dir.display());
                    0
                }
                Ok(false) => {
                    eprintln!("acc2omp: no cache in {}", dir.display());
                    0
                }
                Err(e) => {
                    eprintln!("acc2omp: cannot remove the cache in {}: {e}", dir.display());
                    2
                }
            }
        }
        Cmd::Man => match man::page() {
            Ok(out) => print(&out),
            Err(e) => {
                eprintln!("acc2omp: cannot render the manual page: {e}");
                2
            }
        },
    }
}
