//! The mapping tables in `rules/*.toml`, embedded in the binary. They are a value: each
//! file is translated with the tables of its configuration (the built-in ones merged with
//! its rules files, see `crate::overrides` and `crate::config`), carried by
//! `crate::options::Options` and `crate::unit::Unit`.

use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArgPresence {
    None,
    Optional,
    Required,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DirectiveKind {
    Compute,
    Combined,
    Loop,
    Data,
    Executable,
    Declarative,
    Atomic,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectiveRule {
    pub name: String,
    pub kind: DirectiveKind,
    #[serde(default)]
    pub stmt: bool,
    #[serde(default = "no_args")]
    pub arg: ArgPresence,
    /// At least one of these clauses must appear (`update` without a data clause is invalid).
    #[serde(default)]
    pub requires: Vec<String>,
}

fn no_args() -> ArgPresence {
    ArgPresence::None
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClauseRule {
    pub name: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    pub args: ArgPresence,
    #[serde(default)]
    pub modifiers: Vec<String>,
    #[serde(default)]
    pub map: Option<String>,
    pub on: Vec<String>,
    /// May appear at most once per directive (per `device_type` section).
    #[serde(default)]
    pub once: bool,
    /// Most items the argument list may have (`num_workers(a, b)` is malformed).
    #[serde(default)]
    pub max_items: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, PartialOrd, Ord, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Not reported (a user's rules file can turn a rule off).
    Off,
    Note,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Off => "off",
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiagnosticRule {
    pub id: String,
    pub severity: Severity,
    pub summary: String,
    pub doc: String,
    #[serde(default)]
    pub before: Option<String>,
    #[serde(default)]
    pub after: Option<String>,
    #[serde(default)]
    pub profile: Option<String>,
}

/// One OpenACC runtime routine of `rules/runtime.toml` (its header documents the fields).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeRule {
    pub name: String,
    pub args: usize,
    #[serde(default)]
    pub omp: Option<String>,
    #[serde(default)]
    pub omp51: Option<String>,
    #[serde(default)]
    pub devtype: Option<usize>,
    #[serde(default)]
    pub host: Option<String>,
    #[serde(default)]
    pub dynamic: Option<String>,
    #[serde(default)]
    pub pragma: Option<Pragmas>,
    #[serde(default)]
    pub remove: bool,
    pub rule: String,
    /// `rule` as diagnostics carry it (set by [`Tables::from_parts`]).
    #[serde(skip, default = "RuleId::unset")]
    pub rule_id: RuleId,
    #[serde(default = "reported")]
    pub report: bool,
    pub doc: String,
    #[serde(default)]
    pub advice: Option<String>,
    /// The programs (under `fixtures/`) that prove the mapping.
    #[serde(default)]
    pub proof: Vec<String>,
    /// The Fortran binding (`crate::fortran::runtime`): see the header of
    /// `rules/runtime.toml`.
    #[serde(default)]
    pub fortran_args: Option<usize>,
    #[serde(default)]
    pub fortran: Option<String>,
    #[serde(default)]
    pub fortran_host: Option<String>,
    #[serde(default)]
    pub fortran_directive: Option<Pragmas>,
    #[serde(default)]
    pub fortran_doc: Option<String>,
    #[serde(default)]
    pub fortran_advice: Option<String>,
    #[serde(default)]
    pub fortran_proof: Vec<String>,
}

/// The directive(s) a routine becomes: one, or several in order.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Pragmas {
    One(String),
    Many(Vec<String>),
}

impl Pragmas {
    pub fn lines(&self) -> &[String] {
        match self {
            Pragmas::One(p) => std::slice::from_ref(p),
            Pragmas::Many(v) => v,
        }
    }
}

impl RuntimeRule {
    /// Every template of the routine (expressions and directives).
    pub fn templates(&self) -> impl Iterator<Item = &str> {
        [&self.omp, &self.omp51, &self.host, &self.dynamic]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .chain(
                self.pragma
                    .iter()
                    .flat_map(|p| p.lines())
                    .map(String::as_str),
            )
    }
}

fn reported() -> bool {
    true
}

#[derive(Debug, Deserialize)]
struct RuntimeFile {
    routine: Vec<RuntimeRule>,
}

#[derive(Debug, Deserialize)]
struct DirectiveFile {
    directive: Vec<DirectiveRule>,
}

#[derive(Debug, Deserialize)]
struct ClauseFile {
    clause: Vec<ClauseRule>,
}

#[derive(Debug, Deserialize)]
struct DiagnosticFile {
    rule: Vec<DiagnosticRule>,
}

#[derive(Debug, Clone)]
pub struct Tables {
    pub directives: Vec<DirectiveRule>,
    pub clauses: Vec<ClauseRule>,
    pub diagnostics: Vec<DiagnosticRule>,
    pub runtime: Vec<RuntimeRule>,
    clause_by_name: NameIndex,
    /// Indexes by name of `directives`, `diagnostics` and `runtime` (asked about per site and
    /// per diagnostic; the first entry of a name wins, as a linear search would find it).
    directive_by_name: NameIndex,
    diagnostic_by_id: NameIndex,
    runtime_by_name: NameIndex,
}

/// Name → index of the first entry with that name.
fn index_by<T>(items: &[T], name: impl Fn(&T) -> &str) -> NameIndex {
    let mut out = NameIndex::with_capacity(items.len());
    for (i, x) in items.iter().enumerate() {
        out.insert(name(x), i, false);
    }
    out
}

/// An index of the tables' names (a few hundred, fixed once the tables are made), asked
/// about several times per directive: open addressing on a hash of the name's length and
/// three of its bytes, so a lookup reads a few bytes and compares one or two names instead
/// of hashing the whole name.
#[derive(Debug, Clone)]
struct NameIndex {
    /// Positions in `names` plus one; 0 is an empty slot. A power of two, at most half full.
    slots: Vec<u32>,
    names: Vec<(Box<str>, usize)>,
}

/// An empty index with its slots (`slot` masks by their number: never zero).
impl Default for NameIndex {
    fn default() -> Self {
        NameIndex::with_capacity(0)
    }
}

impl NameIndex {
    fn with_capacity(n: usize) -> NameIndex {
        NameIndex {
            slots: vec![0; (2 * n).next_power_of_two().max(8)],
            names: Vec::with_capacity(n),
        }
    }

    fn hash(name: &str) -> usize {
        let b = name.as_bytes();
        let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
            return 0;
        };
        let mid = b[b.len() / 2] as usize;
        (b.len().wrapping_mul(0x9e37) ^ (first as usize) << 2 ^ (last as usize) << 7 ^ mid << 11)
            .wrapping_mul(0x2545_f491)
            >> 7
    }

    /// The slot holding `name`, or the empty slot where it would go.
    fn slot(&self, name: &str) -> usize {
        let mask = self.slots.len() - 1;
        let mut k = Self::hash(name) & mask;
        loop {
            match self.slots[k] {
                0 => return k,
                p if &*self.names[p as usize - 1].0 == name => return k,
                _ => k = (k + 1) & mask,
            }
        }
    }

    /// Index `name` as `i`; a name already there keeps its index unless `replace`.
    fn insert(&mut self, name: &str, i: usize, replace: bool) {
        if 2 * (self.names.len() + 1) > self.slots.len() {
            let mut grown = NameIndex::with_capacity(2 * self.names.len() + 2);
            for (n, j) in std::mem::take(&mut self.names) {
                grown.insert(&n, j, false);
            }
            *self = grown;
        }
        let k = self.slot(name);
        match self.slots[k] {
            0 => {
                self.names.push((name.into(), i));
                self.slots[k] = self.names.len() as u32;
            }
            p if replace => self.names[p as usize - 1].1 = i,
            _ => {}
        }
    }

    fn get(&self, name: &str) -> Option<usize> {
        match self.slots[self.slot(name)] {
            0 => None,
            p => Some(self.names[p as usize - 1].1),
        }
    }
}

/// A diagnostic rule's id: a constant of [`id`] (the rules of `rules/diagnostics.toml`), or
/// the id a rules file gives a runtime routine (see [`RuleId::of_table`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RuleId(&'static str);

impl RuleId {
    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// The id a rule table names (a runtime routine's `rule`): data, not code, so it is not
    /// one of the constants when a user's rules file adds it.
    pub(crate) fn of_table(id: &'static str) -> RuleId {
        RuleId(id)
    }

    /// Before [`Tables::from_parts`] sets a runtime routine's id.
    fn unset() -> RuleId {
        RuleId("")
    }
}

impl std::fmt::Display for RuleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// Every rule of `rules/diagnostics.toml` as a constant (generated by `build.rs`): code names
/// a rule only through these, so a misspelled id does not compile.
pub mod id {
    use super::RuleId;
    include!(concat!(env!("OUT_DIR"), "/rule_ids.rs"));
}

pub const DIRECTIVES_TOML: &str = include_str!("../rules/directives.toml");
pub const CLAUSES_TOML: &str = include_str!("../rules/clauses.toml");
pub const DIAGNOSTICS_TOML: &str = include_str!("../rules/diagnostics.toml");
pub const RUNTIME_TOML: &str = include_str!("../rules/runtime.toml");

impl Tables {
    /// The tables embedded in the binary.
    pub fn builtin() -> Tables {
        Tables::load().unwrap_or_else(|e| panic!("embedded rule table is invalid: {e}"))
    }

    /// Tables from their entries (the clause index is built here).
    pub fn from_parts(
        directives: Vec<DirectiveRule>,
        clauses: Vec<ClauseRule>,
        diagnostics: Vec<DiagnosticRule>,
        mut runtime: Vec<RuntimeRule>,
    ) -> Tables {
        for r in &mut runtime {
            r.rule_id = RuleId::of_table(static_id(&r.rule));
        }
        let mut clause_by_name = NameIndex::with_capacity(clauses.len());
        for (i, rule) in clauses.iter().enumerate() {
            for n in std::iter::once(&rule.name).chain(rule.aliases.iter()) {
                clause_by_name.insert(n, i, true);
            }
        }
        Tables {
            directive_by_name: index_by(&directives, |d| &d.name),
            diagnostic_by_id: index_by(&diagnostics, |d| &d.id),
            runtime_by_name: index_by(&runtime, |r| &r.name),
            directives,
            clauses,
            diagnostics,
            runtime,
            clause_by_name,
        }
    }

    fn load() -> Result<Tables, String> {
        let d: DirectiveFile =
            toml::from_str(DIRECTIVES_TOML).map_err(|e| format!("rules/directives.toml: {e}"))?;
        let c: ClauseFile =
            toml::from_str(CLAUSES_TOML).map_err(|e| format!("rules/clauses.toml: {e}"))?;
        let g: DiagnosticFile =
            toml::from_str(DIAGNOSTICS_TOML).map_err(|e| format!("rules/diagnostics.toml: {e}"))?;
        let r: RuntimeFile =
            toml::from_str(RUNTIME_TOML).map_err(|e| format!("rules/runtime.toml: {e}"))?;
        Ok(Tables::from_parts(d.directive, c.clause, g.rule, r.routine))
    }

    pub fn clause(&self, spelled: &str) -> Option<&ClauseRule> {
        self.clause_by_name.get(spelled).map(|i| &self.clauses[i])
    }

    pub fn directive(&self, name: &str) -> Option<&DirectiveRule> {
        self.directive_by_name
            .get(name)
            .map(|i| &self.directives[i])
    }

    pub fn diagnostic(&self, id: &str) -> Option<&DiagnosticRule> {
        self.diagnostic_by_id.get(id).map(|i| &self.diagnostics[i])
    }

    /// The severity of rule `id`; `unknown` for an id the tables do not list.
    pub fn severity(&self, id: &str, unknown: Severity) -> Severity {
        self.diagnostic(id).map_or(unknown, |r| r.severity)
    }

    /// The `'static` id diagnostics of rule `id` carry, for diagnostics read back from disk
    /// (`crate::cache`): a built-in id or one these tables' runtime routines report; None for
    /// any other.
    pub fn rule_id(&self, name: &str) -> Option<RuleId> {
        id::ALL
            .iter()
            .copied()
            .chain(self.runtime.iter().map(|r| r.rule_id))
            .find(|r| r.as_str() == name)
    }

    /// The OpenACC runtime routine called `name`.
    pub fn runtime(&self, name: &str) -> Option<&RuntimeRule> {
        self.runtime_by_name.get(name).map(|i| &self.runtime[i])
    }

    /// Whether `clause` may appear on `directive`; a combined directive takes its parts' clauses.
    pub fn allowed(&self, clause: &ClauseRule, directive: &str) -> bool {
        let on = |d: &str| clause.on.iter().any(|o| o == d);
        match directive.strip_suffix(" loop") {
            Some(compute) => on(compute) || on("loop"),
            None => on(directive),
        }
    }
}

/// `id` for the `rule` of a diagnostic, which lives as long as the program: a built-in id is
/// the text of its constant (found in [`id::ALL`], not by searching the embedded table once
/// per routine); an id a rules file adds is leaked, once per table made.
fn static_id(id: &str) -> &'static str {
    match id::ALL.iter().find(|r| r.as_str() == id) {
        Some(r) => r.as_str(),
        None => Box::leak(id.to_string().into_boxed_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_load_and_are_consistent() {
        let t = Tables::load().unwrap();
        for c in &t.clauses {
            for d in &c.on {
                assert!(
                    t.directive(d).is_some(),
                    "clause {} names unknown directive {d}",
                    c.name
                );
            }
        }
        let mut ids: Vec<_> = t.diagnostics.iter().map(|d| d.id.as_str()).collect();
        ids.sort();
        let n = ids.len();
        ids.dedup();
        assert_eq!(n, ids.len(), "duplicate diagnostic ids");
        for d in &t.diagnostics {
            assert!(
                !d.doc.trim().is_empty() && !d.summary.trim().is_empty(),
                "{} lacks docs",
                d.id
            );
        }
    }

    #[test]
    fn name_indexes_find_what_a_linear_search_finds() {
        let t = Tables::builtin();
        for d in &t.directives {
            let first = t.directives.iter().find(|x| x.name == d.name).unwrap();
            assert!(std::ptr::eq(t.directive(&d.name).unwrap(), first));
        }
        for c in &t.clauses {
            for n in std::iter::once(&c.name).chain(&c.aliases) {
                let last = t
                    .clauses
                    .iter()
                    .rfind(|x| x.name == *n || x.aliases.contains(n));
                assert!(std::ptr::eq(t.clause(n).unwrap(), last.unwrap()), "{n}");
            }
        }
        for g in &t.diagnostics {
            assert_eq!(t.diagnostic(&g.id).unwrap().id, g.id);
        }
        for r in &t.runtime {
            assert_eq!(t.runtime(&r.name).unwrap().name, r.name);
        }
        for missing in ["", "c", "copy ", "Copy", "parallel loop x", "acc_nothing"] {
            assert!(t.clause(missing).is_none() && t.directive(missing).is_none());
            assert!(t.runtime(missing).is_none() && t.diagnostic(missing).is_none());
        }
        let mut grown = NameIndex {
            slots: vec![0; 1],
            ..Default::default()
        };
        for (i, n) in (0..100).map(|i| (i, format!("n{i}"))) {
            grown.insert(&n, i, false);
            grown.insert(&n, i + 1, false);
        }
        assert!((0..100).all(|i| grown.get(&format!("n{i}")) == Some(i)));
        assert_eq!(grown.get("n100"), None);
    }

    #[test]
    fn combined_directives_take_both_parts_clauses() {
        let t = Tables::builtin();
        let gang = t.clause("gang").unwrap();
        let copy = t.clause("pcopy").unwrap();
        assert!(t.allowed(gang, "parallel loop") && t.allowed(copy, "parallel loop"));
        assert!(!t.allowed(gang, "parallel"));
    }

    #[test]
    fn runtime_rule_ids_are_the_table_text() {
        let t = Tables::builtin();
        let r = t.runtime("acc_malloc").unwrap();
        assert_eq!(r.rule_id.as_str(), r.rule);
        assert_eq!(static_id("vendor-alloc"), "vendor-alloc");
    }

    #[test]
    fn static_ids_of_the_table_are_its_constants() {
        for r in id::ALL {
            let s = static_id(r.as_str());
            assert_eq!(s, r.as_str());
            assert!(DIAGNOSTICS_TOML.contains(&format!("id = \"{s}\"")));
        }
        assert_eq!(
            static_id("not-a-rule-of-the-table"),
            "not-a-rule-of-the-table"
        );
    }
}
