//! `host_data use_device(…) if_present` in Fortran. The shared plan gives each item a
//! `target data` of its own whose `if(omp_target_is_present(…))` keeps the item's host
//! address when its data is absent: the constructs nest, the others before the directive's
//! own, and the end directive closes all of them. Fortran tests an item's address with
//! `c_loc(item)` (a `type(c_ptr)` item is the address itself), which needs the TARGET or
//! POINTER attribute; `c_loc` and `omp_lib` are brought into scope with the runtime's `use`
//! lines.

use crate::fortran::queues::Shape;

/// Whether directive `d` is a `host_data … if_present`.
pub fn is_if_present(d: &crate::directive::Directive) -> bool {
    d.name == "host_data" && d.find("if_present").is_some()
}

impl super::FortranPrinter<'_> {
    /// Why a `host_data … if_present` at site `i` cannot be written (offset, reason): an
    /// item whose address `c_loc` cannot take.
    pub(super) fn if_present_refusal(
        &self,
        u: &crate::unit::Unit,
        i: usize,
        d: &crate::directive::Directive,
    ) -> Option<(usize, String)> {
        if !is_if_present(d) {
            return None;
        }
        let st = &self.front.structure;
        let unit = st.regions[self.acc_sites[i]].unit();
        let why = d
            .all("use_device")
            .flat_map(|c| c.items())
            .find_map(|it| {
                let name = it.text.trim();
                if !crate::fortran::lang::Fortran.is_identifier(name) {
                    return Some(format!("'{name}' is not a variable name"));
                }
                let Some(v) = unit.and_then(|k| self.front.facts.lookup(st, k, name)) else {
                    return Some(format!("'{name}' has no declaration in this file, so whether it is a 'type(c_ptr)' (tested as it is) or data whose address 'c_loc' takes is not known"));
                };
                let addressable =
                    v.target || v.pointer || crate::fortran::site_facts::is_c_ptr(&v);
                (!addressable).then(|| format!("'c_loc({name})' needs the TARGET or POINTER attribute, which '{name}' does not have here; add 'target' to its declaration"))
            })?;
        Some((
            u.at(i),
            format!(
                "'host_data … if_present' tests each item with 'omp_target_is_present', and {why}; the directive is left unchanged"
            ),
        ))
    }

    /// The directives a translated `host_data … if_present` becomes: the other items'
    /// `target data` before its own, one `end target data` per construct at its end.
    pub(super) fn if_present_shape(
        &self,
        d: &crate::directive::Directive,
        plan: &crate::intent::Plan,
        rw: &crate::intent::Rewrite,
        i: usize,
    ) -> Option<Shape> {
        if !is_if_present(d) {
            return None;
        }
        let before: Vec<String> = plan.before.iter().map(|o| o.text("do")).collect();
        let close = vec!["end target data".to_string(); before.len() + 1];
        Some(Shape {
            before,
            main: Self::render(d, rw, &self.site(i).text),
            after: Vec::new(),
            after_stmt: Vec::new(),
            close,
        })
    }
}
