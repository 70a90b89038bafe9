//! Scaling on pathological single files (`cargo bench --bench large_files`): many directives,
//! a clause with a huge list, deep parentheses, deep unbraced nesting, and the common shapes
//! that once hid quadratic passes (kernels loops, gang/worker/vector nests, routines, runtime
//! calls in regions, all the fixtures in one file, a declaration of many declarators, deep
//! nests of loop, data and compute directives, stacked data directives, loops nested
//! deeper than the dependence test reads, one directive of many clauses or of long lists of
//! declared variables, one Fortran directive of many continuation lines). Each shape is
//! timed at two sizes, 10x apart, in process and in syntactic mode: linear code takes about
//! 10x as long for the larger one (the ratio is printed). The CLI is also timed on the larger files with `--no-clang`,
//! with `--no-clang --diff` (the diff included) and with libclang, each with its CPU time
//! (user + system, less noisy than wall time on a shared machine), its peak resident memory and
//! that memory per byte of input. Fortran files of many directives (free and fixed form) are
//! timed the same way. Figures only: no time is asserted (shared, noisy machines).

use std::process::{Command, Stdio};
use std::time::Instant;

use acc2omp::semantic::SemanticConfig;
use acc2omp::{Options, migrate_bytes};

fn directives(n: usize) -> String {
    let mut s = String::from("void f(int n, double *a) {\n");
    for _ in 0..n {
        s.push_str(
            "#pragma acc parallel loop copy(a[0:n])\nfor (int i = 0; i < n; i++) a[i] += 1;\n",
        );
    }
    s + "}\n"
}

/// The same loops in functions of 100 directives each (scopes, declarations per function).
fn directives_in_functions(n: usize) -> String {
    let mut s = String::new();
    for k in 0..n.div_ceil(100) {
        s.push_str(&format!("void f{k}(int n, double *a) {{\n"));
        for _ in 0..100.min(n - k * 100) {
            s.push_str(
                "#pragma acc parallel loop copy(a[0:n])\nfor (int i = 0; i < n; i++) a[i] += 1;\n",
            );
        }
        s.push_str("}\n");
    }
    s
}

/// Free-form Fortran: `n` combined directives on `do` loops in one subroutine.
fn fortran_free(n: usize) -> String {
    let mut s = String::from("subroutine f(n, a)\n  integer :: n, i\n  real(8) :: a(n)\n");
    for _ in 0..n {
        s.push_str(
            "  !$acc parallel loop copy(a(1:n))\n  do i = 1, n\n    a(i) = a(i) + 1\n  end do\n",
        );
    }
    s + "end subroutine f\n"
}

/// The same in fixed form (directives in column 1, statements from column 7).
fn fortran_fixed(n: usize) -> String {
    let mut s = String::from("      subroutine f(n, a)\n      integer n, i\n      real*8 a(n)\n");
    for _ in 0..n {
        s.push_str(
            "!$acc parallel loop copy(a(1:n))\n      do i = 1, n\n        a(i) = a(i) + 1\n      end do\n",
        );
    }
    s + "      end subroutine f\n"
}

/// Every C input of `fixtures/translate` concatenated, `n` times: all shapes at once.
fn fixtures_mixed(n: usize) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/translate");
    let mut cases: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path().join("input.c"))
        .filter(|p| p.exists())
        .collect();
    cases.sort();
    let one: String = cases
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    one.repeat(n)
}

fn list(n: usize) -> String {
    let items: Vec<String> = (0..n).map(|k| format!("a{k}")).collect();
    format!(
        "void f(void) {{\n#pragma acc enter data copyin({})\n}}\n",
        items.join(", ")
    )
}

/// One compute directive whose lists name `n` declared arrays and `n` declared scalars
/// (each item's type is looked up: `list` names undeclared ones).
fn declared_list(n: usize) -> String {
    let decls: String = (0..n)
        .map(|k| format!("double a{k}[10], s{k};\n"))
        .collect();
    let arrays: Vec<String> = (0..n).map(|k| format!("a{k}")).collect();
    let scalars: Vec<String> = (0..n).map(|k| format!("s{k}")).collect();
    format!(
        "void f(int n) {{\n{decls}#pragma acc parallel loop copyin({}) private({})\nfor (int i = 0; i < n; i++) ;\n}}\n",
        arrays.join(", "),
        scalars.join(", ")
    )
}

fn parens(n: usize) -> String {
    let e = format!("{}1{}", "(".repeat(n), ")".repeat(n));
    format!(
        "void f(int n, double *a) {{\n#pragma acc parallel loop\nfor (int i = 0; i < n; i++) a[i] += {e};\n}}\n"
    )
}

fn nested(n: usize) -> String {
    let mut s = String::from("void f(int n, double *a) {\n#pragma acc parallel\n");
    for k in 0..n {
        s.push_str(&format!("if (n > {k})\n"));
    }
    s + "a[0] = 1;\n}\n"
}

/// A loop nest with a directive on every level (the statement of each is asked for).
fn loop_nest(n: usize) -> String {
    let mut s = String::from("void f(int n, double *a) {\n#pragma acc parallel loop\n");
    for k in 0..n {
        if k > 0 {
            s.push_str("#pragma acc loop seq\n");
        }
        s.push_str(&format!("for (int i{k} = 0; i{k} < n; i{k}++)\n"));
    }
    s + "a[0] += 1;\n}\n"
}

/// `kernels` over plain loops that carry a dependence: each gets the dependence test and a
/// `kernels-sequential` warning with line numbers.
fn kernels_loops(n: usize) -> String {
    let mut s = String::from("void f(int n, double *a, double *b) {\n");
    for _ in 0..n {
        s.push_str("#pragma acc kernels\nfor (int i = 1; i < n; i++) a[i] = a[i-1] + b[i];\n");
    }
    s + "}\n"
}

/// Gang/worker/vector nests with a reduction: loop levels, data sharing and launch hints.
fn gwv_nests(n: usize) -> String {
    let mut s = String::from("void f(int n, double *a) {\n");
    for _ in 0..n {
        s.push_str(
            "#pragma acc parallel loop gang num_workers(4) vector_length(32)\nfor (int i = 0; i < n; i++)\n#pragma acc loop worker\nfor (int j = 0; j < n; j++)\n#pragma acc loop vector reduction(+:a[0])\nfor (int l = 0; l < n; l++) a[i*n+j] += l;\n",
        );
    }
    s + "}\n"
}

/// Routine directives at file scope, each before its function (scope and call checks).
fn routines(n: usize) -> String {
    let mut s = String::new();
    for k in 0..n {
        s.push_str(&format!(
            "#pragma acc routine seq\nstatic double g{k}(double x) {{ return x * 2; }}\n"
        ));
    }
    s + "void f(int n, double *a) {\n#pragma acc parallel loop\nfor (int i = 0; i < n; i++) a[i] = g0(a[i]);\n}\n"
}

/// Runtime calls inside and between compute regions (region kinds, handled names).
fn runtime_calls(n: usize) -> String {
    let mut s = String::from("#include <openacc.h>\nvoid f(int n, int *a) {\n");
    for _ in 0..n {
        s.push_str("#pragma acc parallel copy(a[0:n])\n{ a[0] = acc_on_device(acc_device_not_host); }\nacc_set_device_num(0, acc_device_default);\n");
    }
    s + "}\n"
}

/// One declaration of `n` declarators before a region (each declarator's scope and type).
fn declarators(n: usize) -> String {
    let names: Vec<String> = (0..n).map(|k| format!("a{k}")).collect();
    format!(
        "void f(int n) {{\nfloat {};\n#pragma acc parallel copy(a0)\n{{ }}\n}}\n",
        names.join(", ")
    )
}

/// `acc loop` directives nested in a `parallel` region, one per level (each loop's facts,
/// levels and data sharing look at the loops around and inside it).
fn loop_directive_nest(n: usize) -> String {
    let mut s = String::from("void f(int n, float *a) {\n#pragma acc parallel copy(a[0:n])\n{\n");
    for k in 0..n {
        s.push_str(&format!(
            "#pragma acc loop\nfor (int i{k} = 0; i{k} < n; i{k}++)\n"
        ));
    }
    s + "a[0] += 1;\n}\n}\n"
}

/// Structured `data` constructs nested in braces (the queues each region waits for).
fn data_nest(n: usize) -> String {
    let open = "#pragma acc data copy(a[0:n])\n{\n".repeat(n);
    format!(
        "void f(int n, float *a) {{\n{open}a[0] = 1;\n{}}}\n",
        "}\n".repeat(n)
    )
}

/// `data` directives stacked on one statement (each looks through those after it).
fn stacked_data(n: usize) -> String {
    let stack = "#pragma acc data copy(a[0:n])\n".repeat(n);
    format!("void f(int n, float *a) {{\n{stack}{{ a[0] = 1; }}\n}}\n")
}

/// `parallel` constructs nested in one another: each is an error, and so is every one
/// around it.
fn compute_nest(n: usize) -> String {
    let open = "#pragma acc parallel copy(a[0:n])\n{\n".repeat(n);
    format!(
        "void f(int n, float *a) {{\n{open}a[0] = 1;\n{}}}\n",
        "}\n".repeat(n)
    )
}

/// Braced loops nested in a `kernels` region, deeper than the dependence test reads.
fn kernels_deep(n: usize) -> String {
    let mut s = String::from("void f(int n, float *a) {\n#pragma acc kernels copy(a[0:n])\n{\n");
    for k in 0..n {
        s.push_str(&format!("for (int i{k} = 0; i{k} < n; i{k}++) {{\n"));
    }
    s + "a[0] += 1;\n" + &"}\n".repeat(n) + "}\n}\n"
}

/// One directive of `n` data clauses, one array each (every clause's item is looked up,
/// checked and printed: the per-directive work must stay linear in its clauses).
fn clauses(n: usize) -> String {
    let arrays: String = (0..n).map(|k| format!("double a{k}[10];\n")).collect();
    let copies: String = (0..n).map(|k| format!(" copy(a{k})")).collect();
    format!(
        "void f(int n) {{\n{arrays}#pragma acc parallel loop{copies}\nfor (int i = 0; i < n; i++) ;\n}}\n"
    )
}

/// `n` scalars reduced by a gang loop and by the vector loop nested in it, in a `parallel`
/// region (each variable's writes ask about every site around them: the work must stay
/// linear in the reduced variables).
fn nested_reductions(n: usize) -> String {
    let decls: String = (0..n).map(|k| format!("double s{k} = 0;\n")).collect();
    let list: Vec<String> = (0..n).map(|k| format!("s{k}")).collect();
    let list = list.join(", ");
    let body: String = (0..n).map(|k| format!("    s{k} += 1;\n")).collect();
    format!(
        "void f(int n) {{\n{decls}#pragma acc parallel\n{{\n#pragma acc loop gang reduction(+:{list})\nfor (int i = 0; i < n; i++) {{\n#pragma acc loop vector reduction(+:{list})\n  for (int j = 0; j < n; j++) {{\n{body}  }}\n}}\n}}\n}}\n"
    )
}

/// A gang loop reducing `n` scalars by `max`, each updated by an `if` in an inner vector
/// loop without a reduction of its own (each name's updates are looked up in the loop).
fn gang_reductions(n: usize) -> String {
    let decls: String = (0..n).map(|k| format!("double s{k} = 0;\n")).collect();
    let list: Vec<String> = (0..n).map(|k| format!("s{k}")).collect();
    let list = list.join(", ");
    let body: String = (0..n)
        .map(|k| format!("    if (a[j] > s{k}) s{k} = a[j];\n"))
        .collect();
    format!(
        "void f(int n, double *a) {{\n{decls}#pragma acc parallel loop gang reduction(max:{list})\nfor (int i = 0; i < n; i++) {{\n#pragma acc loop vector\n  for (int j = 0; j < n; j++) {{\n{body}  }}\n}}\n}}\n"
    )
}

/// Two gang loops of one `parallel` construct, each private to `n` scalars it writes (each
/// scalar asked whether a gang carries it from the first loop to the second).
fn gang_privates(n: usize) -> String {
    let decls: String = (0..n).map(|k| format!("double s{k} = 0;\n")).collect();
    let list: Vec<String> = (0..n).map(|k| format!("s{k}")).collect();
    let list = list.join(", ");
    let loops: String = (0..2)
        .map(|l| {
            let body: String = (0..n)
                .map(|k| format!("    s{k} = a[i] + {l};\n    a[i] = s{k};\n"))
                .collect();
            format!(
                "#pragma acc loop gang private({list})\nfor (int i = 0; i < n; i++) {{\n{body}}}\n"
            )
        })
        .collect();
    format!("void f(int n, double *a) {{\n{decls}#pragma acc parallel\n{{\n{loops}}}\n}}\n")
}

/// A gang loop with an inner `worker` loop writing `n` scalars, in a construct whose data
/// clause lists `n` arrays (each scalar asked whether a clause or the region shares it).
fn worker_nests(n: usize) -> String {
    let decls: String = (0..n)
        .map(|k| format!("double c{k}[4]; double t{k};\n"))
        .collect();
    let list: Vec<String> = (0..n).map(|k| format!("c{k}[0:4]")).collect();
    let list = list.join(", ");
    let body: String = (0..n)
        .map(|k| format!("  t{k} = a[i] + c{k}[0];\n  a[i] = t{k};\n"))
        .collect();
    format!(
        "void f(int n, double *a) {{\n{decls}#pragma acc parallel copyin({list})\n{{\n#pragma acc loop gang\nfor (int i = 0; i < n; i++) {{\n{body}#pragma acc loop worker\n  for (int j = 0; j < n; j++) a[j] += 1;\n}}\n}}\n}}\n"
    )
}

/// One Fortran directive continued over `n` lines, a clause on each (joined, parsed,
/// looked up and rewritten into continuation lines again).
fn fortran_continuations(n: usize) -> String {
    let arrays: String = (0..n).map(|k| format!("  real :: a{k}(n)\n")).collect();
    let lines: String = (0..n).map(|k| format!("  !$acc& copy(a{k}) &\n")).collect();
    format!(
        "subroutine f(n)\n  integer :: n, i\n{arrays}  !$acc parallel loop &\n{lines}  !$acc& private(n)\n  do i = 1, n\n  end do\nend subroutine f\n"
    )
}

/// `n` modules of one array each, all used by one routine whose kernel writes every array
/// (each name looked up through the used modules).
fn fortran_modules(n: usize) -> String {
    let modules: String = (0..n)
        .map(|k| format!("module m{k}\n  real :: a{k}(100)\nend module m{k}\n"))
        .collect();
    let uses: String = (0..n).map(|k| format!("  use m{k}\n")).collect();
    let body: String = (0..n).map(|k| format!("    a{k}(i) = 1\n")).collect();
    format!(
        "{modules}subroutine f(n)\n{uses}  integer :: n, i\n  !$acc parallel loop\n  do i = 1, n\n{body}  end do\nend subroutine f\n"
    )
}

/// `n` subroutines, each a kernel naming an OPTIONAL argument (each region asked whether it
/// can be copied into a version by the argument's presence).
fn fortran_optionals(n: usize) -> String {
    (0..n)
        .map(|k| {
            format!(
                "subroutine f{k}(n, a, b)\n  integer :: n, i\n  real :: a(n)\n  real, optional :: b(n)\n  !$acc parallel loop copy(a) copyin(b)\n  do i = 1, n\n    a(i) = a(i) + b(i)\n  end do\nend subroutine f{k}\n"
            )
        })
        .collect()
}

/// `n` scalars assigned in one kernel (each asked whether it is assigned before it is read).
fn fortran_scalars(n: usize) -> String {
    let decls: String = (0..n).map(|k| format!("  real :: a{k}\n")).collect();
    let body: String = (0..n).map(|k| format!("    a{k} = i\n")).collect();
    format!(
        "subroutine f(n)\n  integer :: n, i\n{decls}  !$acc parallel loop\n  do i = 1, n\n{body}  end do\nend subroutine f\n"
    )
}

/// `n` `declare` directives in one subroutine (each asked where its `target enter data`
/// goes and what the unit's exits are).
fn fortran_declares(n: usize) -> String {
    let decls: String = (0..n)
        .map(|k| format!("  real :: a{k}(10)\n  !$acc declare create(a{k})\n"))
        .collect();
    format!(
        "subroutine s(m)\n  integer :: m\n{decls}  integer :: j\n  j = m\n  if (j > 1) then\n    return\n  end if\n  a0 = 1\nend subroutine s\n"
    )
}

/// `n` labelled `do` loops in one subroutine, each a sequential loop with a private scalar
/// (each asked whether an enclosing loop ends on its label before its `block` is written).
fn fortran_labelled(n: usize) -> String {
    let loops: String = (1..=n)
        .map(|l| {
            format!(
                "  !$acc parallel copy(a)\n  !$acc loop seq private(t)\n  do {l} i = 1, n\n    t = a(i)\n    a(i) = t + 1\n{l} continue\n  !$acc end parallel\n"
            )
        })
        .collect();
    format!("subroutine s(n, a)\n  integer :: n, i\n  real :: a(n), t\n{loops}end subroutine s\n")
}

/// `n` compute constructs each calling the runtime API (each call asked which construct
/// holds it and what that construct becomes).
fn fortran_runtime_calls(n: usize) -> String {
    let body: String = (0..n)
        .map(|k| {
            format!(
                "  !$acc parallel copy(a)\n  if (acc_on_device(acc_device_host)) a(1) = {k}\n  !$acc end parallel\n  i = acc_get_num_devices(acc_device_nvidia)\n"
            )
        })
        .collect();
    format!(
        "subroutine s(n, a)\n  use openacc\n  integer :: n, i\n  real :: a(n)\n{body}end subroutine s\n"
    )
}

/// CPU seconds (user + system, all threads) this process has used.
fn cpu_now() -> f64 {
    // SAFETY: rusage is plain data that getrusage fills in.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    secs(u.ru_utime) + secs(u.ru_stime)
}

fn secs(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 / 1e6
}

/// Wall and CPU seconds to translate `text` in process, as a file named `name` (its
/// language).
fn seconds(text: &str, name: &str) -> (f64, f64) {
    let sem = SemanticConfig::syntactic();
    let path = std::path::Path::new(name);
    let (t, c) = (Instant::now(), cpu_now());
    let out = migrate_bytes(text.as_bytes(), Some(path), &Options::default(), &sem);
    let s = (t.elapsed().as_secs_f64(), cpu_now() - c);
    assert!(out.is_ok());
    s
}

/// What a run of the command line cost: wall and CPU seconds, peak resident bytes, exit code.
struct Cost {
    wall: f64,
    cpu: f64,
    peak: u64,
    code: Option<i32>,
}

/// Run `acc2omp migrate ARGS FILE` (no result cache: every run translates) and measure it.
/// The child's peak counts this process's own at the time it starts (Linux records it when
/// the child's program replaces the copy of this one): run while this process is small.
fn cli(args: &[&str], file: &std::path::Path) -> Cost {
    let t = Instant::now();
    #[expect(
        clippy::zombie_processes,
        reason = "wait4 reaps it, for its resource usage"
    )]
    let child = Command::new(env!("CARGO_BIN_EXE_acc2omp"))
        .arg("migrate")
        .args(args)
        .args(["-q", "--no-cache"])
        .arg(file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills in; the child is ours and not yet waited for.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4");
    Cost {
        wall: t.elapsed().as_secs_f64(),
        cpu: secs(usage.ru_utime) + secs(usage.ru_stime),
        // Linux reports kilobytes.
        peak: usage.ru_maxrss as u64 * 1024,
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
    }
}

fn main() {
    type Shape = (&'static str, fn(usize) -> String, usize, &'static str);
    let shapes: [Shape; 32] = [
        ("directives", directives, 10_000, "c"),
        ("in functions", directives_in_functions, 10_000, "c"),
        ("fixtures mixed", fixtures_mixed, 4, "c"),
        ("kernels loops", kernels_loops, 2_000, "c"),
        ("gwv nests", gwv_nests, 2_000, "c"),
        ("routines", routines, 2_000, "c"),
        ("runtime calls", runtime_calls, 2_000, "c"),
        ("list items", list, 70_000, "c"),
        ("declared list items", declared_list, 2_000, "c"),
        ("nested parentheses", parens, 10_000, "c"),
        ("unbraced nesting", nested, 2_000, "c"),
        ("directive per level", loop_nest, 500, "c"),
        ("declarators", declarators, 8_000, "c"),
        ("loop directive nest", loop_directive_nest, 1_000, "c"),
        ("data nest", data_nest, 2_000, "c"),
        ("stacked data", stacked_data, 2_000, "c"),
        ("compute nest", compute_nest, 2_000, "c"),
        ("kernels deep loops", kernels_deep, 1_000, "c"),
        ("fortran free form", fortran_free, 10_000, "f90"),
        ("fortran fixed form", fortran_fixed, 10_000, "f"),
        ("clauses", clauses, 2_000, "c"),
        ("fortran continued", fortran_continuations, 2_000, "f90"),
        ("nested reductions", nested_reductions, 2_000, "c"),
        ("gang reductions", gang_reductions, 2_000, "c"),
        ("gang privates", gang_privates, 2_000, "c"),
        ("worker nests", worker_nests, 2_000, "c"),
        ("fortran modules", fortran_modules, 1_000, "f90"),
        ("fortran scalars", fortran_scalars, 1_000, "f90"),
        ("fortran optionals", fortran_optionals, 1_000, "f90"),
        ("fortran declares", fortran_declares, 1_000, "f90"),
        ("fortran labelled", fortran_labelled, 1_000, "f90"),
        ("fortran region calls", fortran_runtime_calls, 1_000, "f90"),
    ];
    let only = std::env::var("ACC2OMP_BENCH_SHAPES").ok();
    let shapes: Vec<Shape> = shapes
        .into_iter()
        .filter(|s| {
            only.as_deref()
                .is_none_or(|o| o.split(',').any(|w| w == s.0))
        })
        .collect();
    let file_name = |(name, _, _, ext): &Shape| format!("{}.{ext}", name.replace(' ', "_"));
    // The command line first, while this process is small (see `cli`).
    let dir = std::env::temp_dir().join(format!("acc2omp-bench-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    for shape @ (name, make, small, _) in &shapes {
        let b = make(small * 10);
        let file = dir.join(file_name(shape));
        std::fs::write(&file, &b).unwrap();
        println!(
            "{name:>20}: {:>8} directives/items, {} bytes",
            small * 10,
            b.len()
        );
        for extra in [&["--no-clang"][..], &["--no-clang", "--diff"][..], &[][..]] {
            let c = cli(extra, &file);
            println!(
                "{:>20}  CLI {:<18} {:7.3} s, CPU {:7.3} s, peak {:6.0} MB ({:4.1} B/byte) (exit {:?})",
                "",
                if extra.is_empty() {
                    "libclang".to_string()
                } else {
                    extra.join(" ")
                },
                c.wall,
                c.cpu,
                c.peak as f64 / 1e6,
                c.peak as f64 / b.len() as f64,
                c.code
            );
        }
        let _ = std::fs::remove_file(&file);
    }
    let _ = std::fs::remove_dir_all(&dir);
    // In process, syntactic facts: the two sizes' ratio.
    let mut superlinear = Vec::new();
    for shape @ (name, make, small, _) in &shapes {
        let (a, b) = (make(*small), make(small * 10));
        let (ta, tb) = (
            seconds(&a, &file_name(shape)),
            seconds(&b, &file_name(shape)),
        );
        println!(
            "{name:>20}: {small:>8} in {:7.3} s ({:.3} s CPU), {:>8} in {:7.3} s ({:.3} s CPU) (x{:.1}, CPU x{:.1})",
            ta.0,
            ta.1,
            small * 10,
            tb.0,
            tb.1,
            tb.0 / ta.0.max(1e-9),
            tb.1 / ta.1.max(1e-9)
        );
        // Linear work is about x10; twice that on a run long enough to measure is a
        // quadratic pass (or the machine's load: run the shape again with
        // `ACC2OMP_BENCH_SHAPES`).
        let ratio = tb.1 / ta.1.max(1e-9);
        if ratio > 20.0 && tb.1 > 0.05 {
            superlinear.push(format!("{name} (CPU x{ratio:.1})"));
        }
    }
    if !superlinear.is_empty() {
        println!(
            "superlinear at 10x the size (CPU ratio over 20): {}",
            superlinear.join(", ")
        );
    }
}
