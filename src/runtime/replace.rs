//! What one runtime call becomes: an OpenMP expression, a directive in place of its
//! statement, nothing, or a diagnostic with the call left unchanged.

use super::calls::Call;
use super::text::*;
use super::{BYTES, Cx, MAX_NESTING, Scope};
use crate::edit::Edit;
use crate::lex::{TokKind, Token, lex_range};
use crate::profile::OmpVersion;
use crate::rules::RuntimeRule;
use crate::source::indentation;
use crate::translate::queues::{WAIT_FN, queue};

/// How an acc_device_t argument reads.
pub(super) enum DevType {
    Host,
    NotHost,
    /// `acc_device_nvidia`, `acc_device_radeon`: any non-host device is taken.
    Vendor,
    Unknown,
}

pub(super) fn dev_type(text: &str) -> DevType {
    match text {
        "acc_device_host" => DevType::Host,
        "acc_device_not_host" | "acc_device_default" | "acc_device_current" => DevType::NotHost,
        "acc_device_nvidia" | "acc_device_radeon" => DevType::Vendor,
        _ => DevType::Unknown,
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

impl Cx<'_> {
    pub(super) fn use_queues(&mut self, at: usize) {
        self.queues_at = Some(self.queues_at.map_or(at, |q| q.min(at)));
    }

    /// The text of a queue placeholder (`{qK}`, `{QK}`, `{asyncK}`, `{waitK}`) for the
    /// argument texts `args`; Err for `acc_async_sync` where a queue is needed.
    pub(super) fn queue_text(
        &mut self,
        key: &str,
        args: &[String],
        at: usize,
    ) -> Result<String, String> {
        let split = key.find(|c: char| c.is_ascii_digit()).unwrap_or(key.len());
        let (kind, k) = key.split_at(split);
        let Some(arg) = k.parse::<usize>().ok().and_then(|k| args.get(k)) else {
            return Err(format!("bad placeholder {{{key}}}"));
        };
        let q = queue(Some(arg));
        // Only work put on a queue changes when the queue is acc_async_sync at run time.
        if q.is_runtime() && (kind == "async" || kind == "R") {
            self.diag(at, "async-queue-value", format!("the queue '{arg}' is known only at run time: it becomes the dependence object 'acc2omp_queue[({arg}) & 63]'; if it can be acc_async_sync, that work still runs asynchronously"));
        }
        let needs_queue = || format!("'{arg}' is acc_async_sync, which names no queue");
        let text = match kind {
            "q" => q.index().ok_or_else(needs_queue)?.to_string(),
            "Q" | "R" => q.object().ok_or_else(needs_queue)?,
            "async" => match q.object() {
                Some(o) => format!(" nowait depend(inout: {o})"),
                None => String::new(),
            },
            "wait" => match q.index() {
                Some(i) => {
                    self.wait_fn_at.get_or_insert(at);
                    format!("{WAIT_FN}({i}), ")
                }
                None => String::new(),
            },
            _ => return Err(format!("bad placeholder {{{key}}}")),
        };
        if kind != "async" || !text.is_empty() {
            self.use_queues(at);
        }
        Ok(text)
    }

    /// Edits for one call (and the calls nested in its arguments).
    pub(super) fn call(
        &mut self,
        toks: &[Token],
        call: &Call,
        rule: &'static RuntimeRule,
        scope: Scope,
    ) -> Vec<Edit> {
        let src = self.src;
        let name = rule.name.as_str();
        let at = toks[call.name].start;
        let bytes = at..toks[call.close].end;
        if self.depth >= MAX_NESTING {
            return Vec::new();
        }
        self.depth += 1;
        let inner = self.calls(toks, call.open + 1..call.close, scope);
        self.depth -= 1;
        if self
            .sites
            .iter()
            .any(|s| s.start < bytes.end && bytes.start < s.end)
        {
            return inner;
        }
        self.handled.push(bytes.clone());
        let untranslated = |cx: &mut Self, rule_id: &'static str, message: String| {
            cx.diag(at, rule_id, message);
            inner.clone()
        };
        if call.args.len() != rule.args {
            let message = format!(
                "'{name}' takes {} argument(s), this call has {}; the call is left unchanged",
                rule.args,
                call.args.len()
            );
            return untranslated(self, "runtime-not-translated", message);
        }
        // Choose the replacement.
        let mut vendor = None;
        let template = match rule.devtype {
            Some(k) => {
                let arg = self.slice(toks, &call.args[k]).to_string();
                match dev_type(&arg) {
                    DevType::Host => rule.host.as_deref(),
                    DevType::NotHost => self.expr_template(rule),
                    DevType::Vendor => {
                        vendor = Some(arg);
                        self.expr_template(rule)
                    }
                    DevType::Unknown => {
                        let message = format!(
                            "'{name}': the device type '{arg}' is not an acc_device_* constant, so the host cannot be told from a device; the call is left unchanged"
                        );
                        return untranslated(self, "runtime-device-type", message);
                    }
                }
            }
            None => self.expr_template(rule),
        };
        let pragma = rule.pragma.as_deref();
        if template.is_none() && pragma.is_none() && !rule.remove {
            let advice = rule.advice.as_deref().unwrap_or(&rule.doc);
            let message =
                format!("'{name}' is not translated: {advice}; the call is left unchanged");
            return untranslated(self, "runtime-not-translated", message);
        }
        // Arguments the replacement drops or repeats must not have side effects.
        for (k, arg) in call.args.iter().enumerate() {
            let uses = match (template, pragma) {
                (Some(t), _) => placeholder_uses(t, k),
                (None, Some(p)) => {
                    usize::from(k < 2 && p.contains("{bytes}")) + placeholder_uses(p, k)
                }
                (None, None) => 0,
            };
            if uses != 1 && !pure(src, &toks[arg.clone()]) {
                let how = if uses == 0 {
                    "dropped"
                } else {
                    "evaluated more than once"
                };
                let message = format!(
                    "'{name}': its argument '{}' would be {how} but may have side effects; the call is left unchanged",
                    self.slice(toks, arg)
                );
                return untranslated(self, "runtime-side-effects", message);
            }
        }
        // The text of each argument, with the calls nested in it translated.
        let args: Vec<String> = call
            .args
            .iter()
            .map(|a| {
                let r = toks[a.start].start..toks[a.end - 1].end;
                apply_within(src, &r, &inner)
            })
            .collect();
        // `::acc_x(` loses its `::` with the name.
        let start = match call.name.checked_sub(1) {
            Some(p) if self.text(&toks[p]) == "::" => toks[p].start,
            _ => at,
        };
        // Queue placeholders, resolved before anything is emitted.
        let mut resolved: Vec<(String, String)> = Vec::new();
        for key in queue_keys(template.or(pragma).unwrap_or_default()) {
            match self.queue_text(&key, &args, at) {
                Ok(t) => resolved.push((key, t)),
                Err(why) => {
                    let message =
                        format!("'{name}' is not translated: {why}; the call is left unchanged");
                    return untranslated(self, "runtime-not-translated", message);
                }
            }
        }
        if template.is_some_and(|t| t.contains(WAIT_FN)) {
            self.wait_fn_at.get_or_insert(at);
            self.use_queues(at);
        }
        let extra = |key: &str| {
            resolved
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, t)| t.clone())
        };
        let edit = if let Some(t) = template {
            if scope == Scope::Code && calls_omp(t) && self.regions.restricted(at) {
                let message = format!(
                    "'{name}' is in a compute construct where its OpenMP replacement would be a runtime call directly inside 'teams' or inside a 'loop' construct, which OpenMP 5.0 does not allow (GCC 12 rejects it); move the call out of the construct or into one of its parallel loops; the call is left unchanged"
                );
                return untranslated(self, "runtime-in-region", message);
            }
            if calls_omp(t) {
                self.omp_at.get_or_insert(at);
            }
            Edit::replace(start..bytes.end, fill_with(t, &args, &extra))
        } else {
            let what = if rule.remove {
                "removed"
            } else {
                "replaced by a directive"
            };
            if scope == Scope::Macro {
                let message = format!(
                    "'{name}' in a macro body would be {what}, which a macro cannot express; the call is left unchanged"
                );
                return untranslated(self, "runtime-in-macro", message);
            }
            let Some(ctx) = self.stmt_ctx(toks, start, call) else {
                let message = format!(
                    "'{name}' is {what} only where it is an expression statement of its own (its value is not used); the call is left unchanged"
                );
                return untranslated(self, "runtime-value-used", message);
            };
            let semi = toks[call.close + 1].end;
            if rule.remove {
                self.removal(start, semi, bytes.end, ctx)
            } else {
                let p = fill_with(pragma.unwrap_or_default(), &[], &extra);
                match self.directive(start, semi, ctx, &p, toks, call, &args) {
                    Some(e) => e,
                    None => {
                        let message = format!(
                            "'{name}': an argument cannot be written on one directive line; the call is left unchanged"
                        );
                        return untranslated(self, "runtime-not-translated", message);
                    }
                }
            }
        };
        // Notes.
        if rule.report {
            let becomes = describe(template, pragma);
            let rule_id = rule.rule.as_str();
            self.diag(
                at,
                rule_id,
                format!("'{name}' becomes {becomes}: {}", rule.doc),
            );
        }
        if let Some(dev) = vendor {
            self.diag(
                at,
                "runtime-device",
                format!(
                    "'{dev}' is dropped: OpenMP numbers devices and has no device types, so any non-host device is taken"
                ),
            );
        }
        vec![edit]
    }

    pub(super) fn expr_template(&self, rule: &'static RuntimeRule) -> Option<&'static str> {
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
        let first = toks.partition_point(|t| t.start < start);
        let mut p = first;
        let mut after_pragma = false;
        let prev = loop {
            if p == 0 {
                break None;
            }
            p -= 1;
            let t = &toks[p];
            if t.kind != TokKind::PpLine {
                break Some(p);
            }
            let inner = lex_range(self.src, t.start + 1..t.end, false);
            after_pragma |= inner.first().is_some_and(|k| self.text(k) == "pragma");
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
        pragma: &str,
        toks: &[Token],
        call: &Call,
        args: &[String],
    ) -> Option<Edit> {
        let src = self.src;
        let eol = self.eol;
        let ls = self.index.line_start(start);
        let ind = indentation(src, ls);
        if pragma.contains("{bytes}") {
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
            let line = pragma.replace("{bytes}", &format!("{var}[0:{len}]"));
            let text = format!(
                "{{ char *{var} = (char *)({}); (void){var};{eol}{ind}#pragma omp {line}{eol}{ind}}}",
                args[0]
            );
            return Some(Edit::replace(start..semi, text));
        }
        let mut line = format!("#pragma omp {pragma}");
        if pragma.starts_with("task ") {
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
