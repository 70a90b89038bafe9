//! `acc2omp.toml`, the project configuration, and the tables it gives.
//!
//! Each file has the nearest `acc2omp.toml` in its directory or a parent (see [`Finder`]);
//! configurations are not merged unless one says so, as in ruff: `extend = "../acc2omp.toml"`
//! makes it that configuration with its own keys on top. It holds
//! - default values for `migrate`'s options, under the names of their long flags
//!   (`profile = "loop"`, `assume-independent = true`, …); the command line's flags win;
//! - `rules = "path"`, a rules file (relative to the configuration file);
//! - `exclude`, `extend-exclude` (gitignore-style patterns of paths a walk skips) and
//!   `per-file-ignores`, `extend-per-file-ignores` (pattern → rules not reported there);
//! - inline `[[rule]]`, `[[routine]]`, `[[clause]]` entries, applied after that file.
//!
//! `--rules FILE` on the command line is applied last. See `crate::overrides` for the
//! rules-file format.

use crate::overrides::{self, ARRAYS, FileError, Layer};
use crate::rules::Tables;
use crate::rules::id;
use clap::ArgAction;
use std::collections::HashMap;
use std::ffi::OsString;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::de::{DeTable, DeValue};

pub const FILE_NAME: &str = "acc2omp.toml";
/// The nearest `acc2omp.toml` in `start` or a parent directory.
pub fn discover(start: &Path) -> Option<PathBuf> {
    Finder::default().nearest(start)
}

/// Finds the nearest `acc2omp.toml` of directories, looking at each directory once however
/// many files are in it or below it.
#[derive(Default)]
pub struct Finder {
    /// Absolute directory → its nearest configuration.
    nearest: HashMap<PathBuf, Option<PathBuf>>,
    /// Directory as given → absolute (symbolic links resolved).
    absolute: HashMap<PathBuf, PathBuf>,
}

impl Finder {
    /// The nearest `acc2omp.toml` in `dir` or a parent directory.
    pub fn nearest(&mut self, dir: &Path) -> Option<PathBuf> {
        let abs = match self.absolute.get(dir) {
            Some(a) => a.clone(),
            None => {
                let a = dir
                    .canonicalize()
                    .or_else(|_| std::path::absolute(dir))
                    .unwrap_or_else(|_| dir.to_path_buf());
                self.absolute.insert(dir.to_path_buf(), a.clone());
                a
            }
        };
        let mut unknown = Vec::new();
        let mut found = None;
        for d in abs.ancestors() {
            if let Some(f) = self.nearest.get(d) {
                found = f.clone();
                break;
            }
            unknown.push(d.to_path_buf());
            let p = d.join(FILE_NAME);
            if p.is_file() {
                found = Some(p);
                break;
            }
        }
        for d in unknown {
            self.nearest.insert(d, found.clone());
        }
        found
    }

    /// The configuration of the file (or, for standard input, the would-be file) `path`.
    pub fn for_file(&mut self, path: &Path) -> Option<PathBuf> {
        match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => self.nearest(d),
            _ => self.nearest(Path::new(".")),
        }
    }
}

/// `path` relative to the current directory when it is below it.
pub fn display(path: &Path) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| path.to_path_buf())
        .display()
        .to_string()
}

/// A loaded configuration file.
pub struct Config {
    pub display: String,
    pub text: String,
    /// The directory it is in (its paths and patterns are relative to it).
    pub dir: PathBuf,
    /// `extend = "…"`: the configuration it extends.
    pub extends: Option<Box<Config>>,
    /// `exclude` (None: not set, the extended configuration's apply) and `extend-exclude`.
    pub exclude: Option<Vec<String>>,
    pub extend_exclude: Vec<String>,
    /// `per-file-ignores` (None: not set) and `extend-per-file-ignores`: pattern → rules.
    pub per_file_ignores: Option<Vec<PatternRules>>,
    pub extend_per_file_ignores: Vec<PatternRules>,
    /// `rules = "…"`, resolved, and the span of its value.
    pub rules: Option<(PathBuf, Range<usize>)>,
    /// Command-line arguments for the options it sets (after those of the configuration it
    /// extends), to go before the user's own.
    pub args: Vec<OsString>,
    /// The options it sets: each key's argument id and span.
    pub options: Vec<(String, Range<usize>)>,
    /// It has inline rule tables.
    pub has_tables: bool,
    /// `select`, `extend-select`, `ignore`.
    pub selection: crate::select::Layer,
}

/// Patterns with the directory they are relative to.
pub type Rooted = (PathBuf, Vec<String>);

/// A `per-file-ignores` entry: a path pattern and rule patterns.
pub type PatternRules = (String, Vec<String>);

impl Config {
    /// This configuration and those it extends, the farthest first.
    pub fn chain(&self) -> Vec<&Config> {
        let mut out = vec![self];
        while let Some(p) = &out[out.len() - 1].extends {
            out.push(p);
        }
        out.reverse();
        out
    }

    /// The rule selections of the chain, in the order they apply.
    pub fn selection_layers(&self) -> Vec<crate::select::Layer> {
        self.chain().iter().map(|c| c.selection.clone()).collect()
    }

    /// The `exclude` patterns that apply (the nearest in the chain that sets it), then every
    /// `extend-exclude` of the chain, as ruff combines them.
    pub fn excludes(&self) -> Vec<Rooted> {
        let chain = self.chain();
        let exclude = chain
            .iter()
            .rev()
            .find_map(|c| Some((c.dir.clone(), c.exclude.clone()?)));
        let extend = chain
            .iter()
            .map(|c| (c.dir.clone(), c.extend_exclude.clone()));
        exclude.into_iter().chain(extend).collect()
    }

    /// The `per-file-ignores` that apply, then every `extend-per-file-ignores` of the chain:
    /// (directory, pattern, rules).
    pub fn per_file_ignores(&self) -> Vec<(PathBuf, String, Vec<String>)> {
        let chain = self.chain();
        let own = chain
            .iter()
            .rev()
            .find_map(|c| Some((&c.dir, c.per_file_ignores.as_ref()?)))
            .into_iter()
            .flat_map(|(d, v)| v.iter().map(move |x| (d, x)));
        let extend = chain
            .iter()
            .flat_map(|c| c.extend_per_file_ignores.iter().map(move |x| (&c.dir, x)));
        own.chain(extend)
            .map(|(d, (p, r))| (d.clone(), p.clone(), r.clone()))
            .collect()
    }
}

/// The configuration key of a command-line option: its long name (`omp-version`), else its
/// id in kebab case (`-p` is `compile-commands`).
pub fn key_of(arg: &clap::Arg) -> String {
    arg.get_long()
        .map_or_else(|| arg.get_id().as_str().replace('_', "-"), str::to_string)
}

/// Read the configuration at `path` (and those it extends). `options` is the command whose
/// options it may set, except those whose ids are in `excluded`.
pub fn load(
    path: &Path,
    options: &clap::Command,
    excluded: &[&str],
) -> Result<Config, Vec<FileError>> {
    load_extending(path, options, excluded, &mut Vec::new())
}

/// `load`, `seen` holding the configurations that extend this one (a cycle is an error).
fn load_extending(
    path: &Path,
    options: &clap::Command,
    excluded: &[&str],
    seen: &mut Vec<PathBuf>,
) -> Result<Config, Vec<FileError>> {
    let display = display(path);
    let text = std::fs::read_to_string(path).map_err(|e| {
        vec![FileError::whole(
            &display,
            id::CONFIG_FILE,
            format!("cannot read configuration file: {e}"),
        )]
    })?;
    let dir = path
        .canonicalize()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| path.parent().map_or(PathBuf::from("."), Path::to_path_buf));
    let mut errors = Vec::new();
    let mut config = Config {
        display: display.clone(),
        text: String::new(),
        dir: dir.clone(),
        extends: None,
        exclude: None,
        extend_exclude: Vec::new(),
        per_file_ignores: None,
        extend_per_file_ignores: Vec::new(),
        rules: None,
        args: Vec::new(),
        options: Vec::new(),
        has_tables: false,
        selection: Default::default(),
    };
    {
        let err = |errors: &mut Vec<FileError>, at: usize, message: String| {
            errors.push(FileError::at(&display, &text, at, id::CONFIG_FILE, message));
        };
        let doc = match DeTable::parse(&text) {
            Ok(d) => d.into_inner(),
            Err(e) => {
                let at = e.span().map_or(0, |s| s.start);
                err(&mut errors, at, e.message().trim().to_string());
                return Err(errors);
            }
        };
        let settable: Vec<&clap::Arg> = options
            .get_arguments()
            .filter(|a| {
                !a.is_positional()
                    && !excluded.contains(&a.get_id().as_str())
                    && !matches!(a.get_id().as_str(), "help" | "version")
            })
            .collect();
        let mut keys: Vec<_> = doc.iter().collect();
        keys.sort_by_key(|(k, _)| k.span().start);
        for (k, v) in keys {
            let key: &str = k.get_ref();
            if ARRAYS.contains(&key) {
                config.has_tables = true;
                continue;
            }
            if let Some(field) = SELECTION.iter().find(|k| **k == key) {
                match rule_list(v.get_ref()) {
                    Ok(list) => match *field {
                        "select" => config.selection.select = Some(list),
                        "extend-select" => config.selection.extend_select = list,
                        _ => config.selection.ignore = list,
                    },
                    Err(m) => err(&mut errors, v.span().start, format!("`{key}` {m}")),
                }
                continue;
            }
            if key == "extend" {
                let Some(s) = v.get_ref().as_str() else {
                    let m = "`extend` must be the path of an acc2omp.toml (a string)";
                    err(&mut errors, v.span().start, m.into());
                    continue;
                };
                let target = dir.join(s);
                let real = target.canonicalize().unwrap_or_else(|_| target.clone());
                let target = &real;
                let me = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
                if real == me || seen.contains(&real) {
                    let m = format!(
                        "`extend` makes a cycle: {} extends {}, which leads back here",
                        display,
                        self::display(&real)
                    );
                    err(&mut errors, v.span().start, m);
                    continue;
                }
                seen.push(me);
                let parent = load_extending(target, options, excluded, seen);
                seen.pop();
                match parent {
                    Ok(p) => config.extends = Some(Box::new(p)),
                    Err(mut e) => {
                        let m = format!(
                            "the configuration it extends, {}, has errors",
                            self::display(target)
                        );
                        err(&mut errors, v.span().start, m);
                        errors.append(&mut e);
                    }
                }
                continue;
            }
            if let Some(field) = PATTERNS.iter().find(|k| **k == key) {
                let at = v.span().start;
                if matches!(*field, "exclude" | "extend-exclude") {
                    let list = rule_list(v.get_ref())
                        .map_err(|_| {
                            format!("`{key}` must be a list of paths or patterns (strings)")
                        })
                        .and_then(|l| {
                            let p = crate::exclude::Patterns::new(&[(dir.clone(), l.clone())]);
                            p.map(|_| l).map_err(|e| format!("`{key}`: {e}"))
                        });
                    match list {
                        Ok(l) if *field == "exclude" => config.exclude = Some(l),
                        Ok(l) => config.extend_exclude = l,
                        Err(m) => err(&mut errors, at, m),
                    }
                } else {
                    match pattern_rules(v.get_ref(), &dir, key) {
                        Ok(t) if *field == "per-file-ignores" => config.per_file_ignores = Some(t),
                        Ok(t) => config.extend_per_file_ignores = t,
                        Err((pos, m)) => err(&mut errors, pos.unwrap_or(at), m),
                    }
                }
                continue;
            }
            if key == "rules" {
                match v.get_ref().as_str() {
                    Some(s) => config.rules = Some((dir.join(s), v.span())),
                    None => err(
                        &mut errors,
                        v.span().start,
                        "`rules` must be the path of a rules file (a string)".into(),
                    ),
                }
                continue;
            }
            let Some(arg) = settable.iter().find(|a| key_of(a) == key) else {
                let known: Vec<String> = settable.iter().map(|a| key_of(a)).collect();
                let hint = overrides::suggest(
                    key,
                    known
                        .iter()
                        .map(String::as_str)
                        .chain(["rules", "extend"])
                        .chain(SELECTION)
                        .chain(PATTERNS)
                        .chain(ARRAYS),
                );
                err(
                    &mut errors,
                    k.span().start,
                    format!(
                        "unknown key `{key}`{hint}; {FILE_NAME} takes `extend`, `rules`, `select`, `extend-select`, `ignore`, `exclude`, `extend-exclude`, `per-file-ignores`, `extend-per-file-ignores`, [[rule]], [[routine]] and [[clause]] entries, and {}",
                        known.join(", ")
                    ),
                );
                continue;
            };
            match option_args(arg, &key_of(arg), v.get_ref(), &dir) {
                Ok(mut a) => {
                    config.args.append(&mut a);
                    config.options.push((arg.get_id().to_string(), k.span()));
                }
                Err(m) => err(&mut errors, v.span().start, m),
            }
        }
    }
    config.text = text;
    if let Some(p) = &config.extends {
        // The extended configuration's options come first: this one's win.
        let mut args = p.args.clone();
        args.append(&mut config.args);
        config.args = args;
    }
    if errors.is_empty() {
        Ok(config)
    } else {
        Err(errors)
    }
}

/// Keys holding path patterns, alone or with rules.
const PATTERNS: [&str; 4] = [
    "exclude",
    "extend-exclude",
    "per-file-ignores",
    "extend-per-file-ignores",
];

/// `{ "tests/*.c" = ["implicit-pointer"], … }`, the value of `key`; on error, where and why.
fn pattern_rules(
    v: &DeValue,
    dir: &Path,
    key: &str,
) -> Result<Vec<PatternRules>, (Option<usize>, String)> {
    let DeValue::Table(t) = v else {
        let m = format!(
            "`{key}` must be a table of patterns and rule lists (`\"tests/*.c\" = [\"implicit-pointer\"]`)"
        );
        return Err((None, m));
    };
    let mut out = Vec::new();
    let mut keys: Vec<_> = t.iter().collect();
    keys.sort_by_key(|(k, _)| k.span().start);
    for (k, rules) in keys {
        let pattern = k.get_ref().to_string();
        let at = Some(k.span().start);
        crate::exclude::Patterns::new(&[(dir.to_path_buf(), vec![pattern.clone()])])
            .map_err(|e| (at, format!("`{key}`: {e}")))?;
        let list = rule_list(rules.get_ref()).map_err(|m| {
            (
                Some(rules.span().start),
                format!("`{key}`: `{pattern}` {m}"),
            )
        })?;
        out.push((pattern, list));
    }
    Ok(out)
}

/// Keys holding lists of rule patterns (see `crate::select`).
const SELECTION: [&str; 3] = ["select", "extend-select", "ignore"];

/// `["a", "b"]`, or one string.
fn rule_list(v: &DeValue) -> Result<Vec<String>, String> {
    let bad = || "must be a list of rule ids (strings)".to_string();
    match v {
        DeValue::String(s) => Ok(vec![s.to_string()]),
        DeValue::Array(a) => a
            .iter()
            .map(|x| x.get_ref().as_str().map(str::to_string).ok_or_else(bad))
            .collect(),
        _ => Err(bad()),
    }
}

/// The command-line arguments for setting `arg` to `value`, checked by the option's own
/// value parser.
fn option_args(
    arg: &clap::Arg,
    key: &str,
    value: &DeValue,
    dir: &Path,
) -> Result<Vec<OsString>, String> {
    let flag = match (arg.get_long(), arg.get_short()) {
        (Some(l), _) => format!("--{l}"),
        (None, Some(s)) => format!("-{s}"),
        (None, None) => return Err(format!("`{key}` cannot be set here")),
    };
    match arg.get_action() {
        ArgAction::SetTrue => match value.as_bool() {
            Some(true) => Ok(vec![flag.into()]),
            Some(false) => Ok(vec![]),
            None => Err(format!("`{key}` must be true or false")),
        },
        ArgAction::Set => {
            let text = match value {
                DeValue::String(s) => s.to_string(),
                DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
                    .map_err(|e| format!("`{key}`: {e}"))?
                    .to_string(),
                DeValue::Float(f) => f.as_str().to_string(),
                _ => {
                    return Err(format!(
                        "`{key}` takes a value (a string), not {}",
                        value.type_str()
                    ));
                }
            };
            let is_path = arg.get_value_names().is_some_and(|n| {
                n.iter()
                    .any(|n| ["FILE", "DIR", "PATH"].contains(&n.as_str()))
            });
            let mut value = OsString::from(&text);
            if is_path {
                value = dir.join(&text).into_os_string();
            }
            // The option's own parser says whether the value is valid.
            let probe = clap::Command::new(FILE_NAME)
                .no_binary_name(true)
                .arg(arg.clone().required(false));
            let args: Vec<OsString> = if arg.get_long().is_some() {
                let mut a = OsString::from(format!("{flag}="));
                a.push(&value);
                vec![a]
            } else {
                vec![flag.into(), value]
            };
            if let Err(e) = probe.try_get_matches_from(&args) {
                let rendered = e.render().to_string();
                let msg: Vec<&str> = rendered
                    .lines()
                    .take_while(|l| !l.trim().is_empty())
                    .map(|l| l.trim().trim_start_matches("error: "))
                    .collect();
                return Err(format!("`{key}`: {}", msg.join(" ")));
            }
            Ok(args)
        }
        _ => Err(format!("`{key}` cannot be set in {FILE_NAME}")),
    }
}

/// Where the tables come from.
pub struct Request<'a> {
    /// `--rules FILE`.
    pub rules: Option<&'a Path>,
    /// The configuration file, if any.
    pub config: Option<&'a Path>,
}

/// The outcome: the merged tables, the configuration read, and lines for `-v`.
pub struct Setup {
    pub tables: Tables,
    pub config: Option<Config>,
    pub notes: Vec<String>,
}

/// Read the configuration and the rules files; merge the tables.
pub fn setup(
    req: &Request,
    options: &clap::Command,
    excluded: &[&str],
) -> Result<Setup, Vec<FileError>> {
    let mut notes = Vec::new();
    let config = req.config.map(|p| load(p, options, excluded)).transpose()?;
    // (path as shown, text, is the configuration)
    let mut files: Vec<(String, String, bool)> = Vec::new();
    if let Some(config) = &config {
        let chain = config.chain();
        let names: Vec<&str> = chain.iter().map(|c| c.display.as_str()).collect();
        match &names[..] {
            [one] => notes.push(format!("config: {one}")),
            [first @ .., last] => {
                notes.push(format!("config: {last} (extends {})", first.join(", ")))
            }
            [] => {}
        }
        // The extended configurations' tables first: each one's own apply over them.
        for c in chain {
            if let Some((p, span)) = &c.rules {
                match std::fs::read_to_string(p) {
                    Ok(t) => files.push((display(p), t, false)),
                    Err(e) => {
                        return Err(vec![FileError::at(
                            &c.display,
                            &c.text,
                            span.start,
                            id::CONFIG_FILE,
                            format!("cannot read rules file {}: {e}", display(p)),
                        )]);
                    }
                }
            }
            if c.has_tables {
                files.push((c.display.clone(), c.text.clone(), true));
            }
        }
    }
    if let Some(p) = req.rules {
        let shown = p.display().to_string();
        match std::fs::read_to_string(p) {
            Ok(t) => files.push((shown, t, false)),
            Err(e) => {
                return Err(vec![FileError::whole(
                    &shown,
                    id::RULES_FILE,
                    format!("cannot read rules file: {e}"),
                )]);
            }
        }
    }
    let layers: Vec<Layer> = files
        .iter()
        .map(|(path, text, in_config)| Layer {
            path: path.clone(),
            text,
            in_config: *in_config,
        })
        .collect();
    let (tables, mut applied) = overrides::apply(&layers)?;
    notes.append(&mut applied);
    Ok(Setup {
        tables,
        config,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, Command};

    fn options() -> Command {
        Command::new("migrate")
            .arg(Arg::new("paths").num_args(1..))
            .arg(
                Arg::new("profile")
                    .long("profile")
                    .value_parser(["default", "loop"]),
            )
            .arg(Arg::new("fast").long("fast").action(ArgAction::SetTrue))
            .arg(
                Arg::new("jobs")
                    .short('j')
                    .long("jobs")
                    .value_parser(clap::value_parser!(usize)),
            )
            .arg(Arg::new("compile_commands").short('p').value_name("DIR"))
            .arg(Arg::new("diff").long("diff").action(ArgAction::SetTrue))
    }

    fn write(dir: &Path, text: &str) -> PathBuf {
        let p = dir.join(FILE_NAME);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn options_become_arguments() {
        let d = tempfile::tempdir().unwrap();
        let p = write(
            d.path(),
            "profile = \"loop\"\nfast = true\njobs = 3\ncompile-commands = \"build\"\n[[rule]]\nid = \"x\"\n",
        );
        let c = load(&p, &options(), &["diff"]).unwrap_or_else(|e| panic!("{e:?}"));
        let dir = p.canonicalize().unwrap().parent().unwrap().to_path_buf();
        let args: Vec<String> = c
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args,
            [
                "--profile=loop".to_string(),
                "--fast".into(),
                "--jobs=3".into(),
                "-p".into(),
                dir.join("build").display().to_string()
            ]
        );
        assert!(c.has_tables && c.rules.is_none());
        let c = load(
            &write(d.path(), "fast = false\nrules = \"r.toml\"\n"),
            &options(),
            &[],
        )
        .unwrap();
        assert!(c.args.is_empty());
        assert_eq!(c.rules.unwrap().0, dir.join("r.toml"));
    }

    #[test]
    fn bad_keys_and_values_are_positioned() {
        let d = tempfile::tempdir().unwrap();
        let errs = |text: &str| -> Vec<String> {
            let p = write(d.path(), text);
            match load(&p, &options(), &["diff"]) {
                Ok(_) => panic!("accepted {text}"),
                Err(e) => e
                    .iter()
                    .map(|e| {
                        let s = e.to_string();
                        s[s.find(FILE_NAME).unwrap()..].to_string()
                    })
                    .collect(),
            }
        };
        let e = errs("profil = \"loop\"\n");
        assert!(
            e[0].starts_with(
                "acc2omp.toml:1:1: error: unknown key `profil` (did you mean 'profile'?)"
            ),
            "{e:?}"
        );
        assert!(e[0].ends_with("[config-file]"), "{e:?}");
        let e = errs("\nprofile = \"fast\"\n");
        assert!(
            e[0].starts_with("acc2omp.toml:2:11: error: `profile`: invalid value 'fast'"),
            "{e:?}"
        );
        assert!(e[0].contains("default, loop"), "{e:?}");
        let e = errs("fast = \"yes\"\n");
        assert!(
            e[0].starts_with("acc2omp.toml:1:8: error: `fast` must be true or false"),
            "{e:?}"
        );
        let e = errs("jobs = -2\n");
        assert!(
            e[0].starts_with("acc2omp.toml:1:8: error: `jobs`: invalid value '-2'"),
            "{e:?}"
        );
        let e = errs("diff = true\n");
        assert!(e[0].contains("unknown key `diff`"), "{e:?}");
        let e = errs("rules = 3\n");
        assert!(e[0].contains("`rules` must be the path"), "{e:?}");
        let e = errs("profile = [\n");
        assert!(e[0].starts_with("acc2omp.toml:"), "{e:?}");
    }

    #[test]
    fn each_directory_has_its_nearest_configuration() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/b/n")).unwrap();
        std::fs::create_dir_all(root.join("a/c")).unwrap();
        let a = write(&root.join("a"), "");
        let n = write(&root.join("a/b/n"), "");
        assert_eq!(discover(&root.join("a/b")), Some(a.clone()));
        let mut f = Finder::default();
        assert_eq!(f.for_file(&root.join("a/b/n/x.c")), Some(n.clone()));
        assert_eq!(f.for_file(&root.join("a/b/y.c")), Some(a.clone()));
        assert_eq!(f.for_file(&root.join("a/c/new.c")), Some(a.clone()));
        assert_eq!(f.for_file(&root.join("z.c")), discover(&root));
        // Remembered: a configuration added now is not seen by this finder.
        write(&root.join("a/c"), "");
        assert_eq!(f.nearest(&root.join("a/c")), Some(a));
        assert_eq!(
            Finder::default().nearest(&root.join("a/c")),
            Some(root.join("a/c").join(FILE_NAME))
        );
    }
}
