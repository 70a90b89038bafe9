//! The actual arguments of procedure references that may pass a mapped variable's storage
//! to a procedure: the arguments of `call` statements and of function references, read
//! from the tokens of one statement.

use super::super::Front;
use super::super::calls::calls;
use super::super::facts::{Type, Var};
use super::super::lang::is_intrinsic_function;
use super::super::lex::TokKind;
use super::super::stmt::UnitKind;
use super::component_allocatable;
use std::ops::Range;

/// The first token of statement `toks` after a logical `if (…)`, if it has one.
pub(super) fn action_start(front: &Front, src: &str, toks: Range<usize>) -> usize {
    let lx = &front.lexed;
    let k = toks.start;
    if k + 1 < toks.end && lx.is(src, k, "if") && lx.text(src, k + 1) == "(" {
        let mut depth = 0usize;
        for i in k + 1..toks.end {
            match lx.text(src, i).as_ref() {
                "(" => depth += 1,
                ")" if depth == 1 => return i + 1,
                ")" => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
    }
    k
}

/// The base names of the actual arguments of a `call` statement (after a logical `if (…)`
/// too) that pass a variable, an element of it or a whole component (`v`, `v(i)`, `v%a`,
/// `v(i)%a`, keyword or not), and the object a type-bound procedure is called on
/// (`call v%grow(n)`): storage the procedure may deallocate or reallocate (an
/// `intent(out)` dummy of a type with allocatable components, an allocatable dummy). Not
/// an element or a section of a component (`v%a(i)`, `v%a(1:n)`), nor an expression.
pub(super) fn call_arguments(front: &Front, src: &str, toks: Range<usize>) -> Vec<String> {
    let lx = &front.lexed;
    let k = action_start(front, src, toks.clone());
    if k + 1 >= toks.end || !lx.is(src, k, "call") || lx.tokens[k + 1].kind() != TokKind::Name {
        return Vec::new();
    }
    // The argument list: the last parenthesised group at depth 0 (`call v(i)%p(x)`).
    let mut depth = 0usize;
    let mut list = None;
    let mut bound = false;
    for i in k + 2..toks.end {
        match lx.text(src, i).as_ref() {
            "(" if depth == 0 => {
                list = Some(i);
                depth = 1;
            }
            "(" => depth += 1,
            ")" => depth = depth.saturating_sub(1),
            "%" if depth == 0 => bound = true,
            _ => {}
        }
    }
    let mut out = Vec::new();
    if bound {
        out.push(lx.lower(src, k + 1));
    }
    if let Some(open) = list {
        out.extend(passed_in(front, src, open, toks.end));
    }
    out
}

/// The base names of the actual arguments of every function reference in statement
/// `stmt` (tokens `toks`, of unit `unit`) that pass a variable, an element of it or a whole
/// component (as [`call_arguments`] reads them), and the objects type-bound functions are
/// referenced on (`v%norm()`): a function may reallocate or deallocate what it is passed as
/// a subroutine may (`x = f(v)`, `if (g(v%a) > 0)`, `call s(f(v%a))`, `obj%fn(v%a)`). The
/// function references are [`calls`]'s; a name after `%` followed by `(` is a type-bound
/// function where the type before it is known and has no component of that name.
pub(super) fn function_arguments(
    front: &Front,
    src: &str,
    stmt: usize,
    toks: Range<usize>,
    unit: Option<usize>,
) -> Vec<String> {
    let lx = &front.lexed;
    let mut out = Vec::new();
    let mut functions: Vec<usize> = calls(src, front, stmt..stmt + 1)
        .iter()
        .filter(|c| !c.member)
        .filter_map(|c| toks.clone().find(|&i| lx.tokens[i].start() == c.at))
        .filter(|&i| i > toks.start && !lx.is(src, i - 1, "call"))
        .collect();
    // A procedure of the file named like an intrinsic function (`sum`, `norm2`), which
    // `calls` takes for the intrinsic: it may be the one referenced.
    for i in toks.start + 1..toks.end.saturating_sub(1) {
        if lx.tokens[i].kind() != TokKind::Name
            || lx.text(src, i + 1) != "("
            || lx.text(src, i - 1) == "%"
            || functions.contains(&i)
        {
            continue;
        }
        let name = lx.lower(src, i);
        let own =
            is_intrinsic_function(&name)
                && front.structure.units.iter().any(|u| {
                    u.kind == UnitKind::Function && u.name.as_deref() == Some(name.as_str())
                });
        let data = unit
            .and_then(|u| front.facts.lookup(&front.structure, u, &name))
            .is_some_and(|v| v.at != 0 && element_or_substring(&v.ty, v.is_array()));
        if own && !data {
            functions.push(i);
        }
    }
    for i in toks.start + 2..toks.end.saturating_sub(1) {
        if lx.text(src, i - 1) != "%"
            || lx.tokens[i].kind() != TokKind::Name
            || lx.text(src, i + 1) != "("
        {
            continue;
        }
        // The statement's `call` has its own reading (`call_arguments`).
        if path_after_call(front, src, toks.start, i) {
            continue;
        }
        let path = designator_path(front, src, toks.start, i);
        let function = match member(front, unit, &path) {
            Member::Binding => true,
            // An element or substring; else a procedure pointer component.
            Member::Component(c) => !element_or_substring(&c.ty, c.is_array()),
            // The rule refuses a variable of a type not known here for that.
            Member::Unknown => false,
        };
        if function {
            out.push(path[0].clone());
            functions.push(i);
        }
    }
    for i in functions {
        out.extend(passed_in(front, src, i + 1, toks.end));
    }
    out
}

/// Whether the name at token `i` ends the designator a `call` statement names (`call
/// v%p(…)`): its arguments are [`call_arguments`]'s.
fn path_after_call(front: &Front, src: &str, from: usize, i: usize) -> bool {
    let lx = &front.lexed;
    let mut j = i;
    while j >= from + 2 && lx.text(src, j - 1) == "%" {
        j -= 2;
        if lx.text(src, j) == ")" {
            return false;
        }
    }
    j > from && lx.is(src, j - 1, "call")
}

/// What the last name of a designator's path is.
enum Member {
    /// A component, as declared.
    Component(Var),
    /// Not a component of the known type before it: a type-bound procedure.
    Binding,
    /// The type before it is not known here.
    Unknown,
}

/// What the last name of `path` (`[v, b, fn]` for `v%b%fn`, at least two names) is, as
/// unit `unit` sees the variable.
fn member(front: &Front, unit: Option<usize>, path: &[String]) -> Member {
    let Some((last, before)) = path.split_last().filter(|(_, b)| !b.is_empty()) else {
        return Member::Unknown;
    };
    let ty = if before.len() == 1 {
        unit.and_then(|u| front.facts.lookup(&front.structure, u, &before[0]))
            .map(|v| v.ty.clone())
    } else {
        component_allocatable(front, unit, before).map(|c| c.ty)
    };
    let Some(Type::Derived { name, .. }) = ty else {
        return Member::Unknown;
    };
    let Some(t) = front.facts.derived(&name) else {
        return Member::Unknown;
    };
    match t.components.iter().find(|c| c.name == *last) {
        Some(c) => Member::Component(c.clone()),
        None => Member::Binding,
    }
}

/// Whether `name(…)` of something of type `ty` is an element or a substring, not a
/// reference to a function.
fn element_or_substring(ty: &Type, array: bool) -> bool {
    array || matches!(ty, Type::Intrinsic { name, .. } if name == "character")
}

/// The lower-case names of the designator ending at component name `last` (`v(i)%b%fn` for
/// `fn`: `[v, b, fn]`), read back to `from`, subscripts left out.
fn designator_path(front: &Front, src: &str, from: usize, last: usize) -> Vec<String> {
    let lx = &front.lexed;
    let mut path = vec![lx.lower(src, last)];
    let mut i = last;
    while i >= from + 2 && lx.text(src, i - 1) == "%" {
        let mut j = i - 2;
        // Skip the subscripts of the part before `%`.
        if lx.text(src, j) == ")" {
            let mut depth = 0usize;
            loop {
                match lx.text(src, j).as_ref() {
                    ")" => depth += 1,
                    "(" => depth -= 1,
                    _ => {}
                }
                if depth == 0 || j == from {
                    break;
                }
                j -= 1;
            }
            if depth != 0 || j == from {
                return Vec::new();
            }
            j -= 1;
        }
        if lx.tokens[j].kind() != TokKind::Name {
            return Vec::new();
        }
        path.push(lx.lower(src, j));
        i = j;
    }
    path.reverse();
    path
}

/// The base names of the arguments in the list opening at token `open` (up to its
/// matching `)`, before `end`) that pass storage (see [`passed_storage`]), keyword or not.
fn passed_in(front: &Front, src: &str, open: usize, end: usize) -> Vec<String> {
    let lx = &front.lexed;
    let mut out = Vec::new();
    let mut arg: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    for i in open..end {
        let t = lx.text(src, i);
        match t.as_ref() {
            "(" => depth += 1,
            ")" => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0 || (depth == 1 && t == ",") {
            // A keyword (`x = v`) left out.
            let a = match arg.as_slice() {
                [kw, eq, rest @ ..]
                    if lx.tokens[*kw].kind() == TokKind::Name && lx.text(src, *eq) == "=" =>
                {
                    rest
                }
                a => a,
            };
            if let Some(name) = passed_storage(front, src, a) {
                out.push(name);
            }
            arg.clear();
            if depth == 0 {
                break;
            }
        } else if i != open {
            arg.push(i);
        }
    }
    out
}

/// The base name of argument tokens `a` that are a variable, an element of it or a whole
/// component (`v`, `v(i)`, `v%a`, `v(i)%b%a`): a designator that does not end in a subscript
/// after a `%` (see [`call_arguments`]).
fn passed_storage(front: &Front, src: &str, a: &[usize]) -> Option<String> {
    let lx = &front.lexed;
    let (&first, _) = a.split_first()?;
    if lx.tokens[first].kind() != TokKind::Name {
        return None;
    }
    let mut depth = 0usize;
    let mut comps = 0;
    let mut last_paren = false;
    for &i in &a[1..] {
        let t = lx.text(src, i);
        match t.as_ref() {
            "(" => {
                depth += 1;
                last_paren = false;
            }
            ")" => {
                depth = depth.checked_sub(1)?;
                last_paren = depth == 0;
            }
            _ if depth > 0 => {}
            "%" => {
                comps += 1;
                last_paren = false;
            }
            _ if lx.tokens[i].kind() == TokKind::Name => last_paren = false,
            _ => return None,
        }
    }
    (depth == 0 && (comps == 0 || !last_paren)).then(|| lx.lower(src, first))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TYPES: &str = "module m\n  type t\n    real, allocatable :: a(:)\n    character(8) :: s\n  contains\n    procedure :: f => tf\n  end type\ncontains\n  integer function tf(x)\n    class(t) :: x\n    tf = 1\n  end function\nend module\n";

    /// Per statement of the last unit of `TYPES` + `body`: the names passed to functions,
    /// then those passed by the `call`.
    fn passed(body: &str) -> Vec<(Vec<String>, Vec<String>)> {
        let src = format!(
            "{TYPES}subroutine s(v, w, n)\n  use m\n  type(t) :: v, w, u(2)\n  real :: b(4), x\n  integer :: n\n{body}end subroutine\n"
        );
        let kind = crate::fortran::form::kind_of(std::path::Path::new("x.f90")).expect("Fortran");
        let front = Front::new(&src, kind, |_| Default::default());
        let st = &front.structure;
        let unit = st.units.len() - 1;
        st.units[unit]
            .exec
            .clone()
            .map(|k| {
                let toks = front.lexed.stmts[k].toks();
                (
                    function_arguments(&front, &src, k, toks.clone(), Some(unit)),
                    call_arguments(&front, &src, toks),
                )
            })
            .collect()
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn function_references_pass_variables_and_whole_components() {
        let got = passed(
            "  x = g(v) + h(w%a)\n  if (k(u(1)) > 0) n = 1\n  call p(q(v%a), w)\n  n = v%f() + w%a(1)\n",
        );
        assert_eq!(got[0], (names(&["v", "w"]), vec![]));
        assert_eq!(got[1], (names(&["u"]), vec![]));
        // `q(…)` may be an element of an array `q` as far as the call reads it.
        assert_eq!(got[2], (names(&["v"]), names(&["q", "w"])));
        assert_eq!(got[3], (names(&["v"]), vec![]));
    }

    #[test]
    fn elements_sections_expressions_and_intrinsics_pass_no_storage() {
        let got = passed(
            "  x = g(v%a(1)) + h(w%a(1:2)) + size(v%a) + sum(w%a)\n  x = b(n) + g(x + 1.0)\n  v%s(1:2) = w%s(3:4)\n  v%a(n) = g(2.0)\n",
        );
        for (i, (f, c)) in got.iter().enumerate() {
            assert!(
                f.iter().all(|n| !["v", "w", "u"].contains(&n.as_str())),
                "{i}: {f:?}"
            );
            assert!(c.is_empty(), "{i}: {c:?}");
        }
    }

    /// A function of the file named like an intrinsic may be the one referenced.
    #[test]
    fn own_functions_named_like_intrinsics_pass_their_arguments() {
        let src = "module k\n  use m\ncontains\n  real function norm2(x)\n    type(t), intent(inout) :: x\n    norm2 = 1\n  end function\nend module\n";
        let own = format!(
            "{TYPES}{src}subroutine s(v, w)\n  use k\n  type(t) :: v, w\n  real :: x\n  x = norm2(v) + sum(w%a)\nend subroutine\n"
        );
        let kind = crate::fortran::form::kind_of(std::path::Path::new("x.f90")).expect("Fortran");
        let front = Front::new(&own, kind, |_| Default::default());
        let st = &front.structure;
        let unit = st.units.len() - 1;
        let k = st.units[unit].exec.start;
        let toks = front.lexed.stmts[k].toks();
        assert_eq!(
            function_arguments(&front, &own, k, toks, Some(unit)),
            names(&["v"])
        );
    }

    #[test]
    fn calls_pass_their_arguments_and_object() {
        let got =
            passed("  call p(v, x = w%a, y = b)\n  call v%f2(w)\n  if (n > 0) call r(u(2)%a)\n");
        assert_eq!(got[0].1, names(&["v", "w", "b"]));
        assert_eq!(got[1].1, names(&["v", "w"]));
        assert_eq!(got[2].1, names(&["u"]));
        assert!(got.iter().all(|(f, _)| f.is_empty()), "{got:?}");
    }
}
