//! The Fortran front end (see [`FrontEnd`]): [`Front::new`] reads the file (lines, tokens,
//! statements, directive sites, structure, declarations), each `!$acc` site is parsed in the
//! Fortran dialect, what each applies to comes from the structure, and the shared phases run
//! with the Fortran answers ([`FortranSyntax`]) and the file's printer ([`FortranPrinter`]).
//!
//! The directives translated so far are [`TRANSLATED`]; every other one is left as
//! OpenACC with a `not-translated` diagnostic, and the printer's guard stops an OpenMP build.

use super::Front;
use super::form::SourceKind;
use super::lines::Sentinel;
use super::print::FortranPrinter;
use super::syntax::FortranSyntax;
use crate::diag::Diagnostic;
use crate::directive::{Directive, Parsed, resolve_device_type};
use crate::edit::Edit;
use crate::facts::FileFacts;
use crate::front::{FrontEnd, Passes, Read, Rest};
use crate::lang::Language;
use crate::options::Options;
use crate::outcome::Translated;
use crate::rules::id;
use crate::runtime::RuntimeEdits;
use crate::scan::{Form, Site, SiteParts};
use crate::semantic::{Mode, SemanticConfig};
use crate::unit::Unit;
use std::path::Path;

/// The directives this front end hands to the shared translation (with the `end`
/// directives that close them). The rest stay OpenACC, each with its reason.
pub const TRANSLATED: [&str; 30] = [
    "parallel",
    "end parallel",
    "kernels",
    "end kernels",
    "serial",
    "end serial",
    "parallel loop",
    "end parallel loop",
    "kernels loop",
    "end kernels loop",
    "serial loop",
    "end serial loop",
    "loop",
    "end loop",
    "data",
    "end data",
    "enter data",
    "exit data",
    "update",
    "wait",
    "host_data",
    "end host_data",
    "atomic",
    "end atomic",
    "declare",
    "routine",
    "cache",
    "init",
    "shutdown",
    "set",
];

/// Clauses that keep a directive OpenACC for now: queues need a queue object the printer does
/// not declare in Fortran yet.
const HELD_CLAUSES: [&str; 0] = [];

/// The Fortran front end for one file: its source form, its path (flang reads the file's
/// directory for modules) and how to obtain facts.
pub struct FortranFront {
    pub kind: SourceKind,
    pub path: Option<std::path::PathBuf>,
    pub sem: SemanticConfig,
}

impl FrontEnd for FortranFront {
    fn language(&self) -> &'static dyn Language {
        &super::lang::Fortran
    }

    fn read(&self, src: &str, opts: &Options, rest: &mut Rest<'_, Translated>) -> Translated {
        let tables = &*opts.tables;
        // Each `!$acc` site's directive, read with its information, in site order: kept in
        // `dirs` itself (sized once), the problems of those that do not parse aside.
        let (mut dirs, mut failed) = (Vec::new(), Vec::new());
        let mut front = Front::with_sites(src, self.kind, |all| {
            dirs.reserve_exact(all.iter().filter(|s| s.sentinel == Sentinel::Acc).count());
            let read = |s| crate::directive::fortran_site_parse(s, tables);
            let info = |(info, p): (_, Option<Parsed>)| {
                match p {
                    Some(Ok(d)) => dirs.push(Some(d)),
                    Some(Err(e)) => {
                        failed.push((dirs.len(), e));
                        dirs.push(None);
                    }
                    None => {}
                }
                info
            };
            all.iter().map(read).map(info).collect()
        });
        let mut failed = failed.into_iter().peekable();
        let (mode, flang_inputs) = self.flang_facts(src, &mut front);
        let syntax = FortranSyntax::new(src, &front);
        // Sized up front: vectors grown by doubling copy themselves on fresh pages.
        let acc_count = front
            .sites
            .iter()
            .filter(|s| s.sentinel == Sentinel::Acc)
            .count();
        let mut sites = Vec::with_capacity(acc_count);
        let mut stmts = Vec::with_capacity(acc_count);
        // A file without OpenACC has no directive a structure problem could leave unchanged:
        // Fortran we do not read (CUDA Fortran, a broken generated file) stays unreported,
        // unless it names OpenACC's runtime (`use openacc`), which the runtime pass rewrites.
        let reported = acc_count > 0
            || src
                .as_bytes()
                .windows(7)
                .any(|w| w.eq_ignore_ascii_case(b"openacc"));
        let mut diagnostics: Vec<Diagnostic> = front
            .problems
            .iter()
            .filter(|_| reported)
            .map(|p| {
                Diagnostic::new(
                    p.offset,
                    p.rule.unwrap_or(id::NOT_TRANSLATED),
                    format!("{}; the directive is left unchanged", p.message),
                )
            })
            .collect();
        let mut acc_of = Vec::with_capacity(acc_count);
        for (k, s) in front.sites.iter().enumerate() {
            if s.sentinel != Sentinel::Acc {
                continue;
            }
            acc_of.push(k);
            let acc = s.mark.end - 3..s.mark.end;
            sites.push(Site::from(SiteParts {
                form: Form::Pragma,
                span: s.span.clone(),
                acc,
                text: 0..s.text.len(),
                unescaped: Some(s.text.as_str().into()),
                token: Some(syntax.site_item(k)),
                computed: false,
                first_token: None,
            }));
            let j = acc_of.len() - 1;
            let p = match dirs[j].take() {
                Some(d) => Ok(d),
                None => Err(failed.next_if(|(at, _)| *at == j).expect("its problems").1),
            };
            let (mut d, diags) = parse(s, p, opts);
            diagnostics.extend(diags);
            // Each problem's diagnostic says its directive is left unchanged: so it is.
            if front
                .problems
                .binary_search_by_key(&s.span.start, |p| p.offset)
                .is_ok()
            {
                d = None;
            }
            if let (Some(dir), Some(unit)) = (&d, front.structure.regions[k].unit())
                && let Some(mut e) = super::clause_types::check(&front, unit, dir)
            {
                e.offset = s.file_offset(e.offset);
                diagnostics.push(e);
                d = None;
            }
            // A `routine` without a name applies to the unit it stands in.
            let unit_routine = d
                .as_ref()
                .is_some_and(|d| d.name == "routine" && d.arg.is_none());
            stmts.push(if unit_routine {
                syntax.unit_rest(k)
            } else {
                syntax.stmt_of(k)
            });
            dirs[j] = d;
        }
        // A directive whose construct is not in the front end's structure (no end directive
        // found, a loop directive without its `do`) has its reason among the problems.
        for (i, d) in dirs.iter_mut().enumerate() {
            // An `!$omp` line between a loop or atomic directive and its statement is a
            // comment to OpenACC, but the OpenMP directive written there would apply to it
            // instead: refused, as it is once an `!$acc` directive between them has become
            // `!$omp`, and its statement forgotten, as it was when that directive was still
            // `!$acc` (the loops after it then stay unchanged the same way): a second run
            // changes nothing, also where the directive itself was refused.
            let applies_to_next = matches!(
                front.structure.regions[acc_of[i]].applies,
                super::structure::Applies::Loop { .. } | super::structure::Applies::Atomic { .. }
            );
            if let (Some(st), true) = (&stmts[i], applies_to_next)
                && let Some(line) = omp_between(&front, acc_of[i], st.bytes().start)
            {
                if let Some(dir) = d {
                    diagnostics.push(Diagnostic::new(
                        front.sites[acc_of[i]].span.start,
                        id::NOT_TRANSLATED,
                        format!(
                            "an OpenMP directive (line {line}) lies between 'acc {}' and the statement it applies to; the directive is left unchanged",
                            dir.name
                        ),
                    ));
                }
                stmts[i] = None;
                *d = None;
                continue;
            }
            let Some(dir) = d else { continue };
            if dir.name.starts_with("end ") {
                continue;
            }
            let needs = matches!(
                dir.name.as_str(),
                "data" | "host_data" | "parallel" | "kernels" | "serial"
            ) || dir.name == "loop"
                || dir.is_combined();
            if needs && stmts[i].is_none() {
                *d = None;
            }
        }
        super::omp_target::refuse_inside(&front, &acc_of, &mut dirs, &mut diagnostics);
        diagnostics.extend(super::do_concurrent::check(src, &front, &acc_of, &dirs));
        let printer = FortranPrinter::new(src, &front);
        let acc_sites: Vec<usize> = (0..front.sites.len())
            .filter(|&k| front.sites[k].sentinel == Sentinel::Acc)
            .collect();
        let passes = FortranPasses {
            src,
            front: &front,
            acc_sites,
            mode,
            flang_inputs,
        };
        let out = rest(Read {
            sites,
            dirs,
            stmts,
            diagnostics,
            syntax: &syntax,
            passes: &passes,
            printer: &printer,
        });
        // The front end is freed before the output is built, so that the output's buffers
        // reuse its memory instead of coming on top of it.
        drop((passes, printer, syntax));
        drop(front);
        out
    }

    fn site_count(&self, src: &str) -> usize {
        let lines = super::lines::scan(src, self.kind);
        let (sites, _) = super::sites::find_sites(src, &lines);
        sites.iter().filter(|s| s.sentinel == Sentinel::Acc).count()
    }
}

impl FortranFront {
    /// Add flang's facts to `front` where flang is found (and `--no-clang` is not given):
    /// how the facts were found, and what flang read besides the file.
    fn flang_facts(&self, src: &str, front: &mut Front) -> (Mode, crate::facts::Inputs) {
        let syntactic = |why: Option<String>| Mode::Syntactic {
            reason: match why {
                Some(w) => format!("{}; flang: {w}", super::site_facts::MODE),
                None => super::site_facts::MODE.into(),
            },
        };
        // flang only adds what modules of other files declare; where no directive or no
        // such module is, its run (seconds, and a result the cache cannot keep) buys nothing.
        let needed = front.sites.iter().any(|s| s.sentinel == Sentinel::Acc)
            && (0..front.structure.units.len())
                .any(|u| super::calls::uses_foreign_module(front, u));
        if self.sem.no_clang || !needed {
            return (syntactic(None), Default::default());
        }
        let Ok(flang) = super::flang::find() else {
            return (syntactic(None), Default::default());
        };
        let path = self.path.as_deref();
        let (flags, _) = crate::semantic::compile_flags_for(
            path.map(|p| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()))
                .as_deref(),
            self.sem.compile_commands.as_deref(),
        );
        let fixed = self.kind.form == super::form::Form::Fixed;
        // The modules of other files it uses: flang builds those that no `.mod` has yet.
        let mut wanted: Vec<String> = front
            .facts
            .units
            .iter()
            .flat_map(|u| u.uses_outside())
            .map(str::to_string)
            .collect();
        wanted.sort();
        wanted.dedup();
        match super::flang::symbols(flang, src, path, self.kind.cpp, fixed, &flags, &wanted) {
            Ok(symbols) => {
                super::flang::import(&mut front.facts, &front.structure, &symbols.dump);
                let mode = Mode::Flang {
                    version: flang.version.clone(),
                };
                (mode, symbols.inputs)
            }
            Err(why) => (syntactic(Some(why)), Default::default()),
        }
    }
}

/// One site parsed in the Fortran dialect (`parsed`, as read with its information), or why
/// it stays OpenACC. Offsets of parse errors are mapped back to the file.
fn parse(
    s: &super::sites::Site,
    parsed: Parsed,
    opts: &Options,
) -> (Option<Directive>, Vec<Diagnostic>) {
    let text = &s.text;
    let mut d = match parsed {
        Ok(d) => d,
        Err(errs) => {
            let mut offsets = s.offsets();
            let diags = errs
                .into_iter()
                .map(|e| {
                    Diagnostic::new(
                        offsets.file_offset(e.offset),
                        e.rule,
                        format!("{}; the directive is left unchanged", e.message),
                    )
                })
                .collect();
            return (None, diags);
        }
    };
    let mut diags = Vec::new();
    if let Some((at, note)) = resolve_device_type(&mut d, text, opts.device_type.as_deref()) {
        diags.push(Diagnostic::new(s.file_offset(at), id::DEVICE_TYPE, note));
    }
    if !TRANSLATED.contains(&d.name.as_str()) {
        // An `end` directive stays with its construct, which has the diagnostic.
        if d.name.starts_with("end ") {
            return (None, diags);
        }
        diags.push(Diagnostic::new(
            s.span.start,
            id::NOT_TRANSLATED,
            format!(
                "'acc {}' is not translated in Fortran yet; the directive is left unchanged",
                d.name
            ),
        ));
        return (None, diags);
    }
    if let Some(c) = d
        .clauses
        .iter()
        .find(|c| HELD_CLAUSES.contains(&c.name.as_str()))
    {
        diags.push(Diagnostic::new(
            s.file_offset(c.span().start),
            id::NOT_TRANSLATED,
            format!(
                "'{}' (async queues) is not translated in Fortran yet; the directive is left unchanged",
                c.name
            ),
        ));
        return (None, diags);
    }
    (Some(d), diags)
}

/// The passes of one Fortran file.
struct FortranPasses<'a> {
    src: &'a str,
    front: &'a Front,
    /// Per seam site: its index in `front.sites`.
    acc_sites: Vec<usize>,
    /// How the facts were found.
    mode: Mode,
    /// What flang read besides the file (in `Mode::Flang`).
    flang_inputs: crate::facts::Inputs,
}

impl Passes for FortranPasses<'_> {
    fn facts(&self, _path: Option<&Path>, u: &Unit, _sem: &SemanticConfig) -> FileFacts {
        super::site_facts::file_facts(
            self.src,
            self.front,
            &self.acc_sites,
            u,
            &self.mode,
            &self.flang_inputs,
        )
    }

    /// The runtime API: `use openacc`, `!$ use openacc`, `_OPENACC` and the `acc_*` calls
    /// (`super::runtime`).
    fn runtime(
        &self,
        u: &Unit,
        opts: &Options,
        site_edits: &mut [Edit],
        kept: &[usize],
    ) -> RuntimeEdits {
        // Calls in a construct left OpenACC (kept, or rejected) stay OpenACC with it.
        let rejected = u.dirs.iter().enumerate().filter(|(_, d)| d.is_none());
        let left: Vec<_> = rejected
            .map(|(i, _)| i)
            .chain(kept.iter().copied())
            .filter_map(|i| u.stmts.get(i)?.as_ref().map(|s| s.bytes()))
            .collect();
        let all: Vec<(usize, &crate::directive::Directive)> = (u.dirs.iter().enumerate())
            .filter_map(|(j, d)| Some((*self.acc_sites.get(j)?, d.as_ref()?)))
            .collect();
        let mapped = super::deep_maps::mapped(self.front, u.src, &all);
        super::runtime::runtime_edits(u.src, self.front, opts, &left, site_edits, &mapped)
    }
}

/// The line (1-based) of an `!$omp` site between acc site `k` and byte `stmt`, where its
/// statement starts.
fn omp_between(front: &Front, k: usize, stmt: usize) -> Option<usize> {
    let between = front.sites[k].span.end..stmt;
    // Sites are in file order.
    let from = front
        .sites
        .partition_point(|o| o.span.start < between.start);
    front.sites[from..]
        .iter()
        .take_while(|o| o.span.start <= between.end)
        .find(|o| o.sentinel == Sentinel::Omp && o.span.end <= between.end)
        .map(|omp| front.lines.line_of(omp.span.start) + 1)
}
