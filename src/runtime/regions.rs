//! Where a runtime call may not become an OpenMP runtime call (`runtime-in-region`): OpenMP
//! 5.0 forbids (and GCC 12 rejects) OpenMP API calls strictly nested in `teams` and inside
//! `loop` regions. The regions are read from the file as the directive translation leaves it
//! (its edits applied): each call is judged by the OpenMP constructs that will enclose it,
//! whatever the plans chose (`target teams`, `target`, a `parallel` wrapper), and OpenMP
//! already in the file counts as written, so the output is a fixed point. An OpenACC compute
//! construct left unchanged counts as the worst case, a `teams` region.

use crate::edit::{Edit, apply};
use crate::lex::{TokKind, lex, string_content};
use crate::profile::Profile;
use crate::scan::pragma_wrappers;
use crate::structure::Structure;
use std::ops::Range;

pub(super) struct Regions {
    /// Bodies of `teams` regions (offsets in the translated text).
    teams: Vec<Range<usize>>,
    /// Bodies of `distribute`/`parallel` regions: calls there are not directly in `teams`.
    nested: Vec<Range<usize>>,
    /// Bodies of `loop` regions.
    loops: Vec<Range<usize>>,
    /// The directive translation's edits, sorted: original offsets → translated offsets.
    shifts: Vec<(usize, isize)>,
}

impl Regions {
    /// `site_edits`: the directive translation's edits of `src`.
    pub(super) fn new(src: &str, site_edits: &[Edit], profile: Profile) -> Self {
        let (out, shifts) = match apply(src, site_edits) {
            Ok(out) => {
                let mut e: Vec<&Edit> = site_edits.iter().collect();
                e.sort_by_key(|e| (e.range.start, e.range.end));
                let shifts = e
                    .iter()
                    .map(|e| (e.range.end, e.text.len() as isize - e.range.len() as isize))
                    .collect();
                (out, shifts)
            }
            // Overlapping edits leave the file unchanged.
            Err(_) => (src.to_string(), Vec::new()),
        };
        let mut r = Regions {
            teams: Vec::new(),
            nested: Vec::new(),
            loops: Vec::new(),
            shifts,
        };
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
                Some("omp") => r.add(words[1..].iter().map(String::as_str), stmt.bytes),
                Some("acc") => {
                    let compute = matches!(
                        words.get(1).map(String::as_str),
                        Some("parallel" | "kernels")
                    );
                    if compute {
                        // Stays OpenACC: assume the worst, a `teams` region.
                        r.teams.push(tok.start..stmt.bytes.end);
                        if profile == Profile::Loop {
                            r.loops.push(stmt.bytes);
                        }
                    }
                }
                _ => {}
            }
        }
        r
    }

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

    /// Whether a runtime call at `at` (an offset of the original text, outside every
    /// directive edit) would be directly inside `teams` or inside `loop`.
    pub(super) fn restricted(&self, at: usize) -> bool {
        let shift: isize = self
            .shifts
            .iter()
            .take_while(|(end, _)| *end <= at)
            .map(|(_, d)| d)
            .sum();
        let at = (at as isize + shift).max(0) as usize;
        self.loops.iter().any(|l| l.contains(&at))
            || self.teams.iter().any(|t| {
                t.contains(&at)
                    && !self
                        .nested
                        .iter()
                        .any(|n| n.contains(&at) && n.start >= t.start)
            })
    }
}

/// The words of a `#pragma omp|acc …` line, a `_Pragma("omp|acc …")` or a pragma wrapper
/// `P(omp|acc …)` at `toks[i]`, and the index of its last token.
fn directive_words(
    structure: &Structure,
    wrappers: &[String],
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
                &src[lit.start + content.start..lit.start + content.end],
                i + 3,
            )
        }
        TokKind::Ident if wrappers.iter().any(|w| w == t.text(src)) => {
            if toks.get(i + 1)?.text(src) != "(" {
                return None;
            }
            let close = structure.matching(i + 1)? - 1;
            let body = toks.get(i + 2..close)?;
            (&src[body.first()?.start..body.last()?.end], close)
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
