//! Reductions beyond the loop that names them: what the enclosing compute construct must
//! do for them (OpenACC's implicit `copy` of a reduction variable, gang reductions combined
//! across teams), and the nested parallel loops that update a reduction variable.

use super::loops::{Decision, LoopInfo};
use super::{Mode, Unit};
use crate::directive::Directive;
use crate::lex::TokKind;
use crate::semantic::base_name;

/// A loop reduction the compute construct takes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lifted {
    pub op: String,
    pub var: String,
    /// The loop site that names it.
    pub from: usize,
    /// A gang reduction under `target teams`: the teams combine it (`reduction` on the
    /// construct). Otherwise only the variable's value comes back (`map(tofrom:)`).
    pub gang: bool,
}

fn names_in(d: &Directive, clauses: &[&str], v: &str) -> bool {
    d.clauses.iter().any(|k| {
        clauses.contains(&k.name.as_str()) && k.items().any(|x| base_name(&x.text) == Some(v))
    })
}

/// Reductions on loops nested in a compute construct, per compute site. OpenACC gives a
/// reduction variable an implicit `copy` on the compute construct whatever the loop's level
/// (OpenMP would make it firstprivate and drop the result); a gang reduction under `target
/// teams` is also combined across the teams.
pub fn lifted(u: &Unit, dec: &[Option<LoopInfo>]) -> Vec<Vec<Lifted>> {
    let mut out = vec![Vec::new(); u.sites.len()];
    for (i, info) in dec.iter().enumerate() {
        let (Some(info), Some(d)) = (info, u.dir(i)) else {
            continue;
        };
        let Some(c) = info.compute else { continue };
        if c == i || !u.is_loop(i) {
            continue;
        }
        let gang = matches!((&info.decision, info.mode), (Decision::Par(l), Mode::Teams) if l.gang);
        // Private to the construct or to a loop around this one: nothing leaves the region.
        let private = |v: &str| {
            u.ancestors(i)
                .take_while(|&a| a != c)
                .chain(std::iter::once(c))
                .filter_map(|a| u.dir(a))
                .any(|a| names_in(a, &["private", "firstprivate"], v))
        };
        for r in d.all("reduction") {
            let op = r.modifier().unwrap_or("+").to_string();
            for v in r.items() {
                let var = v.text.clone();
                // A variable declared inside the region is private to it: its loop reduces
                // into the gang's copy, and the construct has no variable of that name.
                let local = u
                    .site_facts(c)
                    .is_some_and(|f| f.declared_inside(&var) && f.var(&var).is_none());
                if private(&var) || local {
                    continue;
                }
                out[c].push(Lifted {
                    op: op.clone(),
                    var,
                    from: i,
                    gang,
                });
            }
        }
    }
    out
}

/// Reductions that loop `i` takes over from the loops and compute construct around it: a
/// variable reduced there and updated in `i` only by the same operation (`s += …`,
/// `s = fmax(s, …)`). OpenACC compilers combine those updates; OpenMP threads would race
/// on them (multigrid-style norms with the reduction on the gang loop only).
pub fn inherited(u: &Unit, i: usize, dec: &[Option<LoopInfo>]) -> Vec<(String, String)> {
    inherited_by(u, i, dec.get(i).and_then(Option::as_ref))
}

/// [`inherited`], with the decision `info` about loop `i`.
pub fn inherited_by(u: &Unit, i: usize, info: Option<&LoopInfo>) -> Vec<(String, String)> {
    let (Some(d), Some(info)) = (u.dir(i), info) else {
        return Vec::new();
    };
    let (Some(c), Decision::Par(_)) = (info.compute, &info.decision) else {
        return Vec::new();
    };
    if c == i {
        return Vec::new();
    }
    let mut out: Vec<(String, String)> = Vec::new();
    let mut clash: Vec<String> = Vec::new();
    for a in u.ancestors(i) {
        let Some(ad) = u.dir(a) else { continue };
        for r in ad.all("reduction") {
            let op = r.modifier().unwrap_or("+");
            for v in r.items() {
                let v = v.text.as_str();
                if names_in(d, &["reduction", "private", "firstprivate"], v) {
                    continue;
                }
                match out.iter().find(|(_, w)| w == v) {
                    Some((o, _)) if o != op => clash.push(v.to_string()),
                    Some(_) => {}
                    None if updated_only_by(u, i, v, op) => {
                        out.push((op.to_string(), v.to_string()))
                    }
                    None => {}
                }
            }
        }
        if a == c {
            break;
        }
    }
    out.retain(|(_, v)| !clash.contains(v));
    out
}

/// Whether every mention of `v` in the statement of site `i` is an update by `op`, and
/// there is one.
fn updated_only_by(u: &Unit, i: usize, v: &str, op: &str) -> bool {
    let Some(st) = &u.stmts[i] else { return false };
    let toks = &u.structure.toks[st.toks.clone()];
    let text: Vec<&str> = toks.iter().map(|t| t.text(u.src)).collect();
    let mut any = false;
    let mut k = 0;
    while k < toks.len() {
        if toks[k].kind != TokKind::Ident || text[k] != v {
            k += 1;
            continue;
        }
        if k > 0 && matches!(text[k - 1], "." | "->" | "::") {
            k += 1;
            continue;
        }
        // `if (x > v) v = x;`
        if let Some((o, end)) = conditional_update(&text, k, v)
            && o == op
        {
            any = true;
            k = end;
            continue;
        }
        let o = super::implicit::reduction_op(u.src, toks[k].start, v)
            .or_else(|| ternary_update(&text, k, v));
        if o != Some(op) {
            return false;
        }
        any = true;
        // The rest of the update (`s = s + x;`) mentions `s` again.
        while k < toks.len() && text[k] != ";" {
            k += 1;
        }
    }
    any
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
fn conditional_update(text: &[&str], k: usize, v: &str) -> Option<(&'static str, usize)> {
    // The `(` that encloses `k` (`if (a[i] * (j + 1) < v)`) must follow `if`.
    let mut depth = 0i32;
    let open = (0..k).rev().find(|&p| {
        match text[p] {
            ")" => depth += 1,
            "(" if depth == 0 => return true,
            "(" => depth -= 1,
            _ => {}
        }
        false
    })?;
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
fn ternary_update(text: &[&str], k: usize, v: &str) -> Option<&'static str> {
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
}
