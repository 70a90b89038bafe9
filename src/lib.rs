//! acc2omp: migrate OpenACC C/C++ sources to OpenMP offload with minimal, exact edits.
//!
//! The library's API: [`migrate_text`], [`migrate_source`], [`migrate_bytes`] with their
//! [`Options`] and results, and the modules the command line, the tests and the benchmarks
//! use; the rest of the crate is `pub(crate)`, so that the dead-code check sees it.

pub(crate) mod alternatives;
pub(crate) mod attachments;
pub(crate) mod c;
pub(crate) mod cache;
pub mod cli;
pub(crate) mod config;
pub(crate) mod dependence;
pub mod diag;
pub(crate) mod directive;
pub(crate) mod edit;
pub(crate) mod emit;
pub mod encoding;
pub(crate) mod engine;
pub(crate) mod exclude;
pub(crate) mod facts;
pub(crate) mod file;
pub(crate) mod fix;
pub mod fortran;
pub(crate) mod front;
pub(crate) mod hash;
pub(crate) mod ignores;
pub(crate) mod intent;
pub(crate) mod intervals;
pub(crate) mod lang;
pub mod lex;
pub mod memory;
pub mod options;
pub(crate) mod outcome;
pub(crate) mod output;
pub(crate) mod overrides;
pub(crate) mod par;
pub(crate) mod print;
pub mod profile;
pub(crate) mod reduction_types;
pub(crate) mod region;
pub(crate) mod report;
pub mod rules;
pub mod runtime;
pub mod scan;
pub(crate) mod select;
pub mod semantic;
pub(crate) mod source;
pub(crate) mod structure;
pub(crate) mod suppress;
pub(crate) mod syntax;
pub(crate) mod translate;
pub(crate) mod unit;
pub(crate) mod untranslated;
pub(crate) mod validate;
pub(crate) mod walk;
pub mod write;

/// The directive parser on Fortran sites (the Fortran front end's tests and scan example).
pub use directive::{Dialect, fortran_site_info, parse_directive_all_in};
pub use engine::{FileOutcome, migrate_bytes, migrate_source, migrate_text};
pub use options::Options;
pub use outcome::Outcome;
