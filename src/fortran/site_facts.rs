//! The semantic facts of a Fortran file in the seam's terms ([`FileFacts`]): for each
//! directive, the variables its region uses (from [`super::facts::uses`]) with their types
//! as the declarations say (from [`super::facts::Facts::lookup`]), the types of the names in
//! its clauses, and the shape of the loop it applies to. The shared decisions (implicit
//! data, private scalars, reductions) read these as they read C's.

use super::Front;
use super::facts::{Type, Var, uses};
use super::structure::Applies;
use crate::facts::{
    FileFacts, LoopShape, Mode, RegionVar, SiteFacts, Sites, Types, VarKind, VarType,
};
use crate::unit::Unit;

/// How the facts were found, in reports (syntactic mode).
pub const MODE: &str = "Fortran declarations";

/// The facts of every parsed directive of `u`; `acc_sites[i]` is the front end's index of
/// seam site `i`. `flang_inputs`: what flang read besides the file (`Mode::Flang`).
pub fn file_facts(
    src: &str,
    front: &Front,
    acc_sites: &[usize],
    u: &Unit,
    mode: &Mode,
    flang_inputs: &crate::facts::Inputs,
) -> FileFacts {
    // Sized up front: growing a vector of 100,000 sites' facts copies it and holds both.
    let mut starts = Vec::with_capacity(acc_sites.len());
    let mut sites = Vec::with_capacity(acc_sites.len());
    // The sites' variables of one type share it.
    let mut types = Types::default();
    // A site's variables are gathered here, then moved into a vector of their number: one
    // grown from empty holds room for 4 (about 340 bytes a site unused for two variables).
    let mut vars: Vec<RegionVar> = Vec::new();
    for (i, &k) in acc_sites.iter().enumerate() {
        let Some(d) = u.dir(i) else { continue };
        let st = &front.structure;
        let region = &st.regions[k];
        let Some(unit) = region.unit() else { continue };
        let stmts = match &region.applies {
            Applies::Block { body, .. } | Applies::Atomic { body, .. } => body.clone(),
            Applies::Loop { loops, .. } => match loops.clone().next() {
                Some(l) => {
                    let lp = &st.loops[l];
                    lp.stmt()..lp.end().map_or(lp.body().end, |e| e + 1)
                }
                None => 0..0,
            },
            _ => 0..0,
        };
        let mut f = SiteFacts {
            exact: false,
            stmt: u.stmts[i].as_ref().map(|s| s.bytes()),
            ..SiteFacts::default()
        };
        for c in &d.clauses {
            for item in c.items() {
                let Some(n) = super::lang::Fortran.base_name(&item.text) else {
                    continue;
                };
                if let Some(v) = front.facts.lookup(st, unit, n) {
                    f.names.insert(n.to_string(), types.share(clause_type(&v)));
                }
            }
        }
        // The control variables of the `do` loops in the region: predetermined private in
        // OpenMP's Fortran (in the innermost parallel, teams or task-generating construct,
        // and in the loop construct they are associated with), private in OpenACC too.
        let controls: Vec<&str> = st
            .loops_in(stmts.clone())
            .iter()
            .flat_map(|lp| {
                lp.var()
                    .into_iter()
                    .chain(lp.concurrent().iter().map(|c| c.var.as_str()))
            })
            .collect();
        for us in uses(src, &front.lexed, st, stmts.clone()) {
            if controls.contains(&us.name.as_str()) {
                continue;
            }
            let Some(v) = front.facts.lookup(st, unit, &us.name) else {
                continue;
            };
            let declared = !(v.at == 0 && matches!(v.ty, Type::Implicit(_)));
            // A name followed by `(` that no declaration makes an array is a function.
            if us.subscripted && !(declared && v.is_array()) {
                continue;
            }
            vars.push(RegionVar::new(
                spelled(src, us.at, &us.name),
                types.share(if declared || matches!(v.ty, Type::Implicit(Some(_))) {
                    var_type(&v)
                } else {
                    VarType::unknown()
                }),
                declared.then_some(v.at),
                us.at,
                // Grown as the uses were read (room for 4 or more, for one write often):
                // kept without the spare room.
                us.writes,
            ));
        }
        f.vars = Vec::with_capacity(vars.len());
        f.vars.append(&mut vars);
        if u.is_loop(i)
            && let Some(fl) = u.stmts[i].as_ref().and_then(|s| s.for_loop.as_ref())
        {
            f.loop_shape = Some(LoopShape {
                var: fl.var.as_deref().map(String::from),
                declared: false,
                depth: u.syntax.nest_depth(fl.for_tok(), 64).max(1),
            });
        }
        starts.push(u.sites[i].span().start);
        sites.push(f);
    }
    FileFacts {
        mode: mode.clone(),
        sites: Sites::new(starts, sites),
        diags: Vec::new(),
        rejected: Vec::new(),
        fell_back: 0,
        // flang's facts depend on the `.mod` files, module sources and includes it read,
        // and on paths staying absent (`super::flang::Symbols::inputs`): the cache keeps the
        // result only with all of them. A failed run may pass once modules are built: that
        // result is not kept.
        inputs: match mode {
            Mode::Flang { .. } => flang_inputs.clone(),
            Mode::Syntactic { reason } => crate::facts::Inputs {
                incomplete: reason.starts_with(&format!("{MODE}; flang: ")),
                ..Default::default()
            },
            _ => Default::default(),
        },
        header_macros: Vec::new(),
    }
}

/// A name as its first mention at `at` spells it (Fortran names are case-insensitive; the
/// clauses are compared with the source's spelling).
pub fn spelled(src: &str, at: usize, lower: &str) -> String {
    src.get(at..at + lower.len())
        .filter(|s| s.eq_ignore_ascii_case(lower))
        .map_or_else(|| lower.to_string(), str::to_string)
}

/// The type of a name in a clause. A POINTER or ALLOCATABLE scalar names data of its own
/// there, with a device address (mapped whole; `use_device` gives `use_device_addr`), as an
/// array does: not a value that `firstprivate` copies. A `type(c_ptr)` scalar (neither) is
/// a C pointer: `use_device` gives `use_device_ptr` (the device address of what it points
/// to), `deviceptr` `is_device_ptr`.
fn clause_type(v: &Var) -> VarType {
    let mut t = var_type(v);
    if !v.is_array() && (v.pointer || v.allocatable) {
        t.kind = VarKind::Array { extent: None };
    } else if is_c_ptr(v) {
        t.kind = VarKind::Pointer;
    }
    t
}

/// A `type(c_ptr)` scalar variable (not a POINTER or ALLOCATABLE one, which names a
/// descriptor).
pub fn is_c_ptr(v: &Var) -> bool {
    !v.is_array()
        && !v.pointer
        && !v.allocatable
        && matches!(&v.ty, Type::Derived { name, class: false } if name == "c_ptr")
}

/// A declaration's type as the shared decisions classify variables.
fn var_type(v: &Var) -> VarType {
    let kind = if v.is_array() {
        VarKind::Array { extent: None }
    } else {
        match &v.ty {
            Type::Derived { .. } => VarKind::Struct,
            Type::Intrinsic { .. } | Type::Implicit(Some(_)) => VarKind::Scalar,
            Type::Implicit(None) => VarKind::Other,
        }
    };
    VarType {
        kind,
        is_const: v.parameter,
        incomplete: false,
        restrict: false,
        dims: v.rank.min(u8::MAX as usize) as u8,
        extents: vec![None; v.rank],
        param_dims: None,
    }
}
