//! The OpenACC profiling interface (acc_prof.h: `acc_register_library`, `acc_prof_register`,
//! the `acc_ev_*` events) has no OpenMP counterpart: OpenMP tools use OMPT, whose events and
//! registration differ. A file that uses it gets one error, at its first use, and everything
//! of it stays as written.

use super::Cx;
use super::names::is_profiling_name;
use crate::lex::{TokKind, Token};
use crate::rules::id;

impl Cx<'_> {
    /// Report the profiling interface once per file, and mark its names as reported.
    /// Every name looked for, and acc_prof.h, has `acc_` in it: only the tokens `acc`
    /// (indexes in `toks`, see `text::acc_tokens`) are looked at.
    pub(super) fn profiling(&mut self, toks: &[Token], acc: &[usize]) {
        let src = self.src;
        let mut first = None;
        let mut uses = 0usize;
        for t in acc.iter().map(|&k| &toks[k]) {
            let hit = match t.kind {
                TokKind::Ident => is_profiling_name(t.text(src)),
                TokKind::PpLine => {
                    let inner = self.pp.inner(src, t);
                    let words: Vec<&str> = inner.iter().map(|w| w.text(src)).collect();
                    match words.as_slice() {
                        ["include", rest @ ..] => rest.concat().contains("acc_prof.h"),
                        ["define", ..] => words.iter().any(|w| is_profiling_name(w)),
                        _ => false,
                    }
                }
                _ => false,
            };
            if hit {
                first.get_or_insert(t.start());
                uses += 1;
                self.handled.insert(t.range());
            }
        }
        if let Some(at) = first {
            self.diag(
                at,
                id::RUNTIME_PROFILING,
                format!(
                    "this file uses the OpenACC profiling interface ({uses} use(s): acc_prof.h, acc_register_library, acc_prof_register, acc_ev_* events), which OpenMP does not have: OpenMP tools use OMPT (omp-tools.h: ompt_start_tool, and callbacks such as ompt_callback_target_emi, ompt_callback_target_data_op_emi, ompt_callback_target_submit_emi), whose events and registration differ; port the tool by hand; it is left unchanged"
                ),
            );
        }
    }
}
