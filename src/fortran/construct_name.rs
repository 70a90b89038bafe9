//! How a Fortran directive spells an OpenMP construct's name.

use crate::intent::Construct;

/// Whole names Fortran spells otherwise, after the worksharing loop became `do`: a lone
/// `parallel loop` (the `loop` profile's worker or vector loop with no gang loop outside)
/// is written `parallel do`, since flang-22 cannot parse `!$omp parallel loop` (it parses
/// `target parallel loop`, and gfortran 12 both). The meaning is the same: the `loop` of
/// `parallel loop` binds to the `parallel` region, whose threads share its iterations, as
/// those of `parallel do` do.
const RESPELLED: &[(&str, &str)] = &[("parallel loop", "parallel do")];

/// `c` in Fortran: `do` for the worksharing loop, and the names of [`RESPELLED`].
pub fn spelled(c: &Construct) -> String {
    let name = c.spelled("do");
    RESPELLED
        .iter()
        .find(|(from, _)| *from == name)
        .map_or(name, |(_, to)| to.to_string())
}
