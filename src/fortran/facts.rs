//! What the declarations of each program unit say about its variables: type, rank,
//! `allocatable`, `pointer`, `target`, `parameter`, `intent`, `optional`, `value`; the
//! components of derived types; the `implicit` rules; the modules a unit uses. A name is
//! looked up as Fortran scopes it ([`Facts::lookup`]): the unit, its hosts, then the
//! modules of the same file that they use; an undeclared name takes the implicit type of
//! its unit.
//!
//! Declarations are read from attribute lists and entity lists (`real(8), allocatable ::
//! a(:, :)`, `dimension b(n)`, `intent(in) :: x`); what an initialization or a bound says
//! is not evaluated.

use std::borrow::Cow;
use std::collections::HashMap;

use super::lex::Lexed;
use super::stmt::{ConstructKind, DoControl, Kind, Toks, type_spec};
use super::structure::Structure;

/// A variable's type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Type {
    /// An intrinsic type, its keyword in lower case (`real`, `double precision`) and the
    /// kind or length as written (`(8)`, `*8`, empty).
    Intrinsic { name: String, kind: String },
    /// `type(name)` or `class(name)` (`*` for unlimited polymorphism), lower case.
    Derived { name: String, class: bool },
    /// Not declared: the implicit type of its first letter (None under `implicit none`).
    Implicit(Option<String>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    In,
    Out,
    InOut,
}

/// What the declarations of one name say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Var {
    /// Lower case.
    pub name: String,
    /// Where it is first declared (byte offset of the name).
    pub at: usize,
    pub ty: Type,
    /// Array rank (0: scalar).
    pub rank: usize,
    /// Deferred (`:`) or assumed (`*`, `..`) shape.
    pub deferred: bool,
    pub allocatable: bool,
    pub pointer: bool,
    pub target: bool,
    pub parameter: bool,
    pub optional: bool,
    pub value: bool,
    pub intent: Option<Intent>,
}

impl Var {
    pub fn new(name: String, at: usize) -> Var {
        Var {
            name,
            at,
            ty: Type::Implicit(None),
            rank: 0,
            deferred: false,
            allocatable: false,
            pointer: false,
            target: false,
            parameter: false,
            optional: false,
            value: false,
            intent: None,
        }
    }

    pub fn is_array(&self) -> bool {
        self.rank > 0
    }
}

/// A derived type definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DerivedType {
    pub name: String,
    pub unit: usize,
    pub components: Vec<Var>,
}

/// The declarations of one program unit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnitFacts {
    pub vars: Vec<Var>,
    /// Per letter `a`..`z`: its implicit type (None: `implicit none`, or not set).
    pub implicit: [Option<String>; 26],
    /// `implicit none` (in this unit).
    pub implicit_none: bool,
    /// Modules it uses, lower case.
    pub uses: Vec<String>,
    /// What flang says of the names it uses from modules of other files
    /// (`super::flang::import`): looked up after the file's own declarations. Their `at`
    /// is 0: no declaration of this file.
    pub imported: Vec<Var>,
    /// The indices of `vars` in the order of their names: [`UnitFacts::var`] searches it.
    by_name: Vec<u32>,
    /// The units of the modules of this file it uses, in the order of `uses` (the first
    /// unit of each name, as [`Facts::lookup`] finds them).
    modules: Vec<u32>,
    /// The indices in `uses` of the modules this file does not define.
    outside: Vec<u32>,
    /// Past [`FEW_MODULES`] modules: each module unit's place in `modules`.
    module_rank: Option<HashMap<u32, u32>>,
    /// Some variable of `vars` is OPTIONAL.
    optional: bool,
    /// Some variable of a module of `modules` is OPTIONAL.
    modules_optional: bool,
}

/// Modules of one unit searched one by one for a name (past them, a map of the file's
/// module variables finds the first that declares it).
const FEW_MODULES: usize = 16;

/// The facts of a file, per unit (the indices of [`Structure::units`]).
#[derive(Debug, Clone, Default)]
pub struct Facts {
    pub units: Vec<UnitFacts>,
    pub types: Vec<DerivedType>,
    /// Built when a unit uses more than [`FEW_MODULES`] modules: per name, the module units
    /// that declare it and its index in their `vars`.
    declared_in: HashMap<String, Vec<(u32, u32)>>,
}

impl Facts {
    pub fn new(src: &str, lx: &Lexed, st: &Structure) -> Facts {
        let mut f = Facts {
            units: vec![UnitFacts::default(); st.units.len()],
            types: Vec::new(),
            declared_in: HashMap::new(),
        };
        for (u, unit) in st.units.iter().enumerate() {
            // Fortran's default: i-n integer, the rest real; a host's rules are inherited
            // (an interface body starts again from the default).
            let inherited = unit.parent.filter(|_| !unit.interface);
            f.units[u].implicit = match inherited {
                Some(p) => f.units[p].implicit.clone(),
                None => std::array::from_fn(|k| {
                    Some(
                        if (8..14).contains(&k) {
                            "integer"
                        } else {
                            "real"
                        }
                        .to_string(),
                    )
                }),
            };
            // In a type definition: the type (None: one left unknown).
            let mut in_type: Option<Option<usize>> = None;
            // Where each name read so far is in the unit's `vars`.
            let mut seen = HashMap::new();
            for i in unit.spec.clone() {
                if st.stmt_unit.get(i).copied() != Some(u as u32) {
                    continue;
                }
                let s = &lx.stmts[i];
                let c = &st.stmts[i];
                let t = Toks::new(src, lx, s);
                match &c.kind {
                    Kind::TypeDef => {
                        // `type [[, attrs] ::] name [(params)]`: the first name after `::`,
                        // else the last before the end or `(`.
                        let after = (c.rest()..t.end)
                            .find(|&k| t.text(k) == "::")
                            .map_or(c.rest(), |k| k + 1);
                        let name = (after..t.end)
                            .take_while(|&k| t.text(k) != "(")
                            .filter(|&k| t.is_name(k))
                            .last();
                        // `extends(parent)`: the parent's components come first. A parent not
                        // defined before it here leaves the type unknown (its components are).
                        let parent = (c.rest()..after)
                            .find(|&k| t.text(k).eq_ignore_ascii_case("extends"))
                            .and_then(|k| (k + 2 < after).then(|| t.text(k + 2)))
                            .map(|p| f.derived(&p).map(|d| d.components.clone()));
                        let inherited = match parent {
                            None => Some(Vec::new()),
                            Some(known) => known,
                        };
                        in_type = Some(None);
                        if let (Some(k), Some(components)) = (name, inherited) {
                            f.types.push(DerivedType {
                                name: t.text(k).to_ascii_lowercase(),
                                unit: u,
                                components,
                            });
                            in_type = Some(Some(f.types.len() - 1));
                        }
                    }
                    Kind::End(ConstructKind::Type) => in_type = None,
                    Kind::Declaration => {
                        let vars = declaration(&t, s.toks().start);
                        match in_type {
                            Some(Some(ty)) => f.types[ty].components.extend(vars),
                            // The components of a type left unknown.
                            Some(None) => {}
                            None => {
                                let uf = &mut f.units[u];
                                vars.into_iter().for_each(|v| uf.merge(v, &mut seen));
                            }
                        }
                    }
                    Kind::Attribute(_) if in_type.is_none() => {
                        for v in attribute_statement(&t, c.rest()) {
                            f.units[u].merge(v, &mut seen);
                        }
                    }
                    Kind::Parameter if in_type.is_none() => {
                        // `parameter (n = 10, m = 2)`.
                        for k in c.rest()..t.end {
                            if t.is_name(k) && t.text(k + 1) == "=" {
                                let mut v = named(&t, k);
                                v.parameter = true;
                                f.units[u].merge(v, &mut seen);
                            }
                        }
                    }
                    Kind::Implicit => implicit(&t, c.rest(), &mut f.units[u]),
                    Kind::Use => {
                        // `use m`, `use, intrinsic :: m`, `use m, only: x`.
                        let k = t.find_top(c.rest(), "::").map_or(c.rest(), |d| d + 1);
                        if t.is_name(k) {
                            f.units[u].uses.push(t.text(k).to_ascii_lowercase());
                        }
                    }
                    _ => {}
                }
            }
            f.units[u].index_names();
        }
        f.index_modules(st);
        f
    }

    /// Resolve each unit's `use`d modules to units once (a lookup of each name would search
    /// the units per module), and map the names of modules when a unit uses many.
    fn index_modules(&mut self, st: &Structure) {
        let mut by_name: HashMap<&str, u32> = HashMap::new();
        for (k, x) in st.units.iter().enumerate() {
            if x.kind == super::stmt::UnitKind::Module
                && let Some(n) = x.name.as_deref()
            {
                by_name.entry(n).or_insert(k as u32);
            }
        }
        let mut many = false;
        for uf in &mut self.units {
            uf.optional = uf.vars.iter().any(|v| v.optional);
            // Unresolved names find nothing: left out; a repeated one finds what it did first.
            let mut modules = Vec::with_capacity(uf.uses.len());
            for (i, m) in uf.uses.iter().enumerate() {
                match by_name.get(m.as_str()) {
                    Some(&k) => modules.push(k),
                    None => uf.outside.push(i as u32),
                }
            }
            uf.modules = modules;
        }
        for u in 0..self.units.len() {
            let modules = std::mem::take(&mut self.units[u].modules);
            self.units[u].modules_optional =
                modules.iter().any(|&m| self.units[m as usize].optional);
            if modules.len() > FEW_MODULES {
                many = true;
                let mut rank = HashMap::with_capacity(modules.len());
                for (r, &m) in modules.iter().enumerate() {
                    rank.entry(m).or_insert(r as u32);
                }
                self.units[u].module_rank = Some(rank);
            }
            self.units[u].modules = modules;
        }
        if many {
            for (k, x) in st.units.iter().enumerate() {
                if x.kind != super::stmt::UnitKind::Module {
                    continue;
                }
                for (i, v) in self.units[k].vars.iter().enumerate() {
                    self.declared_in
                        .entry(v.name.clone())
                        .or_default()
                        .push((k as u32, i as u32));
                }
            }
        }
    }

    /// The first of the modules that unit `uf` uses to declare `name`.
    fn in_modules(&self, uf: &UnitFacts, name: &str) -> Option<&Var> {
        let Some(rank) = &uf.module_rank else {
            return uf
                .modules
                .iter()
                .find_map(|&m| self.units[m as usize].var(name));
        };
        let &(m, i) = self
            .declared_in
            .get(name)?
            .iter()
            .filter_map(|c| Some((rank.get(&c.0)?, c)))
            .min_by_key(|(r, _)| **r)?
            .1;
        Some(&self.units[m as usize].vars[i as usize])
    }

    /// The variable `name` (any case) as seen in unit `unit`: declared there, in a host,
    /// or in a module of this file used there or by a host, or (flang's facts) in a module
    /// of another file; else its implicit type.
    pub fn lookup(&self, st: &Structure, unit: usize, name: &str) -> Option<Cow<'_, Var>> {
        // Borrowed, not cloned: most callers test a flag or two, many times per site.
        let name: Cow<str> = if name.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(name.to_ascii_lowercase())
        } else {
            Cow::Borrowed(name)
        };
        let name = name.as_ref();
        let mut u = Some(unit);
        while let Some(k) = u {
            let uf = self.units.get(k)?;
            if let Some(v) = uf.var(name) {
                return Some(Cow::Borrowed(v));
            }
            if let Some(v) = self.in_modules(uf, name) {
                return Some(Cow::Borrowed(v));
            }
            if let Some(v) = uf.imported.iter().find(|v| v.name == name) {
                return Some(Cow::Borrowed(v));
            }
            u = st.units[k].parent.filter(|_| !st.units[k].interface);
        }
        self.implicit_var(unit, name)
    }

    /// `name` (lower case) undeclared in unit `unit`: the implicit type of its letter.
    fn implicit_var(&self, unit: usize, name: &str) -> Option<Cow<'_, Var>> {
        let uf = self.units.get(unit)?;
        let first = name.bytes().next()?;
        let letter = first
            .is_ascii_lowercase()
            .then(|| (first - b'a') as usize)?;
        let mut v = Var::new(name.to_string(), 0);
        v.ty = Type::Implicit(uf.implicit[letter].clone());
        Some(Cow::Owned(v))
    }

    /// Whether some variable that [`Facts::lookup`] can find from unit `unit` is OPTIONAL
    /// (the same scopes, whatever the name): when none is, no lookup from there finds one.
    pub fn any_optional(&self, st: &Structure, unit: usize) -> bool {
        let mut u = Some(unit);
        while let Some(k) = u {
            let Some(uf) = self.units.get(k) else {
                return false;
            };
            // Flags found once: this is asked per directive.
            if uf.optional || uf.modules_optional || uf.imported.iter().any(|v| v.optional) {
                return true;
            }
            u = st.units[k].parent.filter(|_| !st.units[k].interface);
        }
        false
    }

    /// The derived type `name` defined in this file.
    pub fn derived(&self, name: &str) -> Option<&DerivedType> {
        self.types
            .iter()
            .find(|t| t.name.eq_ignore_ascii_case(name))
    }
}

impl UnitFacts {
    /// The modules it uses that this file does not define (lower case, in `use` order).
    pub fn uses_outside(&self) -> impl Iterator<Item = &str> {
        self.outside.iter().map(|&i| self.uses[i as usize].as_str())
    }

    /// The declared variable `name` (lower case) of this unit.
    pub fn var(&self, name: &str) -> Option<&Var> {
        let vars = &self.vars;
        let k = self
            .by_name
            .binary_search_by(|&i| vars[i as usize].name.as_str().cmp(name))
            .ok()?;
        Some(&vars[self.by_name[k] as usize])
    }

    /// Order `by_name` once every declaration of the unit is read (names are unique in
    /// `vars`: [`UnitFacts::merge`] keeps one entry per name).
    fn index_names(&mut self) {
        let vars = &self.vars;
        let mut order: Vec<u32> = (0..vars.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| vars[a as usize].name.cmp(&vars[b as usize].name));
        self.by_name = order;
    }

    /// Add what another statement says of a name (`real :: a` then `dimension a(n)`);
    /// `seen`: where each name merged so far is in `vars`.
    fn merge(&mut self, v: Var, seen: &mut HashMap<String, u32>) {
        let Some(&k) = seen.get(&v.name) else {
            seen.insert(v.name.clone(), self.vars.len() as u32);
            self.vars.push(v);
            return;
        };
        absorb(&mut self.vars[k as usize], v);
    }
}

/// What a later statement says of a name, added to what the earlier ones said.
fn absorb(old: &mut Var, v: Var) {
    if !matches!(v.ty, Type::Implicit(_)) {
        old.ty = v.ty;
    }
    if v.rank > 0 {
        old.rank = v.rank;
        old.deferred = v.deferred;
    }
    old.allocatable |= v.allocatable;
    old.pointer |= v.pointer;
    old.target |= v.target;
    old.parameter |= v.parameter;
    old.optional |= v.optional;
    old.value |= v.value;
    old.intent = v.intent.or(old.intent);
}

/// A variable named at token `k`.
fn named(t: &Toks, k: usize) -> Var {
    Var::new(t.text(k).to_ascii_lowercase(), t.lx.tokens[k].start())
}

/// The rank of the array spec in parentheses at `open`, and whether it is deferred or
/// assumed: the top-level commas plus one.
fn array_spec(t: &Toks, open: usize) -> (usize, bool) {
    let Some(close) = t.after(open) else {
        return (0, false);
    };
    let mut rank = 1;
    let mut deferred = false;
    let mut k = open + 1;
    while k + 1 < close {
        match t.text(k).as_ref() {
            "," => rank += 1,
            "(" | "[" => {
                k = t.after(k).unwrap_or(close);
                continue;
            }
            // An assumed size or rank (`*` alone as a bound), not a product (`2 * n`).
            ".." => deferred = true,
            "*" if matches!(t.text(k - 1).as_ref(), "(" | "," | ":")
                && matches!(t.text(k + 1).as_ref(), ")" | ",") =>
            {
                deferred = true
            }
            ":" => {
                // `:` alone (deferred) or `lo:` (assumed shape): no upper bound.
                let next = t.text(k + 1);
                deferred |= next == "," || k + 2 == close;
            }
            _ => {}
        }
        k += 1;
    }
    (rank, deferred)
}

/// Apply one attribute (`allocatable`, `dimension(:)`, `intent(in)`) at `k`.
fn attribute(t: &Toks, k: usize, v: &mut Var) {
    let a = t.text(k).to_ascii_lowercase();
    match a.as_str() {
        "allocatable" => v.allocatable = true,
        "pointer" => v.pointer = true,
        "target" => v.target = true,
        "parameter" => v.parameter = true,
        "optional" => v.optional = true,
        "value" => v.value = true,
        "dimension" if t.text(k + 1) == "(" => (v.rank, v.deferred) = array_spec(t, k + 1),
        "intent" if t.text(k + 1) == "(" => {
            let words: String = (k + 2..t.after(k + 1).unwrap_or(k + 2).saturating_sub(1))
                .map(|j| t.text(j).to_ascii_lowercase())
                .collect();
            v.intent = match words.as_str() {
                "in" => Some(Intent::In),
                "out" => Some(Intent::Out),
                "inout" => Some(Intent::InOut),
                _ => None,
            };
        }
        _ => {}
    }
}

/// The entities of a type declaration statement starting at token `first`.
fn declaration(t: &Toks, first: usize) -> Vec<Var> {
    let Some(after_type) = type_spec(t, first) else {
        return Vec::new();
    };
    let words: Vec<String> = (first..after_type)
        .take_while(|&k| t.is_name(k))
        .map(|k| t.text(k).to_ascii_lowercase())
        .collect();
    let kind: String = (first + words.len()..after_type)
        .map(|k| t.text(k))
        .collect();
    let ty = match words.first().map(String::as_str) {
        Some(w @ ("type" | "class")) => Type::Derived {
            // The words between `type(` and `)`.
            name: (first + 2..after_type.saturating_sub(1))
                .map(|k| t.text(k).to_ascii_lowercase())
                .collect(),
            class: w == "class",
        },
        _ => Type::Intrinsic {
            name: words.join(" "),
            kind,
        },
    };
    let mut proto = Var::new(String::new(), 0);
    proto.ty = ty;
    let mut k = after_type;
    // Attributes up to `::` (without `::` there are none).
    if let Some(colons) = t.find_top(after_type, "::") {
        while k < colons {
            if t.is_name(k) {
                attribute(t, k, &mut proto);
            }
            k = if t.text(k + 1) == "(" {
                t.after(k + 1).unwrap_or(k + 1)
            } else {
                k + 1
            };
        }
        k = colons + 1;
    }
    entities(t, k, &proto)
}

/// The entity list from `k` (`a(n), b = 1, c*8`), each a copy of `proto` with its own
/// array spec.
fn entities(t: &Toks, mut k: usize, proto: &Var) -> Vec<Var> {
    let mut out = Vec::new();
    while k < t.end {
        if !t.is_name(k) {
            k += 1;
            continue;
        }
        let mut v = Var {
            name: t.text(k).to_ascii_lowercase(),
            at: t.lx.tokens[k].start(),
            ..proto.clone()
        };
        k += 1;
        if t.text(k) == "(" {
            (v.rank, v.deferred) = array_spec(t, k);
            k = t.after(k).unwrap_or(t.end);
        }
        out.push(v);
        // Skip a length, a coarray spec or an initialization up to the next entity.
        match t.find_top(k, ",") {
            Some(c) => k = c + 1,
            None => break,
        }
    }
    out
}

/// `dimension a(n), b(m)`, `allocatable :: a, b(:)`, `intent(in) :: x`, …
fn attribute_statement(t: &Toks, rest: usize) -> Vec<Var> {
    let mut proto = Var::new(String::new(), 0);
    let kw = rest.saturating_sub(1);
    attribute(t, kw, &mut proto);
    let mut k = rest;
    if t.text(k) == "(" {
        k = t.after(k).unwrap_or(t.end);
    }
    if let Some(c) = t.find_top(k, "::") {
        k = c + 1;
    }
    entities(t, k, &proto)
}

/// `implicit none`, `implicit real*8 (a-h, o-z), integer (i-n)`.
fn implicit(t: &Toks, rest: usize, uf: &mut UnitFacts) {
    if t.is(rest, "none") {
        uf.implicit_none = true;
        uf.implicit = Default::default();
        return;
    }
    let mut k = rest;
    while k < t.end {
        let Some(after) = type_spec(t, k) else {
            k += 1;
            continue;
        };
        let name: Vec<String> = (k..after)
            .take_while(|&j| t.is_name(j))
            .map(|j| t.text(j).to_ascii_lowercase())
            .collect();
        let name = name.join(" ");
        // The letter list is the last parenthesized group of the spec (`real(8) (a-h)`).
        let (open, next) = if t.text(after) == "(" {
            (after, t.after(after).unwrap_or(t.end))
        } else {
            // `real(a-h)`: type_spec took the letters as a kind.
            (after - 1, after)
        };
        let open = if t.text(open) == "(" {
            open
        } else {
            (k..after).rev().find(|&j| t.text(j) == "(").unwrap_or(open)
        };
        let mut j = open + 1;
        while j < next.saturating_sub(1) {
            let from = t.text(j).to_ascii_lowercase();
            let to = if t.text(j + 1) == "-" {
                j += 2;
                t.text(j).to_ascii_lowercase()
            } else {
                from.clone()
            };
            if let (Some(a), Some(b)) = (from.bytes().next(), to.bytes().next())
                && a.is_ascii_lowercase()
                && b.is_ascii_lowercase()
            {
                for l in a..=b {
                    uf.implicit[(l - b'a') as usize] = Some(name.clone());
                }
            }
            j += 2;
        }
        k = next;
    }
}

/// What a range of statements does with one name (see [`uses`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Use {
    /// Lower case.
    pub name: String,
    /// Its first mention (byte offset).
    pub at: usize,
    pub read: bool,
    /// Assigned, a `do` control variable, read into, allocated, or passed whole to a
    /// procedure (which may assign it).
    pub written: bool,
    /// Some mention is followed by `(`: an array element or section, or a function
    /// reference (the declarations tell which).
    pub subscripted: bool,
    /// Byte offsets of the mentions that write it, in order.
    pub writes: Vec<usize>,
}

/// The names statements `stmts` (indices of [`Lexed::stmts`]) read and write, in order of
/// first mention: variables, and names that may be functions (`subscripted`). Called
/// subroutines, component names after `%`, keyword argument names and statement keywords
/// are left out. Conservative: a whole variable passed to a procedure counts as written.
pub fn uses(src: &str, lx: &Lexed, st: &Structure, stmts: std::ops::Range<usize>) -> Vec<Use> {
    let mut out = Uses::default();
    for i in stmts {
        let (Some(s), Some(c)) = (lx.stmts.get(i), st.stmts.get(i)) else {
            continue;
        };
        let t = Toks::new(src, lx, s);
        statement_uses(&t, &c.kind, c.rest(), s.toks().start, &mut out);
    }
    out.list
}

/// The uses found so far, in order of first mention. A region may name thousands of
/// variables: past [`FEW_USES`] names, they are found through a map, not a search per
/// mention.
#[derive(Default)]
struct Uses {
    list: Vec<Use>,
    index: Option<HashMap<String, usize>>,
}

/// Names searched one by one before a map is built (searching so few costs less).
const FEW_USES: usize = 32;

impl Uses {
    /// The use of `text` (any case).
    fn find(&mut self, text: &str) -> Option<&mut Use> {
        let k = match &self.index {
            None => self
                .list
                .iter()
                .position(|u| u.name.eq_ignore_ascii_case(text)),
            Some(m) if text.bytes().any(|b| b.is_ascii_uppercase()) => {
                m.get(&text.to_ascii_lowercase()).copied()
            }
            Some(m) => m.get(text).copied(),
        };
        self.list.get_mut(k?)
    }

    fn push(&mut self, u: Use) {
        match &mut self.index {
            Some(m) => {
                m.insert(u.name.clone(), self.list.len());
            }
            None if self.list.len() >= FEW_USES => {
                let mut m: HashMap<String, usize> = self
                    .list
                    .iter()
                    .enumerate()
                    .map(|(k, u)| (u.name.clone(), k))
                    .collect();
                m.insert(u.name.clone(), self.list.len());
                self.index = Some(m);
            }
            None => {}
        }
        self.list.push(u);
    }
}

/// Record the names of `t[from..to]` (variables or function references); `written` says
/// which of them are assigned.
fn names(t: &Toks, from: usize, to: usize, written: &dyn Fn(usize) -> bool, out: &mut Uses) {
    for k in from..to.min(t.end) {
        if !t.is_name(k) {
            continue;
        }
        let prev = if k > from { t.text(k - 1) } else { "".into() };
        // `t%c`: the component; `f(x=1)`: a keyword argument.
        if prev == "%" || (t.text(k + 1) == "=" && matches!(prev.as_ref(), "(" | ",")) {
            continue;
        }
        // Lowered only when new: `u.name` is lower case, so ignoring case is the same test.
        let text = t.text(k);
        let subscripted = t.text(k + 1) == "(";
        let w = written(k);
        let at = t.lx.tokens[k].start();
        match out.find(&text) {
            Some(u) => {
                u.read |= !w;
                u.written |= w;
                u.subscripted |= subscripted;
                if w {
                    u.writes.push(at);
                }
            }
            None => out.push(Use {
                name: text.to_ascii_lowercase(),
                at,
                read: !w,
                written: w,
                subscripted,
                writes: if w { vec![at] } else { Vec::new() },
            }),
        }
    }
}

/// `name(args)` of a `call` from `callee`: whole variables passed may be assigned.
fn call_uses(t: &Toks, callee: usize, out: &mut Uses) {
    let whole = |k: usize| {
        matches!(t.text(k - 1).as_ref(), "(" | ",")
            && matches!(t.text(k + 1).as_ref(), ")" | "," | "(")
    };
    names(t, callee + 1, t.end, &whole, out);
}

fn statement_uses(t: &Toks, kind: &Kind, rest: usize, first: usize, out: &mut Uses) {
    let never = |_: usize| false;
    match kind {
        Kind::Assignment(eq) | Kind::PointerAssignment(eq) => {
            names(t, first, *eq, &|k| k == first, out);
            names(t, eq + 1, t.end, &never, out);
        }
        Kind::Do(head) => match &head.control {
            DoControl::Counted { var, lo, hi, step } => {
                names(t, *var, var + 1, &|_| true, out);
                for r in [Some(lo), Some(hi), step.as_ref()].into_iter().flatten() {
                    names(t, r.start, r.end, &never, out);
                }
            }
            DoControl::While(r) => names(t, r.start, r.end, &never, out),
            // The indices are the construct's own; the bounds and mask are read.
            DoControl::Concurrent(r) => names(t, r.start, r.end, &|k| t.text(k + 1) == "=", out),
            DoControl::Forever => {}
        },
        Kind::IfStmt(action) => {
            names(t, rest, *action, &never, out);
            // The action statement.
            let a = *action;
            if t.is(a, "call") {
                call_uses(t, a + 1, out);
            } else if t
                .designator(a)
                .is_some_and(|d| matches!(t.text(d).as_ref(), "=" | "=>"))
            {
                let eq = t.designator(a).unwrap_or(a);
                names(t, a, eq, &|k| k == a, out);
                names(t, eq + 1, t.end, &never, out);
            } else if t.is(a, "read") {
                names(t, a + 1, t.end, &|_| true, out);
            } else {
                names(t, a + 1, t.end, &never, out);
            }
        }
        Kind::IfThen | Kind::ElseIf => {
            let end = if t.is(t.end - 1, "then") {
                t.end - 1
            } else {
                t.end
            };
            names(t, rest, end, &never, out);
        }
        Kind::WhereStmt | Kind::ForallStmt => {
            // `where (mask) a = b`: the assignment after the parentheses.
            let open = (rest..t.end).find(|&k| t.text(k) == "(");
            let after = open.and_then(|o| t.after(o)).unwrap_or(t.end);
            names(
                t,
                rest,
                after,
                &|k| t.text(k + 1) == "=" && matches!(kind, Kind::ForallStmt),
                out,
            );
            if let Some(eq) = t.find_top(after, "=") {
                names(t, after, eq, &|k| k == after, out);
                names(t, eq + 1, t.end, &never, out);
            }
        }
        Kind::Call => call_uses(t, rest, out),
        Kind::Io if t.is(first, "read") => {
            // `read (unit, fmt) items`: the items are assigned.
            let items = if t.text(rest) == "(" {
                t.after(rest).unwrap_or(t.end)
            } else {
                rest
            };
            names(t, rest, items, &never, out);
            names(t, items, t.end, &|_| true, out);
        }
        Kind::Allocate | Kind::Deallocate | Kind::Nullify => {
            // The objects are the items of the list (bounds are read).
            let mut objects = Vec::new();
            let mut k = rest + 1;
            while let Some(d) = t.designator(k) {
                objects.push(k);
                match t.text(d).as_ref() {
                    "," => k = d + 1,
                    _ => break,
                }
            }
            // `stat=v`, `errmsg=m` are assigned too.
            let written = |k: usize| objects.contains(&k) || t.text(k - 1) == "=";
            names(t, rest, t.end, &written, out);
        }
        k if without_operands(k) => {}
        _ => names(t, rest, t.end, &never, out),
    }
}

/// A statement whose operands name no variable a region reads or writes: specification
/// statements, unit and construct boundaries, `continue`, `goto`, `format`.
pub fn without_operands(k: &Kind) -> bool {
    k.is_spec()
        || matches!(
            k,
            Kind::Unit(_)
                | Kind::EndUnit(_)
                | Kind::End(_)
                | Kind::Contains
                | Kind::Else
                | Kind::Continue
                | Kind::Goto
                | Kind::Format
        )
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// `names` as it was: each name lowered before the search.
    fn names_lowering(
        t: &Toks,
        from: usize,
        to: usize,
        written: &dyn Fn(usize) -> bool,
        out: &mut Vec<Use>,
    ) {
        for k in from..to.min(t.end) {
            if !t.is_name(k) {
                continue;
            }
            let prev = if k > from { t.text(k - 1) } else { "".into() };
            if prev == "%" || (t.text(k + 1) == "=" && matches!(prev.as_ref(), "(" | ",")) {
                continue;
            }
            let name = t.text(k).to_ascii_lowercase();
            let subscripted = t.text(k + 1) == "(";
            let w = written(k);
            let at = t.lx.tokens[k].start();
            match out.iter_mut().find(|u| u.name == name) {
                Some(u) => {
                    u.read |= !w;
                    u.written |= w;
                    u.subscripted |= subscripted;
                    if w {
                        u.writes.push(at);
                    }
                }
                None => out.push(Use {
                    name,
                    at,
                    read: !w,
                    written: w,
                    subscripted,
                    writes: if w { vec![at] } else { Vec::new() },
                }),
            }
        }
    }

    /// An assumed size is a `*` bound alone; a product in a bound is none.
    #[test]
    fn assumed_size_is_a_star_bound_alone() {
        let src = "subroutine s(n, a, b, c, d, e)\n  integer :: n\n  real :: a(*), b(n, 2:*), c(2 * n), d(0:n*2-1, 3)\nend subroutine\n";
        let kind = crate::fortran::form::kind_of(std::path::Path::new("x.f90")).expect("Fortran");
        let front = super::super::Front::new(src, kind, |_| Default::default());
        let shape = |v: &str| {
            let v = front.facts.lookup(&front.structure, 0, v).unwrap();
            (v.rank, v.deferred)
        };
        assert_eq!(shape("a"), (1, true));
        assert_eq!(shape("b"), (2, true));
        assert_eq!(shape("c"), (1, false));
        assert_eq!(shape("d"), (2, false));
    }

    /// `any_optional` false means that no lookup from the unit finds an OPTIONAL variable,
    /// whatever the name (every name of the file is tried).
    #[test]
    fn no_optional_in_scope_means_no_lookup_finds_one() {
        let src = "module m\n  real, allocatable :: q(:)\nend module\nmodule m2\n  use m\n  integer :: k\ncontains\n  subroutine t(p, r)\n    real, optional :: p\n    real :: r\n  end subroutine\nend module\nsubroutine s(a, b, n)\n  use m\n  integer :: n\n  real :: a(n)\n  real, optional :: b(n)\n  interface\n    subroutine g(x)\n      real :: x\n    end subroutine\n  end interface\ncontains\n  subroutine inner(c)\n    real :: c\n    !$acc parallel copy(b, c)\n    c = 1\n    !$acc end parallel\n  end subroutine\nend subroutine\nprogram p\n  use m2\n  real :: w\n  w = 1\nend program\n";
        let kind = crate::fortran::form::kind_of(std::path::Path::new("x.f90")).expect("Fortran");
        let front = super::super::Front::new(src, kind, |_| Default::default());
        let st = &front.structure;
        let words: Vec<String> = (0..front.lexed.tokens.len())
            .map(|i| front.lexed.lower(src, i))
            .collect();
        let (mut with, mut without) = (0, 0);
        for u in 0..st.units.len() {
            let found = words
                .iter()
                .any(|w| front.facts.lookup(st, u, w).is_some_and(|v| v.optional));
            if front.facts.any_optional(st, u) {
                with += 1;
            } else {
                without += 1;
                assert!(!found, "unit {u}");
            }
            // Here no name is shadowed: one is found exactly when one is in scope.
            assert_eq!(found, front.facts.any_optional(st, u), "unit {u}");
        }
        assert!(with >= 2 && without >= 3, "{with} {without}");
    }

    /// A generator of numbers below `n`, the same for a seed on every run.
    pub(in crate::fortran) fn xorshift(mut seed: u64) -> impl FnMut(usize) -> usize {
        move |n| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        }
    }

    /// The old lookup: the units searched for each used module, per name.
    fn lookup_scanning<'a>(
        f: &'a Facts,
        st: &Structure,
        unit: usize,
        name: &str,
    ) -> Option<Cow<'a, Var>> {
        let name = name.to_ascii_lowercase();
        let name = name.as_str();
        let mut u = Some(unit);
        while let Some(k) = u {
            let uf = f.units.get(k)?;
            if let Some(v) = uf.var(name) {
                return Some(Cow::Borrowed(v));
            }
            for m in &uf.uses {
                let module = st.units.iter().position(|x| {
                    x.kind == super::super::stmt::UnitKind::Module && x.name.as_deref() == Some(m)
                });
                if let Some(v) = module.and_then(|m| f.units[m].var(name)) {
                    return Some(Cow::Borrowed(v));
                }
            }
            if let Some(v) = uf.imported.iter().find(|v| v.name == name) {
                return Some(Cow::Borrowed(v));
            }
            u = st.units[k].parent.filter(|_| !st.units[k].interface);
        }
        f.implicit_var(unit, name)
    }

    /// The old `any_optional`: each used module searched for, its variables scanned.
    fn any_optional_scanning(f: &Facts, st: &Structure, unit: usize) -> bool {
        let optional = |vars: &[Var]| vars.iter().any(|v| v.optional);
        let mut u = Some(unit);
        while let Some(k) = u {
            let Some(uf) = f.units.get(k) else {
                return false;
            };
            if optional(&uf.vars) || optional(&uf.imported) {
                return true;
            }
            for m in &uf.uses {
                let module = st.units.iter().position(|x| {
                    x.kind == super::super::stmt::UnitKind::Module && x.name.as_deref() == Some(m)
                });
                if module.is_some_and(|m| optional(&f.units[m].vars)) {
                    return true;
                }
            }
            u = st.units[k].parent.filter(|_| !st.units[k].interface);
        }
        false
    }

    /// Generated files of many modules (a name declared in several, modules using modules,
    /// one name for two modules, modules defined after their users), units using a few or
    /// many of them (repeated, unknown, `only:` lists, renames, `intrinsic`), local
    /// declarations that shadow, hosts and contained procedures, interface bodies: every
    /// name of the file looked up from every unit finds what the old search of the units
    /// per module found, and `any_optional` says what it said.
    #[test]
    fn lookup_matches_the_scanning_lookup() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let mut checked = 0;
        let mut indexed = 0;
        let mut foreign = 0;
        for round in 0..6 {
            let modules = 10 + 12 * round;
            let mut src = String::new();
            let module = |k: usize, next: &mut dyn FnMut(usize) -> usize| {
                let mut m = format!("module M{k}\n");
                if k > 0 && next(3) == 0 {
                    m.push_str(&format!("  use m{}\n", next(k)));
                }
                for _ in 0..1 + next(5) {
                    let attr =
                        [", optional", ", allocatable", "", "(8)", ", dimension(:)"][next(5)];
                    let attr = if round % 2 == 0 && attr == ", optional" {
                        ""
                    } else {
                        attr
                    };
                    m.push_str(&format!("  real{attr} :: v{}, W{k}\n", next(20)));
                }
                m.push_str(&format!("end module m{k}\n"));
                m
            };
            // Half the modules before their users, half after; one name used twice.
            for k in 0..modules / 2 {
                src.push_str(&module(k, &mut next));
            }
            src.push_str(&module(3, &mut next));
            let user = |src: &mut String,
                        name: &str,
                        uses: usize,
                        next: &mut dyn FnMut(usize) -> usize| {
                src.push_str(&format!("subroutine {name}(a, b)\n"));
                for _ in 0..uses {
                    let k = next(modules + 3);
                    src.push_str(&match next(6) {
                        0 => format!("  use m{k}, only: v{} => w{k}\n", next(20)),
                        1 => format!("  use, intrinsic :: M{k}\n"),
                        2 => format!("  use m{k}, only: v{}\n", next(20)),
                        _ => format!("  use m{k}\n"),
                    });
                }
                src.push_str(&format!(
                    "  real, optional :: a\n  integer :: v{}, b\n",
                    next(20)
                ));
                src.push_str(&format!(
                    "  interface\n    subroutine g{name}(x)\n      use m{}\n      real :: x, v{}\n    end subroutine\n  end interface\n",
                    next(modules),
                    next(20)
                ));
                src.push_str(&format!("  v{} = 1\ncontains\n", next(20)));
                src.push_str(&format!(
                    "  subroutine in{name}(c)\n    use m{}\n    real :: c, V{}\n    c = 1\n  end subroutine\n",
                    next(modules),
                    next(20)
                ));
                src.push_str(&format!("end subroutine {name}\n"));
            };
            for k in 0..4 {
                let uses = [3, FEW_MODULES, FEW_MODULES + 1, 3 * modules][k];
                user(&mut src, &format!("s{k}"), uses, &mut next);
            }
            for k in modules / 2..modules {
                src.push_str(&module(k, &mut next));
            }
            user(&mut src, "late", 2 * modules, &mut next);
            let kind =
                crate::fortran::form::kind_of(std::path::Path::new("x.f90")).expect("Fortran");
            let front = super::super::Front::new(&src, kind, |_| Default::default());
            let (st, facts) = (&front.structure, &front.facts);
            let mut words: Vec<String> = (0..front.lexed.tokens.len())
                .map(|i| front.lexed.lower(&src, i))
                .filter(|w| w.bytes().next().is_some_and(|b| b.is_ascii_alphabetic()))
                .collect();
            words.sort();
            words.dedup();
            words.extend(["V3".to_string(), "W7".to_string(), "zz".to_string()]);
            for u in 0..st.units.len() {
                indexed += usize::from(facts.units[u].module_rank.is_some());
                for w in &words {
                    let new = facts.lookup(st, u, w);
                    let old = lookup_scanning(facts, st, u, w);
                    assert_eq!(new, old, "unit {u} {w}\n{src}");
                    checked += usize::from(old.is_some_and(|v| v.at > 0));
                }
                assert_eq!(
                    facts.any_optional(st, u),
                    any_optional_scanning(facts, st, u),
                    "unit {u}\n{src}"
                );
                // The modules of other files, as a search of the units for each found them.
                let outside: Vec<&str> = (facts.units[u].uses.iter())
                    .map(String::as_str)
                    .filter(|m| {
                        !st.units.iter().any(|x| {
                            x.kind == super::super::stmt::UnitKind::Module
                                && x.name.as_deref() == Some(*m)
                        })
                    })
                    .collect();
                assert_eq!(facts.units[u].uses_outside().collect::<Vec<_>>(), outside);
                foreign += outside.len();
            }
        }
        assert!(
            indexed >= 12 && checked > 3000 && foreign > 20,
            "{indexed} {checked} {foreign}"
        );
    }

    #[test]
    fn names_match_the_lowering_search() {
        let cases = [
            (
                "x.f90",
                "subroutine s(N, a)\n  integer :: n, I\n  real :: A(n), Bé\n  do i = 1, N\n    a(I) = A(i) + f(x=n) + t%N + bé\n  end do\n  call Work(a, &\n     N) ! a, b\n  print *, 'n ! x', \"a\" // c; B = b\nend subroutine\n",
            ),
            (
                "x.f90",
                "program p\r\n  x = 1\r\n  X = x + Y\r\n  y = max(x, y); Z = z\r\nend program\r\n",
            ),
            (
                "x.f",
                "      subroutine s(n, a)\n      real a(n)\nc comment\n      do 10 i = 1,\n     &  N\n        A(I) = a(i)*2\n   10 continue\n      end\n",
            ),
        ];
        // Past `FEW_USES` names the uses are found through a map: names in both cases,
        // mentioned again before and after it is built.
        let mut many = String::from("subroutine s\n");
        for k in 0..3 * FEW_USES {
            many.push_str(&format!("  A{k} = a{} + B{} * b{k}\n", k / 2, k % 7));
        }
        many.push_str("  x = A0 + a1 + B2 + A95 + q\nend subroutine\n");
        let mut seen = 0;
        for (name, src) in cases.into_iter().chain([("x.f90", many.as_str())]) {
            let kind = crate::fortran::form::kind_of(std::path::Path::new(name)).expect("Fortran");
            let lx = super::super::lex::lex(src, &super::super::lines::scan(src, kind));
            let mut new = Uses::default();
            let mut old = Vec::new();
            for s in &lx.stmts {
                let t = Toks::new(src, &lx, s);
                let every_third = |k: usize| k.is_multiple_of(3);
                names(&t, s.toks().start, s.toks().end, &every_third, &mut new);
                names_lowering(&t, s.toks().start, s.toks().end, &every_third, &mut old);
            }
            seen += new.list.len();
            assert_eq!(new.list, old, "{src}");
        }
        assert!(seen >= 15 + 4 * FEW_USES, "{seen} names");
    }

    /// The old merge, a search of the unit's variables per name: the oracle of the map.
    fn merge_searching(vars: &mut Vec<Var>, v: Var) {
        match vars.iter_mut().find(|o| o.name == v.name) {
            Some(old) => absorb(old, v),
            None => vars.push(v),
        }
    }

    /// Many names declared over several statements (attributes, `dimension`, `parameter`,
    /// repeated in any case, in a derived type too), in hosts, modules and interfaces: each
    /// unit's variables are those the searching merge gives, in the same order, and
    /// `var` finds what a search of them finds.
    #[test]
    fn merged_names_match_the_searching_merge() {
        let mut src = String::from("module m\n  type t\n    real :: a0, z\n  end type\n");
        for i in 0..300 {
            src.push_str(&format!("  real :: a{i}, b{}\n", 300 - i));
            if i % 3 == 0 {
                src.push_str(&format!("  dimension A{i}(10), b{i}(:, :)\n"));
            }
            if i % 5 == 0 {
                src.push_str(&format!(
                    "  allocatable :: b{}\n  integer, parameter :: n{i} = 2, a{i} = 1\n",
                    i / 2
                ));
            }
            if i % 7 == 0 {
                src.push_str(&format!(
                    "  parameter (c{i} = 1, a{} = 2)\n  target :: c{i}\n",
                    i / 3
                ));
            }
        }
        src.push_str("contains\n  subroutine s(x, a1, b2)\n    real, intent(in), optional :: x\n    integer :: a1\n    value :: b2\n    integer :: b2, X\n    interface\n      subroutine g(y)\n        real :: y, a1\n      end subroutine\n    end interface\n  end subroutine\nend module\n");
        let kind = crate::fortran::form::kind_of(std::path::Path::new("x.f90")).expect("Fortran");
        let front = super::super::Front::new(&src, kind, |_| Default::default());
        let (lx, st) = (&front.lexed, &front.structure);
        let mut checked = 0;
        for (u, unit) in st.units.iter().enumerate() {
            let mut old = Vec::new();
            let mut in_type = false;
            for i in unit.spec.clone() {
                if st.stmt_unit.get(i).copied() != Some(u as u32) {
                    continue;
                }
                let s = &lx.stmts[i];
                let c = &st.stmts[i];
                let t = Toks::new(&src, lx, s);
                match &c.kind {
                    Kind::TypeDef => in_type = true,
                    Kind::End(ConstructKind::Type) => in_type = false,
                    _ if in_type => {}
                    Kind::Declaration => {
                        for v in declaration(&t, s.toks().start) {
                            merge_searching(&mut old, v);
                        }
                    }
                    Kind::Attribute(_) => {
                        for v in attribute_statement(&t, c.rest()) {
                            merge_searching(&mut old, v);
                        }
                    }
                    Kind::Parameter => {
                        for k in c.rest()..t.end {
                            if t.is_name(k) && t.text(k + 1) == "=" {
                                let mut v = named(&t, k);
                                v.parameter = true;
                                merge_searching(&mut old, v);
                            }
                        }
                    }
                    _ => {}
                }
            }
            let uf = &front.facts.units[u];
            assert_eq!(uf.vars, old, "unit {u}");
            for name in ["a1", "b2", "x", "y", "z", "q", "n10", "c14", "a300", ""] {
                let searched = old.iter().find(|v| v.name == name);
                assert_eq!(uf.var(name), searched, "unit {u} {name}");
                checked += usize::from(searched.is_some());
            }
            for v in &old {
                assert_eq!(uf.var(&v.name), Some(v));
            }
        }
        assert!(
            front.facts.units[0].vars.len() > 600,
            "{}",
            front.facts.units[0].vars.len()
        );
        assert!(checked >= 8, "{checked}");
    }
}
