//! What one runtime call becomes: an OpenMP expression, a directive in place of its
//! statement, nothing, or a diagnostic with the call left unchanged.

use super::calls::Call;
use super::names::rename;
use super::text::*;
use super::{BYTES, Cx, MAX_NESTING, Scope};
use crate::attachments::{Detach, pointer_of_address};
use crate::edit::Edit;
use crate::lex::{TokKind, Token};
use crate::profile::OmpVersion;
use crate::rules::RuntimeRule;
use crate::rules::{RuleId, id};
use crate::source::indentation;
use crate::translate::queues::{WAIT_FN, queue};

/// How an acc_device_t argument reads.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum DevType {
    /// `acc_device_host`: the initial device.
    Host,
    /// `acc_device_not_host`: any non-initial device.
    NotHost,
    /// A vendor type (`acc_device_nvidia`): taken as any non-host device.
    Vendor,
    /// Known only at run time (a variable, `acc_device_default`, `acc_device_current`,
    /// `acc_device_none`): a helper decides.
    Dynamic,
}

pub(super) fn dev_type(text: &str) -> DevType {
    match text {
        "acc_device_host" => DevType::Host,
        "acc_device_not_host" => DevType::NotHost,
        _ if rename(text).is_some_and(|r| r.vendor) => DevType::Vendor,
        _ => DevType::Dynamic,
    }
}

/// Where a whole-statement call stands.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum StmtCtx {
    /// In a block: a directive may replace it.
    Free,
    /// The body of `if`/`else`/a loop, after a label, or after another pragma: a directive
    /// needs braces around it.
    Body,
}

/// The OpenMP query `acc_on_device` becomes, and the helper that asks it where OpenMP forbids
/// runtime calls.
const IS_INITIAL: &str = "omp_is_initial_device()";
const NESTED_IS_INITIAL: &str = "acc2omp_is_initial_device()";

/// What a call becomes.
enum Replacement<'a> {
    /// An expression in place of the call.
    Expr(&'a str),
    /// Directives in place of its expression statement.
    Pragmas(&'a [String]),
    /// Nothing: its statement is removed.
    Remove,
}

impl<'a> Cx<'a> {
    /// `edits` without the renames of openacc.h names (for a call left unchanged).
    fn keep_names(&mut self, edits: &[Edit]) -> Vec<Edit> {
        let src = self.src;
        let kept: Vec<Edit> = edits
            .iter()
            .filter(|e| rename(&src[e.range.clone()]).is_none_or(|r| r.to != e.text))
            .cloned()
            .collect();
        // Their notes go with them.
        self.diags.retain(|d| {
            !(d.rule == id::RUNTIME_DEVICE
                && edits.iter().any(|e| e.range.start == d.offset)
                && !kept.iter().any(|e| e.range.start == d.offset))
        });
        kept
    }

    /// The text of a queue placeholder (`{qK}`, `{QK}`, `{asyncK}`, `{waitK}`) or of a pointer
    /// placeholder (`{ptrK}`: the pointer whose address argument K is) for the argument texts
    /// `args`; Err when it cannot be written (`acc_async_sync` where a queue is needed).
    pub(super) fn placeholder_text(
        &mut self,
        key: &str,
        args: &[String],
        written: &[String],
        at: usize,
    ) -> Result<String, String> {
        let split = key.find(|c: char| c.is_ascii_digit()).unwrap_or(key.len());
        let (kind, k) = key.split_at(split);
        let (Some(arg), Some(shown)) = (
            k.parse::<usize>().ok().and_then(|k| args.get(k)),
            k.parse::<usize>().ok().and_then(|k| written.get(k)),
        ) else {
            return Err(format!("bad placeholder {{{key}}}"));
        };
        if kind == "ptr" {
            return pointer_of_address(arg).ok_or_else(|| format!("its argument '{arg}' is not written as the address of a pointer ('&p', '(void **)&s.p'), which OpenMP needs to name the pointer"));
        }
        let q = queue(self.lang, Some(arg));
        // Only work put on a queue changes when the queue is acc_async_sync at run time.
        if q.is_runtime() && matches!(kind, "async" | "enter" | "R") {
            self.diag(at, id::ASYNC_QUEUE_VALUE, format!("the queue '{shown}' is known only at run time: it becomes the dependence object 'acc2omp_queue[({arg}) & 63]'; if it can be acc_async_sync, that work still runs asynchronously"));
        }
        let needs_queue = || format!("'{arg}' is acc_async_sync, which names no queue");
        let text = match kind {
            "q" => q.index().ok_or_else(needs_queue)?.to_string(),
            "Q" | "R" => q.object().ok_or_else(needs_queue)?,
            "async" => match q.object() {
                Some(o) => format!(" nowait depend(inout: {o})"),
                None => String::new(),
            },
            // Data made present at once, after the queue's earlier work: a deferred
            // `target enter data nowait` would leave it absent until its task runs.
            "enter" => match q.object() {
                Some(o) => format!(" depend(inout: {o})"),
                None => String::new(),
            },
            "wait" => match q.index() {
                Some(i) => format!("{WAIT_FN}({i}), "),
                None => String::new(),
            },
            _ => return Err(format!("bad placeholder {{{key}}}")),
        };
        Ok(text)
    }

    /// Edits for one call (and the calls nested in its arguments).
    pub(super) fn call(
        &mut self,
        toks: &[Token],
        call: &Call,
        rule: &'a RuntimeRule,
        scope: Scope,
    ) -> Vec<Edit> {
        let src = self.src;
        let name = rule.name.as_str();
        let at = toks[call.name].start();
        let bytes = at..toks[call.close].end();
        if self.depth >= MAX_NESTING {
            return Vec::new();
        }
        self.depth += 1;
        let inner = self.calls(toks, call.open + 1..call.close, scope);
        self.depth -= 1;
        if crate::intervals::overlaps_any(&self.sites, &bytes) {
            return inner;
        }
        let reported = self.handled.contains(at);
        self.handled.insert(bytes.clone());
        // A call left unchanged keeps its arguments' openacc.h names (it still needs
        // openacc.h); calls nested in them are translated on their own.
        let untranslated = |cx: &mut Self, rule_id: RuleId, message: String| {
            cx.diag(at, rule_id, message);
            cx.keep_names(&inner)
        };
        if reported {
            // Reported with its family (the profiling interface).
            return self.keep_names(&inner);
        }
        if call.args.len() != rule.args {
            let message = format!(
                "'{name}' takes {} argument(s), this call has {}; the call is left unchanged",
                rule.args,
                call.args.len()
            );
            return untranslated(self, id::RUNTIME_NOT_TRANSLATED, message);
        }
        // `::acc_x(` loses its `::` with the name.
        let start = match call.name.checked_sub(1) {
            Some(p) if self.text(&toks[p]) == "::" => toks[p].start(),
            _ => at,
        };
        let ctx = if scope == Scope::Code {
            self.stmt_ctx(toks, start, call)
        } else {
            None
        };
        // Choose the replacement: a directive or a removal for a statement of its own, an
        // expression otherwise (or where no directive is given).
        let expr = match rule.devtype {
            Some(k) => {
                let arg = self.slice(toks, &call.args[k]).to_string();
                match dev_type(&arg) {
                    DevType::Host => rule.host.as_deref().or(rule.dynamic.as_deref()),
                    // A removed routine (`acc_init`) is removed for every other type.
                    _ if rule.remove => None,
                    DevType::NotHost | DevType::Vendor => {
                        self.expr_template(rule).or(rule.dynamic.as_deref())
                    }
                    DevType::Dynamic => match rule.dynamic.as_deref() {
                        Some(d) => Some(d),
                        None => {
                            let message = format!(
                                "'{name}': the device type '{arg}' is known only at run time, so the host cannot be told from a device; the call is left unchanged"
                            );
                            return untranslated(self, id::RUNTIME_DEVICE_TYPE, message);
                        }
                    },
                }
            }
            None => self.expr_template(rule),
        };
        let pragmas = rule.pragma.as_ref().map(|p| p.lines());
        // A detach of a pointer a data clause attached has no reference of its own to
        // release (see `crate::attachments`).
        let planned = rule.remove && expr.is_none();
        let mut remove = planned;
        if ctx.is_some()
            && name.starts_with("acc_detach")
            && let (Some(a), Some(arg)) = (self.attachments, call.args.first())
        {
            let pointer = self.slice(toks, arg).to_string();
            match a.detach(at, &pointer) {
                Detach::Explicit => {}
                Detach::Implicit => {
                    remove = true;
                    let p = crate::attachments::normalize(&pointer);
                    self.diag(at, id::DETACH_IMPLICIT, format!("'{name}' is removed: no explicit attach of '{p}' (acc_attach, 'attach') in this function is left for it to undo, so a data clause attached it, and OpenMP ends that attachment when the target is unmapped and keeps the host pointer when the structure is copied back ('target exit data map(release: {p}[:0])' would drop the target data's own reference)"));
                }
                Detach::Unknown(line) => {
                    let message = format!(
                        "'{name}': no explicit attach of this pointer in this function is left for it to undo, and line {line} attaches explicitly in another function: if that attach is the one undone here, OpenMP must release its reference ('target exit data map(release: …[:0])'), if a data clause attached the pointer it must not; the call is left unchanged"
                    );
                    return untranslated(self, id::DETACH_UNPAIRED, message);
                }
            }
        }
        let replacement = match (ctx, pragmas, expr) {
            (None, _, _) if remove => {
                let (id, message) = not_a_statement(name, "removed", scope);
                return untranslated(self, id, message);
            }
            (_, _, _) if remove => Replacement::Remove,
            (Some(_), Some(p), _) => Replacement::Pragmas(p),
            (_, _, Some(e)) => Replacement::Expr(e),
            (None, Some(_), None) => {
                let (id, message) = not_a_statement(name, "replaced by a directive", scope);
                return untranslated(self, id, message);
            }
            (_, None, None) => {
                let advice = rule.advice.as_deref().unwrap_or(&rule.doc);
                let message =
                    format!("'{name}' is not translated: {advice}; the call is left unchanged");
                let id = if rule.rule_id == id::RUNTIME_INTEROP {
                    id::RUNTIME_INTEROP
                } else {
                    id::RUNTIME_NOT_TRANSLATED
                };
                return untranslated(self, id, message);
            }
        };
        // The text of each argument, with the calls and names nested in it translated.
        let mut args: Vec<String> = call
            .args
            .iter()
            .map(|a| {
                let r = toks[a.start].start()..toks[a.end - 1].end();
                apply_within(src, &r, &inner)
            })
            .collect();
        // Arguments the replacement drops or repeats must not have side effects; a removed
        // call keeps them as `(void)(arg)`.
        let written = args.clone();
        let mut kept = Vec::new();
        // In the block a data routine opens, an argument used twice (the queue of both
        // directives of acc_copyout_finalize_async) is evaluated once into a local.
        let block = matches!(replacement, Replacement::Pragmas(p) if p.iter().any(|p| p.contains("{bytes}")));
        let mut binds = Vec::new();
        for (k, arg) in call.args.iter().enumerate() {
            let uses = match replacement {
                Replacement::Expr(t) => placeholder_uses(t, k),
                Replacement::Pragmas(p) => p
                    .iter()
                    .map(|p| usize::from(k < 2 && p.contains("{bytes}")) + placeholder_uses(p, k))
                    .sum(),
                Replacement::Remove => 0,
            };
            if uses == 1 || pure(src, &toks[arg.clone()]) {
                continue;
            }
            if matches!(replacement, Replacement::Remove) {
                kept.push(format!("(void)({})", args[k]));
                continue;
            }
            if block
                && uses > 1
                && let Some(a) = one_line(&args[k])
            {
                let var = format!("acc2omp_arg{k}");
                binds.push(format!("__typeof__({a}) {var} = ({a});"));
                args[k] = var;
                continue;
            }
            let how = if uses == 0 {
                "dropped"
            } else {
                "evaluated more than once"
            };
            let message = format!(
                "'{name}': its argument '{}' would be {how} but may have side effects; the call is left unchanged",
                self.slice(toks, arg)
            );
            return untranslated(self, id::RUNTIME_SIDE_EFFECTS, message);
        }
        // Placeholders, resolved before anything is emitted.
        let templates: Vec<&str> = match replacement {
            Replacement::Expr(t) => vec![t],
            Replacement::Pragmas(p) => p.iter().map(String::as_str).collect(),
            Replacement::Remove => vec![],
        };
        let mut resolved: Vec<(String, String)> = Vec::new();
        for key in templates.iter().flat_map(|t| named_keys(t)) {
            if key == "bytes" || resolved.iter().any(|(k, _)| *k == key) {
                continue;
            }
            match self.placeholder_text(&key, &args, &written, at) {
                Ok(t) => resolved.push((key, t)),
                Err(why) => {
                    let message =
                        format!("'{name}' is not translated: {why}; the call is left unchanged");
                    return untranslated(self, id::RUNTIME_NOT_TRANSLATED, message);
                }
            }
        }
        let extra = |key: &str| {
            resolved
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, t)| t.clone())
        };
        let edit = match replacement {
            Replacement::Expr(t) => {
                // Where OpenMP forbids runtime calls, `omp_is_initial_device()` (all that
                // `acc_on_device` needs) is asked through a helper's nested parallel region.
                // A macro counts where it is used.
                let restricted = match scope {
                    Scope::Code => self.restricted(at),
                    Scope::Macro => self.macro_use.is_some(),
                };
                let t = &if restricted {
                    t.replace(IS_INITIAL, NESTED_IS_INITIAL)
                } else {
                    t.to_string()
                };
                if restricted && calls_omp(t) {
                    let used = match self.macro_use {
                        Some(u) if scope == Scope::Macro => {
                            format!(" (through this macro, used at line {})", self.line_at(u))
                        }
                        _ => String::new(),
                    };
                    let message = format!(
                        "'{name}' is in a compute construct{used} where its OpenMP replacement would be a runtime call directly inside 'teams' or inside a 'loop' construct, which OpenMP 5.0 does not allow (GCC 12 rejects it); move the call out of the construct or into one of its parallel loops; the call is left unchanged"
                    );
                    return untranslated(self, id::RUNTIME_IN_REGION, message);
                }
                let mut text = fill_with(t, &args, &extra);
                if ctx.is_some() && !has_top_level_comma(strip_parens(&text)) {
                    // A statement of its own needs no parentheses around it.
                    text = strip_parens(&text).to_string();
                }
                Edit::replace(start..bytes.end, text)
            }
            Replacement::Remove => {
                let semi = toks[call.close + 1].end();
                let ctx = ctx.unwrap_or(StmtCtx::Body);
                if kept.is_empty() {
                    self.removal(start, semi, bytes.end, ctx)
                } else {
                    Edit::replace(start..bytes.end, kept.join(", "))
                }
            }
            Replacement::Pragmas(p) => {
                let semi = toks[call.close + 1].end();
                let lines: Vec<String> = p.iter().map(|p| fill_with(p, &[], &extra)).collect();
                let ctx = ctx.unwrap_or(StmtCtx::Body);
                match self.directive(start, semi, ctx, &lines, toks, call, &args, &binds) {
                    Some(e) => e,
                    None => {
                        let message = format!(
                            "'{name}': an argument cannot be written on one directive line; the call is left unchanged"
                        );
                        return untranslated(self, id::RUNTIME_NOT_TRANSLATED, message);
                    }
                }
            }
        };
        // Notes.
        if rule.report && remove == planned {
            let becomes = describe(&replacement_text(&replacement));
            let rule_id = rule.rule_id;
            self.diag(
                at,
                rule_id,
                format!("'{name}' becomes {becomes}: {}", rule.doc),
            );
        }
        vec![edit]
    }

    pub(super) fn expr_template(&self, rule: &'a RuntimeRule) -> Option<&'a str> {
        match (&rule.omp51, &rule.omp) {
            (Some(t), _) if self.opts.omp_version >= OmpVersion::V51 => Some(t),
            (_, Some(t)) => Some(t),
            _ => None,
        }
    }

    /// Whether the call starting at byte `start` is a whole expression statement, and where.
    pub(super) fn stmt_ctx(&self, toks: &[Token], start: usize, call: &Call) -> Option<StmtCtx> {
        if toks.get(call.close + 1).map(|t| self.text(t)) != Some(";") {
            return None;
        }
        let first = toks.partition_point(|t| t.start() < start);
        let mut p = first;
        let mut after_pragma = false;
        let prev = loop {
            if p == 0 {
                break None;
            }
            p -= 1;
            let t = &toks[p];
            if t.kind != TokKind::PpLine {
                // A `_Pragma("…")` operator or a pragma wrapper `P(…)` is a directive line too.
                if self.text(t) == ")"
                    && let Some(open) = self.matching_open(toks, p)
                    && open >= 1
                    && (self.text(&toks[open - 1]) == "_Pragma"
                        || self.wrappers.contains(self.text(&toks[open - 1])))
                {
                    after_pragma = true;
                    p = open - 1;
                    continue;
                }
                break Some(p);
            }
            after_pragma |= self.pp.directive(self.src, t) == Some("pragma");
        };
        let ctx = match prev {
            None => StmtCtx::Free,
            Some(p) => match (toks[p].kind, self.text(&toks[p])) {
                (TokKind::Punct, ";" | "{" | "}") => StmtCtx::Free,
                (TokKind::Ident, "else" | "do") => StmtCtx::Body,
                (TokKind::Punct, ")") => {
                    let open = self.matching_open(toks, p)?;
                    let kw = open.checked_sub(1)?;
                    match self.text(&toks[kw]) {
                        "if" | "while" | "for" | "switch" => StmtCtx::Body,
                        "constexpr" if kw > 0 && self.text(&toks[kw - 1]) == "if" => StmtCtx::Body,
                        _ => return None,
                    }
                }
                (TokKind::Punct, ":") if self.is_label(toks, p) => StmtCtx::Body,
                _ => return None,
            },
        };
        Some(if after_pragma { StmtCtx::Body } else { ctx })
    }

    /// Index of the `(` matching the `)` at `close`.
    pub(super) fn matching_open(&self, toks: &[Token], close: usize) -> Option<usize> {
        let mut depth = 0usize;
        for k in (0..=close).rev() {
            match self.text(&toks[k]) {
                ")" => depth += 1,
                "(" => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(k);
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// Whether the `:` at `colon` ends a label (`L:`, `case X:`, `default:`).
    pub(super) fn is_label(&self, toks: &[Token], colon: usize) -> bool {
        let Some(w) = colon.checked_sub(1) else {
            return false;
        };
        if self.text(&toks[w]) == "default" {
            return true;
        }
        let boundary = |k: Option<usize>| {
            k.is_none_or(|k| {
                toks[k].kind == TokKind::PpLine
                    || matches!(self.text(&toks[k]), ";" | "{" | "}" | ":")
            })
        };
        if toks[w].kind == TokKind::Ident
            && !matches!(self.text(&toks[w]), "public" | "private" | "protected")
            && boundary(w.checked_sub(1))
        {
            return true;
        }
        // `case expr:`: the statement that holds the colon starts with `case`.
        let mut k = w;
        loop {
            if boundary(Some(k)) {
                return toks.get(k + 1).is_some_and(|t| self.text(t) == "case");
            }
            if k == 0 {
                return self.text(&toks[0]) == "case";
            }
            k -= 1;
        }
    }

    /// Remove the statement `start..semi`: its line when it stands alone, else the call.
    pub(super) fn removal(&self, start: usize, semi: usize, call_end: usize, ctx: StmtCtx) -> Edit {
        let src = self.src;
        let ls = self.index.line_start(start);
        let alone_before = src[ls..start].trim_matches([' ', '\t']).is_empty();
        if ctx == StmtCtx::Free && alone_before {
            let rest = &src[semi..];
            let blanks = rest.len() - rest.trim_start_matches([' ', '\t']).len();
            let after = &rest[blanks..];
            if after.is_empty() || after.starts_with('\n') || after.starts_with("\r\n") {
                return Edit::delete(ls..after_eol(src, semi + blanks));
            }
            if rest_of_line_empty(src, semi) {
                // A comment follows: it keeps the line.
                return Edit::delete(start..semi + blanks);
            }
        }
        Edit::replace(start..call_end, "(void)0")
    }

    /// The directive that replaces the statement `start..semi`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn directive(
        &self,
        start: usize,
        semi: usize,
        ctx: StmtCtx,
        pragmas: &[String],
        toks: &[Token],
        call: &Call,
        args: &[String],
        binds: &[String],
    ) -> Option<Edit> {
        let src = self.src;
        let eol = self.eol;
        let ls = self.index.line_start(start);
        let ind = indentation(src, ls);
        if pragmas.iter().any(|p| p.contains("{bytes}")) {
            // Any pointer expression and any byte count: name the address as a `char *`
            // (a section's base must be a variable) and map `[0:bytes]` of it. OpenMP finds
            // present data by address, so later `a[0:n]` clauses find these bytes.
            let used: Vec<&str> = call
                .args
                .iter()
                .flat_map(|a| toks[a.clone()].iter().map(|t| t.text(src)))
                .collect();
            let mut var = BYTES.to_string();
            while used.contains(&var.as_str()) {
                var.push('_');
            }
            let mut len = one_line(&args[1])?;
            if len.contains('?') {
                len = format!("({len})");
            }
            let mut text = String::from("{ ");
            for b in binds {
                text.push_str(b);
                text.push(' ');
            }
            text.push_str(&format!(
                "char *{var} = (char *)({}); (void){var};",
                args[0]
            ));
            for p in pragmas {
                let line = p.replace("{bytes}", &format!("{var}[0:{len}]"));
                text.push_str(&format!("{eol}{ind}#pragma omp {line}"));
            }
            text.push_str(&format!("{eol}{ind}}}"));
            return Some(Edit::replace(start..semi, text));
        }
        for p in pragmas {
            one_line(p)?;
        }
        let mut line = pragmas
            .iter()
            .map(|p| format!("#pragma omp {p}"))
            .collect::<Vec<_>>()
            .join(&format!("{eol}{ind}"));
        if pragmas.len() == 1 && pragmas[0].starts_with("task ") {
            // The task's empty body.
            line = format!("{line}{eol}{ind}{{}}");
        }
        let alone = src[ls..start].trim_matches([' ', '\t']).is_empty();
        // Code after the statement moves to a line of its own, where a `#` would start a
        // preprocessor line: keep it where it is, after a block.
        let hash_follows = src[semi..].trim_start_matches([' ', '\t']).starts_with('#');
        if ctx == StmtCtx::Body || !alone || hash_follows {
            // A directive must start its line and cannot be a body: give it a block.
            return Some(Edit::replace(
                start..semi,
                format!("{{{eol}{ind}{line}{eol}{ind}}}"),
            ));
        }
        if rest_of_line_empty(src, semi) {
            return Some(Edit::replace(start..semi, line));
        }
        // Code follows on the line: it moves to the next one.
        let rest = &src[semi..];
        let blanks = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        Some(Edit::replace(
            start..semi + blanks,
            format!("{line}{eol}{ind}"),
        ))
    }
}

/// What a replacement is, for `describe`.
fn replacement_text(r: &Replacement) -> Option<String> {
    match r {
        Replacement::Expr(t) => Some(t.to_string()),
        Replacement::Pragmas(p) => Some(format!("#pragma omp {}", p.join(" / "))),
        Replacement::Remove => None,
    }
}

/// Whether `text` has a comma outside parentheses and brackets.
fn has_top_level_comma(text: &str) -> bool {
    let mut depth = 0i32;
    for c in text.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

/// The diagnostic for a call that would be `what` (removed, replaced by a directive) but is
/// not an expression statement of its own.
fn not_a_statement(name: &str, what: &str, scope: Scope) -> (RuleId, String) {
    if scope == Scope::Macro {
        (
            id::RUNTIME_IN_MACRO,
            format!(
                "'{name}' in a macro body would be {what}, which a macro cannot express; the call is left unchanged"
            ),
        )
    } else {
        (
            id::RUNTIME_VALUE_USED,
            format!(
                "'{name}' is {what} only where it is an expression statement of its own (its value is not used); the call is left unchanged"
            ),
        )
    }
}
