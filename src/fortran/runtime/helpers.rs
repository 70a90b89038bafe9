//! Fortran helpers: small procedures the translation adds where OpenMP has no inline
//! counterpart of a routine (`acc_is_present` of any variable, the byte-count forms of the
//! data routines, `acc_async_test`). A program unit gets the helpers its calls name as
//! internal procedures of the outermost unit holding the calls (a module gets private
//! module procedures), so every procedure inside it reaches them by host association and
//! no two files of a program define the same external symbol. The text is written to be
//! both fixed and free form (statements from column 7, no continuation, lines of at most
//! 72 columns); a helper already there (a second run) is not added again.
//!
//! A helper takes the address of its actual argument through an assumed-type,
//! assumed-rank dummy with TARGET (`type(*), dimension(..), target`): no copy is made, and
//! `c_loc` gives the address of the caller's data whatever its attributes. Data that is not
//! contiguous stops the program with a message (OpenACC routines take contiguous bytes);
//! a section seen not to be contiguous is refused here.

use super::Cx;
use crate::edit::Edit;
use crate::fortran::stmt::UnitKind;
use crate::rules::{RuntimeRule, id};
use std::ops::Range;

/// How a call becomes a helper call.
pub(super) struct Route {
    /// The replacement of `name(args)`; `{k}` is argument k.
    pub template: String,
    /// The helpers it calls (each with the helpers that one calls).
    pub helpers: Vec<String>,
    /// Argument 0 is data whose address the helper takes.
    pub address: bool,
}

/// The helper `route` calls with the call's `n` arguments as they are, in order
/// (`helper({0}, {1})`), if it does: such a call can keep its arguments and change its
/// name alone.
pub(super) fn keeps_arguments(route: &Route, n: usize) -> Option<&str> {
    let (helper, rest) = route.template.split_once('(')?;
    let args: Vec<String> = (0..n).map(|k| format!("{{{k}}}")).collect();
    (!route.address && rest == format!("{})", args.join(", "))).then_some(helper)
}

/// The stem of the byte-count helper of a data routine: `acc_copyin` → `copyin`.
fn stem(name: &str) -> &str {
    name.strip_prefix("acc_").unwrap_or(name)
}

impl Cx<'_> {
    /// The helper translation of a call to `r` with `args`, where there is one.
    pub(super) fn helper_route(
        &self,
        r: &RuntimeRule,
        args: &[Range<usize>],
        unit: Option<usize>,
    ) -> Option<Route> {
        if let Some(route) = self.device_route(r, args) {
            return Some(route);
        }
        let name = r.name.as_str();
        let n = args.len();
        match name {
            // A variable with TARGET or POINTER keeps the inline form.
            "acc_is_present" if n == 1 && self.addressable(&args[0], unit).is_err() => {
                Some(Route {
                    template: "acc2omp_is_present({0}, storage_size({0}))".into(),
                    helpers: vec![
                        "acc2omp_is_present".into(),
                        "acc2omp_is_present_bytes".into(),
                    ],
                    address: true,
                })
            }
            "acc_is_present" if n == 2 => Some(Route {
                template: "acc2omp_is_present_bytes({0}, int({1}, 8))".into(),
                helpers: vec!["acc2omp_is_present_bytes".into()],
                address: true,
            }),
            "acc_async_test" if n == 1 => Some(Route {
                template: "acc2omp_async_test()".into(),
                helpers: vec!["acc2omp_async_test".into()],
                address: false,
            }),
            "acc_async_test_all" if n == 0 => Some(Route {
                template: "acc2omp_async_test()".into(),
                helpers: vec!["acc2omp_async_test".into()],
                address: false,
            }),
            _ => {
                let d = r.fortran_directive.as_ref()?;
                let nargs = r.fortran_args?;
                (n == nargs + 1 && d.lines().iter().any(|l| l.contains("{0}"))).then(|| {
                    let h = format!("acc2omp_{}_bytes", stem(name));
                    Route {
                        template: format!("{h}({{0}}, int({{1}}, 8))"),
                        helpers: vec![h],
                        address: true,
                    }
                })
            }
        }
    }

    /// Rename the routine at `name_span` to `helper`, the arguments left as they are (for
    /// a `route` that [`keeps_arguments`]); false when its helpers have no home.
    pub(super) fn helper_rename(
        &mut self,
        name_span: Range<usize>,
        helper: String,
        route: Route,
        r: &RuntimeRule,
        unit: Option<usize>,
    ) -> bool {
        let at = name_span.start;
        let home = match self.helper_home(unit) {
            Ok(h) => h,
            Err(why) => {
                self.refuse(at, id::RUNTIME_FORTRAN_HELPER, &r.name, unit, why);
                return false;
            }
        };
        self.exprs.push(Edit::replace(name_span, helper));
        self.adopt(home, route.helpers, r, at);
        true
    }

    /// Give `home` the `helpers` a translated call at `at` names, and report the call where
    /// its routine asks for a note.
    fn adopt(&mut self, home: usize, helpers: Vec<String>, r: &RuntimeRule, at: usize) {
        for h in helpers {
            if !self.helpers.contains(&(home, h.clone())) {
                self.helpers.push((home, h));
            }
        }
        if r.report {
            let doc = if r.name.starts_with("acc_async_test") {
                "OpenMP cannot test a queue without waiting: the helper acc2omp_async_test waits for every queue (a taskwait) and returns .true., which is what the test returns once the work is complete".to_string()
            } else {
                r.doc.clone()
            };
            self.diags
                .push(crate::diag::Diagnostic::new(at, r.rule_id, doc));
        }
    }

    /// Replace the call at `span` by the helper call of `route`.
    pub(super) fn helper_call(
        &mut self,
        span: Range<usize>,
        args: &[Range<usize>],
        route: Route,
        r: &RuntimeRule,
        unit: Option<usize>,
    ) -> bool {
        let at = span.start;
        let name = r.name.as_str();
        let texts: Vec<String> = args
            .iter()
            .map(|a| self.src[self.span(a)].trim().to_string())
            .collect();
        let Some(renamed) = self.renamed_arguments(&texts, unit) else {
            let why = "its arguments name OpenACC constants, which the translation declares in the outermost program unit, and that unit has no place for them".to_string();
            self.refuse(at, id::RUNTIME_FORTRAN_HELPER, name, unit, why);
            return false;
        };
        let used = |k: usize| route.template.contains(&format!("{{{k}}}"));
        if let Some(k) = (0..args.len()).find(|&k| !used(k) && self.impure(&args[k], unit)) {
            let why = format!(
                "its argument '{}' may have side effects, and the translation drops it; evaluate it in a statement of its own",
                texts[k]
            );
            self.refuse(at, id::RUNTIME_SIDE_EFFECTS, name, unit, why);
            return false;
        }
        if route.address
            && let Err(why) = self.contiguous(&args[0])
        {
            self.refuse(at, id::RUNTIME_FORTRAN_HELPER, name, unit, why);
            return false;
        }
        let home = match self.helper_home(unit) {
            Ok(h) => h,
            Err(why) => {
                self.refuse(at, id::RUNTIME_FORTRAN_HELPER, name, unit, why);
                return false;
            }
        };
        let mut text = route.template.clone();
        for (k, a) in renamed.iter().enumerate() {
            text = text.replace(&format!("{{{k}}}"), a);
        }
        self.exprs.push(Edit::replace(span, text));
        self.adopt(home, route.helpers, r, at);
        true
    }

    /// The unit whose procedures the helpers of a call in `unit` become: the outermost
    /// host (a program, an external procedure or a module).
    pub(super) fn helper_home(&self, unit: Option<usize>) -> Result<usize, String> {
        let Some(u) = unit else {
            return Err("it is outside a program unit".into());
        };
        let home = *self.hosts(u).last().expect("hosts start with the unit");
        let unit = &self.front.structure.units[home];
        if matches!(unit.kind, UnitKind::Submodule | UnitKind::BlockData) || unit.interface {
            return Err("its translation calls a helper procedure, which the translation adds to the outermost program unit, and that unit is a submodule".into());
        }
        let Some(end) = unit.end else {
            return Err("its translation calls a helper procedure, which goes before the end statement of the outermost program unit, and that unit has none".into());
        };
        for si in [Some(end), unit.contains].into_iter().flatten() {
            if self.line_start(si).is_none() {
                return Err("its translation calls a helper procedure, which goes before the end statement of the outermost program unit, and that statement does not begin its line".into());
            }
        }
        Ok(home)
    }

    /// The start of the line statement `si` begins, when only blanks are before it.
    fn line_start(&self, si: usize) -> Option<usize> {
        let s = &self.lx().stmts[si];
        let line = &self.front.lines.get(s.lines().start);
        self.src[line.start..s.span().start]
            .trim()
            .is_empty()
            .then_some(line.start)
            .filter(|_| s.label.is_none())
    }

    /// Argument `arg` is data the helper may take the address of: a variable, an element
    /// or a section contiguous by its form (full leading dimensions, one range, elements
    /// after it).
    fn contiguous(&self, arg: &Range<usize>) -> Result<(), String> {
        let t = self.stmt_toks(arg.start);
        if t.designator(arg.start) != Some(arg.end) {
            return Err("its translation passes the data to a helper procedure, which takes its address, and the argument is not a variable".into());
        }
        let toks: Vec<String> = arg.clone().map(|k| self.text(k)).collect();
        if !toks.iter().any(|x| x == ":" || x == "::") {
            return Ok(());
        }
        let not = Err("its translation passes the data's address to a helper procedure, and this section is not contiguous (only leading dimensions ':', then one range, then single elements are); pass a contiguous section or the first element and a byte count".to_string());
        // The subscripts of the last part.
        if toks.last().map(String::as_str) != Some(")") {
            return not;
        }
        let mut depth = 0;
        let mut open = None;
        for (k, x) in toks.iter().enumerate().rev() {
            match x.as_str() {
                ")" => depth += 1,
                "(" => {
                    depth -= 1;
                    if depth == 0 {
                        open = Some(k);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(open) = open else { return not };
        if toks[..open].iter().any(|x| x == ":" || x == "::") {
            return not;
        }
        let mut subs: Vec<Vec<&str>> = vec![Vec::new()];
        let mut depth = 0;
        for x in &toks[open + 1..toks.len() - 1] {
            match x.as_str() {
                "(" | "[" | "(/" => depth += 1,
                ")" | "]" | "/)" => depth -= 1,
                "," if depth == 0 => {
                    subs.push(Vec::new());
                    continue;
                }
                _ => {}
            }
            subs.last_mut().expect("one at least").push(x);
        }
        let colons = |s: &[&str]| {
            s.iter().filter(|x| **x == ":").count() + 2 * s.iter().filter(|x| **x == "::").count()
        };
        if subs.iter().any(|s| colons(s) > 1) {
            return not;
        }
        let last = subs
            .iter()
            .rposition(|s| colons(s) == 1)
            .expect("a section");
        if subs[..last].iter().all(|s| s.as_slice() == [":"]) {
            Ok(())
        } else {
            not
        }
    }

    /// Insert the helpers the calls name into their units: before the `end` statement (a
    /// `contains` first where the unit has none; in a module, `private` statements).
    pub(super) fn add_helpers(&mut self) {
        let mut homes: Vec<usize> = self.helpers.iter().map(|h| h.0).collect();
        homes.sort();
        homes.dedup();
        let structure = &self.front.structure;
        for home in homes {
            let unit = &structure.units[home];
            let have: Vec<&str> = structure
                .units
                .iter()
                .filter(|c| c.parent == Some(home) && !c.interface)
                .filter_map(|c| c.name.as_deref())
                .collect();
            let mut names: Vec<String> = Vec::new();
            for (_, h) in self.helpers.iter().filter(|h| h.0 == home) {
                for d in with_callees(h) {
                    if !names.contains(&d) && !have.contains(&d.as_str()) {
                        names.push(d);
                    }
                }
            }
            if names.is_empty() {
                continue;
            }
            let eol = self.eol;
            let mut text = String::new();
            for n in &names {
                for line in self.definition(n).lines() {
                    text.push_str(line);
                    text.push_str(eol);
                }
            }
            let end = unit.end.and_then(|e| self.line_start(e)).expect("checked");
            let contains = unit.contains.and_then(|c| self.line_start(c));
            if unit.kind == UnitKind::Module {
                let private: String = names
                    .iter()
                    .map(|n| format!("      private :: {n}{eol}"))
                    .collect();
                self.edits
                    .push(Edit::insert(contains.unwrap_or(end), private));
            }
            if contains.is_none() {
                text = format!("      contains{eol}{text}");
            }
            self.edits.push(Edit::insert(end, text));
        }
    }
}

/// `name` and the helpers it calls, callees last.
fn with_callees(name: &str) -> Vec<String> {
    let mut out = vec![name.to_string()];
    out.extend(super::devices::callees(name).iter().map(|c| c.to_string()));
    if name == "acc2omp_is_present" {
        out.push("acc2omp_is_present_bytes".into());
    }
    if let Some(s) = name.strip_suffix("_bytes")
        && name != "acc2omp_is_present_bytes"
    {
        out.push(format!("{s}_bytes_map"));
    }
    out
}

impl Cx<'_> {
    /// The Fortran text of helper `name` (its lines end with `\n`).
    fn definition(&self, name: &str) -> String {
        if let Some(d) = super::devices::definition(name) {
            return d.into();
        }
        match name {
            "acc2omp_is_present" => IS_PRESENT.into(),
            "acc2omp_is_present_bytes" => IS_PRESENT_BYTES.into(),
            "acc2omp_async_test" => ASYNC_TEST.into(),
            _ => {
                let (stem, map) = match name.strip_suffix("_map") {
                    Some(s) => (s, true),
                    None => (name, false),
                };
                let routine = format!(
                    "acc_{}",
                    stem.trim_start_matches("acc2omp_")
                        .trim_end_matches("_bytes")
                );
                let lines = self
                    .opts
                    .tables
                    .runtime(&routine)
                    .and_then(|r| r.fortran_directive.as_ref())
                    .map(|d| d.lines().to_vec())
                    .unwrap_or_default();
                if map {
                    let dirs: String = lines
                        .iter()
                        .map(|l| format!("!$omp {}\n", l.replace("{0}", "b")))
                        .collect();
                    format!(
                        "! acc2omp: the directives of {routine} on the n bytes b
      subroutine {name}(b, n)
      implicit none
      integer(8), intent(in) :: n
      character :: b(n)
{dirs}      end subroutine {name}
"
                    )
                } else {
                    format!(
                        "! acc2omp: {routine}(a, n): the n bytes at a
      subroutine {name}(a, n)
      use, intrinsic :: iso_c_binding
      implicit none
      type(*), dimension(..), target :: a
      integer(8), intent(in) :: n
      character, pointer, contiguous :: b(:)
      if (.not. is_contiguous(a)) error stop 'acc2omp: not contiguous'
      call c_f_pointer(c_loc(a), b, [n])
      call {name}_map(b, n)
      end subroutine {name}
"
                    )
                }
            }
        }
    }
}

const IS_PRESENT: &str = "! acc2omp: acc_is_present(a): the first and the last byte of a (bits:
! the size of an element) are present on the default device
      logical function acc2omp_is_present(a, bits)
      implicit none
      type(*), dimension(..), target :: a
      integer, intent(in) :: bits
      integer(8) :: n
      n = size(a, kind=8) * bits / 8
      acc2omp_is_present = acc2omp_is_present_bytes(a, n)
      end function acc2omp_is_present
";

const IS_PRESENT_BYTES: &str = "! acc2omp: acc_is_present(a, n): the first and the last of the n
! bytes at a are present on the default device
      logical function acc2omp_is_present_bytes(a, n)
      use omp_lib
      use, intrinsic :: iso_c_binding
      implicit none
      type(*), dimension(..), target :: a
      integer(8), intent(in) :: n
      integer(c_intptr_t) :: p
      type(c_ptr) :: q
      integer :: d
      if (.not. is_contiguous(a)) error stop 'acc2omp: not contiguous'
      d = omp_get_default_device()
      q = c_loc(a)
      acc2omp_is_present_bytes = omp_target_is_present(q, d) /= 0
      if (n < 2 .or. .not. acc2omp_is_present_bytes) return
      p = transfer(q, p) + n - 1
      q = transfer(p, q)
      acc2omp_is_present_bytes = omp_target_is_present(q, d) /= 0
      end function acc2omp_is_present_bytes
";

const ASYNC_TEST: &str = "! acc2omp: acc_async_test: OpenMP cannot test a queue without
! waiting; this waits for every queue (taskwait) and returns .true.
      logical function acc2omp_async_test()
      implicit none
!$omp taskwait
      acc2omp_async_test = .true.
      end function acc2omp_async_test
";
