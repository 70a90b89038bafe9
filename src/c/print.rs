//! The C and C++ printer: plans as `#pragma omp` lines (or `_Pragma("omp …")` operators
//! where the directive was one), compound statements for new scopes, `__typeof__` local
//! copies. A rewritten directive changes only its own bytes: the `acc` word, the name, the
//! clauses that change; comments, continuations and layout stay.

use crate::diag::Diagnostic;
use crate::directive::Directive;
use crate::edit::Edit;
use crate::intent::{
    Action, CallStmt, Calls, ClauseOp, Decl, Insert, OmpDirective, Plan, Rewrite, Scope,
    clauses_text,
};
use crate::lex::{block_comment_end, splice_len};
use crate::print::{Printer, operators};
use crate::region::Stmt;
use crate::scan::{Form, Site};
use crate::source::{blank_to_line_end, indentation};
use crate::unit::Unit;
use std::ops::Range;

/// The C and C++ printer.
pub struct CPrinter;

/// OpenMP's worksharing-loop construct in C.
const FOR: &str = "for";

fn blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Dropped clause spans with neighbours separated only by blanks and commas joined, so that a
/// line whose clauses all go is removed as a whole.
fn coalesce(src: &str, mut spans: Vec<Range<usize>>) -> Vec<Range<usize>> {
    spans.sort_by_key(|r| r.start);
    let mut out: Vec<Range<usize>> = Vec::new();
    for r in spans {
        match out.last_mut() {
            Some(last)
                if last.end <= r.start
                    && src.as_bytes()[last.end..r.start]
                        .iter()
                        .all(|&b| blank(b) || b == b',') =>
            {
                last.end = r.end
            }
            _ => out.push(r),
        }
    }
    out
}

/// The range to delete for a dropped clause: with the blanks (and a comma) before it, or,
/// when it starts a line, with the blanks after it.
fn removal(src: &str, span: &Range<usize>, floor: usize, ceiling: usize) -> Range<usize> {
    let b = src.as_bytes();
    let mut j = span.start;
    while j > floor && blank(b[j - 1]) {
        j -= 1;
    }
    if j > floor && b[j - 1] == b',' {
        j -= 1;
        while j > floor && blank(b[j - 1]) {
            j -= 1;
        }
        return j..span.end;
    }
    // The first clause, followed by a comma: the comma goes with it, since OpenMP takes no
    // comma before its first clause (`loop gang, vector_length(n)` loses `gang, `).
    if j == floor && j < span.start {
        let mut e = span.end;
        while e < ceiling && blank(b[e]) {
            e += 1;
        }
        if e < ceiling && b[e] == b',' {
            e += 1;
            while e < ceiling && blank(b[e]) {
                e += 1;
            }
            if e < ceiling && b[e] != b'\\' && b[e] != b'\n' && b[e] != b'\r' {
                return span.start..e;
            }
        }
    }
    if j <= floor || b[j - 1] != b'\n' {
        return j..span.end;
    }
    // The clause starts a line: take the blanks after it too.
    let mut e = span.end;
    while e < ceiling && blank(b[e]) {
        e += 1;
    }
    if e < ceiling && b[e] == b',' {
        e += 1;
        while e < ceiling && blank(b[e]) {
            e += 1;
        }
    }
    // Alone on a continued line: also take the continuation that leads to it.
    let line_end = e >= ceiling || b[e] == b'\n' || b[e] == b'\r' || splice_len(b, e) > 0;
    let mut k = j - 1;
    if k > 0 && b[k - 1] == b'\r' {
        k -= 1;
    }
    if line_end && k > floor && b[k - 1] == b'\\' {
        k -= 1;
        while k > floor && blank(b[k - 1]) {
            k -= 1;
        }
        return k..span.end;
    }
    span.start..e
}

fn merge(mut ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    ranges.sort_by_key(|r| r.start);
    let mut out: Vec<Range<usize>> = Vec::new();
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

fn render(d: &Directive, rw: &Rewrite, text: &str) -> String {
    let mut parts = vec![format!("omp {}", rw.name.spelled(FOR))];
    if !rw.drop_arg
        && let Some(a) = &d.arg
    {
        parts[0].push_str(&format!("({})", &text[a.span()]));
    }
    for (c, op) in d.clauses.iter().zip(&rw.ops) {
        match op {
            ClauseOp::Keep => parts.push(text[c.span()].to_string()),
            ClauseOp::Replace(t) => parts.push(clauses_text(t)),
            ClauseOp::Drop => {}
        }
    }
    parts.extend(rw.append.iter().map(|c| c.text()));
    parts.join(" ")
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Opening of the compound statement of a new scope: its declarations, then uninitialized
/// local copies.
fn locals_decl(scope: &Scope) -> String {
    let decls: Vec<String> = scope
        .decls
        .iter()
        .filter_map(|d| match d {
            // Only opens the block (for lines inserted before the directive).
            Decl::Group => None,
            Decl::Const { name, value } => {
                Some(format!("const __typeof__({value}) {name} = {value};"))
            }
            Decl::Evaluate(e) => Some(format!("(void)({e});")),
        })
        .chain(scope.locals.iter().map(|v| format!("__typeof__({v}) {v};")))
        .collect();
    format!("{{ {}", decls.join(" ")).trim_end().to_string()
}

/// Runtime statements in place of a directive, under `if` when it has a condition.
fn calls_text(calls: &Calls) -> String {
    let stmts: Vec<String> = calls
        .stmts
        .iter()
        .map(|s| match s {
            CallStmt::Call { routine, args } => format!("{routine}({});", args.join(", ")),
            CallStmt::Assign { var, value } => format!("{var} = {value};"),
        })
        .collect();
    let text = stmts.join(" ");
    match &calls.cond {
        Some(cond) => format!("if ({cond}) {{ {text} }}"),
        None if stmts.len() > 1 => format!("{{ {text} }}"),
        None => text,
    }
}

/// End of the line terminator following `end` (or `end` at end of input).
fn after_eol(src: &str, end: usize) -> usize {
    let rest = &src[end..];
    if rest.starts_with("\r\n") {
        end + 2
    } else if rest.starts_with('\n') {
        end + 1
    } else {
        end
    }
}

/// Fine-grained edits of a rewritten directive written in the file.
fn rewrite_edits(src: &str, site: &Site, d: &Directive, rw: &Rewrite, edits: &mut Vec<Edit>) {
    let omp = match &site.form {
        Form::Wrapped { pragma, .. } => format!("{pragma}(omp "),
        _ => "omp".to_string(),
    };
    edits.push(Edit::replace(site.acc(), omp));
    let name = rw.name.spelled(FOR);
    if src[d.name_span()] != name {
        edits.push(Edit::replace(d.name_span(), name));
    }
    let mut deletions = Vec::new();
    let mut dropped = Vec::new();
    let mut last_kept = d.name_span().end;
    if let Some(a) = &d.arg {
        if rw.drop_arg {
            deletions.push(removal(
                src,
                &(a.span().start - 1..a.span().end + 1),
                d.name_span().end,
                site.span().end,
            ));
        } else {
            last_kept = a.span().end + 1;
        }
    }
    // OpenACC accepts a comma before the first clause, OpenMP does not (clang then ignores
    // every clause that follows).
    if let Some(first) = d.clauses.first() {
        let gap = last_kept..first.span().start;
        let text = &src[gap.clone()];
        if text.contains(',') && text.bytes().all(|b| b == b',' || b == b' ' || b == b'\t') {
            // Keep one blank between the name and the clause.
            if text.ends_with([' ', '\t']) {
                deletions.push(gap.start..gap.end - 1);
            } else if text.starts_with([' ', '\t']) {
                deletions.push(gap.start + 1..gap.end);
            } else {
                deletions.push(gap.clone());
                edits.push(Edit::insert(gap.end, " "));
            }
        }
    }
    for (c, op) in d.clauses.iter().zip(&rw.ops) {
        match op {
            ClauseOp::Keep => {
                if let Some(t) = operators::minus_as_plus(&src[c.span()]) {
                    edits.push(Edit::replace(c.span(), t));
                }
                last_kept = c.span().end;
            }
            ClauseOp::Replace(t) => {
                let t = clauses_text(t);
                if src[c.span()] != t {
                    edits.push(Edit::replace(c.span(), t));
                }
                last_kept = c.span().end;
            }
            ClauseOp::Drop => dropped.push(c.span()),
        }
    }
    dropped.extend(d.inactive().iter().cloned());
    for r in coalesce(src, dropped) {
        deletions.push(removal(src, &r, d.name_span().end, site.span().end));
    }
    edits.extend(merge(deletions).into_iter().map(Edit::delete));
    if !rw.append.is_empty() {
        edits.push(Edit::insert(
            last_kept,
            format!(" {}", clauses_text(&rw.append)),
        ));
    }
}

impl Printer for CPrinter {
    fn reads_facts(&self) -> bool {
        false
    }

    fn guards(&self, u: &Unit, left: &[(usize, Option<String>)]) -> Vec<Edit> {
        crate::untranslated::edits(u.src, left, u.eol)
    }

    /// A `#pragma` whose end line would go after its statement stays OpenACC where what
    /// follows the statement on its line would begin a preprocessing directive once moved
    /// to the next line (a `#` after code is not one).
    fn review(&self, u: &Unit, plans: &mut [Plan]) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        for (i, plan) in plans.iter_mut().enumerate() {
            let (Some(stmt), Some(ends)) = (&u.stmts[i], &plan.end_after_stmt) else {
                continue;
            };
            if u.sites[i].form != Form::Pragma
                || !directive_if_moved(&u.src.as_bytes()[stmt.bytes().end..])
            {
                continue;
            }
            let end_line = format!("#pragma omp end {}", ends.spelled(FOR));
            plan.unchanged();
            plan.diags.clear();
            out.push(Diagnostic::new(
                u.at(i),
                crate::rules::id::NOT_TRANSLATED,
                format!("code starting with '#' follows the statement on its line: moved to a line of its own after '{end_line}', it would become a preprocessing directive; the directive is left unchanged"),
            ));
        }
        out
    }

    fn site_edits(&self, u: &Unit, plans: &[Plan], i: usize) -> Vec<Edit> {
        let Some(d) = u.dir(i) else {
            return Vec::new();
        };
        site_edits(u, &u.sites[i], d, &plans[i], u.stmts[i].as_ref())
    }
}

/// All edits for one site.
fn site_edits(u: &Unit, site: &Site, d: &Directive, plan: &Plan, stmt: Option<&Stmt>) -> Vec<Edit> {
    let (src, index, eol) = (u.src, u.lines, u.eol);
    let stmt_end = stmt.map(|s| s.bytes().end);
    let mut edits = Vec::new();
    let text = site.unescaped.as_deref().unwrap_or(src);
    let pragma = site.form == Form::Pragma;
    let scope = !plan.scope.is_empty();
    match &plan.action {
        // C has no directive that closes another.
        Action::Unchanged | Action::Close { .. } => return edits,
        Action::Rewrite(rw) => {
            if site.unescaped.is_some() {
                let content = string_content(src, site);
                edits.push(Edit::replace(content, escape(&render(d, rw, text))));
            } else {
                rewrite_edits(src, site, d, rw, &mut edits);
            }
            if scope {
                if pragma {
                    let ls = index.line_start(site.span().start);
                    edits.push(Edit::insert(
                        ls,
                        format!("{}{}{eol}", indentation(src, ls), locals_decl(&plan.scope)),
                    ));
                } else {
                    edits.push(Edit::insert(
                        site.span().start,
                        format!("{} ", locals_decl(&plan.scope)),
                    ));
                }
            }
        }
        Action::Calls(calls) => {
            let comments: Vec<&str> = d.comments().iter().map(|c| &src[c.clone()]).collect();
            let mut keep = vec![calls_text(calls)];
            if site.unescaped.is_none() {
                keep.extend(comments.iter().map(|c| c.to_string()));
            }
            let mut text = keep.join(" ");
            if pragma {
                // The code calls OpenMP: like the directive it replaces, it does nothing in a
                // build without OpenMP.
                let indent = indentation(src, index.line_start(site.span().start));
                text = format!("#ifdef _OPENMP{eol}{indent}{text}{eol}{indent}#endif");
            }
            edits.push(Edit::replace(site.span(), text));
        }
        Action::Remove => {
            let comments: Vec<&str> = if site.unescaped.is_some() {
                vec![]
            } else {
                d.comments().iter().map(|c| &src[c.clone()]).collect()
            };
            let mut keep = Vec::new();
            if scope {
                keep.push(locals_decl(&plan.scope));
            }
            keep.extend(comments.iter().map(|c| c.to_string()));
            if pragma && keep.is_empty() {
                let ls = index.line_start(site.span().start);
                edits.push(Edit::delete(ls..after_eol(src, site.span().end)));
            } else {
                edits.push(Edit::replace(site.span(), keep.join(" ")));
            }
        }
    }
    for ins in &plan.inserts {
        insert_edits(u, site, ins, stmt, &mut edits);
    }
    for b in &plan.before {
        let b = b.text(FOR);
        if pragma {
            let ls = index.line_start(site.span().start);
            edits.push(Edit::insert(
                ls,
                format!("{}#pragma omp {b}{eol}", indentation(src, ls)),
            ));
        } else {
            edits.push(Edit::insert(
                site.span().start,
                format!("_Pragma(\"omp {}\") ", escape(&b)),
            ));
        }
    }
    if let Some(end) = stmt_end {
        if scope {
            // Close the new compound statement on a line of its own when the statement ends
            // its line, so that line stays as it was.
            let rest = &src[end..];
            let blank = rest.len() - rest.trim_start_matches([' ', '\t']).len();
            let at_eol = rest[blank..].is_empty()
                || rest[blank..].starts_with('\n')
                || rest[blank..].starts_with("\r\n");
            if at_eol {
                let indent = indentation(src, index.line_start(site.span().start));
                edits.push(Edit::insert(end + blank, format!("{eol}{indent}}}")));
            } else {
                edits.push(Edit::insert(end, " }"));
            }
        }
        if let Some(after) = &plan.end_after_stmt {
            let after = format!("end {}", after.spelled(FOR));
            let line = if pragma {
                // Code after the statement on its line goes to the next line: on the
                // pragma's line it would become part of the directive.
                let ends_line = blank_to_line_end(&src.as_bytes()[end..]).is_some();
                let next = if ends_line { "" } else { eol };
                format!("{eol}#pragma omp {after}{next}")
            } else {
                format!(" _Pragma(\"omp {after}\")")
            };
            edits.push(Edit::insert(end, line));
        }
    }
    edits
}

/// Whether `rest`, the text after a statement on its line, would begin a preprocessing
/// directive at the start of a line: after blanks, comments (over lines too: one blank) and
/// splices, a `#` or `%:`.
fn directive_if_moved(rest: &[u8]) -> bool {
    let mut k = 0;
    loop {
        match rest.get(k..).unwrap_or_default() {
            [b' ' | b'\t' | b'\x0b' | b'\x0c', ..] => k += 1,
            [b'/', b'*', ..] => k = block_comment_end(rest, k),
            [b'\\', ..] if splice_len(rest, k) > 0 => k += splice_len(rest, k),
            [b'#', ..] | [b'%', b':', ..] => return true,
            _ => return false,
        }
    }
}

/// Start of the line holding offset `o`.
fn line_of(src: &str, o: usize) -> usize {
    src[..o].rfind('\n').map_or(0, |k| k + 1)
}

/// The edits that write `ins` for the site.
fn insert_edits(u: &Unit, site: &Site, ins: &Insert, stmt: Option<&Stmt>, out: &mut Vec<Edit>) {
    let (src, eol) = (u.src, u.eol);
    match ins {
        Insert::BeforeStatement {
            stmt, directive, ..
        } => {
            let (at, text) = directive_before(u, *stmt, &directive.text(FOR));
            out.push(Edit::insert(at, text));
        }
        Insert::GangLoop { gangs } => {
            if let Some(stmt) = stmt {
                let head = format!(
                    "for (int acc2omp_gang = 0; acc2omp_gang < (omp_is_initial_device() ? 1 : {gangs}); acc2omp_gang++)"
                );
                let at = u.syntax.token_range(stmt.toks().start).start;
                let ls = line_of(src, at);
                let indent = indentation(src, ls);
                // Under `_OPENMP` only: a build without OpenMP runs the body once, as the host
                // runs one gang (and calls no OpenMP routine).
                out.push(if ls + indent.len() == at {
                    Edit::insert(
                        ls,
                        format!("#ifdef _OPENMP{eol}{indent}{head}{eol}#endif{eol}"),
                    )
                } else {
                    Edit::insert(
                        at,
                        format!("{eol}#ifdef _OPENMP{eol}{head}{eol}#endif{eol}"),
                    )
                });
            }
        }
        Insert::EmptyBody => {
            // The task's empty body.
            let text = if site.form == Form::Pragma {
                let ls = line_of(src, site.span().start);
                format!("{eol}{}{{}}", indentation(src, ls))
            } else {
                " {}".to_string()
            };
            out.push(Edit::insert(site.span().end, text));
        }
        Insert::AtBodyEnd(directive) => {
            if let Some(stmt) = stmt {
                at_body_end(u, site, stmt, directive, out);
            }
        }
        Insert::AtExits {
            returns,
            end,
            directive,
        } => {
            let exit_line = format!("#pragma omp {}", directive.text(FOR));
            for &r in returns {
                let ls = line_of(src, r);
                out.push(Edit::insert(
                    ls,
                    format!("{}{exit_line}{eol}", indentation(src, ls)),
                ));
            }
            if let Some(brace) = *end {
                let indent = indentation(src, line_of(src, site.span().start));
                let ls = line_of(src, brace);
                if src[ls..brace].trim().is_empty() {
                    out.push(Edit::insert(ls, format!("{indent}{exit_line}{eol}")));
                } else {
                    out.push(Edit::insert(
                        brace,
                        format!("{eol}{indent}{exit_line}{eol}"),
                    ));
                }
            }
        }
        Insert::BeforeFunction {
            at,
            copies,
            directive,
        } => {
            let mut text = String::new();
            for r in copies {
                text.push_str(&src[r.clone()]);
                text.push_str(eol);
            }
            text.push_str(&format!(
                "#pragma omp {} {}{eol}",
                directive.name.spelled(FOR),
                clauses_text(&directive.clauses)
            ));
            out.push(Edit::insert(*at, text));
        }
    }
}

/// The insertion that puts OpenMP directive `omp` before the statement starting at token
/// `tok`: a line of its own when the statement starts its line, else a `_Pragma` operator
/// in front of it.
fn directive_before(u: &Unit, tok: usize, omp: &str) -> (usize, String) {
    let at = u.syntax.token_range(tok).start;
    let ls = line_of(u.src, at);
    let indent = indentation(u.src, ls);
    if ls + indent.len() == at {
        let eol = u.eol;
        (ls, format!("{indent}#pragma omp {omp}{eol}"))
    } else {
        (at, format!("_Pragma(\"omp {}\") ", escape(omp)))
    }
}

/// OpenMP directive `directive` (e.g. `taskwait`) as the last statement of the body of the
/// site's construct: before the closing brace of a compound statement, or with braces added
/// around another statement (after the comments that end its last line; when code follows
/// it on that line, as a `_Pragma` there, since a `#pragma` line cannot go there).
fn at_body_end(u: &Unit, site: &Site, stmt: &Stmt, directive: &OmpDirective, out: &mut Vec<Edit>) {
    let src = u.src;
    let pragma = site.form == Form::Pragma;
    let eol = u.eol;
    let wait = directive.text(FOR);
    let ind = indentation(src, line_of(src, site.span().start));
    let operator = format!("_Pragma(\"omp {}\")", wait.replace('"', "\\\""));
    let line = if pragma {
        format!("#pragma omp {wait}")
    } else {
        operator.clone()
    };
    let body = &src[stmt.bytes()];
    if body.starts_with('{') && body.ends_with('}') {
        let close = stmt.bytes().end - 1;
        let ls = line_of(src, close);
        let text = if src[ls..close].trim_matches([' ', '\t']).is_empty() {
            // On a line of its own, indented like the body's first line.
            let first = if stmt.toks().start + 1 < stmt.toks().end {
                line_of(src, u.syntax.token_range(stmt.toks().start + 1).start)
            } else {
                ls
            };
            let ind = indentation(src, first.min(ls));
            (ls, format!("{ind}{line}{eol}"))
        } else if pragma {
            (close, format!("{eol}{line}{eol}"))
        } else {
            (close, format!("{line} "))
        };
        out.push(Edit::insert(text.0, text.1));
        return;
    }
    // Another statement: braces around it, on lines of their own when it has its lines.
    // What comes between the directive and its statement (an OpenMP directive already
    // translated, a `#if`) goes inside.
    let first = site
        .token()
        .map(|t| t + 1)
        .filter(|&t| t < stmt.toks().start)
        .unwrap_or(stmt.toks().start);
    let first_tok = (first < u.syntax.token_count()).then_some(first);
    let start = first_tok.map_or(stmt.bytes().start, |t| {
        u.syntax.token_range(t).start.min(stmt.bytes().start)
    });
    let end = stmt.bytes().end;
    // A `#pragma` or other preprocessor line may begin it: a brace cannot go before that.
    let pp = pragma || first_tok.is_some_and(|t| u.syntax.is_preprocessor_line(t));
    let blank = end + blank_to_line_end(&src.as_bytes()[end..]).unwrap_or(0);
    let ends_line = blank == src.len() || src[blank..].starts_with(['\n', '\r']);
    let starts_line = src[line_of(src, start)..start]
        .trim_matches([' ', '\t'])
        .is_empty();
    let lines = ends_line && starts_line;
    if lines || (pp && starts_line) {
        out.push(Edit::insert(line_of(src, start), format!("{ind}{{{eol}")));
    } else {
        out.push(Edit::insert(start, "{ "));
    }
    if lines || (pragma && ends_line) {
        out.push(Edit::insert(blank, format!("{eol}{ind}{line}{eol}{ind}}}")));
    } else {
        // Code follows on the statement's last line: the wait goes there as an operator.
        out.push(Edit::insert(end, format!(" {operator} }}")));
    }
}

/// The content of a `_Pragma` string literal.
fn string_content(src: &str, site: &Site) -> Range<usize> {
    let s = &src[site.span()];
    let open = s
        .find('"')
        .map_or(site.span().start, |p| site.span().start + p + 1);
    let close = s
        .rfind('"')
        .map_or(site.span().end, |p| site.span().start + p);
    open..close.max(open)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_after_a_statement_is_not_on_the_pragma_line() {
        // A comment over lines is one blank to the preprocessor: what follows it would be on
        // the directive's line.
        for rest in ["", "\n", "\r\n", "  // end\n", " /* a */ // b\n"] {
            assert!(blank_to_line_end(rest.as_bytes()).is_some(), "{rest:?}");
        }
        for rest in [
            " int g(void);\n",
            "urn x;",
            " /* a */ int y;",
            " /* a\n b */ x;",
        ] {
            assert!(blank_to_line_end(rest.as_bytes()).is_none(), "{rest:?}");
        }
    }

    #[test]
    fn a_hash_after_code_would_be_a_directive_on_its_own_line() {
        for rest in [
            "#pragma acc routine seq\n",
            "  # define A",
            " /* a\n b */ #x",
            " \\\n#x",
            " \\\r\n  #x",
            "\t%:x",
        ] {
            assert!(directive_if_moved(rest.as_bytes()), "{rest:?}");
        }
        for rest in [
            "",
            "\n#x",
            " // #x",
            " int g(void);",
            " /* #x */",
            "\\#x",
            "%x",
        ] {
            assert!(!directive_if_moved(rest.as_bytes()), "{rest:?}");
        }
    }

    #[test]
    fn removal_takes_blanks_and_commas() {
        let s = "parallel copy(a), gang num_gangs(2)";
        let gang = s.find("gang").unwrap();
        assert_eq!(&s[removal(s, &(gang..gang + 4), 8, s.len())], ", gang");
        let s = "loop \\\n  gang vector";
        let g = s.find("gang").unwrap();
        assert_eq!(&s[removal(s, &(g..g + 4), 4, s.len())], "gang ");
        let s = "loop gang \\\n   vector_length(4)";
        let v = s.find("vector_length").unwrap();
        assert_eq!(
            &s[removal(s, &(v..s.len()), 4, s.len())],
            " \\\n   vector_length(4)"
        );
        let s = "loop gang";
        assert_eq!(&s[removal(s, &(5..9), 4, s.len())], " gang");
        // OpenMP takes no comma before its first clause.
        let s = "parallel loop gang, vector_length(4)";
        assert_eq!(&s[removal(s, &(14..18), 13, s.len())], "gang, ");
        let s = "parallel loop gang,vector_length(4)";
        assert_eq!(&s[removal(s, &(14..18), 13, s.len())], "gang,");
    }
}
