//! How C and C++ code updates and uses variables: reduction idioms (`s += x`,
//! `if (x > m) m = x;`, `m = m > x ? m : x`), assignments before reads, loop inits, and the
//! members of a structure a region uses.

use super::assigned::walk;
use crate::lex::{TokKind, Token};
use crate::syntax::{Access, MemberUses};
use std::ops::Range;

/// Whether every mention of `v` in `toks` is an update by `op`, and there is one.
pub(super) fn updated_only_by(src: &str, toks: &[Token], v: &str, op: &str) -> bool {
    let text: Vec<&str> = toks.iter().map(|t| t.text(src)).collect();
    let mut any = false;
    let mut k = 0;
    while k < toks.len() {
        if toks[k].kind != TokKind::Ident || text[k] != v {
            k += 1;
            continue;
        }
        let Some((next, update)) = step(src, toks, &text, k, v, op, || enclosing_open(&text, k))
        else {
            return false;
        };
        any |= update;
        k = next;
    }
    any
}

/// The walk of [`updated_only_by`] at a mention `k` of `v`: the token it goes on from, and
/// whether the mention is an update by `op` (`x.v` is a member, not `v`); none when it is
/// neither. `open`: the `(` around `k`, asked only where an `if` condition may be.
pub(super) fn step(
    src: &str,
    toks: &[Token],
    text: &[&str],
    mut k: usize,
    v: &str,
    op: &str,
    open: impl FnOnce() -> Option<usize>,
) -> Option<(usize, bool)> {
    if k > 0 && matches!(text[k - 1], "." | "->" | "::") {
        return Some((k + 1, false));
    }
    // `if (x > v) v = x;`
    if let Some(open) = open()
        && let Some((o, end)) = conditional_update_in(text, v, open)
        && o == op
    {
        return Some((end, true));
    }
    let o = reduction_op(src, toks[k].start(), v).or_else(|| ternary_update(text, k, v));
    if o != Some(op) {
        return None;
    }
    // The rest of the update (`s = s + x;`) mentions `s` again.
    while k < toks.len() && text[k] != ";" {
        k += 1;
    }
    Some((k, true))
}

/// The tokens from `from` up to (not including) the first `stop` at bracket depth 0.
fn until<'t>(text: &[&'t str], from: usize, stop: &str) -> Option<(Vec<&'t str>, usize)> {
    let mut depth = 0i32;
    for (k, &t) in text.iter().enumerate().skip(from) {
        if depth == 0 && t == stop {
            return Some((text[from..k].to_vec(), k));
        }
        match t {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return None;
        }
    }
    None
}

/// `max` or `min` for a comparison `a cmp b` where `a` is the variable and `b` the value
/// that replaces it (or the other way round).
fn max_or_min(var_first: bool, cmp: &str) -> Option<&'static str> {
    let greater = match cmp {
        ">" | ">=" => true,
        "<" | "<=" => false,
        _ => return None,
    };
    // `x > v` (value first, greater) replaces a smaller `v`: max.
    Some(if greater != var_first { "max" } else { "min" })
}

/// `if (x > v) v = x;` (or `v < x`, and the `min` forms) with the mention of `v` in the
/// condition at `k`: the operator and the index after the statement.
#[cfg(test)]
fn conditional_update(text: &[&str], k: usize, v: &str) -> Option<(&'static str, usize)> {
    conditional_update_in(text, v, enclosing_open(text, k)?)
}

/// The `(` that encloses token `k`, if any: parentheses only, a `)` with no `(` before it is
/// passed over.
pub(super) fn enclosing_open(text: &[&str], k: usize) -> Option<usize> {
    let mut depth = 0i32;
    (0..k).rev().find(|&p| {
        match text[p] {
            ")" => depth += 1,
            "(" if depth == 0 => return true,
            "(" => depth -= 1,
            _ => {}
        }
        false
    })
}

/// [`conditional_update`] of a mention of `v` inside the parentheses opened at `open`.
pub(super) fn conditional_update_in(
    text: &[&str],
    v: &str,
    open: usize,
) -> Option<(&'static str, usize)> {
    // The `(` that encloses the mention (`if (a[i] * (j + 1) < v)`) must follow `if`.
    if open == 0 || text[open - 1] != "if" {
        return None;
    }
    let (cond, close) = until(text, open + 1, ")")?;
    let cmp = cond
        .iter()
        .position(|t| matches!(*t, "<" | ">" | "<=" | ">="))?;
    let (lhs, rhs) = (cond[..cmp].join(" "), cond[cmp + 1..].join(" "));
    let (var_first, value) = if lhs == v {
        (true, rhs)
    } else if rhs == v {
        (false, lhs)
    } else {
        return None;
    };
    let mut b = close + 1;
    let braced = text.get(b) == Some(&"{");
    if braced {
        b += 1;
    }
    if text.get(b) != Some(&v) || text.get(b + 1) != Some(&"=") {
        return None;
    }
    let (assigned, semi) = until(text, b + 2, ";")?;
    if assigned.join(" ") != value {
        return None;
    }
    let mut end = semi + 1;
    if braced {
        if text.get(end) != Some(&"}") {
            return None;
        }
        end += 1;
    }
    Some((max_or_min(var_first, text[open + 1 + cmp])?, end))
}

/// `v = v > x ? v : x;` and its mirror images, with `v` assigned at `k`.
pub(super) fn ternary_update(text: &[&str], k: usize, v: &str) -> Option<&'static str> {
    if text.get(k + 1) != Some(&"=") {
        return None;
    }
    let (expr, _) = until(text, k + 2, ";")?;
    let q = expr.iter().position(|t| *t == "?")?;
    let c = expr.iter().position(|t| *t == ":")?;
    let cond = &expr[..q];
    let cmp = cond
        .iter()
        .position(|t| matches!(*t, "<" | ">" | "<=" | ">="))?;
    // Compared as text without outer parentheses: `(v > x) ? v : (x)`.
    let strip = |s: &[&str]| {
        s.join(" ")
            .trim_matches(|ch| ch == '(' || ch == ')' || ch == ' ')
            .to_string()
    };
    let (a, b) = (strip(&cond[..cmp]), strip(&cond[cmp + 1..]));
    let (yes, no) = (strip(&expr[q + 1..c]), strip(&expr[c + 1..]));
    let var_first = if a == v && b != v {
        true
    } else if b == v && a != v {
        false
    } else {
        return None;
    };
    let value = if var_first { &b } else { &a };
    // The condition keeps `v` when it picks `v`: `v > x ? v : x` is max.
    let picks_var = match (yes == v, no == v) {
        (true, false) if no == *value => true,
        (false, true) if yes == *value => false,
        _ => return None,
    };
    let op = max_or_min(var_first, cond[cmp])?;
    // max_or_min assumes the value replaces `v` when the comparison holds.
    Some(if picks_var { flip(op) } else { op })
}

fn flip(op: &'static str) -> &'static str {
    if op == "max" { "min" } else { "max" }
}

/// Whether the first mention of `v` in the tokens `range` is in the init of a `for` loop
/// (`for (v = 0; …)`).
pub(super) fn first_mention_in_for_init(src: &str, toks: &[Token], v: &str) -> bool {
    let Some(k) = toks.iter().position(|t| t.text(src) == v) else {
        return false;
    };
    k >= 2 && toks[k - 1].text(src) == "(" && toks[k - 2].text(src) == "for"
}

/// Whether every mention of `v` in `src[range]` comes after a plain assignment of it
/// (`v = e`) that runs whenever the mention does: each iteration then sets `v` before
/// using it. Such an assignment is a statement of its own (not part of a `?:`, `&&`, a
/// label's statement or a loop's body without braces) in the block of the mention or a
/// block around it (or in a block of its own before it), or the init of a `for`, or every
/// branch of an `if` with an `else` before it makes one; a mention in its own value
/// (`v = v + 1`) needs an assignment before. A `goto`, `case` or `default` (a jump past the
/// assignment) or a preprocessor conditional (a configuration without it) answers no; see
/// [`walk`](super::assigned::walk).
#[cfg(test)]
pub(super) fn assigned_before_read(src: &str, range: Range<usize>, v: &str) -> bool {
    assigned_before_read_in(src, &crate::lex::lex_range(src, range, false), v)
}

/// [`assigned_before_read`] over the range's tokens `toks`.
pub(super) fn assigned_before_read_in(src: &str, toks: &[Token], v: &str) -> bool {
    walk::assigned_first(src, toks, &mut walk::One(v)).is_some_and(|first| first == [true])
}

/// A preprocessor conditional line (`#if`, `#elif`, `#else`, `#endif`, …).
pub(super) fn conditional(src: &str, t: &Token) -> bool {
    t.kind == TokKind::PpLine && {
        let d = t.text(src)[1..].trim_start();
        d.starts_with("if") || d.starts_with("el") || d.starts_with("endif")
    }
}

/// The `)` that closes the header when `toks` start with a `for`: the body after it without
/// braces is a statement of its own too.
pub(super) fn for_header_close(src: &str, toks: &[Token]) -> Option<usize> {
    let text = |k: usize| toks[k].text(src);
    (toks.len() > 1 && text(0) == "for" && text(1) == "(")
        .then(|| {
            let mut depth = 0i32;
            (1..toks.len()).find(|&j| {
                match text(j) {
                    "(" => depth += 1,
                    ")" => depth -= 1,
                    _ => {}
                }
                depth == 0
            })
        })
        .flatten()
}

/// The reduction operator of the update of `v` written at `w` (`v += e`, `v = fmax(v, e)`,
/// `v = v * e`, `v++`), if it is one.
pub(super) fn reduction_op(src: &str, w: usize, v: &str) -> Option<&'static str> {
    let end = src[w..].find(';').map_or(src.len(), |e| w + e);
    let stmt: String = src[w..end].chars().filter(|c| !c.is_whitespace()).collect();
    let rest = stmt.strip_prefix(v).unwrap_or(&stmt);
    for (p, op) in [
        ("+=", "+"),
        ("-=", "+"),
        ("*=", "*"),
        ("|=", "|"),
        ("&=", "&"),
        ("^=", "^"),
        ("++", "+"),
        ("--", "+"),
    ] {
        if rest.starts_with(p) {
            return Some(op);
        }
    }
    let rhs = rest.strip_prefix('=')?;
    for (f, op) in [
        ("fmax(", "max"),
        ("fmaxf(", "max"),
        ("fmaxl(", "max"),
        ("std::max(", "max"),
        ("max(", "max"),
        ("fmin(", "min"),
        ("fminf(", "min"),
        ("fminl(", "min"),
        ("std::min(", "min"),
        ("min(", "min"),
    ] {
        if let Some(args) = rhs.strip_prefix(f)
            && (args.starts_with(&format!("{v},")) || args.ends_with(&format!(",{v})")))
        {
            return Some(op);
        }
    }
    for (p, op) in [("+", "+"), ("*", "*")] {
        if rhs.starts_with(&format!("{v}{p}")) {
            return Some(op);
        }
    }
    None
}

pub(super) fn member_uses(
    src: &str,
    t: &[Token],
    toks: Range<usize>,
    skip: &[Range<usize>],
    base: &str,
    access: Access,
) -> MemberUses {
    let text = |k: usize| t.get(k).map_or("", |x| x.text(src));
    let sep = match access {
        Access::Value => ".",
        Access::Pointer => "->",
    };
    let mut out = MemberUses::default();
    for k in toks {
        if t[k].kind != TokKind::Ident
            || text(k) != base
            || skip.iter().any(|r| r.contains(&k))
            || k.checked_sub(1)
                .is_some_and(|p| matches!(text(p), "." | "->" | "::"))
        {
            continue;
        }
        if text(k + 1) != sep || t.get(k + 2).is_none_or(|x| x.kind != TokKind::Ident) {
            out.whole = true;
            continue;
        }
        let m = text(k + 2).to_string();
        // Past `[...]` and `.field` to the operator that follows the member.
        let mut e = k + 3;
        loop {
            match text(e) {
                "[" => {
                    let mut depth = 0i32;
                    while e < t.len() {
                        match text(e) {
                            "[" | "(" => depth += 1,
                            "]" | ")" => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        e += 1;
                    }
                    e += 1;
                }
                "." if t.get(e + 1).is_some_and(|x| x.kind == TokKind::Ident) => e += 2,
                _ => break,
            }
        }
        let next = text(e);
        let prev = k.checked_sub(1).map_or("", text);
        let assigned = crate::lex::ASSIGNMENT_OPS.contains(&next)
            || matches!(next, "++" | "--")
            || matches!(prev, "++" | "--" | "&");
        if assigned && !out.written.contains(&m) {
            out.written.push(m.clone());
        }
        if !out.members.contains(&m) {
            out.members.push(m);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<&str> {
        s.split_whitespace().collect()
    }

    #[test]
    fn max_and_min_idioms() {
        let t = words("if ( a [ i ] > m ) m = a [ i ] ; x = 1 ;");
        assert_eq!(conditional_update(&t, 7, "m"), Some(("max", 16)));
        let t = words("if ( m > a [ i ] ) { m = a [ i ] ; }");
        assert_eq!(conditional_update(&t, 2, "m"), Some(("min", 18)));
        // The assigned value must be the compared one.
        let t = words("if ( a [ i ] * ( j + 1 ) < m ) m = a [ i ] * ( j + 1 ) ;");
        assert_eq!(conditional_update(&t, 13, "m"), Some(("min", 28)));
        let t = words("if ( a [ i ] > m ) m = 0 ;");
        assert_eq!(conditional_update(&t, 7, "m"), None);
        let t = words("m = m > x ? m : x ;");
        assert_eq!(ternary_update(&t, 0, "m"), Some("max"));
        let t = words("m = x < m ? x : m ;");
        assert_eq!(ternary_update(&t, 0, "m"), Some("min"));
        let t = words("m = ( m < x ) ? m : ( x ) ;");
        assert_eq!(ternary_update(&t, 0, "m"), Some("min"));
        let t = words("m = m > x ? x : y ;");
        assert_eq!(ternary_update(&t, 0, "m"), None);
    }

    #[test]
    fn an_assignment_first_runs_before_every_other_mention() {
        let yes = |s: &str| assigned_before_read(s, 0..s.len(), "x");
        assert!(yes("for (int i = 0; i < n; i++) { x = a[i]; b[i] = x; }"));
        assert!(yes(
            "for (i = 0; i < n; i++) { if (c) y = 0; x = 2; b[i] = x; }"
        ));
        assert!(yes(
            "for (i = 0; i < n; i++) { for (j = 0; j < m; j++) { x = a[j]; b[j] = x; } }"
        ));
        assert!(yes(
            "for (i = 0; i < n; i++) { for (x = 0; x < m; x++) b[x] = i; }"
        ));
        assert!(yes("for (i = 0; i < n; i++) x = i;"));
        assert!(!yes(
            "for (i = 0; i < n; i++) { for (j = 0; j < m; j++) x = j; b[i] = x; }"
        ));
        // A branch, a conditional expression, a label or a jump may skip it.
        assert!(!yes(
            "for (i = 0; i < n; i++) { if (i > n) x = 0; b[i] = x; }"
        ));
        assert!(!yes(
            "for (i = 0; i < n; i++) { if (c) { x = 0; } b[i] = x; }"
        ));
        assert!(!yes(
            "for (i = 0; i < n; i++) { if (c) y = 1; else x = 0; b[i] = x; }"
        ));
        assert!(!yes("for (i = 0; i < n; i++) { c && (x = 1); b[i] = x; }"));
        assert!(!yes(
            "for (i = 0; i < n; i++) { for (j = 0; j < m; j++) { x = j; } b[i] = x; }"
        ));
        assert!(!yes(
            "for (i = 0; i < n; i++) { if (c) goto l; x = 1; l: b[i] = x; }"
        ));
        assert!(!yes(
            "switch (k) { case 0: y = 0; x = 1; case 1: b[0] = x; }"
        ));
        // The value read first.
        assert!(!yes("for (i = 0; i < n; i++) { x = x + 1; b[i] = x; }"));
        // Each mention after an assignment in its block or a block around it (NPB EP's
        // inlined generator: the first assignment is in an `if` block that also reads it).
        assert!(yes(
            "for (k = 1; k <= n; k++) { for (i = 1; i <= 100; i++) { if (c) { x = r * t; t = x + 1; } if (i == 0) break; x = r * u; u = x * x; } x = r * a; b[k] = x; }"
        ));
        assert!(yes(
            "for (i = 0; i < n; i++) { x = 1; if (c) { x = x + 1; } b[i] = x; }"
        ));
        assert!(!yes(
            "for (i = 0; i < n; i++) { if (c) { x = 1; b[i] = x; } b[i] += x; }"
        ));
        assert!(!yes(
            "for (i = 0; i < n; i++) { while (c) { b[i] = x; x = 1; } }"
        ));
        assert!(!yes(
            "for (i = 0; i < n; i++) {\n#ifdef SET\n x = 1;\n#endif\n b[i] = x; }"
        ));
    }

    #[test]
    fn every_branch_of_an_if_with_an_else_assigns() {
        let yes = |s: &str| assigned_before_read(s, 0..s.len(), "x");
        let body = |b: &str| format!("for (i = 0; i < n; i++) {{ {b} b[i] = x; }}");
        // Both branches, braced or not, and an `else if` chain ending in `else`.
        assert!(yes(&body("if (d <= r) { x = f(d); } else { x = 0.; }")));
        assert!(yes(&body("if (c) x = 1; else x = 2;")));
        assert!(yes(&body("if (c) { y = 1; x = y; } else x = 2;")));
        assert!(yes(&body(
            "if (c) x = 1; else if (d) x = 2; else { x = 3; }"
        )));
        assert!(yes(&body(
            "if (c) { if (d) x = 1; else x = 2; } else { x = 3; }"
        )));
        assert!(yes(&body("if (c) if (d) x = 1; else x = 2; else x = 3;")));
        assert!(yes(&body("if constexpr (c) x = 1; else x = 2;")));
        // A branch's own reads after its assignment, a jump out of the loop in a branch.
        assert!(yes(&body(
            "if (c) { x = 1; y = x; } else { if (d) continue; x = 2; }"
        )));
        assert!(yes("for (i = 0; i < n; i++) if (c) x = 1; else x = 2;"));
        // The body of the range's own loop, an `if` with no braces.
        assert!(yes(
            "for (i = 0; i < n; i++) if (c) { x = 1; b[i] = x; } else b[i] = 0;"
        ));
        // One branch only, no `else`, or an `else if` chain without a last `else`.
        assert!(!yes(&body("if (c) { x = 1; } else { y = 2; }")));
        assert!(!yes(&body("if (c) { y = 1; } else { x = 2; }")));
        assert!(!yes(&body("if (c) { x = 1; }")));
        assert!(!yes(&body("if (c) x = 1; else if (d) x = 2;")));
        assert!(!yes(&body("if (c) x = 1; else if (d) x = 2; else y = 3;")));
        assert!(!yes(&body("if (c) x = 1; else ;")));
        // The dangling `else` is the inner `if`'s: the outer one has none.
        assert!(!yes(&body("if (c) if (d) x = 1; else x = 2;")));
        assert!(!yes(&body("if (c) { if (d) x = 1; } else x = 2;")));
        // The condition, or the branch before its assignment, reads it.
        assert!(!yes(&body("if (x > 0) x = 1; else x = 2;")));
        assert!(!yes(&body("if (c) x = x + 1; else x = 2;")));
        assert!(!yes(&body("if (c) { y = x; x = 1; } else x = 2;")));
        assert!(!yes(&body("if ((x = f()) > 0) y = 1; else x = 2;")));
        // `?:`, `&&` and a comma only read.
        assert!(!yes(&body("c ? (x = 1) : (x = 2);")));
        assert!(!yes(&body("if (c) y = 1, x = 1; else x = 2;")));
        // Loops may run no iteration, and a `for` header's parts after its init.
        assert!(!yes(&body(
            "if (c) { for (j = 0; j < m; j++) x = j; } else x = 2;"
        )));
        assert!(!yes(&body("if (c) while (d) x = 1; else x = 2;")));
        assert!(!yes(&body("if (c) do x = 1; while (d); else x = 2;")));
        assert!(!yes(&body("for (j = 0; j < m; x = j++) ;")));
        // After the `if` only: inside a loop body without braces it is that loop's.
        assert!(!yes(&body(
            "for (j = 0; j < m; j++) if (c) x = 1; else x = 2;"
        )));
        assert!(!yes(&body("while (d) if (c) x = 1; else x = 2;")));
        // Jumps, labels, `switch` and preprocessor conditionals answer no.
        assert!(!yes(&body("if (c) x = 1; else x = 2; if (d) goto l; l:")));
        assert!(!yes(&body("l: if (c) x = 1; else x = 2;")));
        assert!(!yes(&body(
            "switch (k) { case 0: x = 1; break; default: x = 2; }"
        )));
        assert!(!yes(&body(
            "if (c) x = 1;\n#ifdef A\nelse x = 2;\n#endif\n"
        )));
        assert!(!yes(&body("if (c) x = 1;\n#pragma unroll\nelse x = 2;")));
        // A block of its own runs once (miniWeather's inlined `sample_ellipse_cosine`); a
        // loop's body, a lambda's or one after a label or a directive may not.
        assert!(yes(&body(
            "{ d = f(i); if (d <= r) { x = g(d); } else { x = 0.; } } y = 1;"
        )));
        assert!(yes(&body("{ { x = 1; } }")));
        assert!(!yes(&body("{ if (d <= r) { x = g(d); } }")));
        assert!(!yes(&body("while (c) { x = 1; }")));
        assert!(!yes(&body("y = [&] { x = 1; return x; }();")));
        assert!(!yes(&body("do { x = 1; } while (c);")));
        assert!(!yes(&body("\n#pragma omp critical\n{ x = 1; }")));
        assert!(!yes(&body("l: { x = 1; }")));
        // A lambda's branches count within it.
        assert!(yes(
            "for (i = 0; i < n; i++) { y = [&] { if (c) x = 1; else x = 2; return x; }(); }"
        ));
        assert!(!yes(&body(
            "y = [&] { if (c) x = 1; else x = 2; return x; }();"
        )));
    }
}
