//! A site's facts read from the arena: the statement libclang attaches the directive to,
//! the loop shapes of its nest, and each variable of its region with its type and writes,
//! checked against our own tokens (a site libclang reads differently is rejected).

use super::{Parsed, is_acc_construct};
use crate::lex::{TokKind, Token};
use crate::semantic::SiteInput;
use crate::semantic::facts::{Declared, LoopShape, RegionVar, SiteFacts, VarKind, VarType};
use clang_sys::*;
use std::ops::Range;

/// Tokens of our lexer, searchable by offset.
struct Toks<'a> {
    src: &'a str,
    toks: &'a [Token],
}

impl Toks<'_> {
    /// First token starting at or after `off`.
    fn after(&self, off: usize) -> Option<usize> {
        let i = self.toks.partition_point(|t| t.start() < off);
        (i < self.toks.len()).then_some(i)
    }
    fn text_after(&self, off: usize) -> &str {
        self.after(off).map_or("", |i| self.toks[i].text(self.src))
    }
    fn kind_after(&self, off: usize) -> Option<TokKind> {
        self.after(off).map(|i| self.toks[i].kind)
    }
    /// Only preprocessor lines start in `from..to`.
    fn only_pp(&self, from: usize, to: usize) -> bool {
        self.only_pp_or(from, to, |_| false)
    }
    /// Only preprocessor lines and tokens at offsets `skipped` says are compiled out start
    /// in `from..to`.
    fn only_pp_or(&self, from: usize, to: usize, skipped: impl Fn(usize) -> bool) -> bool {
        let mut i = self.after(from).unwrap_or(self.toks.len());
        while i < self.toks.len() && self.toks[i].start() < to {
            if self.toks[i].kind != TokKind::PpLine && !skipped(self.toks[i].start()) {
                return false;
            }
            i += 1;
        }
        true
    }
    /// Only `;` and preprocessor lines start in `from..to`.
    fn only_semis(&self, from: usize, to: usize) -> bool {
        let mut i = self.after(from).unwrap_or(self.toks.len());
        while i < self.toks.len() && self.toks[i].start() < to {
            let t = &self.toks[i];
            if t.kind != TokKind::PpLine && t.text(self.src) != ";" {
                return false;
            }
            i += 1;
        }
        true
    }
}

/// The binary operators that read their left operand without assigning it.
const READ_OPERATORS: [&str; 18] = [
    "+", "-", "*", "/", "%", "<<", ">>", "<", ">", "<=", ">=", "==", "!=", "&", "|", "^", "&&",
    "||",
];

/// Why a site's clang facts were not used.
#[derive(Debug)]
pub enum Rejected {
    /// libclang attaches the directive elsewhere (statement start it found, if any).
    Mismatch(Option<usize>),
    /// Errors inside the region: (offset, message).
    Errors(usize, String),
}

impl Parsed {
    fn first_child(&self, n: usize) -> Option<usize> {
        self.children(n).first().copied()
    }

    fn children(&self, n: usize) -> &[usize] {
        &self.kids[self.kid_at[n]..self.kid_at[n + 1]]
    }

    /// Whether the use at reference node `r` may modify its variable.
    fn is_write(&self, t: &Toks, r: usize) -> bool {
        let node = &self.nodes[r];
        let Some(v) = node.var else { return false };
        let var = &self.vars[v];
        let aggregate = matches!(var.ty.kind, VarKind::Array { .. } | VarKind::Struct);
        if !t.src.as_bytes()[node.start.min(t.src.len())..].starts_with(var.name.as_bytes()) {
            // Spelled by a macro (`_PB_N` for `n`): the tokens around are the macro use's, so
            // only the tree tells, and it is believed only where it shows a read for certain:
            // a scalar's value taken by an implicit conversion (libclang does not expose the
            // cast). Anything else is assumed written.
            let mut cur = r;
            while let Some(p) = self.nodes[cur].parent
                && self.nodes[p].kind == CXCursor_ParenExpr
            {
                cur = p;
            }
            let converted = self.nodes[cur]
                .parent
                .is_some_and(|p| self.nodes[p].kind == CXCursor_UnexposedExpr);
            return aggregate || !converted;
        }
        let mut cur = r;
        let mut guard = 0;
        while let Some(p) = self.nodes[cur].parent {
            guard += 1;
            if guard > 64 {
                break;
            }
            let pn = &self.nodes[p];
            let first = self.first_child(p) == Some(cur);
            let climb = match pn.kind {
                CXCursor_ParenExpr => true,
                CXCursor_UnexposedExpr => aggregate,
                CXCursor_MemberRefExpr => first && t.text_after(self.nodes[cur].end) == ".",
                CXCursor_ArraySubscriptExpr => first && aggregate,
                _ => false,
            };
            if !climb {
                break;
            }
            cur = p;
        }
        let Some(p) = self.nodes[cur].parent else {
            return false;
        };
        let pn = &self.nodes[p];
        let c = &self.nodes[cur];
        match pn.kind {
            // `x op= e` always writes `x`.
            CXCursor_CompoundAssignOperator => self.first_child(p) == Some(cur),
            // A read only where the token after the operand is a binary operator that does
            // not assign: anything else means a macro's body holds the operator and the
            // operand is its argument (`SET(t, 1)`, `#define SET(x, v) ((x) = (v))`), or
            // the comma operator after a bare name (rare): taken for an assignment.
            CXCursor_BinaryOperator => {
                self.first_child(p) == Some(cur)
                    && !(t.kind_after(c.end) == Some(TokKind::Punct)
                        && READ_OPERATORS.contains(&t.text_after(c.end)))
            }
            // An argument or initializer taken as it is, without the conversion that reads
            // a value: bound to a reference (C++ `void twice(double &x, …)`, `int &r = x`),
            // through which it may be assigned.
            CXCursor_CallExpr => self.first_child(p) != Some(cur),
            CXCursor_VarDecl => true,
            // The operand before its operator: `x++`/`x--` (the only such unary operators).
            // Otherwise a prefix operator that does not write, where the file spells one.
            CXCursor_UnaryOperator => {
                pn.start >= c.start
                    || !(t.kind_after(pn.start) == Some(TokKind::Punct)
                        && matches!(t.text_after(pn.start), "-" | "+" | "!" | "~" | "*"))
            }
            _ => false,
        }
    }

    /// The first statement libclang has after `site_end` (the outermost of those starting
    /// at the same place).
    fn stmt_after(&self, site_end: usize) -> Option<usize> {
        let k = self
            .positions
            .partition_point(|&i| self.nodes[i].start < site_end);
        self.positions.get(k).copied()
    }

    fn loop_shape(&self, t: &Toks, f: usize, depth: usize) -> Option<LoopShape> {
        let n = &self.nodes[f];
        if n.kind == CXCursor_CXXForRangeStmt {
            return Some(LoopShape {
                var: None,
                declared: true,
                depth: 1,
            });
        }
        if n.kind != CXCursor_ForStmt || depth > 64 {
            return None;
        }
        let kids = self.children(f);
        let spelled = t.text_after(n.start) == "for"
            && t.after(n.start)
                .is_some_and(|i| t.toks[i].start() == n.start);
        let init = if spelled {
            // The init is the child before the first `;` inside the parentheses.
            let open = t.after(n.start + 3)?;
            let mut depth_p = 0i32;
            let mut semi = None;
            for k in open..t.toks.len() {
                match t.toks[k].text(t.src) {
                    "(" | "[" | "{" => depth_p += 1,
                    ")" | "]" | "}" => {
                        depth_p -= 1;
                        if depth_p == 0 {
                            break;
                        }
                    }
                    ";" if depth_p == 1 => {
                        semi = Some(t.toks[k].start());
                        break;
                    }
                    _ => {}
                }
            }
            let semi = semi?;
            kids.iter().copied().find(|&c| self.nodes[c].start < semi)
        } else {
            kids.first()
                .copied()
                .filter(|&c| self.nodes[c].kind == CXCursor_DeclStmt)
        };
        let (var, declared) = match init {
            Some(i) if self.nodes[i].kind == CXCursor_DeclStmt => {
                let v = self
                    .children(i)
                    .iter()
                    .find_map(|&d| self.nodes[d].var)
                    .map(|v| self.vars[v].name.clone());
                (v, true)
            }
            Some(i) => (self.assigned_var(t, i, 0), false),
            None => (None, false),
        };
        let mut depth_n = 1;
        if let Some(&body) = kids.last() {
            // Blocks of one statement around the inner loop keep the nest perfect; clang's
            // OpenACC construct nodes are looked through.
            let mut inner = self.through_constructs(body);
            while self.nodes[inner].kind == CXCursor_CompoundStmt
                && let [only] = self.children(inner)
            {
                inner = self.through_constructs(*only);
            }
            let inner = Some(inner).filter(|&c| self.nodes[c].kind == CXCursor_ForStmt);
            if let Some(inner) = inner
                && inner != init.unwrap_or(usize::MAX)
                && let Some(s) = self.loop_shape(t, inner, depth + 1)
            {
                depth_n += s.depth;
            }
        }
        Some(LoopShape {
            var,
            declared,
            depth: depth_n,
        })
    }

    /// The statement of the OpenACC construct `n` (its last child, nested constructs looked
    /// through), as the syntactic reading looks through nested directives; `n` otherwise.
    fn through_constructs(&self, mut n: usize) -> usize {
        while is_acc_construct(self.nodes[n].kind) {
            match self.children(n).last() {
                Some(&s) if self.nodes[s].is_stmt => n = s,
                _ => break,
            }
        }
        n
    }

    /// `i` in `i = 0` or `i = 0, j = 0`.
    fn assigned_var(&self, t: &Toks, e: usize, depth: usize) -> Option<String> {
        let n = &self.nodes[e];
        if n.kind != CXCursor_BinaryOperator || depth > 8 {
            return None;
        }
        let lhs = self.first_child(e)?;
        match t.text_after(self.nodes[lhs].end) {
            "=" => {
                let mut l = lhs;
                while self.nodes[l].kind == CXCursor_ParenExpr {
                    l = self.first_child(l)?;
                }
                let v = self.nodes[l].var?;
                (self.nodes[l].kind == CXCursor_DeclRefExpr).then(|| self.vars[v].name.clone())
            }
            "," => self.assigned_var(t, lhs, depth + 1),
            _ => None,
        }
    }

    fn scope_of(&self, d: usize, len: usize) -> Range<usize> {
        let mut cur = self.nodes[d].parent;
        while let Some(p) = cur {
            let n = &self.nodes[p];
            if matches!(
                n.kind,
                CXCursor_CompoundStmt
                    | CXCursor_ForStmt
                    | CXCursor_IfStmt
                    | CXCursor_WhileStmt
                    | CXCursor_SwitchStmt
                    | CXCursor_FunctionDecl
                    | CXCursor_CXXMethod
                    | CXCursor_Constructor
                    | CXCursor_Destructor
                    | CXCursor_FunctionTemplate
                    | CXCursor_LambdaExpr
                    | CXCursor_CXXForRangeStmt
                    | CXCursor_CXXCatchStmt
            ) {
                return n.start..n.end;
            }
            cur = n.parent;
        }
        0..len
    }

    /// The variable `name` resolves to where `at` can see it.
    fn lookup_var(&self, name: &str, at: usize, len: usize) -> Option<usize> {
        // The declarations of `name` before `at`, nearest first: the first whose scope holds
        // `at` is the innermost visible one.
        let list = self.decls_named.get(name).map_or(&[][..], Vec::as_slice);
        let before = list.partition_point(|&i| self.nodes[i].start < at);
        let best = list[..before]
            .iter()
            .rev()
            .find(|&&i| self.scope_of(i, len).contains(&at))
            .and_then(|&i| Some((self.nodes[i].start, self.nodes[i].var?)));
        if let Some((_, v)) = best {
            return Some(v);
        }
        // A global from a header that the file references somewhere.
        self.vars
            .iter()
            .position(|v| v.decl.is_none() && v.name == name)
    }

    /// The error for a variable whose declaration clang marked invalid, used at `at`: its
    /// type is clang's recovery (a header that declares its type or bound was not found).
    fn invalid_use(&self, v: usize, at: usize) -> Option<Rejected> {
        let e = &self.vars[v];
        e.invalid.then(|| {
            Rejected::Errors(
                at,
                format!(
                    "the declaration of '{}' has errors (is a header it needs not found?)",
                    e.name
                ),
            )
        })
    }

    /// A variable's type, unless errors in its declaration make it untrustworthy.
    fn var_type_checked(&self, v: usize) -> VarType {
        let e = &self.vars[v];
        match &e.decl_extent {
            Some(r) if self.errors.iter().any(|(o, _)| r.contains(o)) => VarType::unknown(),
            _ => e.ty.clone(),
        }
    }

    pub fn in_skipped(&self, off: usize) -> bool {
        self.skipped.iter().any(|r| r.contains(&off))
    }

    /// Facts for one site, or why libclang's view cannot be used for it.
    pub fn site_facts(
        &self,
        src: &str,
        toks: &[Token],
        s: &SiteInput,
    ) -> Result<SiteFacts, Rejected> {
        let t = Toks { src, toks };
        let mut f = SiteFacts {
            exact: true,
            ..SiteFacts::default()
        };
        let region = if let Some(syn) = &s.stmt {
            // Errors before the region's end may explain a missing or different statement.
            let mismatch = |at: Option<usize>| match self
                .errors
                .iter()
                .filter(|(o, _)| *o < syn.end)
                .min_by_key(|(o, _)| *o)
            {
                Some((o, m)) => Rejected::Errors(*o, m.clone()),
                None => Rejected::Mismatch(at),
            };
            let Some(n) = self.stmt_after(s.end) else {
                return Err(mismatch(None));
            };
            let node = &self.nodes[n];
            // The syntactic statement may begin with nested directives (pragma lines); a
            // branch libclang skipped may stand before it (alternatives to the directive).
            let agrees = t.only_pp_or(s.end, node.start, |o| self.in_skipped(o))
                && syn.start <= node.start
                && t.only_pp(syn.start, node.start)
                && node.end <= syn.end
                && t.only_semis(node.end, syn.end);
            if !agrees {
                return Err(mismatch(Some(node.start)));
            }
            let region = node.start..syn.end;
            if let Some((o, m)) = self
                .errors
                .iter()
                .find(|(o, _)| *o >= s.start && *o < region.end)
            {
                return Err(Rejected::Errors(*o, m.clone()));
            }
            if let Some(o) = self.truncated.iter().find(|o| region.contains(o)) {
                return Err(Rejected::Errors(*o, "nested too deeply to analyze".into()));
            }
            if s.is_loop {
                f.loop_shape = self.loop_shape(&t, n, 0);
            }
            f.stmt = Some(region.clone());
            Some(region)
        } else {
            None
        };
        if s.vars
            && let Some(region) = &region
        {
            // The region's variables in order of first reference, and where each is.
            let mut vars: Vec<RegionVar> = Vec::new();
            let mut by_var: crate::hash::HashMap<usize, usize> = Default::default();
            let from = self
                .refs
                .partition_point(|&i| self.nodes[i].start < region.start);
            for &i in &self.refs[from..] {
                let n = &self.nodes[i];
                if n.start >= region.end {
                    break;
                }
                let Some(v) = n.var else { continue };
                let e = &self.vars[v];
                if e.decl.is_some_and(|d| region.contains(&d)) {
                    continue;
                }
                if let Some(r) = self.invalid_use(v, n.start) {
                    return Err(r);
                }
                let write = self.is_write(&t, i);
                let at = *by_var.entry(v).or_insert_with(|| {
                    vars.push(RegionVar::new(
                        e.name.as_str(),
                        self.var_type_checked(v).into(),
                        e.decl,
                        n.start,
                        Vec::new(),
                    ));
                    vars.len() - 1
                });
                let rv = &mut vars[at];
                rv.used_at(n.start);
                if write {
                    rv.add_write(n.start);
                }
            }
            f.vars = vars;
            f.inner = Declared::new(self.declared.clone());
            f.vars.sort_by_key(|v| v.first_use());
        }
        for name in &s.names {
            if let Some(v) = self.lookup_var(name, s.start, src.len()) {
                if let Some(r) = self.invalid_use(v, s.start) {
                    return Err(r);
                }
                f.names.insert(name.clone(), self.var_type_checked(v));
            }
        }
        Ok(f)
    }
}
