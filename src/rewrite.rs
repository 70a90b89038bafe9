//! Plans → byte edits. Only the directive's own bytes change: the `acc` word, the name,
//! the clauses that change; comments, continuations and layout stay.

use crate::directive::Directive;
use crate::edit::Edit;
use crate::lex::splice_len;
use crate::scan::{Form, Site};
use crate::source::{LineIndex, blank_to_line_end, indentation};
use crate::translate::{Action, ClauseOp, Plan, Rewrite};
use std::ops::Range;

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
    let mut parts = vec![format!("omp {}", rw.name)];
    if !rw.drop_arg
        && let Some(a) = &d.arg
    {
        parts[0].push_str(&format!("({})", &text[a.span.clone()]));
    }
    for (c, op) in d.clauses.iter().zip(&rw.ops) {
        match op {
            ClauseOp::Keep => parts.push(text[c.span.clone()].to_string()),
            ClauseOp::Replace(t) => parts.push(t.clone()),
            ClauseOp::Drop => {}
        }
    }
    parts.extend(rw.append.iter().cloned());
    parts.join(" ")
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Opening of the compound statement: `plan.decls`, then uninitialized local copies.
fn locals_decl(plan: &Plan) -> String {
    let decls: Vec<String> = plan
        .decls
        .iter()
        .filter(|d| !d.is_empty())
        .cloned()
        .chain(plan.locals.iter().map(|v| format!("__typeof__({v}) {v};")))
        .collect();
    // An empty decl only opens the block (for lines inserted before the directive).
    format!("{{ {}", decls.join(" ")).trim_end().to_string()
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
fn rewrite_edits(src: &str, site: &Site, d: &Directive, rw: &Rewrite) -> Vec<Edit> {
    let mut edits = vec![Edit::replace(site.acc.clone(), "omp")];
    if src[d.name_span.clone()] != rw.name {
        edits.push(Edit::replace(d.name_span.clone(), rw.name.clone()));
    }
    let mut deletions = Vec::new();
    let mut dropped = Vec::new();
    let mut last_kept = d.name_span.end;
    if let Some(a) = &d.arg {
        if rw.drop_arg {
            deletions.push(removal(
                src,
                &(a.span.start - 1..a.span.end + 1),
                d.name_span.end,
                site.span.end,
            ));
        } else {
            last_kept = a.span.end + 1;
        }
    }
    // OpenACC accepts a comma before the first clause, OpenMP does not (clang then ignores
    // every clause that follows).
    if let Some(first) = d.clauses.first() {
        let gap = last_kept..first.span.start;
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
            ClauseOp::Keep => last_kept = c.span.end,
            ClauseOp::Replace(t) => {
                if src[c.span.clone()] != *t {
                    edits.push(Edit::replace(c.span.clone(), t.clone()));
                }
                last_kept = c.span.end;
            }
            ClauseOp::Drop => dropped.push(c.span.clone()),
        }
    }
    dropped.extend(d.inactive.iter().cloned());
    for r in coalesce(src, dropped) {
        deletions.push(removal(src, &r, d.name_span.end, site.span.end));
    }
    edits.extend(merge(deletions).into_iter().map(Edit::delete));
    if !rw.append.is_empty() {
        edits.push(Edit::insert(last_kept, format!(" {}", rw.append.join(" "))));
    }
    edits
}

/// All edits for one site.
pub fn site_edits(
    src: &str,
    index: &LineIndex,
    eol: &str,
    site: &Site,
    d: &Directive,
    plan: &Plan,
    stmt_end: Option<usize>,
) -> Vec<Edit> {
    let mut edits = Vec::new();
    let text = site.unescaped.as_deref().unwrap_or(src);
    let pragma = site.form == Form::Pragma;
    match &plan.action {
        Action::Unchanged => return edits,
        Action::Rewrite(rw) => {
            if site.unescaped.is_some() {
                let content = string_content(src, site);
                edits.push(Edit::replace(content, escape(&render(d, rw, text))));
            } else {
                edits.extend(rewrite_edits(src, site, d, rw));
            }
            if !plan.locals.is_empty() || !plan.decls.is_empty() {
                if pragma {
                    let ls = index.line_start(site.span.start);
                    edits.push(Edit::insert(
                        ls,
                        format!("{}{}{eol}", indentation(src, ls), locals_decl(plan)),
                    ));
                } else {
                    edits.push(Edit::insert(
                        site.span.start,
                        format!("{} ", locals_decl(plan)),
                    ));
                }
            }
        }
        Action::Statement(text) => {
            let comments: Vec<&str> = d.comments.iter().map(|c| &src[c.clone()]).collect();
            let mut keep = vec![text.clone()];
            if site.unescaped.is_none() {
                keep.extend(comments.iter().map(|c| c.to_string()));
            }
            let mut text = keep.join(" ");
            if pragma {
                // The code calls OpenMP: like the directive it replaces, it does nothing in a
                // build without OpenMP.
                let indent = indentation(src, index.line_start(site.span.start));
                text = format!("#ifdef _OPENMP{eol}{indent}{text}{eol}{indent}#endif");
            }
            edits.push(Edit::replace(site.span.clone(), text));
        }
        Action::Remove => {
            let comments: Vec<&str> = if site.unescaped.is_some() {
                vec![]
            } else {
                d.comments.iter().map(|c| &src[c.clone()]).collect()
            };
            let mut keep = Vec::new();
            if !plan.locals.is_empty() || !plan.decls.is_empty() {
                keep.push(locals_decl(plan));
            }
            keep.extend(comments.iter().map(|c| c.to_string()));
            if pragma && keep.is_empty() {
                let ls = index.line_start(site.span.start);
                edits.push(Edit::delete(ls..after_eol(src, site.span.end)));
            } else {
                edits.push(Edit::replace(site.span.clone(), keep.join(" ")));
            }
        }
    }
    if plan.action != Action::Unchanged {
        edits.extend(
            plan.inserts
                .iter()
                .map(|(at, text)| Edit::insert(*at, text.clone())),
        );
    }
    for b in &plan.before {
        if pragma {
            let ls = index.line_start(site.span.start);
            edits.push(Edit::insert(
                ls,
                format!("{}#pragma omp {b}{eol}", indentation(src, ls)),
            ));
        } else {
            edits.push(Edit::insert(
                site.span.start,
                format!("_Pragma(\"omp {}\") ", escape(b)),
            ));
        }
    }
    if let Some(end) = stmt_end {
        if !plan.locals.is_empty() || !plan.decls.is_empty() {
            // Close the new compound statement on a line of its own when the statement ends
            // its line, so that line stays as it was.
            let rest = &src[end..];
            let blank = rest.len() - rest.trim_start_matches([' ', '\t']).len();
            let at_eol = rest[blank..].is_empty()
                || rest[blank..].starts_with('\n')
                || rest[blank..].starts_with("\r\n");
            if at_eol {
                let indent = indentation(src, index.line_start(site.span.start));
                edits.push(Edit::insert(end + blank, format!("{eol}{indent}}}")));
            } else {
                edits.push(Edit::insert(end, " }"));
            }
        }
        if let Some(after) = &plan.after_stmt {
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

/// The content of a `_Pragma` string literal.
fn string_content(src: &str, site: &Site) -> Range<usize> {
    let s = &src[site.span.clone()];
    let open = s
        .find('"')
        .map_or(site.span.start, |p| site.span.start + p + 1);
    let close = s.rfind('"').map_or(site.span.end, |p| site.span.start + p);
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
    }
}
