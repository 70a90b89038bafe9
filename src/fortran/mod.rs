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
//! - [`facts`]: declarations (type, rank, attributes), derived types, implicit typing and
//!   `use` per program unit, looked up as Fortran scopes names;
//! - [`calls`]: the procedures a range of statements calls;
//! - [`flang`]: flang-22's symbols, when it is installed: what `use` brings from modules
//!   of other files;
//! - [`lang`]: Fortran expressions as the shared decisions read and build them;
//! - [`clause_types`]: clause arguments checked against the declarations (a scalar
//!   integer or logical where one is needed, a variable where a data clause needs one);
//! - [`common_blocks`]: a common block in a `map`, `to` or `from` clause as its members;
//! - [`declare`]: where a `declare`'s OpenMP goes in a unit (after its specification part,
//!   at its exits, at each `allocate` and `deallocate` of an allocatable module variable);
//! - [`members`]: what a region does with the components of a derived-type variable;
//! - [`nested_simd`]: `safelen` on a `simd` loop nested in a worksharing loop (a flang-22
//!   limit);
//! - [`omp_target`]: the OpenMP target regions the file already has;
//! - [`optional_args`]: OPTIONAL dummy arguments in data clauses (a flang-22 limit);
//! - [`construct_name`]: how a Fortran directive spells an OpenMP construct;
//! - [`print`]: OpenMP directive lines in the file's spelling and line limits, end
//!   directives, the guard line before a directive left as OpenACC;
//! - [`runtime`]: the runtime API (`use openacc`, `acc_*` calls, `_OPENACC`) as edits.
//!
//! [`Front::new`] runs them all on one file. `docs/fortran-front-end.md` maps these types
//! onto the C front end's (`Site`, `Stmt`, `ForLoop`, facts).

pub mod calls;
pub mod clause_types;
pub mod common_blocks;
pub mod component_update;
pub mod construct_name;
pub mod declare;
pub mod deep_maps;
pub mod dependence;
pub mod do_concurrent;
pub mod facts;
pub mod flang;
pub mod form;
pub mod front;
pub mod lang;
pub mod lex;
pub mod lines;
pub mod members;
pub mod nested_simd;
pub mod omp_target;
pub mod optional_args;
pub mod print;
pub mod queues;
pub mod runtime;
pub mod simd_collapse;
pub mod site_facts;
pub mod sites;
pub mod stmt;
pub mod structure;
pub mod syntax;
pub mod target_split;

/// A problem the front end found, at a byte offset of the file: a directive continued with
/// nothing to continue it, an `end` directive with no construct to end, a loop directive
/// with no `do` loop after it, a construct left open, …
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub offset: usize,
    pub message: String,
    /// Another place the message is about (the statement that breaks a loop nest).
    pub related: Option<usize>,
    /// The rule its diagnostic is reported under when it is more than "not translated" (a
    /// loop nest shorter than its `collapse` or `tile`: `collapse-depth`).
    pub rule: Option<crate::rules::RuleId>,
}

/// Whether front-end site `s` is an OpenACC compute construct (`parallel`, `serial`,
/// `kernels`, or their combined loop forms), by its first word.
pub fn is_compute_site(s: &sites::Site) -> bool {
    s.sentinel == lines::Sentinel::Acc
        && s.text
            .split(|c: char| !c.is_ascii_alphabetic())
            .find(|w| !w.is_empty())
            .is_some_and(|w| crate::directive::compute_kind_of(&w.to_ascii_lowercase()).is_some())
}

/// Everything the front end finds in one file.
#[derive(Debug, Clone)]
pub struct Front {
    pub kind: form::SourceKind,
    pub lines: lines::Lines,
    pub lexed: lex::Lexed,
    pub sites: Vec<sites::Site>,
    pub structure: structure::Structure,
    pub facts: facts::Facts,
    /// Continuation and structure problems, in file order.
    pub problems: Vec<Problem>,
}

impl Front {
    /// Run the front end on `src`. `info` says what each site is (its directive name and
    /// loop nest depth): the directive parser's business, above this layer
    /// (`crate::directive::fortran_site_info`).
    pub fn new(
        src: &str,
        kind: form::SourceKind,
        info: impl FnMut(&sites::Site) -> structure::SiteInfo,
    ) -> Front {
        Front::with_sites(src, kind, |sites| sites.iter().map(info).collect())
    }

    /// As [`Front::new`], `infos` saying what every site is at once (the sites, in file
    /// order, give it their number before it keeps anything of them).
    pub fn with_sites(
        src: &str,
        kind: form::SourceKind,
        infos: impl FnOnce(&[sites::Site]) -> Vec<structure::SiteInfo>,
    ) -> Front {
        let lines = lines::scan(src, kind);
        let lexed = lex::lex(src, &lines);
        let (sites, mut problems) = sites::find_sites(src, &lines);
        let infos = infos(&sites);
        let structure = structure::Structure::new(src, &lexed, &sites, &infos);
        problems.extend(structure.problems.iter().cloned());
        problems.sort_by_key(|p| p.offset);
        let facts = facts::Facts::new(src, &lexed, &structure);
        Front {
            kind,
            lines,
            lexed,
            sites,
            structure,
            facts,
            problems,
        }
    }
}
