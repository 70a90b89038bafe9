//! Where a runtime call may not become an OpenMP runtime call (`runtime-in-region`).

use crate::lex::{TokKind, lex_range};
use crate::profile::Profile;
use crate::translate::{Action, Options, Plan, Unit};
use std::ops::Range;

/// Where a runtime call may not become an OpenMP runtime call: OpenMP 5.0 forbids (and
/// GCC 12 rejects) OpenMP API calls strictly nested in `teams` and inside `loop` regions.
/// OpenACC constructs count as the OpenMP their plans emit, and OpenMP constructs already in
/// the file count as written, so the output is a fixed point.
pub(super) struct Regions {
    /// Bodies of `teams` regions.
    pub(super) teams: Vec<Range<usize>>,
    /// Bodies of `distribute`/`parallel` regions: calls there are not directly in `teams`.
    pub(super) nested: Vec<Range<usize>>,
    /// Bodies of `loop` regions.
    pub(super) loops: Vec<Range<usize>>,
}

impl Regions {
    pub(super) fn new(unit: &Unit, plans: &[Plan], opts: &Options) -> Self {
        let mut r = Regions {
            teams: Vec::new(),
            nested: Vec::new(),
            loops: Vec::new(),
        };
        for (c, plan) in plans.iter().enumerate().take(unit.sites.len()) {
            let (Some(d), Some(stmt)) = (unit.dir(c), &unit.stmts[c]) else {
                continue;
            };
            match &plan.action {
                Action::Rewrite(rw) => r.add(rw.name.split(' '), stmt.bytes.clone()),
                Action::Unchanged if d.compute_kind().is_some_and(|k| k != "serial") => {
                    // Stays OpenACC: assume the worst, a `teams` region.
                    r.teams.push(unit.sites[c].span.start..stmt.bytes.end);
                    if opts.profile == Profile::Loop {
                        r.loops.push(stmt.bytes.clone());
                    }
                }
                _ => {}
            }
        }
        let src = unit.src;
        for (ti, tok) in unit.structure.toks.iter().enumerate() {
            if tok.kind != TokKind::PpLine {
                continue;
            }
            let inner = lex_range(src, tok.start + 1..tok.end, false);
            let words: Vec<&str> = inner.iter().map(|t| t.text(src)).collect();
            if let ["pragma", "omp", rest @ ..] = words.as_slice()
                && let Some(stmt) = unit.structure.stmt_after(ti)
            {
                r.add(rest.iter().copied(), stmt.bytes);
            }
        }
        r
    }

    /// Record the body of the OpenMP directive named by `words` (clauses may follow).
    pub(super) fn add<'w>(&mut self, words: impl Iterator<Item = &'w str>, body: Range<usize>) {
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

    pub(super) fn restricted(&self, at: usize) -> bool {
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
