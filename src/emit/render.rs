//! How each mode writes a hunk. The markers are what `recognize` reads back: a file written
//! in any mode gives its original OpenACC again.

use super::Emit;
use super::hunks::balanced;
use crate::lex::conditional;
use crate::lex::{TokKind, lex_range};

/// Opens the OpenACC side of a `dual` hunk.
pub const DUAL_ACC: &str = "#ifdef _OPENACC // acc2omp";
/// Opens a `dual` hunk that only adds lines.
pub const DUAL_ADDED: &str = "#ifndef _OPENACC // acc2omp";
/// Ends a `dual` conditional test: the original line follows.
pub const GUARD: &str = " // acc2omp: ";
/// An original line kept as a comment (`omp-acc`), `[N]` lines of OpenMP above it.
pub const WAS: &str = "// acc2omp was";
/// `[N]` lines above were added (`omp-acc`).
pub const ADDED: &str = "// acc2omp added";
/// A line of the OpenMP translation as a comment (`acc-omp`).
pub const OMP: &str = "// acc2omp:";

/// Why a hunk cannot be written in `dual` form.
pub enum Refusal {
    /// A conditional test that spans lines.
    Guard,
    /// Lines whose `#if`/`#endif` do not pair up.
    Unbalanced,
}

/// `orig` (whole lines of the original) written in `mode` with its translation `new`.
pub fn hunk(mode: Emit, orig: &str, new: &str, eol: &str) -> Result<String, Refusal> {
    // A last line without terminator gets one inside the hunk, and the hunk ends without.
    let open_end = !orig.is_empty() && !orig.ends_with('\n');
    let close = |s: &str| {
        if s.is_empty() || s.ends_with('\n') {
            s.to_string()
        } else {
            format!("{s}{eol}")
        }
    };
    let (o, n) = (close(orig), close(new));
    let mut out = match mode {
        Emit::Omp => return Ok(new.to_string()),
        Emit::Dual => dual(&o, &n, eol)?,
        Emit::OmpAcc if o.is_empty() => {
            format!("{n}{}{ADDED}{}{eol}", indent(&n), count(&n))
        }
        Emit::OmpAcc => {
            let mut s = n.clone();
            for (i, line) in o.split_inclusive('\n').enumerate() {
                let tag = if i == 0 { count(&n) } else { String::new() };
                s.push_str(&commented(line, &format!("{WAS}{tag}:")));
            }
            s
        }
        Emit::AccOmp if n.is_empty() => {
            format!("{o}{}{OMP} (removed){eol}", indent(&o))
        }
        Emit::AccOmp => {
            let mut s = o.clone();
            for line in n.split_inclusive('\n') {
                s.push_str(&commented(line, OMP));
            }
            s
        }
    };
    if open_end {
        let t = out.trim_end_matches('\n').trim_end_matches('\r').len();
        out.truncate(t);
    }
    Ok(out)
}

/// `[N]` unless the OpenMP side is one line.
fn count(n: &str) -> String {
    match n.split_inclusive('\n').count() {
        1 => String::new(),
        k => format!("[{k}]"),
    }
}

fn indent(s: &str) -> &str {
    let n = s.len() - s.trim_start_matches([' ', '\t']).len();
    &s[..n]
}

/// `line` as a comment after `prefix`, at the line's own indentation.
fn commented(line: &str, prefix: &str) -> String {
    let body = line.trim_end_matches('\n');
    let body = body.strip_suffix('\r').unwrap_or(body);
    let end = &line[body.len()..];
    let ws = indent(body);
    let rest = &body[ws.len()..];
    if rest.is_empty() {
        format!("{ws}{prefix}{end}")
    } else {
        format!("{ws}{prefix} {rest}{end}")
    }
}

fn dual(o: &str, n: &str, eol: &str) -> Result<String, Refusal> {
    let test =
        |s: &str| conditional(s).is_some_and(|k| k.starts_with("if") || k.starts_with("elif"));
    if test(o) && test(n) {
        return guard(o, n).ok_or(Refusal::Guard);
    }
    if !balanced(o) || !balanced(n) {
        return Err(Refusal::Unbalanced);
    }
    Ok(match (o.is_empty(), n.is_empty()) {
        (true, _) => format!("{DUAL_ADDED}{eol}{n}#endif{eol}"),
        (false, true) => format!("{DUAL_ACC}{eol}{o}#endif{eol}"),
        (false, false) => format!("{DUAL_ACC}{eol}{o}#else{eol}{n}#endif{eol}"),
    })
}

/// A conditional test that is the original's under OpenACC and the translation's otherwise,
/// on one line, with the original after it: `#if defined(_OPENACC) || defined(_OPENMP) //
/// acc2omp: #ifdef _OPENACC`.
fn guard(o: &str, n: &str) -> Option<String> {
    let one_line = |s: &str| s.trim_end_matches('\n').trim_end_matches('\r').to_string();
    let (ol, nl) = (one_line(o), one_line(n));
    if ol.contains('\n') || nl.contains('\n') || ol.ends_with('\\') {
        return None;
    }
    let (kw, a) = condition(&ol)?;
    let (kw2, b) = condition(&nl)?;
    if kw != kw2 {
        return None;
    }
    let squeeze = |s: &str| s.replace([' ', '\t'], "");
    let test = match (squeeze(&a).as_str(), squeeze(&b).as_str()) {
        ("defined(_OPENACC)", "defined(_OPENMP)") => "defined(_OPENACC) || defined(_OPENMP)".into(),
        ("!defined(_OPENACC)", "!defined(_OPENMP)") => {
            "!defined(_OPENACC) && !defined(_OPENMP)".into()
        }
        _ => format!("defined(_OPENACC) ? {a} : {b}"),
    };
    let lead = indent(&ol);
    let eol = &o[ol.len()..];
    Some(format!(
        "{lead}#{kw} {test}{GUARD}{}{eol}",
        &ol[lead.len()..]
    ))
}

/// `#if`/`#elif` and the condition of a conditional line, as an expression in parentheses.
fn condition(line: &str) -> Option<(&'static str, String)> {
    let kw = conditional(line)?;
    let start = line.find(kw)? + kw.len();
    let toks = lex_range(line, start..line.len(), false);
    let (first, last) = (toks.first()?, toks.last()?);
    let text = &line[first.start()..last.end()];
    let name_only = toks.len() == 1 && first.kind == TokKind::Ident;
    let out_kw = if kw.starts_with("elif") { "elif" } else { "if" };
    let expr = match kw {
        "ifdef" | "elifdef" if name_only => format!("defined({text})"),
        "ifndef" | "elifndef" if name_only => format!("!defined({text})"),
        "if" | "elif" => defined_test(&toks, line).unwrap_or_else(|| format!("({text})")),
        _ => return None,
    };
    Some((out_kw, expr))
}

/// `defined X`, `defined(X)`, `!defined X`, `!defined(X)` as `[!]defined(X)`.
fn defined_test(toks: &[crate::lex::Token], line: &str) -> Option<String> {
    let words: Vec<&str> = toks.iter().map(|t| t.text(line)).collect();
    let (not, rest) = match words.split_first() {
        Some((&"!", rest)) => ("!", rest),
        _ => ("", &words[..]),
    };
    let name = match rest {
        ["defined", name] | ["defined", "(", name, ")"] => name,
        _ => return None,
    };
    let ident = name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
    ident.then(|| format!("{not}defined({name})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dual(o: &str, n: &str) -> String {
        hunk(Emit::Dual, o, n, "\n").ok().unwrap()
    }

    #[test]
    fn dual_forms() {
        assert_eq!(
            dual("#pragma acc kernels\n", "#pragma omp target\n"),
            "#ifdef _OPENACC // acc2omp\n#pragma acc kernels\n#else\n#pragma omp target\n#endif\n"
        );
        assert_eq!(dual("", "}\n"), "#ifndef _OPENACC // acc2omp\n}\n#endif\n");
        assert_eq!(
            dual("  acc_init(x);\n", ""),
            "#ifdef _OPENACC // acc2omp\n  acc_init(x);\n#endif\n"
        );
        assert_eq!(
            dual("#ifdef _OPENACC\n", "#ifdef _OPENMP\n"),
            "#if defined(_OPENACC) || defined(_OPENMP) // acc2omp: #ifdef _OPENACC\n"
        );
        assert_eq!(
            dual("#ifndef _OPENACC\n", "#ifndef _OPENMP\n"),
            "#if !defined(_OPENACC) && !defined(_OPENMP) // acc2omp: #ifndef _OPENACC\n"
        );
        assert_eq!(
            dual("#elif _OPENACC >= 2 // c\n", "#elif _OPENMP >= 2 // c\n"),
            "#elif defined(_OPENACC) ? (_OPENACC >= 2) : (_OPENMP >= 2) // acc2omp: #elif _OPENACC >= 2 // c\n"
        );
        assert_eq!(
            dual(
                "#elif !defined _OPENACC /* c */\n",
                "#elif !defined _OPENMP /* c */\n"
            ),
            "#elif !defined(_OPENACC) && !defined(_OPENMP) // acc2omp: #elif !defined _OPENACC /* c */\n"
        );
        assert!(
            hunk(
                Emit::Dual,
                "#if X \\\n && _OPENACC\n",
                "#if X \\\n && _OPENMP\n",
                "\n"
            )
            .is_err()
        );
        assert!(
            hunk(
                Emit::Dual,
                "#ifdef _OPENACC\nx;\n",
                "#ifdef _OPENMP\ny;\n",
                "\n"
            )
            .is_err()
        );
    }

    #[test]
    fn comment_forms() {
        let o = "  #pragma acc parallel \\\n\n    copy(a)\n";
        let n = "{ int x;\n  #pragma omp target map(tofrom: a)\n";
        assert_eq!(
            hunk(Emit::OmpAcc, o, n, "\n").ok().unwrap(),
            "{ int x;\n  #pragma omp target map(tofrom: a)\n  // acc2omp was[2]: #pragma acc parallel \\\n// acc2omp was:\n    // acc2omp was: copy(a)\n"
        );
        assert_eq!(
            hunk(Emit::AccOmp, "a;\r\n", "b;\r\n", "\r\n").ok().unwrap(),
            "a;\r\n// acc2omp: b;\r\n"
        );
        assert_eq!(
            hunk(Emit::AccOmp, "  a;", "", "\n").ok().unwrap(),
            "  a;\n  // acc2omp: (removed)"
        );
        assert_eq!(
            hunk(Emit::OmpAcc, "", "  }\n", "\n").ok().unwrap(),
            "  }\n  // acc2omp added\n"
        );
    }
}
