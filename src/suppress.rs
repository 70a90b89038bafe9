//! Inline suppression in clang-tidy's form, in `//` and `/* */` comments:
//! `NOLINT(acc2omp-RULE, …)` on a line, `NOLINTNEXTLINE(…)` on the line before,
//! `NOLINTBEGIN(…)` … `NOLINTEND(…)` around lines. The list holds rule ids with the
//! `acc2omp-` prefix and globs (`acc2omp-*`, `acc2omp-runtime-*`, `*`); without a list every
//! rule is suppressed. A line continued with `\` counts as one line with the next, so a
//! comment anywhere in a multi-line directive covers all of it.
//!
//! Suppression changes what is reported, never the translation: a directive that an error
//! leaves unchanged stays unchanged.

use crate::select::glob;
use crate::source::LineIndex;
use std::ops::RangeInclusive;

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    lines: RangeInclusive<usize>,
    /// None: every rule.
    checks: Option<Vec<String>>,
}

/// The suppression comments of one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Suppressions {
    entries: Vec<Entry>,
}

/// Comments of a C/C++ file: (start offset, text), skipping string and character literals.
fn comments(b: &[u8]) -> Vec<(usize, &[u8])> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' | b'\'' => {
                let q = b[i];
                i += 1;
                while i < b.len() && b[i] != q && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let s = i;
                // A line comment ends at a newline that no backslash continues.
                while i < b.len() && (b[i] != b'\n' || continued(b, i)) {
                    i += 1;
                }
                out.push((s, &b[s..i]));
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let s = i;
                i = b[i + 2..]
                    .windows(2)
                    .position(|w| w == b"*/")
                    .map_or(b.len(), |k| i + 2 + k + 2);
                out.push((s, &b[s..i]));
            }
            _ => i += 1,
        }
    }
    out
}

/// Whether the line terminator at `nl` follows a backslash (a line splice).
fn continued(b: &[u8], nl: usize) -> bool {
    let before = if nl > 0 && b[nl - 1] == b'\r' && b[nl] == b'\n' {
        nl - 1
    } else {
        nl
    };
    before > 0 && b[before - 1] == b'\\'
}

/// The list after a marker: `(a, b)` → Some([a, b]); no parentheses → None (every rule).
fn checks(rest: &[u8]) -> Option<Vec<String>> {
    let rest = rest.strip_prefix(b"(")?;
    let end = rest.iter().position(|&c| c == b')')?;
    Some(
        String::from_utf8_lossy(&rest[..end])
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
    )
}

impl Suppressions {
    /// Read the markers of a file's bytes; `terminator` is its line terminator (`\n`, or `\r`
    /// in a CR-only file), as for its `LineIndex`.
    pub fn parse(bytes: &[u8], terminator: u8) -> Suppressions {
        // Most files have no marker: one fast search spares the scans below.
        if memchr::memmem::find(bytes, b"NOLINT").is_none() {
            return Suppressions::default();
        }
        let index = LineIndex::of_bytes(bytes, terminator);
        let line = |o: usize| index.line_col(o).0;
        // Whether each physical line (1-based) ends with a line splice.
        let mut spliced = vec![false, false];
        for (i, &c) in bytes.iter().enumerate() {
            if c == terminator {
                let before = if c == b'\n' && i > 0 && bytes[i - 1] == b'\r' {
                    i - 1
                } else {
                    i
                };
                *spliced.last_mut().unwrap_or(&mut false) =
                    before > 0 && bytes[before - 1] == b'\\';
                spliced.push(false);
            }
        }
        let count = spliced.len() - 1;
        // First and last physical line of the logical line holding each physical line.
        let mut first = vec![0; count + 1];
        let mut last = vec![0; count + 1];
        for l in 1..=count {
            first[l] = if spliced[l - 1] { first[l - 1] } else { l };
        }
        for l in (1..=count).rev() {
            last[l] = if l < count && spliced[l] {
                last[l + 1]
            } else {
                l
            };
        }
        let logical = |l: usize| first[l.min(count)]..=last[l.min(count)];
        let mut entries = Vec::new();
        let mut open: Vec<(usize, Option<Vec<String>>)> = Vec::new();
        for (start, text) in comments(bytes) {
            let mut k = 0;
            while let Some(p) = text[k..].windows(6).position(|w| w == b"NOLINT") {
                let at = k + p;
                let rest = &text[at + 6..];
                let (kind, rest) = [&b"NEXTLINE"[..], b"BEGIN", b"END"]
                    .into_iter()
                    .find_map(|s| rest.strip_prefix(s).map(|r| (s, r)))
                    .unwrap_or((b"", rest));
                k = at + 6;
                // `NOLINTX` is not a marker.
                if rest.first().is_some_and(|c| c.is_ascii_alphanumeric()) {
                    continue;
                }
                let l = line(start + at);
                let list = checks(rest);
                match kind {
                    b"NEXTLINE" => {
                        let next = *logical(l).end() + 1;
                        if next <= count {
                            entries.push(Entry {
                                lines: logical(next),
                                checks: list,
                            });
                        }
                    }
                    b"BEGIN" => open.push((*logical(l).start(), list)),
                    b"END" => {
                        let i = open.iter().rposition(|(_, c)| *c == list);
                        if let Some((from, checks)) = i.map(|i| open.remove(i)) {
                            entries.push(Entry {
                                lines: from..=*logical(l).end(),
                                checks,
                            });
                        }
                    }
                    _ => entries.push(Entry {
                        lines: logical(l),
                        checks: list,
                    }),
                }
            }
        }
        Suppressions { entries }
    }

    /// Whether the diagnostic `rule` on `line` is suppressed.
    pub fn suppresses(&self, line: usize, rule: &str) -> bool {
        let name = format!("acc2omp-{rule}");
        self.entries.iter().any(|e| {
            e.lines.contains(&line)
                && e.checks.as_ref().is_none_or(|c| {
                    c.iter().any(|p| glob(p, &name)) && !c.iter().any(|p| p == "-*")
                })
        })
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sup(src: &str) -> Suppressions {
        Suppressions::parse(src.as_bytes(), b'\n')
    }

    #[test]
    fn nolint_on_the_line_with_and_without_a_list() {
        let s = sup("a; // NOLINT(acc2omp-implicit-pointer)\nb; /* NOLINT */\nc;\n");
        assert!(s.suppresses(1, "implicit-pointer"));
        assert!(!s.suppresses(1, "scalar-race"));
        assert!(s.suppresses(2, "scalar-race"));
        assert!(!s.suppresses(3, "scalar-race"));
    }

    #[test]
    fn nextline_globs_and_other_tools_checks() {
        let s = sup(
            "// NOLINTNEXTLINE(acc2omp-runtime-*)\nx;\n// NOLINTNEXTLINE(bugprone-foo)\ny;\n// NOLINT(acc2omp-*, misc-x)\n",
        );
        assert!(s.suppresses(2, "runtime-wait") && !s.suppresses(2, "implicit-pointer"));
        assert!(!s.suppresses(4, "runtime-wait"));
        assert!(s.suppresses(5, "anything"));
        // Not markers: inside strings, longer words.
        let s = sup("char *s = \"// NOLINT\";\n// NOLINTFOO\n");
        assert!(s.is_empty(), "{s:?}");
    }

    #[test]
    fn continued_lines_are_one_line() {
        let s = sup("#pragma acc parallel /* NOLINT(acc2omp-x) */ \\\n  copy(a)\nz;\n");
        assert!(s.suppresses(1, "x") && s.suppresses(2, "x") && !s.suppresses(3, "x"));
        let s = sup("// NOLINTNEXTLINE\n#pragma acc parallel \\\r\n  copy(a)\r\nz;\n");
        assert!(s.suppresses(2, "x") && s.suppresses(3, "x") && !s.suppresses(4, "x"));
        let s = Suppressions::parse(b"a; // NOLINT\rb;\r", b'\r');
        assert!(s.suppresses(1, "x") && !s.suppresses(2, "x"));
    }

    #[test]
    fn begin_end_regions() {
        let s = sup(
            "/* NOLINTBEGIN(acc2omp-scalar-race) */\na;\nb;\n// NOLINTEND(acc2omp-scalar-race)\nc;\n",
        );
        assert!(s.suppresses(2, "scalar-race") && s.suppresses(3, "scalar-race"));
        assert!(!s.suppresses(5, "scalar-race") && !s.suppresses(2, "implicit-pointer"));
    }
}
