//! The command line's grammar.

use crate::options::Emit;
use crate::profile::{OmpVersion, Profile};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "acc2omp",
    version,
    about = "Migrate OpenACC C/C++ sources to OpenMP offload"
)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Subcommand)]
pub enum Cmd {
    /// Translate the OpenACC in files and directories.
    // An option given twice takes its last value: acc2omp.toml's options come first.
    #[command(args_override_self = true)]
    Migrate(Box<MigrateArgs>),
    /// List every diagnostic rule id.
    Rules(ConfigArgs),
    /// Explain one rule, with an example.
    Explain {
        id: String,
        #[command(flatten)]
        cfg: ConfigArgs,
    },
    /// Print a shell completion script (e.g. `acc2omp completions bash > /etc/bash_completion.d/acc2omp`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff; e.g. `acc2omp man > ~/.local/share/man/man1/acc2omp.1`).
    Man,
    /// Remove the result cache.
    Clean {
        /// The cache directory (default: acc2omp.toml's `cache-dir`, else $ACC2OMP_CACHE_DIR,
        /// else $XDG_CACHE_HOME/acc2omp or ~/.cache/acc2omp).
        #[arg(long, value_name = "DIR")]
        cache_dir: Option<PathBuf>,
        /// Use this configuration file instead of the nearest acc2omp.toml.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Do not read any acc2omp.toml.
        #[arg(long, conflicts_with = "config")]
        no_config: bool,
    },
}

/// Where the rule tables and default options come from.
#[derive(Args)]
pub struct ConfigArgs {
    /// A rules file merged over the built-in tables (after acc2omp.toml's).
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Use this configuration file instead of the nearest acc2omp.toml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Do not read any acc2omp.toml.
    #[arg(long, conflicts_with = "config")]
    pub no_config: bool,
}

/// How diagnostics are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum OutputFormat {
    /// `path:line:col: severity: message [rule]` and the source line with a caret.
    #[default]
    Text,
    /// The diagnostic lines only.
    Concise,
    /// One JSON document (docs/json-output.md).
    Json,
    /// One JSON object per diagnostic and line.
    JsonLines,
    /// SARIF 2.1.0.
    Sarif,
    /// GitHub Actions annotations (`::warning file=…`).
    Github,
}

impl OutputFormat {
    /// Written to standard output (the text formats go to standard error).
    pub fn for_machines(self) -> bool {
        !matches!(self, OutputFormat::Text | OutputFormat::Concise)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Color {
    /// On a terminal, unless NO_COLOR is set.
    #[default]
    Auto,
    Always,
    Never,
}

/// `migrate` options an acc2omp.toml cannot set (by id). `select`, `ignore` and
/// `extend_select` are read by the configuration itself, as lists.
pub const NOT_CONFIGURABLE: &[&str] = &[
    "paths",
    "diff",
    "write",
    "check",
    "stdin_filename",
    "rules",
    "config",
    "no_config",
    "select",
    "ignore",
    "extend_select",
    "report",
    "output_file",
    "export_fixes",
    "export_diagnostics",
    // A repository's configuration must not raise what protects the machine running it.
    "max_file_size",
    "max_memory",
];

/// `migrate` options (by id) that follow the file: each file takes them from its nearest
/// acc2omp.toml, as it takes `rules`, `select`, `extend-select`, `ignore` and the rules-file
/// entries. The other configurable options belong to the whole run (see `settings`).
pub const PER_FILE: &[&str] = &[
    "profile",
    "omp_version",
    "assume_independent",
    "keep_openacc_guards",
    "device_type",
    "emit",
    "no_clang",
    "compile_commands",
];

#[derive(Args)]
pub struct MigrateArgs {
    /// Files or directories (default: the current directory); `-` reads standard input.
    pub paths: Vec<PathBuf>,
    /// Print a unified diff (git apply accepts it); exit 1 if anything would change.
    #[arg(long, group = "mode")]
    pub diff: bool,
    /// Rewrite files in place, atomically.
    #[arg(long, visible_alias = "in-place", group = "mode")]
    pub write: bool,
    /// List files that would change; exit 1 if any.
    #[arg(long, group = "mode")]
    pub check: bool,
    /// Mapping profile.
    #[arg(long, value_enum, default_value_t = Profile::Default)]
    pub profile: Profile,
    /// Highest OpenMP version the output may use.
    #[arg(long, value_enum, default_value_t = OmpVersion::V50)]
    pub omp_version: OmpVersion,
    /// Treat `kernels` loops of unknown independence as independent.
    #[arg(long)]
    pub assume_independent: bool,
    /// Keep `#include <openacc.h>` and `_OPENACC` tests (dual-build guards) unchanged.
    #[arg(long)]
    pub keep_openacc_guards: bool,
    /// How the translation is written: omp (the OpenMP translation), omp-acc (OpenMP, the
    /// original OpenACC after it as comments), acc-omp (OpenACC, its translation after it as
    /// comments) or dual (both, under `#ifdef _OPENACC`).
    #[arg(long, value_enum, value_name = "MODE", default_value_t = Emit::Omp)]
    pub emit: Emit,
    /// Device type whose `device_type(…)` clauses apply (e.g. nvidia, radeon, host);
    /// default: none, only `device_type(*)` clauses apply.
    #[arg(long, value_name = "NAME", value_parser = parse_device_type)]
    pub device_type: Option<String>,
    /// Name used for standard input in messages.
    #[arg(long, default_value = "<stdin>")]
    pub stdin_filename: String,
    /// Worker threads (default: all cores, at least 2).
    #[arg(short = 'j', long)]
    pub jobs: Option<usize>,
    /// Hide notes, the summary and hints.
    #[arg(short, long)]
    pub quiet: bool,
    /// Report only these rules (ids, globs such as `runtime-*`, or ALL; comma-separated).
    #[arg(long, value_name = "RULE", value_delimiter = ',')]
    pub select: Option<Vec<String>>,
    /// Report these rules too, on top of the selection.
    #[arg(long, value_name = "RULE", value_delimiter = ',')]
    pub extend_select: Vec<String>,
    /// Do not report these rules.
    #[arg(long, value_name = "RULE", value_delimiter = ',')]
    pub ignore: Vec<String>,
    /// How diagnostics are written: text and concise to standard error, the others to
    /// standard output (or --output-file).
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,
    /// Write the diagnostics to this file instead.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// Colour the text output.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    pub color: Color,
    /// Print how many diagnostics each rule has instead of the diagnostics.
    #[arg(long)]
    pub statistics: bool,
    /// Exit 0 even when errors are reported or files would change (2 still means failure).
    #[arg(long)]
    pub exit_zero: bool,
    /// Write a migration report (Markdown, or HTML when FILE ends in .html).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Deprecated: use `--output-format json --output-file FILE`. Writes the diagnostics as a
    /// JSON array of {path, line, column, severity, rule, message}.
    #[arg(long, value_name = "FILE")]
    pub export_diagnostics: Option<PathBuf>,
    /// Also write the changes as clang-tidy fixes (YAML for clang-apply-replacements).
    #[arg(long, value_name = "FILE")]
    pub export_fixes: Option<PathBuf>,
    /// Do not use libclang (C, C++) or flang (Fortran): facts about types and statements come
    /// from syntax alone.
    #[arg(long, conflicts_with = "require_clang")]
    pub no_clang: bool,
    /// Fail (exit 2) when libclang cannot be loaded or a directive's facts fall back to syntax.
    #[arg(long)]
    pub require_clang: bool,
    /// The compile_commands.json to take flags from, or its directory (default: searched in
    /// the parent directories of each file).
    #[arg(short = 'p', value_name = "PATH")]
    pub compile_commands: Option<PathBuf>,
    /// Largest file translated, in MiB: memory use grows with a file's size (up to about 120
    /// bytes per byte of a file dense in directives); a larger file is skipped with a
    /// `file-too-large` error. Only the command line sets it.
    #[arg(long, value_name = "MIB", default_value_t = 32)]
    pub max_file_size: u64,
    /// Most memory the run may hold, in MiB (default: half of the memory of the machine, or
    /// of its control group where that is less): a file whose translation needs more is
    /// skipped with a `file-too-large` error, the others are translated. Only the command
    /// line sets it.
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_memory: Option<u64>,
    /// Print which configuration and rules files are used and how each file was analyzed
    /// (libclang or syntactic, and why).
    #[arg(short, long)]
    pub verbose: bool,
    /// Leave out the files named on the command line that `exclude` patterns match, as a
    /// walk leaves them out (for pre-commit, which names files).
    #[arg(long)]
    pub force_exclude: bool,
    /// Neither read nor write the result cache: translate every file again.
    #[arg(long, env = "ACC2OMP_NO_CACHE", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_cache: bool,
    /// Where the result cache is kept (default: $XDG_CACHE_HOME/acc2omp, else
    /// ~/.cache/acc2omp).
    #[arg(long, value_name = "DIR", env = "ACC2OMP_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    #[command(flatten)]
    pub cfg: ConfigArgs,
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
