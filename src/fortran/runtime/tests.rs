use super::*;
use crate::rules::Tables;
use std::path::Path;

/// The runtime translation of `src`, read as a file called `name`: the output and the
/// diagnostics' (line, rule).
fn run_kept(name: &str, src: &str, kept: &[Range<usize>]) -> (String, Vec<(usize, String)>) {
    let kind = super::super::form::kind_of(Path::new(name)).expect("a Fortran name");
    let tables = Tables::builtin();
    let front = Front::new(src, kind, |s| {
        crate::directive::fortran_site_info(s, &tables)
    });
    let out = runtime_edits(
        src,
        &front,
        &Options::default(),
        kept,
        &[],
        &Default::default(),
    );
    let text = crate::edit::apply(src, &out.edits).expect("edits do not overlap");
    let diags = out
        .diags
        .iter()
        .map(|d| {
            (
                front.lines.line_of(d.offset) + 1,
                d.rule.as_str().to_string(),
            )
        })
        .collect();
    (text, diags)
}

fn run(name: &str, src: &str) -> (String, Vec<(usize, String)>) {
    run_kept(name, src, &[])
}

/// `run`, checking that a second run changes nothing.
fn fixed(name: &str, src: &str) -> (String, Vec<(usize, String)>) {
    let (out, diags) = run(name, src);
    let (again, _) = run(name, &out);
    assert_eq!(again, out, "a second run changes the output of {name}");
    (out, diags)
}

fn has(diags: &[(usize, String)], line: usize, rule: RuleId) -> bool {
    diags.iter().any(|(l, r)| *l == line && r == rule.as_str())
}

const PROGRAMS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/programs/fortran");

/// A directive line (`!$acc`, `!$omp`, fixed form `c$omp`, …).
fn directive(line: &str, sentinel: &str) -> bool {
    let t = line.trim_start().to_ascii_lowercase();
    t.len() > 5 && t[1..].starts_with(&format!("${sentinel}")) && matches!(&t[..1], "!" | "c" | "*")
}

/// Line hunks where `a` and `b` differ (longest common subsequence of lines).
fn hunks<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<(Vec<&'a str>, Vec<&'a str>)> {
    let (n, m) = (a.len(), b.len());
    let mut l = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            l[i][j] = if a[i] == b[j] {
                l[i + 1][j + 1] + 1
            } else {
                l[i + 1][j].max(l[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    let mut cur: (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            if !cur.0.is_empty() || !cur.1.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            i += 1;
            j += 1;
        } else if j < m && (i == n || l[i][j + 1] >= l[i + 1][j]) {
            cur.1.push(b[j]);
            j += 1;
        } else {
            cur.0.push(a[i]);
            i += 1;
        }
    }
    if !cur.0.is_empty() || !cur.1.is_empty() {
        out.push(cur);
    }
    out
}

/// The runtime translation of a program agrees with its hand translation: where they
/// differ, the output has only the `!$acc` directives the directive translation rewrites
/// and the hand translation only `!$omp` directives and the queue declarations of `async`.
fn agrees_with_hand_translation(name: &str) {
    let src = std::fs::read_to_string(Path::new(PROGRAMS).join(name)).unwrap();
    let hand = std::fs::read_to_string(Path::new(PROGRAMS).join("expected").join(name)).unwrap();
    let (out, _) = fixed(name, &src);
    let a: Vec<&str> = out.lines().collect();
    let b: Vec<&str> = hand.lines().collect();
    for (mine, theirs) in hunks(&a, &b) {
        let ok = mine.iter().all(|l| directive(l, "acc"))
            && theirs.iter().all(|l| {
                directive(l, "omp") && !l.contains("data map") && !l.contains("update ")
                    || l.trim_start().starts_with("integer :: queue(")
            });
        assert!(
            ok,
            "{name}: the runtime translation differs from the hand translation:\n{}\n---\n{}",
            mine.join("\n"),
            theirs.join("\n")
        );
    }
}

#[test]
fn programs_agree_with_their_hand_translations() {
    for p in [
        "runtime_api.f90",
        "runtime_routines.f90",
        "cpp_conditional.F90",
    ] {
        agrees_with_hand_translation(p);
    }
}

#[test]
fn the_fortran_proofs_call_their_routines() {
    let t = Tables::builtin();
    let mut translated = 0;
    for r in &t.runtime {
        for p in &r.fortran_proof {
            let text = std::fs::read_to_string(Path::new(PROGRAMS).join(p))
                .unwrap_or_else(|e| panic!("{}: {p}: {e}", r.name))
                .to_ascii_lowercase();
            assert!(
                text.contains(&format!("{}(", r.name)),
                "{}: {p} does not call it",
                r.name
            );
        }
        translated += usize::from(r.fortran_args.is_some());
        // Every translated routine is proved, or is a variant of one that is.
        if r.fortran_args.is_some() && r.fortran_proof.is_empty() {
            let base = ["_device_async", "_async", "_device"]
                .iter()
                .find_map(|s| r.name.strip_suffix(s))
                .unwrap_or(&r.name);
            assert!(
                t.runtime
                    .iter()
                    .any(|o| o.name.starts_with(base) && !o.fortran_proof.is_empty()),
                "{} has no Fortran proof",
                r.name
            );
        }
    }
    assert!(
        translated >= 35,
        "{translated} routines translated in Fortran"
    );
}

#[test]
fn data_routines_become_directives_in_the_file_form() {
    let src = "program p\n  use openacc\n  real, target :: a(10)\n  call acc_copyin(a)\n  CALL ACC_UPDATE_SELF(A(2:5)) ! back\n  call acc_copyout_finalize(a)\n  call acc_init(acc_device_nvidia)\nend\n";
    let (out, diags) = fixed("x.f90", src);
    assert_eq!(
        out,
        "program p\n  use omp_lib\n  real, target :: a(10)\n  !$omp target enter data map(to: a)\n  !$OMP TARGET UPDATE FROM(A(2:5)) ! back\n  !$omp target update from(a)\n  !$omp target exit data map(delete: a)\nend\n"
    );
    assert_eq!(diags, [(7, "runtime-lifecycle".to_string())]);
    // Fixed form: the sentinel in column 1, a long directive continued in column 6.
    let src = "      program p\n      use openacc\n      real a(100,100)\n      call acc_update_device(a(1:100, 2:99))\n      call acc_copyin_async(a(1:100, 1:99), 3)\n      end\n";
    let (out, _) = fixed("x.f", src);
    assert_eq!(
        out,
        "      program p\n      use omp_lib\n      real a(100,100)\n!$omp target update to(a(1:100, 2:99))\n!$omp taskwait\n!$omp target enter data map(to: a(1:100, 1:99))\n      end\n"
    );
}

#[test]
fn acc_init_of_the_host_selects_it() {
    let src = "subroutine s(t)\n  use openacc\n  integer(acc_device_kind) :: t\n  call acc_init(acc_device_host)\n  call acc_init(t)\n  call acc_init_device(0, acc_device_host)\n  call acc_shutdown(acc_device_host)\nend\n";
    let (out, diags) = fixed("x.f90", src);
    assert_eq!(
        out.matches("  call omp_set_default_device(omp_get_initial_device())\n")
            .count(),
        2,
        "{out}"
    );
    assert!(
        !out.contains("acc_init") && !out.contains("acc_shutdown"),
        "{out}"
    );
    for line in 4..=7 {
        assert!(has(&diags, line, id::RUNTIME_LIFECYCLE), "{diags:?}");
    }
}

#[test]
fn expressions_and_the_modules_they_need() {
    // A unit that gets the OpenACC names from another module gets omp_lib and c_loc itself.
    let src = "module m\n  use openacc\nend module\nsubroutine s(a)\n  use m\n  implicit none\n  integer, target :: a(4)\n  if (acc_is_present(a)) print *, acc_get_num_devices(acc_device_not_host)\nend subroutine\n";
    let (out, diags) = fixed("x.f90", src);
    assert_eq!(
        out,
        "module m\n  use omp_lib\nend module\nsubroutine s(a)\n  use m\n  use omp_lib\n  use, intrinsic :: iso_c_binding, only: c_loc\n  implicit none\n  integer, target :: a(4)\n  if (omp_target_is_present(c_loc(a), omp_get_default_device()) /= 0) print *, omp_get_num_devices()\nend subroutine\n"
    );
    assert!(has(&diags, 8, id::RUNTIME_IS_PRESENT), "{diags:?}");
    // A contained procedure reaches omp_lib through its host; `only:` lists what is used.
    let src = "program p\n  use openacc, only: acc_on_device, acc_device_host, acc_wait\n  call acc_wait(1)\ncontains\n  logical function f()\n    f = acc_on_device(acc_device_host)\n  end function\nend program\n";
    let (out, _) = fixed("x.f90", src);
    assert_eq!(
        out,
        "program p\n  use omp_lib, only: omp_is_initial_device\n  !$omp taskwait\ncontains\n  logical function f()\n    f = omp_is_initial_device()\n  end function\nend program\n"
    );
}

#[test]
fn long_lines_are_continued() {
    let src = "program p\n  use openacc\n  integer, target :: aaaaaaaaaaaaaaa(3), bbbbbbbbbbbbbbbbbbbbb(3)\n  logical :: l\n  l = acc_is_present(aaaaaaaaaaaaaaa) .and. acc_is_present(bbbbbbbbbbbbbbbbbbbbb) ! both\nend\n";
    let (out, _) = fixed("x.f90", src);
    assert!(
        out.contains("  l = omp_target_is_present(c_loc(aaaaaaaaaaaaaaa), omp_get_default_device()) /= 0 .and. &\n    omp_target_is_present(c_loc(bbbbbbbbbbbbbbbbbbbbb), omp_get_default_device()) /= 0 ! both\n"),
        "{out}"
    );
    let src = "      program p\n      use openacc\n      logical l\n      integer, target :: a(2), b(2)\n      l = acc_is_present(a) .or. acc_is_present(b)\n      end\n";
    let (out, _) = fixed("x.f", src);
    for l in out.lines() {
        assert!(l.len() <= 72, "{l:?} is longer than 72 columns:\n{out}");
    }
    assert!(out.contains("\n     &"), "{out}");
}

#[test]
fn calls_left_unchanged_keep_use_openacc_with_reasons() {
    let src = "program p\n  use openacc\n  integer :: t, n\n  integer :: a(8)\n  logical :: l\n  t = acc_get_device_type()\n  n = acc_get_num_devices(t)\n  call acc_copyin(a, 32)\n  l = acc_is_present(a)\n  if (n > 0) call acc_wait(1)\n  call acc_wait(f(n))\n  n = acc_get_num_devices(acc_device_nvidia)\n  !$acc parallel\n  l = acc_on_device(acc_device_host)\n  !$acc end parallel\n  call acc_set_device_num(acc_get_device_num(acc_device_host), acc_device_host)\ncontains\n  integer function f(k)\n    integer :: k\n    f = k\n  end function\nend\n";
    let (out, diags) = fixed("x.f90", src);
    assert!(out.contains("  use openacc\n  use omp_lib\n"), "{out}");
    assert!(out.contains("  n = omp_get_num_devices()\n"), "{out}");
    assert!(out.contains("  t = acc2omp_get_device_type()\n"), "{out}");
    assert!(out.contains("  n = acc2omp_get_num_devices(t)\n"), "{out}");
    assert!(
        out.contains("  call acc2omp_copyin_bytes(a, int(32, 8))\n"),
        "{out}"
    );
    assert!(
        out.contains("  l = acc2omp_is_present(a, storage_size(a))\n"),
        "{out}"
    );
    for (line, rule) in [
        (2, id::OPENACC_INCLUDE_KEPT),
        (10, id::RUNTIME_VALUE_USED),
        (11, id::RUNTIME_SIDE_EFFECTS),
        (12, id::RUNTIME_DEVICE),
        (14, id::RUNTIME_IN_REGION),
        (16, id::RUNTIME_FORTRAN_HELPER),
    ] {
        assert!(
            has(&diags, line, rule),
            "line {line}: {rule:?} missing in {diags:?}"
        );
    }
    // Calls in constructs left OpenACC stay too.
    let src = "program p\n  use openacc\n  call acc_wait(1)\nend\n";
    let at = src.find("call").unwrap();
    let kept = at..at + 15;
    let (out, diags) = run_kept("x.f90", src, std::slice::from_ref(&kept));
    assert_eq!(out, src);
    assert!(has(&diags, 2, id::OPENACC_INCLUDE_KEPT), "{diags:?}");
}

#[test]
fn conditional_lines_and_guards() {
    let src = "program p\n#ifdef _OPENACC\n  use openacc\n#endif\n  !$ use openacc\n#if defined(_OPENACC) && _OPENACC >= 201711\n  print *, acc_on_device(acc_device_host)\n#elif defined(_OPENMP)\n#endif\nend\n";
    let (out, diags) = fixed("x.F90", src);
    assert_eq!(
        out,
        "program p\n#ifdef _OPENMP\n  use omp_lib\n#endif\n  !$ use omp_lib\n#if defined(_OPENMP) && _OPENMP >= 201711\n  print *, omp_is_initial_device()\n#elif defined(_OPENMP)\n#endif\nend\n"
    );
    assert!(
        has(&diags, 6, id::OPENACC_GUARD) && has(&diags, 8, id::OPENACC_GUARD),
        "{diags:?}"
    );
    // Unpreprocessed files have no cpp lines to rewrite.
    let (out, _) = run("x.f90", "program p\n  !$ use openacc\nend\n");
    assert_eq!(out, "program p\n  !$ use omp_lib\nend\n");
}

#[test]
fn helpers_go_to_the_outermost_unit_once() {
    // A program with an internal procedure: one `contains` part, each helper once.
    let src = "program p\n  use openacc\n  real :: a(4), s\n  call acc_copyin(a, 16)\n  if (.not. acc_is_present(s)) stop 1\n  call q\ncontains\n  subroutine q\n    if (acc_is_present(a(2:3))) stop 2\n    if (acc_async_test(1)) continue\n  end subroutine\nend program\n";
    let (out, diags) = fixed("x.f90", src);
    assert!(out.starts_with("program p\n  use omp_lib\n"), "{out}");
    for h in [
        "acc2omp_copyin_bytes",
        "acc2omp_copyin_bytes_map",
        "acc2omp_is_present",
        "acc2omp_is_present_bytes",
        "acc2omp_async_test",
    ] {
        let def = format!("function {h}(");
        let sub = format!("subroutine {h}(");
        assert_eq!(
            out.matches(&def).count() + out.matches(&sub).count(),
            1,
            "{h}: {out}"
        );
    }
    assert_eq!(out.matches("contains").count(), 1, "{out}");
    assert!(
        out.ends_with("      end function acc2omp_async_test\nend program\n"),
        "{out}"
    );
    assert!(
        !diags
            .iter()
            .any(|d| d.1 == id::RUNTIME_FORTRAN_HELPER.as_str()),
        "{diags:?}"
    );
    // Helpers already there are not added again when more calls need them.
    let more = out.replace("call q\n", "call q\n  if (acc_is_present(s)) stop 3\n");
    let (again, _) = fixed("x.f90", &more);
    assert_eq!(
        again.matches("function acc2omp_is_present(").count(),
        1,
        "{again}"
    );
    // A module gets private module procedures; a section that is not contiguous is refused.
    let src = "module m\n  use openacc\n  implicit none\n  real :: b(4, 4)\ncontains\n  subroutine s\n    call acc_update_device(b, 64)\n    if (acc_is_present(b(1:2, 1:2))) stop 1\n  end subroutine\nend module\n";
    let (out, diags) = fixed("x.f90", src);
    assert!(out.contains("      private :: acc2omp_update_device_bytes\n      private :: acc2omp_update_device_bytes_map\ncontains\n"), "{out}");
    assert!(out.contains("!$omp target update to(b)\n"), "{out}");
    assert!(has(&diags, 8, id::RUNTIME_FORTRAN_HELPER), "{diags:?}");
    // Fixed form: the helper text is valid there too (column 7, 72 columns).
    let src = "      program p\n      use openacc\n      real a(4)\n      call acc_create(a, 16)\n      end\n";
    let (out, _) = fixed("x.f", src);
    assert!(
        out.contains("      contains\n! acc2omp: acc_create(a, n)"),
        "{out}"
    );
    for l in out.lines() {
        assert!(l.len() <= 72, "{l:?}: {out}");
        assert!(l.starts_with(['!', ' ']), "{l:?}: {out}");
    }
    // include 'openacc_lib.h' goes where nothing of OpenACC stays.
    let src = "program p\n  implicit none\n  include 'openacc_lib.h'\n  real :: a(4)\n  if (acc_is_present(a)) stop 1\nend\n";
    let (out, _) = fixed("x.f90", src);
    assert!(!out.contains("include"), "{out}");
    assert!(
        out.lines()
            .all(|l| l.starts_with('!') || !l.contains("acc_")),
        "{out}"
    );
}

#[test]
fn device_constants_are_declared_once_in_the_outermost_unit() {
    // Free form: a module (private constants), a program with an internal procedure, a
    // select case and a kind; the second run is checked by `fixed`.
    let src = "module m\n  use openacc\n  implicit none\ncontains\n  logical function h(t)\n    integer(acc_device_kind) :: t\n    select case (t)\n    case (acc_device_host)\n      h = .true.\n    case default\n      h = .false.\n    end select\n  end function\nend module\nprogram p\n  use openacc\n  use m\n  implicit none\n  integer :: t\n  t = acc_get_device_type()\n  if (t == acc_device_nvidia) print *, acc_get_num_devices(t)\n  call s()\ncontains\n  subroutine s()\n    call acc_set_device_num(0, t)\n    if (acc_on_device(acc_device_none)) print *, h(acc_device_host)\n  end subroutine\nend program\n";
    let (out, diags) = fixed("x.f90", src);
    let code = out.lines().filter(|l| !l.trim_start().starts_with('!'));
    assert!(
        !code
            .map(str::to_ascii_lowercase)
            .any(|l| l.contains("acc_")),
        "{out}"
    );
    assert!(
        out.contains("  implicit none\n      integer, parameter, private :: acc2omp_device_t = kind(0)\n      integer, parameter, private :: acc2omp_device_host = 2\ncontains\n"),
        "{out}"
    );
    assert!(
        out.contains("  implicit none\n      integer, parameter :: acc2omp_device_host = 2\n      integer, parameter :: acc2omp_device_not_host = 4\n  integer :: t\n"),
        "{out}"
    );
    assert!(out.contains("    case (acc2omp_device_host)\n"), "{out}");
    assert!(
        out.contains("if (t == acc2omp_device_not_host) print *, acc2omp_get_num_devices(t)\n"),
        "{out}"
    );
    assert!(
        out.contains("    call acc2omp_set_device_num(0, t)\n"),
        "{out}"
    );
    assert!(
        out.contains("    if (omp_is_initial_device()) print *, h(acc2omp_device_host)\n"),
        "{out}"
    );
    // Each helper once, with the one it calls.
    assert_eq!(
        out.matches("integer function acc2omp_device_kind(t)")
            .count(),
        1,
        "{out}"
    );
    assert!(has(&diags, 21, id::RUNTIME_DEVICE), "{diags:?}");
    // Fixed form: the declarations and helpers hold the 72 columns.
    let src = "      program q\n      use openacc\n      character*20 s\n      integer(acc_device_property) k\n      k = acc_property_vendor\n      call acc_get_property_string(0, acc_device_host, k, s)\n      end\n";
    let (out, _) = fixed("x.f", src);
    assert!(
        out.contains("      call acc2omp_get_property_string(0, acc2omp_device_host, k, s)\n"),
        "{out}"
    );
    assert!(
        out.lines()
            .all(|l| l.starts_with(['c', '!', '*']) || l.len() <= 72),
        "{out}"
    );
}

#[test]
fn acc_on_device_in_a_region_follows_the_openmp_construct() {
    let src = "program p\n  use openacc\n  logical :: l\n  !$acc parallel\n  l = acc_on_device(acc_device_host)\n  !$acc end parallel\nend\n";
    let tables = Tables::builtin();
    let front = Front::new(
        src,
        super::super::form::kind_of(Path::new("x.f90")).unwrap(),
        |s| crate::directive::fortran_site_info(s, &tables),
    );
    let at = src.find("!$acc parallel").unwrap();
    let open = at..at + "!$acc parallel".len();
    for (omp, translated) in [
        ("!$omp target", true),
        ("!$omp target teams", false),
        ("!$omp target teams distribute parallel do", true),
        ("!$omp target teams loop", false),
    ] {
        let edits = [Edit::replace(open.clone(), omp)];
        let out = runtime_edits(
            src,
            &front,
            &Options::default(),
            &[],
            &edits,
            &Default::default(),
        );
        let text = crate::edit::apply(src, &out.edits).unwrap();
        assert_eq!(
            text.contains("l = omp_is_initial_device()"),
            translated,
            "{omp}: {text}"
        );
        let refused = out
            .diags
            .iter()
            .any(|d| d.rule.as_str() == id::RUNTIME_IN_REGION.as_str());
        assert_eq!(refused, !translated, "{omp}");
    }
}

#[test]
fn omp_routines_match_the_bytewise_scan() {
    let texts = [
        "",
        "omp_",
        "x = omp_get_num_devices() + omp_get_num_devices()",
        "!$omp target teams distribute parallel do map(tofrom: a(1:n))",
        "if (omp_is_initial_device()) then; n = xomp_f(1) + omp_omp_x + a_omp_y; end if",
        "call omp_set_default_device(d); call omp_target_free(p, omp_get_default_device())\r\n",
        "omp_omp_omp_ omp_1 Omp_x omp_é omp_x9_y, omp_",
        "comp_x %omp_y 'omp_in_string' omp__",
    ];
    for t in texts {
        assert_eq!(
            super::omp_routines(t),
            super::omp_routines_bytewise(t),
            "{t}"
        );
    }
    assert_eq!(
        super::omp_routines(texts[5]),
        [
            "omp_set_default_device",
            "omp_target_free",
            "omp_get_default_device"
        ]
    );
}

#[test]
fn any_case_search_matches_lowering() {
    let texts = [
        "",
        "c_loc(",
        "x = C_LOC(a)",
        "x = c_Loc (a)",
        "call f(c_loc(b), C_loc(c))\r\n",
        "c_lo",
        "cc_loc(x",
        "é C_LOC(é)",
    ];
    for t in texts {
        for needle in ["c_loc(", "c", ""] {
            assert_eq!(
                super::contains_any_case(t, needle.as_bytes()),
                t.to_ascii_lowercase().contains(needle),
                "{t:?} {needle:?}"
            );
        }
    }
}

/// Calls in nested, disjoint and kept constructs: `in_region` asserts its indexes against
/// the walks of every site and every edit (`regions.rs`, in tests).
#[test]
fn calls_in_many_constructs_match_the_walks() {
    let mut src = String::from(
        "subroutine s(n, a)\n  use openacc\n  integer :: n, i, j\n  real :: a(n)\n  logical :: l\n",
    );
    for k in 0..6 {
        src.push_str(&format!("  !$acc parallel copy(a)\n  l = acc_on_device(acc_device_host)\n  !$acc loop gang\n  do i = 1, n\n    l = acc_on_device(acc_device_nvidia)\n    !$acc loop vector\n    do j = 1, n\n      a(j) = {k}\n    end do\n    l = acc_on_device(acc_device_host)\n  end do\n  l = acc_on_device(acc_device_host)\n  !$acc end parallel\n"));
        src.push_str("  !$acc kernels\n  if (acc_on_device(acc_device_host)) a(1) = 0\n  !$acc end kernels\n");
        src.push_str("  !$acc loop\n  do i = 1, n\n    a(i) = acc_get_num_devices(acc_device_nvidia)\n  end do\n");
        src.push_str("  !$acc serial\n  !$acc loop seq\n  do i = 1, n\n    if (acc_on_device(acc_device_host)) a(i) = 1\n  end do\n  !$acc end serial\n");
    }
    src.push_str("end subroutine s\n");
    let o = crate::engine::migrate_source(
        &src,
        Some(Path::new("x.f90")),
        &Options::default(),
        &crate::semantic::SemanticConfig::syntactic(),
    );
    assert!(o.text.contains("omp_is_initial_device()"), "{}", o.text);
    assert!(
        o.diagnostics
            .iter()
            .any(|d| d.rule.as_str() == id::RUNTIME_IN_REGION.as_str()),
        "{:?}",
        o.diagnostics
    );
}

#[test]
fn calls_in_omp_target_regions_are_judged_as_in_compute_constructs() {
    // A helper is host code; `teams` (directly) and `loop` forbid runtime calls; a
    // `target` region and a `parallel do` allow acc_on_device with a constant type.
    let src = "program p\n  use openacc\n  integer :: h, i, a(10)\n  !$omp target teams map(from: h)\n  if (acc_on_device(acc_device_host)) h = 2\n  !$omp end target teams\n  !$omp target map(from: h)\n  if (acc_on_device(acc_device_host)) h = 2\n  if (acc_on_device(h)) h = 1\n  !$omp end target\n  !$omp target teams loop map(from: a)\n  do i = 1, 10\n    if (acc_on_device(acc_device_host)) a(i) = 2\n  end do\n  !$omp target teams distribute parallel do map(from: a)\n  do i = 1, 10\n    if (acc_on_device(acc_device_host)) a(i) = 2\n  end do\nend\n";
    let (out, diags) = fixed("x.f90", src);
    for line in [5, 9, 13] {
        assert!(
            has(&diags, line, id::RUNTIME_IN_REGION),
            "{line}: {diags:?}"
        );
    }
    assert_eq!(out.matches("acc_on_device(").count(), 3, "{out}");
    assert_eq!(out.matches("omp_is_initial_device()").count(), 2, "{out}");
    assert!(out.contains("use openacc"), "{out}");
}
