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
//! Every problem is reported with its position and nothing is partially applied. How a
//! layer's entries are merged, array by array, is in `merge`.

mod merge;
#[cfg(test)]
mod tests;

use crate::rules::Tables;
use crate::rules::{RuleId, id};
use crate::source::LineIndex;
use merge::Merge;
use serde::de::DeserializeOwned;
use std::fmt;
use std::ops::Range;
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
