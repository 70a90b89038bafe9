//! No input makes the tool panic, hang, lose bytes or change its own output.
//!
//! Two sources of inputs, both deterministic (fixed seeds; `ACC2OMP_FUZZ_SEED` changes them,
//! `ACC2OMP_FUZZ_ROUNDS` sets how many, see docs/testing.md for a longer run):
//! - every fixture input and program, mutated (truncated, bytes deleted, duplicated, or
//!   replaced by tokens that stress the scanner and the directive parser);
//! - generated programs: random OpenACC 3.3 directives and clauses from `rules/*.toml`,
//!   nested constructs, `_Pragma` (also with string prefixes and in wrapper macros), `\`
//!   continuations, comments in directives, `#if 0` blocks, runtime calls, `data` regions
//!   around asynchronous work (braced or not, a comment or code after the body), Latin-1
//!   bytes, BOM, CRLF and CR-only line ends, and some malformed clauses.
//!
//! Every input is translated in syntactic mode, and one in `CLANG_EVERY` with libclang too
//! (its parse costs tens of milliseconds; libclang is required in CI, skipped loudly
//! elsewhere), on a thread that must finish within `TIME_BOUND` (a bound against hangs, not
//! a speed test), without a panic; translating the output again in the same mode must change
//! nothing, also when errors were reported (a directive with an error is left as it is). For
//! generated programs, the code tokens outside directives must all be in the output in order
//! (only runtime calls and openacc.h lines may change), and a batch goes through the command
//! line: `--diff` applied with `git apply` must give what `--write` writes.

mod common;

use acc2omp::lex::{TokKind, Token, lex};
use acc2omp::options::Emit;
use acc2omp::profile::Profile;
use acc2omp::rules::id;
use acc2omp::rules::{ArgPresence, Severity, Tables};
use acc2omp::scan::find_sites;
use acc2omp::semantic::{Mode, SemanticConfig};
use acc2omp::{FileOutcome, Options, migrate_bytes};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// A translation that takes longer is taken for a hang.
const TIME_BOUND: Duration = Duration::from_secs(10);

/// One input in this many is also translated with libclang.
const CLANG_EVERY: usize = 6;

/// Where a translation takes its facts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Facts {
    Syntax,
    /// libclang, in this process.
    Clang,
}

impl Facts {
    fn config(self) -> SemanticConfig {
        match self {
            Facts::Syntax => SemanticConfig::syntactic(),
            Facts::Clang => SemanticConfig::default(),
        }
    }

    /// The modes input number `k` is translated in.
    fn for_input(k: usize, clang: bool) -> &'static [Facts] {
        if clang && k.is_multiple_of(CLANG_EVERY) {
            &[Facts::Syntax, Facts::Clang]
        } else {
            &[Facts::Syntax]
        }
    }
}

/// Whether libclang loads here (a loud skip of its half otherwise; a failure in CI).
fn with_clang(test: &str) -> bool {
    common::libclang(&format!("{test} with libclang"))
}

fn rounds(default: usize) -> usize {
    std::env::var("ACC2OMP_FUZZ_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn seed() -> u64 {
    std::env::var("ACC2OMP_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x9e37_79b9_7f4a_7c15u64)
}

/// xorshift64*: deterministic and dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const TOKENS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    "\\\n",
    "\\",
    "\"",
    "'",
    "/*",
    "*/",
    "//",
    "\n",
    "\r\n",
    "\r",
    "#pragma acc ",
    "# pragma acc parallel loop ",
    "_Pragma(\"acc ",
    "\")",
    "#pragma acc loop gang ",
    "#pragma acc data copy(",
    "#pragma acc wait",
    "#pragma acc end",
    "#if 0\n",
    "#endif\n",
    "#define P(x) _Pragma(#x)\n",
    "copy(",
    "present(",
    "reduction(+:",
    "reduction(",
    "async(",
    "wait(",
    "device_type(",
    "collapse(",
    "tile(",
    "gang(num:",
    "acc_malloc(",
    "acc_copyin(",
    "acc_wait(",
    "acc_get_num_devices(",
    "openacc.h",
    "_OPENACC",
    "for (int i = 0; i < n; i++)",
    "for (;;)",
    "é",
    "\u{feff}",
    "\t",
    "\0",
    "\\\r\n",
];

fn corpus() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if (p.file_stem().is_some_and(|s| s == "input")
                || (p.parent().is_some_and(|d| d.ends_with("programs"))
                    && p.extension().is_some_and(|x| x == "c" || x == "cpp"))
                || (p.parent().is_some_and(|d| d.ends_with("programs/fortran"))
                    && p.extension().is_some_and(|x| {
                        ["f90", "F90", "f", "F"].contains(&x.to_str().unwrap_or(""))
                    })))
                && let Ok(t) = std::fs::read_to_string(&p)
            {
                out.push((p, t));
            }
        }
    }
    out.sort();
    out
}

fn floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut s = text.to_string();
    for _ in 0..1 + rng.below(4) {
        let at = floor(&s, rng.below(s.len() + 1));
        match rng.below(5) {
            0 => s.truncate(at),
            1 => {
                let end = floor(&s, at + 1 + rng.below(40));
                s.replace_range(at..end.max(at), "");
            }
            2 => {
                let end = floor(&s, at + rng.below(80));
                let piece = s[at..end.max(at)].to_string();
                s.insert_str(at, &piece);
            }
            _ => s.insert_str(at, TOKENS[rng.below(TOKENS.len())]),
        }
    }
    s
}

/// One translation on its own thread: Err says why it failed (panic or over `TIME_BOUND`).
fn translate_bounded(
    input: &[u8],
    path: &Path,
    opts: &Options,
    facts: Facts,
) -> Result<FileOutcome, String> {
    let (tx, rx) = mpsc::channel();
    let (input, path, opts) = (input.to_vec(), path.to_path_buf(), opts.clone());
    std::thread::spawn(move || {
        let sem = facts.config();
        let r = std::panic::catch_unwind(|| migrate_bytes(&input, Some(&path), &opts, &sem));
        let _ = tx.send(r);
    });
    match rx.recv_timeout(TIME_BOUND) {
        Ok(Ok(Ok(out))) => Ok(out),
        Ok(Ok(Err(d))) => Err(format!("not translated: {}", d.message)),
        Ok(Err(_)) => Err("panic".into()),
        Err(_) => Err(format!("no result within {TIME_BOUND:?}")),
    }
}

/// Translate `input` twice: the second run must change nothing. Returns the first outcome.
fn fixed_point(
    input: &[u8],
    path: &Path,
    opts: &Options,
    facts: Facts,
) -> Result<FileOutcome, String> {
    let first = translate_bounded(input, path, opts, facts)?;
    let again = translate_bounded(&first.output, path, opts, facts)
        .map_err(|e| format!("on the output: {e}"))?;
    if again.output != first.output {
        let errors = first
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| format!("{} [{}]", d.message, d.rule))
            .collect::<Vec<_>>();
        return Err(format!(
            "the output is not a fixed point (errors of the first run: {errors:?})\n--- output\n{}\n--- again\n{}",
            String::from_utf8_lossy(&first.output),
            String::from_utf8_lossy(&again.output)
        ));
    }
    Ok(first)
}

fn report(kind: &str, runs: usize, failures: &[String]) {
    // ACC2OMP_FUZZ_DUMP=DIR keeps every failure for study.
    if let Ok(dir) = std::env::var("ACC2OMP_FUZZ_DUMP") {
        std::fs::create_dir_all(&dir).unwrap();
        for (i, f) in failures.iter().enumerate() {
            std::fs::write(Path::new(&dir).join(format!("{kind}-{i}.txt")), f).unwrap();
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {runs} {kind} inputs failed; first:\n{}",
        failures.len(),
        failures[0]
    );
}

#[test]
fn mutated_inputs_never_panic_and_outputs_are_fixed_points() {
    let rounds = rounds(12);
    let clang = with_clang("mutated inputs");
    let mut rng = Rng(seed() | 1);
    let mut failures = Vec::new();
    let (mut runs, mut clang_runs) = (0, 0);
    for (path, text) in corpus() {
        for round in 0..rounds {
            let mut input = mutate(&mut rng, &text).into_bytes();
            if rng.below(8) == 0 {
                // A byte that is not UTF-8 (Latin-1 é).
                let at = rng.below(input.len() + 1);
                input.insert(at, 0xE9);
            }
            let profile = [Profile::Default, Profile::Clacc, Profile::Loop][round % 3];
            let opts = Options {
                profile,
                ..Options::default()
            };
            for &facts in Facts::for_input(runs, clang) {
                clang_runs += usize::from(facts == Facts::Clang);
                if let Err(e) = fixed_point(&input, &path, &opts, facts) {
                    failures.push(format!(
                        "{} round {round} ({}, {facts:?}): {e}\n--- input\n{}",
                        path.display(),
                        profile.name(),
                        String::from_utf8_lossy(&input)
                    ));
                }
            }
            runs += 1;
        }
    }
    assert!(runs > 500, "corpus too small: {runs} runs");
    eprintln!("mutated: {runs} inputs, {clang_runs} of them with libclang too");
    report("mutated", runs + clang_runs, &failures);
}

/// Generated programs and mutated fixtures in each `--emit` mode: no panic, the mode's output
/// is a fixed point, and `--emit omp` on it gives what `--emit omp` gives on the input.
#[test]
fn emit_modes_read_back_on_hostile_inputs() {
    let modes = [Emit::Dual, Emit::OmpAcc, Emit::AccOmp];
    let mut rng = Rng(seed().rotate_left(29) | 1);
    let mut inputs: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    for (path, text) in corpus() {
        inputs.push((path, mutate(&mut rng, &text).into_bytes()));
    }
    let dir = tempfile::tempdir().unwrap();
    for round in 0..rounds(12) * 10 {
        inputs.push((dir.path().join(format!("g{round}.c")), Gen::file(&mut rng)));
    }
    let clang = with_clang("--emit modes");
    let mut failures = Vec::new();
    let mut runs = 0;
    for (k, (path, input)) in inputs.iter().enumerate() {
        let mode = modes[k % modes.len()];
        let opts = Options {
            emit: mode,
            ..Options::default()
        };
        for &facts in Facts::for_input(k, clang) {
            runs += 1;
            let show = |e: &str| {
                format!(
                    "{} (--emit {}, {facts:?}): {e}\n--- input\n{}",
                    path.display(),
                    mode.name(),
                    String::from_utf8_lossy(input)
                )
            };
            let out = match fixed_point(input, path, &opts, facts) {
                Ok(out) => out,
                Err(e) => {
                    failures.push(show(&e));
                    continue;
                }
            };
            let omp = |bytes: &[u8]| translate_bounded(bytes, path, &Options::default(), facts);
            match (omp(input), omp(&out.output)) {
                (Ok(a), Ok(b)) if a.output == b.output => {}
                (Ok(a), Ok(b)) => failures.push(show(&format!(
                    "--emit omp on the output differs from --emit omp on the input\n--- output\n{}\n--- omp of the input\n{}\n--- omp of the output\n{}",
                    String::from_utf8_lossy(&out.output),
                    String::from_utf8_lossy(&a.output),
                    String::from_utf8_lossy(&b.output)
                ))),
                (a, b) => failures.push(show(&format!("{:?} / {:?}", a.err(), b.err()))),
            }
        }
    }
    report("emit", runs, &failures);
}

/// Plausible OpenACC C/C++ from the grammar in `rules/*.toml`.
struct Gen<'r> {
    rng: &'r mut Rng,
    out: String,
    depth: usize,
    /// Use the wrapper macro `P(acc …)` (defined in the prologue).
    wrapper: bool,
}

const SECTIONS: [&str; 8] = [
    "a[0:n]",
    "b[1:n-1]",
    "c[:n]",
    "a",
    "x[0:100]",
    "s",
    "b[i]",
    "a[0:n], b[0:n]",
];

impl Gen<'_> {
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.rng.below(xs.len())]
    }

    fn chance(&mut self, one_in: usize) -> bool {
        self.rng.below(one_in) == 0
    }

    /// A clause's argument list, shaped for the clause.
    fn clause_arg(&mut self, name: &str, modifiers: &[String]) -> String {
        let expr = [
            "n",
            "4",
            "n / 2 + 1",
            "(int) s",
            "128",
            "q",
            "acc_async_noval",
            "2",
        ];
        match name {
            "reduction" => {
                let op = *self.pick(&["+", "*", "max", "min", "&", "|", "^", "&&", "||"]);
                format!("{op}:{}", self.pick(&["s", "t", "s, t"]))
            }
            "default" => self.pick(&["none", "present"]).to_string(),
            "collapse" => self.pick(&["1", "2", "force:2"]).to_string(),
            "tile" => self.pick(&["4", "8, 8", "*"]).to_string(),
            "device_type" | "dtype" => self.pick(&["nvidia", "*", "radeon, host"]).to_string(),
            "gang" => self.pick(&["num:4", "static:*", "8", "dim:1"]).to_string(),
            "wait" => self.pick(&["1", "devnum:0:queues:1, 2", "q"]).to_string(),
            "if" | "self" => self.pick(&["n > 10", "s", "1"]).to_string(),
            "private" | "firstprivate" => self.pick(&["t", "s", "t, u"]).to_string(),
            "use_device" => self.pick(&["a", "b"]).to_string(),
            "deviceptr" | "attach" | "detach" => self.pick(&["a", "b"]).to_string(),
            "device_num" | "default_async" => self.pick(&expr).to_string(),
            "bind" => self.pick(&["g", "\"h\""]).to_string(),
            _ if !modifiers.is_empty() && self.chance(4) => {
                let m = self.pick(modifiers).clone();
                let list = self.pick(&SECTIONS).to_string();
                if m == "op" {
                    format!("+:{list}")
                } else {
                    format!("{m}:{list}")
                }
            }
            _ if name.starts_with("num_")
                || name == "vector_length"
                || name == "async"
                || name == "worker"
                || name == "vector" =>
            {
                self.pick(&expr).to_string()
            }
            _ => self.pick(&SECTIONS).to_string(),
        }
    }

    /// Text after `acc` for `directive`: its clauses, some of them malformed.
    fn directive_text(&mut self, directive: &str) -> String {
        let t = Tables::builtin();
        let parts: Vec<&str> = directive.split(' ').collect();
        let allowed: Vec<_> = t
            .clauses
            .iter()
            .filter(|c| {
                c.on.iter()
                    .any(|o| o == directive || parts.contains(&o.as_str()))
            })
            .collect();
        let mut text = directive.to_string();
        let rule = t.directive(directive);
        if rule.is_some_and(|r| r.arg == ArgPresence::Required)
            || (rule.is_some_and(|r| r.arg == ArgPresence::Optional) && self.chance(2))
        {
            let arg = match directive {
                "cache" => "a[i:4]",
                "routine" => "g",
                _ => *self.pick(&["1", "q, 2", "devnum:0:queues:1"]),
            };
            text.push_str(&format!("({arg})"));
        }
        for _ in 0..self.rng.below(4) {
            if allowed.is_empty() {
                break;
            }
            let c = *self.pick(&allowed);
            let name = if !c.aliases.is_empty() && self.chance(4) {
                self.pick(&c.aliases).clone()
            } else {
                c.name.clone()
            };
            let sep = match self.rng.below(12) {
                0 => " \\\n    ".to_string(),
                1 => " /* note é */ ".to_string(),
                2 => ", ".to_string(),
                _ => " ".to_string(),
            };
            text.push_str(&sep);
            text.push_str(&name);
            let with_arg = match c.args {
                ArgPresence::Required => true,
                ArgPresence::Optional => self.chance(2),
                ArgPresence::None => self.chance(30),
            };
            if with_arg {
                let arg = self.clause_arg(&name, &c.modifiers);
                text.push_str(&format!("({arg})"));
            }
        }
        if self.chance(25) {
            let bad = *self.pick(&[" bogus", " copy(", " reduction(:s)", " gang(num:)"]);
            text.push_str(bad);
        }
        text
    }

    /// A directive line in one of its forms.
    fn directive(&mut self, text: &str) {
        let form = self.rng.below(10);
        let pad = "  ".repeat(self.depth);
        if form == 0 && !text.contains('\\') && !text.contains('"') {
            let prefix = *self.pick(&["", "L", "u8", "u", "U"]);
            self.out
                .push_str(&format!("{pad}_Pragma({prefix}\"acc {text}\")\n"));
        } else if form == 1 && self.wrapper && !text.contains('\\') && !text.contains("/*") {
            self.out.push_str(&format!("{pad}P(acc {text})\n"));
        } else if form == 2 {
            self.out
                .push_str(&format!("{pad}#  pragma   acc {text} // trailing\n"));
        } else {
            self.out.push_str(&format!("{pad}#pragma acc {text}\n"));
        }
    }

    fn runtime_call(&mut self) {
        let t = Tables::builtin();
        let r = self.pick(&t.runtime);
        let args: Vec<&str> = (0..r.args)
            .map(|k| match k {
                0 if r.name.contains("copy")
                    || r.name.contains("create")
                    || r.name.contains("delete")
                    || r.name.contains("update")
                    || r.name.contains("present") =>
                {
                    "a"
                }
                _ => *self.pick(&[
                    "n * sizeof(double)",
                    "acc_device_nvidia",
                    "0",
                    "q",
                    "acc_async_noval",
                    "b",
                ]),
            })
            .collect();
        let call = format!("{}({})", r.name, args.join(", "));
        let pad = "  ".repeat(self.depth);
        match self.rng.below(4) {
            0 => self.out.push_str(&format!("{pad}s += {call};\n")),
            1 => self.out.push_str(&format!("{pad}if (n > 2) {call};\n")),
            _ => self.out.push_str(&format!("{pad}{call};\n")),
        }
    }

    fn statement(&mut self) {
        let t = Tables::builtin();
        let pad = "  ".repeat(self.depth);
        match self.rng.below(12) {
            0..=4 if self.depth < 5 => self.construct(),
            5 | 6 => {
                let standalone: Vec<&str> = t
                    .directives
                    .iter()
                    .filter(|d| !d.stmt && d.name != "routine" && d.name != "declare")
                    .map(|d| d.name.as_str())
                    .collect();
                let d = *self.pick(&standalone);
                let text = self.directive_text(d);
                self.directive(&text);
            }
            7 => self.runtime_call(),
            8 if self.depth < 5 => {
                self.out.push_str(&format!("{pad}if (n > 1)\n"));
                self.depth += 1;
                self.statement();
                self.depth -= 1;
            }
            9 => {
                self.out.push_str("#if 0\n");
                let text = self.directive_text("parallel loop");
                self.directive(&text);
                self.for_loop();
                self.out.push_str("#endif\n");
            }
            10 if self.depth < 5 => self.block(),
            11 if self.depth < 5 && self.chance(2) => self.async_in_data(),
            _ => self
                .out
                .push_str(&format!("{pad}s = s * 2 + a[0]; /* caf\u{e9} */\n")),
        }
    }

    /// A directive taking a statement, and its statement: a loop, a block, or (unbraced)
    /// another such construct.
    fn construct(&mut self) {
        let t = Tables::builtin();
        let with_stmt: Vec<&str> = t
            .directives
            .iter()
            .filter(|d| d.stmt)
            .map(|d| d.name.as_str())
            .collect();
        let d = *self.pick(&with_stmt);
        let text = self.directive_text(d);
        self.directive(&text);
        if d.contains("loop") || self.chance(2) {
            self.for_loop();
        } else if self.depth < 5 && self.chance(3) {
            self.depth += 1;
            self.construct();
            self.depth -= 1;
        } else {
            self.block();
        }
    }

    /// Asynchronous work in a structured `data` region, its body braced or not: the region
    /// must wait for it before its data is copied back, or stay OpenACC.
    fn async_in_data(&mut self) {
        let data = format!(
            "data {}",
            self.pick(&[
                "copy(a[0:n])",
                "copyout(b[0:n]) present(a)",
                "create(c[:n]) async(1)"
            ])
        );
        self.directive(&data);
        let braced = self.chance(2);
        let pad = "  ".repeat(self.depth);
        if braced {
            self.out.push_str(&format!("{pad}{{\n"));
        }
        self.depth += 1;
        let queue = *self.pick(&["", "(3)", "(q)", "(acc_async_noval)", "(acc_async_sync)"]);
        let compute = format!(
            "{} async{queue}",
            self.pick(&["parallel loop", "kernels loop", "serial loop gang"])
        );
        self.directive(&compute);
        self.for_loop();
        if braced && self.chance(2) {
            let text = self.directive_text("wait");
            self.directive(&text);
        }
        self.depth -= 1;
        if braced {
            self.out.push_str(&format!("{pad}}}\n"));
        }
    }

    fn for_loop(&mut self) {
        let pad = "  ".repeat(self.depth);
        let v = ["i", "j", "k"][self.depth % 3];
        if self.chance(3) {
            self.out
                .push_str(&format!("{pad}for ({v} = 0; {v} < n; {v}++)\n"));
        } else {
            self.out
                .push_str(&format!("{pad}for (int {v} = 0; {v} < n; ++{v})\n"));
        }
        if self.depth < 5 && self.chance(2) {
            self.block();
        } else {
            // What shares the body's last line: nothing, a comment, other code.
            let rest = *self.pick(&["", "", " // caf\u{e9}", " /* end */", " s += 1;"]);
            self.out
                .push_str(&format!("{pad}  a[{v}] = b[{v}] + s;{rest}\n"));
        }
    }

    fn block(&mut self) {
        let pad = "  ".repeat(self.depth);
        self.out.push_str(&format!("{pad}{{\n"));
        self.depth += 1;
        for _ in 0..1 + self.rng.below(3) {
            self.statement();
        }
        self.depth -= 1;
        self.out.push_str(&format!("{pad}}}\n"));
    }

    /// A whole file, in bytes (Latin-1 or UTF-8 comments, LF, CRLF or CR-only lines).
    fn file(rng: &mut Rng) -> Vec<u8> {
        let mut g = Gen {
            rng,
            out: String::new(),
            depth: 0,
            wrapper: false,
        };
        if g.chance(10) {
            g.out.push('\u{feff}');
        }
        if g.chance(2) {
            g.out.push_str("#include <openacc.h>\n");
        }
        g.out.push_str("#include <stdio.h>\n");
        if g.chance(2) {
            g.out.push_str("#define P(x) _Pragma(#x)\n");
            g.wrapper = true;
        }
        if g.chance(4) {
            g.out
                .push_str("#ifdef _OPENACC\n#define Q acc_async_noval\n#endif\n");
        }
        if g.chance(4) {
            let text = g.directive_text("routine");
            g.directive(&text);
            g.out.push_str("double g(double v) { return v * 2; }\n");
        }
        if g.chance(4) {
            g.out
                .push_str("double x[100];\n#pragma acc declare create(x)\n");
        }
        g.out.push_str("void f(int n, int q, double *a, double *b, double *c) {\n  double s = 0, t = 1, u = 2;\n  int i, j, k;\n");
        g.depth = 1;
        for _ in 0..2 + g.rng.below(6) {
            g.statement();
        }
        g.out.push_str("  printf(\"%f\\n\", s + t + u);\n}\n");
        let mut bytes = g.out.into_bytes();
        if g.rng.below(3) == 0 {
            // Latin-1: é as one byte.
            let mut latin1 = Vec::with_capacity(bytes.len());
            let mut k = 0;
            while k < bytes.len() {
                if bytes[k..].starts_with("é".as_bytes()) {
                    latin1.push(0xE9);
                    k += 2;
                } else {
                    latin1.push(bytes[k]);
                    k += 1;
                }
            }
            bytes = latin1;
        }
        match g.rng.below(6) {
            0 => replace_lf(&bytes, b"\r\n"),
            1 => replace_lf(&bytes, b"\r"),
            _ => bytes,
        }
    }
}

fn replace_lf(bytes: &[u8], with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() * 2);
    for &b in bytes {
        if b == b'\n' {
            out.extend_from_slice(with);
        } else {
            out.push(b);
        }
    }
    out
}

/// Code tokens outside directives, as text: what the translation must keep, in order.
/// Left out: directive sites, preprocessor lines that hold OpenACC (sites, runtime names,
/// openacc.h, `_OPENACC`), and runtime names with the parenthesized arguments of calls.
fn kept_tokens(bytes: &[u8]) -> Option<Vec<String>> {
    let text = acc2omp::encoding::Decoded::new(bytes)
        .ok()?
        .text
        .into_owned();
    let toks = lex(&text);
    let sites = find_sites(&text, &toks);
    let in_site = |t: &Token| {
        sites
            .iter()
            .any(|s| s.span().start <= t.start() && t.end() <= s.span().end)
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i];
        let tx = t.text(&text);
        i += 1;
        if in_site(&t) {
            continue;
        }
        if t.kind == TokKind::PpLine {
            let openacc = ["acc", "_OPENACC", "openacc"]
                .iter()
                .any(|w| tx.contains(w));
            if !openacc {
                out.push(tx.to_string());
            }
            continue;
        }
        if t.kind == TokKind::Ident && (tx.starts_with("acc_") || tx.starts_with("acc2omp")) {
            if toks.get(i).is_some_and(|n| n.text(&text) == "(") {
                let mut depth = 0;
                while i < toks.len() {
                    match toks[i].text(&text) {
                        "(" => depth += 1,
                        ")" => depth -= 1,
                        _ => {}
                    }
                    i += 1;
                    if depth == 0 {
                        break;
                    }
                }
                // A call that was a statement may become a directive, or go.
                if toks.get(i).is_some_and(|n| n.text(&text) == ";") {
                    i += 1;
                }
            }
            continue;
        }
        out.push(tx.to_string());
    }
    Some(out)
}

/// Whether `small` is a subsequence of `big`; else the first token of `small` not found.
fn subsequence(small: &[String], big: &[String]) -> Result<(), String> {
    let mut j = 0;
    for (k, s) in small.iter().enumerate() {
        while j < big.len() && big[j] != *s {
            j += 1;
        }
        if j == big.len() {
            let context = small[k.saturating_sub(5)..(k + 5).min(small.len())].join(" ");
            return Err(format!("token {k} '{s}' is missing (around: {context})"));
        }
        j += 1;
    }
    Ok(())
}

#[test]
fn generated_programs_keep_every_promise() {
    let rounds = rounds(40) * 10;
    let clang = with_clang("generated programs");
    let mut clang_runs = 0;
    let mut rng = Rng(seed().rotate_left(17) | 1);
    let mut failures = Vec::new();
    let dir = tempfile::tempdir().unwrap();
    let mut batch = Vec::new();
    // Outputs that must be fixed points although the first run reported an error, and
    // unbraced `data` regions around asynchronous work: the first run must add the wait
    // the region needs, a second run must see the translated work as asynchronous (9a).
    let (mut with_errors, mut async_in_data) = (0, 0);
    for round in 0..rounds {
        let input = Gen::file(&mut rng);
        let profile = Profile::ALL[round % Profile::ALL.len()];
        let opts = Options {
            profile,
            ..Options::default()
        };
        let name = format!("g{round}.c");
        let path = dir.path().join(&name);
        let text = String::from_utf8_lossy(&input);
        let lines: Vec<&str> = text.split(['\n', '\r']).collect();
        async_in_data += usize::from(
            lines
                .windows(2)
                .any(|w| w[0].contains("acc data") && w[1].contains("async")),
        );
        for &facts in Facts::for_input(round, clang) {
            clang_runs += usize::from(facts == Facts::Clang);
            let show = |e: &str| {
                format!(
                    "{name} ({}, {facts:?}): {e}\n--- input\n{}",
                    profile.name(),
                    String::from_utf8_lossy(&input)
                )
            };
            let out = match fixed_point(&input, &path, &opts, facts) {
                Ok(out) => out,
                Err(e) => {
                    failures.push(show(&e));
                    continue;
                }
            };
            let d = &out.diagnostics;
            if facts == Facts::Syntax {
                with_errors += usize::from(d.iter().any(|d| d.severity == Severity::Error));
            }
            match (kept_tokens(&input), kept_tokens(&out.output)) {
                (Some(before), Some(after)) => {
                    if let Err(e) = subsequence(&before, &after) {
                        failures.push(show(&format!(
                            "code outside directives changed: {e}\n--- output\n{}",
                            String::from_utf8_lossy(&out.output)
                        )));
                    }
                }
                _ => failures.push(show("cannot be decoded")),
            }
        }
        if profile == Profile::Default && batch.len() < 60 {
            batch.push((name, input));
        }
    }
    if let Err(e) = diff_applies_like_write(&batch, false) {
        failures.push(e);
    }
    if clang && let Err(e) = diff_applies_like_write(&batch[..batch.len() / 3], true) {
        failures.push(format!("with libclang: {e}"));
    }
    eprintln!("generated: {rounds} programs, {clang_runs} of them with libclang too");
    report("generated", rounds + clang_runs, &failures);
    assert!(
        with_errors > rounds / 20 && async_in_data > rounds / 50,
        "the generator no longer exercises fixed points after errors ({with_errors} of {rounds}) or unbraced data regions around async work ({async_in_data})"
    );
}

/// The command line on `files` (with libclang when `clang`): `--diff` through `git apply`
/// gives what `--write` writes.
fn diff_applies_like_write(files: &[(String, Vec<u8>)], clang: bool) -> Result<(), String> {
    let facts: &[&str] = if clang { &[] } else { &["--no-clang"] };
    use std::process::{Command, Stdio};
    let make = || {
        let d = tempfile::tempdir().unwrap();
        for (name, bytes) in files {
            std::fs::write(d.path().join(name), bytes).unwrap();
        }
        d
    };
    let (patched, written) = (make(), make());
    let exe = env!("CARGO_BIN_EXE_acc2omp");
    let diff = Command::new(exe)
        .args(["migrate", "-q", ".", "--diff"])
        .args(facts)
        .current_dir(patched.path())
        .output()
        .unwrap();
    let mut git = Command::new("git")
        .args(["apply", "-"])
        .current_dir(patched.path())
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    git.stdin.take().unwrap().write_all(&diff.stdout).unwrap();
    let applied = git.wait_with_output().unwrap();
    if !applied.status.success() {
        return Err(format!(
            "git apply rejects the diff: {}",
            String::from_utf8_lossy(&applied.stderr)
        ));
    }
    let w = Command::new(exe)
        .args(["migrate", "-q", ".", "--write"])
        .args(facts)
        .current_dir(written.path())
        .output()
        .unwrap();
    if w.status.code() == Some(2) {
        return Err(format!(
            "--write failed: {}",
            String::from_utf8_lossy(&w.stderr)
        ));
    }
    for (name, _) in files {
        let (p, q) = (
            std::fs::read(patched.path().join(name)).unwrap(),
            std::fs::read(written.path().join(name)).unwrap(),
        );
        if p != q {
            return Err(format!(
                "{name}: --diff | git apply differs from --write\n--- applied\n{}\n--- written\n{}",
                String::from_utf8_lossy(&p),
                String::from_utf8_lossy(&q)
            ));
        }
    }
    Ok(())
}

/// The causes of outputs that changed on a second run, found by the generator.
#[test]
fn known_fixed_point_regressions() {
    let opts = Options::default();
    // Fortran: a loop directive followed by another that the first run translates (`!$omp`)
    // stays refused on the second run.
    let fortran = b"subroutine s(n, a, c, d)\n  integer :: n, i\n  real :: a(n), c(n), d(n)\n  !$acc parallel loop copyin(a) copyout(c)\n   !$acc kernels loop independent copyin(c) copy(d)\n  do i = 1, n\n    d(i) = d(i) + c(i)\n  end do\nend subroutine\n";
    let out = fixed_point(fortran, Path::new("r.f90"), &opts, Facts::Syntax).unwrap();
    let text = String::from_utf8_lossy(&out.output);
    assert!(text.contains("!$acc parallel loop"), "{text}");
    // A loop directive after a combined construct left for having no `do` after it (here a
    // stray line and the loop directive itself stand between): removing the loop as host
    // code let the second run find the `do` and translate the construct.
    let left = b"program p\n  integer :: c(4, 4), i, j\n  !$acc parallel loop gang copy(c)\n  #pragma acc loop gang do j = 1, 4\n    !$acc loop vector\n    do i = 1, 4\n      c(i, j) = i\n    end do\n  end do\nend program\n";
    let out = fixed_point(left, Path::new("r.f90"), &opts, Facts::Syntax).unwrap();
    let text = String::from_utf8_lossy(&out.output);
    assert!(
        text.contains("!$acc parallel loop gang") && text.contains("!$acc loop vector"),
        "{text}"
    );
    // A routine left for a directive in its procedure still makes the procedure device
    // code: its `vector` loop was removed as host code, and the second run, with the
    // refused directive now followed by its `do`, translated the routine.
    let routine = b"module m\ncontains\n  subroutine s(row, m)\n    !$acc routine vector\n    integer, intent(in) :: m\n    real(8), intent(inout) :: row(m)\n    integer :: k\n    !$acc loop vector\n    !$acc loop vector\n    do k = 2, m\n      row(k) = 0.5d0 * (row(k) + row(k - 1))\n    end do\n  end subroutine s\nend module m\n";
    let loop_profile = Options {
        profile: Profile::Loop,
        ..Options::default()
    };
    let out = fixed_point(routine, Path::new("r.f90"), &loop_profile, Facts::Syntax).unwrap();
    let text = String::from_utf8_lossy(&out.output);
    assert!(
        text.contains("!$acc routine vector") && text.contains("!$omp simd"),
        "{text}"
    );
    // A `!$acc …` comment after a directive that is removed (a clause-less `exit data`) or
    // rewritten was moved to a line of its own, where it is a directive.
    let comment = b"subroutine s(n, b)\n  integer :: n\n  real :: b(n)\n  !$acc enter data copyin(b)\n  !$acc exit data !$acc exit data copyout(b)\n  !$acc parallel copyin(b)!$acc parallel copyin(b)\n  b(1) = 2\n  !$acc end parallel\nend subroutine\n";
    let out = fixed_point(comment, Path::new("r.f90"), &opts, Facts::Syntax).unwrap();
    let text = String::from_utf8_lossy(&out.output);
    assert!(
        text.contains("  ! !$acc exit data copyout(b)\n")
            && text.contains("  ! !$acc parallel copyin(b)\n"),
        "{text}"
    );
    // A variable mapped whole and by components, whose type is unknown only in the unit of
    // an `update` of it (its declaration broken there): the update was refused, the maps
    // elsewhere translated, and the second run, with no OpenACC map of it left, translated
    // the update. Every directive naming it is left now.
    let deep = b"module m\n  type :: t\n    integer, allocatable :: c(:)\n  end type t\ncontains\n  subroutine init(x)\n    type(t), intent(inout) :: x\n    !$acc enter data copyin(x)\n    !$acc enter data copyin(x%c)\n  end subroutine init\n  subroutine fetch(x)\n    type(t), #if 0\nintent(inout) :: x\n    !$acc update self(x%c)\n  end subroutine fetch\nend module m\n";
    let out = fixed_point(deep, Path::new("r.f90"), &opts, Facts::Syntax).unwrap();
    let text = String::from_utf8_lossy(&out.output);
    assert!(
        text.contains("!$acc update self(x%c)") && text.contains("!$acc enter data copyin(x)\n"),
        "{text}"
    );
    // A call left OpenACC inside a compute construct (a device type known only at run time)
    // was inside the `!$omp target` region on the second run, which translated it with a
    // host helper and removed `use openacc`: a call in an OpenMP target region of the file
    // is judged as one in a compute construct.
    let devtype = b"program p\n  use openacc\n  implicit none\n  integer :: here\n  !$acc parallel copyout(here)\n  here = 0\n  if (acc_on_device(acc_de)) here = 1\n  !$acc end parallel\nend program\n";
    for profile in [Profile::Default, Profile::Clacc] {
        let opts = Options {
            profile,
            ..Options::default()
        };
        let out = fixed_point(devtype, Path::new("r.f90"), &opts, Facts::Syntax).unwrap();
        let text = String::from_utf8_lossy(&out.output);
        assert!(
            text.contains("!$omp target")
                && text.contains("use openacc")
                && text.contains("acc_on_device(acc_de)"),
            "{text}"
        );
    }
    // The same where the Fortran printer leaves the loop (its `end if` shares the loop's last
    // line): the next run removed the `loop seq` left alone, and the loop ran on the host.
    let split = b"subroutine f(n, d)\n  integer :: n, i\n  real(8) :: d(n)\n  !$acc kernels copy(d(1:n))\n  if (n > 0) then\n  !$acc loop seq\n  do i = 2, n\n    d(i) = d(i-1) + 1.0d0\n  end do; end if\n  !$acc end kernels\nend subroutine\n";
    let out = fixed_point(split, Path::new("r.f90"), &opts, Facts::Syntax).unwrap();
    let text = String::from_utf8_lossy(&out.output);
    assert!(
        text.contains("!$acc kernels copy") && text.contains("!$acc loop seq"),
        "{text}"
    );
    let path = Path::new("r.c");
    // A `kernels` region of loop nests split into a kernel per nest, one of whose loops was
    // left unchanged (its body broken): that loop stood alone in the data region, an
    // orphaned loop that the second run translated. The region stays OpenACC whole now.
    let split = b"void f(int n, double *c, double *d, long total) {\n#pragma acc kernels copyin(c[0:n]) create(d[0:n])\n  {\n#pragma acc loop independent\n    for (int i = 0; i < n; i++)\n      d[i] = c[i] + 1.0;\n#pragma acc loop gang vector\n    for (int i = 1; i < n; i++)\n acc loop independent reduction(+:total)\n    for (int i = 0; i < n; i++)\n      total += (long)d[i];\n  }\n}\n";
    for facts in [Facts::Syntax, Facts::Clang] {
        let out = fixed_point(split, path, &opts, facts).unwrap();
        let text = String::from_utf8_lossy(&out.output);
        assert!(
            text.contains("#pragma acc kernels copyin")
                && text.contains("#pragma acc loop gang vector"),
            "{text}"
        );
    }
    // openacc.h was kept for a constant inside a wrapper-macro directive, then removed.
    let wrapper = b"#include <openacc.h>\n#define P(x) _Pragma(#x)\nvoid f(int n, double *a) {\n  P(acc parallel loop async(acc_async_noval) copy(a[0:n]))\n  for (int i = 0; i < n; i++) a[i] += 1;\n  P(acc wait(acc_async_noval))\n}\n";
    let out = fixed_point(wrapper, path, &opts, Facts::Syntax).unwrap();
    assert!(!String::from_utf8_lossy(&out.output).contains("openacc.h"));
    // A call right after `_Pragma(…)` is a statement of its own.
    let after = b"void f(int n, double *a) {\n  _Pragma(\"acc init\") acc_wait_all();\n  _Pragma(\"acc enter data create(a[0:n])\")\n  acc_copyin(a, n);\n}\n";
    let out = fixed_point(after, path, &opts, Facts::Syntax).unwrap();
    assert!(
        out.diagnostics
            .iter()
            .all(|d| d.rule != id::RUNTIME_VALUE_USED),
        "{:?}",
        out.diagnostics
    );
    // … and after a wrapper `P(acc …)`; a region written `_Pragma("omp target teams, …")`
    // is a region on the second run.
    let wrapped = b"#define P(x) _Pragma(#x)\nvoid f(int n, double *a) {\n  P(acc shutdown)\n  acc_wait_all();\n  _Pragma(\"acc parallel, copy(a[0:n])\")\n  {\n    acc_memcpy_to_device(a, a, n);\n  }\n}\n";
    let out = fixed_point(wrapped, path, &opts, Facts::Syntax).unwrap();
    let text = String::from_utf8_lossy(&out.output);
    assert!(text.contains("#pragma omp taskwait"), "{text}");
    // The region has no gang loop: it becomes `target` (one gang), where the call is
    // translated; the second run must leave it so (checked by `fixed_point`).
    assert!(text.contains("omp_target_memcpy"), "{text}");
    // 9b: an `acc-omp` marker after a blank line that a `\` spliced into the marker
    // before it was removed only by the second run.
    let marker = b"void f(int n, double *a) {\n#pragma acc parallel loop copy(a[0:n])\n// acc2omp: #pragma omp target teams distribute parallel for simd \\\n\n// acc2omp: map(tofrom: a[0:n])\nfor (int i = 0; i < n; i++) a[i] += 1;\n}\n";
    for emit in [Emit::Omp, Emit::OmpAcc, Emit::AccOmp, Emit::Dual] {
        let opts = Options {
            emit,
            ..Options::default()
        };
        let out = fixed_point(marker, path, &opts, Facts::Syntax).unwrap();
        let text = String::from_utf8_lossy(&out.output);
        assert_eq!(text.matches("map(tofrom: a[0:n])").count(), 1, "{text}");
    }
    // A compute construct left OpenACC (here: a runtime call beside a gang loop in one
    // statement, `redundant-in-teams`) keeps its calls OpenACC: translating the call made the
    // second run translate the construct (found by a long fuzzing run).
    let kept = b"#include <openacc.h>\nvoid f(int n, double *a, int *flag) {\n#pragma acc parallel copy(flag[0:1], a[0:n])\n  {\n    if (acc_on_device(acc_device_not_host)) {\n      flag[0] = 1;\n#pragma acc loop gang\n      for (int i = 0; i < n; i++)\n        a[i] *= 2;\n    }\n  }\n}\n";
    let out = fixed_point(kept, path, &opts, Facts::Syntax).unwrap();
    let text = String::from_utf8_lossy(&out.output);
    assert!(
        out.diagnostics
            .iter()
            .any(|d| d.rule == id::REDUNDANT_IN_TEAMS),
        "{:?}",
        out.diagnostics
    );
    assert!(
        text.contains("#pragma acc parallel")
            && text.contains("acc_on_device(acc_device_not_host)")
            && text.contains("openacc.h"),
        "{text}"
    );
    // Code after a routine's closing brace on its line went onto the `end declare target`
    // line (found by a long fuzzing run): it goes to the next line.
    let shared =
        b"#pragma acc routine seq\nint f(int a) { return a; } int g(int b) { return b; }\n";
    let out = fixed_point(shared, path, &opts, Facts::Syntax).unwrap();
    let text = String::from_utf8_lossy(&out.output);
    assert!(
        text.contains("#pragma omp end declare target\n int g(int b)"),
        "{text}"
    );
    // … but a `#` there is not a directive (code precedes it on its line): on a line of its
    // own it would be one, and the second run translated it. The routine stays OpenACC.
    let stray = b"#pragma acc routine seq\nstatic int sq(int v) { return v * v; }#pragma acc routine seq\nint main(void){ return sq(2); }\n";
    let out = fixed_point(stray, path, &opts, Facts::Syntax).unwrap();
    let text = String::from_utf8_lossy(&out.output);
    assert!(
        text.contains("#pragma acc routine seq\nstatic int sq(int v) { return v * v; }#pragma acc routine seq\n")
            && !text.contains("omp declare target")
            && out.diagnostics.iter().any(|d| d.rule == id::NOT_TRANSLATED),
        "{text}"
    );
    // A `{` left open inside a loop's parentheses made the function body look unclosed (its
    // statements "outside a function") until the first run's braces around the loop closed
    // it: braces pair as the other brackets do.
    let open = b"void f(int n, double *a) {\n#pragma acc enter data copyin(a[0:n])\n#pragma acc parallel loop present(a[0:n])\n  for (int {i = 0; i < n; i++)\n    a[i] += 1.0;\n#pragma acc exit data copyout(a[0:n])\n}\n";
    for profile in [Profile::Default, Profile::Clacc, Profile::Loop] {
        let opts = Options {
            profile,
            ..Options::default()
        };
        let out = fixed_point(open, path, &opts, Facts::Syntax).unwrap();
        assert!(
            out.diagnostics
                .iter()
                .all(|d| d.rule != id::DIRECTIVE_PLACEMENT),
            "{:?}",
            out.diagnostics
        );
    }
}

/// An end directive after the last line of a Fortran loop (the `target` of a sequential
/// `kernels loop`, the `target` split off for a queue, the `end block` of local copies)
/// would take the code that follows the loop on that line into the construct: the
/// directive stays OpenACC.
#[test]
fn code_after_a_loop_on_its_line_stays_outside() {
    let opts = Options::default();
    let path = Path::new("r.f90");
    let cases: [&[u8]; 3] = [
        b"subroutine s(n, a, b)\n  integer :: n, i\n  real :: a(n), b\n  !$acc kernels loop copyin(a)\n  do i = 2, n\n    a(i) = a(i-1)\n  end do; b = 2\nend subroutine\n",
        b"subroutine s(n, a, b)\n  integer :: n, i\n  real :: a(n), b\n  !$acc parallel loop async(1) copy(a)\n  do i = 1, n\n    a(i) = 1\n  end do; b = 2\n  !$acc wait(1)\nend subroutine\n",
        b"subroutine s(n, res)\n  integer :: n, i, j, res(n, n)\n  real(8) :: t\n  !$acc parallel loop gang copyout(res) private(t)\n  do i = 1, n\n    !$acc loop worker private(t)\n    do j = 1, n\n      t = i + j\n      res(j, i) = int(t)\n    end do; t = 0\n  end do\nend subroutine\n",
    ];
    for input in cases {
        let out = fixed_point(input, path, &opts, Facts::Syntax).unwrap();
        let text = String::from_utf8_lossy(&out.output);
        let last = String::from_utf8_lossy(input)
            .lines()
            .find(|l| l.contains("end do;"))
            .unwrap()
            .to_string();
        // The loop's last line is followed by the next line of the input, not an end line.
        assert!(
            text.contains(&format!("{last}\n"))
                && !text.contains(&format!("{last}\n  !$omp end"))
                && !text.contains("end block")
                && out.diagnostics.iter().any(|d| d.rule == id::NOT_TRANSLATED),
            "{text}"
        );
    }
}

/// Found by fuzzing: lines written for a directive that stands between the lines of a
/// continued statement split it, or a continuation line then continues one of them (fixed
/// form: a statement, the directive, then a line with a character in column 6), so a second
/// run changed more. Such a directive is left unchanged, in both forms; a manual deep copy
/// of a variable whose type is not known in one unit is refused in all of them.
#[test]
fn directives_inside_continued_statements_and_unknown_types_are_fixed_points() {
    let opts = Options::default();
    let cases: [(&str, &[u8], &str); 3] = [
        (
            "r.f",
            b"      subroutine s(b, c)\n      integer, optional :: b, c\n      if (present(b)) then\n        b = 1\n      end if\n      c = 1\n!$acc update device(b)\n     & + 2\n      end\n",
            "stands between the lines of a continued statement",
        ),
        (
            "r.f90",
            b"subroutine s(a, n)\n  integer :: n, a(n)\n  a(1) = n + &\n  !$acc update device(a)\n    1\nend subroutine\n",
            "stands between the lines of a continued statement",
        ),
        (
            "r.f90",
            b"subroutine s\n  use fields\n  !$acc enter data copyin(w)\n  !$acc enter data copyin(w%p)\n  !$acc exit data copyout(w%p)\n  !$acc exit data delete(w)\nend subroutine\n!$acc exit data delete(w)\n",
            "whether its components are allocatable is not known",
        ),
    ];
    for (name, input, why) in cases {
        let out = fixed_point(input, Path::new(name), &opts, Facts::Syntax).unwrap();
        let text = String::from_utf8_lossy(&out.output);
        assert!(
            !text.contains("!$omp") && out.diagnostics.iter().any(|d| d.message.contains(why)),
            "{text}\n{:?}",
            out.diagnostics
        );
    }
}

/// What made outputs change on a second run with libclang (found by fuzzing): each is a
/// fixed point in both modes, and the error of the first run is there in the second.
#[test]
fn libclang_fixed_point_regressions() {
    let path = Path::new("r.c");
    let opts = Options::default();
    let modes: &[Facts] = if with_clang("fixed-point regressions") {
        &[Facts::Syntax, Facts::Clang]
    } else {
        &[Facts::Syntax]
    };
    // (input, what the first run's output holds)
    let cases: [(&str, &str); 5] = [
        // The first run adds `#include <omp.h>`, which libclang 22 without the OpenMP
        // runtime's headers did not find: its OpenACC checks were then not used, and the
        // directive they rejected was translated by the second run.
        (
            "void f(int n, double *a) {\n  float g = 1;\n  int d = acc_get_num_devices(acc_device_nvidia);\n#pragma acc parallel loop vector_length(&g) copy(a[0:n])\n  for (int i = 0; i < n; i++) a[i] = d;\n}\n",
            "#include <omp.h>",
        ),
        // `#ifdef _OPENACC` becomes `#ifdef _OPENMP`, which the parse did not define: the
        // region disappeared from libclang's view.
        (
            "void f(int n, double *a) {\n  float g = 1;\n#ifdef _OPENACC\n#pragma acc parallel loop vector_length(&g) copy(a[0:n])\n  for (int i = 0; i < n; i++) a[i] = 1;\n#endif\n}\n",
            "#ifdef _OPENMP",
        ),
        // A duplicate `declare` stopped being one once the first was translated.
        (
            "double x[100];\n#pragma acc declare create(x)\n#pragma acc declare create(x)\nvoid f(void) {}\n",
            "#pragma acc declare create(x)\n#pragma acc declare create(x)",
        ),
        // … also when the variable is declared again in between (one object all the same).
        (
            "double big[8];\n#pragma acc declare link(big)\nextern double big[8];\n#pragma acc declare link(big)\n",
            "#pragma acc declare link(big)\nextern double big[8];\n#pragma acc declare link(big)",
        ),
        // A directive left unchanged keeps the openacc.h names in its clauses, so openacc.h
        // stays (without it they were undeclared in the second run's parse, whose checks
        // were then not used).
        (
            "#include <openacc.h>\nint g(void) { return acc_get_num_devices(acc_device_nvidia); }\nvoid f(int n, double *a) {\n#pragma acc parallel loop copy(a[0:n]) if(n > acc_async_sync) bogus(z)\n  for (int i = 0; i < n; i++) a[i] = 1;\n}\n",
            "#include <openacc.h>",
        ),
    ];
    for (input, holds) in cases {
        for &facts in modes {
            let first = fixed_point(input.as_bytes(), path, &opts, facts)
                .unwrap_or_else(|e| panic!("{facts:?}: {e}"));
            let again = translate_bounded(&first.output, path, &opts, facts).unwrap();
            let rules = |o: &FileOutcome| {
                o.diagnostics
                    .iter()
                    .filter(|d| d.severity == Severity::Error)
                    .map(|d| d.rule)
                    .collect::<Vec<_>>()
            };
            // With clang's OpenACC checks (libclang 21 and newer) every case has an error;
            // the second run gives the first run's errors again.
            let checks = matches!(first.semantic, Some(Mode::Clang { openacc: true, .. }));
            assert!(
                (!checks || !rules(&first).is_empty()) && rules(&first) == rules(&again),
                "{facts:?}: {:?} / {:?}\n{input}",
                rules(&first),
                rules(&again)
            );
            let output = without_guards(&String::from_utf8_lossy(&first.output));
            assert!(output.contains(holds), "{facts:?}: {output}");
        }
    }
    // A bracket left open in a function: clang parsed the second `routine` inside that
    // body ("expected function … declaration") until the first run's `end declare target`
    // changed its recovery. Its errors after a syntax error are not a verdict: both
    // directives are translated from syntax alone, the first run already.
    let open = "struct V { double x; };\n#pragma acc routine seq\ninline V add(const V &a) { return V{a.x,reduction(+: a.x}; }\n\n#pragma acc routine seq\ninline V mul(const V &a) { return V{a.x}; }\n";
    for &facts in modes {
        let first = fixed_point(open.as_bytes(), Path::new("r.cpp"), &opts, facts)
            .unwrap_or_else(|e| panic!("{facts:?}: {e}"));
        let output = String::from_utf8_lossy(&first.output);
        assert_eq!(
            output.matches("#pragma omp declare target").count(),
            2,
            "{facts:?}: {output}"
        );
    }
}

/// 9a: a `data` region around asynchronous work, its body one statement whose last line
/// holds more than the statement. The first run adds the wait (after the comment, or as an
/// operator before the code that follows); the wait is found from the translated work too,
/// so that a `data` directive left OpenACC around it (written by hand, or by an older
/// version) gets the same wait.
#[test]
fn async_work_in_unbraced_data_regions() {
    let opts = Options::default();
    let path = Path::new("r.c");
    // A conditional between the directive and the end of its body: braces or a wait added
    // there would fall in one branch only (the output did not compile without `FAST`).
    for body in [
        "#ifdef FAST\n#pragma acc parallel loop async(1)\n  for (int i = 0; i < 8; i++) x[i] += 1;\n#else\n#pragma acc parallel loop async(2)\n  for (int i = 0; i < 8; i++) x[i] += 2;\n#endif\n",
        "#if 0\n  x[0] = 0;\n#endif\n  {\n#pragma acc parallel loop async(1)\n    for (int i = 0; i < 8; i++) x[i] += 1;\n  }\n",
    ] {
        let src = format!("void g(int *x) {{\n#pragma acc data copy(x[0:8])\n{body}}}\n");
        let out = fixed_point(src.as_bytes(), path, &opts, Facts::Syntax).unwrap();
        let text = String::from_utf8_lossy(&out.output);
        assert!(
            text.contains("#pragma acc data copy(x[0:8])\n#if"),
            "{text}"
        );
        assert!(
            out.diagnostics
                .iter()
                .any(|d| d.rule == id::ASYNC_DATA && d.message.contains("conditional")),
            "{:?}",
            out.diagnostics
        );
    }
    let comment = b"void g(int *x) {\n#pragma acc data copy(x[0:8])\n#pragma acc parallel loop async(3)\n  for (int i = 0; i < 8; i++)\n    x[i] += 2; // comment\n}\n";
    let out = fixed_point(comment, path, &opts, Facts::Syntax).unwrap();
    let text = String::from_utf8_lossy(&out.output);
    assert!(
        text.contains("#pragma omp target data map(tofrom: x[0:8])\n{\n#pragma omp target teams distribute parallel for simd nowait depend(inout: acc2omp_queue[3])\n  for (int i = 0; i < 8; i++)\n    x[i] += 2; // comment\n#pragma omp taskwait depend(in: acc2omp_queue[3])\n}\n}\n"),
        "{text}"
    );
    let code = b"void g(int *x, int s) {\n#pragma acc data copy(x[0:8])\n#pragma acc parallel loop async\n  for (int i = 0; i < 8; i++)\n    x[i] += 2; s++;\n}\n";
    let out = fixed_point(code, path, &opts, Facts::Syntax).unwrap();
    let text = String::from_utf8_lossy(&out.output);
    assert!(
        text.contains("    x[i] += 2; _Pragma(\"omp taskwait depend(in: acc2omp_queue[acc2omp_default_async & 63])\") } s++;\n"),
        "{text}"
    );
    // Translated work read back, in each form: `#pragma`, `_Pragma` with a prefix, a
    // wrapper macro; a queue known only at run time waits for every queue.
    for (work, wait) in [
        (
            "#pragma omp target teams distribute parallel for simd nowait depend(inout: acc2omp_queue[3])\n",
            "taskwait depend(in: acc2omp_queue[3])",
        ),
        (
            "_Pragma(u\"omp target teams distribute parallel for simd nowait depend(inout: acc2omp_queue[5])\")\n",
            "taskwait depend(in: acc2omp_queue[5])",
        ),
        (
            "P(omp target nowait depend(inout: acc2omp_queue[(q) & 63]))\n",
            "taskwait\n",
        ),
        (
            "#pragma omp task depend(in: acc2omp_queue[3]) depend(inout: acc2omp_queue[4])\n",
            "taskwait depend(in: acc2omp_queue[4])",
        ),
    ] {
        let src = format!(
            "#define P(x) _Pragma(#x)\nvoid g(int *x, int q) {{\n#pragma acc data copy(x[0:8])\n{work}  for (int i = 0; i < 8; i++)\n    x[i] += 2; // c\n}}\n"
        );
        let out = fixed_point(src.as_bytes(), path, &opts, Facts::Syntax).unwrap();
        let text = String::from_utf8_lossy(&out.output);
        assert!(
            text.contains("#pragma omp target data map(tofrom: x[0:8])\n{\n")
                && text.contains(&format!("    x[i] += 2; // c\n#pragma omp {wait}")),
            "{text}"
        );
    }
}

/// Sites nested thousands deep (loop directives in a region, data regions, stacked data
/// directives, compute constructs inside one another), thousands of alternative directives
/// before one loop (`#elif` after `#elif`) and thousands of statements each with two
/// alternatives translate in time linear in the nest:
/// each site once, not once per site around or inside it (the test just completes; the
/// figures are in `benches/large_files.rs`).
#[test]
fn deep_site_nests_translate() {
    let n = 4_000;
    let loops: String = (0..n)
        .map(|k| format!("#pragma acc loop\nfor (int i{k} = 0; i{k} < n; i{k}++)\n"))
        .collect();
    let data = "#pragma omp target data map(tofrom: a[0:n])";
    // (input, text the output has `count` times, errors)
    let cases = [
        (
            format!(
                "void f(int n, float *a) {{\n#pragma acc parallel copy(a[0:n])\n{{\n{loops}a[0] += 1;\n}}\n}}\n"
            ),
            "#pragma omp distribute parallel for simd\n",
            1,
            0,
        ),
        (
            format!(
                "void f(int n, float *a) {{\n{}a[0] = 1;\n{}}}\n",
                "#pragma acc data copy(a[0:n])\n{\n".repeat(n),
                "}\n".repeat(n)
            ),
            data,
            n,
            0,
        ),
        (
            format!(
                "void f(int n, float *a) {{\n{}{{ a[0] = 1; }}\n}}\n",
                "#pragma acc data copy(a[0:n])\n".repeat(n)
            ),
            data,
            n,
            0,
        ),
        (
            format!(
                "void f(int n, float *a) {{\n{}a[0] = 1;\n{}}}\n",
                "#pragma acc parallel copy(a[0:n])\n{\n".repeat(n),
                "}\n".repeat(n)
            ),
            "#pragma acc parallel",
            n,
            n - 1,
        ),
        (
            format!(
                "void f(int n, float *a) {{\n#if A0\n{}#endif\nfor (int i = 0; i < n; i++) a[i] = 1;\n}}\n",
                (0..n)
                    .map(|k| format!("#pragma acc parallel loop copy(a[0:n])\n#elif A{}\n", k + 1))
                    .collect::<String>()
            ),
            "#pragma acc parallel loop",
            n,
            n,
        ),
        (
            format!(
                "void f(int n, float *a) {{\n{}}}\n",
                "#ifdef A\n#pragma acc parallel loop copy(a[0:n])\n#else\n\
                 #pragma acc parallel loop copy(a[0:n]) num_gangs(4)\n#endif\n\
                 for (int i = 0; i < n; i++) a[i] += 1;\n"
                    .repeat(n)
            ),
            "#pragma omp target teams distribute parallel for simd map(tofrom: a[0:n])\n",
            2 * n,
            0,
        ),
    ];
    for (text, what, count, errors) in cases {
        let out = translate_bounded(
            text.as_bytes(),
            Path::new("nest.c"),
            &Options::default(),
            Facts::Syntax,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let got = out
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        assert_eq!(got, errors, "{what}");
        let out = String::from_utf8(out.output).unwrap();
        assert_eq!(out.matches(what).count(), count, "{what}");
        if errors == 0 {
            assert!(!out.contains("#pragma acc"), "{what}");
        }
    }
}

/// `text` without the guards that stop OpenMP builds of directives left unchanged (three
/// lines each), so that what a case expects next to each other still is.
fn without_guards(text: &str) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::new();
    let mut k = 0;
    while k < lines.len() {
        let guard = lines[k].trim()
            == "#if defined(_OPENMP) && !defined(ACC2OMP_ALLOW_UNTRANSLATED)"
            && lines
                .get(k + 1)
                .is_some_and(|l| l.trim_start().starts_with("#error \"acc2omp: "))
            && lines.get(k + 2).is_some_and(|l| l.trim() == "#endif");
        if guard {
            k += 3;
        } else {
            out.push_str(lines[k]);
            k += 1;
        }
    }
    out
}
