//! What the semantic layer knows about a file's directives, whichever way it was found.

use crate::diag::Diagnostic;
use crate::hash::HashMap;
use crate::source::{Index32, narrow};
use std::ops::Range;
use std::sync::Arc;

/// How a file's facts were obtained.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mode {
    /// Parsed by libclang (`version` as libclang reports it, e.g. `19.1.7`); `openacc`:
    /// with its OpenACC front end (`-fopenacc`, libclang 21 and newer), whose checks ran.
    Clang { version: String, openacc: bool },
    /// From syntax alone, and why.
    Syntactic { reason: String },
    /// A Fortran file's declarations, with what flang (`version`) says of the names its
    /// modules of other files give it.
    Flang { version: String },
}

impl Mode {
    pub fn is_syntactic(&self) -> bool {
        matches!(self, Mode::Syntactic { .. })
    }

    pub fn describe(&self) -> String {
        match self {
            Mode::Clang {
                version,
                openacc: false,
            } => format!("libclang {version}"),
            Mode::Clang { version, .. } => format!("libclang {version} with its OpenACC checks"),
            Mode::Syntactic { reason } => format!("syntactic ({reason})"),
            Mode::Flang { version } => format!("flang {version} symbols"),
        }
    }
}

/// The shape of a variable's type that matters for data mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VarKind {
    /// Arithmetic, enum, `bool`: OpenMP makes it `firstprivate` implicitly.
    Scalar,
    Pointer,
    /// With the first dimension's constant extent when known.
    Array {
        extent: Option<u64>,
    },
    /// struct, union or class object.
    Struct,
    /// References, dependent types, unknown typedefs.
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VarType {
    pub kind: VarKind,
    /// The variable itself is const-qualified (for arrays: its elements).
    pub is_const: bool,
    /// An incomplete type (`struct S;` only declared, `extern int a[];`).
    pub incomplete: bool,
    /// A `restrict`-qualified pointer (`restrict`, `__restrict`, `__restrict__`).
    pub restrict: bool,
    /// Subscripts that stay inside the one object the variable is or points to: 2 for
    /// `T a[N][M]` and `T (*p)[M]`, 1 for `T *p` and `T **p` (a second subscript goes through
    /// a pointer loaded from memory), 0 otherwise. 0 when unsure: the dependence test treats
    /// deeper subscripts as going through unknown pointers.
    pub dims: u8,
    /// Extents of the dimensions subscripts reach without going through a pointer: an
    /// array's dimensions; for a pointer, an unknown first one and then those of the array
    /// it points to (`double (*p)[8]`: `[None, Some(8)]`). Empty for other types.
    pub extents: Vec<Option<u64>>,
    /// A parameter declared as an array (`double a[N][M]`), which C adjusts to a pointer
    /// (`kind` is `Pointer`): each dimension's bound as spelled, None where it is empty or
    /// not a constant (`a[]`, `a[n]`).
    pub param_dims: Option<Vec<Option<String>>>,
}

impl VarType {
    pub fn unknown() -> Self {
        VarType {
            kind: VarKind::Other,
            is_const: false,
            incomplete: false,
            restrict: false,
            dims: 0,
            extents: Vec::new(),
            param_dims: None,
        }
    }

    /// The whole array of a parameter declared as one, as an array section (`a[0:N][0:M]`),
    /// when the first bound is known.
    pub fn param_section(&self, name: &str) -> Option<String> {
        let dims = self.param_dims.as_ref()?;
        dims.first()?.as_ref()?;
        let mut out = name.to_string();
        for d in dims {
            match d {
                Some(b) => out.push_str(&format!("[0:{b}]")),
                // An inner bound that is not a constant: the rows stay whole.
                None => break,
            }
        }
        Some(out)
    }
}

/// The bounds spelled after the declarator name that ends at `name_end` (`[N][M]`), as
/// written; empty for `[]`; qualifiers and `static` inside the brackets are dropped.
pub fn spelled_dims(src: &str, name_end: usize) -> Vec<String> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut k = name_end;
    loop {
        while k < b.len() && (b[k] as char).is_whitespace() {
            k += 1;
        }
        if k >= b.len() || b[k] != b'[' {
            return out;
        }
        let open = k;
        let mut depth = 0i32;
        let mut close = None;
        while k < b.len() {
            match b[k] {
                b'[' | b'(' => depth += 1,
                b']' | b')' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(k);
                        break;
                    }
                }
                _ => {}
            }
            k += 1;
        }
        let Some(close) = close else { return out };
        let mut inner = src[open + 1..close].trim();
        while let Some(rest) = ["static", "const", "restrict", "volatile", "__restrict"]
            .iter()
            .find_map(|q| {
                inner.strip_prefix(q).filter(|r| {
                    r.is_empty() || r.starts_with(|c: char| !c.is_alphanumeric() && c != '_')
                })
            })
        {
            inner = rest.trim_start();
        }
        out.push(inner.to_string());
        k = close + 1;
    }
}

/// A variable referenced inside a region and declared outside it. A large file has a few
/// per site: the offsets are 32 bits (a text the lexers take fits them), and the writes,
/// none for most variables, a box of their own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionVar {
    /// Inline up to 24 bytes (most names): no allocation per variable of each site.
    pub name: compact_str::CompactString,
    /// Shared by the uses of one declaration (a type per use would hold 80 bytes and its
    /// vectors for every variable of every site).
    pub ty: Arc<VarType>,
    decl: Index32,
    first_use: u32,
    // One word where a vector is three: most variables have no writes.
    #[allow(clippy::box_collection)]
    writes: Option<Box<Vec<usize>>>,
}

impl RegionVar {
    pub fn new(
        name: impl Into<compact_str::CompactString>,
        ty: Arc<VarType>,
        decl: Option<usize>,
        first_use: usize,
        writes: Vec<usize>,
    ) -> Self {
        let mut v = RegionVar {
            name: name.into(),
            ty,
            decl: Index32::new(decl),
            first_use: narrow(first_use),
            writes: None,
        };
        v.set_writes(writes);
        v
    }

    /// Offset of its declaration in this file (None: another file).
    pub fn decl(&self) -> Option<usize> {
        self.decl.get()
    }

    /// Offset of its first use inside the region.
    pub fn first_use(&self) -> usize {
        self.first_use as usize
    }

    /// An earlier use inside the region.
    pub fn used_at(&mut self, at: usize) {
        self.first_use = self.first_use.min(narrow(at));
    }

    /// Offsets inside the region where the variable itself is modified: assignment,
    /// compound assignment, `++`/`--`, address taken.
    pub fn writes(&self) -> &[usize] {
        self.writes.as_deref().map_or(&[], |w| w)
    }

    pub fn set_writes(&mut self, mut writes: Vec<usize>) {
        writes.shrink_to_fit();
        self.writes = (!writes.is_empty()).then(|| Box::new(writes));
    }

    /// A write at `at`, after those known.
    pub fn add_write(&mut self, at: usize) {
        self.writes.get_or_insert_default().push(at);
    }

    /// More writes, the whole kept sorted.
    pub fn add_writes(&mut self, more: &[usize]) {
        if more.is_empty() {
            return;
        }
        let w = self.writes.get_or_insert_default();
        w.extend_from_slice(more);
        w.sort_unstable();
    }
}

/// Shape of the `for` loop a loop directive applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopShape {
    /// The control variable, when the init names one.
    pub var: Option<String>,
    /// Declared in the init (`for (int i = ...)`), not assigned (`for (i = ...)`).
    pub declared: bool,
    /// Perfectly nested `for` loops starting here (this one included).
    pub depth: usize,
}

/// Facts about one directive site.
#[derive(Debug, Clone, Default)]
pub struct SiteFacts {
    /// From libclang (true) or from syntax (false).
    pub exact: bool,
    /// The statement the directive applies to.
    pub stmt: Option<Range<usize>>,
    pub loop_shape: Option<LoopShape>,
    /// Compute constructs and the loops inside them: variables referenced inside, declared
    /// outside, in order of first use.
    pub vars: Vec<RegionVar>,
    /// Types of the names this site's clauses use (`private(x)`, `num_workers(n)`), and
    /// which of them are parameters of a type the syntax does not know.
    pub names: Names,
    /// Compute constructs: the variables declared inside the region (`stmt`).
    pub inner: Declared,
}

/// The variables declared inside a region (the site's statement): the file's declarations by
/// name, shared by all its sites (a list per site would hold 50 million names for a nest of
/// 10,000 loops).
#[derive(Debug, Clone, Default)]
pub struct Declared {
    /// Offsets of the declarations of each name, ascending (None: no region, and no table
    /// allocated for the site).
    by_name: Option<Arc<HashMap<String, Vec<usize>>>>,
}

impl Declared {
    /// `by_name` for the region of a site whose statement is that region (`SiteFacts::stmt`,
    /// not held twice).
    pub fn new(by_name: Arc<HashMap<String, Vec<usize>>>) -> Self {
        Declared {
            by_name: Some(by_name),
        }
    }

    /// Whether a variable `name` is declared in `region`.
    pub fn contains(&self, name: &str, region: &Range<usize>) -> bool {
        let Some(by_name) = &self.by_name else {
            return false;
        };
        by_name.get(name).is_some_and(|at| {
            let k = at.partition_point(|&o| o < region.start);
            at.get(k).is_some_and(|&o| o < region.end)
        })
    }
}

impl SiteFacts {
    pub fn var(&self, name: &str) -> Option<&RegionVar> {
        match self.names.var_position(&self.vars, name) {
            Some(k) => k.map(|k| &self.vars[k]),
            None => self.vars.iter().find(|v| v.name == name),
        }
    }

    /// Whether a variable `name` is declared inside the region (a compute construct's).
    pub fn declared_inside(&self, name: &str) -> bool {
        self.stmt
            .as_ref()
            .is_some_and(|region| self.inner.contains(name, region))
    }

    /// The type of `name` as seen at this site.
    pub fn type_of(&self, name: &str) -> Option<&VarType> {
        self.names
            .get(name)
            .or_else(|| self.var(name).map(|v| &*v.ty))
    }
}

/// The types of a site's clause names, and the clause names that are parameters of a type
/// the syntax does not know: a few names each, so one list (a hash table holds at least 4
/// entries and its control bytes for one name), searched by name, with room for its names
/// only; most sites have none, and no allocation (two vectors held 48 bytes at every site).
/// A directive of thousands of clauses has tables instead (`Many`), so that its names are
/// not searched once per name.
///
/// A site of many variables has the tables too, with its variables sorted by name (there,
/// not in a field of every site): the variables of the sites a file's facts keep ([`Sites`])
/// are found by name without a search of all (a region naming thousands looks each up).
#[derive(Debug, Clone, Default)]
pub struct Names(Repr);

#[derive(Debug, Clone)]
enum Repr {
    Few(Box<[Name]>),
    Many(Box<ManyNames>),
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Few(Box::default())
    }
}

/// Entries a list holds before its names are indexed: searching so few costs less than
/// hashing.
const FEW_NAMES: usize = 16;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Name {
    /// A name's type; the names typed are in the order they were first inserted.
    Typed(String, Arc<VarType>),
    /// A parameter of the enclosing function of a type the syntax does not know (a macro
    /// writes the declarator, or the type is from a header not read).
    UnknownParam(String),
}

/// Variables a site holds before they are indexed by name.
const FEW_VARS: usize = 16;

/// The names of a site with more than `FEW_NAMES`, by name (their order is not used).
#[derive(Debug, Default)]
struct ManyNames {
    typed: HashMap<String, Arc<VarType>>,
    unknown: crate::hash::HashSet<String>,
    /// The site's variables (`SiteFacts::vars`, indices) sorted by name, a name's first
    /// first; empty unless indexed.
    vars: Box<[u32]>,
}

/// A copy may have its variables changed: it is not indexed.
impl Clone for ManyNames {
    fn clone(&self) -> Self {
        ManyNames {
            typed: self.typed.clone(),
            unknown: self.unknown.clone(),
            vars: Box::default(),
        }
    }
}

/// Names are equal when they type the same names alike and know the same parameters,
/// however they are held.
impl PartialEq for Names {
    fn eq(&self, o: &Self) -> bool {
        self.len() == o.len()
            && self.typed().all(|(n, t)| o.get(n) == Some(t))
            && self.unknown().all(|n| o.is_unknown_param(n))
            && o.unknown().all(|n| self.is_unknown_param(n))
    }
}

impl Eq for Names {}

impl Names {
    #[inline]
    pub fn get(&self, name: &str) -> Option<&VarType> {
        match &self.0 {
            Repr::Few(l) => l.iter().find_map(|e| match e {
                Name::Typed(n, t) if n == name => Some(&**t),
                _ => None,
            }),
            Repr::Many(m) => m.typed.get(name).map(|t| &**t),
        }
    }

    /// Sets the type of `name`, replacing the one it had.
    pub fn insert(&mut self, name: String, ty: impl Into<Arc<VarType>>) {
        let ty = ty.into();
        let l = match &mut self.0 {
            Repr::Few(l) => l,
            Repr::Many(m) => {
                m.typed.insert(name, ty);
                return;
            }
        };
        let typed = l.iter_mut().find_map(|e| match e {
            Name::Typed(n, t) if *n == name => Some(t),
            _ => None,
        });
        match typed {
            Some(t) => *t = ty,
            None => self.push(Name::Typed(name, ty)),
        }
    }

    /// Room for one more name only (a vector grown from empty holds room for 4); beyond
    /// `FEW_NAMES`, the tables.
    fn push(&mut self, e: Name) {
        let l = match &mut self.0 {
            Repr::Few(l) => l,
            Repr::Many(m) => return m.add(e),
        };
        if l.len() >= FEW_NAMES {
            self.0 = Repr::Many(ManyNames::of(std::mem::take(l), e));
            return;
        }
        let mut v = std::mem::take(l).into_vec();
        v.reserve_exact(1);
        v.push(e);
        *l = v.into_boxed_slice();
    }

    /// The number of names with a type.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Few(l) => l.iter().filter(|e| matches!(e, Name::Typed(..))).count(),
            Repr::Many(m) => m.typed.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Notes that clause name `name` is a parameter of a type the syntax does not know.
    pub fn add_unknown_param(&mut self, name: String) {
        self.push(Name::UnknownParam(name));
    }

    /// Whether `name` is a parameter of a type the syntax does not know.
    #[inline]
    pub fn is_unknown_param(&self, name: &str) -> bool {
        match &self.0 {
            Repr::Few(l) => l
                .iter()
                .any(|e| matches!(e, Name::UnknownParam(n) if n == name)),
            Repr::Many(m) => m.unknown.contains(name),
        }
    }

    fn typed(&self) -> Box<dyn Iterator<Item = (&str, &VarType)> + '_> {
        match &self.0 {
            Repr::Few(l) => Box::new(l.iter().filter_map(|e| match e {
                Name::Typed(n, t) => Some((n.as_str(), &**t)),
                Name::UnknownParam(_) => None,
            })),
            Repr::Many(m) => Box::new(m.typed.iter().map(|(n, t)| (n.as_str(), &**t))),
        }
    }

    fn unknown(&self) -> Box<dyn Iterator<Item = &str> + '_> {
        match &self.0 {
            Repr::Few(l) => Box::new(l.iter().filter_map(|e| match e {
                Name::UnknownParam(n) => Some(n.as_str()),
                Name::Typed(..) => None,
            })),
            Repr::Many(m) => Box::new(m.unknown.iter().map(String::as_str)),
        }
    }

    /// Indexes the site's variables `vars` by name when they are many (then the names are
    /// held in tables).
    fn index_vars(&mut self, vars: &[RegionVar]) {
        if vars.len() <= FEW_VARS || u32::try_from(vars.len()).is_err() {
            return;
        }
        if let Repr::Few(l) = &mut self.0 {
            let mut m = Box::new(ManyNames::default());
            for e in std::mem::take(l).into_vec() {
                m.add(e);
            }
            self.0 = Repr::Many(m);
        }
        let Repr::Many(m) = &mut self.0 else {
            return;
        };
        let mut sorted: Vec<u32> = (0..vars.len() as u32).collect();
        // Stable: a name's first variable first.
        sorted.sort_by(|&a, &b| vars[a as usize].name.cmp(&vars[b as usize].name));
        m.vars = sorted.into_boxed_slice();
    }

    /// The first of `vars` named `name`, when they are indexed (`index_vars`).
    fn var_position(&self, vars: &[RegionVar], name: &str) -> Option<Option<usize>> {
        let Repr::Many(m) = &self.0 else {
            return None;
        };
        if m.vars.len() != vars.len() || vars.is_empty() {
            return None;
        }
        let k = m
            .vars
            .partition_point(|&k| vars[k as usize].name.as_str() < name);
        Some(
            m.vars
                .get(k)
                .map(|&k| k as usize)
                .filter(|&k| vars[k].name == name),
        )
    }
}

impl ManyNames {
    /// The tables of a list's names and `e` (rare: out of the way of the few names' path).
    #[cold]
    #[inline(never)]
    fn of(l: Box<[Name]>, e: Name) -> Box<Self> {
        let mut m = ManyNames::default();
        for e in l.into_vec().into_iter().chain([e]) {
            m.add(e);
        }
        Box::new(m)
    }

    /// A name typed twice in a list keeps its last type, as `Names::insert` replaces it.
    fn add(&mut self, e: Name) {
        match e {
            Name::Typed(n, t) => {
                self.typed.insert(n, t);
            }
            Name::UnknownParam(n) => {
                self.unknown.insert(n);
            }
        }
    }
}

/// One `Arc` per distinct type, so that the variables of a file's sites share their types.
#[derive(Debug, Default)]
pub struct Types(crate::hash::HashSet<Arc<VarType>>);

impl Types {
    pub fn share(&mut self, ty: VarType) -> Arc<VarType> {
        if let Some(t) = self.0.get(&ty) {
            return t.clone();
        }
        let t = Arc::new(ty);
        self.0.insert(t.clone());
        t
    }
}

/// Everything the semantic layer found in one file.
#[derive(Debug, Clone)]
pub struct FileFacts {
    pub mode: Mode,
    /// Keyed by the site's span start.
    pub sites: Sites,
    /// Warnings and notes about the analysis itself, and errors about directives.
    pub diags: Vec<Diagnostic>,
    /// Starts of the sites the analysis rejects (clang's OpenACC errors): left unchanged.
    pub rejected: Vec<usize>,
    /// Directives in active code whose facts came from syntax (libclang missing, failing or
    /// disagreeing); `--require-clang` fails on them.
    pub fell_back: usize,
    /// What besides the file's own text the facts were read from.
    pub inputs: Inputs,
    /// Macros defined in headers that the file expands (libclang only).
    pub header_macros: Vec<HeaderMacro>,
}

/// A macro defined outside the file (in a header, or by the command line's `-D`) and
/// expanded in it, as libclang's preprocessor saw it: one definition in effect wherever the
/// file uses the name, and the macros its body names likewise. The dependence test expands a loop's tokens with them
/// (`#define N 4096` in a header bounding a `kernels` loop).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderMacro {
    pub name: String,
    /// Function-like: its parameters.
    pub params: Option<Vec<String>>,
    /// The replacement text, line continuations removed.
    pub body: String,
}

/// The files besides a source that its facts were read from (the headers libclang
/// included), so that a result kept for reuse (`crate::cache`) is reused only while they are
/// unchanged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inputs {
    /// Absolute paths, sorted.
    pub files: Vec<std::path::PathBuf>,
    /// The facts depend on more than `files` and the file's own text, its flags and the
    /// libclang used: an `#include` that found no file (creating it changes the parse), or a
    /// parse that failed (a crash or time limit may not recur). Such a result is not kept.
    pub incomplete: bool,
    /// Absolute paths that must not exist: where flang looked for a module or an include
    /// before the place it found one (a `.mod` created there later is read instead).
    pub absent: Vec<std::path::PathBuf>,
    /// Directories whose Fortran sources flang's module builds chose from: which source
    /// defines a module (`crate::fortran::flang::module_sources_digest`).
    pub module_dirs: Vec<std::path::PathBuf>,
}

impl FileFacts {
    pub fn at(&self, offset: usize) -> Option<&SiteFacts> {
        self.sites.get(offset)
    }
}

/// The facts of a file's sites by their span starts: two vectors sorted by start (a hash
/// table of 100,000 sites holds 131,072 slots of facts, and building it from the vector the
/// analysis gives holds both).
#[derive(Debug, Clone, Default)]
pub struct Sites {
    starts: Vec<usize>,
    facts: Vec<SiteFacts>,
}

impl Sites {
    /// `facts[k]` is the facts of the site at `starts[k]`; a start given twice keeps its
    /// last facts.
    pub fn new(starts: Vec<usize>, facts: Vec<SiteFacts>) -> Self {
        assert_eq!(starts.len(), facts.len());
        if starts.is_sorted_by(|a, b| a < b) {
            let mut facts = facts;
            for f in &mut facts {
                f.names.index_vars(&f.vars);
            }
            return Sites { starts, facts };
        }
        // A stable sort keeps equal starts in the order given: the last one wins.
        let mut pairs: Vec<(usize, SiteFacts)> = starts.into_iter().zip(facts).collect();
        pairs.sort_by_key(|&(at, _)| at);
        let mut s = Sites::default();
        for (at, mut f) in pairs {
            f.names.index_vars(&f.vars);
            if s.starts.last() == Some(&at) {
                *s.facts.last_mut().expect("as many facts as starts") = f;
            } else {
                s.starts.push(at);
                s.facts.push(f);
            }
        }
        s
    }

    pub fn get(&self, start: usize) -> Option<&SiteFacts> {
        let k = self.starts.binary_search(&start).ok()?;
        self.facts.get(k)
    }

    /// Sets the facts of the site at `start`, replacing those it had.
    pub fn insert(&mut self, start: usize, mut f: SiteFacts) {
        f.names.index_vars(&f.vars);
        match self.starts.binary_search(&start) {
            Ok(k) => self.facts[k] = f,
            Err(k) => {
                self.starts.insert(k, start);
                self.facts.insert(k, f);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.starts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(depth: usize) -> SiteFacts {
        SiteFacts {
            loop_shape: Some(LoopShape {
                var: None,
                declared: false,
                depth,
            }),
            ..SiteFacts::default()
        }
    }

    fn depth(s: &Sites, at: usize) -> Option<usize> {
        Some(s.get(at)?.loop_shape.as_ref()?.depth)
    }

    /// The sites' table answers as the hash table it replaces did: by start, a start given
    /// twice keeping its last facts, whatever the order they come in.
    #[test]
    fn sites_by_start() {
        let sorted = Sites::new(vec![3, 10, 40], vec![facts(1), facts(2), facts(3)]);
        assert_eq!(
            [0, 3, 10, 11, 40, 41].map(|a| depth(&sorted, a)),
            [None, Some(1), Some(2), None, Some(3), None]
        );
        let mixed = Sites::new(
            vec![40, 3, 10, 3],
            vec![facts(3), facts(9), facts(2), facts(1)],
        );
        assert_eq!(mixed.len(), 3);
        assert_eq!(
            [3, 10, 40].map(|a| depth(&mixed, a)),
            [Some(1), Some(2), Some(3)]
        );
        let mut s = Sites::default();
        assert!(s.is_empty());
        for (at, d) in [(5, 1), (1, 2), (9, 3), (5, 4)] {
            s.insert(at, facts(d));
        }
        assert_eq!([1, 5, 9].map(|a| depth(&s, a)), [Some(2), Some(4), Some(3)]);
    }

    /// A name's type set twice is replaced; the names stay in the order first given; one
    /// name's list holds room for one; no name, no allocation.
    #[test]
    fn names_replace_and_keep_order() {
        let scalar = VarType {
            kind: VarKind::Scalar,
            ..VarType::unknown()
        };
        let list = |n: &Names| match &n.0 {
            Repr::Few(l) => l.clone(),
            Repr::Many(_) => panic!("a few names in a list"),
        };
        let mut n = Names::default();
        assert!(list(&n).is_empty() && n.is_empty() && !n.is_unknown_param("x"));
        n.insert("x".into(), VarType::unknown());
        n.insert("y".into(), scalar.clone());
        n.insert("x".into(), scalar.clone());
        assert_eq!(n.len(), 2);
        assert_eq!(n.get("x"), Some(&scalar));
        assert_eq!(n.get("z"), None);
        let order: Vec<String> = list(&n)
            .iter()
            .filter_map(|e| match e {
                Name::Typed(k, _) => Some(k.clone()),
                Name::UnknownParam(_) => None,
            })
            .collect();
        assert_eq!(order, ["x", "y"]);
        // Unknown parameters apart from the types: one without a type, one with.
        let mut p = Names::default();
        p.add_unknown_param("a".into());
        assert!(p.is_unknown_param("a") && !p.is_unknown_param("x"));
        assert!(p.is_empty() && p.get("a").is_none());
        n.add_unknown_param("x".into());
        assert!(n.is_unknown_param("x") && !n.is_unknown_param("y"));
        assert_eq!(n.len(), 2);
        assert_eq!(list(&n).len(), 3);
        assert_eq!(n.get("x"), Some(&scalar));
    }

    /// Many names answer as the one list searched by name did (the oracle below): types
    /// replaced, the last one kept, unknown parameters apart; beyond `FEW_NAMES` in tables.
    #[test]
    fn many_names_answer_as_one_list() {
        let kinds = [
            VarKind::Scalar,
            VarKind::Pointer,
            VarKind::Struct,
            VarKind::Array { extent: Some(4) },
        ];
        let ty = |k: usize| VarType {
            kind: kinds[k % kinds.len()],
            ..VarType::unknown()
        };
        for total in [0, 3, FEW_NAMES, FEW_NAMES + 1, 200] {
            let mut n = Names::default();
            let mut oracle: Vec<Name> = Vec::new();
            for k in 0..total {
                // Names repeat (`k % 7 == 0` types an earlier one again) and some are
                // unknown parameters too, as clauses name them.
                let name = format!("v{}", if k % 7 == 0 { k / 2 } else { k });
                n.insert(name.clone(), ty(k));
                match oracle.iter_mut().find_map(|e| match e {
                    Name::Typed(m, t) if *m == name => Some(t),
                    _ => None,
                }) {
                    Some(t) => *t = Arc::new(ty(k)),
                    None => oracle.push(Name::Typed(name.clone(), Arc::new(ty(k)))),
                }
                if k % 5 == 0 {
                    n.add_unknown_param(format!("p{}", k % 15));
                    oracle.push(Name::UnknownParam(format!("p{}", k % 15)));
                }
            }
            assert_eq!(matches!(n.0, Repr::Many(_)), oracle.len() > FEW_NAMES);
            let typed = |m: &str| {
                oracle.iter().find_map(|e| match e {
                    Name::Typed(k, t) if k == m => Some(&**t),
                    _ => None,
                })
            };
            let count = oracle
                .iter()
                .filter(|e| matches!(e, Name::Typed(..)))
                .count();
            assert_eq!(n.len(), count);
            for k in 0..total + 20 {
                for m in [format!("v{k}"), format!("p{k}")] {
                    assert_eq!(n.get(&m), typed(&m), "{m}");
                    let unknown = oracle
                        .iter()
                        .any(|e| matches!(e, Name::UnknownParam(p) if *p == m));
                    assert_eq!(n.is_unknown_param(&m), unknown, "{m}");
                }
            }
        }
    }

    /// Equal types share one allocation; different ones do not.
    #[test]
    fn types_are_shared() {
        let mut t = Types::default();
        let pointer = VarType {
            kind: VarKind::Pointer,
            dims: 1,
            extents: vec![None],
            ..VarType::unknown()
        };
        let a = t.share(pointer.clone());
        let b = t.share(pointer.clone());
        let c = t.share(VarType::unknown());
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(*a, pointer);
    }

    /// What every site holds: a site's facts without its region twice, a variable's name
    /// inline.
    #[test]
    fn facts_sizes() {
        assert!(size_of::<SiteFacts>() <= 120, "{}", size_of::<SiteFacts>());
        // The clause names, none at most sites, in one list without spare room.
        assert_eq!(size_of::<Names>(), 16);
        assert_eq!(size_of::<Name>(), 32);
        let v = RegionVar::new(
            "a_variable_name",
            Arc::new(VarType::unknown()),
            None,
            0,
            vec![],
        );
        assert!(!v.name.is_heap_allocated());
        // Two or three per site: 32-bit offsets and the writes boxed (it was 80 bytes).
        assert_eq!(size_of::<RegionVar>(), 48);
    }

    /// A variable's offsets and writes read back as they were given and added.
    #[test]
    fn region_var_fields_read_back() {
        let ty = Arc::new(VarType::unknown());
        let mut v = RegionVar::new("x", ty.clone(), Some(7), 40, vec![]);
        assert_eq!(
            (v.decl(), v.first_use(), v.writes()),
            (Some(7), 40, &[][..])
        );
        v.used_at(50);
        v.used_at(30);
        v.add_writes(&[]);
        assert!(v.writes.is_none());
        v.add_write(45);
        v.add_writes(&[41, 60]);
        assert_eq!((v.first_use(), v.writes()), (30, &[41, 45, 60][..]));
        let w = RegionVar::new("y", ty, None, 0, Vec::with_capacity(9));
        assert_eq!((w.decl(), w.writes.is_none()), (None, true));
    }

    /// The variables of a site that `Sites` keeps are found by name as a search of all finds
    /// them (a name's first), and its clause names keep their types.
    #[test]
    fn many_variables_found_by_name() {
        let var = |name: &str, first_use: usize| {
            RegionVar::new(name, Arc::new(VarType::unknown()), None, first_use, vec![])
        };
        for n in [0, 3, FEW_VARS, FEW_VARS + 1, 200] {
            let mut f = SiteFacts {
                vars: (0..n)
                    .map(|k| var(&format!("v{}", k * 7 % 23), k))
                    .collect(),
                ..SiteFacts::default()
            };
            f.names.insert("v1".into(), VarType::unknown());
            f.names.add_unknown_param("q".into());
            let names = f.names.clone();
            let sites = Sites::new(vec![5], vec![f.clone()]);
            let mut inserted = Sites::default();
            inserted.insert(5, f.clone());
            for kept in [sites.get(5).unwrap(), inserted.get(5).unwrap()] {
                assert_eq!(kept.names, names);
                assert_eq!(kept.names.get("v1"), Some(&VarType::unknown()));
                assert!(kept.names.is_unknown_param("q") && !kept.names.is_unknown_param("v1"));
                for k in 0..30 {
                    for name in [format!("v{k}"), format!("w{k}"), String::new()] {
                        let want = f.vars.iter().find(|v| v.name == name.as_str());
                        assert_eq!(kept.var(&name), want, "{n} {name}");
                        // A copy is searched.
                        assert_eq!(kept.clone().var(&name), want, "{n} {name}");
                    }
                }
            }
        }
    }

    /// A site without a region allocates no table of declarations.
    #[test]
    fn declared_default_is_empty() {
        let d = Declared::default();
        assert!(d.by_name.is_none());
        assert!(!d.contains("x", &(0..30)));
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::default();
        by_name.insert("x".into(), vec![5, 20]);
        let d = Declared::new(Arc::new(by_name));
        assert!(d.contains("x", &(10..30)));
        assert!(!d.contains("x", &(21..30)));
        assert!(!d.contains("y", &(10..30)));
        // A site's statement is its region.
        let f = SiteFacts {
            stmt: Some(10..30),
            inner: d,
            ..SiteFacts::default()
        };
        assert!(f.declared_inside("x") && !f.declared_inside("y"));
    }
}
