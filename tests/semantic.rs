//! The semantic layer end to end: libclang's view of the directives agrees with our
//! scanner, and the command line reports and controls how files are analyzed.

mod common;

use acc2omp::lex::{lex, lex_range};
use acc2omp::scan::{Form, find_sites};
use acc2omp::semantic::clang_directive_spans;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn fixture_inputs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/translate");
    let mut out: Vec<PathBuf> = fs::read_dir(root)
        .unwrap()
        .filter_map(|e| {
            let dir = e.ok()?.path();
            fs::read_dir(&dir).ok()?.find_map(|f| {
                let p = f.ok()?.path();
                p.file_stem().is_some_and(|s| s == "input").then_some(p)
            })
        })
        .collect();
    out.sort();
    assert!(out.len() >= 10);
    out
}

/// Our directive spans: a `#pragma acc` line up to its last token (trailing comments and
/// blanks excluded), a `_Pragma("acc …")` from `_Pragma` to `)`.
fn our_spans(src: &str) -> Vec<std::ops::Range<usize>> {
    let toks = lex(src);
    find_sites(src, &toks)
        .into_iter()
        .filter(|s| !s.computed)
        // A wrapper macro called in another macro's body (`DO_PRAGMA(acc …)`) leaves no
        // pragma token where libclang could place it.
        // Nor does the use of an OpenACC wrapper (`ACC(…)`, two macros deep).
        .filter(|s| match &s.form {
            Form::Operator { in_macro: true } => src[s.span()].starts_with("_Pragma"),
            Form::Wrapped { .. } => false,
            _ => true,
        })
        .map(|s| match s.form {
            Form::Pragma => {
                let end = lex_range(src, s.text(), false)
                    .last()
                    .map_or(s.acc().end, |t| t.end());
                s.span().start..end
            }
            Form::Operator { .. } | Form::Wrapped { .. } => s.span(),
        })
        .collect()
}

#[test]
fn directive_spans_equal_libclang_tokens() {
    if !common::libclang("directive spans against libclang") {
        return;
    }
    let mut failures = Vec::new();
    for input in fixture_inputs() {
        let src = fs::read_to_string(&input).unwrap();
        let ours = our_spans(&src);
        match clang_directive_spans(&input, &src) {
            Ok(theirs) if theirs == ours => {}
            Ok(theirs) => {
                let show = |v: &[std::ops::Range<usize>]| {
                    v.iter()
                        .map(|r| format!("{:?} {:?}", r, &src[r.clone()]))
                        .collect::<Vec<_>>()
                        .join("\n    ")
                };
                failures.push(format!(
                    "{}:\n  ours:\n    {}\n  libclang:\n    {}",
                    input.display(),
                    show(&ours),
                    show(&theirs)
                ));
            }
            Err(e) => failures.push(format!("{}: {e}", input.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn run(dir: &Path, args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_acc2omp"));
    cmd.current_dir(dir).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    if let Some(text) = stdin {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    child.wait_with_output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const KERNELS: &str = "#include \"cfg.h\"\nreal_t f(int n, const real_t *a) {\n  real_t s = 0;\n  #pragma acc kernels copyin(a[0:n])\n  for (int i = 0; i < n; i++) s += a[i];\n  return s;\n}\n";

fn project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    fs::create_dir_all(d.path().join("src")).unwrap();
    fs::create_dir_all(d.path().join("include")).unwrap();
    fs::create_dir_all(d.path().join("out")).unwrap();
    fs::write(d.path().join("src/k.c"), KERNELS).unwrap();
    fs::write(d.path().join("include/cfg.h"), "typedef double real_t;\n").unwrap();
    let db = format!(
        r#"[{{"directory": "{}", "file": "../src/k.c", "command": "nvc -acc=gpu -Minfo=accel -I../include -O3 -c ../src/k.c -o k.o"}}]"#,
        d.path().join("out").display()
    );
    fs::write(d.path().join("out/compile_commands.json"), db).unwrap();
    d
}

#[test]
fn compile_commands_give_the_parse_its_include_paths() {
    if !common::libclang("compile_commands.json") {
        return;
    }
    let d = project();
    // Without the database the header is not on the include path: the only cfg.h near the
    // file is taken, with a note.
    let o = run(d.path(), &["migrate", "src/k.c", "--diff"], &[], None);
    let err = stderr(&o);
    assert!(err.contains("parsed with -I ../include"), "{err}");
    assert!(!err.contains("clang-parse-error"), "{err}");
    // Two of them: none is, and the region falls back to syntax.
    fs::write(d.path().join("out/cfg.h"), "typedef double real_t;\n").unwrap();
    let o = run(d.path(), &["migrate", "src/k.c", "--diff"], &[], None);
    let err = stderr(&o);
    assert!(err.contains("none is guessed"), "{err}");
    assert!(err.contains("[clang-parse-error]"), "{err}");
    assert!(err.contains("no compile_commands.json was found"), "{err}");
    fs::remove_file(d.path().join("out/cfg.h")).unwrap();
    // With -p, the foreign compiler's flags are filtered and the include path kept.
    let o = run(
        d.path(),
        &["migrate", "src/k.c", "--diff", "-p", "out", "-v"],
        &[],
        None,
    );
    let err = stderr(&o);
    assert!(!err.contains("clang-parse-error"), "{err}");
    assert!(err.contains("src/k.c: analyzed with libclang"), "{err}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(
            "+  #pragma omp target teams distribute parallel for simd map(to: a[0:n]) reduction(+:s) map(tofrom: s)"
        ),
        "{out}"
    );
    // Found in a parent directory, as clang-tidy does.
    fs::copy(
        d.path().join("out/compile_commands.json"),
        d.path().join("compile_commands.json"),
    )
    .unwrap();
    let o = run(d.path(), &["migrate", "src/k.c"], &[], None);
    assert!(!stderr(&o).contains("clang-parse-error"), "{}", stderr(&o));
}

/// PolyBench's way of declaring array parameters, with its header on an include path; `g` is
/// declared in the header.
const ARRAY_PARAM: &str = "#include \"defs.h\"\nvoid f(int n, DATA_TYPE POLYBENCH_1D(v, 64, n)) {\n  #pragma acc parallel loop copy(v)\n  for (int i = 0; i < n; i++) v[i] *= 2;\n  #pragma acc parallel loop copy(g)\n  for (int i = 0; i < n; i++) g[i] += 1;\n}\n";

#[test]
fn database_in_a_build_directory_is_found_and_unknown_types_are_reported() {
    if !common::libclang("compile_commands.json in build/") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    for dir in ["src/kernels", "include", "build"] {
        fs::create_dir_all(d.path().join(dir)).unwrap();
    }
    fs::write(d.path().join("src/kernels/p.c"), ARRAY_PARAM).unwrap();
    let defs = "#define DATA_TYPE double\n#define POLYBENCH_1D(x, n1, d1) x[n1]\nextern DATA_TYPE g[64];\n";
    fs::write(d.path().join("include/defs.h"), defs).unwrap();
    let db = format!(
        r#"[{{"directory": "{}", "file": "../src/kernels/p.c", "command": "cc -I../include -c ../src/kernels/p.c"}}]"#,
        d.path().join("build").display()
    );
    fs::write(d.path().join("build/compile_commands.json"), db).unwrap();
    let migrate = || {
        let o = run(
            d.path(),
            &["migrate", "src/kernels/p.c", "--diff"],
            &[],
            None,
        );
        (String::from_utf8_lossy(&o.stdout).into_owned(), stderr(&o))
    };
    // The build/ subdirectory of a parent, as clangd looks: the parameter is known to be a
    // pointer whose bound the macro writes: the definition expanded one level spells it as
    // the call writes it (a value would hold for one configuration only).
    let (out, err) = migrate();
    assert!(out.contains("map(tofrom: v[0:64])"), "{out}\n{err}");
    assert!(out.contains("map(tofrom: g)"), "{out}\n{err}");
    assert!(err.contains("[array-parameter]"), "{err}");
    assert!(!err.contains("clang-parse-error"), "{err}");
    assert!(!err.contains("include-guessed"), "{err}");
    // Without it the header is looked for near the file: the only defs.h lies in a
    // subdirectory of an ancestor, which the parse then searches, with a note.
    fs::remove_file(d.path().join("build/compile_commands.json")).unwrap();
    let (out, err) = migrate();
    assert!(out.contains("map(tofrom: v[0:64])"), "{out}\n{err}");
    assert!(err.contains("parsed with -I ../../include"), "{err}");
    assert!(err.contains("[include-guessed]"), "{err}");
    assert!(!err.contains("clang-parse-error"), "{err}");
    // Two of them at that level: no guess, and the types are unknown. The parameter and the
    // global, which the regions subscript, may be pointers: the constructs are left.
    fs::write(d.path().join("build/defs.h"), defs).unwrap();
    let (out, err) = migrate();
    assert!(
        err.contains("files of that name lie in ../../build and ../../include, so none is guessed"),
        "{err}"
    );
    assert!(
        err.contains("'v' is a parameter whose type is not known here"),
        "{err}"
    );
    assert!(err.contains("[pointer-without-extent]"), "{err}");
    assert!(out.contains("#error"), "{out}");
    assert!(!out.contains("map(tofrom: g)"), "{out}\n{err}");
    assert!(err.contains("the type of 'g' is not known here"), "{err}");
}

/// A header that a header includes and that is not on the include path is looked for near
/// the header that includes it; when it is not found, the variables whose declarations need
/// it are not taken at clang's recovered type.
#[test]
fn headers_missing_from_headers_are_guessed_or_their_declarations_distrusted() {
    if !common::libclang("headers missing from headers") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    for dir in ["src", "include", "config"] {
        fs::create_dir_all(d.path().join(dir)).unwrap();
    }
    let src = "#include \"../include/grid.h\"\nvoid scale(int n) {\n#pragma acc parallel loop present(vp)\n  for (int i = 0; i < n; i++) vp[i] *= 2;\n#pragma acc parallel loop copy(vp[0:n]) copyin(factor)\n  for (int i = 0; i < n; i++) vp[i] *= factor;\n}\n";
    fs::write(d.path().join("src/a.c"), src).unwrap();
    fs::write(
        d.path().join("include/grid.h"),
        "#include \"sizes.h\"\nextern vec_t vp;\nextern double factor;\n",
    )
    .unwrap();
    fs::write(d.path().join("config/sizes.h"), "typedef double *vec_t;\n").unwrap();
    let migrate = || {
        let o = run(d.path(), &["migrate", "src/a.c", "--diff"], &[], None);
        (String::from_utf8_lossy(&o.stdout).into_owned(), stderr(&o))
    };
    let (out, err) = migrate();
    assert!(
        err.contains("'sizes.h' (included by '../include/grid.h') is not on the include path")
            && err.contains("parsed with -I ../config"),
        "{err}"
    );
    assert!(out.contains("map(alloc: vp[:0])"), "{out}\n{err}");
    // Two of them: no guess; clang's parse takes 'vp' for an int, which is not trusted.
    fs::create_dir_all(d.path().join("other")).unwrap();
    fs::write(d.path().join("other/sizes.h"), "typedef double *vec_t;\n").unwrap();
    let (out, err) = migrate();
    assert!(err.contains("none is guessed"), "{err}");
    assert!(err.contains("the declaration of 'vp' has errors"), "{err}");
    assert!(err.contains("[pointer-without-extent]"), "{err}");
    assert!(!out.contains("map(alloc: vp)"), "{out}");
    // A scalar of unknown type that the region does not dereference is mapped as written.
    assert!(out.contains("map(to: factor)"), "{out}");
    assert!(
        err.contains("the type of 'factor' is unknown") && err.contains("[map-type-unknown]"),
        "{err}"
    );
}

#[test]
fn syntactic_mode_takes_macro_types_from_the_compile_command() {
    let d = tempfile::tempdir().unwrap();
    let src = "void f(int n, double *a) {\n  DATA_TYPE t;\n  #pragma acc parallel loop copy(a[0:n])\n  for (int i = 0; i < n; i++) {\n    t = a[i] * 2;\n    a[i] = t + 1;\n  }\n}\n";
    fs::write(d.path().join("m.c"), src).unwrap();
    // Unknown type: the write is reported, not guessed.
    let o = run(
        d.path(),
        &["migrate", "m.c", "--diff", "--no-clang"],
        &[],
        None,
    );
    assert!(stderr(&o).contains("[scalar-race]"), "{}", stderr(&o));
    let db = format!(
        r#"[{{"directory": "{}", "file": "m.c", "command": "cc -DDATA_TYPE=double -c m.c"}}]"#,
        d.path().display()
    );
    fs::write(d.path().join("compile_commands.json"), db).unwrap();
    let o = run(
        d.path(),
        &["migrate", "m.c", "--diff", "--no-clang"],
        &[],
        None,
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("map(tofrom: a[0:n]) private(t)"),
        "{out}\n{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("scalar-race"), "{}", stderr(&o));
}

#[test]
fn summary_says_how_files_were_analyzed() {
    let d = project();
    let o = run(d.path(), &["migrate", "src", "--no-clang"], &[], None);
    let err = stderr(&o);
    assert!(err.contains("1 syntactic (--no-clang)"), "{err}");
    let o = run(d.path(), &["migrate", "src", "--no-clang", "-v"], &[], None);
    let err = stderr(&o);
    assert!(
        err.contains("src/k.c: analyzed with syntactic (--no-clang)"),
        "{err}"
    );
    if common::libclang("summary with libclang") {
        let o = run(d.path(), &["migrate", "src", "-p", "out"], &[], None);
        let err = stderr(&o);
        assert!(err.contains("1 file(s) with libclang"), "{err}");
        // A LIBCLANG_PATH without libclang does not hide the installed one.
        let o = run(
            d.path(),
            &["migrate", "src", "-v", "-p", "out"],
            &[("LIBCLANG_PATH", "/nonexistent/libclang.so")],
            None,
        );
        let err = stderr(&o);
        assert!(err.contains("1 file(s) with libclang"), "{err}");
        assert!(err.contains("LIBCLANG_PATH passed over"), "{err}");
    }
}

#[test]
fn stdin_is_parsed_under_its_stdin_filename() {
    if !common::libclang("stdin with libclang") {
        return;
    }
    let src = "struct P { int n; };\nvoid f(struct P *p, double *a) {\n  int k = 0;\n  #pragma acc kernels copy(a[0:p->n])\n  { k = p->n; a[0] = k; }\n}\n";
    let d = tempfile::tempdir().unwrap();
    let o = run(
        d.path(),
        &["migrate", "-", "--stdin-filename", "x.cpp", "-v"],
        &[],
        Some(src),
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("map(tofrom: k)"), "{out}");
    assert!(
        stderr(&o).contains("x.cpp: analyzed with libclang"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn hostile_inputs_do_not_take_the_tool_down() {
    let d = tempfile::tempdir().unwrap();
    let deep = format!(
        "void f(int n, double *a) {{\n#pragma acc parallel loop copy(a[0:n])\nfor (int i = 0; i < n; i++) a[i] = {}1{};\n}}\n",
        "(".repeat(3000),
        ")".repeat(3000)
    );
    let chain = format!(
        "void g(int n, double *a) {{\n#pragma acc parallel loop copy(a[0:n])\nfor (int i = 0; i < n; i++) a[i] = 1{};\n}}\n",
        "+1".repeat(300_000)
    );
    let ok = "void h(int n, double *a) {\n#pragma acc parallel loop copy(a[0:n])\nfor (int i = 0; i < n; i++) a[i] = 0;\n}\n";
    let cases = [
        "#pragma acc parallel\n".to_string(),
        "void f() {\n#pragma acc kernels\n{ int x = ; }\n".to_string(),
        "\u{0}#pragma acc parallel loop\nfor(;;){}\n".to_string(),
        "template <class T> void f(T *a, int n) {\n#pragma acc parallel loop\nfor (auto i = 0; i < n; ++i) a[i] = T();\n}\n".to_string(),
        deep,
        // Left-deep expression trees are not brackets: the depth cap does not stop them from
        // overflowing the parser's stack (libclang 19 and 22 crash).
        chain,
        ok.to_string(),
    ];
    for (k, c) in cases.iter().enumerate() {
        let p = d.path().join(format!("h{k}.cpp"));
        fs::write(&p, c).unwrap();
    }
    let o = run(d.path(), &["migrate", ".", "--diff", "-v"], &[], None);
    let err = stderr(&o);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{:?}\n{err}",
        o.status
    );
    // Every file is still translated, and the parse after a crash gets a new worker.
    let out = String::from_utf8_lossy(&o.stdout);
    for k in [4, 5, 6] {
        assert!(out.contains(&format!("+++ b/h{k}.cpp")), "h{k}.cpp:\n{err}");
    }
    if common::libclang("hostile inputs with libclang") {
        assert!(err.contains("h6.cpp: analyzed with libclang"), "{err}");
    }
}

/// Clang's OpenACC checks run exactly when the loaded libclang has them (21 and newer): an
/// error only they find rejects the directive there, and older libclang translates it with
/// the tool's own warning.
#[test]
fn clang_openacc_checks_follow_the_loaded_libclang() {
    if !common::libclang("clang's OpenACC checks") {
        return;
    }
    let loaded = acc2omp::semantic::preload(&acc2omp::semantic::SemanticConfig::default())
        .expect("libclang loads");
    let major = common::libclang_major(&loaded).expect("a version");
    let src = "void f(int n, double *a) {\n  float g = 1;\n#pragma acc parallel loop vector_length(&g) copy(a[0:n])\n  for (int i = 0; i < n; i++) a[i] = 0;\n}\n";
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("v.c"), src).unwrap();
    let o = run(d.path(), &["migrate", "v.c", "--diff"], &[], None);
    let err = stderr(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    if major >= 21 {
        assert!(err.contains("v.c:3:1: error: clang: OpenACC clause 'vector_length' requires expression of integer type"), "{err}");
        assert!(err.contains("with its OpenACC checks"), "{err}");
        // Left unchanged: only the guard that stops OpenMP builds is added.
        assert!(!out.contains("pragma omp"), "{out}");
        assert!(
            out.contains("+#error \"acc2omp: 'acc parallel loop' below is left unchanged"),
            "{out}"
        );
    } else {
        assert!(!err.contains("[clang-openacc]"), "{err}");
        assert!(!err.contains("with its OpenACC checks"), "{err}");
        assert!(err.contains("[launch-hint]"), "{err}");
        assert!(out.contains("omp target teams"), "{out}");
    }
    // GCC's `reduction(-:x)` is a sum: translated with either libclang, a warning with 21+.
    let src = "double f(int n, const double *a) {\n  double s = 0;\n#pragma acc parallel loop reduction(-:s) copyin(a[0:n])\n  for (int i = 0; i < n; i++) s -= a[i];\n  return s;\n}\n";
    fs::write(d.path().join("m.c"), src).unwrap();
    let o = run(d.path(), &["migrate", "m.c", "--diff"], &[], None);
    let err = stderr(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("reduction(+: s)") || out.contains("reduction(+:s)"),
        "{out}"
    );
    assert_eq!(
        err.contains("m.c:3:1: warning: clang: invalid reduction operator"),
        major >= 21,
        "{err}"
    );
    assert!(!err.contains(": error:"), "{err}");
}

/// The processes of the process group `pgid` (from /proc).
fn group_members(pgid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for e in fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        // `pid (comm) state ppid pgrp …`: the name may hold spaces and parentheses.
        let Ok(stat) = fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let Some(rest) = stat.rfind(')').map(|k| &stat[k + 1..]) else {
            continue;
        };
        if rest.split_whitespace().nth(2) == Some(&pgid.to_string()) {
            out.push(pid);
        }
    }
    out
}

/// No process of ours outlives the run: the libclang workers are waited for when the run
/// ends, when a parse runs out of time and when a signal ends the run (each run is its own
/// process group, which must be empty once acc2omp has exited).
#[test]
fn no_worker_outlives_the_run() {
    use std::os::unix::process::CommandExt;
    if !common::libclang("libclang workers are waited for") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    for k in 0..6 {
        let src = format!(
            "void f{k}(int n, double *a) {{\n#pragma acc parallel loop copy(a[0:n])\n  for (int i = 0; i < n; i++) a[i] += {k};\n}}\n"
        );
        fs::write(d.path().join(format!("k{k}.c")), src).unwrap();
    }
    // Millions of statements from a few macros: libclang parses it for many seconds.
    let mut slow: String = "#define S0 a[0] += 1;\n".into();
    for k in 1..=21 {
        slow.push_str(&format!("#define S{k} S{} S{}\n", k - 1, k - 1));
    }
    slow.push_str("void g(int n, double *a) {\n#pragma acc parallel loop copy(a[0:n])\n  for (int i = 0; i < n; i++) { S21 }\n}\n");
    fs::create_dir(d.path().join("slow")).unwrap();
    fs::write(d.path().join("slow/s.c"), slow).unwrap();
    let spawn = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_acc2omp"));
        c.current_dir(d.path())
            .arg("migrate")
            .args(args)
            .envs(env.iter().copied())
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c.spawn().unwrap()
    };
    let ended = |what: &str, child: std::process::Child| {
        let pgid = child.id() as i32;
        let o = child.wait_with_output().unwrap();
        let left = group_members(pgid);
        for &p in &left {
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
        assert!(
            left.is_empty(),
            "{what}: processes {left:?} outlived acc2omp ({:?})\n{}",
            o.status,
            stderr(&o)
        );
        o
    };
    // A run that ends normally, with a worker per thread.
    let o = ended(
        "a normal run",
        spawn(
            &["k0.c", "k1.c", "k2.c", "k3.c", "k4.c", "k5.c", "-j", "4"],
            &[],
        ),
    );
    assert!(
        stderr(&o).contains("file(s) with libclang"),
        "{}",
        stderr(&o)
    );
    // A parse that runs out of time.
    let o = ended(
        "a parse past its time",
        spawn(&["slow"], &[("ACC2OMP_CLANG_TIMEOUT", "1")]),
    );
    assert!(
        stderr(&o).contains("took longer than 1 s"),
        "{}",
        stderr(&o)
    );
    // A signal while a worker parses.
    let child = spawn(&["slow"], &[]);
    let pgid = child.id() as i32;
    let start = std::time::Instant::now();
    let worker = |p: &i32| {
        fs::read(format!("/proc/{p}/environ")).is_ok_and(|e| {
            e.split(|&b| b == 0)
                .any(|v| v.starts_with(b"ACC2OMP_LIBCLANG_WORKER="))
        })
    };
    while !group_members(pgid).iter().any(worker) {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "the worker never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(unsafe { libc::kill(pgid, libc::SIGTERM) }, 0);
    let o = ended("a run ended by SIGTERM", child);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(o.status.signal(), Some(libc::SIGTERM), "{:?}", o.status);
}

/// A file that includes a FIFO or a device (through a repository's own files): libclang
/// would wait on the FIFO until the parse runs out of time, or read the device without end.
/// The file is translated from syntax alone at once, with a diagnostic at the include.
#[test]
fn an_include_that_is_not_a_regular_file_does_not_block_the_parse() {
    use std::os::unix::ffi::OsStrExt;
    if !common::libclang("includes of FIFOs and devices") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let fifo = std::ffi::CString::new(d.path().join("pipe.h").as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    std::os::unix::fs::symlink("/dev/zero", d.path().join("zero.h")).unwrap();
    let body = "void f(int n, double *a) {\n#pragma acc parallel loop copy(a[0:n])\n  for (int i = 0; i < n; i++) a[i] += 1;\n}\n";
    fs::write(d.path().join("p.c"), format!("#include \"pipe.h\"\n{body}")).unwrap();
    // A line splice (CRLF) cutting the word `include`.
    fs::write(
        d.path().join("s.c"),
        format!("#inc\\\r\nlude \"pipe.h\"\n{body}"),
    )
    .unwrap();
    fs::write(
        d.path().join("z.c"),
        format!("#include <stdio.h>\n#include \"zero.h\"\n{body}"),
    )
    .unwrap();
    // Found through a compile command's `-I` directory.
    let db = d.path().join("db");
    fs::create_dir_all(db.join("inc")).unwrap();
    std::os::unix::fs::symlink("/dev/urandom", db.join("inc/dev.h")).unwrap();
    fs::write(db.join("i.c"), format!("#include <dev.h>\n{body}")).unwrap();
    let command = serde_json::json!([{
        "directory": db,
        "file": "i.c",
        "arguments": ["cc", "-I", "inc", "-c", "i.c"],
    }]);
    fs::write(db.join("compile_commands.json"), command.to_string()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_acc2omp"))
        .current_dir(d.path())
        .args(["migrate", "p.c", "s.c", "z.c", "db/i.c", "--write"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("acc2omp waited on an included FIFO or device for a minute");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    for (at, what) in [
        ("p.c:1:1", "pipe.h, a FIFO"),
        ("s.c:1:1", "pipe.h, a FIFO"),
        ("z.c:2:1", "zero.h, a character device"),
        ("db/i.c:1:1", "inc/dev.h, a character device"),
    ] {
        assert!(
            err.contains(&format!("{at}: warning: this file includes ")) && err.contains(what),
            "{err}"
        );
    }
    for f in ["p.c", "s.c", "z.c", "db/i.c"] {
        let out = fs::read_to_string(d.path().join(f)).unwrap();
        assert!(out.contains("#pragma omp target teams"), "{out}");
    }
}

/// Syntactic mode rejects what libclang mode rejects, with the same rule and message, and
/// leaves the directive unchanged; GCC 12 rejects each too.
#[test]
fn both_modes_reject_invalid_directives_alike() {
    let body = |directive: &str, stmt: &str| {
        format!(
            "void f(int n, double *a, int x) {{\n  double v = 0;\n#pragma acc parallel loop copy(a[0:n]) {directive}\n  for (int i = 0; i < n; i++) {{\n{stmt}\n  }}\n}}\n"
        )
    };
    let loop_body = "    a[i] += v;";
    let cases = [
        (body("collapse(0)", loop_body), "invalid-argument"),
        (body("collapse(-1)", loop_body), "invalid-argument"),
        (body("collapse(1 - 1)", loop_body), "invalid-argument"),
        (
            format!("#define Z (1 - 1)\n{}", body("collapse(Z)", loop_body)),
            "invalid-argument",
        ),
        (
            format!("const int k = 2;\n{}", body("collapse(k)", loop_body)),
            "invalid-argument",
        ),
        (body("collapse(x)", loop_body), "invalid-argument"),
        (
            body("collapse(99999999999999999999)", loop_body),
            "invalid-argument",
        ),
        (body("copyin(\"a\")", loop_body), "invalid-argument"),
        (body("async(1e23)", loop_body), "invalid-argument"),
        (body(", ,", loop_body), "parse-error"),
        (body("present(a),", loop_body), "parse-error"),
        (
            body("", "#pragma acc atomic update\n    v = 3;"),
            "atomic-form",
        ),
        (
            body("", "#pragma acc atomic\n    f(n, a, x);"),
            "atomic-form",
        ),
        (
            body("", "#pragma acc atomic read\n    v += 1;"),
            "atomic-form",
        ),
        (
            "double g[8];\n#pragma acc declare create(g)\n#pragma acc declare copyin(g)\nvoid f(void) {}\n".to_string(),
            "declare-duplicate",
        ),
    ];
    let clang = common::libclang("invalid directives with libclang");
    let gcc = common::compilers("invalid directives under gcc -fopenacc");
    let d = tempfile::tempdir().unwrap();
    for (k, (src, rule)) in cases.iter().enumerate() {
        let name = format!("c{k}.c");
        fs::write(d.path().join(&name), src).unwrap();
        let mut seen: Vec<String> = Vec::new();
        let modes: &[&[&str]] = if clang {
            &[&["--no-clang"], &["--require-clang"]]
        } else {
            &[&["--no-clang"]]
        };
        for mode in modes {
            let args = [
                &["migrate", &name, "--diff", "--output-format", "concise"],
                *mode,
            ]
            .concat();
            let o = run(d.path(), &args, &[], None);
            let err = stderr(&o);
            let errors: Vec<String> = err
                .lines()
                .filter(|l| l.contains(": error: "))
                .map(str::to_string)
                .collect();
            assert!(
                !errors.is_empty() && errors.iter().all(|l| l.ends_with(&format!("[{rule}]"))),
                "{mode:?}: {src}\n{err}"
            );
            // The directive with the error is left unchanged.
            let out = String::from_utf8_lossy(&o.stdout);
            let bad = src
                .lines()
                .filter(|l| l.contains("#pragma acc"))
                .find(|l| !out.contains(&format!("+{l}")) && out.contains(&format!("-{l}")));
            assert!(bad.is_none(), "{mode:?}: {bad:?} changed\n{out}");
            seen.push(errors.join("\n"));
        }
        assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:#?}");
        if gcc {
            let o = Command::new("gcc")
                .args(["-fopenacc", "-fsyntax-only", &name])
                .current_dir(d.path())
                .output()
                .unwrap();
            assert!(!o.status.success(), "gcc -fopenacc accepts {src}");
        }
    }
}

/// A `collapse` count written with names is read through the file's macros and
/// enumerators and its nest checked as a literal's; one whose value the file does not give
/// leaves the directive unchanged. Both modes alike.
#[test]
fn collapse_counts_with_names_are_evaluated() {
    let src = "#define N 2\nenum { M = N + 1 };\nvoid f(int n, double *a) {\n#pragma acc parallel loop collapse(N) copy(a[0:n])\n  for (int i = 0; i < n; i++) { a[i] = 0;\n    for (int j = 0; j < n; j++) a[j] = 1; }\n#pragma acc parallel loop collapse(M - 1) copy(a[0:n])\n  for (int i = 0; i < n; i++)\n    for (int j = 0; j < n; j++) a[j] = 1;\n#pragma acc parallel loop collapse(HEADER_N) copy(a[0:n])\n  for (int i = 0; i < n; i++)\n    for (int j = 0; j < n; j++) a[j] = 1;\n}\n";
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("c.c"), src).unwrap();
    let clang = common::libclang("collapse counts with libclang");
    let modes: &[&[&str]] = if clang {
        &[&["--no-clang"], &["--require-clang"]]
    } else {
        &[&["--no-clang"]]
    };
    for mode in modes {
        let args = [
            &["migrate", "c.c", "--diff", "--output-format", "concise"],
            *mode,
        ]
        .concat();
        let o = run(d.path(), &args, &[], None);
        let err = stderr(&o);
        assert!(err.contains("c.c:5:33: warning: 'collapse(N)' (2, line 4) but only 1 perfectly nested loops follow [collapse-depth]"), "{mode:?}: {err}");
        assert!(
            err.contains("c.c:10:36: warning: the value of 'collapse(HEADER_N)' is not known"),
            "{mode:?}: {err}"
        );
        assert!(err.contains("left unchanged [collapse-unknown]"), "{err}");
        assert!(!err.contains("line 7"), "{mode:?}: {err}");
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            out.contains("+#pragma omp target teams distribute parallel for simd collapse(M - 1)"),
            "{out}"
        );
        assert!(
            out.contains(" #pragma acc parallel loop collapse(HEADER_N)"),
            "{out}"
        );
    }
}

/// A construct clang finds where no directive of the file is spelled (a macro of a header
/// expands to it) is left alone: a note when the header's definition spells the directive
/// (migrating the header translates it), an error naming an OpenACC wrapper macro of a
/// header (its uses hold the directive), an error for a macro whose directive no header
/// spells.
#[test]
fn a_construct_from_another_files_macro_is_reported() {
    if !common::libclang("clang's OpenACC constructs") {
        return;
    }
    let loaded = acc2omp::semantic::preload(&acc2omp::semantic::SemanticConfig::default())
        .expect("libclang loads");
    if common::libclang_major(&loaded).expect("a version") < 21 {
        eprintln!("libclang before 21 has no OpenACC constructs: nothing to check");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    fs::write(
        d.path().join("loops.h"),
        "#define PARALLEL_LOOP _Pragma(\"acc parallel loop\")\n",
    )
    .unwrap();
    // `m.c` written and migrated: the run and its stderr.
    let migrate = |src: &str| {
        fs::write(d.path().join("m.c"), src).unwrap();
        let o = run(
            d.path(),
            &["migrate", "m.c", "--diff", "--output-format", "concise"],
            &[],
            None,
        );
        let err = stderr(&o);
        (o, err)
    };
    let src = "#include \"loops.h\"\nvoid f(int n, double *a) {\n  PARALLEL_LOOP\n  for (int i = 0; i < n; i++) a[i] = 0;\n#pragma acc parallel loop copy(a[0:n])\n  for (int i = 0; i < n; i++) a[i] += 1;\n}\n";
    let (o, err) = migrate(src);
    assert!(
        err.lines().any(|l| l.starts_with("m.c:3:")
            && l.contains("built by 'PARALLEL_LOOP' of ")
            && l.ends_with("[macro-of-header]")),
        "{err}"
    );
    assert!(!err.contains("[clang-openacc-site]"), "{err}");
    // The directive the file spells is translated.
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("+#pragma omp target teams"), "{out}");

    fs::write(
        d.path().join("loops.h"),
        "#define PRAGMA(x) _Pragma(#x)\n#define ACC(x) PRAGMA(acc x)\n",
    )
    .unwrap();
    fs::write(d.path().join("other.h"), "#define LOOP ACC(loop)\n").unwrap();
    let src = src
        .replace("  PARALLEL_LOOP\n", "  ACC(parallel loop)\n")
        .replace(
            "#include \"loops.h\"\n",
            "#include \"loops.h\"\n#include \"other.h\"\n",
        )
        .replace(
            "a[i] += 1;\n",
            "a[i] += 1;\n#pragma acc parallel\n  LOOP\n  for (int i = 0; i < n; i++) a[i] -= 1;\n",
        );
    let (_, err) = migrate(&src);
    assert!(
        err.lines().any(|l| l.starts_with("m.c:4:")
            && l.contains("built by 'ACC', an OpenACC wrapper macro of ")
            && l.ends_with("[clang-openacc-site]")),
        "{err}"
    );
    assert!(
        err.lines().any(|l| l.starts_with("m.c:9:")
            && l.contains("that no directive of this file spells")
            && l.ends_with("[clang-openacc-site]")),
        "{err}"
    );
}

/// Loops of `kernels` regions bounded by macros from a header or the compile command's `-D`:
/// with libclang the test reads them as the preprocessor does (the use's definition, and the
/// macros its body names), so a constant or a scalar the loop only reads is proven
/// independent, and a scalar it writes is still found. Without libclang the header is not
/// read and the loops stay sequential.
#[test]
fn kernels_loops_bounded_by_header_macros() {
    let d = tempfile::tempdir().unwrap();
    fs::create_dir_all(d.path().join("include")).unwrap();
    fs::write(
        d.path().join("include/sizes.h"),
        "#define N 4096\n#define NN (N + \\\n  2)\n#define BOUND(x, y) y\n#define LIMIT count\n\
         #define K 3\n#undef K\n#define KK (K + 1)\nextern int count, K;\n#define UN 64\n",
    )
    .unwrap();
    // Included after the functions that expand `UN`: the name is a variable from there on.
    fs::write(
        d.path().join("include/late.h"),
        "#undef UN\nextern int UN;\n",
    )
    .unwrap();
    let body = |name: &str, bound: &str, extra: &str| {
        format!(
            "void {name}(int n, float *restrict a, const float *restrict b) {{\n#pragma acc kernels copyin(b[0:n]) copyout(a[0:n])\n  for (int i = 0; i < {bound}; i++) {{ a[i] = b[i] * 2;{extra} }}\n}}\n"
        )
    };
    let src = [
        "#include \"sizes.h\"\n".to_string(),
        body("constant", "N", ""),
        body("nested", "NN", ""),
        body("argument", "BOUND(N, n)", ""),
        body("read", "LIMIT", ""),
        body("written", "LIMIT", " count = i;"),
        body("undefined", "KK", " K = i;"),
        body("flag", "NX", ""),
        body("early", "UN", ""),
        "#include \"late.h\"\n".to_string(),
        body("late", "UN", ""),
    ]
    .concat();
    fs::write(d.path().join("k.c"), &src).unwrap();
    let db = format!(
        r#"[{{"directory": "{}", "file": "k.c", "command": "cc -Iinclude -DNX=64 -c k.c"}}]"#,
        d.path().display()
    );
    fs::write(d.path().join("compile_commands.json"), db).unwrap();
    // The functions whose loop became a `distribute` loop, and the loops reported
    // sequential.
    let verdicts = |args: &[&str]| {
        fs::write(d.path().join("k.c"), &src).unwrap();
        let o = run(d.path(), args, &[], None);
        let out = fs::read_to_string(d.path().join("k.c")).unwrap();
        let err = stderr(&o);
        let mut parallel = Vec::new();
        let mut function = "";
        for line in out.lines() {
            if let Some(name) = line.strip_prefix("void ").and_then(|l| l.split('(').next()) {
                function = name;
            }
            if line.contains("distribute parallel for") {
                parallel.push(function.to_string());
            }
        }
        let sequential = err.matches("[kernels-sequential]").count();
        (parallel, sequential, err)
    };
    let (parallel, sequential, err) = verdicts(&["migrate", "k.c", "--write", "--no-cache"]);
    assert_eq!(
        parallel,
        ["constant", "nested", "argument", "read", "flag", "late"],
        "{err}"
    );
    assert_eq!(sequential, 3, "{err}");
    assert!(
        err.contains("'count' is read before it is written"),
        "{err}"
    );
    // `K` is the variable, not the header's `#undef`ined macro: no `3 = i`.
    assert!(err.contains("'K' is read before it is written"), "{err}");
    // A name a header `#undef`s is not expanded anywhere: where it is the variable, a
    // constant would be a wrong reading.
    assert!(
        err.contains("'UN' is not a variable the analysis knows"),
        "{err}"
    );
    let (parallel, sequential, err) =
        verdicts(&["migrate", "k.c", "--write", "--no-cache", "--no-clang"]);
    assert!(parallel.is_empty(), "{err}");
    assert_eq!(sequential, 9, "{err}");
}
