//! acc2omp: migrate OpenACC C/C++ sources to OpenMP offload with minimal, exact edits.

pub mod attachments;
pub mod cli;
pub mod config;
pub mod diag;
pub mod directive;
pub mod edit;
pub mod emit;
pub mod encoding;
pub mod engine;
pub mod facts;
pub mod fix;
pub mod hash;
pub mod intervals;
pub mod lex;
pub mod output;
pub mod overrides;
pub mod par;
pub mod profile;
pub mod reduction_types;
pub mod report;
pub mod rewrite;
pub mod rules;
pub mod runtime;
pub mod scan;
pub mod select;
pub mod semantic;
pub mod source;
pub mod structure;
pub mod suppress;
pub mod translate;
pub mod unit;
pub mod validate;
pub mod walk;
pub mod write;

pub use engine::{FileOutcome, Outcome, migrate_bytes, migrate_source, migrate_text};
pub use translate::Options;
