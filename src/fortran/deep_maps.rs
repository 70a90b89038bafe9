//! A whole derived-type variable whose type has allocatable or pointer components, in a
//! data clause of a file that also maps components of it on their own. OpenACC copies such
//! a variable shallow (the components' descriptors) and attaches the components mapped
//! after it, each with its own reference count; OpenMP 5 maps the allocatable components
//! with the variable (deep), so a component's own map only counts a reference and its copy
//! back at `exit data`/`copyout` does not happen while the variable stays mapped (a wrong
//! result under flang-22 offloading; gfortran 12 rejects both maps). The directives that
//! map the variable and those that map its components are left unchanged with the reason.

use super::Front;
use super::facts::Type;
use crate::directive::{DATA_CLAUSES, Directive};
use crate::hash::HashMap;

/// The items of `d`'s data clauses, as written: the clauses that map or point to data
/// (`crate::directive::DATA_CLAUSES`, names canonical, so `pcopy` is `copy`), `deviceptr`,
/// `device_resident` and `link` included: a variable there too is one OpenMP would map
/// otherwise than OpenACC, so counting it can only leave more directives.
fn data_items(d: &Directive) -> impl Iterator<Item = &str> {
    d.clauses
        .iter()
        .filter(|c| DATA_CLAUSES.contains(&c.name.as_str()))
        .flat_map(|c| c.items())
        .map(|it| it.text.trim())
}

/// The variable an item names (lower case) and whether it names a component of it.
fn base(item: &str) -> (String, bool) {
    let end = item.find(['%', '(']).unwrap_or(item.len());
    (item[..end].trim().to_ascii_lowercase(), item.contains('%'))
}

/// The variables that the data clauses of a file's directives map, each with whether it is
/// mapped whole (`[0]`) and by a component (`[1]`): read once per file, not per directive.
pub fn mapped(all: &[&Directive]) -> HashMap<String, [bool; 2]> {
    let mut named: HashMap<String, [bool; 2]> = HashMap::default();
    for (name, comp) in all.iter().flat_map(|x| data_items(x)).map(base) {
        named.entry(name).or_default()[usize::from(comp)] = true;
    }
    named
}

/// Why directive `d` of front-end site `k` is left unchanged (offset, reason), given what
/// every OpenACC directive of the file maps (`named`, from [`mapped`]).
pub fn refusal(
    front: &Front,
    k: usize,
    d: &Directive,
    named: &HashMap<String, [bool; 2]>,
) -> Option<(usize, String)> {
    let unit = front.structure.regions.get(k)?.unit()?;
    for item in data_items(d) {
        let (name, comp) = base(item);
        // Both sides are left, so that a second run sees the same directives.
        if !named.get(&name).is_some_and(|m| m[usize::from(!comp)]) {
            continue;
        }
        let Some(v) = front.facts.lookup(&front.structure, unit, &name) else {
            continue;
        };
        let Type::Derived { name: ty, .. } = &v.ty else {
            continue;
        };
        let deep = deep_components(front, ty);
        if deep.is_empty() {
            continue;
        }
        return Some((
            front.sites[k].span.start,
            format!(
                "'{name}' is of a type with allocatable or pointer components ({}), mapped whole and by components on their own in this file: OpenACC copies the variable shallow and gives each component mapped after it its own copy and reference count, OpenMP 5 maps the allocatable components with the variable, so a component's own copy back would not happen while the variable stays mapped; map the components without the whole variable; the directive is left unchanged",
                deep.join(", ")
            ),
        ));
    }
    None
}

/// The allocatable or pointer components of derived type `ty`, at any depth, as paths
/// (`t2%t1%arr1`): OpenMP maps the allocatable ones inside a component of derived type
/// with the variable too. A pointer or allocatable component is not looked into.
pub fn deep_components(front: &Front, ty: &str) -> Vec<String> {
    fn walk(front: &Front, ty: &str, prefix: &str, depth: usize, out: &mut Vec<String>) {
        let Some(t) = front.facts.derived(ty) else {
            return;
        };
        for c in &t.components {
            let path = format!("{prefix}{}", c.name);
            if c.allocatable || c.pointer {
                out.push(path);
            } else if let Type::Derived { name, .. } = &c.ty
                && depth < 16
            {
                walk(front, name, &format!("{path}%"), depth + 1, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(front, ty, "", 0, &mut out);
    out
}
