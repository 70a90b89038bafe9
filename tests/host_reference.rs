//! Programs in `fixtures/programs/unsupported_by_gcc/` that `gcc -fopenacc` rejects but whose
//! OpenACC meaning is the host program's (their header says "Reference: the program built
//! without OpenACC"), e.g. orphaned loops in functions no `routine` makes device code. The
//! reference is the program compiled without OpenACC; each translation must match it under
//! `gcc -fopenmp` and Clang's host offloading, with one team and with four.

mod common;

use acc2omp::profile::Profile;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const MARKER: &str = "Reference: the program built without OpenACC";

fn programs() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/programs/unsupported_by_gcc");
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| fs::read_to_string(p).is_ok_and(|s| s.contains(MARKER)))
        .collect();
    v.sort();
    v
}

fn run(exe: &Path, env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new("timeout");
    cmd.arg("60").arg(exe).stdin(Stdio::null());
    cmd.env("LD_LIBRARY_PATH", "/usr/lib/llvm-19/lib")
        .env("LIBOMP_USE_HIDDEN_HELPER_TASK", "0")
        .env("OMP_NUM_THREADS", "3");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    common::offload_images::sweep();
    format!(
        "{}exit {:?}",
        String::from_utf8_lossy(&o.stdout),
        o.status.code()
    )
}

fn translate(src: &str, name: &str, profile: Profile) -> String {
    let mut c = Command::new(env!("CARGO_BIN_EXE_acc2omp"))
        .args(["migrate", "-", "-q", "--stdin-filename", name])
        .args(["--profile", profile.name()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write;
    c.stdin.take().unwrap().write_all(src.as_bytes()).unwrap();
    String::from_utf8_lossy(&c.wait_with_output().unwrap().stdout).into_owned()
}

#[test]
fn host_only_programs_keep_their_host_results() {
    if !common::compilers("host reference programs") {
        return;
    }
    let progs = programs();
    assert!(
        !progs.is_empty(),
        "no program carries the marker '{MARKER}'"
    );
    let tmp = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for prog in &progs {
        let name = prog.file_name().unwrap().to_string_lossy().into_owned();
        let gcc = common::gcc_for(prog);
        let refexe = tmp.path().join("ref");
        common::compile(gcc, &["-O1"], prog, &refexe, true).unwrap();
        let reference = run(&refexe, &[]);
        let src = fs::read_to_string(prog).unwrap();
        for profile in Profile::ALL {
            let out = translate(&src, &name, profile);
            assert!(!out.contains("#pragma acc"), "{name}: OpenACC left:\n{out}");
            let t = tmp
                .path()
                .join(format!("t.{}", prog.extension().unwrap().to_string_lossy()));
            fs::write(&t, &out).unwrap();
            let builds = [
                (gcc, &[common::GCC_OPENMP, &["-O1"]].concat()[..], vec![]),
                (common::clang_for(prog), common::CLANG_OFFLOAD, vec![]),
                (
                    common::clang_for(prog),
                    common::CLANG_OFFLOAD,
                    vec![("OMP_NUM_TEAMS", "4"), ("KMP_TEAMS_THREAD_LIMIT", "8")],
                ),
            ];
            for (compiler, flags, env) in builds {
                let exe = tmp.path().join("t");
                if let Err(e) = common::compile(compiler, flags, &t, &exe, true) {
                    failures.push(format!("{name} [{}] {compiler}: {e}", profile.name()));
                    continue;
                }
                let got = run(&exe, &env);
                if got != reference {
                    failures.push(format!(
                        "{name} [{}] {compiler} {env:?}: got\n{got}\nexpected\n{reference}",
                        profile.name()
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
