//! The end directive after the loop of a combined OpenACC loop directive written without
//! its optional `end … loop`, when its OpenMP is a block construct and not a loop
//! construct: a `kernels loop` whose loop stays sequential becomes `target`, which in
//! Fortran needs its `!$omp end target` (a loop construct ends with its loop).

use super::super::{Spelling, end_directive, indentation};
use crate::edit::Edit;
use crate::intent::Construct;

/// OpenMP constructs that end with the `do` loop they apply to.
const LOOP_CONSTRUCTS: [&str; 5] = ["do", "simd", "distribute", "loop", "taskloop"];

/// Whether OpenMP construct `name` (`target`, `target teams distribute parallel do`) is a
/// block construct that needs an end directive in Fortran, read from its last word
/// without spelling it.
pub fn needs_end(name: &Construct) -> bool {
    name.last("do")
        .is_some_and(|w| !LOOP_CONSTRUCTS.contains(&w))
}

/// [`needs_end`] as it read the spelled name: the oracle of its test.
#[cfg(test)]
fn needs_end_spelled(name: &str) -> bool {
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
        name: &Construct,
    ) -> Option<Edit> {
        if !d.name.ends_with(" loop") || !needs_end(name) {
            return None;
        }
        let name = &name.spelled("do");
        let stmt = u.stmts[i].as_ref().filter(|s| s.end().is_none())?;
        let lines = &self.front.lines;
        let last = lines.last_starting_before(stmt.bytes().end)?;
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
    use super::{needs_end, needs_end_spelled};
    use crate::intent::Construct;

    const NAMES: [&str; 12] = [
        "target",
        "target teams",
        "target teams distribute parallel for simd",
        "parallel for",
        "target teams loop",
        "target teams distribute",
        "simd",
        "for",
        "parallel",
        "target data",
        "atomic update",
        "",
    ];

    #[test]
    fn block_constructs_need_an_end() {
        let needs = |n: &'static str| needs_end(&Construct::of(n));
        assert!(needs("target"));
        assert!(needs("target teams"));
        assert!(!needs("target teams distribute parallel for simd"));
        assert!(!needs("parallel for"));
        assert!(!needs("target teams loop"));
    }

    #[test]
    fn as_read_from_the_spelled_name() {
        for n in NAMES {
            let c = Construct::of(n);
            assert_eq!(needs_end(&c), needs_end_spelled(&c.spelled("do")), "{n}");
        }
    }
}
