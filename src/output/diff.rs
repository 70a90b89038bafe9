//! Unified diffs of a file's bytes, as git writes and applies them.

use similar::{Algorithm, DiffOp, DiffTag, capture_diff_slices};

/// Lines of `text`, each with its `\n` (git's idea of a line: a CR is part of the line).
fn lines(text: &[u8]) -> Vec<&[u8]> {
    // `split_inclusive` with a closure tests byte by byte; a large file has millions.
    let mut v = Vec::with_capacity(memchr::memchr_iter(b'\n', text).count() + 1);
    let mut at = 0;
    for nl in memchr::memchr_iter(b'\n', text) {
        v.push(&text[at..=nl]);
        at = nl + 1;
    }
    if at < text.len() {
        v.push(&text[at..]);
    }
    v
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
    render(path, &o, &n, ops)
}

/// [`write_unified_diff_of_changes`] into a vector.
#[cfg(test)]
pub fn unified_diff_of_changes(
    path: &[u8],
    old: &[u8],
    new: &[u8],
    changes: &mut [(usize, usize, usize)],
) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing to a vector does not fail.
    let _ = write_unified_diff_of_changes(&mut out, path, old, new, changes);
    out
}

/// `unified_diff` when `new` is `old` with `changes` applied (`(offset, length, new
/// length)` in `old`'s bytes, in any order): only the lines they touch are compared, so a
/// large file with many small edits is diffed in linear time. The lines between them are
/// checked to be equal; if the changes do not describe `new`, the whole file is compared.
/// Written to `out` as it is made: a large file's diff (twice its size) is not held whole.
pub fn write_unified_diff_of_changes(
    out: &mut impl std::io::Write,
    path: &[u8],
    old: &[u8],
    new: &[u8],
    changes: &mut [(usize, usize, usize)],
) -> std::io::Result<()> {
    if old == new {
        return Ok(());
    }
    let (o, n) = (lines(old), lines(new));
    let mut ops = ops_of_changes(old, new, &o, &n, changes)
        .unwrap_or_else(|| capture_diff_slices(Algorithm::Myers, &o, &n));
    let hunks = hunks(&mut ops, 3);
    if hunks.is_empty() {
        return Ok(());
    }
    write_hunks(out, path, &o, &n, &ops, &hunks)
}

/// Diff operations over whole lines from the changes; None when they do not give `new`.
fn ops_of_changes(
    old: &[u8],
    new: &[u8],
    o: &[&[u8]],
    n: &[&[u8]],
    changes: &mut [(usize, usize, usize)],
) -> Option<Vec<DiffOp>> {
    changes.sort_unstable();
    let starts = |ls: &[&[u8]]| {
        let mut at = 0;
        let mut v: Vec<usize> = ls
            .iter()
            .map(|l| {
                let s = at;
                at += l.len();
                s
            })
            .collect();
        v.push(at);
        v
    };
    let (os, ns) = (starts(o), starts(n));
    // The line holding byte `x`; the end of the text is on the last line when that line has
    // no newline (a change there changes it), else after every line.
    let open_end = !old.is_empty() && !old.ends_with(b"\n");
    // Changes are read in order: the search starts from a line at or before `x` (`from`).
    let line_of = |x: usize, from: usize| {
        if x >= old.len() && open_end {
            return o.len() - 1;
        }
        starts_at_or_before(&os, x, from)
            .saturating_sub(1)
            .min(o.len())
    };
    // New-text line starting exactly at byte `x`.
    let new_line_at = |x: usize| ns.binary_search(&x).ok();
    // Sized for the common case (an equal run and a change per region): a large file's list
    // would otherwise be copied as it grows.
    let mut ops = Vec::with_capacity(2 * changes.len() + 1);
    // Old and new line where the text not yet described starts; bytes added so far.
    let (mut ol, mut nl, mut delta) = (0usize, 0usize, 0isize);
    let mut k = 0;
    while k < changes.len() {
        // A region: the lines touched by the next changes, up to one on a later line.
        let a = line_of(changes[k].0, ol);
        if a < ol {
            return None;
        }
        let (mut b, mut region_delta) = (a, 0isize);
        let mut in_region = 0;
        let nb = loop {
            while let Some(&(s, len, new_len)) = changes.get(k) {
                if s + len > old.len() {
                    return None;
                }
                // A change on a line after the region's starts the next region (after the
                // last line, every change is at the end of the text: the same region).
                if in_region > 0 && s >= os[b] && b < o.len() {
                    break;
                }
                let last = line_of(if len > 0 { s + len - 1 } else { s }, a);
                b = b.max(last + 1).min(o.len());
                region_delta += new_len as isize - len as isize;
                in_region += 1;
                k += 1;
            }
            // The region ends where a new line starts too; a change that removed or added
            // a line end joins the next line to the region.
            let new_end: usize = (os[b] as isize + delta + region_delta).try_into().ok()?;
            if b == o.len() {
                if new_end != new.len() {
                    return None;
                }
                break n.len();
            }
            if let Some(nb) = new_line_at(new_end) {
                break nb;
            }
            b += 1;
        };
        // The equal lines before the region.
        let equal = a - ol;
        if o.get(ol..a)? != n.get(nl..nl + equal)? {
            return None;
        }
        push(&mut ops, same(ol, nl, equal));
        let na = nl + equal;
        if nb < na {
            return None;
        }
        region_ops(&mut ops, &o[a..b], &n[na..nb], a, na);
        (ol, nl) = (b, nb);
        delta += region_delta;
    }
    if o[ol..] != n[nl.min(n.len())..] {
        return None;
    }
    push(&mut ops, same(ol, nl, o.len() - ol));
    Some(ops)
}

/// How many of the ascending `starts` are at most `x`, as `partition_point` counts them, but
/// searched from index `from` onward (doubling steps) when `starts[from] <= x`: a change is
/// mostly on the line of the one before or the next, not a binary search of the file away.
fn starts_at_or_before(starts: &[usize], x: usize, from: usize) -> usize {
    if starts.get(from).is_none_or(|&s| s > x) {
        return starts.partition_point(|&s| s <= x);
    }
    // `starts[lo - 1] <= x` throughout.
    let (mut lo, mut step) = (from + 1, 1);
    loop {
        let hi = (lo + step).min(starts.len());
        if hi == starts.len() || starts[hi] > x {
            return lo + starts[lo..hi].partition_point(|&s| s <= x);
        }
        lo = hi + 1;
        step *= 2;
    }
}

/// `len` equal lines at `old_index` and `new_index`.
fn same(old_index: usize, new_index: usize, len: usize) -> DiffOp {
    DiffOp::Equal {
        old_index,
        new_index,
        len,
    }
}

/// Append `op`, joining runs of equal lines and runs of changed ones (one replacement
/// lists all its removed lines, then all its added ones, as a whole-file diff does) and
/// dropping empty ones.
fn push(ops: &mut Vec<DiffOp>, op: DiffOp) {
    if op.old_range().is_empty() && op.new_range().is_empty() {
        return;
    }
    let equal = |o: &DiffOp| o.tag() == DiffTag::Equal;
    match ops.last_mut() {
        Some(DiffOp::Equal { len: prev, .. }) if equal(&op) => *prev += op.old_range().len(),
        Some(last) if !equal(last) && !equal(&op) => {
            let (old, new) = (last.old_range(), last.new_range());
            let (old_len, new_len) = (
                old.len() + op.old_range().len(),
                new.len() + op.new_range().len(),
            );
            *last = match (old_len, new_len) {
                (0, _) => DiffOp::Insert {
                    old_index: old.start,
                    new_index: new.start,
                    new_len,
                },
                (_, 0) => DiffOp::Delete {
                    old_index: old.start,
                    old_len,
                    new_index: new.start,
                },
                _ => DiffOp::Replace {
                    old_index: old.start,
                    old_len,
                    new_index: new.start,
                    new_len,
                },
            };
        }
        _ => ops.push(op),
    }
}

/// The operations turning `old` lines into `new` ones (at `at_old`, `at_new` in the file):
/// equal lines at either end kept, a line replaced by another, a pure insertion or a
/// deletion written at once (most directive edits), Myers's diff for the rest.
fn region_ops(ops: &mut Vec<DiffOp>, old: &[&[u8]], new: &[&[u8]], at_old: usize, at_new: usize) {
    let head = old.iter().zip(new).take_while(|(x, y)| x == y).count();
    let tail = old[head..]
        .iter()
        .rev()
        .zip(new[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (o, n) = (&old[head..old.len() - tail], &new[head..new.len() - tail]);
    push(ops, same(at_old, at_new, head));
    let (so, sn) = (at_old + head, at_new + head);
    match (o.len(), n.len()) {
        (0, 0) => {}
        (0, new_len) => push(
            ops,
            DiffOp::Insert {
                old_index: so,
                new_index: sn,
                new_len,
            },
        ),
        (old_len, 0) => push(
            ops,
            DiffOp::Delete {
                old_index: so,
                old_len,
                new_index: sn,
            },
        ),
        (1, 1) => push(
            ops,
            DiffOp::Replace {
                old_index: so,
                old_len: 1,
                new_index: sn,
                new_len: 1,
            },
        ),
        _ => {
            for op in capture_diff_slices(Algorithm::Myers, o, n) {
                push(ops, shifted(op, so, sn));
            }
        }
    }
    push(
        ops,
        same(at_old + old.len() - tail, at_new + new.len() - tail, tail),
    );
}

/// `op` with its line indices moved by `old` and `new`.
fn shifted(op: DiffOp, old: usize, new: usize) -> DiffOp {
    match op {
        DiffOp::Equal {
            old_index,
            new_index,
            len,
        } => DiffOp::Equal {
            old_index: old_index + old,
            new_index: new_index + new,
            len,
        },
        DiffOp::Delete {
            old_index,
            old_len,
            new_index,
        } => DiffOp::Delete {
            old_index: old_index + old,
            old_len,
            new_index: new_index + new,
        },
        DiffOp::Insert {
            old_index,
            new_index,
            new_len,
        } => DiffOp::Insert {
            old_index: old_index + old,
            new_index: new_index + new,
            new_len,
        },
        DiffOp::Replace {
            old_index,
            old_len,
            new_index,
            new_len,
        } => DiffOp::Replace {
            old_index: old_index + old,
            old_len,
            new_index: new_index + new,
            new_len,
        },
    }
}

/// A hunk of [`hunks`]: operations `mid` of the list, after `head` and before `tail` (parts
/// of runs of equal lines split between two hunks).
struct Hunk {
    head: Option<DiffOp>,
    mid: std::ops::Range<usize>,
    tail: Option<DiffOp>,
}

impl Hunk {
    fn ops<'a>(&'a self, ops: &'a [DiffOp]) -> impl Iterator<Item = &'a DiffOp> {
        self.head
            .iter()
            .chain(&ops[self.mid.clone()])
            .chain(self.tail.iter())
    }
}

/// The hunks of `ops` with `n` lines of context, exactly as `similar::group_diff_ops`
/// groups them, but as ranges of `ops` instead of copies of it (a large file's diff has
/// hundreds of thousands of operations, mostly in one hunk).
fn hunks(ops: &mut [DiffOp], n: usize) -> Vec<Hunk> {
    if let Some(DiffOp::Equal {
        old_index,
        new_index,
        len,
    }) = ops.first_mut()
    {
        let offset = len.saturating_sub(n);
        *old_index += offset;
        *new_index += offset;
        *len -= offset;
    }
    if let Some(DiffOp::Equal { len, .. }) = ops.last_mut() {
        *len -= len.saturating_sub(n);
    }
    let mut out = Vec::new();
    let (mut head, mut from) = (None, 0);
    for (i, op) in ops.iter().enumerate() {
        let &DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        else {
            continue;
        };
        // A long run of equal lines ends a hunk and starts the next.
        if len > n * 2 {
            out.push(Hunk {
                head: head.take(),
                mid: from..i,
                tail: Some(same(old_index, new_index, n)),
            });
            let offset = len.saturating_sub(n);
            head = Some(same(old_index + offset, new_index + offset, len - offset));
            from = i + 1;
        }
    }
    let last = Hunk {
        head,
        mid: from..ops.len(),
        tail: None,
    };
    let keep = {
        let mut rest = last.ops(ops);
        !matches!(
            (rest.next(), rest.next()),
            (None, _) | (Some(DiffOp::Equal { .. }), None)
        )
    };
    if keep {
        out.push(last);
    }
    out
}

/// Counts the bytes written to it.
#[derive(Default)]
struct Count(usize);

impl std::io::Write for Count {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0 += b.len();
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn render(path: &[u8], o: &[&[u8]], n: &[&[u8]], mut ops: Vec<DiffOp>) -> Vec<u8> {
    let hunks = hunks(&mut ops, 3);
    if hunks.is_empty() {
        return Vec::new();
    }
    // Sized exactly first: a large file's diff would otherwise be copied as it grows, the old
    // and the new buffer held at once.
    let mut count = Count::default();
    let _ = write_hunks(&mut count, path, o, n, &ops, &hunks);
    let mut out = Vec::with_capacity(count.0);
    // Writing to a vector does not fail.
    let _ = write_hunks(&mut out, path, o, n, &ops, &hunks);
    out
}

fn write_hunks(
    out: &mut impl std::io::Write,
    path: &[u8],
    o: &[&[u8]],
    n: &[&[u8]],
    ops: &[DiffOp],
    hunks: &[Hunk],
) -> std::io::Result<()> {
    for (sign, prefix) in [(b"--- ", "a/"), (b"+++ ", "b/")] {
        out.write_all(sign)?;
        out.write_all(&header_path(prefix, path))?;
        out.write_all(b"\n")?;
    }
    // `-start,count`: a count of 1 is left out, an empty range starts at the line before.
    // Written into `out` (a hunk's header is not a string of its own: a large file has
    // tens of thousands of hunks).
    let range = |out: &mut dyn std::io::Write, r: std::ops::Range<usize>| match r.len() {
        0 => write!(out, "{},0", r.start),
        1 => write!(out, "{}", r.start + 1),
        k => write!(out, "{},{k}", r.start + 1),
    };
    let emit = |out: &mut dyn std::io::Write, sign: u8, line: &[u8]| {
        out.write_all(&[sign])?;
        out.write_all(line)?;
        if !line.ends_with(b"\n") {
            out.write_all(b"\n\\ No newline at end of file\n")?;
        }
        Ok::<(), std::io::Error>(())
    };
    for hunk in hunks {
        let mut group = hunk.ops(ops);
        let first = group.next().expect("a hunk has an operation");
        let last = hunk.ops(ops).last().unwrap_or(first);
        let old_r = first.old_range().start..last.old_range().end;
        let new_r = first.new_range().start..last.new_range().end;
        out.write_all(b"@@ -")?;
        range(out, old_r)?;
        out.write_all(b" +")?;
        range(out, new_r)?;
        out.write_all(b" @@\n")?;
        for op in hunk.ops(ops) {
            let (tag, or, nr) = op.as_tag_tuple();
            let (old, new) = match tag {
                DiffTag::Equal => ((b' ', or), (b'+', 0..0)),
                DiffTag::Delete => ((b'-', or), (b'+', 0..0)),
                DiffTag::Insert => ((b'-', 0..0), (b'+', nr)),
                DiffTag::Replace => ((b'-', or), (b'+', nr)),
            };
            for i in old.1 {
                emit(out, old.0, o[i])?;
            }
            for i in new.1 {
                emit(out, new.0, n[i])?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hunks are `similar::group_diff_ops`'s groups, operation for operation: runs of
    /// equal lines of every length around the context (3) and its double, at either end and
    /// between changes of every kind.
    #[test]
    fn hunks_are_the_groups_of_similar() {
        let mut seed = 12345u64;
        let mut next = |k: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % k
        };
        for _ in 0..2000 {
            let (mut ops, mut o, mut n) = (Vec::new(), 0, 0);
            let mut equal = next(2) == 0;
            for _ in 0..next(7) {
                let (a, b) = (next(9), next(3));
                let op = if equal {
                    same(o, n, a + 1)
                } else {
                    match next(3) {
                        0 => DiffOp::Insert {
                            old_index: o,
                            new_index: n,
                            new_len: b + 1,
                        },
                        1 => DiffOp::Delete {
                            old_index: o,
                            old_len: b + 1,
                            new_index: n,
                        },
                        _ => DiffOp::Replace {
                            old_index: o,
                            old_len: b + 1,
                            new_index: n,
                            new_len: a + 1,
                        },
                    }
                };
                (o, n) = (op.old_range().end, op.new_range().end);
                ops.push(op);
                equal = !equal;
            }
            let groups = similar::group_diff_ops(ops.clone(), 3);
            let hunks = hunks(&mut ops, 3);
            let ours: Vec<Vec<DiffOp>> = hunks
                .iter()
                .map(|h| h.ops(&ops).copied().collect())
                .collect();
            assert_eq!(ours, groups);
        }
    }

    #[test]
    fn starts_searched_from_a_line_count_as_a_binary_search_does() {
        let starts: Vec<usize> = (0..40).map(|i| i * 3 + i % 4).collect();
        for x in 0..130 {
            let want = starts.partition_point(|&s| s <= x);
            for from in 0..=starts.len() + 1 {
                assert_eq!(
                    super::starts_at_or_before(&starts, x, from),
                    want,
                    "{x} {from}"
                );
            }
        }
        assert_eq!(super::starts_at_or_before(&[], 5, 0), 0);
    }

    #[test]
    fn lines_end_after_their_newline() {
        for t in [&b""[..], b"a", b"a\n", b"\n\n", b"a\nb", b"a\r\nb\n\nc"] {
            let expected: Vec<&[u8]> = t.split_inclusive(|&b| b == b'\n').collect();
            assert_eq!(lines(t), expected, "{t:?}");
        }
    }

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

    /// Apply `changes` (offset, length, text) to `old`.
    fn apply_changes(old: &[u8], changes: &[(usize, usize, Vec<u8>)]) -> Vec<u8> {
        let mut sorted = changes.to_vec();
        sorted.sort_by_key(|c| (c.0, c.1));
        let (mut out, mut at) = (Vec::new(), 0);
        for (s, len, text) in sorted {
            out.extend_from_slice(&old[at..s]);
            out.extend_from_slice(&text);
            at = s + len;
        }
        out.extend_from_slice(&old[at..]);
        out
    }

    /// `old` with unified diff `d` applied (its hunks' context and removed lines checked).
    fn patched(old: &[u8], d: &[u8]) -> Vec<u8> {
        let o = lines(old);
        let (mut out, mut pos): (Vec<u8>, usize) = (Vec::new(), 0);
        let mut last_added = false;
        for l in d.split_inclusive(|&b| b == b'\n').skip(2) {
            if l.starts_with(b"@@ -") {
                let head = String::from_utf8_lossy(l);
                let range = head[4..].split(' ').next().unwrap();
                let mut it = range.split(',');
                let start: usize = it.next().unwrap().parse().unwrap();
                let count: usize = it.next().map_or(1, |c| c.parse().unwrap());
                let first = if count == 0 { start } else { start - 1 };
                for line in &o[pos..first] {
                    out.extend_from_slice(line);
                }
                pos = first;
                continue;
            }
            let (sign, body) = (l[0], &l[1..]);
            match sign {
                b'\\' => {
                    // The line before had no newline: the diff added one.
                    if last_added {
                        out.pop();
                    }
                }
                b' ' | b'-' => {
                    let line = o[pos];
                    assert!(body == line || (body.strip_suffix(b"\n") == Some(line)));
                    if sign == b' ' {
                        out.extend_from_slice(line);
                        // Kept lines come from the old text: no newline to remove.
                        last_added = false;
                    } else {
                        last_added = false;
                    }
                    pos += 1;
                    continue;
                }
                _ => {
                    out.extend_from_slice(body);
                    last_added = true;
                    continue;
                }
            }
        }
        for line in &o[pos..] {
            out.extend_from_slice(line);
        }
        out
    }

    /// Diffs built from the changes apply to give the new text, and are empty exactly when
    /// the whole-file diff is, on random texts and random non-overlapping changes:
    /// insertions, deletions and replacements at line starts, ends, across lines and at the
    /// end of a text with or without a final newline. Changes that do not describe the new
    /// text fall back to the whole-file diff.
    #[test]
    fn diffs_from_changes_equal_whole_file_diffs() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n.max(1) as u64) as usize
        };
        let pieces: [&[u8]; 6] = [b"a", b"bb", b"\n", b"\r\n", b"#pragma acc x\n", b"\r"];
        let mut fast_path = 0;
        for _ in 0..20_000 {
            let mut old = Vec::new();
            for _ in 0..rnd(30) {
                old.extend_from_slice(pieces[rnd(pieces.len())]);
            }
            let mut changes: Vec<(usize, usize, Vec<u8>)> = Vec::new();
            let mut at = 0;
            while at <= old.len() && changes.len() < 6 {
                let s = at + rnd(old.len() - at + 1);
                if s > old.len() {
                    break;
                }
                let len = rnd((old.len() - s).min(8) + 1);
                let mut text = Vec::new();
                for _ in 0..rnd(3) {
                    text.extend_from_slice(pieces[rnd(pieces.len())]);
                }
                changes.push((s, len, text));
                at = s + len + 1;
            }
            let new = apply_changes(&old, &changes);
            let mut triples: Vec<_> = changes.iter().map(|c| (c.0, c.1, c.2.len())).collect();
            let (o, n) = (lines(&old), lines(&new));
            let ok = ops_of_changes(&old, &new, &o, &n, &mut triples).is_some();
            fast_path += usize::from(ok);
            let fast = unified_diff_of_changes(b"x.c", &old, &new, &mut triples);
            assert_eq!(
                patched(&old, &fast),
                new,
                "{:?} -> {:?}\n{}",
                String::from_utf8_lossy(&old),
                String::from_utf8_lossy(&new),
                String::from_utf8_lossy(&fast)
            );
            let whole = unified_diff(b"x.c", &old, &new);
            assert_eq!(
                fast.is_empty(),
                whole.is_empty(),
                "{}",
                String::from_utf8_lossy(&fast)
            );
        }
        // Changes that give the new text never take the whole-file diff.
        assert_eq!(fast_path, 20_000);
        // Changes that do not give the new text: the whole-file diff.
        let (old, new) = (b"a\nb\nc\n", b"a\nB\nc\nd\n");
        let mut wrong = vec![(2, 1, 1)];
        assert_eq!(
            unified_diff_of_changes(b"x.c", old, new, &mut wrong),
            unified_diff(b"x.c", old, new)
        );
    }

    /// A diff from changes is written as git writes it: three lines of context, the same
    /// bytes as the whole-file diff where both see one replaced line.
    #[test]
    fn diffs_from_changes_are_written_as_git_writes_them() {
        let old: Vec<u8> = (0..20)
            .flat_map(|i| format!("l{i}\n").into_bytes())
            .collect();
        let at = old.windows(4).position(|w| w == b"l10\n").unwrap();
        let new = apply_changes(&old, &[(at, 1, b"X".to_vec())]);
        let mut written = Vec::new();
        write_unified_diff_of_changes(&mut written, b"x.c", &old, &new, &mut [(at, 1, 1)]).unwrap();
        let expected =
            "--- a/x.c\n+++ b/x.c\n@@ -8,7 +8,7 @@\n l7\n l8\n l9\n-l10\n+X10\n l11\n l12\n l13\n";
        assert_eq!(String::from_utf8_lossy(&written), expected);
        assert_eq!(written, unified_diff(b"x.c", &old, &new));
    }

    /// The diffs from changes apply with `git apply` and give the new text.
    #[test]
    fn git_applies_diffs_from_changes() {
        let d = tempfile::tempdir().unwrap();
        let old = b"int a;\n#pragma acc parallel loop\nfor(;;);\n\n#pragma acc kernels\r\n{}\n#pragma acc wait";
        let changes = vec![
            (15, 3, b"omp".to_vec()),
            (19, 13, b"target teams distribute parallel for".to_vec()),
            (0, 0, b"#include <omp.h>\n".to_vec()),
            (51, 3, b"omp".to_vec()),
            (55, 7, b"target\n#pragma omp parallel".to_vec()),
            (75, 8, b"omp taskwait".to_vec()),
        ];
        let new = apply_changes(old, &changes);
        std::fs::write(d.path().join("k.c"), old).unwrap();
        let mut triples: Vec<_> = changes.iter().map(|c| (c.0, c.1, c.2.len())).collect();
        let patch = unified_diff_of_changes(b"k.c", old, &new, &mut triples);
        let o = apply_patch(d.path(), &patch);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(std::fs::read(d.path().join("k.c")).unwrap(), new);
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
