//! A whole derived-type variable whose type has allocatable or pointer components, in a
//! data clause of a file that also maps components of it on their own. OpenACC copies such
//! a variable shallow (the components' descriptors) and attaches the components mapped
//! after it, each with its own reference count; OpenMP 5 maps the allocatable components
//! with the variable (deep), so a component's own map only counts a reference and its copy
//! back at `exit data`/`copyout` does not happen while the variable stays mapped (a wrong
//! result under flang-22 offloading; gfortran 12 rejects both maps). The directives and the
//! runtime calls (`acc_copyin(v)`, `acc_copyout(v%a)`) that map the variable and those that
//! map its components are left unchanged with the reason.

mod arguments;

use super::Front;
use super::facts::{Type, Var};
use super::lex::TokKind;
use crate::directive::{DATA_CLAUSES, Directive};
use crate::hash::HashMap;
use arguments::{action_start, call_arguments, function_arguments};

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

/// The items whose variables the rule checks in `d`: its data clauses', and an update's
/// (which maps nothing, but is left with the maps of a variable the rule does not take, as
/// a second run must see what made the rule refuse it; where the update's own unit is what
/// refuses it, every directive naming the variable is left, or the maps translated in a
/// first run would leave the update alone in the second, and it would be translated then).
fn checked_items(d: &Directive) -> impl Iterator<Item = &str> {
    let updated = (d.name == "update").then(|| {
        d.clauses
            .iter()
            .flat_map(|c| c.items())
            .map(|it| it.text.trim())
    });
    data_items(d).chain(updated.into_iter().flatten())
}

/// The variable an item names (lower case) and whether it names a component of it.
fn base(item: &str) -> (String, bool) {
    let end = item.find(['%', '(']).unwrap_or(item.len());
    (item[..end].trim().to_ascii_lowercase(), item.contains('%'))
}

/// What a file's directives and runtime calls map: per variable, whether it is mapped whole
/// (`[0]`) and by a component (`[1]`), and why Rule K (see [`k_map`]) cannot take a variable
/// mapped both ways. Read once per file, not per directive.
#[derive(Debug, Default)]
pub struct Mapped {
    named: HashMap<String, [bool; 2]>,
    not_k: HashMap<String, &'static str>,
}

impl Mapped {
    /// Whether a directive or call of the file maps `name` (lower case), whole or by a
    /// component.
    pub fn names(&self, name: &str) -> bool {
        self.named.contains_key(name)
    }
}

/// [`Mapped`] of the file of `front` (`src`), from its OpenACC directives (each with its
/// site in `front.sites`) and its `acc_*` calls.
pub fn mapped(front: &Front, src: &str, all: &[(usize, &Directive)]) -> Mapped {
    let mut m = Mapped::default();
    for (name, comp) in all.iter().flat_map(|x| data_items(x.1)).map(base) {
        m.named.entry(name).or_default()[usize::from(comp)] = true;
    }
    add_calls(&mut m, src, front);
    k_conditions(&mut m, front, src, all);
    // One verdict per name: a variable Rule K cannot take where one directive names it (its
    // type unknown in that unit, say) is refused everywhere, or a second run would find
    // only that directive's maps left and translate them.
    let mut refused = Vec::new();
    for &(k, d) in all {
        let Some(unit) = front.structure.regions.get(k).and_then(|r| r.unit()) else {
            continue;
        };
        for item in checked_items(d) {
            if let Some((name, _)) = deep_mapped(front, unit, item, &m)
                && let Some(why) = not_k(front, unit, &name, &m)
            {
                refused.push((name, why));
            }
        }
    }
    for (name, why) in refused {
        m.not_k.entry(name).or_insert(why);
    }
    m
}

/// Add to `m` the first argument of every `acc_*` subroutine called in the file: the data
/// routines (`call acc_copyin(v)`, `call acc_copyout(v%a)`) map as directives do. Other
/// routines' arguments name no variable of a derived type, which the refusal skips. Rule K
/// does not take a variable that any `acc_*` routine or function names first (a presence or
/// address query, an update, a data routine): one token walk of the statements.
fn add_calls(m: &mut Mapped, src: &str, front: &Front) {
    let lx = &front.lexed;
    for stmt in &lx.stmts {
        let toks = stmt.toks();
        let call = toks.clone().find(|&i| lx.is(src, i, "call"));
        for name in toks.clone() {
            let open = name + 1;
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
            if item.is_empty() {
                continue;
            }
            let (var, comp) = base(&item);
            if call.is_some_and(|c| c + 1 == name) {
                m.named.entry(var.clone()).or_default()[usize::from(comp)] = true;
            }
            m.not_k
                .entry(var)
                .or_insert("an OpenACC runtime routine names it or a component of it (OpenMP's deep map cannot reproduce OpenACC's separate presence and reference counts)");
        }
    }
}

/// Whether a directive enters (`[0]`) or exits (`[1]`) the data of its clause `clause`
/// under Rule K, and whether the directive is structured (data or compute construct).
fn entering(d: &Directive, clause: &str) -> (bool, bool, bool) {
    let structured = !matches!(
        d.name.as_str(),
        "enter data" | "exit data" | "update" | "declare" | "host_data"
    );
    let enters = matches!(clause, "copy" | "copyin" | "copyout" | "create")
        && (structured || d.name == "enter data");
    let exits = d.name == "exit data" && clause == "copyout";
    (enters, exits, structured)
}

/// The storage an item names, for the entry count: lower case, blanks and subscripts left
/// out (`v%a(1:4)` and `v%a(5:8)` are one path).
fn path_key(item: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    for ch in item.chars() {
        match ch {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if depth == 0 && !c.is_whitespace() => out.push(c.to_ascii_lowercase()),
            _ => {}
        }
    }
    out
}

/// Whether `item` has `var` as a name inside its subscripts.
fn subscripted_by(item: &str, var: &str) -> bool {
    let lower = item.to_ascii_lowercase();
    let b = lower.as_bytes();
    let word = |i: usize| {
        b.get(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    };
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            _ if depth > 0
                && lower[i..].starts_with(var)
                && !(i > 0 && word(i - 1))
                && !word(i + var.len()) =>
            {
                return true;
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// The file-wide conditions of Rule K (a variable that fails one keeps the refusal): no
/// whole-variable `update`, no `declare` or `host_data` naming it, and each component path
/// entered at most once while live, in file order: two entries of a path without its exit
/// between, an entry while a structured construct holds it, a `copyout` exit after its exit,
/// or an entry or exit in a `do` loop whose variable does not subscript it (each iteration
/// would enter it again). `always` transfers each time, where OpenACC transfers only when
/// the count goes from 0 to 1 or from 1 to 0.
fn k_conditions(m: &mut Mapped, front: &Front, src: &str, all: &[(usize, &Directive)]) {
    let both = |m: &Mapped, v: &str| m.named.get(v).is_some_and(|f| f[0] && f[1]);
    let mut order: Vec<&(usize, &Directive)> = all.iter().collect();
    order.sort_by_key(|(k, _)| front.sites.get(*k).map_or(0, |s| s.span.start));
    // Per path: live (Some(true)), exited (Some(false)); the structured holders' extents.
    let mut state: HashMap<String, bool> = HashMap::default();
    let mut held: Vec<(String, std::ops::Range<usize>)> = Vec::new();
    let mut exited = Vec::new();
    let mut entered = Vec::new();
    for &&(k, d) in &order {
        let at = front.sites.get(k).map_or(0, |s| s.span.start);
        for c in &d.clauses {
            for it in c.items() {
                let item = it.text.trim();
                let (var, comp) = base(item);
                if !both(m, &var) || m.not_k.contains_key(&var) {
                    continue;
                }
                let why = if matches!(d.name.as_str(), "declare" | "host_data") {
                    Some("a 'declare' or 'host_data' directive names it")
                } else if d.name == "update" && !comp {
                    Some(
                        "a whole-variable 'update' names it (OpenACC moves only its own storage, OpenMP its allocatable components too)",
                    )
                } else if comp {
                    let key = path_key(item);
                    let (enters, exits, structured) = entering(d, &c.name);
                    let in_loop = || {
                        front.structure.loops.iter().any(|l| {
                            l.span().contains(&at)
                                && !l.var().is_some_and(|v| subscripted_by(item, v))
                        })
                    };
                    let in_held = held.iter().any(|(p, x)| *p == key && x.contains(&at));
                    if (enters || exits) && !structured && in_loop() {
                        Some(
                            "a 'do' loop enters or exits a component path of it that the loop's variable does not subscript",
                        )
                    } else if enters && (in_held || state.get(&key) == Some(&true)) {
                        Some("a component path of it is entered again while it is present")
                    } else if exits && state.get(&key) == Some(&false) {
                        Some("a component path of it is copied out again after its exit")
                    } else {
                        if enters && structured {
                            let extent = front.structure.regions.get(k).map(|r| r.extent());
                            held.push((key, extent.unwrap_or(at..at + 1)));
                        } else if enters {
                            state.insert(key, true);
                        } else if d.name == "exit data"
                            && matches!(c.name.as_str(), "copyout" | "delete")
                        {
                            state.insert(key, false);
                        }
                        None
                    }
                } else {
                    None
                };
                if !comp && both(m, &var) && entering(d, &c.name).0 {
                    entered.push((var.clone(), at));
                }
                if let Some(why) = why {
                    m.not_k.insert(var, why);
                } else if d.name == "exit data" && !comp {
                    exited.push((var, at));
                } else if !comp && entering(d, &c.name).2 {
                    let end = front.structure.regions.get(k).map(|r| r.extent().end);
                    exited.push((var, end.unwrap_or(at)));
                }
            }
        }
    }
    deallocations(m, front, src, &exited);
    reallocations(m, front, src, &entered, &exited);
}

/// The last component of the path `path` (`[v, b, a]` for `v%b%a`, lower case) as unit
/// `unit` sees the variable: its facts, where the types along the path are known.
fn component_allocatable(front: &Front, unit: Option<usize>, path: &[String]) -> Option<Var> {
    let (var, comps) = path.split_first()?;
    let v = front.facts.lookup(&front.structure, unit?, var)?;
    let mut ty = v.ty.clone();
    let mut last = None;
    for c in comps {
        let Type::Derived { name, .. } = &ty else {
            return None;
        };
        let comp = front
            .facts
            .derived(name)?
            .components
            .iter()
            .find(|x| x.name == *c)?
            .clone();
        ty = comp.ty.clone();
        last = Some(comp);
    }
    last
}

/// The lower-case names of an assignment's left side that is a whole component
/// (`v%a = …`, `v%b(i)%a = …`: a name after `%` last) or a variable or element with no
/// component (`v = …`, `v(i) = …`: one name), subscripts left out, and whether its right
/// side is one literal constant; None for other statements.
fn whole_component_assignment(
    front: &Front,
    src: &str,
    toks: std::ops::Range<usize>,
) -> Option<(Vec<String>, bool)> {
    let lx = &front.lexed;
    let from = action_start(front, src, toks.clone());
    let eq = (from..toks.end).find(|&i| lx.text(src, i) == "=")?;
    let mut path = Vec::new();
    let mut depth = 0usize;
    for i in from..eq {
        let t = lx.text(src, i);
        match t.as_ref() {
            "(" => depth += 1,
            ")" => depth = depth.checked_sub(1)?,
            _ if depth > 0 => {}
            "%" => {}
            _ if lx.tokens[i].kind() == TokKind::Name => path.push(lx.lower(src, i)),
            _ => return None,
        }
    }
    // Ends with a component name (`v%a`), not with a subscript; or the variable or an
    // element of it (`v = w`, `v(i) = w`: its allocatable components assigned too).
    let whole = path.len() == 1 && (from..eq).all(|i| lx.text(src, i) != "%");
    if !whole
        && (path.len() < 2
            || eq < from + 3
            || lx.text(src, eq - 2) != "%"
            || lx.text(src, eq - 1) == ")")
        || depth != 0
    {
        return None;
    }
    let rhs: Vec<_> = (eq + 1..toks.end).map(|i| lx.text(src, i)).collect();
    let literal = match rhs.as_slice() {
        [x] | [_, x]
            if x.chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit() || c == '.') =>
        {
            rhs.len() == 1 || matches!(rhs[0].as_ref(), "-" | "+")
        }
        _ => false,
    };
    Some((path, literal))
}

/// Rule K does not take a variable a component of which is allocated (`allocate`) or may be
/// reallocated by an intrinsic assignment to the whole component (`v%a = b`, where `b`'s
/// shape may differ) or to the variable or an element of it (`v = w`, `v(i) = w`), or passed
/// to a procedure that may do either (`call f(v)`, `call f(v%a)`, `x = g(v)`: see
/// [`call_arguments`], [`function_arguments`]) while the variable may be mapped: after an entry of the whole variable
/// (a directive of another program unit, or one before it in its unit with no exit of the
/// variable between, or in a `do` loop with it). The variable's deep map holds the
/// component's old storage (or none), and under flang-22 the component's new entry and its
/// `always` copy back work on stale storage: the host keeps the old values (or loses the
/// allocation). `entered`, `exited`: each entry and exit of a whole variable with its
/// offset (a construct's exit: where it ends).
fn reallocations(
    m: &mut Mapped,
    front: &Front,
    src: &str,
    entered: &[(String, usize)],
    exited: &[(String, usize)],
) {
    let lx = &front.lexed;
    let st = &front.structure;
    let both = |m: &Mapped, v: &str| m.named.get(v).is_some_and(|f| f[0] && f[1]);
    // Most files map no variable both ways: nothing to read.
    if !m.named.values().any(|f| f[0] && f[1]) {
        return;
    }
    let mapped_at = |var: &str, at: usize| {
        let unit = st.unit_at(at);
        entered.iter().any(|(v, e)| {
            *v == var
                && (st.unit_at(*e) != unit
                    || *e < at
                        && !exited
                            .iter()
                            .any(|(x, y)| x == var && *e < *y && *y < at && st.unit_at(*y) == unit)
                    || st
                        .loops
                        .iter()
                        .any(|l| l.span().contains(e) && l.span().contains(&at)))
        })
    };
    for (index, stmt) in lx.stmts.iter().enumerate() {
        let toks = stmt.toks();
        let at = stmt.span().start;
        let mut found: Vec<(String, &'static str)> = Vec::new();
        let first = action_start(front, src, toks.clone());
        if first + 1 < toks.end && lx.is(src, first, "allocate") && lx.text(src, first + 1) == "(" {
            // The items of `allocate(…)` that are components (`v%a(n)`).
            let mut depth = 0usize;
            let mut item = String::new();
            for j in first + 1..toks.end {
                let t = lx.text(src, j);
                match t.as_ref() {
                    "(" => depth += 1,
                    ")" => depth = depth.saturating_sub(1),
                    _ => {}
                }
                if depth == 1 && t == "," || depth == 0 {
                    let (var, comp) = base(&item);
                    if comp {
                        found.push((var, "a component of it is allocated while it may be mapped (its deep map keeps the component's old state, so the component's own maps work on stale storage)"));
                    }
                    item.clear();
                    if depth == 0 {
                        break;
                    }
                } else if !(depth == 1 && t == "(" && item.is_empty()) {
                    item.push_str(&t);
                }
            }
        } else if first < toks.end && lx.is(src, first, "call") {
            for var in call_arguments(front, src, toks.clone()) {
                found.push((var, "it or a whole component of it is passed to a procedure while it may be mapped, which may deallocate or reallocate the component (an 'intent(out)' or allocatable dummy): its deep map would keep the old storage, so the components' own maps would work on stale storage"));
            }
        } else if let Some((path, literal)) = whole_component_assignment(front, src, toks.clone()) {
            let c = component_allocatable(front, st.unit_at(at), &path);
            let realloc = match &c {
                Some(c) => c.allocatable && !(literal && c.is_array()),
                None => true,
            };
            if path.len() == 1 {
                // `v = w`: each allocatable component assigned as by `v%a = w%a`.
                found.push((path[0].clone(), "an intrinsic assignment to it (or to an element of it) may reallocate its allocatable components while it may be mapped (its deep map keeps the old storage, so the components' own maps work on stale storage)"));
            } else if realloc {
                found.push((path[0].clone(), "an intrinsic assignment to a whole allocatable component of it may reallocate the component while the variable may be mapped (its deep map keeps the old storage, so the component's own maps work on stale storage)"));
            }
        }
        let exec = st
            .unit_of(index)
            .is_some_and(|u| st.units[u].exec.contains(&index));
        if exec {
            for var in function_arguments(front, src, index, toks.clone(), st.unit_at(at)) {
                found.push((var, "it or a whole component of it is passed to a function while it may be mapped, which may deallocate or reallocate the component (an 'intent(out)' or allocatable dummy): its deep map would keep the old storage, so the components' own maps would work on stale storage"));
            }
        }
        for (var, why) in found {
            if both(m, &var) && mapped_at(&var, at) {
                m.not_k.entry(var).or_insert(why);
            }
        }
    }
}

/// Rule K does not take a variable a component of which is deallocated (`deallocate`,
/// `move_alloc`) where no exit of the whole variable (or end of a construct mapping it) comes
/// before in its program unit: the
/// variable's deep map keeps the old device block under the old host address, and under
/// flang-22 a kernel after the component's reallocation and new entry reads wrong data or
/// fails to map. `exited`: each exit of a whole variable, with its offset (a construct's:
/// where it ends).
fn deallocations(m: &mut Mapped, front: &Front, src: &str, exited: &[(String, usize)]) {
    let lx = &front.lexed;
    let st = &front.structure;
    for stmt in &lx.stmts {
        let toks = stmt.toks();
        let Some(first) = toks
            .clone()
            .find(|&i| lx.is(src, i, "deallocate") || lx.is(src, i, "move_alloc"))
        else {
            continue;
        };
        let at = stmt.span().start;
        let unit = st.unit_at(at);
        let mut depth = 0usize;
        let mut item = String::new();
        let mut items = Vec::new();
        for j in first + 1..toks.end {
            let t = lx.text(src, j);
            match t.as_ref() {
                "(" if depth == 0 => depth = 1,
                "(" => {
                    depth += 1;
                    item.push('(');
                }
                ")" if depth == 1 => break,
                ")" => {
                    depth -= 1;
                    item.push(')');
                }
                "," if depth == 1 => items.push(std::mem::take(&mut item)),
                _ => item.push_str(&t),
            }
        }
        items.push(item);
        let moved = lx.is(src, first, "move_alloc");
        for it in items {
            // A keyword argument (`from=v%a`, `stat=s`).
            let it = match it.split_once('=') {
                Some((kw, rest)) if !kw.contains(['%', '(']) => rest.to_string(),
                _ => it,
            };
            let (var, comp) = base(&it);
            let both = m.named.get(&var).is_some_and(|f| f[0] && f[1]);
            let after_exit = exited
                .iter()
                .any(|(v, x)| *v == var && *x < at && st.unit_at(*x) == unit);
            if comp && both && !after_exit {
                m.not_k.entry(var).or_insert(if moved {
                    "a component of it is moved by 'move_alloc' while it may be mapped (its deep map would keep the old device copy)"
                } else {
                    "a component of it is deallocated while it may be mapped (its deep map would keep the old device copy)"
                });
            }
        }
    }
}

/// Why directive `d` of front-end site `k` is left unchanged (offset, reason), given what
/// every OpenACC directive and runtime call of the file maps (`m`, from [`mapped`]).
pub fn refusal(front: &Front, k: usize, d: &Directive, m: &Mapped) -> Option<(usize, String)> {
    let unit = front.structure.regions.get(k)?.unit()?;
    checked_items(d)
        .find_map(|item| item_refusal(front, unit, item, m))
        .map(|why| {
            (
                front.sites[k].span.start,
                format!("{why}; the directive is left unchanged"),
            )
        })
}

/// Why a variable mapped whole and by components has no known type here: its declaration
/// or its type's definition is in another file (a module), so whether its components are
/// allocatable is not known, and the plain translation would be wrong if they were. flang's
/// facts (`super::flang::import`) give the types of modules it can read.
const UNKNOWN_TYPE: &str = "its declaration or its type's definition is not in this file (a module of another file), so whether its components are allocatable is not known (with flang-22 installed, the tool reads the module from its '.mod' file or its source in the file's directory or an '-I' directory of the file's compile command, '-p compile_commands.json')";

/// The variable `item` maps in unit `unit` when it is mapped whole and by components in the
/// file and its type has allocatable or pointer components, or may have them (its type is
/// not known here: then no components): its name and those components.
fn deep_mapped(
    front: &Front,
    unit: usize,
    item: &str,
    m: &Mapped,
) -> Option<(String, Vec<String>)> {
    // Both ways in data clauses (`item` may be an update's, which maps nothing).
    let (name, _) = base(item);
    if !m.named.get(&name).is_some_and(|f| f[0] && f[1]) {
        return None;
    }
    let v = front.facts.lookup(&front.structure, unit, &name);
    let ty = match v.as_ref().map(|v| &v.ty) {
        Some(Type::Derived { name: ty, .. }) => ty,
        Some(Type::Intrinsic { .. }) => return None,
        // Mapped by components, so of a derived type: declared in another file.
        None | Some(Type::Implicit(_)) => return Some((name, Vec::new())),
    };
    if front.facts.derived(ty).is_none() {
        return Some((name, Vec::new()));
    }
    let deep = deep_components(front, ty);
    (!deep.is_empty()).then_some((name, deep))
}

/// Why Rule K cannot take the variable `name` of unit `unit` (see [`k_map`]).
fn not_k(front: &Front, unit: usize, name: &str, m: &Mapped) -> Option<&'static str> {
    if let Some(why) = m.not_k.get(name) {
        return Some(why);
    }
    let Some(v) = front.facts.lookup(&front.structure, unit, name) else {
        return Some(UNKNOWN_TYPE);
    };
    match &v.ty {
        Type::Implicit(_) => Some(UNKNOWN_TYPE),
        Type::Derived { name: ty, .. } if front.facts.derived(ty).is_none() => Some(UNKNOWN_TYPE),
        Type::Derived { class: true, .. } => Some("it is polymorphic ('class')"),
        _ if v.optional => Some("it is an optional argument"),
        Type::Derived { name: ty, .. } if !only_allocatable(front, ty, 0) => Some(
            "its type has components that are neither allocatable nor pointers, which OpenACC copies back with the variable",
        ),
        _ => None,
    }
}

/// Whether every ultimate component of derived type `ty` is allocatable or a pointer, not
/// polymorphic (not looking into those): then OpenACC's copy of the variable itself moves only descriptors.
fn only_allocatable(front: &Front, ty: &str, depth: usize) -> bool {
    let Some(t) = front.facts.derived(ty) else {
        return false;
    };
    // A polymorphic component is not taken (untested: its dynamic type may hold more).
    t.components.iter().all(|c| {
        (c.allocatable || c.pointer) && !matches!(&c.ty, Type::Derived { class: true, .. })
            || matches!(&c.ty, Type::Derived { name, .. } if depth < 16 && only_allocatable(front, name, depth + 1))
    })
}

/// Why a map of `item` in unit `unit` is not translated (see the module documentation),
/// given what the file maps (`m`): a variable mapped whole and by components that Rule K
/// cannot take.
pub fn item_refusal(front: &Front, unit: usize, item: &str, m: &Mapped) -> Option<String> {
    // Both sides are left, so that a second run sees the same directives and calls.
    let (name, deep) = deep_mapped(front, unit, item, m)?;
    let why = not_k(front, unit, &name, m)?;
    let kind = if deep.is_empty() {
        "of a type that may have allocatable or pointer components".to_string()
    } else {
        format!(
            "of a type with allocatable or pointer components ({})",
            deep.join(", ")
        )
    };
    Some(format!(
        "'{name}' is {kind}, mapped whole and by components on their own in this file: OpenACC copies the variable shallow and gives each component mapped after it its own copy and reference count, OpenMP 5 maps the allocatable components with the variable, so a component's own copy back would not happen while the variable stays mapped, and {why}; map the components without the whole variable"
    ))
}

/// Rule K: a variable whose type has only allocatable or pointer components, mapped whole
/// and by components, keeps both maps; the variable's own entry copies it in (`to`: its
/// descriptors, which OpenACC's attach sets on the device), its exit transfers nothing
/// (OpenACC copies back only descriptors) and the components' transfers are forced with `always`
/// (OpenMP holds them with the variable, so their counts never reach zero). The modifiers
/// and map type of `item` in clause `clause` of `d` in unit `unit` when the rule changes
/// them: `(always, type)`.
pub fn k_map(
    front: &Front,
    unit: usize,
    d: &Directive,
    clause: &str,
    item: &str,
    m: &Mapped,
) -> Option<(bool, &'static str)> {
    let (name, _) = deep_mapped(front, unit, item, m)?;
    if not_k(front, unit, &name, m).is_some() {
        return None;
    }
    let comp = base(item).1;
    let (_, _, structured) = entering(d, clause);
    let finalize = d.clauses.iter().any(|c| c.name == "finalize");
    match (comp, d.name.as_str(), clause) {
        (false, "exit data", "copyout") => {
            Some((false, if finalize { "delete" } else { "release" }))
        }
        (false, _, "copy") if structured => Some((false, "to")),
        // Not `alloc`: flang-22 then leaves the device copy's descriptors unset, and a
        // kernel after the components' own maps reads wrong data.
        (false, _, "copyout") if structured => Some((false, "to")),
        (false, "enter data", "create") => Some((false, "to")),
        (false, _, "create") if structured => Some((false, "to")),
        (true, "enter data", "copyin") => Some((true, "to")),
        (true, "exit data", "copyout") => Some((true, "from")),
        (true, _, "copyin") if structured => Some((true, "to")),
        (true, _, "copy") if structured => Some((true, "tofrom")),
        (true, _, "copyout") if structured => Some((true, "from")),
        _ => None,
    }
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
