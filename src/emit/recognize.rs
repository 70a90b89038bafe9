//! acc2omp's own `--emit` output read back: each marked hunk gives the original lines it was
//! written from, so that any mode can be run on a file any mode wrote.

use super::hunks::Lines;
use super::render::{ADDED, DUAL_ACC, DUAL_ADDED, GUARD, OMP, WAS};
use crate::lex::conditional;
use std::ops::Range;

/// A hunk of acc2omp's output in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// Its bytes in the file.
    pub range: Range<usize>,
    /// The original lines it stands for.
    pub original: String,
    /// Pieces of `original` found verbatim in the file: (offset in `original`, offset in the
    /// file, length). Positions in the original map back through them.
    pub verbatim: Vec<(usize, usize, usize)>,
}

/// One physical line: its start, the end of its text and the end of its terminator.
#[derive(Clone, Copy)]
struct Line {
    start: usize,
    text_end: usize,
    end: usize,
}

fn lines(src: &str) -> Vec<Line> {
    let mut out = Vec::new();
    let mut start = 0;
    for l in src.split_inclusive('\n') {
        let end = start + l.len();
        let body = l.trim_end_matches('\n');
        let body = body.strip_suffix('\r').unwrap_or(body);
        out.push(Line {
            start,
            text_end: start + body.len(),
            end,
        });
        start = end;
    }
    out
}

/// Every block acc2omp wrote in `src`, in order.
pub fn blocks(src: &str) -> Vec<Block> {
    if !src.contains("acc2omp") {
        return Vec::new();
    }
    let at = Lines::new(src);
    let ls = lines(src);
    let text = |l: &Line| &src[l.start..l.text_end];
    let mut out: Vec<Block> = Vec::new();
    let mut i = 0;
    // First line not in a block yet.
    let mut free = 0;
    while i < ls.len() {
        let l = ls[i];
        let t = text(&l);
        if !at.boundary(l.start) {
            i += 1;
            continue;
        }
        let found = if t == DUAL_ACC || t == DUAL_ADDED {
            dual(src, &ls, i, t == DUAL_ADDED)
        } else if let Some(b) = guard(t, l) {
            Some((b, i + 1))
        } else {
            let tt = t.trim_start_matches([' ', '\t']);
            if tt.starts_with(WAS) || tt.starts_with(ADDED) {
                was(src, &ls, i, free)
            } else if tt.starts_with(OMP) {
                Some(omp(src, &ls, i))
            } else {
                None
            }
        };
        match found {
            Some((b, next)) => {
                free = next;
                out.push(b);
                i = next;
            }
            None => i += 1,
        }
    }
    out
}

/// The text the blocks stand for: `src` with each block replaced by its original.
pub fn original(src: &str, blocks: &[Block]) -> String {
    let mut out = String::with_capacity(src.len());
    let mut pos = 0;
    for b in blocks {
        out.push_str(&src[pos..b.range.start]);
        out.push_str(&b.original);
        pos = b.range.end;
    }
    out.push_str(&src[pos..]);
    out
}

/// `#ifdef _OPENACC // acc2omp` original `#else` translation `#endif`, or `#ifndef
/// _OPENACC // acc2omp` translation `#endif`.
fn dual(src: &str, ls: &[Line], i: usize, added: bool) -> Option<(Block, usize)> {
    let text = |l: &Line| &src[l.start..l.text_end];
    let mut depth = 0usize;
    let mut orig_end = None;
    for (k, l) in ls.iter().enumerate().skip(i + 1) {
        match conditional(text(l)) {
            Some("if" | "ifdef" | "ifndef") => depth += 1,
            Some("endif") if depth > 0 => depth -= 1,
            Some(kw @ ("else" | "endif")) if depth == 0 && text(l) == format!("#{kw}") => {
                if kw == "else" && !added && orig_end.is_none() {
                    orig_end = Some(k);
                    continue;
                }
                if kw == "else" {
                    return None;
                }
                let first = ls[i + 1].start;
                let orig_to = match (added, orig_end) {
                    (true, _) => first,
                    (false, Some(e)) => ls[e].start,
                    (false, None) => l.start,
                };
                let mut original = src[first..orig_to].to_string();
                // The hunk ended the file without a line terminator.
                if l.end == l.text_end {
                    let t = original.trim_end_matches('\n').trim_end_matches('\r').len();
                    original.truncate(t);
                }
                let verbatim = vec![(0, first, original.len())];
                let range = ls[i].start..l.end;
                return Some((
                    Block {
                        range,
                        original,
                        verbatim,
                    },
                    k + 1,
                ));
            }
            _ => {}
        }
    }
    None
}

/// `#if … // acc2omp: <original line>`.
fn guard(t: &str, l: Line) -> Option<Block> {
    let kw = conditional(t)?;
    if kw != "if" && kw != "elif" {
        return None;
    }
    let at = t.find(GUARD)?;
    let orig = &t[at + GUARD.len()..];
    conditional(orig)?;
    let from = l.start + at + GUARD.len();
    Some(Block {
        range: l.start..l.text_end,
        original: orig.to_string(),
        verbatim: vec![(0, from, orig.len())],
    })
}

/// The original line of a `// acc2omp was: ` comment: (indentation, text after the prefix).
fn was_line(t: &str, first: bool) -> Option<(&str, &str, Option<usize>)> {
    let ws = &t[..t.len() - t.trim_start_matches([' ', '\t']).len()];
    let rest = t[ws.len()..].strip_prefix(WAS)?;
    let (n, rest) = match rest.strip_prefix('[') {
        Some(r) if first => {
            let close = r.find(']')?;
            (Some(r[..close].parse().ok()?), &r[close + 1..])
        }
        Some(_) => return None,
        None => (None, rest),
    };
    let rest = rest.strip_prefix(':')?;
    let rest = match rest.strip_prefix(' ') {
        Some(r) => r,
        None if rest.is_empty() => rest,
        None => return None,
    };
    Some((ws, rest, n))
}

/// `omp-acc`: N lines of translation, then the original lines as `// acc2omp was:`
/// comments (or `// acc2omp added[N]`). `free` is the first line no earlier block holds.
fn was(src: &str, ls: &[Line], i: usize, free: usize) -> Option<(Block, usize)> {
    let text = |l: &Line| &src[l.start..l.text_end];
    let t = text(&ls[i]);
    let tt = t.trim_start_matches([' ', '\t']);
    let (n, next, original, verbatim) = if let Some(r) = tt.strip_prefix(ADDED) {
        let n = match r.strip_prefix('[') {
            Some(r) => r.strip_suffix(']')?.parse().ok()?,
            None if r.is_empty() => 1,
            None => return None,
        };
        (n, i + 1, String::new(), Vec::new())
    } else {
        let (_, _, n) = was_line(t, true)?;
        let mut original = String::new();
        let mut verbatim = Vec::new();
        let mut k = i;
        while k < ls.len() {
            let Some((ws, rest, tag)) = was_line(text(&ls[k]), k == i) else {
                break;
            };
            if k > i && tag.is_some() {
                break;
            }
            let l = ls[k];
            verbatim.push((original.len(), l.start, ws.len()));
            original.push_str(ws);
            let rest_at = l.text_end - rest.len();
            verbatim.push((original.len(), rest_at, l.end - rest_at));
            original.push_str(&src[rest_at..l.end]);
            k += 1;
        }
        (n.unwrap_or(1), k, original, verbatim)
    };
    let first = i.checked_sub(n).filter(|&f| f >= free)?;
    Some((
        Block {
            range: ls[first].start..ls[next - 1].end,
            original,
            verbatim,
        },
        next,
    ))
}

/// `acc-omp`: lines of translation as `// acc2omp:` comments after the original.
fn omp(src: &str, ls: &[Line], i: usize) -> (Block, usize) {
    let is = |l: &Line| {
        src[l.start..l.text_end]
            .trim_start_matches([' ', '\t'])
            .starts_with(OMP)
    };
    let mut k = i;
    while k < ls.len() && is(&ls[k]) {
        k += 1;
    }
    let mut start = ls[i].start;
    // The original ended the file without a line terminator: it was given one.
    if ls[k - 1].end == ls[k - 1].text_end && i > 0 {
        start = ls[i - 1].text_end;
    }
    (
        Block {
            range: start..ls[k - 1].end,
            original: String::new(),
            verbatim: Vec::new(),
        },
        k,
    )
}

#[cfg(test)]
mod tests {
    use super::super::Emit;
    use super::super::render::hunk;
    use super::*;

    /// Each mode's rendering of (orig, new), placed in a file, reads back to orig.
    #[test]
    fn every_form_reads_back() {
        let pairs = [
            ("#pragma acc kernels\n", "#pragma omp target\n"),
            ("", "  }\n"),
            ("  acc_init(x);\n", ""),
            ("#ifdef _OPENACC\n", "#ifdef _OPENMP\n"),
            (
                "#if X && !defined(_OPENACC)\r\n",
                "#if X && !defined(_OPENMP)\r\n",
            ),
            (
                "  #pragma acc parallel \\\n\n    copy(a)\n",
                "{ int x;\n#ifndef G\n#define G\n#endif\n  #pragma omp target map(tofrom: a)\n",
            ),
            ("x = acc_get_num_devices(t);", "x = omp_get_num_devices();"),
        ];
        for mode in [Emit::Dual, Emit::OmpAcc, Emit::AccOmp] {
            for (o, n) in pairs {
                let Ok(h) = hunk(mode, o, n, "\n") else {
                    panic!("{mode:?} refused {o:?}");
                };
                let before = "int a;\n";
                let after = if o.ends_with('\n') || o.is_empty() {
                    "b;\n"
                } else {
                    ""
                };
                let file = format!("{before}{h}{after}");
                let bs = blocks(&file);
                assert_eq!(bs.len(), 1, "{mode:?}: {file:?}");
                assert_eq!(
                    original(&file, &bs),
                    format!("{before}{o}{after}"),
                    "{mode:?}: {file:?}"
                );
                for b in &bs {
                    for &(o_at, f_at, len) in &b.verbatim {
                        assert_eq!(b.original[o_at..o_at + len], file[f_at..f_at + len]);
                    }
                }
            }
        }
    }

    /// 9b: a blank line after a marker continued with `\` is in its comment; the marker
    /// after the blank line is a block of its own, found on the first run.
    #[test]
    fn a_marker_after_a_spliced_blank_line_is_found() {
        let s = "#pragma acc parallel loop copy(a[0:n])\n// acc2omp: #pragma omp target \\\n\n// acc2omp: map(tofrom: a[0:n])\nfor (;;);\n";
        let bs = blocks(s);
        assert_eq!(bs.len(), 2, "{bs:?}");
        assert_eq!(
            original(s, &bs),
            "#pragma acc parallel loop copy(a[0:n])\n\nfor (;;);\n"
        );
    }

    #[test]
    fn plain_code_is_not_a_block() {
        let s = "#ifdef _OPENACC\n#pragma acc kernels\n#else\nx;\n#endif\n// acc2omp\n";
        assert!(blocks(s).is_empty());
    }
}
