//! Inline suppression in clang-tidy's form, in `//` and `/* */` comments:
//! `NOLINT(acc2omp-RULE, …)` on a line, `NOLINTNEXTLINE(…)` on the line before,
//! `NOLINTBEGIN(…)` … `NOLINTEND(…)` around lines. The list holds rule ids, with or without
//! the `acc2omp-` prefix (as `--select` takes them), and globs (`acc2omp-*`,
//! `runtime-*`, `*`); without a list every rule is suppressed. A line continued with `\`
//! counts as one line with the next, so a comment anywhere in a multi-line directive covers
//! all of it.
//!
//! As in clang-tidy, a `NOLINTEND` closes the innermost open `NOLINTBEGIN`, whose list it
//! must repeat; a `NOLINTBEGIN` left open or a `NOLINTEND` without its `NOLINTBEGIN` is
//! reported (`nolint-unmatched`), and the file's regions then hide nothing.
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
    /// `NOLINTBEGIN` comments left open and `NOLINTEND` comments that close none: offset of
    /// the marker, and whether it is a `NOLINTBEGIN`.
    pub unmatched: Vec<(usize, bool)>,
}

/// What `unmatched` says about one marker, in clang-tidy's words.
pub fn unmatched_message(begin: bool) -> &'static str {
    if begin {
        "unmatched 'NOLINTBEGIN' comment without a subsequent 'NOLINTEND' comment; the NOLINTBEGIN regions of this file hide nothing until it is fixed"
    } else {
        "unmatched 'NOLINTEND' comment without a previous 'NOLINTBEGIN' comment; the NOLINTBEGIN regions of this file hide nothing until it is fixed"
    }
}

/// A list as `NOLINTBEGIN` and `NOLINTEND` compare them: none means `*`.
fn same_checks(a: &Option<Vec<String>>, b: &Option<Vec<String>>) -> bool {
    let all = vec!["*".to_string()];
    a.as_ref().unwrap_or(&all) == b.as_ref().unwrap_or(&all)
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
        let mut blocks = Vec::new();
        let mut unmatched = Vec::new();
        // Open NOLINTBEGIN comments: marker offset, first line, list.
        let mut open: Vec<(usize, usize, Option<Vec<String>>)> = Vec::new();
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
                    b"BEGIN" => open.push((start + at, *logical(l).start(), list)),
                    b"END" => match open.last() {
                        Some((_, _, c)) if same_checks(c, &list) => {
                            let (_, from, checks) = open.pop().unwrap_or_default();
                            blocks.push(Entry {
                                lines: from..=*logical(l).end(),
                                checks,
                            });
                        }
                        _ => unmatched.push((start + at, false)),
                    },
                    _ => entries.push(Entry {
                        lines: logical(l),
                        checks: list,
                    }),
                }
            }
        }
        unmatched.extend(open.into_iter().map(|(at, _, _)| (at, true)));
        unmatched.sort_unstable();
        if unmatched.is_empty() {
            entries.append(&mut blocks);
        }
        Suppressions { entries, unmatched }
    }

    /// Whether the diagnostic `rule` on `line` is suppressed.
    pub fn suppresses(&self, line: usize, rule: &str) -> bool {
        let name = format!("acc2omp-{rule}");
        self.entries.iter().any(|e| {
            e.lines.contains(&line)
                && e.checks.as_ref().is_none_or(|c| {
                    c.iter().any(|p| glob(p, &name) || glob(p, rule))
                        && !c.iter().any(|p| p == "-*")
                })
        })
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.unmatched.is_empty()
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
        assert!(s.unmatched.is_empty());
    }

    #[test]
    fn short_ids_as_select_takes_them() {
        let s = sup("a; // NOLINT(unknown-clause)\n// NOLINTNEXTLINE(runtime-*)\nb;\n");
        assert!(s.suppresses(1, "unknown-clause") && !s.suppresses(1, "parse-error"));
        assert!(s.suppresses(3, "runtime-wait") && !s.suppresses(3, "unknown-clause"));
    }

    #[test]
    fn unmatched_begin_and_end_are_reported_and_regions_hide_nothing() {
        // Left open (no list means every rule, as `(*)`).
        let src = "// NOLINTBEGIN\na;\n// NOLINTBEGIN(*)\nb;\n// NOLINTEND\nc;\n";
        let s = sup(src);
        assert_eq!(s.unmatched, vec![(3, true)]);
        assert!(!s.suppresses(4, "x") && !s.suppresses(2, "x"));
        // Closed in the wrong order (LIFO, as clang-tidy), and an end without a begin.
        let src = "// NOLINTBEGIN(acc2omp-a)\n// NOLINTBEGIN(acc2omp-b)\nx;\n// NOLINTEND(acc2omp-a)\n// NOLINTEND(acc2omp-b)\n/* NOLINTEND */ y; // NOLINT\n";
        let s = sup(src);
        let at = |m: &str, from: usize| from + src[from..].find(m).unwrap();
        let begin_a = at("NOLINTBEGIN", 0);
        let end_a = at("NOLINTEND", 0);
        let end_bare = at("NOLINTEND */", 0);
        assert_eq!(
            s.unmatched,
            vec![(begin_a, true), (end_a, false), (end_bare, false)]
        );
        assert!(!s.suppresses(3, "a") && !s.suppresses(3, "b"));
        // NOLINT itself still works.
        assert!(s.suppresses(6, "a"));
    }
}
