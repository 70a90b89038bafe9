//! OPTIONAL dummy arguments in translated constructs. OpenACC ignores a data clause on an
//! absent argument, and a region may test `present(b)` before it touches `b`. OpenMP maps
//! of an absent argument are not portable: gfortran skips it, flang-22 maps it at address 0
//! and the program crashes, in a clause or referenced in a region only. So:
//! - a data directive (`target data`, `enter/exit data`, `update`) moves each OPTIONAL item
//!   in a directive of its own under `if(present(b))` ([`split_shape`]): with the condition
//!   false, the device is the host and nothing is mapped, which is OpenACC's meaning;
//! - a compute construct that names one becomes two versions (four for two arguments) under
//!   `if (present(b)) then … else … end if` (the printer's `versions`): the original's
//!   translation where all are present, and copies of it without the absent ones' maps,
//!   which name them `has_device_addr` (an absent argument passes its null address and
//!   `present()` in the region reads it; flang-22 maps it otherwise).
//!
//! What is not built keeps the warning.

use super::Front;
use super::queues::Shape;
use super::sites::Site;
use crate::diag::Diagnostic;
use crate::directive::Directive;
use crate::facts::RegionVar;
use crate::rules::{Tables, id};

/// Clauses that move or free data (`self` only on `update`, where it is `host`).
fn moves_data(d: &Directive, clause: &str, t: &Tables) -> bool {
    t.clause(clause).is_some_and(|r| r.map.is_some())
        || matches!(clause, "delete" | "host" | "device")
        || (clause == "self" && d.name == "update")
}

/// The warning for directive `d` of front-end site `k` (`site`), if a data clause names an
/// OPTIONAL dummy argument, or if its region (variables `vars`, declared outside) refers to
/// one.
pub fn warning(
    front: &Front,
    k: usize,
    site: &Site,
    d: &Directive,
    vars: &[RegionVar],
    t: &Tables,
) -> Option<Diagnostic> {
    let st = &front.structure;
    let unit = st.regions.get(k)?.unit()?;
    // Most units see no OPTIONAL argument: then no item or variable is one.
    if !front.facts.any_optional(st, unit) {
        return None;
    }
    let mut names: Vec<String> = Vec::new();
    let mut first = None;
    let mut allocatable = false;
    for c in d.clauses.iter().filter(|c| moves_data(d, &c.name, t)) {
        for item in c.items() {
            let Some(n) = super::lang::Fortran.base_name(&item.text) else {
                continue;
            };
            let Some(v) = front.facts.lookup(st, unit, n).filter(|v| v.optional) else {
                continue;
            };
            allocatable |= v.allocatable;
            first.get_or_insert(item.span().start);
            if !names.iter().any(|x| x.eq_ignore_ascii_case(n)) {
                names.push(n.to_string());
            }
        }
    }
    let mut implicit: Vec<&str> = Vec::new();
    let compute = d.compute_kind().is_some();
    for v in vars.iter().filter(|_| compute) {
        let optional = front
            .facts
            .lookup(st, unit, &v.name)
            .is_some_and(|x| x.optional);
        if optional && !names.iter().any(|x| x.eq_ignore_ascii_case(&v.name)) {
            implicit.push(&v.name);
        }
    }
    if first.is_none() && !implicit.is_empty() {
        let at = site.file_offset(0);
        let shown = match implicit.len() {
            1 => format!("argument {}", quoted(&implicit)),
            _ => format!("arguments {}", quoted(&implicit)),
        };
        return Some(Diagnostic::new(
            at,
            id::FORTRAN_OPTIONAL_MAP,
            format!(
                "the region refers to the OPTIONAL dummy {shown}: OpenMP maps an absent argument as OpenACC does (not at all), but flang-22 maps an absent one at address 0 and the program crashes or reads a wrong value, under 'if (present(…))' too; for that compiler, call the routine with the argument present or keep it out of the region"
            ),
        ));
    }
    let at = site.file_offset(first?);
    let all: Vec<&str> = names.iter().map(String::as_str).collect();
    let shown = quoted(&all);
    let (them, is) = if all.len() == 1 {
        ("it", "is an OPTIONAL dummy argument")
    } else {
        ("them", "are OPTIONAL dummy arguments")
    };
    let gfortran = if allocatable && d.name == "update" {
        ", and gfortran 12 crashes on 'target update' of an absent OPTIONAL ALLOCATABLE"
    } else {
        ""
    };
    Some(Diagnostic::new(
        at,
        id::FORTRAN_OPTIONAL_MAP,
        format!(
            "{shown} {is}: OpenMP maps an absent argument as OpenACC does (not at all), but flang-22 maps an absent one at address 0 and the program crashes{gfortran}; the clause is kept; for those compilers, keep {them} out of the clause or test present() around the directive"
        ),
    ))
}

fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A data clause's name, modifier and items.
type ClauseItems = (String, String, Vec<String>);

/// Data directives whose OPTIONAL items move to directives of their own.
const SPLIT: [&str; 4] = [
    "target data",
    "target enter data",
    "target exit data",
    "target update",
];

/// OpenMP clauses that move data.
const MOVES: [&str; 3] = ["map", "to", "from"];

/// The OPTIONAL dummy argument named `name` in the unit of front-end site `k`.
fn optional<'a>(
    front: &'a Front,
    k: usize,
    name: &str,
) -> Option<std::borrow::Cow<'a, crate::fortran::facts::Var>> {
    let unit = front.structure.regions.get(k)?.unit()?;
    front
        .facts
        .lookup(&front.structure, unit, name)
        .filter(|v| v.optional)
}

/// A clause's list: its name's length, the modifier with its colon (`to: `, or empty) and
/// its items (`map(to: a, b(1:n))` gives `to: ` and `a`, `b(1:n)`).
fn list_of(text: &str) -> Option<(String, Vec<String>)> {
    let open = text.find('(')?;
    let inner = text[open + 1..].trim_end().strip_suffix(')')?;
    let (modifier, items) = match super::queues::top_level_colon(inner) {
        Some(k) => (format!("{}: ", inner[..k].trim()), &inner[k + 1..]),
        None => (String::new(), inner),
    };
    let items = super::queues::split_outside_parentheses(items, ',')
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect();
    Some((modifier, items))
}

/// The condition of an `if(…)` clause text.
fn condition(text: &str) -> Option<&str> {
    let open = text.find('(')?;
    Some(text[open + 1..].trim_end().strip_suffix(')')?.trim())
}

/// The `if` clause of a split directive: `guard`, with the directive's own condition
/// after it.
fn presence(guard: &str, cond: Option<&str>) -> String {
    match cond {
        Some(c) => format!("if({guard} .and. ({c}))"),
        None => format!("if({guard})"),
    }
}

/// The helper that tells whether data is present on the default device (added to the
/// program unit by the runtime translation when a directive calls it).
pub const IS_PRESENT: &str = "acc2omp_is_present";

/// The items of `d`'s `no_create` clauses that a `target data` can map under a presence
/// test of their own, as written: a whole variable or component, or a section of one
/// dimension without stride (contiguous, which the test needs). An OPTIONAL dummy is not
/// one (its own split tests `present()`, and the test may not read an absent argument).
pub fn no_create_items(front: &Front, k: usize, d: &Directive) -> Vec<String> {
    if d.name != "data" || !helper_reachable(front, k) {
        return Vec::new();
    }
    d.clauses
        .iter()
        .filter(|c| c.name == "no_create" && c.modifier().is_none())
        .flat_map(|c| c.items())
        .map(|i| i.text.trim().to_string())
        .filter(|t| {
            let base = super::lang::Fortran.base_name(t);
            base.is_some_and(|b| optional(front, k, b).is_none()) && contiguous_item(t)
        })
        .collect()
}

/// Whether the presence test's helper can be added to the outermost unit around site `k`
/// (a program, procedure or module; not a submodule, whose procedures are separate).
fn helper_reachable(front: &Front, k: usize) -> bool {
    let st = &front.structure;
    let Some(mut u) = st.regions.get(k).and_then(|r| r.unit()) else {
        return false;
    };
    while let Some(p) = st.units[u].parent {
        u = p;
    }
    let unit = &st.units[u];
    !unit.interface
        && unit.end.is_some()
        && !matches!(
            unit.kind,
            super::stmt::UnitKind::Submodule | super::stmt::UnitKind::BlockData
        )
}

/// `a`, `t%a`, `a(lo:hi)`, `a(:)`: one subscript list of one dimension, at the end, no
/// stride. Blanks between tokens (`a (lo : hi)`) do not count.
fn contiguous_item(t: &str) -> bool {
    let t: String = t.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = t.find('(') else {
        return t
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '%');
    };
    let Some(inner) = t[open + 1..].strip_suffix(')') else {
        return false;
    };
    inner.matches(':').count() <= 1
        && !inner.contains(['(', ')', ','])
        && t[..open]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '%')
}

/// The presence test of a `no_create` item: the helper on its first and last byte.
fn is_present_test(item: &str) -> String {
    format!("{IS_PRESENT}({item}, storage_size({item}))")
}

/// Whether two item texts are the same (case and blanks aside).
fn same_item(a: &str, b: &str) -> bool {
    let squeeze = |s: &str| {
        s.chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| c.to_ascii_lowercase())
            .collect::<String>()
    };
    squeeze(a) == squeeze(b)
}

/// Whether [`split_shape`] may split a directive whose OpenMP name is `name`.
pub fn may_split(name: &str) -> bool {
    SPLIT.contains(&name)
}

/// The directives that the data directive `name` (`target data`, `target enter data`,
/// `target exit data`, `target update`) with `clauses` (name, text) of front-end site `k`
/// becomes when items of its data clauses are OPTIONAL dummies or (`target data` only) the
/// `no_create` items `no_create` (see [`no_create_items`]): the others in the directive as
/// it was, then per argument (per `no_create` item) a directive of its items under
/// `if(present(b))` (`if(acc2omp_is_present(x, storage_size(x)))`: OpenMP has no
/// `no_create`; with the condition false nothing is mapped and the data stays on the
/// host, as OpenACC's `no_create` of absent data), its other clauses repeated; a
/// `target data` nests them and its end directive ends each. None when no item moves.
pub fn split_shape(
    front: &Front,
    k: usize,
    name: &str,
    clauses: &[(String, String)],
    no_create: &[String],
) -> Option<Shape> {
    if !may_split(name) {
        return None;
    }
    let cond = clauses
        .iter()
        .find(|c| c.0 == "if")
        .map(|c| condition(&c.1))
        .map(|c| c.map(str::to_string));
    let cond = match cond {
        Some(None) => return None,
        Some(Some(c)) => Some(c),
        None => None,
    };
    let mut kept: Vec<String> = Vec::new();
    let mut other: Vec<String> = Vec::new();
    // Per argument (per `no_create` item): its test and its clauses as (clause name,
    // modifier, items).
    let mut split: Vec<(String, Vec<ClauseItems>)> = Vec::new();
    for (n, text) in clauses {
        if n == "if" {
            continue;
        }
        if !MOVES.contains(&n.as_str()) {
            other.push(text.clone());
            continue;
        }
        let (modifier, items) = list_of(text)?;
        // A component in `update` is written as an empty `target` region
        // (`component_update`), which a split would bypass.
        if name == "target update" && items.iter().any(|it| it.contains('%')) {
            return None;
        }
        let mut stay = Vec::new();
        for item in items {
            let base = super::lang::Fortran.base_name(&item).map(str::to_string);
            let guard = match base.and_then(|b| optional(front, k, &b)) {
                Some(v) => format!("present({})", v.name),
                None if name == "target data"
                    && n == "map"
                    && modifier == "alloc: "
                    && no_create.iter().any(|x| same_item(x, &item)) =>
                {
                    is_present_test(&item)
                }
                None => {
                    stay.push(item);
                    continue;
                }
            };
            let at = match split.iter().position(|s| s.0.eq_ignore_ascii_case(&guard)) {
                Some(at) => at,
                None => {
                    split.push((guard, Vec::new()));
                    split.len() - 1
                }
            };
            let cs = &mut split[at].1;
            match cs.iter_mut().find(|c| &c.0 == n && c.1 == modifier) {
                Some(c) => c.2.push(item),
                None => cs.push((n.clone(), modifier.clone(), vec![item])),
            }
        }
        if !stay.is_empty() {
            kept.push(format!("{n}({modifier}{})", stay.join(", ")));
        }
    }
    if split.is_empty() {
        return None;
    }
    let mut parts = vec![name.to_string()];
    parts.extend(kept.iter().cloned());
    parts.extend(other.iter().cloned());
    let own_if = cond.as_ref().map(|c| format!("if({c})"));
    parts.extend(own_if.clone());
    let kept = (!kept.is_empty()).then(|| parts.join(" "));
    let of = |cs: &[ClauseItems], guard: Option<String>| {
        let mut parts = vec![name.to_string()];
        parts.extend(
            cs.iter()
                .map(|(n, m, items)| format!("{n}({m}{})", items.join(", "))),
        );
        parts.extend(other.iter().cloned());
        parts.extend(guard);
        parts.join(" ")
    };
    if name == "target data" {
        // A construct: nested `target data` under the clause (false: the host is the
        // device, nothing is mapped), each ended by the end directive.
        let mut directives: Vec<String> = kept.into_iter().collect();
        directives.extend(
            split
                .iter()
                .map(|(b, cs)| of(cs, Some(presence(b, cond.as_deref())))),
        );
        let close = vec!["end target data".to_string(); directives.len()];
        let main = directives.remove(0);
        return Some(Shape {
            main,
            after: directives,
            close,
            ..Shape::default()
        });
    }
    // A standalone directive: under a Fortran `if` (gfortran 12 reads an absent OPTIONAL
    // ALLOCATABLE's descriptor for `target update … if(present(b))`).
    let mut lines: Vec<String> = kept.into_iter().collect();
    for (b, cs) in &split {
        lines.push(format!("if ({b}) then"));
        lines.push(of(cs, own_if.clone()));
        lines.push("end if".to_string());
    }
    let mut before = Vec::new();
    if lines[0].starts_with("if (") {
        before.push(lines.remove(0));
    }
    let main = lines.remove(0);
    Some(Shape {
        before,
        main,
        after: lines,
        ..Shape::default()
    })
}

/// Whether a line of a [`Shape`] is a Fortran statement (`if (…) then`, `end if`) and not
/// a directive.
pub fn is_statement(line: &str) -> bool {
    (line.starts_with("if (") && line.ends_with(") then")) || line == "end if"
}

/// OpenMP clauses of a compute construct whose list items are variables.
const NAMED: [&str; 6] = [
    "map",
    "firstprivate",
    "private",
    "shared",
    "is_device_ptr",
    "has_device_addr",
];

/// The clauses (name, text) of a version of a compute construct where the arguments
/// `absent` are not present: their items leave the data clauses (a clause left empty goes)
/// and a `has_device_addr` clause names them.
pub fn absent_clauses(clauses: &[(String, String)], absent: &[String]) -> Vec<(String, String)> {
    let is_absent = |item: &str| {
        super::lang::Fortran
            .base_name(item)
            .is_some_and(|b| absent.iter().any(|a| a.eq_ignore_ascii_case(b)))
    };
    let mut out = Vec::new();
    let mut device_addr: Vec<String> = Vec::new();
    for (n, text) in clauses {
        // Clauses that name variables: an absent one leaves them (`firstprivate(b)` of a
        // scalar the region reads would copy an absent argument, and a list item may be
        // named once).
        if !NAMED.contains(&n.as_str()) {
            out.push((n.clone(), text.clone()));
            continue;
        }
        let Some((modifier, items)) = list_of(text) else {
            out.push((n.clone(), text.clone()));
            continue;
        };
        let stay: Vec<String> = items.into_iter().filter(|i| !is_absent(i)).collect();
        if n == "has_device_addr" {
            device_addr.extend(stay);
            continue;
        }
        if !stay.is_empty() {
            out.push((n.clone(), format!("{n}({modifier}{})", stay.join(", "))));
        }
    }
    device_addr.extend(absent.iter().cloned());
    out.push((
        "has_device_addr".to_string(),
        format!("has_device_addr({})", device_addr.join(", ")),
    ));
    out
}

/// The OPTIONAL dummies a compute construct `d` of front-end site `k` names in its data
/// clauses or its region refers to (`vars`), each once, in order: the arguments its
/// versions test. One that a clause privatizes (`firstprivate`, `reduction`) is not: the
/// region has its own copy, which no map concerns.
pub fn tested(
    front: &Front,
    k: usize,
    d: &Directive,
    vars: &[RegionVar],
    t: &Tables,
) -> Vec<String> {
    // Most units see no OPTIONAL argument: then none is tested.
    let st = &front.structure;
    if !st
        .regions
        .get(k)
        .and_then(|r| r.unit())
        .is_some_and(|u| front.facts.any_optional(st, u))
    {
        return Vec::new();
    }
    let private: Vec<&str> = d
        .clauses
        .iter()
        .filter(|c| !moves_data(d, &c.name, t))
        .flat_map(|c| c.items())
        .filter_map(|i| super::lang::Fortran.base_name(&i.text))
        .collect();
    let mut out: Vec<String> = Vec::new();
    let mut add = |n: &str| {
        if let Some(v) = optional(front, k, n)
            && !private.iter().any(|p| p.eq_ignore_ascii_case(n))
            && !out.iter().any(|x| x.eq_ignore_ascii_case(&v.name))
        {
            out.push(v.name.clone());
        }
    };
    for c in d.clauses.iter().filter(|c| moves_data(d, &c.name, t)) {
        for item in c.items() {
            if let Some(n) = super::lang::Fortran.base_name(&item.text) {
                add(n);
            }
        }
    }
    for v in vars {
        add(&v.name);
    }
    out
}

/// The OPTIONAL dummies among `names` of front-end site `k`'s unit that are ALLOCATABLE or
/// POINTER: flang-22 crashes on an absent one that a target region names, whatever its
/// clauses.
pub fn allocatables(front: &Front, k: usize, names: &[String]) -> Vec<String> {
    names
        .iter()
        .filter(|n| optional(front, k, n).is_some_and(|v| v.allocatable || v.pointer))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{absent_clauses, list_of};

    #[test]
    fn lists() {
        let (m, items) = list_of("map(to: a, b(1:n), c)").unwrap();
        assert_eq!(m, "to: ");
        assert_eq!(items, ["a", "b(1:n)", "c"]);
        let (m, items) = list_of("to(x(2:3))").unwrap();
        assert_eq!(m, "");
        assert_eq!(items, ["x(2:3)"]);
    }

    #[test]
    fn absent_version() {
        let cs = vec![
            ("map".to_string(), "map(to: a, b)".to_string()),
            ("map".to_string(), "map(alloc: c)".to_string()),
            ("private".to_string(), "private(i)".to_string()),
        ];
        let out = absent_clauses(&cs, &["b".to_string(), "c".to_string()]);
        let texts: Vec<&str> = out.iter().map(|c| c.1.as_str()).collect();
        assert_eq!(texts, ["map(to: a)", "private(i)", "has_device_addr(b, c)"]);
    }

    #[test]
    fn absent_version_names_each_once() {
        let cs = vec![
            ("map".to_string(), "map(tofrom: r)".to_string()),
            ("firstprivate".to_string(), "firstprivate(n, b)".to_string()),
            ("firstprivate".to_string(), "firstprivate(b)".to_string()),
            (
                "has_device_addr".to_string(),
                "has_device_addr(d)".to_string(),
            ),
        ];
        let out = absent_clauses(&cs, &["b".to_string()]);
        let texts: Vec<&str> = out.iter().map(|c| c.1.as_str()).collect();
        assert_eq!(
            texts,
            ["map(tofrom: r)", "firstprivate(n)", "has_device_addr(d, b)"]
        );
    }

    #[test]
    fn no_create_items_that_can_be_tested() {
        use super::contiguous_item;
        for ok in ["a", "t%a", "a(1:n)", "a(:)", "b(1:n/2)"] {
            assert!(contiguous_item(ok), "{ok}");
        }
        for no in ["a(1:n:2)", "a(1:n, 2)", "a(f(1):n)", "a(1:n)%b"] {
            assert!(!contiguous_item(no), "{no}");
        }
    }

    #[test]
    fn statements_of_shapes() {
        use super::is_statement;
        assert!(is_statement("if (present(b)) then"));
        assert!(is_statement("end if"));
        assert!(!is_statement("if (present(b))"));
        assert!(!is_statement("target update to(b) if(present(b))"));
    }
}
