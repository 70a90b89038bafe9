//! Parameters the syntax cannot type: named in a function's parameter list, but declared by a
//! macro the file does not define (PolyBench's `DATA_TYPE POLYBENCH_2D(A, NI, NJ, ni, nj)`
//! when `polybench.h` is not read) or with a type of unknown kind.

use super::{Decl, Syntax};
use crate::semantic::facts::VarKind;

impl Syntax<'_> {
    /// Whether `name`, which resolves to `decl` at token `k`, is a parameter of the function
    /// definition around `k` of a type not known here: named in its parameter list with no
    /// declaration read, or declared there with a type of unknown kind.
    pub(super) fn unknown_parameter(&self, name: &str, decl: Option<&Decl>, k: usize) -> bool {
        if decl.is_some_and(|d| d.ty.kind != VarKind::Other) {
            return false;
        }
        let Some((open, close)) = self.parameter_list(k) else {
            return false;
        };
        match decl {
            Some(d) => {
                // Words alone before the name (`vec_t a`, `const real_t x`): a type name
                // the file does not define, not a reference or a template.
                let at = self.toks.partition_point(|t| t.start() < d.offset);
                (open < at && at < close)
                    && (open + 1..at)
                        .rev()
                        .take_while(|&j| self.text(j) != ",")
                        .all(|j| self.is_ident(j))
            }
            None => (open + 1..close).any(|j| self.is_ident(j) && self.text(j) == name),
        }
    }

    /// The parentheses around the parameters of the function whose body holds token `k`: the
    /// outermost block around it that is not a namespace or aggregate body, after `name(...)`.
    fn parameter_list(&self, k: usize) -> Option<(usize, usize)> {
        let mut body = None;
        let mut b = self.block(k);
        while let Some(o) = b {
            if self.is_namespace_body(o) || self.is_aggregate_body(o) {
                break;
            }
            body = Some(o);
            b = self.block(o);
        }
        let mut close = body?.checked_sub(1)?;
        while matches!(
            self.text(close),
            "const" | "noexcept" | "override" | "final"
        ) {
            close = close.checked_sub(1)?;
        }
        let open = self.pair(close).filter(|_| self.text(close) == ")")?;
        let callee = open.checked_sub(1)?;
        (self.is_ident(callee)
            && !matches!(
                self.text(callee),
                "if" | "while" | "for" | "switch" | "catch"
            ))
        .then_some((open, close))
    }
}
