//! The OpenACC runtime API (`acc_*` calls), `#include <openacc.h>` and `_OPENACC` tests.
//!
//! Calls are found in the token stream, so comments and string literals are never touched,
//! and in `#define` bodies (sub-lexed like `_Pragma` in `scan.rs`). A call is an identifier
//! named in `rules/runtime.toml`, followed by `(`, that is not a member (`x.acc_wait(`), a
//! qualified name (`ns::acc_wait(`) or a declaration (`void acc_wait(`, `int *acc_x(` at the
//! start of a declaration). The table says what each routine becomes:
//!
//! - an OpenMP expression replacing the call (`acc_set_device_num(n, t)` → `omp_set_default_device(n)`),
//!   or a call of a helper (`acc_malloc(n)` → `acc2omp_target_alloc(n, …)`: OpenMP's
//!   device-memory routines, reached through weak references so that a program linked
//!   without the offloading runtime, `clang -fopenmp` alone, links and uses the host);
//! - a directive replacing the whole expression statement (`acc_copyin(p, n);` →
//!   `target enter data` on the same bytes, through a `char *` so that any pointer and any
//!   byte count work: GCC 12 and Clang accept only a variable as the base of a section);
//! - nothing (`acc_init(…);` is removed, except for the host, which it selects);
//! - or a diagnostic, with the call left unchanged.
//!
//! Directive lines (`#pragma acc`, `_Pragma`) belong to the directive translator and are never
//! edited here, so the two sets of edits cannot overlap.

use crate::rules::{RuleId, id};

mod calls;
mod helpers;
mod names;
mod preprocessor;
mod profiling;
mod regions;
mod replace;
#[cfg(test)]
mod tests;
mod text;

use crate::diag::Diagnostic;
use crate::edit::Edit;
use crate::lex::{PpLines, TokKind, Token, lex_range};
use crate::options::Options;
use crate::source::LineIndex;
use crate::unit::Unit;
pub(crate) use names::{DeviceType, device_type, rename_name};
pub(crate) use preprocessor::guard;
use preprocessor::macro_body;
use regions::Regions;
use std::ops::Range;
use text::{acc_tokens, calls_omp, names_routine, separate_tokens};

/// Name of the `char *` that carries the address of the bytes a data routine maps.
const BYTES: &str = "acc2omp_bytes";

/// Calls nested deeper than this in each other's arguments are left alone (no recursion
/// without bound on hostile input).
const MAX_NESTING: usize = 64;

/// What the runtime translation of one file gives.
pub struct RuntimeEdits {
    pub edits: Vec<Edit>,
    pub diags: Vec<Diagnostic>,
    /// The translation calls OpenMP device-memory routines (`omp_target_*`,
    /// `omp_get_mapped_ptr`), which need the offloading runtime (libomptarget) to link.
    pub offload_routines: bool,
}

/// Every helper definition the translation may insert, in order (to compile them all).
pub fn helper_catalog(v: crate::profile::OmpVersion, eol: &str) -> String {
    helpers::HELPERS
        .iter()
        .map(|h| h.definition(v, eol, false))
        .collect()
}

/// Routines of the offloading runtime: a host-only build (`clang -fopenmp`) cannot link them
/// (the helpers reach the ones they call through weak references, with a host fallback).
const OFFLOAD_ROUTINES: [&str; 2] = ["omp_target_", "omp_get_mapped_ptr"];

/// Edits and diagnostics for the runtime API, `openacc.h` and `_OPENACC` in one file.
/// `site_edits` are the edits of the directive translation: the constructs they emit decide
/// where OpenMP calls are allowed, and what they insert decides, with the calls translated
/// here, which helpers the file gets and whether it needs omp.h. `kept`: compute constructs
/// the translation leaves OpenACC, whose calls stay OpenACC too.
pub fn runtime_edits(
    unit: &Unit,
    structure: &crate::structure::Structure,
    pp: &PpLines,
    opts: &Options,
    site_edits: &mut [Edit],
    kept: &[usize],
) -> RuntimeEdits {
    let src = unit.src;
    // openacc.h names the directive translation copied (clause expressions it moves into
    // code, `set` arguments) are renamed like those in code: the output is a fixed point.
    let mut vendors = Vec::new();
    for e in site_edits.iter_mut() {
        if let Some((text, v)) = names::rename_in(&e.text) {
            e.text = text;
            vendors.extend(v.into_iter().map(|name| (e.range.start, name)));
        }
    }
    // Directives that became code (`set … if(acc_get_num_devices(…) > 0)`): the runtime
    // calls they carry are code now, translated like calls in a macro body.
    let mut code_diags = Vec::new();
    let mut code_sites: Vec<Range<usize>> = Vec::new();
    for e in site_edits.iter_mut() {
        if !text::has(&e.text, "acc_")
            || !covers_a_site(&unit.sites, &e.range)
            || e.text.contains("pragma")
        {
            continue;
        }
        let (text, diags) = calls_in_code(&e.text, e.range.start, unit, opts);
        e.text = text;
        code_diags.extend(diags);
        code_sites.push(e.range.clone());
    }
    let site_edits = &*site_edits;
    let toks = structure.toks;
    let mut cx = Cx {
        src,
        lang: unit.lang,
        eol: unit.eol,
        index: unit.lines,
        file_lines: unit.file_lines,
        pp,
        opts,
        regions: std::sync::OnceLock::new(),
        site_edits,
        sites: unit.sites.iter().map(|s| s.span()).collect(),
        wrappers: crate::scan::pragma_wrappers(src, toks),
        diags: Vec::new(),
        handled: Default::default(),
        unchanged: unchanged_constructs(unit, kept),
        omp_at: None,
        depth: 0,
        macro_use: None,
        attachments: src.contains("acc_detach").then(|| unit.attachments()),
    };
    // The tokens with `acc_` in them: the only ones the passes below look at.
    let acc = acc_tokens(src, toks, 0..toks.len());
    let acc_lines = || {
        acc.iter()
            .map(|&k| &toks[k])
            .filter(|t| t.kind == TokKind::PpLine)
    };
    let restricted_uses = macro_uses_in_regions(&cx, toks, acc_lines());
    for (at, name) in vendors {
        cx.diag(at, id::RUNTIME_DEVICE, names::vendor_note(&name));
    }
    cx.profiling(toks, &acc);
    let mut edits = cx.calls(toks, 0..toks.len(), Scope::Code);
    edits.extend(kept_directive_names(&mut cx, unit, site_edits));
    for tok in acc_lines() {
        let inner = cx.pp.inner(src, tok);
        match inner.first().map(|t| t.text(src)) {
            Some("define") => {
                let body = macro_body(src, &inner);
                cx.macro_use = inner
                    .get(1)
                    .and_then(|n| restricted_uses.get(n.text(src)).copied());
                edits.extend(cx.calls(&inner, body..inner.len(), Scope::Macro));
                cx.macro_use = None;
            }
            Some("pragma") if !code_sites.iter().any(|r| r.contains(&{ tok.start() })) => {
                cx.calls_in_directive(&inner)
            }
            _ => {}
        }
    }
    // What the translation inserts: OpenMP routines need omp.h, helpers their definitions.
    // Both have `omp_` in their names (`omp_…`, `acc2omp_…`): the texts without it (most
    // directives) are passed over.
    let inserted: Vec<&Edit> = site_edits
        .iter()
        .chain(&edits)
        .filter(|e| text::has(&e.text, "omp_"))
        .collect();
    let first = |f: &dyn Fn(&str) -> bool| {
        inserted
            .iter()
            .filter(|e| f(&e.text))
            .map(|e| e.range.start)
            .min()
    };
    if let Some(at) = first(&calls_omp) {
        cx.omp_at = Some(cx.omp_at.map_or(at, |o| o.min(at)));
    }
    let helpers_at =
        first(&|t: &str| text::has(t, "acc2omp_") && helpers::helper_names(t).next().is_some());
    let helper_edits = match helpers_at {
        Some(at) => {
            let texts: Vec<String> = inserted.iter().map(|e| e.text.clone()).collect();
            cx.helper_definitions(toks, texts.iter().map(String::as_str), at)
        }
        None => Vec::new(),
    };
    let left = cx.leftovers(toks, &acc, &edits, &code_sites);
    edits.extend(cx.preprocessor(toks, &acc, &left));
    edits.extend(helper_edits);
    for e in &mut edits {
        separate_tokens(src, e);
    }
    let offload_routines = site_edits
        .iter()
        .chain(&edits)
        .any(|e| text::has(&e.text, "omp_") && names_routine(&e.text, &OFFLOAD_ROUTINES));
    cx.diags.extend(code_diags);
    RuntimeEdits {
        edits,
        diags: cx.diags,
        offload_routines,
    }
}

/// `text` (code a directive became, inserted at `at`) with its runtime calls translated as
/// expressions, and the diagnostics (at `at`).
fn calls_in_code(text: &str, at: usize, unit: &Unit, opts: &Options) -> (String, Vec<Diagnostic>) {
    let toks = crate::lex::lex(text);
    let pp = PpLines::new(text, &toks);
    let index = LineIndex::new(text);
    let mut cx = Cx {
        src: text,
        eol: unit.eol,
        index: &index,
        file_lines: None,
        pp: &pp,
        opts,
        regions: std::sync::OnceLock::new(),
        site_edits: &[],
        sites: Vec::new(),
        wrappers: Default::default(),
        diags: Vec::new(),
        handled: Default::default(),
        unchanged: Default::default(),
        omp_at: None,
        depth: 0,
        macro_use: None,
        attachments: None,
        lang: unit.lang,
        // The inserted code's lines are not the file's (diagnostics go to `at`).
    };
    let edits = cx.calls(&toks, 0..toks.len(), Scope::Macro);
    let out = crate::edit::apply(text, &edits).unwrap_or_else(|_| text.to_string());
    let diags = cx
        .diags
        .into_iter()
        .map(|mut d| {
            d.offset = at;
            d
        })
        .collect();
    (out, diags)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Ordinary code: directives may be emitted on lines of their own.
    Code,
    /// A `#define` body: only expressions can be emitted.
    Macro,
}

struct Cx<'a> {
    src: &'a str,
    /// How the file's expressions are written.
    lang: &'static dyn crate::lang::Language,
    eol: &'static str,
    index: &'a LineIndex,
    /// See `Unit::file_lines`.
    file_lines: Option<&'a (dyn Fn(usize) -> usize + Sync)>,
    /// The tokens inside each preprocessor line of the file.
    pp: &'a PpLines,
    opts: &'a Options,
    /// Read from the translated text when the first call needs it (most files have none).
    regions: std::sync::OnceLock<Regions>,
    /// The directive translation's edits.
    site_edits: &'a [Edit],
    /// Directive sites (never edited here), in source order.
    sites: Vec<Range<usize>>,
    /// Pragma wrapper macros (`#define P(x) _Pragma(#x)`).
    wrappers: crate::hash::HashSet<String>,
    diags: Vec<Diagnostic>,
    /// Byte ranges of calls translated or reported (names inside are accounted for).
    handled: crate::intervals::Covered,
    /// Constructs left OpenACC (a directive error): the calls in them stay OpenACC too, as
    /// their directives do, so that a second run decides as the first did.
    unchanged: crate::intervals::Covered,
    /// Where an `omp_*` routine was first emitted.
    omp_at: Option<usize>,
    /// How deep the call being translated is nested in other calls' arguments.
    depth: usize,
    /// For the calls of a `#define` body: a use of the macro where OpenMP forbids runtime
    /// calls (see `Regions::restricted`).
    macro_use: Option<usize>,
    /// The file's explicit attachments, when it detaches (see `crate::attachments`).
    attachments: Option<&'a crate::attachments::Attachments>,
}

/// openacc.h names in the parts of translated directives that the translation keeps as
/// written (`if(acc_device_host)`, a `private` list): renamed like those in code, or they
/// would be left behind. Directives left unchanged (no edit) stay as they are.
fn kept_directive_names(cx: &mut Cx, unit: &Unit, site_edits: &[Edit]) -> Vec<Edit> {
    let src = cx.src;
    let mut out = Vec::new();
    // Runtime routines and openacc.h names all have `acc_` in them.
    let named: Vec<&crate::scan::Site> = (unit.sites.iter())
        .filter(|s| s.unescaped.is_none() && src.get(s.text()).is_none_or(|t| text::has(t, "acc_")))
        .collect();
    if named.is_empty() {
        return out;
    }
    // Edits never overlap, so sorted by (start, end) their ends are in order too.
    let mut edited: Vec<Range<usize>> = site_edits.iter().map(|e| e.range.clone()).collect();
    edited.sort_by_key(|r| (r.start, r.end));
    let covers = |r: &Range<usize>| {
        let k = edited.partition_point(|e| e.end <= r.start);
        edited.get(k).is_some_and(|e| e.start < r.end)
    };
    for site in named {
        if !covers(&site.span()) {
            continue;
        }
        let toks = lex_range(src, site.text(), false);
        // A runtime call left in the directive (`runtime-in-directive`) keeps openacc.h and
        // its constants as they are.
        let call_left = toks
            .windows(2)
            .any(|w| unit.tables.runtime(w[0].text(src)).is_some() && w[1].text(src) == "(");
        if call_left {
            continue;
        }
        for (k, t) in toks.iter().enumerate() {
            let prev = k.checked_sub(1).map(|p| toks[p].text(src));
            if t.kind != TokKind::Ident
                || matches!(prev, Some("." | "->" | "::"))
                || covers(&t.range())
            {
                continue;
            }
            if let Some(r) = names::rename(t.text(src)) {
                if r.vendor {
                    cx.diag(
                        t.start(),
                        id::RUNTIME_DEVICE,
                        names::vendor_note(t.text(src)),
                    );
                }
                out.push(Edit::replace(t.range(), r.to.to_string()));
            }
        }
    }
    out
}

/// The statements of the constructs left OpenACC: those a check rejected and the compute
/// constructs in `kept` (their plans leave them unchanged).
fn unchanged_constructs(unit: &Unit, kept: &[usize]) -> crate::intervals::Covered {
    let mut out = crate::intervals::Covered::default();
    let rejected = unit.dirs.iter().enumerate().filter(|(_, d)| d.is_none());
    for i in rejected.map(|(i, _)| i).chain(kept.iter().copied()) {
        if let Some(s) = &unit.stmts[i] {
            out.insert(s.bytes());
        }
    }
    out
}

/// Macros with an `acc_` routine in their body, and the first place each is used where
/// OpenMP forbids runtime calls (`acc_lines`: the preprocessor lines with `acc_` in them).
fn macro_uses_in_regions<'t>(
    cx: &Cx,
    toks: &[Token],
    acc_lines: impl Iterator<Item = &'t Token>,
) -> crate::hash::HashMap<String, usize> {
    let src = cx.src;
    let mut names = crate::hash::HashMap::default();
    for tok in acc_lines {
        let inner = cx.pp.inner(src, tok);
        if let [d, name, ..] = &inner[..]
            && d.text(src) == "define"
        {
            names.insert(name.text(src).to_string(), None);
        }
    }
    if names.is_empty() {
        return crate::hash::HashMap::default();
    }
    for t in toks.iter().filter(|t| t.kind == TokKind::Ident) {
        if let Some(first @ None) = names.get_mut(t.text(src))
            && cx.restricted(t.start())
        {
            *first = Some(t.start());
        }
    }
    names
        .into_iter()
        .filter_map(|(n, at)| at.map(|a| (n, a)))
        .collect()
}

impl Cx<'_> {
    fn text(&self, t: &Token) -> &str {
        t.text(self.src)
    }

    /// Source text of tokens `r` (verbatim, comments between them included).
    fn slice(&self, toks: &[Token], r: &Range<usize>) -> &str {
        if r.is_empty() {
            return "";
        }
        &self.src[toks[r.start].start()..toks[r.end - 1].end()]
    }

    /// The line a message names for offset `o` (see `Unit::line_at`).
    fn line_at(&self, o: usize) -> usize {
        match self.file_lines {
            Some(f) => f(o),
            None => self.index.line_col(o).0,
        }
    }

    fn diag(&mut self, at: usize, rule: RuleId, message: String) {
        self.diags.push(Diagnostic::new(at, rule, message));
    }

    fn in_site(&self, at: usize) -> bool {
        in_sites(&self.sites, at)
    }

    /// See [`Regions::restricted`].
    fn restricted(&self, at: usize) -> bool {
        self.regions
            .get_or_init(|| Regions::new(self.src, self.site_edits, self.opts.profile))
            .restricted(at)
    }
}

/// Whether `range` covers a whole directive site (`sites` in source order): a look at the
/// sites starting inside it, not at every site (edits are as many as sites).
fn covers_a_site(sites: &[crate::scan::Site], range: &Range<usize>) -> bool {
    let k = sites.partition_point(|s| s.span().start < range.start);
    sites[k..]
        .iter()
        .take_while(|s| s.span().start <= range.end)
        .any(|s| s.span().end <= range.end)
}

/// Whether `at` is inside one of the directive `sites` (in source order).
fn in_sites(sites: &[Range<usize>], at: usize) -> bool {
    let k = sites.partition_point(|s| s.start <= at);
    k > 0 && sites[k - 1].contains(&at)
}
