//! What translating one file's text gives: the new text, its diagnostics and its edits.

use crate::diag::Diagnostic;
use crate::facts::Mode;
use crate::fix::TextFix;
use crate::source::LineIndex;

#[derive(Debug, Clone)]
pub struct Outcome {
    pub text: String,
    pub diagnostics: Vec<Diagnostic>,
    /// OpenACC directive sites found.
    pub sites: usize,
    pub index: LineIndex,
    /// How the semantic facts were obtained (None: no OpenACC, nothing analyzed).
    pub semantic: Option<Mode>,
    /// The edits, grouped by construct; empty when the file is left unchanged.
    pub fixes: Vec<TextFix>,
    /// Directives whose facts came from syntax (see `FileFacts::fell_back`).
    pub fell_back: usize,
    /// The translation calls OpenMP device-memory routines (`omp_target_*`), which need the
    /// offloading runtime to link.
    pub offload_routines: bool,
}

impl Outcome {
    pub fn changed(&self, original: &str) -> bool {
        self.text != original
    }
}
