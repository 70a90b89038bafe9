//! Metamorphic checks of the Fortran reader: laying a program out differently (directives
//! split over continuation lines or joined, extra blanks and trailing comments, optional end
//! directives, fixed form for free form and back, `enddo`, labelled loops, `;`) must not
//! change its translation: the OpenMP directives written, the directives left OpenACC and
//! the diagnostics' rules.
use acc2omp::fortran::form::Form;
use std::path::{Path, PathBuf};

#[path = "conformance/gcc_source.rs"]
mod gcc_source;

/// GCC 12's Fortran OpenACC test directories, found as `gcc_fortran_tests` finds them.
fn gcc_fortran_dirs() -> Vec<PathBuf> {
    let dirs = |root: PathBuf| {
        vec![
            root.join("libgomp/testsuite/libgomp.oacc-fortran"),
            root.join("gcc/testsuite/gfortran.dg/goacc"),
        ]
    };
    let cached = dirs(gcc_source::cache_root().join("gcc-12-source/gcc-12.2.0"));
    if cached.iter().all(|d| d.is_dir()) {
        return cached;
    }
    if std::env::var_os("ACC2OMP_REQUIRE_TOOLS").is_some_and(|v| v == "1") {
        return dirs(gcc_source::tree().unwrap_or_else(|e| panic!("{e}")));
    }
    eprintln!("SKIPPED GCC's Fortran tests: not in the cache (set ACC2OMP_REQUIRE_TOOLS=1)");
    Vec::new()
}

fn form_of(path: &Path) -> Form {
    acc2omp::fortran::form::kind_of(path).map_or(Form::Free, |k| k.form)
}

/// What must not depend on the layout: the directives and (`with_statements`) statements in
/// order, blanks dropped and lowercased, and the diagnostics' rules, sorted.
#[derive(PartialEq, Debug)]
struct Outcome {
    lines: Vec<String>,
    rules: Vec<String>,
}

fn outcome(path: &Path, text: &str, with_statements: bool) -> (Outcome, String) {
    let out = acc2omp::migrate_source(
        text,
        Some(path),
        &acc2omp::Options::default(),
        &acc2omp::semantic::SemanticConfig::syntactic(),
    );
    let mut rules: Vec<String> = out.diagnostics.iter().map(|d| d.rule.to_string()).collect();
    rules.sort();
    let lines = logical_lines(&out.text, form_of(path))
        .into_iter()
        .filter(|l| with_statements || l.starts_with("!$"))
        .collect();
    (Outcome { lines, rules }, out.text)
}

/// Where a comment starts in `s` (a `!` outside quotes).
fn comment_at(s: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in s.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '!' => return Some(i),
            None => {}
        }
    }
    None
}

/// The directive sentinel of line `l` (`acc` or `omp`, lowercased) and where the text
/// after it starts (after the fixed-form column 6).
fn sentinel(l: &str, form: Form) -> Option<(String, usize, bool)> {
    match form {
        Form::Free => {
            let t = l.trim_start();
            let lead = l.len() - t.len();
            let s = t.get(..5)?.to_ascii_lowercase();
            if s == "!$acc" || s == "!$omp" {
                let rest = &t[5..];
                let after = rest.trim_start();
                let cont = after.starts_with('&');
                let at = if cont {
                    rest.len() - after.len() + 1
                } else {
                    0
                };
                return Some((s[2..].to_string(), lead + 5 + at, cont));
            }
            None
        }
        Form::Fixed => {
            let s = l.get(..5)?.to_ascii_lowercase();
            if s.starts_with(['c', '*', '!']) && (&s[1..] == "$acc" || &s[1..] == "$omp") {
                let c6 = l[5..].chars().next().unwrap_or(' ');
                let cont = c6 != ' ' && c6 != '0';
                return Some((s[2..].to_string(), 5 + c6.len_utf8().min(l.len() - 5), cont));
            }
            None
        }
    }
}

/// The output's directives and statements, one a logical line: continuations joined,
/// comments and blanks dropped, lowercased; end directives of loop constructs (optional in
/// OpenMP as in OpenACC) dropped.
fn logical_lines(text: &str, form: Form) -> Vec<String> {
    let squeeze = |s: &str| -> String {
        s.chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase()
    };
    let mut out: Vec<String> = Vec::new();
    let mut open = false; // the last logical line continues
    for l in text.lines() {
        if let Some((s, at, cont)) = sentinel(l, form) {
            let mut body = &l[at.min(l.len())..];
            if let Some(c) = comment_at(body) {
                body = &body[..c];
            }
            let body = body.trim_end();
            let (body, more) = match (form, body.strip_suffix('&')) {
                (Form::Free, Some(b)) => (b, true),
                _ => (body, false),
            };
            let joined = match form {
                Form::Free => open,
                Form::Fixed => cont,
            };
            if joined && let Some(last) = out.last_mut() {
                last.push_str(&squeeze(body));
            } else {
                out.push(format!("!${s} {}", squeeze(body)));
            }
            open = more;
            continue;
        }
        let t = l.trim_start();
        let comment = match form {
            Form::Free => t.starts_with('!'),
            Form::Fixed => l.starts_with(['c', 'C', '*', '!']) || t.starts_with('!'),
        };
        if t.is_empty() || comment || t.starts_with('#') {
            continue;
        }
        let mut body = l;
        if let Some(c) = comment_at(body) {
            body = &body[..c];
        }
        match form {
            Form::Free => {
                let b = body.trim();
                let (b, more) = match b.strip_suffix('&') {
                    Some(b) => (b, true),
                    None => (b, false),
                };
                let b = if open {
                    b.strip_prefix('&').unwrap_or(b)
                } else {
                    b
                };
                if open && let Some(last) = out.last_mut() {
                    last.push_str(&squeeze(b));
                } else {
                    out.push(squeeze(b));
                }
                open = more;
            }
            Form::Fixed => {
                let c6 = body.get(5..6).unwrap_or(" ");
                let cont = c6 != " " && c6 != "0" && !body.starts_with('\t');
                let b = if cont { &body[6..] } else { body };
                if cont && let Some(last) = out.last_mut() {
                    last.push_str(&squeeze(b));
                } else {
                    out.push(squeeze(b));
                }
            }
        }
    }
    out.retain(|l| {
        let Some(d) = l
            .strip_prefix("!$omp end")
            .or_else(|| l.strip_prefix("!$acc end"))
        else {
            return true;
        };
        !["do", "simd", "loop", "distribute"]
            .iter()
            .any(|w| d.ends_with(w))
    });
    out
}

// ---------------------------------------------------------------------------------------
// Transformations. Each keeps the program's meaning, or gives None where it does not apply.

/// A single-line directive: its index, the text after the sentinel (no comment), and the
/// sentinel as written. Lines with quotes or comments are left out.
fn single_directives(lines: &[&str], form: Form) -> Vec<(usize, String, String)> {
    let mut v = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some((s, at, cont)) = sentinel(l, form) else {
            continue;
        };
        if s != "acc" || cont || l.contains(['\'', '"']) || comment_at(&l[at..]).is_some() {
            continue;
        }
        let body = l[at..].trim_end();
        if body.ends_with('&') {
            continue;
        }
        let next_cont = lines
            .get(i + 1)
            .and_then(|n| sentinel(n, form))
            .is_some_and(|(_, _, c)| c);
        if next_cont {
            continue;
        }
        let prev_open = i > 0
            && form == Form::Free
            && sentinel(lines[i - 1], form).is_some()
            && lines[i - 1].trim_end().ends_with('&');
        if prev_open {
            continue;
        }
        v.push((i, body.to_string(), l[..at].to_string()));
    }
    v
}

/// The top-level pieces of a directive's text, split at blanks outside parentheses.
fn words(body: &str) -> Vec<String> {
    let mut v = vec![String::new()];
    let mut depth = 0i32;
    for c in body.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if c.is_whitespace() && depth == 0 {
            if !v.last().unwrap().is_empty() {
                v.push(String::new());
            }
        } else {
            v.last_mut().unwrap().push(c);
        }
    }
    v.retain(|w| !w.is_empty());
    v
}

/// The directive lines written for `pieces`: continued with `&` (free form, the
/// continuation's own `&` on every other line) or in column 6 (fixed form, every other
/// continuation without a blank after its mark).
fn directive_lines(indent: &str, sentinel: &str, pieces: &[String], form: Form) -> String {
    let mut s = String::new();
    for (k, p) in pieces.iter().enumerate() {
        let last = k + 1 == pieces.len();
        match form {
            Form::Free => {
                let cont = if k == 0 {
                    " "
                } else if k % 2 == 1 {
                    "& "
                } else {
                    " "
                };
                s.push_str(&format!(
                    "{indent}{sentinel}{cont}{p}{}\n",
                    if last { "" } else { " &" }
                ));
            }
            Form::Fixed => {
                // Every other continuation starts right after its mark: fixed form ignores
                // blanks.
                let c6 = if k == 0 { ' ' } else { '+' };
                let gap = if k % 2 == 1 { "" } else { " " };
                s.push_str(&format!("{sentinel}{c6}{gap}{p}\n"));
            }
        }
    }
    s
}

fn rebuild(lines: &[&str], edits: Vec<(usize, String)>, text: &str) -> Option<String> {
    if edits.is_empty() {
        return None;
    }
    let mut out = String::new();
    let mut e = edits.into_iter().peekable();
    for (i, l) in lines.iter().enumerate() {
        if let Some((_, r)) = e.next_if(|(k, _)| *k == i) {
            out.push_str(&r);
        } else {
            out.push_str(l);
            out.push('\n');
        }
    }
    (out != text).then_some(out)
}

fn fits_fixed(s: &str) -> bool {
    s.lines().all(|l| l.len() <= 72)
}

/// Each directive split at every blank between its words.
fn split_words(text: &str, form: Form) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut edits = Vec::new();
    for (i, body, sent) in single_directives(&lines, form) {
        let w = words(&body);
        if w.len() < 2 {
            continue;
        }
        let indent = &lines[i][..lines[i].len() - lines[i].trim_start().len()];
        let sent = sent.trim_start().trim_end_matches(['&', ' ']);
        edits.push((i, directive_lines(indent, &sent[..5], &w, form)));
    }
    rebuild(&lines, edits, text)
}

/// Each directive split after every comma inside a clause's parentheses.
fn split_lists(text: &str, form: Form) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut edits = Vec::new();
    for (i, body, sent) in single_directives(&lines, form) {
        let mut pieces = vec![String::new()];
        let mut depth = 0;
        for c in body.trim().chars() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            pieces.last_mut().unwrap().push(c);
            if c == ',' && depth > 0 {
                pieces.push(String::new());
            }
        }
        if pieces.len() < 2 {
            continue;
        }
        let indent = &lines[i][..lines[i].len() - lines[i].trim_start().len()];
        let sent = sent.trim_start().trim_end_matches(['&', ' ']);
        edits.push((i, directive_lines(indent, &sent[..5], &pieces, form)));
    }
    rebuild(&lines, edits, text)
}

/// Directives continued over lines joined on one (free form).
fn join(text: &str, form: Form) -> Option<String> {
    if form != Form::Free {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    let mut open = false;
    for l in &lines {
        if let Some((s, at, _)) = sentinel(l, form)
            && (s == "acc" || open)
            && comment_at(&l[at..]).is_none()
        {
            let body = l[at..].trim_end();
            let (body, more) = match body.strip_suffix('&') {
                Some(b) => (b, true),
                None => (body, false),
            };
            if open {
                out.push(' ');
                out.push_str(body.trim());
            } else {
                out.push_str(&l[..at]);
                out.push_str(body);
            }
            if !more {
                out.push('\n');
            }
            open = more;
            continue;
        }
        if open {
            return None;
        }
        out.push_str(l);
        out.push('\n');
    }
    (out != text).then_some(out)
}

/// Blanks around parentheses and commas and between words, and a trailing comment.
fn spaces(text: &str, form: Form) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut edits = Vec::new();
    for (i, body, sent) in single_directives(&lines, form) {
        let mut b = String::new();
        for c in body.chars() {
            match c {
                '(' => b.push_str(" ( "),
                ')' => b.push_str(" ) "),
                ',' => b.push_str(" , "),
                ' ' if form == Form::Free => b.push_str(" \t "),
                c => b.push(c),
            }
        }
        let line = format!(
            "{}{}  {} ! note\n",
            &lines[i][..lines[i].len() - lines[i].trim_start().len()],
            sent.trim_start(),
            b.trim_end()
        );
        if form == Form::Fixed && !fits_fixed(&line) {
            continue;
        }
        edits.push((i, line));
    }
    rebuild(&lines, edits, text)
}

/// The first word of a statement line, lowercased.
fn keyword(l: &str) -> String {
    let t = l.trim_start();
    let t = t
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .trim_start();
    let t = match t.find(':') {
        // A construct name.
        Some(k) if !t[..k].contains(['(', '=', ' ']) && !t[k..].starts_with("::") => {
            t[k + 1..].trim_start()
        }
        _ => t,
    };
    t.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect::<String>()
        .to_ascii_lowercase()
}

fn is_statement(l: &str, form: Form) -> bool {
    let t = l.trim_start();
    !(t.is_empty()
        || t.starts_with(['!', '#'])
        || form == Form::Fixed && l.starts_with(['c', 'C', '*']))
}

fn is_end_do(l: &str) -> bool {
    let t: String = l
        .trim_start()
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    t == "enddo"
        || t.starts_with("enddo!")
        || t.starts_with("enddo ")
        || t.split('!').next() == Some("enddo")
}

/// The `end do` closing the block `do` at line `i` (None for labelled or one-line loops).
fn end_of_do(lines: &[&str], i: usize, form: Form) -> Option<usize> {
    let do_line = |l: &str| {
        is_statement(l, form)
            && keyword(l) == "do"
            && (|| {
                let t = l.trim_start();
                let t = &t[t.to_ascii_lowercase().find("do")? + 2..];
                Some(!t.trim_start().starts_with(|c: char| c.is_ascii_digit()) && !t.contains(';'))
            })()
            .unwrap_or(false)
    };
    if !do_line(lines[i]) {
        return None;
    }
    let mut depth = 0;
    for (k, l) in lines.iter().enumerate().skip(i) {
        if !is_statement(l, form) {
            continue;
        }
        if keyword(l) == "do" {
            if !do_line(l) {
                return None;
            }
            depth += 1;
        } else if is_end_do(l) {
            depth -= 1;
            if depth == 0 {
                return Some(k);
            }
        }
    }
    None
}

fn next_statement(lines: &[&str], i: usize, form: Form) -> Option<usize> {
    (i + 1..lines.len())
        .find(|&k| is_statement(lines[k], form) || sentinel(lines[k], form).is_some())
}

/// The optional end directive of each loop construct written after its loop.
fn add_ends(text: &str, form: Form) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut edits: Vec<(usize, String)> = Vec::new();
    for (i, body, sent) in single_directives(&lines, form) {
        let w = words(&body.to_ascii_lowercase());
        let name = match w.iter().map(String::as_str).collect::<Vec<_>>()[..] {
            [c @ ("parallel" | "kernels" | "serial"), "loop", ..] => format!("{c} loop"),
            ["loop", ..] => "loop".to_string(),
            _ => continue,
        };
        let Some(d) = next_statement(&lines, i, form) else {
            continue;
        };
        if sentinel(lines[d], form).is_some() {
            continue;
        }
        let Some(e) = end_of_do(&lines, d, form) else {
            continue;
        };
        // The line after may already be the end directive.
        if lines
            .get(e + 1)
            .is_some_and(|n| sentinel(n, form).is_some() && n.to_ascii_lowercase().contains("end"))
        {
            continue;
        }
        let indent = &lines[i][..lines[i].len() - lines[i].trim_start().len()];
        let sent = sent.trim_start().trim_end_matches(['&', ' ']);
        let end = match form {
            Form::Free => format!("{indent}{} end {name}\n", &sent[..5]),
            Form::Fixed => format!("{} end {name}\n", &sent[..5]),
        };
        edits.push((e, format!("{}\n{end}", lines[e])));
    }
    edits.sort();
    edits.dedup_by_key(|e| e.0);
    rebuild(&lines, edits, text)
}

/// Optional end directives of loop constructs removed.
fn remove_ends(text: &str, form: Form) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut edits = Vec::new();
    for (i, body, _) in single_directives(&lines, form) {
        let w = words(&body.to_ascii_lowercase());
        let w: Vec<&str> = w.iter().map(String::as_str).collect();
        if matches!(
            w[..],
            ["end", "parallel" | "kernels" | "serial", "loop"] | ["end", "loop"]
        ) {
            edits.push((i, String::new()));
        }
    }
    rebuild(&lines, edits, text)
}

/// `end do` ↔ `enddo`, `end if` ↔ `endif`.
fn end_spelling(text: &str, form: Form) -> Option<String> {
    let out: String = text
        .split_inclusive('\n')
        .map(|l| {
            if !is_statement(l, form) || l.contains(['\'', '"']) {
                return l.to_string();
            }
            let t = l.trim_start();
            let lead = &l[..l.len() - t.len()];
            let low = t.to_ascii_lowercase();
            for (a, b) in [
                ("end do", "enddo"),
                ("enddo", "end do"),
                ("end if", "endif"),
                ("endif", "end if"),
            ] {
                if low.starts_with(a)
                    && !low[a.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
                {
                    return format!("{lead}{b}{}", &t[a.len()..]);
                }
            }
            l.to_string()
        })
        .collect();
    (out != text).then_some(out)
}

/// Block `do` loops written with a label ending on `NNN continue`.
fn labelled_loops(text: &str, form: Form) -> Option<String> {
    if text.contains("9900") {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut new: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let mut n = 0;
    for i in 0..lines.len() {
        if lines[i].contains(['\'', '"', ';', '!']) || lines[i].trim_end().ends_with('&') {
            continue;
        }
        let Some(e) = end_of_do(&lines, i, form) else {
            continue;
        };
        // Construct names stay on `end do`.
        if keyword(lines[i]) == "do"
            && !lines[i].trim_start().to_ascii_lowercase().starts_with("do")
        {
            continue;
        }
        if lines[e].contains(['!', ';'])
            || lines[e]
                .trim_start()
                .starts_with(|c: char| c.is_ascii_digit())
        {
            continue;
        }
        let label = 9900 + n;
        n += 1;
        let t = lines[i].trim_start();
        new[i] = format!(
            "{}do {label} {}",
            &lines[i][..lines[i].len() - t.len()],
            &t[2..].trim_start()
        );
        let te = lines[e].trim_start();
        new[e] = match form {
            Form::Free => format!("{}{label} continue", &lines[e][..lines[e].len() - te.len()]),
            Form::Fixed => format!(
                "{label:<5} {}continue",
                &lines[e][6.min(lines[e].len() - te.len())..lines[e].len() - te.len()]
            ),
        };
        if form == Form::Fixed && new[i].len() > 72 {
            return None;
        }
    }
    let out: String = new.iter().map(|l| format!("{l}\n")).collect();
    (n > 0 && out != text).then_some(out)
}

fn simple_assignment(l: &str) -> bool {
    let t = l.trim();
    if t.contains(['!', '\'', '"', ';', '&']) || t.starts_with(|c: char| c.is_ascii_digit()) {
        return false;
    }
    let Some(eq) = t.find('=') else { return false };
    let lhs = &t[..eq];
    let rhs = &t[eq + 1..];
    !rhs.starts_with(['=', '>'])
        && !lhs.ends_with(['<', '>', '/', '='])
        && lhs
            .trim_end()
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_%(),:".contains(c))
        && !lhs.to_ascii_lowercase().starts_with("if")
        && !lhs.to_ascii_lowercase().starts_with("do ")
        && !lhs.contains(' ')
}

/// Pairs of assignments on one line with `;` (free form), not next to a directive.
fn semicolons(text: &str, form: Form) -> Option<String> {
    if form != Form::Free {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    let mut i = 0;
    let near_dir = |k: usize| {
        (k.saturating_sub(1)..(k + 2).min(lines.len()))
            .any(|j| lines[j].trim_start().starts_with("!$"))
    };
    while i < lines.len() {
        if i + 1 < lines.len()
            && simple_assignment(lines[i])
            && simple_assignment(lines[i + 1])
            && !near_dir(i)
            && !near_dir(i + 1)
        {
            out.push_str(&format!(
                "{}; {}\n",
                lines[i].trim_end(),
                lines[i + 1].trim()
            ));
            i += 2;
        } else {
            out.push_str(lines[i]);
            out.push('\n');
            i += 1;
        }
    }
    (out != text).then_some(out)
}

/// Assignments continued after their `=` (free form).
fn continued_statements(text: &str, form: Form) -> Option<String> {
    if form != Form::Free {
        return None;
    }
    let out: String = text
        .split_inclusive('\n')
        .map(|l| {
            if !simple_assignment(l) {
                return l.to_string();
            }
            let eq = l.find('=').unwrap();
            format!("{}= &\n      & {}", &l[..eq], l[eq + 1..].trim_start())
        })
        .collect();
    (out != text).then_some(out)
}

/// Free form written in fixed form: statements from column 7, continuations in column 6,
/// directives' continuations `!$acc&`. None where a line would not fit in 72 columns.
fn to_fixed(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut open = false; // statement continued
    let mut dir_open = false;
    for l in text.lines() {
        if l.contains('\t') {
            return None;
        }
        let t = l.trim_start();
        if t.is_empty() {
            out.push('\n');
            continue;
        }
        if let Some((s, at, _)) = sentinel(l, Form::Free) {
            let body = l[at..].trim_end();
            let (body, more) = match body.strip_suffix('&') {
                Some(b) if comment_at(body).is_none() => (b, true),
                _ => (body, false),
            };
            let c6 = if dir_open { '&' } else { ' ' };
            out.push_str(&format!("!${s}{c6}{}\n", body.trim_end()));
            dir_open = more;
            continue;
        }
        if dir_open {
            return None;
        }
        if t.starts_with("!$") {
            return None; // conditional compilation
        }
        if t.starts_with('!') || t.starts_with('#') {
            out.push_str(if t.starts_with('#') { l } else { t });
            out.push('\n');
            continue;
        }
        let code_end = comment_at(l).unwrap_or(l.len());
        let code = l[..code_end].trim_end();
        let comment = &l[code_end..];
        let (code, more) = match code.strip_suffix('&') {
            Some(c) => (c, true),
            None => (code, false),
        };
        let code_t = code.trim_start();
        if open {
            let c = code_t.strip_prefix('&').unwrap_or(code_t);
            out.push_str(&format!("     &{c}{comment}\n"));
        } else {
            let digits: String = code_t.chars().take_while(|c| c.is_ascii_digit()).collect();
            let rest = &l[..code.len()];
            let indent = rest.len() - rest.trim_start().len();
            if !digits.is_empty() {
                out.push_str(&format!(
                    "{digits:<5} {}{comment}\n",
                    code_t[digits.len()..].trim_start()
                ));
            } else {
                out.push_str(&format!(
                    "      {}{}{comment}\n",
                    " ".repeat(indent.min(20)),
                    code_t
                ));
            }
        }
        if more && code.contains(['\'', '"']) {
            return None; // a string may be continued
        }
        open = more;
    }
    fits_fixed(&out).then_some(out)
}

/// Fixed form written in free form.
fn to_free(text: &str) -> Option<String> {
    let mut out: Vec<String> = Vec::new();
    let mut last_stmt: Option<usize> = None;
    let mut last_dir: Option<usize> = None;
    // (`from`: where the text after a sentinel starts.)
    let add_amp = |s: &mut String, from: usize| {
        let at = comment_at(&s[from..]).map_or(s.len(), |c| c + from);
        let code = s[..at].trim_end().to_string();
        *s = format!("{code} &{}", &s[at..]);
    };
    for l in text.lines() {
        if l.contains('\t') || l.len() > 72 {
            return None;
        }
        if let Some((s, at, cont)) = sentinel(l, Form::Fixed) {
            let body = &l[at..];
            if cont {
                let k = last_dir?;
                add_amp(&mut out[k], 5);
                out.push(format!("!${s}& {body}"));
            } else {
                out.push(format!("!${s} {body}"));
            }
            last_dir = Some(out.len() - 1);
            continue;
        }
        if l.starts_with(['c', 'C', '*', '!']) {
            if l.get(1..2) == Some("$") {
                return None;
            }
            out.push(format!("!{}", &l[1..]));
            continue;
        }
        if l.starts_with('#') || l.trim().is_empty() || l.trim_start().starts_with('!') {
            out.push(l.to_string());
            continue;
        }
        if l.starts_with(['d', 'D']) {
            return None;
        }
        let c6 = l.get(5..6).unwrap_or(" ");
        let label = l.get(..5).unwrap_or(l).trim();
        let rest = l.get(6..).unwrap_or("");
        if c6 != " " && c6 != "0" {
            let k = last_stmt?;
            if out[k].contains(['\'', '"']) {
                return None;
            }
            add_amp(&mut out[k], 0);
            out.push(format!("      &{rest}"));
        } else {
            out.push(format!("{label:<5} {rest}"));
        }
        last_stmt = Some(out.len() - 1);
    }
    Some(out.iter().map(|l| format!("{l}\n")).collect())
}

type Transform = fn(&str, Form) -> Option<String>;

/// The transformations that keep the statements (compared with them) and those that
/// rewrite statements (only the directives compared).
const SAME_STATEMENTS: [(&str, Transform); 6] = [
    ("split at blanks", split_words),
    ("split in lists", split_lists),
    ("joined", join),
    ("blanks and comment", spaces),
    ("end directives added", add_ends),
    ("end directives removed", remove_ends),
];
/// Transformations whose differences are known limitations outside the reader, not checked
/// unless `ACC2OMP_LAYOUT_ALL=1` (none at present).
const PENDING: [&str; 0] = [];

/// Files that test malformed continuations: another form reads them otherwise.
const MALFORMED: [&str; 1] = ["continuation-free-form.f95"];

const NEW_STATEMENTS: [(&str, Transform); 4] = [
    ("enddo/endif", end_spelling),
    ("labelled loops", labelled_loops),
    ("semicolons", semicolons),
    ("continued statements", continued_statements),
];

fn sources() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("fixtures/translate"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.push(root.join("fixtures/programs/fortran"));
    dirs.extend(gcc_fortran_dirs());
    if let Some(extra) = std::env::var_os("ACC2OMP_LAYOUT_EXTRA") {
        dirs.extend(std::env::split_paths(&extra));
    }
    let mut v = Vec::new();
    for dir in dirs {
        for p in std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
        {
            if acc2omp::fortran::form::kind_of(&p).is_some()
                && let Ok(text) = std::fs::read_to_string(&p)
                && text.to_ascii_lowercase().contains("$acc")
            {
                v.push((p, text));
            }
        }
    }
    v.extend(
        LAYOUT_PROGRAMS
            .iter()
            .enumerate()
            .map(|(k, s)| (PathBuf::from(format!("layout{k}.f90")), s.to_string())),
    );
    v.sort();
    v
}

fn with_ext(p: &Path, free: bool) -> PathBuf {
    let cpp = acc2omp::fortran::form::kind_of(p).is_some_and(|k| k.cpp);
    let ext = match (free, cpp) {
        (true, false) => "f90",
        (true, true) => "F90",
        (false, false) => "f",
        (false, true) => "F",
    };
    p.with_extension(ext)
}

#[test]
fn the_translation_does_not_depend_on_the_layout() {
    let dump = std::env::var_os("ACC2OMP_LAYOUT_DUMP").map(PathBuf::from);
    let all = std::env::var_os("ACC2OMP_LAYOUT_ALL").is_some_and(|v| v == "1");
    let mut checked = 0;
    let mut failures = Vec::new();
    for (path, text) in sources() {
        let form = form_of(&path);
        let name = path
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        if MALFORMED.contains(&name.as_str()) {
            continue;
        }
        let mut check = |how: &str, other_path: &Path, other: &str, statements: bool| {
            if PENDING.contains(&how) && !all {
                return;
            }
            checked += 1;
            let (a, ta) = outcome(&path, &text, statements);
            let (b, tb) = outcome(other_path, other, statements);
            if a != b {
                failures.push(format!("{}: {how}", path.display()));
                if let Some(d) = &dump {
                    let n = failures.len();
                    let base = d.join(format!("{n:03}"));
                    std::fs::create_dir_all(&base).unwrap();
                    let name = |p: &Path| p.file_name().unwrap().to_string_lossy().into_owned();
                    std::fs::write(base.join(format!("a.{}", name(&path))), &text).unwrap();
                    std::fs::write(base.join(format!("b.{}", name(other_path))), other).unwrap();
                    std::fs::write(base.join("a.out"), &ta).unwrap();
                    std::fs::write(base.join("b.out"), &tb).unwrap();
                    std::fs::write(
                        base.join("why"),
                        format!("{}: {how}\n{:#?}\n{:#?}\n", path.display(), a, b),
                    )
                    .unwrap();
                }
            }
        };
        for (how, t) in SAME_STATEMENTS {
            if let Some(other) = t(&text, form) {
                check(how, &path, &other, true);
            }
        }
        for (how, t) in NEW_STATEMENTS {
            if let Some(other) = t(&text, form) {
                check(how, &path, &other, false);
            }
        }
        let converted = match form {
            Form::Free => to_fixed(&text).map(|t| (with_ext(&path, false), t)),
            Form::Fixed => to_free(&text).map(|t| (with_ext(&path, true), t)),
        };
        if let Some((p, t)) = converted {
            check("other source form", &p, &t, false);
        }
    }
    eprintln!("{checked} layouts checked");
    assert!(checked >= 100, "only {checked} checked");
    assert!(
        failures.is_empty(),
        "{} failures: {failures:#?}",
        failures.len()
    );
}

/// Programs whose translation once depended on their layout.
const LAYOUT_PROGRAMS: [&str; 1] = [
    // `no_create(b ( 1:n/2 ))`: the blanks made the section look non-contiguous, and it was
    // mapped `alloc` unconditionally instead of under a presence test.
    "program p\n  integer :: n, v\n  real :: b(10)\n  n = 10\n  !$acc data no_create(v, b(1:n/2))\n  !$acc serial\n  v = 1\n  b(1) = 2\n  !$acc end serial\n  !$acc end data\nend program\n",
];
