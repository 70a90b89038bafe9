//! The runtime translation beyond what `gcc -fopenacc` can check:
//! - programs in `fixtures/programs/unsupported_by_gcc/` that have a `.out` file use OpenACC 3
//!   routines libgomp 12 lacks; translated in every profile, they must print exactly that
//!   file (what OpenACC 3.3 guarantees) under `gcc -fopenmp` and Clang's host offloading,
//!   with one team and with 4 teams, and keep no OpenACC;
//! - every helper the translation may insert compiles without warnings as C and C++, with
//!   GCC and Clang (OpenMP 5.1 helpers with Clang only: GCC 12 lacks omp_get_mapped_ptr).

mod common;

use acc2omp::profile::{OmpVersion, Profile};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/programs/unsupported_by_gcc")
}

/// Stdout and exit code of `exe`; `teams`: with 4 teams and 3 threads.
fn run(exe: &Path, clang: bool, teams: bool) -> (String, Option<i32>) {
    let mut cmd = Command::new("timeout");
    cmd.arg("60").arg(exe).stdin(Stdio::null());
    if clang {
        cmd.env("LD_LIBRARY_PATH", "/usr/lib/llvm-19/lib")
            .env("LIBOMP_USE_HIDDEN_HELPER_TASK", "0");
    }
    if teams {
        cmd.env("OMP_NUM_TEAMS", "4")
            .env("KMP_TEAMS_THREAD_LIMIT", "8")
            .env("OMP_NUM_THREADS", "3");
    }
    let o = cmd.output().unwrap();
    common::offload_images::sweep();
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        o.status.code(),
    )
}

#[test]
fn openacc_3_programs_print_what_the_spec_guarantees() {
    if !common::compilers("runtime programs") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut progs: Vec<PathBuf> = fs::read_dir(root())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.with_extension("out").exists() && p.extension().is_some_and(|e| e != "out"))
        .collect();
    progs.sort();
    assert!(progs.len() >= 3, "{progs:?}");
    let mut failures = Vec::new();
    for prog in &progs {
        let name = prog.file_name().unwrap().to_string_lossy().into_owned();
        let expected = fs::read_to_string(prog.with_extension("out")).unwrap();
        let src = fs::read_to_string(prog).unwrap();
        for profile in Profile::ALL {
            let out = common::translate(&src, &name, profile);
            let toks = acc2omp::lex::lex(&out);
            let left: Vec<&str> = toks
                .iter()
                .map(|t| t.text(&out))
                .filter(|t| {
                    t.starts_with("acc_") || t.contains("pragma acc") || t.contains("openacc.h")
                })
                .collect();
            if !left.is_empty() {
                failures.push(format!(
                    "{name} [{}]: OpenACC left: {left:?}",
                    profile.name()
                ));
                continue;
            }
            let t = tmp.path().join(format!("{}.{}", profile.name(), name));
            fs::write(&t, &out).unwrap();
            for (compiler, flags, clang) in [
                (common::gcc_for(prog), common::GCC_OPENMP, false),
                (common::clang_for(prog), common::CLANG_OFFLOAD, true),
            ] {
                let exe = tmp
                    .path()
                    .join(format!("{}.{name}.{compiler}", profile.name()));
                if let Err(e) = common::compile(compiler, flags, &t, &exe, true) {
                    failures.push(format!("{name} [{}]: {compiler}: {e}", profile.name()));
                    continue;
                }
                for teams in [false, true] {
                    let got = run(&exe, clang, teams);
                    if got != (expected.clone(), Some(0)) {
                        failures.push(format!(
                            "{name} [{}] {compiler} (4 teams: {teams}): exit {:?}, output:\n{}",
                            profile.name(),
                            got.1,
                            got.0
                        ));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn helpers_compile_cleanly() {
    if !common::compilers("runtime helpers") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for (v, compilers) in [
        (
            OmpVersion::V50,
            &["gcc", "g++", "clang-19", "clang++-19"][..],
        ),
        (OmpVersion::V51, &["clang-19", "clang++-19"][..]),
    ] {
        let text = acc2omp::runtime::helper_catalog(v, "\n");
        let use_all = "int main(void) { return 0; }\n";
        for compiler in compilers {
            let ext = if compiler.contains("++") { "cpp" } else { "c" };
            let path = tmp.path().join(format!("helpers.{ext}"));
            fs::write(&path, format!("#include <omp.h>\n{text}{use_all}")).unwrap();
            let mut flags = vec!["-fopenmp", "-Wall", "-Wextra", "-Werror", "-c"];
            if compiler.starts_with("clang") {
                flags.push("-fopenmp-targets=x86_64-pc-linux-gnu");
            }
            let o = Command::new(compiler)
                .args(&flags)
                .arg(&path)
                .arg("-o")
                .arg(tmp.path().join("helpers.o"))
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{compiler} ({v:?}) rejects the helpers:\n{}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
}
