//! Directives left unchanged must not build silently. An OpenMP compiler ignores
//! `#pragma acc`, so a construct left as OpenACC would run on the host against data that
//! lives on the device (or lose its `update`, `wait`, …): a wrong result and no error. Each
//! outermost directive left unchanged gets a guard before its line that stops an OpenMP
//! build (`_OPENMP`) with an `#error` naming it, unless the user defines
//! `ACC2OMP_ALLOW_UNTRANSLATED`. An OpenACC build is not affected (in `--emit dual` output
//! the guard is on the OpenMP side).
//! The guard is acc2omp's own: a later run keeps it while the directive is still left,
//! and removes it once the directive is translated.

use crate::edit::Edit;
use std::ops::Range;

/// The macro that lets an OpenMP build proceed with directives left unchanged.
pub const ALLOW: &str = "ACC2OMP_ALLOW_UNTRANSLATED";

const IF: &str = "#if defined(_OPENMP) && !defined(ACC2OMP_ALLOW_UNTRANSLATED)";
const ERROR: &str = "#error \"acc2omp: ";
const ENDIF: &str = "#endif";

/// The guard for directive `name` (None: not parsed), with the line's `indent`.
pub fn guard(indent: &str, name: Option<&str>, eol: &str) -> String {
    let what = match name {
        Some(n) => format!("'acc {n}' below"),
        None => "the OpenACC directive below".to_string(),
    };
    format!(
        "{indent}{IF}{eol}{indent}{ERROR}{what} is left unchanged (see its diagnostic): an OpenMP build would ignore it; translate it, or define {ALLOW} to build anyway\"{eol}{indent}{ENDIF}{eol}"
    )
}

/// Start of the logical line holding `at` (a line continued with `\` belongs to the line
/// it continues).
fn logical_line_start(src: &str, at: usize) -> usize {
    let b = src.as_bytes();
    let mut start = src[..at].rfind('\n').map_or(0, |p| p + 1);
    while start > 0 {
        let mut e = start - 1; // the '\n'
        if e > 0 && b[e - 1] == b'\r' {
            e -= 1;
        }
        if e > 0 && b[e - 1] == b'\\' {
            start = src[..e - 1].rfind('\n').map_or(0, |p| p + 1);
        } else {
            break;
        }
    }
    start
}

/// `line`, or the start of the line above it when that line is a `NOLINTNEXTLINE` comment:
/// the guard goes above the comment, which must stay next to the line it suppresses.
fn above_nolint(src: &str, line: usize) -> usize {
    if line == 0 {
        return line;
    }
    let above = src[..line - 1].rfind('\n').map_or(0, |p| p + 1);
    let text = trim(&src[above..line]);
    let comment = text.starts_with("//") || (text.starts_with("/*") && text.ends_with("*/"));
    if comment && text.contains("NOLINTNEXTLINE") {
        above
    } else {
        line
    }
}

fn trim(l: &str) -> &str {
    l.trim_end_matches(['\n', '\r'])
        .trim_start_matches([' ', '\t'])
}

/// Guards in `src` (byte range, and where the line they guard starts).
fn existing(src: &str) -> Vec<(Range<usize>, usize)> {
    if !src.contains(ALLOW) {
        return Vec::new();
    }
    let mut lines: Vec<(usize, &str)> = Vec::new();
    let mut at = 0;
    for l in src.split_inclusive('\n') {
        lines.push((at, l));
        at += l.len();
    }
    let mut out = Vec::new();
    for k in 0..lines.len().saturating_sub(2) {
        if trim(lines[k].1) == IF
            && trim(lines[k + 1].1).starts_with(ERROR)
            && trim(lines[k + 2].1) == ENDIF
        {
            let end = lines[k + 2].0 + lines[k + 2].1.len();
            out.push((lines[k].0..end, end));
        }
    }
    out
}

/// The edits that put a guard before each directive of `left` (span start, name), keep the
/// guards already there, and remove the guards of directives no longer left.
pub fn edits(src: &str, left: &[(usize, Option<String>)], eol: &str) -> Vec<Edit> {
    let mut have = existing(src);
    let mut out = Vec::new();
    let mut done: Vec<usize> = Vec::new();
    for (at, name) in left {
        let at = *at;
        let line = above_nolint(src, logical_line_start(src, at));
        if done.contains(&line) {
            continue;
        }
        done.push(line);
        let indent = crate::source::indentation(src, line);
        let want = guard(indent, name.as_deref(), eol);
        match have.iter().position(|(_, guarded)| *guarded == line) {
            Some(k) => {
                let (range, _) = have.remove(k);
                if src[range.clone()] != want {
                    out.push(Edit::replace(range, want));
                }
            }
            None => out.push(Edit::insert(line, want)),
        }
    }
    out.extend(have.into_iter().map(|(range, _)| Edit::delete(range)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::apply;

    #[test]
    fn guards_are_added_kept_and_removed() {
        let src = "int f(void) {\n  #pragma acc parallel loop bogus\n  for (;;) ;\n}\n";
        let at = src.find("#pragma").unwrap();
        let e = edits(src, &[(at, Some("parallel loop".into()))], "\n");
        let once = apply(src, &e).unwrap();
        assert!(once.contains("  #if defined(_OPENMP)"), "{once}");
        assert!(once.contains("'acc parallel loop' below"), "{once}");
        // Run again: the guard is found, nothing changes.
        let at2 = once.find("#pragma").unwrap();
        assert!(edits(&once, &[(at2, Some("parallel loop".into()))], "\n").is_empty());
        // The directive is translated now: its guard goes.
        let gone = apply(&once, &edits(&once, &[], "\n")).unwrap();
        assert_eq!(gone, src);
    }

    #[test]
    fn a_nolintnextline_comment_stays_next_to_its_directive() {
        let src = "int x;\n  // NOLINTNEXTLINE(acc2omp-unknown-clause)\n  #pragma acc parallel bogus\n  {}\n";
        let at = src.find("#pragma").unwrap();
        let once = apply(src, &edits(src, &[(at, Some("parallel".into()))], "\n")).unwrap();
        let comment = once.find("  // NOLINTNEXTLINE").unwrap();
        assert!(once[..comment].ends_with("#endif\n"), "{once}");
        assert!(
            once[comment..]
                .lines()
                .nth(1)
                .unwrap()
                .contains("#pragma acc"),
            "{once}"
        );
        // A second run keeps the guard where it is.
        let at = once.find("#pragma").unwrap();
        assert!(edits(&once, &[(at, Some("parallel".into()))], "\n").is_empty());
    }

    #[test]
    fn a_continued_line_is_guarded_at_its_start() {
        let src = "#define P \\\n  _Pragma(\"acc parallel bogus\")\n";
        let at = src.find("_Pragma").unwrap();
        let out = apply(src, &edits(src, &[(at, None)], "\n")).unwrap();
        assert!(out.starts_with("#if defined(_OPENMP)"), "{out}");
        assert!(out.ends_with("#endif\n#define P \\\n  _Pragma(\"acc parallel bogus\")\n"));
    }
}
