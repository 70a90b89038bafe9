//! The C and C++ front end's answers to the shared decisions' questions about a file
//! ([`Syntax`]), from its tokens (`crate::lex`), preprocessor lines and statements
//! (`crate::structure`).

mod assigned;
mod blocks;
mod confined;
mod decls;
mod functions;
mod holding;
mod jumps;
mod local_writes;
mod loops;
mod mentioned;
mod readback;
mod reduced;
mod updates;

use crate::attachments::{self, Attachments};
use crate::dependence::{FileInfo, Input, Nest, analyze_in};
use crate::directive::Directive;
use crate::facts::{HeaderMacro, RegionVar};
use crate::hash::HashMap;
use crate::lex::{PpLines, TokKind, Token};
use crate::region::{ForLoop, Stmt};
use crate::scan::Site;
use crate::source::LineIndex;
use crate::structure::Structure;
use crate::syntax::{
    Access, Call, Exits, IfConstruct, Jump, MemberUses, OmpRead, Position, Syntax,
};
use std::ops::Range;
use std::sync::OnceLock;

/// One C or C++ file's statements and preprocessor lines, as the decisions ask about them.
pub struct CSyntax<'a> {
    structure: &'a Structure<'a>,
    pp: &'a PpLines,
    /// The dependence test's facts about the file, computed for the first loop that needs
    /// them.
    dependence: OnceLock<FileInfo>,
    /// OpenMP `declare target` lines and how many regions are open after each, read when
    /// first asked.
    declare_target: OnceLock<Vec<(usize, i32)>>,
    /// The explicit pointer attachments, read for the first detach.
    attachments: OnceLock<Attachments>,
    /// The names `#define`d in the file, read when first asked.
    macros: OnceLock<HashMap<String, Macro>>,
    /// Whether the file reads as C++, read when first asked.
    cxx: OnceLock<bool>,
    /// The ranges last asked whether a name is assigned before it is read, and where a
    /// name is first mentioned.
    assigned: assigned::LastAsked<assigned::Cached<'a>>,
    firsts: assigned::LastAsked<assigned::Firsts<'a>>,
    /// The loop last asked whether a name is updated only by one operation.
    updates: assigned::LastAsked<reduced::Updates<'a>>,
    /// The regions and blocks last asked which of their statements holds a token.
    holding: assigned::LastAsked<holding::Bounds>,
    /// The range last asked whether it mentions a name outside a part of it.
    mentions: assigned::LastAsked<mentioned::Mentions<'a>>,
    /// The function last asked which names only some of its bytes use.
    confined: confined::Memo,
    /// The `for` loops by control variable, read when first asked.
    loops_by_var: OnceLock<HashMap<String, Vec<u32>>>,
    /// The bodies of the functions defined at file scope, by name, read when first asked.
    bodies: OnceLock<HashMap<&'a str, Vec<Range<usize>>>>,
    /// The file's jumps, read when first asked (each structure's later map asks).
    jumps: OnceLock<Vec<Jump>>,
}

impl<'a> CSyntax<'a> {
    pub fn new(structure: &'a Structure<'a>, pp: &'a PpLines) -> Self {
        CSyntax {
            structure,
            pp,
            dependence: OnceLock::new(),
            declare_target: OnceLock::new(),
            attachments: OnceLock::new(),
            macros: OnceLock::new(),
            cxx: OnceLock::new(),
            assigned: Default::default(),
            firsts: Default::default(),
            updates: Default::default(),
            holding: Default::default(),
            mentions: Default::default(),
            confined: Default::default(),
            loops_by_var: OnceLock::new(),
            bodies: OnceLock::new(),
            jumps: OnceLock::new(),
        }
    }

    fn macros(&self) -> &HashMap<String, Macro> {
        self.macros
            .get_or_init(|| macro_names(self.structure.src, self.structure.toks, self.pp))
    }
}

impl CSyntax<'_> {
    /// What it computed for the file, to be freed elsewhere (a large file's take a while).
    pub fn into_caches(self) -> impl Send + 'static {
        (
            self.dependence,
            self.declare_target,
            self.attachments,
            self.macros,
        )
    }
}

impl Syntax for CSyntax<'_> {
    fn token_range(&self, t: usize) -> Range<usize> {
        self.structure.toks[t].range()
    }

    fn token_count(&self) -> usize {
        self.structure.toks.len()
    }

    fn token_starting_at(&self, at: usize) -> Option<usize> {
        let toks = self.structure.toks;
        let t = toks.partition_point(|t| t.start() < at);
        toks.get(t).is_some_and(|x| x.start() == at).then_some(t)
    }

    fn statement_words(&self, stmt: &Range<usize>) -> Option<Vec<&str>> {
        let (src, toks) = (self.structure.src, &self.structure.toks[stmt.clone()]);
        let macros = self.macros();
        let decided = toks.iter().any(|t| {
            t.kind == TokKind::PpLine
                || (t.kind == TokKind::Ident && macros.contains_key(t.text(src)))
        });
        (!decided).then(|| toks.iter().map(|t| t.text(src)).collect())
    }

    fn is_preprocessor_line(&self, t: usize) -> bool {
        self.structure
            .toks
            .get(t)
            .is_some_and(|x| x.kind == crate::lex::TokKind::PpLine)
    }

    fn skip_preprocessor(&self, t: usize) -> usize {
        self.structure.skip_pp(t)
    }

    fn stmt_end(&self, t: usize) -> Option<usize> {
        self.structure.stmt_end(t)
    }

    fn statements_in(&self, stmt: &Range<usize>) -> Vec<usize> {
        self.structure.statements_in(stmt)
    }

    fn nested_statements(&self, s: usize) -> Vec<(usize, bool)> {
        loops::nested_statements(self.structure, s)
    }

    fn is_block(&self, stmt: &Range<usize>) -> bool {
        self.structure
            .toks
            .get(stmt.start)
            .is_some_and(|t| t.text(self.structure.src) == "{")
    }

    fn if_construct(&self, t: usize) -> Option<IfConstruct> {
        let st = self.structure;
        let s = st.skip_pp(t);
        let open = s + 1;
        if !st.is(s, "if") || !st.is(open, "(") {
            return None;
        }
        let end = st.stmt_end(s)?;
        let body = st.matching(open)?;
        let cond = self.statement_words(&(open + 1..body - 1))?;
        let body_end = st.stmt_end(body)?;
        let mut branches = vec![(
            Some(cond.into_iter().map(String::from).collect()),
            st.statements_in(&(body..body_end)),
        )];
        let e = st.skip_pp(body_end);
        if e < end && st.is(e, "else") {
            branches.push((None, st.statements_in(&(e + 1..end))));
        }
        Some(IfConstruct { branches, end })
    }

    fn loop_at(&self, t: usize) -> Option<ForLoop> {
        self.structure.for_loop_at(t)
    }

    fn site_at(&self, t: usize) -> Option<usize> {
        self.structure.site_at(t)
    }

    fn nest_depth(&self, t: usize, limit: usize) -> usize {
        self.structure.nest_depth(t, limit)
    }

    fn nest_break(&self, t: usize, limit: usize) -> Option<usize> {
        self.structure.nest_break(t, limit)
    }

    fn nest_loops(&self, t: usize, limit: usize) -> Vec<ForLoop> {
        self.structure.nest_loops(t, limit)
    }

    fn loop_around(&self, t: usize, var: &str) -> Option<ForLoop> {
        let by_var = self
            .loops_by_var
            .get_or_init(|| loops::loops_by_var(self.structure));
        loops::loop_around(self.structure, by_var, t, var)
    }

    fn inner_loop(&self, outer: &ForLoop) -> Option<ForLoop> {
        loops::inner_loop(self.structure, outer)
    }

    fn header_mentions(&self, f: &ForLoop, names: &[&str]) -> Option<usize> {
        loops::header_mentions(self.structure, f, names)
    }

    fn loop_variable_after(&self, from: usize) -> Option<(String, Vec<String>)> {
        loops::loop_variable_after(self.structure.src, from)
    }

    fn loop_variable(&self, f: &ForLoop) -> Option<(String, Vec<String>)> {
        loops::loop_variable_at(self.structure, f)
    }

    fn macro_params(&self, at: usize) -> Vec<String> {
        loops::macro_params(self.structure, self.pp, at)
    }

    fn macro_definition(&self, at: usize) -> Option<Range<usize>> {
        loops::macro_definition(self.structure, self.pp, at)
    }

    fn block_end(&self, t: usize) -> Option<usize> {
        blocks::block_end(self.structure, t)
    }

    fn scope_exits(&self, from: usize, close: usize) -> Result<Exits, usize> {
        blocks::scope_exits(self.structure, from, close)
    }

    fn extern_declaration(&self, name: &str, before: usize) -> Option<Range<usize>> {
        blocks::extern_decl(self.structure, name, before)
    }

    fn function_start(&self, t: usize) -> Option<usize> {
        blocks::function_start(self.structure, t)
    }

    fn declared_in_function(&self, t: usize, name: &str) -> bool {
        blocks::declared_in_function(self.structure, t, name)
    }

    fn is_body(&self, first: usize) -> bool {
        blocks::is_body(self.structure, first)
    }

    fn conditional_in(&self, toks: Range<usize>) -> bool {
        self.structure.conditional_in(toks)
    }

    fn directly_in(&self, block: &Range<usize>, t: usize) -> bool {
        blocks::directly_in(self.structure, block, t)
    }

    fn statement_holding(&self, region: Range<usize>, t: usize) -> Option<Range<usize>> {
        holding::statement_of(&self.holding, self.structure, region, t)
    }

    fn is_declaration(&self, stmt: Range<usize>) -> bool {
        blocks::is_declaration(self.structure, stmt)
    }

    fn declared_as_array(&self, name: &str, before: usize) -> bool {
        blocks::declared_as_array(self.structure, name, before)
    }

    fn declaration_words(&self, at: usize, var: &str) -> Option<Vec<String>> {
        blocks::declaration_words(self.structure, at, var)
    }

    fn defined_functions(&self) -> Vec<String> {
        functions::defined_functions(self.structure)
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    fn function_bodies(&self, name: &str) -> Vec<Range<usize>> {
        self.bodies
            .get_or_init(|| functions::function_bodies(self.structure))
            .get(name)
            .cloned()
            .unwrap_or_default()
    }

    fn writes_only_locals(&self, body: &Range<usize>) -> bool {
        // This reading does not follow C++.
        let cxx = *self.cxx.get_or_init(|| {
            crate::c::lang::looks_like_cxx(self.structure.src, self.structure.toks)
        });
        !cxx && local_writes::writes_only_locals(self.structure, self.macros(), body)
    }

    fn enclosing_functions(&self, t: usize) -> Vec<String> {
        functions::enclosing_functions(self.structure, t)
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    fn declared_function(&self, stmt: &Range<usize>) -> Option<String> {
        decls::declared_name(self.structure, stmt.clone())
    }

    fn name_before_parens(&self, stmt: &Range<usize>) -> Option<String> {
        let st = self.structure;
        st.toks[stmt.clone()]
            .windows(2)
            .find(|w| w[1].text(st.src) == "(")
            .map(|w| w[0].text(st.src).to_string())
    }

    fn function_of(&self, t: usize) -> Option<String> {
        decls::function_of(self.structure, t)
    }

    fn declares_one_function(&self, stmt: Range<usize>) -> Result<(), &'static str> {
        decls::function_declaration(self.structure, stmt)
    }

    fn position(&self, first: usize) -> Option<Position> {
        decls::position(self.structure, first)
    }

    fn directive_follows(&self, t: usize) -> bool {
        let src = self.structure.src;
        self.structure.toks.get(t + 1).is_some_and(|t| {
            t.kind == crate::lex::TokKind::PpLine
                && t.text(src)[1..].trim_start().starts_with("pragma")
        })
    }

    fn statement_after(&self, last: usize) -> Option<Stmt> {
        self.structure.stmt_after(last)
    }

    fn jumps(&self) -> &[Jump] {
        self.jumps.get_or_init(|| jumps::jumps(self.structure))
    }

    fn in_declare_target(&self, t: usize) -> bool {
        let lines = self
            .declare_target
            .get_or_init(|| functions::declare_target_lines(self.structure));
        let k = lines.partition_point(|(k, _)| *k < t);
        k.checked_sub(1).map_or(0, |k| lines[k].1) > 0
    }

    fn calls_in(&self, toks: Range<usize>) -> Vec<Call> {
        functions::calls_in(self.structure, toks)
    }

    fn async_calls(&self) -> Vec<usize> {
        functions::async_calls(self.structure)
    }

    fn omp_directive_tokens(&self) -> Vec<usize> {
        functions::omp_directive_tokens(self.structure, self.pp)
    }

    fn omp_directives(&self, starts: &[usize], end: usize) -> Vec<OmpRead> {
        readback::omp_directives(self.structure, self.pp, starts, end)
    }

    fn updated_only_by(&self, stmt: &Range<usize>, v: &str, op: &str) -> bool {
        let st = self.structure;
        reduced::updated_only_by(&self.updates, st.src, st.toks, stmt.clone(), v, op)
    }

    fn reduction_op(&self, at: usize, v: &str) -> Option<&'static str> {
        updates::reduction_op(self.structure.src, at, v)
    }

    fn assigned_before_read(&self, range: Range<usize>, v: &str) -> bool {
        assigned::assigned_before_read(&self.assigned, self.structure.src, range, v)
    }

    fn assigned_every_iteration(&self, range: Range<usize>, v: &str) -> bool {
        assigned::assigned_every_iteration(self.structure.src, range, v)
    }

    fn confined_to(&self, at: usize, decl: usize, inside: &[Range<usize>], v: &str) -> bool {
        confined::confined_to(self.structure, &self.confined, at, decl, inside, v)
    }

    fn mentions_outside(&self, toks: Range<usize>, skip: &Range<usize>, v: &str) -> bool {
        let st = self.structure;
        mentioned::mentions_outside(&self.mentions, st.src, st.toks, toks, skip, v)
    }

    fn first_mention_in_loop_init(&self, toks: Range<usize>, v: &str) -> bool {
        let st = self.structure;
        assigned::first_mention_in_for_init(&self.firsts, st.src, st.toks, toks, v)
    }

    fn member_uses(
        &self,
        toks: Range<usize>,
        skip: &[Range<usize>],
        base: &str,
        access: Access,
    ) -> MemberUses {
        updates::member_uses(
            self.structure.src,
            self.structure.toks,
            toks,
            skip,
            base,
            access,
        )
    }

    fn attachments(
        &self,
        sites: &[Site],
        dirs: &[Option<Directive>],
        lines: &LineIndex,
    ) -> &Attachments {
        self.attachments.get_or_init(|| {
            Attachments::of(&attachments::Input {
                src: self.structure.src,
                toks: self.structure.toks,
                sites,
                dirs,
                lines,
            })
        })
    }

    fn dependence(
        &self,
        head: usize,
        end: usize,
        vars: &[RegionVar],
        confined: &[&str],
        header_macros: &[HeaderMacro],
    ) -> Nest {
        let (src, toks) = (self.structure.src, self.structure.toks);
        let file = self
            .dependence
            .get_or_init(|| FileInfo::new(src, toks, self.pp, header_macros));
        analyze_in(
            &Input {
                src,
                toks,
                for_tok: head,
                end,
                vars,
                confined,
            },
            file,
        )
    }
}

/// A macro `#define`d in the file: where first, and whether it takes arguments (then only
/// a use followed by `(` expands).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Macro {
    pub at: usize,
    pub function_like: bool,
}

/// Names `#define`d in the file.
pub(crate) fn macro_names(src: &str, toks: &[Token], pp: &PpLines) -> HashMap<String, Macro> {
    let mut out = HashMap::default();
    for t in toks.iter().filter(|t| t.kind == TokKind::PpLine) {
        let line = pp.head(src, t);
        if let [d, name, rest @ ..] = &line[..]
            && d.text(src) == "define"
            && name.kind == TokKind::Ident
        {
            let function_like = rest
                .first()
                .is_some_and(|p| p.start() == name.end() && p.text(src) == "(");
            out.entry(name.text(src).to_string()).or_insert(Macro {
                at: t.start(),
                function_like,
            });
        }
    }
    out
}
