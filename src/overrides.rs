//! User rules files: the schema of `rules/*.toml` (`[[directive]]`, `[[clause]]`, `[[rule]]`,
//! `[[routine]]` arrays), merged over the built-in tables.
//!
//! An entry whose key (`name`, or `id` for a rule) names an existing entry changes the fields
//! it gives and keeps the others; `replace = true` (rules and routines) starts from nothing
//! instead. An entry with a new key is added. What may change is limited to what the
//! translator reads as data:
//! - `[[rule]]`: every field; `severity` may also be `"off"`. A new rule must be complete and
//!   used by a `[[routine]]` (so that a misspelled id is an error, not a silent no-op).
//! - `[[routine]]`: every field; new routines (`acc_…`) may be added.
//! - `[[clause]]`: `aliases` (the accepted spellings besides `name`, replacing the list) and
//!   `map` (the map type of a data clause); clauses cannot be added.
//! - `[[directive]]`: nothing: the directive table is the OpenACC grammar the translator is
//!   written against; what a directive becomes is code, not data.
//!
//! Every problem is reported with its position and nothing is partially applied.

use crate::rules::{ClauseRule, DiagnosticRule, DirectiveRule, RuntimeRule, Tables};
use crate::rules::{RuleId, id};
use crate::source::LineIndex;
use serde::de::DeserializeOwned;
use std::fmt;
use std::ops::Range;
use toml::Spanned;
use toml::de::{DeTable, DeValue, ValueDeserializer};

/// A problem in a rules or configuration file; fatal for the command line (exit status 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    pub path: String,
    /// 1-based line and byte column, when the problem has a position in the file.
    pub pos: Option<(usize, usize)>,
    pub message: String,
    pub rule: RuleId,
}

impl FileError {
    pub fn at(path: &str, text: &str, offset: usize, rule: RuleId, message: String) -> Self {
        FileError {
            path: path.to_string(),
            pos: Some(LineIndex::new(text).line_col(offset.min(text.len()))),
            message,
            rule,
        }
    }

    pub fn whole(path: &str, rule: RuleId, message: String) -> Self {
        FileError {
            path: path.to_string(),
            pos: None,
            message,
            rule,
        }
    }
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pos {
            Some((l, c)) => write!(f, "{}:{l}:{c}: ", self.path)?,
            None => write!(f, "{}: ", self.path)?,
        }
        write!(f, "error: {} [{}]", self.message, self.rule)
    }
}

/// One file of overrides, applied in order over the built-in tables and earlier layers.
pub struct Layer<'a> {
    /// The path as messages show it.
    pub path: String,
    pub text: &'a str,
    /// The file is an `acc2omp.toml`: keys other than the four arrays belong to it.
    pub in_config: bool,
}

/// The four tables, as the arrays are named in a rules file.
pub const ARRAYS: [&str; 4] = ["directive", "clause", "rule", "routine"];

/// The built-in tables merged with `layers`, and for each layer a line saying what it changed.
pub fn apply(layers: &[Layer]) -> Result<(Tables, Vec<String>), Vec<FileError>> {
    let mut m = Merge {
        directives: builtin(crate::rules::DIRECTIVES_TOML, "directive", "name"),
        clauses: builtin(crate::rules::CLAUSES_TOML, "clause", "name"),
        rules: builtin(crate::rules::DIAGNOSTICS_TOML, "rule", "id"),
        routines: builtin(crate::rules::RUNTIME_TOML, "routine", "name"),
    };
    let mut errors = Vec::new();
    let mut notes = Vec::new();
    for layer in layers {
        let mut cx = Cx {
            layer,
            errors: Vec::new(),
            counts: [(0, 0); 4],
        };
        m.layer(&mut cx);
        if cx.errors.is_empty() {
            notes.push(cx.summary());
        }
        cx.errors.sort_by_key(|e| e.pos);
        errors.append(&mut cx.errors);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    fn take<T>(v: Vec<Entry<'_, T>>) -> Vec<T> {
        v.into_iter().map(|e| e.value).collect()
    }
    Ok((
        Tables::from_parts(
            take(m.directives),
            take(m.clauses),
            take(m.rules),
            take(m.routines),
        ),
        notes,
    ))
}

struct Entry<'a, T> {
    key: String,
    raw: DeTable<'a>,
    value: T,
    /// Added by a layer (not built in).
    added: bool,
}

fn builtin<T: DeserializeOwned>(
    text: &'static str,
    array: &str,
    key: &str,
) -> Vec<Entry<'static, T>> {
    let doc = DeTable::parse(text).expect("embedded rules parse");
    let Some(DeValue::Array(items)) = doc.get_ref().get(array).map(|v| v.get_ref()) else {
        panic!("embedded rules lack [[{array}]]");
    };
    items
        .iter()
        .map(|item| {
            let raw = item
                .get_ref()
                .as_table()
                .expect("entries are tables")
                .clone();
            let value = T::deserialize(ValueDeserializer::from(item.clone()))
                .unwrap_or_else(|e| panic!("embedded [[{array}]]: {e}"));
            let key = raw
                .get(key)
                .and_then(|v| v.get_ref().as_str())
                .expect("entries have keys")
                .to_string();
            Entry {
                key,
                raw,
                value,
                added: false,
            }
        })
        .collect()
}

struct Cx<'l, 'a> {
    layer: &'l Layer<'a>,
    errors: Vec<FileError>,
    /// (overridden, added) per array of [`ARRAYS`].
    counts: [(usize, usize); 4],
}

impl Cx<'_, '_> {
    fn err(&mut self, span: Range<usize>, message: impl Into<String>) {
        self.errors.push(FileError::at(
            &self.layer.path,
            self.layer.text,
            span.start,
            id::RULES_FILE,
            message.into(),
        ));
    }

    fn summary(&self) -> String {
        let parts: Vec<String> = ARRAYS
            .iter()
            .zip(self.counts)
            .filter(|(_, (o, a))| o + a > 0)
            .map(|(name, (o, a))| match (o, a) {
                (o, 0) => format!("{o} {name}(s) changed"),
                (0, a) => format!("{a} {name}(s) added"),
                (o, a) => format!("{o} {name}(s) changed, {a} added"),
            })
            .collect();
        let what = if parts.is_empty() {
            "no rule tables".to_string()
        } else {
            parts.join(", ")
        };
        format!("rules: {} ({what})", self.layer.path)
    }
}

/// One entry of a layer, before merging.
struct Given<'a> {
    span: Range<usize>,
    table: DeTable<'a>,
    key: String,
    key_span: Range<usize>,
}

impl Given<'_> {
    fn span_of(&self, field: &str) -> Range<usize> {
        self.table
            .get(field)
            .map_or(self.span.clone(), |v| v.span())
    }

    fn has(&self, field: &str) -> bool {
        self.table.contains_key(field)
    }

    /// The fields given, other than the key, in source order.
    fn fields(&self) -> Vec<(&str, Range<usize>)> {
        let mut f: Vec<(&str, Range<usize>)> = self
            .table
            .iter()
            .map(|(k, _)| (k.get_ref().as_ref(), k.span()))
            .collect();
        f.sort_by_key(|(_, s)| s.start);
        f
    }
}

struct Merge<'a> {
    directives: Vec<Entry<'a, DirectiveRule>>,
    clauses: Vec<Entry<'a, ClauseRule>>,
    rules: Vec<Entry<'a, DiagnosticRule>>,
    routines: Vec<Entry<'a, RuntimeRule>>,
}

impl<'a> Merge<'a> {
    fn layer(&mut self, cx: &mut Cx<'_, 'a>) {
        let doc = match DeTable::parse(cx.layer.text) {
            Ok(d) => d.into_inner(),
            Err(e) => {
                let at = e.span().unwrap_or(0..0);
                cx.err(at, e.message().trim().to_string());
                return;
            }
        };
        let mut arrays: [Vec<Given<'a>>; 4] = Default::default();
        let mut keys: Vec<_> = doc.iter().collect();
        keys.sort_by_key(|(k, _)| k.span().start);
        for (k, v) in keys {
            let name: &str = k.get_ref();
            let Some(slot) = ARRAYS.iter().position(|a| *a == name) else {
                if !cx.layer.in_config {
                    cx.err(
                        k.span(),
                        format!("unknown key `{name}`: a rules file has [[directive]], [[clause]], [[rule]] and [[routine]] entries"),
                    );
                }
                continue;
            };
            let DeValue::Array(items) = v.get_ref() else {
                cx.err(
                    v.span(),
                    format!("`{name}` must be an array of tables: write [[{name}]]"),
                );
                continue;
            };
            let key_field = if name == "rule" { "id" } else { "name" };
            for item in items {
                let DeValue::Table(t) = item.get_ref() else {
                    cx.err(item.span(), format!("each `{name}` entry must be a table"));
                    continue;
                };
                let key = t.get(key_field).and_then(|v| {
                    let s = v.get_ref().as_str()?;
                    Some((s.to_string(), v.span()))
                });
                let Some((key, key_span)) = key else {
                    let at = t.get(key_field).map_or(item.span(), |v| v.span());
                    cx.err(
                        at,
                        format!("each [[{name}]] entry needs `{key_field}` (a string)"),
                    );
                    continue;
                };
                arrays[slot].push(Given {
                    span: item.span(),
                    table: t.clone(),
                    key,
                    key_span,
                });
            }
        }
        let [directives, clauses, rules, routines] = arrays;
        for g in directives {
            cx.err(
                g.span.clone(),
                format!("[[directive]] '{}' cannot be changed: the directive table is the OpenACC grammar acc2omp is written against (what a directive becomes is not table-driven)", g.key),
            );
        }
        for g in clauses {
            self.clause(cx, g);
        }
        let mut new_rules = Vec::new();
        for g in rules {
            if let Some(n) = self.rule(cx, g) {
                new_rules.push(n);
            }
        }
        let mut touched = Vec::new();
        for g in routines {
            if let Some(t) = self.routine(cx, g) {
                touched.push(t);
            }
        }
        // References between tables, once the layer is merged.
        for (name, span) in touched {
            let r = &self
                .routines
                .iter()
                .find(|e| e.key == name)
                .expect("merged")
                .value;
            if !self.rules.iter().any(|e| e.key == r.rule) {
                let hint = suggest(&r.rule, self.rules.iter().map(|e| e.key.as_str()));
                cx.err(
                    span,
                    format!(
                        "routine '{name}' names rule '{}', which does not exist{hint}",
                        r.rule
                    ),
                );
            }
        }
        for (id, span) in new_rules {
            if !self.routines.iter().any(|e| e.value.rule == id) {
                let hint = suggest(
                    &id,
                    self.rules
                        .iter()
                        .filter(|e| !e.added)
                        .map(|e| e.key.as_str()),
                );
                cx.err(
                    span,
                    format!("unknown rule '{id}'{hint}; a new rule is only useful as the `rule` of a [[routine]], and none names it"),
                );
            }
        }
    }

    fn clause(&mut self, cx: &mut Cx<'_, 'a>, g: Given<'a>) {
        let Some(i) = self.clauses.iter().position(|e| e.key == g.key) else {
            let hint = suggest(&g.key, self.clauses.iter().map(|e| e.key.as_str()));
            cx.err(
                g.key_span.clone(),
                format!("unknown clause '{}'{hint}; clauses cannot be added (give an existing clause another spelling with `aliases`)", g.key),
            );
            return;
        };
        let Some(value) = merged::<ClauseRule>(cx, &g, Some(&self.clauses[i].raw)) else {
            return;
        };
        let mut ok = true;
        for (field, span) in g.fields() {
            if !matches!(field, "name" | "aliases" | "map") {
                cx.err(
                    span,
                    format!(
                        "`{field}` of a clause cannot be changed (only `aliases` and `map` can)"
                    ),
                );
                ok = false;
            }
        }
        if g.has("map") {
            let base = &self.clauses[i].value;
            let allowed = map_types(&base.on);
            match (&base.map, &value.map) {
                (None, _) => {
                    cx.err(
                        g.span_of("map"),
                        format!(
                            "'{}' is not a data clause: it has no map type to change",
                            g.key
                        ),
                    );
                    ok = false;
                }
                (Some(_), Some(m)) if !allowed.contains(&m.as_str()) => {
                    cx.err(
                        g.span_of("map"),
                        format!(
                            "'{}' cannot map as '{m}': on {} the map type must be one of: {}",
                            g.key,
                            base.on.join(", "),
                            allowed.join(", ")
                        ),
                    );
                    ok = false;
                }
                _ => {}
            }
        }
        for a in &value.aliases {
            let taken = self
                .clauses
                .iter()
                .enumerate()
                .find(|(k, e)| *k != i && (e.value.name == *a || e.value.aliases.contains(a)));
            if !crate::lex::is_identifier(a) {
                cx.err(
                    g.span_of("aliases"),
                    format!("alias '{a}' is not an identifier"),
                );
                ok = false;
            } else if let Some((_, e)) = taken {
                cx.err(
                    g.span_of("aliases"),
                    format!("alias '{a}' already spells clause '{}'", e.key),
                );
                ok = false;
            }
        }
        if ok {
            let e = &mut self.clauses[i];
            overlay(&mut e.raw, &g.table);
            e.value = value;
            cx.counts[1].0 += 1;
        }
    }

    /// Returns the id and span of a rule this layer adds.
    fn rule(&mut self, cx: &mut Cx<'_, 'a>, g: Given<'a>) -> Option<(String, Range<usize>)> {
        let replace = replace_flag(cx, &g)?;
        let existing = self.rules.iter().position(|e| e.key == g.key);
        if existing.is_none() && !(g.has("summary") && g.has("doc") && g.has("severity")) {
            let hint = suggest(&g.key, self.rules.iter().map(|e| e.key.as_str()));
            cx.err(
                g.key_span.clone(),
                format!("unknown rule '{}'{hint} (`acc2omp rules` lists them; a new rule needs `severity`, `summary` and `doc`)", g.key),
            );
            return None;
        }
        let base = existing.filter(|_| !replace).map(|i| &self.rules[i].raw);
        let value = merged::<DiagnosticRule>(cx, &g, base)?;
        if let Some(p) = &value.profile
            && !crate::profile::Profile::ALL.iter().any(|x| x.name() == p)
        {
            let names: Vec<&str> = crate::profile::Profile::ALL
                .iter()
                .map(|x| x.name())
                .collect();
            cx.err(
                g.span_of("profile"),
                format!("unknown profile '{p}' (one of: {})", names.join(", ")),
            );
            return None;
        }
        if value.before.is_some() != value.after.is_some() {
            let at = if g.has("before") {
                g.span_of("before")
            } else {
                g.span_of("after")
            };
            cx.err(at, "`before` and `after` go together");
            return None;
        }
        let raw = with_overlay(base, &g.table);
        match existing {
            Some(i) => {
                let e = &mut self.rules[i];
                (e.raw, e.value) = (raw, value);
                cx.counts[2].0 += 1;
                None
            }
            None => {
                self.rules.push(Entry {
                    key: g.key.clone(),
                    raw,
                    value,
                    added: true,
                });
                cx.counts[2].1 += 1;
                Some((g.key, g.key_span))
            }
        }
    }

    /// Returns the name of the routine and where its `rule` is (to check it exists).
    fn routine(&mut self, cx: &mut Cx<'_, 'a>, g: Given<'a>) -> Option<(String, Range<usize>)> {
        let replace = replace_flag(cx, &g)?;
        let existing = self.routines.iter().position(|e| e.key == g.key);
        if existing.is_none() && !(g.key.starts_with("acc_") && crate::lex::is_identifier(&g.key)) {
            cx.err(
                g.key_span.clone(),
                format!("'{}' is not an OpenACC routine name (acc_…)", g.key),
            );
            return None;
        }
        let base = existing.filter(|_| !replace).map(|i| &self.routines[i].raw);
        let r = merged::<RuntimeRule>(cx, &g, base)?;
        let mut ok = true;
        let mut bad = |cx: &mut Cx, field: &str, message: String| {
            cx.err(g.span_of(field), message);
            ok = false;
        };
        let exprs = r.omp.is_some() || r.omp51.is_some() || r.host.is_some() || r.dynamic.is_some();
        if r.remove && (exprs || r.pragma.is_some()) {
            let field = ["remove", "pragma", "omp", "omp51", "host", "dynamic"]
                .into_iter()
                .find(|f| g.has(f))
                .unwrap_or("name");
            bad(
                cx,
                field,
                format!(
                    "routine '{}' has more than one replacement: `remove` excludes `omp`/`omp51`/`host`/`dynamic` (expressions) and `pragma` (use `replace = true` to drop the built-in one)",
                    g.key
                ),
            );
        }
        if let Some(k) = r.devtype
            && k >= r.args
        {
            bad(
                cx,
                "devtype",
                format!(
                    "`devtype` is argument {k}, but '{}' takes {} argument(s)",
                    g.key, r.args
                ),
            );
        }
        let pragmas = r.pragma.iter().flat_map(|p| p.lines());
        let fields = [
            ("omp", &r.omp),
            ("omp51", &r.omp51),
            ("host", &r.host),
            ("dynamic", &r.dynamic),
        ];
        let all = fields
            .iter()
            .filter_map(|(f, t)| Some((*f, t.as_deref()?)))
            .chain(pragmas.clone().map(|p| ("pragma", p.as_str())));
        for (field, t) in all {
            if let Some(k) = arg_refs(t).find(|&k| k >= r.args) {
                bad(
                    cx,
                    field,
                    format!(
                        "`{field}` uses argument {k}, but '{}' takes {} argument(s) ({{0}} is the first)",
                        g.key, r.args
                    ),
                );
            }
        }
        for p in pragmas {
            if placeholders(p).next().is_some() {
                bad(cx, "pragma", "`pragma` cannot use {0}, {1}, …: only {bytes} (the bytes [arg 0, arg 0 + arg 1)), {ptrK} and the queue placeholders".into());
            } else if p.contains("{bytes}") && r.args < 2 {
                bad(
                    cx,
                    "pragma",
                    format!(
                        "{{bytes}} needs a pointer and a byte count, but '{}' takes {} argument(s)",
                        g.key, r.args
                    ),
                );
            }
            if p.contains(['\n', '\r']) {
                bad(cx, "pragma", "`pragma` must be one line".into());
            }
        }
        if !ok {
            return None;
        }
        let rule_span = g.span_of("rule");
        let raw = with_overlay(base, &g.table);
        match existing {
            Some(i) => {
                let e = &mut self.routines[i];
                (e.raw, e.value) = (raw, r);
                cx.counts[3].0 += 1;
            }
            None => {
                self.routines.push(Entry {
                    key: g.key.clone(),
                    raw,
                    value: r,
                    added: true,
                });
                cx.counts[3].1 += 1;
            }
        }
        Some((g.key, rule_span))
    }
}

/// `replace = true|false` (removed from the entry); None after reporting a bad value.
fn replace_flag(cx: &mut Cx, g: &Given) -> Option<bool> {
    match g.table.get("replace") {
        None => Some(false),
        Some(v) => match v.get_ref().as_bool() {
            Some(b) => Some(b),
            None => {
                cx.err(v.span(), "`replace` must be true or false");
                None
            }
        },
    }
}

/// The entry `g` over `base` (field by field), checked against the schema of `T`.
fn merged<T: DeserializeOwned>(cx: &mut Cx, g: &Given, base: Option<&DeTable>) -> Option<T> {
    let mut table = g.table.clone();
    table.remove("replace");
    let table = with_overlay(base, &table);
    match T::deserialize(ValueDeserializer::from(Spanned::new(
        g.span.clone(),
        DeValue::Table(table),
    ))) {
        Ok(v) => Some(v),
        Err(e) => {
            cx.err(
                e.span().unwrap_or(g.span.clone()),
                e.message().trim().to_string(),
            );
            None
        }
    }
}

fn with_overlay<'a>(base: Option<&DeTable<'a>>, top: &DeTable<'a>) -> DeTable<'a> {
    let mut t = base.cloned().unwrap_or_default();
    overlay(&mut t, top);
    t
}

fn overlay<'a>(t: &mut DeTable<'a>, top: &DeTable<'a>) {
    for (k, v) in top.iter() {
        if k.get_ref() != "replace" {
            t.insert(k.clone(), v.clone());
        }
    }
}

/// The map types a data clause allowed on `on` may take: OpenMP's `target enter data` takes
/// `to`/`alloc` (a `tofrom` becomes `to` there), `target exit data` only `from` here.
fn map_types(on: &[String]) -> Vec<&'static str> {
    ["to", "from", "tofrom", "alloc"]
        .into_iter()
        .filter(|m| {
            on.iter().all(|d| match d.as_str() {
                "enter data" => *m != "from",
                "exit data" => *m == "from",
                _ => true,
            })
        })
        .collect()
}

/// The argument numbers that `template` uses: `{0}`, and named ones such as `{q1}`, `{ptr0}`.
fn arg_refs(template: &str) -> impl Iterator<Item = usize> + '_ {
    template.split('{').skip(1).filter_map(|rest| {
        let letters = rest.bytes().take_while(u8::is_ascii_alphabetic).count();
        let digits = rest[letters..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        (digits > 0 && rest[letters + digits..].starts_with('}'))
            .then(|| rest[letters..letters + digits].parse().ok())
            .flatten()
    })
}

/// The argument numbers `{0}`, `{1}`, … that `template` uses.
fn placeholders(template: &str) -> impl Iterator<Item = usize> + '_ {
    template.split('{').skip(1).filter_map(|rest| {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        (digits > 0 && rest[digits..].starts_with('}'))
            .then(|| rest[..digits].parse().ok())
            .flatten()
    })
}

/// ` (did you mean 'x'?)` for the closest of `known` within a small edit distance.
pub fn suggest<'k>(word: &str, known: impl Iterator<Item = &'k str>) -> String {
    let best = known
        .map(|k| (edit_distance(word, k), k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4) && *d > 0)
        .min();
    best.map_or(String::new(), |(_, k)| format!(" (did you mean '{k}'?)"))
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Severity;

    fn layer(text: &str) -> Layer<'_> {
        Layer {
            path: "r.toml".into(),
            text,
            in_config: false,
        }
    }

    fn ok(text: &str) -> Tables {
        match apply(&[layer(text)]) {
            Ok((t, _)) => t,
            Err(e) => panic!(
                "{}",
                e.iter()
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
        }
    }

    /// The rendered errors of `text`.
    fn errors(text: &str) -> Vec<String> {
        match apply(&[layer(text)]) {
            Ok(_) => panic!("accepted:\n{text}"),
            Err(e) => e.iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn no_layers_give_the_builtin_tables() {
        let (t, notes) = apply(&[]).unwrap();
        let b = Tables::builtin();
        assert!(notes.is_empty());
        assert_eq!(t.diagnostics.len(), b.diagnostics.len());
        assert_eq!(t.runtime.len(), b.runtime.len());
        assert_eq!(
            t.runtime("acc_malloc").unwrap().omp,
            b.runtime("acc_malloc").unwrap().omp
        );
    }

    #[test]
    fn a_rule_entry_merges_field_by_field() {
        let b = Tables::builtin();
        let t = ok("[[rule]]\nid = \"implicit-pointer\"\nseverity = \"error\"\n");
        let r = t.diagnostic(id::IMPLICIT_POINTER.as_str()).unwrap();
        let orig = b.diagnostic(id::IMPLICIT_POINTER.as_str()).unwrap();
        assert_eq!(r.severity, Severity::Error);
        assert_eq!(orig.severity, Severity::Warning);
        assert_eq!(r.doc, orig.doc, "unset fields keep their built-in value");
        let t = ok("[[rule]]\nid = \"present-unchecked\"\nseverity = \"off\"\n");
        assert_eq!(
            t.diagnostic(id::PRESENT_UNCHECKED.as_str())
                .unwrap()
                .severity,
            Severity::Off
        );
        // Order is kept, nothing is added.
        assert_eq!(t.diagnostics.len(), b.diagnostics.len());
        assert_eq!(t.diagnostics[0].id, b.diagnostics[0].id);
    }

    #[test]
    fn a_routine_entry_changes_its_mapping_and_replace_starts_afresh() {
        let t = ok("[[routine]]\nname = \"acc_malloc\"\nomp = \"my_alloc({0})\"\n");
        let r = t.runtime("acc_malloc").unwrap();
        assert_eq!(r.omp.as_deref(), Some("my_alloc({0})"));
        assert_eq!(r.rule_id, id::RUNTIME_MEMORY, "kept");
        let t = ok(
            "[[routine]]\nname = \"acc_get_num_devices\"\nreplace = true\nargs = 1\nrule = \"runtime-not-translated\"\ndoc = \"d\"\nadvice = \"count them yourself\"\n",
        );
        let r = t.runtime("acc_get_num_devices").unwrap();
        assert!(r.omp.is_none() && r.host.is_none() && r.devtype.is_none());
        assert_eq!(r.advice.as_deref(), Some("count them yourself"));
    }

    #[test]
    fn new_routines_and_their_rules_are_added() {
        let t = ok(concat!(
            "[[rule]]\nid = \"vendor-alloc\"\nseverity = \"note\"\nsummary = \"s\"\ndoc = \"d\"\n\n",
            "[[routine]]\nname = \"acc_vendor_alloc\"\nargs = 2\nomp = \"omp_alloc({0}, {1})\"\nrule = \"vendor-alloc\"\ndoc = \"vendor\"\n",
        ));
        assert_eq!(t.runtime("acc_vendor_alloc").unwrap().rule, "vendor-alloc");
        assert_eq!(
            t.diagnostic("vendor-alloc").unwrap().severity,
            Severity::Note
        );
        assert_eq!(t.diagnostics.len(), Tables::builtin().diagnostics.len() + 1);
    }

    #[test]
    fn clause_aliases_and_map_types() {
        let t = ok(
            "[[clause]]\nname = \"copy\"\naliases = [\"pcopy\"]\n\n[[clause]]\nname = \"present\"\nmap = \"to\"\n",
        );
        assert!(
            t.clause("present_or_copy").is_none(),
            "the list is replaced"
        );
        assert_eq!(t.clause("pcopy").unwrap().name, "copy");
        assert_eq!(t.clause("present").unwrap().map.as_deref(), Some("to"));
        let t = ok(
            "[[clause]]\nname = \"copyin\"\naliases = [\"pcopyin\", \"present_or_copyin\", \"copy_in\"]\n",
        );
        assert_eq!(t.clause("copy_in").unwrap().name, "copyin");
    }

    #[test]
    fn layers_apply_in_order_and_later_ones_win() {
        let a = layer("[[rule]]\nid = \"simd-atomic\"\nseverity = \"error\"\n");
        let b = Layer {
            path: "b.toml".into(),
            text: "[[rule]]\nid = \"simd-atomic\"\nsummary = \"changed\"\n",
            in_config: true,
        };
        let (t, notes) = apply(&[a, b]).unwrap();
        let r = t.diagnostic(id::SIMD_ATOMIC.as_str()).unwrap();
        assert_eq!(
            (r.severity, r.summary.as_str()),
            (Severity::Error, "changed")
        );
        assert_eq!(
            notes,
            [
                "rules: r.toml (1 rule(s) changed)",
                "rules: b.toml (1 rule(s) changed)"
            ]
        );
    }

    #[test]
    fn errors_are_positioned() {
        assert_eq!(
            errors("[[rule]]\nid = \"simd-atomic\"\nseverty = \"error\"\n"),
            [
                "r.toml:3:1: error: unknown field `severty`, expected one of `id`, `severity`, `summary`, `doc`, `before`, `after`, `profile` [rules-file]"
            ]
        );
        let e = errors("[[rule]]\nid = \"simd-atomic\"\nseverity = \"fatal\"\n");
        assert!(
            e[0].starts_with("r.toml:3:12: error: unknown variant `fatal`"),
            "{e:?}"
        );
        let e = errors("[[routine]]\nname = \"acc_malloc\"\nargs = \"one\"\n");
        assert!(
            e[0].starts_with("r.toml:3:8: error: invalid type: string \"one\", expected usize"),
            "{e:?}"
        );
        let e = errors("[[rule]]\nid = \"implicit-pointr\"\nseverity = \"off\"\n");
        assert_eq!(
            e,
            [
                "r.toml:2:6: error: unknown rule 'implicit-pointr' (did you mean 'implicit-pointer'?) (`acc2omp rules` lists them; a new rule needs `severity`, `summary` and `doc`) [rules-file]"
            ]
        );
        let e = errors("[rules]\nx = 1\n");
        assert!(
            e[0].starts_with("r.toml:1:2: error: unknown key `rules`"),
            "{e:?}"
        );
        let e = errors("[rule]\nid = \"x\"\n");
        assert!(
            e[0].starts_with("r.toml:1:1: error: `rule` must be an array of tables"),
            "{e:?}"
        );
        let e = errors("[[rule]\nid = 1");
        assert!(e[0].starts_with("r.toml:1:"), "{e:?}");
        let e = errors("[[rule]]\nseverity = \"off\"\n");
        assert!(
            e[0].starts_with("r.toml:1:1: error: each [[rule]] entry needs `id`"),
            "{e:?}"
        );
    }

    #[test]
    fn references_and_restrictions_are_checked() {
        let e = errors("[[routine]]\nname = \"acc_malloc\"\nrule = \"runtime-memroy\"\n");
        assert_eq!(
            e,
            [
                "r.toml:3:8: error: routine 'acc_malloc' names rule 'runtime-memroy', which does not exist (did you mean 'runtime-memory'?) [rules-file]"
            ]
        );
        let e = errors("[[routine]]\nname = \"acc_malloc\"\nomp = \"f({2})\"\n");
        assert!(
            e[0].starts_with("r.toml:3:7: error: `omp` uses argument 2"),
            "{e:?}"
        );
        let e = errors("[[routine]]\nname = \"acc_malloc\"\nremove = true\n");
        assert!(e[0].contains("more than one replacement"), "{e:?}");
        let e = errors(
            "[[routine]]\nname = \"acc_attach\"\npragma = \"target enter data map(alloc: {ptr1}[:0])\"\n",
        );
        assert!(e[0].contains("`pragma` uses argument 1"), "{e:?}");
        let e = errors("[[routine]]\nname = \"acc_get_num_devices\"\ndevtype = 3\n");
        assert!(
            e[0].starts_with("r.toml:3:11: error: `devtype` is argument 3"),
            "{e:?}"
        );
        let e = errors(
            "[[routine]]\nname = \"acc_copyin\"\nreplace = true\nargs = 1\npragma = \"target enter data map(to: {bytes})\"\nrule = \"runtime-data\"\ndoc = \"d\"\n",
        );
        assert!(
            e[0].contains("{bytes} needs a pointer and a byte count"),
            "{e:?}"
        );
        let e = errors(
            "[[routine]]\nname = \"omp_foo\"\nargs = 0\nrule = \"runtime-data\"\ndoc = \"d\"\n",
        );
        assert!(e[0].contains("not an OpenACC routine name"), "{e:?}");
        let e = errors("[[routine]]\nname = \"acc_new\"\nargs = 0\nomp = \"f()\"\ndoc = \"d\"\n");
        assert!(
            e[0].starts_with("r.toml:1:1: error: missing field `rule`"),
            "{e:?}"
        );
        let e = errors("[[clause]]\nname = \"copy\"\non = [\"loop\"]\n");
        assert!(
            e[0].starts_with("r.toml:3:1: error: `on` of a clause cannot be changed"),
            "{e:?}"
        );
        let e = errors("[[clause]]\nname = \"copyout\"\nmap = \"to\"\n");
        assert!(e[0].contains("on parallel, serial, kernels, data, exit data, declare the map type must be one of: from"), "{e:?}");
        let e = errors("[[clause]]\nname = \"gang\"\nmap = \"to\"\n");
        assert!(e[0].contains("not a data clause"), "{e:?}");
        let e = errors("[[clause]]\nname = \"copy\"\naliases = [\"copyin\"]\n");
        assert!(
            e[0].contains("alias 'copyin' already spells clause 'copyin'"),
            "{e:?}"
        );
        let e = errors("[[clause]]\nname = \"copi\"\nmap = \"to\"\n");
        assert!(
            e[0].contains("unknown clause 'copi' (did you mean 'copy'?)"),
            "{e:?}"
        );
        let e = errors("[[directive]]\nname = \"parallel\"\nstmt = false\n");
        assert!(
            e[0].starts_with("r.toml:1:1: error: [[directive]] 'parallel' cannot be changed"),
            "{e:?}"
        );
        let e = errors("[[rule]]\nid = \"simd-atomic\"\nprofile = \"fast\"\n");
        assert!(e[0].contains("unknown profile 'fast'"), "{e:?}");
        let e = errors(
            "[[rule]]\nid = \"new-one\"\nseverity = \"note\"\nsummary = \"s\"\ndoc = \"d\"\n",
        );
        assert!(e[0].contains("none names it"), "{e:?}");
    }

    #[test]
    fn several_errors_are_all_reported_in_order() {
        let e = errors(
            "[[rule]]\nid = \"a-b\"\nseverity = \"off\"\n\n[[rule]]\nid = \"simd-atomic\"\nseverity = 3\n",
        );
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(
            e[0].starts_with("r.toml:2:") && e[1].starts_with("r.toml:7:"),
            "{e:?}"
        );
    }

    #[test]
    fn placeholders_and_suggestions() {
        assert_eq!(
            placeholders("f({0}, {12}) {x} {").collect::<Vec<_>>(),
            [0, 12]
        );
        assert_eq!(
            suggest("copi", ["copy", "create"].into_iter()),
            " (did you mean 'copy'?)"
        );
        assert_eq!(suggest("zzzzzz", ["copy"].into_iter()), "");
    }
}
