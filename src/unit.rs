//! One file's directives with what is known about them: the translation unit the
//! semantic layer, the checks and the translators read.

use crate::directive::Directive;
use crate::facts::{FileFacts, SiteFacts};
use crate::lex::PpLines;
use crate::rules::Tables;
use crate::scan::Site;
use crate::source::LineIndex;
use crate::structure::{ForLoop, Stmt, Structure};

/// Everything known about one file's directives.
pub struct Unit<'a> {
    pub src: &'a str,
    pub sites: Vec<Site>,
    pub dirs: Vec<Option<Directive>>,
    pub stmts: Vec<Option<Stmt>>,
    pub parent: Vec<Option<usize>>,
    pub children: Vec<Vec<usize>>,
    pub structure: Structure<'a>,
    /// The tokens inside each preprocessor line of `structure.toks`.
    pub pp: &'a PpLines,
    /// Semantic facts (libclang or syntactic), when the engine computed them.
    pub facts: Option<&'a FileFacts>,
    /// Each site's entry of `facts`, looked up once (passes ask for it many times per site).
    pub site_facts: Vec<Option<&'a SiteFacts>>,
    /// The rule tables the file is translated with.
    pub tables: &'a Tables,
    /// Lines of `src`: line numbers in messages without rescanning the file.
    pub lines: &'a LineIndex,
    /// The line terminator `src` mostly uses (`source::line_ending`), for inserted lines.
    pub eol: &'static str,
    /// The file's facts for the dependence test, computed for the first loop that needs them.
    pub dependence: std::sync::OnceLock<crate::semantic::dependence::FileInfo>,
    /// The file's explicit pointer attachments, read for the first detach.
    pub attachments: std::sync::OnceLock<crate::attachments::Attachments>,
}

impl<'a> Unit<'a> {
    pub fn attachments(&self) -> &crate::attachments::Attachments {
        self.attachments
            .get_or_init(|| crate::attachments::Attachments::of(self))
    }

    pub fn dir(&self, i: usize) -> Option<&Directive> {
        self.dirs[i].as_ref()
    }

    /// Semantic facts about site `i`.
    pub fn site_facts(&self, i: usize) -> Option<&SiteFacts> {
        self.site_facts.get(i).copied().flatten()
    }

    /// The words before `var` in its declaration (`signed char i;` → `signed char`), from the
    /// declaration the facts of site `k` point to.
    pub fn declaration_words(&self, k: usize, var: &str) -> Option<Vec<&'a str>> {
        let at = self.site_facts(k)?.var(var)?.decl?;
        let toks = self.structure.toks;
        let name = toks.partition_point(|t| t.start < at);
        if toks.get(name).map(|t| t.text(self.src)) != Some(var) {
            return None;
        }
        let first = toks[..name]
            .iter()
            .rposition(|t| {
                t.kind == crate::lex::TokKind::PpLine
                    || matches!(t.text(self.src), ";" | "{" | "}" | "(" | ")")
            })
            .map_or(0, |p| p + 1);
        Some(toks[first..name].iter().map(|t| t.text(self.src)).collect())
    }

    /// Offset of the site, for diagnostics.
    pub fn at(&self, i: usize) -> usize {
        self.sites[i].span.start
    }

    /// Line of site `i`.
    pub fn line(&self, i: usize) -> usize {
        self.line_at(self.at(i))
    }

    /// Line of byte `offset` of `src`.
    pub fn line_at(&self, offset: usize) -> usize {
        self.lines.line_col(offset).0
    }

    /// Nearest enclosing compute construct (a combined directive is its own).
    pub fn compute_of(&self, i: usize) -> Option<usize> {
        let mut cur = Some(i);
        while let Some(c) = cur {
            if self.dir(c).is_some_and(|d| d.compute_kind().is_some()) {
                return Some(c);
            }
            cur = self.parent[c];
        }
        None
    }

    /// Enclosing sites, innermost first.
    pub fn ancestors(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(self.parent[i], |&p| self.parent[p])
    }

    /// All sites nested in `i`, in source order.
    pub fn descendants(&self, i: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack: Vec<usize> = self.children[i].iter().rev().copied().collect();
        while let Some(c) = stack.pop() {
            out.push(c);
            stack.extend(self.children[c].iter().rev());
        }
        out
    }

    pub fn is_loop(&self, i: usize) -> bool {
        self.dir(i)
            .is_some_and(|d| d.name == "loop" || d.is_combined())
    }

    /// The `for` loop that is the whole body of `kernels` construct `c` when no loop
    /// directive precedes it (`kernels` + `for`, or `kernels` + `{ for }`): a loop the
    /// OpenACC compiler would parallelize if it proves the iterations independent.
    pub fn bare_loop(&self, c: usize) -> Option<ForLoop> {
        let d = self.dir(c)?;
        if d.compute_kind() != Some("kernels") || d.is_combined() {
            return None;
        }
        let stmt = self.stmts[c].as_ref()?;
        let s = self.structure.statements_in(&stmt.toks);
        match s.as_slice() {
            [first] if self.structure.site_at(*first).is_none() => {
                self.structure.for_loop_at(*first)
            }
            _ => None,
        }
    }

    /// The loop site that is the whole body of compute construct `c` (`kernels` +
    /// `acc loop` + `for`), if any.
    pub fn single_loop_site(&self, c: usize) -> Option<usize> {
        let stmt = self.stmts[c].as_ref()?;
        let s = self.structure.statements_in(&stmt.toks);
        match s.as_slice() {
            [first] => self
                .structure
                .site_at(*first)
                .filter(|&l| self.is_loop(l) && self.parent[l] == Some(c)),
            _ => None,
        }
    }
}
