//! Conformance: GCC 12's OpenACC tests as an external oracle (fetched on first use, never
//! committed). Runtime tests (`libgomp.oacc-*`) that pass under `gcc -fopenacc` on the host
//! are translated and must be complete and exit 0 under `gcc -fopenmp`, `clang-19 -fopenmp`
//! and Clang's host offloading with one and with 4 teams; the compile-only `goacc` tests
//! check crashes, diagnostics and that valid files' translations compile.
//! `tests/conformance/expectations.toml` lists every test expected not to pass, with why.
//!
//! `cargo test --release --test conformance [-- FILTER]`; `ACC2OMP_BLESS=1` rewrites the
//! expectations; `ACC2OMP_CACHE_DIR` says where GCC's tests are kept.

#[path = "../common/mod.rs"]
mod common;
mod compile_only;
mod dg;
mod expectations;
mod fortran;
mod gcc_source;
mod runtime;
mod sources;

use common::cache;
use common::oracle::Build;
use expectations::{Compile, Runtime};
use libtest_mimic::{Arguments, Failed, Trial};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

fn selected(args: &Arguments, name: &str) -> bool {
    let hit = |f: &String| {
        if args.exact {
            name == f
        } else {
            name.contains(f.as_str())
        }
    };
    args.filter.as_ref().is_none_or(hit) && !args.skip.iter().any(hit)
}

fn skip_or_fail(why: &str) -> ! {
    if common::required() {
        panic!("conformance: ACC2OMP_REQUIRE_TOOLS=1 but {why}");
    }
    eprintln!("\n!!! SKIPPED conformance: {why}\n");
    libtest_mimic::run(&Arguments::from_args(), Vec::new()).exit()
}

fn main() {
    let args = Arguments::from_args();
    if !common::compilers("conformance") {
        libtest_mimic::run(&args, Vec::new()).exit();
    }
    let root = match gcc_source::tree()
        .and_then(|r| std::fs::canonicalize(r).map_err(|e| e.to_string()))
    {
        Ok(r) => r,
        Err(e) => skip_or_fail(&format!("GCC's tests are not available: {e}")),
    };
    cache::prune(14);
    let (expect, load_error) = match expectations::load() {
        Ok(f) => (f, None),
        Err(e) => (expectations::File::default(), Some(e)),
    };
    // Results depend on the libclang loaded (clang's OpenACC checks come with 21+): compare
    // only with the one the expectations were recorded with.
    let loaded = acc2omp::semantic::preload(&acc2omp::semantic::SemanticConfig::default());
    let major = loaded.as_deref().ok().and_then(common::libclang_major);
    if let Some(want) = expect.libclang.filter(|&w| Some(w) != major) {
        skip_or_fail(&format!(
            "expectations.toml is recorded with libclang {want}, this run has {} (install libclang1-{want}, or LIBCLANG_PATH)",
            loaded.unwrap_or_else(|e| format!("no libclang ({e})"))
        ));
    }
    let (all_rt, not_host) = runtime::discover(&root);
    let all_ct = compile_only::discover(&root);
    let rname = |t: &runtime::Test| format!("runtime/{} [{}]", t.name, t.lang());
    let cname = |t: &compile_only::Test| format!("compile/{} [{}]", t.name, t.lang());
    let rt: Vec<&runtime::Test> = all_rt
        .iter()
        .filter(|t| selected(&args, &rname(t)))
        .collect();
    let ct: Vec<&compile_only::Test> = all_ct
        .iter()
        .filter(|t| selected(&args, &cname(t)))
        .collect();
    let filtered = rt.len() < all_rt.len() || ct.len() < all_ct.len();

    let threads = args
        .test_threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, usize::from));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let done = AtomicUsize::new(0);
    let total = rt.len() + ct.len();
    let progress = || {
        let k = done.fetch_add(1, Ordering::Relaxed) + 1;
        if k.is_multiple_of(50) || k == total {
            eprintln!("conformance: {k}/{total} tests checked");
        }
    };
    let find_rt = |t: &runtime::Test| {
        expect
            .runtime
            .iter()
            .find(|e| e.test == t.name && e.lang == t.lang())
    };
    let rt_out: Vec<runtime::Outcome> = pool.install(|| {
        rt.par_iter()
            .map(|t| {
                let wrong: Vec<&str> = find_rt(t)
                    .map(|e| {
                        e.builds
                            .iter()
                            .filter(|(_, s)| *s == "wrong")
                            .map(|(b, _)| b.as_str())
                            .collect()
                    })
                    .unwrap_or_default();
                let o = runtime::check(&root, t, &wrong);
                progress();
                o
            })
            .collect()
    });
    let ct_out: Vec<compile_only::Outcome> = pool.install(|| {
        ct.par_iter()
            .map(|t| {
                let o = compile_only::check(&root, t);
                progress();
                o
            })
            .collect()
    });

    let actual_rt: Vec<Option<Runtime>> = rt
        .iter()
        .zip(&rt_out)
        .map(|(t, o)| runtime_entry(t, o, find_rt(t)))
        .collect();
    let find_ct = |t: &compile_only::Test| {
        expect
            .compile
            .iter()
            .find(|e| e.test == t.name && e.lang == t.lang())
    };
    let actual_ct: Vec<Option<Compile>> = ct
        .iter()
        .zip(&ct_out)
        .map(|(t, o)| compile_entry(t, o, find_ct(t)))
        .collect();
    summary(all_rt.len() + not_host, &rt, &rt_out, &ct_out);

    let mut expect = expect;
    if expectations::bless() && load_error.is_none() {
        expect.libclang = major;
        let ran = |test: &str, lang: &str| {
            rt.iter().any(|t| t.name == test && t.lang() == lang)
                || ct.iter().any(|t| t.name == test && t.lang() == lang)
        };
        expect.runtime.retain(|e| !ran(&e.test, &e.lang));
        expect.runtime.extend(actual_rt.iter().flatten().cloned());
        expect
            .runtime
            .sort_by(|a, b| (&a.test, &a.lang).cmp(&(&b.test, &b.lang)));
        expect.compile.retain(|e| !ran(&e.test, &e.lang));
        expect.compile.extend(actual_ct.iter().flatten().cloned());
        expect
            .compile
            .sort_by(|a, b| (&a.test, &a.lang).cmp(&(&b.test, &b.lang)));
        std::fs::write(expectations::path(), expectations::render(&expect)).unwrap();
        eprintln!("conformance: blessed {}", expectations::path().display());
    }

    let mut trials = vec![Trial::test("dg/selectors", || {
        dg::self_check().map_err(Failed::from)
    })];
    let mut file_errors: Vec<String> = load_error.into_iter().collect();
    if !filtered {
        for e in &expect.runtime {
            let known = rt_out
                .iter()
                .zip(&rt)
                .any(|(o, t)| t.name == e.test && t.lang() == e.lang && o.reference.is_ok());
            if !known {
                file_errors.push(format!(
                    "[[runtime]] {} [{}] is not in the reference set",
                    e.test, e.lang
                ));
            }
        }
        for e in &expect.compile {
            if !ct.iter().any(|t| t.name == e.test && t.lang() == e.lang) {
                file_errors.push(format!("[[compile]] {} [{}] is not a test", e.test, e.lang));
            }
        }
    }
    trials.push(Trial::test("expectations.toml", move || {
        if file_errors.is_empty() {
            Ok(())
        } else {
            Err(file_errors.join("\n").into())
        }
    }));
    for ((t, o), actual) in rt.iter().zip(&rt_out).zip(actual_rt) {
        if o.reference.is_err() {
            continue;
        }
        let expected = find_runtime(&expect, t).cloned();
        trials.push(Trial::test(rname(t), move || {
            compare_runtime(expected.as_ref(), actual.as_ref()).map_err(Failed::from)
        }));
    }
    for ((t, o), actual) in ct.iter().zip(&ct_out).zip(actual_ct) {
        let crash = o.crash.clone();
        let expected = expect
            .compile
            .iter()
            .find(|e| e.test == t.name && e.lang == t.lang())
            .cloned();
        trials.push(Trial::test(cname(t), move || {
            if let Some(c) = crash {
                return Err(format!("the tool crashed or hung: {c}").into());
            }
            compare_compile(expected.as_ref(), actual.as_ref()).map_err(Failed::from)
        }));
    }
    if common::fortran::tools("conformance (Fortran)") {
        trials.extend(fortran::trials(
            &root,
            &|name| selected(&args, name),
            &pool,
            expectations::bless(),
        ));
    }
    libtest_mimic::run(&args, trials).exit();
}

fn find_runtime<'a>(f: &'a expectations::File, t: &runtime::Test) -> Option<&'a Runtime> {
    f.runtime
        .iter()
        .find(|e| e.test == t.name && e.lang == t.lang())
}

/// The entry a test's outcome calls for (`None`: it passes).
fn runtime_entry(
    t: &runtime::Test,
    o: &runtime::Outcome,
    old: Option<&Runtime>,
) -> Option<Runtime> {
    if o.reference.is_err() || o.passes() {
        return None;
    }
    let builds: BTreeMap<String, String> = o
        .builds
        .iter()
        .filter(|(_, s)| **s != runtime::Status::Pass)
        .map(|(b, s)| (b.to_string(), s.word().to_string()))
        .collect();
    let detail = o
        .crash
        .clone()
        .or_else(|| {
            o.leftover
                .as_ref()
                .map(|l| format!("left: {}", one_line(l)))
        })
        .or_else(|| o.gcc_builtin.as_ref().map(|b| format!("calls {b}")))
        .or_else(|| {
            o.builds.iter().find_map(|(b, s)| match s {
                runtime::Status::Pass => None,
                runtime::Status::Rejected(e) | runtime::Status::Wrong(e) => {
                    Some(format!("{b}: {}", one_line(e)))
                }
            })
        })
        .unwrap_or_default();
    Some(Runtime {
        test: t.name.clone(),
        lang: t.lang().into(),
        class: o.class().into(),
        builds,
        rules: o.rules.clone(),
        detail,
        limits: Vec::new(),
        reason: old.map(|e| e.reason.clone()).unwrap_or_default(),
    })
}

fn compile_entry(
    t: &compile_only::Test,
    o: &compile_only::Outcome,
    old: Option<&Compile>,
) -> Option<Compile> {
    if o.missing.is_empty() && o.rejected_by.is_empty() {
        return None;
    }
    Some(Compile {
        test: t.name.clone(),
        lang: t.lang().into(),
        missing_diagnostics: o.missing.clone(),
        rejected_by: o.rejected_by.iter().map(|(w, _)| w.to_string()).collect(),
        untranslated: 0,
        long_lines: Vec::new(),
        detail: o
            .rejected_by
            .first()
            .map(|(w, e)| format!("{w}: {}", one_line(e)))
            .unwrap_or_default(),
        reason: old.map(|e| e.reason.clone()).unwrap_or_default(),
    })
}

fn one_line(s: &str) -> String {
    let l = s.lines().next().unwrap_or("").trim();
    l.chars().take(160).collect()
}

const BLESS: &str = "(if intended: ACC2OMP_BLESS=1 cargo test --release --test conformance)";

fn compare_runtime(expected: Option<&Runtime>, actual: Option<&Runtime>) -> Result<(), String> {
    match (expected, actual) {
        (None, None) => Ok(()),
        (Some(e), None) => Err(format!(
            "listed as {} in expectations.toml but now passes in every build: remove its entry {BLESS}",
            e.class
        )),
        (None, Some(a)) => Err(format!(
            "regression: {} (builds {:?}, rules {:?}): {}",
            a.class, a.builds, a.rules, a.detail
        )),
        (Some(e), Some(a)) if e.class == a.class && e.builds == a.builds => Ok(()),
        (Some(e), Some(a)) => Err(format!(
            "expected {} with builds {:?}, got {} with builds {:?}: {} {BLESS}",
            e.class, e.builds, a.class, a.builds, a.detail
        )),
    }
}

fn compare_compile(expected: Option<&Compile>, actual: Option<&Compile>) -> Result<(), String> {
    let key = |c: Option<&Compile>| {
        c.map(|c| {
            (
                c.missing_diagnostics.clone(),
                c.rejected_by.clone(),
                c.untranslated,
                c.long_lines.clone(),
            )
        })
        .unwrap_or_default()
    };
    if key(expected) == key(actual) {
        return Ok(());
    }
    let (em, er, eu, el) = key(expected);
    let (am, ar, au, al) = key(actual);
    let mut extra = String::new();
    if (eu, &el) != (au, &al) {
        extra = format!(" (untranslated directives {eu} -> {au}, long lines {el:?} -> {al:?})");
    }
    Err(format!(
        "expected missing diagnostics at lines {em:?} and rejections by {er:?}, got {am:?} and {ar:?}{extra} {}{BLESS}",
        actual
            .map(|a| format!("({}) ", a.detail))
            .unwrap_or_default()
    ))
}

fn summary(
    candidates: usize,
    rt: &[&runtime::Test],
    out: &[runtime::Outcome],
    ct_out: &[compile_only::Outcome],
) {
    let refset: Vec<(&&runtime::Test, &runtime::Outcome)> = rt
        .iter()
        .zip(out)
        .filter(|(_, o)| o.reference.is_ok())
        .collect();
    let n = refset.len();
    let cxx = refset.iter().filter(|(t, _)| t.cxx).count();
    println!(
        "\nconformance: runtime tests: {candidates} candidates, {} run on the host, {n} pass under gcc -fopenacc (the reference set: {} C, {cxx} C++)",
        rt.len(),
        n - cxx
    );
    let line = |what: &str, ok: usize| println!("  {what:<32} {ok} passed, {} failed", n - ok);
    for (b, what) in [
        (Build::Gcc, "gcc -fopenmp:"),
        (Build::ClangHost, "clang-19 -fopenmp (host):"),
        (Build::ClangOffload, "clang-19 offload, 1 team:"),
        (Build::ClangOffload4Teams, "clang-19 offload, 4 teams:"),
    ] {
        line(what, refset.iter().filter(|(_, o)| o.passes_in(b)).count());
    }
    line(
        "all four builds:",
        refset.iter().filter(|(_, o)| o.passes()).count(),
    );
    let mut classes: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, o) in &refset {
        if !o.passes() {
            *classes.entry(o.class()).or_default() += 1;
        }
    }
    let by_class: Vec<String> = expectations::CLASSES
        .iter()
        .filter_map(|(c, _)| classes.get(c).map(|k| format!("{c} {k}")))
        .collect();
    println!("  failures by class: {}", by_class.join(", "));
    let reported: usize = ct_out.iter().map(|o| o.reported.len()).sum();
    let missing: usize = ct_out.iter().map(|o| o.missing.len()).sum();
    let valid = ct_out.iter().filter(|o| o.valid).count();
    let by = |w: &str| {
        ct_out
            .iter()
            .filter(|o| o.rejected_by.iter().any(|(x, _)| *x == w))
            .count()
    };
    println!(
        "conformance: compile-only tests: {} (file x language), {} crashes or hangs; {reported} expected errors gcc reports, {} diagnosed within 2 lines, {missing} not; {valid} valid files, translation rejected by gcc {}, by clang {}\n",
        ct_out.len(),
        ct_out.iter().filter(|o| o.crash.is_some()).count(),
        reported - missing,
        by("gcc"),
        by("clang")
    );
}
