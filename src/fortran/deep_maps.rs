//! A whole derived-type variable whose type has allocatable or pointer components, in a
//! data clause of a file that also maps components of it on their own. OpenACC copies such
//! a variable shallow (the components' descriptors) and attaches the components mapped
//! after it, each with its own reference count; OpenMP 5 maps the allocatable components
//! with the variable (deep), so a component's own map only counts a reference and its copy
//! back at `exit data`/`copyout` does not happen while the variable stays mapped (a wrong
//! result under flang-22 offloading; gfortran 12 rejects both maps). The directives and the
//! runtime calls (`acc_copyin(v)`, `acc_copyout(v%a)`) that map the variable and those that
//! map its components are left unchanged with the reason.

use super::Front;
use super::facts::Type;
use super::lex::TokKind;
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

/// Add to `named` (see [`mapped`]) the first argument of every `acc_*` subroutine called in
/// the file: the data routines (`call acc_copyin(v)`, `call acc_copyout(v%a)`) map as
/// directives do. Other routines' arguments name no variable of a derived type, which the
/// refusal skips. One call a statement (`call` starts it, or ends a logical `if`'s
/// condition), so the reading is linear in the file.
pub fn add_calls(named: &mut HashMap<String, [bool; 2]>, src: &str, front: &Front) {
    let lx = &front.lexed;
    for stmt in &lx.stmts {
        let toks = stmt.toks();
        let Some(c) = toks.clone().find(|&i| lx.is(src, i, "call")) else {
            continue;
        };
        let (name, open) = (c + 1, c + 2);
        if open >= toks.end
            || lx.tokens[name].kind() != TokKind::Name
            || !lx.lower(src, name).starts_with("acc_")
            || lx.text(src, open) != "("
        {
            continue;
        }
        let mut item = String::new();
        let mut depth = 0usize;
        for j in open + 1..toks.end {
            let t = lx.text(src, j);
            match t.as_ref() {
                "(" => depth += 1,
                ")" if depth == 0 => break,
                ")" => depth -= 1,
                "," if depth == 0 => break,
                _ => {}
            }
            item.push_str(&t);
        }
        if !item.is_empty() {
            let (name, comp) = base(&item);
            named.entry(name).or_default()[usize::from(comp)] = true;
        }
    }
}

/// Why directive `d` of front-end site `k` is left unchanged (offset, reason), given what
/// every OpenACC directive and runtime call of the file maps (`named`, from [`mapped`] and
/// [`add_calls`]).
pub fn refusal(
    front: &Front,
    k: usize,
    d: &Directive,
    named: &HashMap<String, [bool; 2]>,
) -> Option<(usize, String)> {
    let unit = front.structure.regions.get(k)?.unit()?;
    data_items(d)
        .find_map(|item| item_refusal(front, unit, item, named))
        .map(|why| {
            (
                front.sites[k].span.start,
                format!("{why}; the directive is left unchanged"),
            )
        })
}

/// Why a map of `item` in unit `unit` is not translated (see the module documentation),
/// given what the file maps (`named`).
pub fn item_refusal(
    front: &Front,
    unit: usize,
    item: &str,
    named: &HashMap<String, [bool; 2]>,
) -> Option<String> {
    let (name, comp) = base(item);
    // Both sides are left, so that a second run sees the same directives and calls.
    if !named.get(&name).is_some_and(|m| m[usize::from(!comp)]) {
        return None;
    }
    let v = front.facts.lookup(&front.structure, unit, &name)?;
    let Type::Derived { name: ty, .. } = &v.ty else {
        return None;
    };
    let deep = deep_components(front, ty);
    if deep.is_empty() {
        return None;
    }
    Some(format!(
        "'{name}' is of a type with allocatable or pointer components ({}), mapped whole and by components on their own in this file: OpenACC copies the variable shallow and gives each component mapped after it its own copy and reference count, OpenMP 5 maps the allocatable components with the variable, so a component's own copy back would not happen while the variable stays mapped; map the components without the whole variable",
        deep.join(", ")
    ))
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
