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
