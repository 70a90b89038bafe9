//! OPTIONAL dummy arguments in the data clauses of a translated construct. OpenACC ignores
//! a data clause on an absent argument; OpenMP has no rule against mapping one and gfortran
//! skips it too, so the translation keeps the clause. flang-22, however, maps an absent
//! argument at address 0 with its size and the program crashes there: the user hears of it.
//! The same holds for an OPTIONAL dummy a compute construct only refers to in its region
//! (mapped implicitly): flang-22 crashes or reads a wrong value, even under `if (present(…))`.
//! No form of the clauses avoids it: the region itself names the argument.

use super::Front;
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
    let unit = st.regions.get(k)?.unit?;
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
            first.get_or_insert(item.span.start);
            if !names.iter().any(|x| x.eq_ignore_ascii_case(n)) {
                names.push(n.to_string());
            }
        }
    }
    let mut implicit: Vec<&str> = Vec::new();
    let compute = ["parallel", "kernels", "serial"]
        .iter()
        .any(|c| d.name.split(' ').next() == Some(c));
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
