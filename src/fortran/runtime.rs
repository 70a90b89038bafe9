//! The OpenACC runtime API in Fortran: `use openacc` (also on `!$` lines), `_OPENACC` in
//! preprocessed files and the `acc_*` routines of the Fortran binding.
//!
//! What each routine becomes is the Fortran columns of its entry in `rules/runtime.toml`
//! (one entry per routine, shared with C): an OpenMP expression in place of the call
//! (`acc_on_device(acc_device_host)` → `omp_is_initial_device()`), `!$omp` directives in
//! place of a `call` statement (`call acc_copyin(a)` → `!$omp target enter data map(to: a)`),
//! the statement removed (`acc_shutdown`), a call of a helper procedure (`helpers.rs`; the
//! device-type model and its constants: `devices.rs`), or a diagnostic with the call left
//! unchanged (`runtime-fortran-helper`).
//!
//! `use openacc` becomes `use omp_lib` when nothing of the module stays in the unit and the
//! units it contains; while something stays, `use openacc` stays and `use omp_lib` is added
//! after it when OpenMP routines are called. A unit that calls OpenMP routines and reaches
//! neither module through itself or its hosts (it gets the OpenACC names from another
//! module) gets `use omp_lib` after its last `use` statement; `c_loc` the same way from
//! `iso_c_binding`. The output is a fixed point: a second run finds nothing to change.

use super::Front;
use super::lex::{Lexed, TokKind};
use super::lines::Lines;
use super::print::{Spelling, directive_lines};
use super::stmt::{Kind, Toks};
use crate::diag::Diagnostic;
use crate::edit::Edit;
use crate::options::Options;
use crate::rules::{RuleId, RuntimeRule, id};
use crate::runtime::{DeviceType, RuntimeEdits};
use std::ops::Range;

/// Edits and diagnostics for the runtime API of one Fortran file. `kept`: byte ranges of
/// the constructs the directive translation leaves OpenACC; the calls in them stay OpenACC.
/// `mapped`: what the file's directives and calls map (`super::deep_maps`).
pub(crate) fn runtime_edits(
    src: &str,
    front: &Front,
    opts: &Options,
    kept: &[Range<usize>],
    site_edits: &[Edit],
    mapped: &super::deep_maps::Mapped,
) -> RuntimeEdits {
    let mut cx = Cx {
        src,
        front,
        opts,
        mapped,
        kept: spans::Spans::new(kept.iter().cloned()),
        site_edits,
        decls: Vec::new(),
        eol: if src.contains("\r\n") { "\r\n" } else { "\n" },
        edits: Vec::new(),
        exprs: Vec::new(),
        diags: Vec::new(),
        left: Vec::new(),
        omp_names: vec![Vec::new(); front.structure.units.len()],
        cloc: vec![false; front.structure.units.len()],
        compute: std::sync::OnceLock::new(),
        innermost: std::sync::OnceLock::new(),
        edit_spans: std::sync::OnceLock::new(),
        omp: std::sync::OnceLock::new(),
        helpers: Vec::new(),
        rescan: false,
    };
    for si in 0..front.lexed.stmts.len() {
        cx.statement(si);
    }
    // The directive translation's code may call OpenMP routines too (the bound of a loop
    // over the gangs: `omp_is_initial_device()`).
    let test = crate::fortran::optional_args::IS_PRESENT;
    let test_call = format!("{test}(");
    for e in site_edits {
        if let Some(u) = super::queues::unit_at(front, e.range.start) {
            // A `no_create` item's presence test (`optional_args::split_shape`).
            if e.text.contains(&test_call)
                && let Ok(home) = cx.helper_home(Some(u))
                && !cx.helpers.contains(&(home, test.to_string()))
            {
                cx.helpers.push((home, test.to_string()));
            }
            if brings_omp_lib(&e.text) {
                continue;
            }
            // `host_data … if_present` tests `c_loc(item)`.
            cx.cloc[u] |= contains_any_case(&e.text, b"c_loc(");
            for n in omp_routines(&e.text) {
                if !cx.omp_names[u].contains(&n) {
                    cx.omp_names[u].push(n);
                }
            }
        }
    }
    let exprs = std::mem::take(&mut cx.exprs);
    cx.fit(exprs);
    let uses = cx.use_statements();
    cx.conditional_lines();
    cx.modules(&uses);
    cx.guards();
    cx.add_helpers();
    cx.add_declarations();
    let offload_routines = cx.edits.iter().any(|e| e.text.contains("omp_target_"));
    cx.edits.sort_by_key(|e| (e.range.start, e.range.end));
    cx.diags.sort_by_key(|d| d.offset);
    RuntimeEdits {
        edits: cx.edits,
        diags: cx.diags,
        offload_routines,
    }
}

struct Cx<'a> {
    src: &'a str,
    front: &'a Front,
    opts: &'a Options,
    /// What the file's directives and calls map, whole or by component.
    mapped: &'a super::deep_maps::Mapped,
    kept: spans::Spans,
    /// The directive translation's edits (what each OpenACC site becomes).
    site_edits: &'a [Edit],
    /// Constants of the device-type model the translation names: (the unit that declares
    /// them, the constant).
    decls: Vec<(usize, &'static str)>,
    eol: &'static str,
    /// Directive, removal, `use` and guard edits.
    edits: Vec<Edit>,
    /// Calls replaced by expressions: their lines are fitted to the form's limit last.
    exprs: Vec<Edit>,
    diags: Vec<Diagnostic>,
    /// OpenACC names that stay in code: the name, where, its unit.
    left: Vec<(String, usize, Option<usize>)>,
    /// Per unit: the OpenMP routines its translated calls name.
    omp_names: Vec<Vec<String>>,
    /// Per unit: a translated call uses `c_loc`.
    cloc: Vec<bool>,
    /// Extents of OpenACC compute constructs (`parallel`, `kernels`, `serial`, combined),
    /// read at the first call: most files have none.
    compute: std::sync::OnceLock<spans::Spans>,
    /// The extents of the sites that may be the innermost construct of a call
    /// (`regions.rs`), read once.
    innermost: std::sync::OnceLock<(Vec<usize>, spans::Spans)>,
    /// The ranges of `site_edits`, read once.
    edit_spans: std::sync::OnceLock<spans::Spans>,
    /// The OpenMP constructs already in the file (`regions.rs`), read at the first call.
    omp: std::sync::OnceLock<regions::OmpConstructs>,
    /// Helpers the translated calls name: (the unit that gets them, the helper).
    helpers: Vec<(usize, String)>,
    /// The call just seen was renamed in place: its arguments are read for calls next.
    rescan: bool,
}

fn compute_regions(front: &Front) -> Vec<Range<usize>> {
    front
        .sites
        .iter()
        .zip(&front.structure.regions)
        .filter(|(s, _)| super::is_compute_site(s))
        .map(|(_, r)| r.extent())
        .collect()
}

/// A name the openacc module declares (a routine, a kind or a constant).
fn is_openacc_name(lower: &str) -> bool {
    lower.starts_with("acc_") || lower.starts_with("openacc_")
}

/// [`is_openacc_name`] of a name in any case, without lowering it.
fn is_openacc_name_any_case(name: &str) -> bool {
    let b = name.as_bytes();
    let starts = |p: &[u8]| b.len() >= p.len() && b[..p.len()].eq_ignore_ascii_case(p);
    starts(b"acc_") || starts(b"openacc_")
}

/// What a call becomes.
enum Plan {
    Expr(String),
    Directives(Vec<String>),
    Remove,
}

impl Cx<'_> {
    fn lx(&self) -> &Lexed {
        &self.front.lexed
    }

    fn text(&self, i: usize) -> String {
        self.lx().text(self.src, i).into_owned()
    }

    fn lines(&self) -> &Lines {
        &self.front.lines
    }

    fn line_no(&self, offset: usize) -> usize {
        self.front.lines.line_of(offset) + 1
    }

    fn refuse(&mut self, at: usize, rule: RuleId, name: &str, unit: Option<usize>, why: String) {
        self.diags.push(Diagnostic::new(
            at,
            rule,
            format!("'{name}' is left unchanged: {why}"),
        ));
        self.left.push((name.to_string(), at, unit));
    }

    /// A declared variable (not a routine) of that name is visible in `unit`.
    fn is_variable(&self, unit: Option<usize>, lower: &str) -> bool {
        let Some(u) = unit else { return false };
        self.front
            .facts
            .lookup(&self.front.structure, u, lower)
            .is_some_and(|v| !matches!(v.ty, super::facts::Type::Implicit(_)))
    }

    fn statement(&mut self, si: usize) {
        let front = self.front;
        let s = &front.lexed.stmts[si];
        let kind = &front.structure.stmts[si].kind;
        if matches!(kind, Kind::Use) {
            return;
        }
        let unit = front.structure.unit_of(si);
        let spec = kind.is_spec() || matches!(kind, Kind::Unit(_) | Kind::EndUnit(_));
        // Built when a statement first names the runtime: most name nothing of it.
        let mut toks = None;
        let mut i = s.toks().start;
        while i < s.toks().end {
            let tok = front.lexed.tokens[i];
            if tok.kind() != TokKind::Name
                || !is_openacc_name_any_case(&front.lexed.text(self.src, i))
            {
                i += 1;
                continue;
            }
            let t = toks.get_or_insert_with(|| Toks::new(self.src, &front.lexed, s));
            let lower = front.lexed.lower(self.src, i);
            if (i > s.toks().start && t.text(i - 1) == "%") || self.is_variable(unit, &lower) {
                i += 1;
                continue;
            }
            let routine = self.opts.tables.runtime(&lower);
            let is_call_stmt = matches!(kind, Kind::Call) && i == s.toks().start + 1;
            let action = match kind {
                Kind::IfStmt(a) => *a + 1 == i && t.is(*a, "call"),
                _ => false,
            };
            let open = t.text(i + 1) == "(" && i + 1 < s.toks().end;
            match routine {
                Some(r) if !spec && (open || is_call_stmt || action) => {
                    let close = if open {
                        t.after(i + 1).map(|c| c - 1)
                    } else {
                        None
                    };
                    if open && close.is_none() {
                        return;
                    }
                    let whole = is_call_stmt && close.map_or(i + 1, |c| c + 1) == s.toks().end;
                    self.call(si, i, close, r, whole, action, unit);
                    // A call renamed in place: the calls in its arguments are next.
                    i = match std::mem::take(&mut self.rescan) {
                        true => i + 1,
                        false => close.map_or(i + 1, |c| c + 1),
                    };
                }
                None if !self.kept.holds(tok.start()) && self.rename_constant(i, unit) => {
                    i += 1;
                }
                _ => {
                    self.left.push((lower, tok.start(), unit));
                    i += 1;
                }
            }
        }
    }

    /// The arguments of a call whose `(` is at `open` and `)` at `close` (token ranges).
    fn arguments(&self, open: usize, close: usize) -> Vec<Range<usize>> {
        let mut out = Vec::new();
        if close == open + 1 {
            return out;
        }
        let mut depth = 0usize;
        let mut start = open + 1;
        for k in open + 1..close {
            match self.text(k).as_str() {
                "(" | "[" | "(/" => depth += 1,
                ")" | "]" | "/)" => depth = depth.saturating_sub(1),
                "," if depth == 0 => {
                    out.push(start..k);
                    start = k + 1;
                }
                _ => {}
            }
        }
        out.push(start..close);
        out
    }

    fn span(&self, toks: &Range<usize>) -> Range<usize> {
        let t = &self.lx().tokens;
        t[toks.start].start()..t[toks.end - 1].end()
    }

    /// An argument may have side effects: it calls something that is not a known array.
    fn impure(&self, arg: &Range<usize>, unit: Option<usize>) -> bool {
        (arg.start..arg.end).any(|k| {
            self.lx().tokens[k].kind() == TokKind::Name
                && k + 1 < arg.end
                && self.text(k + 1) == "("
                && !unit.is_some_and(|u| {
                    self.front
                        .facts
                        .lookup(&self.front.structure, u, &self.lx().lower(self.src, k))
                        .is_some_and(|v| v.is_array())
                })
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn call(
        &mut self,
        si: usize,
        name_tok: usize,
        close: Option<usize>,
        r: &RuntimeRule,
        whole: bool,
        action: bool,
        unit: Option<usize>,
    ) {
        let front = self.front;
        let src = self.src;
        let name = r.name.as_str();
        let at = front.lexed.tokens[name_tok].start();
        let span = at..close.map_or(front.lexed.tokens[name_tok].end(), |c| {
            front.lexed.tokens[c].end()
        });
        if self.kept.holds(at) {
            self.left.push((name.to_string(), at, unit));
            return;
        }
        let args = close.map_or(Vec::new(), |c| self.arguments(name_tok + 1, c));
        let compute = self
            .compute
            .get_or_init(|| spans::Spans::new(compute_regions(self.front)));
        if compute.holds(at)
            && let Err(why) = self.in_region(at, r, &args)
        {
            return self.refuse(at, id::RUNTIME_IN_REGION, name, unit, why);
        }
        // An OpenMP target region already in the file (also one the first run made of a
        // compute construct) is judged as that construct was, so the output is a fixed point.
        if !compute.holds(at)
            && let Err(why) = self.in_omp_region(at, r, &args)
        {
            return self.refuse(at, id::RUNTIME_IN_REGION, name, unit, why);
        }
        // A routine's variable mapped whole and by components in the file, as the
        // directives that map it are refused (a query too: a second run must see it).
        if let (Some(u), Some(a)) = (unit, args.first())
            && let Some(why) =
                super::deep_maps::item_refusal(front, u, src[self.span(a)].trim(), self.mapped)
        {
            return self.refuse(at, id::NOT_TRANSLATED, name, unit, why);
        }
        if let Some(route) = self.helper_route(r, &args, unit) {
            // A helper that takes the arguments as they are: the call keeps them and only
            // changes its name, so the runtime calls in them are translated on their own
            // (`acc_get_num_devices(acc_get_device_type())`).
            if self.runtime_in(&args).is_some()
                && let Some(helper) = helpers::keeps_arguments(&route, args.len())
                && !front.lexed.tokens[name_tok].split()
                && self.plain_layout(&args).is_ok()
            {
                let name_span = at..front.lexed.tokens[name_tok].end();
                if self.helper_rename(name_span, helper.to_string(), route, r, unit) {
                    self.rescan = true;
                }
                return;
            }
            if let Err(why) = self.plain_arguments(&args) {
                return self.refuse(at, id::RUNTIME_FORTRAN_HELPER, name, unit, why);
            }
            if self.helper_call(span, &args, route, r, unit) {
                self.vendor_note(r, &args, at);
            }
            return;
        }
        let Some(nargs) = r.fortran_args else {
            let (rule, why) = match (&r.fortran_advice, &r.advice) {
                (Some(a), _) => (id::RUNTIME_FORTRAN_HELPER, a.clone()),
                (None, Some(a)) => (r.rule_id, a.clone()),
                (None, None) => (
                    id::RUNTIME_FORTRAN_HELPER,
                    format!(
                        "its translation needs a helper ({}) that Fortran does not have yet; rewrite the call by hand",
                        r.doc
                    ),
                ),
            };
            return self.refuse(at, rule, name, unit, why);
        };
        if args.len() != nargs {
            let why = if r.fortran_directive.is_some() && args.len() == nargs + 1 {
                format!("the form with a byte count is not translated: a map clause names variables, not bytes; pass the array or the array section ({nargs} argument{} )", if nargs == 1 { "" } else { "s" }).replace(" )", ")")
            } else {
                format!("only the form with {nargs} argument(s) is translated")
            };
            return self.refuse(at, id::RUNTIME_FORTRAN_HELPER, name, unit, why);
        }
        if let Err(why) = self.plain_arguments(&args) {
            return self.refuse(at, id::RUNTIME_FORTRAN_HELPER, name, unit, why);
        }
        let texts: Vec<&str> = args.iter().map(|a| &src[self.span(a)]).collect();
        // The device type decides the replacement.
        let mut vendor = None;
        let expr = match r.devtype {
            Some(d) => {
                let t = texts[d].trim().to_ascii_lowercase();
                match devices::static_device_type(name, &t) {
                    Some(DeviceType::Host) => r.fortran_host.clone(),
                    // A removed routine (`acc_init`) is removed for every other type.
                    _ if r.remove => None,
                    Some(DeviceType::NotHost { vendor: v }) => {
                        if v {
                            vendor = Some(texts[d].trim().to_string());
                        }
                        r.fortran.clone()
                    }
                    None => {
                        let why = format!(
                            "the device type '{}' is known only at run time, where the C translation asks a helper that Fortran does not have for this routine yet; call it with acc_device_host or acc_device_not_host",
                            texts[d].trim()
                        );
                        return self.refuse(at, id::RUNTIME_FORTRAN_HELPER, name, unit, why);
                    }
                }
            }
            None => r.fortran.clone(),
        };
        let plan = match (expr, &r.fortran_directive) {
            (Some(e), _) => Plan::Expr(e),
            (None, Some(d)) => Plan::Directives(d.lines().to_vec()),
            (None, None) if r.remove => Plan::Remove,
            (None, None) => {
                let why = r
                    .fortran_doc
                    .clone()
                    .unwrap_or_else(|| "this device type has no inline OpenMP counterpart".into());
                return self.refuse(at, id::RUNTIME_FORTRAN_HELPER, name, unit, why);
            }
        };
        let templates: Vec<&str> = match &plan {
            Plan::Expr(e) => vec![e.as_str()],
            Plan::Directives(d) => d.iter().map(String::as_str).collect(),
            Plan::Remove => Vec::new(),
        };
        let used = |k: usize| templates.iter().any(|t| t.contains(&format!("{{{k}}}")));
        if let Some(k) = (0..args.len()).find(|&k| !used(k) && self.impure(&args[k], unit)) {
            let why = format!(
                "its argument '{}' may have side effects, and the translation drops it; evaluate it in a statement of its own",
                texts[k].trim()
            );
            return self.refuse(at, id::RUNTIME_SIDE_EFFECTS, name, unit, why);
        }
        if templates.iter().any(|t| t.contains("c_loc({0})"))
            && let Err(why) = self.addressable(&args[0], unit)
        {
            return self.refuse(at, id::RUNTIME_FORTRAN_HELPER, name, unit, why);
        }
        if matches!(plan, Plan::Directives(_))
            && used(0)
            && let Err(why) = self.mappable(&args[0])
        {
            return self.refuse(at, id::RUNTIME_FORTRAN_HELPER, name, unit, why);
        }
        // The arguments the translation keeps, with their OpenACC constants renamed.
        let kept_args: Vec<String> = (0..texts.len())
            .map(|k| {
                if used(k) {
                    texts[k].trim().to_string()
                } else {
                    String::new()
                }
            })
            .collect();
        let Some(texts) = self.renamed_arguments(&kept_args, unit) else {
            let why = "its arguments name OpenACC constants, which the translation declares in the outermost program unit, and that unit has no place for them".to_string();
            return self.refuse(at, id::RUNTIME_FORTRAN_HELPER, name, unit, why);
        };
        let fill = |t: &str| {
            let mut out = t.to_string();
            for (k, a) in texts.iter().enumerate() {
                out = out.replace(&format!("{{{k}}}"), a.trim());
            }
            out
        };
        match plan {
            Plan::Expr(e) => {
                let text = fill(&e);
                if let Some(u) = unit {
                    for n in omp_routines(&text) {
                        if !self.omp_names[u].contains(&n) {
                            self.omp_names[u].push(n);
                        }
                    }
                    self.cloc[u] |= text.contains("c_loc(");
                }
                self.exprs.push(Edit::replace(span, text));
            }
            Plan::Directives(_) | Plan::Remove => {
                let lines = match self.own_lines(si, whole, action) {
                    Ok(l) => l,
                    Err(why) => return self.refuse(at, id::RUNTIME_VALUE_USED, name, unit, why),
                };
                if let Plan::Directives(d) = plan {
                    let s = &front.lexed.stmts[si];
                    let first = &front.lines.get(lines.start);
                    let sp = Spelling {
                        form: first.form,
                        comment: '!',
                        upper: src[at..span.end].bytes().all(|b| !b.is_ascii_lowercase()),
                    };
                    let indent = &src[first.start..front.lexed.tokens[s.toks().start].start()];
                    let text: Vec<String> = d
                        .iter()
                        .map(|t| {
                            let t = if sp.upper {
                                t.to_ascii_uppercase()
                            } else {
                                t.clone()
                            };
                            directive_lines(sp, indent, &fill(&t), self.eol)
                        })
                        .collect();
                    self.edits.push(Edit::replace(
                        first.start..s.span().end,
                        text.join(self.eol),
                    ));
                } else {
                    let first = front.lines.get(lines.start).start;
                    let last = &front.lines.get(lines.end - 1);
                    self.edits.push(Edit::delete(first..last.next));
                }
            }
        }
        if let Some(v) = vendor {
            self.diags.push(vendor_diag(at, &v));
        }
        if r.report {
            let doc = r.fortran_doc.clone().unwrap_or_else(|| r.doc.clone());
            self.diags.push(Diagnostic::new(at, r.rule_id, doc));
        }
    }
}

/// The note on a vendor device type `v` at `at`.
fn vendor_diag(at: usize, v: &str) -> Diagnostic {
    Diagnostic::new(
        at,
        id::RUNTIME_DEVICE,
        format!(
            "'{v}' is any non-host device: OpenMP numbers devices and cannot tell vendors apart"
        ),
    )
}

impl Cx<'_> {
    /// The note on a vendor device type among the arguments of a call at `at`.
    fn vendor_note(&mut self, r: &RuntimeRule, args: &[Range<usize>], at: usize) {
        let Some(d) = r.devtype.filter(|&d| d < args.len()) else {
            return;
        };
        let t = self.src[self.span(&args[d])].trim().to_string();
        if devices::constant(&t.to_ascii_lowercase()).is_some_and(|c| c.vendor) {
            self.diags.push(vendor_diag(at, &t));
        }
    }
}

/// Whether a directive edit's text has its own `use omp_lib` (the `!$` lines of `set`, in
/// a `block`): its calls need none in the unit, where a build without OpenMP would read it.
fn brings_omp_lib(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start().to_ascii_lowercase();
        let l = l.strip_prefix("!$").map_or(l.as_str(), str::trim_start);
        l.starts_with("use omp_lib")
    })
}

/// The OpenMP routines a replacement calls (`omp_get_default_device`, …): each `omp_`
/// that starts a name, found by a substring search (every site's edit is read).
fn omp_routines(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let b = text.as_bytes();
    // Where the last name read ends: an `omp_` inside it is not another.
    let mut next = 0;
    for i in memchr::memmem::find_iter(b, b"omp_") {
        if i < next || (i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) {
            continue;
        }
        let n = b[i..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
            .count();
        let name = &text[i..i + n];
        if !out.iter().any(|x| x == name) {
            out.push(name.to_string());
        }
        next = i + n;
    }
    out
}

/// Whether `text` holds `lower` (lower case) with ASCII case ignored, without lowering
/// `text`.
fn contains_any_case(text: &str, lower: &[u8]) -> bool {
    let (b, Some(&first)) = (text.as_bytes(), lower.first()) else {
        return true;
    };
    memchr::memchr2_iter(first, first.to_ascii_uppercase(), b)
        .any(|i| b[i..].len() >= lower.len() && b[i..i + lower.len()].eq_ignore_ascii_case(lower))
}

/// `omp_routines` as it was, byte by byte: the oracle of its test.
#[cfg(test)]
fn omp_routines_bytewise(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
            && b[i..].starts_with(b"omp_")
        {
            let n = b[i..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                .count();
            let name = text[i..i + n].to_string();
            if !out.contains(&name) {
                out.push(name);
            }
            i += n;
        } else {
            i += 1;
        }
    }
    out
}

mod checks;
mod devices;
mod fit;
mod helpers;
mod regions;
mod spans;
mod uses;

#[cfg(test)]
mod tests;
