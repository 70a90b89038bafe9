//! [`Syntax::confined_to`](crate::syntax::Syntax::confined_to) in Fortran: a variable of a
//! procedure or main program that only some bytes of it use.

use std::ops::Range;

use crate::fortran::Front;
use crate::fortran::lex::TokKind;
use crate::fortran::stmt::UnitKind;
use crate::hash::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

/// Per name, the offsets of its mentions.
type Mentions = Arc<HashMap<String, Vec<u32>>>;

/// The unit last asked about with the mentions of each name in it (lower case), and the
/// names of the file's `#define` lines: found once, as a unit's constructs ask one after the
/// other (a scan per question would be quadratic in a large file).
#[derive(Default)]
pub(super) struct Memo {
    last: Mutex<Option<(usize, Mentions)>>,
    defined: OnceLock<HashSet<String>>,
}

/// Whether `v`, declared at byte `decl` in the specification part of unit `u`, is mentioned
/// in `u` (its contained procedures, directives and `!$` lines included) only at `decl`, in
/// `inside`, and in `do` loops apart from `inside` whose every iteration assigns it before
/// reading it (`fresh`: [`crate::syntax::Syntax::assigned_before_read`] of a loop's bytes):
/// those read no value of `inside` (TeaLeaf's block bounds, set at the start of each
/// iteration of the next kernel's loop), in `u` itself and not in a directive. A dummy argument is named in the unit's header, a
/// COMMON or EQUIVALENCE member in its statement, a variable of the host or a module is
/// declared elsewhere: none is confined.
#[allow(clippy::too_many_arguments)]
pub(super) fn confined_to(
    src: &str,
    front: &Front,
    memo: &Memo,
    u: usize,
    decl: usize,
    inside: &[Range<usize>],
    v: &str,
    fresh: impl Fn(Range<usize>) -> bool,
) -> bool {
    let st = &front.structure;
    let unit = &st.units[u];
    if unit.interface || matches!(unit.kind, UnitKind::Module | UnitKind::Submodule) {
        return false;
    }
    let lx = &front.lexed;
    let in_spec = lx
        .stmt_at(decl)
        .is_some_and(|s| unit.spec.contains(&s) && st.unit_of(s) == Some(u));
    if !in_spec {
        return false;
    }
    let v = v.to_ascii_lowercase();
    // A macro defined in the file and used in the unit could name it.
    let defined = memo.defined.get_or_init(|| {
        let mut words = HashSet::default();
        for line in src.lines().filter(|l| l.trim_start().starts_with('#')) {
            let mut ids = identifiers(line);
            if ids.next().as_deref() == Some("define") {
                words.extend(ids);
            }
        }
        words
    });
    if defined.contains(&v) {
        return false;
    }
    let mentions = {
        let mut last = memo.last.lock().unwrap_or_else(|e| e.into_inner());
        match last.as_ref() {
            Some((k, m)) if *k == u => m.clone(),
            _ => {
                let m = Arc::new(unit_mentions(src, front, unit.span.clone()));
                *last = Some((u, m.clone()));
                m
            }
        }
    };
    let within = |b: usize| b == decl || inside.iter().any(|r| r.contains(&b));
    let apart = |l: &Range<usize>| inside.iter().all(|r| r.end <= l.start || l.end <= r.start);
    // Only statements of `u` itself: a contained procedure's loop may run inside the
    // loops asked about (a call), and a directive's reads are no statement's.
    let in_fresh_loop = |b: usize| {
        let site = front
            .sites
            .binary_search_by_key(&b, |s| s.span.start)
            .is_ok();
        !site
            && st.unit_at(b) == Some(u)
            && st
                .loops_starting_in(unit.span.start..b + 1)
                .iter()
                .map(|lp| lp.span())
                .any(|l| l.contains(&b) && apart(&l) && fresh(l))
    };
    mentions.get(&v).is_none_or(|at| {
        at.iter()
            .all(|&b| within(b as usize) || in_fresh_loop(b as usize))
    })
}

/// Where each name (lower case) of the bytes `span` is: its tokens, and the directive and
/// `!$` lines naming it (at the line's start).
fn unit_mentions(src: &str, front: &Front, span: Range<usize>) -> HashMap<String, Vec<u32>> {
    let lx = &front.lexed;
    let mut m: HashMap<String, Vec<u32>> = HashMap::default();
    let first = lx.tokens.partition_point(|t| t.start() < span.start);
    for (k, t) in lx.tokens.iter().enumerate().skip(first) {
        if t.start() >= span.end {
            break;
        }
        if t.kind() == TokKind::Name {
            m.entry(lx.lower(src, k))
                .or_default()
                .push(t.start() as u32);
        }
    }
    let sites = &front.sites;
    let s0 = sites.partition_point(|s| s.span.start < span.start);
    for s in sites[s0..].iter().take_while(|s| s.span.start < span.end) {
        for w in identifiers(&s.text) {
            m.entry(w).or_default().push(s.span.start as u32);
        }
    }
    m
}

/// The identifiers of `text`, lower case.
fn identifiers(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
        .filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic()))
        .map(str::to_ascii_lowercase)
}

#[cfg(test)]
mod tests {
    use crate::syntax::Syntax;

    fn confined(src: &str, v: &str, inside: &str) -> bool {
        let kind = crate::fortran::form::kind_of(std::path::Path::new("t.F90")).unwrap();
        let tables = crate::rules::Tables::builtin();
        let front = crate::fortran::Front::new(src, kind, |s| {
            crate::directive::fortran_site_info(s, &tables)
        });
        let sx = super::super::FortranSyntax::new(src, &front);
        let decl = src.find(&format!(":: {v}")).unwrap() + 3;
        let start = src.find(inside).unwrap();
        let at = src.find("!$acc kernels").unwrap();
        sx.confined_to(
            at,
            decl,
            std::slice::from_ref(&(start..start + inside.len())),
            v,
        )
    }

    #[test]
    fn only_a_local_used_only_inside_is_confined() {
        let body = "  do i = 1, n\n    t = i\n    a(i) = t\n  end do\n";
        let f = |decls: &str, pre: &str, post: &str| {
            format!(
                "subroutine s(n, a)\n  integer :: n, i\n{decls}  real :: a(n)\n{pre}  !$acc kernels\n{body}  !$acc end kernels\n{post}end subroutine s\n"
            )
        };
        let yes = f("  real :: t\n", "", "");
        assert!(confined(&yes, "t", body), "{yes}");
        let upper = body.replace("    t = i\n", "    T = i\n");
        let lower = yes.replace(body, &upper);
        assert!(confined(&lower, "t", &upper), "{lower}");
        for src in [
            f("  real :: t\n", "", "  a(1) = t\n"),
            f("  real :: t\n", "  t = 2\n", ""),
            f("  real :: t\n", "", "  !$acc update host(t)\n"),
            f("  real :: t\n", "", "!$ a(1) = t\n"),
            f("  real :: t\n  common /c/ t\n", "", ""),
            f(
                "  real :: t\n",
                "",
                "contains\n  subroutine g\n    print *, t\n  end subroutine g\n",
            ),
            format!("#define T2 t\n{yes}"),
        ] {
            assert!(!confined(&src, "t", body), "{src}");
        }
        // A dummy argument (named in the header) and a module variable are not.
        let dummy = yes
            .replace("subroutine s(n, a)", "subroutine s(n, a, t)")
            .replace("  real :: t\n", "  real, intent(inout) :: t\n");
        assert!(!confined(&dummy, "t", body), "{dummy}");
        let module = format!(
            "module m\n  real :: t\ncontains\n{}end module m\n",
            yes.replace("  real :: t\n", "")
        );
        assert!(!confined(&module, "t", body), "{module}");
        // A comment is no mention; another name holding it neither.
        let other = f(
            "  real :: t\n  real :: tt\n",
            "  ! t is a temporary\n  tt = 1\n",
            "",
        );
        assert!(confined(&other, "t", body), "{other}");
    }

    /// Mentions in other loops that assign the local before reading it in every iteration
    /// read no value of the bytes asked about; a loop that reads it first, or one around
    /// those bytes, does.
    #[test]
    fn loops_that_assign_it_first_read_no_value_of_it() {
        let body = "  do i = 1, n\n    do j = 1, i - 2\n      t = j\n      a(i) = t\n    end do\n  end do\n";
        let src = |pre: &str, post: &str| {
            format!(
                "subroutine s(n, a)\n  integer :: n, i, j\n  real :: t, a(n)\n{pre}  !$acc kernels\n{body}  !$acc end kernels\n{post}end subroutine s\n"
            )
        };
        let fresh = "  do i = 1, n\n    t = a(i)\n    a(i) = t * t\n  end do\n";
        assert!(confined(&src("", fresh), "t", body));
        assert!(confined(&src(fresh, fresh), "t", body));
        let reads = "  do i = 1, n\n    a(i) = t\n    t = a(i)\n  end do\n";
        assert!(!confined(&src("", reads), "t", body));
        let bounds = "  do i = 1, int(t)\n    t = a(i)\n  end do\n";
        assert!(!confined(&src("", bounds), "t", body));
        let around = format!(
            "subroutine s(n, a)\n  integer :: n, i, j, it\n  real :: t, a(n)\n  do it = 1, 3\n    t = 0\n  !$acc kernels\n{body}  !$acc end kernels\n    a(1) = t\n  end do\nend subroutine s\n"
        );
        assert!(!confined(&around, "t", body), "{around}");
        let directive = "  do i = 1, n\n    !$acc update device(t)\n    t = a(i)\n  end do\n";
        assert!(!confined(&src("", directive), "t", body));
        let contained = format!(
            "subroutine s(n, a)\n  integer :: n, i, j\n  real :: t, a(n)\n  !$acc kernels\n{body}  !$acc end kernels\ncontains\n  subroutine g\n    do i = 1, n\n      t = a(i)\n    end do\n  end subroutine g\nend subroutine s\n"
        );
        assert!(!confined(&contained, "t", body), "{contained}");
    }
}
