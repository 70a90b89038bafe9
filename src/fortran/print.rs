//! How OpenMP is written in a Fortran file: directive lines with the file's sentinel
//! spelling (`!$omp`, `C$OMP`), continued within the form's line limit (132 columns in free
//! form as gfortran's default, 72 in fixed form), end directives that name the construct
//! opened, and the guard line that keeps a construct left as OpenACC from building into
//! wrong code under `-fopenmp`.
//!
//! These are the layout pieces of the Fortran printer: they take the OpenMP text a
//! translation decided and return source text; they decide nothing. The printer itself
//! (`printer.rs`) puts them together for each site's plan.

mod printer;
mod runtime_calls;

use super::form::Form;
use super::lines::{LineKind, Lines};
use super::sites::Site;
use std::ops::Range;

pub use printer::FortranPrinter;

/// Free form: gfortran's default line length.
pub const FREE_LIMIT: usize = 132;
/// Fixed form: columns past 72 are ignored.
pub const FIXED_LIMIT: usize = 72;

/// The line limit of `form`.
pub fn limit(form: Form) -> usize {
    match form {
        Form::Free => FREE_LIMIT,
        Form::Fixed => FIXED_LIMIT,
    }
}

/// How a site spells its sentinel, to write OpenMP the same way: the comment character
/// (`!`, `c`, `C`, `*`) and whether `acc` was in upper case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spelling {
    pub form: Form,
    pub comment: char,
    pub upper: bool,
}

impl Spelling {
    /// The spelling of `site`'s first sentinel.
    pub fn of(src: &str, site: &Site) -> Spelling {
        let mark = &src[site.mark.clone()];
        Spelling {
            form: site.form,
            comment: mark.chars().next().unwrap_or('!'),
            upper: mark.ends_with("ACC"),
        }
    }

    /// `!$omp` / `C$OMP`.
    #[cfg(test)]
    pub fn sentinel(&self) -> String {
        let omp = if self.upper { "OMP" } else { "omp" };
        format!("{}${omp}", self.comment)
    }
}

/// Where a directive text may be broken: after a blank or a comma at parenthesis depth 0
/// or inside a clause's parentheses after a comma, never in a string. Returns the byte
/// offsets of the break points (the next line starts there).
fn breaks(text: &str) -> Vec<usize> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut quote: Option<u8> = None;
    for (k, &c) in b.iter().enumerate() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                b'\'' | b'"' => quote = Some(c),
                b' ' | b',' if k + 1 < b.len() && b[k + 1] != b' ' => out.push(k + 1),
                _ => {}
            },
        }
    }
    out
}

/// `text` with each run of two or more blanks or tabs outside a character constant written
/// as one blank. A rewritten directive's items come from its source lines joined, so the
/// blanks that aligned a continuation line under the first (`copyin(a,b,` then
/// `!$acc&                  c)`) would otherwise stand inside the new line:
/// `map(to: a,b,                  c)`.
fn squeeze_blanks(text: &str) -> std::borrow::Cow<'_, str> {
    let b = text.as_bytes();
    let blank = |c: u8| c == b' ' || c == b'\t';
    let mut quote: Option<u8> = None;
    let mut out: Option<String> = None;
    // Bytes of `text` before `copied` are in `out` (when it exists).
    let mut copied = 0;
    let mut k = 0;
    while k < b.len() {
        let c = b[k];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == b'\'' || c == b'"' => quote = Some(c),
            None if blank(c) && b.get(k + 1).copied().is_some_and(blank) => {
                let end = k + b[k..].iter().take_while(|&&c| blank(c)).count();
                let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
                o.push_str(&text[copied..k]);
                o.push(' ');
                copied = end;
                k = end;
                continue;
            }
            None => {}
        }
        k += 1;
    }
    match out {
        Some(mut o) => {
            o.push_str(&text[copied..]);
            std::borrow::Cow::Owned(o)
        }
        None => std::borrow::Cow::Borrowed(text),
    }
}

/// The lines of directive `text` (`target teams map(to: a)`) after `indent`, each at most
/// the form's limit where a break point allows, joined by `eol` (no terminator after the
/// last); runs of blanks are written as one ([`squeeze_blanks`]). Free form continues with
/// a trailing ` &` and `!$omp& ` on the next line; fixed form with the sentinel and `&` in
/// column 6 (the sentinel is written in column 1).
pub fn directive_lines(sp: Spelling, indent: &str, text: &str, eol: &str) -> String {
    let text = squeeze_blanks(text);
    let text = text.as_ref();
    let limit = limit(sp.form);
    // The first line's head: `{indent}!$omp ` (free form) or `!$omp ` (fixed form, the
    // sentinel in column 1); a continuation's has `&` before the blank. Written in place,
    // not formatted: every rewritten directive comes here.
    let indent = match sp.form {
        Form::Free => indent,
        Form::Fixed => "",
    };
    let omp = if sp.upper { "$OMP" } else { "$omp" };
    let first_len = indent.len() + sp.comment.len_utf8() + omp.len() + 1;
    let push_head = |out: &mut String, cont: bool| {
        out.push_str(indent);
        out.push(sp.comment);
        out.push_str(omp);
        if cont {
            out.push('&');
        }
        out.push(' ');
    };
    let tail = match sp.form {
        Form::Free => " &",
        Form::Fixed => "",
    };
    let mut out = String::with_capacity(first_len + text.len() + 2);
    let mut cont = false;
    let text = text.trim();
    // The break points of every line's rest are those of the whole text past the rest's
    // start: a line ends at a break point, outside any string, and the blanks skipped
    // after it change no quoting. Found once, not once per line.
    let points = breaks(text);
    let mut from = 0;
    loop {
        let rest = &text[from..];
        let head_len = first_len + usize::from(cont);
        let room = limit.saturating_sub(head_len + tail.len());
        if rest.len() <= limit.saturating_sub(head_len) {
            push_head(&mut out, cont);
            out.push_str(rest);
            return out;
        }
        // The last break point that fits; else the first one (a long word stays whole).
        let after = points.partition_point(|&p| p <= from);
        let fits = points.partition_point(|&p| p <= from + room);
        let at = if fits > after {
            points[fits - 1]
        } else {
            match points.get(after) {
                Some(&p) => p,
                None => {
                    push_head(&mut out, cont);
                    out.push_str(rest);
                    return out;
                }
            }
        };
        push_head(&mut out, cont);
        out.push_str(text[from..at].trim_end());
        out.push_str(tail);
        out.push_str(eol);
        cont = true;
        from = text.len() - text[at..].trim_start().len();
    }
}

/// `directive_lines` as it was, its heads formatted: the oracle of its tests.
#[cfg(test)]
fn directive_lines_formatted(sp: Spelling, indent: &str, text: &str, eol: &str) -> String {
    let text = squeeze_blanks(text);
    let text = text.as_ref();
    let sentinel = sp.sentinel();
    let limit = limit(sp.form);
    let (first, cont) = match sp.form {
        Form::Free => (
            format!("{indent}{sentinel} "),
            format!("{indent}{sentinel}& "),
        ),
        Form::Fixed => (format!("{sentinel} "), format!("{sentinel}& ")),
    };
    let tail = match sp.form {
        Form::Free => " &",
        Form::Fixed => "",
    };
    let mut out = String::new();
    let mut head = first;
    let mut rest = text.trim();
    loop {
        let room = limit.saturating_sub(head.len() + tail.len());
        if rest.len() <= limit.saturating_sub(head.len()) {
            out.push_str(&head);
            out.push_str(rest);
            return out;
        }
        let points = breaks(rest);
        let at = points
            .iter()
            .rev()
            .find(|&&k| k <= room && k > 0)
            .or(points.first())
            .copied();
        let Some(at) = at else {
            out.push_str(&head);
            out.push_str(rest);
            return out;
        };
        out.push_str(&head);
        out.push_str(rest[..at].trim_end());
        out.push_str(tail);
        out.push_str(eol);
        head = cont.clone();
        rest = rest[at..].trim_start();
    }
}

/// The end directive of construct `name` (`target teams distribute parallel do`).
pub fn end_directive(sp: Spelling, indent: &str, name: &str, eol: &str) -> String {
    directive_lines(sp, indent, &format!("end {name}"), eol)
}

/// The bytes of a site's lines, from the start of its first line to the end of its last
/// line's text (comment lines between them included): what a rewrite of the whole
/// directive replaces.
pub fn site_lines(site: &Site, lines: &Lines) -> Range<usize> {
    lines.start(site.lines.start)..lines.get(site.lines.end - 1).end
}

/// The indentation of `site`'s first line (blanks before its sentinel; none in fixed form).
pub fn indentation<'s>(src: &'s str, site: &Site) -> &'s str {
    let first = &site.pieces[0];
    &src[first.start()..first.sentinel().start]
}

/// A whole directive rewritten as `text`: its lines replaced by [`directive_lines`]; the
/// `!` comments written on or between its lines follow it, each on a comment line of its
/// own, so that no comment is lost. None when a preprocessor line stands between its
/// lines (the rewrite would move it out of its conditional).
pub fn rewrite_lines(
    src: &str,
    lines: &Lines,
    site: &Site,
    text: &str,
    eol: &str,
) -> Option<String> {
    let sp = Spelling::of(src, site);
    let indent = indentation(src, site);
    let mut out = directive_lines(sp, indent, text, eol);
    for l in lines.range(site.lines.clone()) {
        let kept = match l.kind {
            LineKind::Preprocessor => return None,
            LineKind::Blank => continue,
            LineKind::Comment => src[l.start..l.end].to_string(),
            LineKind::Directive(_) | LineKind::Code => match &l.comment {
                Some(c) => own_line_comment(indent, &src[c.clone()]),
                None => continue,
            },
        };
        out.push_str(eol);
        out.push_str(&kept);
    }
    Some(out)
}

/// A `!` comment that followed code or a directive, written on a line of its own. One that
/// starts with `!$` (`!$acc …` after a directive) would be a directive or a
/// conditional-compilation line there, so it gets a `! ` before it and stays a comment.
fn own_line_comment(indent: &str, comment: &str) -> String {
    if comment.starts_with("!$") {
        format!("{indent}! {comment}")
    } else {
        format!("{indent}{comment}")
    }
}

/// A whole directive removed: its lines (with their terminator) replaced by the `!`
/// comments written on or between them, each on a comment line of its own. None when a
/// preprocessor line stands between its lines.
pub fn removal(src: &str, lines: &Lines, site: &Site, eol: &str) -> Option<(Range<usize>, String)> {
    let indent = indentation(src, site);
    let mut out = String::new();
    for l in lines.range(site.lines.clone()) {
        let kept = match l.kind {
            LineKind::Preprocessor => return None,
            LineKind::Blank => continue,
            LineKind::Comment => src[l.start..l.end].to_string(),
            LineKind::Directive(_) | LineKind::Code => match &l.comment {
                Some(c) => own_line_comment(indent, &src[c.clone()]),
                None => continue,
            },
        };
        out.push_str(&kept);
        out.push_str(eol);
    }
    let range = lines.start(site.lines.start)..site.end_of_lines(lines);
    Some((range, out))
}

/// The line that stops a build under `-fopenmp` before the OpenACC directive at `line`
/// (1-based) that stays untranslated: a conditional-compilation `include` of a file that
/// cannot exist, whose name says why. Without OpenMP it is a comment (gfortran 12 reads `!$`
/// lines only under `-fopenmp`, not `-fopenacc`), so the original still builds.
pub fn guard_line(sp: Spelling, indent: &str, line: usize) -> String {
    let what = format!("'acc2omp: OpenACC at line {line} not translated'");
    match sp.form {
        Form::Free => format!("{indent}!$ include {what}"),
        Form::Fixed => format!("!$    include {what}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directive_lines_match_the_formatted_heads() {
        let long = "target teams distribute parallel do map(tofrom: alpha(1:n), beta(1:n), gamma(1:n, 1:m)) private(i, j, k) firstprivate(s) reduction(+: total, count, worst) if(n > 100 .and. flag) num_teams(nt) thread_limit(128)";
        let texts = [
            "parallel do",
            "  target data map(to: a) ",
            long,
            "target update to(x) ! 'a, b'",
            "parallel do private(s) firstprivate(\"a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s, t, u, v, w, x, y, z, a, b, c, d, e\")",
            "end target teams distribute parallel do simd",
            "averyveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryverylongword x",
        ];
        let mut lines = 0;
        for form in [Form::Free, Form::Fixed] {
            for comment in ['!', 'c', 'C', '*', 'é'] {
                for upper in [false, true] {
                    let sp = Spelling {
                        form,
                        comment,
                        upper,
                    };
                    for indent in ["", "  ", "\t      "] {
                        for eol in ["\n", "\r\n"] {
                            for text in texts {
                                let got = directive_lines(sp, indent, text, eol);
                                lines += got.matches(eol).count() + 1;
                                assert_eq!(
                                    got,
                                    directive_lines_formatted(sp, indent, text, eol),
                                    "{sp:?} {indent:?} {text}"
                                );
                            }
                        }
                    }
                }
            }
        }
        assert!(
            lines > 2 * 5 * 2 * 3 * 2 * texts.len(),
            "some texts are continued"
        );
    }

    #[test]
    fn runs_of_blanks_outside_strings_become_one() {
        for (text, want) in [
            ("map(to: a,b,", "map(to: a,b,"),
            ("map(to: a,b,                  c)", "map(to: a,b, c)"),
            ("copyin(a, \t \tb)  if(x)", "copyin(a, b) if(x)"),
            ("a\tb", "a\tb"),
            ("bind('a    b')   x", "bind('a    b') x"),
            ("bind(\"it's   so\")  x", "bind(\"it's   so\") x"),
            ("'unterminated   string", "'unterminated   string"),
            ("end  ", "end "),
            ("", ""),
        ] {
            assert_eq!(squeeze_blanks(text), want, "{text:?}");
        }
        assert!(matches!(
            squeeze_blanks("a b, c"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    /// Long generated directives (many clauses and items, strings with blanks and commas,
    /// runs of blanks, long words, other whitespace) at odd indentations: the break points
    /// found once give the lines the old per-line search gave.
    #[test]
    fn directive_lines_match_the_per_line_search_on_long_directives() {
        let words = [
            "copy(a)",
            "present(b(1:n))",
            "private(i,",
            "j,",
            " k)",
            "reduction(+:s)",
            "'a, b c'",
            "\"x ,y\"",
            ",",
            "  ",
            "\t",
            "\u{3000}",
            "é",
            "averyveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryverylongword",
            "map(tofrom: alpha(1:n), beta(1:n))",
            "if(n > 100 .and. flag)",
            "'unterminated, string",
            "x",
        ];
        let mut continued = 0;
        for case in 0..300 {
            let len = [1, 3, 40, 400, 2000][case % 5];
            // Words and blanks in an order that differs from case to case.
            let mut text = String::new();
            for i in 0..len {
                text.push_str(words[(i * 7 + case * 13 + i / 5) % words.len()]);
                if (i + case) % 3 > 0 {
                    text.push(' ');
                }
            }
            let form = if case % 2 == 0 {
                Form::Free
            } else {
                Form::Fixed
            };
            let sp = Spelling {
                form,
                comment: ['!', 'c', 'é'][case % 3],
                upper: case % 7 == 0,
            };
            let indent = " ".repeat([0, 1, 7, 33, 71, 127, 131, 140][case / 5 % 8]);
            let eol = ["\n", "\r\n"][case / 2 % 2];
            let got = directive_lines(sp, &indent, &text, eol);
            continued += usize::from(got.contains(eol));
            assert_eq!(
                got,
                directive_lines_formatted(sp, &indent, &text, eol),
                "{sp:?} {indent:?} {text:?}"
            );
        }
        assert!(continued > 150, "long texts are continued: {continued}");
    }
}
