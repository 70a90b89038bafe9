//! The `acc2omp` command line.

mod args;
mod migrate;
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
            let status = migrate::run(run, &run_settings, configs);
            // Every child process (libclang workers) is waited for before the process ends.
            crate::semantic::stop_children();
            status
        }
        Cmd::Rules(c) => {
            let Some(setup) = setup(&c) else {
                return 2;
            };
            let t = &setup.tables;
            let w = t.diagnostics.iter().map(|r| r.id.len()).max().unwrap_or(0);
            for r in &t.diagnostics {
                println!("{:<w$}  {:<7}  {}", r.id, r.severity.as_str(), r.summary);
            }
            0
        }
        Cmd::Explain { id, cfg } => {
            let Some(setup) = setup(&cfg) else {
                return 2;
            };
            let t = &setup.tables;
            let bare = id.strip_prefix("acc2omp-").unwrap_or(&id);
            match t.diagnostic(bare) {
                Some(r) => {
                    print!("{}", crate::output::explain(r));
                    0
                }
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
            clap_complete::generate(shell, &mut cmd, "acc2omp", &mut std::io::stdout());
            0
        }
        Cmd::Man => {
            let man = clap_mangen::Man::new(Cli::command());
            let mut out = Vec::new();
            if let Err(e) = man.render(&mut out) {
                eprintln!("acc2omp: cannot render the manual page: {e}");
                return 2;
            }
            // The subcommands' options, each as a section.
            for sub in Cli::command().get_subcommands() {
                let page = clap_mangen::Man::new(sub.clone());
                let mut section = Vec::new();
                if page.render_options_section(&mut section).is_ok() && !section.is_empty() {
                    out.extend_from_slice(
                        format!(".SH \"{} OPTIONS\"\n", sub.get_name().to_uppercase()).as_bytes(),
                    );
                    // Drop the section's own `.SH OPTIONS` header.
                    let text = String::from_utf8_lossy(&section);
                    let body = text.split_once('\n').map_or("", |x| x.1);
                    out.extend_from_slice(body.as_bytes());
                }
            }
            use std::io::Write;
            let _ = std::io::stdout().write_all(&out);
            0
        }
    }
}
