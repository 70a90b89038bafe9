//! `update` of derived-type components. gfortran 12 rejects a component in `target update`
//! ("Syntax error in OpenMP variable list"); an empty `target` region with `always` maps
//! moves the same data, and both compilers accept it: for present data, `map(always, to: x)`
//! copies `x` to the device at the region's start and `map(always, from: x)` copies it back
//! at its end whatever the reference count, which the region leaves as it was. `map` needs
//! contiguous storage where `target update` does not, so only `to`/`from` clauses (no `if`,
//! queue or presence clause) of contiguous items take this form; and only for types without
//! allocatable or pointer components at any depth, whose maps gfortran 12 rejects anyway
//! and where a map would also attach pointers that an update leaves alone.

use super::Front;
use super::facts::Type;
use super::queues::{Shape, split_outside_parentheses as split};
use crate::directive::Directive;

/// The `target` region (its directive and `end target`) that stands for the `target update`
/// named `name` with `clauses` (name, text) of front-end site `k`, or None to keep it.
/// `d` is the OpenACC directive: with `if_present` (absent data is skipped, as OpenMP's
/// `target update` does, where the region would map it) or any clause besides
/// `host`/`self`/`device`, the update is kept.
pub fn shape(
    front: &Front,
    k: usize,
    d: &Directive,
    name: &str,
    clauses: &[(String, String)],
) -> Option<Shape> {
    if name != "target update"
        || d.clauses
            .iter()
            .any(|c| !matches!(c.name.as_str(), "host" | "self" | "device"))
    {
        return None;
    }
    let unit = front.structure.regions.get(k)?.unit()?;
    let mut maps = Vec::new();
    let mut component = false;
    for (c, text) in clauses {
        if c != "to" && c != "from" {
            return None;
        }
        let list = text
            .trim()
            .get(c.len()..)?
            .trim_start()
            .strip_prefix('(')?
            .strip_suffix(')')?;
        let items = split(list, ',');
        for item in &items {
            let parts = split(item, '%');
            // A modifier (`present:`), a section of an array of structures, a strided or
            // non-contiguous section.
            let (last, before) = parts.split_last()?;
            if before.iter().any(|p| p.contains(':')) || !contiguous(last) {
                return None;
            }
            let base = parts[0].split('(').next()?.trim().to_ascii_lowercase();
            if let Some(v) = front.facts.lookup(&front.structure, unit, &base)
                && let Type::Derived { name: ty, .. } = &v.ty
                && !super::deep_maps::deep_components(front, ty).is_empty()
            {
                return None;
            }
            component |= parts.len() > 1;
        }
        maps.push(format!("map(always, {c}: {})", items.join(", ")));
    }
    if !component {
        return None;
    }
    Some(Shape {
        main: format!("target {}", maps.join(" ")),
        after: vec!["end target".into()],
        ..Shape::default()
    })
}

/// Whether part reference `p` (`c`, `c(5)`, `c(:, 2:n)`) with sections selects contiguous
/// storage of its array: no stride, every subscript before the last section a whole `:`.
/// A part with two subscript lists (a substring) is not taken.
fn contiguous(p: &str) -> bool {
    let Some(open) = p.find('(') else {
        return !p.contains(':');
    };
    if p[..open].contains(':') {
        return false;
    }
    let Some(inner) = p[open + 1..].strip_suffix(')') else {
        return false;
    };
    if inner.contains('(') && split(inner, ',').iter().any(|s| s.contains(':')) {
        // A section with a parenthesized bound: read no further.
        return false;
    }
    let subs = split(inner, ',');
    if subs.iter().any(|s| s.matches(':').count() > 1) {
        return false;
    }
    match subs.iter().rposition(|s| s.contains(':')) {
        Some(last) => subs[..last].iter().all(|s| s == ":"),
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::{contiguous, split};

    #[test]
    fn contiguous_sections() {
        assert!(contiguous("c"));
        assert!(contiguous("c(5)"));
        assert!(contiguous("c(n/2:n)"));
        assert!(contiguous("m(:, :, 3)"));
        assert!(contiguous("m(:, 2:7)"));
        assert!(!contiguous("m(2:7, lo:hi)"));
        assert!(!contiguous("c(1:n:2)"));
        assert!(!contiguous("c(f(1):n)"));
        assert!(!contiguous("s(1:2)(1:3)"));
        assert!(!contiguous("present: c"));
    }

    #[test]
    fn split_outside_parentheses() {
        assert_eq!(split("a%b(i%j), c", ','), ["a%b(i%j)", "c"]);
        assert_eq!(split("a%b(i%j)", '%'), ["a", "b(i%j)"]);
    }
}
