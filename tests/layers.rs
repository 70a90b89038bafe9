//! The top-level modules of `src/` form layers that depend one way: input → facts →
//! decisions → edits → output (docs/architecture.md). A language's directory (`src/c/`) is a
//! slice through the layers: each of its modules (`c::lang`, `c::print`) has its own
//! layer. This test reads every `crate::` path in the code (comments, strings and test
//! modules left out) and fails on an import of a higher layer, on a cycle between modules,
//! or on a module no layer lists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Modules whose submodules are placed in layers one by one: the languages.
const SLICED: &[&str] = &["c", "fortran"];

/// The layers, lowest first. A module may use modules of its own layer or of lower ones;
/// within a layer, the imports must not form a cycle.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "base: text, bytes, edits, parallelism",
        &[
            "hash",
            "file",
            "memory",
            "par",
            "intervals",
            "edit",
            "lex",
            "source",
            "encoding",
            "lang",
            "c::lang",
            "fortran::lang",
        ],
    ),
    (
        "rules: tables, profiles, options, diagnostics, configuration",
        &[
            "rules",
            "profile",
            "overrides",
            "options",
            "diag",
            "select",
            "config",
            "exclude",
            "suppress",
        ],
    ),
    (
        "input: directive sites, the OpenACC IR, statements, files",
        &[
            "scan",
            "directive",
            "region",
            "structure",
            "ignores",
            "walk",
            "fortran::form",
            "fortran::lines",
            "fortran::lex",
            "fortran::sites",
            "fortran::stmt",
            "fortran::structure",
        ],
    ),
    (
        "facts: what is known about each directive",
        &[
            "facts",
            "attachments",
            "dependence",
            "syntax",
            "c::syntax",
            "fortran::facts",
            "fortran::calls",
            "fortran::flang",
            "fortran",
            "fortran::syntax",
            "fortran::dependence",
            "fortran::site_facts",
            "fortran::members",
            "unit",
            "semantic",
        ],
    ),
    (
        "decisions: checks and the OpenMP to emit",
        &[
            "intent",
            "validate",
            "reduction_types",
            "translate",
            "runtime",
            "fortran::clause_types",
            "fortran::declare",
            "fortran::deep_maps",
            "fortran::do_concurrent",
            "fortran::nested_simd",
            "fortran::omp_target",
            "fortran::simd_collapse",
            "fortran::target_split",
        ],
    ),
    (
        "edits: plans printed as byte edits",
        &[
            "print",
            "c::print",
            "fortran::print",
            "fortran::common_blocks",
            "fortran::component_update",
            "fortran::construct_name",
            "fortran::optional_args",
            "fortran::queues",
            "fortran::runtime",
            "untranslated",
            "alternatives",
            "fix",
            "outcome",
        ],
    ),
    (
        "output: a language's passes, one file through the pipeline, modes, formats, the command line",
        &[
            "front",
            "c::front",
            "fortran::front",
            "emit",
            "engine",
            "cache",
            "output",
            "report",
            "write",
            "cli",
        ],
    ),
];

/// Source text with comments, string and character literals blanked (lengths kept).
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, r: std::ops::Range<usize>| {
        for c in &mut out[r] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            let e = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |n| i + n);
            blank(&mut out, i..e);
            i = e;
        } else if b[i..].starts_with(b"/*") {
            let (mut depth, mut j) = (0usize, i);
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i..j);
            i = j;
        } else if b[i] == b'r' && matches!(b.get(i + 1), Some(b'"' | b'#')) && !ident(b, i) {
            // A raw string: r"…", r#"…"#.
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            let open = i + 1 + hashes;
            if b.get(open) != Some(&b'"') {
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let e = b[open + 1..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |n| open + 1 + n + close.len());
            blank(&mut out, i..e);
            i = e;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i..(j + 1).min(b.len()));
            i = j + 1;
        } else if b[i] == b'\'' {
            // A character literal ('x', '\n', '\u{1F}'); a lifetime ('a) is left alone.
            let e = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map(|n| i + 2 + n + 1)
            } else {
                let ch = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + ch) == Some(&b'\'')).then_some(i + 2 + ch)
            };
            match e {
                Some(e) => {
                    blank(&mut out, i..e);
                    i = e;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8(out).expect("blanking keeps UTF-8")
}

/// Whether the byte before `i` continues an identifier (so `b[i]` is inside a word).
fn ident(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

/// `code` without the bodies of `#[cfg(test)] mod name { … }`, and the names of the test
/// modules it declares in files of their own (`#[cfg(test)] mod name;`).
fn without_tests(code: &str) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut files = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let item = after.trim_start();
        let item = item
            .strip_prefix("pub(crate) ")
            .or_else(|| item.strip_prefix("pub(super) "))
            .or_else(|| item.strip_prefix("pub "))
            .unwrap_or(item);
        let Some(m) = item.strip_prefix("mod ") else {
            // Another test-only item (a function, a `use`): kept, it is rare and small.
            out.push_str("#[cfg(test)]");
            rest = after;
            continue;
        };
        let name_len = m
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(m.len());
        let tail = m[name_len..].trim_start();
        if let Some(t) = tail.strip_prefix(';') {
            files.push(m[..name_len].to_string());
            rest = t;
            continue;
        }
        // Skip the braced body.
        let open = tail.find('{').expect("a module body");
        let body = &tail[open..];
        let mut depth = 0usize;
        let mut end = body.len();
        for (k, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &body[end..];
    }
    out.push_str(rest);
    (out, files)
}

/// The module names a `crate::` path names: `crate::a::b` gives `a`, `crate::{a::b, c}`
/// gives `a` and `c`; in a sliced module, the submodule (`crate::c::print::X` gives
/// `c::print`).
fn crate_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = code.as_bytes();
    let mut from = 0;
    while let Some(k) = code[from..].find("crate::") {
        let at = from + k;
        from = at + "crate::".len();
        if ident(b, at) {
            continue;
        }
        let rest = &code[from..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1usize;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 || (depth == 1 && c == ',') {
                    out.push(first_segment(&item));
                    item.clear();
                    if depth == 0 {
                        break;
                    }
                } else {
                    item.push(c);
                }
            }
        } else {
            out.push(first_segment(rest));
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

fn first_segment(path: &str) -> String {
    let word = |p: &str| -> String {
        p.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let first = word(path);
    let rest = path.trim_start()[first.len()..].trim_start();
    match rest.strip_prefix("::").map(word) {
        // `crate::fortran::Front`: an item of the sliced module itself, not a submodule.
        Some(second)
            if SLICED.contains(&first.as_str()) && !second.starts_with(char::is_uppercase) =>
        {
            format!("{first}::{second}")
        }
        _ => first,
    }
}

/// Every `.rs` file under `dir`, except test modules declared in their own files: those
/// `mod.rs` (or `lib.rs`) declares are in `dir`, those `name.rs` declares in `dir/name/`
/// (`inherited`: the ones the file of `dir`'s module declares).
fn sources(dir: &Path, inherited: BTreeSet<String>, out: &mut Vec<(std::path::PathBuf, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("src is readable")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    let stem = |p: &Path| {
        p.file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("")
            .to_string()
    };
    let mut here = inherited;
    let mut below: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut files = Vec::new();
    for p in &entries {
        if p.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(p).expect("a source file");
            let (code, test_mods) = without_tests(&code_only(&text));
            match stem(p).as_str() {
                "mod" | "lib" | "main" => here.extend(test_mods),
                name => below.entry(name.to_string()).or_default().extend(test_mods),
            }
            files.push((p.clone(), code));
        }
    }
    for (p, code) in files {
        if !here.contains(&stem(&p)) {
            out.push((p, code));
        }
    }
    for p in entries.iter().filter(|p| p.is_dir()) {
        let name = stem(p);
        if !here.contains(&name) {
            sources(p, below.remove(&name).unwrap_or_default(), out);
        }
    }
}

/// Top-level module → the top-level modules it uses (with a file that does, for messages).
type Graph = BTreeMap<String, BTreeMap<String, String>>;

fn graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    sources(src, BTreeSet::new(), &mut files);
    let mut g = Graph::new();
    for (path, code) in files {
        let rel = path.strip_prefix(src).expect("under src");
        let mut parts = rel.components().map(|c| c.as_os_str().to_string_lossy());
        let first = parts.next().expect("a path");
        let mut top = first.trim_end_matches(".rs").to_string();
        if top == "lib" || top == "main" {
            continue;
        }
        if SLICED.contains(&top.as_str()) {
            let sub = parts.next().map(|p| p.trim_end_matches(".rs").to_string());
            match sub {
                // The language's `mod.rs` only declares its modules.
                Some(sub) if sub != "mod" => top = format!("{top}::{sub}"),
                _ => continue,
            }
        }
        let uses = g.entry(top.clone()).or_default();
        for m in crate_paths(&code) {
            if m != top {
                uses.entry(m).or_insert_with(|| rel.display().to_string());
            }
        }
    }
    g
}

/// What is wrong with `g` under `layers`: imports of a higher layer, cycles, modules in no
/// layer (or in two).
fn problems(g: &Graph, layers: &[(&str, &[&str])]) -> Vec<String> {
    let mut out = Vec::new();
    let mut layer_of = BTreeMap::new();
    for (k, (_, mods)) in layers.iter().enumerate() {
        for m in *mods {
            if layer_of.insert(m.to_string(), k).is_some() {
                out.push(format!("module `{m}` is listed in two layers"));
            }
        }
    }
    let modules: BTreeSet<&String> = g.keys().chain(g.values().flat_map(|u| u.keys())).collect();
    for m in &modules {
        if !layer_of.contains_key(*m) {
            out.push(format!(
                "module `{m}` is in no layer: add it to LAYERS in tests/layers.rs and to docs/architecture.md"
            ));
        }
    }
    for (m, uses) in g {
        let Some(&lm) = layer_of.get(m) else { continue };
        for (n, file) in uses {
            if let Some(&ln) = layer_of.get(n)
                && ln > lm
            {
                out.push(format!(
                    "`{m}` ({}) uses `{n}` ({}), a higher layer, in src/{file}",
                    layers[lm].0, layers[ln].0
                ));
            }
        }
    }
    out.extend(
        cycles(g)
            .into_iter()
            .map(|c| format!("import cycle between top-level modules: {}", c.join(" -> "))),
    );
    out
}

/// The cycles of `g`: one per strongly connected component of more than one module (or a
/// module that uses itself), written as a path that returns to its start.
fn cycles(g: &Graph) -> Vec<Vec<String>> {
    // Reachability from each module, by depth-first search (the graph is small).
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_string()];
        while let Some(m) = stack.pop() {
            for n in g.get(&m).into_iter().flat_map(|u| u.keys()) {
                if seen.insert(n.clone()) {
                    stack.push(n.clone());
                }
            }
        }
        seen
    };
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for m in g.keys() {
        if done.contains(m) || !reach(m).contains(m) {
            continue;
        }
        // A shortest path back to `m` (breadth first) shows one cycle through it.
        let mut prev: BTreeMap<String, String> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([m.clone()]);
        'search: while let Some(x) = queue.pop_front() {
            for n in g.get(&x).into_iter().flat_map(|u| u.keys()) {
                if n == m {
                    prev.insert(format!("{m}#end"), x.clone());
                    break 'search;
                }
                if !prev.contains_key(n) {
                    prev.insert(n.clone(), x.clone());
                    queue.push_back(n.clone());
                }
            }
        }
        let mut back = Vec::new();
        let mut at = prev.get(&format!("{m}#end")).cloned();
        while let Some(x) = at.filter(|x| x != m) {
            at = prev.get(&x).cloned();
            back.push(x);
        }
        let path: Vec<String> = std::iter::once(m.clone())
            .chain(back.into_iter().rev())
            .chain(std::iter::once(m.clone()))
            .collect();
        // Every module of the component is reported once.
        let component: Vec<String> = reach(m)
            .into_iter()
            .filter(|x| reach(x).contains(m))
            .collect();
        done.extend(component);
        out.push(path);
    }
    out
}

#[test]
fn layers_depend_one_way_without_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let g = graph(&src);
    assert!(g.len() > 20, "too few modules read: {}", g.len());
    let found = problems(&g, LAYERS);
    assert!(found.is_empty(), "\n{}\n", found.join("\n"));
}

#[test]
fn the_check_finds_cycles_upward_imports_and_unplaced_modules() {
    let edge = |g: &mut Graph, a: &str, b: &str| {
        g.entry(a.into())
            .or_default()
            .insert(b.into(), format!("{a}.rs"));
    };
    let layers: &[(&str, &[&str])] = &[("low", &["a", "b", "c"]), ("high", &["d"])];
    let mut g = Graph::new();
    edge(&mut g, "d", "a");
    edge(&mut g, "a", "b");
    assert!(problems(&g, layers).is_empty());
    // A cycle within a layer.
    edge(&mut g, "b", "c");
    edge(&mut g, "c", "a");
    let p = problems(&g, layers);
    assert_eq!(
        p,
        ["import cycle between top-level modules: a -> b -> c -> a"]
    );
    // An import of a higher layer (which also closes a cycle through it).
    let mut g = Graph::new();
    edge(&mut g, "d", "a");
    edge(&mut g, "a", "d");
    let p = problems(&g, layers);
    assert!(p[0].starts_with("`a` (low) uses `d` (high)"), "{p:?}");
    assert!(p[1].contains("a -> d -> a"), "{p:?}");
    // A module no layer lists.
    let mut g = Graph::new();
    edge(&mut g, "a", "e");
    assert!(problems(&g, layers)[0].starts_with("module `e` is in no layer"));
}

#[test]
fn paths_are_read_from_code_only() {
    let code = code_only(
        "use crate::a::X; // crate::b\nlet s = \"crate::c\"; let c = '{';\n/* crate::d */ use crate::{e::{f, g}, h};\nfn f<'a>(x: &'a str) { crate::i::j(x) }\n",
    );
    assert_eq!(crate_paths(&code), ["a", "e", "h", "i"]);
    let (code, files) = without_tests(
        "use crate::a;\n#[cfg(test)]\nmod tests {\n use crate::b; { }\n}\n#[cfg(test)]\nmod more;\nuse crate::c;\n",
    );
    assert_eq!(crate_paths(&code), ["a", "c"]);
    assert_eq!(files, ["more"]);
}

#[test]
fn test_modules_in_files_of_their_own_are_left_out() {
    let d = tempfile::tempdir().unwrap();
    let write = |p: &str, text: &str| {
        let p = d.path().join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("lib.rs", "mod a;\nmod b;\n#[cfg(test)]\nmod tests;\n");
    write("tests.rs", "use crate::x;\n");
    // `a.rs`'s test module is `a/tests.rs`; `b/mod.rs`'s is `b/tests.rs`.
    write("a.rs", "mod inner;\n#[cfg(test)]\nmod tests;\n");
    write("a/inner.rs", "use crate::b;\n");
    write("a/tests.rs", "use crate::y;\n");
    write("b/mod.rs", "#[cfg(test)]\nmod tests;\n");
    write("b/tests.rs", "use crate::z;\n");
    let mut files = Vec::new();
    sources(d.path(), BTreeSet::new(), &mut files);
    let names: Vec<String> = files
        .iter()
        .map(|(p, _)| p.strip_prefix(d.path()).unwrap().display().to_string())
        .collect();
    assert_eq!(names, ["a.rs", "lib.rs", "a/inner.rs", "b/mod.rs"]);
}

#[test]
fn the_architecture_page_lists_each_layers_modules() {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .expect("docs/architecture.md");
    for (name, mods) in LAYERS {
        let short = name.split(':').next().unwrap_or(name);
        let row = page
            .lines()
            .find(|l| l.starts_with(&format!("| {short} |")))
            .unwrap_or_else(|| panic!("docs/architecture.md has no row for the layer {short}"));
        let listed: BTreeSet<&str> = row
            .rsplit('|')
            .nth(1)
            .unwrap_or("")
            .split('`')
            .skip(1)
            .step_by(2)
            .collect();
        let want: BTreeSet<&str> = mods.iter().copied().collect();
        assert_eq!(
            listed, want,
            "the `{short}` row of the layers table in docs/architecture.md"
        );
    }
}
