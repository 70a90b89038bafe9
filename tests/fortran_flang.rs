//! flang, the optional semantic mode of Fortran, run through its command: a flang that runs
//! past its time limit or prints past its output bound costs the file flang's facts, never
//! the run, and the run ends at the limit even where the command is a wrapper script whose
//! flang is its child (no `exec`), which would hold the output pipe open past a kill of the
//! wrapper alone.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A program using a module of another file (flang runs only for such a file).
const PROGRAM: &str = "program p\n  use elsewhere\n  implicit none\n  integer :: i\n  real :: a(10)\n  !$acc parallel loop copy(a)\n  do i = 1, 10\n    a(i) = f(i)\n  end do\nend program\n";

/// `acc2omp migrate --diff p.f90` with `ACC2OMP_FLANG` set to a script whose `-fc1` run does
/// `body`; how long it took.
fn with_flang(body: &str) -> (Output, Duration) {
    let d = tempfile::tempdir().unwrap();
    let wrapper = d.path().join("flang-wrapper");
    fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'flang version 22.1.8'; exit 0; fi\n{body}\n"
        ),
    )
    .unwrap();
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(d.path().join("p.f90"), PROGRAM).unwrap();
    let start = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_acc2omp"))
        .current_dir(d.path())
        .env("ACC2OMP_FLANG", &wrapper)
        .env("ACC2OMP_FLANG_TIMEOUT", "2")
        .args(["migrate", "--no-cache", "--diff", "p.f90"])
        .output()
        .unwrap();
    (o, start.elapsed())
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The same run without flang.
fn without_flang() -> Output {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("p.f90"), PROGRAM).unwrap();
    Command::new(env!("CARGO_BIN_EXE_acc2omp"))
        .current_dir(d.path())
        .args(["migrate", "--no-cache", "--no-clang", "--diff", "p.f90"])
        .output()
        .unwrap()
}

/// `o` is the run without flang (a diff of the same changes), but for what the summary says of
/// the mode.
fn same_as_without_flang(o: &Output) {
    let plain = without_flang();
    assert_eq!(o.status.code(), plain.status.code(), "{}", stderr(o));
    assert_eq!(o.stdout, plain.stdout);
    assert!(!o.stdout.is_empty());
}

#[test]
fn a_wrapper_whose_flang_hangs_ends_at_the_timeout() {
    // The wrapper's child sleeps (the wrapper waits for it, then prints).
    let (o, took) = with_flang("sleep 60\necho done");
    assert!(took < Duration::from_secs(30), "the run took {took:?}");
    assert!(stderr(&o).contains("flang: ran past 2 s"), "{}", stderr(&o));
    same_as_without_flang(&o);
}

#[test]
fn a_flang_that_prints_past_the_bound_costs_its_facts() {
    let (o, took) = with_flang("exec yes");
    assert!(took < Duration::from_secs(30), "the run took {took:?}");
    assert!(
        stderr(&o).contains("flang: printed more than"),
        "{}",
        stderr(&o)
    );
    same_as_without_flang(&o);
}

#[test]
fn a_flang_that_fails_costs_its_facts() {
    let (o, _) = with_flang("echo 'error: nothing' >&2\nexit 1");
    assert!(
        stderr(&o).contains("flang: flang reported errors in the file"),
        "{}",
        stderr(&o)
    );
    same_as_without_flang(&o);
}

mod common;

/// A module of another file (a derived type with an allocatable, a pointer and a
/// derived-type component holding an allocatable, its parent type in a second module) and
/// a program mapping a variable of it whole and by components (the manual deep copy).
const FIELDS: &str = "module base_m\n  implicit none\n  type base_t\n    real, allocatable :: b(:)\n  end type base_t\nend module base_m\n\nmodule fields_m\n  use base_m\n  implicit none\n  type inner_t\n    real, allocatable :: c(:)\n  end type inner_t\n  type, extends(base_t) :: field_t\n    real, allocatable :: a(:)\n    type(inner_t) :: in\n  end type field_t\nend module fields_m\n";
const USER: &str = "program user\n  use fields_m, only: field_t\n  implicit none\n  type(field_t) :: v\n  integer :: i\n  allocate(v%a(8), v%b(8), v%in%c(8))\n  v%a = 1; v%b = 2; v%in%c = 3\n  !$acc enter data copyin(v)\n  !$acc enter data copyin(v%a, v%b, v%in%c)\n  !$acc parallel loop present(v%a, v%b, v%in%c)\n  do i = 1, 8\n    v%a(i) = v%a(i) + i\n    v%b(i) = v%b(i) * i\n    v%in%c(i) = v%in%c(i) - i\n  end do\n  !$acc exit data copyout(v%a, v%b, v%in%c)\n  !$acc exit data delete(v)\n  print '(8f6.1)', v%a, v%b, v%in%c\nend program user\n";

/// `acc2omp migrate --no-cache ARGS` in `dir`.
fn migrate(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_acc2omp"))
        .current_dir(dir)
        .args(["migrate", "--no-cache"])
        .args(args)
        .output()
        .unwrap()
}

/// The names in `dir`, sorted.
fn names(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A variable whose type is a module's of another file, not yet compiled: flang builds the
/// modules from the sources beside the file (in its scratch directory, nothing written in
/// the project), the manual deep copy is translated, and under flang-22 offloading the
/// translation prints what the OpenACC original prints under gfortran. Without flang the
/// maps are refused and the message says how to give the module.
#[test]
fn deep_copy_of_a_type_of_another_files_module() {
    if !common::fortran::tools("deep copy of a type of another file's module") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("fields.f90"), FIELDS).unwrap();
    fs::write(d.path().join("user.f90"), USER).unwrap();
    let before = names(d.path());
    let plain = migrate(d.path(), &["--no-clang", "--diff", "user.f90"]);
    let text = String::from_utf8_lossy(&plain.stderr);
    assert!(
        text.contains("'-I' directory") && plain.stdout.windows(5).any(|w| w == b"!$acc"),
        "{text}"
    );
    let o = migrate(d.path(), &["--write", "-v", "user.f90"]);
    let err = stderr(&o);
    assert!(err.contains("analyzed with flang"), "{err}");
    assert_eq!(
        names(d.path()),
        before,
        "the run writes no module in the project"
    );
    let out = fs::read_to_string(d.path().join("user.f90")).unwrap();
    assert!(!out.contains("!$acc"), "{out}\n{err}");
    assert!(out.contains("!$omp target enter data map(to: v)"), "{out}");
    assert!(
        out.contains("!$omp target exit data map(always, from: v%a, v%b, v%in%c)"),
        "{out}"
    );
    // The original under gfortran -fopenacc, the translation under flang-22 offloading.
    let run = |cmd: &mut Command| {
        let o = cmd.current_dir(d.path()).output().unwrap();
        assert!(o.status.success(), "{o:?}");
    };
    fs::write(d.path().join("orig.f90"), USER).unwrap();
    run(Command::new("gfortran").args(["-fopenacc", "fields.f90", "orig.f90", "-o", "acc"]));
    let off = common::fortran::offload().unwrap();
    run(Command::new("flang-22")
        .args([
            "-O1",
            "-fopenmp",
            "-fopenmp-version=51",
            "-fopenmp-targets=x86_64-pc-linux-gnu",
            "-Xoffload-linker",
        ])
        .arg(&off.stub)
        .arg(format!("-L{}", off.libs.display()))
        .args(["fields.f90", "user.f90", "-o", "omp", "-lm"]));
    let acc = Command::new(d.path().join("acc")).output().unwrap();
    let omp = Command::new(d.path().join("omp"))
        .env("OMP_TARGET_OFFLOAD", "MANDATORY")
        .env("LIBOMP_USE_HIDDEN_HELPER_TASK", "0")
        .env("LD_LIBRARY_PATH", &off.libs)
        .output()
        .unwrap();
    assert!(omp.status.success(), "{omp:?}");
    assert_eq!(
        String::from_utf8_lossy(&omp.stdout),
        String::from_utf8_lossy(&acc.stdout)
    );
    assert!(String::from_utf8_lossy(&acc.stdout).contains("9.0"));
}
