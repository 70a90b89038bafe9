//! Helper definitions the translation calls (`acc2omp_queue`, `acc2omp_wait`, …), defined
//! once in each file that uses them.

use super::Cx;
use super::text::after_eol;
use crate::edit::Edit;
use crate::lex::{TokKind, Token, lex_range};
use crate::translate::queues::{queues_definition, wait_fn_definition};

impl Cx<'_> {
    /// The queues' dependence objects (and the wait helper), defined once in a file that uses
    /// them: after its last unconditional `#include` before the first use, else before its
    /// first line of code.
    pub(super) fn queue_definitions(&mut self, toks: &[Token]) -> Vec<Edit> {
        let src = self.src;
        let Some(first) = self.queues_at else {
            return Vec::new();
        };
        let mut text = String::new();
        if !src.contains("ACC2OMP_QUEUES") {
            text.push_str(&queues_definition(self.eol));
        }
        if self.wait_fn_at.is_some() && !src.contains("ACC2OMP_WAIT") {
            text.push_str(&wait_fn_definition(self.eol));
        }
        if text.is_empty() {
            return Vec::new();
        }
        // The last #include outside conditionals before the first use.
        let mut depth = 0usize;
        let mut last_include = None;
        for t in toks.iter().take_while(|t| t.start < first) {
            if t.kind != TokKind::PpLine {
                continue;
            }
            let inner = lex_range(src, t.start + 1..t.end, false);
            match inner.first().map(|w| w.text(src)) {
                Some("if" | "ifdef" | "ifndef") => depth += 1,
                Some("endif") => depth = depth.saturating_sub(1),
                Some("include") if depth == 0 => last_include = Some(t.end),
                _ => {}
            }
        }
        let pos = match last_include {
            Some(end) => {
                let p = after_eol(src, end);
                if p == end {
                    // The include ends the file without a line break.
                    text.insert_str(0, self.eol);
                }
                p
            }
            None => {
                let Some(t) = toks.first() else {
                    return Vec::new();
                };
                let ls = self.index.line_start(t.start);
                if src[ls..t.start].trim_matches([' ', '\t']).is_empty() {
                    ls
                } else {
                    t.start
                }
            }
        };
        self.diag(
            first,
            "async-queues",
            "OpenACC async queues become OpenMP dependences on 'acc2omp_queue', which is defined once in this file (a weak definition shared by every translation unit)".into(),
        );
        vec![Edit::insert(pos, text)]
    }
}
