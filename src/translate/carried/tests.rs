use super::*;
use crate::engine::migrate_source;
use crate::options::Options;
use crate::semantic::SemanticConfig;

/// Whether gang loop `w` writes the variable `v` (the same declaration) outside the loops
/// that make it private to them: the search of one loop that [`Writers`] replaced.
fn writes(u: &Unit, w: usize, v: &RegionVar) -> bool {
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
        .filter(|&k| u.is_loop(k) && loop_private(u, k, v))
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
    gangs: &[usize],
    v: &RegionVar,
    before: usize,
) -> Option<usize> {
    gangs.iter().copied().find(|&w| {
        u.stmts[w]
            .as_ref()
            .is_some_and(|ws| ws.bytes().end <= before)
            && writes(u, w, v)
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
    for seed in 0..60usize {
        let mut src = String::from(
            "struct S { double m; };\n#define W(x) x = 1\nvoid f(int n, double *p, struct S st) {\n  double t = 0, s = 0;\n  int j;\n#pragma acc parallel copy(p[0:n])\n  {\n",
        );
        for k in 0..8 {
            let b = bodies[(seed * 7 + k * (seed % 5 + 1)) % bodies.len()];
            let clause = if (seed + k) % 6 == 0 {
                " private(t)"
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
    assert!(carried > 10 && carried < 60, "{carried}");
    // Fortran compares names without case.
    let src = "subroutine f(n, p)\n  integer :: n, i, j\n  real :: p(n), t\n  !$acc parallel copy(p)\n  !$acc loop gang\n  do i = 1, n\n    T = p(i)\n  end do\n  !$acc loop gang\n  do i = 1, n\n    do j = 1, n\n      t = j\n    end do\n  end do\n  !$acc loop gang\n  do i = 1, n\n    p(i) = t\n  end do\n  !$acc end parallel\nend subroutine f\n";
    let out = migrate_source(
        src,
        Some(std::path::Path::new("t.f90")),
        &Options::default(),
        &SemanticConfig::syntactic(),
    );
    let d = out
        .diagnostics
        .iter()
        .find(|d| d.rule == id::GANG_PRIVATE_CARRIED)
        .expect("carried");
    assert!(d.message.contains("line 5 writes it"), "{}", d.message);
}
