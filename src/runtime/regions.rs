//! Where a runtime call may not become an OpenMP runtime call (`runtime-in-region`): OpenMP
//! 5.0 forbids (and GCC 12 rejects) OpenMP API calls strictly nested in `teams` and inside
//! `loop` regions. The regions are read from the file as the directive translation leaves it
//! (its edits applied): each call is judged by the OpenMP constructs that will enclose it,
//! whatever the plans chose (`target teams`, `target`, a `parallel` wrapper), and OpenMP
//! already in the file counts as written, so the output is a fixed point. An OpenACC compute
//! construct left unchanged counts as the worst case, a `teams` region.

use crate::edit::{Edit, apply};
use crate::intervals::Nested;
use crate::lex::{TokKind, lex, string_content};
use crate::profile::Profile;
use crate::scan::pragma_wrappers;
use crate::structure::Structure;
use std::ops::Range;

pub(super) struct Regions {
    /// Bodies of `teams` regions (offsets in the translated text).
    teams: Nested,
    /// Bodies of `distribute`/`parallel` regions: calls there are not directly in `teams`.
    nested: Nested,
    /// Bodies of `loop` regions.
    loops: Nested,
    /// The directive translation's edits, sorted: original offsets → translated offsets,
    /// as (end of an edit, total growth of the text up to it).
    shifts: Vec<(usize, isize)>,
}

/// The regions while they are read.
#[derive(Default)]
struct Found {
    teams: Vec<Range<usize>>,
    nested: Vec<Range<usize>>,
    loops: Vec<Range<usize>>,
}

impl Regions {
    /// `site_edits`: the directive translation's edits of `src`.
    pub(super) fn new(src: &str, site_edits: &[Edit], profile: Profile) -> Self {
        let (out, shifts) = match apply(src, site_edits) {
            Ok(out) => {
                let mut e: Vec<&Edit> = site_edits.iter().collect();
                e.sort_by_key(|e| (e.range.start, e.range.end));
                let mut total = 0isize;
                let shifts = e
                    .iter()
                    .map(|e| {
                        total += e.text.len() as isize - e.range.len() as isize;
                        (e.range.end, total)
                    })
                    .collect();
                (out, shifts)
            }
            // Overlapping edits leave the file unchanged.
            Err(_) => (src.to_string(), Vec::new()),
        };
        let mut r = Found::default();
        let toks = lex(&out);
        let structure = Structure::new(&out, &toks, &[]);
        let wrappers = pragma_wrappers(&out, &toks);
        for (ti, tok) in toks.iter().enumerate() {
            let Some((words, last)) = directive_words(&structure, &wrappers, ti) else {
                continue;
            };
            let Some(stmt) = structure.stmt_after(last) else {
                continue;
            };
            match words.first().map(String::as_str) {
                Some("omp") => r.add(words[1..].iter().map(String::as_str), stmt.bytes()),
                Some("acc") => {
                    let compute = matches!(
                        words.get(1).map(String::as_str),
                        Some("parallel" | "kernels")
                    );
                    if compute {
                        // Stays OpenACC: assume the worst, a `teams` region.
                        r.teams.push(tok.start()..stmt.bytes().end);
                        if profile == Profile::Loop {
                            r.loops.push(stmt.bytes());
                        }
                    }
                }
                _ => {}
            }
        }
        Regions {
            teams: Nested::new(r.teams),
            nested: Nested::new(r.nested),
            loops: Nested::new(r.loops),
            shifts,
        }
    }

    /// Whether a runtime call at `at` (an offset of the original text, outside every
    /// directive edit) would be directly inside `teams` or inside `loop`: inside a `teams`
    /// body with no `distribute`/`parallel` body that starts within it around the call.
    pub(super) fn restricted(&self, at: usize) -> bool {
        let k = self.shifts.partition_point(|(end, _)| *end <= at);
        let shift = k.checked_sub(1).map_or(0, |k| self.shifts[k].1);
        let at = (at as isize + shift).max(0) as usize;
        if self.loops.contains(at) {
            return true;
        }
        // The latest-starting teams body around the call is the one to ask about: a
        // distribute/parallel body inside an earlier teams body may not be inside it.
        match (self.teams.innermost(at), self.nested.innermost(at)) {
            (Some((t, _)), Some((n, _))) => n.start < t.start,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }
}

impl Found {
    /// Record the body of the OpenMP directive named by `words` (clauses may follow).
    fn add<'w>(&mut self, words: impl Iterator<Item = &'w str>, body: Range<usize>) {
        let name: Vec<&str> = words
            .take_while(|w| {
                matches!(
                    *w,
                    "target" | "teams" | "distribute" | "parallel" | "for" | "simd" | "loop"
                )
            })
            .collect();
        let has = |w: &str| name.contains(&w);
        if has("loop") {
            self.loops.push(body);
        } else if has("distribute") || has("parallel") {
            self.nested.push(body);
        } else if has("teams") {
            self.teams.push(body);
        }
    }
}

/// The words of a `#pragma omp|acc …` line, a `_Pragma("omp|acc …")` or a pragma wrapper
/// `P(omp|acc …)` at `toks[i]`, and the index of its last token.
fn directive_words(
    structure: &Structure,
    wrappers: &crate::hash::HashSet<String>,
    i: usize,
) -> Option<(Vec<String>, usize)> {
    let (src, toks) = (structure.src, structure.toks);
    let t = &toks[i];
    let (text, last) = match t.kind {
        TokKind::PpLine => {
            let body = t.text(src)[1..].trim_start().strip_prefix("pragma")?;
            (body, i)
        }
        TokKind::Ident if t.text(src) == "_Pragma" => {
            let [open, lit, close] = toks.get(i + 1..i + 4)? else {
                return None;
            };
            if open.text(src) != "(" || close.text(src) != ")" {
                return None;
            }
            let (content, false) = string_content(lit.text(src))? else {
                return None;
            };
            (
                &src[lit.start() + content.start..lit.start() + content.end],
                i + 3,
            )
        }
        TokKind::Ident if wrappers.contains(t.text(src)) => {
            if toks.get(i + 1)?.text(src) != "(" {
                return None;
            }
            let close = structure.matching(i + 1)? - 1;
            let body = toks.get(i + 2..close)?;
            (&src[body.first()?.start()..body.last()?.end()], close)
        }
        _ => return None,
    };
    let words: Vec<String> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    matches!(words.first().map(String::as_str), Some("omp" | "acc")).then_some((words, last))
}
