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
