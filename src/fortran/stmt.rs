//! What each Fortran statement is, from its tokens.
//!
//! Fortran has no reserved words: `do = 1` is an assignment and `if(i) = 2` assigns to an
//! array called `if`. A statement is first tested for an assignment (a designator, then
//! `=` or `=>` outside parentheses, with no comma after it outside parentheses, which
//! would make it a `do`); otherwise its leading keywords decide. Keywords that compilers
//! accept with or without a blank (`end do`/`enddo`, `go to`, `double precision`, `else
//! if`, `select case`, `block data`, `end subroutine`, …) are read both ways.

mod toks;

use super::lex::{Lexed, Stmt, TokKind};
use std::ops::Range;
pub use toks::Toks;

/// The program unit kinds a statement opens or an `end` statement names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnitKind {
    Program,
    Module,
    Submodule,
    Subroutine,
    Function,
    BlockData,
}

/// The constructs an `end` statement closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConstructKind {
    Do,
    If,
    Select,
    Block,
    Associate,
    Critical,
    Where,
    Forall,
    Team,
    Interface,
    Type,
    Enum,
}

/// The control of a `do` statement, as token indices into [`Lexed::tokens`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DoControl {
    /// `do i = lo, hi [, step]`.
    Counted {
        var: usize,
        lo: Range<usize>,
        hi: Range<usize>,
        step: Option<Range<usize>>,
    },
    /// `do while (cond)`: the tokens inside the parentheses.
    While(Range<usize>),
    /// `do concurrent (header) [locality]`: the tokens inside the header's parentheses.
    Concurrent(Range<usize>),
    /// `do` alone.
    Forever,
}

/// A `do` statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoHead {
    /// The label of a labelled `do 10 i = …` (its terminating statement's label).
    pub label: Option<u32>,
    pub control: DoControl,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    // Program units.
    Unit(UnitKind),
    /// `end`, `end subroutine [name]`, …; None: a bare `end`.
    EndUnit(Option<UnitKind>),
    Contains,
    // Blocks of the specification part.
    /// `interface`, `abstract interface`, `interface name`.
    Interface,
    /// `type [, attrs ::] name`: a derived type definition.
    TypeDef,
    /// `enum, bind(c)`.
    Enum,
    // Specification statements.
    Use,
    Import,
    Implicit,
    /// A type declaration (`integer :: x`, `real(8), allocatable :: a(:)`, `type(t) :: v`).
    Declaration,
    /// An attribute statement (`dimension a(n)`, `allocatable :: b`): the attribute, as its
    /// index in `ATTRIBUTES` (a string here made every statement kind 8 bytes larger).
    Attribute(u8),
    Common,
    Parameter,
    Equivalence,
    Namelist,
    /// `procedure(iface) :: p`, `module procedure f`, `generic ::`, `final ::`, type-bound
    /// procedures.
    Procedure,
    /// Other statements of the specification part (`sequence`, `enumerator`, …).
    OtherSpec,
    // Statements allowed in both parts.
    Data,
    Format,
    Entry,
    /// `include 'file'`.
    Include,
    // Constructs.
    /// A `do` statement (boxed: a statement's kind is 16 bytes instead of 72, and one
    /// statement in three or fewer is a `do`).
    Do(Box<DoHead>),
    IfThen,
    ElseIf,
    Else,
    /// `select case`, `select type`, `select rank`.
    Select,
    /// `case`, `type is`, `class is`, `class default`, `rank`.
    Case,
    Block,
    Associate,
    Critical,
    ChangeTeam,
    /// `where (mask)` opening a construct.
    WhereConstruct,
    ElseWhere,
    /// `forall (…)` opening a construct.
    ForallConstruct,
    /// `end do`, `end if`, … (the construct it names).
    End(ConstructKind),
    // Executable statements.
    /// `if (cond) action`: the token where the action statement starts.
    IfStmt(usize),
    /// `if (e) 10, 20, 30`.
    ArithmeticIf,
    /// `where (mask) a = b`.
    WhereStmt,
    /// `forall (…) a(i) = b(i)`.
    ForallStmt,
    /// `v = e`: the `=` token.
    Assignment(usize),
    /// `p => t`: the `=>` token.
    PointerAssignment(usize),
    Call,
    Continue,
    Goto,
    /// `cycle`, `exit`, `return`, `stop`, `error stop`.
    Jump,
    Allocate,
    Deallocate,
    Nullify,
    /// `read`, `write`, `print`, `open`, `close`, `inquire`, …
    Io,
    /// Other executable statements (and statements this classifier does not know).
    Other,
}

impl Kind {
    /// A statement that belongs to the specification part (it does not end it).
    pub fn is_spec(&self) -> bool {
        matches!(
            self,
            Kind::Interface
                | Kind::TypeDef
                | Kind::Enum
                | Kind::Use
                | Kind::Import
                | Kind::Implicit
                | Kind::Declaration
                | Kind::Attribute(_)
                | Kind::Common
                | Kind::Parameter
                | Kind::Equivalence
                | Kind::Namelist
                | Kind::Procedure
                | Kind::OtherSpec
                | Kind::Data
                | Kind::Format
                | Kind::Entry
                | Kind::Include
                | Kind::End(ConstructKind::Interface | ConstructKind::Type | ConstructKind::Enum)
        )
    }

    /// The construct a statement opens.
    pub fn opens(&self) -> Option<ConstructKind> {
        Some(match self {
            Kind::Do(_) => ConstructKind::Do,
            Kind::IfThen => ConstructKind::If,
            Kind::Select => ConstructKind::Select,
            Kind::Block => ConstructKind::Block,
            Kind::Associate => ConstructKind::Associate,
            Kind::Critical => ConstructKind::Critical,
            Kind::ChangeTeam => ConstructKind::Team,
            Kind::WhereConstruct => ConstructKind::Where,
            Kind::ForallConstruct => ConstructKind::Forall,
            Kind::Interface => ConstructKind::Interface,
            Kind::TypeDef => ConstructKind::Type,
            Kind::Enum => ConstructKind::Enum,
            _ => return None,
        })
    }
}

/// A classified statement, in 24 bytes (a file has one per statement): its token indices
/// in 32 bits, as [`super::lex::Token`]'s offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classified {
    pub kind: Kind,
    /// `u32::MAX`: none.
    name: u32,
    rest: u32,
}

impl Classified {
    pub fn new(kind: Kind, name: Option<usize>, rest: usize) -> Classified {
        Classified {
            kind,
            name: name.map_or(u32::MAX, |n| n as u32),
            rest: rest as u32,
        }
    }

    /// The construct name written before it (`outer: do`): its token.
    pub fn name(&self) -> Option<usize> {
        (self.name != u32::MAX).then_some(self.name as usize)
    }

    /// The first token after the construct name and the statement's keywords: where its
    /// operands start (for `end do outer`: `outer`).
    pub fn rest(&self) -> usize {
        self.rest as usize
    }
}

/// Prefixes of a subprogram statement.
const PREFIXES: [&str; 7] = [
    "recursive",
    "pure",
    "elemental",
    "impure",
    "module",
    "non_recursive",
    "simple",
];

/// The intrinsic type keywords that start a declaration (`double precision` is two).
const TYPES: [&[&str]; 8] = [
    &["integer"],
    &["real"],
    &["double", "precision"],
    &["double", "complex"],
    &["complex"],
    &["logical"],
    &["character"],
    &["byte"],
];

/// Attribute statements.
const ATTRIBUTES: [&str; 20] = [
    "dimension",
    "allocatable",
    "pointer",
    "target",
    "intent",
    "optional",
    "save",
    "value",
    "volatile",
    "asynchronous",
    "contiguous",
    "protected",
    "external",
    "intrinsic",
    "public",
    "private",
    "bind",
    "codimension",
    "automatic",
    "static",
];

/// A type specification at `i` (`integer`, `real(8)`, `real*8`, `character(len=*)`,
/// `double precision`, `type(t)`, `class(*)`): the index after it.
pub fn type_spec(t: &Toks, i: usize) -> Option<usize> {
    let mut j = TYPES.iter().find_map(|w| t.seq(i, w)).or_else(|| {
        (t.is(i, "type") || t.is(i, "class"))
            .then_some(i + 1)
            .filter(|&k| t.text(k) == "(")
    })?;
    if t.text(j) == "(" {
        j = t.after(j)?;
    } else if t.text(j) == "*" {
        // `real*8`, `character*(*)`, `character*10`.
        j += 1;
        j = if t.text(j) == "(" { t.after(j)? } else { j + 1 };
    }
    Some(j)
}

/// Classify statement `s`.
pub fn classify(src: &str, lx: &Lexed, s: &Stmt) -> Classified {
    let t = Toks::new(src, lx, s);
    let mut i = s.toks().start;
    // A construct name: `name:` (not `name::`).
    let mut name = None;
    if t.is_name(i) && t.text(i + 1) == ":" && i + 2 < t.end {
        name = Some(i);
        i += 2;
    }
    let (kind, rest) = kind(&t, i);
    Classified::new(kind, name, rest)
}

fn kind(t: &Toks, i: usize) -> (Kind, usize) {
    // Assignments first: `do = 1`, `if(i) = 2` and `a(1:n)%b = 0` are assignments.
    if let Some(d) = t.designator(i)
        && matches!(t.text(d).as_ref(), "=" | "=>")
        && t.find_top(d + 1, ",").is_none()
    {
        return if t.text(d) == "=" {
            (Kind::Assignment(d), d + 1)
        } else {
            (Kind::PointerAssignment(d), d + 1)
        };
    }
    if !t.is_name(i) {
        return (Kind::Other, i);
    }
    // Lowered inline (a keyword fits): every statement's first word is read.
    let mut lowered = compact_str::CompactString::from(t.text(i));
    lowered.make_ascii_lowercase();
    let w = lowered.as_str();
    let one = |k: Kind| (k, i + 1);
    // Keywords that may be run together with the next one come first; each is tried only
    // when the first word can start it (every statement is classified).
    const RUN_TOGETHER: [(&[&str], Kind); 14] = [
        (&["block", "data"], Kind::Unit(UnitKind::BlockData)),
        (&["else", "if"], Kind::ElseIf),
        (&["else", "where"], Kind::ElseWhere),
        (&["select", "case"], Kind::Select),
        (&["select", "type"], Kind::Select),
        (&["select", "rank"], Kind::Select),
        (&["type", "is"], Kind::Case),
        (&["class", "is"], Kind::Case),
        (&["class", "default"], Kind::Case),
        (&["go", "to"], Kind::Goto),
        (&["error", "stop"], Kind::Jump),
        (&["change", "team"], Kind::ChangeTeam),
        (&["abstract", "interface"], Kind::Interface),
        (&["sync", "all"], Kind::Other),
    ];
    if w.starts_with("end")
        && let Some(r) = end_statement(t, i)
    {
        return r;
    }
    for (words, kind) in &RUN_TOGETHER {
        if w.starts_with(words[0])
            && let Some(j) = t.seq(i, words)
        {
            return (kind.clone(), j);
        }
    }
    let typed = TYPES.iter().any(|ty| w.starts_with(ty[0])) || w == "type" || w == "class";
    if (typed || PREFIXES.contains(&w) || w == "attributes" || w == "subroutine" || w == "function")
        && let Some(r) = subprogram(t, i)
    {
        return r;
    }
    if w.starts_with("do")
        && let Some(r) = do_statement(t, i)
    {
        return r;
    }
    if typed && type_spec(t, i).is_some() {
        return one(Kind::Declaration);
    }
    match w {
        "program" => one(Kind::Unit(UnitKind::Program)),
        "module" if t.is(i + 1, "procedure") => (Kind::Procedure, i + 2),
        "module" => one(Kind::Unit(UnitKind::Module)),
        "submodule" => one(Kind::Unit(UnitKind::Submodule)),
        "contains" => one(Kind::Contains),
        "interface" => one(Kind::Interface),
        "type" => one(Kind::TypeDef),
        "enum" => one(Kind::Enum),
        "use" => one(Kind::Use),
        "import" => one(Kind::Import),
        "implicit" => one(Kind::Implicit),
        "common" => one(Kind::Common),
        "parameter" => one(Kind::Parameter),
        "equivalence" => one(Kind::Equivalence),
        "namelist" => one(Kind::Namelist),
        "procedure" | "generic" | "final" => one(Kind::Procedure),
        "sequence" | "enumerator" => one(Kind::OtherSpec),
        "data" => one(Kind::Data),
        "format" => one(Kind::Format),
        "entry" => one(Kind::Entry),
        "include" if t.kind(i + 1) == Some(TokKind::Str) => one(Kind::Include),
        a if let Some(k) = ATTRIBUTES.iter().position(|&x| x == a) => one(Kind::Attribute(k as u8)),
        "if" => if_statement(t, i),
        "else" => one(Kind::Else),
        "case" | "rank" => one(Kind::Case),
        "block" if i + 1 >= t.end => one(Kind::Block),
        "associate" => one(Kind::Associate),
        "critical" => one(Kind::Critical),
        "where" | "forall" => {
            let open = i + 1;
            let close = t.after(open).filter(|_| t.text(open) == "(");
            let construct = close.is_some_and(|c| c >= t.end);
            let k = match (w, construct) {
                ("where", true) => Kind::WhereConstruct,
                ("where", false) => Kind::WhereStmt,
                (_, true) => Kind::ForallConstruct,
                _ => Kind::ForallStmt,
            };
            one(k)
        }
        "call" => one(Kind::Call),
        "continue" => one(Kind::Continue),
        "goto" => one(Kind::Goto),
        "cycle" | "exit" | "return" | "stop" | "pause" => one(Kind::Jump),
        "allocate" => one(Kind::Allocate),
        "deallocate" => one(Kind::Deallocate),
        "nullify" => one(Kind::Nullify),
        io if super::lang::IO_KEYWORDS.contains(&io) => one(Kind::Io),
        _ => one(Kind::Other),
    }
}

/// The statements that start with `end` (`end`, `end do`, `enddo`, `end block data`, …).
fn end_statement(t: &Toks, i: usize) -> Option<(Kind, usize)> {
    // The first word, with the next one joined when the first is `end` alone.
    let mut key = t.text(i).to_ascii_lowercase();
    let mut j = i + 1;
    if key == "end" && t.is_name(j) {
        key.push_str(&t.text(j).to_ascii_lowercase());
        j += 1;
    }
    if key == "endblock" && t.is(j, "data") {
        key.push_str("data");
        j += 1;
    }
    let kind = match key.as_str() {
        "end" if j >= t.end => Kind::EndUnit(None),
        "endprogram" => Kind::EndUnit(Some(UnitKind::Program)),
        "endmodule" => Kind::EndUnit(Some(UnitKind::Module)),
        "endsubmodule" => Kind::EndUnit(Some(UnitKind::Submodule)),
        "endsubroutine" => Kind::EndUnit(Some(UnitKind::Subroutine)),
        "endfunction" => Kind::EndUnit(Some(UnitKind::Function)),
        "endblockdata" => Kind::EndUnit(Some(UnitKind::BlockData)),
        "enddo" => Kind::End(ConstructKind::Do),
        "endif" => Kind::End(ConstructKind::If),
        "endselect" => Kind::End(ConstructKind::Select),
        "endblock" => Kind::End(ConstructKind::Block),
        "endassociate" => Kind::End(ConstructKind::Associate),
        "endcritical" => Kind::End(ConstructKind::Critical),
        "endwhere" => Kind::End(ConstructKind::Where),
        "endforall" => Kind::End(ConstructKind::Forall),
        "endteam" => Kind::End(ConstructKind::Team),
        "endinterface" => Kind::End(ConstructKind::Interface),
        "endtype" => Kind::End(ConstructKind::Type),
        "endenum" => Kind::End(ConstructKind::Enum),
        "endfile" => Kind::Io,
        _ => return None,
    };
    Some((kind, j))
}

/// `[prefixes] [type] subroutine|function name`.
fn subprogram(t: &Toks, mut i: usize) -> Option<(Kind, usize)> {
    let mut typed = false;
    loop {
        if PREFIXES.iter().any(|p| t.is(i, p)) {
            i += 1;
        } else if t.is(i, "attributes") && t.text(i + 1) == "(" {
            // CUDA Fortran's `attributes(global) subroutine k(...)`, found beside OpenACC.
            i = t.after(i + 1)?;
        } else if !typed && let Some(j) = type_spec(t, i) {
            typed = true;
            i = j;
        } else {
            break;
        }
    }
    let unit = if t.is(i, "subroutine") {
        UnitKind::Subroutine
    } else if t.is(i, "function") {
        UnitKind::Function
    } else {
        return None;
    };
    t.is_name(i + 1).then_some((Kind::Unit(unit), i + 1))
}

/// `do`, `do 10 [,] i = …`, `do while (…)`, `do concurrent (…)`, and the run-together
/// `do10`, `dowhile`, `doconcurrent` (compilers accept them).
fn do_statement(t: &Toks, i: usize) -> Option<(Kind, usize)> {
    let w = t.text(i).to_ascii_lowercase();
    let (mut j, mut label) = match w.as_str() {
        "do" => (i + 1, None),
        "dowhile" | "doconcurrent" => (i, None),
        _ => {
            let digits = w.strip_prefix("do")?;
            let n: u32 = digits.parse().ok()?;
            (i + 1, Some(n))
        }
    };
    if label.is_none() && t.kind(j) == Some(TokKind::Int) {
        label = t.text(j).parse().ok();
        j += 1;
        if t.text(j) == "," {
            j += 1;
        }
    }
    if let Some(k) = t
        .seq(j, &["do", "while"])
        .filter(|_| j == i)
        .or_else(|| t.is(j, "while").then_some(j + 1))
    {
        let close = t.after(k).filter(|_| t.text(k) == "(")?;
        let control = DoControl::While(k + 1..close - 1);
        return Some((Kind::Do(Box::new(DoHead { label, control })), k));
    }
    if let Some(k) = t
        .seq(j, &["do", "concurrent"])
        .filter(|_| j == i)
        .or_else(|| t.is(j, "concurrent").then_some(j + 1))
    {
        let close = t.after(k).filter(|_| t.text(k) == "(")?;
        let control = DoControl::Concurrent(k + 1..close - 1);
        return Some((Kind::Do(Box::new(DoHead { label, control })), k));
    }
    if j == i {
        return None;
    }
    if j >= t.end {
        return Some((
            Kind::Do(Box::new(DoHead {
                label,
                control: DoControl::Forever,
            })),
            j,
        ));
    }
    // `i = lo, hi [, step]`
    if !(t.is_name(j) && t.text(j + 1) == "=") {
        return None;
    }
    let var = j;
    let lo_start = j + 2;
    let c1 = t.find_top(lo_start, ",")?;
    let c2 = t.find_top(c1 + 1, ",");
    let hi = c1 + 1..c2.unwrap_or(t.end);
    let step = c2.map(|c| c + 1..t.end);
    if lo_start == c1 || hi.is_empty() || step.as_ref().is_some_and(Range::is_empty) {
        return None;
    }
    let control = DoControl::Counted {
        var,
        lo: lo_start..c1,
        hi,
        step,
    };
    Some((Kind::Do(Box::new(DoHead { label, control })), j))
}

/// `if (c) then`, `if (c) action`, `if (e) 10, 20, 30`.
fn if_statement(t: &Toks, i: usize) -> (Kind, usize) {
    let open = i + 1;
    let Some(close) = t.after(open).filter(|_| t.text(open) == "(") else {
        return (Kind::Other, i + 1);
    };
    if t.is(close, "then") && close + 1 >= t.end {
        return (Kind::IfThen, open);
    }
    if t.kind(close) == Some(TokKind::Int) {
        return (Kind::ArithmeticIf, open);
    }
    if close >= t.end {
        return (Kind::Other, open);
    }
    (Kind::IfStmt(close), open)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fortran::form::{Form, SourceKind};
    use crate::fortran::lex::lex;
    use crate::fortran::lines::scan;

    fn attr(word: &str) -> u8 {
        ATTRIBUTES
            .iter()
            .position(|&a| a == word)
            .expect("an attribute") as u8
    }

    /// One per statement: 48 bytes before their token indices were 32-bit and an attribute
    /// statement kept its word.
    #[test]
    fn a_classified_statement_is_24_bytes() {
        assert_eq!(std::mem::size_of::<Classified>(), 24);
    }

    fn kinds(src: &str) -> Vec<Kind> {
        let lx = lex(
            src,
            &scan(
                src,
                SourceKind {
                    form: Form::Free,
                    cpp: false,
                },
            ),
        );
        lx.stmts
            .iter()
            .map(|s| classify(src, &lx, s).kind)
            .collect()
    }

    fn one(src: &str) -> Kind {
        let k = kinds(src);
        assert_eq!(k.len(), 1, "{src}");
        k.into_iter().next().unwrap_or(Kind::Other)
    }

    #[test]
    fn statements_by_their_keywords() {
        use Kind::*;
        for (src, want) in [
            ("program p", Unit(UnitKind::Program)),
            ("module m", Unit(UnitKind::Module)),
            ("submodule (m) s", Unit(UnitKind::Submodule)),
            ("module procedure f", Procedure),
            ("module subroutine s(x)", Unit(UnitKind::Subroutine)),
            ("recursive subroutine s", Unit(UnitKind::Subroutine)),
            (
                "pure elemental real(8) function f(x)",
                Unit(UnitKind::Function),
            ),
            ("type(t) function f()", Unit(UnitKind::Function)),
            (
                "attributes(global) subroutine k(n, a)",
                Unit(UnitKind::Subroutine),
            ),
            (
                "attributes(device) pure real(8) function g(x)",
                Unit(UnitKind::Function),
            ),
            ("character(len=*) function f()", Unit(UnitKind::Function)),
            ("blockdata b", Unit(UnitKind::BlockData)),
            ("block data", Unit(UnitKind::BlockData)),
            ("end", EndUnit(None)),
            ("endsubroutine s", EndUnit(Some(UnitKind::Subroutine))),
            ("end block data", EndUnit(Some(UnitKind::BlockData))),
            ("end function f", EndUnit(Some(UnitKind::Function))),
            ("contains", Contains),
            ("abstract interface", Interface),
            ("interface operator(+)", Interface),
            ("end interface", End(ConstructKind::Interface)),
            ("type :: t", TypeDef),
            ("type, extends(b) :: t", TypeDef),
            ("type t", TypeDef),
            ("end type t", End(ConstructKind::Type)),
            ("type(t) :: v", Declaration),
            ("class(*), pointer :: p", Declaration),
            ("integer :: i = 1", Declaration),
            ("real(kind=dp), allocatable :: a(:,:)", Declaration),
            ("double precision x", Declaration),
            ("doubleprecision :: y", Declaration),
            ("real*8 z", Declaration),
            ("character*(*) s", Declaration),
            ("character(len=10) :: s = 'x'", Declaration),
            ("dimension a(10)", Attribute(attr("dimension"))),
            ("allocatable :: b", Attribute(attr("allocatable"))),
            ("intent(in) :: c", Attribute(attr("intent"))),
            ("use m, only: a => b", Use),
            ("implicit none", Implicit),
            ("common /c/ x, y", Common),
            ("parameter (n = 10)", Parameter),
            ("data x /1.0/", Data),
            ("include 'mpif.h'", Include),
            (
                "do i = 1, n",
                Do(Box::new(DoHead {
                    label: None,
                    control: DoControl::Counted {
                        var: 1,
                        lo: 3..4,
                        hi: 5..6,
                        step: None,
                    },
                })),
            ),
            ("if (x > 0) then", IfThen),
            ("elseif (y) then", ElseIf),
            ("else if (y) then", ElseIf),
            ("else", Else),
            ("endif", End(ConstructKind::If)),
            ("end do", End(ConstructKind::Do)),
            ("select case (k)", Select),
            ("selecttype (p)", Select),
            ("case (1:2)", Case),
            ("case default", Case),
            ("type is (integer)", Case),
            ("class default", Case),
            ("end select", End(ConstructKind::Select)),
            ("block", Block),
            ("end block", End(ConstructKind::Block)),
            ("associate (x => y)", Associate),
            ("critical", Critical),
            ("where (a > 0)", WhereConstruct),
            ("where (a > 0) a = 0", WhereStmt),
            ("elsewhere", ElseWhere),
            ("forall (i = 1:n)", ForallConstruct),
            ("forall (i = 1:n) a(i) = 0", ForallStmt),
            ("if (x) 10, 20, 30", ArithmeticIf),
            ("x = 1", Assignment(1)),
            ("a(i)%b(1:2) = 0", Assignment(11)),
            ("p => t", PointerAssignment(1)),
            ("call s(x=1)", Call),
            ("continue", Continue),
            ("go to 10", Goto),
            ("goto 10", Goto),
            ("error stop", Jump),
            ("return", Jump),
            ("allocate (a(n), stat=ierr)", Allocate),
            ("deallocate (a)", Deallocate),
            ("nullify (p)", Nullify),
            ("print *, x", Io),
            ("write (*, *) x", Io),
            ("endfile 10", Io),
            ("format (i5)", Format),
            ("sync all", Other),
        ] {
            assert_eq!(one(src), want, "{src}");
        }
        assert!(matches!(one("if (x) y = 1"), IfStmt(4)));
    }

    #[test]
    fn do_statement_forms() {
        let head = |src: &str| match one(src) {
            Kind::Do(h) => (h.label, std::mem::discriminant(&h.control)),
            k => panic!("{src}: {k:?}"),
        };
        let counted = std::mem::discriminant(&DoControl::Counted {
            var: 0,
            lo: 0..0,
            hi: 0..0,
            step: None,
        });
        let whl = std::mem::discriminant(&DoControl::While(0..0));
        let conc = std::mem::discriminant(&DoControl::Concurrent(0..0));
        let forever = std::mem::discriminant(&DoControl::Forever);
        assert_eq!(head("do 10 i = 1, n"), (Some(10), counted));
        assert_eq!(head("do 10, i = 1, n, 2"), (Some(10), counted));
        assert_eq!(head("do10 i = 1, n"), (Some(10), counted));
        assert_eq!(head("do while (x)"), (None, whl));
        assert_eq!(head("dowhile (x)"), (None, whl));
        assert_eq!(head("do 20 while (x)"), (Some(20), whl));
        assert_eq!(head("do concurrent (i = 1:n)"), (None, conc));
        assert_eq!(head("doconcurrent (i = 1:n) local(t)"), (None, conc));
        assert_eq!(head("do"), (None, forever));
        assert_eq!(head("do 30"), (Some(30), forever));
        assert!(matches!(one("do i = 1"), Kind::Other));
        assert!(matches!(one("doi = 1"), Kind::Assignment(_)));
    }
}
