//! Reduction operators as OpenMP takes them, in C and Fortran. GCC's OpenACC takes `-` (not
//! an OpenACC operator) as a sum; OpenMP's `-` is a sum too (its combiner adds the partial
//! results) but is deprecated since OpenMP 5.2, gone in 6.0, and flang-22 rejects it: it is
//! written `+`.

/// `reduction(- : x)` as `reduction(+ : x)`; None for any other clause text.
pub fn minus_as_plus(clause: &str) -> Option<String> {
    let open = clause.find('(')?;
    if !clause[..open].trim().eq_ignore_ascii_case("reduction") {
        return None;
    }
    let inner = &clause[open + 1..];
    let lead = inner.len() - inner.trim_start().len();
    let rest = inner.trim_start().strip_prefix('-')?;
    if !rest.trim_start().starts_with(':') {
        return None;
    }
    let at = open + 1 + lead;
    Some(format!("{}+{}", &clause[..at], &clause[at + 1..]))
}

#[cfg(test)]
mod tests {
    use super::minus_as_plus;

    #[test]
    fn minus_is_a_sum() {
        assert_eq!(
            minus_as_plus("reduction(-:d)").as_deref(),
            Some("reduction(+:d)")
        );
        assert_eq!(
            minus_as_plus("REDUCTION ( - : d, e)").as_deref(),
            Some("REDUCTION ( + : d, e)")
        );
        assert_eq!(minus_as_plus("reduction(+:d)"), None);
        assert_eq!(minus_as_plus("map(tofrom: d)"), None);
    }
}
