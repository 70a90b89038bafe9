//! `--emit MODE`: how the translation is written into the file.
//!
//! The engine's edits are gathered into hunks of whole lines (`hunks`); each mode writes a
//! hunk's original lines and their translation in its own form (`render`): `omp` the
//! translation alone, `omp-acc` the translation then the original as `// acc2omp was:`
//! comments, `acc-omp` the original then the translation as `// acc2omp:` comments, `dual`
//! both under `#ifdef _OPENACC // acc2omp` … `#else` … `#endif`. Every form is marked, and
//! read back (`recognize`) before a file is translated: a file any mode wrote is migrated
//! from the original it stands for, so each mode is a fixed point and `--emit omp` on a
//! `dual` file gives what `--emit omp` gives on the original.

use crate::rules::id;

mod hunks;
mod recognize;
mod render;

use crate::diag::Diagnostic;
use crate::edit::{Edit, apply};
use crate::fix::TextFix;
use crate::options::Emit;
use crate::outcome::Outcome;
use crate::source::{LineIndex, line_ending};
use recognize::Block;
use render::Refusal;
use std::borrow::Cow;
use std::ops::Range;

/// A file as acc2omp reads it: its own `--emit` output replaced by the original lines.
pub struct Own<'a> {
    blocks: Vec<Block>,
    /// Where each block's original lies in `original`.
    images: Vec<Range<usize>>,
    /// How much longer the file is than the original before each block.
    growth: Vec<isize>,
    pub original: Cow<'a, str>,
}

pub fn read_back(src: &str) -> Own<'_> {
    let blocks = recognize::blocks(src);
    if blocks.is_empty() {
        return Own {
            blocks,
            images: Vec::new(),
            growth: vec![0],
            original: Cow::Borrowed(src),
        };
    }
    let mut images = Vec::with_capacity(blocks.len());
    let mut growth = Vec::with_capacity(blocks.len() + 1);
    let mut shift = 0isize;
    for b in &blocks {
        growth.push(shift);
        let start = (b.range.start as isize - shift) as usize;
        images.push(start..start + b.original.len());
        shift += b.range.len() as isize - b.original.len() as isize;
    }
    growth.push(shift);
    Own {
        original: Cow::Owned(recognize::original(src, &blocks)),
        blocks,
        images,
        growth,
    }
}

impl Own<'_> {
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The file offset of offset `o` of the original.
    pub fn to_file(&self, o: usize) -> usize {
        let k = self
            .images
            .partition_point(|r| r.end <= o && !(r.is_empty() && r.end == o));
        if let Some(img) = self.images.get(k).filter(|r| r.start <= o && o < r.end) {
            let b = &self.blocks[k];
            let rel = o - img.start;
            return b
                .verbatim
                .iter()
                .find(|(at, _, len)| *at <= rel && rel < at + len)
                .map_or(b.range.start, |(at, f, _)| f + rel - at);
        }
        (o as isize + self.growth[k]) as usize
    }
}

/// `out`, the translation of `own.original`, written in `mode` over the file `src`.
pub fn write(src: &str, own: &Own, out: Outcome, mode: Emit) -> Outcome {
    let o: &str = &own.original;
    let edits: Vec<Edit> = out.fixes.iter().flat_map(|f| f.edits.clone()).collect();
    let lines = hunks::Lines::new(o);
    let mut diagnostics = out.diagnostics.clone();
    let eol = line_ending(o);
    let mut refused = None;
    let mut rendered: Vec<(Range<usize>, String)> = Vec::new();
    match hunks::hunks(&lines, &edits, &out.text) {
        Ok(hs) => {
            for h in hs {
                let orig = &o[h.range.clone()];
                match render::hunk(mode, orig, &h.new, eol) {
                    Ok(t) => rendered.push((h.range, t)),
                    Err(Refusal::Guard) => diagnostics.push(Diagnostic::new(
                        h.range.start,
                        id::EMIT_CONDITION,
                        "this condition on _OPENACC spans lines: in dual output it is left testing _OPENACC, so OpenMP builds take the branch they took before the migration; join its lines and run again",
                    )),
                    Err(Refusal::Unbalanced) => {
                        refused = Some((h.range.start, "#if and #endif lines a rewrite would separate"))
                    }
                }
            }
        }
        Err(why) => refused = Some((0, why)),
    }
    if let Some((at, why)) = refused {
        return refuse(src, own, out, diagnostics, at, mode, why);
    }
    // Groups: hunks and the blocks read back that touch them, as ranges of the original.
    let mut items: Vec<Range<usize>> = rendered.iter().map(|(r, _)| r.clone()).collect();
    items.extend(own.images.iter().cloned());
    items.sort_by_key(|r| (r.start, r.end));
    let mut groups: Vec<Range<usize>> = Vec::new();
    for r in items {
        match groups.last_mut() {
            Some(g) if r.start <= g.end => g.end = g.end.max(r.end),
            _ => groups.push(r),
        }
    }
    let mut owned: Vec<(usize, usize)> = (out.fixes.iter().enumerate())
        .flat_map(|(k, f)| f.edits.iter().map(move |e| (e.range.start, k)))
        .collect();
    owned.sort_unstable();
    let mut fixes = Vec::new();
    let (mut h, mut b, mut shift, mut owner) = (0, 0, 0isize, 0);
    let delta = |k: usize| own.blocks[k].range.len() as isize - own.images[k].len() as isize;
    for g in groups {
        while b < own.images.len() && own.images[b].end <= g.start && own.images[b].start < g.start
        {
            shift += delta(b);
            b += 1;
        }
        let fs = (g.start as isize + shift) as usize;
        while b < own.images.len() && own.images[b].start >= g.start && own.images[b].end <= g.end {
            shift += delta(b);
            b += 1;
        }
        let fe = (g.end as isize + shift) as usize;
        let mut text = String::new();
        let mut p = g.start;
        while h < rendered.len() && rendered[h].0.end <= g.end {
            let (r, t) = &rendered[h];
            text.push_str(&o[p..r.start]);
            text.push_str(t);
            p = r.end;
            h += 1;
        }
        text.push_str(&o[p..g.end]);
        match src.get(fs..fe) {
            Some(t) if t == text => continue,
            Some(_) => {}
            None => return refuse(src, own, out, diagnostics, 0, mode, "offsets lost"),
        }
        // The constructs whose edits fall in this group (every edit lies in one group).
        let mut inside: Vec<&TextFix> = Vec::new();
        while owner < owned.len() && owned[owner].0 <= g.end {
            let f = &out.fixes[owned[owner].1];
            if !inside.iter().any(|x| std::ptr::eq(*x, f)) {
                inside.push(f);
            }
            owner += 1;
        }
        let messages: Vec<&str> = inside.iter().map(|f| f.message.as_str()).collect();
        let message = if messages.is_empty() {
            "acc2omp's earlier output read back".to_string()
        } else {
            messages.join("; ")
        };
        let offset = inside
            .iter()
            .map(|f| f.offset)
            .min()
            .map_or(fs, |x| own.to_file(x));
        fixes.push(TextFix {
            offset,
            span: fs..fe,
            message,
            edits: vec![Edit::replace(fs..fe, text)],
        });
    }
    let edits: Vec<Edit> = fixes.iter().flat_map(|f| f.edits.clone()).collect();
    let Ok(text) = apply(src, &edits) else {
        return refuse(src, own, out, diagnostics, 0, mode, "overlapping edits");
    };
    // What this mode writes must read back as the original (an unterminated comment, for
    // one, would swallow the markers).
    if mode != Emit::Omp && read_back(&text).original != o {
        return refuse(
            src,
            own,
            out,
            diagnostics,
            0,
            mode,
            "its output would not read back",
        );
    }
    finish(src, own, out, diagnostics, fixes, text)
}

/// The file left unchanged, with an `emit-refused` error at `at` (an offset of the original).
fn refuse(
    src: &str,
    own: &Own,
    out: Outcome,
    mut diagnostics: Vec<Diagnostic>,
    at: usize,
    mode: Emit,
    why: &str,
) -> Outcome {
    diagnostics.push(Diagnostic::new(
        at,
        id::EMIT_REFUSED,
        format!(
            "--emit {} cannot write this file ({why}); it is left unchanged",
            mode.name()
        ),
    ));
    finish(src, own, out, diagnostics, Vec::new(), src.to_string())
}

/// The outcome in the file's offsets.
fn finish(
    src: &str,
    own: &Own,
    out: Outcome,
    mut diagnostics: Vec<Diagnostic>,
    fixes: Vec<TextFix>,
    text: String,
) -> Outcome {
    for d in &mut diagnostics {
        d.offset = own.to_file(d.offset);
        d.end = d.end.map(|e| own.to_file(e).max(d.offset));
    }
    diagnostics.sort_by_key(|d| d.offset);
    Outcome {
        index: LineIndex::new(src),
        text,
        diagnostics,
        fixes: crate::fix::group(fixes),
        ..out
    }
}
