//! OpenACC directive IR and its parser: the text after `acc` becomes a directive name and
//! clauses whose arguments keep their verbatim source text and byte spans.

mod check;
pub mod count;
mod device_type;
mod fortran_info;
#[cfg(test)]
mod generated;
mod parse;

pub use device_type::resolve as resolve_device_type;
pub use fortran_info::{Parsed, fortran_site_info, fortran_site_parse};

pub use check::{
    integer_literal, literal_bound_possible, negative_literal, no_op_data, positive_literal_bound,
    section_bounds,
};
pub use parse::{
    ParseError, counts_copies, directive_name, directive_name_in, parse_directive_all,
    parse_directive_all_in, parse_grammar_in,
};
#[cfg(test)]
pub(crate) use parse::{parse_directive, parse_directive_in};

use crate::source::{Span32, narrow};
use compact_str::CompactString;
use std::ops::Range;

/// A name or argument text of the IR: held inline up to 24 bytes (a clause name, most items
/// and lists), so a parsed directive makes few allocations; it reads as a `&str`.
pub type Text = CompactString;

/// The base language of the directive text: its comments, quotes, names and expressions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Dialect {
    /// `#pragma acc` / `_Pragma` text: `/* */` and `//` comments, `\` continuations,
    /// sub-arrays `a[lo:len]`, case-sensitive names.
    #[default]
    C,
    /// `!$acc` text joined over its lines (comments and `&` already taken out):
    /// case-insensitive names, array sections `a(lo:hi)`, `t%b`, `.and.`, `/common/`
    /// blocks, doubled quotes, and the `end` directives.
    Fortran,
}

impl Dialect {
    /// The dialect of a source language, by its name (`Language::name`, a lower layer).
    pub fn of_language(name: &str) -> Self {
        if name == "Fortran" {
            Dialect::Fortran
        } else {
            Dialect::C
        }
    }
}

/// Clauses whose items are data the directive maps or points to (a variable in two of them
/// on one directive is an error), by canonical name; those that give data a device lifetime
/// come first ([`LIFETIME_CLAUSES`]).
pub const DATA_CLAUSES: [&str; 12] = [
    "copy",
    "copyin",
    "copyout",
    "create",
    "no_create",
    "present",
    "delete",
    "deviceptr",
    "attach",
    "detach",
    "device_resident",
    "link",
];

/// The data clauses that give data a lifetime on the device (a reference count).
pub const LIFETIME_CLAUSES: &[&str] = DATA_CLAUSES.split_at(7).0;

/// One argument of a clause (`a[0:n]`, `+`, `num:4`), verbatim, with its span (32 bits: a
/// text the lexers take fits them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub text: Text,
    span: Span32,
}

impl Item {
    pub fn new(text: impl Into<Text>, span: Range<usize>) -> Self {
        Item {
            text: text.into(),
            span: Span32::new(span),
        }
    }

    pub fn span(&self) -> Range<usize> {
        self.span.get()
    }
}

/// A parenthesized argument list: an optional `modifier:` prefix and comma-separated items.
/// A large file has a hundred thousand of them: the rare modifier is boxed, the items
/// hold no spare room, and the offsets are 32 bits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    /// Inside the parentheses.
    span: Span32,
    pub modifier: Option<Box<Item>>,
    pub items: Box<[Item]>,
    /// The items as written, separators and comments included (the user's spacing is kept
    /// when a clause is renamed).
    pub list: Text,
    /// Where `list` begins in the directive text.
    list_start: u32,
}

impl Args {
    pub(crate) fn new(
        span: Range<usize>,
        modifier: Option<Box<Item>>,
        items: Box<[Item]>,
        list: Text,
        list_start: usize,
    ) -> Self {
        Args {
            span: Span32::new(span),
            modifier,
            items,
            list,
            list_start: narrow(list_start),
        }
    }

    /// Inside the parentheses.
    pub fn span(&self) -> Range<usize> {
        self.span.get()
    }

    /// Where `list` begins in the directive text.
    pub fn list_start(&self) -> usize {
        self.list_start as usize
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clause {
    /// Canonical name from the clause table (aliases resolved).
    pub name: Text,
    /// As written (`pcopy`, `copy`, ...) where that is not `name`.
    spelled: Option<Box<str>>,
    /// From the clause name to the closing parenthesis.
    span: Span32,
    pub args: Option<Args>,
}

impl Clause {
    pub(crate) fn new(name: &str, spelled: &str, span: Range<usize>, args: Option<Args>) -> Self {
        Clause {
            name: name.into(),
            spelled: (spelled != name).then(|| spelled.into()),
            span: Span32::new(span),
            args,
        }
    }

    /// From the clause name to the closing parenthesis.
    pub fn span(&self) -> Range<usize> {
        self.span.get()
    }

    /// The name as written (`pcopy`, `copy`, ...).
    pub fn spelled(&self) -> &str {
        self.spelled.as_deref().unwrap_or(&self.name)
    }

    pub fn items(&self) -> impl Iterator<Item = &Item> {
        self.args.iter().flat_map(|a| a.items.iter())
    }
    pub fn modifier(&self) -> Option<&str> {
        self.args
            .as_ref()
            .and_then(|a| a.modifier.as_ref())
            .map(|m| m.text.as_str())
    }
    /// The argument list as written, without parentheses.
    pub fn arg_text(&self) -> Option<String> {
        self.args.as_ref().map(|a| match &a.modifier {
            Some(m) => format!("{}: {}", m.text, a.list),
            None => a.list.to_string(),
        })
    }

    /// The item list as written (without the modifier), or "" without arguments.
    pub fn list_text(&self) -> &str {
        self.args.as_ref().map_or("", |a| a.list.as_str())
    }

    /// The argument list as written, with text appended to the items `suffix` gives it for.
    pub fn list_with_suffixes(&self, suffix: impl Fn(&Item) -> Option<String>) -> String {
        let Some(a) = &self.args else {
            return String::new();
        };
        // Where each suffix goes in `list`, last item first.
        let inserts: Vec<(Option<usize>, String)> = a
            .items
            .iter()
            .rev()
            .filter_map(|it| Some((it.span().end.checked_sub(a.list_start()), suffix(it)?)))
            .collect();
        let list = a.list.as_str();
        // Items in order within the list: each suffix after the text before it, in one pass
        // (inserted one by one, a list of thousands of items is copied as many times).
        let in_order = inserts
            .iter()
            .try_fold(list.len(), |after, (at, _)| {
                at.filter(|&k| k <= after && list.is_char_boundary(k))
            })
            .is_some();
        if !in_order {
            return insert_suffixes(list, inserts);
        }
        let mut out =
            String::with_capacity(list.len() + inserts.iter().map(|i| i.1.len()).sum::<usize>());
        let mut from = 0;
        for (at, sfx) in inserts.iter().rev() {
            let at = at.unwrap_or(from);
            out.push_str(&list[from..at]);
            out.push_str(sfx);
            from = at;
        }
        out.push_str(&list[from..]);
        out
    }
}

/// `list` with each suffix inserted at its place, last item first (a place beyond the text
/// so far leaves its suffix out).
fn insert_suffixes(list: &str, inserts: Vec<(Option<usize>, String)>) -> String {
    let mut out = list.to_string();
    for (at, sfx) in inserts {
        if let Some(at) = at.filter(|&k| k <= out.len()) {
            out.insert_str(at, &sfx);
        }
    }
    out
}

/// A parsed directive. A large file has a hundred thousand of them, each kept for the whole
/// run: the lists are boxed slices (no spare room; none allocated when empty), the offsets
/// 32 bits (a text the lexers take fits them), and the rare comments and inactive clauses
/// one box, none at most directives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directive {
    /// Canonical name: `parallel loop`, `enter data`, `atomic`, ...
    pub name: DirectiveName,
    /// Argument of the directive itself: `wait(1)`, `cache(a[0:4])`, `routine(f)`. Boxed:
    /// most directives have none.
    pub arg: Option<Box<Args>>,
    pub clauses: Box<[Clause]>,
    marks: Option<Box<Marks>>,
    name_span: Span32,
    /// End of the last significant character.
    end: u32,
}

/// A directive's comments and inactive clauses.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Marks {
    comments: Box<[Range<usize>]>,
    inactive: Box<[Range<usize>]>,
}

impl Directive {
    pub(crate) fn new(
        name: DirectiveName,
        name_span: Range<usize>,
        arg: Option<Box<Args>>,
        clauses: Box<[Clause]>,
        comments: Vec<Range<usize>>,
        end: usize,
    ) -> Directive {
        let mut d = Directive {
            name,
            arg,
            clauses,
            marks: None,
            name_span: Span32::new(name_span),
            end: narrow(end),
        };
        d.set_marks(comments.into_boxed_slice(), Box::default());
        d
    }

    fn set_marks(&mut self, comments: Box<[Range<usize>]>, inactive: Box<[Range<usize>]>) {
        self.marks = (!comments.is_empty() || !inactive.is_empty())
            .then(|| Box::new(Marks { comments, inactive }));
    }

    pub fn name_span(&self) -> Range<usize> {
        self.name_span.get()
    }

    /// End of the last significant character.
    pub fn end(&self) -> usize {
        self.end as usize
    }

    /// Comments inside the directive text.
    pub fn comments(&self) -> &[Range<usize>] {
        self.marks.as_ref().map_or(&[], |m| &m.comments)
    }

    /// Clauses removed before translation (`device_type` sections for other device types):
    /// their text is deleted when the directive is rewritten.
    pub fn inactive(&self) -> &[Range<usize>] {
        self.marks.as_ref().map_or(&[], |m| &m.inactive)
    }

    pub(crate) fn set_inactive(&mut self, inactive: Vec<Range<usize>>) {
        let comments = self.marks.take().map(|m| m.comments).unwrap_or_default();
        self.set_marks(comments, inactive.into_boxed_slice());
    }
}

impl Directive {
    pub fn has(&self, clause: &str) -> bool {
        self.clauses.iter().any(|c| c.name == clause)
    }
    pub fn find(&self, clause: &str) -> Option<&Clause> {
        self.clauses.iter().find(|c| c.name == clause)
    }
    pub fn all<'a>(&'a self, clause: &'a str) -> impl Iterator<Item = &'a Clause> + 'a {
        self.clauses.iter().filter(move |c| c.name == clause)
    }
    pub fn is_combined(&self) -> bool {
        // Fortran's `end parallel loop` ends one.
        self.name.ends_with(" loop") && !self.name.starts_with("end ")
    }
    /// The compute part of a compute or combined directive.
    #[inline]
    pub fn compute_kind(&self) -> Option<&'static str> {
        self.name.compute()
    }
}

/// A directive's canonical name with its [`compute_kind_of`], found once when the name is
/// made (the passes ask for it some twenty times per directive), so the two cannot
/// disagree. It reads as a `&str`. A name of OpenACC's (all but those a rules file adds)
/// is a reference to its entry in [`KNOWN_NAMES`]: 16 bytes, no allocation.
#[derive(Clone)]
pub struct DirectiveName(NameRepr);

#[derive(Clone)]
enum NameRepr {
    Known(&'static KnownName),
    Other(Box<str>),
}

/// A directive name and its compute kind.
struct KnownName(&'static str, Option<&'static str>);

/// The directive names of OpenACC, the Fortran `end` directives included; the most used
/// first (a name is looked up in order).
static KNOWN_NAMES: [KnownName; 30] = [
    KnownName("parallel loop", Some("parallel")),
    KnownName("loop", None),
    KnownName("parallel", Some("parallel")),
    KnownName("kernels", Some("kernels")),
    KnownName("serial", Some("serial")),
    KnownName("kernels loop", Some("kernels")),
    KnownName("serial loop", Some("serial")),
    KnownName("data", None),
    KnownName("enter data", None),
    KnownName("exit data", None),
    KnownName("host_data", None),
    KnownName("update", None),
    KnownName("wait", None),
    KnownName("cache", None),
    KnownName("atomic", None),
    KnownName("declare", None),
    KnownName("routine", None),
    KnownName("init", None),
    KnownName("shutdown", None),
    KnownName("set", None),
    KnownName("end parallel", None),
    KnownName("end serial", None),
    KnownName("end kernels", None),
    KnownName("end parallel loop", None),
    KnownName("end serial loop", None),
    KnownName("end kernels loop", None),
    KnownName("end loop", None),
    KnownName("end data", None),
    KnownName("end host_data", None),
    KnownName("end atomic", None),
];

impl DirectiveName {
    pub fn new(text: &str) -> DirectiveName {
        DirectiveName(match KNOWN_NAMES.iter().find(|k| k.0 == text) {
            Some(k) => NameRepr::Known(k),
            None => NameRepr::Other(text.into()),
        })
    }

    #[inline]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            NameRepr::Known(k) => k.0,
            NameRepr::Other(t) => t,
        }
    }

    /// Whether the name is held on the heap: one not of [`KNOWN_NAMES`].
    #[cfg(test)]
    pub(crate) fn is_heap_allocated(&self) -> bool {
        matches!(self.0, NameRepr::Other(_))
    }

    #[inline]
    fn compute(&self) -> Option<&'static str> {
        match &self.0 {
            NameRepr::Known(k) => k.1,
            NameRepr::Other(t) => compute_kind_of(t),
        }
    }
}

impl From<&str> for DirectiveName {
    fn from(name: &str) -> DirectiveName {
        DirectiveName::new(name)
    }
}

impl std::fmt::Debug for DirectiveName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq for DirectiveName {
    fn eq(&self, other: &DirectiveName) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for DirectiveName {}

impl std::ops::Deref for DirectiveName {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Display for DirectiveName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for DirectiveName {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for DirectiveName {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// The compute part of a compute or combined directive's name (`parallel loop`: `parallel`).
pub fn compute_kind_of(name: &str) -> Option<&'static str> {
    match name.strip_suffix(" loop").unwrap_or(name) {
        "parallel" => Some("parallel"),
        "serial" => Some("serial"),
        "kernels" => Some("kernels"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compute kind held with each known name is the one its text gives, and a name
    /// not known (a rules file's) is read from its text the same way.
    #[test]
    fn known_names_hold_the_compute_kind_of_their_text() {
        for k in &KNOWN_NAMES {
            let n = DirectiveName::new(k.0);
            assert!(!n.is_heap_allocated(), "{}", k.0);
            assert_eq!(n.as_str(), k.0);
            assert_eq!(n.compute(), compute_kind_of(k.0), "{}", k.0);
        }
        let other = DirectiveName::new("my_directive");
        assert!(other.is_heap_allocated());
        assert_eq!(other, DirectiveName::from("my_directive"));
        assert_eq!(other.compute(), None);
        assert_ne!(other, DirectiveName::new("parallel"));
    }

    /// The suffixes written in one pass are those the insertion one by one (the fallback)
    /// wrote, with comments, continuations and spacing in the list.
    #[test]
    fn suffixes_in_one_pass_are_those_inserted_one_by_one() {
        let t = crate::rules::Tables::builtin();
        for text in [
            "parallel copy(a, b[0:n], c)",
            "parallel present(p /* q */, r,s ,  t)",
            "parallel copyin(x[1:2], \\\n y)",
            "parallel copy(a, a, a)",
            "parallel copy(é, ü[0:1], a)",
        ] {
            let d = parse_grammar_in(text, 0..text.len(), &t, Dialect::C).unwrap();
            let c = &d.clauses[0];
            let a = c.args.as_ref().unwrap();
            for keep in 0..8u32 {
                let suffix = |it: &Item| {
                    let k = a.items.iter().position(|x| x == it).unwrap() as u32;
                    ((keep >> (k % 3)) & 1 == 1).then(|| format!("[{}]", it.text))
                };
                let inserts = a
                    .items
                    .iter()
                    .rev()
                    .filter_map(|it| Some((it.span().end.checked_sub(a.list_start()), suffix(it)?)))
                    .collect();
                let want = insert_suffixes(&a.list, inserts);
                assert_eq!(c.list_with_suffixes(suffix), want, "{text} {keep}");
            }
        }
    }

    /// A large file keeps a hundred thousand directives and their clauses for the whole
    /// run: their sizes are a memory budget (they were 144, 176 and 112 bytes, then 96, 136,
    /// 72, and an item 40).
    #[test]
    fn the_ir_types_stay_small() {
        use std::mem::size_of;
        assert_eq!(size_of::<DirectiveName>(), 16);
        assert_eq!(size_of::<Option<Directive>>(), 64);
        assert_eq!(size_of::<Args>(), 64);
        assert_eq!(size_of::<Clause>(), 112);
        assert_eq!(size_of::<Item>(), 32);
    }

    /// What the compact fields hold reads back as it was given: the spelling only where it
    /// is not the name, the comments and inactive clauses only where there are some.
    #[test]
    fn compact_fields_read_back() {
        let t = crate::rules::Tables::builtin();
        let text = "parallel /* c */ pcopy(a[0:n]) copy(b) device_type(nvidia) async";
        let mut d = parse_grammar_in(text, 0..text.len(), &t, Dialect::C).unwrap();
        assert_eq!(&text[d.name_span()], "parallel");
        assert_eq!(d.end(), text.len());
        assert_eq!((d.comments().len(), d.comments()[0].clone()), (1, 9..16));
        assert!(d.inactive().is_empty());
        let (pcopy, copy) = (&d.clauses[0], &d.clauses[1]);
        assert_eq!((pcopy.name.as_str(), pcopy.spelled()), ("copy", "pcopy"));
        assert_eq!((copy.spelled(), copy.spelled.is_none()), ("copy", true));
        assert_eq!(&text[pcopy.span()], "pcopy(a[0:n])");
        let a = pcopy.args.as_ref().unwrap();
        assert_eq!(&text[a.span()], "a[0:n]");
        assert_eq!((a.list_start(), &text[a.items[0].span()]), (23, "a[0:n]"));
        d.set_inactive(std::iter::once(50..53).collect());
        assert_eq!(
            (d.comments()[0].clone(), d.inactive()[0].clone()),
            (9..16, 50..53)
        );
        assert_eq!(d.inactive().len(), 1);
        let plain = parse_grammar_in("loop", 0..4, &t, Dialect::C).unwrap();
        assert!(plain.marks.is_none());
        let mut p = plain.clone();
        p.set_inactive(vec![]);
        assert_eq!(p, plain);
    }
}
