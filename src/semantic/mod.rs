//! The semantic layer: facts about each directive's statement, loops and variables, from
//! libclang when it can be loaded (at run time, optional) and from syntax otherwise.
//!
//! One parse per file that has OpenACC, with `-D_OPENACC` and `-D_OPENMP` and a virtual
//! `openacc.h` (and `omp.h` where none is installed); flags from `compile_commands.json`. Pragmas are not in libclang's AST, so a
//! directive is tied to the first statement after it, and only when nothing but preprocessor
//! lines separate them and libclang and our own reading agree on that statement. Otherwise
//! the directive's facts come from syntax, with a warning.

use crate::rules::id;

pub(crate) mod children;
mod clang;
mod clause_names;
mod collapse_count;
#[cfg(test)]
mod dependence_tests;
mod flags;
mod include_guess;
mod load;
mod omp_h;
mod openacc;
mod routine_data;
mod syntactic;
pub(crate) mod wire;
mod worker;

// The facts are their own module, which the translation reads without depending on this one.
pub use crate::c::lang::{base_name, identifiers};
use crate::facts;
pub use children::stop_all as stop_children;
pub use facts::{FileFacts, Inputs, LoopShape, Mode, RegionVar, SiteFacts, VarKind, VarType};
pub use flags::{
    check as check_compile_commands, database_for as compile_commands_for,
    database_path as compile_commands_path, flags_for as compile_flags_for,
    present as compile_commands_present,
};
pub use worker::serve_if_requested as serve_worker_if_requested;

use crate::diag::Diagnostic;
use crate::directive::{
    Directive, Item, LIFETIME_CLAUSES, literal_bound_possible, negative_literal,
    positive_literal_bound, section_bounds,
};
use crate::hash::HashMap;
use crate::region::ForLoop;
use crate::structure::Structure;
use crate::unit::Unit;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// How to obtain facts.
#[derive(Debug, Clone, Default)]
pub struct SemanticConfig {
    /// Never load libclang (`--no-clang`).
    pub no_clang: bool,
    /// `compile_commands.json` or its directory (`-p`); default: search parents.
    pub compile_commands: Option<PathBuf>,
    /// Parse in a worker process (this executable, see `worker`), so that a crash or hang
    /// of libclang costs one file its facts, not the run. The command line sets it.
    pub isolate: bool,
}

impl SemanticConfig {
    pub fn syntactic() -> Self {
        SemanticConfig {
            no_clang: true,
            ..Default::default()
        }
    }
}

/// What the analysis needs to know about one directive site (borrowed from the unit: a
/// file of 100,000 sites would hold copies of their names and loops while it is analyzed).
#[derive(Debug, Clone)]
pub struct SiteInput<'a> {
    /// The directive's canonical name.
    pub name: &'a str,
    pub start: usize,
    /// End of the directive (the site's span).
    pub end: usize,
    pub last_token: Option<usize>,
    /// The statement our syntactic reading ties the directive to.
    pub stmt: Option<Range<usize>>,
    pub stmt_toks: Option<Range<usize>>,
    pub for_loop: Option<&'a ForLoop>,
    /// Collect the variables the statement uses that are declared outside it: compute
    /// constructs, and loops inside them (for the dependence test).
    pub vars: bool,
    pub is_loop: bool,
    /// Names whose types the directive's clauses need.
    pub names: Vec<String>,
}

fn names_of(d: &Directive) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: crate::hash::HashSet<&str> = Default::default();
    for c in &d.clauses {
        let items: Vec<&str> = match c.name.as_str() {
            "private" | "firstprivate" | "reduction" => {
                c.items().filter_map(|i| base_name(&i.text)).collect()
            }
            "num_workers" | "vector_length" => {
                c.items().flat_map(|i| identifiers(&i.text)).collect()
            }
            // A bare pointer in a data clause names the pointer, not its target; `use_device`
            // needs to know pointers from arrays.
            n if LIFETIME_CLAUSES.contains(&n)
                || matches!(n, "self" | "host" | "device" | "use_device") =>
            {
                c.items()
                    .filter_map(|i| base_name(&i.text).filter(|n| *n == i.text))
                    .collect()
            }
            _ => continue,
        };
        for n in items {
            if seen.insert(n) {
                out.push(n.to_string());
            }
        }
    }
    // A negative lower bound is valid on pointers only, whether a section of several
    // dimensions is contiguous depends on them, and a literal bound may pass an array's
    // extent (`crate::validate` asks).
    let items = d.clauses.iter().flat_map(|c| c.items());
    for i in items.chain(d.arg.iter().flat_map(|a| a.items.iter())) {
        if !literal_bound_possible(i.text.as_bytes()) {
            continue;
        }
        let whole = Item::new(i.text.clone(), 0..i.text.len());
        let bounds = section_bounds(&i.text, &whole);
        let negative = bounds.iter().any(|(_, lo, _)| negative_literal(lo));
        let read = negative || bounds.len() > 1 || positive_literal_bound(&bounds);
        if let Some(n) = base_name(&i.text).filter(|_| read)
            && seen.insert(n)
        {
            out.push(n.to_string());
        }
    }
    out
}

fn inputs<'u>(unit: &'u Unit) -> Vec<(usize, SiteInput<'u>)> {
    let input = |i: usize| {
        let site = &unit.sites[i];
        let (Some(d), Some(last)) = (unit.dir(i), site.token()) else {
            return None;
        };
        let takes = unit.tables.directive(&d.name).is_some_and(|r| r.stmt);
        let stmt = unit.stmts[i].as_ref().filter(|_| takes);
        Some((
            i,
            SiteInput {
                name: d.name.as_str(),
                start: site.span().start,
                end: site.span().end,
                last_token: Some(last),
                stmt: stmt.map(|s| s.bytes()),
                stmt_toks: stmt.map(|s| s.toks()),
                for_loop: stmt.and_then(|s| s.for_loop.as_ref()),
                vars: d.compute_kind().is_some()
                    || (unit.is_loop(i) && unit.compute_of(i).is_some()),
                is_loop: unit.is_loop(i),
                names: names_of(d),
            },
        ))
    };
    // The sites with an input first, so that the inputs are collected into one vector (a
    // vector of options flattened into a second one held both: 14 MB each for 100,000 sites,
    // a peak the rest of the run kept resident).
    let with_input: Vec<usize> = (0..unit.sites.len())
        .filter(|&i| unit.dir(i).is_some() && unit.sites[i].token().is_some())
        .collect();
    crate::par::map(&with_input, |&i| {
        input(i).expect("a site with a directive and a token has an input")
    })
}

/// Load libclang now (once per process) so that worker threads find it ready; returns the
/// reason when it cannot be loaded.
pub fn preload(cfg: &SemanticConfig) -> Result<String, String> {
    if cfg.no_clang {
        return Err("--no-clang".into());
    }
    load::library()
        .map(|l| {
            let note = l.note.as_ref().map_or(String::new(), |n| format!("; {n}"));
            format!("libclang {} ({}){note}", l.version, l.path.display())
        })
        .map_err(str::to_string)
}

/// What identifies the libclang a run uses, for the result cache's key: its version, file,
/// size and modification time, or why none is used.
pub fn libclang_identity(cfg: &SemanticConfig) -> String {
    if cfg.no_clang {
        return "none: --no-clang".into();
    }
    match load::library() {
        Ok(l) => {
            let stamp = std::fs::metadata(&l.path)
                .ok()
                .map(|m| (m.len(), m.modified().ok()));
            format!(
                "libclang {} {} {:?} {} {stamp:?}",
                l.version,
                l.path.display(),
                l.resource_dir,
                l.openacc()
            )
        }
        Err(why) => format!("none: {why}"),
    }
}

/// A name for the parse when the text has no file: C++ if it looks like C++.
fn virtual_name(src: &str, toks: &[crate::lex::Token]) -> String {
    let cxx = crate::c::lang::looks_like_cxx(src, toks);
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    cwd.join(if cxx {
        "acc2omp-input.cpp"
    } else {
        "acc2omp-input.c"
    })
    .to_string_lossy()
    .into_owned()
}

fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    }
}

/// 1-based line of byte offset `o` (clamped; need not be a character boundary).
pub fn line_of(src: &str, o: usize) -> usize {
    let b = src.as_bytes();
    b[..o.min(b.len())].iter().filter(|&&c| c == b'\n').count() + 1
}

/// A parse's outcome: libclang's identity (version, OpenACC front end) and the parse, or
/// why libclang could not be used.
type ClangParse = Result<((String, bool), Result<clang::Parsed, String>), String>;

/// Facts for every directive of `unit`.
pub fn analyze(
    path: Option<&Path>,
    unit: &Unit,
    structure: &Structure,
    cfg: &SemanticConfig,
) -> FileFacts {
    let facts = analyze_sites(path, unit, structure, cfg);
    // The phase's transient (the sites' inputs, the syntactic model's tables) is freed now,
    // scattered among the facts: a large file hands it back, else the plans take new memory
    // beside it (100,000 directives: 157 -> 146 MiB resident once planned).
    if unit.src.len() >= crate::memory::RELEASE_AFTER {
        crate::memory::release();
    }
    facts
}

/// [`analyze`], its transient memory freed on return.
fn analyze_sites(
    path: Option<&Path>,
    unit: &Unit,
    structure: &Structure,
    cfg: &SemanticConfig,
) -> FileFacts {
    let src = unit.src;
    let toks = structure.toks;
    let inputs = inputs(unit);
    let (user, found_db) = flags::flags_for(
        path.map(absolute).as_deref(),
        cfg.compile_commands.as_deref(),
    );
    let defines: Vec<String> = user
        .iter()
        .filter_map(|f| f.strip_prefix("-D").map(str::to_string))
        .collect();
    let syntax = syntactic::Syntax::with_defines(structure, &defines);
    let mut unresolved = Vec::new();
    let all: Vec<&SiteInput> = inputs.iter().map(|(_, s)| s).collect();
    let starts = || all.iter().map(|s| s.start).collect();
    let syntactic_facts = |need: Option<&[bool]>, unresolved: &mut Vec<String>| -> Vec<SiteFacts> {
        syntactic_site_facts(&syntax, structure, &all, need, unresolved)
    };
    let (mut diags, mut routines_rejected) = routine_data::check(unit, structure, &syntax);
    let (scope_diags, scope_rejected) = routine_data::declare_scopes(unit, &syntax);
    diags.extend(scope_diags);
    routines_rejected.extend(scope_rejected);
    // Decided here in both modes: clang's errors about these directives are not used.
    let (names_diags, names_rejected) = clause_names::check(unit, &syntax, structure, &defines);
    diags.extend(names_diags);
    routines_rejected.extend(names_rejected.iter().copied());
    let first = inputs.first().map_or(0, |(_, s)| s.start);
    let mut read = Inputs::default();
    let special = (!cfg.no_clang)
        .then(|| path.and_then(|p| special_include(src, toks, &absolute(p), &user)))
        .flatten();
    let mode = if cfg.no_clang {
        Mode::Syntactic {
            reason: "--no-clang".into(),
        }
    } else if let Some((at, header, kind)) = special {
        diags.push(Diagnostic::new(
            at,
            id::CLANG_PARSE_ERROR,
            format!(
                "this file includes {}, {kind}, which libclang would wait on or read without end; it is translated from syntax alone",
                header.display()
            ),
        ));
        Mode::Syntactic {
            reason: "an include is not a regular file".into(),
        }
    } else {
        let name = path.map_or_else(
            || virtual_name(src, toks),
            |p| absolute(p).to_string_lossy().into_owned(),
        );
        let parse = |user: &[String]| -> ClangParse {
            if cfg.isolate {
                load::library().map_err(str::to_string).map(|lib| {
                    let args = clang::arguments(lib, &name, user);
                    let id = (lib.version.clone(), lib.openacc());
                    (id, worker::parse(lib, &name, src, &args))
                })
            } else {
                load::with_index(|lib, index| {
                    let args = clang::arguments(lib, &name, user);
                    let id = (lib.version.clone(), lib.openacc());
                    (id, clang::parse(index, &name, src, &args))
                })
            }
        };
        let mut parsed = parse(&user);
        // Headers not found without a compile database: looked for near the file.
        let mut guessed = false;
        let mut better = None;
        if let (false, Some(file), Ok((_, Ok(first)))) = (found_db, path, &parsed)
            && first.missing_include
        {
            let file = absolute(file);
            let mut g = include_guess::guess(&file, &include_guess::missing(&first.errors));
            g.extend(include_guess::guess_in_headers(
                &file,
                &first.header_missing,
            ));
            guessed = !g.is_empty();
            if let Some(more) = g.flags(&user) {
                let again = parse(&more);
                // Errors in the file, and headers its headers did not find.
                let count = |p: &clang::Parsed| p.errors.len() + p.header_missing.len();
                let errors = |p: &ClangParse| p.as_ref().ok()?.1.as_ref().ok().map(count);
                let kept = errors(&again).is_some_and(|n| n < count(first));
                diags.extend(g.notes(&file, kept));
                better = kept.then_some(again);
            } else {
                diags.extend(g.notes(&file, false));
            }
        }
        if let Some(b) = better {
            parsed = b;
        }
        match parsed {
            Err(reason) => Mode::Syntactic { reason },
            Ok((_, Err(e))) => {
                read.incomplete = true;
                diags.push(Diagnostic::new(
                    first,
                    id::CLANG_PARSE_ERROR,
                    format!("libclang could not parse this file ({e}); it is translated from syntax alone"),
                ));
                Mode::Syntactic {
                    reason: "libclang parse failed".into(),
                }
            }
            Ok(((version, openacc), Ok(mut p))) => {
                let mut rejected = routines_rejected;
                if openacc {
                    let v = openacc_verdict(unit, &inputs, &names_rejected, &mut p);
                    diags.extend(v.diags);
                    rejected.extend(v.rejected);
                }
                let mut errored: Vec<(usize, usize, String)> = Vec::new();
                let mut mismatched = 0;
                // Starts of the directives already left unchanged, in file order.
                let unchanged: Vec<usize> = unit
                    .sites
                    .iter()
                    .zip(&unit.dirs)
                    .filter(|(_, d)| d.is_none())
                    .map(|(x, _)| x.span().start)
                    .collect();
                // Libclang's facts, and the sites that keep syntactic ones.
                let mut from_clang: Vec<(usize, SiteFacts)> = Vec::new();
                let mut need = vec![true; all.len()];
                for (k, s) in all.iter().enumerate() {
                    if p.in_skipped(s.start) {
                        continue;
                    }
                    match p.site_facts(src, toks, s) {
                        Ok(f) => {
                            need[k] = false;
                            from_clang.push((s.start, f));
                        }
                        // A region with a directive already left unchanged is left unchanged
                        // too (`crate::validate::enclosing`); clang may build it differently.
                        Err(clang::Rejected::Mismatch(_))
                            if s.stmt.as_ref().is_some_and(|r| {
                                let k = unchanged.partition_point(|&x| x < r.start);
                                unchanged.get(k).is_some_and(|x| r.contains(x))
                            }) => {}
                        Err(clang::Rejected::Mismatch(at)) => {
                            mismatched += 1;
                            let line = |o: usize| unit.line_at(o);
                            let what = match (at, &s.stmt) {
                                (Some(a), Some(st)) if line(a) == line(st.start) => format!(
                                    "libclang's statement after this directive (line {}) ends elsewhere than the syntactic reading's",
                                    line(a)
                                ),
                                (Some(a), Some(st)) => format!(
                                    "libclang ties this directive to the statement at line {}, the syntactic reading to line {}",
                                    line(a),
                                    line(st.start)
                                ),
                                _ => {
                                    "libclang finds no statement right after this directive".into()
                                }
                            };
                            diags.push(Diagnostic::new(
                                s.start,
                                id::CLANG_MISMATCH,
                                format!("{what} (preprocessor conditionals or macros?); it is translated from syntax alone"),
                            ));
                        }
                        Err(clang::Rejected::Errors(at, msg)) => errored.push((s.start, at, msg)),
                    }
                }
                // Their names unresolved are not reported: the file has libclang's facts.
                let facts = syntactic_facts(Some(&need), &mut Vec::new());
                let mut sites = facts::Sites::new(starts(), facts);
                for (start, f) in from_clang {
                    sites.insert(start, f);
                }
                if let Some((site, at, msg)) = errored.first() {
                    let line = unit.line_at(*at);
                    let hint = if found_db {
                        ""
                    } else {
                        "; no compile_commands.json was found (see -p)"
                    };
                    diags.push(Diagnostic::new(
                        *site,
                        id::CLANG_PARSE_ERROR,
                        format!(
                            "libclang reports errors in {} OpenACC region(s) of this file (first: line {line}: {msg}){hint}; they are translated from syntax alone",
                            errored.len()
                        ),
                    ));
                }
                return FileFacts {
                    mode: Mode::Clang { version, openacc },
                    sites,
                    diags,
                    rejected,
                    fell_back: mismatched + errored.len(),
                    inputs: Inputs {
                        files: p.includes.iter().map(|f| absolute(Path::new(f))).collect(),
                        incomplete: p.missing_include || guessed,
                        ..Inputs::default()
                    },
                    header_macros: p.header_macros.clone(),
                };
            }
        }
    };
    let sites = facts::Sites::new(starts(), syntactic_facts(None, &mut unresolved));
    if !unresolved.is_empty() {
        unresolved.truncate(syntactic::UNRESOLVED_SHOWN);
        let why = match &mode {
            Mode::Syntactic { reason } => reason.clone(),
            Mode::Clang { .. } | Mode::Flang { .. } => String::new(),
        };
        diags.push(Diagnostic::new(
            first,
            id::SYNTACTIC_FACTS,
            format!(
                "without libclang ({why}) the types of {} are unknown: they get no implicit data mapping (but 'tofrom' where a region assigns them, see map-type-unknown) and no private/reduction type checks",
                unresolved
                    .iter()
                    .map(|u| format!("'{u}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    FileFacts {
        mode,
        sites,
        diags,
        rejected: routines_rejected,
        fell_back: inputs.len(),
        inputs: read,
        header_macros: Vec::new(),
    }
}

/// The syntactic facts of `sites` that `need` marks (all: None), the others' left default:
/// with libclang's facts for most sites, the others are read alone (a site's facts do not
/// depend on which other sites are read with it).
fn syntactic_site_facts(
    syntax: &syntactic::Syntax,
    structure: &Structure,
    sites: &[&SiteInput],
    need: Option<&[bool]>,
    unresolved: &mut Vec<String>,
) -> Vec<SiteFacts> {
    let Some(need) = need else {
        // One pass over the sites: nested regions take what their inner sites found.
        return syntax.sites_facts(structure, sites, unresolved);
    };
    let wanted: Vec<&SiteInput> = sites
        .iter()
        .zip(need)
        .filter(|(_, n)| **n)
        .map(|(s, _)| *s)
        .collect();
    let mut found = syntax
        .sites_facts(structure, &wanted, unresolved)
        .into_iter();
    need.iter()
        .map(|&n| n.then(|| found.next()).flatten().unwrap_or_default())
        .collect()
}

/// An `#include` of the file that names something other than a regular file (a FIFO, a
/// device): libclang would block on it until the worker's time runs out, or read a device
/// without end. Looked for in the file's own includes, where its directory and the `-I`,
/// `-iquote` and `-isystem` directories of its compile command lead (a header that includes
/// one is bounded by the worker's time). The include's offset, the path and what it is.
fn special_include(
    src: &str,
    toks: &[crate::lex::Token],
    file: &Path,
    user: &[String],
) -> Option<(usize, PathBuf, &'static str)> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut flags = user.iter();
    while let Some(f) = flags.next() {
        for opt in ["-I", "-iquote", "-isystem"] {
            if let Some(dir) = f.strip_prefix(opt) {
                if dir.is_empty() {
                    dirs.extend(flags.next().map(PathBuf::from));
                } else {
                    dirs.push(PathBuf::from(dir));
                }
                break;
            }
        }
    }
    let lines = toks
        .iter()
        .filter(|t| t.kind == crate::lex::TokKind::PpLine);
    for t in lines {
        // Most lines are not includes (a file of 100,000 pragmas): one whose first word is
        // `include` spells it, unless a line splice cuts the word.
        let text = t.text(src);
        if !text.contains("include") && !text.contains('\\') {
            continue;
        }
        // The line as the preprocessor reads it: without its line splices.
        let line = crate::lex::without_splices(&text[1..]);
        let inner = crate::lex::lex_range(&line, 0..line.len(), false);
        let [kw, first, ..] = &inner[..] else {
            continue;
        };
        if kw.text(&line) != "include" {
            continue;
        }
        let spelled = first.text(&line);
        let (name, quoted) =
            if let Some(q) = spelled.strip_prefix('"').and_then(|q| q.strip_suffix('"')) {
                (q, true)
            } else if spelled == "<" {
                let Some(close) = inner.iter().find(|x| x.text(&line) == ">") else {
                    continue;
                };
                (&line[first.end()..close.start()], false)
            } else {
                continue;
            };
        let here = quoted
            .then(|| file.parent().map(Path::to_path_buf))
            .flatten();
        for dir in here.iter().chain(&dirs) {
            let candidate = dir.join(name);
            match std::fs::metadata(&candidate) {
                Ok(m) if m.is_file() || m.is_dir() => break,
                Ok(m) => return Some((t.start(), candidate, crate::file::kind(&m.file_type()))),
                Err(_) => {}
            }
        }
    }
    None
}

/// Clang's OpenACC checks of the directives of `unit` (but those `decided` here already), and
/// the errors they explain removed from `p`.
fn openacc_verdict(
    unit: &Unit,
    inputs: &[(usize, SiteInput)],
    decided: &[usize],
    p: &mut clang::Parsed,
) -> openacc::Verdict {
    let decided: crate::hash::HashSet<usize> = decided.iter().copied().collect();
    let by_site: HashMap<usize, &SiteInput> = inputs
        .iter()
        .filter(|(_, x)| !decided.contains(&x.start))
        .map(|(k, x)| (*k, x))
        .collect();
    let sites: Vec<openacc::Site> = unit
        .sites
        .iter()
        .enumerate()
        .filter(|(_, s)| s.token().is_some() && !p.in_skipped(s.span().start))
        .map(|(i, s)| openacc::Site {
            span: s.span(),
            input: by_site.get(&i).copied(),
        })
        .collect();
    let in_macros = unit.sites.iter().any(|s| {
        matches!(
            s.form,
            crate::scan::Form::Operator { in_macro: true }
                | crate::scan::Form::Wrapped { in_macro: true, .. }
        )
    });
    openacc::check(unit.src, &sites, p, in_macros, &|o| unit.line_at(o))
}

/// `#pragma acc` line and `_Pragma("acc …")` spans as libclang's tokens delimit them.
pub fn clang_directive_spans(path: &Path, src: &str) -> Result<Vec<Range<usize>>, String> {
    let name = absolute(path).to_string_lossy().into_owned();
    load::with_index(|lib, index| {
        let args = clang::arguments(lib, &name, &[]);
        clang::directive_spans(index, &name, src, &args)
    })?
}

#[cfg(test)]
mod tests {
    /// An include of a device is found however its line is spelled; other lines, those
    /// that spell `include` elsewhere among them, are passed over.
    #[test]
    fn includes_of_devices_are_found_by_their_lines() {
        let file = std::path::Path::new("/tmp/acc2omp-test.c");
        let cases = [
            ("#include \"/dev/null\"\n", true),
            ("int x;\n  #  include </dev/null>\n", true),
            ("# /* c */ include \"/dev/null\"\n", true),
            ("#inc\\\nlude \"/dev/null\"\n", true),
            ("#inc\\\r\nlude \"/dev/null\"\n", true),
            (
                "#pragma acc parallel\n#define include \"/dev/null\"\n",
                false,
            ),
            ("#pragma include \"/dev/null\"\n", false),
            ("#include \"/tmp\"\nint include;\n", false),
        ];
        for (src, found) in cases {
            let toks = crate::lex::lex(src);
            let got = super::special_include(src, &toks, file, &["-I/".into()]);
            assert_eq!(got.is_some(), found, "{src}");
        }
    }

    /// The names whose types the clauses need: those of private/reduction items, bare data
    /// items, and items with a negative lower bound or several dimensions (their bounds are
    /// read only where the text can have one).
    #[test]
    fn names_of_clauses() {
        let t = crate::rules::Tables::builtin();
        let names = |s: &str| {
            let d = crate::directive::parse_directive_all(s, 0..s.len(), &t).unwrap();
            super::names_of(&d)
        };
        assert!(names("parallel loop copy(a[0:n]) copyin(b[i:m])").is_empty());
        assert_eq!(names("parallel loop copy(a[0:n]) copyin(b[1:m])"), ["b"]);
        assert_eq!(
            names("parallel loop copy(a[0:n], p, c[0:n][0:m], d[-1:n], e[i - 1][0:n]) private(x)"),
            ["p", "x", "c", "d", "e"]
        );
        assert_eq!(
            names("parallel copy(s.f[0:n], g[n-k:m])"),
            Vec::<String>::new()
        );
        assert_eq!(names("parallel copy(h[- 2:n]) present(q[k[0]:n])"), ["h"]);
    }
}
