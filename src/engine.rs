//! One file through the pipeline: scan → parse → structure → translate → edits → text.

use crate::diag::Diagnostic;
use crate::directive::{directive_name, parse_directive_all, resolve_device_type};
use crate::edit::{Edit, apply};
use crate::emit::{self, Emit};
use crate::encoding::Decoded;
use crate::fix::{Fix, Replacement, TextFix};
use crate::lex::{PpLines, lex};
use crate::rewrite::site_edits;
use crate::scan::find_sites;
use crate::semantic::{Mode, SemanticConfig, analyze};
use crate::source::{LineIndex, line_ending};
use crate::structure::{Stmt, Structure, nesting};
use crate::translate::{Options, Unit, plan};
use crate::validate;
use std::ops::Range;

#[derive(Debug, Clone)]
pub struct Outcome {
    pub text: String,
    pub diagnostics: Vec<Diagnostic>,
    /// OpenACC directive sites found.
    pub sites: usize,
    pub index: LineIndex,
    /// How the semantic facts were obtained (None: no OpenACC, nothing analyzed).
    pub semantic: Option<Mode>,
    /// The edits, grouped by construct; empty when the file is left unchanged.
    pub fixes: Vec<TextFix>,
    /// Directives whose facts came from syntax (see `FileFacts::fell_back`).
    pub fell_back: usize,
    /// The translation calls OpenMP device-memory routines (`omp_target_*`), which need the
    /// offloading runtime to link.
    pub offload_routines: bool,
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
    /// Applied to the input, they give `output`.
    pub fixes: Vec<Fix>,
    /// Directives translated from syntax although libclang was asked for.
    pub fell_back: usize,
    /// See `Outcome::offload_routines`.
    pub offload_routines: bool,
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
        let mut d = Diagnostic::new(
            0,
            "encoding",
            format!(
                "file is {}{what}; acc2omp reads UTF-8 and other ASCII-based encodings: convert it (iconv -t UTF-8) and run again; it is left unchanged",
                u.name
            ),
        );
        d.rate(&opts.tables);
        d
    })?;
    let out = migrate_source(&decoded.text, path, opts, sem);
    let mut diagnostics = out.diagnostics;
    if !decoded.is_identity() {
        for d in &mut diagnostics {
            d.offset = decoded.original_offset(d.offset);
            d.end = d.end.map(|e| decoded.original_offset(e));
        }
    }
    let at = |o: usize| decoded.original_offset(o);
    let fixes = out
        .fixes
        .into_iter()
        .map(|f| Fix {
            offset: at(f.offset),
            span: at(f.span.start)..at(f.span.end),
            message: f.message,
            replacements: f
                .edits
                .into_iter()
                .map(|e| Replacement {
                    offset: at(e.range.start),
                    length: at(e.range.end) - at(e.range.start),
                    text: decoded.encode(e.text),
                })
                .collect(),
        })
        .collect();
    Ok(FileOutcome {
        fixes,
        fell_back: out.fell_back,
        index: LineIndex::of_bytes(input, decoded.line_terminator()),
        output: decoded.encode(out.text),
        diagnostics,
        sites: out.sites,
        semantic: out.semantic,
        offload_routines: out.offload_routines,
    })
}

/// Translate one file's text (libclang facts when it loads, parsed as a file of no name).
pub fn migrate_text(src: &str, opts: &Options) -> Outcome {
    migrate_source(src, None, opts, &SemanticConfig::default())
}

/// Translate the text of the file at `path` (used to find its flags and headers), written
/// as `opts.emit` says. acc2omp's own `--emit` output in it is first read back as the
/// original it stands for.
pub fn migrate_source(
    src: &str,
    path: Option<&std::path::Path>,
    opts: &Options,
    sem: &SemanticConfig,
) -> Outcome {
    if let Some(kind) = path.and_then(crate::fortran::form::kind_of) {
        return fortran_left_alone(src, kind, opts);
    }
    let own = emit::read_back(src);
    if own.is_empty() && opts.emit == Emit::Omp {
        return translate(src, path, opts, sem);
    }
    let out = translate(&own.original, path, opts, sem);
    emit::write(src, &own, out, opts.emit)
}

/// A Fortran file, which acc2omp does not translate yet: C's rules would write C into it,
/// so it is left byte for byte as it is, with each OpenACC directive and each
/// `use openacc` reported where it is.
fn fortran_left_alone(
    src: &str,
    kind: crate::fortran::form::SourceKind,
    opts: &Options,
) -> Outcome {
    use crate::fortran::lines::{LineKind, Sentinel};
    let lines = crate::fortran::lines::scan(src, kind);
    let (sites, _) = crate::fortran::sites::find_sites(src, &lines);
    let mut diagnostics: Vec<Diagnostic> = sites
        .iter()
        .filter(|s| s.sentinel == Sentinel::Acc)
        .map(|s| {
            Diagnostic::new(
                s.span.start,
                "not-translated",
                "acc2omp does not translate Fortran yet; the directive is left unchanged",
            )
        })
        .collect();
    let acc = diagnostics.len();
    // `use openacc` on a source line or a `!$` line.
    for l in &lines.lines {
        let code = matches!(
            l.kind,
            LineKind::Code | LineKind::Directive(Sentinel::Conditional)
        );
        let words: Vec<String> = src[l.body.clone()]
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .take(2)
            .map(str::to_ascii_lowercase)
            .collect();
        if code && !l.continuation && words == ["use", "openacc"] {
            let body = &src[l.body.clone()];
            diagnostics.push(Diagnostic::new(
                l.body.start + body.len() - body.trim_start().len(),
                "not-translated",
                "acc2omp does not translate Fortran yet; 'use openacc' is left unchanged",
            ));
        }
    }
    for d in &mut diagnostics {
        d.rate(&opts.tables);
    }
    diagnostics.retain(|d| d.severity != crate::rules::Severity::Off);
    diagnostics.sort_by_key(|d| d.offset);
    let spans: Vec<Range<usize>> = sites.iter().map(|s| s.span.clone()).collect();
    for d in &mut diagnostics {
        d.end = Some(diagnostic_end(src, &spans, d.offset));
    }
    Outcome {
        text: src.to_string(),
        diagnostics,
        sites: acc,
        index: LineIndex::new(src),
        semantic: None,
        fixes: Vec::new(),
        fell_back: 0,
        offload_routines: false,
    }
}

/// The OpenMP translation of `src`.
fn translate(
    src: &str,
    path: Option<&std::path::Path>,
    opts: &Options,
    sem: &SemanticConfig,
) -> Outcome {
    let tables = &*opts.tables;
    let index = LineIndex::new(src);
    let toks = lex(src);
    let pp = PpLines::new(src, &toks);
    let sites = find_sites(src, &toks);
    let macros = validate::macro_names(src, &toks, &pp);
    // Each site parsed on its own (in parallel for many sites), diagnostics kept in order.
    let parsed = crate::par::map(&sites, |s| {
        let text = s.unescaped.as_deref().unwrap_or(src);
        if s.computed {
            let d = Diagnostic::new(
                s.span.start,
                "not-translated",
                "this _Pragma's text is completed by the preprocessor; translate the macro's uses by hand",
            );
            return (None, vec![d]);
        }
        if let Some(d) = validate::macro_in_directive(text, s, &macros) {
            return (None, vec![d]);
        }
        match parse_directive_all(text, s.text.clone(), tables) {
            Ok(mut d) => {
                let mut diags = Vec::new();
                if let Some((at, note)) =
                    resolve_device_type(&mut d, text, opts.device_type.as_deref())
                {
                    let at = if s.unescaped.is_some() {
                        s.span.start
                    } else {
                        at
                    };
                    diags.push(Diagnostic::new(at, "device-type", note));
                }
                (Some(d), diags)
            }
            Err(errs) => {
                let diags = errs
                    .into_iter()
                    .map(|e| {
                        let offset = if s.unescaped.is_some() {
                            s.span.start
                        } else {
                            e.offset
                        };
                        Diagnostic::new(
                            offset,
                            e.rule,
                            format!("{}; the directive is left unchanged", e.message),
                        )
                    })
                    .collect();
                (None, diags)
            }
        }
    });
    let mut diagnostics = Vec::new();
    let mut dirs = Vec::with_capacity(sites.len());
    for (d, diags) in parsed {
        diagnostics.extend(diags);
        dirs.push(d);
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
                None => directive_name(
                    s.unescaped.as_deref().unwrap_or(src),
                    s.text.clone(),
                    tables,
                ),
            };
            let stmt = name.is_some_and(|n| tables.directive(&n).is_some_and(|r| r.stmt));
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
        pp: &pp,
        facts: None,
        site_facts: Vec::new(),
        tables,
        lines: &index,
        eol: line_ending(src),
        dependence: Default::default(),
        attachments: Default::default(),
        index: Default::default(),
    };
    reject(&mut unit, &mut diagnostics, validate::context);
    reject(&mut unit, &mut diagnostics, validate::branches::check);
    let facts = (!unit.sites.is_empty()).then(|| analyze(path, &unit, sem));
    if let Some(f) = &facts {
        diagnostics.extend(f.diags.iter().cloned());
    }
    let site_facts = match &facts {
        Some(f) => unit.sites.iter().map(|s| f.at(s.span.start)).collect(),
        None => Vec::new(),
    };
    let mut unit = Unit {
        facts: facts.as_ref(),
        site_facts,
        ..unit
    };
    if let Some(f) = &facts {
        let rejected: crate::hash::HashSet<usize> = f.rejected.iter().copied().collect();
        for (i, s) in unit.sites.iter().enumerate() {
            if rejected.contains(&s.span.start) {
                unit.dirs[i] = None;
            }
        }
    }
    reject(&mut unit, &mut diagnostics, validate::with_facts);
    reject(&mut unit, &mut diagnostics, validate::default_none::check);
    reject(&mut unit, &mut diagnostics, crate::reduction_types::check);
    reject(&mut unit, &mut diagnostics, validate::enclosing);
    for k in validate::inside_unchanged(&unit) {
        unit.dirs[k] = None;
    }
    let plans = plan(&unit, opts);
    let eol = unit.eol;
    let mut edits: Vec<Edit> = Vec::new();
    let mut fixes: Vec<TextFix> = Vec::new();
    // Which edits belong to which site: they become that construct's fix once the runtime
    // pass has renamed the OpenACC constants they copy.
    let mut site_ranges = Vec::new();
    let per_site = crate::par::map_indices(plans.len(), |i| {
        let d = unit.dir(i)?;
        let end = unit.stmts[i].as_ref().map(|s| s.bytes.end);
        Some(site_edits(
            src,
            &index,
            eol,
            &unit.sites[i],
            d,
            &plans[i],
            end,
        ))
    });
    for (i, (p, e)) in plans.iter().zip(per_site).enumerate() {
        diagnostics.extend(p.diags.iter().cloned());
        if let Some(e) = e {
            let from = edits.len();
            edits.extend(e);
            site_ranges.push((i, from..edits.len()));
        }
    }
    let kept: Vec<usize> = (0..plans.len())
        .filter(|&i| {
            plans[i].action == crate::translate::Action::Unchanged
                && unit.dir(i).is_some_and(|d| d.compute_kind().is_some())
        })
        .collect();
    let runtime = crate::runtime::runtime_edits(&unit, opts, &mut edits, &kept);
    for (i, r) in site_ranges {
        let (s, d) = (&unit.sites[i], unit.dir(i));
        fixes.push(TextFix {
            offset: s.span.start,
            span: s.span.clone(),
            message: format!(
                "'acc {}' migrated to OpenMP",
                d.map_or("", |d| d.name.as_str())
            ),
            edits: edits[r].to_vec(),
        });
    }
    fixes.extend(runtime.edits.iter().map(|e| TextFix {
        offset: e.range.start,
        span: e.range.clone(),
        message: crate::fix::describe(src, e),
        edits: vec![e.clone()],
    }));
    edits.extend(runtime.edits);
    diagnostics.extend(runtime.diags);
    // The tokens, the directives and their facts are no longer needed: freed before the
    // output is built, so that a large file's peak memory holds only one of the two.
    let spans: Vec<Range<usize>> = unit.sites.iter().map(|s| s.span.clone()).collect();
    let fell_back = facts.as_ref().map_or(0, |f| f.fell_back);
    let semantic = facts.as_ref().map(|f| f.mode.clone());
    // Freeing millions of small allocations takes a while: done by the pool while the
    // output is built.
    let Unit {
        sites,
        dirs,
        stmts,
        parent,
        children,
        structure,
        dependence,
        attachments,
        index: site_index,
        ..
    } = unit;
    drop(structure);
    let garbage = (plans, sites, dirs, stmts, parent, children, dependence);
    let garbage = (garbage, attachments, site_index, facts, pp, toks);
    rayon::spawn(move || drop(garbage));
    let text = match apply(src, &edits) {
        Ok(t) => t,
        Err(o) => {
            fixes.clear();
            diagnostics.push(Diagnostic::new(
                o.second.start,
                "internal-overlap",
                "two rewrites of this file overlap; the file is left unchanged",
            ));
            src.to_string()
        }
    };
    // Severities are the file's tables'; rules a user's rules file turned off are not reported.
    for d in &mut diagnostics {
        d.rate(tables);
    }
    diagnostics.retain(|d| d.severity != crate::rules::Severity::Off);
    diagnostics.sort_by_key(|d| d.offset);
    for d in &mut diagnostics {
        d.end = Some(diagnostic_end(src, &spans, d.offset));
    }
    Outcome {
        fixes: crate::fix::group(fixes),
        fell_back,
        text,
        diagnostics,
        sites: spans.len(),
        index,
        semantic,
        offload_routines: runtime.offload_routines,
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

/// Where a diagnostic at `offset` ends: at the end of a directive's first line when it is
/// about the whole directive, else at the end of the word it points to.
fn diagnostic_end(src: &str, sites: &[Range<usize>], offset: usize) -> usize {
    let b = src.as_bytes();
    let line_end = |from: usize| {
        b[from.min(b.len())..]
            .iter()
            .position(|&c| c == b'\n' || c == b'\r')
            .map_or(b.len(), |n| from + n)
    };
    // Sites are in file order.
    let k = sites.partition_point(|s| s.start < offset);
    if let Some(s) = sites.get(k).filter(|s| s.start == offset) {
        return s.end.min(line_end(offset));
    }
    let word = b[offset.min(b.len())..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    offset + word
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Profile;

    /// A file of many directives is read in runs side by side, in parallel: its translation
    /// and diagnostics are exactly those of reading it in one piece.
    #[test]
    fn runs_read_side_by_side_translate_as_one_piece() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/translate");
        let mut cases: Vec<_> = std::fs::read_dir(&dir)
            .expect("fixtures/translate")
            .map(|e| e.expect("fixture").path().join("input.c"))
            .filter(|p| p.exists())
            .collect();
        cases.sort();
        let one: String = cases
            .iter()
            .map(|p| std::fs::read_to_string(p).expect("fixture input"))
            .collect();
        let src = one.repeat(3);
        let sem = SemanticConfig::syntactic();
        for profile in [Profile::Default, Profile::Clacc, Profile::Loop] {
            let opts = Options {
                profile,
                ..Options::default()
            };
            let split = translate(&src, None, &opts, &sem);
            let whole = crate::par::in_one_piece(|| translate(&src, None, &opts, &sem));
            assert!(
                split.sites >= 1000,
                "{} sites: too few to split",
                split.sites
            );
            assert!(split.text == whole.text, "{profile:?}: translations differ");
            let show = |o: &Outcome| {
                o.diagnostics
                    .iter()
                    .map(|d| format!("{} {} {}", d.offset, d.rule, d.message))
                    .collect::<Vec<_>>()
            };
            assert_eq!(show(&split), show(&whole), "{profile:?}");
        }
    }
}
