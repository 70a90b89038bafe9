//! The OpenMP a translation decides, in no language's spelling: what each directive site
//! becomes ([`Plan`]), as constructs, clauses and placements that the file's language
//! prints (`crate::print`): `#pragma omp … for` or `_Pragma("omp …")` and braces in C and
//! C++, `!$omp … do` with continuation lines and end directives in Fortran.
//!
//! The decisions put here construct and clause names, clause arguments in the file's
//! language (items copied from the source, expressions built with its
//! [`Language`](crate::lang::Language)), where new directives go relative to the site, its
//! statement and its scope, and the local copies a scope needs. Never a sentinel, a brace, a
//! line terminator or a declaration in one language's syntax: those are the printer's.

mod thin;

use crate::diag::Diagnostic;
use compact_str::CompactString;
use std::ops::Range;
pub use thin::Thin;

/// OpenMP's worksharing-loop construct as a word of a [`Construct`]: spelled `for` in C and
/// C++ and `do` in Fortran by the printers.
pub const WORKSHARING: &str = "for";

/// An OpenMP directive name, as its words (`target teams distribute parallel for simd`,
/// `target enter data`, `declare target`): leaf constructs outermost first, the
/// worksharing-loop construct as [`WORKSHARING`]. A printer spells it; it has no `Display`,
/// so that no decision writes one language's spelling by accident.
///
/// Held in eight bytes, a [`Word`] per slot (`None` after the last): a plan is kept for
/// every site until the file is printed, and a name of five words in a vector was a heap
/// block per site (a slice per word, 128 bytes, made the plans of 100,000 sites 30 MB
/// larger).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Construct([Option<Word>; MAX_WORDS]);

/// The most words of a [`Construct`]: OpenMP's longest combined names have six.
const MAX_WORDS: usize = 8;

/// The words of the OpenMP directive names a translation makes: a closed set, as the names
/// are written in the translation's code.
macro_rules! words {
    ($($word:ident = $text:literal,)*) => {
        #[derive(Clone, Copy, PartialEq, Eq, Debug)]
        enum Word {
            $($word,)*
        }

        impl Word {
            #[cfg(test)]
            const ALL: &[Word] = &[$(Word::$word,)*];

            fn of(text: &str) -> Word {
                match text {
                    $($text => Word::$word,)*
                    _ => panic!("'{text}' is not a word of the OpenMP directive names made"),
                }
            }

            fn text(self) -> &'static str {
                match self {
                    $(Word::$word => $text,)*
                }
            }
        }
    };
}

words! {
    Target = "target",
    Teams = "teams",
    Distribute = "distribute",
    Parallel = "parallel",
    Worksharing = "for",
    Simd = "simd",
    Loop = "loop",
    Enter = "enter",
    Exit = "exit",
    Data = "data",
    Update = "update",
    Declare = "declare",
    Task = "task",
    Taskwait = "taskwait",
    Taskgroup = "taskgroup",
    Barrier = "barrier",
    Atomic = "atomic",
    Single = "single",
    Masked = "masked",
    Master = "master",
    Critical = "critical",
    Ordered = "ordered",
    Always = "always",
    Present = "present",
}

impl Construct {
    /// The construct of `words`, separated by blanks (`"target teams"`). Static text: the
    /// words are the translation's own literals, never input (an unknown word panics).
    pub fn of(words: &'static str) -> Construct {
        let mut c = Construct::default();
        c.push(words);
        c
    }

    /// Append `words` (`"parallel for"`).
    pub fn push(&mut self, words: &'static str) {
        for (k, w) in (self.len()..).zip(words.split_ascii_whitespace()) {
            assert!(
                k < MAX_WORDS,
                "an OpenMP directive name of more than eight words"
            );
            self.0[k] = Some(Word::of(w));
        }
    }

    /// The number of words.
    fn len(&self) -> usize {
        self.0.iter().take_while(|w| w.is_some()).count()
    }

    /// The words, outermost first.
    fn words(&self) -> impl Iterator<Item = Word> + '_ {
        self.0.iter().map_while(|w| *w)
    }

    /// The words after `prefix` when the name starts with it and has more.
    pub fn after(&self, prefix: &str) -> Option<Construct> {
        let n = prefix.split_ascii_whitespace().count();
        (self.len() > n && self.starts_with(prefix)).then(|| {
            let mut rest = Construct::default();
            rest.0[..MAX_WORDS - n].copy_from_slice(&self.0[n..]);
            rest
        })
    }

    /// Whether the name's first words are those of `prefix` (`"target teams"`), without
    /// spelling it.
    pub fn starts_with(&self, prefix: &str) -> bool {
        let mut words = self.words();
        prefix
            .split_ascii_whitespace()
            .all(|p| words.next().is_some_and(|w| w.text() == p))
    }

    /// Whether `word` (`"simd"`, the worksharing loop as [`WORKSHARING`]) is one of the
    /// name's words, without spelling the name.
    pub fn has(&self, word: &str) -> bool {
        self.words().any(|w| w.text() == word)
    }

    /// The last word (the innermost leaf construct), the worksharing loop spelled
    /// `worksharing`.
    pub fn last<'a>(&self, worksharing: &'a str) -> Option<&'a str> {
        self.words().last().map(|w| match w {
            Word::Worksharing => worksharing,
            _ => w.text(),
        })
    }

    /// Drop the leaf construct `word` (`simd`).
    pub fn remove(&mut self, word: &str) {
        let mut kept = Construct::default();
        let words = self.words().filter(|w| w.text() != word);
        for (slot, w) in kept.0.iter_mut().zip(words) {
            *slot = Some(w);
        }
        *self = kept;
    }

    /// The name with the worksharing-loop construct spelled `worksharing`.
    pub fn spelled(&self, worksharing: &str) -> String {
        let text = |w: Word| match w {
            Word::Worksharing => worksharing,
            _ => w.text(),
        };
        let len = self.words().map(|w| text(w).len() + 1).sum::<usize>();
        let mut out = String::with_capacity(len.saturating_sub(1));
        for w in self.words() {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(text(w));
        }
        out
    }
}

impl std::fmt::Debug for Construct {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Construct")
            .field(&self.words().map(Word::text).collect::<Vec<_>>())
            .finish()
    }
}

/// One OpenMP clause: its name and the text between its parentheses (`map`,
/// `tofrom: a[0:n]`), written the same way in every language OpenMP has. Most arguments
/// are short and held inline (a plan is kept for every site until the file is printed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OmpClause {
    pub name: &'static str,
    pub arg: Option<CompactString>,
}

impl OmpClause {
    pub fn new(name: &'static str, arg: impl Into<CompactString>) -> OmpClause {
        OmpClause {
            name,
            arg: Some(arg.into()),
        }
    }

    /// A clause without arguments (`nowait`).
    pub fn bare(name: &'static str) -> OmpClause {
        OmpClause { name, arg: None }
    }

    /// `name(arg)`, or `name`.
    pub fn text(&self) -> String {
        let mut out = String::new();
        self.push_text(&mut out);
        out
    }

    /// [`text`](Self::text), appended to `out`.
    fn push_text(&self, out: &mut String) {
        out.push_str(self.name);
        if let Some(a) = &self.arg {
            out.push('(');
            out.push_str(a);
            out.push(')');
        }
    }
}

/// The clauses as text, separated by blanks.
pub fn clauses_text(clauses: &[OmpClause]) -> String {
    let len = clauses
        .iter()
        .map(|c| c.name.len() + c.arg.as_ref().map_or(1, |a| a.len() + 3));
    let mut out = String::with_capacity(len.sum());
    for (k, c) in clauses.iter().enumerate() {
        if k > 0 {
            out.push(' ');
        }
        c.push_text(&mut out);
    }
    out
}

/// A directive the translation adds: its name and clauses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OmpDirective {
    pub name: Construct,
    pub clauses: Vec<OmpClause>,
}

impl OmpDirective {
    pub fn new(name: Construct, clauses: Vec<OmpClause>) -> OmpDirective {
        OmpDirective { name, clauses }
    }

    fn shrink_to_fit(&mut self) {
        self.clauses.shrink_to_fit();
    }

    /// `name clauses…` with the worksharing-loop construct spelled `worksharing`.
    pub fn text(&self, worksharing: &str) -> String {
        let mut s = self.name.spelled(worksharing);
        for c in &self.clauses {
            s.push(' ');
            c.push_text(&mut s);
        }
        s
    }
}

/// What happens to one clause of a rewritten directive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClauseOp {
    /// Kept as written.
    Keep,
    Drop,
    /// Replaced by these clauses (none: dropped).
    Replace(Vec<OmpClause>),
}

impl ClauseOp {
    /// Replaced by one clause.
    pub fn to(c: OmpClause) -> ClauseOp {
        ClauseOp::Replace(vec![c])
    }
}

/// The OpenACC directive rewritten in place as an OpenMP one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    /// The OpenMP directive name.
    pub name: Construct,
    /// One op per clause of the OpenACC directive, in order.
    pub ops: Vec<ClauseOp>,
    /// New clauses, after the last clause kept.
    pub append: Vec<OmpClause>,
    /// Drop the directive's own argument list (`wait(1)`).
    pub drop_arg: bool,
}

/// A statement of the runtime routines a directive becomes (`acc set`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallStmt {
    /// `routine(args…)` as a statement.
    Call {
        routine: &'static str,
        args: Vec<String>,
    },
    /// `var = value`.
    Assign { var: &'static str, value: String },
}

/// Statements that replace a directive, under a condition when it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Calls {
    pub cond: Option<String>,
    pub stmts: Vec<CallStmt>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Unchanged,
    Rewrite(Rewrite),
    /// Delete the directive (its comments stay).
    Remove,
    /// Replace the whole directive with runtime statements.
    Calls(Calls),
    /// The directive ends the construct of site `opener` (`!$acc end parallel` in
    /// Fortran): the printer writes the end directive of what that site became, or removes
    /// it with it. (No C directive closes another: made by a front end with end directives.)
    Close {
        opener: usize,
    },
}

/// A declaration that opens the new scope around a directive and its statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decl {
    /// Nothing declared: the scope only keeps the lines inserted before the directive
    /// together with it (the directive is the body of an `if` or a loop).
    Group,
    /// A constant `name` holding `value`, evaluated once before the directive.
    Const { name: &'static str, value: String },
    /// `value` evaluated for its side effects only.
    Evaluate(String),
}

/// A new scope around the directive and its statement (a compound statement in C; a
/// `block` in Fortran): its declarations, then uninitialized local copies of variables
/// (the loop's private variables, a control variable assigned outside the loop).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Scope {
    pub decls: Thin<Decl>,
    pub locals: Vec<String>,
}

impl Scope {
    pub fn is_empty(&self) -> bool {
        self.decls.is_empty() && self.locals.is_empty()
    }

    pub fn clear(&mut self) {
        self.decls.clear();
        self.locals.clear();
    }
}

/// A directive added elsewhere than before or on the site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Insert {
    /// Before the statement that starts at token `stmt`, applying to it (a plain loop, a
    /// statement of a region); `region` is that statement's byte range (where a language
    /// with end directives closes the construct).
    BeforeStatement {
        stmt: usize,
        directive: OmpDirective,
        region: Option<Range<usize>>,
    },
    /// An empty structured block as the directive's body (a `task` that only orders
    /// queues).
    EmptyBody,
    /// The last statement of the body of the site's construct (a wait before a data region
    /// ends).
    AtBodyEnd(OmpDirective),
    /// At each exit of the block that holds the site: before each `return` (byte offsets of
    /// their first token), and at the block's end (the offset of the token that closes it)
    /// unless the block ends with a `return`.
    AtExits {
        returns: Vec<usize>,
        end: Option<usize>,
        directive: OmpDirective,
    },
    /// The site's statement as the body of a loop over the gangs that OpenACC runs it on
    /// (`distribute` gives the iterations to the teams, whatever their number): `gangs`
    /// iterations on a device, one where the region runs on the host, as OpenACC runs a
    /// region there (on the local thread).
    GangLoop { gangs: String },
    /// At `at`, the start of the function around the site, after copies of the statements
    /// `copies` (byte ranges): a declaration that must be at file scope.
    BeforeFunction {
        at: usize,
        copies: Vec<Range<usize>>,
        directive: OmpDirective,
    },
}

/// What to do at one site.
#[derive(Debug, Clone)]
pub struct Plan {
    pub action: Action,
    /// A new scope around the directive and its statement.
    pub scope: Scope,
    /// Directives before this one, applying to it and its statement (a construct among them
    /// encloses both).
    pub before: Thin<OmpDirective>,
    /// A construct the directive opens that ends after its statement (`declare target`
    /// around a function): C writes its end directive there.
    pub end_after_stmt: Option<Construct>,
    /// Directives added elsewhere.
    pub inserts: Thin<Insert>,
    pub diags: Thin<Diagnostic>,
}

impl Plan {
    pub fn new(action: Action) -> Self {
        Plan {
            action,
            scope: Scope::default(),
            before: Thin::new(),
            end_after_stmt: None,
            inserts: Thin::new(),
            diags: Thin::new(),
        }
    }

    /// Release the spare capacity of the plan's lists: plans are built by pushing, and a
    /// file's plans are all kept until it is printed.
    pub fn shrink_to_fit(&mut self) {
        if let Action::Rewrite(rw) = &mut self.action {
            rw.ops.shrink_to_fit();
            rw.append.shrink_to_fit();
            for op in &mut rw.ops {
                if let ClauseOp::Replace(cs) = op {
                    cs.shrink_to_fit();
                }
            }
        }
        self.scope.decls.shrink_to_fit();
        self.scope.locals.shrink_to_fit();
        self.before.shrink_to_fit();
        self.before.iter_mut().for_each(OmpDirective::shrink_to_fit);
        for ins in &mut self.inserts {
            match ins {
                Insert::BeforeStatement { directive, .. }
                | Insert::AtBodyEnd(directive)
                | Insert::AtExits { directive, .. }
                | Insert::BeforeFunction { directive, .. } => directive.shrink_to_fit(),
                Insert::EmptyBody | Insert::GangLoop { .. } => {}
            }
        }
        self.inserts.shrink_to_fit();
        self.diags.shrink_to_fit();
    }

    /// Leave the site unchanged: nothing added anywhere (the diagnostics stay).
    pub fn unchanged(&mut self) {
        self.action = Action::Unchanged;
        self.scope.clear();
        self.before.clear();
        self.end_after_stmt = None;
        self.inserts.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructs_are_words_spelled_by_the_printer() {
        let mut c = Construct::of("target teams");
        c.push("distribute parallel for");
        c.push("simd");
        assert_eq!(
            c.spelled("for"),
            "target teams distribute parallel for simd"
        );
        assert_eq!(c.spelled("do"), "target teams distribute parallel do simd");
        assert_eq!(
            c.after("target teams").map(|x| x.spelled("do")).as_deref(),
            Some("distribute parallel do simd")
        );
        assert!(
            Construct::of("target teams")
                .after("target teams")
                .is_none()
        );
        assert_eq!(Construct::of("taskwait").spelled("for"), "taskwait");
        assert!(c.starts_with("target teams") && c.starts_with("target"));
        assert!(c.starts_with("target  teams distribute"));
        assert!(!c.starts_with("target parallel") && !c.starts_with("teams"));
        assert!(!Construct::of("target").starts_with("target teams"));
        assert!(Construct::of("target teams").starts_with("target teams"));
        let mut c = c.clone();
        c.remove("simd");
        assert_eq!(c.spelled("do"), "target teams distribute parallel do");
        assert_eq!(c, {
            let mut d = Construct::of("target teams distribute");
            d.push("parallel for");
            d
        });
        assert_eq!(
            format!("{:?}", Construct::of("target data")),
            r#"Construct(["target", "data"])"#
        );
        assert_eq!(Construct::default().spelled("for"), "");
        assert_eq!(Word::of(WORKSHARING), Word::Worksharing);
        // As small as the word ids in a `u64` it replaced, absent or not.
        assert_eq!(std::mem::size_of::<Option<Construct>>(), 8);
        for w in Word::ALL {
            assert_eq!(Word::of(w.text()), *w);
        }
    }

    /// What every site's plan holds until the file is printed: its lists that are empty
    /// at most sites take one pointer each, and none of them allocates once shrunk.
    #[test]
    fn plan_sizes() {
        assert!(size_of::<Plan>() <= 128, "{}", size_of::<Plan>());
        let mut p = Plan::new(Action::Remove);
        p.diags
            .push(Diagnostic::new(0, crate::rules::id::NOT_TRANSLATED, "x"));
        p.diags.clear();
        p.before
            .push(OmpDirective::new(Construct::of("taskwait"), Vec::new()));
        p.before.retain(|_| false);
        p.scope.decls.push(Decl::Group);
        p.scope.decls.pop();
        p.shrink_to_fit();
        let held = p.before.capacity() + p.diags.capacity() + p.scope.decls.capacity();
        assert_eq!(held, 0);
        assert!(
            [
                p.before.is_empty(),
                p.inserts.is_empty(),
                p.diags.is_empty()
            ]
            .iter()
            .all(|&e| e)
        );
    }

    #[test]
    #[should_panic(expected = "not a word of the OpenMP directive names made")]
    fn a_word_outside_openmp_names_is_refused() {
        Construct::of("target teams scope_x");
    }

    /// The names as a vector of words (what a `Construct` was), as the oracle of its
    /// operations.
    #[test]
    fn constructs_behave_as_vectors_of_words() {
        let pushes: [&[&'static str]; 6] = [
            &["target teams", "distribute", "parallel for", "simd"],
            &["target", " parallel  loop "],
            &["simd"],
            &["target teams distribute", "parallel for simd"],
            &["declare target"],
            &[],
        ];
        for p in pushes {
            let mut c = Construct::default();
            let mut v: Vec<&str> = Vec::new();
            for w in p {
                c.push(w);
                v.extend(w.split_ascii_whitespace());
            }
            assert_eq!(c.words().map(Word::text).collect::<Vec<_>>(), v);
            assert_eq!(c.len(), v.len());
            assert_eq!(c.spelled("do"), v.join(" ").replace("for", "do"));
            for prefix in ["target", "target teams", "simd", ""] {
                let n = prefix.split_ascii_whitespace().count();
                let starts = v.len() >= n && v[..n].iter().copied().eq(prefix.split_whitespace());
                assert_eq!(c.starts_with(prefix), starts, "{p:?} {prefix}");
                let after = (starts && v.len() > n).then(|| v[n..].to_vec());
                assert_eq!(
                    c.after(prefix).map(|a| a.words().map(Word::text).collect()),
                    after
                );
            }
            let mut r = c.clone();
            r.remove("simd");
            v.retain(|w| *w != "simd");
            assert_eq!(r.words().map(Word::text).collect::<Vec<_>>(), v);
        }
    }

    #[test]
    fn word_tests_as_the_spelled_name() {
        let names = [
            "target teams distribute parallel for simd",
            "parallel loop",
            "parallel for",
            "simd",
            "target enter data",
            "taskwait",
            "",
        ];
        for n in names {
            let c = Construct::of(n);
            let spelled = c.spelled(WORKSHARING);
            for &w in Word::ALL {
                let mut words = spelled.split(' ');
                assert_eq!(c.has(w.text()), words.any(|x| x == w.text()), "{n}");
            }
            let do_spelled = c.spelled("do");
            let last = do_spelled.split(' ').next_back().filter(|w| !w.is_empty());
            assert_eq!(c.last("do"), last, "{n}");
        }
    }

    #[test]
    #[should_panic(expected = "more than eight words")]
    fn a_name_of_nine_words_is_refused() {
        let mut c = Construct::of("target teams distribute parallel for simd target teams");
        assert_eq!(c.len(), 8);
        c.push("simd");
    }

    #[test]
    fn a_shrunk_plan_is_the_same_plan_without_spare_capacity() {
        let mut name = Construct::of("target teams");
        name.push("distribute parallel for");
        name.push("simd");
        let mut append = vec![OmpClause::new("num_teams", "1")];
        append.reserve(10);
        let mut plan = Plan::new(Action::Rewrite(Rewrite {
            name,
            ops: vec![ClauseOp::to(OmpClause::new("map", "tofrom: a[0:n]"))],
            append,
            drop_arg: false,
        }));
        plan.before
            .push(OmpDirective::new(Construct::of("taskwait"), Vec::new()));
        let before = plan.clone();
        plan.shrink_to_fit();
        assert_eq!(plan.action, before.action);
        assert_eq!(plan.before, before.before);
        let Action::Rewrite(rw) = &plan.action else {
            unreachable!()
        };
        assert_eq!(rw.name.len(), 6);
        assert_eq!(rw.append.capacity(), 1);
        assert_eq!(plan.before.capacity(), 1);
        assert_eq!(
            rw.name.spelled("for"),
            "target teams distribute parallel for simd"
        );
    }

    #[test]
    fn clauses_and_directives_as_text() {
        let d = OmpDirective::new(
            Construct::of("parallel for"),
            vec![
                OmpClause::new("num_threads", "4"),
                OmpClause::bare("nowait"),
            ],
        );
        assert_eq!(d.text("do"), "parallel do num_threads(4) nowait");
    }
}
