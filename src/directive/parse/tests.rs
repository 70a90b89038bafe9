use super::*;

fn p(s: &str) -> Directive {
    parse_directive(s, 0..s.len(), &Tables::builtin()).unwrap()
}

#[test]
fn combined_with_clauses_and_spans() {
    let s = "parallel loop copy(a[0:n], b) reduction(+:s) gang";
    let d = p(s);
    assert_eq!(d.name, "parallel loop");
    assert_eq!(d.clauses.len(), 3);
    let copy = &d.clauses[0];
    assert_eq!(&s[copy.span()], "copy(a[0:n], b)");
    let items: Vec<_> = copy.items().map(|i| &s[i.span()]).collect();
    assert_eq!(items, ["a[0:n]", "b"]);
    assert_eq!(d.clauses[1].modifier(), Some("+"));
    assert_eq!(d.end(), s.len());
}

#[test]
fn a_name_carries_its_compute_kind() {
    // The kind is made with the name, whichever way the name is made.
    for (s, kind) in [
        ("parallel loop gang", Some("parallel")),
        ("kernels", Some("kernels")),
        ("serial loop", Some("serial")),
        ("loop gang", None),
        ("enter data copyin(a)", None),
    ] {
        let d = p(s);
        assert_eq!(d.compute_kind(), kind, "{s}");
        assert_eq!(
            d.compute_kind(),
            super::super::compute_kind_of(&d.name),
            "{s}"
        );
        let mut renamed = d.clone();
        renamed.name = "parallel".into();
        assert_eq!(renamed.compute_kind(), Some("parallel"));
    }
}

#[test]
fn short_names_and_arguments_are_held_without_allocating() {
    // A large file has a parsed directive per site for the whole run: its usual names,
    // items and lists fit in the text type itself; a long argument list is still kept whole.
    let long = "x_with_a_long_name[0:n], y_with_a_long_name[0:n]";
    let s = format!("parallel loop copy(a[0:n]) present({long})");
    let d = p(&s);
    let copy = &d.clauses[0];
    assert!(!d.name.is_heap_allocated());
    assert!(!copy.name.is_heap_allocated() && copy.spelled.is_none());
    assert!(copy.items().all(|i| !i.text.is_heap_allocated()));
    assert!(!copy.args.as_ref().unwrap().list.is_heap_allocated());
    assert_eq!(d.clauses[1].list_text(), long);
    assert_eq!(d.clauses[1].arg_text().as_deref(), Some(long));
}

#[test]
fn a_minus_reduction_is_a_sum() {
    let s = "parallel loop reduction(-:s)";
    let d = p(s);
    assert_eq!(d.clauses[0].modifier(), Some("+"));
    let m = &d.clauses[0]
        .args
        .as_ref()
        .unwrap()
        .modifier
        .as_ref()
        .unwrap()
        .span();
    assert_eq!(&s[m.clone()], "-");
}

#[test]
fn wait_devnum_separates_the_device_from_the_queues() {
    for s in ["wait(devnum: 0 : queues: q, 2)", "wait(devnum:d(1):q,2)"] {
        let d = p(s);
        let a = d.arg.as_ref().unwrap();
        assert_eq!(a.modifier.as_ref().unwrap().text, "devnum");
        let items: Vec<_> = a.items.iter().map(|i| &s[i.span()]).collect();
        assert_eq!(items, ["q", "2"], "{s}");
    }
    let s = "parallel wait(devnum: 1: queues: 3)";
    let items: Vec<_> = p(s).clauses[0].items().map(|i| i.text.clone()).collect();
    assert_eq!(items, ["3"]);
    for bad in [
        "wait(devnum: 0)",
        "wait(devnum: : 1)",
        "wait(devnum: 0 : queues: )",
    ] {
        assert!(
            parse_directive(bad, 0..bad.len(), &Tables::builtin()).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn continuations_comments_and_modifiers() {
    let s = "data copyin(readonly: x) \\\n  /* keep */ pcreate(y[1:2]) // tail";
    let d = p(s);
    assert_eq!(d.clauses[0].modifier(), Some("readonly"));
    assert_eq!(d.clauses[1].name, "create");
    assert_eq!(d.comments().len(), 2);
}

#[test]
fn items_without_continuations_and_comments_list_verbatim() {
    let s = "parallel present(  \\\n   a[0:n] /* x */,b \\\n ) copyin(/* c */ c)";
    let d = p(s);
    let items: Vec<_> = d
        .clauses
        .iter()
        .flat_map(|c| c.items())
        .map(|i| i.text.as_str())
        .collect();
    assert_eq!(items, ["a[0:n]", "b", "c"]);
    assert_eq!(d.clauses[0].list_text(), "  \\\n   a[0:n] /* x */,b \\\n ");
    assert_eq!(d.clauses[1].list_text(), "/* c */ c");
}

#[test]
fn a_line_comment_ends_the_clause_list() {
    // The preprocessor removes `//->u)`: the clause is `attach(f`, unbalanced.
    for bad in ["enter data attach(f//->u)", "parallel copy(a//[0:n])"] {
        assert!(
            parse_directive(bad, 0..bad.len(), &Tables::builtin()).is_err(),
            "{bad}"
        );
    }
    // A comment after a complete list, and one spliced onto the next line, stay comments.
    let s = "parallel copy(a[0:n] /* x */) // tail (";
    assert_eq!(p(s).clauses[0].items().count(), 1);
}

#[test]
fn errors_are_positioned() {
    let s = "parallel copy(a) bogus(1)";
    let e = parse_directive(s, 0..s.len(), &Tables::builtin()).unwrap_err();
    assert_eq!((e.offset, e.rule), (17, id::UNKNOWN_CLAUSE));
    let s = "loop num_gangs(2)";
    assert_eq!(
        parse_directive(s, 0..s.len(), &Tables::builtin())
            .unwrap_err()
            .rule,
        id::CLAUSE_NOT_ALLOWED
    );
    for (bad, rule) in [
        ("loop seq gang", id::CONFLICTING_CLAUSES),
        ("loop gang auto", id::CONFLICTING_CLAUSES),
        ("loop auto vector", id::CONFLICTING_CLAUSES),
        ("parallel if(a) if(b)", id::DUPLICATE_CLAUSE),
        (
            "parallel private(x) firstprivate(x)",
            id::CONFLICTING_CLAUSES,
        ),
        (
            "parallel copyin(a[0:n]) present(a[0:n])",
            id::CONFLICTING_CLAUSES,
        ),
        ("data copy(a[0:n], b, a [n:n])", id::DUPLICATE_CLAUSE),
        // One item per clause: compared across clauses.
        ("data copy(a) copyout(a[0:n])", id::CONFLICTING_CLAUSES),
        ("parallel copy(a, a)", id::DUPLICATE_CLAUSE),
        (
            "parallel private(x) reduction(+:x)",
            id::CONFLICTING_CLAUSES,
        ),
        ("data copy(a[0:n][0:m], a[n:1])", id::DUPLICATE_CLAUSE),
        (
            "enter data copyin(s.p) create(s . p[0:4])",
            id::CONFLICTING_CLAUSES,
        ),
    ] {
        assert_eq!(
            parse_directive(bad, 0..bad.len(), &Tables::builtin())
                .unwrap_err()
                .rule,
            rule,
            "{bad}"
        );
    }
    for ok in [
        "parallel num_gangs(1) device_type(nvidia) num_gangs(4)",
        "parallel loop copy(m[k].b[0:n], m[k].c[5:n])",
        "parallel copy(a[0:n]) private(a)",
        "parallel loop copy(a[0:n]) reduction(+:s)",
    ] {
        assert!(
            parse_directive(ok, 0..ok.len(), &Tables::builtin()).is_ok(),
            "{ok}"
        );
    }
    for bad in [
        "",
        "declare copyin(#pragma acc x)",
        "parallel copy(a",
        "enter",
        "loop seq(1)",
        "parallel reduction(a)",
        "loop reduction(%:x)",
        "parallel ;",
    ] {
        assert!(
            parse_directive(bad, 0..bad.len(), &Tables::builtin()).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn directive_arguments() {
    let d = p("wait(1, 2) async(3)");
    assert_eq!(d.arg.unwrap().items.len(), 2);
    let d = p("routine(f) seq");
    assert_eq!(d.arg.unwrap().items[0].text, "f");
    let d = p("atomic capture");
    assert!(d.has("capture"));
    let d = p("loop gang(num:4, static:*) vector(length:32)");
    assert_eq!(d.clauses[0].items().count(), 2);
}

#[test]
fn the_grammar_alone_reads_a_routine_name_its_checks_reject() {
    let named = |s: &str, dialect| {
        let d = parse_grammar_in(s, 0..s.len(), &Tables::builtin(), dialect).unwrap();
        assert_eq!(d.name, "routine", "{s}");
        d.arg.is_some()
    };
    for s in [
        "routine(f) seq",
        "routine (f) seq",
        "routine(4) seq",
        "routine(f, g) seq",
    ] {
        assert!(named(s, Dialect::C), "{s}");
    }
    for s in ["ROUTINE (f) SEQ", "routine(f) vector", "Routine(4)"] {
        assert!(named(s, Dialect::Fortran), "{s}");
    }
    for (s, dialect) in [
        ("routine seq", Dialect::C),
        ("routine gang worker", Dialect::C),
        ("ROUTINE VECTOR", Dialect::Fortran),
        ("routine  seq", Dialect::Fortran),
    ] {
        assert!(!named(s, dialect), "{s}");
    }
    // The full parse rejects what the grammar alone reads.
    assert!(parse_directive_in("routine(4) seq", 0..14, &Tables::builtin(), Dialect::C).is_err());
}
