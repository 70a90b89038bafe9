//! No input makes the tool panic: every fixture input and program is mutated many times
//! (truncated, bytes deleted, duplicated, or replaced by tokens that stress the scanner and the
//! directive parser) and translated in syntactic mode in every profile. Each translation must
//! return, and unless it reported an error (a directive left unchanged for the user to fix,
//! whose context the translation of its neighbours may change), translating its output again
//! must change nothing. Deterministic: a fixed-seed generator, no time limits.

use acc2omp::profile::Profile;
use acc2omp::semantic::SemanticConfig;
use acc2omp::{Options, migrate_source};
use std::path::{Path, PathBuf};

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
                    && p.extension().is_some_and(|x| x == "c" || x == "cpp")))
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

#[test]
fn mutated_inputs_never_panic_and_outputs_are_fixed_points() {
    let rounds: usize = std::env::var("ACC2OMP_FUZZ_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    let sem = SemanticConfig::syntactic();
    let seed = std::env::var("ACC2OMP_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x9e37_79b9_7f4a_7c15u64);
    let mut rng = Rng(seed | 1);
    let mut failures = Vec::new();
    let mut runs = 0;
    for (path, text) in corpus() {
        for round in 0..rounds {
            let input = mutate(&mut rng, &text);
            let profile = [Profile::Default, Profile::Clacc, Profile::Loop][round % 3];
            let opts = Options {
                profile,
                ..Options::default()
            };
            runs += 1;
            let first =
                std::panic::catch_unwind(|| migrate_source(&input, Some(&path), &opts, &sem));
            let Ok(first) = first else {
                failures.push(format!("{} round {round}: panic\n{input}", path.display()));
                continue;
            };
            let again =
                std::panic::catch_unwind(|| migrate_source(&first.text, Some(&path), &opts, &sem));
            match again {
                Err(_) => failures.push(format!("{} round {round}: panic on the output", path.display())),
                Ok(o) if o.text != first.text && !first.diagnostics.iter().any(|d| d.severity == acc2omp::rules::Severity::Error) => failures.push(format!(
                    "{} round {round}: output is not a fixed point\n--- input\n{input}\n--- output\n{}\n--- again\n{}",
                    path.display(),
                    first.text,
                    o.text
                )),
                Ok(_) => {}
            }
        }
    }
    assert!(runs > 500, "corpus too small: {runs} runs");
    // ACC2OMP_FUZZ_DUMP=DIR keeps every failure for study.
    if let Ok(dir) = std::env::var("ACC2OMP_FUZZ_DUMP") {
        std::fs::create_dir_all(&dir).unwrap();
        for (i, f) in failures.iter().enumerate() {
            std::fs::write(Path::new(&dir).join(format!("{i}.txt")), f).unwrap();
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {runs} mutated inputs failed; first:\n{}",
        failures.len(),
        failures[0]
    );
}
