//! Generated at build time: the rule id constants, and the build id (a hash of the sources
//! the binary is built from, so that the result cache, `src/cache.rs`, never reuses what
//! another build of the same version computed).

use std::fmt::Write;
use std::hash::Hasher;
use std::path::Path;

fn add(h: &mut std::hash::DefaultHasher, path: &Path) {
    if path.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for e in entries {
            add(h, &e);
        }
    } else if let Ok(bytes) = std::fs::read(path) {
        h.write(path.to_string_lossy().as_bytes());
        h.write_usize(bytes.len());
        h.write(&bytes);
    }
}

fn main() {
    rule_ids();
    let inputs = ["src", "rules", "build.rs", "Cargo.toml", "Cargo.lock"];
    let mut h = std::hash::DefaultHasher::new();
    for i in inputs {
        println!("cargo:rerun-if-changed={i}");
        add(&mut h, Path::new(i));
    }
    println!("cargo:rustc-env=ACC2OMP_BUILD_ID={:016x}", h.finish());
}

/// Rule ids as checked constants: `rules/diagnostics.toml` is the one registry of rules; each
/// `[[rule]]` becomes a constant of `acc2omp::rules::id` (`no-statement` → `NO_STATEMENT`),
/// so that the code names a rule only through a constant the table defines, and a
/// misspelled id does not compile.
fn rule_ids() {
    let table = "rules/diagnostics.toml";
    println!("cargo:rerun-if-changed={table}");
    let text = std::fs::read_to_string(table).expect("rules/diagnostics.toml");
    let mut rules: Vec<(String, String)> = Vec::new();
    let mut in_rule = false;
    let mut in_multiline = false;
    for line in text.lines() {
        // Keys inside `"""` strings (examples) are not keys.
        if line.matches("\"\"\"").count() % 2 == 1 {
            in_multiline = !in_multiline;
            continue;
        }
        if in_multiline {
            continue;
        }
        let line = line.trim();
        if line.starts_with('[') {
            in_rule = line == "[[rule]]";
            continue;
        }
        if !in_rule {
            continue;
        }
        if let Some(v) = value(line, "id") {
            rules.push((v, String::new()));
        } else if let Some(v) = value(line, "summary")
            && let Some(last) = rules.last_mut()
        {
            last.1 = v;
        }
    }
    assert!(!rules.is_empty(), "{table}: no [[rule]] with an id");
    let mut out = String::new();
    for (id, summary) in &rules {
        assert!(
            !id.is_empty()
                && id
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
            "{table}: rule id '{id}' is not lowercase words joined by '-'"
        );
        let name = id.to_ascii_uppercase().replace('-', "_");
        writeln!(out, "/// `{id}`: {summary}").unwrap();
        writeln!(out, "pub const {name}: RuleId = RuleId(\"{id}\");").unwrap();
    }
    writeln!(out, "/// Every rule of the table, in its order.").unwrap();
    writeln!(out, "pub const ALL: [RuleId; {}] = [", rules.len()).unwrap();
    for (id, _) in &rules {
        writeln!(out, "    {},", id.to_ascii_uppercase().replace('-', "_")).unwrap();
    }
    writeln!(out, "];").unwrap();
    let dir = std::env::var("OUT_DIR").expect("OUT_DIR");
    std::fs::write(format!("{dir}/rule_ids.rs"), out).expect("write rule_ids.rs");
}

/// The string value of `key = "…"` (basic strings with `\"` and `\\` escapes).
fn value(line: &str, key: &str) -> Option<String> {
    let rest = line
        .strip_prefix(key)?
        .trim_start()
        .strip_prefix('=')?
        .trim();
    let inner = rest.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => out.push(chars.next()?),
            c => out.push(c),
        }
    }
    None
}
