use super::merge::placeholders;
use super::*;
use crate::rules::Severity;

fn layer(text: &str) -> Layer<'_> {
    Layer {
        path: "r.toml".into(),
        text,
        in_config: false,
    }
}

fn ok(text: &str) -> Tables {
    match apply(&[layer(text)]) {
        Ok((t, _)) => t,
        Err(e) => panic!(
            "{}",
            e.iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        ),
    }
}

/// The rendered errors of `text`.
fn errors(text: &str) -> Vec<String> {
    match apply(&[layer(text)]) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.iter().map(|e| e.to_string()).collect(),
    }
}

#[test]
fn no_layers_give_the_builtin_tables() {
    let (t, notes) = apply(&[]).unwrap();
    let b = Tables::builtin();
    assert!(notes.is_empty());
    assert_eq!(t.diagnostics.len(), b.diagnostics.len());
    assert_eq!(t.runtime.len(), b.runtime.len());
    assert_eq!(
        t.runtime("acc_malloc").unwrap().omp,
        b.runtime("acc_malloc").unwrap().omp
    );
}

#[test]
fn a_rule_entry_merges_field_by_field() {
    let b = Tables::builtin();
    let t = ok("[[rule]]\nid = \"implicit-pointer\"\nseverity = \"error\"\n");
    let r = t.diagnostic(id::IMPLICIT_POINTER.as_str()).unwrap();
    let orig = b.diagnostic(id::IMPLICIT_POINTER.as_str()).unwrap();
    assert_eq!(r.severity, Severity::Error);
    assert_eq!(orig.severity, Severity::Warning);
    assert_eq!(r.doc, orig.doc, "unset fields keep their built-in value");
    let t = ok("[[rule]]\nid = \"present-unchecked\"\nseverity = \"off\"\n");
    assert_eq!(
        t.diagnostic(id::PRESENT_UNCHECKED.as_str())
            .unwrap()
            .severity,
        Severity::Off
    );
    // Order is kept, nothing is added.
    assert_eq!(t.diagnostics.len(), b.diagnostics.len());
    assert_eq!(t.diagnostics[0].id, b.diagnostics[0].id);
}

#[test]
fn a_routine_entry_changes_its_mapping_and_replace_starts_afresh() {
    let t = ok("[[routine]]\nname = \"acc_malloc\"\nomp = \"my_alloc({0})\"\n");
    let r = t.runtime("acc_malloc").unwrap();
    assert_eq!(r.omp.as_deref(), Some("my_alloc({0})"));
    assert_eq!(r.rule_id, id::RUNTIME_MEMORY, "kept");
    let t = ok(
        "[[routine]]\nname = \"acc_get_num_devices\"\nreplace = true\nargs = 1\nrule = \"runtime-not-translated\"\ndoc = \"d\"\nadvice = \"count them yourself\"\n",
    );
    let r = t.runtime("acc_get_num_devices").unwrap();
    assert!(r.omp.is_none() && r.host.is_none() && r.devtype.is_none());
    assert_eq!(r.advice.as_deref(), Some("count them yourself"));
}

#[test]
fn new_routines_and_their_rules_are_added() {
    let t = ok(concat!(
        "[[rule]]\nid = \"vendor-alloc\"\nseverity = \"note\"\nsummary = \"s\"\ndoc = \"d\"\n\n",
        "[[routine]]\nname = \"acc_vendor_alloc\"\nargs = 2\nomp = \"omp_alloc({0}, {1})\"\nrule = \"vendor-alloc\"\ndoc = \"vendor\"\n",
    ));
    assert_eq!(t.runtime("acc_vendor_alloc").unwrap().rule, "vendor-alloc");
    assert_eq!(
        t.diagnostic("vendor-alloc").unwrap().severity,
        Severity::Note
    );
    assert_eq!(t.diagnostics.len(), Tables::builtin().diagnostics.len() + 1);
}

#[test]
fn clause_aliases_and_map_types() {
    let t = ok(
        "[[clause]]\nname = \"copy\"\naliases = [\"pcopy\"]\n\n[[clause]]\nname = \"present\"\nmap = \"to\"\n",
    );
    assert!(
        t.clause("present_or_copy").is_none(),
        "the list is replaced"
    );
    assert_eq!(t.clause("pcopy").unwrap().name, "copy");
    assert_eq!(t.clause("present").unwrap().map.as_deref(), Some("to"));
    let t = ok(
        "[[clause]]\nname = \"copyin\"\naliases = [\"pcopyin\", \"present_or_copyin\", \"copy_in\"]\n",
    );
    assert_eq!(t.clause("copy_in").unwrap().name, "copyin");
}

#[test]
fn layers_apply_in_order_and_later_ones_win() {
    let a = layer("[[rule]]\nid = \"simd-atomic\"\nseverity = \"error\"\n");
    let b = Layer {
        path: "b.toml".into(),
        text: "[[rule]]\nid = \"simd-atomic\"\nsummary = \"changed\"\n",
        in_config: true,
    };
    let (t, notes) = apply(&[a, b]).unwrap();
    let r = t.diagnostic(id::SIMD_ATOMIC.as_str()).unwrap();
    assert_eq!(
        (r.severity, r.summary.as_str()),
        (Severity::Error, "changed")
    );
    assert_eq!(
        notes,
        [
            "rules: r.toml (1 rule(s) changed)",
            "rules: b.toml (1 rule(s) changed)"
        ]
    );
}

#[test]
fn errors_are_positioned() {
    assert_eq!(
        errors("[[rule]]\nid = \"simd-atomic\"\nseverty = \"error\"\n"),
        [
            "r.toml:3:1: error: unknown field `severty`, expected one of `id`, `severity`, `summary`, `doc`, `before`, `after`, `profile` [rules-file]"
        ]
    );
    let e = errors("[[rule]]\nid = \"simd-atomic\"\nseverity = \"fatal\"\n");
    assert!(
        e[0].starts_with("r.toml:3:12: error: unknown variant `fatal`"),
        "{e:?}"
    );
    let e = errors("[[routine]]\nname = \"acc_malloc\"\nargs = \"one\"\n");
    assert!(
        e[0].starts_with("r.toml:3:8: error: invalid type: string \"one\", expected usize"),
        "{e:?}"
    );
    let e = errors("[[rule]]\nid = \"implicit-pointr\"\nseverity = \"off\"\n");
    assert_eq!(
        e,
        [
            "r.toml:2:6: error: unknown rule 'implicit-pointr' (did you mean 'implicit-pointer'?) (`acc2omp rules` lists them; a new rule needs `severity`, `summary` and `doc`) [rules-file]"
        ]
    );
    let e = errors("[rules]\nx = 1\n");
    assert!(
        e[0].starts_with("r.toml:1:2: error: unknown key `rules`"),
        "{e:?}"
    );
    let e = errors("[rule]\nid = \"x\"\n");
    assert!(
        e[0].starts_with("r.toml:1:1: error: `rule` must be an array of tables"),
        "{e:?}"
    );
    let e = errors("[[rule]\nid = 1");
    assert!(e[0].starts_with("r.toml:1:"), "{e:?}");
    let e = errors("[[rule]]\nseverity = \"off\"\n");
    assert!(
        e[0].starts_with("r.toml:1:1: error: each [[rule]] entry needs `id`"),
        "{e:?}"
    );
}

#[test]
fn references_and_restrictions_are_checked() {
    let e = errors("[[routine]]\nname = \"acc_malloc\"\nrule = \"runtime-memroy\"\n");
    assert_eq!(
        e,
        [
            "r.toml:3:8: error: routine 'acc_malloc' names rule 'runtime-memroy', which does not exist (did you mean 'runtime-memory'?) [rules-file]"
        ]
    );
    let e = errors("[[routine]]\nname = \"acc_malloc\"\nomp = \"f({2})\"\n");
    assert!(
        e[0].starts_with("r.toml:3:7: error: `omp` uses argument 2"),
        "{e:?}"
    );
    let e = errors("[[routine]]\nname = \"acc_malloc\"\nremove = true\n");
    assert!(e[0].contains("more than one replacement"), "{e:?}");
    let e = errors(
        "[[routine]]\nname = \"acc_attach\"\npragma = \"target enter data map(alloc: {ptr1}[:0])\"\n",
    );
    assert!(e[0].contains("`pragma` uses argument 1"), "{e:?}");
    let e = errors("[[routine]]\nname = \"acc_get_num_devices\"\ndevtype = 3\n");
    assert!(
        e[0].starts_with("r.toml:3:11: error: `devtype` is argument 3"),
        "{e:?}"
    );
    let e = errors(
        "[[routine]]\nname = \"acc_copyin\"\nreplace = true\nargs = 1\npragma = \"target enter data map(to: {bytes})\"\nrule = \"runtime-data\"\ndoc = \"d\"\n",
    );
    assert!(
        e[0].contains("{bytes} needs a pointer and a byte count"),
        "{e:?}"
    );
    let e =
        errors("[[routine]]\nname = \"omp_foo\"\nargs = 0\nrule = \"runtime-data\"\ndoc = \"d\"\n");
    assert!(e[0].contains("not an OpenACC routine name"), "{e:?}");
    let e = errors("[[routine]]\nname = \"acc_new\"\nargs = 0\nomp = \"f()\"\ndoc = \"d\"\n");
    assert!(
        e[0].starts_with("r.toml:1:1: error: missing field `rule`"),
        "{e:?}"
    );
    let e = errors("[[clause]]\nname = \"copy\"\non = [\"loop\"]\n");
    assert!(
        e[0].starts_with("r.toml:3:1: error: `on` of a clause cannot be changed"),
        "{e:?}"
    );
    let e = errors("[[clause]]\nname = \"copyout\"\nmap = \"to\"\n");
    assert!(e[0].contains("on parallel, serial, kernels, data, exit data, declare the map type must be one of: from"), "{e:?}");
    let e = errors("[[clause]]\nname = \"gang\"\nmap = \"to\"\n");
    assert!(e[0].contains("not a data clause"), "{e:?}");
    let e = errors("[[clause]]\nname = \"copy\"\naliases = [\"copyin\"]\n");
    assert!(
        e[0].contains("alias 'copyin' already spells clause 'copyin'"),
        "{e:?}"
    );
    let e = errors("[[clause]]\nname = \"copi\"\nmap = \"to\"\n");
    assert!(
        e[0].contains("unknown clause 'copi' (did you mean 'copy'?)"),
        "{e:?}"
    );
    let e = errors("[[directive]]\nname = \"parallel\"\nstmt = false\n");
    assert!(
        e[0].starts_with("r.toml:1:1: error: [[directive]] 'parallel' cannot be changed"),
        "{e:?}"
    );
    let e = errors("[[rule]]\nid = \"simd-atomic\"\nprofile = \"fast\"\n");
    assert!(e[0].contains("unknown profile 'fast'"), "{e:?}");
    let e =
        errors("[[rule]]\nid = \"new-one\"\nseverity = \"note\"\nsummary = \"s\"\ndoc = \"d\"\n");
    assert!(e[0].contains("none names it"), "{e:?}");
}

#[test]
fn several_errors_are_all_reported_in_order() {
    let e = errors(
        "[[rule]]\nid = \"a-b\"\nseverity = \"off\"\n\n[[rule]]\nid = \"simd-atomic\"\nseverity = 3\n",
    );
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(
        e[0].starts_with("r.toml:2:") && e[1].starts_with("r.toml:7:"),
        "{e:?}"
    );
}

#[test]
fn placeholders_and_suggestions() {
    assert_eq!(
        placeholders("f({0}, {12}) {x} {").collect::<Vec<_>>(),
        [0, 12]
    );
    assert_eq!(
        suggest("copi", ["copy", "create"].into_iter()),
        " (did you mean 'copy'?)"
    );
    assert_eq!(suggest("zzzzzz", ["copy"].into_iter()), "");
}
