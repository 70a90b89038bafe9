//! C and C++: the language's parts of the pipeline that are not shared. Its front end
//! (`front`: reading a file, its facts and runtime-API passes), its expressions (`lang`), its
//! answers about the code around directives (`syntax`) and its printer (`print`); the front
//! end uses the modules `lex`, `scan`, `structure`, `semantic`, `attachments`, `dependence`
//! and `runtime` (docs/extending.md).

pub mod front;
pub mod lang;
pub mod print;
pub mod syntax;
