//! Where the OpenMP of a Fortran `declare` goes. The mapping is the shared one
//! (`translate::declare`): in a module, `declare target`; in a subprogram or main program, a
//! data lifetime of the unit, as `target enter data` and `target exit data` before each
//! `return` and before the end of its execution part. Fortran adds two placements:
//!
//! - `target enter data` is executable, so it goes after the unit's last specification
//!   statement (or declarative directive), not where the `declare` stands among them;
//! - OpenACC gives an allocatable module variable of a `declare create` its device copy at
//!   each `allocate` and frees it at each `deallocate`. OpenMP's `declare target` does not,
//!   so such a variable leaves the directive and gets `target enter data map(alloc: …)`
//!   after each `allocate` of it and `target exit data map(delete: …)` before each
//!   `deallocate`, when every one of them in the file can take a directive line.

use super::Front;
use super::facts::Var;
use super::lines::Sentinel;
use super::stmt::{Kind, Toks};
use super::structure::Applies;
use crate::directive::Directive;
use std::ops::Range;

/// Where a statement's directive goes: before its first line or after its last one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Before,
    After,
}

/// A directive line to add next to statement `stmt`, naming `vars`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Around {
    pub stmt: usize,
    pub side: Side,
    pub vars: Vec<String>,
}

/// The variables of a `declare` directive's clauses, as written, with the clause each is in.
fn items(d: &Directive) -> Vec<(String, &str)> {
    d.clauses
        .iter()
        .flat_map(|c| {
            c.items()
                .map(move |x| (x.text.trim().to_string(), c.name.as_str()))
        })
        .collect()
}

/// The declaration a `declare` item names, seen from the unit of site `k`.
fn var_of<'a>(front: &'a Front, k: usize, item: &str) -> Option<std::borrow::Cow<'a, Var>> {
    let unit = front.structure.regions.get(k)?.unit()?;
    let name = item.split(['(', '%', ' ']).next()?.trim();
    front.facts.lookup(&front.structure, unit, name)
}

/// The allocatable variables of the `declare` at site `k` (in a module): the names as
/// written.
pub fn allocatables(front: &Front, k: usize, d: &Directive) -> Vec<String> {
    items(d)
        .into_iter()
        .filter(|(x, _)| var_of(front, k, x).is_some_and(|v| v.allocatable))
        .map(|(x, _)| x)
        .collect()
}

/// Why the `declare` at site `k` cannot be written (offset, reason); `module`: it stands in
/// a module.
pub fn refusal(
    src: &str,
    front: &Front,
    k: usize,
    d: &Directive,
    module: bool,
) -> Option<(usize, String)> {
    let at = front.sites[k].span.start;
    for (x, clause) in items(d) {
        if x.starts_with('/') {
            let why = if module {
                "'declare target' of it is the OpenMP form, but flang-22 then makes a scalar of the block firstprivate in a target region instead of using its device copy (a lost write)"
            } else {
                "'declare target' of it, which gfortran runs, is not shared between subprograms by flang-22, OpenMP forbids its members in 'declare target', and 'target enter data' of the members would end the device copy at the return, which a common block's outlives"
            };
            return Some((
                at,
                format!("'{x}' is a common block: {why}; the directive is left unchanged"),
            ));
        }
        let Some(v) = var_of(front, k, &x) else {
            continue;
        };
        if v.pointer {
            return Some((
                at,
                format!(
                    "'{x}' is a pointer: OpenMP maps its target, not the pointer OpenACC's 'declare' gives a device copy; the directive is left unchanged"
                ),
            ));
        }
        if !v.allocatable {
            continue;
        }
        if !module {
            return Some((
                at,
                format!(
                    "'{x}' is allocatable: OpenACC makes its device copy at each 'allocate' in this unit and frees it at each 'deallocate' and at the unit's end, which is not translated; the directive is left unchanged"
                ),
            ));
        }
        if clause != "create" && clause != "device_resident" {
            return Some((
                at,
                format!(
                    "'{x}' is allocatable: only 'create' of an allocatable module variable is translated (a device copy made at each 'allocate'); the directive is left unchanged"
                ),
            ));
        }
        if let Err((off, why)) = allocations(src, front, &v) {
            return Some((
                off,
                format!("{why}; the 'declare' of '{x}' is left unchanged"),
            ));
        }
    }
    None
}

/// The `allocate` and `deallocate` statements of module variable `v` in the file, each
/// with the side its directive goes on; Err (offset, why) where one cannot take a directive
/// line, or where the variable may be allocated out of sight.
pub fn allocations(src: &str, front: &Front, v: &Var) -> Result<Vec<Around>, (usize, String)> {
    let (lx, st) = (&front.lexed, &front.structure);
    let ours = |k: usize, name: &str| {
        st.unit_of(k)
            .and_then(|u| front.facts.lookup(st, u, name))
            .is_some_and(|w| w.at == v.at && w.name == v.name)
    };
    let mut out = Vec::new();
    for (k, stmt) in lx.stmts.iter().enumerate() {
        let at = stmt.span().start;
        let t = Toks::new(src, lx, stmt);
        let (first, side) = match &st.stmts[k].kind {
            Kind::Allocate => (stmt.toks().start, Side::After),
            Kind::Deallocate => (stmt.toks().start, Side::Before),
            Kind::IfStmt(a) if t.is(*a, "allocate") || t.is(*a, "deallocate") => (*a, Side::After),
            Kind::Call
                if t.text(stmt.toks().start + 1)
                    .eq_ignore_ascii_case("move_alloc")
                    && mentions(&t, stmt.toks(), &v.name) =>
            {
                return Err((
                    at,
                    format!(
                        "'{}' is moved by 'move_alloc': its device copy would not follow",
                        v.name
                    ),
                ));
            }
            Kind::Call if passes_whole(&t, stmt.toks(), &v.name) && ours(k, &v.name) => {
                return Err((
                    at,
                    format!(
                        "'{}' is passed whole to a procedure, whose allocatable dummy argument could allocate or deallocate it out of sight",
                        v.name
                    ),
                ));
            }
            _ => continue,
        };
        let mut named = Vec::new();
        let mut k2 = first + 2;
        while let Some(d) = t.designator(k2) {
            let name = lx.lower(src, k2);
            if name == v.name && ours(k, &name) {
                if component(&t, k2, d) {
                    return Err((at, format!("a component of '{}' is allocated here", v.name)));
                }
                named.push(src[lx.tokens[k2].range()].to_string());
            }
            if t.text(d) != "," {
                break;
            }
            k2 = d + 1;
        }
        if named.is_empty() {
            continue;
        }
        if first != stmt.toks().start {
            return Err((
                at,
                format!(
                    "'{}' is allocated or deallocated by the action of a logical 'if', where no directive line can go",
                    v.name
                ),
            ));
        }
        if !own_lines(front, k) {
            return Err((at, "this statement shares a line with another one, so no directive line can go next to it".to_string()));
        }
        if side == Side::Before && stmt.label.is_some() {
            return Err((
                at,
                "this 'deallocate' has a label: a jump to it would skip the 'exit data' before it"
                    .to_string(),
            ));
        }
        out.push(Around {
            stmt: k,
            side,
            vars: named,
        });
    }
    if !out.iter().any(|a| a.side == Side::After) {
        let at = v.at;
        return Err((
            at,
            format!(
                "no 'allocate' of '{}' is in this file, so its device copy cannot follow its allocation",
                v.name
            ),
        ));
    }
    Ok(out)
}

/// Whether the designator at `k..end` reaches a component (`a%b`, `a(i)%b`).
fn component(t: &Toks, k: usize, end: usize) -> bool {
    let mut i = k + 1;
    while i < end {
        match t.text(i).as_ref() {
            "(" | "[" => i = t.after(i).unwrap_or(end),
            "%" => return true,
            _ => i += 1,
        }
    }
    false
}

/// Whether `name` is a whole actual argument among `toks` (`call f(a, name)`).
fn passes_whole(t: &Toks, toks: Range<usize>, name: &str) -> bool {
    let first = toks.start;
    toks.into_iter().any(|i| {
        i > first
            && t.is_name(i)
            && t.text(i).eq_ignore_ascii_case(name)
            && matches!(t.text(i - 1).as_ref(), "(" | ",")
            && matches!(t.text(i + 1).as_ref(), ")" | ",")
    })
}

fn mentions(t: &Toks, toks: Range<usize>, name: &str) -> bool {
    toks.into_iter()
        .any(|i| t.is_name(i) && t.text(i).eq_ignore_ascii_case(name))
}

/// Whether statement `k` has its lines to itself (no other statement starts or ends on them).
pub fn own_lines(front: &Front, k: usize) -> bool {
    let stmts = &front.lexed.stmts;
    let lines = stmts[k].lines();
    let before = k == 0 || stmts[k - 1].lines().end <= lines.start;
    let after = stmts
        .get(k + 1)
        .is_none_or(|n| n.lines().start >= lines.end);
    before && after
}

/// Per program unit: the end of its last declarative OpenACC directive that starts before
/// its execution part (0 when none), read once for all the `declare` sites of a file.
pub struct DeclarativeEnds(Vec<usize>);

impl DeclarativeEnds {
    pub fn new(front: &Front) -> Self {
        let st = &front.structure;
        let mut ends = vec![0; st.units.len()];
        for (s, r) in front.sites.iter().zip(&st.regions) {
            let Some(u) = r.unit() else { continue };
            if s.sentinel == Sentinel::Acc
                && r.applies == Applies::Declarative
                && s.span.start < exec_start(front, u)
            {
                ends[u] = ends[u].max(s.span.end);
            }
        }
        DeclarativeEnds(ends)
    }
}

/// The start of unit `u`'s execution part: its first statement after the specification
/// part (`usize::MAX` when none).
fn exec_start(front: &Front, u: usize) -> usize {
    let unit = &front.structure.units[u];
    front
        .lexed
        .stmts
        .get(unit.spec.end)
        .map_or(usize::MAX, |s| s.span().start)
}

/// Where the executable `target enter data` of the `declare` at site `k` goes: None when
/// the site itself is the last item of its unit's specification part (rewritten in place);
/// else the offset of the line after that last item (a specification statement or a
/// declarative directive).
pub fn enter_point(front: &Front, k: usize, ends: &DeclarativeEnds) -> Option<usize> {
    let st = &front.structure;
    let u = st.regions[k].unit()?;
    let last = spec_end(front, k, u).max(ends.0[u]);
    after(front, k, last)
}

/// The end of site `k` or of the last specification statement of its unit `u`.
fn spec_end(front: &Front, k: usize, u: usize) -> usize {
    let unit = &front.structure.units[u];
    let mut last = front.sites[k].span.end;
    if unit.spec.end > unit.spec.start
        && let Some(s) = front.lexed.stmts.get(unit.spec.end - 1)
    {
        last = last.max(s.span().end);
    }
    last
}

/// None when `last` is site `k`'s end; else the start of the line after the one `last`
/// ends on.
fn after(front: &Front, k: usize, last: usize) -> Option<usize> {
    if last == front.sites[k].span.end {
        return None;
    }
    let line = &front.lines.get(front.lines.line_of(last.saturating_sub(1)));
    Some(line.next)
}

/// [`enter_point`] as a walk of every site (the oracle of its per-unit index).
#[cfg(test)]
fn enter_point_scan(front: &Front, k: usize) -> Option<usize> {
    let st = &front.structure;
    let u = st.regions[k].unit()?;
    let mut last = spec_end(front, k, u);
    let exec = exec_start(front, u);
    for (j, s) in front.sites.iter().enumerate() {
        let declarative = s.sentinel == Sentinel::Acc
            && st.regions[j].applies == Applies::Declarative
            && st.regions[j].unit() == Some(u);
        if declarative && s.span.start < exec {
            last = last.max(s.span.end);
        }
    }
    after(front, k, last)
}

#[cfg(test)]
mod tests {
    use crate::options::Options;
    use crate::semantic::SemanticConfig;

    /// The translation of free-form `src` and its diagnostics as `line: message [rule]`.
    fn migrate(src: &str) -> (String, Vec<String>) {
        let o = crate::engine::migrate_source(
            src,
            Some(std::path::Path::new("x.f90")),
            &Options::default(),
            &SemanticConfig::syntactic(),
        );
        let diags = o
            .diagnostics
            .iter()
            .map(|d| {
                let line = src[..d.offset].matches('\n').count() + 1;
                format!("{line}: {} [{}]", d.message, d.rule)
            })
            .collect();
        (o.text, diags)
    }

    fn has(diags: &[String], line: usize, words: &str) -> bool {
        diags
            .iter()
            .any(|d| d.starts_with(&format!("{line}: ")) && d.contains(words))
    }

    /// The per-unit index gives the walk's answer for every site of files with many
    /// `declare` directives, in several units, some after other declarative directives.
    #[test]
    fn enter_point_matches_the_walk_of_every_site() {
        let mut src = String::new();
        for u in 0..4 {
            src.push_str(&format!("subroutine s{u}(m)\n  integer :: m\n"));
            for k in 0..(3 * u + 1) {
                src.push_str(&format!(
                    "  real :: a{k}(10)\n  !$acc declare create(a{k})\n"
                ));
                if k % 2 == 1 {
                    src.push_str("  !$acc routine seq\n");
                }
            }
            if u % 2 == 0 {
                src.push_str("  integer :: j\n");
            }
            src.push_str("  m = 1\n  !$acc declare copyin(m)\n  m = 2\nend subroutine\n");
        }
        src.push_str("module md\n  real :: b(4)\n  !$acc declare create(b)\nend module md\n");
        let tables = crate::rules::Tables::builtin();
        let kind = crate::fortran::form::kind_of(std::path::Path::new("x.f90")).unwrap();
        let front = crate::fortran::Front::new(&src, kind, |s| {
            crate::directive::fortran_site_info(s, &tables)
        });
        let ends = super::DeclarativeEnds::new(&front);
        let mut some = 0;
        for k in 0..front.sites.len() {
            let p = super::enter_point(&front, k, &ends);
            assert_eq!(p, super::enter_point_scan(&front, k), "site {k}");
            some += usize::from(p.is_some());
        }
        assert!(some > 4, "{some}");
    }

    #[test]
    fn exits_are_each_return_and_the_end() {
        let src = "subroutine s(n, a, done)\n  integer :: n\n  real :: a(n)\n  !$acc declare copy(a)\n  logical :: done\n  if (done) then\n    return\n  end if\n  a = 1\n  return\nend subroutine s\n";
        let (out, diags) = migrate(src);
        assert_eq!(
            out,
            "subroutine s(n, a, done)\n  integer :: n\n  real :: a(n)\n  logical :: done\n  !$omp target enter data map(to: a)\n  if (done) then\n  !$omp target exit data map(from: a)\n    return\n  end if\n  a = 1\n  !$omp target exit data map(from: a)\n  return\nend subroutine s\n",
            "{diags:?}"
        );
    }

    #[test]
    fn exits_that_take_no_directive_line_are_refused() {
        for (src, line, why) in [
            (
                "subroutine s(a)\n  real :: a(9)\n  !$acc declare create(a)\n  if (a(1) > 0) return\n  a = 1\nend subroutine s\n",
                4,
                "logical 'if'",
            ),
            (
                "subroutine s(a)\n  real :: a(9)\n  !$acc declare create(a)\n  a = 1; return\nend subroutine s\n",
                4,
                "sharing its line",
            ),
            (
                "subroutine s(a)\n  real :: a(9)\n  !$acc declare create(a)\n  go to 9\n9 end subroutine s\n",
                5,
                "a label",
            ),
        ] {
            let (out, diags) = migrate(src);
            assert!(out.contains("!$acc declare"), "{out}");
            assert!(has(&diags, line, why), "{diags:?}");
        }
    }

    #[test]
    fn allocatables_follow_allocate_or_are_refused() {
        let module =
            "module m\n  real, allocatable :: w(:)\n  !$acc declare create(w)\nend module m\n";
        let ok = format!(
            "{module}program p\n  use m\n  allocate (w(4))\n  w = 1\n  deallocate (w)\nend program p\n"
        );
        let (out, diags) = migrate(&ok);
        assert!(
            out.contains("  allocate (w(4))\n  !$omp target enter data map(alloc: w)\n  w = 1\n  !$omp target exit data map(delete: w)\n  deallocate (w)\n"),
            "{out}{diags:?}"
        );
        assert!(!out.contains("declare"), "{out}");
        for (tail, line, why) in [
            ("  if (.true.) allocate (w(4))\n", 7, "logical 'if'"),
            ("  allocate (w(4)); w = 1\n", 7, "shares a line"),
            (
                "  allocate (w(4))\n  go to 9\n9 deallocate (w)\n",
                9,
                "label",
            ),
            ("  w = 1\n", 2, "no 'allocate'"),
            (
                "  real, allocatable :: v(:)\n  allocate (w(4))\n  call move_alloc(w, v)\n",
                9,
                "move_alloc",
            ),
            ("  allocate (w(4))\n  call grow(1, w)\n", 8, "passed whole"),
        ] {
            let src = format!("{module}program p\n  use m\n{tail}end program p\n");
            let (out, diags) = migrate(&src);
            assert!(out.contains("!$acc declare create(w)"), "{out}");
            assert!(has(&diags, line, why), "{line} {why}: {diags:?}");
        }
        // A local allocatable: its implicit deallocation at the unit's end is not translated.
        let (out, diags) = migrate(
            "subroutine s\n  real, allocatable :: w(:)\n  !$acc declare create(w)\n  allocate (w(3))\nend subroutine s\n",
        );
        assert!(out.contains("!$acc declare"), "{out}");
        assert!(has(&diags, 3, "allocatable"), "{diags:?}");
        // A pointer.
        let (out, diags) =
            migrate("module m\n  real, pointer :: p(:)\n  !$acc declare create(p)\nend module m\n");
        assert!(out.contains("!$acc declare"), "{out}");
        assert!(has(&diags, 3, "pointer"), "{diags:?}");
    }

    #[test]
    fn routine_placement_and_clauses() {
        // In a module's specification part a routine without a name applies to nothing.
        let (out, diags) = migrate("module m\n  !$acc routine seq\nend module m\n");
        assert!(out.contains("!$acc routine"), "{out}");
        assert!(has(&diags, 2, "specification part"), "{diags:?}");
        // `bind` has no OpenMP 5.0 counterpart, as in C.
        let (out, diags) = migrate("subroutine s\n  !$acc routine seq bind(t)\nend subroutine s\n");
        assert!(out.contains("!$acc routine"), "{out}");
        assert!(has(&diags, 2, "'bind'"), "{diags:?}");
        // `nohost` and the level are dropped with a note, as in C.
        let (out, diags) = migrate("subroutine s\n  !$acc routine gang nohost\nend subroutine s\n");
        assert!(out.contains("  !$omp declare target\n"), "{out}");
        assert!(has(&diags, 2, "nohost"), "{diags:?}");
    }

    #[test]
    fn runtime_directives() {
        let src = "program p\n  real :: a(8)\n  integer :: i\n  !$acc init\n  !$acc parallel loop\n  do i = 1, 8\n    !$acc cache(a(i))\n    a(i) = i\n  end do\n  !$acc set device_num(0)\n  !$acc shutdown\nend program p\n";
        let (out, diags) = migrate(src);
        assert!(
            !out.contains("acc init") && !out.contains("cache") && !out.contains("shutdown"),
            "{out}"
        );
        assert!(has(&diags, 4, "removed"), "{diags:?}");
        assert!(has(&diags, 7, "removed"), "{diags:?}");
        // `set` becomes runtime calls on `!$` lines (`fortran::print::runtime_calls`).
        assert!(!out.contains("!$acc set"), "{out}");
        assert!(
            out.contains("  !$     call omp_set_default_device(max(0, 0))\n"),
            "{out}"
        );
    }
}
