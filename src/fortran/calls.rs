//! The procedures a range of statements calls: `call name(…)` (also as the action of a
//! logical `if`) and function references, a name followed by `(` that the declarations do
//! not make something else: an array, a character variable (a substring), a derived type
//! (its structure constructor), an intrinsic procedure or a statement keyword. A name no
//! declaration of the file explains (one from a module of another file) counts as a call:
//! for the decisions that ask, a call that may be there is the conservative answer.

use super::Front;
use super::facts::{Type, without_operands};
use super::lang::{is_intrinsic_function, is_paren_keyword};
use super::stmt::{Kind, Toks, type_spec};
use std::ops::Range;

/// One call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Called {
    /// The statement (index of [`super::lex::Lexed::stmts`]).
    pub stmt: usize,
    /// The procedure's name, lower case.
    pub name: String,
    /// Byte offset of the name.
    pub at: usize,
    /// A type-bound procedure (`call t%p()`).
    pub member: bool,
    /// Not declared in the calling unit, which (or whose host) uses a module of another
    /// file: the procedure may be that module's, with a `routine` directive there.
    pub hidden: bool,
}

/// The calls of statements `stmts`, in order.
pub fn calls(src: &str, front: &Front, stmts: Range<usize>) -> Vec<Called> {
    let (lx, st) = (&front.lexed, &front.structure);
    let mut out = Vec::new();
    for i in stmts {
        let (Some(s), Some(c)) = (lx.stmts.get(i), st.stmts.get(i)) else {
            continue;
        };
        let t = Toks::new(src, lx, s);
        let first = s.toks().start;
        let unit = st.unit_of(i);
        let mut found = Found {
            t: &t,
            front,
            unit,
            foreign: unit.is_some_and(|u| uses_foreign_module(front, u)),
            stmt: i,
            out: &mut out,
        };
        match &c.kind {
            Kind::Call => found.call(c.rest()),
            Kind::IfStmt(action) => {
                found.references(c.rest(), *action);
                found.action(*action);
            }
            Kind::Assignment(eq) | Kind::PointerAssignment(eq) => {
                found.target(first, *eq);
                found.references(eq + 1, t.end);
            }
            // (An `entry` or `case` names no procedure it calls either.)
            k if without_operands(k)
                || matches!(
                    k,
                    Kind::Entry | Kind::Case | Kind::Data | Kind::Include | Kind::ElseWhere
                ) => {}
            _ => found.references(c.rest(), t.end),
        }
    }
    out
}

struct Found<'a, 'b> {
    t: &'a Toks<'a>,
    front: &'a Front,
    unit: Option<usize>,
    /// The unit or a host uses a module of another file.
    foreign: bool,
    stmt: usize,
    out: &'b mut Vec<Called>,
}

impl Found<'_, '_> {
    fn push(&mut self, k: usize, member: bool) {
        let name = self.t.text(k).to_ascii_lowercase();
        let declared = !member
            && self.unit.is_some_and(|u| {
                let st = &self.front.structure;
                self.front
                    .facts
                    .lookup(st, u, &name)
                    .is_some_and(|v| v.at != 0)
            });
        let hidden = self.foreign && !declared && !SUBROUTINES.contains(&name.as_str());
        self.out.push(Called {
            stmt: self.stmt,
            name,
            at: self.t.lx.tokens[k].start(),
            member,
            hidden,
        });
    }

    /// `call name(…)` or `call t%p(…)` with the name at `callee`; its arguments may
    /// reference functions.
    fn call(&mut self, callee: usize) {
        let t = self.t;
        if !t.is_name(callee) {
            return;
        }
        // The last name of the designator before the argument list.
        let mut k = callee;
        let mut member = false;
        while t.text(k + 1) == "%" && t.is_name(k + 2) {
            k += 2;
            member = true;
        }
        self.push(k, member);
        self.references(k + 1, t.end);
    }

    /// The action statement of a logical `if`, from `a`.
    fn action(&mut self, a: usize) {
        let t = self.t;
        if t.is(a, "call") {
            return self.call(a + 1);
        }
        match t.designator(a) {
            Some(d) if matches!(t.text(d).as_ref(), "=" | "=>") => {
                self.target(a, d);
                self.references(d + 1, t.end);
            }
            _ if t.is_name(a) && is_paren_keyword(&t.text(a).to_ascii_lowercase()) => {
                self.references(a + 1, t.end)
            }
            _ => self.references(a, t.end),
        }
    }

    /// The variable assigned from `first` to `eq`: its subscripts may reference functions,
    /// the name itself is none.
    fn target(&mut self, first: usize, eq: usize) {
        self.references(first + 1, eq);
    }

    /// The function references of tokens `from..to`.
    fn references(&mut self, from: usize, to: usize) {
        let t = self.t;
        for k in from..to.min(t.end) {
            if !t.is_name(k) || t.text(k + 1) != "(" {
                continue;
            }
            let prev = if k > 0 { t.text(k - 1) } else { "".into() };
            // A component (`t%c(i)`: an array component or a binding; the type tells, not
            // read here) or a keyword argument's name.
            if prev == "%" || (k == from && is_paren_keyword(&t.text(k).to_ascii_lowercase())) {
                continue;
            }
            // The keyword of a type specification (`allocate(character(len=n) :: s)`, an
            // array constructor's `[integer(8) :: i, j]`) names no procedure; the
            // expressions of its parameters are read on.
            if type_spec(t, k).is_some_and(|j| t.text(j) == "::") {
                continue;
            }
            if self.is_procedure(&t.text(k).to_ascii_lowercase()) {
                self.push(k, false);
            }
        }
    }

    /// Whether `name(` names a procedure in this unit.
    fn is_procedure(&self, name: &str) -> bool {
        if is_intrinsic_function(name) || self.front.facts.derived(name).is_some() {
            return false;
        }
        let Some(unit) = self.unit else { return true };
        let Some(v) = self.front.facts.lookup(&self.front.structure, unit, name) else {
            return true;
        };
        let declared = !(v.at == 0 && matches!(v.ty, Type::Implicit(_)));
        let character = matches!(&v.ty, Type::Intrinsic { name, .. } if name == "character");
        !(declared && (v.is_array() || character))
    }
}

/// Intrinsic subroutines (and common extensions): no module's.
const SUBROUTINES: &[&str] = &[
    "abort",
    "c_f_pointer",
    "c_f_procpointer",
    "cpu_time",
    "date_and_time",
    "execute_command_line",
    "exit",
    "get_command",
    "get_command_argument",
    "get_environment_variable",
    "move_alloc",
    "mvbits",
    "random_number",
    "random_seed",
    "system_clock",
];

/// Modules of the standard and of the programming models, which declare no routine of the
/// program's.
const STANDARD_MODULES: &[&str] = &[
    "ieee_arithmetic",
    "ieee_exceptions",
    "ieee_features",
    "iso_c_binding",
    "iso_fortran_env",
    "mpi",
    "mpi_f08",
    "omp_lib",
    "omp_lib_kinds",
    "openacc",
    "openacc_kinds",
];

/// Whether unit `u` or a host of it uses a module that is not in this file (nor a standard
/// one).
pub(super) fn uses_foreign_module(front: &Front, u: usize) -> bool {
    let st = &front.structure;
    let mut at = Some(u);
    while let Some(k) = at {
        let foreign = front
            .facts
            .units
            .get(k)
            .is_some_and(|f| f.uses_outside().any(|m| !STANDARD_MODULES.contains(&m)));
        if foreign {
            return true;
        }
        at = st.units[k].parent.filter(|_| !st.units[k].interface);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn front(src: &str) -> Front {
        let kind = crate::fortran::form::kind_of(std::path::Path::new("x.f90")).expect("Fortran");
        Front::new(src, kind, |_| Default::default())
    }

    fn names(src: &str) -> Vec<(String, bool)> {
        let kind = crate::fortran::form::kind_of(std::path::Path::new("x.f90")).expect("Fortran");
        let front = Front::new(src, kind, |_| Default::default());
        calls(src, &front, 0..front.lexed.stmts.len())
            .into_iter()
            .map(|c| (c.name, c.member))
            .collect()
    }

    #[test]
    fn calls_and_function_references() {
        let src = "subroutine s(a, n)\n  use m\n  integer :: n, i\n  real :: a(n), x\n  character(8) :: c\n  type(pt) :: p\n  do i = 1, n\n    a(f(i)) = g(a(i)) + sqrt(a(i)) + h(i)\n    call Work(a, n)\n    if (x > 0) call p%move(1)\n    if (i > 1) x = k(i)\n    c(1:2) = c(3:4)\n    write (*, *) w(i)\n  end do\nend subroutine\n";
        let got = names(src);
        let want: Vec<(String, bool)> = [
            ("f", false),
            ("g", false),
            ("h", false),
            ("work", false),
            ("move", true),
            ("k", false),
            ("w", false),
        ]
        .iter()
        .map(|(n, m)| (n.to_string(), *m))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn hidden_only_behind_a_module_of_another_file() {
        let hidden = |src: &str| {
            let f = front(src);
            calls(src, &f, 0..f.lexed.stmts.len())
                .into_iter()
                .map(|c| (c.name, c.hidden))
                .collect::<Vec<_>>()
        };
        let own = "module m\ncontains\n  subroutine g\n  end subroutine\nend module\nprogram p\n  use m\n  use openacc\n  call g\n  call h\nend program\n";
        assert_eq!(
            hidden(own),
            [("g".to_string(), false), ("h".to_string(), false)]
        );
        let other = "program p\n  use elsewhere\n  real, external :: f\n  call g\n  x = f(1.0)\nend program\n";
        assert_eq!(
            hidden(other),
            [("g".to_string(), true), ("f".to_string(), false)]
        );
    }

    #[test]
    fn type_specifications_are_no_calls() {
        let src = "subroutine s(n)\n  integer :: n\n  character(:), allocatable :: c\n  real(8), allocatable :: a(:)\n  integer(8), allocatable :: iv(:)\n  complex(8), allocatable :: z(:)\n  allocate(character(len=n) :: c)\n  allocate(character(len=f(n)) :: c)\n  allocate(real(8) :: a(n))\n  if (n > 0) allocate(integer(kind=8) :: iv(n))\n  iv = [integer(8) :: 1, 2]\n  z = [complex(kind=8) :: (1.0, 2.0)]\n  a = [double precision :: g(1)]\nend subroutine\n";
        let got: Vec<String> = names(src).into_iter().map(|(n, _)| n).collect();
        assert_eq!(got, ["f", "g"]);
    }

    #[test]
    fn declarations_and_constructors_are_no_calls() {
        let src = "module m\n  type pt\n    real :: x\n  end type\ncontains\n  subroutine s\n    real :: v(3)\n    type(pt) :: q\n    q = pt(1.0)\n    v(1) = v(2) + real(3, 8)\n  end subroutine\nend module\n";
        assert!(names(src).is_empty(), "{:?}", names(src));
    }
}
