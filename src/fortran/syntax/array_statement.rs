//! Statements that work on arrays as a whole (`a = b + c`, `a(2:n) = 0`,
//! `s = dot_product(a, b)`, `where`, `forall`): loops without a `do`, which no loop
//! directive can name. In a `kernels` region that becomes `target` they run on one device
//! thread.

use super::super::Front;
use super::super::dependence::INQUIRY;
use super::super::stmt::{Kind, Toks};

/// Intrinsics besides the dependence test's inquiry functions that ask about their first
/// argument without working through its elements.
const ASKED: &[&str] = &[
    "allocated",
    "associated",
    "c_loc",
    "c_sizeof",
    "is_contiguous",
    "present",
    "rank",
    "storage_size",
];

/// Whether statement `k` of the front end assigns a whole array or a section of one, or
/// reads one in its expression (an intrinsic's argument: `sum(a)`; the inquiry functions'
/// first arguments are not read), is a `where` or a `forall`, or is an `if` statement whose
/// action is such an assignment.
pub(super) fn is(src: &str, front: &Front, k: usize) -> bool {
    let (lx, st) = (&front.lexed, &front.structure);
    let (Some(s), Some(c)) = (lx.stmts.get(k), st.stmts.get(k)) else {
        return false;
    };
    match c.kind {
        Kind::WhereStmt | Kind::WhereConstruct | Kind::ForallStmt | Kind::ForallConstruct => true,
        Kind::Assignment(eq) => {
            array_assignment(front, &Toks::new(src, lx, s), k, s.toks().start, eq)
        }
        Kind::IfStmt(action) => {
            let t = Toks::new(src, lx, s);
            t.designator(action)
                .filter(|&d| t.text(d) == "=")
                .is_some_and(|eq| array_assignment(front, &t, k, action, eq))
        }
        _ => false,
    }
}

/// Whether the assignment from token `first` with its `=` at `eq` (statement `k`) works on
/// arrays: on the left, or anywhere in its expression.
fn array_assignment(front: &Front, t: &Toks, k: usize, first: usize, eq: usize) -> bool {
    let Some(unit) = front.structure.unit_of(k) else {
        return false;
    };
    let whole = |i: usize| whole_or_section(front, unit, t, i);
    if whole(first) == Some(eq) {
        return true;
    }
    (eq + 1..t.end).any(|i| {
        let inquired = i >= 2 && t.text(i - 1) == "(" && {
            let f = t.text(i - 2).to_ascii_lowercase();
            INQUIRY.contains(&f.as_str()) || ASKED.contains(&f.as_str())
        };
        t.is_name(i) && t.text(i.saturating_sub(1)) != "%" && !inquired && whole(i).is_some()
    })
}

/// Where the reference at name token `i` of unit `unit` ends when it is a whole array (a
/// name declared with a rank, without subscripts) or a section of one (a `:` among its
/// subscripts). A component (`a(i)%b`, `t%a`) is not looked into: its rank is the
/// component's.
fn whole_or_section(front: &Front, unit: usize, t: &Toks, i: usize) -> Option<usize> {
    let st = &front.structure;
    if !front
        .facts
        .lookup(st, unit, &t.text(i))
        .is_some_and(|v| v.is_array())
    {
        return None;
    }
    let open = i + 1;
    if t.text(open) != "(" {
        return (t.text(open) != "%").then_some(open);
    }
    let close = t.after(open)?;
    if t.text(close) == "%" {
        return None;
    }
    let mut j = open + 1;
    while j + 1 < close {
        match t.text(j).as_ref() {
            ":" => return Some(close),
            "(" | "[" => j = t.after(j).unwrap_or(close),
            _ => j += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::fortran::{Front, syntax::FortranSyntax};
    use crate::syntax::Syntax;

    /// The lines of `src`'s statements that are array statements.
    fn lines(src: &str) -> Vec<usize> {
        let kind = crate::fortran::form::kind_of(std::path::Path::new("x.f90")).expect("Fortran");
        let front = Front::new(src, kind, |_| Default::default());
        let sx = FortranSyntax::new(src, &front);
        (0..sx.token_count())
            .filter(|&t| sx.array_statement(t))
            .map(|t| src[..sx.token_range(t).start].matches('\n').count() + 1)
            .collect()
    }

    #[test]
    fn array_assignments_sections_where_and_forall() {
        let src = "subroutine s(n, a, b, x)
  integer :: n, i
  real :: a(n), b(n, n), x, m(3)
  type(t) :: v(4)
  a = 0
  a(2:n) = a(1:n-1)
  b(:, 1) = x
  a(i) = x
  x = sum(a)
  x = a(i) + size(a) + ubound(b, 1)
  if (allocated(m) .or. present(b)) x = rank(b)
  x = dot_product(b(:, i), a)
  if (x > 0) a = -a
  if (x > 0) a(i) = 1
  where (a > 0) a = 1
  forall (i = 1:n) a(i) = i
  m(min(i, 2)) = 1
  v(2)%c = 0
  where (a < 0)
    a = 0
  end where
end subroutine
";
        assert_eq!(lines(src), [5, 6, 7, 9, 12, 13, 15, 16, 19, 20]);
    }
}
