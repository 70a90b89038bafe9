//! A plan's new scope in Fortran: a `block` construct (Fortran 2008) around the directive
//! and its statement, whose specification part declares the local copies (a loop's
//! private variables that no OpenMP clause can hold, with their declared type) and the
//! constants evaluated once before the directive. C writes the same scope as a compound
//! statement. An argument evaluated only for its side effects needs nothing when it
//! references no function (an array element is no call).

use super::super::{Form, Spelling, indentation, limit};
use crate::fortran::facts::{Type, Var};
use crate::intent::{Decl, Plan};

/// The lines that open a scope (each with its terminator) and the line that closes it
/// (without one).
pub(super) struct Block {
    pub open: String,
    pub close: String,
}

impl super::FortranPrinter<'_> {
    /// The `block` that site `i`'s plan asks for: None when there is nothing to declare;
    /// else why it cannot be written.
    pub(super) fn block(
        &self,
        u: &crate::unit::Unit,
        plan: &Plan,
        i: usize,
    ) -> Result<Option<Block>, String> {
        let k = self.acc_sites[i];
        let unit = self.front.structure.regions[k].unit();
        let mut decls = Vec::new();
        let mut sets = Vec::new();
        for d in &plan.scope.decls {
            match d {
                // Fortran has no statement a directive stands for alone: nothing to group.
                Decl::Group => {}
                Decl::Evaluate(e) if !self.calls_function(unit, e) => {}
                Decl::Evaluate(e) => {
                    return Err(format!(
                        "'{e}' may reference a function, which must still be evaluated once"
                    ));
                }
                Decl::Const { name, value } => {
                    decls.push(format!("integer :: {name}"));
                    sets.push(format!("{name} = {value}"));
                }
            }
        }
        if plan
            .inserts
            .iter()
            .any(|x| matches!(x, crate::intent::Insert::GangLoop { .. }))
        {
            decls.push(format!("integer :: {}", super::GANG_VAR));
        }
        for v in &plan.scope.locals {
            let var = unit
                .and_then(|n| self.front.facts.lookup(&self.front.structure, n, v))
                .ok_or_else(|| format!("the type of '{v}' is not known"))?;
            let shape = match var.is_array() {
                true => self.constant_shape(unit, &var).ok_or_else(|| {
                    format!("a local copy of '{v}' is needed, but it is an array whose bounds are not constants")
                })?,
                false => String::new(),
            };
            decls.push(format!("{} :: {v}{shape}", local_type(&var, v)?));
        }
        if decls.is_empty() {
            return Ok(None);
        }
        let stmt = u.stmts[i]
            .as_ref()
            .ok_or("the statement it applies to is not known")?;
        if self.shares_termination(stmt.bytes()) {
            return Err(
                "its loop ends on a labelled statement that an enclosing loop ends on too".into(),
            );
        }
        let site = self.site(i);
        let sp = Spelling::of(self.src, site);
        let indent = match sp.form {
            Form::Free => indentation(self.src, site).to_string(),
            Form::Fixed => " ".repeat(6),
        };
        let mut open = format!("{indent}block{}", u.eol);
        // Right after an OpenMP construct's directive a `block` is that construct's strictly
        // structured block (OpenMP 5.1; gfortran 12 and flang-22 read it so): the construct
        // would end at `end block`, and its end directive after the statements that follow
        // would be misplaced. A `continue` first keeps it an ordinary statement of the body.
        if self.follows_block_directive(k) {
            open.insert_str(0, &format!("{indent}continue{}", u.eol));
        }
        for line in decls.iter().chain(&sets) {
            let line = format!("{indent}  {line}");
            if line.len() > limit(sp.form) {
                return Err(format!(
                    "'{}' would pass the line-length limit",
                    line.trim()
                ));
            }
            open.push_str(&line);
            open.push_str(u.eol);
        }
        Ok(Some(Block {
            open,
            close: format!("{indent}end block"),
        }))
    }

    /// Whether front site `k` follows the directive of an OpenACC block construct (`data`,
    /// a compute construct) with only blank and comment lines between: its scope would be
    /// the first statement of that construct's translation.
    fn follows_block_directive(&self, k: usize) -> bool {
        use crate::fortran::lines::{LineKind, Sentinel};
        let Some(prev) = k.checked_sub(1).map(|p| &self.front.sites[p]) else {
            return false;
        };
        prev.sentinel == Sentinel::Acc
            && matches!(
                self.front.structure.regions[k - 1].applies,
                crate::fortran::structure::Applies::Block { .. }
            )
            && self
                .front
                .lines
                .range(prev.lines.end..self.front.sites[k].lines.start)
                .all(|l| matches!(l.kind, LineKind::Blank | LineKind::Comment))
    }

    /// Whether site `i`'s new scope, if its plan has one, can be written: its `end block`
    /// needs a place after the statement, after an end directive the plan rewrites, or in
    /// the place of one removed with it.
    pub(super) fn scope_writable(
        &self,
        u: &crate::unit::Unit,
        plan: &Plan,
        i: usize,
    ) -> Result<(), String> {
        if self.block(u, plan, i)?.is_none() {
            return Ok(());
        }
        let end = u.stmts[i].as_ref().and_then(|s| s.end());
        match end {
            None if self.after_statement(u, i).is_none() => {
                Err("the end of its statement is not known".into())
            }
            None if self.shares_last_line(u, i) => Err(
                "its 'end block' would go after its statement's last line, which holds more code"
                    .into(),
            ),
            None => Ok(()),
            Some(_)
                if !matches!(
                    plan.action,
                    crate::intent::Action::Rewrite(_) | crate::intent::Action::Remove
                ) =>
            {
                Err("it needs a new scope that would end after its end directive".into())
            }
            Some(e) => {
                match self
                    .front
                    .lines
                    .range(self.site(e).lines.clone())
                    .any(|l| l.kind == crate::fortran::lines::LineKind::Preprocessor)
                {
                    true => {
                        Err("a preprocessor line stands between its end directive's lines".into())
                    }
                    false => Ok(()),
                }
            }
        }
    }

    /// The end of the last line of the statement site `i` applies to (where a line after
    /// it goes).
    pub(super) fn after_statement(&self, u: &crate::unit::Unit, i: usize) -> Option<usize> {
        let stmt = u.stmts[i].as_ref()?;
        let lines = &self.front.lines;
        let last = lines.last_starting_before(stmt.bytes().end)?;
        Some(lines.get(last).end)
    }

    /// Whether code follows the statement of site `i` on its last line (after a `;`, or
    /// continued with `&`): a line written after that line would come after that code too.
    pub(super) fn shares_last_line(&self, u: &crate::unit::Unit, i: usize) -> bool {
        let Some(stmt) = u.stmts[i].as_ref() else {
            return false;
        };
        let lines = &self.front.lines;
        let Some(last) = lines.last_starting_before(stmt.bytes().end) else {
            return false;
        };
        let l = lines.get(last);
        let from = stmt.bytes().end.clamp(l.body.start, l.body.end);
        l.amp.is_some()
            || self.src.as_bytes()[from..l.body.end]
                .iter()
                .any(|&b| !matches!(b, b' ' | b'\t' | b';'))
    }

    /// Whether expression `e` may reference a function: a name followed by `(` that is
    /// neither an array or character variable (an element, a substring) nor an intrinsic.
    fn calls_function(&self, unit: Option<usize>, e: &str) -> bool {
        let l = crate::fortran::lang::Fortran;
        l.words(e).into_iter().any(|w| {
            let at = w.as_ptr() as usize - e.as_ptr() as usize;
            if !e[at + w.len()..].trim_start().starts_with('(') {
                return false;
            }
            let var = unit.and_then(|n| self.front.facts.lookup(&self.front.structure, n, w));
            let data = var.is_some_and(|v| {
                v.at != 0
                    && (v.is_array()
                        || matches!(&v.ty, Type::Intrinsic { name, .. } if name == "character"))
            });
            !data && !l.is_library_function(w)
        })
    }

    /// The array spec of `var`'s declaration (`(0:nb-1, 3)`), where it is explicit and its
    /// bounds are constant expressions: integer literals, named constants and intrinsic
    /// functions of them, which a local copy's declaration in a `block` can repeat.
    fn constant_shape(&self, unit: Option<usize>, var: &Var) -> Option<String> {
        let lx = &self.front.lexed;
        let unit = unit?;
        if var.deferred || var.at == 0 {
            return None;
        }
        // The entity's own `(…)`, else the statement's `dimension(…)`.
        let name = lx.tokens.partition_point(|t| t.start() < var.at);
        let stmt = lx.stmt_at(var.at)?;
        let toks = lx.stmts[stmt].toks();
        let is = |i: usize, w: &str| i < toks.end && lx.is(self.src, i, w);
        if !is(name, &var.name) {
            return None;
        }
        let open = if is(name + 1, "(") {
            name + 1
        } else {
            (toks.start..name).find(|&i| is(i, "dimension") && is(i + 1, "("))? + 1
        };
        let mut depth = 0usize;
        let mut text = String::new();
        for i in open..toks.end {
            let t = lx.text(self.src, i);
            match t.as_ref() {
                "(" => depth += 1,
                ")" => depth -= 1,
                "," => {}
                _ if lx.tokens[i].kind() == crate::fortran::lex::TokKind::Int => {}
                "+" | "-" | "*" | "/" | ":" => {}
                _ if lx.tokens[i].kind() == crate::fortran::lex::TokKind::Name => {
                    let w = t.to_ascii_lowercase();
                    let constant = self
                        .front
                        .facts
                        .lookup(&self.front.structure, unit, &w)
                        .is_some_and(|c| c.parameter && c.at != 0);
                    let intrinsic = is(i + 1, "(")
                        && crate::fortran::lang::is_intrinsic_function(&w)
                        && !constant;
                    if !constant && !intrinsic {
                        return None;
                    }
                }
                _ => return None,
            }
            text.push_str(&t);
            if t == "," {
                text.push(' ');
            }
            if depth == 0 {
                return Some(text);
            }
        }
        None
    }

    /// Whether the `do` loop starting in `bytes` ends on a labelled statement that a loop
    /// starting before it ends on too (`do 10 i` / `do 10 j` / `10 continue`): a `block`
    /// around the inner loop would hold the outer loop's end.
    fn shares_termination(&self, bytes: std::ops::Range<usize>) -> bool {
        let st = &self.front.structure;
        let Some(lp) = st.loops_starting_in(bytes).first() else {
            return false;
        };
        // The first start of the loops of each end, read once.
        let first = self.first_loop_by_end.get_or_init(|| {
            let mut first = std::collections::HashMap::new();
            for o in &st.loops {
                let at = self.loop_start(o);
                first
                    .entry(o.end())
                    .and_modify(|a: &mut usize| *a = (*a).min(at))
                    .or_insert(at);
            }
            first
        });
        lp.label().is_some()
            && first
                .get(&lp.end())
                .is_some_and(|&at| at < self.loop_start(lp))
    }

    fn loop_start(&self, lp: &crate::fortran::structure::DoLoop) -> usize {
        self.front.lexed.stmts[lp.stmt()].span().start
    }

    /// [`Self::shares_termination`] as a walk of every loop (the oracle of its index).
    #[cfg(test)]
    fn shares_termination_scan(&self, bytes: std::ops::Range<usize>) -> bool {
        let st = &self.front.structure;
        let Some(lp) = st.loops_starting_in(bytes).first() else {
            return false;
        };
        lp.label().is_some()
            && st
                .loops
                .iter()
                .any(|o| o.end() == lp.end() && self.loop_start(o) < self.loop_start(lp))
    }
}

/// The type of a local copy of `var` (named `name`) as its declaration gives it; an error
/// for what a plain declaration cannot copy.
fn local_type(var: &Var, name: &str) -> Result<String, String> {
    let why = if var.pointer || var.allocatable {
        "a POINTER or ALLOCATABLE variable"
    } else if var.parameter {
        "a named constant"
    } else if var.at == 0 {
        "implicitly typed (the kind of an implicit type is not read)"
    } else {
        match &var.ty {
            Type::Intrinsic { name, kind } if name != "character" => {
                return Ok(format!("{name}{kind}"));
            }
            Type::Derived { name, class: false } => return Ok(format!("type({name})")),
            Type::Intrinsic { .. } => "of type character (its length is not read)",
            Type::Derived { .. } => "polymorphic",
            Type::Implicit(_) => "implicitly typed (the kind of an implicit type is not read)",
        }
    };
    Err(format!(
        "a local copy of '{name}' is needed, but it is {why}"
    ))
}

#[cfg(test)]
mod tests {
    /// The declared bounds of explicit-shape arrays with constant bounds, as written; none
    /// for other arrays.
    #[test]
    fn constant_shapes_are_copied_as_declared() {
        let src = "module m\n  integer, parameter :: nb = 4\n  real, parameter :: w(2) = [1.0, 2.0]\ncontains\n  subroutine s(n, d)\n    integer :: n\n    real :: d(n)\n    real(kind=8), dimension(0:nb-1) :: a, b(3)\n    integer :: c(max(nb, 2), - 1:2 * nb), e(:), f(n), g(size(w)), p(size(d)), h(nb)\n    allocatable :: e\n    dimension h(5)\n  end subroutine\nend module\n";
        let kind = crate::fortran::form::kind_of(std::path::Path::new("x.f90")).unwrap();
        let front = crate::fortran::Front::new(src, kind, |_| Default::default());
        let printer = super::super::FortranPrinter::new(src, &front);
        let unit = front.structure.units.len() - 1;
        let shape = |v: &str| {
            let var = front.facts.lookup(&front.structure, unit, v).unwrap();
            printer.constant_shape(Some(unit), &var)
        };
        assert_eq!(shape("a").as_deref(), Some("(0:nb-1)"));
        assert_eq!(shape("b").as_deref(), Some("(3)"));
        assert_eq!(shape("c").as_deref(), Some("(max(nb, 2), -1:2*nb)"));
        assert_eq!(shape("g").as_deref(), Some("(size(w))"));
        for v in ["d", "e", "f", "p"] {
            assert_eq!(shape(v), None, "{v}");
        }
    }

    /// The index of first starts per loop end answers as the walk of every loop, for
    /// labelled loops sharing their end, nested, unlabelled and in several units.
    #[test]
    fn shares_termination_matches_the_walk_of_every_loop() {
        let mut src = String::new();
        for u in 0..3 {
            src.push_str(&format!(
                "subroutine s{u}(n, a)\n  integer :: n, i, j, k\n  real :: a(n)\n"
            ));
            for l in 1..12 {
                let l = 10 * l;
                match l % 4 {
                    0 => src.push_str(&format!("  do {l} i = 1, n\n  do {l} j = 1, n\n  do {l} k = 1, n\n    a(i) = j\n{l} continue\n")),
                    1 => src.push_str(&format!("  do {l} i = 1, n\n    a(i) = 1\n{l} continue\n")),
                    2 => src.push_str(&format!("  do i = 1, n\n  do {l} j = 1, n\n    a(i) = j\n{l} continue\n  end do\n")),
                    _ => src.push_str("  do i = 1, n\n    a(i) = 2\n  end do\n"),
                }
            }
            src.push_str("end subroutine\n");
        }
        let kind = crate::fortran::form::kind_of(std::path::Path::new("x.f90")).unwrap();
        let front = crate::fortran::Front::new(&src, kind, |_| Default::default());
        let printer = super::super::FortranPrinter::new(&src, &front);
        let mut shared = 0;
        let spans: Vec<_> = (front.structure.loops.iter())
            .map(|lp| front.lexed.stmts[lp.stmt()].span())
            .collect();
        assert!(spans.len() > 60, "{}", spans.len());
        for (k, s) in spans.iter().enumerate() {
            for bytes in [
                s.clone(),
                s.start..spans.last().unwrap().end,
                s.end..s.end + 1,
            ] {
                let new = printer.shares_termination(bytes.clone());
                assert_eq!(new, printer.shares_termination_scan(bytes), "loop {k}");
                shared += usize::from(new);
            }
        }
        assert!(shared > 10, "{shared}");
    }
}
