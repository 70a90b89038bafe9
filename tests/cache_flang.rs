//! The result cache with flang's symbols: a Fortran file translated with flang's facts is
//! read back by the next run, and translated again (with the new answer) once anything flang
//! read for it changes: a `.mod` file, a module source compiled for it, a file it includes,
//! or a `.mod` created where none was (the module had been built from its source). Each
//! change here turns a translated Rule K case into a refusal, so a stale entry shows.
//!
//! These need flang-22: without it they skip loudly (and fail with
//! `ACC2OMP_REQUIRE_TOOLS=1`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The flang the tool uses, or None with a loud skip message.
fn flang(test: &str) -> Option<PathBuf> {
    match acc2omp::fortran::flang::find() {
        Ok(f) => Some(f.path.clone()),
        Err(why) => {
            assert!(
                std::env::var("ACC2OMP_REQUIRE_TOOLS").as_deref() != Ok("1"),
                "{test}: ACC2OMP_REQUIRE_TOOLS=1 but {why}"
            );
            eprintln!("\n!!! SKIPPED {test}: {why}; install flang-22\n");
            None
        }
    }
}

/// A module `name` with type `field_t`: an allocatable component only, or (`extra`) an
/// integer one too, which OpenACC copies back with the variable (Rule K refuses then).
fn module(name: &str, extra: bool) -> String {
    format!(
        "module {name}\n  implicit none\n  type field_t\n    real, allocatable :: v(:)\n{}  end type\nend module {name}\n",
        if extra { "    integer :: n\n" } else { "" }
    )
}

/// A program whose specification part starts with `uses`, mapping `f` of type `field_t`
/// whole and by component.
fn program(uses: &str) -> String {
    format!(
        "program main\n{uses}  implicit none\n  type(field_t) :: f\n  integer :: i\n  allocate(f%v(10))\n  !$acc enter data copyin(f)\n  !$acc enter data copyin(f%v)\n  !$acc parallel loop present(f)\n  do i = 1, 10\n    f%v(i) = real(i)\n  end do\n  !$acc exit data copyout(f%v)\n  !$acc exit data delete(f)\n  print *, f%v(1)\nend program main\n"
    )
}

/// Compile `src` with flang, writing its `.mod` files into `dir` (and nothing else there).
fn build_mod(flang: &Path, dir: &Path, src: &str) {
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("m.f90");
    fs::write(&file, src).unwrap();
    let o = Command::new(flang)
        .current_dir(scratch.path())
        .args(["-fc1", "-fsyntax-only", "-module-dir"])
        .arg(dir)
        .arg(&file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// What one `migrate main.f90 --diff -v` run in `dir` showed (its status, output and
/// messages but the cache's line), and (with `cache`) how many files it read back of how
/// many.
struct Run {
    shown: String,
    read_back: usize,
    total: usize,
}

fn run(dir: &Path, cache: Option<&Path>) -> Run {
    let mut c = Command::new(env!("CARGO_BIN_EXE_acc2omp"));
    c.current_dir(dir)
        .args(["migrate", "main.f90", "--diff", "-v"])
        .env_remove("ACC2OMP_NO_CACHE")
        .env_remove("ACC2OMP_CACHE_DIR");
    match cache {
        Some(d) => c.arg("--cache-dir").arg(d),
        None => c.arg("--no-cache"),
    };
    let o = c.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    let (mut read_back, mut total) = (0, 0);
    let mut rest = String::new();
    for l in err.lines() {
        if l.starts_with("acc2omp: cache ") {
            let n: Vec<usize> = l
                .split(": ")
                .last()
                .unwrap()
                .split(' ')
                .filter_map(|w| w.parse().ok())
                .collect();
            (read_back, total) = (n[0], n[1]);
        } else {
            rest.push_str(l);
            rest.push('\n');
        }
    }
    Run {
        shown: format!(
            "status {:?}\n--- stdout\n{}--- stderr\n{rest}",
            o.status.code(),
            String::from_utf8_lossy(&o.stdout)
        ),
        read_back,
        total,
    }
}

fn refused(r: &Run) -> bool {
    r.shown.contains("[not-translated]")
}

/// Two runs over the project `p` (the second reads the file back), then `change`, then a
/// run that must translate again and say what a run without the cache says, which is a
/// refusal where the first runs translated; then a run that reads the new answer back.
fn read_back_until(p: &Path, what: &str, change: impl FnOnce(&Path)) {
    let cache = tempfile::tempdir().unwrap();
    let cache = cache.path();
    let first = run(p, Some(cache));
    assert!(
        first.shown.contains("analyzed with flang"),
        "{what}: flang's facts were not used:\n{}",
        first.shown
    );
    assert!(!refused(&first), "{what}:\n{}", first.shown);
    assert_eq!((first.read_back, first.total), (0, 1), "{what}");
    let second = run(p, Some(cache));
    assert_eq!(
        (second.read_back, second.total),
        (1, 1),
        "{what}: flang's result was not read back"
    );
    assert_eq!(second.shown, first.shown, "{what}");

    change(p);
    let third = run(p, Some(cache));
    let fresh = run(p, None);
    assert!(refused(&fresh), "{what}: the change must change the answer");
    assert_eq!(
        (third.read_back, third.total),
        (0, 1),
        "{what}: a stale entry was read back"
    );
    assert_eq!(third.shown, fresh.shown, "{what}");
    let fourth = run(p, Some(cache));
    assert_eq!((fourth.read_back, fourth.total), (1, 1), "{what}");
    assert_eq!(fourth.shown, fresh.shown, "{what}");
}

#[test]
fn a_changed_mod_file_is_seen() {
    let Some(flang) = flang("a_changed_mod_file_is_seen") else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    build_mod(&flang, p, &module("fields", false));
    fs::write(p.join("main.f90"), program("  use fields\n")).unwrap();
    read_back_until(p, "fields.mod", |p| {
        build_mod(&flang, p, &module("fields", true))
    });
}

#[test]
fn a_changed_module_source_is_seen() {
    let Some(_) = flang("a_changed_module_source_is_seen") else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    fs::write(p.join("fields.f90"), module("fields", false)).unwrap();
    fs::write(p.join("main.f90"), program("  use fields\n")).unwrap();
    read_back_until(p, "fields.f90", |p| {
        fs::write(p.join("fields.f90"), module("fields", true)).unwrap()
    });
}

/// The module is another module's source's use (built from source in turn).
#[test]
fn a_changed_source_of_a_module_a_module_uses_is_seen() {
    let Some(_) = flang("a_changed_source_of_a_module_a_module_uses_is_seen") else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    fs::write(p.join("fields.f90"), module("fields", false)).unwrap();
    fs::write(
        p.join("outer.f90"),
        "module outer\n  use fields\n  implicit none\n  integer :: k\nend module outer\n",
    )
    .unwrap();
    fs::write(p.join("main.f90"), program("  use outer\n")).unwrap();
    read_back_until(p, "fields.f90 under outer.f90", |p| {
        fs::write(p.join("fields.f90"), module("fields", true)).unwrap()
    });
}

#[test]
fn a_changed_include_file_is_seen() {
    let Some(flang) = flang("a_changed_include_file_is_seen") else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    // `fa`'s type is translated, `fb`'s refused; the include says which the program uses.
    let mods = format!(
        "{}{}module other\n  integer :: k\nend module other\n",
        module("fa", false),
        module("fb", true)
    );
    build_mod(&flang, p, &mods);
    fs::write(p.join("uses.inc"), "  use fa\n").unwrap();
    fs::write(
        p.join("main.f90"),
        program("  use other\n  include 'uses.inc'\n"),
    )
    .unwrap();
    read_back_until(p, "uses.inc", |p| {
        fs::write(p.join("uses.inc"), "  use fb\n").unwrap()
    });
}

#[test]
fn a_mod_file_created_where_a_module_was_built_from_source_is_seen() {
    let Some(flang) = flang("a_mod_file_created_where_a_module_was_built_from_source_is_seen")
    else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    fs::write(p.join("fields.f90"), module("fields", false)).unwrap();
    fs::write(p.join("main.f90"), program("  use fields\n")).unwrap();
    // flang reads the directory's `.mod` first (one compiled from another version).
    read_back_until(p, "fields.mod created", |p| {
        build_mod(&flang, p, &module("fields", true))
    });
}
