use super::*;
use crate::engine::migrate_source;
use crate::options::Options;
use crate::semantic::SemanticConfig;
use crate::translate::reductions::names_in;

/// The scan of the construct's clauses that [`Names`] replaced in [`super::gang_private`].
pub(super) fn gang_private(
    u: &Unit,
    c: usize,
    region: &Range<usize>,
    v: &RegionVar,
    declared: &[Cow<str>],
) -> bool {
    if v.decl().is_some_and(|o| region.contains(&o)) {
        return true;
    }
    let same = |n: &str| u.lang.same_name(n, &v.name);
    if u.dir(c)
        .is_some_and(|x| names_in(u.lang, x, &["private", "firstprivate"], &v.name))
    {
        return true;
    }
    let attributed = |k: usize| {
        u.dir(k).is_some_and(|x| {
            super::super::implicit::attributed(u.lang, x, u.tables)
                .into_iter()
                .any(|n| same(&n))
        })
    };
    let shared = attributed(c)
        || u.ancestors(c)
            .any(|a| u.dir(a).is_some_and(|x| x.name == "data") && attributed(a))
        || declared.iter().any(|n| same(n.as_ref()));
    let scalar = v.ty.kind == VarKind::Scalar && !v.ty.is_const;
    scalar && !shared
}

/// The scan of loop `l`'s clauses that [`Names::loop_names`] replaced.
pub(super) fn loop_names(u: &Unit, l: usize, v: &RegionVar) -> bool {
    u.dir(l).is_some_and(|d| {
        names_in(
            u.lang,
            d,
            &["private", "firstprivate", "reduction"],
            &v.name,
        )
    })
}

/// Whether gang loop `w` writes the variable `v` (the same declaration) outside the loops
/// that make it private to them: the search of one loop that [`Writers`] replaced.
fn writes(u: &Unit, names: &Names, w: usize, v: &RegionVar) -> bool {
    let Some(f) = u.site_facts(w) else {
        // Unknown: counted as a write.
        return true;
    };
    let Some(x) = f
        .vars
        .iter()
        .find(|x| u.lang.same_name(&x.name, &v.name) && x.decl() == v.decl())
    else {
        return false;
    };
    let loops: Vec<usize> = std::iter::once(w)
        .chain(u.descendants(w))
        .filter(|&k| u.is_loop(k) && loop_private(u, names, k, v))
        .collect();
    let spelled = |at: usize| {
        u.src.get(at..).is_some_and(|r| {
            r.get(..v.name.len())
                .is_some_and(|w| u.lang.same_name(w, &v.name))
                && !r[v.name.len()..].starts_with(|ch: char| ch.is_alphanumeric() || ch == '_')
        })
    };
    x.writes().iter().any(|&at| {
        spelled(at)
            && !loops
                .iter()
                .any(|&k| u.stmts[k].as_ref().is_some_and(|s| s.bytes().contains(&at)))
    })
}

/// The first of `gangs` that ends before `before` and writes `v`, searched loop by loop:
/// [`carried`] checks [`Writers`] against it in tests.
pub(super) fn first_writer(
    u: &Unit,
    names: &Names,
    gangs: &[usize],
    v: &RegionVar,
    before: usize,
) -> Option<usize> {
    gangs.iter().copied().find(|&w| {
        u.stmts[w]
            .as_ref()
            .is_some_and(|ws| ws.bytes().end <= before)
            && writes(u, names, w, v)
    })
}

/// Gang loops writing and reading gang-private scalars in many combinations (inner loops
/// that make them private, `private` clauses, members, macros): `carried` asserts in tests
/// that the writers it finds are those the search loop by loop finds.
#[test]
fn writers_found_as_loop_by_loop() {
    let bodies = [
        "t = p[i];",
        "p[i] = t;",
        "p[i] = t + s;",
        "s = 1; p[i] = s;",
        "for (j = 0; j < n; j++) t = j;",
        "{ double q = t; p[i] = q; }",
        "if (i) s = 2; p[i] = s;",
        "W(t);",
        "st.m = i; p[i] = st.m;",
        "s += t;",
    ];
    let mut carried = 0;
    // Clauses of the construct (and of a `data` construct around it) that give the scalars
    // a data attribute, and loop clauses that make them private to a loop.
    let around = [
        ("", ""),
        (" firstprivate(s)", ""),
        (" copyin(t)", ""),
        (" private(t, s)", ""),
        ("", "copyin(s)"),
        (" present(p[0:n])", "copy(t)"),
    ];
    let loop_clauses = [
        " private(t)",
        " firstprivate(s)",
        " reduction(+:s)",
        " private(st.m)",
    ];
    for seed in 0..60usize {
        let (construct, data) = around[seed % around.len()];
        let mut src = String::from(
            "struct S { double m; };\n#define W(x) x = 1\nvoid f(int n, double *p, struct S st) {\n  double t = 0, s = 0;\n  int j;\n",
        );
        if !data.is_empty() {
            src.push_str(&format!("#pragma acc data {data}\n"));
        }
        src.push_str(&format!(
            "#pragma acc parallel copy(p[0:n]){construct}\n  {{\n"
        ));
        for k in 0..8 {
            let b = bodies[(seed * 7 + k * (seed % 5 + 1)) % bodies.len()];
            let clause = if (seed + k) % 6 == 0 {
                loop_clauses[(seed / 6 + k) % loop_clauses.len()]
            } else {
                ""
            };
            src.push_str(&format!(
                "#pragma acc loop gang{clause}\n    for (int i = 0; i < n; i++) {{ {b} }}\n"
            ));
        }
        src.push_str("  }\n}\n");
        let out = migrate_source(
            &src,
            None,
            &Options::default(),
            &SemanticConfig::syntactic(),
        );
        if out
            .diagnostics
            .iter()
            .any(|d| d.rule == id::GANG_PRIVATE_CARRIED)
        {
            carried += 1;
        }
    }
    assert!(carried > 10 && carried < 50, "{carried}");
    // Fortran compares names without case, in clauses too.
    let fortran = |construct: &str, clause: &str| {
        let src = format!(
            "subroutine f(n, p)\n  integer :: n, i, j\n  real :: p(n), t\n  !$acc parallel copy(p){construct}\n  !$acc loop gang\n  do i = 1, n\n    T = p(i)\n  end do\n  !$acc loop gang{clause}\n  do i = 1, n\n    do j = 1, n\n      t = j\n    end do\n  end do\n  !$acc loop gang{clause}\n  do i = 1, n\n    p(i) = t\n  end do\n  !$acc end parallel\nend subroutine f\n"
        );
        let out = migrate_source(
            &src,
            Some(std::path::Path::new("t.f90")),
            &Options::default(),
            &SemanticConfig::syntactic(),
        );
        out.diagnostics
            .into_iter()
            .find(|d| d.rule == id::GANG_PRIVATE_CARRIED)
            .map(|d| d.message)
    };
    let d = fortran("", "").expect("carried");
    assert!(d.contains("line 5 writes it"), "{d}");
    assert_eq!(fortran(" copyin(T)", ""), None);
    assert_eq!(fortran("", " private(T)"), None);
    assert!(fortran(" firstprivate(T)", "").is_some());
}
