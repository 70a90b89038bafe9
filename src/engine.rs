//! One file through the pipeline: scan → parse → structure → translate → edits → text.

use crate::diag::Diagnostic;
use crate::directive::{directive_name, parse_directive_all, resolve_device_type};
use crate::edit::{Edit, apply};
use crate::encoding::Decoded;
use crate::lex::lex;
use crate::rewrite::site_edits;
use crate::rules::tables;
use crate::scan::find_sites;
use crate::semantic::{Mode, SemanticConfig, analyze};
use crate::source::{LineIndex, line_ending};
use crate::structure::{Stmt, Structure, nesting};
use crate::translate::{Options, Unit, plan};
use crate::validate;

#[derive(Debug, Clone)]
pub struct Outcome {
    pub text: String,
    pub diagnostics: Vec<Diagnostic>,
    /// OpenACC directive sites found.
    pub sites: usize,
    pub index: LineIndex,
    /// How the semantic facts were obtained (None: no OpenACC, nothing analyzed).
    pub semantic: Option<Mode>,
}

impl Outcome {
    pub fn changed(&self, original: &str) -> bool {
        self.text != original
    }
}

/// A file's translation in its own bytes.
#[derive(Debug, Clone)]
pub struct FileOutcome {
    /// The translated file.
    pub output: Vec<u8>,
    /// Offsets are the input's bytes.
    pub diagnostics: Vec<Diagnostic>,
    pub sites: usize,
    /// Lines of the input's bytes.
    pub index: LineIndex,
    pub semantic: Option<Mode>,
}

/// Translate a file's bytes: every byte outside the edits is kept, whatever the encoding
/// (see `encoding`); an encoding that cannot be read is an `encoding` error at 1:1.
pub fn migrate_bytes(
    input: &[u8],
    path: Option<&std::path::Path>,
    opts: &Options,
    sem: &SemanticConfig,
) -> Result<FileOutcome, Diagnostic> {
    let decoded = Decoded::new(input).map_err(|u| {
        let openacc = find_sites(&u.text, &lex(&u.text)).len();
        let what = if u.text.is_empty() {
            String::new()
        } else {
            format!(" with {openacc} OpenACC directive(s)")
        };
        Diagnostic::new(
            0,
            "encoding",
            format!(
                "file is {}{what}; acc2omp reads UTF-8 and other ASCII-based encodings: convert it (iconv -t UTF-8) and run again; it is left unchanged",
                u.name
            ),
        )
    })?;
    let out = migrate_source(&decoded.text, path, opts, sem);
    let mut diagnostics = out.diagnostics;
    if !decoded.is_identity() {
        for d in &mut diagnostics {
            d.offset = decoded.original_offset(d.offset);
        }
    }
    Ok(FileOutcome {
        index: LineIndex::of_bytes(input, decoded.line_terminator()),
        output: decoded.encode(out.text),
        diagnostics,
        sites: out.sites,
        semantic: out.semantic,
    })
}

/// Translate one file's text (libclang facts when it loads, parsed as a file of no name).
pub fn migrate_text(src: &str, opts: &Options) -> Outcome {
    migrate_source(src, None, opts, &SemanticConfig::default())
}

/// Translate the text of the file at `path` (used to find its flags and headers).
pub fn migrate_source(
    src: &str,
    path: Option<&std::path::Path>,
    opts: &Options,
    sem: &SemanticConfig,
) -> Outcome {
    let index = LineIndex::new(src);
    let toks = lex(src);
    let sites = find_sites(src, &toks);
    let mut diagnostics = Vec::new();
    let mut dirs = Vec::with_capacity(sites.len());
    let macros = validate::macro_names(src, &toks);
    for s in &sites {
        let text = s.unescaped.as_deref().unwrap_or(src);
        if s.computed {
            diagnostics.push(Diagnostic::new(s.span.start, "not-translated", "this _Pragma's text is completed by the preprocessor; translate the macro's uses by hand"));
            dirs.push(None);
            continue;
        }
        if let Some(d) = validate::macro_in_directive(text, s, &macros) {
            diagnostics.push(d);
            dirs.push(None);
            continue;
        }
        match parse_directive_all(text, s.text.clone()) {
            Ok(mut d) => {
                if let Some((at, note)) =
                    resolve_device_type(&mut d, text, opts.device_type.as_deref())
                {
                    let at = if s.unescaped.is_some() {
                        s.span.start
                    } else {
                        at
                    };
                    diagnostics.push(Diagnostic::new(at, "device-type", note));
                }
                dirs.push(Some(d));
            }
            Err(errs) => {
                for e in errs {
                    let offset = if s.unescaped.is_some() {
                        s.span.start
                    } else {
                        e.offset
                    };
                    diagnostics.push(Diagnostic::new(
                        offset,
                        e.rule,
                        format!("{}; the directive is left unchanged", e.message),
                    ));
                }
                dirs.push(None);
            }
        }
    }
    // Token extent of each site and whether it takes a statement. A construct left unchanged
    // for an error still takes its statement, so that the statements around it keep theirs.
    let extents: Vec<Option<(usize, usize, bool)>> = sites
        .iter()
        .zip(&dirs)
        .map(|(s, d)| {
            let last = s.token?;
            let first = s.first_token.unwrap_or(last);
            let name = match d {
                Some(d) => Some(d.name.clone()),
                None if s.computed => None,
                None => directive_name(s.unescaped.as_deref().unwrap_or(src), s.text.clone()),
            };
            let stmt = name.is_some_and(|n| tables().directive(&n).is_some_and(|r| r.stmt));
            Some((first, last, stmt))
        })
        .collect();
    let structure = Structure::new(src, &toks, &extents);
    let mut stmts: Vec<Option<Stmt>> = vec![None; sites.len()];
    for (i, ext) in extents.iter().enumerate() {
        let (Some((_, last, takes)), Some(d)) = (ext, &dirs[i]) else {
            continue;
        };
        if *takes {
            stmts[i] = structure.stmt_after(*last);
            if stmts[i].is_none() {
                diagnostics.push(Diagnostic::new(
                    sites[i].span.start,
                    "no-statement",
                    format!(
                        "no statement follows 'acc {}'; the directive is left unchanged",
                        d.name
                    ),
                ));
                dirs[i] = None;
            }
        } else if d.name == "routine" && d.arg.is_none() {
            let first = structure.skip_pp(last + 1);
            if let Some(end) = structure.decl_end(first) {
                stmts[i] = Some(Stmt {
                    toks: first..end,
                    bytes: toks[first].start..toks[end - 1].end,
                    for_loop: None,
                });
            }
        }
    }
    for i in 0..sites.len() {
        let Some(d) = &dirs[i] else { continue };
        let is_loop = d.name == "loop" || d.is_combined();
        if is_loop && stmts[i].as_ref().is_some_and(|s| s.for_loop.is_none()) {
            diagnostics.push(Diagnostic::new(
                sites[i].span.start,
                "loop-without-for",
                format!(
                    "'acc {}' must be followed by a 'for' loop; the directive is left unchanged",
                    d.name
                ),
            ));
            dirs[i] = None;
        }
    }
    let ranges: Vec<_> = sites
        .iter()
        .zip(&stmts)
        .map(|(s, st)| {
            s.token.map(|_| {
                s.span.start
                    ..st.as_ref()
                        .map_or(s.span.end, |x| x.bytes.end.max(s.span.end))
            })
        })
        .collect();
    let parent = nesting(&ranges);
    let mut children = vec![Vec::new(); sites.len()];
    for (i, p) in parent.iter().enumerate() {
        if let Some(p) = p {
            children[*p].push(i);
        }
    }
    let mut unit = Unit {
        src,
        sites,
        dirs,
        stmts,
        parent,
        children,
        structure,
        facts: None,
    };
    reject(&mut unit, &mut diagnostics, validate::context);
    let facts = (!unit.sites.is_empty()).then(|| analyze(path, &unit, sem));
    if let Some(f) = &facts {
        diagnostics.extend(f.diags.iter().cloned());
    }
    let mut unit = Unit {
        facts: facts.as_ref(),
        ..unit
    };
    if let Some(f) = &facts {
        for (i, s) in unit.sites.iter().enumerate() {
            if f.rejected.contains(&s.span.start) {
                unit.dirs[i] = None;
            }
        }
    }
    reject(&mut unit, &mut diagnostics, validate::with_facts);
    reject(&mut unit, &mut diagnostics, validate::enclosing);
    let plans = plan(&unit, opts);
    let eol = line_ending(src);
    let mut edits: Vec<Edit> = Vec::new();
    for (i, p) in plans.iter().enumerate() {
        diagnostics.extend(p.diags.iter().cloned());
        if let Some(d) = unit.dir(i) {
            let end = unit.stmts[i].as_ref().map(|s| s.bytes.end);
            edits.extend(site_edits(src, &index, eol, &unit.sites[i], d, p, end));
        }
    }
    let (runtime_edits, runtime_diags) = crate::runtime::runtime_edits(&unit, &plans, opts);
    edits.extend(runtime_edits);
    diagnostics.extend(runtime_diags);
    let text = match apply(src, &edits) {
        Ok(t) => t,
        Err(o) => {
            diagnostics.push(Diagnostic::new(
                o.second.start,
                "internal-overlap",
                "two rewrites of this file overlap; the file is left unchanged",
            ));
            src.to_string()
        }
    };
    // Rules a user's rules file turned off are not reported.
    diagnostics.retain(|d| d.severity != crate::rules::Severity::Off);
    diagnostics.sort_by_key(|d| d.offset);
    Outcome {
        text,
        diagnostics,
        sites: unit.sites.len(),
        index,
        semantic: facts.map(|f| f.mode),
    }
}

/// Leave unchanged the directives a check rejects, with its diagnostics.
fn reject(
    unit: &mut Unit,
    diagnostics: &mut Vec<Diagnostic>,
    check: impl Fn(&Unit) -> Vec<(usize, Diagnostic)>,
) {
    for (i, d) in check(unit) {
        diagnostics.push(d);
        unit.dirs[i] = None;
    }
}
