//! The OpenACC runtime API in Fortran: `use openacc` (also on `!$` lines), `_OPENACC` in
//! preprocessed files and the `acc_*` routines of the Fortran binding.
//!
//! What each routine becomes is the Fortran columns of its entry in `rules/runtime.toml`
//! (one entry per routine, shared with C): an OpenMP expression in place of the call
//! (`acc_on_device(acc_device_host)` → `omp_is_initial_device()`), `!$omp` directives in
//! place of a `call` statement (`call acc_copyin(a)` → `!$omp target enter data map(to: a)`),
//! the statement removed (`acc_init`), or a diagnostic with the call left unchanged. Fortran
//! files get no helper procedures, so a routine whose C translation needs one is refused
//! with the reason (`runtime-fortran-helper`).
//!
//! `use openacc` becomes `use omp_lib` when nothing of the module stays in the unit and the
//! units it contains; while something stays, `use openacc` stays and `use omp_lib` is added
//! after it when OpenMP routines are called. A unit that calls OpenMP routines and reaches
//! neither module through itself or its hosts (it gets the OpenACC names from another
//! module) gets `use omp_lib` after its last `use` statement; `c_loc` the same way from
//! `iso_c_binding`. The output is a fixed point: a second run finds nothing to change.

use super::Front;
use super::form::Form;
use super::lex::{Lexed, TokKind};
use super::lines::{Line, LineKind, Sentinel};
use super::print::{Spelling, directive_lines, limit};
use super::stmt::{Kind, Toks};
use crate::diag::Diagnostic;
use crate::edit::Edit;
use crate::options::Options;
use crate::rules::{RuleId, RuntimeRule, id};
use crate::runtime::{DeviceType, RuntimeEdits, device_type, guard};
use std::collections::BTreeMap;
use std::ops::Range;

/// Edits and diagnostics for the runtime API of one Fortran file. `kept`: byte ranges of
/// the constructs the directive translation leaves OpenACC; the calls in them stay OpenACC.
// Called by the Fortran pass of the engine once it is wired (and by the tests).
#[allow(dead_code)]
pub(crate) fn runtime_edits(
    src: &str,
    front: &Front,
    opts: &Options,
    kept: &[Range<usize>],
) -> RuntimeEdits {
    let mut cx = Cx {
        src,
        front,
        opts,
        kept,
        eol: if src.contains("\r\n") { "\r\n" } else { "\n" },
        edits: Vec::new(),
        exprs: Vec::new(),
        diags: Vec::new(),
        left: Vec::new(),
        omp_names: vec![Vec::new(); front.structure.units.len()],
        cloc: vec![false; front.structure.units.len()],
        compute: compute_regions(front),
    };
    for si in 0..front.lexed.stmts.len() {
        cx.statement(si);
    }
    let exprs = std::mem::take(&mut cx.exprs);
    cx.fit(exprs);
    let uses = cx.use_statements();
    cx.conditional_lines();
    cx.modules(&uses);
    cx.guards();
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
    kept: &'a [Range<usize>],
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
    /// Extents of OpenACC compute constructs (`parallel`, `kernels`, `serial`, combined).
    compute: Vec<Range<usize>>,
}

/// A `use` statement of one of the modules this pass reads (or a `!$ use` line).
struct Use {
    unit: Option<usize>,
    module: String,
    /// The module name token.
    name: Range<usize>,
    /// `only:` — the bytes of the list after the colon (possibly empty) and the names in it.
    only: Option<(Range<usize>, Vec<String>)>,
    /// A rename (`local => name`) in the statement.
    renames: bool,
    /// Where a line after the statement goes, and the text before `use` on its line.
    after: usize,
    prefix: String,
}

fn compute_regions(front: &Front) -> Vec<Range<usize>> {
    front
        .sites
        .iter()
        .zip(&front.structure.regions)
        .filter(|(s, _)| s.sentinel == Sentinel::Acc)
        .filter(|(s, _)| {
            let first = s.text.split_whitespace().next().unwrap_or("");
            ["parallel", "kernels", "serial"].contains(&first.to_ascii_lowercase().as_str())
        })
        .map(|(_, r)| r.extent.clone())
        .collect()
}

/// A name the openacc module declares (a routine, a kind or a constant).
fn is_openacc_name(lower: &str) -> bool {
    lower.starts_with("acc_") || lower.starts_with("openacc_")
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

    fn lines(&self) -> &[Line] {
        &self.front.lines.lines
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
        let t = Toks::new(self.src, &front.lexed, s);
        let mut i = s.toks.start;
        while i < s.toks.end {
            let tok = front.lexed.tokens[i];
            let lower = front.lexed.lower(self.src, i);
            if tok.kind != TokKind::Name
                || !is_openacc_name(&lower)
                || (i > s.toks.start && t.text(i - 1) == "%")
                || self.is_variable(unit, &lower)
            {
                i += 1;
                continue;
            }
            let routine = self.opts.tables.runtime(&lower);
            let is_call_stmt = matches!(kind, Kind::Call) && i == s.toks.start + 1;
            let action = match kind {
                Kind::IfStmt(a) => *a + 1 == i && t.is(*a, "call"),
                _ => false,
            };
            let open = t.text(i + 1) == "(" && i + 1 < s.toks.end;
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
                    let whole = is_call_stmt && close.map_or(i + 1, |c| c + 1) == s.toks.end;
                    self.call(si, i, close, r, whole, action, unit);
                    i = close.map_or(i + 1, |c| c + 1);
                }
                _ => {
                    self.left.push((lower, tok.start, unit));
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
        t[toks.start].start..t[toks.end - 1].end
    }

    /// An argument may have side effects: it calls something that is not a known array.
    fn impure(&self, arg: &Range<usize>, unit: Option<usize>) -> bool {
        (arg.start..arg.end).any(|k| {
            self.lx().tokens[k].kind == TokKind::Name
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
        let at = front.lexed.tokens[name_tok].start;
        let span = at..close.map_or(front.lexed.tokens[name_tok].end, |c| {
            front.lexed.tokens[c].end
        });
        if self.kept.iter().any(|k| k.contains(&at)) {
            self.left.push((name.to_string(), at, unit));
            return;
        }
        if self.compute.iter().any(|c| c.contains(&at)) {
            let why = "it is inside an OpenACC compute construct, whose OpenMP construct the directive translation decides (OpenMP 5.0 forbids runtime calls directly in 'teams' and in 'loop' regions); move the call out of the construct".to_string();
            return self.refuse(at, id::RUNTIME_IN_REGION, name, unit, why);
        }
        let Some(nargs) = r.fortran_args else {
            let (rule, why) = match (&r.fortran_advice, &r.advice) {
                (Some(a), _) => (id::RUNTIME_FORTRAN_HELPER, a.clone()),
                (None, Some(a)) => (r.rule_id, a.clone()),
                (None, None) => (
                    id::RUNTIME_FORTRAN_HELPER,
                    format!(
                        "its translation needs a helper ({}), and a Fortran file gets none; rewrite the call by hand",
                        r.doc
                    ),
                ),
            };
            return self.refuse(at, rule, name, unit, why);
        };
        let args = close.map_or(Vec::new(), |c| self.arguments(name_tok + 1, c));
        if args.len() != nargs {
            let why = if r.fortran_directive.is_some() && args.len() == nargs + 1 {
                format!("the form with a byte count is not translated: a map clause names variables, not bytes; pass the array or the array section ({nargs} argument{} )", if nargs == 1 { "" } else { "s" }).replace(" )", ")")
            } else {
                format!("only the form with {nargs} argument(s) is translated")
            };
            return self.refuse(at, id::RUNTIME_FORTRAN_HELPER, name, unit, why);
        }
        let texts: Vec<&str> = args.iter().map(|a| &src[self.span(a)]).collect();
        if texts.iter().any(|t| t.contains(['\n', '\r', '&', '!'])) {
            let why = "an argument is continued over lines or holds a comment; write the call on one line".to_string();
            return self.refuse(at, id::RUNTIME_FORTRAN_HELPER, name, unit, why);
        }
        if args.iter().any(|a| {
            a.len() >= 2
                && self.text(a.start + 1) == "="
                && self.lx().tokens[a.start].kind == TokKind::Name
        }) {
            let why =
                "keyword arguments are not translated; pass the arguments by position".to_string();
            return self.refuse(at, id::RUNTIME_FORTRAN_HELPER, name, unit, why);
        }
        if let Some(k) = args.iter().flat_map(|a| a.clone()).find(|&k| {
            self.lx().tokens[k].kind == TokKind::Name
                && self.opts.tables.runtime(&self.lx().lower(src, k)).is_some()
        }) {
            let why = format!(
                "its arguments call '{}'; assign that call's value to a variable first",
                self.text(k)
            );
            return self.refuse(at, id::RUNTIME_FORTRAN_HELPER, name, unit, why);
        }
        // The device type decides the replacement.
        let mut vendor = None;
        let expr = match r.devtype {
            Some(d) => {
                let t = texts[d].trim().to_ascii_lowercase();
                match device_type(&t) {
                    Some(DeviceType::Host) => r.fortran_host.clone(),
                    Some(DeviceType::NotHost { vendor: v }) => {
                        if v {
                            vendor = Some(texts[d].trim().to_string());
                        }
                        r.fortran.clone()
                    }
                    None => {
                        let why = format!(
                            "the device type '{}' is known only at run time, where the C translation asks a helper and a Fortran file gets none; call it with acc_device_host or acc_device_not_host",
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
                    let first = &front.lines.lines[lines.start];
                    let sp = Spelling {
                        form: first.form,
                        comment: '!',
                        upper: src[at..span.end].bytes().all(|b| !b.is_ascii_lowercase()),
                    };
                    let indent = &src[first.start..front.lexed.tokens[s.toks.start].start];
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
                    self.edits
                        .push(Edit::replace(first.start..s.span.end, text.join(self.eol)));
                } else {
                    let first = front.lines.lines[lines.start].start;
                    let last = &front.lines.lines[lines.end - 1];
                    self.edits.push(Edit::delete(first..last.next));
                }
            }
        }
        if let Some(v) = vendor {
            self.diags.push(Diagnostic::new(
                at,
                id::RUNTIME_DEVICE,
                format!("'{v}' is any non-host device: OpenMP numbers devices and cannot tell vendors apart"),
            ));
        }
        if r.report {
            let doc = r.fortran_doc.clone().unwrap_or_else(|| r.doc.clone());
            self.diags.push(Diagnostic::new(at, r.rule_id, doc));
        }
    }

    /// The lines of statement `si`, when a directive may replace it or it may be removed:
    /// a `call` statement alone on its lines, without a label, comments only on its last line.
    fn own_lines(&self, si: usize, whole: bool, action: bool) -> Result<Range<usize>, String> {
        let lx = self.lx();
        let s = &lx.stmts[si];
        if action {
            return Err("it becomes a directive (or is removed), which cannot be the action of an 'if' statement; write 'if (…) then', the call, 'end if'".into());
        }
        if !whole || s.label.is_some() {
            return Err("it becomes a directive (or is removed), so it must be a 'call' statement of its own, without a label".into());
        }
        let shares = |o: Option<&super::lex::Stmt>| {
            o.is_some_and(|o| o.lines.start < s.lines.end && s.lines.start < o.lines.end)
        };
        if shares(si.checked_sub(1).and_then(|p| lx.stmts.get(p))) || shares(lx.stmts.get(si + 1)) {
            return Err(
                "it becomes a directive (or is removed), so it must be alone on its line".into(),
            );
        }
        let ls = self.lines();
        let lines = s.lines.clone();
        let clean = lines
            .clone()
            .all(|k| ls[k].kind == LineKind::Code && ls[k].ignored.is_none())
            && (lines.start..lines.end - 1).all(|k| ls[k].comment.is_none());
        if !clean {
            return Err("it becomes a directive, and its lines hold comments or other lines between them; write the call on one line".into());
        }
        Ok(lines)
    }

    /// `c_loc` of the argument is valid: a variable or an array element (no section), with
    /// the TARGET or POINTER attribute.
    fn addressable(&self, arg: &Range<usize>, unit: Option<usize>) -> Result<(), String> {
        let t = Toks::new(
            self.src,
            self.lx(),
            &self.lx().stmts[self
                .lx()
                .stmt_at(self.lx().tokens[arg.start].start)
                .unwrap_or(0)],
        );
        if t.designator(arg.start) != Some(arg.end) {
            return Err(
                "OpenMP tests an address (c_loc), and the argument is not a variable".into(),
            );
        }
        if (arg.start..arg.end).any(|k| self.text(k) == ":") {
            return Err("OpenMP tests an address (c_loc), and c_loc takes no array section; test its first element".into());
        }
        let base = self.lx().lower(self.src, arg.start);
        let var = unit.and_then(|u| self.front.facts.lookup(&self.front.structure, u, &base));
        if !var.is_some_and(|v| v.target || v.pointer) {
            return Err(format!(
                "OpenMP tests an address (c_loc), and c_loc needs the TARGET or POINTER attribute, which '{base}' does not have here; add 'target' to its declaration"
            ));
        }
        Ok(())
    }

    /// The argument can be a map or update list item: a variable, an element, a
    /// contiguous section or a component (no stride).
    fn mappable(&self, arg: &Range<usize>) -> Result<(), String> {
        let t = Toks::new(
            self.src,
            self.lx(),
            &self.lx().stmts[self
                .lx()
                .stmt_at(self.lx().tokens[arg.start].start)
                .unwrap_or(0)],
        );
        if t.designator(arg.start) != Some(arg.end) {
            return Err("the argument is not a variable, an array section or a component, which a map clause needs".into());
        }
        let mut colons = 0;
        for k in arg.clone() {
            match self.text(k).as_str() {
                "," | "(" => colons = 0,
                ":" => colons += 1,
                "::" => colons += 2,
                _ => {}
            }
            if colons > 1 {
                return Err("a section with a stride is not contiguous, which OpenMP 5.0 maps only in part; map the enclosing contiguous section".into());
            }
        }
        Ok(())
    }

    /// `use` statements (code and `!$` lines).
    fn use_statements(&self) -> Vec<Use> {
        let front = self.front;
        let mut out = Vec::new();
        for (si, s) in front.lexed.stmts.iter().enumerate() {
            if front.structure.stmts[si].kind != Kind::Use {
                continue;
            }
            let toks: Vec<(String, Range<usize>)> = (s.toks.clone())
                .map(|k| (self.text(k), front.lexed.tokens[k].range()))
                .collect();
            let line = &front.lines.lines[s.lines.end - 1];
            let first = &front.lines.lines[s.lines.start];
            let prefix = self.src[first.start..s.span.start].to_string();
            if let Some(u) = parse_use(
                &toks,
                front.structure.unit_of(si),
                s.span.end,
                line.next,
                prefix,
            ) {
                out.push(u);
            }
        }
        for (k, site) in front.sites.iter().enumerate() {
            if site.sentinel != Sentinel::Conditional || site.pieces.len() != 1 {
                continue;
            }
            let p = &site.pieces[0];
            let toks: Vec<(String, Range<usize>)> = super::lex::lex_text(self.src, p.body.clone())
                .iter()
                .map(|t| (self.src[t.range()].to_string(), t.range()))
                .collect();
            let line = &front.lines.lines[p.line];
            let prefix = self.src[line.start..p.body.start].to_string();
            let end = toks.last().map_or(p.body.end, |t| t.1.end);
            if let Some(u) = parse_use(
                &toks,
                front.structure.regions[k].unit,
                end,
                line.next,
                prefix,
            ) {
                out.push(u);
            }
        }
        out
    }

    /// Calls on `!$` lines (other than `use`) stay, with a diagnostic.
    fn conditional_lines(&mut self) {
        let front = self.front;
        for (k, site) in front.sites.iter().enumerate() {
            if site.sentinel != Sentinel::Conditional {
                continue;
            }
            let first = site.text.split_whitespace().next().unwrap_or("");
            if first.eq_ignore_ascii_case("use") {
                continue;
            }
            for p in &site.pieces {
                for t in super::lex::lex_text(self.src, p.body.clone()) {
                    let lower = self.src[t.range()].to_ascii_lowercase();
                    if t.kind == TokKind::Name && is_openacc_name(&lower) {
                        let unit = front.structure.regions[k].unit;
                        if self.opts.tables.runtime(&lower).is_some() {
                            let why = "calls on conditional-compilation ('!$') lines are not translated; write the call as a statement".to_string();
                            self.refuse(t.start, id::RUNTIME_FORTRAN_HELPER, &lower, unit, why);
                        } else {
                            self.left.push((lower, t.start, unit));
                        }
                    }
                }
            }
        }
    }

    /// Units `u` and its hosts (interface bodies have none).
    fn hosts(&self, u: usize) -> Vec<usize> {
        let units = &self.front.structure.units;
        let mut out = vec![u];
        let mut k = u;
        while let Some(p) = units[k].parent.filter(|_| !units[k].interface) {
            out.push(p);
            k = p;
        }
        out
    }

    /// `use openacc` → `use omp_lib` (or kept, `use omp_lib` after it), `use omp_lib` and
    /// `c_loc` where units need them.
    fn modules(&mut self, uses: &[Use]) {
        let n = self.front.structure.units.len();
        // Per unit: the OpenMP names its calls and those of the units it contains need, and
        // the first OpenACC name that stays there.
        let mut sub_names: Vec<Vec<String>> = vec![Vec::new(); n];
        let mut sub_left: Vec<Option<(String, usize)>> = vec![None; n];
        for u in 0..n {
            for h in self.hosts(u) {
                for name in &self.omp_names[u] {
                    if !sub_names[h].contains(name) {
                        sub_names[h].push(name.clone());
                    }
                }
            }
        }
        for (name, at, unit) in &self.left {
            let hs = match unit {
                Some(u) => self.hosts(*u),
                None => (0..n).collect(),
            };
            for h in hs {
                if sub_left[h].as_ref().is_none_or(|(_, a)| at < a) {
                    sub_left[h] = Some((name.clone(), *at));
                }
            }
        }
        let mut inserts: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        let mut has_omp = vec![false; n];
        let mut has_cloc = vec![false; n];
        // Where a unit's added `use` lines go: after its `use openacc`, else its last `use`.
        let mut place: Vec<Option<(usize, String, bool)>> = vec![None; n];
        for u in uses {
            let Some(k) = u.unit else { continue };
            match u.module.as_str() {
                "openacc" | "omp_lib" => has_omp[k] = true,
                "iso_c_binding" => {
                    has_cloc[k] |= u
                        .only
                        .as_ref()
                        .is_none_or(|(_, l)| l.iter().any(|x| x == "c_loc"))
                }
                _ => {}
            }
            if !place[k].as_ref().is_some_and(|p| p.2) {
                place[k] = Some((u.after, u.prefix.clone(), u.module == "openacc"));
            }
        }
        let mut all = vec![];
        for u in uses.iter().filter(|u| u.module == "openacc") {
            let Some(k) = u.unit else { continue };
            let left = sub_left[k].clone().or_else(|| {
                u.renames
                    .then(|| ("a renamed name".to_string(), u.name.start))
            });
            match left {
                None => {
                    let upper = self.src[u.name.clone()]
                        .bytes()
                        .all(|b| !b.is_ascii_lowercase());
                    self.edits.push(Edit::replace(
                        u.name.clone(),
                        if upper { "OMP_LIB" } else { "omp_lib" },
                    ));
                    if let Some((list, _)) = &u.only {
                        let mut names = sub_names[k].clone();
                        names.sort();
                        let text = if names.is_empty() {
                            String::new()
                        } else {
                            format!(" {}", names.join(", "))
                        };
                        self.edits.push(Edit::replace(list.clone(), text));
                    }
                }
                Some((name, at)) => {
                    let line = self.line_no(at);
                    let added = if !sub_names[k].is_empty() {
                        let text = format!("{}use omp_lib{}", u.prefix, self.eol);
                        inserts.entry(u.after).or_default().push(text);
                        " ('use omp_lib' is added after it)"
                    } else {
                        ""
                    };
                    all.push(Diagnostic::new(
                        u.name.start,
                        id::OPENACC_INCLUDE_KEPT,
                        format!("'use openacc' is kept{added}: '{name}' (line {line}) stays untranslated; remove it once the OpenACC names are rewritten"),
                    ));
                }
            }
        }
        self.diags.extend(all);
        // Units that call OpenMP routines without reaching omp_lib or openacc.
        for (u, spot) in place.iter().enumerate() {
            let hs = self.hosts(u);
            let need_omp = !self.omp_names[u].is_empty() && !hs.iter().any(|&h| has_omp[h]);
            let need_cloc = self.cloc[u] && !hs.iter().any(|&h| has_cloc[h]);
            if !need_omp && !need_cloc {
                continue;
            }
            let (at, prefix) = match spot.clone() {
                Some((a, p, _)) => (a, p),
                None => match self.after_header(u) {
                    Some(p) => p,
                    None => continue,
                },
            };
            let v = inserts.entry(at).or_default();
            if need_omp {
                v.push(format!("{prefix}use omp_lib{}", self.eol));
            }
            if need_cloc {
                v.push(format!(
                    "{prefix}use, intrinsic :: iso_c_binding, only: c_loc{}",
                    self.eol
                ));
            }
        }
        for (at, texts) in inserts {
            self.edits.push(Edit::insert(at, texts.concat()));
        }
    }

    /// After the header statement of unit `u`: the position and an indentation.
    fn after_header(&self, u: usize) -> Option<(usize, String)> {
        let front = self.front;
        let unit = &front.structure.units[u];
        let h = unit.header?;
        let s = &front.lexed.stmts[h];
        let first = &front.lines.lines[s.lines.start];
        let last = &front.lines.lines[s.lines.end - 1];
        let lead = &self.src[first.start..s.span.start];
        let indent = match first.form {
            Form::Free if lead.trim().is_empty() => format!("{lead}  "),
            Form::Free => "  ".to_string(),
            Form::Fixed => " ".repeat(lead.len().max(6)),
        };
        Some((last.next, indent))
    }

    /// `_OPENACC` → `_OPENMP` in `#if`, `#ifdef`, `#ifndef`, `#elif` of preprocessed files.
    fn guards(&mut self) {
        if !self.front.kind.cpp || self.opts.keep_openacc_guards {
            return;
        }
        let src = self.src;
        let mut stack: Vec<bool> = Vec::new();
        let front = self.front;
        for line in &front.lines.lines {
            if line.kind != LineKind::Preprocessor {
                continue;
            }
            let toks = crate::lex::lex_range(src, line.start..line.end, true);
            let Some(pp) = toks
                .first()
                .filter(|t| t.kind == crate::lex::TokKind::PpLine)
            else {
                continue;
            };
            let inner = crate::lex::lex_range(src, pp.start + 1..pp.end, false);
            let Some(kw) = inner.first().map(|t| t.text(src)) else {
                continue;
            };
            match kw {
                "if" | "ifdef" | "ifndef" => stack.push(false),
                "endif" => {
                    stack.pop();
                    continue;
                }
                "elif" | "elifdef" | "elifndef" => {}
                _ => continue,
            }
            let (edits, diags) = guard(src, kw, &inner[1..], stack.last_mut());
            self.edits.extend(edits);
            self.diags.extend(diags);
        }
    }

    /// Lines the expression replacements make longer than the form allows are broken with
    /// continuations: at a token boundary of the original text, else after a comma of the
    /// inserted text.
    fn fit(&mut self, mut exprs: Vec<Edit>) {
        exprs.sort_by_key(|e| e.range.start);
        let mut k = 0;
        while k < exprs.len() {
            let li = self.front.lines.line_of(exprs[k].range.start);
            let mut j = k + 1;
            while j < exprs.len() && self.front.lines.line_of(exprs[j].range.start) == li {
                j += 1;
            }
            let group = &exprs[k..j];
            match self.fitted(li, group) {
                Ok(Some(e)) => self.edits.push(e),
                Ok(None) => self.edits.extend(group.iter().cloned()),
                Err(()) => {
                    for e in group {
                        let at = e.range.start;
                        let k = self.front.lexed.tokens.partition_point(|t| t.start < at);
                        let name = self.front.lexed.lower(self.src, k);
                        let unit = self
                            .front
                            .lexed
                            .stmt_at(at)
                            .and_then(|s| self.front.structure.unit_of(s));
                        let lim = limit(self.lines()[li].form);
                        let why = format!(
                            "its translation would make the line longer than {lim} columns, and the line has no place to break it; split the statement"
                        );
                        self.refuse(at, id::RUNTIME_FORTRAN_HELPER, &name, unit, why);
                    }
                }
            }
            k = j;
        }
    }

    /// One edit from the first replacement on line `li` to the end of its code, with
    /// breaks; None when the line fits (or spans lines: not measured), Err when it cannot
    /// be broken to fit.
    fn fitted(&self, li: usize, group: &[Edit]) -> Result<Option<Edit>, ()> {
        let src = self.src;
        let line = &self.lines()[li];
        let end = line.amp.map_or(line.body.end, |a| a + 1);
        if group.iter().any(|e| e.range.end > end) || line.ignored.is_some() {
            return Ok(None);
        }
        let lim = limit(line.form);
        let start = group[0].range.start;
        // The new text from `start` to `end`, with candidate breaks (offset, original).
        let mut text = String::new();
        let mut cands: Vec<(usize, bool)> = Vec::new();
        let mut at = start;
        let all = &self.lx().tokens;
        let first = all.partition_point(|t| t.start < start);
        let toks: Vec<usize> = all[first..]
            .iter()
            .take_while(|t| t.start < end)
            .map(|t| t.start)
            .collect();
        let orig = |from: usize, to: usize, text: &mut String, cands: &mut Vec<(usize, bool)>| {
            for &t in toks.iter().filter(|&&t| t >= from && t < to) {
                cands.push((text.len() + t - from, true));
            }
            text.push_str(&src[from..to]);
        };
        for e in group {
            orig(at, e.range.start, &mut text, &mut cands);
            cands.push((text.len(), true));
            let b = text.len();
            for (p, _) in e.text.match_indices(", ") {
                cands.push((b + p + 2, false));
            }
            text.push_str(&e.text);
            at = e.range.end;
        }
        orig(at, end, &mut text, &mut cands);
        let head = src[line.start..start].chars().count();
        if head + text.chars().count() <= lim {
            return Ok(None);
        }
        let lead: String = src[line.start..line.body.start.max(line.start)]
            .chars()
            .chain(src[line.body.start..].chars().take_while(|c| *c == ' '))
            .collect();
        let cont = match line.form {
            Form::Free => format!("{}  ", " ".repeat(lead.chars().count())),
            Form::Fixed => format!(
                "     &{}",
                " ".repeat(lead.chars().count().saturating_sub(6) + 2)
            ),
        };
        let amp = usize::from(line.form == Form::Free);
        let mut out = String::new();
        let mut from = 0;
        let mut width = head;
        loop {
            if width + text[from..].chars().count() <= lim {
                out.push_str(&text[from..]);
                break;
            }
            let fits = |&&(c, _): &&(usize, bool)| {
                c > from
                    && width + text[from..c].chars().count() + amp <= lim
                    && !text[from..c].trim().is_empty()
            };
            let pick = cands
                .iter()
                .filter(|c| c.1)
                .rfind(fits)
                .or_else(|| cands.iter().filter(|c| !c.1).rfind(fits));
            let Some(&(c, _)) = pick else {
                return Err(());
            };
            out.push_str(&text[from..c]);
            if line.form == Form::Free {
                if !out.ends_with(' ') {
                    out.push(' ');
                }
                out.push('&');
            }
            out.push_str(self.eol);
            out.push_str(&cont);
            width = cont.chars().count();
            from = c;
        }
        Ok(Some(Edit::replace(start..end, out)))
    }
}

/// The OpenMP routines a replacement calls (`omp_get_default_device`, …).
fn omp_routines(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
            && text[i..].starts_with("omp_")
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

/// A `use` statement's tokens (text, file range): the module it names and its lists.
fn parse_use(
    toks: &[(String, Range<usize>)],
    unit: Option<usize>,
    end: usize,
    after: usize,
    prefix: String,
) -> Option<Use> {
    let is = |k: usize, w: &str| toks.get(k).is_some_and(|t| t.0.eq_ignore_ascii_case(w));
    if !is(0, "use") {
        return None;
    }
    let mut k = 1;
    if is(k, ",") {
        k += 2;
    }
    if is(k, "::") {
        k += 1;
    }
    let (module, name) = toks
        .get(k)
        .map(|t| (t.0.to_ascii_lowercase(), t.1.clone()))?;
    let renames = toks.iter().any(|t| t.0 == "=>");
    let only = (is(k + 1, ",") && is(k + 2, "only") && is(k + 3, ":")).then(|| {
        let list = toks[k + 3].1.end..end;
        let names = toks[k + 4..]
            .iter()
            .filter(|t| t.0 != ",")
            .map(|t| t.0.to_ascii_lowercase())
            .collect();
        (list, names)
    });
    Some(Use {
        unit,
        module,
        name,
        only,
        renames,
        after,
        prefix,
    })
}

#[cfg(test)]
mod tests;
