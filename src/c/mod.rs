//! C and C++: the language's parts of the pipeline that are not shared. Its expressions
//! (`lang`), its answers about the code around directives (`syntax`) and its printer
//! (`print`); its lexer, sites, statements and facts are the modules `lex`, `scan`,
//! `structure`, `semantic`, `attachments` and `dependence`, and its runtime API pass is
//! `runtime` (docs/architecture.md).

pub mod front;
pub mod lang;
pub mod print;
pub mod syntax;
