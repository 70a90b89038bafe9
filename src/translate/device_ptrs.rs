//! `deviceptr`: the items' addresses are device addresses. In C they are pointers, which
//! `is_device_ptr` takes. A Fortran item is an array or a scalar unless it is a
//! `type(c_ptr)`: OpenMP 5.1 restricts `is_device_ptr` to C_PTR there (4.5/5.0 allowed dummy
//! arguments only) and spells the device address of any other variable `has_device_addr`,
//! which gfortran 12 and flang-22 take (the 5.0 profile's compilers too, as OpenMP 5.0 has
//! no clause for a variable that is not a dummy argument).

use super::Unit;
use crate::diag::Diagnostic;
use crate::directive::Clause;
use crate::facts::VarKind;
use crate::intent::{ClauseOp, OmpClause};
use crate::rules::id;

/// The OpenMP clauses for `deviceptr` clause `c` of site `i`.
pub fn clause(u: &Unit, i: usize, c: &Clause, diags: &mut Vec<Diagnostic>) -> ClauseOp {
    let facts = u.site_facts(i);
    let (addrs, ptrs): (Vec<&str>, Vec<&str>) = c.items().map(|x| x.text.trim()).partition(|n| {
        u.lang.typed_device_pointers()
            && matches!(
                facts.and_then(|f| f.type_of(n)).map(|t| &t.kind),
                Some(VarKind::Array { .. } | VarKind::Scalar)
            )
    });
    // `is_device_ptr` makes the pointer firstprivate in the region.
    for &n in &ptrs {
        if let Some(w) = facts
            .and_then(|f| f.var(n))
            .and_then(|v| v.writes().first())
        {
            diags.push(Diagnostic::new(*w, id::DEVICEPTR_PRIVATE, format!("'deviceptr({n})' becomes 'is_device_ptr({n})', which gives the region its own copy of the pointer '{n}': there '&{n}' is not the address of the variable outside, and assignments to '{n}' do not reach it")));
        }
    }
    // One kind only: the list keeps its spelling.
    let list = |names: &[&str]| match addrs.is_empty() || ptrs.is_empty() {
        true => c.list_text().to_string(),
        false => names.join(", "),
    };
    let mut parts = Vec::new();
    if !ptrs.is_empty() {
        parts.push(OmpClause::new("is_device_ptr", list(&ptrs)));
    }
    if !addrs.is_empty() {
        parts.push(OmpClause::new("has_device_addr", list(&addrs)));
    }
    match parts.len() {
        1 => ClauseOp::to(parts.remove(0)),
        _ => ClauseOp::Replace(parts),
    }
}
