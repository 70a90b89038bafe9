//! The Fortran front end: what a Fortran file holds, as data, for the shared translation.
//!
//! Layers, each a function of the ones before it (pure data in, data out):
//! - [`form`]: free or fixed form and whether cpp runs, from the file name;
//! - [`lines`]: each physical line classified (source, comment, preprocessor, directive),
//!   with its label, continuation mark, statement text, trailing `&`, comment and the text
//!   past column 72;
//! - [`lex`]: tokens and statements (continuations joined, `;` split, labels);
//! - [`sites`]: the directive sites (`!$acc`, `!$omp`, `!$` lines), each with its lines and
//!   its joined text mapped back to file offsets;
//! - [`stmt`]: what each statement is (a `do`, an `end if`, a declaration, …);
//! - [`structure`]: program units, constructs, `do` loops and the OpenACC regions (what
//!   each directive applies to, where each ends);
//! - [`facts`]: declarations and implicit typing per program unit, and the variables a
//!   range of statements references and assigns.
//!
//! [`Front::new`] runs them all on one file. `docs/fortran-front-end.md` maps these types
//! onto the C front end's (`Site`, `Stmt`, `ForLoop`, facts).

pub mod form;
pub mod lex;
pub mod lines;
pub mod sites;
pub mod stmt;
pub mod structure;

/// A problem the front end found, at a byte offset of the file: a directive continued with
/// nothing to continue it, an `end` directive with no construct to end, a loop directive
/// with no `do` loop after it, a construct left open, …
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub offset: usize,
    pub message: String,
}

use crate::directive::{Dialect, Directive, ParseError, directive_name_in, parse_directive_all_in};
use crate::rules::Tables;

/// Everything the front end finds in one file.
#[derive(Debug, Clone)]
pub struct Front {
    pub kind: form::SourceKind,
    pub lines: lines::Lines,
    pub lexed: lex::Lexed,
    pub sites: Vec<sites::Site>,
    /// Per site: the `!$acc` directive parsed from [`sites::Site::text`] (spans are offsets
    /// in that text: map them with [`sites::Site::file_range`]); None for other sentinels.
    pub directives: Vec<Option<Result<Directive, Vec<ParseError>>>>,
    pub structure: structure::Structure,
    /// Continuation and structure problems, in file order (directive parse errors are in
    /// `directives`).
    pub problems: Vec<Problem>,
}

impl Front {
    pub fn new(src: &str, kind: form::SourceKind, tables: &Tables) -> Front {
        let lines = lines::scan(src, kind);
        let lexed = lex::lex(src, &lines);
        let (sites, mut problems) = sites::find_sites(src, &lines);
        let directives: Vec<_> = sites
            .iter()
            .map(|s| {
                (s.sentinel == lines::Sentinel::Acc).then(|| {
                    parse_directive_all_in(&s.text, 0..s.text.len(), tables, Dialect::Fortran)
                })
            })
            .collect();
        let infos: Vec<_> = sites
            .iter()
            .zip(&directives)
            .map(|(s, d)| structure::SiteInfo {
                name: d.as_ref().and_then(|_| {
                    directive_name_in(&s.text, 0..s.text.len(), tables, Dialect::Fortran)
                }),
                nest: d.as_ref().and_then(|d| d.as_ref().ok()).map_or(1, nest_of),
            })
            .collect();
        let structure = structure::Structure::new(src, &lexed, &sites, &infos);
        problems.extend(structure.problems.iter().cloned());
        problems.sort_by_key(|p| p.offset);
        Front {
            kind,
            lines,
            lexed,
            sites,
            directives,
            structure,
            problems,
        }
    }
}

/// How many loops a loop directive applies to: `collapse(n)` with a literal `n`, or the
/// number of `tile` sizes; 1 otherwise.
pub fn nest_of(d: &Directive) -> usize {
    let collapse = d
        .find("collapse")
        .and_then(|c| c.items().next())
        .and_then(|i| i.text.trim().parse::<usize>().ok());
    let tile = d.find("tile").map(|c| c.items().count());
    collapse.into_iter().chain(tile).max().unwrap_or(1).max(1)
}
