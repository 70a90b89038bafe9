//! The C and C++ front end (see [`FrontEnd`]): the file's tokens (`crate::lex`), its
//! directive sites (`crate::scan`), each parsed, the statement each applies to
//! (`crate::structure`), its answers about the code (`crate::c::syntax`), the semantic facts
//! (`crate::semantic`) and the runtime-API pass (`crate::runtime`).

use crate::c::syntax::{Macro, macro_names};
use crate::diag::Diagnostic;
use crate::directive::{directive_name, parse_directive_all, resolve_device_type};
use crate::edit::Edit;
use crate::facts::FileFacts;
use crate::front::{FrontEnd, Passes, Read, Rest};
use crate::hash::HashMap;
use crate::lang::Language;
use crate::lex::{PpLines, TokKind, Token, lex, lex_range};
use crate::options::Options;
use crate::outcome::Translated;
use crate::region::Stmt;
use crate::rules::id;
use crate::runtime::RuntimeEdits;
use crate::scan::{Site, find_sites};
use crate::semantic::SemanticConfig;
use crate::structure::Structure;
use crate::unit::Unit;
use std::path::Path;

/// The C and C++ front end.
pub struct CFront;

impl FrontEnd for CFront {
    fn language(&self) -> &'static dyn Language {
        &super::lang::C
    }

    fn read(&self, src: &str, opts: &Options, rest: &mut Rest<'_, Translated>) -> Translated {
        let tables = &*opts.tables;
        let toks = lex(src);
        crate::memory::check();
        let pp = PpLines::new(src, &toks);
        let sites = find_sites(src, &toks);
        crate::memory::check();
        let (dirs, diagnostics) = parse(src, &toks, &pp, &sites, opts);
        // Token extent of each site and whether it takes a statement. A construct left
        // unchanged for an error still takes its statement, so that the statements around it
        // keep theirs.
        let extents: Vec<Option<(usize, usize, bool)>> = sites
            .iter()
            .zip(&dirs)
            .map(|(s, d)| {
                let last = s.token()?;
                let first = s.first_token().unwrap_or(last);
                let name = match d {
                    Some(d) => Some(d.name.to_string()),
                    None if s.computed => None,
                    None => directive_name(s.unescaped.as_deref().unwrap_or(src), s.text(), tables),
                };
                let stmt = name.is_some_and(|n| tables.directive(&n).is_some_and(|r| r.stmt));
                Some((first, last, stmt))
            })
            .collect();
        let structure = Structure::new(src, &toks, &extents);
        crate::memory::check();
        let mut stmts: Vec<Option<Stmt>> = vec![None; sites.len()];
        for (i, ext) in extents.iter().enumerate() {
            let (Some((first, last, takes)), Some(d)) = (ext, &dirs[i]) else {
                continue;
            };
            // Inside parentheses or brackets nothing is a directive's statement: the one read
            // after it would run on past the closing bracket (the placement check says why).
            if structure.bracket_around(*first).is_some() {
                continue;
            }
            if *takes {
                stmts[i] = structure.stmt_after(*last);
            } else if d.name == "routine" && d.arg.is_none() {
                // The declaration after it.
                let first = structure.skip_pp(last + 1);
                if let Some(end) = structure.decl_end(first) {
                    stmts[i] = Some(Stmt::new(
                        first..end,
                        toks[first].start()..toks[end - 1].end(),
                        None,
                        None,
                    ));
                }
            }
        }
        // Read only to find the statements: not held for the rest of the translation.
        drop(extents);
        let syntax = super::syntax::CSyntax::new(&structure, &pp);
        let passes = CPasses {
            structure: &structure,
            pp: &pp,
        };
        let out = rest(Read {
            sites,
            dirs,
            stmts,
            diagnostics,
            syntax: &syntax,
            passes: &passes,
            printer: &super::print::CPrinter,
        });
        // Freeing millions of small allocations takes a while: done by the pool while the
        // output is built.
        let caches = syntax.into_caches();
        drop(structure);
        rayon::spawn(move || drop((caches, pp, toks)));
        out
    }

    fn site_count(&self, src: &str) -> usize {
        find_sites(src, &lex(src)).len()
    }
}

/// Each site parsed on its own (in parallel for many sites), with the diagnostics of those
/// that cannot be, in order: a `_Pragma` the preprocessor completes, a directive a macro
/// changes, a parse error.
fn parse(
    src: &str,
    toks: &[Token],
    pp: &PpLines,
    sites: &[Site],
    opts: &Options,
) -> (Vec<Option<crate::directive::Directive>>, Vec<Diagnostic>) {
    let tables = &*opts.tables;
    let macros = macro_names(src, toks, pp);
    let parsed = crate::par::map(sites, |s| {
        let text = s.unescaped.as_deref().unwrap_or(src);
        if s.computed {
            let d = Diagnostic::new(
                s.span().start,
                id::NOT_TRANSLATED,
                "this _Pragma's text is completed by the preprocessor; translate the macro's uses by hand",
            );
            return (None, vec![d]);
        }
        if let Some(d) = macro_in_directive(text, s, &macros) {
            return (None, vec![d]);
        }
        match parse_directive_all(text, s.text(), tables) {
            Ok(mut d) => {
                let mut diags = Vec::new();
                if let Some((at, note)) =
                    resolve_device_type(&mut d, text, opts.device_type.as_deref())
                {
                    let at = if s.unescaped.is_some() {
                        s.span().start
                    } else {
                        at
                    };
                    diags.push(Diagnostic::new(at, id::DEVICE_TYPE, note));
                }
                (Some(d), diags)
            }
            Err(errs) => {
                let diags = errs
                    .into_iter()
                    .map(|e| {
                        let offset = if s.unescaped.is_some() {
                            s.span().start
                        } else {
                            e.offset
                        };
                        Diagnostic::new(
                            offset,
                            e.rule,
                            format!("{}; the directive is left unchanged", e.message),
                        )
                    })
                    .collect();
                (None, diags)
            }
        }
    });
    let mut diagnostics = Vec::new();
    // Collected in place, in the results' memory: a large file's directives are not held
    // twice while they move.
    let mut dirs: Vec<_> = parsed
        .into_iter()
        .map(|(d, diags)| {
            diagnostics.extend(diags);
            d
        })
        .collect();
    dirs.shrink_to_fit();
    (dirs, diagnostics)
}

/// The passes of one C or C++ file, on its statements and preprocessor lines.
struct CPasses<'a> {
    structure: &'a Structure<'a>,
    pp: &'a PpLines,
}

impl Passes for CPasses<'_> {
    fn facts(&self, path: Option<&Path>, u: &Unit, sem: &SemanticConfig) -> FileFacts {
        crate::semantic::analyze(path, u, self.structure, sem)
    }

    fn runtime(
        &self,
        u: &Unit,
        opts: &Options,
        site_edits: &mut [Edit],
        kept: &[usize],
    ) -> RuntimeEdits {
        crate::runtime::runtime_edits(u, self.structure, self.pp, opts, site_edits, kept)
    }
}

/// A word of the directive outside parentheses (its name, a clause name) that a macro
/// defined earlier in the file replaces: OpenACC directives are macro-expanded.
pub(crate) fn macro_in_directive(
    text: &str,
    site: &Site,
    macros: &HashMap<String, Macro>,
) -> Option<Diagnostic> {
    if macros.is_empty() {
        return None;
    }
    let mut depth = 0usize;
    let toks = lex_range(text, site.text(), false);
    for (k, t) in toks.iter().enumerate() {
        match (t.kind, t.text(text)) {
            (TokKind::Punct, "(" | "[" | "{") => depth += 1,
            (TokKind::Punct, ")" | "]" | "}") => depth = depth.saturating_sub(1),
            (TokKind::Ident, w) if depth == 0 => {
                let called = toks.get(k + 1).is_some_and(|n| n.text(text) == "(");
                if macros
                    .get(w)
                    .is_some_and(|m| m.at < site.span().start && (called || !m.function_like))
                {
                    let at = if site.unescaped.is_some() {
                        site.span().start
                    } else {
                        t.start()
                    };
                    return Some(Diagnostic::new(
                        at,
                        id::MACRO_IN_DIRECTIVE,
                        format!(
                            "'{w}' is a macro, and OpenACC directives are macro-expanded: the directive means what its expansion says; write it out (the directive is left unchanged)"
                        ),
                    ));
                }
            }
            _ => {}
        }
    }
    None
}
