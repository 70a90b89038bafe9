//! C and C++ statements around directives: the statement each directive applies to and the
//! shape of its `for` loop, read from the tokens.

use crate::hash::HashMap;
use crate::lex::{TokKind, Token};
use crate::region::{ForLoop, Stmt};
use std::ops::Range;
use std::sync::{Mutex, OnceLock};

/// The start of a statement: its end, or where the statement it ends with starts.
enum Head {
    End(usize),
    /// A `for`, `while`, `switch` or a directive taking a statement: the body starts here.
    Nested(usize),
    /// An `if`: its then-branch starts here.
    If(usize),
    /// A `do`: its body follows the keyword.
    Do,
}

pub struct Structure<'a> {
    pub src: &'a str,
    pub toks: &'a [Token],
    /// Token index where a site begins → (site index, index one past its last token, takes a
    /// statement). 32-bit, as the per-token tables: one entry per site of a large file.
    starts: HashMap<u32, (u32, u32, bool)>,
    /// For each site taking a statement, the token after it and the sites stacked right
    /// after it (`for_loop_at` looks through them: once per site, not once per stacked
    /// site after it).
    through: HashMap<u32, u32>,
    /// For each bracket token, the index one past its match (`NONE`: none). 32 bits: one
    /// per token of the file, the largest table here.
    after_match: Vec<u32>,
    /// `stmt_end` results of statements that end with a nested one (`for`, `while`, ...),
    /// so that asking for each level of a deep unbraced nest stays linear: token → end
    /// (`NONE`: none), both 32-bit like the per-token tables.
    ends: Mutex<HashMap<u32, u32>>,
    /// Braces alone (other brackets ignored), computed when first asked (see [`Braces`]).
    braces: OnceLock<Braces>,
    /// `#pragma` sites inside parentheses or brackets (a parameter list, a call's
    /// arguments): first token → the innermost `(` or `[` around it.
    bracketed: HashMap<usize, usize>,
    /// Indexes of the preprocessor conditional lines (`#if`, `#else`, …), computed when
    /// first asked: a range is searched, not scanned (stacked directives ask for ranges
    /// that overlap).
    conditionals: OnceLock<Conditionals>,
    /// For a site taking a statement whose statement is not the next token after
    /// preprocessor lines (see [`past_alternatives`](Self::past_alternatives)): the token
    /// after the site → where its statement starts. Empty in most files.
    bodies: HashMap<u32, u32>,
}

/// The preprocessor conditional lines of a file.
struct Conditionals {
    /// Their token indexes, in order.
    lines: Vec<usize>,
    /// For each, the index in `lines` of its group's `#endif` (`NONE`: never closed).
    group_end: Vec<u32>,
}

impl Conditionals {
    fn new(st: &Structure) -> Self {
        let mut lines = Vec::new();
        for (k, t) in st.toks.iter().enumerate() {
            if t.kind == TokKind::PpLine
                && let Some(kw) = crate::lex::conditional(t.text(st.src))
            {
                lines.push((k, kw == "endif", matches!(kw, "if" | "ifdef" | "ifndef")));
            }
        }
        let mut group_end = vec![NONE; lines.len()];
        // The lines of each group still open, innermost last.
        let mut open: Vec<Vec<usize>> = Vec::new();
        for (c, &(_, endif, opens_group)) in lines.iter().enumerate() {
            if opens_group {
                open.push(vec![c]);
            } else if let Some(group) = open.last_mut() {
                group.push(c);
                if endif {
                    for g in open.pop().unwrap_or_default() {
                        group_end[g] = index32(c);
                    }
                }
            }
        }
        Conditionals {
            lines: lines.into_iter().map(|(k, _, _)| k).collect(),
            group_end,
        }
    }
}

/// "None" in the per-token tables.
const NONE: u32 = u32::MAX;

/// A token index in a per-token table (files have fewer than 4 billion tokens; a larger
/// index reads as "none": no match).
fn index32(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(NONE)
}

/// What remains to do once the statement being read ends (`stmt_end` reads nested
/// statements with this explicit stack, not recursion: an unbraced body may nest 10,000 deep).
enum Then {
    /// After an `if`'s then-branch: an `else` branch may follow.
    Else,
    /// After a `do` body: `while (…);`.
    DoWhile,
}

/// The braces of a file's token stream, those `after_match` pairs: the innermost `{` open
/// at a token changes only after a brace, so it is kept from each brace on, not for every
/// token (a large file has millions of tokens and few braces).
struct Braces {
    /// (token, innermost `{` open from that token on, up to the next entry's; `NONE`: none),
    /// in token order.
    inner: Vec<(u32, u32)>,
    /// Each `{` and its `}` (`NONE`: none), in token order.
    close: Vec<(u32, u32)>,
}

impl Braces {
    fn new(st: &Structure) -> Self {
        let mut inner = Vec::new();
        let mut close = Vec::new();
        // The innermost open `{`, with its entry in `close`.
        let mut open: Vec<(u32, usize)> = Vec::new();
        for (k, t) in st.toks.iter().enumerate() {
            // A `{` left open inside parentheses (or a stray `}`) is not a block, as
            // everywhere else in the structure.
            if t.kind != TokKind::Punct || st.after_match[k] == NONE {
                continue;
            }
            match t.text(st.src) {
                "{" => {
                    open.push((index32(k), close.len()));
                    close.push((index32(k), NONE));
                }
                "}" => match open.pop() {
                    Some((_, c)) => close[c].1 = index32(k),
                    None => continue,
                },
                _ => continue,
            }
            // The `{` (`}`) is itself inside the block around (of) it: the next token is
            // the first whose innermost `{` changes.
            inner.push((index32(k + 1), open.last().map_or(NONE, |&(o, _)| o)));
        }
        Braces { inner, close }
    }
}

impl<'a> Structure<'a> {
    /// `sites`: for each site, (first token, last token, takes a statement), or None for
    /// sites outside the token stream (macro bodies).
    pub fn new(src: &'a str, toks: &'a [Token], sites: &[Option<(usize, usize, bool)>]) -> Self {
        let mut starts = HashMap::with_capacity_and_hasher(sites.len(), Default::default());
        for (i, s) in sites.iter().enumerate() {
            if let Some((first, last, stmt)) = *s {
                starts.insert(index32(first), (index32(i), index32(last + 1), stmt));
            }
        }
        // A closer matches the innermost opener of its kind; the openers above that one stay
        // unmatched, and a closer with no opener of its kind is ignored. So an unbalanced
        // `(` never swallows the `}` of its block, whatever follows it in the file.
        let mut after_match = vec![NONE; toks.len()];
        let mut open: Vec<(usize, usize)> = Vec::new();
        let mut open_of_kind = [0usize; 3];
        let mut bracketed = HashMap::default();
        for (j, t) in toks.iter().enumerate() {
            if t.kind == TokKind::PpLine
                && starts.contains_key(&index32(j))
                && let Some(&(o, k)) = open.last()
                && k < 2
            {
                bracketed.insert(j, o);
            }
            if t.kind != TokKind::Punct {
                continue;
            }
            // Brackets are one byte: a punctuator's first byte says which it is, if any.
            let (opens, k) = match src.as_bytes()[t.start()] {
                b'(' => (true, 0),
                b'[' => (true, 1),
                b'{' => (true, 2),
                b')' => (false, 0),
                b']' => (false, 1),
                b'}' => (false, 2),
                _ => continue,
            };
            if opens {
                open.push((j, k));
                open_of_kind[k] += 1;
            } else if open_of_kind[k] > 0 {
                while let Some((o, ok)) = open.pop() {
                    open_of_kind[ok] -= 1;
                    if ok == k {
                        after_match[o] = index32(j + 1);
                        after_match[j] = index32(o + 1);
                        break;
                    }
                }
            }
        }
        // An opener never closed (broken code) holds nothing.
        bracketed.retain(|_, o| after_match[*o] != NONE);
        let mut s = Structure {
            src,
            toks,
            starts,
            through: HashMap::default(),
            after_match,
            ends: Mutex::default(),
            braces: OnceLock::new(),
            bracketed,
            conditionals: OnceLock::new(),
            bodies: HashMap::default(),
        };
        let mut stacked: Vec<(usize, usize)> = s
            .starts
            .iter()
            .filter(|(_, v)| v.2)
            .map(|(&first, v)| (first as usize, v.1 as usize))
            .collect();
        // Later sites first: the site after one is already looked through.
        stacked.sort_unstable_by_key(|&(first, _)| std::cmp::Reverse(first));
        s.through.reserve(stacked.len());
        for &(_, after) in &stacked {
            let body = s.past_alternatives(after);
            if body != s.skip_pp(after) {
                s.bodies.insert(index32(after), index32(body));
            }
        }
        for (first, after) in stacked {
            let next = s.body_after(after);
            let to = s
                .through
                .get(&index32(next))
                .copied()
                .unwrap_or(index32(next));
            s.through.insert(index32(first), to);
        }
        s
    }

    /// The preprocessor conditional lines, computed when first asked.
    fn conditionals(&self) -> &Conditionals {
        self.conditionals.get_or_init(|| Conditionals::new(self))
    }

    /// Whether a preprocessor conditional line stands in tokens `r`.
    pub fn conditional_in(&self, r: Range<usize>) -> bool {
        let lines = &self.conditionals().lines;
        let k = lines.partition_point(|&l| l < r.start);
        lines.get(k).is_some_and(|&l| l < r.end)
    }

    /// Where the statement of a site ending before token `after` starts, as compiled with
    /// the site's own branch of every conditional group it is in: preprocessor lines are
    /// skipped, and so are the group's other branches. In `#ifdef A` / `#pragma acc
    /// parallel loop` / `#else` / `#pragma acc kernels loop` / `#endif` / `for …` both
    /// directives apply to the `for`: they are alternatives, neither nested in the other.
    /// A site after the group, or in a group opened after the site, is stacked on it.
    fn past_alternatives(&self, after: usize) -> usize {
        // Conditional depth from the site (a group around the site closes below 0); the
        // lowest depth reached is that of the innermost group still around the site, and
        // `other` says whether an `#elif` or `#else` of that group has been passed.
        let (mut depth, mut low, mut other) = (0i64, 0i64, false);
        let mut i = after;
        while let Some(t) = self.toks.get(i) {
            let kw = (t.kind == TokKind::PpLine)
                .then(|| crate::lex::conditional(t.text(self.src)))
                .flatten();
            match kw {
                Some("if" | "ifdef" | "ifndef") => depth += 1,
                Some("endif") => {
                    depth -= 1;
                    if depth < low {
                        (low, other) = (depth, false);
                    }
                }
                Some(_) if depth == low => {
                    // The group's other branches, up to its `#endif` (read next): skipped
                    // at once, so that a chain of alternatives is read in linear time.
                    other = true;
                    let c = self.conditionals();
                    let k = c.lines.partition_point(|&l| l < i);
                    match c.group_end.get(k).filter(|&&e| e != NONE) {
                        Some(&e) => i = c.lines[e as usize],
                        None => return self.toks.len(),
                    }
                    continue;
                }
                Some(_) => {}
                None if other => {
                    // Another branch's text: on to the next conditional line.
                    let lines = &self.conditionals().lines;
                    match lines.get(lines.partition_point(|&l| l <= i)) {
                        Some(&l) => i = l,
                        None => return self.toks.len(),
                    }
                    continue;
                }
                None if self.is_plain_pp(i) => {}
                None => return i,
            }
            i += 1;
        }
        i
    }

    /// The first token of the statement of a site ending before token `after` (a stacked
    /// site's first token), past preprocessor lines and alternative branches.
    fn body_after(&self, after: usize) -> usize {
        match self.bodies.get(&index32(after)) {
            Some(&b) => b as usize,
            None => self.skip_pp(after),
        }
    }

    /// The innermost `{` open before token `i` (of the brackets' pairs), and the index of its
    /// `}` if it has one.
    pub fn enclosing_brace(&self, i: usize) -> Option<(usize, Option<usize>)> {
        if i >= self.toks.len() {
            return None;
        }
        let braces = self.braces.get_or_init(|| Braces::new(self));
        let k = braces
            .inner
            .partition_point(|&(from, _)| from as usize <= i);
        let o = braces.inner[..k]
            .last()
            .map(|&(_, o)| o)
            .filter(|&o| o != NONE)?;
        let c = braces
            .close
            .binary_search_by_key(&o, |&(open, _)| open)
            .ok();
        let close = c.map(|c| braces.close[c].1).filter(|&c| c != NONE);
        Some((o as usize, close.map(|c| c as usize)))
    }

    pub fn text(&self, i: usize) -> &str {
        self.toks.get(i).map_or("", |t| t.text(self.src))
    }

    /// Whether token `i` is `word` (a nonempty word): [`text`](Self::text)`(i) == word`,
    /// compared as bytes, for the passes that look at every token of a file.
    pub fn is(&self, i: usize, word: &str) -> bool {
        self.toks
            .get(i)
            .is_some_and(|t| self.src.as_bytes()[t.start()..t.end()] == *word.as_bytes())
    }

    /// The byte of token `i` when it is one of the one-byte punctuators `;`, `(`, `)`, `[`,
    /// `]`, `{` and `}` (a punctuator starting with one of them is that one byte alone).
    fn bracket_or_semi(&self, i: usize) -> Option<u8> {
        let t = self.toks[i];
        let c = self.src.as_bytes()[t.start()];
        (t.kind == TokKind::Punct && matches!(c, b';' | b'(' | b')' | b'[' | b']' | b'{' | b'}'))
            .then_some(c)
    }

    /// The first byte of token `i` when it is a punctuator: a bracket is its whole text (no
    /// longer punctuator starts with one), so brackets are told apart without slicing text.
    fn punct_byte(&self, i: usize) -> Option<u8> {
        let t = self.toks.get(i)?;
        (t.kind == TokKind::Punct).then(|| self.src.as_bytes()[t.start()])
    }

    fn is_plain_pp(&self, i: usize) -> bool {
        self.toks.get(i).is_some_and(|t| t.kind == TokKind::PpLine)
            && !self.starts.contains_key(&index32(i))
    }

    /// Skip preprocessor lines that are not OpenACC sites.
    pub fn skip_pp(&self, mut i: usize) -> usize {
        while self.is_plain_pp(i) {
            i += 1;
        }
        i
    }

    /// Index after the bracket matching the opener at `i`.
    pub fn matching(&self, i: usize) -> Option<usize> {
        let is_open = matches!(self.punct_byte(i), Some(b'(' | b'[' | b'{'));
        self.after_match
            .get(i)
            .filter(|&&m| is_open && m != NONE)
            .map(|&m| m as usize)
    }

    /// The opener matching the closer at `i`.
    pub fn opener(&self, i: usize) -> Option<usize> {
        let is_close = matches!(self.punct_byte(i), Some(b')' | b']' | b'}'));
        self.after_match
            .get(i)
            .filter(|&&m| is_close && m != NONE)
            .map(|&m| m as usize - 1)
    }

    /// Index one past the statement starting at token `i`.
    pub fn stmt_end(&self, i: usize) -> Option<usize> {
        // The statements entered before any `if`/`do` end where the innermost one ends. Most
        // chains hold one statement (a loop and its body): that one is kept apart, so that
        // the common call allocates nothing.
        let mut chain = (None, Vec::new());
        let end = self.stmt_end_uncached(i, &mut chain);
        if let (Some(first), more) = chain {
            let end = end.map_or(NONE, index32);
            let mut ends = self.ends.lock().unwrap_or_else(|e| e.into_inner());
            for c in std::iter::once(first).chain(more) {
                ends.insert(index32(c), end);
            }
        }
        end
    }

    /// The end remembered for the statement at token `i`, if asked before.
    fn known_end(&self, i: usize) -> Option<Option<usize>> {
        let ends = self.ends.lock().unwrap_or_else(|e| e.into_inner());
        let &e = ends.get(&index32(i))?;
        Some((e != NONE).then_some(e as usize))
    }

    fn stmt_end_uncached(
        &self,
        mut i: usize,
        chain: &mut (Option<usize>, Vec<usize>),
    ) -> Option<usize> {
        let mut then: Vec<Then> = Vec::new();
        loop {
            // Descend through statements that end with a nested statement.
            let i0 = self.skip_pp(i);
            let mut head = self.stmt_head(i0)?;
            // Only such statements are remembered (`stmt_end`): only theirs are looked up.
            if let Head::Nested(_) = head
                && let Some(e) = self.known_end(i0)
            {
                head = Head::End(e?);
            }
            let end = match head {
                Head::Nested(body) => {
                    if then.is_empty() {
                        match chain.0 {
                            None => chain.0 = Some(i0),
                            Some(_) => chain.1.push(i0),
                        }
                    }
                    i = body;
                    continue;
                }
                Head::If(then_start) => {
                    then.push(Then::Else);
                    i = then_start;
                    continue;
                }
                Head::Do => {
                    then.push(Then::DoWhile);
                    i = i0 + 1;
                    continue;
                }
                Head::End(e) => e,
            };
            // Climb back up through what the enclosing statements still need.
            let mut end = end;
            loop {
                match then.pop() {
                    None => return Some(end),
                    Some(Then::Else) => {
                        let e = self.skip_pp(end);
                        if self.text(e) == "else" {
                            i = e + 1;
                            break;
                        }
                    }
                    Some(Then::DoWhile) => {
                        let body_end = self.skip_pp(end);
                        (self.text(body_end) == "while").then_some(())?;
                        let p = self.skip_pp(body_end + 1);
                        let close = self.skip_pp(self.matching(p)?);
                        (self.text(close) == ";").then_some(())?;
                        end = close + 1;
                    }
                }
            }
        }
    }

    /// How the statement at token `i` (after preprocessor lines) begins.
    fn stmt_head(&self, i: usize) -> Option<Head> {
        if let Some(&(_, after, stmt)) = self.starts.get(&index32(i)) {
            let after = after as usize;
            return Some(if stmt {
                Head::Nested(self.body_after(after))
            } else {
                Head::End(after)
            });
        }
        let tok = self.toks.get(i)?;
        Some(match (tok.kind, self.text(i)) {
            (TokKind::Punct, "{") => Head::End(self.matching(i)?),
            (TokKind::Punct, ";") => Head::End(i + 1),
            (TokKind::Punct, "}") => return None,
            (TokKind::Ident, "for" | "while" | "switch") => {
                let p = self.skip_pp(i + 1);
                (self.text(p) == "(").then_some(())?;
                Head::Nested(self.matching(p)?)
            }
            (TokKind::Ident, "if") => {
                let mut p = self.skip_pp(i + 1);
                if self.text(p) == "constexpr" {
                    p = self.skip_pp(p + 1);
                }
                (self.text(p) == "(").then_some(())?;
                Head::If(self.matching(p)?)
            }
            (TokKind::Ident, "do") => Head::Do,
            _ => {
                // An expression or declaration statement: up to `;` at bracket depth 0.
                let mut j = i;
                while j < self.toks.len() {
                    match self.bracket_or_semi(j) {
                        Some(b';') => return Some(Head::End(j + 1)),
                        Some(b'(' | b'[' | b'{') => {
                            j = self.matching(j)?;
                            continue;
                        }
                        Some(_) => return None,
                        None => {}
                    }
                    j += 1;
                }
                return None;
            }
        })
    }

    /// End of a declaration starting at `i`: a prototype up to `;`, or a definition up to
    /// its body's closing brace.
    pub fn decl_end(&self, i: usize) -> Option<usize> {
        let i = self.skip_pp(i);
        let mut j = i;
        let mut saw_paren = false;
        while j < self.toks.len() {
            if let Some(&(_, after, _)) = self.starts.get(&index32(j)) {
                let after = after as usize;
                j = after;
                continue;
            }
            match (self.toks[j].kind, self.text(j)) {
                (TokKind::Punct, ";") => return Some(j + 1),
                (TokKind::Punct, "(") => {
                    saw_paren = true;
                    j = self.matching(j)?;
                }
                (TokKind::Punct, "[") => j = self.matching(j)?,
                (TokKind::Punct, "{") if saw_paren => return self.matching(j),
                (TokKind::Punct, "{") => j = self.matching(j)?,
                (TokKind::Punct, "}") => return None,
                _ => j += 1,
            }
        }
        None
    }

    /// The statement after a site whose last token is `last`.
    pub fn stmt_after(&self, last: usize) -> Option<Stmt> {
        let first = self.body_after(last + 1);
        let end = self.stmt_end(first)?;
        let bytes = self.toks[first].start()..self.toks[end - 1].end();
        Some(Stmt::new(
            first..end,
            bytes,
            self.for_loop_ending(first, Some(end)),
            None,
        ))
    }

    /// The `for` loop at token `i`, looking through nested OpenACC directives.
    pub fn for_loop_at(&self, i: usize) -> Option<ForLoop> {
        self.for_loop_ending(i, None)
    }

    /// [`for_loop_at`](Self::for_loop_at), where `end` (if known) is `stmt_end(i)`: a `for`
    /// statement ends where its body does, which is then not read again.
    fn for_loop_ending(&self, i: usize, end: Option<usize>) -> Option<ForLoop> {
        let at = i;
        let mut i = self.skip_pp(i);
        if let Some(&after) = self.through.get(&index32(i)) {
            i = after as usize;
        }
        if self.text(i) != "for" {
            return None;
        }
        let open = self.skip_pp(i + 1);
        if self.text(open) != "(" {
            return None;
        }
        let close = self.matching(open)? - 1;
        let body_start = close + 1;
        let body_end = match end {
            Some(end) if i == at => end,
            _ => self.stmt_end(body_start)?,
        };
        // The init clause: tokens `open + 1..init_end`, up to the first `;` inside the
        // parentheses; its head is the part before `=` or `{`.
        let init_end = (open + 1..close)
            .find(|&j| self.text(j) == ";")
            .unwrap_or(close);
        let head_end = (open + 1..init_end)
            .find(|&t| matches!(self.text(t), "=" | "{"))
            .unwrap_or(init_end);
        let is_range_for = init_end >= close && (open + 1..init_end).any(|t| self.text(t) == ":");
        let (var, declared) = match head_end - (open + 1) {
            0 => (None, false),
            _ if is_range_for => (None, true),
            1 if self.toks[open + 1].kind == TokKind::Ident => {
                (Some(self.text(open + 1).into()), false)
            }
            _ => {
                let last = head_end - 1;
                let var = (self.toks[last].kind == TokKind::Ident).then(|| self.text(last).into());
                (var, true)
            }
        };
        Some(ForLoop::new(var, declared, i, body_start..body_end))
    }

    /// How many perfectly nested `for` loops start at token `i` (at most `limit`).
    pub fn nest_depth(&self, i: usize, limit: usize) -> usize {
        self.nest(i, limit).0
    }

    /// When fewer than `limit` perfectly nested `for` loops start at token `i`: the first
    /// token of the statement that ends the nest (code beside the inner loop, or the
    /// statement in place of a loop).
    pub fn nest_break(&self, i: usize, limit: usize) -> Option<usize> {
        self.nest(i, limit).1
    }

    /// The perfectly nested `for` loops starting at token `i` (at most `limit`).
    pub fn nest_loops(&self, i: usize, limit: usize) -> Vec<ForLoop> {
        let mut out = Vec::new();
        self.walk_nest(i, limit, |f| out.push(f.clone()));
        out
    }

    /// [`nest_depth`](Self::nest_depth) of the nest whose outer loop `outer` is already read
    /// (its header is not read again).
    pub fn nest_depth_of(&self, outer: &ForLoop, limit: usize) -> usize {
        let mut depth = 0;
        self.walk_nest_from(outer, limit, |_| depth += 1);
        depth
    }

    fn nest(&self, i: usize, limit: usize) -> (usize, Option<usize>) {
        let mut depth = 0;
        let at = self.walk_nest(i, limit, |_| depth += 1);
        (depth, at)
    }

    /// Calls `each` on the loops of the nest at `i`; returns where a nest shorter than
    /// `limit` ends (see `nest_break`).
    fn walk_nest(&self, i: usize, limit: usize, each: impl FnMut(&ForLoop)) -> Option<usize> {
        let outer = self.for_loop_at(i)?;
        self.walk_nest_from(&outer, limit, each)
    }

    /// [`walk_nest`](Self::walk_nest) from the outer loop `outer`.
    fn walk_nest_from(
        &self,
        outer: &ForLoop,
        limit: usize,
        mut each: impl FnMut(&ForLoop),
    ) -> Option<usize> {
        let mut depth = 0;
        let mut inner: Option<ForLoop> = None;
        let mut f = outer;
        loop {
            each(f);
            depth += 1;
            if depth >= limit {
                return None;
            }
            match self.nested_stmt(f.body().start) {
                Ok(b) => match self.for_loop_at(b) {
                    Some(next) => f = inner.insert(next),
                    None => return Some(self.skip_pp(b)),
                },
                Err(at) => return at,
            }
        }
    }

    /// The statement inside blocks of one statement starting at token `b` (`{ { s } }`), or
    /// the first token of a statement beside the one that leads to a loop (None: an empty
    /// block).
    fn nested_stmt(&self, b: usize) -> Result<usize, Option<usize>> {
        let single = |mut b: usize| -> Result<usize, Vec<usize>> {
            loop {
                b = self.skip_pp(b);
                let Some(end) = self.matching(b).filter(|_| self.text(b) == "{") else {
                    return Ok(b);
                };
                match self.statements_in(&(b..end)).as_slice() {
                    [one] => b = *one,
                    many => return Err(many.to_vec()),
                }
            }
        };
        match single(b) {
            Ok(s) => Ok(s),
            Err(stmts) => {
                let leads = |s: usize| single(s).is_ok_and(|t| self.for_loop_at(t).is_some());
                Err(match stmts.iter().position(|&s| leads(s)) {
                    Some(0) => stmts.get(1).copied(),
                    _ => stmts.first().copied(),
                })
            }
        }
    }

    /// Top-level statements of a block or a single statement, as token starts.
    pub fn statements_in(&self, stmt: &Range<usize>) -> Vec<usize> {
        let first = self.skip_pp(stmt.start);
        if self.text(first) != "{" {
            return vec![first];
        }
        let mut out = Vec::new();
        let mut i = self.skip_pp(first + 1);
        while i + 1 < stmt.end && self.text(i) != "}" {
            out.push(i);
            match self.stmt_end(i) {
                Some(e) => i = self.skip_pp(e),
                None => break,
            }
        }
        out
    }

    /// Whether token `i` starts an OpenACC site, and which.
    pub fn site_at(&self, i: usize) -> Option<usize> {
        self.site_starting(self.skip_pp(i))
    }

    /// The site whose first token is `i`.
    pub fn site_starting(&self, i: usize) -> Option<usize> {
        self.starts.get(&index32(i)).map(|s| s.0 as usize)
    }

    /// The innermost `(` or `[` around the `#pragma` site starting at token `i`.
    pub fn bracket_around(&self, i: usize) -> Option<usize> {
        self.bracketed.get(&i).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lex::lex;

    fn stmt_text(src: &str, from: &str) -> String {
        let toks = lex(src);
        let s = Structure::new(src, &toks, &[]);
        let i = toks
            .iter()
            .position(|t| t.start() == src.find(from).unwrap())
            .unwrap();
        let e = s.stmt_end(i).unwrap();
        src[toks[i].start()..toks[e - 1].end()].to_string()
    }

    #[test]
    fn an_unbalanced_paren_does_not_take_the_blocks_brace() {
        let src = "void f() { for (g(x) for (;;) y; } int z;";
        let toks = lex(src);
        let s = Structure::new(src, &toks, &[]);
        let at = |w: &str| {
            toks.iter()
                .position(|t| t.start() == src.find(w).unwrap())
                .unwrap()
        };
        assert_eq!(s.stmt_end(at("for (g")), None);
        assert_eq!(s.matching(at("{")), Some(at("} int") + 1));
    }

    #[test]
    fn pragmas_inside_brackets_are_known() {
        // A parameter list and a subscript hold their pragma; a lambda's body inside a call's
        // parentheses, and a call never closed (broken code), do not.
        let src = "void p(\n#pragma acc routine\n) {}\nint x = a[\n#pragma acc update\n1];\n\
                   void f() { g([&]() {\n#pragma acc loop\nfor (;;) ; }); }\n\
                   void h() { k(1;\n#pragma acc wait\n}\n";
        let toks = lex(src);
        let pragmas: Vec<usize> = (0..toks.len())
            .filter(|&i| toks[i].kind == TokKind::PpLine)
            .collect();
        let sites: Vec<_> = pragmas.iter().map(|&i| Some((i, i, false))).collect();
        let s = Structure::new(src, &toks, &sites);
        let around: Vec<&str> = pragmas
            .iter()
            .map(|&i| s.bracket_around(i).map_or("", |o| s.text(o)))
            .collect();
        assert_eq!(around, ["(", "[", "", ""]);
    }

    /// The statement of each `#pragma` line of `src` (all taken as sites taking one), as
    /// the text of its first line.
    fn statements_of_pragmas(src: &str) -> Vec<String> {
        let toks = lex(src);
        let pragmas: Vec<usize> = (0..toks.len())
            .filter(|&i| toks[i].kind == TokKind::PpLine && toks[i].text(src).contains("pragma"))
            .collect();
        let sites: Vec<_> = pragmas.iter().map(|&i| Some((i, i, true))).collect();
        let s = Structure::new(src, &toks, &sites);
        pragmas
            .iter()
            .map(|&p| {
                s.stmt_after(p).map_or("-".into(), |st| {
                    let t = &src[st.bytes()];
                    t.lines().next().unwrap_or("").to_string()
                })
            })
            .collect()
    }

    #[test]
    fn directives_in_other_branches_are_alternatives_not_stacked() {
        // Each alternative applies to the loop; one after the group is stacked on it.
        let src = "#ifdef A\n#pragma x\n#elif B\n#pragma y\n#else\n#pragma z\n#endif\n\
                   #pragma w\nfor (;;) ;\n";
        assert_eq!(
            statements_of_pragmas(src),
            ["#pragma w", "#pragma w", "#pragma w", "for (;;) ;"]
        );
        // A statement in the other branch is skipped; a group opened after the site, or
        // inside the other branch, changes nothing.
        let src = "#if A\n#pragma x\n#else\nf();\n#if C\ng();\n#else\nh();\n#endif\n#endif\n\
                   #ifdef D\n#else\n#endif\nfor (;;) ;\n";
        assert_eq!(statements_of_pragmas(src), ["for (;;) ;"]);
        // The site in an inner group: the outer group's `#else` starts an alternative.
        let src = "#if A\n#if B\n#pragma x\n#endif\n#else\n#pragma y\n#endif\nk();\n";
        assert_eq!(statements_of_pragmas(src), ["k();", "k();"]);
        // A group that closes before the next directive: stacked, as without groups.
        let src = "#ifdef A\n#pragma x\n#else\n#endif\n#pragma y\nk();\n";
        assert_eq!(statements_of_pragmas(src), ["#pragma y", "k();"]);
        // An `#else` never closed: nothing follows the site in its own branch.
        let src = "#ifdef A\n#pragma x\n#else\nk();\n";
        assert_eq!(statements_of_pragmas(src), ["-"]);
    }

    #[test]
    fn remembered_ends_equal_fresh_ones_in_any_order() {
        let src = "for (;;) while (a) for (i = 0; i < n; i++) if (b) do if (c) x; else y; \
                   while (d); else for (;;) { z; } w; for (;;) switch (e) { case 1: v; } if (f) ;";
        let toks = lex(src);
        let fresh: Vec<_> = (0..toks.len())
            .map(|i| Structure::new(src, &toks, &[]).stmt_end(i))
            .collect();
        let shared = Structure::new(src, &toks, &[]);
        for i in (0..toks.len()).rev().chain(0..toks.len()) {
            assert_eq!(shared.stmt_end(i), fresh[i], "token {i}");
        }
    }

    /// `matching` and `opener` (brackets told by their byte) against brackets told by their
    /// text, on every token of a file with punctuators of every length.
    #[test]
    fn brackets_told_by_byte_are_those_told_by_text() {
        let src = "int f(int a[3]) { x->y[(a)] <<= {1}; p&&(q||r); s ... t; }\n#pragma x (\n}";
        let toks = lex(src);
        let st = Structure::new(src, &toks, &[]);
        for i in 0..toks.len() + 1 {
            let punct = toks.get(i).is_some_and(|t| t.kind == TokKind::Punct);
            let (open, close) = (
                punct && matches!(st.text(i), "(" | "[" | "{"),
                punct && matches!(st.text(i), ")" | "]" | "}"),
            );
            let m = st
                .after_match
                .get(i)
                .filter(|&&m| m != NONE)
                .map(|&m| m as usize);
            assert_eq!(st.matching(i), m.filter(|_| open), "{i}");
            assert_eq!(st.opener(i), m.filter(|_| close).map(|m| m - 1), "{i}");
        }
        assert_eq!(st.matching(2).map(|e| st.text(e - 1)), Some(")"));
    }

    #[test]
    fn statements() {
        assert_eq!(
            stmt_text("x; if (a) b(); else { c; } d;", "if"),
            "if (a) b(); else { c; }"
        );
        assert_eq!(
            stmt_text("do { x(); } while (y); z;", "do"),
            "do { x(); } while (y);"
        );
        assert_eq!(
            stmt_text("for (;;)\n#ifdef X\n a();\n#endif\n b;", "for"),
            "for (;;)\n#ifdef X\n a();"
        );
        assert_eq!(
            stmt_text("int a[] = {1, 2}; b;", "int"),
            "int a[] = {1, 2};"
        );
    }

    #[test]
    fn deep_unbraced_nesting_is_read_without_recursion() {
        for depth in [1, 300, 20_000] {
            let mut src = String::new();
            for k in 0..depth {
                match k % 4 {
                    0 => src.push_str("for (;;) "),
                    1 => src.push_str("if (a) "),
                    2 => src.push_str("while (b) "),
                    _ => src.push_str("do "),
                }
            }
            src.push_str("x();");
            for k in (0..depth).rev() {
                if k % 4 == 3 {
                    src.push_str(" while (c);");
                }
                if k % 4 == 1 && k % 8 == 1 {
                    src.push_str(" else y();");
                }
            }
            src.push_str(" z;");
            let end = src.len() - " z;".len();
            let toks = lex(&src);
            let s = Structure::new(&src, &toks, &[]);
            let e = s.stmt_end(0).unwrap();
            assert_eq!({ toks[e - 1].end() }, end, "depth {depth}");
        }
    }

    /// `stmt_after` reuses the statement's end as its loop's body end: the loop is the one
    /// `for_loop_at` reads on its own, after any token, with sites stacked or not.
    #[test]
    fn loops_after_sites_are_those_read_on_their_own() {
        let src = "#pragma acc parallel\n#pragma acc loop\nfor (int i = 0; i < n; i++) a[i] = 0;\n\
                   #pragma acc loop\n#define X 1\nfor (;;) for (j = 0; j < m; j++) { if (b) x; else y; }\n\
                   #pragma acc kernels\nwhile (c) for (k = 0; k < 2; k++) do z; while (d);\n\
                   #pragma acc loop\nfor (p = q; p; p++) if (e) for (;;) {}\n{ w; }\n";
        let toks = lex(src);
        let sites: Vec<_> = (0..toks.len())
            .filter(|&i| toks[i].kind == TokKind::PpLine && toks[i].text(src).contains("acc"))
            .map(|i| Some((i, i, true)))
            .collect();
        let s = Structure::new(src, &toks, &sites);
        let mut loops = 0;
        for last in 0..toks.len() {
            let Some(stmt) = s.stmt_after(last) else {
                continue;
            };
            let alone = Structure::new(src, &toks, &sites).for_loop_at(s.skip_pp(last + 1));
            loops += usize::from(alone.is_some());
            assert_eq!(stmt.for_loop, alone, "token {last}");
        }
        assert!(loops >= 8, "{loops}");
    }

    #[test]
    fn for_loop_shapes() {
        let src =
            "for (int i = 0; i < n; i++) a[i] = 0; for (j = 0; j < n; ++j) {} for (auto &x : v) {}";
        let toks = lex(src);
        let s = Structure::new(src, &toks, &[]);
        let fors: Vec<_> = toks
            .iter()
            .enumerate()
            .filter(|(_, t)| t.text(src) == "for")
            .map(|(i, _)| s.for_loop_at(i).unwrap())
            .collect();
        assert_eq!(
            (fors[0].var.as_deref(), fors[0].declared),
            (Some("i"), true)
        );
        assert_eq!(
            (fors[1].var.as_deref(), fors[1].declared),
            (Some("j"), false)
        );
        assert_eq!((fors[2].var.as_deref(), fors[2].declared), (None, true));
        // No init clause, a braced initializer, a cast in the init, a range over a call.
        let src = "for (;;) {} for (long k{0}; k < n; k++) {} for (p = (T *)q; p; p++) {} \
                   for (const auto &[a, b] : f(x)) {}";
        let toks = lex(src);
        let s = Structure::new(src, &toks, &[]);
        let shapes: Vec<_> = (0..toks.len())
            .filter(|&i| toks[i].text(src) == "for")
            .map(|i| {
                let f = s.for_loop_at(i).unwrap();
                (f.var.map(String::from), f.declared)
            })
            .collect();
        assert_eq!(
            shapes,
            [
                (None, false),
                (Some("k".to_string()), true),
                (Some("p".to_string()), false),
                (None, true)
            ]
        );
    }

    #[test]
    fn nest_depth_counts_perfect_nests() {
        let src = "for (i=0;i<n;i++) { for (j=0;j<m;j++) for (k=0;k<2;k++) x; }";
        let toks = lex(src);
        let s = Structure::new(src, &toks, &[]);
        assert_eq!(s.nest_depth(0, 5), 3);
        let src = "for (i=0;i<n;i++) { { for (j=0;j<m;j++) x; } }";
        let toks = lex(src);
        let s = Structure::new(src, &toks, &[]);
        assert_eq!((s.nest_depth(0, 2), s.nest_break(0, 2)), (2, None));
        // What ends the nest: code before the inner loop, after it, or no inner loop.
        for (src, at) in [
            (
                "for (i=0;i<n;i++) { int k = f(); { for (j=0;j<m;j++) x; } }",
                "int",
            ),
            ("for (i=0;i<n;i++) { { for (j=0;j<m;j++) ; g(); } }", "g"),
            ("for (i=0;i<n;i++) { { for (j=0;j<m;j++) ; } h(); }", "h"),
            ("for (i=0;i<n;i++) y;", "y"),
        ] {
            let toks = lex(src);
            let s = Structure::new(src, &toks, &[]);
            assert_eq!(s.nest_depth(0, 2), 1, "{src}");
            assert_eq!(s.nest_break(0, 2).map(|t| s.text(t)), Some(at), "{src}");
        }
    }

    /// The innermost `{` at each token as the per-token tables had it: the oracle of
    /// `Braces`, which keeps it from each brace on.
    #[test]
    fn enclosing_brace_as_per_token_tables() {
        let srcs = [
            "void f() { int a[3] = {1, 2}; if (x) { g(); } else { for (;;) { h(); } } }\nint y;",
            "void f() { ( { } ; } } { int x; { y; } ",
            "{ [ { ] } } ) { a; ( } b; } c { { d } e }",
            "",
            "} } { {",
        ];
        for src in srcs {
            let toks = lex(src);
            let st = Structure::new(src, &toks, &[]);
            let none = u32::MAX;
            let mut inner = vec![none; toks.len()];
            let mut close = vec![none; toks.len()];
            let mut open: Vec<u32> = Vec::new();
            for (k, t) in toks.iter().enumerate() {
                inner[k] = open.last().copied().unwrap_or(none);
                if t.kind != TokKind::Punct || st.after_match[k] == NONE {
                    continue;
                }
                match t.text(src) {
                    "{" => open.push(k as u32),
                    "}" => {
                        if let Some(o) = open.pop() {
                            close[o as usize] = k as u32;
                        }
                    }
                    _ => {}
                }
            }
            for i in 0..toks.len() + 2 {
                let want = inner.get(i).filter(|&&o| o != none).map(|&o| {
                    let o = o as usize;
                    (o, Some(close[o] as usize).filter(|&c| c != none as usize))
                });
                assert_eq!(st.enclosing_brace(i), want, "{src:?} at {i}");
            }
        }
    }
}
