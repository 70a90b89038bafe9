//! What translating one file's text gives: the new text, its diagnostics and its edits.

use crate::diag::Diagnostic;
use crate::facts::Mode;
use crate::fix::TextFix;
use crate::source::LineIndex;
use std::ops::Range;

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
    /// What besides the text the facts were read from (headers).
    pub inputs: crate::facts::Inputs,
}

impl Outcome {
    pub fn changed(&self, original: &str) -> bool {
        self.text != original
    }
}

/// What the shared phases make of one file before its text is built: the edits, their fixes
/// and the diagnostics (severities not yet rated, not yet sorted).
pub struct Translated {
    /// Every edit of the file, each in the fix it belongs to.
    pub fixes: Vec<TextFix>,
    pub diagnostics: Vec<Diagnostic>,
    /// The sites' spans, in file order (where a diagnostic about a directive ends).
    pub spans: Vec<Range<usize>>,
    pub fell_back: usize,
    pub semantic: Option<Mode>,
    pub offload_routines: bool,
    pub inputs: crate::facts::Inputs,
}
