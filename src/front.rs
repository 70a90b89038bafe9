//! A language's front end: what the engine asks of the language a file is written in. It
//! reads the file (its directive sites, each parsed, and what each applies to), answers the
//! decisions' questions about the code ([`Syntax`]), computes the semantic facts, runs the
//! language's runtime-API pass, and names the language's expressions ([`Language`]) and
//! the file's printer ([`Printer`]). C and C++: `crate::c::front::CFront`. docs/extending.md
//! ("Adding a language") walks through what a new one implements.

use crate::diag::Diagnostic;
use crate::directive::Directive;
use crate::edit::Edit;
use crate::facts::FileFacts;
use crate::lang::Language;
use crate::options::Options;
use crate::print::Printer;
use crate::region::Stmt;
use crate::runtime::RuntimeEdits;
use crate::scan::Site;
use crate::semantic::SemanticConfig;
use crate::syntax::Syntax;
use crate::unit::Unit;
use std::path::Path;

/// One file as its front end read it.
pub struct Read<'a> {
    /// The directive sites, in file order.
    pub sites: Vec<Site>,
    /// Each site's directive (None: it did not parse, or cannot be translated; its reason is
    /// in `diagnostics`).
    pub dirs: Vec<Option<Directive>>,
    /// What each parsed directive applies to: its statement (or region up to its end
    /// directive), the declaration after a `routine`; None where nothing follows.
    pub stmts: Vec<Option<Stmt>>,
    /// Problems found reading the sites (parse errors, directives a macro writes).
    pub diagnostics: Vec<Diagnostic>,
    /// The code around the directives, as the decisions ask about it.
    pub syntax: &'a dyn Syntax,
    /// The file's other passes.
    pub passes: &'a dyn Passes,
    /// How plans are written in this file (made per file: a language whose layout varies
    /// by file, as Fortran's source form and line limits do, carries it here).
    pub printer: &'a dyn Printer,
}

/// What the front end does with one file once it is read.
pub trait Passes {
    /// Facts about the variables of every directive of `u` (libclang's or syntactic).
    fn facts(&self, path: Option<&Path>, u: &Unit, sem: &SemanticConfig) -> FileFacts;

    /// Edits and diagnostics for the runtime API (`acc_*` calls, `openacc.h`, `_OPENACC`),
    /// given the directive translation's edits (`site_edits`: what they insert decides the
    /// helpers and headers the file needs) and the compute constructs left OpenACC (`kept`:
    /// their calls stay OpenACC too).
    fn runtime(
        &self,
        u: &Unit,
        opts: &Options,
        site_edits: &mut [Edit],
        kept: &[usize],
    ) -> RuntimeEdits;
}

/// What the shared phases return to the front end (see [`FrontEnd::read`]).
pub type Rest<'r, T> = dyn FnMut(Read<'_>) -> T + 'r;

/// A language's front end.
pub trait FrontEnd: Sync {
    /// How the language's expressions are read and written.
    fn language(&self) -> &'static dyn Language;

    /// Read `src` and run `rest` (the shared phases) on what was read: the front end keeps
    /// what it made (tokens, statements) alive until `rest` returns, then frees it.
    fn read(
        &self,
        src: &str,
        opts: &Options,
        rest: &mut Rest<'_, crate::outcome::Translated>,
    ) -> crate::outcome::Translated;

    /// How many directive sites `src` has (for a message about a file that cannot be read).
    fn site_count(&self, src: &str) -> usize;
}
