//! Scaling on pathological single files (`cargo bench --bench large_files`): many directives,
//! a clause with a huge list, deep parentheses, deep unbraced nesting. Each shape is timed at
//! two sizes, 10x apart, in process and in syntactic mode: linear code takes about 10x as long
//! for the larger one (the ratio is printed). The CLI is also timed on the largest files with
//! `--no-clang` and with libclang. Figures only: no time is asserted (shared, noisy machines).

use std::process::Command;
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

fn list(n: usize) -> String {
    let items: Vec<String> = (0..n).map(|k| format!("a{k}")).collect();
    format!(
        "void f(void) {{\n#pragma acc enter data copyin({})\n}}\n",
        items.join(", ")
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

fn seconds(text: &str) -> f64 {
    let sem = SemanticConfig::syntactic();
    let t = Instant::now();
    let out = migrate_bytes(text.as_bytes(), None, &Options::default(), &sem);
    let s = t.elapsed().as_secs_f64();
    assert!(out.is_ok());
    s
}

fn main() {
    type Shape = (&'static str, fn(usize) -> String, usize);
    let shapes: [Shape; 5] = [
        ("directives", directives, 10_000),
        ("list items", list, 70_000),
        ("nested parentheses", parens, 10_000),
        ("unbraced nesting", nested, 2_000),
        ("directive per level", loop_nest, 500),
    ];
    let dir = std::env::temp_dir().join(format!("acc2omp-bench-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    for (name, make, small) in shapes {
        let (a, b) = (make(small), make(small * 10));
        let (ta, tb) = (seconds(&a), seconds(&b));
        println!(
            "{name:>20}: {small:>8} in {ta:7.3} s, {:>8} in {tb:7.3} s (x{:.1})",
            small * 10,
            tb / ta.max(1e-9)
        );
        let file = dir.join(format!("{}.c", name.replace(' ', "_")));
        std::fs::write(&file, &b).unwrap();
        for extra in [&["--no-clang"][..], &[][..]] {
            let t = Instant::now();
            let o = Command::new(env!("CARGO_BIN_EXE_acc2omp"))
                .arg("migrate")
                .args(extra)
                .args(["-q", file.to_str().unwrap()])
                .output()
                .unwrap();
            println!(
                "{:>20}  CLI {:<12} {:7.3} s (exit {:?})",
                "",
                extra.first().copied().unwrap_or("libclang"),
                t.elapsed().as_secs_f64(),
                o.status.code()
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
