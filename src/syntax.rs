//! What a language's front end answers about the code around one file's directives, for the
//! shared checks and decisions: statements and loops, blocks and functions, declarations,
//! the updates of a variable, calls, and the OpenMP directives already in the file. The
//! decisions hold positions (indices of the front end's tokens, as in
//! [`Stmt`](crate::region::Stmt), and byte offsets) and pass them back here; they never read a
//! token's text. C and C++: `crate::c::syntax::CSyntax`.

use crate::attachments::Attachments;
use crate::dependence::Nest;
use crate::directive::Directive;
use crate::facts::{HeaderMacro, RegionVar};
pub use crate::lang::Access;
use crate::region::{ForLoop, Stmt};
use crate::scan::Site;
use crate::source::LineIndex;
use std::ops::Range;

/// What a region does with a structure (see [`Syntax::member_uses`]).
#[derive(Debug, Default)]
pub struct MemberUses {
    /// The members it uses, in order of first use.
    pub members: Vec<String>,
    /// The members it assigns.
    pub written: Vec<String>,
    /// Whether it uses the structure itself (passes it, takes its address, indexes the
    /// pointer).
    pub whole: bool,
    /// Whether one of those uses may assign it (Fortran: passed to a procedure, assigned
    /// whole).
    pub whole_written: bool,
}

/// An OpenMP directive already in the file (acc2omp's own translation of `async` and
/// `wait`, read back so that a run on its output decides as the first did).
#[derive(Debug, PartialEq, Eq)]
pub struct OmpRead {
    /// Its first token and byte.
    pub tok: usize,
    pub at: usize,
    /// The first word of its name (`taskwait`, `target`, `task`).
    pub name: String,
    pub nowait: bool,
    /// Its `depend` clauses: the dependence type (`in`, `inout`; `iterator` for one over an
    /// iterator) and the items as written.
    pub depends: Vec<(String, Vec<String>)>,
}

/// The exits of the block that holds a block-scope `declare` (see [`Syntax::scope_exits`]).
#[derive(Debug, PartialEq, Eq)]
pub struct Exits {
    /// Offsets of the `return` statements between the directive and the block's end.
    pub returns: Vec<usize>,
    /// Offset of the token that closes the block, unless the block ends with a `return`.
    pub end: Option<usize>,
}

/// A call in the code (see [`Syntax::calls_in`]).
#[derive(Debug)]
pub struct Call {
    /// The token of the called name.
    pub tok: usize,
    pub name: String,
    /// A member function (`x.f(…)`, `p->f(…)`).
    pub member: bool,
    /// Its declaration may lie where the file cannot see it, with a `routine` directive of
    /// its own (C: a header; Fortran: a module of another file the caller uses). A Fortran
    /// procedure otherwise has its `routine` in the caller's sight, or none.
    pub hidden: bool,
}

/// What a directive stands in for where a statement must be (see [`Syntax::position`]).
#[derive(Debug, PartialEq, Eq)]
pub enum Position {
    /// The statement of the directive at this site.
    Site(usize),
    /// The body of this statement (`if`, `else`, `while`, `for`, `do`, `switch`).
    Body(String),
    /// The statement of a `case` label.
    Case,
    /// The statement of a `default:` label.
    Default,
    /// The statement of this label.
    Label(String),
    /// Inside parentheses or brackets (a parameter list, a call's arguments, a subscript),
    /// where no directive may stand: the opening bracket and the name before it.
    Bracketed(char, Option<String>),
}

/// A jump in the code (see [`Syntax::jumps`]).
#[derive(Debug)]
pub enum Jump {
    /// A `goto` at token `from` to the label `label` at token `to`.
    Goto {
        from: usize,
        to: usize,
        label: String,
    },
    /// A `case` or `default` label (`word`) at token `label` of the `switch` at token
    /// `switch`.
    Case {
        switch: usize,
        label: usize,
        word: String,
    },
}

/// An `if` construct (see [`Syntax::if_construct`]).
#[derive(Debug)]
pub struct IfConstruct {
    /// Its branches in order: the tokens of each condition as written (None for the final
    /// `else`), and the statements directly in the branch, by first token.
    pub branches: Vec<(Option<Vec<String>>, Vec<usize>)>,
    /// One past its last token.
    pub end: usize,
}

/// The code around one file's directives, as its language reads it.
pub trait Syntax: Sync {
    /// Byte range of token `t`.
    fn token_range(&self, t: usize) -> Range<usize>;

    /// How many tokens the file has.
    fn token_count(&self) -> usize;

    /// The token that starts at byte `at`, if one does.
    fn token_starting_at(&self, at: usize) -> Option<usize>;

    /// The texts of the tokens of statement `stmt`; None where the preprocessor decides what
    /// it is (a preprocessor line in it, or a macro the file defines).
    fn statement_words(&self, stmt: &Range<usize>) -> Option<Vec<&str>>;

    /// Whether token `t` is a preprocessor line (`#if`, `#pragma`, …).
    fn is_preprocessor_line(&self, t: usize) -> bool;

    /// Token `t`, or the first after it that is not a preprocessor line (a site is not
    /// skipped).
    fn skip_preprocessor(&self, t: usize) -> usize;

    /// One past the last token of the statement that starts at token `t`.
    fn stmt_end(&self, t: usize) -> Option<usize>;

    /// The statements directly in statement `stmt` (a compound statement's, or the
    /// statement itself), by their first token.
    fn statements_in(&self, stmt: &Range<usize>) -> Vec<usize>;

    /// The statements nested in the statement at `s` that is not a loop (the branches of an
    /// `if`, the body of a `while`), and whether each runs repeatedly in it.
    fn nested_statements(&self, s: usize) -> Vec<(usize, bool)>;

    /// Whether the code at `bytes` may assign variable `name` where the syntactic facts do
    /// not count a write: in C and C++ always (a reference, a pointer, a macro's body, a call
    /// taking its address: only libclang's facts see them); in Fortran through an
    /// `associate` name or as a function's argument.
    fn may_write_unseen(&self, _bytes: Range<usize>, _name: &str) -> bool {
        true
    }

    /// Whether the statement at `s` works on whole arrays or sections (Fortran's array
    /// assignments, `where`, `forall`): a loop no directive can name. None in C.
    fn array_statement(&self, _s: usize) -> bool {
        false
    }

    /// Whether statement `stmt` is a compound statement (a block).
    fn is_block(&self, stmt: &Range<usize>) -> bool;

    /// The `if` construct whose statement starts at token `t` (C: an `if` statement with its
    /// `else`; Fortran: `if (…) then` through its `end if`); None where the preprocessor
    /// decides a condition (a preprocessor line or a macro of the file in it).
    fn if_construct(&self, _t: usize) -> Option<IfConstruct> {
        None
    }

    /// Whether `name` may share its storage with another variable of the program (Fortran:
    /// a COMMON or EQUIVALENCE name of the file), whose device copy another file's
    /// directives may map.
    fn shared_storage(&self, _name: &str) -> bool {
        false
    }

    /// The loop whose statement starts at token `t` (after directives stacked before it).
    fn loop_at(&self, t: usize) -> Option<ForLoop>;

    /// The directive site whose first token is at `t` (after preprocessor lines).
    fn site_at(&self, t: usize) -> Option<usize>;

    /// How many loops are perfectly nested from token `t` on, at most `limit`.
    fn nest_depth(&self, t: usize, limit: usize) -> usize;

    /// Where the nest from token `t` stops being perfect, within `limit` loops: the token.
    fn nest_break(&self, t: usize, limit: usize) -> Option<usize>;

    /// The loops perfectly nested from token `t` on, at most `limit`.
    fn nest_loops(&self, t: usize, limit: usize) -> Vec<ForLoop>;

    /// The innermost loop whose body holds position `t` and whose control variable is `var`
    /// (named as the language compares names): a loop around a directive, in its function.
    fn loop_around(&self, t: usize, var: &str) -> Option<ForLoop>;

    /// The loop that is the whole body of loop `outer`.
    fn inner_loop(&self, outer: &ForLoop) -> Option<ForLoop>;

    /// Whether the header of loop `f` (its bounds and step) names `name`, and where.
    fn header_mentions(&self, f: &ForLoop, names: &[&str]) -> Option<usize>;

    /// The control variable of the loop of a site in a macro body, and the words of its
    /// declaration before the name (empty when the loop assigns it), read from the text
    /// after byte `from` (the macro's statement is not in the token stream).
    fn loop_variable_after(&self, from: usize) -> Option<(String, Vec<String>)>;

    /// The control variable of loop `f` and the words declaring it in the loop head (empty
    /// when the loop assigns it).
    fn loop_variable(&self, f: &ForLoop) -> Option<(String, Vec<String>)>;

    /// The parameters of the function-like macro whose body holds byte `at`.
    fn macro_params(&self, at: usize) -> Vec<String>;

    /// Byte range of the macro definition whose body holds byte `at` (a site inside a
    /// macro).
    fn macro_definition(&self, at: usize) -> Option<Range<usize>>;

    /// The token closing the block that holds token `t` (None at file scope, or in a
    /// namespace or `extern "C"` block).
    fn block_end(&self, t: usize) -> Option<usize>;

    /// The exits of the block closed at token `close` after token `from`: its `return`s and
    /// its end; Err with the offset of a `return` that is not a statement of its own line.
    fn scope_exits(&self, from: usize, close: usize) -> Result<Exits, usize>;

    /// The block-scope `extern` declaration of `name` before token `before` in its block:
    /// the byte range of the declaration statement.
    fn extern_declaration(&self, name: &str, before: usize) -> Option<Range<usize>>;

    /// The start of the line where the file-scope function around token `t` begins, or None
    /// when that function is nested in a class or namespace.
    fn function_start(&self, t: usize) -> Option<usize>;

    /// Whether `name` is a parameter or a local of the function around token `t` declared
    /// before `t` (not of file scope).
    fn declared_in_function(&self, t: usize, name: &str) -> bool;

    /// Whether the directive whose first token is `first` is the body of an `if`, `else` or
    /// loop without braces, follows a label or another directive: a line inserted before it
    /// would take its place.
    fn is_body(&self, first: usize) -> bool;

    /// Whether a preprocessor conditional (`#if`, `#else`, …) stands in tokens `toks`.
    fn conditional_in(&self, toks: Range<usize>) -> bool;

    /// Whether token `t` is directly in block `block`, not in a block nested in it.
    fn directly_in(&self, block: &Range<usize>, t: usize) -> bool;

    /// The statement in `region` (directly, or in blocks in it) that holds token `t`.
    fn statement_holding(&self, region: Range<usize>, t: usize) -> Option<Range<usize>>;

    /// Whether statement `stmt` declares variables.
    fn is_declaration(&self, stmt: Range<usize>) -> bool;

    /// Whether `name` is declared as an array before byte `before` (`T name[...]`).
    fn declared_as_array(&self, name: &str, before: usize) -> bool;

    /// The words before `var` in the declaration that names it at byte `at` (`signed char
    /// i;` gives `signed char`).
    fn declaration_words(&self, at: usize, var: &str) -> Option<Vec<String>>;

    /// The functions the file defines.
    fn defined_functions(&self) -> Vec<String>;

    /// The bodies (the tokens inside the braces) of the definitions of function `name` at
    /// file scope.
    fn function_bodies(&self, name: &str) -> Vec<Range<usize>>;

    /// Whether the function whose body is `body` (of
    /// [`function_bodies`](Syntax::function_bodies)) writes nothing but its own locals and
    /// holds nothing the reading does not follow: what else it does is in its calls
    /// ([`calls_in`](Syntax::calls_in)).
    fn writes_only_locals(&self, body: &Range<usize>) -> bool;

    /// The functions whose bodies enclose token `t`, innermost first.
    fn enclosing_functions(&self, t: usize) -> Vec<String>;

    /// The function the statement `stmt` declares or defines.
    fn declared_function(&self, stmt: &Range<usize>) -> Option<String>;

    /// The name before the first `(` of statement `stmt` (what `routine` takes for the
    /// function a declaration after it declares, when deciding which functions are device
    /// code; `declared_function` reads declarations exactly).
    fn name_before_parens(&self, stmt: &Range<usize>) -> Option<String>;

    /// The function whose body holds token `t`.
    fn function_of(&self, t: usize) -> Option<String>;

    /// Whether statement `stmt` declares exactly one function; Err says what it declares
    /// instead.
    fn declares_one_function(&self, stmt: Range<usize>) -> Result<(), &'static str>;

    /// Where a language puts a `routine` without a name inside the procedure it applies to
    /// (Fortran: in the specification part of a subroutine, function or interface body): for
    /// the directive at token `t`, Ok, or Err with why it is misplaced. None where `routine`
    /// applies to the declaration after it (C, C++: [`Syntax::declares_one_function`]).
    fn routine_in_unit(&self, _t: usize) -> Option<Result<(), &'static str>> {
        None
    }

    /// What the directive whose first token is `first` stands in for when it is where a
    /// statement must be.
    fn position(&self, first: usize) -> Option<Position>;

    /// Whether another directive (a pragma line) follows token `t`.
    fn directive_follows(&self, t: usize) -> bool;

    /// The statement that follows the directive whose last token is `last`.
    fn statement_after(&self, last: usize) -> Option<Stmt>;

    /// The jumps of the file: each `goto` to its label, each `case` label of a `switch`.
    fn jumps(&self) -> &[Jump];

    /// Whether token `t` is inside an OpenMP `declare target` region of the file.
    fn in_declare_target(&self, t: usize) -> bool;

    /// The calls made in tokens `toks`.
    fn calls_in(&self, toks: Range<usize>) -> Vec<Call>;

    /// The tokens that call a runtime routine with a queue argument (`acc_*_async`).
    fn async_calls(&self) -> Vec<usize>;

    /// The tokens that may start an OpenMP directive, in order.
    fn omp_directive_tokens(&self) -> Vec<usize>;

    /// The OpenMP directives that start at tokens `starts` (of
    /// [`omp_directive_tokens`](Syntax::omp_directive_tokens)), read up to token `end`.
    fn omp_directives(&self, starts: &[usize], end: usize) -> Vec<OmpRead>;

    /// Whether every mention of `v` in statement `stmt` is an update by reduction operator
    /// `op` (`+`, `max`, …), and there is one.
    fn updated_only_by(&self, stmt: &Range<usize>, v: &str, op: &str) -> bool;

    /// The reduction operator of the update of `v` written at byte `at` (`v += e`,
    /// `v = fmax(v, e)`), if it is one.
    fn reduction_op(&self, at: usize, v: &str) -> Option<&'static str>;

    /// Whether every mention of `v` in bytes `range` comes after an assignment of it that
    /// runs whenever the mention does: each iteration then sets `v` before using it.
    fn assigned_before_read(&self, range: Range<usize>, v: &str) -> bool;

    /// Whether each iteration of the loop at bytes `range` assigns `v` on every path through
    /// it before it ends: no branch that skips the assignment, no jump out before it (unlike
    /// [`assigned_before_read`](Syntax::assigned_before_read), which an iteration that never
    /// mentions `v` answers yes).
    fn assigned_every_iteration(&self, range: Range<usize>, v: &str) -> bool;

    /// Whether `v`, declared at byte `decl` in the function (Fortran: procedure or main
    /// program) holding byte `at`, is mentioned there only at `decl` and in the bytes
    /// `inside` (Fortran: or in loops apart from them that assign it before reading it in
    /// every iteration): a local whose value before and after those bytes nothing reads (not a
    /// parameter, a global, a module or COMMON variable; no macro or contained procedure
    /// names it).
    fn confined_to(&self, at: usize, decl: usize, inside: &[Range<usize>], v: &str) -> bool;

    /// Whether tokens `toks` name `v` outside the bytes `skip`.
    fn mentions_outside(&self, toks: Range<usize>, skip: &Range<usize>, v: &str) -> bool;

    /// Whether the first mention of `v` in tokens `toks` is the init of a loop
    /// (`for (v = 0; …)`).
    fn first_mention_in_loop_init(&self, toks: Range<usize>, v: &str) -> bool;

    /// What tokens `toks`, outside the ranges `skip`, do with the structure `base` reached by
    /// `access`.
    fn member_uses(
        &self,
        toks: Range<usize>,
        skip: &[Range<usize>],
        base: &str,
        access: Access,
    ) -> MemberUses;

    /// The file's explicit pointer attachments (`acc_attach` and `attach` clauses, and
    /// their translations), which a detach may undo, read when first asked.
    fn attachments(
        &self,
        sites: &[Site],
        dirs: &[Option<Directive>],
        lines: &LineIndex,
    ) -> &Attachments;

    /// The dependence test's verdicts for the loop at token `head` and the loops in it,
    /// ending at token `end`, with the variables `vars` the loop's region uses from outside,
    /// of which nothing reads the `confined` ones before or after the loop (private where an
    /// iteration may not assign them, rather than a last value to keep). `header_macros`:
    /// the file's (`FileFacts::header_macros`), the same in every call for one file.
    fn dependence(
        &self,
        head: usize,
        end: usize,
        vars: &[RegionVar],
        confined: &[&str],
        header_macros: &[HeaderMacro],
    ) -> Nest;
}
