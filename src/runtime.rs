//! The OpenACC runtime API (`acc_*` calls), `#include <openacc.h>` and `_OPENACC` tests.
//!
//! Calls are found in the token stream, so comments and string literals are never touched,
//! and in `#define` bodies (sub-lexed like `_Pragma` in `scan.rs`). A call is an identifier
//! named in `rules/runtime.toml`, followed by `(`, that is not a member (`x.acc_wait(`), a
//! qualified name (`ns::acc_wait(`) or a declaration (`void acc_wait(`, `int *acc_x(` at the
//! start of a declaration). The table says what each routine becomes:
//!
//! - an OpenMP expression replacing the call (`acc_malloc(n)` → `omp_target_alloc(n, …)`);
//! - a directive replacing the whole expression statement (`acc_copyin(p, n);` →
//!   `target enter data` on the same bytes, through a `char *` so that any pointer and any
//!   byte count work: GCC 12 and Clang accept only a variable as the base of a section);
//! - nothing (`acc_init(…);` is removed);
//! - or a diagnostic, with the call left unchanged.
//!
//! Directive lines (`#pragma acc`, `_Pragma`) belong to the directive translator and are never
//! edited here, so the two sets of edits cannot overlap.

use crate::diag::Diagnostic;
use crate::edit::Edit;
use crate::lex::{TokKind, Token, lex, lex_range};
use crate::profile::{OmpVersion, Profile};
use crate::rules::{RuntimeRule, tables};
use crate::source::{LineIndex, indentation, line_ending};
use crate::translate::queues::{QUEUES, WAIT_FN, queue, queues_definition, wait_fn_definition};
use crate::translate::{Action, Options, Plan, Unit};
use std::ops::Range;

/// Name of the `char *` that carries the address of the bytes a data routine maps.
const BYTES: &str = "acc2omp_bytes";

/// Calls nested deeper than this in each other's arguments are left alone (no recursion
/// without bound on hostile input).
const MAX_NESTING: usize = 64;

/// Identifiers after which `name(` is still an expression, not a declaration.
const EXPR_KEYWORDS: &[&str] = &[
    "return",
    "else",
    "do",
    "case",
    "sizeof",
    "throw",
    "co_return",
    "co_yield",
    "co_await",
    "new",
    "delete",
    "and",
    "or",
    "not",
    "__extension__",
];

/// Type keywords: `int *acc_x(` declares a function.
const TYPE_KEYWORDS: &[&str] = &[
    "void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "_Bool",
    "bool", "auto", "size_t", "wchar_t",
];

/// Words that may open a declaration before its type.
const DECL_SPECIFIERS: &[&str] = &[
    "static",
    "extern",
    "inline",
    "__inline",
    "__inline__",
    "const",
    "volatile",
    "typedef",
    "register",
    "thread_local",
    "_Thread_local",
    "constexpr",
    "struct",
    "union",
    "enum",
    "friend",
    "virtual",
];

/// Edits and diagnostics for the runtime API, `openacc.h` and `_OPENACC` in one file.
/// `plans` are the directive plans (what each OpenACC site becomes).
pub fn runtime_edits(unit: &Unit, plans: &[Plan], opts: &Options) -> (Vec<Edit>, Vec<Diagnostic>) {
    let src = unit.src;
    let toks = unit.structure.toks;
    let mut cx = Cx {
        src,
        eol: line_ending(src),
        index: LineIndex::new(src),
        opts,
        regions: Regions::new(unit, plans, opts),
        sites: unit.sites.iter().map(|s| s.span.clone()).collect(),
        wrappers: crate::scan::pragma_wrappers(src, toks),
        diags: Vec::new(),
        handled: Vec::new(),
        omp_at: None,
        queues_at: None,
        wait_fn_at: None,
        depth: 0,
    };
    let mut edits = cx.calls(toks, 0..toks.len(), Scope::Code);
    // Directives that became runtime calls (`acc set device_num(n)`) need omp.h too.
    for (site, plan) in unit.sites.iter().zip(plans) {
        if plan_calls_omp(plan) {
            cx.omp_at.get_or_insert(site.span.start);
        }
        if uses_queues(plan) {
            cx.use_queues(site.span.start);
        }
    }
    for tok in toks.iter().filter(|t| t.kind == TokKind::PpLine) {
        let inner = lex_range(src, tok.start + 1..tok.end, false);
        match inner.first().map(|t| t.text(src)) {
            Some("define") => {
                let body = macro_body(src, &inner);
                edits.extend(cx.calls(&inner, body..inner.len(), Scope::Macro));
            }
            Some("pragma") => cx.calls_in_directive(&inner),
            _ => {}
        }
    }
    let left = cx.leftovers(toks, &edits);
    edits.extend(cx.preprocessor(toks, &left));
    for e in &mut edits {
        separate_tokens(src, e);
    }
    (edits, cx.diags)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Ordinary code: directives may be emitted on lines of their own.
    Code,
    /// A `#define` body: only expressions can be emitted.
    Macro,
}

/// Where a runtime call may not become an OpenMP runtime call: OpenMP 5.0 forbids (and
/// GCC 12 rejects) OpenMP API calls strictly nested in `teams` and inside `loop` regions.
/// OpenACC constructs count as the OpenMP their plans emit, and OpenMP constructs already in
/// the file count as written, so the output is a fixed point.
struct Regions {
    /// Bodies of `teams` regions.
    teams: Vec<Range<usize>>,
    /// Bodies of `distribute`/`parallel` regions: calls there are not directly in `teams`.
    nested: Vec<Range<usize>>,
    /// Bodies of `loop` regions.
    loops: Vec<Range<usize>>,
}

impl Regions {
    fn new(unit: &Unit, plans: &[Plan], opts: &Options) -> Self {
        let mut r = Regions {
            teams: Vec::new(),
            nested: Vec::new(),
            loops: Vec::new(),
        };
        for (c, plan) in plans.iter().enumerate().take(unit.sites.len()) {
            let (Some(d), Some(stmt)) = (unit.dir(c), &unit.stmts[c]) else {
                continue;
            };
            match &plan.action {
                Action::Rewrite(rw) => {
                    r.add(rw.name.split(' '), stmt.bytes.clone());
                    for (name, body) in &plan.regions {
                        r.add(name.split(' '), body.clone());
                    }
                }
                Action::Unchanged if d.compute_kind().is_some_and(|k| k != "serial") => {
                    // Stays OpenACC: assume the worst, a `teams` region.
                    r.teams.push(unit.sites[c].span.start..stmt.bytes.end);
                    if opts.profile == Profile::Loop {
                        r.loops.push(stmt.bytes.clone());
                    }
                }
                _ => {}
            }
        }
        let src = unit.src;
        let toks = unit.structure.toks;
        let wrappers = crate::scan::pragma_wrappers(src, toks);
        for (ti, tok) in toks.iter().enumerate() {
            // `P(omp …)` with a pragma wrapper macro `P`.
            if tok.kind == TokKind::Ident
                && wrappers.iter().any(|w| w == tok.text(src))
                && toks.get(ti + 1).is_some_and(|t| t.text(src) == "(")
                && toks.get(ti + 2).is_some_and(|t| t.text(src) == "omp")
                && let Some(close) = close_paren(src, toks, ti + 1)
                && let Some(stmt) = unit.structure.stmt_after(close)
            {
                r.add(toks[ti + 3..close].iter().map(|t| t.text(src)), stmt.bytes);
            }
            // `_Pragma("omp …")` (as the translation of `_Pragma("acc …")` writes it).
            if let [name, open, lit, close] = toks.get(ti..ti + 4).unwrap_or_default()
                && (name.text(src), open.text(src), close.text(src)) == ("_Pragma", "(", ")")
                && let Some((content, false)) = crate::lex::string_content(lit.text(src))
                && let Some(stmt) = unit.structure.stmt_after(ti + 3)
            {
                let body = &src[lit.start + content.start..lit.start + content.end];
                let mut words = body
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .filter(|w| !w.is_empty());
                if words.next() == Some("omp") {
                    r.add(words, stmt.bytes);
                }
            }
            if tok.kind != TokKind::PpLine {
                continue;
            }
            let inner = lex_range(src, tok.start + 1..tok.end, false);
            let words: Vec<&str> = inner.iter().map(|t| t.text(src)).collect();
            if let ["pragma", "omp", rest @ ..] = words.as_slice()
                && let Some(stmt) = unit.structure.stmt_after(ti)
            {
                r.add(rest.iter().copied(), stmt.bytes);
            }
        }
        r
    }

    /// Record the body of the OpenMP directive named by `words` (clauses may follow).
    fn add<'w>(&mut self, words: impl Iterator<Item = &'w str>, body: Range<usize>) {
        let name: Vec<&str> = words
            .take_while(|w| {
                matches!(
                    *w,
                    "target" | "teams" | "distribute" | "parallel" | "for" | "simd" | "loop"
                )
            })
            .collect();
        let has = |w: &str| name.contains(&w);
        if has("loop") {
            self.loops.push(body);
        } else if has("distribute") || has("parallel") {
            self.nested.push(body);
        } else if has("teams") {
            self.teams.push(body);
        }
    }

    fn restricted(&self, at: usize) -> bool {
        self.loops.iter().any(|l| l.contains(&at))
            || self.teams.iter().any(|t| {
                t.contains(&at)
                    && !self
                        .nested
                        .iter()
                        .any(|n| n.contains(&at) && n.start >= t.start)
            })
    }
}

/// A call: token indices of its name, `(` and `)`, and each argument's token range.
struct Call {
    name: usize,
    open: usize,
    close: usize,
    args: Vec<Range<usize>>,
}

/// How an acc_device_t argument reads.
enum DevType {
    Host,
    NotHost,
    /// `acc_device_nvidia`, `acc_device_radeon`: any non-host device is taken.
    Vendor,
    Unknown,
}

fn dev_type(text: &str) -> DevType {
    match text {
        "acc_device_host" => DevType::Host,
        "acc_device_not_host" | "acc_device_default" | "acc_device_current" => DevType::NotHost,
        "acc_device_nvidia" | "acc_device_radeon" => DevType::Vendor,
        _ => DevType::Unknown,
    }
}

/// Where a whole-statement call stands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum StmtCtx {
    /// In a block: a directive may replace it.
    Free,
    /// The body of `if`/`else`/a loop, after a label, or after another pragma: a directive
    /// needs braces around it.
    Body,
}

struct Cx<'a> {
    src: &'a str,
    eol: &'static str,
    index: LineIndex,
    opts: &'a Options,
    regions: Regions,
    /// Pragma wrapper macros (`#define P(x) _Pragma(#x)`).
    wrappers: Vec<String>,
    /// Directive sites (never edited here).
    sites: Vec<Range<usize>>,
    diags: Vec<Diagnostic>,
    /// Byte ranges of calls translated or reported (names inside are accounted for).
    handled: Vec<Range<usize>>,
    /// Where an `omp_*` routine was first emitted.
    omp_at: Option<usize>,
    /// Where the async queues' dependence objects are first used.
    queues_at: Option<usize>,
    /// Where the queue-wait helper is first called.
    wait_fn_at: Option<usize>,
    /// How deep the call being translated is nested in other calls' arguments.
    depth: usize,
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
        &self.src[toks[r.start].start..toks[r.end - 1].end]
    }

    fn use_queues(&mut self, at: usize) {
        self.queues_at = Some(self.queues_at.map_or(at, |q| q.min(at)));
    }

    /// The text of a queue placeholder (`{qK}`, `{QK}`, `{asyncK}`, `{waitK}`) for the
    /// argument texts `args`; Err for `acc_async_sync` where a queue is needed.
    fn queue_text(&mut self, key: &str, args: &[String], at: usize) -> Result<String, String> {
        let split = key.find(|c: char| c.is_ascii_digit()).unwrap_or(key.len());
        let (kind, k) = key.split_at(split);
        let Some(arg) = k.parse::<usize>().ok().and_then(|k| args.get(k)) else {
            return Err(format!("bad placeholder {{{key}}}"));
        };
        let q = queue(Some(arg));
        // Only work put on a queue changes when the queue is acc_async_sync at run time.
        if q.is_runtime() && matches!(kind, "async" | "enter" | "R") {
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
            // Data made present at once, after the queue's earlier work: a deferred
            // `target enter data nowait` would leave it absent until its task runs.
            "enter" => match q.object() {
                Some(o) => format!(" depend(inout: {o})"),
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
        if !matches!(kind, "async" | "enter") || !text.is_empty() {
            self.use_queues(at);
        }
        Ok(text)
    }

    fn diag(&mut self, at: usize, rule: &'static str, message: String) {
        self.diags.push(Diagnostic::new(at, rule, message));
    }

    /// Edits for the runtime calls among `toks[range]` (nested calls handled inside out).
    fn calls(&mut self, toks: &[Token], range: Range<usize>, scope: Scope) -> Vec<Edit> {
        let mut edits = Vec::new();
        let mut i = range.start;
        while i < range.end {
            let Some(rule) = self.routine_at(toks, i, range.start, range.end) else {
                i += 1;
                continue;
            };
            match self.parse_call(toks, i, range.end) {
                Ok(Some(call)) => {
                    let next = call.close + 1;
                    edits.extend(self.call(toks, &call, rule, scope));
                    i = next;
                }
                Ok(None) => i += 1,
                Err(why) => {
                    let name = self.text(&toks[i]).to_string();
                    self.handled.push(toks[i].range());
                    self.diag(
                        toks[i].start,
                        "runtime-not-translated",
                        format!("'{name}' is not translated: {why}; the call is left unchanged"),
                    );
                    i += 1;
                }
            }
        }
        edits
    }

    /// The table entry when `toks[i]` starts a call of a runtime routine.
    fn routine_at(
        &self,
        toks: &[Token],
        i: usize,
        start: usize,
        end: usize,
    ) -> Option<&'static RuntimeRule> {
        let t = &toks[i];
        let name = self.text(t);
        // GCC's OpenACC builtins are in the table too: they exist only under -fopenacc.
        if t.kind != TokKind::Ident
            || !(name.starts_with("acc_") || name.starts_with("__builtin_goacc_"))
        {
            return None;
        }
        let rule = tables().runtime(self.text(t))?;
        let open = toks[..end].get(i + 1)?;
        (self.text(open) == "(" && self.is_call(toks, i, start)).then_some(rule)
    }

    /// Whether `toks[i]` followed by `(` is a call rather than a member, a qualified name or
    /// a declaration. Syntactic and conservative: `T name(` and `T *name(` at the start of a
    /// declaration are declarations. Tokens before `start` (a macro's name) are not looked at.
    fn is_call(&self, toks: &[Token], i: usize, start: usize) -> bool {
        let Some(p) = i.checked_sub(1).filter(|&p| p >= start) else {
            return true;
        };
        match self.text(&toks[p]) {
            "." | "->" => return false,
            // `::acc_wait(` is the global routine; `ns::acc_wait(` is someone else's.
            "::" => {
                return p == 0
                    || !(toks[p - 1].kind == TokKind::Ident || self.text(&toks[p - 1]) == ">");
            }
            _ => {}
        }
        let mut q = p;
        while q > start
            && matches!(
                self.text(&toks[q]),
                "*" | "&" | "&&" | "const" | "volatile" | "restrict" | "__restrict"
            )
        {
            q -= 1;
        }
        let t = &toks[q];
        let word = self.text(t);
        if t.kind != TokKind::Ident || EXPR_KEYWORDS.contains(&word) {
            return true;
        }
        if q == p || TYPE_KEYWORDS.contains(&word) {
            return false;
        }
        // `a * acc_x(` multiplies; `T *acc_x(` declares when T opens a declaration.
        match q.checked_sub(1).filter(|&k| k >= start).map(|k| &toks[k]) {
            None => false,
            Some(b) => {
                !(b.kind == TokKind::PpLine
                    || matches!(self.text(b), ";" | "{" | "}")
                    || DECL_SPECIFIERS.contains(&self.text(b)))
            }
        }
    }

    /// The call whose name is `toks[i]`; None if it is not closed before `end`.
    fn parse_call(
        &self,
        toks: &[Token],
        i: usize,
        end: usize,
    ) -> Result<Option<Call>, &'static str> {
        let open = i + 1;
        let mut stack: Vec<&str> = Vec::new();
        let mut args = Vec::new();
        let mut arg_start = open + 1;
        for (j, t) in toks.iter().enumerate().take(end).skip(open) {
            if t.kind == TokKind::PpLine {
                return Err("a preprocessor line is inside its arguments");
            }
            let text = self.text(t);
            match text {
                "(" | "[" | "{" => stack.push(text),
                ")" | "]" | "}" => {
                    let want = match text {
                        ")" => "(",
                        "]" => "[",
                        _ => "{",
                    };
                    if stack.pop() != Some(want) {
                        return Err("its parentheses do not balance");
                    }
                    let depth = stack.len();
                    if depth == 0 {
                        if j > open + 1 || !args.is_empty() {
                            args.push(arg_start..j);
                        }
                        if args.iter().any(|a: &Range<usize>| a.is_empty()) {
                            return Err("an argument is empty");
                        }
                        return Ok(Some(Call {
                            name: i,
                            open,
                            close: j,
                            args,
                        }));
                    }
                }
                "," if stack.len() == 1 => {
                    args.push(arg_start..j);
                    arg_start = j + 1;
                }
                // Only a block (a lambda, a statement expression) holds statements.
                ";" | "#" if !stack.contains(&"{") => {
                    return Err("its arguments are not an expression");
                }
                _ => {}
            }
        }
        Ok(None)
    }

    /// Edits for one call (and the calls nested in its arguments).
    fn call(
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

    fn expr_template(&self, rule: &'static RuntimeRule) -> Option<&'static str> {
        match (&rule.omp51, &rule.omp) {
            (Some(t), _) if self.opts.omp_version >= OmpVersion::V51 => Some(t),
            (_, Some(t)) => Some(t),
            _ => None,
        }
    }

    /// Whether the call starting at byte `start` is a whole expression statement, and where.
    fn stmt_ctx(&self, toks: &[Token], start: usize, call: &Call) -> Option<StmtCtx> {
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
                // A `_Pragma("…")` operator or a pragma wrapper `P(…)` is a directive line too.
                if self.text(t) == ")"
                    && let Some(open) = self.matching_open(toks, p)
                    && open >= 1
                    && (self.text(&toks[open - 1]) == "_Pragma"
                        || self
                            .wrappers
                            .iter()
                            .any(|w| w == self.text(&toks[open - 1])))
                {
                    after_pragma = true;
                    p = open - 1;
                    continue;
                }
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
    fn matching_open(&self, toks: &[Token], close: usize) -> Option<usize> {
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
    fn is_label(&self, toks: &[Token], colon: usize) -> bool {
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
    fn removal(&self, start: usize, semi: usize, call_end: usize, ctx: StmtCtx) -> Edit {
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
    fn directive(
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

    /// Runtime calls written inside a `#pragma` line cannot be edited here: report them.
    fn calls_in_directive(&mut self, inner: &[Token]) {
        let src = self.src;
        let Some(model) = inner.get(1).map(|t| t.text(src)) else {
            return;
        };
        if model != "acc" && model != "omp" {
            return;
        }
        for k in 2..inner.len() {
            let t = &inner[k];
            let name = t.text(src);
            if t.kind == TokKind::Ident
                && name.starts_with("acc_")
                && tables().runtime(name).is_some()
                && inner.get(k + 1).is_some_and(|n| n.text(src) == "(")
            {
                self.handled.push(t.range());
                self.diag(
                    t.start,
                    "runtime-in-directive",
                    format!("'{name}' inside a directive is not translated; rewrite it by hand"),
                );
            }
        }
    }

    fn in_site(&self, at: usize) -> bool {
        in_sites(&self.sites, at)
    }

    /// OpenACC runtime names that stay after `edits`, in source order: calls left unchanged
    /// (in code, `#define` bodies and directives) and openacc.h types and constants (in code
    /// and `#define` bodies; in directives the translation consumes them).
    fn leftovers(&self, toks: &[Token], edits: &[Edit]) -> Vec<(String, usize)> {
        let src = self.src;
        let kept = |t: &Token| !edits.iter().any(|e| e.range.contains(&t.start));
        let mut out = Vec::new();
        let mut scan = |toks: &[Token], start: usize, constants: bool| {
            for i in start..toks.len() {
                let t = &toks[i];
                let name = t.text(src);
                // A constant in a directive (`P(acc wait(acc_async_noval))`) is translated
                // with it.
                let constant = constants && !self.in_site(t.start);
                // GCC's builtins need no openacc.h.
                let hit = (constant && t.kind == TokKind::Ident && is_openacc_name(name))
                    || (self.routine_at(toks, i, start, toks.len()).is_some()
                        && !name.starts_with("__builtin_"));
                if hit && kept(t) {
                    out.push((name.to_string(), t.start));
                }
            }
        };
        for t in toks.iter().filter(|t| t.kind == TokKind::PpLine) {
            let inner = lex_range(src, t.start + 1..t.end, false);
            match inner.first().map(|k| k.text(src)) {
                Some("define") => scan(&inner, macro_body(src, &inner), true),
                Some("pragma") => scan(&inner, 1, false),
                _ => {}
            }
        }
        scan(toks, 0, true);
        out.sort_by_key(|x| x.1);
        out
    }

    /// `#include <openacc.h>`, `_OPENACC` tests, and names from openacc.h left behind
    /// (`left`): while any stay, openacc.h stays too, with omp.h beside it, so that the
    /// file still compiles where openacc.h exists.
    fn preprocessor(&mut self, toks: &[Token], left: &[(String, usize)]) -> Vec<Edit> {
        let src = self.src;
        let keep = self.opts.keep_openacc_guards;
        let mut edits = Vec::new();
        let mut includes: Vec<Include> = Vec::new();
        let mut stack: Vec<Frame> = Vec::new();
        for (ti, tok) in toks.iter().enumerate() {
            if tok.kind != TokKind::PpLine {
                continue;
            }
            let inner = lex_range(src, tok.start + 1..tok.end, false);
            let Some(kw) = inner.first().map(|t| t.text(src)) else {
                continue;
            };
            match kw {
                "if" | "ifdef" | "ifndef" => stack.push(Frame {
                    id: ti,
                    branch: 0,
                    acc_tested: false,
                }),
                "elif" | "elifdef" | "elifndef" | "else" => {
                    if let Some(f) = stack.last_mut() {
                        f.branch += 1;
                    }
                }
                "endif" => {
                    stack.pop();
                }
                "include" => {
                    if let Some((header, omp)) = header(src, &inner[1..]) {
                        includes.push(Include {
                            tok: ti,
                            header,
                            omp,
                            cond: stack.iter().map(|f| (f.id, f.branch)).collect(),
                        });
                    }
                    continue;
                }
                _ => continue,
            }
            if !keep && kw != "endif" && kw != "else" {
                edits.extend(self.guard(kw, &inner[1..], stack.last_mut()));
            }
        }
        let mut omp_incs: Vec<(usize, Vec<(usize, u32)>)> = includes
            .iter()
            .filter(|i| i.omp)
            .map(|i| (i.tok, i.cond.clone()))
            .collect();
        let acc_incs: Vec<&Include> = includes.iter().filter(|i| !i.omp).collect();
        for inc in &acc_incs {
            let covered = omp_incs.iter().any(|(t, cond)| {
                inc.cond.starts_with(cond)
                    && (*t < inc.tok
                        || toks[inc.tok + 1..*t]
                            .iter()
                            .all(|x| x.kind == TokKind::PpLine))
            });
            let tok = &toks[inc.tok];
            if !keep && let Some((name, at)) = left.first() {
                let line = self.index.line_col(*at).0;
                let others = match left.len() {
                    1 => String::new(),
                    n => format!(" and {} more", n - 1),
                };
                let added = if covered {
                    String::new()
                } else {
                    let ls = self.index.line_start(tok.start);
                    let at_line_start = src[ls..tok.start].trim_matches([' ', '\t']).is_empty();
                    let pos = if at_line_start { ls } else { tok.start };
                    edits.push(Edit::insert(pos, format!("#include <omp.h>{}", self.eol)));
                    omp_incs.push((inc.tok, inc.cond.clone()));
                    " (<omp.h> is added before it)".to_string()
                };
                let header = &self.src[inc.header.clone()];
                self.diag(
                    tok.start,
                    "openacc-include-kept",
                    format!("{header} is kept{added}: '{name}' (line {line}){others} stay untranslated; remove the include once they are rewritten"),
                );
                continue;
            }
            if keep {
                // The include stays; the omp_* routines emitted need omp.h next to it.
                if self.omp_at.is_some() && !covered {
                    edits.push(Edit::insert(
                        tok.end,
                        format!("{}#include <omp.h>", self.eol),
                    ));
                    omp_incs.push((inc.tok, inc.cond.clone()));
                }
            } else if covered {
                let ls = self.index.line_start(tok.start);
                let range = if src[ls..tok.start].trim_matches([' ', '\t']).is_empty() {
                    ls..after_eol(src, tok.end)
                } else {
                    tok.range()
                };
                edits.push(Edit::delete(range));
            } else {
                edits.push(Edit::replace(inc.header.clone(), "<omp.h>"));
                omp_incs.push((inc.tok, inc.cond.clone()));
            }
        }
        if let Some(at) = self.omp_at
            && includes.is_empty()
        {
            // Before the first #include, else before the first line of code; a second
            // include of omp.h (through another header) is harmless.
            let first = toks
                .iter()
                .find(|t| {
                    t.kind == TokKind::PpLine
                        && lex_range(src, t.start + 1..t.end, false)
                            .first()
                            .is_some_and(|w| w.text(src) == "include")
                })
                .or(toks.first());
            if let Some(t) = first {
                let ls = self.index.line_start(t.start);
                let at_line_start = src[ls..t.start].trim_matches([' ', '\t']).is_empty();
                let pos = if at_line_start { ls } else { t.start };
                edits.push(Edit::insert(pos, format!("#include <omp.h>{}", self.eol)));
                self.diag(
                    at,
                    "omp-header-added",
                    "this file now calls OpenMP routines and included neither <omp.h> nor <openacc.h>: '#include <omp.h>' is added".into(),
                );
            }
        }
        edits.extend(self.queue_definitions(toks));
        if !keep {
            let fate = match (acc_incs.is_empty(), left.is_empty()) {
                (true, _) => {
                    "which this file gets through another header (gone once that header is migrated)"
                }
                (false, true) => "which this file no longer includes",
                (false, false) => "which is kept for it",
            };
            self.leftover_names(toks, fate);
        }
        edits
    }

    /// The queues' dependence objects (and the wait helper), defined once in a file that uses
    /// them: after its last unconditional `#include` before the first use, else before its
    /// first line of code.
    fn queue_definitions(&mut self, toks: &[Token]) -> Vec<Edit> {
        let src = self.src;
        let Some(first) = self.queues_at else {
            return Vec::new();
        };
        let mut text = String::new();
        if !src.contains("ACC2OMP_QUEUES") {
            text.push_str(&queues_definition(self.eol));
        }
        if self.wait_fn_at.is_some() && !src.contains("ACC2OMP_WAIT") {
            text.push_str(&wait_fn_definition(self.eol));
        }
        if text.is_empty() {
            return Vec::new();
        }
        // The last #include outside conditionals before the first use.
        let mut depth = 0usize;
        let mut last_include = None;
        for t in toks.iter().take_while(|t| t.start < first) {
            if t.kind != TokKind::PpLine {
                continue;
            }
            let inner = lex_range(src, t.start + 1..t.end, false);
            match inner.first().map(|w| w.text(src)) {
                Some("if" | "ifdef" | "ifndef") => depth += 1,
                Some("endif") => depth = depth.saturating_sub(1),
                Some("include") if depth == 0 => last_include = Some(t.end),
                _ => {}
            }
        }
        let pos = match last_include {
            Some(end) => {
                let p = after_eol(src, end);
                if p == end {
                    // The include ends the file without a line break.
                    text.insert_str(0, self.eol);
                }
                p
            }
            None => {
                let Some(t) = toks.first() else {
                    return Vec::new();
                };
                let ls = self.index.line_start(t.start);
                if src[ls..t.start].trim_matches([' ', '\t']).is_empty() {
                    ls
                } else {
                    t.start
                }
            }
        };
        self.diag(
            first,
            "async-queues",
            "OpenACC async queues become OpenMP dependences on 'acc2omp_queue', which is defined once in this file (a weak definition shared by every translation unit)".into(),
        );
        vec![Edit::insert(pos, text)]
    }

    /// Rewrite `_OPENACC` to `_OPENMP` in one conditional directive (`args`: after its keyword).
    fn guard(&mut self, kw: &str, args: &[Token], frame: Option<&mut Frame>) -> Vec<Edit> {
        let src = self.src;
        let is = |t: &Token, w: &str| t.kind == TokKind::Ident && t.text(src) == w;
        let acc: Vec<usize> = (0..args.len())
            .filter(|&k| is(&args[k], "_OPENACC"))
            .collect();
        let omp = args.iter().any(|t| is(t, "_OPENMP"));
        let Some(&first) = acc.first() else {
            if omp
                && kw.starts_with("elif")
                && let Some(f) = frame
                && f.acc_tested
            {
                self.diag(
                    args[0].start,
                    "openacc-guard",
                    "an earlier branch of this conditional tested _OPENACC and now tests _OPENMP; check which branch OpenMP builds should take".into(),
                );
            }
            return Vec::new();
        };
        if omp {
            self.diag(
                args[first].start,
                "openacc-guard",
                "this condition tests both _OPENACC and _OPENMP; rewriting _OPENACC would make it test _OPENMP twice, so it is left unchanged: rewrite it by hand".into(),
            );
            return Vec::new();
        }
        if let Some(f) = frame {
            f.acc_tested = true;
        }
        let mut edits = Vec::new();
        for &k in &acc {
            let defined = (k >= 1 && is(&args[k - 1], "defined"))
                || (k >= 2 && args[k - 1].text(src) == "(" && is(&args[k - 2], "defined"));
            let compares = |t: Option<&Token>| {
                t.is_some_and(|t| {
                    matches!(
                        t.text(src),
                        "<" | ">" | "<=" | ">=" | "==" | "!=" | "+" | "-" | "*" | "/" | "%"
                    )
                })
            };
            let value = !kw.ends_with("def")
                && !defined
                && (compares(args.get(k + 1)) || compares(k.checked_sub(1).map(|j| &args[j])));
            if value {
                self.diag(
                    args[k].start,
                    "openacc-guard",
                    "'_OPENACC' becomes '_OPENMP', whose value is an OpenMP version date (201811 is OpenMP 5.0; GCC 12 defines 201511), not an OpenACC one; check this comparison".into(),
                );
            }
            edits.push(Edit::replace(args[k].range(), "_OPENMP"));
        }
        edits
    }

    /// Warn once per name about openacc.h constants and types that stay behind.
    fn leftover_names(&mut self, toks: &[Token], fate: &str) {
        let src = self.src;
        let mut seen: Vec<(String, usize, usize)> = Vec::new();
        let sites = &self.sites;
        let mut note = |t: &Token, handled: &[Range<usize>]| {
            let name = t.text(src);
            if t.kind != TokKind::Ident
                || !is_openacc_name(name)
                || handled.iter().any(|h| h.contains(&t.start))
                || in_sites(sites, t.start)
            {
                return;
            }
            match seen.iter_mut().find(|(n, _, _)| n == name) {
                Some(s) => s.2 += 1,
                None => seen.push((name.to_string(), t.start, 1)),
            }
        };
        for t in toks {
            if t.kind == TokKind::PpLine {
                let inner = lex_range(src, t.start + 1..t.end, false);
                if inner.first().is_some_and(|k| k.text(src) == "define") {
                    for x in &inner[1..] {
                        note(x, &self.handled);
                    }
                }
            } else {
                note(t, &self.handled);
            }
        }
        for (name, at, n) in seen {
            let more = if n > 1 {
                format!(" (used {n} times)")
            } else {
                String::new()
            };
            self.diag(
                at,
                "openacc-constant",
                format!("'{name}' is declared by <openacc.h>, {fate}{more}; replace it by hand"),
            );
        }
    }
}

/// Index of the `)` closing the `(` at `open`.
fn close_paren(src: &str, toks: &[Token], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match t.text(src) {
            "(" => depth += 1,
            ")" => {
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

/// Whether `at` is inside one of the directive `sites` (in source order).
fn in_sites(sites: &[Range<usize>], at: usize) -> bool {
    let k = sites.partition_point(|s| s.start <= at);
    k > 0 && sites[k - 1].contains(&at)
}

/// A conditional group being scanned.
struct Frame {
    /// Token index of its `#if`.
    id: usize,
    branch: u32,
    /// A branch so far tested `_OPENACC` (now `_OPENMP`).
    acc_tested: bool,
}

struct Include {
    tok: usize,
    /// The header name, `<openacc.h>` or `"openacc.h"`.
    header: Range<usize>,
    omp: bool,
    /// The conditional branches around it, outermost first.
    cond: Vec<(usize, u32)>,
}

/// The header name of an include line (`args`: tokens after `include`) if it is openacc.h
/// (false) or omp.h (true).
fn header(src: &str, args: &[Token]) -> Option<(Range<usize>, bool)> {
    let first = args.first()?;
    let range = if first.kind == TokKind::Literal {
        first.range()
    } else if first.text(src) == "<" {
        let close = args.iter().find(|t| t.text(src) == ">")?;
        first.start..close.end
    } else {
        return None;
    };
    match &src[range.clone()] {
        "<openacc.h>" | "\"openacc.h\"" => Some((range, false)),
        "<omp.h>" | "\"omp.h\"" => Some((range, true)),
        _ => None,
    }
}

/// Constants and types declared by openacc.h.
fn is_openacc_name(name: &str) -> bool {
    name.starts_with("acc_device_")
        || name.starts_with("acc_property_")
        || matches!(
            name,
            "acc_async_t" | "acc_async_noval" | "acc_async_sync" | "acc_async_default"
        )
}

/// Index of the first token of a `#define` body (`inner`: the line's tokens after `#`).
fn macro_body(src: &str, inner: &[Token]) -> usize {
    let Some(name) = inner.get(1) else {
        return inner.len();
    };
    // A function-like macro's parameter list starts right after its name.
    if let Some(open) = inner.get(2)
        && open.text(src) == "("
        && open.start == name.end
    {
        if let Some(k) = inner[2..].iter().position(|t| t.text(src) == ")") {
            return 2 + k + 1;
        }
        return inner.len();
    }
    2
}

/// Whether `toks` (an argument) is free of side effects: no assignment, increment, or call.
/// A parenthesized cast followed by `(` counts as a call: conservative.
fn pure(src: &str, toks: &[Token]) -> bool {
    for (k, t) in toks.iter().enumerate() {
        let s = t.text(src);
        let next_open = toks.get(k + 1).is_some_and(|n| n.text(src) == "(");
        let impure = match t.kind {
            TokKind::PpLine => true,
            TokKind::Punct => {
                matches!(
                    s,
                    "=" | "+="
                        | "-="
                        | "*="
                        | "/="
                        | "%="
                        | "&="
                        | "|="
                        | "^="
                        | "<<="
                        | ">>="
                        | "++"
                        | "--"
                ) || (next_open && matches!(s, ")" | "]" | ">"))
            }
            TokKind::Ident => {
                matches!(s, "new" | "delete" | "throw" | "co_await" | "co_yield")
                    || (next_open
                        && !matches!(
                            s,
                            "sizeof"
                                | "alignof"
                                | "_Alignof"
                                | "__alignof__"
                                | "typeof"
                                | "__typeof__"
                                | "decltype"
                                | "offsetof"
                        ))
            }
            _ => false,
        };
        if impure {
            return false;
        }
    }
    true
}

/// How often argument `k` occurs in `template` (`{k}`, or a queue placeholder `{qk}`, …).
fn placeholder_uses(template: &str, k: usize) -> usize {
    template.matches(&format!("{{{k}}}")).count()
        + ["q", "Q", "R", "async", "enter", "wait"]
            .iter()
            .map(|p| template.matches(&format!("{{{p}{k}}}")).count())
            .sum::<usize>()
}

/// `template` with `{0}`, `{1}`, … replaced by `args`, in one pass (an argument's own text is
/// never scanned for placeholders).
#[cfg(test)]
fn fill(template: &str, args: &[String]) -> String {
    fill_with(template, args, &|_| None)
}

/// `fill`, also replacing named placeholders (`{q0}`, `{async2}`) by what `extra` gives.
fn fill_with(template: &str, args: &[String], extra: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let letters = after.bytes().take_while(u8::is_ascii_alphabetic).count();
        let digits = after[letters..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        let key = &after[..letters + digits];
        let closed = digits > 0 && after[letters + digits..].starts_with('}');
        let value = match key.parse::<usize>() {
            Ok(k) => args.get(k).cloned(),
            Err(_) => extra(key),
        };
        match value {
            Some(v) if closed => {
                out.push_str(&v);
                rest = &after[letters + digits + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The named queue placeholders of a template (`q0`, `Q1`, `async2`, `wait3`).
fn queue_keys(template: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let letters = after.bytes().take_while(u8::is_ascii_alphabetic).count();
        let digits = after[letters..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        if letters > 0 && digits > 0 && after[letters + digits..].starts_with('}') {
            let key = after[..letters + digits].to_string();
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        rest = after;
    }
    keys
}

/// Whether a template calls an OpenMP routine (`omp_…`, not the `acc2omp_` helpers).
fn calls_omp(template: &str) -> bool {
    template.match_indices("omp_").any(|(k, _)| {
        !template[..k]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// Whether a directive plan refers to the queues' dependence objects.
fn uses_queues(plan: &Plan) -> bool {
    plan_mentions(plan, QUEUES)
}

/// Whether a directive's plan calls OpenMP routines (`omp_set_default_device(n);`,
/// `if(omp_target_is_present(…))`).
fn plan_calls_omp(plan: &Plan) -> bool {
    plan_mentions(plan, "omp_set_") || plan_mentions(plan, "omp_get_")
}

/// Whether the OpenMP a directive's plan emits contains `word`.
fn plan_mentions(plan: &Plan, word: &str) -> bool {
    let has = |t: &str| t.contains(word);
    let rw = match &plan.action {
        Action::Rewrite(rw) => rw,
        Action::Statement(t) => return has(t),
        _ => return false,
    };
    rw.append.iter().any(|t| has(t))
        || rw
            .ops
            .iter()
            .any(|o| matches!(o, crate::translate::ClauseOp::Replace(t) if has(t)))
        || plan.before.iter().any(|t| has(t))
        || plan.inserts.iter().any(|(_, t)| has(t))
}

/// `src[range]` with the edits inside it applied.
fn apply_within(src: &str, range: &Range<usize>, edits: &[Edit]) -> String {
    let mut inside: Vec<&Edit> = edits
        .iter()
        .filter(|e| range.start <= e.range.start && e.range.end <= range.end)
        .collect();
    inside.sort_by_key(|e| e.range.start);
    let mut out = String::new();
    let mut pos = range.start;
    for e in inside {
        if e.range.start < pos {
            continue;
        }
        out.push_str(&src[pos..e.range.start]);
        out.push_str(&e.text);
        pos = e.range.end;
    }
    out.push_str(&src[pos..range.end]);
    out
}

/// `text` on one line, for a directive: as written when it has no line break or `//`
/// comment, else its tokens joined by single blanks. None if a token itself spans lines.
fn one_line(text: &str) -> Option<String> {
    if !text.contains(['\n', '\r']) && !text.contains("//") {
        return Some(text.to_string());
    }
    let toks = lex(text);
    let mut out = String::new();
    let mut end = None;
    for t in &toks {
        let s = t.text(text);
        if t.kind == TokKind::PpLine || s.contains(['\n', '\r']) {
            return None;
        }
        if end.is_some_and(|e| e < t.start) {
            out.push(' ');
        }
        out.push_str(s);
        end = Some(t.end);
    }
    Some(out)
}

/// What a routine becomes, for a message.
fn describe(template: Option<&str>, pragma: Option<&str>) -> String {
    if let Some(t) = template {
        let mut t = t.trim_start_matches(['!', '(']);
        // A leading queue placeholder (`({wait3}omp_target_memcpy(…))`) names no routine.
        if t.starts_with('{')
            && let Some(e) = t.find('}')
        {
            t = &t[e + 1..];
        }
        let name: String = t
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        return format!("'{}'", if name.is_empty() { t } else { &name });
    }
    match pragma {
        Some(p) => {
            let words: Vec<&str> = p.split(' ').take_while(|w| !w.contains('(')).collect();
            format!("'#pragma omp {}'", words.join(" "))
        }
        None => "nothing".into(),
    }
}

/// A replacement must not paste itself onto a neighbouring identifier or number (`f()x`
/// would become `0x`): a space keeps them apart.
fn separate_tokens(src: &str, e: &mut Edit) {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    if e.text.ends_with(word) && src[e.range.end..].starts_with(word) {
        e.text.push(' ');
    }
    if e.text.starts_with(word) && src[..e.range.start].ends_with(word) {
        e.text.insert(0, ' ');
    }
}

/// Whether only blanks, comments that end on this line, or a `//` comment follow `pos` on
/// its line (so a directive line may end there).
fn rest_of_line_empty(src: &str, pos: usize) -> bool {
    let mut rest = &src[pos..];
    loop {
        rest = rest.trim_start_matches([' ', '\t']);
        if rest.is_empty()
            || rest.starts_with('\n')
            || rest.starts_with("\r\n")
            || rest.starts_with("//")
        {
            return true;
        }
        if let Some(body) = rest.strip_prefix("/*") {
            match body.find("*/") {
                Some(e) if !body[..e].contains('\n') => rest = &body[e + 2..],
                _ => return false,
            }
        } else {
            return false;
        }
    }
}

/// End of the line terminator at `end` (or `end` itself).
fn after_eol(src: &str, end: usize) -> usize {
    let rest = &src[end..];
    if rest.starts_with("\r\n") {
        end + 2
    } else if rest.starts_with('\n') {
        end + 1
    } else {
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::migrate_text;

    fn run(src: &str) -> (String, Vec<&'static str>) {
        let o = migrate_text(src, &Options::default());
        (o.text, o.diagnostics.iter().map(|d| d.rule).collect())
    }

    #[test]
    fn table_is_consistent() {
        let t = tables();
        let mut names: Vec<&str> = t.runtime.iter().map(|r| r.name.as_str()).collect();
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(n, names.len(), "duplicate routine");
        for r in &t.runtime {
            assert!(
                t.diagnostic(&r.rule).is_some(),
                "{}: unknown rule {}",
                r.name,
                r.rule
            );
            assert!(!r.doc.trim().is_empty(), "{} lacks a doc", r.name);
            let kinds = [
                r.omp.is_some() || r.omp51.is_some() || r.host.is_some(),
                r.pragma.is_some(),
                r.remove,
            ];
            assert!(
                kinds.iter().filter(|k| **k).count() <= 1,
                "{}: several kinds",
                r.name
            );
            if kinds.iter().all(|k| !k) || r.omp51.is_some() && r.omp.is_none() {
                assert!(r.advice.is_some(), "{} needs advice", r.name);
            }
            if let Some(k) = r.devtype {
                assert!(k < r.args, "{}: devtype out of range", r.name);
            }
            for t in [&r.omp, &r.omp51, &r.host].into_iter().flatten() {
                for k in r.args..10 {
                    assert_eq!(
                        placeholder_uses(t, k),
                        0,
                        "{}: {{{k}}} out of range",
                        r.name
                    );
                }
            }
            if r.pragma.as_deref().is_some_and(|p| p.contains("{bytes}")) {
                assert!(r.args >= 2, "{}", r.name);
            }
        }
    }

    #[test]
    fn covers_the_openacc_3_3_c_api() {
        let all = "acc_get_num_devices acc_set_device_type acc_get_device_type acc_set_device_num \
            acc_get_device_num acc_get_property acc_get_property_string acc_init acc_init_device \
            acc_shutdown acc_shutdown_device acc_async_test acc_async_test_device \
            acc_async_test_all acc_async_test_all_device acc_wait acc_wait_device acc_wait_async \
            acc_wait_device_async acc_wait_all acc_wait_all_device acc_wait_all_async \
            acc_wait_all_device_async acc_wait_any acc_wait_any_device acc_get_default_async \
            acc_set_default_async acc_on_device acc_malloc acc_free acc_copyin acc_copyin_async \
            acc_create acc_create_async acc_copyout acc_copyout_async acc_copyout_finalize \
            acc_copyout_finalize_async acc_delete acc_delete_async acc_delete_finalize \
            acc_delete_finalize_async acc_update_device acc_update_device_async acc_update_self \
            acc_update_self_async acc_map_data acc_unmap_data acc_deviceptr acc_hostptr \
            acc_is_present acc_memcpy_to_device acc_memcpy_to_device_async \
            acc_memcpy_from_device acc_memcpy_from_device_async acc_memcpy_device \
            acc_memcpy_device_async acc_memcpy_d2d acc_memcpy_d2d_async acc_attach \
            acc_attach_async acc_detach acc_detach_async acc_detach_finalize \
            acc_detach_finalize_async acc_pcopyin acc_pcreate acc_present_or_copyin \
            acc_present_or_create acc_get_cuda_stream acc_set_cuda_stream";
        for name in all.split_whitespace() {
            assert!(tables().runtime(name).is_some(), "{name} missing");
        }
    }

    #[test]
    fn expressions() {
        let (t, d) = run(
            "void f(double *h, int n) {\n  double *d = (double *)acc_malloc(n);\n  acc_memcpy_to_device(d, h, n);\n  acc_free(d);\n}\n",
        );
        assert_eq!(
            t,
            "#include <omp.h>\nvoid f(double *h, int n) {\n  double *d = (double *)omp_target_alloc(n, omp_get_default_device());\n  omp_target_memcpy(d, h, n, 0, 0, omp_get_default_device(), omp_get_initial_device());\n  omp_target_free(d, omp_get_default_device());\n}\n"
        );
        assert!(d.contains(&"omp-header-added"), "{d:?}");
    }

    #[test]
    fn data_statements_become_directives() {
        let (t, _) = run(
            "void f(double *a, int n) {\n  acc_copyin(a, n * sizeof(double)); // in\n  if (n)\n    acc_update_self(a + 1,\n                    n /* count */ * 8);\n}\n",
        );
        assert_eq!(
            t,
            "void f(double *a, int n) {\n  { char *acc2omp_bytes = (char *)(a); (void)acc2omp_bytes;\n  #pragma omp target enter data map(to: acc2omp_bytes[0:n * sizeof(double)])\n  } // in\n  if (n)\n    { char *acc2omp_bytes = (char *)(a + 1); (void)acc2omp_bytes;\n    #pragma omp target update from(acc2omp_bytes[0:n /* count */ * 8])\n    }\n}\n"
        );
    }

    #[test]
    fn waits_and_removals() {
        let (t, _) = run(
            "void f(int q) {\n  acc_wait(q);\n  if (q) acc_wait_all(); else { acc_init(acc_device_nvidia); }\n  acc_shutdown(acc_device_default); // bye\n  acc_set_default_async(2);\n  x: acc_wait_all(); int r = acc_async_test(q);\n}\n",
        );
        assert_eq!(
            t,
            concat!(
                "#ifndef ACC2OMP_QUEUES\n#define ACC2OMP_QUEUES\n/* acc2omp: one OpenMP dependence object per OpenACC async queue */\n__attribute__((weak)) char acc2omp_queue[64];\n#endif\n",
                "#ifndef ACC2OMP_WAIT\n#define ACC2OMP_WAIT\n/* acc2omp: wait for OpenACC async queue slot q, or every queue when q < 0; returns 1 */\n__attribute__((weak)) int acc2omp_wait(int q)\n{\n    if (q < 0) {\n#pragma omp taskwait\n    } else {\n#pragma omp taskwait depend(in: acc2omp_queue[q])\n    }\n    return 1;\n}\n#endif\n",
                "void f(int q) {\n  #pragma omp taskwait depend(in: acc2omp_queue[(q) & 63])\n  if (q) {\n  #pragma omp taskwait\n  } else { (void)0; }\n  // bye\n  x: {\n  #pragma omp taskwait\n  } int r = acc2omp_wait((q) & 63);\n}\n"
            )
        );
    }

    #[test]
    fn comments_strings_members_and_declarations_are_left_alone() {
        let src = "/* acc_malloc(1) */ const char *s = \"acc_malloc(2)\";\nvoid *acc_malloc(size_t n);\nstatic void acc_wait(int q) { o.acc_free(p); ns::acc_free(p); }\n";
        let (t, d) = run(src);
        assert_eq!(t, src);
        assert!(d.is_empty(), "{d:?}");
    }

    #[test]
    fn value_used_and_side_effects_are_reported() {
        let src = "void f(double *a, int n) {\n  double *d = (double *)acc_copyin(a, n);\n  int k = acc_is_present(a, n++);\n  int m = acc_on_device(t);\n}\n";
        let (t, d) = run(src);
        assert_eq!(t, src);
        assert_eq!(
            d,
            [
                "runtime-value-used",
                "runtime-side-effects",
                "runtime-device-type"
            ]
        );
    }

    #[test]
    fn nested_calls_compose() {
        let (t, _) = run(
            "#include <openacc.h>\nvoid f(void) { acc_free(acc_malloc(acc_get_num_devices(acc_device_not_host))); }\n",
        );
        assert_eq!(
            t,
            "#include <omp.h>\nvoid f(void) { omp_target_free(omp_target_alloc(omp_get_num_devices(), omp_get_default_device()), omp_get_default_device()); }\n"
        );
    }

    #[test]
    fn macros_get_expressions_only() {
        let src = "#include <omp.h>\n#define ALLOC(n) acc_malloc(n)\n#define SYNC acc_wait_all()\n#define ON_HOST \\\n  acc_on_device(acc_device_host)\n";
        let (t, d) = run(src);
        assert_eq!(
            t,
            "#include <omp.h>\n#define ALLOC(n) omp_target_alloc(n, omp_get_default_device())\n#define SYNC acc_wait_all()\n#define ON_HOST \\\n  omp_is_initial_device()\n"
        );
        assert_eq!(d, ["runtime-in-macro"]);
    }

    #[test]
    fn include_and_guards() {
        let src = "#include <stdio.h>\n#ifdef _OPENACC\n#include <openacc.h>\n#endif\n#if defined(_OPENACC) && _OPENACC >= 201306\nint v;\n#elif defined _OPENMP\nint w;\n#endif\n#ifndef _OPENACC // serial\n#endif\n";
        let (t, d) = run(src);
        assert_eq!(
            t,
            "#include <stdio.h>\n#ifdef _OPENMP\n#include <omp.h>\n#endif\n#if defined(_OPENMP) && _OPENMP >= 201306\nint v;\n#elif defined _OPENMP\nint w;\n#endif\n#ifndef _OPENMP // serial\n#endif\n"
        );
        assert_eq!(d, ["openacc-guard", "openacc-guard"]);
        let o = migrate_text(
            src,
            &Options {
                keep_openacc_guards: true,
                ..Options::default()
            },
        );
        assert_eq!(o.text, src);
    }

    #[test]
    fn existing_omp_include_wins() {
        let (t, d) = run(
            "#include <omp.h>\n#include \"openacc.h\" // runtime\nvoid *p(void) { return acc_malloc(4); }\n",
        );
        assert_eq!(
            t,
            "#include <omp.h>\nvoid *p(void) { return omp_target_alloc(4, omp_get_default_device()); }\n"
        );
        assert!(d.is_empty(), "{d:?}");
        // A name that stays keeps openacc.h (omp.h already comes first).
        let src =
            "#include <omp.h>\n#include \"openacc.h\" // runtime\nint x = acc_device_nvidia;\n";
        let (t, d) = run(src);
        assert_eq!(t, src);
        assert_eq!(d, ["openacc-include-kept", "openacc-constant"]);
        // An omp.h include in another branch does not cover this one.
        let src = "#ifdef THREADS\n#include <omp.h>\n#endif\n#include <openacc.h>\n";
        assert_eq!(
            run(src).0,
            "#ifdef THREADS\n#include <omp.h>\n#endif\n#include <omp.h>\n"
        );
    }

    #[test]
    fn keep_guards_adds_omp_h_when_needed() {
        let src = "#ifdef _OPENACC\n#include <openacc.h>\n#endif\nvoid *p = 0;\nvoid f(void) { p = acc_malloc(4); }\n";
        let o = migrate_text(
            src,
            &Options {
                keep_openacc_guards: true,
                ..Options::default()
            },
        );
        assert_eq!(
            o.text,
            "#ifdef _OPENACC\n#include <openacc.h>\n#include <omp.h>\n#endif\nvoid *p = 0;\nvoid f(void) { p = omp_target_alloc(4, omp_get_default_device()); }\n"
        );
    }

    #[test]
    fn malformed_calls_stay_and_replacements_do_not_paste() {
        // Statements or a stray `#` in the arguments: not an expression, left alone.
        for src in [
            "void f(int q) { acc_wait(; q++; }\n",
            "void f(int q) { acc_wait(q #x); }\n",
            "void f(int q) { acc_wait(q}; }\n",
        ] {
            let (t, d) = run(src);
            assert_eq!(t, src);
            assert!(d.iter().all(|r| *r == "runtime-not-translated"), "{d:?}");
        }
        let mut e = Edit::replace(4..7, "0");
        separate_tokens("int f()x;", &mut e);
        assert_eq!(e.text, "0 ");
        let mut e = Edit::replace(4..7, "g()");
        separate_tokens("int f()+x;", &mut e);
        assert_eq!(e.text, "g()");
        // Code after a translated statement that starts with '#' stays on its line.
        let (t, _) = run("void f(int q) {\n  acc_wait(q);#x\n}\n");
        assert!(t.contains("}#x"), "{t}");
    }

    #[test]
    fn odd_inputs_do_not_panic() {
        for src in [
            "acc_malloc",
            "acc_malloc(",
            "acc_malloc(1",
            "acc_copyin(a,",
            "acc_copyin(a, n",
            "acc_copyin(,);",
            "acc_wait_all(;",
            "x = acc_free)(;",
            ") acc_wait(1);",
            ": acc_wait(1);",
            "case : acc_wait(1);",
            "acc_on_device();",
            "acc_copyin(a, n)",
            "#define acc_malloc(n) malloc(n)\n#define X acc_malloc(",
            "#define",
            "#include <openacc.h",
            "#include",
            "#if _OPENACC >\n#elif\n#endif\n#endif\n#else",
            "#pragma acc parallel if(acc_on_device(acc_device_host)\n",
            "acc_copyin(R\"(a\nb)\", n\n);",
            "acc_copyin(a, R\"(x\ny)\");",
            "{ acc_copyin(a, n) }",
            "\u{feff}acc_wait(1);",
            "acc_wait(1);\r\nacc_init(acc_device_host);\r\n",
        ] {
            for opts in [
                Options::default(),
                Options {
                    keep_openacc_guards: true,
                    omp_version: OmpVersion::V51,
                    ..Options::default()
                },
            ] {
                let out = migrate_text(src, &opts);
                let again = migrate_text(&out.text, &opts);
                assert_eq!(again.text, out.text, "not a fixed point: {src:?}");
            }
        }
    }

    #[test]
    fn runtime_calls_in_teams_or_loop_regions_stay() {
        let src = "void f(int n, int *a) {\n#pragma acc parallel num_gangs(1) copy(a[0:n])\n  { int h = acc_on_device(acc_device_host);\n#pragma acc loop gang\n  for (int i = 0; i < n; i++) a[i] = h; }\n#pragma acc parallel loop copy(a[0:n])\n  for (int i = 0; i < n; i++) a[i] = acc_on_device(acc_device_host);\n#pragma acc kernels loop copy(a[0:n])\n  for (int i = 0; i < n; i++) a[i] = acc_on_device(acc_device_host);\n}\n";
        for profile in Profile::ALL {
            let opts = Options {
                profile,
                ..Options::default()
            };
            let out = migrate_text(src, &opts);
            let kept = out.text.matches("acc_on_device").count();
            // `teams` directly (beside a gang loop, in a declaration that cannot become a
            // `parallel` region): always kept; the parallel loop is never a `loop` construct
            // (the loop profile falls back for it); the sequential kernels loop is a plain
            // `target`.
            assert_eq!(kept, 1, "{}:\n{}", profile.name(), out.text);
            assert_eq!(migrate_text(&out.text, &opts).text, out.text, "fixed point");
        }
    }

    #[test]
    fn deep_nesting_and_crlf() {
        let deep = "acc_free(".repeat(5000) + &")".repeat(5000) + ";";
        let _ = migrate_text(&deep, &Options::default());
        let (t, _) = run(
            "void f(int q) {\r\n  acc_init(acc_device_host);\r\n  if (q) acc_wait(q);\r\n}\r\n",
        );
        assert_eq!(
            t,
            concat!(
                "#ifndef ACC2OMP_QUEUES\r\n#define ACC2OMP_QUEUES\r\n/* acc2omp: one OpenMP dependence object per OpenACC async queue */\r\n__attribute__((weak)) char acc2omp_queue[64];\r\n#endif\r\n",
                "void f(int q) {\r\n  if (q) {\r\n  #pragma omp taskwait depend(in: acc2omp_queue[(q) & 63])\r\n  }\r\n}\r\n"
            )
        );
    }

    #[test]
    fn fill_is_single_pass() {
        assert_eq!(
            fill("f({0}, {1}) {x} {", &["\"{1}\"".into(), "b".into()]),
            "f(\"{1}\", b) {x} {"
        );
    }
}
