//! Device types in Fortran: the `acc_device_*` and `acc_property_*` constants and their
//! kinds become named constants of the device-type model (`acc_device_host` →
//! `acc2omp_device_host`, the values of C's `acc2omp_device_t`: a vendor type is "not
//! host"), declared in the specification part of the outermost unit that uses them (after
//! its `use`, `import` and `implicit` statements; private in a module), so that every
//! comparison, argument and `case` keeps its meaning. Routines whose device type is known
//! only at run time, `acc_get_device_type` and the property queries call helpers of the same
//! model (see `helpers.rs` for how helpers are added).

use super::Cx;
use super::helpers::Route;
use crate::edit::Edit;
use crate::fortran::stmt::{Kind, UnitKind};
use crate::rules::RuntimeRule;
use crate::runtime::{DeviceType, device_type};
use std::ops::Range;

/// A named constant of the model that an OpenACC constant or kind becomes.
pub(super) struct Constant {
    pub to: &'static str,
    /// A vendor device type (`acc_device_nvidia`): OpenMP cannot tell vendors apart.
    pub vendor: bool,
}

/// The constant an OpenACC constant or kind of the Fortran binding becomes: the C
/// translation's name (`runtime::rename_name`, one table for both languages) where the
/// Fortran model declares it, and the binding's own kind names.
pub(super) fn constant(lower: &str) -> Option<Constant> {
    let (to, vendor) = match lower {
        "acc_device_kind" => ("acc2omp_device_t", false),
        "acc_device_property_kind" => ("acc2omp_property_t", false),
        // C's type names, not names of the Fortran binding.
        "acc_device_t" | "acc_device_property_t" => return None,
        _ => crate::runtime::rename_name(lower)?,
    };
    MODEL
        .iter()
        .any(|(n, _)| *n == to)
        .then_some(Constant { to, vendor })
}

/// The model's named constants with their values (those of the C translation's enums), in
/// the order they are declared (kinds first). All are of default kind, as the module's
/// (`int32`).
const MODEL: &[(&str, &str)] = &[
    ("acc2omp_device_t", "kind(0)"),
    ("acc2omp_property_t", "kind(0)"),
    ("acc2omp_device_current", "-1"),
    ("acc2omp_device_none", "0"),
    ("acc2omp_device_default", "1"),
    ("acc2omp_device_host", "2"),
    ("acc2omp_device_not_host", "4"),
    ("acc2omp_property_memory", "1"),
    ("acc2omp_property_free_memory", "2"),
    ("acc2omp_property_name", "65537"),
    ("acc2omp_property_vendor", "65538"),
    ("acc2omp_property_driver", "65539"),
];

/// The device type a Fortran call names in argument text `t` (lower case): the model's
/// static answer where there is one. `acc_on_device` answers for every constant (none
/// counts as the host, as in GCC; the default and current types are any device, as in
/// the C translation).
pub(super) fn static_device_type(routine: &str, t: &str) -> Option<DeviceType> {
    match (routine, t) {
        ("acc_on_device", "acc_device_none") => Some(DeviceType::Host),
        ("acc_on_device", "acc_device_default" | "acc_device_current") => {
            Some(DeviceType::NotHost { vendor: false })
        }
        _ => device_type(t),
    }
}

/// `text` with the OpenACC constants among its names renamed, and the constants met.
pub(super) fn rename_in(text: &str) -> (String, Vec<Constant>) {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut met = Vec::new();
    let mut i = 0;
    let mut quote = None;
    while i < b.len() {
        let c = b[i];
        if let Some(q) = quote {
            quote = (c != q).then_some(q);
            out.push(c as char);
            i += 1;
            continue;
        }
        if c == b'\'' || c == b'"' {
            quote = Some(c);
        }
        let word = c.is_ascii_alphabetic() && (i == 0 || !is_word(b[i - 1]));
        if !word {
            out.push(c as char);
            i += 1;
            continue;
        }
        let n = b[i..].iter().take_while(|c| is_word(**c)).count();
        let name = &text[i..i + n];
        match constant(&name.to_ascii_lowercase()) {
            Some(k) => {
                out.push_str(k.to);
                met.push(k);
            }
            None => out.push_str(name),
        }
        i += n;
    }
    (out, met)
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

impl Cx<'_> {
    /// Rename the OpenACC constant at token `k` of a statement of `unit`; false when it
    /// cannot be (it then stays, and `use openacc` with it).
    pub(super) fn rename_constant(&mut self, k: usize, unit: Option<usize>) -> bool {
        let lower = self.lx().lower(self.src, k);
        let Some(c) = constant(&lower) else {
            return false;
        };
        let Ok(home) = self.declaration_home(unit) else {
            return false;
        };
        let range = self.lx().tokens[k].range();
        if c.vendor {
            let v = self.src[range.clone()].to_string();
            self.diags.push(super::vendor_diag(range.start, &v));
        }
        self.exprs.push(Edit::replace(range, c.to));
        self.declare(home, c.to);
        true
    }

    /// Argument texts with their constants renamed (declared in the home of `unit`); None
    /// when an argument names a constant and there is no home for its declaration.
    pub(super) fn renamed_arguments(
        &mut self,
        texts: &[String],
        unit: Option<usize>,
    ) -> Option<Vec<String>> {
        let mut out = Vec::new();
        for t in texts {
            let (r, met) = rename_in(t);
            if !met.is_empty() {
                let home = self.declaration_home(unit).ok()?;
                for c in met {
                    self.declare(home, c.to);
                }
            }
            out.push(r);
        }
        Some(out)
    }

    fn declare(&mut self, home: usize, to: &'static str) {
        if !self.decls.contains(&(home, to)) {
            self.decls.push((home, to));
        }
    }

    /// The unit whose specification part declares the constants a statement of `unit`
    /// names: the outermost host, as for helpers, which must have a place for them.
    fn declaration_home(&self, unit: Option<usize>) -> Result<usize, String> {
        let home = self.helper_home(unit)?;
        self.declaration_point(home)
            .map(|_| home)
            .ok_or_else(|| "its translation declares constants after the 'use' and 'implicit' statements of the outermost program unit, and no statement there begins its line".into())
    }

    /// Where declarations go in unit `u`: the start of the line of the first statement
    /// after its `use`, `import` and `implicit` statements (its header, if none).
    fn declaration_point(&self, u: usize) -> Option<usize> {
        let unit = &self.front.structure.units[u];
        let kinds = &self.front.structure.stmts;
        let last = unit
            .spec
            .clone()
            .rfind(|&si| matches!(kinds[si].kind, Kind::Use | Kind::Import | Kind::Implicit))
            .or(unit.header);
        let next = match last {
            Some(l) => l + 1,
            None => unit.spec.start.min(unit.exec.start),
        };
        let lx = self.lx();
        let s = lx.stmts.get(next)?;
        if last.is_some_and(|l| lx.stmts[l].lines().end > s.lines().start) {
            return None;
        }
        let line = &self.front.lines.get(s.lines().start);
        self.src[line.start..s.span().start]
            .trim()
            .chars()
            .all(|c| c.is_ascii_digit())
            .then_some(line.start)
    }

    /// Insert the declarations of the constants each unit names.
    pub(super) fn add_declarations(&mut self) {
        let mut homes: Vec<usize> = self.decls.iter().map(|d| d.0).collect();
        homes.sort();
        homes.dedup();
        for home in homes {
            let at = self.declaration_point(home).expect("checked");
            let module = self.front.structure.units[home].kind == UnitKind::Module;
            let attrs = if module {
                ", parameter, private"
            } else {
                ", parameter"
            };
            let mut text = String::new();
            for (to, v) in MODEL
                .iter()
                .filter(|(n, _)| self.decls.contains(&(home, *n)))
            {
                text.push_str(&format!("      integer{attrs} :: {to} = {v}{}", self.eol));
            }
            self.edits.push(Edit::insert(at, text));
        }
    }

    /// The helper translation of a device routine, where the model needs one: a device
    /// type known only at run time, a non-host type where OpenMP has no inline answer,
    /// `acc_get_device_type` and the property queries.
    pub(super) fn device_route(&self, r: &RuntimeRule, args: &[Range<usize>]) -> Option<Route> {
        let name = r.name.as_str();
        let n = args.len();
        let dynamic = |k: usize| {
            let t = self.src[self.span(&args[k])].trim().to_ascii_lowercase();
            match static_device_type(name, &t) {
                None => true,
                Some(DeviceType::Host) => r.fortran_host.is_none(),
                Some(DeviceType::NotHost { .. }) => r.fortran.is_none(),
            }
        };
        let (template, helper) = match name {
            "acc_get_device_type" if n == 0 => ("()", "acc2omp_get_device_type"),
            "acc_get_property" if n == 3 => ("({0}, {1}, {2})", "acc2omp_get_property"),
            "acc_get_property_string" if n == 4 => {
                ("({0}, {1}, {2}, {3})", "acc2omp_get_property_string")
            }
            "acc_get_num_devices" if n == 1 && dynamic(0) => ("({0})", "acc2omp_get_num_devices"),
            "acc_get_device_num" if n == 1 && dynamic(0) => ("({0})", "acc2omp_get_device_num"),
            "acc_set_device_type" if n == 1 && dynamic(0) => ("({0})", "acc2omp_set_device_type"),
            "acc_set_device_num" if n == 2 && dynamic(1) => {
                ("({0}, {1})", "acc2omp_set_device_num")
            }
            "acc_on_device" if n == 1 && dynamic(0) => ("({0})", "acc2omp_on_device"),
            _ => return None,
        };
        Some(Route {
            template: format!("{helper}{template}"),
            helpers: vec![helper.to_string()],
            address: false,
        })
    }
}

/// The helpers a device helper calls.
pub(super) fn callees(name: &str) -> &'static [&'static str] {
    match name {
        "acc2omp_get_property" | "acc2omp_get_property_string" => {
            &["acc2omp_get_num_devices", "acc2omp_device_kind"]
        }
        "acc2omp_get_device_type"
        | "acc2omp_get_num_devices"
        | "acc2omp_get_device_num"
        | "acc2omp_set_device_num"
        | "acc2omp_set_device_type" => &["acc2omp_device_kind"],
        _ => &[],
    }
}

/// The Fortran text of device helper `name` (lines end with `\n`). Device types are the
/// values of the model: -1 current, 0 none, 1 default, 2 host, 4 not host.
pub(super) fn definition(name: &str) -> Option<&'static str> {
    Some(match name {
        "acc2omp_device_kind" => DEVICE_KIND,
        "acc2omp_get_device_type" => GET_DEVICE_TYPE,
        "acc2omp_get_num_devices" => GET_NUM_DEVICES,
        "acc2omp_get_device_num" => GET_DEVICE_NUM,
        "acc2omp_set_device_num" => SET_DEVICE_NUM,
        "acc2omp_set_device_type" => SET_DEVICE_TYPE,
        "acc2omp_on_device" => ON_DEVICE,
        "acc2omp_get_property" => GET_PROPERTY,
        "acc2omp_get_property_string" => GET_PROPERTY_STRING,
        _ => return None,
    })
}

const DEVICE_KIND: &str = "! acc2omp: device type t as 2 (host) or 4 (not host); 0 (none) stays:
! the current type (-1) is the default device's, the default type (1)
! is \"not host\" when there is a non-host device
      integer function acc2omp_device_kind(t)
      use omp_lib
      implicit none
      integer, intent(in) :: t
      integer :: d
      acc2omp_device_kind = 4
      if (t == 0 .or. t == 2) then
        acc2omp_device_kind = t
      else if (t == -1) then
        d = omp_get_default_device()
        if (d < 0 .or. d >= omp_get_num_devices()) then
          acc2omp_device_kind = 2
        end if
      else if (t == 1) then
        if (omp_get_num_devices() == 0) acc2omp_device_kind = 2
      end if
      end function acc2omp_device_kind
";

const GET_DEVICE_TYPE: &str = "! acc2omp: acc_get_device_type(): the type of the default device
      integer function acc2omp_get_device_type()
      implicit none
      acc2omp_get_device_type = acc2omp_device_kind(-1)
      end function acc2omp_get_device_type
";

const GET_NUM_DEVICES: &str = "! acc2omp: acc_get_num_devices(t): one host; the non-initial OpenMP
! devices are \"not host\"
      integer function acc2omp_get_num_devices(t)
      use omp_lib
      implicit none
      integer, intent(in) :: t
      acc2omp_get_num_devices = 0
      if (acc2omp_device_kind(t) == 2) acc2omp_get_num_devices = 1
      if (acc2omp_device_kind(t) == 4) then
        acc2omp_get_num_devices = omp_get_num_devices()
      end if
      end function acc2omp_get_num_devices
";

const GET_DEVICE_NUM: &str = "! acc2omp: acc_get_device_num(t): the default device's number when
! it is of type t, else 0
      integer function acc2omp_get_device_num(t)
      use omp_lib
      implicit none
      integer, intent(in) :: t
      integer :: d
      d = omp_get_default_device()
      acc2omp_get_device_num = 0
      if (acc2omp_device_kind(t) /= 4) return
      if (d >= 0 .and. d < omp_get_num_devices()) then
        acc2omp_get_device_num = d
      end if
      end function acc2omp_get_device_num
";

const SET_DEVICE_NUM: &str = "! acc2omp: acc_set_device_num(n, t): the host is the initial device;
! \"not host\" device n is OpenMP device n (n < 0: device 0); type 0
! (none) means every device type
      subroutine acc2omp_set_device_num(n, t)
      use omp_lib
      implicit none
      integer, intent(in) :: n, t
      integer :: k
      k = acc2omp_device_kind(t)
      if (k == 2) then
        call omp_set_default_device(omp_get_initial_device())
      else if (k == 4 .or. k == 0) then
        call omp_set_default_device(max(n, 0))
      end if
      end subroutine acc2omp_set_device_num
";

const SET_DEVICE_TYPE: &str = "! acc2omp: acc_set_device_type(t): the host is the initial device;
! \"not host\" keeps a non-initial default device, else takes device 0
      subroutine acc2omp_set_device_type(t)
      use omp_lib
      implicit none
      integer, intent(in) :: t
      integer :: k
      k = acc2omp_device_kind(t)
      if (k == 2) then
        call omp_set_default_device(omp_get_initial_device())
      else if (k == 4 .and. acc2omp_device_kind(-1) == 2) then
        call omp_set_default_device(0)
      end if
      end subroutine acc2omp_set_device_type
";

const ON_DEVICE: &str = "! acc2omp: acc_on_device(t): on the initial device for the host and
! for none (as in GCC), else on any other device
      logical function acc2omp_on_device(t)
      use omp_lib
      implicit none
      integer, intent(in) :: t
      if (t == 0 .or. t == 2) then
        acc2omp_on_device = omp_is_initial_device()
      else
        acc2omp_on_device = .not. omp_is_initial_device()
      end if
      end function acc2omp_on_device
";

const GET_PROPERTY: &str = "! acc2omp: acc_get_property(n, t, p): OpenMP cannot query device
! memory, so sizes are 0 (\"not supported\")
      function acc2omp_get_property(n, t, p) result(v)
      use, intrinsic :: iso_c_binding, only: c_size_t
      implicit none
      integer, intent(in) :: n, t, p
      integer(c_size_t) :: v
      v = 0
      if (n < 0 .or. n >= acc2omp_get_num_devices(t)) return
      end function acc2omp_get_property
";

const GET_PROPERTY_STRING: &str = "! acc2omp: acc_get_property_string(n, t, p, s): OpenMP has no
! device names: the name is \"OpenMP initial device\" or \"OpenMP target
! device\", the vendor and the driver \"OpenMP\" (blank: other properties,
! devices that do not exist)
      subroutine acc2omp_get_property_string(n, t, p, s)
      implicit none
      integer, intent(in) :: n, t, p
      character(*), intent(out) :: s
      integer :: k
      k = acc2omp_device_kind(t)
      s = ' '
      if (n < 0 .or. n >= acc2omp_get_num_devices(k)) return
      if (p == 65537 .and. k == 2) s = 'OpenMP initial device'
      if (p == 65537 .and. k == 4) s = 'OpenMP target device'
      if (p == 65538 .or. p == 65539) s = 'OpenMP'
      end subroutine acc2omp_get_property_string
";
