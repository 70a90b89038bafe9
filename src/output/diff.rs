//! Unified diffs of a file's bytes, as git writes and applies them.

use similar::{Algorithm, DiffTag, capture_diff_slices, group_diff_ops};

/// Lines of `text`, each with its `\n` (git's idea of a line: a CR is part of the line).
fn lines(text: &[u8]) -> Vec<&[u8]> {
    text.split_inclusive(|&b| b == b'\n').collect()
}

/// A path in a diff header as git writes it: C-quoted when it has a control character, a
/// quote, a backslash or a byte above 0x7E; followed by a tab when it has a space.
pub fn header_path(prefix: &str, path: &[u8]) -> Vec<u8> {
    let mut name = prefix.as_bytes().to_vec();
    name.extend_from_slice(path);
    let mut q = quote_path(&name);
    if q == name && name.contains(&b' ') {
        q.push(b'\t');
    }
    q
}

/// A path as git shows it with `core.quotePath` (its default): as it is, or C-quoted in
/// double quotes when it has a control character (a newline, a tab), a quote, a backslash
/// or a byte above 0x7E (so that a name that is not UTF-8 keeps its bytes).
pub fn quote_path(name: &[u8]) -> Vec<u8> {
    if !name
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\' || b >= 0x7f)
    {
        return name.to_vec();
    }
    let mut q = vec![b'"'];
    for &b in name {
        match b {
            b'\x07' => q.extend_from_slice(b"\\a"),
            b'\x08' => q.extend_from_slice(b"\\b"),
            b'\t' => q.extend_from_slice(b"\\t"),
            b'\n' => q.extend_from_slice(b"\\n"),
            b'\x0b' => q.extend_from_slice(b"\\v"),
            b'\x0c' => q.extend_from_slice(b"\\f"),
            b'\r' => q.extend_from_slice(b"\\r"),
            b'"' => q.extend_from_slice(b"\\\""),
            b'\\' => q.extend_from_slice(b"\\\\"),
            b if !(0x20..0x7f).contains(&b) => q.extend_from_slice(format!("\\{b:03o}").as_bytes()),
            b => q.push(b),
        }
    }
    q.push(b'"');
    q
}

/// A unified diff of a file's bytes with `a/` and `b/` prefixes that `git apply` accepts.
pub fn unified_diff(path: &[u8], old: &[u8], new: &[u8]) -> Vec<u8> {
    let (o, n) = (lines(old), lines(new));
    let ops = capture_diff_slices(Algorithm::Myers, &o, &n);
    let mut out = Vec::new();
    let groups = group_diff_ops(ops, 3);
    if groups.is_empty() {
        return out;
    }
    for (sign, prefix) in [(b"--- ", "a/"), (b"+++ ", "b/")] {
        out.extend_from_slice(sign);
        out.extend(header_path(prefix, path));
        out.push(b'\n');
    }
    // `-start,count`: a count of 1 is left out, an empty range starts at the line before.
    let range = |r: std::ops::Range<usize>| match r.len() {
        0 => format!("{},0", r.start),
        1 => format!("{}", r.start + 1),
        k => format!("{},{k}", r.start + 1),
    };
    for group in groups {
        let (first, last) = (&group[0], &group[group.len() - 1]);
        let old_r = first.old_range().start..last.old_range().end;
        let new_r = first.new_range().start..last.new_range().end;
        out.extend_from_slice(format!("@@ -{} +{} @@\n", range(old_r), range(new_r)).as_bytes());
        for op in &group {
            let (tag, or, nr) = op.as_tag_tuple();
            let mut emit = |sign: u8, line: &[u8]| {
                out.push(sign);
                out.extend_from_slice(line);
                if !line.ends_with(b"\n") {
                    out.extend_from_slice(b"\n\\ No newline at end of file\n");
                }
            };
            match tag {
                DiffTag::Equal => or.for_each(|i| emit(b' ', o[i])),
                DiffTag::Delete => or.for_each(|i| emit(b'-', o[i])),
                DiffTag::Insert => nr.for_each(|i| emit(b'+', n[i])),
                DiffTag::Replace => {
                    or.for_each(|i| emit(b'-', o[i]));
                    nr.for_each(|i| emit(b'+', n[i]));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply_patch(dir: &std::path::Path, patch: &[u8]) -> std::process::Output {
        use std::io::Write;
        let mut git = std::process::Command::new("git")
            .args(["apply", "--unidiff-zero", "-"])
            .current_dir(dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        git.stdin.take().unwrap().write_all(patch).unwrap();
        git.wait_with_output().unwrap()
    }

    #[test]
    fn diff_has_git_headers_and_no_newline_marker() {
        let d = String::from_utf8(unified_diff(b"x.c", b"a\nb", b"a\nc")).unwrap();
        assert_eq!(
            d,
            "--- a/x.c\n+++ b/x.c\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
        );
        assert!(unified_diff(b"x.c", b"same", b"same").is_empty());
    }

    #[test]
    fn paths_are_quoted_as_git_status_quotes_them() {
        assert_eq!(quote_path(b"sp ace.c"), b"sp ace.c");
        assert_eq!(quote_path(b"n\nl.c"), b"\"n\\nl.c\"");
        assert_eq!(quote_path(b"caf\xe9.c"), b"\"caf\\351.c\"");
    }

    #[test]
    fn header_paths_are_quoted_as_git_quotes_them() {
        assert_eq!(header_path("a/", b"x.c"), b"a/x.c");
        assert_eq!(header_path("a/", b"x y.c"), b"a/x y.c\t");
        assert_eq!(header_path("a/", b"t\tab.c"), b"\"a/t\\tab.c\"");
        assert_eq!(
            header_path("b/", b"caf\xe9 \"q\"\\.c"),
            b"\"b/caf\\351 \\\"q\\\"\\\\.c\""
        );
    }

    /// `git apply` takes every kind of name and content: tabs, spaces, quotes, Latin-1,
    /// CR-only lines, a change at the first and the last line, no final newline.
    #[test]
    fn git_apply_accepts_the_diffs() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        let d = tempfile::tempdir().unwrap();
        let cases: [(&[u8], &[u8], &[u8]); 5] = [
            (b"t\tab.c", b"a\nb\nc\n", b"A\nb\nc\n"),
            (
                b"sp ace.c",
                b"1\n2\n3\n4\n5\n6\n7\n8\n9",
                b"1\n2\n3\n4\n5\n6\n7\n8\nnine\n",
            ),
            (
                b"caf\xe9 \"q\".c",
                b"/* \xe9 */\r\nx\r\n",
                b"/* \xe9 */\r\ny\r\n",
            ),
            (b"cr.c", b"a\rb\rc", b"a\rB\rc"),
            (b"back\\slash.c", b"", b"new\n"),
        ];
        let mut patch = Vec::new();
        for (name, old, new) in cases {
            std::fs::write(d.path().join(OsStr::from_bytes(name)), old).unwrap();
            patch.extend(unified_diff(name, old, new));
        }
        let o = apply_patch(d.path(), &patch);
        assert!(
            o.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&o.stderr),
            String::from_utf8_lossy(&patch)
        );
        for (name, _, new) in cases {
            assert_eq!(
                std::fs::read(d.path().join(OsStr::from_bytes(name))).unwrap(),
                new
            );
        }
    }
}
