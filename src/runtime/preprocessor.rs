//! `#include <openacc.h>`, `_OPENACC` tests, and the openacc.h names left behind.

use super::names::is_openacc_name;
use super::text::{acc_tokens, after_eol};
use super::{Cx, in_sites};
use crate::diag::Diagnostic;
use crate::edit::Edit;
use crate::lex::{TokKind, Token};
use crate::rules::id;
use std::ops::Range;

impl Cx<'_> {
    /// OpenACC runtime names that stay after `edits`, in source order: calls left unchanged
    /// (in code, `#define` bodies and directives) and openacc.h types and constants (in code,
    /// `#define` bodies and directives left unchanged; in a translated directive the
    /// translation consumes them).
    /// (`code`: directives the translation turned into code, whose calls it translated;
    /// `acc`: the tokens with `acc_` in them, see `text::acc_tokens`.)
    pub(super) fn leftovers(
        &self,
        toks: &[Token],
        acc: &[usize],
        edits: &[Edit],
        code: &[Range<usize>],
    ) -> Vec<(String, usize)> {
        let src = self.src;
        let mut edited = crate::intervals::Covered::default();
        for r in edits.iter().map(|e| &e.range).chain(code) {
            edited.insert(r.clone());
        }
        let kept = |t: &Token| !edited.contains(t.start());
        // Edits never overlap: sorted by start, their ends are in order too. Sorted when
        // first needed (most files have no name to ask about).
        let translated = std::cell::OnceCell::new();
        let in_translated_site = |at: usize| {
            let k = self.sites.partition_point(|s| s.start <= at);
            k > 0
                && self.sites[k - 1].contains(&at)
                && crate::intervals::overlaps_any(
                    translated.get_or_init(|| {
                        let mut t: Vec<Range<usize>> =
                            self.site_edits.iter().map(|e| e.range.clone()).collect();
                        t.sort_by_key(|r| (r.start, r.end));
                        t
                    }),
                    &self.sites[k - 1],
                )
        };
        let mut out = Vec::new();
        let mut scan = |toks: &[Token], acc: &[usize], start: usize, constants: bool| {
            for &i in acc.iter().filter(|&&i| i >= start) {
                let t = &toks[i];
                let name = t.text(src);
                // Every name looked for is an identifier with `acc_` in it.
                if t.kind != TokKind::Ident {
                    continue;
                }
                // A constant in a translated directive (`P(acc wait(acc_async_noval))`) is
                // translated with it.
                let constant = constants && !in_translated_site(t.start());
                // GCC's builtins need no openacc.h.
                let hit = (constant && is_openacc_name(name))
                    || (self.routine_at(toks, i, start, toks.len()).is_some()
                        && !name.starts_with("__builtin_"));
                if hit && kept(t) {
                    out.push((name.to_string(), t.start()));
                }
            }
        };
        let whole = |toks: &[Token]| acc_tokens(src, toks, 0..toks.len());
        for t in acc.iter().map(|&k| &toks[k]) {
            if t.kind != TokKind::PpLine {
                continue;
            }
            let inner = self.pp.inner(src, t);
            match inner.first().map(|k| k.text(src)) {
                Some("define") => scan(&inner, &whole(&inner), macro_body(src, &inner), true),
                Some("pragma") => scan(&inner, &whole(&inner), 1, true),
                _ => {}
            }
        }
        scan(toks, acc, 0, true);
        out.sort_by_key(|x| x.1);
        out
    }

    /// `#include <openacc.h>`, `_OPENACC` tests, and names from openacc.h left behind
    /// (`left`): while any stay, openacc.h stays too, with omp.h beside it, so that the
    /// file still compiles where openacc.h exists.
    /// (`acc`: the tokens with `acc_` in them, see `text::acc_tokens`.)
    pub(super) fn preprocessor(
        &mut self,
        toks: &[Token],
        acc: &[usize],
        left: &[(String, usize)],
    ) -> Vec<Edit> {
        let src = self.src;
        let keep = self.opts.keep_openacc_guards;
        let mut edits = Vec::new();
        let mut includes: Vec<Include> = Vec::new();
        let mut stack: Vec<Frame> = Vec::new();
        for (ti, tok) in toks.iter().enumerate() {
            if tok.kind != TokKind::PpLine {
                continue;
            }
            let inner = self.pp.head(src, tok);
            let Some(kw) = inner.first().map(|t| t.text(src)) else {
                continue;
            };
            match kw {
                "if" | "ifdef" | "ifndef" => stack.push(Frame {
                    id: ti,
                    branch: 0,
                    acc_tested: false,
                }),
                "elif" | "elifdef" | "elifndef" | "else" => {
                    if let Some(f) = stack.last_mut() {
                        f.branch += 1;
                    }
                }
                "endif" => {
                    stack.pop();
                }
                "include" => {
                    if let Some((header, omp)) = header(src, &inner[1..]) {
                        includes.push(Include {
                            tok: ti,
                            header,
                            omp,
                            cond: stack.iter().map(|f| (f.id, f.branch)).collect(),
                        });
                    }
                    continue;
                }
                _ => continue,
            }
            if !keep && kw != "endif" && kw != "else" {
                edits.extend(self.guard(kw, &inner[1..], stack.last_mut()));
            }
        }
        let mut omp_incs: Vec<(usize, Vec<(usize, u32)>)> = includes
            .iter()
            .filter(|i| i.omp)
            .map(|i| (i.tok, i.cond.clone()))
            .collect();
        let acc_incs: Vec<&Include> = includes.iter().filter(|i| !i.omp).collect();
        for inc in &acc_incs {
            let covered = omp_incs.iter().any(|(t, cond)| {
                inc.cond.starts_with(cond)
                    && (*t < inc.tok
                        || toks[inc.tok + 1..*t]
                            .iter()
                            .all(|x| x.kind == TokKind::PpLine))
            });
            let tok = &toks[inc.tok];
            if !keep && let Some((name, at)) = left.first() {
                let line = self.line_at(*at);
                let others = match left.len() {
                    1 => String::new(),
                    n => format!(" and {} more", n - 1),
                };
                let added = if covered {
                    String::new()
                } else {
                    let ls = self.index.line_start(tok.start());
                    let at_line_start = src[ls..tok.start()].trim_matches([' ', '\t']).is_empty();
                    let pos = if at_line_start { ls } else { tok.start() };
                    edits.push(Edit::insert(pos, format!("#include <omp.h>{}", self.eol)));
                    omp_incs.push((inc.tok, inc.cond.clone()));
                    " (<omp.h> is added before it)".to_string()
                };
                let header = &self.src[inc.header.clone()];
                self.diag(
                    tok.start(),
                    id::OPENACC_INCLUDE_KEPT,
                    format!("{header} is kept{added}: '{name}' (line {line}){others} stay untranslated; remove the include once they are rewritten"),
                );
                continue;
            }
            if keep {
                // The include stays; the omp_* routines emitted need omp.h next to it.
                if self.omp_at.is_some() && !covered {
                    edits.push(Edit::insert(
                        tok.end(),
                        format!("{}#include <omp.h>", self.eol),
                    ));
                    omp_incs.push((inc.tok, inc.cond.clone()));
                }
            } else if covered {
                let ls = self.index.line_start(tok.start());
                let range = if let Some((block, open)) = self.openacc_only_block(toks, inc.tok) {
                    // `#ifdef _OPENACC` / the include / `#endif` go together: an empty
                    // `#ifdef _OPENMP` block would be left otherwise. The rewrite of its
                    // `_OPENACC` goes too.
                    edits.retain(|e| !(open.start <= e.range.start && e.range.end <= open.end));
                    block
                } else if src[ls..tok.start()].trim_matches([' ', '\t']).is_empty() {
                    ls..after_eol(src, tok.end())
                } else {
                    tok.range()
                };
                edits.push(Edit::delete(range));
            } else {
                edits.push(Edit::replace(inc.header.clone(), "<omp.h>"));
                omp_incs.push((inc.tok, inc.cond.clone()));
            }
        }
        if let Some(at) = self.omp_at
            && includes.is_empty()
        {
            // Before the first #include, else before the first line of code; a second
            // include of omp.h (through another header) is harmless.
            let first = toks
                .iter()
                .find(|t| t.kind == TokKind::PpLine && self.pp.directive(src, t) == Some("include"))
                .or(toks.first());
            if let Some(t) = first {
                let ls = self.index.line_start(t.start());
                let at_line_start = src[ls..t.start()].trim_matches([' ', '\t']).is_empty();
                let pos = if at_line_start { ls } else { t.start() };
                edits.push(Edit::insert(
                    pos,
                    omp_include(self.eol, self.opts.keep_openacc_guards),
                ));
                self.diag(
                    at,
                    id::OMP_HEADER_ADDED,
                    "this file now calls OpenMP routines and included neither <omp.h> nor <openacc.h>: '#include <omp.h>' is added".into(),
                );
            }
        }
        if !keep {
            let fate = match (acc_incs.is_empty(), left.is_empty()) {
                (true, _) => {
                    "which this file gets through another header (gone once that header is migrated)"
                }
                (false, true) => "which this file no longer includes",
                (false, false) => "which is kept for it",
            };
            self.leftover_names(toks, acc, fate);
        }
        edits
    }

    /// The lines of a conditional that holds nothing but the include at `toks[inc]` and
    /// tests nothing but `_OPENACC` (`#ifdef _OPENACC`, `#if defined(_OPENACC)`), each line
    /// alone on its lines, and its opening line's bytes; None otherwise.
    fn openacc_only_block(
        &self,
        toks: &[Token],
        inc: usize,
    ) -> Option<(Range<usize>, Range<usize>)> {
        let src = self.src;
        let open = toks.get(inc.checked_sub(1)?)?;
        let close = toks.get(inc + 1)?;
        if open.kind != TokKind::PpLine || close.kind != TokKind::PpLine {
            return None;
        }
        let head = self.pp.head(src, open);
        let words: Vec<&str> = head.iter().map(|t| t.text(src)).collect();
        let tests_openacc = matches!(
            words.as_slice(),
            ["ifdef", "_OPENACC"]
                | ["if", "defined", "_OPENACC"]
                | ["if", "defined", "(", "_OPENACC", ")"]
        );
        let end: Vec<&str> = (self.pp.head(src, close).iter())
            .map(|t| t.text(src))
            .collect();
        let alone = |t: &Token| {
            let ls = self.index.line_start(t.start());
            src[ls..t.start()].trim_matches([' ', '\t']).is_empty()
        };
        (tests_openacc && end == ["endif"] && alone(open) && alone(close)).then(|| {
            (
                self.index.line_start(open.start())..after_eol(src, close.end()),
                open.range(),
            )
        })
    }

    /// Rewrite `_OPENACC` to `_OPENMP` in one conditional directive (see [`guard`]).
    pub(super) fn guard(
        &mut self,
        kw: &str,
        args: &[Token],
        frame: Option<&mut Frame>,
    ) -> Vec<Edit> {
        let (edits, diags) = guard(self.src, kw, args, frame.map(|f| &mut f.acc_tested));
        self.diags.extend(diags);
        edits
    }

    /// Warn once per name about openacc.h constants and types that stay behind (all have
    /// `acc_` in them: only the tokens `acc` are looked at, see `text::acc_tokens`).
    pub(super) fn leftover_names(&mut self, toks: &[Token], acc: &[usize], fate: &str) {
        let src = self.src;
        let mut seen: Vec<(String, usize, usize)> = Vec::new();
        let sites = &self.sites;
        let mut note = |t: &Token, handled: &crate::intervals::Covered| {
            let name = t.text(src);
            if t.kind != TokKind::Ident
                || !is_openacc_name(name)
                || handled.contains(t.start())
                || in_sites(sites, t.start())
            {
                return;
            }
            match seen.iter_mut().find(|(n, _, _)| n == name) {
                Some(s) => s.2 += 1,
                None => seen.push((name.to_string(), t.start(), 1)),
            }
        };
        for t in acc.iter().map(|&k| &toks[k]) {
            if t.kind == TokKind::PpLine {
                let inner = self.pp.inner(src, t);
                if inner.first().is_some_and(|k| k.text(src) == "define") {
                    for x in &inner[1..] {
                        note(x, &self.handled);
                    }
                }
            } else {
                note(t, &self.handled);
            }
        }
        for (name, at, n) in seen {
            let more = if n > 1 {
                format!(" (used {n} times)")
            } else {
                String::new()
            };
            self.diag(
                at,
                id::OPENACC_CONSTANT,
                format!("'{name}' is declared by <openacc.h>, {fate}{more}; replace it by hand"),
            );
        }
    }
}

/// A conditional group being scanned.
pub(super) struct Frame {
    /// Token index of its `#if`.
    pub(super) id: usize,
    pub(super) branch: u32,
    /// A branch so far tested `_OPENACC` (now `_OPENMP`).
    pub(super) acc_tested: bool,
}

pub(super) struct Include {
    pub(super) tok: usize,
    /// The header name, `<openacc.h>` or `"openacc.h"`.
    pub(super) header: Range<usize>,
    pub(super) omp: bool,
    /// The conditional branches around it, outermost first.
    pub(super) cond: Vec<(usize, u32)>,
}

/// The header name of an include line (`args`: tokens after `include`) if it is openacc.h
/// (false) or omp.h (true).
pub(super) fn header(src: &str, args: &[Token]) -> Option<(Range<usize>, bool)> {
    let first = args.first()?;
    let range = if first.kind == TokKind::Literal {
        first.range()
    } else if first.text(src) == "<" {
        let close = args.iter().find(|t| t.text(src) == ">")?;
        first.start()..close.end()
    } else {
        return None;
    };
    match &src[range.clone()] {
        "<openacc.h>" | "\"openacc.h\"" => Some((range, false)),
        "<omp.h>" | "\"omp.h\"" => Some((range, true)),
        _ => None,
    }
}

/// Index of the first token of a `#define` body (`inner`: the line's tokens after `#`).
pub(super) fn macro_body(src: &str, inner: &[Token]) -> usize {
    let Some(name) = inner.get(1) else {
        return inner.len();
    };
    // A function-like macro's parameter list starts right after its name.
    if let Some(open) = inner.get(2)
        && open.text(src) == "("
        && open.start() == name.end()
    {
        if let Some(k) = inner[2..].iter().position(|t| t.text(src) == ")") {
            return 2 + k + 1;
        }
        return inner.len();
    }
    2
}

/// The `#include <omp.h>` a file gets for the OpenMP routines it now calls: only in OpenMP
/// builds, so that the file still builds serially as OpenMP code does.
pub(super) fn omp_include(eol: &str, keep_guards: bool) -> String {
    format!(
        "{}{eol}#include <omp.h>{eol}#endif{eol}",
        openmp_builds(keep_guards)
    )
}

/// The condition of code that needs an OpenMP runtime. With `--keep-openacc-guards` the
/// `_OPENACC` branches, now calling OpenMP routines, build with an OpenACC compiler too (GCC's
/// `-fopenacc` links libgomp, which has them): what they call is defined there as well.
pub(super) fn openmp_builds(keep_guards: bool) -> &'static str {
    if keep_guards {
        "#if defined(_OPENMP) || defined(_OPENACC)"
    } else {
        "#ifdef _OPENMP"
    }
}

/// Rewrite `_OPENACC` to `_OPENMP` in one conditional directive (`kw`: `if`, `ifdef`, …;
/// `args`: the tokens after it) of C or of a preprocessed Fortran file. `acc_tested`: the
/// conditional's flag "an earlier branch tested `_OPENACC`", set here.
pub(crate) fn guard(
    src: &str,
    kw: &str,
    args: &[Token],
    acc_tested: Option<&mut bool>,
) -> (Vec<Edit>, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let is = |t: &Token, w: &str| t.kind == TokKind::Ident && t.text(src) == w;
    let acc: Vec<usize> = (0..args.len())
        .filter(|&k| is(&args[k], "_OPENACC"))
        .collect();
    let omp = args.iter().any(|t| is(t, "_OPENMP"));
    let Some(&first) = acc.first() else {
        if omp && kw.starts_with("elif") && acc_tested.is_some_and(|t| *t) {
            diags.push(Diagnostic::new(
                args[0].start(),
                id::OPENACC_GUARD,
                "an earlier branch of this conditional tested _OPENACC and now tests _OPENMP; check which branch OpenMP builds should take",
            ));
        }
        return (Vec::new(), diags);
    };
    if omp {
        diags.push(Diagnostic::new(
            args[first].start(),
            id::OPENACC_GUARD,
            "this condition tests both _OPENACC and _OPENMP; rewriting _OPENACC would make it test _OPENMP twice, so it is left unchanged: rewrite it by hand",
        ));
        return (Vec::new(), diags);
    }
    if let Some(t) = acc_tested {
        *t = true;
    }
    let mut edits = Vec::new();
    for &k in &acc {
        let defined = (k >= 1 && is(&args[k - 1], "defined"))
            || (k >= 2 && args[k - 1].text(src) == "(" && is(&args[k - 2], "defined"));
        let compares = |t: Option<&Token>| {
            t.is_some_and(|t| {
                matches!(
                    t.text(src),
                    "<" | ">" | "<=" | ">=" | "==" | "!=" | "+" | "-" | "*" | "/" | "%"
                )
            })
        };
        let value = !kw.ends_with("def")
            && !defined
            && (compares(args.get(k + 1)) || compares(k.checked_sub(1).map(|j| &args[j])));
        if value {
            diags.push(Diagnostic::new(
                args[k].start(),
                id::OPENACC_GUARD,
                "'_OPENACC' becomes '_OPENMP', whose value is an OpenMP version date (201811 is OpenMP 5.0; GCC 12 defines 201511), not an OpenACC one; check this comparison",
            ));
        }
        edits.push(Edit::replace(args[k].range(), "_OPENMP"));
    }
    (edits, diags)
}

#[cfg(test)]
mod tests {
    use crate::engine::migrate_text;
    use crate::options::Options;

    /// `--keep-openacc-guards` puts omp.h after the include line: after a comment that
    /// continues it onto later lines (`/* ... */`, `// ... \`), so that neither our include
    /// goes into the comment nor a line the comment hides comes out of it. Without the option
    /// openacc.h's header name becomes omp.h's in place.
    #[test]
    fn omp_h_goes_after_a_comment_that_spans_lines() {
        let call = "int n(void) { return acc_get_num_devices(acc_device_not_host); }\n";
        let translated = "int n(void) { return omp_get_num_devices(); }\n";
        for comment in [
            " /* start\n#define X 1 */",
            " // c \\\nint hidden = ;",
            " /* a */ /* b\n c */",
        ] {
            let src = format!("#include <openacc.h>{comment}\n{call}");
            let keep = Options {
                keep_openacc_guards: true,
                ..Options::default()
            };
            assert_eq!(
                migrate_text(&src, &keep).text,
                format!("#include <openacc.h>{comment}\n#include <omp.h>\n{translated}"),
            );
            assert_eq!(
                migrate_text(&src, &Options::default()).text,
                format!("#include <omp.h>{comment}\n{translated}"),
            );
        }
    }
}
