//! How a Fortran directive spells an OpenMP construct's name.

use crate::intent::Construct;

/// `c` in Fortran: `do` for the worksharing loop, and a lone `parallel loop` (the `loop`
/// profile's worker or vector loop with no gang loop outside) as `parallel do`, since
/// flang-22 cannot parse `!$omp parallel loop` (it parses `target parallel loop`, and
/// gfortran 12 both). The meaning is the same: the `loop` of `parallel loop` binds to the
/// `parallel` region, whose threads share its iterations, as those of `parallel do` do.
pub fn spelled(c: &Construct) -> String {
    let name = c.spelled("do");
    if name == "parallel loop" {
        "parallel do".to_string()
    } else {
        name
    }
}
