//! The end directive after the loop of a combined OpenACC loop directive written without
//! its optional `end … loop`, when its OpenMP is a block construct and not a loop
//! construct: a `kernels loop` whose loop stays sequential becomes `target`, which in
//! Fortran needs its `!$omp end target` (a loop construct ends with its loop).

use super::super::{Spelling, end_directive, indentation};
use crate::edit::Edit;

/// OpenMP constructs that end with the `do` loop they apply to.
const LOOP_CONSTRUCTS: [&str; 5] = ["do", "simd", "distribute", "loop", "taskloop"];

/// Whether OpenMP construct `name` (`target`, `target teams distribute parallel do`) is a
/// block construct that needs an end directive in Fortran.
pub fn needs_end(name: &str) -> bool {
    name.split_whitespace()
        .last()
        .is_some_and(|w| !LOOP_CONSTRUCTS.contains(&w))
}

impl super::FortranPrinter<'_> {
    /// The `end NAME` line after the statement site `i` applies to, when `d` is a
    /// combined loop directive without an end directive whose OpenMP `name` needs one.
    pub(super) fn loop_end(
        &self,
        u: &crate::unit::Unit,
        d: &crate::directive::Directive,
        i: usize,
        name: &str,
    ) -> Option<Edit> {
        if !d.name.ends_with(" loop") || !needs_end(name) {
            return None;
        }
        let stmt = u.stmts[i].as_ref().filter(|s| s.end.is_none())?;
        let lines = &self.front.lines;
        let last = lines.last_starting_before(stmt.bytes.end)?;
        let site = self.site(i);
        let sp = Spelling::of(self.src, site);
        let end = end_directive(sp, indentation(self.src, site), name, u.eol);
        let end = end.strip_suffix(u.eol).unwrap_or(&end);
        let at = lines.get(last).end;
        Some(Edit::replace(at..at, format!("{}{end}", u.eol)))
    }
}

#[cfg(test)]
mod tests {
    use super::needs_end;

    #[test]
    fn block_constructs_need_an_end() {
        assert!(needs_end("target"));
        assert!(needs_end("target teams"));
        assert!(!needs_end("target teams distribute parallel do simd"));
        assert!(!needs_end("parallel do"));
        assert!(!needs_end("target teams loop"));
    }
}
