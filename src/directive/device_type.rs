//! `device_type` sections: a directive's clauses after `device_type(t, …)` apply only to
//! those device types, and override the directive's default clauses of the same kind
//! (OpenACC 3.3, 2.4). OpenMP has no such sections, so the clauses for the selected device
//! type are resolved before translation and the others are removed with a note.

use super::{Clause, Directive, ParseError};
use crate::rules::id;

/// Directives whose `device_type` clause names the device to act on, not a section.
const TYPE_ARGUMENT: [&str; 3] = ["init", "shutdown", "set"];

/// Loop parallelism clauses: `seq` contradicts all of them, `auto` and `independent` each
/// other, so a device-specific one replaces a contradicting default.
const LEVELS: [&str; 5] = ["gang", "worker", "vector", "independent", "auto"];

/// Clauses OpenACC 3.3 allows after `device_type`.
const IN_SECTION: [&str; 14] = [
    "async",
    "wait",
    "num_gangs",
    "num_workers",
    "vector_length",
    "collapse",
    "gang",
    "worker",
    "vector",
    "seq",
    "independent",
    "auto",
    "tile",
    "bind",
];

/// Reject a clause that may not depend on the device type (a data clause, `private`, ...):
/// dropping it for other device types would silently change the program.
pub(super) fn check_sections(name: &str, clauses: &[Clause]) -> Result<(), ParseError> {
    if TYPE_ARGUMENT.contains(&name) {
        return Ok(());
    }
    let Some(first) = clauses.iter().position(|c| c.name == "device_type") else {
        return Ok(());
    };
    match clauses[first..]
        .iter()
        .find(|c| c.name != "device_type" && !IN_SECTION.contains(&c.name.as_str()))
    {
        Some(c) => Err(ParseError {
            offset: c.span().start,
            message: format!(
                "clause '{}' may not follow 'device_type' (only {} may); move it before the first 'device_type'",
                c.spelled(),
                IN_SECTION.join(", ")
            ),
            rule: id::DEVICE_TYPE_CLAUSE,
        }),
        None => Ok(()),
    }
}

/// Resolve the sections of `d` for the device type `selected` (None: no particular type,
/// only `device_type(*)` sections apply). Removed clauses (the `device_type` clauses too)
/// move to `d.inactive`. Returns a note (offset, message) when anything was resolved.
pub fn resolve(d: &mut Directive, text: &str, selected: Option<&str>) -> Option<(usize, String)> {
    if TYPE_ARGUMENT.contains(&d.name.as_str()) || !d.has("device_type") {
        return None;
    }
    let first_dt = d.clauses.iter().position(|c| c.name == "device_type")?;
    let at = d.clauses[first_dt].span().start;
    let mut sections: Vec<(Vec<String>, Vec<Clause>)> = Vec::new();
    // Each section's device types as written, for the note.
    let mut labels: Vec<String> = Vec::new();
    let mut defaults = Vec::new();
    let mut inactive = d.inactive().to_vec();
    for c in std::mem::take(&mut d.clauses) {
        if c.name == "device_type" {
            // (Canonical: lower case, `parse::args::canonical_keywords`.)
            let types = c.items().map(|x| x.text.to_string()).collect();
            labels.push(
                c.items()
                    .map(|x| &text[x.span()])
                    .collect::<Vec<_>>()
                    .join(", "),
            );
            inactive.push(c.span());
            sections.push((types, Vec::new()));
        } else if let Some((_, s)) = sections.last_mut() {
            s.push(c);
        } else {
            defaults.push(c);
        }
    }
    // Device types are compared without case: the option's, once, as the directives' are.
    let selected_key = selected.map(str::to_ascii_lowercase);
    let names = |types: &[String]| types.iter().any(|t| Some(t) == selected_key.as_ref());
    let named = sections.iter().any(|(t, _)| names(t));
    let chosen = |types: &[String]| {
        if named {
            names(types)
        } else {
            types.iter().any(|t| t == "*")
        }
    };
    let mut applied = Vec::new();
    let mut dropped = Vec::new();
    let mut specific: Vec<Clause> = Vec::new();
    for ((types, clauses), label) in sections.into_iter().zip(labels) {
        let text: Vec<&str> = clauses.iter().map(|c| &text[c.span()]).collect();
        if chosen(&types) {
            applied.push(format!("device_type({label}): {}", text.join(" ")));
            specific.extend(clauses);
        } else {
            if !clauses.is_empty() {
                dropped.push(format!("device_type({label}): {}", text.join(" ")));
            }
            inactive.extend(clauses.into_iter().map(|c| c.span()));
        }
    }
    let mut clauses = Vec::with_capacity(defaults.len() + specific.len());
    for c in defaults {
        if specific.iter().any(|s| overrides(&s.name, &c.name)) {
            inactive.push(c.span());
        } else {
            clauses.push(c);
        }
    }
    clauses.extend(specific);
    clauses.sort_by_key(|c| c.span().start);
    inactive.sort_by_key(|r| r.start);
    d.clauses = clauses.into_boxed_slice();
    d.set_inactive(inactive);
    let target = selected.map_or_else(
        || "no device type is selected (--device-type)".to_string(),
        |s| format!("the selected device type is '{s}'"),
    );
    let mut parts = Vec::new();
    if !applied.is_empty() {
        parts.push(format!("applied {}", applied.join("; ")));
    }
    if !dropped.is_empty() {
        parts.push(format!("dropped {}", dropped.join("; ")));
    }
    if parts.is_empty() {
        parts.push("no clauses depend on the device type".into());
    }
    Some((at, format!("{target}: {}", parts.join("; "))))
}

/// Whether a device-specific clause `specific` replaces the default clause `default`.
fn overrides(specific: &str, default: &str) -> bool {
    specific == default
        || (specific == "seq" && LEVELS.contains(&default))
        || (default == "seq" && LEVELS.contains(&specific))
        || matches!(
            (specific, default),
            ("auto", "independent") | ("independent", "auto")
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directive::parse_directive;
    use crate::rules::Tables;

    fn run(text: &str, selected: Option<&str>) -> (Vec<String>, Vec<String>, String) {
        let mut d = parse_directive(text, 0..text.len(), &Tables::builtin()).expect("parses");
        let note = resolve(&mut d, text, selected)
            .map(|n| n.1)
            .unwrap_or_default();
        let kept = d
            .clauses
            .iter()
            .map(|c| text[c.span()].to_string())
            .collect();
        let gone = d
            .inactive()
            .iter()
            .map(|r| text[r.clone()].to_string())
            .collect();
        (kept, gone, note)
    }

    #[test]
    fn selected_type_overrides_defaults() {
        let t = "parallel num_gangs(2) async(1) device_type(nvidia) num_gangs(8) device_type(radeon, host) num_gangs(16) num_workers(4)";
        let bad = "parallel device_type(nvidia) num_gangs(8) copy(a)";
        let e = parse_directive(bad, 0..bad.len(), &Tables::builtin()).unwrap_err();
        assert_eq!(
            (e.rule, &bad[e.offset..e.offset + 4]),
            (id::DEVICE_TYPE_CLAUSE, "copy")
        );
        let (kept, gone, note) = run(t, Some("NVIDIA"));
        assert_eq!(kept, ["async(1)", "num_gangs(8)"]);
        assert_eq!(gone.len(), 5, "{gone:?}");
        assert!(
            note.contains("applied device_type(nvidia): num_gangs(8);"),
            "{note}"
        );
        assert!(
            note.contains("dropped device_type(radeon, host): num_gangs(16) num_workers(4)"),
            "{note}"
        );
        let (kept, _, _) = run(t, Some("radeon"));
        assert_eq!(kept, ["async(1)", "num_gangs(16)", "num_workers(4)"]);
        let (kept, _, note) = run(t, None);
        assert_eq!(kept, ["num_gangs(2)", "async(1)"]);
        assert!(note.starts_with("no device type is selected"), "{note}");
    }

    #[test]
    fn star_applies_to_types_not_named() {
        let t = "loop gang dtype(*) vector device_type(host) seq";
        assert_eq!(run(t, None).0, ["gang", "vector"]);
        assert_eq!(run(t, Some("nvidia")).0, ["gang", "vector"]);
        // `seq` for the host replaces the default `gang`.
        assert_eq!(run(t, Some("host")).0, ["seq"]);
    }

    #[test]
    fn level_conflicts_and_type_arguments() {
        assert_eq!(
            run("loop seq device_type(nvidia) gang vector", Some("nvidia")).0,
            ["gang", "vector"]
        );
        assert_eq!(
            run("loop independent device_type(nvidia) auto", Some("nvidia")).0,
            ["auto"]
        );
        assert_eq!(
            run("loop worker device_type(nvidia) gang", Some("nvidia")).0,
            ["worker", "gang"]
        );
        // `set device_type(t)` names the device to use: not a section.
        let (kept, gone, note) = run("set device_type(nvidia) device_num(0)", Some("radeon"));
        assert_eq!((kept.len(), gone.len(), note.as_str()), (2, 0, ""));
    }
}
