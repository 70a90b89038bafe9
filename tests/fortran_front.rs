//! The Fortran front end on whole files: program units, constructs, `do` loops and what
//! each OpenACC directive applies to (with the directive parser reading the sites), and on
//! GCC's Fortran OpenACC tests when they are present.
use acc2omp::fortran::Front;
use acc2omp::fortran::form::{Form, SourceKind};
use acc2omp::fortran::stmt::{ConstructKind, Kind, UnitKind};
use acc2omp::fortran::structure::{Applies, Construct, DoKind, Structure};
use acc2omp::fortran_site_info;
use acc2omp::rules::Tables;
use std::ops::Range;

static TABLES: std::sync::LazyLock<Tables> = std::sync::LazyLock::new(Tables::builtin);

fn front(src: &str, form: Form) -> Front {
    Front::new(src, SourceKind { form, cpp: false }, |s| {
        fortran_site_info(s, &TABLES)
    })
}

fn free(src: &str) -> Front {
    front(src, Form::Free)
}

/// The constructs of `f`'s file (the structure does not keep them).
fn constructs(f: &Front, src: &str) -> Vec<Construct> {
    let infos: Vec<_> = f
        .sites
        .iter()
        .map(|s| fortran_site_info(s, &TABLES))
        .collect();
    Structure::with_constructs(src, &f.lexed, &f.sites, &infos).1
}

/// The text of statement `i`.
fn stmt<'a>(f: &Front, src: &'a str, i: usize) -> &'a str {
    &src[f.lexed.stmts[i].span().clone()]
}

/// Problems as (line number, message).
fn problems(f: &Front, src: &str) -> Vec<(usize, String)> {
    f.problems
        .iter()
        .map(|p| (src[..p.offset].matches('\n').count() + 1, p.message.clone()))
        .collect()
}

#[test]
fn program_units_and_their_parts() {
    let src = "module m\n  implicit none\n  integer :: n\ncontains\n  subroutine s(a)\n    real :: a(:)\n    interface\n      function f(x)\n        real :: x, f\n      end function\n    end interface\n    a = f(1.0)\n  contains\n    pure integer function g()\n      g = 1\n    end function g\n  end subroutine s\nend module m\nx = 1\nend\n";
    let f = free(src);
    assert!(f.problems.is_empty(), "{:?}", f.problems);
    let u = &f.structure.units;
    let names: Vec<_> = u
        .iter()
        .map(|u| (u.kind, u.name.as_deref(), u.interface))
        .collect();
    assert_eq!(
        names,
        [
            (UnitKind::Module, Some("m"), false),
            (UnitKind::Subroutine, Some("s"), false),
            (UnitKind::Function, Some("f"), true),
            (UnitKind::Function, Some("g"), false),
            (UnitKind::Program, None, false),
        ]
    );
    assert_eq!(u[0].contains, Some(3));
    assert_eq!(u[0].spec, 1..3);
    assert!(u[0].exec.is_empty());
    assert_eq!(u[1].parent, Some(0));
    assert_eq!(u[2].parent, Some(1));
    assert_eq!(u[3].parent, Some(1));
    // The subroutine: its declarations and interface block, then `a = f(1.0)`.
    assert_eq!(stmt(&f, src, u[1].spec.start), "real :: a(:)");
    assert_eq!(stmt(&f, src, u[1].exec.start), "a = f(1.0)");
    assert_eq!(u[1].exec.end, u[1].contains.unwrap());
    assert_eq!(stmt(&f, src, u[4].exec.start), "x = 1");
    assert_eq!(
        &src[u[1].span.clone()],
        &src[src.find("subroutine s").unwrap()..src.find("\nend module").unwrap()]
    );
    assert_eq!(f.structure.unit_of(u[3].exec.start), Some(3));
}

#[test]
fn do_loops_of_every_shape() {
    let src = "do i = 1, n, 2\n  outer: do j = lo(i), hi\n    a(i, j) = 0\n  end do outer\nend do\ndo 10 k = 1, 5\n  do 10, l = 1, 5\n10 b(k, l) = 1\ndo 20 m = 1, 3\n20 continue\ndo concurrent (integer :: p = 1:n, q = 2:m:2, c(p) > 0)\nenddo\ndo while (x < 1.0)\n  x = x + 1\nend do\ndo\n  exit\nend do\n";
    let f = free(src);
    assert!(f.problems.is_empty(), "{:?}", f.problems);
    let ls = &f.structure.loops;
    let text = |r: &Option<Range<usize>>| r.as_ref().map(|r| &src[r.clone()]);
    assert_eq!(ls.len(), 8);
    assert_eq!(ls[0].var(), Some("i"));
    assert_eq!(
        (text(&ls[0].lo()), text(&ls[0].hi()), text(&ls[0].step())),
        (Some("1"), Some("n"), Some("2"))
    );
    assert_eq!(
        (text(&ls[1].lo()), text(&ls[1].hi())),
        (Some("lo(i)"), Some("hi"))
    );
    assert_eq!(ls[1].parent(), Some(0));
    let outer = constructs(&f, src)
        .into_iter()
        .find(|c| c.begin == ls[1].stmt());
    assert_eq!(outer.and_then(|c| c.name).as_deref(), Some("outer"));
    assert_eq!(ls[0].body(), 1..4);
    assert_eq!(&src[ls[0].span()], &src[..src.find("\ndo 10").unwrap()]);
    // Two loops end on one labelled statement, which runs in their iterations.
    assert_eq!((ls[2].label(), ls[3].label()), (Some(10), Some(10)));
    assert_eq!(ls[2].end(), ls[3].end());
    assert_eq!(stmt(&f, src, ls[3].end().unwrap()), "10 b(k, l) = 1");
    assert_eq!(ls[3].body(), ls[3].stmt() + 1..ls[3].end().unwrap() + 1);
    assert_eq!(ls[3].parent(), Some(2));
    assert_eq!(ls[4].label(), Some(20));
    assert_eq!(ls[5].kind, DoKind::Concurrent);
    let c: Vec<_> = ls[5]
        .concurrent()
        .iter()
        .map(|c| {
            (
                c.var.as_str(),
                &src[c.lo.clone()],
                &src[c.hi.clone()],
                c.step.as_ref().map(|s| &src[s.clone()]),
            )
        })
        .collect();
    assert_eq!(c, [("p", "1", "n", None), ("q", "2", "m", Some("2"))]);
    assert_eq!(text(&ls[5].mask().cloned()), Some("c(p) > 0"));
    assert_eq!(ls[6].kind, DoKind::While);
    assert_eq!(text(&ls[6].condition().cloned()), Some("x < 1.0"));
    assert_eq!(ls[7].kind, DoKind::Forever);
    assert!(ls.iter().all(|l| l.end().is_some()));
}

#[test]
fn fixed_form_labelled_loops() {
    let src = "      PROGRAM P\n      DO 100 I = 1, N\n      DO 100 J = 1, M\n        A(I,J) = 0\n  100 CONTINUE\n      END\n";
    let f = front(src, Form::Fixed);
    assert!(f.problems.is_empty(), "{:?}", f.problems);
    let ls = &f.structure.loops;
    assert_eq!(ls.len(), 2);
    assert_eq!(ls[0].end(), ls[1].end());
    assert_eq!(f.structure.units[0].name.as_deref(), Some("p"));
}

/// A `continue` ending labelled loops is their `end do`: the same body and end statement as
/// the block form, so what follows it (a directive, a statement) is after the loops.
#[test]
fn a_terminal_continue_is_the_end_do() {
    let block = "do i = 1, n\n  do j = 1, m\n    a(i, j) = 0\n  end do\nend do\n!$acc loop\ndo i = 1, n\nend do\nend\n";
    let labelled = "do 10 i = 1, n\n  do 20 j = 1, m\n    a(i, j) = 0\n20 continue\n10 continue\n!$acc loop\ndo 30 i = 1, n\n30 continue\nend\n";
    let shape = |src: &str| {
        let f = free(src);
        assert!(f.problems.is_empty(), "{:?}", f.problems);
        let st = &f.structure;
        st.loops
            .iter()
            .map(|l| {
                let end = l.end().unwrap();
                (l.body(), end, st.stmts[end].kind.clone(), l.parent())
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(shape(labelled), shape(block));
    assert_eq!(
        shape(labelled)[0].2,
        Kind::End(ConstructKind::Do),
        "{:?}",
        shape(labelled)
    );
    // A terminal action statement runs in each iteration: part of the body, and the loops
    // it ends are not its statements' `end do`.
    let f = free("do 10 i = 1, n\n10 a(i) = 0\nend\n");
    let l = &f.structure.loops[0];
    assert_eq!(l.body(), 1..2);
    assert!(matches!(f.structure.stmts[1].kind, Kind::Assignment(_)));
}

/// Loops are tightly nested when nothing runs between their ends: a terminal `continue`
/// or a terminal shared with the inner loop, not a terminal action statement of the outer
/// loop alone.
#[test]
fn labelled_terminals_and_tight_nests() {
    for (src, tight) in [
        (
            "do 10 i = 1, n\n  do 20 j = 1, m\n    a(i, j) = 0\n20 continue\n10 continue\nend\n",
            2,
        ),
        ("do 10 i = 1, n\n  do 10 j = 1, m\n10 a(i, j) = 0\nend\n", 2),
        (
            "do 10 i = 1, n\n  do 20 j = 1, m\n    a(i, j) = 0\n20 continue\n10 b(i) = 0\nend\n",
            1,
        ),
        (
            "do 10 i = 1, n\n  do 20 j = 1, m\n20 a(i, j) = 0\n10 b(i) = 0\nend\n",
            1,
        ),
        (
            "do 10 i = 1, n\n  do 20 j = 1, m\n20 a(i, j) = 0\n10 continue\nend\n",
            2,
        ),
    ] {
        let f = free(src);
        assert!(f.problems.is_empty(), "{:?}", f.problems);
        let (nest, _) = f.structure.tight_prefix(&f.lexed, &f.sites, 0, 2);
        assert_eq!(nest.len(), tight, "{src}");
    }
}

#[test]
fn constructs_nest_and_mismatches_are_reported() {
    let src = "if (a) then\n  x = 1\nelse if (b) then\n  select case (k)\n  case (1)\n    block\n      associate (y => z)\n      end associate\n    end block\n  case default\n  end select\nelse\n  where (m) q = 0\n  where (m)\n    q = 1\n  elsewhere\n    q = 2\n  end where\n  forall (i = 1:n) r(i) = i\nendif\nend\n";
    let f = free(src);
    assert!(f.problems.is_empty(), "{:?}", f.problems);
    let cs = constructs(&f, src);
    let kinds: Vec<_> = cs.iter().map(|c| c.kind).collect();
    use ConstructKind::*;
    assert_eq!(kinds, [If, Select, Block, Associate, Where]);
    assert!(cs.iter().all(|c| c.end.is_some()));
    let src = "do i = 1, n\n  if (a) then\nend do\nend if\nelse\nend\n";
    let f = free(src);
    assert_eq!(
        problems(&f, src),
        [
            (
                2,
                "this if construct is not closed before 'end do'".to_string()
            ),
            (4, "'end if' without an open if construct".to_string()),
            (5, "'else' outside an 'if' construct".to_string()),
        ]
    );
}

#[test]
fn block_regions_pair_with_their_end() {
    let src = "program p\n  !$acc data copy(a)\n  !$acc parallel\n  x = 1\n  !$acc loop\n  do i = 1, n\n    a(i) = i\n  end do\n  !$ACC END PARALLEL\n  !$acc host_data use_device(a)\n  call f(a)\n  !$acc end host_data\n  !$acc end data\nend program\n";
    let f = free(src);
    assert!(f.problems.is_empty(), "{:?}", f.problems);
    let r = &f.structure.regions;
    assert_eq!(
        r[0].applies,
        Applies::Block {
            body: 1..6,
            end: Some(6)
        }
    );
    assert!(matches!(r[1].applies, Applies::Block { end: Some(3), .. }));
    let Applies::Block { body, .. } = &r[1].applies else {
        unreachable!()
    };
    assert_eq!(stmt(&f, src, body.start), "x = 1");
    assert_eq!(body.len(), 4);
    assert_eq!(r[3].applies, Applies::End { opener: Some(1) });
    assert_eq!(r[1].parent(), Some(0));
    assert_eq!(r[2].parent(), Some(1));
    assert!(matches!(&r[2].applies, Applies::Loop { loops, end: None } if loops == &(0..1)));
    assert_eq!(r[4].parent(), Some(0));
    assert_eq!(r[6].applies, Applies::End { opener: Some(0) });
    assert_eq!(
        &src[r[0].extent()],
        &src[src.find("!$acc data").unwrap()..src.find("\nend program").unwrap()]
    );
}

#[test]
fn loop_directives_take_their_nest() {
    let src = "!$acc parallel loop collapse(2) copy(a)\ndo j = 1, m\n  do i = 1, n\n    a(i, j) = 0\n  end do\nend do\n!$acc end parallel loop\n!$acc kernels loop tile(8, 8, 2)\ndo 10 k = 1, 2\ndo 10 j = 1, m\ndo 10 i = 1, n\n10 b(i, j, k) = 1\n!$acc loop\n!$omp simd\ndo concurrent (i = 1:n)\nend do\nend\n";
    let f = free(src);
    // The only problem: no compiler builds a loop construct on `do concurrent`.
    assert_eq!(f.problems.len(), 1, "{:?}", f.problems);
    assert!(
        f.problems[0].message.contains("'do concurrent'")
            && f.problems[0].offset == src.find("do concurrent").unwrap(),
        "{:?}",
        f.problems
    );
    let r = &f.structure.regions;
    assert_eq!(
        r[0].applies,
        Applies::Loop {
            loops: 0..2,
            end: Some(1)
        }
    );
    assert_eq!(r[1].applies, Applies::End { opener: Some(0) });
    assert_eq!(
        r[2].applies,
        Applies::Loop {
            loops: 2..5,
            end: None
        }
    );
    assert_eq!(
        r[3].applies,
        Applies::Loop {
            loops: 5..6,
            end: None
        }
    );
    assert_eq!(r[4].applies, Applies::Nothing);
    assert_eq!(
        &src[r[0].extent()],
        &src[..src.find("\n!$acc kernels").unwrap()]
    );
}

/// A loop directive over a `do while` (or a `do` without loop control) has one
/// diagnostic, as C's over a `while`: `loop-without-for` at the directive, left unchanged.
#[test]
fn a_loop_directive_over_do_while_has_one_diagnostic() {
    for body in ["do while (i < n)", "do"] {
        let src = format!(
            "subroutine s(a, n)\n  integer :: n, i\n  real :: a(n)\n  i = 1\n  !$acc parallel loop\n  {body}\n    if (i >= n) exit\n    a(i) = 0\n    i = i + 1\n  end do\nend subroutine\n"
        );
        let (out, diags) = migrate(&src, "t.f90");
        assert_eq!(diags, [(5, "loop-without-for".to_string())], "{out}");
        assert!(out.contains("\n  !$acc parallel loop\n"), "{out}");
        assert!(!out.contains("!$omp"), "{out}");
    }
}

/// Versions by the presence of an OPTIONAL argument copy a labelled loop whose bound is
/// its label (`do 10 i = 1, 10`: the bound is no reference to the label), and the note says
/// the copy has fresh labels.
#[test]
fn a_labelled_loop_whose_bound_is_its_label_is_copied_with_fresh_labels() {
    let src = "subroutine s(a, b)\n  real :: a(10)\n  real, optional :: b(10)\n  integer :: i\n  !$acc parallel loop copy(a) copyin(b)\n  do 10 i = 1, 10\n    a(i) = 1\n10 continue\nend subroutine\n";
    let (out, diags) = migrate(src, "t.f90");
    assert_eq!(
        diags,
        [(5, "fortran-optional-versions".to_string())],
        "{out}"
    );
    assert!(
        out.contains("  do 10 i = 1, 10\n") && out.contains("  do 11 i = 1, 10\n"),
        "{out}"
    );
    let note = acc2omp::migrate_source(
        src,
        Some(std::path::Path::new("t.f90")),
        &acc2omp::Options::default(),
        &acc2omp::semantic::SemanticConfig::syntactic(),
    )
    .diagnostics
    .iter()
    .map(|d| d.message.clone())
    .collect::<String>();
    assert!(
        note.contains("but for the labels of its do loops, fresh in each copy"),
        "{note}"
    );
}

#[test]
fn loop_directive_problems() {
    let src = "!$acc parallel loop collapse(2)\ndo j = 1, m\n  x = 1\n  do i = 1, n\n  end do\nend do\n!$acc loop\ndo while (t)\nend do\n!$acc loop\nx = 2\n!$acc loop collapse(2)\ndo j = 1, m\n  do i = 1, n\n  end do\n  y = 1\nend do\n!$acc kernels loop\ndo i = 1, n\nend do\n!$acc end parallel loop\n!$acc end atomic\n!$acc loop collapse(2)\ndo j = 1, m\n!$acc loop\n  do i = 1, n\n  end do\nend do\n!$acc loop\nend\n";
    let f = free(src);
    let lines: Vec<_> = problems(&f, src)
        .into_iter()
        .map(|(l, m)| (l, m.split(':').next().unwrap_or("").to_string()))
        .collect();
    assert_eq!(
        lines,
        [
            (1, "the loop directive asks for 2 nested loops, but the loop at depth 1 holds no do loop as its first statement".to_string()),
            (11, "'acc loop' must be followed by a do loop, not this statement".to_string()),
            (12, "the loop directive asks for 2 nested loops, but the loop at depth 1 has statements after the inner loop".to_string()),
            (21, "'end parallel loop' does not follow an 'acc parallel loop' and its do loop".to_string()),
            (22, "'end atomic' does not follow an 'acc atomic' and its statement".to_string()),
            (23, "the loop directive asks for 2 nested loops, but the loop at depth 1 is separated from the next by a directive".to_string()),
            (30, "'acc loop' must be followed by a do loop, not this statement".to_string()),
        ]
    );
    // Where each nest breaks.
    let related: Vec<_> = f
        .problems
        .iter()
        .filter_map(|p| p.related)
        .map(|o| src[..o].matches('\n').count() + 1)
        .collect();
    assert_eq!(related, [3, 16, 25]);
}

#[test]
fn a_redundant_end_loop_pairs_only_right_after_its_loop() {
    let src = "!$acc loop\ndo i = 1, 5\nenddo\n!$acc end loop\n!$acc loop\ndo i = 1, 5\nenddo\nj = 1\n!$acc end loop\nend\n";
    let f = free(src);
    let r = &f.structure.regions;
    assert_eq!(
        r[0].applies,
        Applies::Loop {
            loops: 0..1,
            end: Some(1)
        }
    );
    assert_eq!(r[1].applies, Applies::End { opener: Some(0) });
    assert_eq!(r[3].applies, Applies::End { opener: None });
    assert_eq!(
        problems(&f, src),
        [(
            9,
            "'end loop' does not follow an 'acc loop' and its do loop".to_string()
        )]
    );
}

#[test]
fn atomic_takes_one_or_two_statements() {
    let src = "!$acc atomic update\nx = x + 1\n!$acc atomic capture\nv = x\nx = x + 1\n!$acc end atomic\n!$acc atomic read\nv = x\n!$acc end atomic\n!$acc atomic\ny = y * 2\nz = 0\n";
    let f = free(src);
    assert!(f.problems.is_empty(), "{:?}", f.problems);
    let r = &f.structure.regions;
    assert_eq!(
        r[0].applies,
        Applies::Atomic {
            body: 0..1,
            end: None
        }
    );
    assert_eq!(
        r[1].applies,
        Applies::Atomic {
            body: 1..3,
            end: Some(2)
        }
    );
    assert_eq!(r[2].applies, Applies::End { opener: Some(1) });
    assert_eq!(
        r[3].applies,
        Applies::Atomic {
            body: 3..4,
            end: Some(4)
        }
    );
    assert_eq!(
        r[5].applies,
        Applies::Atomic {
            body: 4..5,
            end: None
        }
    );
}

#[test]
fn block_region_problems() {
    let src = "subroutine s\n!$acc parallel\ndo i = 1, n\n!$acc end parallel\nend do\n!$acc end kernels\n!$acc data copy(a)\n!$acc kernels\n!$acc end data\nend subroutine\nsubroutine t\n!$acc serial\nend subroutine\n!$acc parallel\n";
    let f = free(src);
    assert_eq!(
        problems(&f, src),
        [
            (2, "'acc parallel' has no 'end parallel' before the end of its program unit".to_string()),
            (4, "'end parallel' is not in the same program unit and construct as its 'acc parallel'".to_string()),
            (6, "'end kernels' without an open 'acc kernels'".to_string()),
            (8, "'acc kernels' has no 'end kernels' before 'end data'".to_string()),
            (12, "'acc serial' has no 'end serial' before the end of its program unit".to_string()),
            (14, "'acc parallel' has no 'end parallel'".to_string()),
        ]
    );
    // A region left open inside a loop.
    let src = "do i = 1, n\n!$acc parallel\nend do\n!$acc end parallel\nend\n";
    let f = free(src);
    assert_eq!(
        problems(&f, src),
        [
            (
                1,
                "this do loop is not closed before the end of its program unit".to_string()
            ),
            (
                3,
                "'end do' inside the 'acc parallel' region opened in this do loop: 'end parallel' must come first"
                    .to_string()
            ),
        ]
    );
}

#[test]
fn declarative_and_standalone_directives() {
    let src = "module m\n  real :: v(10)\n  !$acc declare create(v)\ncontains\n  subroutine s\n    !$acc routine seq\n    !$acc update self(v)\n    !$acc wait\n  end subroutine\nend module\n";
    let f = free(src);
    assert!(f.problems.is_empty(), "{:?}", f.problems);
    let r = &f.structure.regions;
    assert_eq!(r[0].applies, Applies::Declarative);
    assert_eq!(r[0].unit(), Some(0));
    assert_eq!(r[1].applies, Applies::Declarative);
    assert_eq!(r[1].unit(), Some(1));
    assert_eq!(r[2].applies, Applies::Standalone);
    assert_eq!(r[3].applies, Applies::Standalone);
}

#[test]
fn assignments_to_names_that_are_keywords() {
    let src = "do = 1\nif(i) = 2\nend = 3\nenddo = 4\ndata = 5\ndo i = 1, 2\nend do\n";
    let f = free(src);
    let kinds: Vec<_> = f
        .structure
        .stmts
        .iter()
        .map(|c| matches!(c.kind, Kind::Assignment(_)))
        .collect();
    assert_eq!(kinds, [true, true, true, true, true, false, false]);
    assert_eq!(f.structure.loops.len(), 1);
}

#[test]
fn deep_and_long_inputs_are_linear() {
    // 20,000 nested loops and 20,000 sibling parallel regions.
    let depth = 20_000;
    let mut src = String::new();
    for k in 0..depth {
        src.push_str(&format!("do i{k} = 1, n\n"));
    }
    for _ in 0..depth {
        src.push_str("end do\n");
    }
    for _ in 0..depth {
        src.push_str("!$acc parallel loop collapse(2)\ndo i = 1, n\ndo j = 1, n\nend do\nend do\n");
    }
    let f = free(&src);
    assert!(f.problems.is_empty());
    assert_eq!(f.structure.loops.len(), 3 * depth);
    assert_eq!(f.structure.loops[depth - 1].parent(), Some(depth - 2));
}

#[test]
fn hostile_inputs_do_not_panic() {
    let pieces = [
        "!$acc parallel\n",
        "!$acc end parallel\n",
        "!$acc loop collapse(3)\n",
        "do i = 1, n\n",
        "end do\n",
        "10 continue\n",
        "do 10 i = 1, 2\n",
        "!$acc atomic\n",
        "!$acc end atomic\n",
        "if (a) then\n",
        "else\n",
        "end if\n",
        "subroutine s\n",
        "end subroutine\n",
        "contains\n",
        "end\n",
        "interface\n",
        "end interface\n",
        "type t\n",
        "end type\n",
        "!$acc end parallel loop\n",
        "!$acc parallel loop\n",
        "module m\n",
        "x = 1\n",
        "!$acc data\n",
        "!$acc end data\n",
        "case (1)\n",
        "do while (x)\n",
    ];
    // Every ordered pair and triple of pieces.
    for a in pieces {
        for b in pieces {
            for c in pieces {
                let src = format!("{a}{b}{c}");
                let _ = free(&src);
            }
        }
    }
}

#[path = "conformance/gcc_source.rs"]
mod gcc_source;

/// GCC 12's Fortran OpenACC test directories: from the cache the conformance suite fills,
/// fetched here under `ACC2OMP_REQUIRE_TOOLS=1`; None (the test says it skipped) otherwise.
fn gcc_fortran_dirs() -> Option<[std::path::PathBuf; 2]> {
    let dirs = |root: std::path::PathBuf| {
        [
            root.join("libgomp/testsuite/libgomp.oacc-fortran"),
            root.join("gcc/testsuite/gfortran.dg/goacc"),
        ]
    };
    let cached = dirs(gcc_source::cache_root().join("gcc-12-source/gcc-12.2.0"));
    if cached.iter().all(|d| d.is_dir()) {
        return Some(cached);
    }
    if std::env::var_os("ACC2OMP_REQUIRE_TOOLS").is_some_and(|v| v == "1") {
        let fetched = dirs(gcc_source::tree().unwrap_or_else(|e| panic!("{e}")));
        assert!(
            fetched.iter().all(|d| d.is_dir()),
            "GCC's Fortran OpenACC tests are missing"
        );
        return Some(fetched);
    }
    eprintln!(
        "SKIPPED gcc_fortran_tests: GCC's Fortran tests are not in the cache (run `cargo test --release --test conformance` once, or set ACC2OMP_REQUIRE_TOOLS=1)"
    );
    None
}

/// Places in GCC's compile-only tests where the front end reports a problem and GCC reports
/// none, or reports it on another line (file, line, why).
const GOACC_DIFFERENCES: [(&str, usize, &str); 6] = [
    ("loop-1.f95", 125, NOT_TIGHT),
    ("loop-1.f95", 131, NOT_TIGHT),
    ("loop-1.f95", 137, NOT_TIGHT),
    ("loop-1-2.f95", 125, NOT_TIGHT),
    ("loop-1-2.f95", 131, NOT_TIGHT),
    ("loop-1-2.f95", 137, NOT_TIGHT),
];

/// Lines 125, 131 and 137 (`collapse(2)`, `collapse(3-1)`, `collapse(1+1)`).
const NOT_TIGHT: &str = "collapse(2) over loops with a statement after the inner one: gfortran -fopenacc takes it, gfortran and flang -fopenmp reject the collapsed nest";

#[test]
fn gcc_fortran_tests() {
    let Some([runtime, compile]) = gcc_fortran_dirs() else {
        return;
    };
    let files = |dir: &std::path::Path| {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .flatten()
            .map(|e| e.path())
            .filter(|p| acc2omp::fortran::form::kind_of(p).is_some())
            .collect();
        v.sort();
        v
    };
    let mut unexpected = Vec::new();
    let (mut acc, mut paired) = (0, 0);
    for (dir, runtime_tests) in [(&runtime, true), (&compile, false)] {
        for path in files(dir) {
            let bytes = std::fs::read(&path).unwrap_or_default();
            let src = String::from_utf8_lossy(&bytes).into_owned();
            let kind = acc2omp::fortran::form::kind_of(&path).unwrap_or(SourceKind {
                form: Form::Free,
                cpp: false,
            });
            let f = Front::new(&src, kind, |s| fortran_site_info(s, &TABLES));
            let name = path
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned());
            let lines: Vec<&str> = src.lines().collect();
            let line_of = |o: usize| src[..o.min(src.len())].matches('\n').count() + 1;
            // A compile-only test's diagnostics are on or next to the lines it marks.
            let marked = |l: usize| {
                (l.saturating_sub(2)..l + 2).any(|k| {
                    lines
                        .get(k)
                        .is_some_and(|t| t.contains("dg-error") || t.contains("dg-warning"))
                })
            };
            let mut report = |l: usize, what: String| {
                let known = GOACC_DIFFERENCES
                    .iter()
                    .any(|(n, at, _)| *n == name && *at == l);
                if runtime_tests || !(marked(l) || known) {
                    unexpected.push(format!("{name}:{l}: {what}"));
                }
            };
            for (k, site) in f.sites.iter().enumerate() {
                if site.sentinel != acc2omp::fortran::lines::Sentinel::Acc {
                    continue;
                }
                acc += 1;
                let ok = match &f.structure.regions[k].applies {
                    Applies::Block { end, .. } => end.is_some(),
                    Applies::Loop { loops, .. } => !loops.is_empty(),
                    Applies::End { opener } => opener.is_some(),
                    Applies::Nothing => false,
                    _ => true,
                };
                if ok {
                    paired += 1;
                } else {
                    report(
                        line_of(site.span.start),
                        format!("unpaired '{}'", site.text.trim()),
                    );
                }
            }
            for p in &f.problems {
                report(line_of(p.offset), p.message.clone());
            }
        }
    }
    eprintln!("gcc_fortran_tests: {acc} !$acc directives, {paired} paired or standalone");
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n"));
}

#[test]
fn declarations_give_each_name_its_facts() {
    use acc2omp::fortran::facts::{Intent, Type};
    let src = "module m\n  implicit none\n  type point\n    real :: x, y(3)\n  end type point\n  real(8), allocatable :: field(:, :)\n  integer, parameter :: n = 10\ncontains\n  subroutine s(a, b, k, p)\n    real, intent(inout) :: a(n, *)\n    double precision b\n    dimension b(0:n)\n    integer, value :: k\n    type(point), pointer :: p\n    target :: b\n    do i = 1, k\n      a(i, 1) = b(i) + field(i, 1) + p%x\n    end do\n  end subroutine s\nend module m\nsubroutine t(z)\n  use m\n  implicit real*8 (a-h, o-z)\n  optional z\n  q = z + w\nend subroutine\n";
    let f = free(src);
    assert!(f.problems.is_empty(), "{:?}", f.problems);
    let st = &f.structure;
    let look = |u: usize, name: &str| f.facts.lookup(st, u, name).unwrap();
    let s = 1;
    let a = look(s, "A");
    assert_eq!(
        (a.rank, a.deferred, a.intent),
        (2, true, Some(Intent::InOut))
    );
    let b = look(s, "b");
    assert_eq!(
        b.ty,
        Type::Intrinsic {
            name: "double precision".into(),
            kind: String::new()
        }
    );
    assert!(b.target && b.rank == 1 && !b.deferred);
    assert!(look(s, "k").value);
    let p = look(s, "p");
    assert!(p.pointer && p.rank == 0);
    assert_eq!(
        p.ty,
        Type::Derived {
            name: "point".into(),
            class: false
        }
    );
    // Host association: module variables seen from the module's procedures.
    let field = look(s, "field");
    assert!(field.allocatable && field.rank == 2 && field.deferred);
    assert!(look(s, "n").parameter);
    // `implicit none` in the module holds in its procedures: `i` has no type.
    assert_eq!(look(s, "i").ty, Type::Implicit(None));
    let point = f.facts.derived("POINT").unwrap();
    let comps: Vec<_> = point
        .components
        .iter()
        .map(|c| (c.name.as_str(), c.rank))
        .collect();
    assert_eq!(comps, [("x", 0), ("y", 1)]);
    // Use association and implicit rules in the external subroutine.
    let t = 2;
    assert_eq!(st.units[t].name.as_deref(), Some("t"));
    assert!(look(t, "field").allocatable);
    assert!(look(t, "z").optional);
    assert_eq!(look(t, "q").ty, Type::Implicit(Some("real".into())));
    assert_eq!(look(t, "w").ty, Type::Implicit(Some("real".into())));
    assert_eq!(look(t, "k").ty, Type::Implicit(Some("integer".into())));
    assert_eq!(look(t, "h").ty, Type::Implicit(Some("real".into())));
}

fn spelling(form: Form, comment: char, upper: bool) -> acc2omp::fortran::print::Spelling {
    acc2omp::fortran::print::Spelling {
        form,
        comment,
        upper,
    }
}

#[test]
fn directives_are_written_within_the_line_limit() {
    use acc2omp::fortran::print::{directive_lines, end_directive};
    let free = spelling(Form::Free, '!', false);
    assert_eq!(
        directive_lines(free, "  ", "target teams map(to: a)", "\n"),
        "  !$omp target teams map(to: a)"
    );
    assert_eq!(
        end_directive(spelling(Form::Free, '!', true), "", "target teams", "\n"),
        "!$OMP end target teams"
    );
    let items: Vec<String> = (0..40).map(|k| format!("array_{k}(1:n)")).collect();
    let text = format!(
        "target teams distribute parallel do map(tofrom: {}) private(x, y)",
        items.join(", ")
    );
    let out = directive_lines(free, "    ", &text, "\n");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() > 4, "{out}");
    assert!(lines.iter().all(|l| l.len() <= 132), "{out}");
    assert!(lines[0].starts_with("    !$omp target teams distribute"));
    assert!(lines[..lines.len() - 1].iter().all(|l| l.ends_with(" &")));
    assert!(lines[1..].iter().all(|l| l.starts_with("    !$omp& ")));
    // Joined as compilers join continuation lines, the text is the same.
    let joined: String = lines
        .iter()
        .map(|l| {
            l.trim_start()
                .trim_start_matches("!$omp& ")
                .trim_start_matches("!$omp ")
                .trim_end_matches(" &")
        })
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(
        joined.replace(", ", ",").replace(' ', ""),
        text.replace(' ', "")
    );
    let fixed = directive_lines(spelling(Form::Fixed, 'C', true), "      ", &text, "\n");
    let lines: Vec<&str> = fixed.lines().collect();
    assert!(lines.iter().all(|l| l.len() <= 72), "{fixed}");
    assert!(lines[0].starts_with("C$OMP target"));
    assert!(lines[1..].iter().all(|l| l.starts_with("C$OMP& ")));
}

#[test]
fn a_rewritten_directive_keeps_its_comments() {
    use acc2omp::fortran::print::rewrite_lines;
    let src = "  !$ACC parallel &  ! why\n  ! note\n\n  !$acc& copy(a)\n  x = 1\n";
    let f = free(src);
    let site = &f.sites[0];
    let out = rewrite_lines(src, &f.lines, site, "target teams map(tofrom: a)", "\n").unwrap();
    assert_eq!(
        out,
        "  !$OMP target teams map(tofrom: a)\n  ! why\n  ! note"
    );
    let range = acc2omp::fortran::print::site_lines(site, &f.lines);
    assert_eq!(&src[range.end..], "\n  x = 1\n");
    let src = "!$acc parallel &\n#ifdef X\n!$acc copy(a)\n#endif\nx = 1\n";
    let f = front(src, Form::Free);
    assert!(rewrite_lines(src, &f.lines, &f.sites[0], "target", "\n").is_none());
}

/// The guard before a directive left as OpenACC: the original still builds with
/// `gfortran -fopenacc`, the output does not build with `-fopenmp` (gfortran and flang).
#[test]
fn the_guard_line_stops_an_openmp_build() {
    use acc2omp::fortran::print::guard_line;
    let have = |c: &str| {
        std::process::Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let required = std::env::var_os("ACC2OMP_REQUIRE_TOOLS").is_some_and(|v| v == "1");
    if !have("gfortran") || !have("flang-22") {
        assert!(!required, "gfortran and flang-22 are required");
        eprintln!("SKIPPED the_guard_line_stops_an_openmp_build: gfortran or flang-22 missing");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let free = format!(
        "program p\n  integer :: x\n  x = 1\n{}\n  !$acc update host(x)\n  print *, x\nend program\n",
        guard_line(spelling(Form::Free, '!', false), "  ", 5)
    );
    let fixed = format!(
        "      PROGRAM P\n      X = 1\n{}\nC$ACC UPDATE HOST(X)\n      END\n",
        guard_line(spelling(Form::Fixed, 'C', true), "", 4)
    );
    for (name, text) in [("g.f90", free), ("h.f", fixed)] {
        let path = dir.path().join(name);
        std::fs::write(&path, &text).unwrap();
        let build = |cc: &str, flag: &str| {
            let o = std::process::Command::new(cc)
                .current_dir(dir.path())
                .args([flag, "-c", name])
                .output()
                .unwrap();
            (
                o.status.success(),
                String::from_utf8_lossy(&o.stderr).into_owned(),
            )
        };
        let (ok, err) = build("gfortran", "-fopenacc");
        assert!(ok, "{name}: {err}");
        for cc in ["gfortran", "flang-22"] {
            let (ok, err) = build(cc, "-fopenmp");
            assert!(!ok, "{cc} {name} builds with the guard");
            assert!(err.contains("acc2omp: OpenACC at line"), "{cc}: {err}");
        }
    }
}

#[test]
fn fortran_expressions() {
    use acc2omp::fortran::lang::Fortran;
    let f = Fortran;
    assert!(f.is_int_literal("64") && f.is_int_literal("64_8") && f.is_int_literal("1_i8"));
    assert!(!f.is_int_literal("n") && !f.is_int_literal("64_") && !f.is_int_literal("1.0"));
    assert!(f.is_identifier("a_1") && !f.is_identifier("_a") && !f.is_identifier("1a"));
    assert_eq!(f.base_name(" t%a(1:n)"), Some("t"));
    assert_eq!(f.member_of("t%a(1:n)"), Some(("t", "a")));
    assert_eq!(f.member_of("a(1:n)"), None);
    assert!(f.names_whole("A(:, :)", "a") && f.names_whole("a", "a"));
    assert!(!f.names_whole("a(1:n)", "a") && !f.names_whole("ab", "a"));
    assert_eq!(
        f.words("x .and. b(1.5d-3, 'str q') .eqv. .true. + t%c"),
        ["x", "b", "t", "c"]
    );
    assert_eq!(f.identifiers("sqrt(a(i)) + t%c + n"), ["a", "i", "t", "n"]);
    assert!(f.writes_or_calls("f(x) + 1") && !f.writes_or_calls("x .and. y"));
    assert_eq!(f.and(&f.not("(a > 0)"), "s"), ".not. (a > 0) .and. s");
    assert_eq!(f.min("n + 1", 127), "min(n + 1, 127)");
    assert_eq!(f.low_bits("q", 63), "iand(q, 63)");
    assert_eq!(f.iterator_range(4), "0:3");
}

#[test]
fn statements_read_and_write_names() {
    use acc2omp::fortran::facts::uses;
    let src = "subroutine s(a, b, n, t)\n  real :: a(n), b(n)\n  type(tt) :: t\n  do i = 1, n, k\n    a(i) = b(i) * t%scale + sqrt(c)\n    if (a(i) > lim) a(i) = lim\n    if (flag) call f(x, y(1), z + 1, key=w)\n    where (m) q = r\n  end do\n  read (u, *) v\n  allocate(p(n), stat=ierr)\n  do while (iter < 10)\n  end do\nend subroutine\n";
    let f = free(src);
    assert!(f.problems.is_empty(), "{:?}", f.problems);
    let u = &f.structure.units[0];
    let got = uses(src, &f.lexed, &f.structure, u.exec.clone());
    let show: Vec<String> = got
        .iter()
        .map(|u| {
            format!(
                "{}{}{}{}",
                u.name,
                if u.read { " r" } else { "" },
                if u.written { " w" } else { "" },
                if u.subscripted { " ()" } else { "" }
            )
        })
        .collect();
    assert_eq!(
        show,
        [
            "i r w",
            "n r",
            "k r",
            "a r w ()",
            "b r ()",
            "t r",
            "sqrt r ()",
            "c r",
            "lim r",
            "flag r",
            "x w",
            "y w ()",
            "z r",
            "w r",
            "m r",
            "q w",
            "r r",
            "u r",
            "v w",
            "p w ()",
            "ierr w",
            "iter r",
        ]
    );
    assert_eq!(got[0].at, src.find("i = 1").unwrap());
}

/// `src` migrated as `name`: the output and each diagnostic as (line, rule).
fn migrate(src: &str, name: &str) -> (String, Vec<(usize, String)>) {
    let out = acc2omp::migrate_source(
        src,
        Some(std::path::Path::new(name)),
        &acc2omp::Options::default(),
        &acc2omp::semantic::SemanticConfig::syntactic(),
    );
    let diags = out
        .diagnostics
        .iter()
        .map(|d| {
            let line = src[..d.offset].matches('\n').count() + 1;
            (line, d.rule.to_string())
        })
        .collect();
    (out.text, diags)
}

#[test]
fn clause_arguments_are_checked_against_the_declarations() {
    let src = "subroutine s(n)\n  integer :: n, q\n  logical :: l\n  real :: a(10)\n  integer, parameter :: k = 4\n  !$acc parallel wait(l)\n  !$acc end parallel\n  !$acc parallel num_gangs(a) async(q)\n  !$acc end parallel\n  !$acc kernels vector_length(.true.)\n  !$acc end kernels\n  !$acc parallel if(n)\n  !$acc end parallel\n  !$acc update device(k)\n  !$acc parallel wait(a(1:2))\n  !$acc end parallel\n  !$acc parallel num_workers(k) if(l) wait(q, n)\n  !$acc end parallel\nend subroutine s\n";
    let (out, diags) = migrate(src, "t.f90");
    let at = |line: usize| diags.iter().filter(|(l, _)| *l == line).count();
    for line in [6, 8, 10, 12, 14, 15] {
        assert_eq!(at(line), 1, "line {line}: {diags:?}");
        assert!(
            diags.contains(&(line, "invalid-argument".to_string())),
            "{diags:?}"
        );
    }
    // Left unchanged; the valid one (a named integer constant, a logical, integers) is
    // translated.
    assert_eq!(out.matches("!$acc").count(), 11, "{out}");
    assert!(
        !diags.contains(&(17, "invalid-argument".to_string())),
        "{diags:?}"
    );
}

#[test]
fn check_diagnostics_point_at_their_clause_line() {
    // `gang(5)` sizes nothing in `parallel`: the error is on the loop directive's line.
    let src = "program p\n  integer :: i\n  !$acc parallel\n  !$acc loop &\n  !$acc gang(5)\n  do i = 1, 4\n  end do\n  !$acc end parallel\nend program p\n";
    let (_, diags) = migrate(src, "t.f90");
    assert!(
        diags.contains(&(5, "loop-nesting".to_string())),
        "{diags:?}"
    );
}

#[test]
fn a_combined_loop_that_becomes_a_block_construct_gets_its_end() {
    let src = "subroutine s(a, n)\n  integer :: n, i\n  real :: a(n)\n  !$acc serial loop\n  do i = 2, n\n    a(i) = a(i - 1)\n  end do\n  a(1) = 0\nend subroutine s\n";
    let (out, _) = migrate(src, "t.f90");
    assert!(
        out.contains("  !$omp target\n  do i = 2, n\n    a(i) = a(i - 1)\n  end do\n  !$omp end target\n  a(1) = 0\n"),
        "{out}"
    );
}

/// A loop directive over fewer tightly nested loops than its `collapse` or `tile` names is
/// invalid OpenACC (gfortran: "not enough DO loops"). The warning (`collapse-depth`) says it is
/// left unchanged, and so it is: translated, it would name the same missing loops (gfortran
/// rejects that too).
#[test]
fn a_loop_directive_over_too_few_loops_is_left_unchanged() {
    let src = "program p\n  integer :: i, j, a(9, 9)\n  !$acc parallel loop tile(*, *)\n  do i = 1, 9\n    a(i, 1) = i\n  end do\n  !$acc parallel loop collapse(2)\n  do i = 1, 9\n    a(i, 2) = 0\n    do j = 1, 9\n      a(i, j) = j\n    end do\n  end do\n  !$acc end parallel loop\n  !$acc parallel loop collapse(2)\n  do i = 1, 9\n    do j = 1, 9\n      a(i, j) = j\n    end do\n  end do\nend program p\n";
    let (out, diags) = migrate(src, "t.f90");
    for line in [3, 7] {
        assert!(
            diags.contains(&(line, "collapse-depth".to_string())),
            "{diags:?}"
        );
    }
    // The two stay OpenACC behind the guard, with the end directive that pairs with the
    // second; the valid nest after them is translated.
    assert_eq!(out.matches("!$acc").count(), 3, "{out}");
    assert_eq!(out.matches("not translated'").count(), 2, "{out}");
    assert_eq!(out.matches("collapse(2)").count(), 2, "{out}");
    assert!(
        out.contains("!$omp target teams distribute parallel do simd collapse(2)"),
        "{out}"
    );
    // One diagnostic each: the nest's, at the directive.
    assert_eq!(diags.len(), 2, "{diags:?}");
    // The same for any problem the structure reports at a directive: here a continuation
    // line with no directive before it to continue.
    let src = "      subroutine s\n      integer i\n!$omp parallel\n!$acc& kernels loop\n      do i = 1, 9\n      enddo\n!$omp end parallel\n      end\n";
    let (out, diags) = migrate(src, "t.f");
    assert!(
        diags.contains(&(4, "not-translated".to_string())),
        "{diags:?}"
    );
    assert!(out.contains("\n!$acc& kernels loop\n"), "{out}");
    assert!(!out.contains("target"), "{out}");
    // A count written as a constant expression is checked as its value.
    let src = "program p\n  integer :: i, j, a(9, 9)\n  !$acc parallel loop collapse(3-1)\n  do i = 1, 9\n    a(i, 2) = 0\n    do j = 1, 9\n      a(i, j) = j\n    end do\n  end do\n  !$acc parallel loop collapse((1+1))\n  do i = 1, 9\n    do j = 1, 9\n      a(i, j) = j\n    end do\n  end do\nend program p\n";
    let (out, diags) = migrate(src, "t.f90");
    assert_eq!(diags, [(3, "collapse-depth".to_string())], "{out}");
    assert!(out.contains("!$acc parallel loop collapse(3-1)"), "{out}");
    assert!(
        out.contains("!$omp target teams distribute parallel do simd collapse((1+1))"),
        "{out}"
    );
    // One whose value is not positive is an error, as `collapse(0)` is.
    let src = "program p\n  integer :: i, a(9)\n  !$acc parallel loop collapse(1-2)\n  do i = 1, 9\n    a(i) = 0\n  end do\nend program p\n";
    let (out, diags) = migrate(src, "t.f90");
    assert_eq!(diags, [(3, "invalid-argument".to_string())], "{out}");
    assert!(out.contains("!$acc parallel loop collapse(1-2)"), "{out}");
    // A named constant's value is not read: the nest was taken as one loop, so the directive
    // (over a nest that is not tight, and one that is) stays as it is, said at the count.
    let src = "program p\n  integer, parameter :: nc = 2\n  integer :: i, j, a(9, 9)\n  !$acc parallel loop collapse(nc)\n  do i = 1, 9\n    a(i, 2) = 0\n    do j = 1, 9\n      a(i, j) = j\n    end do\n  end do\n  !$acc parallel loop collapse(nc)\n  do i = 1, 9\n    do j = 1, 9\n      a(i, j) = j\n    end do\n  end do\nend program p\n";
    let (out, diags) = migrate(src, "t.f90");
    let want = [4, 11].map(|l| (l, "collapse-unknown".to_string()));
    assert_eq!(diags, want, "{out}");
    assert_eq!(
        out.matches("!$acc parallel loop collapse(nc)").count(),
        2,
        "{out}"
    );
}

#[test]
fn a_main_program_without_program_statement_holds_its_leading_directives() {
    let src = "!$acc parallel async(1)\n!$acc end parallel\n      end\n";
    let f = front(src, Form::Fixed);
    assert_eq!(f.structure.units.len(), 1);
    assert!(f.structure.regions.iter().all(|r| r.unit() == Some(0)));
    let (out, _) = migrate(src, "t.f");
    assert!(out.contains("common /acc2omp_queues/"), "{out}");
}

/// Fortran names and keywords are case-insensitive: spelling the directives' names and
/// keywords in capitals, or the statements', must not change the translation but for case
/// (the output lowercased) nor its diagnostics. A clause naming `T` where the statements
/// write `t` once gave `private(T) … private(t)`, a second map of a reduced variable, a
/// false `scalar-race`, `default(PRESENT)` ignored and `device_type(HOST)` taken for a GPU.
#[test]
fn names_and_keywords_in_any_case() {
    let mut sources: Vec<(String, String)> = CASE_PROGRAMS
        .iter()
        .enumerate()
        .map(|(k, s)| (format!("case{k}.f90"), s.to_string()))
        .collect();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("fixtures/translate"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.extend(gcc_fortran_dirs().into_iter().flatten());
    for dir in dirs {
        for p in std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()) {
            if acc2omp::fortran::form::kind_of(&p).is_some()
                && let Ok(text) = std::fs::read_to_string(&p)
            {
                sources.push((p.display().to_string(), text));
            }
        }
    }
    sources.sort();
    let mut checked = 0;
    let mut failures = Vec::new();
    for (name, text) in &sources {
        if !text.to_ascii_lowercase().contains("$acc") {
            continue;
        }
        let path = std::path::Path::new(name);
        let base = case_outcome(path, text);
        for (how, other) in [
            ("directives in capitals", upper_directives(text)),
            ("statements in capitals", upper_statements(text)),
            ("directives in mixed case", mixed_directives(text)),
        ] {
            if other == *text {
                continue;
            }
            checked += 1;
            if case_outcome(path, &other) != base {
                failures.push(format!("{name}: {how}"));
            }
        }
    }
    assert!(checked >= 20, "only {checked} checked");
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The translation lowercased and its diagnostics (rule, offset): the transformations keep
/// every byte's position.
fn case_outcome(path: &std::path::Path, text: &str) -> (String, Vec<(String, usize)>) {
    let out = acc2omp::migrate_source(
        text,
        Some(path),
        &acc2omp::Options::default(),
        &acc2omp::semantic::SemanticConfig::syntactic(),
    );
    let diags = out
        .diagnostics
        .iter()
        .map(|d| (d.rule.to_string(), d.offset))
        .collect();
    (out.text.to_ascii_lowercase(), diags)
}

/// Whether line `l` is an OpenACC directive line (free or fixed form), and where its
/// sentinel ends.
fn acc_sentinel(l: &str) -> Option<usize> {
    let t = l.trim_start();
    let lead = l.len() - t.len();
    let fixed = lead == 0 && t.starts_with(['c', 'C', '*']);
    (t.get(..5).is_some_and(|s| s.eq_ignore_ascii_case("!$acc"))
        || fixed && t.get(1..5).is_some_and(|s| s.eq_ignore_ascii_case("$acc")))
    .then_some(lead + 5)
}

/// Lines with quotes are kept: their strings are data.
fn upper_directives(text: &str) -> String {
    text.split_inclusive('\n')
        .map(|l| match acc_sentinel(l) {
            Some(at) if !l.contains(['\'', '"']) => {
                format!("{}{}", &l[..at], l[at..].to_ascii_uppercase())
            }
            _ => l.to_string(),
        })
        .collect()
}

/// Directives' letters in alternating case (`pArAlLeL lOoP`), lines with quotes kept.
fn mixed_directives(text: &str) -> String {
    text.split_inclusive('\n')
        .map(|l| match acc_sentinel(l) {
            Some(at) if !l.contains(['\'', '"']) => {
                let mut upper = false;
                let rest: String = l[at..]
                    .chars()
                    .map(|c| {
                        upper = !upper;
                        if upper { c.to_ascii_uppercase() } else { c }
                    })
                    .collect();
                format!("{}{rest}", &l[..at])
            }
            _ => l.to_string(),
        })
        .collect()
}

/// Statements in capitals; directives, comments, preprocessor lines and lines with quotes
/// kept.
fn upper_statements(text: &str) -> String {
    text.split_inclusive('\n')
        .map(|l| {
            let t = l.trim_start();
            let comment = t.starts_with(['!', '#']) || l.starts_with(['c', 'C', '*']);
            if acc_sentinel(l).is_some() || comment || l.contains(['\'', '"']) {
                l.to_string()
            } else {
                l.to_ascii_uppercase()
            }
        })
        .collect()
}

/// Programs where a clause's spelling and the statements' differed in case.
const CASE_PROGRAMS: [&str; 12] = [
    // A construct left OpenACC for an error inside (a gang loop in a gang loop) keeps its
    // other loops OpenACC: with `PARALLEL` in capitals they were translated as orphans.
    "subroutine s(n, a)\n  integer :: n, i, j\n  real :: a(n)\n  !$acc parallel copy(a)\n  !$acc loop gang\n  do i = 1, n\n    !$acc loop gang\n    do j = 1, n\n      a(j) = a(j) + 1\n    end do\n  end do\n  !$acc loop worker\n  do i = 1, n\n    a(i) = 2 * a(i)\n  end do\n  !$acc end parallel ! end\nend subroutine\n",
    // `routine(name)` and the procedure it names, one level each.
    "subroutine r(x)\n  !$acc routine(r) seq\n  real :: x\n  x = x + 1\nend subroutine\nsubroutine q(x)\n  !$acc routine(q)\n  !$acc routine gang\n  real :: x\n  x = x + 1\nend subroutine\n",
    // `async(acc_async_noval)` is the default queue.
    "subroutine s(n, a)\n  use openacc\n  integer :: n, i\n  real :: a(n)\n  !$acc parallel loop async(acc_async_noval) copy(a)\n  do i = 1, n\n    a(i) = a(i) + 1\n  end do\n  !$acc wait\nend subroutine\n",
    // A gang loop's threads take its worker loop; the scalar it names `private` in capitals.
    "subroutine s(n, a, b)\n  integer :: n, i, j\n  real :: a(n,n), b(n,n), t\n  !$acc parallel loop gang private(t) copyin(a) copyout(b)\n  do i = 1, n\n    t = a(i,1)\n    !$acc loop worker\n    do j = 1, n\n      b(j,i) = a(j,i) * t\n    end do\n  end do\nend subroutine\n",
    // A scalar shared by a data clause is not made private to the threads.
    "subroutine s(n, a, b, t)\n  integer :: n, i, j\n  real :: a(n,n), b(n,n), t\n  !$acc parallel loop gang copyin(a) copyout(b) copy(t)\n  do i = 1, n\n    t = a(i,1)\n    !$acc loop worker\n    do j = 1, n\n      b(j,i) = a(j,i) * t\n    end do\n  end do\nend subroutine\n",
    // A gang reduction lifted to the construct, an inner vector reduction.
    "subroutine s(n, a, r)\n  integer :: n, i, j\n  real :: a(n), r, s\n  s = 0\n  !$acc parallel copyin(a)\n  !$acc loop gang reduction(+:s)\n  do i = 1, n\n    !$acc loop vector reduction(+:s)\n    do j = 1, n\n      s = s + a(j)\n    end do\n  end do\n  !$acc end parallel\n  r = s\nend subroutine\n",
    // A reduced variable the construct maps already.
    "program p\n  integer :: gmin, i, a(10)\n  a = 1\n  gmin = 100\n  !$acc serial copy(gmin) copyin(a)\n  !$acc loop gang reduction(min: gmin)\n  do i = 1, 10\n    gmin = min(gmin, a(i))\n  end do\n  !$acc end serial\n  print *, gmin\nend program\n",
    // Keywords: default(present), gang(static:), device_type(host).
    "subroutine s(n, a)\n  integer :: n, i\n  real :: a(n)\n  !$acc set device_type(host)\n  !$acc data copy(a)\n  !$acc parallel loop gang(static:2) default(present)\n  do i = 1, n\n    a(i) = a(i) + 1\n  end do\n  !$acc end data\nend subroutine\n",
    // `default(none)` (its check) and `default(present)` on `data` and compute constructs.
    "subroutine s(n, a, t)\n  integer :: n, i\n  real :: a(n), t\n  !$acc data copy(a) default(none)\n  !$acc parallel loop default(none) copy(a)\n  do i = 1, n\n    a(i) = a(i) + t\n  end do\n  !$acc end data\n  !$acc data copy(a) default(present)\n  !$acc parallel loop\n  do i = 1, n\n    a(i) = a(i) + 1\n  end do\n  !$acc end data\nend subroutine\n",
    // `gang(dim:)` and `gang(num:)` in a `parallel` construct, `worker(num:)`, `vector(length:)`.
    "subroutine s(n, a)\n  integer :: n, i\n  real :: a(n,n)\n  !$acc parallel copy(a)\n  !$acc loop gang(dim:1)\n  do i = 1, n\n    a(i,1) = 1\n  end do\n  !$acc loop gang(num:4)\n  do i = 1, n\n    a(i,2) = 2\n  end do\n  !$acc end parallel\n  !$acc kernels loop gang worker(num:4) vector(length:32) copy(a)\n  do i = 1, n\n    a(i,3) = 3\n  end do\nend subroutine\n",
    // Device types: `init device_type(host)`, `set device_type(default)`, sections.
    "subroutine s(n, a)\n  integer :: n, i\n  real :: a(n)\n  !$acc init device_type(host)\n  !$acc set device_type(default) device_num(0)\n  !$acc parallel loop copy(a) device_type(nvidia) num_gangs(4) device_type(*) num_gangs(2)\n  do i = 1, n\n    a(i) = a(i) + 1\n  end do\nend subroutine\n",
    // Modifiers: `always:`, `zero:`, `force:`, `wait(devnum: d : queues: q)`; an operator.
    "subroutine s(n, a, b, x, q)\n  integer :: n, i, j, q\n  real :: a(n,n), b(n), x\n  !$acc enter data copyin(always: b)\n  !$acc parallel loop collapse(force: 2) copy(a) async(q) wait(devnum: 0: queues: q)\n  do i = 1, n\n    do j = 1, n\n      a(i,j) = 0\n    end do\n  end do\n  !$acc wait(devnum: 0: q)\n  !$acc wait(devnum: 0: queues: q)\n  !$acc parallel copyout(zero: b)\n  !$acc end parallel\n  !$acc parallel copyin(b)\n  !$acc loop gang reduction(max: x)\n  do i = 1, n\n    x = max(x, b(i))\n  end do\n  !$acc end parallel\nend subroutine\n",
];

/// A compute construct the Fortran printer cannot write (here: its gang-redundant loop would
/// need a directive added around it) keeps its loops OpenACC too: an inner `loop gang`
/// translated alone was `!$omp distribute` inside the OpenACC construct, which the next run
/// then translated differently.
#[test]
fn a_construct_left_by_the_printer_keeps_its_loops() {
    let src = "subroutine carried(arr, n)\n  use openacc\n  integer, intent(in) :: n\n  integer, intent(inout) :: arr(n)\n  integer :: i, x\n  !$acc parallel private(x) copy(arr) num_gangs(n)\n  !$acc loop gang(static:1)\n  do i = 1, n\n    x = i * 2\n  end do\n  do i = 1, n\n    if (acc_on_device(acc_device_host)) x = i * 2\n    arr(i) = arr(i) + x\n  end do\n  !$acc end parallel\nend subroutine carried\n";
    let (out, diags) = migrate(src, "t.f90");
    assert!(
        diags.contains(&(6, "not-translated".to_string())),
        "{diags:?}"
    );
    assert!(!out.contains("!$omp"), "{out}");
    assert!(out.contains("  !$acc loop gang(static:1)\n"), "{out}");
    let (again, _) = migrate(&out, "t.f90");
    assert_eq!(again, out);
}

/// An `!$omp` line between a loop directive and its `do` takes the loop from it, parsed or
/// not: the directive is left unchanged and its region unknown, so an orphaned loop after it
/// in the unit stays unchanged too, as when that line was still an `!$acc` directive: the
/// second run of a file with a refused directive changes nothing.
#[test]
fn an_omp_line_before_the_do_leaves_the_region_unknown() {
    let first = "subroutine s(a, n)\n  integer :: n, i, j\n  real :: a(n), g\n  !$acc parallel loop reduction(*:\n\n  !$acc parallel loop copyin(a)\n  do i = 1, n\n    a(i) = a(i) + 1\n  end do\n  g = 0\n  do j = 1, 2\n    !$acc loop vector\n    do i = 1, n\n      a(i) = a(i) * 2\n    end do\n  end do\nend subroutine s\n";
    let (out, diags) = migrate(first, "t.f90");
    assert!(
        out.contains("  !$omp target teams distribute parallel do"),
        "{out}"
    );
    assert!(out.contains("    !$acc loop vector\n"), "{out}");
    let rules = |d: &[(usize, String)]| d.iter().map(|(_, r)| r.clone()).collect::<Vec<_>>();
    assert!(
        rules(&diags).contains(&"orphan-loop".to_string()),
        "{diags:?}"
    );
    let (again, diags2) = migrate(&out, "t.f90");
    assert_eq!(again, out, "{diags2:?}");
    assert!(
        rules(&diags2).contains(&"orphan-loop".to_string()),
        "{diags2:?}"
    );
    // Parsed: the directive is refused with the line of the OpenMP directive.
    let src = "subroutine s(a, n)\n  integer :: n, i\n  real :: a(n)\n  !$acc parallel loop\n  !$omp simd\n  do i = 1, n\n    a(i) = 1\n  end do\nend subroutine s\n";
    let (out, diags) = migrate(src, "t.f90");
    assert!(
        out.contains("  !$acc parallel loop\n  !$omp simd\n"),
        "{out}"
    );
    assert_eq!(diags, [(4, "not-translated".to_string())]);
}
