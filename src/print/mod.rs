//! Plans to edits: a language's printer spells the OpenMP a translation decided
//! ([`crate::intent`]) in the file's syntax, changing only the bytes it must (the directive's
//! own words and clauses; lines it adds), so that comments, continuations and layout stay.
//! C and C++: `crate::c::print`.

pub mod operators;

use crate::diag::Diagnostic;
use crate::edit::Edit;
use crate::intent::Plan;
use crate::unit::Unit;

/// Writes plans in one language.
pub trait Printer: Sync + Send {
    /// The edits that carry out the plan of site `i` of `u` (none when it is unchanged).
    /// Every site's plan is given: a directive that closes another (`Action::Close`) is
    /// written from what that one became.
    fn site_edits(&self, u: &Unit, plans: &[Plan], i: usize) -> Vec<Edit>;

    /// Before printing: the plans this printer cannot write yet are left unchanged, each
    /// with a diagnostic saying why (never a partial translation).
    fn review(&self, _u: &Unit, _plans: &mut [Plan]) -> Vec<Diagnostic> {
        Vec::new()
    }

    /// The file offset of a check's diagnostic at `offset` about site `i`: a language
    /// whose directive text is joined from several lines (Fortran) places a clause's
    /// diagnostic in that text. C and C++ diagnostics are at file offsets already.
    fn locate(&self, _u: &Unit, _i: usize, offset: usize) -> usize {
        offset
    }

    /// Whether this printer's edits, or its language's runtime pass, read the unit's facts
    /// (`Unit::site_facts`): when they do not, the facts are freed before printing.
    fn reads_facts(&self) -> bool {
        true
    }

    /// The guards that stop an OpenMP build of the file where directives are left as
    /// OpenACC: `left` holds each such directive's offset and name (outermost of each nest).
    fn guards(&self, u: &Unit, left: &[(usize, Option<String>)]) -> Vec<Edit>;
}
