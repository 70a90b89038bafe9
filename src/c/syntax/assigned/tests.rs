use super::*;

/// A small deterministic generator of pseudo-random numbers (xorshift).
pub(in crate::c::syntax) struct Rng(pub(in crate::c::syntax) u64);

impl Rng {
    pub(in crate::c::syntax) fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    fn pick<'s>(&mut self, of: &[&'s str]) -> &'s str {
        of[self.below(of.len())]
    }
}

const NAMES: [&str; 6] = ["x", "y", "z", "i", "s", "p"];

/// A value: names, members, calls and brackets with commas, braces.
fn value(r: &mut Rng, depth: usize) -> String {
    let v = r.pick(&NAMES);
    if depth > 2 || r.below(3) == 0 {
        return [v.to_string(), format!("{}", r.below(10)), format!("s.{v}")][r.below(3)].clone();
    }
    let (a, b) = (value(r, depth + 1), value(r, depth + 1));
    [
        format!("{v} + {a}"),
        format!("f({a}, {b})"),
        format!("a[{a}]"),
        format!("(int[]){{{a}, {b}}}[0]"),
        format!("c ? {a} : {v}"),
        format!("p->{v}"),
    ][r.below(6)]
    .clone()
}

/// A statement of the shapes the walk tells apart.
fn statement(r: &mut Rng, depth: usize) -> String {
    let v = r.pick(&NAMES);
    let w = r.pick(&NAMES);
    let leaf = depth > 3;
    match r.below(if leaf { 8 } else { 22 }) {
        0 | 1 => format!("{v} = {};", value(r, 0)),
        2 => format!("{v} = {v} + 1;"),
        3 => format!("b[i] = {};", value(r, 0)),
        4 => format!("{v} += {w};"),
        5 => format!("{v} = {}, {w} = {};", value(r, 0), value(r, 0)),
        6 => format!("s.{v} = {};", value(r, 0)),
        7 => format!("p->{v} = {w};"),
        8 => format!("{{ {} }}", block(r, depth + 1)),
        9 => format!("if (c) {}", statement(r, depth + 1)),
        10 => format!(
            "if ({v}) {} else {}",
            statement(r, depth + 1),
            statement(r, depth + 1)
        ),
        11 => format!("for ({v} = 0; {v} < n; {v}++) {}", statement(r, depth + 1)),
        12 => format!(
            "for (int {v} = {w}; {v} < n; {v}++) {{ {} }}",
            block(r, depth + 1)
        ),
        13 => format!("while ({v}) {}", statement(r, depth + 1)),
        14 => format!("l: {}", statement(r, depth + 1)),
        15 if r.below(4) == 0 => "goto l;".to_string(),
        16 if r.below(4) == 0 => format!(
            "switch (k) {{ case 0: {} default: {} }}",
            statement(r, depth + 1),
            statement(r, depth + 1)
        ),
        17 if r.below(4) == 0 => format!("\n#ifdef A\n{}\n#endif\n", statement(r, depth + 1)),
        18 => format!("c && ({v} = {w});"),
        19 => format!("{v} = [&] {{ return {w}; }}();"),
        20 if r.below(2) == 0 => format!(
            "if (c) {{ {v} = {}; {} }} else if ({w}) {v} = {}; else {{ {} {v} = {}; }}",
            value(r, 0),
            statement(r, depth + 1),
            value(r, 0),
            statement(r, depth + 1),
            value(r, 0)
        ),
        _ => format!("{v} = {};", value(r, 0)),
    }
}

pub(in crate::c::syntax) fn block(r: &mut Rng, depth: usize) -> String {
    let n = 1 + r.below(4);
    (0..n)
        .map(|_| statement(r, depth))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A range as the decisions ask: a loop, or from a token to the end (unbalanced braces).
fn ranges(r: &mut Rng, src: &str) -> Vec<Range<usize>> {
    let toks = lex_range(src, 0..src.len(), true);
    let mut out = Vec::new();
    out.push(0..src.len());
    for _ in 0..3 {
        let a = r.below(toks.len());
        let b = a + r.below(toks.len() - a);
        out.push(toks[a].start()..toks[b].end());
    }
    out
}

/// The index answers as the walk of the whole range does, for every name, on generated
/// bodies: nested blocks, `for` inits, `v = v + 1`, values with commas and brackets,
/// branches without braces, labels, jumps, `case`, `#if`, members.
#[test]
fn the_index_answers_as_the_walk() {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut yes, mut no) = (0, 0);
    for _ in 0..3000 {
        let body = format!(
            "for (i = 0; i < n; i++) {}",
            if r.below(3) == 0 {
                statement(&mut r, 1)
            } else {
                format!("{{ {} }}", block(&mut r, 0))
            }
        );
        for range in ranges(&mut r, &body) {
            let ix = index(&body, &lex_range(&body, range.clone(), false));
            for v in NAMES.iter().chain(&["a", "b", "c", "l", "n", "for", "q"]) {
                let want = updates::assigned_before_read(&body, range.clone(), v);
                assert_eq!(
                    ix.get(v).copied().unwrap_or(false),
                    want,
                    "{v} in {:?}",
                    &body[range.clone()]
                );
                if want {
                    yes += 1;
                } else {
                    no += 1;
                }
            }
        }
    }
    // Both answers are common.
    assert!(yes > 2000 && no > 2000, "{yes} yes, {no} no");
}

/// Against the walk before branches counted, on generated bodies: a name it found assigned
/// first still is unless a `for` header's condition or step assigned it; one it
/// did not is now only after an `if` with an `else`, a block of its own, or where a branch
/// without braces assigns it (the old walk read it there, as it did not in braces).
#[test]
fn branches_add_to_the_walk_before() {
    let mut r = Rng(0x1234_5678_9abc_def1);
    let (mut more, mut fewer) = (0, 0);
    for _ in 0..3000 {
        let v = NAMES[r.below(NAMES.len())];
        let first = match r.below(3) {
            0 => format!("if (c) {v} = 1; else {{ {v} = 2; }}"),
            1 => format!("if (c) {{ {v} = 1; }} else if (d) {v} = 2; else {v} = 3;"),
            _ => String::new(),
        };
        let body = format!("for (i = 0; i < n; i++) {{ {first} {} }}", block(&mut r, 0));
        let toks = lex_range(&body, 0..body.len(), false);
        for v in NAMES {
            let (new, old) = (
                updates::assigned_before_read_in(&body, &toks, v),
                old_walk(&body, &toks, v),
            );
            if new && !old {
                let bare = toks.windows(2).any(|w| {
                    w[1].text(&body) == "{" && matches!(w[0].text(&body), ";" | "{" | "}")
                });
                let unbraced = toks.windows(3).any(|w| {
                    w[0].text(&body) == ")" && w[1].text(&body) == v && w[2].text(&body) == "="
                });
                assert!(body.contains("else") || bare || unbraced, "{v} in {body}");
                more += 1;
            } else if old && !new {
                // `v = …` in a `for` header past its init.
                let assigned_in_header = toks.windows(3).any(|w| {
                    w[0].text(&body) == ";" && w[1].text(&body) == v && w[2].text(&body) == "="
                });
                assert!(assigned_in_header, "{v} in {body}");
                fewer += 1;
            }
        }
    }
    assert!(more > 300, "{more} more, {fewer} fewer");
}

/// Asked again about a range, the answer comes from its index; other names and ranges
/// (and names the index does not hold) are answered too.
#[test]
fn ranges_answer_from_the_index_when_asked_again() {
    let src = "x0 = 1; for (i = 0; i < n; i++) { x = a[i]; b[i] = x; y = y + 1; } '1' + 2;";
    let last = LastAsked::default();
    let ask = |range: Range<usize>, v: &str| assigned_before_read(&last, src, range, v);
    let body = 8..src.find(" '1'").unwrap();
    for v in ["x", "y", "x", "i", "n", "y", "'1'", "1", "{", "q"] {
        let want = updates::assigned_before_read(src, body.clone(), v);
        assert_eq!(ask(body.clone(), v), want, "{v}");
        assert_eq!(ask(body.clone(), v), want, "{v}");
        let all = 0..src.len();
        let want = updates::assigned_before_read(src, all.clone(), v);
        assert_eq!(ask(all, v), want, "{v}");
    }
    assert!(ask(body.clone(), "x"));
    assert!(!ask(body.clone(), "y"));
    assert!(matches!(
        &last.0.lock().unwrap()[..],
        [(_, Cached::Indexed(r, _))] if *r == body
    ));
}

/// The first mention of a name found from the table of first mentions, as the search from
/// the start finds it.
#[test]
fn first_mentions_from_the_table() {
    let mut r = Rng(0x2545_f491_4f6c_dd1d);
    let mut yes = 0;
    for _ in 0..500 {
        let body = format!("{{ {} }}", block(&mut r, 0));
        let last = LastAsked::default();
        let toks = lex_range(&body, 0..body.len(), true);
        let a = r.below(toks.len());
        let range = a..a + r.below(toks.len() - a) + 1;
        for _ in 0..2 {
            for v in NAMES.iter().chain(&["for", "(", "q"]) {
                let want = updates::first_mention_in_for_init(&body, &toks[range.clone()], v);
                let got = first_mention_in_for_init(&last, &body, &toks, range.clone(), v);
                assert_eq!(got, want, "{v} in {:?}", &toks[range.clone()]);
                yes += usize::from(want);
            }
        }
    }
    assert!(yes > 10, "{yes}");
}

/// The walk before branches counted, as a reference.
fn old_walk(src: &str, toks: &[Token], v: &str) -> bool {
    let text = |k: usize| toks[k].text(src);
    if !toks.iter().any(|t| t.text(src) == v) {
        return false;
    }
    if toks
        .iter()
        .any(|t| matches!(t.text(src), "goto" | "case" | "default") || updates::conditional(src, t))
    {
        return false;
    }
    let header_close = updates::for_header_close(src, toks);
    // Per open block: whether an assignment has run in it or around it.
    let mut assigned = vec![false];
    let mut k = 0;
    while k < toks.len() {
        let here = *assigned.last().unwrap_or(&false);
        match text(k) {
            "{" => assigned.push(here),
            "}" if assigned.len() > 1 => {
                assigned.pop();
            }
            x if x == v => {
                let own_statement = k == 0
                    || matches!(text(k - 1), ";" | "{" | "}")
                    || (k >= 2 && text(k - 1) == "(" && text(k - 2) == "for")
                    || header_close == Some(k - 1);
                if !own_statement || toks.get(k + 1).map(|t| t.text(src)) != Some("=") {
                    if !here {
                        return false;
                    }
                    k += 1;
                    continue;
                }
                // The value, to its `;` or `,` (or the bracket that closes around it):
                // mentions there read the value from before.
                let mut depth = 0i32;
                let mut j = k + 2;
                while j < toks.len() {
                    match text(j) {
                        "(" | "[" | "{" => depth += 1,
                        ")" | "]" | "}" => depth -= 1,
                        ";" | "," if depth <= 0 => break,
                        x if x == v && !here => return false,
                        _ => {}
                    }
                    if depth < 0 {
                        break;
                    }
                    j += 1;
                }
                if let Some(a) = assigned.last_mut() {
                    *a = true;
                }
                k = j;
                continue;
            }
            _ => {}
        }
        k += 1;
    }
    true
}

/// A branch without braces is walked as one in braces: the same answers, assigned first
/// and to the end, for every name.
#[test]
fn branches_in_braces_or_not_alike() {
    let bodies = [
        "if (a[i] > 10) X",
        "b[i] = a[i]; if (a[i] > 10) X b[i] = 0;",
        "if (a[i] > 10) X b[i] = x;",
        "if (c) X else X",
        "if (c) X else if (d) X",
        "if (c) if (d) X else X",
        "if (c) { if (d) X } else X y = x;",
        "if (c) X else { y = 1; X }",
        "y = 1; if (c) X",
    ];
    for b in bodies {
        let braced = b.replace('X', "{ x = i + 0.25; }");
        let plain = b.replace('X', "x = i + 0.25;");
        for shape in ["for (i = 0; i < n; i++) { B }", "for (i = 0; i < n; i++) B"] {
            let (braced, plain) = (shape.replace('B', &braced), shape.replace('B', &plain));
            let answers = |s: &str| {
                let toks = lex_range(s, 0..s.len(), false);
                let body = &toks[updates::for_header_close(s, &toks).unwrap() + 1..];
                let mut names = walk::All::default();
                let first = walk::assigned_first(s, &toks, &mut names).unwrap();
                let mut at_end = walk::All::default();
                let end = walk::assigned_to_end(s, body, &mut at_end).unwrap();
                ["x", "y", "b", "i"].map(|v| {
                    (
                        names.0.get(v).map(|&k| first[k as usize]),
                        at_end.0.get(v).map(|&k| end[k as usize]),
                        assigned_every_iteration(s, 0..s.len(), v),
                    )
                })
            };
            assert_eq!(answers(&braced), answers(&plain), "{plain}");
        }
    }
    // The conditional write of the loop, in braces or not: assigned first (never read), not
    // in every iteration.
    for s in [
        "for (i = 0; i < n; i++) { if (a[i] > 10) peak = x[i] + 0.25; b[i] = 0; }",
        "for (i = 0; i < n; i++) { if (a[i] > 10) { peak = x[i] + 0.25; } b[i] = 0; }",
    ] {
        assert!(updates::assigned_before_read(s, 0..s.len(), "peak"), "{s}");
        assert!(!assigned_every_iteration(s, 0..s.len(), "peak"), "{s}");
    }
}

/// Every iteration of the loop assigns the name, on every path to the end of its body.
#[test]
fn assigned_every_iteration_of_the_loop() {
    let every = |s: &str, v: &str| assigned_every_iteration(s, 0..s.len(), v);
    let yes = [
        "for (i = 0; i < n; i++) { x = a[i]; b[i] = x; }",
        "for (i = 0; i < n; i++) { if (a[i] > 0) { x = i; } else { x = -i; } }",
        "for (i = 0; i < n; i++) { if (a[i] > 0) x = i; else x = -i; }",
        "for (i = 0; i < n; i++) x = a[i];",
        "{ for (i = 0; i < n; i++) { { x = a[i]; } b[i] = x; } }",
        "for (i = 0; i < n; i++) { x = a[i]; if (x > 0) { b[i] = x; } }",
    ];
    for s in yes {
        assert!(every(s, "x"), "{s}");
    }
    let no = [
        // Some iterations skip the assignment.
        "for (i = 0; i < n; i++) { if (a[i] > 10) { x = i; } }",
        "for (i = 0; i < n; i++) { if (a[i] > 10) x = i; }",
        "for (i = 0; i < n; i++) { if (a[i] > 0) { x = i; } else if (a[i] < 0) { x = -i; } }",
        "for (i = 0; i < n; i++) if (a[i] > 10) x = i;",
        // An iteration ends before it.
        "for (i = 0; i < n; i++) { if (a[i] < 0) continue; x = a[i]; }",
        "for (i = 0; i < n; i++) { if (a[i] < 0) break; x = a[i]; }",
        // In an inner loop (it may run no iteration), or a `?:` / `&&` part.
        "for (i = 0; i < n; i++) { for (j = 0; j < m; j++) x = j; }",
        "for (i = 0; i < n; i++) { c ? (x = 1) : 0; }",
        "for (i = 0; i < n; i++) { c && (x = 1); }",
        // A `switch` or `goto`, never mentioned, or no loop.
        "for (i = 0; i < n; i++) { switch (c) { case 1: x = 1; break; default: x = 2; } }",
        "for (i = 0; i < n; i++) { b[i] = a[i]; }",
        "x = 1;",
        // More than the loop in the range.
        "{ for (i = 0; i < n; i++) { b[i] = 0; } x = 1; }",
    ];
    for s in no {
        assert!(!every(s, "x"), "{s}");
    }
}
