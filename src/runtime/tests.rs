use super::text::*;
use super::*;
use crate::engine::migrate_text;
use crate::profile::{OmpVersion, Profile};
use crate::rules::{RuleId, Tables, id};

/// The definitions of the helpers guarded by `guards`, as a translation inserts them.
fn defs(guards: &[&str]) -> String {
    defs_with(guards, false)
}

/// [`defs`], with `--keep-openacc-guards` or without.
fn defs_with(guards: &[&str], keep_guards: bool) -> String {
    guards
        .iter()
        .map(|g| {
            let h = helpers::HELPERS.iter().find(|h| h.guard == *g).unwrap();
            h.definition(OmpVersion::V50, "\n", keep_guards)
        })
        .collect()
}

const ALLOC: &str = "ACC2OMP_TARGET_ALLOC";
const FREE: &str = "ACC2OMP_TARGET_FREE";
const MEMCPY: &str = "ACC2OMP_TARGET_MEMCPY";

fn run(src: &str) -> (String, Vec<RuleId>) {
    let o = migrate_text(src, &Options::default());
    (o.text, o.diagnostics.iter().map(|d| d.rule).collect())
}

#[test]
fn table_is_consistent() {
    let t = Tables::builtin();
    let mut names: Vec<&str> = t.runtime.iter().map(|r| r.name.as_str()).collect();
    names.sort();
    let n = names.len();
    names.dedup();
    assert_eq!(n, names.len(), "duplicate routine");
    for r in &t.runtime {
        assert!(
            t.diagnostic(&r.rule).is_some(),
            "{}: unknown rule {}",
            r.name,
            r.rule
        );
        assert!(!r.doc.trim().is_empty(), "{} lacks a doc", r.name);
        let exprs = r.omp.is_some() || r.omp51.is_some() || r.host.is_some() || r.dynamic.is_some();
        // A removed routine may have a replacement for the host device type only.
        let replaced = r.omp.is_some()
            || r.omp51.is_some()
            || r.dynamic.is_some()
            || r.host.is_some() && r.devtype.is_none();
        assert!(
            !(r.remove && (replaced || r.pragma.is_some())),
            "{}: removed and replaced",
            r.name
        );
        if !exprs && r.pragma.is_none() && !r.remove || r.omp51.is_some() && r.omp.is_none() {
            assert!(r.advice.is_some(), "{} needs advice", r.name);
        }
        if let Some(k) = r.devtype {
            assert!(k < r.args, "{}: devtype out of range", r.name);
            assert!(
                r.dynamic.is_some() || r.remove,
                "{}: a devtype needs `dynamic`",
                r.name
            );
        }
        for t in r.templates() {
            for k in r.args..10 {
                assert_eq!(
                    placeholder_uses(t, k),
                    0,
                    "{}: {{{k}}} out of range",
                    r.name
                );
            }
        }
        for p in r.pragma.iter().flat_map(|p| p.lines()) {
            assert!(!p.contains("{bytes}") || r.args >= 2, "{}", r.name);
        }
    }
}

/// Every routine of the OpenACC 3.3 C/C++ API (section 3.2, the routines of the target
/// platforms in appendix A.2, the profiling interface of chapter 5), with the OpenACC 1.0 and
/// 2.0 names that implementations still provide.
const OPENACC_3_3_API: &[&str] = &[
    // 3.2.1-3.2.8: devices
    "acc_get_num_devices",
    "acc_set_device_type",
    "acc_get_device_type",
    "acc_set_device_num",
    "acc_get_device_num",
    "acc_get_property",
    "acc_get_property_string",
    "acc_init",
    "acc_init_device",
    "acc_shutdown",
    "acc_shutdown_device",
    // 3.2.9-3.2.14: asynchronous behavior
    "acc_async_test",
    "acc_async_test_device",
    "acc_async_test_all",
    "acc_async_test_all_device",
    "acc_wait",
    "acc_wait_device",
    "acc_wait_async",
    "acc_wait_device_async",
    "acc_wait_all",
    "acc_wait_all_device",
    "acc_wait_all_async",
    "acc_wait_all_device_async",
    "acc_wait_any",
    "acc_wait_any_device",
    "acc_get_default_async",
    "acc_set_default_async",
    "acc_on_device",
    // 3.2.15-3.2.27: memory and data
    "acc_malloc",
    "acc_free",
    "acc_copyin",
    "acc_copyin_async",
    "acc_create",
    "acc_create_async",
    "acc_copyout",
    "acc_copyout_async",
    "acc_copyout_finalize",
    "acc_copyout_finalize_async",
    "acc_delete",
    "acc_delete_async",
    "acc_delete_finalize",
    "acc_delete_finalize_async",
    "acc_update_device",
    "acc_update_device_async",
    "acc_update_self",
    "acc_update_self_async",
    "acc_map_data",
    "acc_unmap_data",
    "acc_deviceptr",
    "acc_hostptr",
    "acc_is_present",
    "acc_memcpy_to_device",
    "acc_memcpy_to_device_async",
    "acc_memcpy_from_device",
    "acc_memcpy_from_device_async",
    "acc_memcpy_device",
    "acc_memcpy_device_async",
    "acc_attach",
    "acc_attach_async",
    "acc_detach",
    "acc_detach_async",
    "acc_detach_finalize",
    "acc_detach_finalize_async",
    "acc_memcpy_d2d",
    "acc_memcpy_d2d_async",
    // OpenACC 1.0/2.0 names kept by implementations
    "acc_async_wait",
    "acc_async_wait_all",
    "acc_pcopyin",
    "acc_present_or_copyin",
    "acc_pcreate",
    "acc_present_or_create",
    // A.2.1 CUDA, A.2.2 OpenCL
    "acc_get_current_cuda_device",
    "acc_get_current_cuda_context",
    "acc_get_cuda_stream",
    "acc_set_cuda_stream",
    "acc_get_current_opencl_device",
    "acc_get_current_opencl_context",
    "acc_get_opencl_queue",
    "acc_set_opencl_queue",
    // 5: profiling
    "acc_prof_register",
    "acc_prof_unregister",
    "acc_prof_lookup",
    "acc_register_library",
];

/// Each routine of the API has an entry, and each entry names the programs that prove its
/// mapping, which exist and call it (a `translate/<case>` fixture for the routines that are
/// reported, not translated).
#[test]
fn covers_the_openacc_3_3_c_api_with_proofs() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let t = crate::rules::Tables::builtin();
    for name in OPENACC_3_3_API {
        assert!(
            t.runtime(name).is_some(),
            "{name} missing from rules/runtime.toml"
        );
    }
    // GCC's OpenACC builtins are in the table to be reported, not as API routines.
    for r in t
        .runtime
        .iter()
        .filter(|r| !r.name.starts_with("__builtin_goacc_"))
    {
        assert!(
            OPENACC_3_3_API.contains(&r.name.as_str()),
            "{} is not an OpenACC 3.3 routine",
            r.name
        );
        assert!(!r.proof.is_empty(), "{} names no proof program", r.name);
        let translated = r.templates().next().is_some() || r.remove;
        for proof in &r.proof {
            let path = root.join(proof);
            let files: Vec<std::path::PathBuf> = if proof.starts_with("translate/") {
                assert!(
                    !translated,
                    "{}: a translated routine is proved by a program",
                    r.name
                );
                std::fs::read_dir(&path)
                    .unwrap_or_else(|e| panic!("{}: {proof}: {e}", r.name))
                    .map(|e| e.unwrap().path())
                    .filter(|p| p.file_stem().is_some_and(|s| s == "input"))
                    .collect()
            } else {
                assert!(
                    translated,
                    "{}: reported, not translated: prove it with a translate/ case",
                    r.name
                );
                assert!(proof.starts_with("programs/"), "{}: {proof}", r.name);
                if proof.contains("unsupported_by_gcc/") {
                    assert!(
                        path.with_extension("out").exists(),
                        "{proof} has no .out file"
                    );
                }
                vec![path]
            };
            let calls = files.iter().any(|f| {
                let src = std::fs::read_to_string(f).unwrap_or_default();
                let toks = crate::lex::lex(&src);
                toks.windows(2)
                    .any(|w| w[0].text(&src) == r.name && w[1].text(&src) == "(")
            });
            assert!(calls, "{}: {proof} does not call it", r.name);
        }
    }
}

#[test]
fn expressions() {
    let (t, d) = run(
        "void f(double *h, int n) {\n  double *d = (double *)acc_malloc(n);\n  acc_memcpy_to_device(d, h, n);\n  acc_free(d);\n}\n",
    );
    assert_eq!(
        t,
        "#ifdef _OPENMP\n#include <omp.h>\n#endif\n".to_string()
            + &defs(&[ALLOC, FREE, MEMCPY])
            + "void f(double *h, int n) {\n  double *d = (double *)acc2omp_target_alloc(n, omp_get_default_device());\n  acc2omp_target_memcpy(d, h, n, 0, 0, omp_get_default_device(), omp_get_initial_device());\n  acc2omp_target_free(d, omp_get_default_device());\n}\n"
    );
    assert!(d.contains(&id::OMP_HEADER_ADDED), "{d:?}");
}

#[test]
fn data_statements_become_directives() {
    let (t, _) = run(
        "void f(double *a, int n) {\n  acc_copyin(a, n * sizeof(double)); // in\n  if (n)\n    acc_update_self(a + 1,\n                    n /* count */ * 8);\n}\n",
    );
    assert_eq!(
        t,
        "void f(double *a, int n) {\n  { char *acc2omp_bytes = (char *)(a); (void)acc2omp_bytes;\n  #pragma omp target enter data map(to: acc2omp_bytes[0:n * sizeof(double)])\n  } // in\n  if (n)\n    { char *acc2omp_bytes = (char *)(a + 1); (void)acc2omp_bytes;\n    #pragma omp target update from(acc2omp_bytes[0:n /* count */ * 8])\n    }\n}\n"
    );
}

#[test]
fn waits_and_removals() {
    let (t, _) = run(
        "void f(int q) {\n  acc_wait(q);\n  if (q) acc_wait_all(); else { acc_init(acc_device_nvidia); }\n  acc_shutdown(acc_device_default); // bye\n  acc_set_default_async(2);\n  x: acc_wait_all(); int r = acc_async_test(q);\n}\n",
    );
    assert_eq!(
        t,
        concat!(
            "#ifndef ACC2OMP_QUEUES\n#define ACC2OMP_QUEUES\n/* acc2omp: one OpenMP dependence object per OpenACC async queue, and the queue of 'async' without argument (acc_set_default_async; -1 is acc_async_noval) */\n__attribute__((weak)) char acc2omp_queue[64];\n__attribute__((weak)) int acc2omp_default_async = -1;\n#endif\n",
            "#ifndef ACC2OMP_WAIT\n#define ACC2OMP_WAIT\n/* acc2omp: wait for OpenACC async queue slot q, or every queue when q < 0; returns 1 */\n__attribute__((weak)) int acc2omp_wait(int q)\n{\n    if (q < 0) {\n#pragma omp taskwait\n    } else {\n#pragma omp taskwait depend(in: acc2omp_queue[q])\n    }\n    return 1;\n}\n#endif\n",
            "void f(int q) {\n  #pragma omp taskwait depend(in: acc2omp_queue[(q) & 63])\n  if (q) {\n  #pragma omp taskwait\n  } else { (void)0; }\n  // bye\n  acc2omp_default_async = 2;\n  x: {\n  #pragma omp taskwait\n  } int r = acc2omp_wait((q) & 63);\n}\n"
        )
    );
}

#[test]
fn comments_strings_members_and_declarations_are_left_alone() {
    let src = "/* acc_malloc(1) */ const char *s = \"acc_malloc(2)\";\nvoid *acc_malloc(size_t n);\nstatic void acc_wait(int q) { o.acc_free(p); ns::acc_free(p); }\n";
    let (t, d) = run(src);
    assert_eq!(t, src);
    assert!(d.is_empty(), "{d:?}");
}

#[test]
fn value_used_and_side_effects_are_reported() {
    let src = "void f(double *a, double *b, int n, int *q) {\n  int r = (acc_wait(1), 0);\n  acc_memcpy_d2d(a, b, n, n++, 0);\n  int k = acc_wait_any_device(2, q, n++);\n  acc_attach((void **)a[n]);\n}\n";
    let (t, d) = run(src);
    assert_eq!(t, src);
    assert_eq!(
        d,
        [
            id::RUNTIME_VALUE_USED,
            id::RUNTIME_SIDE_EFFECTS,
            id::RUNTIME_SIDE_EFFECTS,
            id::RUNTIME_NOT_TRANSLATED
        ]
    );
}

#[test]
fn nested_calls_compose() {
    let (t, _) = run(
        "#include <openacc.h>\nvoid f(void) { acc_free(acc_malloc(acc_get_num_devices(acc_device_not_host))); }\n",
    );
    assert_eq!(
        t,
        "#include <omp.h>\n".to_string()
            + &defs(&[ALLOC, FREE])
            + "void f(void) { acc2omp_target_free(acc2omp_target_alloc(omp_get_num_devices(), omp_get_default_device()), omp_get_default_device()); }\n"
    );
}

#[test]
fn macros_get_expressions_only() {
    let src = "#include <omp.h>\n#define ALLOC(n) acc_malloc(n)\n#define SYNC acc_wait_all()\n#define ON_HOST \\\n  acc_on_device(acc_device_host)\n";
    let (t, d) = run(src);
    assert_eq!(
        t,
        "#include <omp.h>\n".to_string()
            + &defs(&[ALLOC])
            + "#define ALLOC(n) acc2omp_target_alloc(n, omp_get_default_device())\n#define SYNC acc_wait_all()\n#define ON_HOST \\\n  omp_is_initial_device()\n"
    );
    assert_eq!(d, [id::RUNTIME_HELPER, id::RUNTIME_IN_MACRO]);
}

#[test]
fn include_and_guards() {
    let src = "#include <stdio.h>\n#ifdef _OPENACC\n#include <openacc.h>\n#endif\n#if defined(_OPENACC) && _OPENACC >= 201306\nint v;\n#elif defined _OPENMP\nint w;\n#endif\n#ifndef _OPENACC // serial\n#endif\n";
    let (t, d) = run(src);
    assert_eq!(
        t,
        "#include <stdio.h>\n#ifdef _OPENMP\n#include <omp.h>\n#endif\n#if defined(_OPENMP) && _OPENMP >= 201306\nint v;\n#elif defined _OPENMP\nint w;\n#endif\n#ifndef _OPENMP // serial\n#endif\n"
    );
    assert_eq!(d, [id::OPENACC_GUARD, id::OPENACC_GUARD]);
    let o = migrate_text(
        src,
        &Options {
            keep_openacc_guards: true,
            ..Options::default()
        },
    );
    assert_eq!(o.text, src);
}

#[test]
fn existing_omp_include_wins() {
    let (t, d) = run(
        "#include <omp.h>\n#include \"openacc.h\" // runtime\nvoid *p(void) { return acc_malloc(4); }\n",
    );
    assert_eq!(
        t,
        "#include <omp.h>\n".to_string()
            + &defs(&[ALLOC])
            + "void *p(void) { return acc2omp_target_alloc(4, omp_get_default_device()); }\n"
    );
    assert_eq!(d, [id::RUNTIME_HELPER]);
    // A name that stays keeps openacc.h (omp.h already comes first).
    let src =
        "#include <omp.h>\n#include \"openacc.h\" // runtime\nint x = acc_device_multicore;\n";
    let (t, d) = run(src);
    assert_eq!(t, src);
    assert_eq!(d, [id::OPENACC_INCLUDE_KEPT, id::OPENACC_CONSTANT]);
    // An omp.h include in another branch does not cover this one.
    let src = "#ifdef THREADS\n#include <omp.h>\n#endif\n#include <openacc.h>\n";
    assert_eq!(
        run(src).0,
        "#ifdef THREADS\n#include <omp.h>\n#endif\n#include <omp.h>\n"
    );
}

#[test]
fn a_guard_around_only_a_covered_include_goes_with_it() {
    // omp.h after it covers it: the whole `_OPENACC` block goes, not an empty `_OPENMP` one.
    let src = "#include <stdio.h>\n#ifdef _OPENACC\n#include <openacc.h>\n#endif\n#include <omp.h>\nint n(void) { return acc_get_num_devices(acc_device_not_host); }\n";
    assert_eq!(
        run(src).0,
        "#include <stdio.h>\n#include <omp.h>\nint n(void) { return omp_get_num_devices(); }\n"
    );
    let src = "#include <omp.h>\n#if defined(_OPENACC)\n  #include \"openacc.h\"\n#endif /* acc */\nint x;\n";
    assert_eq!(run(src).0, "#include <omp.h>\nint x;\n");
    // Anything else in the block, or another test, keeps the block: only the include goes.
    let src = "#include <omp.h>\n#ifdef _OPENACC\n#include <openacc.h>\nint y;\n#endif\n#if defined(_OPENACC) && X\n#include <openacc.h>\n#endif\n";
    assert_eq!(
        run(src).0,
        "#include <omp.h>\n#ifdef _OPENMP\nint y;\n#endif\n#if defined(_OPENMP) && X\n#endif\n"
    );
}

#[test]
fn keep_guards_adds_omp_h_when_needed() {
    let src = "#ifdef _OPENACC\n#include <openacc.h>\n#endif\nvoid *p = 0;\nvoid f(void) { p = acc_malloc(4); }\n";
    let o = migrate_text(
        src,
        &Options {
            keep_openacc_guards: true,
            ..Options::default()
        },
    );
    // The `_OPENACC` branch calls the helper: an OpenACC build defines it too.
    let both = "#if defined(_OPENMP) || defined(_OPENACC)\n";
    assert_eq!(
        o.text,
        format!("{both}#include <omp.h>\n#endif\n")
            + &defs_with(&[ALLOC], true)
            + "#ifdef _OPENACC\n#include <openacc.h>\n#include <omp.h>\n#endif\nvoid *p = 0;\nvoid f(void) { p = acc2omp_target_alloc(4, omp_get_default_device()); }\n"
    );
    assert!(defs_with(&[ALLOC], true).contains(both));
}

#[test]
fn malformed_calls_stay_and_replacements_do_not_paste() {
    // Statements or a stray `#` in the arguments: not an expression, left alone.
    for src in [
        "void f(int q) { acc_wait(; q++; }\n",
        "void f(int q) { acc_wait(q #x); }\n",
        "void f(int q) { acc_wait(q}; }\n",
    ] {
        let (t, d) = run(src);
        assert_eq!(t, src);
        assert!(d.iter().all(|r| *r == id::RUNTIME_NOT_TRANSLATED), "{d:?}");
    }
    let mut e = Edit::replace(4..7, "0");
    separate_tokens("int f()x;", &mut e);
    assert_eq!(e.text, "0 ");
    let mut e = Edit::replace(4..7, "g()");
    separate_tokens("int f()+x;", &mut e);
    assert_eq!(e.text, "g()");
    // Code after a translated statement that starts with '#' stays on its line.
    let (t, _) = run("void f(int q) {\n  acc_wait(q);#x\n}\n");
    assert!(t.contains("}#x"), "{t}");
}

#[test]
fn odd_inputs_do_not_panic() {
    for src in [
        "acc_malloc",
        "acc_malloc(",
        "acc_malloc(1",
        "acc_copyin(a,",
        "acc_copyin(a, n",
        "acc_copyin(,);",
        "acc_wait_all(;",
        "x = acc_free)(;",
        ") acc_wait(1);",
        ": acc_wait(1);",
        "case : acc_wait(1);",
        "acc_on_device();",
        "acc_copyin(a, n)",
        "#define acc_malloc(n) malloc(n)\n#define X acc_malloc(",
        "#define",
        "#include <openacc.h",
        "#include",
        "#if _OPENACC >\n#elif\n#endif\n#endif\n#else",
        "#pragma acc parallel if(acc_on_device(acc_device_host)\n",
        "acc_copyin(R\"(a\nb)\", n\n);",
        "acc_copyin(a, R\"(x\ny)\");",
        "{ acc_copyin(a, n) }",
        "\u{feff}acc_wait(1);",
        "acc_wait(1);\r\nacc_init(acc_device_host);\r\n",
    ] {
        for opts in [
            Options::default(),
            Options {
                keep_openacc_guards: true,
                omp_version: OmpVersion::V51,
                ..Options::default()
            },
        ] {
            let out = migrate_text(src, &opts);
            let again = migrate_text(&out.text, &opts);
            assert_eq!(again.text, out.text, "not a fixed point: {src:?}");
        }
    }
}

#[test]
fn runtime_calls_in_device_regions_become_calls_openmp_allows() {
    // A gang-redundant region without gang loops is `target` (calls allowed); beside a gang
    // loop under `target teams` the statement runs in a one-thread `parallel`; in a parallel
    // loop the call is in a `parallel for`; the sequential kernels loop is a plain `target`.
    let src = "void f(int n, int *a) {\n#pragma acc parallel num_gangs(1) copy(a[0:1])\n  { a[0] = acc_get_num_devices(acc_device_not_host) + acc_on_device(acc_device_host); }\n#pragma acc parallel loop copy(a[0:n])\n  for (int i = 0; i < n; i++) a[i] = acc_get_num_devices(acc_device_not_host) + acc_on_device(acc_device_host);\n#pragma acc kernels loop copy(a[0:n])\n  for (int i = 0; i < n; i++) a[i] = acc_get_num_devices(acc_device_not_host) + acc_on_device(acc_device_host);\n#pragma acc parallel num_gangs(2) copy(a[0:n])\n  { a[0] = acc_get_num_devices(acc_device_not_host) + acc_on_device(acc_device_host);\n#pragma acc loop gang\n  for (int i = 1; i < n; i++) a[i] = 0; }\n}\n";
    for profile in Profile::ALL {
        let opts = Options {
            profile,
            ..Options::default()
        };
        let out = migrate_text(src, &opts);
        assert!(
            !out.text.contains("acc_"),
            "{}:\n{}",
            profile.name(),
            out.text
        );
        assert!(
            out.text.contains(
                "#pragma omp target map(tofrom: a[0:1])\n  { a[0] = omp_get_num_devices()"
            ),
            "{}:\n{}",
            profile.name(),
            out.text
        );
        assert!(
            out.text
                .contains("_Pragma(\"omp parallel num_threads(1)\") a[0] = omp_get_num_devices()"),
            "{}:\n{}",
            profile.name(),
            out.text
        );
    }
}

#[test]
fn set_directives_and_side_effects_evaluated_once() {
    let (t, _) = run(
        "void f(int *a, int q, int c) {\n#pragma acc set device_type(host)\n#pragma acc set device_num(q) device_type(nvidia)\n#pragma acc set default_async(3) if(c)\n  acc_init(acc_get_device_type());\n  acc_copyout_finalize_async(a, 4, q++);\n}\n",
    );
    let body = &t[t.find("void f").unwrap()..];
    assert_eq!(
        body,
        "void f(int *a, int q, int c) {\n#ifdef _OPENMP\nomp_set_default_device(omp_get_initial_device());\n#endif\n#ifdef _OPENMP\nomp_set_default_device(q);\n#endif\n#ifdef _OPENMP\nif (c) { acc2omp_default_async = 3; }\n#endif\n  (void)(acc2omp_get_device_type());\n  { __typeof__(q++) acc2omp_arg2 = (q++); char *acc2omp_bytes = (char *)(a); (void)acc2omp_bytes;\n  #pragma omp target update from(acc2omp_bytes[0:4]) nowait depend(inout: acc2omp_queue[(acc2omp_arg2) & 63])\n  #pragma omp target exit data map(delete: acc2omp_bytes[0:4]) nowait depend(inout: acc2omp_queue[(acc2omp_arg2) & 63])\n  }\n}\n"
    );
    for helper in [
        "ACC2OMP_QUEUES",
        "ACC2OMP_GET_DEVICE_TYPE",
        "ACC2OMP_DEVICE_KIND",
    ] {
        assert!(t.contains(&format!("#define {helper}")), "{helper}:\n{t}");
    }
    assert_eq!(migrate_text(&t, &Options::default()).text, t, "fixed point");
}

#[test]
fn helpers_go_inside_a_header_guard_after_its_includes() {
    let (t, _) = run(
        "#ifndef GRID_H\n#define GRID_H\n#include <stdlib.h>\nstatic int host(acc_device_t t) { return t == acc_device_host; }\n#endif\n",
    );
    assert!(
        t.starts_with(
            "#ifndef GRID_H\n#define GRID_H\n#include <stdlib.h>\n#ifndef ACC2OMP_DEVICE_T\n"
        ),
        "{t}"
    );
    assert!(
        t.ends_with(
            "static int host(acc2omp_device_t t) { return t == acc2omp_device_host; }\n#endif\n"
        ),
        "{t}"
    );
}

#[test]
fn regions_are_read_from_the_emitted_constructs() {
    // A `parallel` wrapper inside `teams`, and `target` alone, allow the call.
    let src = "void g(int *a) {\n#pragma omp target teams map(tofrom: a[0:2])\n#pragma omp parallel\n  { a[0] = acc_on_device(acc_device_host); }\n#pragma omp target map(tofrom: a[0:2])\n  { a[1] = acc_on_device(acc_device_host); }\n#pragma acc serial copy(a[0:2])\n  { a[1] += acc_on_device(acc_device_not_host); }\n#pragma omp target teams map(tofrom: a[0:2])\n  { a[1] += acc_on_device(acc_device_host); }\n}\n";
    let (t, _) = run(src);
    assert_eq!(t.matches("acc2omp_is_initial_device()").count(), 1, "{t}");
    assert!(
        t.contains("{ a[1] += acc2omp_is_initial_device(); }"),
        "{t}"
    );
}

#[test]
fn acc_init_of_the_host_selects_it() {
    let (t, d) = run(
        "void f(acc_device_t t) {\n  acc_init(acc_device_host);\n  acc_init(t);\n  acc_init_device(0, acc_device_host);\n  acc_init(acc_device_nvidia);\n}\n",
    );
    assert_eq!(
        t.matches("  omp_set_default_device(omp_get_initial_device());\n")
            .count(),
        2,
        "{t}"
    );
    assert!(!t.contains("acc_init"), "{t}");
    assert_eq!(
        d.iter().filter(|&&r| r == id::RUNTIME_LIFECYCLE).count(),
        4,
        "{d:?}"
    );
}

#[test]
fn deep_nesting_and_crlf() {
    let deep = "acc_free(".repeat(5000) + &")".repeat(5000) + ";";
    let _ = migrate_text(&deep, &Options::default());
    let (t, _) =
        run("void f(int q) {\r\n  acc_init(acc_device_default);\r\n  if (q) acc_wait(q);\r\n}\r\n");
    assert_eq!(
        t,
        concat!(
            "#ifndef ACC2OMP_QUEUES\r\n#define ACC2OMP_QUEUES\r\n/* acc2omp: one OpenMP dependence object per OpenACC async queue, and the queue of 'async' without argument (acc_set_default_async; -1 is acc_async_noval) */\r\n__attribute__((weak)) char acc2omp_queue[64];\r\n__attribute__((weak)) int acc2omp_default_async = -1;\r\n#endif\r\n",
            "void f(int q) {\r\n  if (q) {\r\n  #pragma omp taskwait depend(in: acc2omp_queue[(q) & 63])\r\n  }\r\n}\r\n"
        )
    );
}

#[test]
fn fill_is_single_pass() {
    assert_eq!(
        fill("f({0}, {1}) {x} {", &["\"{1}\"".into(), "b".into()]),
        "f(\"{1}\", b) {x} {"
    );
}

#[test]
fn openacc_names_the_directive_translation_moves_into_code_are_renamed() {
    // `set` arguments become code; a vendor type copied there is noted.
    let src = "void f(int c) {\n#pragma acc set default_async(acc_async_noval) if(c)\n#pragma acc set device_num(acc_device_nvidia)\n}\n";
    let (t, d) = run(src);
    assert!(
        t.contains("if (c) { acc2omp_default_async = acc2omp_async_noval; }"),
        "{t}"
    );
    assert!(t.contains("#define ACC2OMP_ASYNC_T"), "{t}");
    assert!(
        !t.contains("acc_async_noval;") && !t.contains("acc_device_nvidia"),
        "{t}"
    );
    assert!(d.contains(&id::RUNTIME_DEVICE), "{d:?}");
    assert_eq!(migrate_text(&t, &Options::default()).text, t, "fixed point");
    // Names in a wrapper-macro directive are the directive translation's, never edited twice.
    let wrapped = "#define P(x) _Pragma(#x)\nvoid f(int n, double *a) {\n  P(acc wait(acc_async_noval))\n  acc_wait(acc_async_noval);\n}\n";
    let (t, d) = run(wrapped);
    assert!(!d.contains(&id::INTERNAL_OVERLAP), "{d:?}\n{t}");
    let body = &t[t.find("void f").unwrap()..];
    assert!(!body.contains("acc_async_noval"), "{t}");
}

#[test]
fn openmp_regions_written_as_pragma_operators_or_wrappers_count() {
    // An OpenMP `teams` region in any spelling keeps OpenMP calls from directly inside it.
    for open in [
        "_Pragma(\"omp target teams\")",
        "_Pragma(u8\"omp target teams, map(tofrom: a[0:1])\")",
        "P(omp target teams map(tofrom: a[0:1]))",
    ] {
        let src = format!(
            "#define P(x) _Pragma(#x)\nvoid f(int *a) {{\n  {open}\n  {{ a[0] = acc_on_device(acc_device_host); }}\n}}\n"
        );
        let (t, _) = run(&src);
        assert!(
            t.contains("{ a[0] = acc2omp_is_initial_device(); }"),
            "{open}:\n{t}"
        );
    }
}

#[test]
fn rename_in_reads_directive_lines_and_pragma_strings() {
    let (t, v) = super::names::rename_in(
        "#pragma omp target device(acc_device_nvidia)\n_Pragma(\"x(acc_async_sync)\") \"acc_async_sync\" s.acc_async_sync /* acc_async_sync */",
    )
    .unwrap();
    assert_eq!(
        t,
        "#pragma omp target device(acc2omp_device_not_host)\n_Pragma(\"x(acc2omp_async_sync)\") \"acc_async_sync\" s.acc_async_sync /* acc_async_sync */"
    );
    assert_eq!(v, ["acc_device_nvidia"]);
    assert!(super::names::rename_in("a = b;").is_none());
}

/// The device-memory routines go through helpers that reach OpenMP's through weak references
/// (a build without the offloading runtime links, and the host is the only device); the
/// helpers are defined for OpenMP builds only, with what they use; `acc_map_data` still needs
/// the offloading runtime, and the summary says so.
#[test]
fn device_memory_links_without_the_offloading_runtime() {
    let o = migrate_text(
        "#include <openacc.h>\nint f(double *h, int n) {\n  double *d = (double *)acc_malloc(n);\n  acc_free(d);\n  return acc_is_present(h, n) + (acc_deviceptr(h) != 0);\n}\n",
        &Options::default(),
    );
    assert!(!o.offload_routines, "{}", o.text);
    assert!(!o.text.contains(" omp_target_"), "{}", o.text);
    assert!(
        o.text
            .contains("weakref(\"omp_target_is_present\")));\n__attribute__((weak)) int acc2omp_target_is_present"),
        "{}",
        o.text
    );
    // acc2omp_mapped_ptr calls no OpenMP routine itself, but uses a helper that does.
    assert!(
        o.text
            .contains("#define ACC2OMP_MAPPED_PTR\n#ifdef _OPENMP\n"),
        "{}",
        o.text
    );
    let o = migrate_text(
        "#include <openacc.h>\nvoid f(double *h, void *d, int n) { acc_map_data(h, d, n); }\n",
        &Options::default(),
    );
    assert!(o.offload_routines, "{}", o.text);
    assert!(names_routine(
        "x = omp_get_mapped_ptr(p, 0);",
        &OFFLOAD_ROUTINES
    ));
    assert!(!names_routine(
        "/* omp_target_alloc */ static void *acc2omp_omp_target_alloc(int) __attribute__((weakref(\"omp_target_alloc\")));",
        &OFFLOAD_ROUTINES
    ));
}

#[test]
fn has_and_acc_tokens() {
    assert!(has("x = acc_wait(1);", "acc_") && has("acc_", "acc_"));
    assert!(!has("#pragma acc parallel", "acc_") && !has("cc_", "acc_"));
    assert!(has("acc2omp_x", "omp_") && !has("omp target", "omp_"));
    let src = "a /* acc_x */ acc_acc_y \"acc_z\" my_acc_w\n#define M acc_v\nb";
    let toks = crate::lex::lex(src);
    let texts = |r: std::ops::Range<usize>| -> Vec<&str> {
        acc_tokens(src, &toks, r)
            .iter()
            .map(|&k| toks[k].text(src))
            .collect()
    };
    // Not the comment; a token with two `acc_` once; literals and lines too.
    assert_eq!(
        texts(0..toks.len()),
        ["acc_acc_y", "\"acc_z\"", "my_acc_w", "#define M acc_v"]
    );
    assert_eq!(texts(2..3), ["\"acc_z\""]);
    assert!(texts(0..1).is_empty() && texts(0..0).is_empty());
}

/// The passes look only at the tokens with `acc_` in them (`text::acc_tokens`): the calls,
/// names and lines that have it are all still found among many that do not, and the
/// translation is the one the same code gets without them.
#[test]
fn runtime_names_among_many_other_tokens_are_all_found() {
    let filler = "#pragma acc parallel loop copy(a[0:n])\nfor (int i = 0; i < n; i++) a[i] += 1; /* acc_wait(1) */\n"
        .repeat(40);
    let parts = [
        "#include <openacc.h>\n#define ALLOC(n) acc_malloc(n)\n#define SYNC acc_wait_all()\nvoid f(int n, double *a, acc_device_t t) {\n",
        "  double *d = (double *)ALLOC(n);\n",
        "  acc_free(acc_malloc(acc_get_num_devices(acc_device_not_host)));\n",
        "#pragma acc parallel num_gangs(acc_get_num_devices(acc_device_nvidia))\n  { }\n",
        "  if (acc_on_device(acc_device_host)) __builtin_goacc_parlevel_id(0);\n  t = acc_device_current;\n  int v = acc_property_bogus;\n",
        "}\n",
    ];
    let (plain, plain_diags) = run(&parts.concat());
    let (filled, filled_diags) = run(&parts.join(&filler));
    let filler_out = run(&format!("void g(int n, double *a) {{\n{filler}}}\n"));
    assert!(filler_out.1.is_empty(), "{:?}", filler_out.1);
    let filler_out = filler_out.0["void g(int n, double *a) {\n".len()..]
        .strip_suffix("}\n")
        .unwrap()
        .to_string();
    assert_eq!(filled.replace(&filler_out, ""), plain);
    assert_eq!(filled_diags, plain_diags);
    for rule in [
        id::RUNTIME_IN_DIRECTIVE,
        id::RUNTIME_IN_MACRO,
        id::OPENACC_CONSTANT,
    ] {
        assert!(plain_diags.contains(&rule), "{rule:?}: {plain_diags:?}");
    }
    assert!(
        plain.contains("acc2omp_target_free(acc2omp_target_alloc(omp_get_num_devices()"),
        "{plain}"
    );
}
