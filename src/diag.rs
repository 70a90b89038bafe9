//! Diagnostics: clang-tidy style text (`path:line:col: severity: message [rule-id]`), JSON.

use crate::rules::{RuleId, Severity, Tables};
use crate::source::LineIndex;
use serde::Serialize;

/// A diagnostic inside one file, positioned by byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub offset: usize,
    /// Where the text the diagnostic is about ends (set by the engine).
    pub end: Option<usize>,
    pub rule: RuleId,
    /// The file's tables give it (see [`Diagnostic::rate`]); `Warning` until then.
    pub severity: Severity,
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic of `rule`; the engine gives it the severity of the file's tables.
    pub fn new(offset: usize, rule: RuleId, message: impl Into<String>) -> Self {
        let severity = Severity::Warning;
        Diagnostic {
            offset,
            end: None,
            rule,
            severity,
            message: message.into(),
        }
    }

    /// Take the severity `tables` give the rule (a rule they do not list is a warning).
    pub fn rate(&mut self, tables: &Tables) {
        self.severity = tables.severity(self.rule.as_str(), Severity::Warning);
    }
}

/// Names a message quotes before it counts the rest: a clause may list thousands.
const QUOTED_NAMES: usize = 20;

/// `names` quoted and joined for a message (`'a', 'b'`), past [`QUOTED_NAMES`] of them the
/// rest counted (`'a', …, 't' and 12 more`).
pub fn quoted_names<S: AsRef<str>>(names: &[S]) -> String {
    let shown: Vec<&str> = names.iter().take(QUOTED_NAMES).map(AsRef::as_ref).collect();
    let mut s = format!("'{}'", shown.join("', '"));
    if names.len() > QUOTED_NAMES {
        s += &format!(" and {} more", names.len() - QUOTED_NAMES);
    }
    s
}

/// A diagnostic resolved to a path and line/column, ready to print. Serialized, it is an
/// entry of the (deprecated) `--export-diagnostics` file.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Located {
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub severity: &'static str,
    pub rule: &'static str,
    pub message: String,
    /// Byte range in the file; None for diagnostics about a whole file.
    #[serde(skip)]
    pub range: Option<std::ops::Range<usize>>,
    /// 1-based line and byte column where the range ends.
    #[serde(skip)]
    pub end: (usize, usize),
}

impl Located {
    pub fn from(path: &str, index: &LineIndex, d: &Diagnostic) -> Self {
        let (line, column) = index.line_col(d.offset);
        let end = d.end.unwrap_or(d.offset).max(d.offset);
        Located {
            path: path.to_string(),
            line,
            column,
            severity: d.severity.as_str(),
            rule: d.rule.as_str(),
            message: d.message.clone(),
            range: Some(d.offset..end),
            end: index.line_col(end),
        }
    }

    /// A diagnostic about a whole file (I/O, encoding), with the severity `tables` give it.
    pub fn file(tables: &Tables, path: &str, rule: RuleId, message: impl Into<String>) -> Self {
        let severity = tables.severity(rule.as_str(), Severity::Error).as_str();
        Located {
            path: path.to_string(),
            line: 1,
            column: 1,
            severity,
            rule: rule.as_str(),
            message: message.into(),
            range: None,
            end: (1, 1),
        }
    }

    pub fn render(&self) -> String {
        format!(
            "{}:{}:{}: {}: {} [{}]",
            self.path, self.line, self.column, self.severity, self.message, self.rule
        )
    }

    pub fn is_error(&self) -> bool {
        self.severity == "error"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message quotes the first names of a long list and counts the others (a clause of
    /// 700,000 items made one diagnostic of several megabytes).
    #[test]
    fn long_name_lists_are_counted() {
        assert_eq!(quoted_names(&["a"]), "'a'");
        assert_eq!(quoted_names(&["a", "b"]), "'a', 'b'");
        let names: Vec<String> = (0..QUOTED_NAMES + 5).map(|k| format!("v{k}")).collect();
        assert_eq!(
            quoted_names(&names[..QUOTED_NAMES]).matches('\'').count(),
            2 * QUOTED_NAMES
        );
        let long = quoted_names(&names);
        assert!(
            long.starts_with("'v0', 'v1'") && long.ends_with("'v19' and 5 more"),
            "{long}"
        );
    }
}
