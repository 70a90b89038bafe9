//! One layer merged into the tables: its entries read array by array, each checked against
//! what that array lets a rules file change, and the references between tables checked
//! once the layer is in.

use super::{ARRAYS, Cx, Entry, Given, suggest};
use crate::rules::{ClauseRule, DiagnosticRule, DirectiveRule, RuntimeRule};
use serde::de::DeserializeOwned;
use std::ops::Range;
use toml::Spanned;
use toml::de::{DeTable, DeValue, ValueDeserializer};

pub(super) struct Merge<'a> {
    pub(super) directives: Vec<Entry<'a, DirectiveRule>>,
    pub(super) clauses: Vec<Entry<'a, ClauseRule>>,
    pub(super) rules: Vec<Entry<'a, DiagnosticRule>>,
    pub(super) routines: Vec<Entry<'a, RuntimeRule>>,
}

impl<'a> Merge<'a> {
    pub(super) fn layer(&mut self, cx: &mut Cx<'_, 'a>) {
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
pub(super) fn placeholders(template: &str) -> impl Iterator<Item = usize> + '_ {
    template.split('{').skip(1).filter_map(|rest| {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        (digits > 0 && rest[digits..].starts_with('}'))
            .then(|| rest[..digits].parse().ok())
            .flatten()
    })
}
