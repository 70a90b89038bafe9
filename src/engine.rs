//! One file through the pipeline: its language's front end reads it, the shared phases check
//! and translate its directives, its printer writes the edits, the edits make the text (see
//! [`translate`] for the phases and their order).

use crate::diag::Diagnostic;
use crate::edit::{Edit, apply_all};
use crate::emit;
use crate::encoding::Decoded;
use crate::fix::{Fix, Replacement, TextFix};
use crate::front::{FrontEnd, Read};
use crate::intent::{Action, Plan};
use crate::options::Emit;
use crate::options::Options;
use crate::outcome::{Outcome, Translated};
use crate::region::nesting;
use crate::rules::id;
use crate::semantic::{Mode, SemanticConfig};
use crate::source::{LineIndex, line_ending};
use crate::translate::plan;
use crate::unit::Unit;
use crate::validate;
use std::ops::Range;

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
    /// See `Outcome::inputs`.
    pub inputs: crate::facts::Inputs,
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
        let openacc = front_end(path, &SemanticConfig::syntactic()).site_count(&u.text);
        let what = if u.text.is_empty() {
            String::new()
        } else {
            format!(" with {openacc} OpenACC directive(s)")
        };
        let mut d = Diagnostic::new(
            0,
            id::ENCODING,
            format!(
                "file is {}{what}; acc2omp reads UTF-8 and other ASCII-based encodings: convert it (iconv -t UTF-8) and run again; it is left unchanged",
                u.name
            ),
        );
        d.rate(&opts.tables);
        d
    })?;
    let out = migrate_source(&decoded.text, path, opts, sem);
    // The outcome's lines are those of the decoded text: the input's own when the text is
    // its bytes unchanged (most files), so they are not found a second time.
    let index = if decoded.is_identity() {
        out.index
    } else {
        LineIndex::of_bytes(input, decoded.line_terminator())
    };
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
    let outcome = FileOutcome {
        fixes,
        fell_back: out.fell_back,
        index,
        output: decoded.encode(out.text),
        diagnostics,
        sites: out.sites,
        semantic: out.semantic,
        offload_routines: out.offload_routines,
        inputs: out.inputs,
    };
    // What the translation freed (on this thread and the pool's) is handed back before the
    // output is written, which takes other threads' memory (the diff, on the main thread).
    if input.len() >= crate::memory::RELEASE_AFTER {
        crate::memory::release();
    }
    Ok(outcome)
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
    if let Some(kind) = path.and_then(crate::fortran::form::kind_of)
        && opts.emit != Emit::Omp
    {
        return fortran_left_alone(src, kind, opts);
    }
    let own = emit::read_back(src);
    if own.is_empty() && opts.emit == Emit::Omp {
        return translate(src, path, opts, sem, None);
    }
    let file = LineIndex::new(src);
    let file_lines = |o: usize| file.line_col(own.to_file(o)).0;
    let shown: &(dyn Fn(usize) -> usize + Sync) = &file_lines;
    let out = translate(
        &own.original,
        path,
        opts,
        sem,
        (!own.is_empty()).then_some(shown),
    );
    emit::write(src, &own, out, opts.emit)
}

/// A Fortran file asked for in an `--emit` mode other than `omp`, which Fortran does not
/// have yet: it is left byte for byte as it is, with each OpenACC directive and each
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
                id::NOT_TRANSLATED,
                "this --emit mode is not available for Fortran yet; the directive is left unchanged",
            )
        })
        .collect();
    let acc = diagnostics.len();
    // `use openacc` on a source line or a `!$` line.
    for l in lines.iter() {
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
                id::NOT_TRANSLATED,
                "this --emit mode is not available for Fortran yet; 'use openacc' is left unchanged",
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
        inputs: Default::default(),
    }
}

/// The language a file is written in (by its name): its front end.
fn front_end(path: Option<&std::path::Path>, sem: &SemanticConfig) -> Box<dyn FrontEnd> {
    match path.and_then(crate::fortran::form::kind_of) {
        Some(kind) => Box::new(crate::fortran::front::FortranFront {
            kind,
            path: path.map(std::path::Path::to_path_buf),
            sem: sem.clone(),
        }),
        None => Box::new(crate::c::front::CFront),
    }
}

/// The OpenMP translation of `src`, in phases whose order matters (each a function here,
/// except where named):
///
/// 1. **read** ([`FrontEnd::read`]): the directive sites, each parsed, and the statement
///    each applies to; the front end keeps its tokens alive for the phases below.
/// 2. **statements** ([`require_statements`]): a directive that takes a statement and has
///    none, or a loop directive without a loop, is left unchanged: every later phase needs
///    the statement.
/// 3. **nest** ([`nest`]): the site tree, from the ranges of the directives and their
///    statements.
/// 4. **check** ([`check`]): directives in their context. Before the facts: a directive left
///    unchanged needs none.
/// 5. **facts** (`Passes::facts`, [`with_facts`]): the semantic facts (libclang, else
///    syntactic) about every directive.
/// 6. **check with facts** ([`check_with_facts`]): the checks that need the facts, then the
///    rejections that follow every other one; the `private` items naming an enclosing loop's
///    variable are found here and worded once the plans say whether their directive was
///    translated.
/// 7. **plan** ([`plan`]): what each site becomes, with its own phases.
/// 8. **print** ([`print`]): the language's printer writes each plan as edits.
/// 9. **runtime** (`Passes::runtime`): the language's runtime-API pass, after the printer:
///    the constructs the printer wrote decide where OpenMP runtime calls are allowed, and
///    what it inserted which helpers and headers the file needs.
/// 10. **apply** (here): the edits make the text; diagnostics are rated by the file's
///     tables, sorted and given their end.
fn translate(
    src: &str,
    path: Option<&std::path::Path>,
    opts: &Options,
    sem: &SemanticConfig,
    file_lines: Option<&(dyn Fn(usize) -> usize + Sync)>,
) -> Outcome {
    let tables = &*opts.tables;
    let index = LineIndex::new(src);
    let front = front_end(path, sem);
    let out = front.read(src, opts, &mut |read| {
        translate_read(src, path, opts, sem, &*front, (&index, file_lines), read)
    });
    let Translated {
        mut fixes,
        mut diagnostics,
        spans,
        fell_back,
        semantic,
        offload_routines,
        inputs,
    } = out;
    let text = match apply_all(src, fixes.iter().flat_map(|f| &f.edits)) {
        Ok(t) => t,
        Err(o) => {
            fixes.clear();
            diagnostics.push(Diagnostic::new(
                o.second.start,
                id::INTERNAL_OVERLAP,
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
        offload_routines,
        inputs,
    }
}

/// The phases after **read** of [`translate`], in order, on what the front end read.
fn translate_read(
    src: &str,
    path: Option<&std::path::Path>,
    opts: &Options,
    sem: &SemanticConfig,
    front: &dyn FrontEnd,
    (index, file_lines): (&LineIndex, Option<&(dyn Fn(usize) -> usize + Sync)>),
    read: Read,
) -> Translated {
    let tables = &*opts.tables;
    let Read {
        sites,
        mut dirs,
        stmts,
        mut diagnostics,
        syntax,
        passes,
        printer,
    } = read;
    require_statements(
        front.language(),
        tables,
        &sites,
        &mut dirs,
        &stmts,
        &mut diagnostics,
    );
    let (parent, children) = nest(&sites, &stmts);
    let mut unit = Unit {
        src,
        sites,
        dirs,
        stmts,
        parent,
        children,
        syntax,
        facts: None,
        site_facts: Vec::new(),
        tables,
        lang: front.language(),
        lines: index,
        file_lines,
        eol: line_ending(src),
        index: Default::default(),
        compiled_in: Default::default(),
    };
    check(&mut unit, &mut diagnostics, printer);
    // Facts: libclang's, else syntactic.
    let facts = (!unit.sites.is_empty()).then(|| passes.facts(path, &unit, sem));
    let mut unit = with_facts(unit, facts.as_ref(), &mut diagnostics);
    check_with_facts(&mut unit, &mut diagnostics, printer);
    // Warned once the plans say whether each directive was translated.
    let private_loops = validate::private_loop::check(&unit);
    // A `kernels` region of loop nests only is read as a data region around combined
    // constructs; after the checks and facts, which saw the directives as written.
    let (split, notes) = crate::translate::split::split(&mut unit);
    diagnostics.extend(notes);
    let mut plans = plan(&unit, opts);
    crate::translate::split::remove_empty(&unit, &split, &mut plans);
    let mut whole = crate::translate::split::keep_whole(&unit, &split, &mut plans);
    diagnostics.extend(printer.review(&unit, &mut plans));
    // The printer's review may leave a loop of a split region (Fortran).
    whole.extend(crate::translate::split::keep_whole(
        &unit, &split, &mut plans,
    ));
    let replan = |u: &Unit| {
        let mut plans = plan(u, opts);
        crate::translate::split::remove_empty(u, &split, &mut plans);
        crate::translate::split::keep_whole(u, &split, &mut plans);
        // Its notes are the first plan's.
        let _ = printer.review(u, &mut plans);
        crate::translate::split::keep_whole(u, &split, &mut plans);
        plans
    };
    // A region left whole is not split: its note would say it is.
    diagnostics.retain(|d| {
        d.rule != crate::rules::id::KERNELS_SPLIT || !whole.iter().any(|&c| d.offset == unit.at(c))
    });
    diagnostics.extend(crate::alternatives::review(
        &mut unit, &mut plans, printer, &replan,
    ));
    // The runtime API: the compute constructs left OpenACC keep their calls OpenACC too.
    let kept: Vec<usize> = (0..plans.len())
        .filter(|&i| {
            plans[i].action == Action::Unchanged
                && unit.dir(i).is_some_and(|d| d.compute_kind().is_some())
        })
        .collect();
    // Directives left unchanged (outermost of each nest): guarded against OpenMP builds.
    let left: Vec<(usize, Option<String>)> = (0..plans.len())
        .filter(|&i| {
            is_left(&unit, &plans, i) && !unit.ancestors(i).any(|a| is_left(&unit, &plans, a))
        })
        .map(|i| {
            let s = &unit.sites[i];
            // A split `kernels` left whole reads as it is written, not as the split named it.
            let name = match unit.dir(i).filter(|_| !split.contains(&i)) {
                Some(d) => Some(d.name.to_string()),
                None => crate::directive::directive_name_in(
                    s.unescaped.as_deref().unwrap_or(src),
                    s.text(),
                    tables,
                    crate::directive::Dialect::of_language(unit.lang.name()),
                ),
            };
            (s.span().start, name)
        })
        .collect();
    for (i, f) in private_loops {
        let translated = !unit
            .ancestors(i)
            .chain([i])
            .any(|a| is_left(&unit, &plans, a));
        let mut d = f.diagnostic(translated);
        d.offset = printer.locate(&unit, i, d.offset);
        diagnostics.push(d);
    }
    let fell_back = facts.as_ref().map_or(0, |f| f.fell_back);
    let semantic = facts.as_ref().map(|f| f.mode.clone());
    let inputs = facts.as_ref().map(|f| f.inputs.clone()).unwrap_or_default();
    // A printer that reads no facts (C's) prints without them: they are freed first, and a
    // large file's memory handed back, so that the edits take it (100,000 C directives hold
    // 23 MiB of facts). The unit is made again from the file's own references, no longer
    // borrowing them.
    let Unit {
        sites,
        dirs,
        stmts,
        parent,
        children,
        index: site_index,
        lang,
        eol,
        ..
    } = unit;
    let facts = match facts {
        Some(f) if !printer.reads_facts() && !keeps_facts() => {
            crate::memory::free(f, src.len() >= crate::memory::RELEASE_AFTER);
            None
        }
        f => f,
    };
    let unit = attach(
        Unit {
            src,
            sites,
            dirs,
            stmts,
            parent,
            children,
            syntax,
            facts: None,
            site_facts: Vec::new(),
            tables,
            lang,
            lines: index,
            file_lines,
            eol,
            index: site_index,
            compiled_in: Default::default(),
        },
        facts.as_ref(),
    );
    // The plans are freed as they are printed, so that the edits take their memory.
    let (mut edits, site_ranges) = print(&unit, plans, printer, &mut diagnostics);
    let runtime = passes.runtime(&unit, opts, &mut edits, &kept);
    let guards = printer.guards(&unit, &left);
    // What each migrated construct's fix needs of its site, so that the fixes (a message
    // each) are made once the directives are freed: a large file's peak holds one of them.
    let migrated: Vec<(Range<usize>, Option<crate::directive::DirectiveName>)> = site_ranges
        .iter()
        .map(|(i, _)| (unit.sites[*i].span(), unit.dir(*i).map(|d| d.name.clone())))
        .collect();
    let spans: Vec<Range<usize>> = unit.sites.iter().map(|s| s.span()).collect();
    // The directives and their facts are no longer needed: freed before the edits move into
    // their fixes and the output is built, so that a large file's peak memory holds only one
    // of them (a large file's here, then handed back, before the fixes take memory; a small
    // file's by the pool: see `memory::free`).
    let Unit {
        sites,
        dirs,
        stmts,
        parent,
        children,
        index: site_index,
        ..
    } = unit;
    let garbage = (sites, dirs, stmts, parent, children, site_index, facts);
    crate::memory::free(garbage, src.len() >= crate::memory::RELEASE_AFTER);
    let mut fixes: Vec<TextFix> =
        Vec::with_capacity(site_ranges.len() + runtime.edits.len() + guards.len());
    fixes.extend(migrated.into_iter().map(|(span, name)| TextFix {
        offset: span.start,
        span,
        message: format!(
            "'acc {}' migrated to OpenMP",
            name.as_ref().map_or("", |n| n.as_str())
        ),
        edits: Vec::new(),
    }));
    // The edits move into their fixes (not copied: a large file has millions of them). The
    // sites' ranges follow each other from the first edit (`print`), and the runtime pass
    // added none.
    let mut printed = edits.into_iter();
    for (f, (_, r)) in fixes.iter_mut().zip(site_ranges) {
        f.edits = printed.by_ref().take(r.len()).collect();
    }
    drop(printed);
    fixes.extend(runtime.edits.into_iter().map(|e| TextFix {
        offset: e.range.start,
        span: e.range.clone(),
        message: crate::fix::describe(src, &e),
        edits: vec![e],
    }));
    // Last, so that a guard inserted where other text is (the queue objects, an include)
    // comes right before its directive's line, where a second run finds it.
    fixes.extend(guards.into_iter().map(|e| TextFix {
        offset: e.range.start,
        span: e.range.clone(),
        message: "guard for an OpenACC directive left unchanged".into(),
        edits: vec![e],
    }));
    diagnostics.extend(runtime.diags);
    Translated {
        fixes,
        diagnostics,
        spans,
        fell_back,
        semantic,
        offload_routines: runtime.offload_routines,
        inputs,
    }
}

/// Phase **statements**: a directive that takes a statement and has none, or a loop
/// directive without a loop, is left unchanged.
fn require_statements(
    lang: &dyn crate::lang::Language,
    tables: &crate::rules::Tables,
    sites: &[crate::scan::Site],
    dirs: &mut [Option<crate::directive::Directive>],
    stmts: &[Option<crate::region::Stmt>],
    diagnostics: &mut Vec<Diagnostic>,
) {
    for i in 0..sites.len() {
        let Some(d) = &dirs[i] else { continue };
        let takes = tables.directive(&d.name).is_some_and(|r| r.stmt);
        if takes && stmts[i].is_none() && sites[i].token().is_some() {
            diagnostics.push(Diagnostic::new(
                sites[i].span().start,
                id::NO_STATEMENT,
                format!(
                    "no statement follows 'acc {}'; the directive is left unchanged",
                    d.name
                ),
            ));
            dirs[i] = None;
        }
    }
    // (`do while` and a `do` without loop control are do loops, not counted ones.)
    let a_loop = match lang.worksharing() {
        "do" => "a counted 'do' loop".to_string(),
        w => format!("a '{w}' loop"),
    };
    for i in 0..sites.len() {
        let Some(d) = &dirs[i] else { continue };
        let is_loop = d.name == "loop" || d.is_combined();
        if is_loop && stmts[i].as_ref().is_some_and(|s| s.for_loop.is_none()) {
            diagnostics.push(Diagnostic::new(
                sites[i].span().start,
                id::LOOP_WITHOUT_FOR,
                format!(
                    "'acc {}' must be followed by {a_loop}; the directive is left unchanged",
                    d.name
                ),
            ));
            dirs[i] = None;
        }
    }
}

/// Phase **nest**: the site tree (each site's parent and children), from the byte ranges of
/// the directives and their statements.
fn nest(
    sites: &[crate::scan::Site],
    stmts: &[Option<crate::region::Stmt>],
) -> (Vec<Option<usize>>, Vec<Vec<usize>>) {
    let ranges: Vec<_> = sites
        .iter()
        .zip(stmts)
        .map(|(s, st)| {
            s.token().map(|_| {
                s.span().start
                    ..st.as_ref()
                        .map_or(s.span().end, |x| x.bytes().end.max(s.span().end))
            })
        })
        .collect();
    // A site nests in another only from that other's statement on (alternatives).
    let body = |i: usize| {
        stmts[i]
            .as_ref()
            .map_or(sites[i].span().start, |x| x.bytes().start)
    };
    let parent = nesting(&ranges, body);
    let mut children = vec![Vec::new(); sites.len()];
    for (i, p) in parent.iter().enumerate() {
        if let Some(p) = p {
            children[*p].push(i);
        }
    }
    (parent, children)
}

/// Phase **check**: directives in their context (placement, loop levels, `tile`, jumps
/// across a construct's boundary, atomic statement forms). Before the facts: a directive left unchanged needs none.
fn check(unit: &mut Unit, diagnostics: &mut Vec<Diagnostic>, p: &dyn crate::print::Printer) {
    reject(unit, diagnostics, p, validate::context);
    reject(unit, diagnostics, p, validate::branches::check);
    reject(unit, diagnostics, p, validate::atomic::check);
}

/// Phase **facts**: `unit` with the semantic facts, their diagnostics, and the directives
/// they reject left unchanged.
fn with_facts<'a>(
    unit: Unit<'a>,
    facts: Option<&'a crate::facts::FileFacts>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Unit<'a> {
    let Some(f) = facts else { return unit };
    diagnostics.extend(f.diags.iter().cloned());
    let mut unit = attach(unit, Some(f));
    let rejected: crate::hash::HashSet<usize> = f.rejected.iter().copied().collect();
    let mut any = false;
    for (i, s) in unit.sites.iter().enumerate() {
        if rejected.contains(&s.span().start) {
            unit.dirs[i] = None;
            any = true;
        }
    }
    if any {
        unit.refresh_nearest();
    }
    unit
}

/// `unit` reading `facts` (none: reading none).
fn attach<'a>(unit: Unit<'a>, facts: Option<&'a crate::facts::FileFacts>) -> Unit<'a> {
    let site_facts = match facts {
        Some(f) => unit.sites.iter().map(|s| f.at(s.span().start)).collect(),
        None => Vec::new(),
    };
    Unit {
        facts,
        site_facts,
        ..unit
    }
}

/// Phase **check with facts**: array bounds, `default(none)`, reduction types; then the
/// constructs around a directive left unchanged, and the directives inside an unchanged
/// construct, are left unchanged too (last: they follow every other rejection).
fn check_with_facts(
    unit: &mut Unit,
    diagnostics: &mut Vec<Diagnostic>,
    p: &dyn crate::print::Printer,
) {
    reject(unit, diagnostics, p, validate::with_facts);
    reject(unit, diagnostics, p, validate::default_none::check);
    reject(unit, diagnostics, p, crate::reduction_types::check);
    reject(unit, diagnostics, p, validate::enclosing);
    let inside = validate::inside_unchanged(unit);
    for &k in &inside {
        unit.dirs[k] = None;
    }
    if !inside.is_empty() {
        unit.refresh_nearest();
    }
}

/// Phase **print**: the language's printer writes each plan as edits (sites in parallel);
/// with the plans' diagnostics. Also returns which edits belong to which site: they become
/// that construct's fix once the runtime pass has renamed the OpenACC constants they copy.
/// Batches of whole site trees (a site's edits read its tree's plans only), each batch's
/// plans freed once it is printed: a large file never holds all its plans and all its
/// edits at once.
fn print(
    unit: &Unit,
    mut plans: Vec<Plan>,
    printer: &dyn crate::print::Printer,
    diagnostics: &mut Vec<Diagnostic>,
) -> (Vec<Edit>, Vec<(usize, Range<usize>)>) {
    let mut batches: Vec<Vec<Edit>> = Vec::new();
    let (mut total, mut site_ranges) = (0, Vec::new());
    for run in unit.tree_runs(print_batch(plans.len())) {
        #[cfg(test)]
        tests::PRINTED_BATCHES.with(|c| c.set(c.get() + 1));
        let per_site = crate::par::map_indices(run.len(), |k| {
            let i = run.start + k;
            unit.dir(i)?;
            Some(printer.site_edits(unit, &plans, i))
        });
        // Sized once: a large file has millions of edits, each growth a copy of all of them.
        let mut edits = Vec::with_capacity(per_site.iter().flatten().map(Vec::len).sum());
        let mut done = Vec::with_capacity(run.len());
        for (i, e) in run.zip(per_site) {
            let mut p = std::mem::replace(&mut plans[i], Plan::new(Action::Unchanged));
            diagnostics.extend(p.diags.take());
            done.push(p);
            if let Some(e) = e {
                let from = total + edits.len();
                edits.extend(e);
                site_ranges.push((i, from..total + edits.len()));
            }
        }
        // By the pool: freeing many small allocations takes a while.
        rayon::spawn(move || drop(done));
        total += edits.len();
        batches.push(edits);
    }
    drop(plans);
    // One list for the runtime pass, made once the plans are freed.
    let mut edits = Vec::with_capacity(total);
    for b in batches {
        edits.extend(b);
    }
    (edits, site_ranges)
}

/// Whether the facts are kept for printing whatever the printer says (a test's comparison).
fn keeps_facts() -> bool {
    #[cfg(test)]
    if tests::KEEP_FACTS.with(std::cell::Cell::get) {
        return true;
    }
    false
}

/// Sites per batch of [`print`] (whole trees make a batch longer): a sixteenth of the file,
/// at least a few thousand sites.
fn print_batch(sites: usize) -> usize {
    #[cfg(test)]
    if let Some(n) = tests::PRINT_BATCH.with(std::cell::Cell::get) {
        return n;
    }
    (sites / 16).max(4096)
}

/// Whether site `i` stays OpenACC in the output.
fn is_left(unit: &Unit, plans: &[Plan], i: usize) -> bool {
    unit.dir(i).is_none() || plans[i].action == Action::Unchanged
}

/// Leave unchanged the directives a check rejects, with its diagnostics.
fn reject(
    unit: &mut Unit,
    diagnostics: &mut Vec<Diagnostic>,
    printer: &dyn crate::print::Printer,
    check: impl Fn(&Unit) -> Vec<(usize, Diagnostic)>,
) {
    let rejected = check(unit);
    let any = !rejected.is_empty();
    for (i, mut d) in rejected {
        d.offset = printer.locate(unit, i, d.offset);
        diagnostics.push(d);
        unit.dirs[i] = None;
    }
    if any {
        unit.refresh_nearest();
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

    thread_local! {
        /// `print_batch`'s answer, where a test sets one.
        pub(super) static PRINT_BATCH: std::cell::Cell<Option<usize>> =
            const { std::cell::Cell::new(None) };
        /// Batches `print` has printed on this thread.
        pub(super) static PRINTED_BATCHES: std::cell::Cell<usize> =
            const { std::cell::Cell::new(0) };
        /// `keeps_facts`'s answer.
        pub(super) static KEEP_FACTS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// C's printer says it reads no facts, so they are freed before printing: every C
    /// fixture translates with the same text and diagnostics as with its facts kept.
    #[test]
    fn c_prints_the_same_without_its_facts() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/translate");
        let mut cases: Vec<_> = std::fs::read_dir(&dir)
            .expect("fixtures/translate")
            .map(|e| e.expect("fixture").path().join("input.c"))
            .filter(|p| p.exists())
            .collect();
        cases.sort();
        assert!(cases.len() > 50, "{} C fixtures", cases.len());
        let sem = SemanticConfig::syntactic();
        let opts = Options::default();
        let show = |o: &Outcome| {
            let diags: Vec<_> = o
                .diagnostics
                .iter()
                .map(|d| format!("{} {} {}", d.offset, d.rule, d.message))
                .collect();
            (o.text.clone(), diags)
        };
        for p in &cases {
            let src = std::fs::read_to_string(p).expect("fixture input");
            let run = |keep| {
                KEEP_FACTS.with(|c| c.set(keep));
                let out = translate(&src, Some(p), &opts, &sem, None);
                KEEP_FACTS.with(|c| c.set(false));
                show(&out)
            };
            assert_eq!(run(false), run(true), "{p:?}");
        }
    }

    /// `migrate_bytes` gives the outcome the lines of the text it translated when that text
    /// is the input's bytes: they must be the input's own lines, in every `--emit` mode (the
    /// text read back from a previous run's output included) and for both languages; a
    /// CR-only file or one with bytes that are not UTF-8 has its lines found again.
    #[test]
    fn the_outcome_has_the_inputs_lines() {
        let c = "void f(int n, double *a) {\r\n#pragma acc parallel loop copy(a[0:n])\nfor (int i = 0; i < n; i++) a[i] += 1;\n}\n";
        let f = "subroutine f(n, a)\n  integer :: n, i\n  real(8) :: a(n)\n  !$acc parallel loop\n  do i = 1, n\n    a(i) = 0\n  end do\nend subroutine f\n";
        let sem = SemanticConfig::syntactic();
        let check = |bytes: &[u8], name: &str, emit: Emit| {
            let opts = Options {
                emit,
                ..Options::default()
            };
            let path = std::path::Path::new(name);
            let out = migrate_bytes(bytes, Some(path), &opts, &sem).expect("translates");
            let cr_only = !bytes.contains(&b'\n');
            let want = LineIndex::of_bytes(bytes, if cr_only { b'\r' } else { b'\n' });
            for o in 0..=bytes.len() + 1 {
                assert_eq!(
                    out.index.line_col(o),
                    want.line_col(o),
                    "{name} {emit:?} at {o}"
                );
            }
            out.output
        };
        for emit in Emit::ALL {
            for (text, name) in [(c, "a.c"), (f, "a.f90")] {
                let once = check(text.as_bytes(), name, emit);
                // The translation read back (its `--emit` output), then the odd encodings.
                check(&once, name, emit);
                check(
                    text.replace('\n', "\r").replace("\r\r", "\r").as_bytes(),
                    name,
                    emit,
                );
                let mut latin1 = text.as_bytes().to_vec();
                let comment: &[u8] = if name == "a.c" {
                    b"/* \xe9 */\n"
                } else {
                    b"! \xe9\n"
                };
                latin1.splice(0..0, comment.iter().copied());
                check(&latin1, name, emit);
            }
        }
    }

    /// `f()` with `print` taking `batch` sites at a time, and how many batches it printed.
    fn with_print_batch<T>(batch: usize, f: impl FnOnce() -> T) -> (T, usize) {
        PRINT_BATCH.with(|c| c.set(Some(batch)));
        PRINTED_BATCHES.with(|c| c.set(0));
        let out = f();
        PRINT_BATCH.with(|c| c.set(None));
        (out, PRINTED_BATCHES.with(std::cell::Cell::get))
    }

    /// Printing in batches of whole site trees, each batch's plans freed once printed, is a
    /// change of memory only: with one tree per batch, every C and Fortran fixture (and the
    /// C fixtures as one file: enter-data pairs and structure members across trees, async
    /// queues) translates with the same text and diagnostics, in the same order, as in one
    /// batch.
    #[test]
    fn printing_in_batches_of_trees_changes_nothing() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/translate");
        let mut cases: Vec<_> = std::fs::read_dir(&dir)
            .expect("fixtures/translate")
            .filter_map(|e| {
                std::fs::read_dir(e.expect("fixture").path())
                    .ok()?
                    .map(|e| e.expect("fixture file").path())
                    .find(|p| p.file_stem().is_some_and(|s| s == "input"))
            })
            .collect();
        cases.sort();
        let sem = SemanticConfig::syntactic();
        let opts = Options::default();
        let show = |o: &Outcome| {
            let diags: Vec<_> = o
                .diagnostics
                .iter()
                .map(|d| format!("{} {} {}", d.offset, d.rule, d.message))
                .collect();
            (o.text.clone(), diags)
        };
        let one_c: String = cases
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "c"))
            .map(|p| std::fs::read_to_string(p).expect("fixture input"))
            .collect();
        let mut files: Vec<(Option<&std::path::Path>, String)> = cases
            .iter()
            .map(|p| {
                let src = std::fs::read_to_string(p).expect("fixture input");
                (Some(p.as_path()), src)
            })
            .collect();
        files.push((None, one_c));
        let (mut split_somewhere, mut fortran) = (false, 0);
        for (path, src) in &files {
            let run = |batch| {
                with_print_batch(batch, || {
                    crate::par::in_one_piece(|| translate(src, *path, &opts, &sem, None))
                })
            };
            let ((whole, _), (split, batches)) = (run(usize::MAX), run(1));
            assert_eq!(show(&split), show(&whole), "{path:?}");
            split_somewhere |= batches > 1;
            fortran += usize::from(path.and_then(crate::fortran::form::kind_of).is_some());
        }
        assert!(split_somewhere, "no file printed in several batches");
        assert!(fortran >= 3, "{fortran} Fortran fixtures");
    }

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
            let split = translate(&src, None, &opts, &sem, None);
            let whole = crate::par::in_one_piece(|| translate(&src, None, &opts, &sem, None));
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
