use super::*;

fn f(s: &str) -> Result<Directive, Vec<ParseError>> {
    parse_directive_all_in(s, 0..s.len(), &Tables::builtin(), Dialect::Fortran)
}

fn ok(s: &str) -> Directive {
    f(s).unwrap_or_else(|e| panic!("{s}: {e:?}"))
}

fn rule(s: &str) -> &'static str {
    f(s).expect_err(s)[0].rule.as_str()
}

#[test]
fn names_are_case_insensitive_and_canonical() {
    let s = " PARALLEL LOOP Copy(A(1:N), b(:,1:n)) Reduction(MAX:x) Gang";
    let d = ok(s);
    assert_eq!(d.name, "parallel loop");
    assert_eq!(&s[d.name_span()], "PARALLEL LOOP");
    let names: Vec<_> = d
        .clauses
        .iter()
        .map(|c| (c.name.as_str(), c.spelled()))
        .collect();
    assert_eq!(
        names,
        [
            ("copy", "Copy"),
            ("reduction", "Reduction"),
            ("gang", "Gang")
        ]
    );
    let items: Vec<_> = d.clauses[0].items().map(|i| &s[i.span()]).collect();
    assert_eq!(items, ["A(1:N)", "b(:,1:n)"]);
    assert_eq!(d.clauses[1].modifier(), Some("MAX"));
    assert_eq!(d.end(), s.len());
}

#[test]
fn compound_names_with_or_without_blanks() {
    for (s, name) in [
        ("parallelloop", "parallel loop"),
        ("kernels   loop", "kernels loop"),
        ("SerialLoop", "serial loop"),
        ("enterdata copyin(a)", "enter data"),
        ("exit  data delete(a)", "exit data"),
        ("end parallel", "end parallel"),
        ("endparallel", "end parallel"),
        ("END PARALLEL LOOP", "end parallel loop"),
        ("end kernels loop", "end kernels loop"),
        ("endserial loop", "end serial loop"),
        ("end data", "end data"),
        ("end host_data", "end host_data"),
        ("endatomic", "end atomic"),
        ("end kernels", "end kernels"),
        ("end serial", "end serial"),
        ("loop", "loop"),
        ("host_data use_device(p)", "host_data"),
    ] {
        assert_eq!(ok(s).name, name, "{s}");
    }
    let t = Tables::builtin();
    let name = |s: &str| directive_name_in(s, 0..s.len(), &t, Dialect::Fortran);
    assert_eq!(name("end parallel copy(("), Some("end parallel".into()));
    assert_eq!(name("parallel copy(("), Some("parallel".into()));
    assert_eq!(name("end loop"), Some("end loop".into()));
    assert_eq!(name("end update"), None);
    assert_eq!(name("bogus"), None);
}

#[test]
fn end_directives_take_nothing_and_name_a_construct() {
    assert_eq!(rule("end parallel copy(a)"), "parse-error");
    assert_eq!(rule("end"), "parse-error");
    assert_eq!(ok("end loop").name, "end loop");
    assert_eq!(rule("end foo"), "parse-error");
    assert_eq!(rule("end parallelx"), "parse-error");
    let d = ok("  end   parallel  ");
    assert!(d.clauses.is_empty() && d.arg.is_none());
}

#[test]
fn fortran_arguments() {
    for s in [
        "parallel if(n > 100 .and. .not. flag)",
        "parallel if(x .eq. 1 .or. y /= 2)",
        "data copy(t%a%b(1:n), t%c) copyin(s(i)%v(:))",
        "parallel loop present(a) private(tmp, j)",
        "loop reduction(.and.:ok) reduction(iand:m) reduction(.NEQV.:p)",
        "loop reduction(+:s) reduction(*:p) reduction(ieor:q) reduction(-:r)",
        "loop collapse(2) gang(num:4, static:*) vector(length:128)",
        "routine(saxpy) seq",
        "routine vector",
        "wait(1, q) async(2)",
        "wait",
        "cache(a(i-1:i+1), b(j))",
        "declare create(x, /blk/) copyin(y)",
        "declare device_resident(z)",
        "update host(a(1:n)) if_present",
        "enter data copyin(a(-5:5))",
        "parallel num_gangs(n/2) vector_length(128_8)",
        "parallel default(NONE)",
        "parallel copyin(s(1:len('x''y')))",
        "kernels loop independent",
        "atomic update",
        "atomic capture",
        "host_data use_device(a, b)",
        "parallel copy(a(:,:,k))",
        "set device_num(0) device_type(nvidia)",
        "init device_type(host)",
    ] {
        ok(s);
    }
    for (s, want) in [
        (
            "parallel copy(a(1:n)) copyin(A(2:3))",
            "conflicting-clauses",
        ),
        ("parallel copy(x, X)", "duplicate-clause"),
        ("parallel private(i) firstprivate(I)", "conflicting-clauses"),
        ("loop reduction(.xor.:x)", "parse-error"),
        ("loop reduction(iand x)", "parse-error"),
        ("parallel if(a b)", "invalid-argument"),
        ("parallel if(a .and.)", "invalid-argument"),
        ("parallel num_gangs(1 i)", "invalid-argument"),
        ("parallel copy(t%)", "invalid-argument"),
        ("parallel copy(a:b)", "invalid-argument"),
        ("parallel private(a(1:2))", "invalid-argument"),
        ("cache(s)", "invalid-argument"),
        ("declare create(a(1:n))", "invalid-argument"),
        ("parallel default(shared)", "invalid-argument"),
        ("parallel bogus(1)", "unknown-clause"),
        ("loop num_gangs(2)", "clause-not-allowed"),
        ("routine(f, g)", "invalid-argument"),
        ("parallel copy(a", "parse-error"),
    ] {
        assert_eq!(rule(s), want, "{s}");
    }
}

#[test]
fn quotes_are_doubled_not_escaped() {
    let s = "parallel if(s == 'a\\') copy(b)";
    let d = ok(s);
    assert_eq!(d.clauses.len(), 2);
    let s = "parallel if(s == 'it''s)') copy(c)";
    assert_eq!(ok(s).clauses[1].list_text(), "c");
}

#[test]
fn c_text_is_read_as_before() {
    // The C reading stays: `end` is no directive, comments are comments.
    let t = Tables::builtin();
    assert!(parse_directive("end parallel", 0..12, &t).is_err());
    let s = "PARALLEL";
    assert!(parse_directive(s, 0..s.len(), &t).is_err());
    let s = "parallel copy(a) /* c */";
    assert_eq!(
        parse_directive(s, 0..s.len(), &t).unwrap().comments().len(),
        1
    );
}

#[test]
fn hostile_text_does_not_panic() {
    for s in [
        "",
        "&",
        "end",
        "end end",
        "enter",
        "exitdata",
        "parallel(",
        "parallel copy(')",
        "parallel copy('",
        "é",
        "parallel copy(é)",
        "endé",
        "parallel loop loop",
        "loop reduction(:x)",
        "wait(devnum:)",
        "cache()",
        "routine()",
        "parallel if()",
        "parallel copy(/)",
        "parallel copy(//)",
        "parallel copy(/ /)",
    ] {
        let _ = f(s);
    }
}
