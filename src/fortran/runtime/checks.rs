//! Which calls and arguments a Fortran runtime translation accepts: a `call` statement of its
//! own lines, an addressable argument, a mappable one.

use super::Cx;
use crate::fortran::lex::{Stmt, TokKind};
use crate::fortran::lines::LineKind;
use crate::fortran::stmt::Toks;
use std::ops::Range;

impl Cx<'_> {
    /// The token cursor of the statement that holds token `tok`.
    pub(super) fn stmt_toks(&self, tok: usize) -> Toks<'_> {
        let lx = self.lx();
        let si = lx.stmt_at(lx.tokens[tok].start()).unwrap_or(0);
        Toks::new(self.src, lx, &lx.stmts[si])
    }

    /// The lines of statement `si`, when a directive may replace it or it may be removed:
    /// a `call` statement alone on its lines, without a label, comments only on its last line.
    pub(super) fn own_lines(
        &self,
        si: usize,
        whole: bool,
        action: bool,
    ) -> Result<Range<usize>, String> {
        let lx = self.lx();
        let s = &lx.stmts[si];
        if action {
            return Err("it becomes a directive (or is removed), which cannot be the action of an 'if' statement; write 'if (…) then', the call, 'end if'".into());
        }
        if !whole || s.label.is_some() {
            return Err("it becomes a directive (or is removed), so it must be a 'call' statement of its own, without a label".into());
        }
        let shares = |o: Option<&Stmt>| {
            o.is_some_and(|o| o.lines().start < s.lines().end && s.lines().start < o.lines().end)
        };
        if shares(si.checked_sub(1).and_then(|p| lx.stmts.get(p))) || shares(lx.stmts.get(si + 1)) {
            return Err(
                "it becomes a directive (or is removed), so it must be alone on its line".into(),
            );
        }
        let ls = self.lines();
        let lines = s.lines();
        let clean = lines
            .clone()
            .all(|k| ls.get(k).kind == LineKind::Code && ls.get(k).ignored.is_none())
            && (lines.start..lines.end - 1).all(|k| ls.get(k).comment.is_none());
        if !clean {
            return Err("it becomes a directive, and its lines hold comments or other lines between them; write the call on one line".into());
        }
        Ok(lines)
    }

    /// `c_loc` of the argument is valid: a variable or an array element (no section), with
    /// the TARGET or POINTER attribute.
    pub(super) fn addressable(
        &self,
        arg: &Range<usize>,
        unit: Option<usize>,
    ) -> Result<(), String> {
        let t = self.stmt_toks(arg.start);
        if t.designator(arg.start) != Some(arg.end) {
            return Err(
                "OpenMP tests an address (c_loc), and the argument is not a variable".into(),
            );
        }
        if (arg.start..arg.end).any(|k| self.text(k) == ":") {
            return Err("OpenMP tests an address (c_loc), and c_loc takes no array section; test its first element".into());
        }
        let base = self.lx().lower(self.src, arg.start);
        let var = unit.and_then(|u| self.front.facts.lookup(&self.front.structure, u, &base));
        if !var.is_some_and(|v| v.target || v.pointer) {
            return Err(format!(
                "OpenMP tests an address (c_loc), and c_loc needs the TARGET or POINTER attribute, which '{base}' does not have here; add 'target' to its declaration"
            ));
        }
        Ok(())
    }

    /// The argument can be a map or update list item: a variable, an element, a
    /// contiguous section or a component (no stride).
    pub(super) fn mappable(&self, arg: &Range<usize>) -> Result<(), String> {
        let t = self.stmt_toks(arg.start);
        if t.designator(arg.start) != Some(arg.end) {
            return Err("the argument is not a variable, an array section or a component, which a map clause needs".into());
        }
        let mut colons = 0;
        for k in arg.clone() {
            match self.text(k).as_str() {
                "," | "(" => colons = 0,
                ":" => colons += 1,
                "::" => colons += 2,
                _ => {}
            }
            if colons > 1 {
                return Err("a section with a stride is not contiguous, which OpenMP 5.0 maps only in part; map the enclosing contiguous section".into());
            }
        }
        Ok(())
    }
}

impl Cx<'_> {
    /// The arguments can be copied into the translation: each on one line, by position,
    /// calling no runtime routine.
    pub(super) fn plain_arguments(&self, args: &[Range<usize>]) -> Result<(), String> {
        self.plain_layout(args)?;
        if let Some(k) = self.runtime_in(args) {
            return Err(format!(
                "its arguments call '{}'; assign that call's value to a variable first",
                self.text(k)
            ));
        }
        Ok(())
    }

    /// Each argument is on one line and passed by position.
    pub(super) fn plain_layout(&self, args: &[Range<usize>]) -> Result<(), String> {
        let src = self.src;
        if args
            .iter()
            .any(|a| src[self.span(a)].contains(['\n', '\r', '&', '!']))
        {
            return Err("an argument is continued over lines or holds a comment; write the call on one line".into());
        }
        if args.iter().any(|a| {
            a.len() >= 2
                && self.text(a.start + 1) == "="
                && self.lx().tokens[a.start].kind() == TokKind::Name
        }) {
            return Err(
                "keyword arguments are not translated; pass the arguments by position".into(),
            );
        }
        Ok(())
    }

    /// The first token of `args` that names a runtime routine (a call in an argument).
    pub(super) fn runtime_in(&self, args: &[Range<usize>]) -> Option<usize> {
        args.iter().flat_map(|a| a.clone()).find(|&k| {
            self.lx().tokens[k].kind() == TokKind::Name
                && self
                    .opts
                    .tables
                    .runtime(&self.lx().lower(self.src, k))
                    .is_some()
        })
    }
}
