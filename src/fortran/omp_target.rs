//! The OpenMP `target` regions a file already has (`!$omp target … !$omp end target`, and
//! combined `target … do` constructs over the `do` loop after them). A file written for both
//! models can hold an `!$acc` construct inside one: `!$omp` lines are comments under
//! `-fopenacc`, but translated, the construct would become a target region inside a target
//! region, whose behaviour OpenMP leaves unspecified.

use super::Front;
use super::lines::Sentinel;
use super::structure::Applies;
use crate::diag::Diagnostic;
use crate::directive::Directive;
use crate::rules::id;
use std::ops::Range;

/// Words of the OpenMP directive names read here.
const WORDS: &[&str] = &[
    "end",
    "target",
    "teams",
    "distribute",
    "parallel",
    "do",
    "simd",
    "loop",
    "workshare",
    "data",
    "enter",
    "exit",
    "update",
];

/// Target constructs that are not regions of device code.
const NOT_REGIONS: &[&str] = &[
    "target data",
    "target enter data",
    "target exit data",
    "target update",
];

/// A target region: its bytes and the `!$omp` site that opens it.
pub struct TargetRegion {
    pub bytes: Range<usize>,
    pub site: usize,
}

/// An OpenMP construct of the file: its bytes (to its `end` directive, or over the `do` loop
/// after a loop construct), its directive name in lower case, the `!$omp` site opening it.
pub struct OmpConstruct {
    pub bytes: Range<usize>,
    pub name: String,
    pub site: usize,
}

impl OmpConstruct {
    /// Whether the directive name has the word `w` (`teams` in `target teams`).
    pub fn has(&self, w: &str) -> bool {
        self.name.split(' ').any(|x| x == w)
    }
}

/// The directive name of an `!$omp` site's text, lower case (`target teams`, `end target`).
fn name(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| c.is_whitespace() || c == ',' || c == '(')
        .filter(|w| !w.is_empty())
        .take_while(|w| WORDS.contains(w))
        .collect();
    words.join(" ")
}

/// The file's OpenMP constructs (those whose name is made of [`WORDS`]), by start.
pub fn constructs(front: &Front) -> Vec<OmpConstruct> {
    let mut out: Vec<OmpConstruct> = Vec::new();
    // Open constructs: (name, site, index in `out` for a loop construct already recorded).
    let mut open: Vec<(String, usize, Option<usize>)> = Vec::new();
    for (k, s) in front.sites.iter().enumerate() {
        if s.sentinel != Sentinel::Omp {
            continue;
        }
        let n = name(&s.text);
        if let Some(closed) = n.strip_prefix("end ") {
            if let Some(p) = open.iter().rposition(|(o, ..)| o == closed) {
                let (name, opener, recorded) = open.remove(p);
                let bytes = front.sites[opener].span.start..s.span.end;
                match recorded {
                    Some(r) => out[r].bytes.end = out[r].bytes.end.max(bytes.end),
                    None => out.push(OmpConstruct {
                        bytes,
                        name,
                        site: opener,
                    }),
                }
            }
            continue;
        }
        if n.is_empty() {
            continue;
        }
        let on_loop = n
            .rsplit(' ')
            .next()
            .is_some_and(|w| matches!(w, "do" | "simd" | "loop" | "distribute"));
        let recorded = if on_loop {
            loop_end(front, s.span.end).map(|end| {
                out.push(OmpConstruct {
                    bytes: s.span.start..end,
                    name: n.clone(),
                    site: k,
                });
                out.len() - 1
            })
        } else {
            None
        };
        open.push((n, k, recorded));
    }
    out.sort_by_key(|r| r.bytes.start);
    out
}

/// The file's OpenMP target regions, in the order their openers appear.
pub fn target_regions(front: &Front) -> Vec<TargetRegion> {
    constructs(front)
        .into_iter()
        .filter(|c| c.name.starts_with("target") && !NOT_REGIONS.contains(&c.name.as_str()))
        .map(|c| TargetRegion {
            bytes: c.bytes,
            site: c.site,
        })
        .collect()
}

/// The end of the `do` loop that starts first after byte `from`.
fn loop_end(front: &Front, from: usize) -> Option<usize> {
    let stmts = &front.lexed.stmts;
    let l = front
        .structure
        .loops
        .iter()
        .filter(|l| stmts[l.stmt()].span().start >= from)
        .min_by_key(|l| stmts[l.stmt()].span().start)?;
    Some(stmts[l.end()?].span().end)
}

/// Leave every `!$acc` directive but `atomic` inside an OpenMP target region unchanged, with
/// the reason on the directive that opens its construct (an `end` directive inside a region
/// whose opener is outside takes the opener with it). `acc_of[i]` is the front end's site of
/// seam site `i`.
pub fn refuse_inside(
    front: &Front,
    acc_of: &[usize],
    dirs: &mut [Option<Directive>],
    diagnostics: &mut Vec<Diagnostic>,
) {
    let regions = target_regions(front);
    if regions.is_empty() {
        return;
    }
    // (seam site to leave, the region's opener line, an end directive whose opener is not
    // inside a region itself)
    let mut refused: Vec<(usize, usize, bool)> = Vec::new();
    let mut direct: Vec<usize> = Vec::new();
    for (i, d) in dirs.iter().enumerate() {
        let site = &front.sites[acc_of[i]];
        let Some(r) = regions
            .iter()
            .find(|r| r.bytes.start <= site.span.start && site.span.end <= r.bytes.end)
        else {
            continue;
        };
        // An atomic construct is one inside a target region too.
        if d.as_ref()
            .is_none_or(|x| matches!(x.name.as_str(), "atomic" | "end atomic"))
        {
            continue;
        }
        let line = front.lines.line_of(front.sites[r.site].span.start) + 1;
        direct.push(i);
        refused.push((i, line, false));
        if let Some(Applies::End {
            opener: Some(opener),
        }) = front.structure.regions.get(acc_of[i]).map(|g| &g.applies)
            && let Some(o) = acc_of.iter().position(|&k| k == *opener)
        {
            refused.push((o, line, false));
            refused.push((i, line, true));
        }
    }
    for r in &mut refused {
        // Said on the end directive only when its opener is outside every region.
        r.2 &= !direct.iter().any(|&o| is_opener_of(front, acc_of, o, r.0));
    }
    refused.sort();
    refused.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        if same {
            kept.2 |= later.2;
        }
        same
    });
    for (i, line, end_alone) in refused {
        let Some(dir) = dirs[i].take() else { continue };
        if dir.name.starts_with("end ") {
            if end_alone {
                diagnostics.push(Diagnostic::new(
                    front.sites[acc_of[i]].span.start,
                    id::NOT_TRANSLATED,
                    format!(
                        "'acc {}' lies inside the OpenMP target region of line {line} while its construct starts outside it; the construct is left unchanged",
                        dir.name
                    ),
                ));
            }
            continue;
        }
        diagnostics.push(Diagnostic::new(
            front.sites[acc_of[i]].span.start,
            id::NOT_TRANSLATED,
            format!(
                "'acc {}' lies inside the OpenMP target region of line {line}, or its construct ends inside it: translated, it would be an OpenMP device directive inside a target region, which OpenMP leaves unspecified; the directive is left unchanged",
                dir.name
            ),
        ));
    }
}

/// Whether seam site `o` opens the construct that seam site `end` ends.
fn is_opener_of(front: &Front, acc_of: &[usize], o: usize, end: usize) -> bool {
    matches!(
        front.structure.regions.get(acc_of[end]).map(|g| &g.applies),
        Some(Applies::End { opener: Some(k) }) if *k == acc_of[o]
    )
}
