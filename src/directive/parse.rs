use super::{Args, Clause, Dialect, Directive, Item};
use crate::lex::{block_comment_end, line_comment_end, splice_len};
use crate::rules::{ArgPresence, DirectiveKind, Tables};
use crate::rules::{RuleId, id};
use std::ops::Range;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub offset: usize,
    pub message: String,
    pub rule: RuleId,
}

const REDUCTION_OPS: [&str; 9] = ["+", "*", "max", "min", "&", "|", "^", "&&", "||"];
/// Fortran's reduction operators and intrinsics (case-insensitive); gfortran also takes
/// `-` (a sum, as in OpenMP).
const FORTRAN_REDUCTION_OPS: [&str; 12] = [
    "+", "*", "-", "max", "min", "iand", "ior", "ieor", ".and.", ".or.", ".eqv.", ".neqv.",
];
const ATOMIC_KINDS: [&str; 4] = ["read", "write", "update", "capture"];

struct Cursor<'a> {
    b: &'a [u8],
    src: &'a str,
    pos: usize,
    end: usize,
    comments: Vec<Range<usize>>,
    dialect: Dialect,
}

/// End of the quoted text whose quote is at `i`: C escapes with `\` and stops at a newline;
/// Fortran doubles the quote.
fn quoted_end(b: &[u8], i: usize, dialect: Dialect) -> usize {
    match dialect {
        Dialect::C => crate::lex::quoted_end(b, i),
        Dialect::Fortran => {
            let mut k = i + 1;
            while k < b.len() {
                if b[k] == b[i] {
                    if b.get(k + 1) != Some(&b[i]) {
                        return k + 1;
                    }
                    k += 1;
                }
                k += 1;
            }
            b.len()
        }
    }
}

impl<'a> Cursor<'a> {
    fn new(src: &'a str, range: Range<usize>, dialect: Dialect) -> Self {
        Cursor {
            b: src.as_bytes(),
            src,
            pos: range.start,
            end: range.end.min(src.len()),
            comments: Vec::new(),
            dialect,
        }
    }

    /// Skip blanks, line splices and comments (recording the comments). Fortran directive
    /// text comes with its comments and continuations already taken out.
    fn skip(&mut self) {
        while self.pos < self.end {
            let c = self.b[self.pos];
            let s = splice_len(self.b, self.pos);
            if self.dialect == Dialect::Fortran {
                if !c.is_ascii_whitespace() {
                    break;
                }
                self.pos += 1;
            } else if s > 0 {
                self.pos += s;
            } else if c.is_ascii_whitespace() {
                self.pos += 1;
            } else if self.b[self.pos..self.end].starts_with(b"/*") {
                let e = block_comment_end(self.b, self.pos).min(self.end);
                self.comments.push(self.pos..e);
                self.pos = e;
            } else if self.b[self.pos..self.end].starts_with(b"//") {
                let e = line_comment_end(self.b, self.pos).min(self.end);
                self.comments.push(self.pos..e);
                self.pos = e;
            } else {
                break;
            }
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip();
        (self.pos < self.end).then(|| self.b[self.pos])
    }

    fn word(&mut self) -> Option<Range<usize>> {
        self.skip();
        let start = self.pos;
        while self.pos < self.end
            && (self.b[self.pos].is_ascii_alphanumeric() || self.b[self.pos] == b'_')
        {
            self.pos += 1;
        }
        (self.pos > start).then_some(start..self.pos)
    }

    /// Peek at the next word without consuming it.
    fn peek_word(&mut self) -> Option<&'a str> {
        let save = (self.pos, self.comments.len());
        let w = self.word().map(|r| &self.src[r]);
        self.pos = save.0;
        self.comments.truncate(save.1);
        w
    }

    fn err(&self, offset: usize, rule: RuleId, message: String) -> ParseError {
        ParseError {
            offset,
            message,
            rule,
        }
    }

    /// A balanced `( ... )` starting at the cursor; returns the inside range.
    fn parens(&mut self) -> Result<Range<usize>, ParseError> {
        self.skip();
        let open = self.pos;
        let mut depth = 0usize;
        let mut i = self.pos;
        while i < self.end {
            match self.b[i] {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        if self.b[i] != b')' {
                            break;
                        }
                        self.pos = i + 1;
                        return Ok(open + 1..i);
                    }
                }
                b'"' | b'\'' => {
                    i = quoted_end(self.b, i, self.dialect);
                    continue;
                }
                b'/' if self.dialect == Dialect::C && self.b.get(i + 1) == Some(&b'*') => {
                    i = block_comment_end(self.b, i);
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        Err(self.err(open, id::PARSE_ERROR, "unbalanced parentheses".into()))
    }
}

/// `r` without surrounding whitespace, `\` line continuations and comments.
fn trimmed(src: &str, r: Range<usize>) -> Range<usize> {
    let (mut a, mut b) = (r.start, r.end);
    loop {
        let s = &src[a..b];
        let t = s.trim_start();
        a += s.len() - t.len();
        if let Some(rest) = t.strip_prefix('\\') {
            let nl = rest.len() - rest.trim_start_matches([' ', '\t', '\r']).len();
            if rest[nl..].starts_with('\n') {
                a += 1 + nl + 1;
                continue;
            }
        }
        if let Some(e) = t.strip_prefix("/*").and_then(|c| c.find("*/")) {
            a += e + 4;
            continue;
        }
        break;
    }
    loop {
        let s = &src[a..b];
        let t = s.trim_end();
        b -= s.len() - t.len();
        if let Some(rest) = t.strip_suffix('\\') {
            b = a + rest.len();
            continue;
        }
        if let Some(o) = t.strip_suffix("*/").and_then(|c| c.rfind("/*")) {
            b = a + o;
            continue;
        }
        break;
    }
    if a >= b { r.start..r.start } else { a..b }
}

/// Split `src[inner]` at top-level commas (and one leading `modifier:` when allowed).
fn split_args(
    src: &str,
    inner: Range<usize>,
    modifiers: &[String],
    dialect: Dialect,
) -> Result<Args, ParseError> {
    let b = src.as_bytes();
    let mut pieces = Vec::new();
    let mut depth = 0i32;
    let mut start = inner.start;
    let mut colon = None;
    let mut i = inner.start;
    while i < inner.end {
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'"' | b'\'' => {
                i = quoted_end(b, i, dialect).min(inner.end);
                continue;
            }
            b'/' if dialect == Dialect::C && b.get(i + 1) == Some(&b'*') => {
                i = src[i + 2..inner.end]
                    .find("*/")
                    .map_or(inner.end, |e| i + 2 + e + 2);
                continue;
            }
            b'#' => {
                return Err(ParseError {
                    offset: i,
                    rule: id::PARSE_ERROR,
                    message: "unexpected '#' in a clause argument".into(),
                });
            }
            b',' if depth == 0 => {
                pieces.push(start..i);
                start = i + 1;
            }
            b':' if depth == 0 && colon.is_none() && pieces.is_empty() => {
                let double = b.get(i + 1) == Some(&b':') || (i > 0 && b[i - 1] == b':');
                if !double {
                    colon = Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    pieces.push(start..inner.end);
    let mut modifier = None;
    if let Some(c) = colon {
        let m = trimmed(src, inner.start..c);
        let word = &src[m.clone()];
        let ok = match dialect {
            Dialect::C => modifiers
                .iter()
                .any(|x| x == word || (x == "op" && REDUCTION_OPS.contains(&word))),
            Dialect::Fortran => modifiers.iter().any(|x| {
                x.eq_ignore_ascii_case(word)
                    || (x == "op"
                        && FORTRAN_REDUCTION_OPS
                            .iter()
                            .any(|o| o.eq_ignore_ascii_case(word)))
            }),
        };
        if ok {
            modifier = Some(Item {
                text: word.to_string(),
                span: m,
            });
            pieces[0] = c + 1..pieces[0].end;
        } else if modifiers.iter().any(|x| x == "op") {
            return Err(ParseError {
                offset: m.start,
                rule: id::PARSE_ERROR,
                message: format!("unknown reduction operator '{word}'"),
            });
        }
    } else if modifiers.iter().any(|x| x == "op") {
        return Err(ParseError {
            offset: inner.start,
            rule: id::PARSE_ERROR,
            message: "reduction needs 'operator: list'".into(),
        });
    }
    let mut items = Vec::new();
    for p in pieces {
        let r = trimmed(src, p);
        if r.is_empty() {
            return Err(ParseError {
                offset: r.start,
                rule: id::PARSE_ERROR,
                message: "empty argument".into(),
            });
        }
        items.push(Item {
            text: src[r.clone()].to_string(),
            span: r,
        });
    }
    if modifier.as_ref().is_some_and(|m| m.text == "devnum")
        && let Some(first) = items.first_mut()
    {
        *first = devnum_queues(src, first.span.clone())?;
    }
    // The items as written: comments and continuations stay; plain outer spaces go.
    let list_start = match items.first() {
        Some(_) => {
            let from = modifier
                .as_ref()
                .map_or(inner.start, |_| colon.unwrap_or(0) + 1);
            let all = &src[from..inner.end];
            match all.trim_start() {
                t if t.starts_with('\\') => from,
                t => inner.end - t.len(),
            }
        }
        None => inner.end,
    };
    let list = match src[list_start..inner.end].trim_end() {
        t if t.ends_with('\\') => src[list_start..inner.end].to_string(),
        t => t.to_string(),
    };
    Ok(Args {
        span: inner,
        modifier,
        items,
        list,
        list_start,
    })
}

/// The first queue of `wait(devnum: d : [queues:] q, …)`, whose item `d : [queues:] q` holds
/// the device number too (OpenACC 3.x wait-argument).
fn devnum_queues(src: &str, r: Range<usize>) -> Result<Item, ParseError> {
    let b = src.as_bytes();
    let mut depth = 0i32;
    let mut colon = None;
    for i in r.clone() {
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b':' if depth == 0 && b.get(i + 1) != Some(&b':') && (i == 0 || b[i - 1] != b':') => {
                colon = Some(i);
                break;
            }
            _ => {}
        }
    }
    let Some(c) = colon else {
        return Err(ParseError {
            offset: r.start,
            rule: id::PARSE_ERROR,
            message: "'devnum:' needs a device number and the queues: 'devnum: d : queues'".into(),
        });
    };
    let mut q = trimmed(src, c + 1..r.end);
    if let Some(rest) = src[q.clone()].strip_prefix("queues")
        && rest.trim_start().starts_with(':')
    {
        let after = q.end - rest.trim_start().len() + 1;
        q = trimmed(src, after..q.end);
    }
    if q.is_empty() || trimmed(src, r.start..c).is_empty() {
        return Err(ParseError {
            offset: r.start,
            rule: id::PARSE_ERROR,
            message: "'devnum:' needs a device number and the queues: 'devnum: d : queues'".into(),
        });
    }
    Ok(Item {
        text: src[q.clone()].to_string(),
        span: q,
    })
}

/// The directive name at the cursor (`enter data`, `parallel loop`), resolved only as far
/// as its words go: whether it is a known directive is checked by the caller.
fn read_name(cur: &mut Cursor) -> Result<(String, Range<usize>), ParseError> {
    if cur.dialect == Dialect::Fortran {
        return fortran_name(cur);
    }
    let src = cur.src;
    let first = cur.word().ok_or_else(|| {
        cur.err(
            cur.pos,
            id::PARSE_ERROR,
            "expected an OpenACC directive name".into(),
        )
    })?;
    let mut name = src[first.clone()].to_string();
    let mut name_span = first.clone();
    match name.as_str() {
        "enter" | "exit" => match cur.word() {
            Some(w) if &src[w.clone()] == "data" => {
                name.push_str(" data");
                name_span.end = w.end;
            }
            _ => {
                return Err(cur.err(
                    first.start,
                    id::PARSE_ERROR,
                    format!("expected 'data' after '{name}'"),
                ));
            }
        },
        "parallel" | "serial" | "kernels" if cur.peek_word() == Some("loop") => {
            let w = cur.word().unwrap_or(first.clone());
            name.push_str(" loop");
            name_span.end = w.end;
        }
        _ => {}
    }
    Ok((name, name_span))
}

/// Fortran directive names of several words. Blanks between the words are optional in
/// Fortran (gfortran and flang read `!$acc enterdata`, `!$acc endparallel`); an `end`
/// directive names the construct it ends (`end loop` is redundant: gfortran accepts it
/// right after the loop). Longest first: the first that matches wins.
const FORTRAN_NAMES: [&[&str]; 15] = [
    &["end", "parallel", "loop"],
    &["end", "kernels", "loop"],
    &["end", "serial", "loop"],
    &["end", "host_data"],
    &["end", "parallel"],
    &["end", "kernels"],
    &["end", "serial"],
    &["end", "atomic"],
    &["end", "data"],
    &["end", "loop"],
    &["parallel", "loop"],
    &["kernels", "loop"],
    &["serial", "loop"],
    &["enter", "data"],
    &["exit", "data"],
];

/// A Fortran directive name at the cursor, in lower case: one of [`FORTRAN_NAMES`] with
/// or without blanks between its words, or one word.
fn fortran_name(cur: &mut Cursor) -> Result<(String, Range<usize>), ParseError> {
    cur.skip();
    let start = cur.pos;
    let b = cur.b;
    let name_char = |k: usize| k < cur.end && (b[k].is_ascii_alphanumeric() || b[k] == b'_');
    let first = b.get(start).map(u8::to_ascii_lowercase);
    for words in FORTRAN_NAMES {
        if first != words[0].bytes().next() {
            continue;
        }
        let mut k = start;
        let matched = words.iter().enumerate().all(|(n, word)| {
            if n > 0 {
                while k < cur.end && (b[k] == b' ' || b[k] == b'\t') {
                    k += 1;
                }
            }
            let ok = b.get(k..k + word.len()).is_some_and(|w| {
                k + word.len() <= cur.end && w.eq_ignore_ascii_case(word.as_bytes())
            });
            k += word.len();
            ok
        });
        if matched && !name_char(k) {
            cur.pos = k;
            return Ok((words.join(" "), start..k));
        }
    }
    let w = cur.word().ok_or_else(|| {
        cur.err(
            cur.pos,
            id::PARSE_ERROR,
            "expected an OpenACC directive name".into(),
        )
    })?;
    let name = cur.src[w.clone()].to_ascii_lowercase();
    match name.as_str() {
        "enter" | "exit" => Err(cur.err(
            w.start,
            id::PARSE_ERROR,
            format!("expected 'data' after '{name}'"),
        )),
        "end" => Err(cur.err(
            w.start,
            id::PARSE_ERROR,
            "'end' must name the construct it ends: parallel, kernels, serial, their 'loop' \
             forms, loop, data, host_data or atomic"
                .into(),
        )),
        _ => Ok((name, w)),
    }
}

/// The name of the directive in `src[range]`, when its words name a known directive, even
/// if the rest does not parse (an unparsed construct still takes its statement).
pub fn directive_name(src: &str, range: Range<usize>, t: &Tables) -> Option<String> {
    directive_name_in(src, range, t, Dialect::C)
}

/// As [`directive_name`], for directive text in `dialect` (Fortran: also the `end`
/// directives, named for the construct they end).
pub fn directive_name_in(
    src: &str,
    range: Range<usize>,
    t: &Tables,
    dialect: Dialect,
) -> Option<String> {
    let mut cur = Cursor::new(src, range, dialect);
    let (name, _) = read_name(&mut cur).ok()?;
    let construct = name.strip_prefix("end ").unwrap_or(&name);
    t.directive(construct).map(|_| name)
}

/// Parse the directive text `src[range]` (what follows `acc`). Offsets stay absolute.
#[cfg(test)]
pub fn parse_directive(
    src: &str,
    range: Range<usize>,
    t: &Tables,
) -> Result<Directive, ParseError> {
    parse_directive_all(src, range, t).map_err(|mut e| e.remove(0))
}

/// The directive text `src[range]` parsed, with every problem the checks after the grammar
/// find (in source order; never empty).
pub fn parse_directive_all(
    src: &str,
    range: Range<usize>,
    t: &Tables,
) -> Result<Directive, Vec<ParseError>> {
    parse_directive_all_in(src, range, t, Dialect::C)
}

/// As [`parse_directive`], for directive text in `dialect`.
pub fn parse_directive_in(
    src: &str,
    range: Range<usize>,
    t: &Tables,
    dialect: Dialect,
) -> Result<Directive, ParseError> {
    parse_directive_all_in(src, range, t, dialect).map_err(|mut e| e.remove(0))
}

/// As [`parse_directive_all`], for directive text in `dialect`. Fortran: names are
/// case-insensitive (the IR holds them in lower case, `Clause::spelled` as written),
/// arguments are Fortran (`a(1:n)`, `t%b`, `.and.`, `/common/`), and the `end` directives
/// parse to `end <construct>` with no clauses.
pub fn parse_directive_all_in(
    src: &str,
    range: Range<usize>,
    t: &Tables,
    dialect: Dialect,
) -> Result<Directive, Vec<ParseError>> {
    let d = grammar(src, range, t, dialect).map_err(|e| vec![e])?;
    let (name, clauses) = (&d.name, &d.clauses);
    let mut errs = super::check::directive(
        src,
        name,
        d.name_span.start,
        d.arg.as_ref(),
        clauses,
        t,
        dialect,
    );
    for e in check_conflicts(clauses, dialect) {
        if !errs.iter().any(|x| x.offset == e.offset) {
            errs.push(e);
        }
    }
    if errs.is_empty() {
        super::device_type::check_sections(name, clauses).map_err(|e| vec![e])?;
        return Ok(d);
    }
    errs.sort_by_key(|e| e.offset);
    Err(errs)
}

/// The directive's grammar: its name, argument and clauses, each clause allowed there.
fn grammar(
    src: &str,
    range: Range<usize>,
    t: &Tables,
    dialect: Dialect,
) -> Result<Directive, ParseError> {
    let mut cur = Cursor::new(src, range, dialect);
    let (name, name_span) = read_name(&mut cur)?;
    if let Some(construct) = name.strip_prefix("end ") {
        return end_directive(&mut cur, &name, construct, name_span, t);
    }
    let Some(rule) = t.directive(&name) else {
        return Err(cur.err(
            name_span.start,
            id::UNKNOWN_DIRECTIVE,
            format!("unknown OpenACC directive '{name}'"),
        ));
    };
    let mut arg = None;
    if rule.arg != ArgPresence::None {
        if cur.peek() == Some(b'(') {
            let inner = cur.parens()?;
            let mods = if name == "wait" {
                vec!["devnum".to_string(), "queues".to_string()]
            } else {
                vec![]
            };
            arg = Some(split_args(src, inner, &mods, dialect)?);
        } else if rule.arg == ArgPresence::Required {
            return Err(cur.err(
                cur.pos,
                id::PARSE_ERROR,
                format!("'{name}' needs a parenthesized argument"),
            ));
        }
    }
    let mut clauses: Vec<Clause> = Vec::new();
    // A comma separates two clauses; one before the first clause is accepted too (OpenACC
    // compilers differ; GCC rejects it). Two in a row or one at the end leave a clause out.
    let mut comma: Option<usize> = None;
    loop {
        match cur.peek() {
            None => {
                if let Some(at) = comma {
                    return Err(cur.err(at, id::PARSE_ERROR, "expected a clause after ','".into()));
                }
                break;
            }
            Some(b',') => {
                if comma.is_some() {
                    return Err(cur.err(
                        cur.pos,
                        id::PARSE_ERROR,
                        "expected a clause before ','".into(),
                    ));
                }
                comma = Some(cur.pos);
                cur.pos += 1;
                continue;
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {}
            Some(_) => {
                let ch = src[cur.pos..].chars().next().unwrap_or(' ');
                // A control character (a NUL byte) shown as an escape: `'\0'`.
                let shown: String = if ch.is_control() {
                    ch.escape_debug().collect()
                } else {
                    ch.to_string()
                };
                return Err(cur.err(
                    cur.pos,
                    id::PARSE_ERROR,
                    format!("unexpected '{shown}' in directive"),
                ));
            }
        }
        comma = None;
        let w = cur.word().unwrap_or(cur.pos..cur.pos);
        let spelled = &src[w.clone()];
        let crule = match dialect {
            Dialect::C => t.clause(spelled),
            Dialect::Fortran => t.clause(&spelled.to_ascii_lowercase()),
        };
        let Some(crule) = crule else {
            return Err(cur.err(
                w.start,
                id::UNKNOWN_CLAUSE,
                format!("unknown clause '{spelled}' on 'acc {name}'"),
            ));
        };
        if !t.allowed(crule, &name) {
            return Err(cur.err(
                w.start,
                id::CLAUSE_NOT_ALLOWED,
                format!("clause '{spelled}' is not allowed on 'acc {name}'"),
            ));
        }
        let mut args = None;
        let mut span = w.clone();
        if cur.peek() == Some(b'(') {
            if crule.args == ArgPresence::None {
                return Err(cur.err(
                    cur.pos,
                    id::PARSE_ERROR,
                    format!("clause '{spelled}' takes no argument"),
                ));
            }
            let inner = cur.parens()?;
            span.end = inner.end + 1;
            args = Some(split_args(src, inner, &crule.modifiers, dialect)?);
        } else if crule.args == ArgPresence::Required {
            return Err(cur.err(
                w.end,
                id::PARSE_ERROR,
                format!("clause '{spelled}' needs an argument"),
            ));
        }
        clauses.push(Clause {
            name: crule.name.clone(),
            spelled: spelled.to_string(),
            span,
            args,
        });
    }
    if rule.kind == DirectiveKind::Atomic
        && clauses
            .iter()
            .filter(|c| ATOMIC_KINDS.contains(&c.name.as_str()))
            .count()
            > 1
    {
        return Err(cur.err(
            name_span.start,
            id::PARSE_ERROR,
            "more than one atomic kind".into(),
        ));
    }
    let end = clauses
        .last()
        .map(|c| c.span.end)
        .or(arg.as_ref().map(|a| a.span.end + 1))
        .unwrap_or(name_span.end);
    // Kept for the whole run, one per directive: no spare capacity.
    clauses.shrink_to_fit();
    Ok(Directive {
        name,
        name_span,
        arg,
        clauses,
        comments: cur.comments,
        end,
        inactive: Vec::new(),
    })
}

/// A Fortran `end` directive: it ends a construct of the tables and takes no clauses.
fn end_directive(
    cur: &mut Cursor,
    name: &str,
    construct: &str,
    name_span: Range<usize>,
    t: &Tables,
) -> Result<Directive, ParseError> {
    if t.directive(construct).is_none() {
        return Err(cur.err(
            name_span.start,
            id::UNKNOWN_DIRECTIVE,
            format!("unknown OpenACC directive '{name}'"),
        ));
    }
    if cur.peek().is_some() {
        return Err(cur.err(
            cur.pos,
            id::PARSE_ERROR,
            format!("'{name}' takes no clauses"),
        ));
    }
    Ok(Directive {
        name: name.to_string(),
        end: name_span.end,
        name_span,
        arg: None,
        clauses: Vec::new(),
        comments: Vec::new(),
        inactive: Vec::new(),
    })
}

/// `seq` with a parallelism clause, and a variable in more than one of
/// private/firstprivate/reduction (the seeds: contradictory initialization).
fn check_conflicts(clauses: &[Clause], dialect: Dialect) -> Vec<ParseError> {
    let mut errs: Vec<ParseError> = Vec::new();
    let mut err = |c: &Clause, rule: RuleId, message: String| {
        // One problem per clause.
        if !errs.iter().any(|e| e.offset == c.span.start) {
            errs.push(ParseError {
                offset: c.span.start,
                message,
                rule,
            });
        }
    };
    let mut section: Vec<&Clause> = Vec::new();
    for c in clauses {
        if c.name == "device_type" {
            section.clear();
            continue;
        }
        let levels = ["gang", "worker", "vector", "independent", "auto"];
        let clash = |a: &str, b: &Clause| {
            (a == "seq" && levels.contains(&b.name.as_str()))
                || (b.name == "seq" && levels.contains(&a))
        };
        // `auto` asks the compiler to choose what `gang`, `worker`, `vector` state (GCC
        // rejects the pair; the translation could honour only one of them).
        let explicit = ["gang", "worker", "vector", "independent"];
        if let Some(p) = section.iter().find(|p| {
            clash(&c.name, p)
                || (c.name == "auto" && explicit.contains(&p.name.as_str()))
                || (p.name == "auto" && explicit.contains(&c.name.as_str()))
        }) {
            err(
                c,
                id::CONFLICTING_CLAUSES,
                format!("'{}' conflicts with '{}'", c.spelled, p.spelled),
            );
        }
        section.push(c);
    }
    // OpenACC leaves this open, but GCC rejects it and OpenMP compilers reject a variable in
    // two map clauses: the user must say which data clause is meant.
    let data = super::DATA_CLAUSES;
    // Maps, not lists: a clause may have hundreds of thousands of items.
    let mut mapped: crate::hash::HashMap<String, &Clause> = Default::default();
    for c in clauses.iter().filter(|c| data.contains(&c.name.as_str())) {
        for item in c.items() {
            let var = section_base(&item.text, dialect);
            if let Some(other) = mapped.get(&var) {
                let (what, rule) = match other.name == c.name {
                    true => ("twice in", id::DUPLICATE_CLAUSE),
                    false => ("in both", id::CONFLICTING_CLAUSES),
                };
                let clauses = match other.name == c.name {
                    true => format!("'{}'", c.spelled),
                    false => format!("'{}' and '{}'", other.spelled, c.spelled),
                };
                err(
                    c,
                    rule,
                    format!("'{var}' appears {what} {clauses}; give each variable one data clause"),
                );
                continue;
            }
            mapped.insert(var, c);
        }
    }
    let sharing = ["private", "firstprivate", "reduction"];
    // The first clause kind each variable is in: any other kind conflicts with it.
    let mut seen: crate::hash::HashMap<std::borrow::Cow<str>, &str> = Default::default();
    for c in clauses
        .iter()
        .filter(|c| sharing.contains(&c.name.as_str()))
    {
        for item in c.items() {
            // Fortran names are case-insensitive.
            let key = match dialect {
                Dialect::C => std::borrow::Cow::Borrowed(item.text.as_str()),
                Dialect::Fortran => std::borrow::Cow::Owned(item.text.to_ascii_lowercase()),
            };
            if let Some(other) = seen.get(&key).filter(|k| **k != c.name) {
                err(
                    c,
                    id::CONFLICTING_CLAUSES,
                    format!("'{}' is in both '{other}' and '{}'", item.text, c.spelled),
                );
                continue;
            }
            seen.entry(key).or_insert(&c.name);
        }
    }
    errs
}

/// The variable an item names: `a[0:n]` → `a`, `s.p[1:2]` → `s.p`, `m[k].b[0:n]` →
/// `m[k].b` (trailing subscripts removed), spaces removed. Fortran: `a(1:n)` → `a`,
/// `t%b(:)` → `t%b`, in lower case.
fn section_base(item: &str, dialect: Dialect) -> String {
    let mut t: String = item.chars().filter(|c| !c.is_whitespace()).collect();
    let (open_c, close_c) = match dialect {
        Dialect::C => ('[', ']'),
        Dialect::Fortran => {
            t.make_ascii_lowercase();
            ('(', ')')
        }
    };
    while t.ends_with(close_c) {
        let mut depth = 0i32;
        let open = t.char_indices().rev().find_map(|(k, c)| {
            if c == close_c {
                depth += 1;
            } else if c == open_c {
                depth -= 1;
            }
            (depth == 0).then_some(k)
        });
        match open {
            Some(k) if k > 0 => t.truncate(k),
            _ => break,
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Directive {
        parse_directive(s, 0..s.len(), &Tables::builtin()).unwrap()
    }

    #[test]
    fn combined_with_clauses_and_spans() {
        let s = "parallel loop copy(a[0:n], b) reduction(+:s) gang";
        let d = p(s);
        assert_eq!(d.name, "parallel loop");
        assert_eq!(d.clauses.len(), 3);
        let copy = &d.clauses[0];
        assert_eq!(&s[copy.span.clone()], "copy(a[0:n], b)");
        let items: Vec<_> = copy.items().map(|i| &s[i.span.clone()]).collect();
        assert_eq!(items, ["a[0:n]", "b"]);
        assert_eq!(d.clauses[1].modifier(), Some("+"));
        assert_eq!(d.end, s.len());
    }

    #[test]
    fn wait_devnum_separates_the_device_from_the_queues() {
        for s in ["wait(devnum: 0 : queues: q, 2)", "wait(devnum:d(1):q,2)"] {
            let d = p(s);
            let a = d.arg.as_ref().unwrap();
            assert_eq!(a.modifier.as_ref().unwrap().text, "devnum");
            let items: Vec<_> = a.items.iter().map(|i| &s[i.span.clone()]).collect();
            assert_eq!(items, ["q", "2"], "{s}");
        }
        let s = "parallel wait(devnum: 1: queues: 3)";
        let items: Vec<_> = p(s).clauses[0].items().map(|i| i.text.clone()).collect();
        assert_eq!(items, ["3"]);
        for bad in [
            "wait(devnum: 0)",
            "wait(devnum: : 1)",
            "wait(devnum: 0 : queues: )",
        ] {
            assert!(
                parse_directive(bad, 0..bad.len(), &Tables::builtin()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn continuations_comments_and_modifiers() {
        let s = "data copyin(readonly: x) \\\n  /* keep */ pcreate(y[1:2]) // tail";
        let d = p(s);
        assert_eq!(d.clauses[0].modifier(), Some("readonly"));
        assert_eq!(d.clauses[1].name, "create");
        assert_eq!(d.comments.len(), 2);
    }

    #[test]
    fn items_without_continuations_and_comments_list_verbatim() {
        let s = "parallel present(  \\\n   a[0:n] /* x */,b \\\n ) copyin(/* c */ c)";
        let d = p(s);
        let items: Vec<_> = d
            .clauses
            .iter()
            .flat_map(|c| c.items())
            .map(|i| i.text.as_str())
            .collect();
        assert_eq!(items, ["a[0:n]", "b", "c"]);
        assert_eq!(d.clauses[0].list_text(), "  \\\n   a[0:n] /* x */,b \\\n ");
        assert_eq!(d.clauses[1].list_text(), "/* c */ c");
    }

    #[test]
    fn errors_are_positioned() {
        let s = "parallel copy(a) bogus(1)";
        let e = parse_directive(s, 0..s.len(), &Tables::builtin()).unwrap_err();
        assert_eq!((e.offset, e.rule), (17, id::UNKNOWN_CLAUSE));
        let s = "loop num_gangs(2)";
        assert_eq!(
            parse_directive(s, 0..s.len(), &Tables::builtin())
                .unwrap_err()
                .rule,
            id::CLAUSE_NOT_ALLOWED
        );
        for (bad, rule) in [
            ("loop seq gang", id::CONFLICTING_CLAUSES),
            ("loop gang auto", id::CONFLICTING_CLAUSES),
            ("loop auto vector", id::CONFLICTING_CLAUSES),
            ("parallel if(a) if(b)", id::DUPLICATE_CLAUSE),
            (
                "parallel private(x) firstprivate(x)",
                id::CONFLICTING_CLAUSES,
            ),
            (
                "parallel copyin(a[0:n]) present(a[0:n])",
                id::CONFLICTING_CLAUSES,
            ),
            ("data copy(a[0:n], b, a [n:n])", id::DUPLICATE_CLAUSE),
            ("data copy(a[0:n][0:m], a[n:1])", id::DUPLICATE_CLAUSE),
            (
                "enter data copyin(s.p) create(s . p[0:4])",
                id::CONFLICTING_CLAUSES,
            ),
        ] {
            assert_eq!(
                parse_directive(bad, 0..bad.len(), &Tables::builtin())
                    .unwrap_err()
                    .rule,
                rule,
                "{bad}"
            );
        }
        for ok in [
            "parallel num_gangs(1) device_type(nvidia) num_gangs(4)",
            "parallel loop copy(m[k].b[0:n], m[k].c[5:n])",
        ] {
            assert!(
                parse_directive(ok, 0..ok.len(), &Tables::builtin()).is_ok(),
                "{ok}"
            );
        }
        for bad in [
            "",
            "declare copyin(#pragma acc x)",
            "parallel copy(a",
            "enter",
            "loop seq(1)",
            "parallel reduction(a)",
            "loop reduction(%:x)",
            "parallel ;",
        ] {
            assert!(
                parse_directive(bad, 0..bad.len(), &Tables::builtin()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn directive_arguments() {
        let d = p("wait(1, 2) async(3)");
        assert_eq!(d.arg.unwrap().items.len(), 2);
        let d = p("routine(f) seq");
        assert_eq!(d.arg.unwrap().items[0].text, "f");
        let d = p("atomic capture");
        assert!(d.has("capture"));
        let d = p("loop gang(num:4, static:*) vector(length:32)");
        assert_eq!(d.clauses[0].items().count(), 2);
    }
}

#[cfg(test)]
mod fortran_tests {
    use super::*;

    fn f(s: &str) -> Result<Directive, Vec<ParseError>> {
        parse_directive_all_in(s, 0..s.len(), &Tables::builtin(), Dialect::Fortran)
    }

    fn ok(s: &str) -> Directive {
        f(s).unwrap_or_else(|e| panic!("{s}: {e:?}"))
    }

    fn rule(s: &str) -> &'static str {
        f(s).expect_err(s)[0].rule.as_str()
    }

    #[test]
    fn names_are_case_insensitive_and_canonical() {
        let s = " PARALLEL LOOP Copy(A(1:N), b(:,1:n)) Reduction(MAX:x) Gang";
        let d = ok(s);
        assert_eq!(d.name, "parallel loop");
        assert_eq!(&s[d.name_span.clone()], "PARALLEL LOOP");
        let names: Vec<_> = d
            .clauses
            .iter()
            .map(|c| (c.name.as_str(), c.spelled.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("copy", "Copy"),
                ("reduction", "Reduction"),
                ("gang", "Gang")
            ]
        );
        let items: Vec<_> = d.clauses[0].items().map(|i| &s[i.span.clone()]).collect();
        assert_eq!(items, ["A(1:N)", "b(:,1:n)"]);
        assert_eq!(d.clauses[1].modifier(), Some("MAX"));
        assert_eq!(d.end, s.len());
    }

    #[test]
    fn compound_names_with_or_without_blanks() {
        for (s, name) in [
            ("parallelloop", "parallel loop"),
            ("kernels   loop", "kernels loop"),
            ("SerialLoop", "serial loop"),
            ("enterdata copyin(a)", "enter data"),
            ("exit  data delete(a)", "exit data"),
            ("end parallel", "end parallel"),
            ("endparallel", "end parallel"),
            ("END PARALLEL LOOP", "end parallel loop"),
            ("end kernels loop", "end kernels loop"),
            ("endserial loop", "end serial loop"),
            ("end data", "end data"),
            ("end host_data", "end host_data"),
            ("endatomic", "end atomic"),
            ("end kernels", "end kernels"),
            ("end serial", "end serial"),
            ("loop", "loop"),
            ("host_data use_device(p)", "host_data"),
        ] {
            assert_eq!(ok(s).name, name, "{s}");
        }
        let t = Tables::builtin();
        let name = |s: &str| directive_name_in(s, 0..s.len(), &t, Dialect::Fortran);
        assert_eq!(name("end parallel copy(("), Some("end parallel".into()));
        assert_eq!(name("parallel copy(("), Some("parallel".into()));
        assert_eq!(name("end loop"), Some("end loop".into()));
        assert_eq!(name("end update"), None);
        assert_eq!(name("bogus"), None);
    }

    #[test]
    fn end_directives_take_nothing_and_name_a_construct() {
        assert_eq!(rule("end parallel copy(a)"), "parse-error");
        assert_eq!(rule("end"), "parse-error");
        assert_eq!(ok("end loop").name, "end loop");
        assert_eq!(rule("end foo"), "parse-error");
        assert_eq!(rule("end parallelx"), "parse-error");
        let d = ok("  end   parallel  ");
        assert!(d.clauses.is_empty() && d.arg.is_none());
    }

    #[test]
    fn fortran_arguments() {
        for s in [
            "parallel if(n > 100 .and. .not. flag)",
            "parallel if(x .eq. 1 .or. y /= 2)",
            "data copy(t%a%b(1:n), t%c) copyin(s(i)%v(:))",
            "parallel loop present(a) private(tmp, j)",
            "loop reduction(.and.:ok) reduction(iand:m) reduction(.NEQV.:p)",
            "loop reduction(+:s) reduction(*:p) reduction(ieor:q) reduction(-:r)",
            "loop collapse(2) gang(num:4, static:*) vector(length:128)",
            "routine(saxpy) seq",
            "routine vector",
            "wait(1, q) async(2)",
            "wait",
            "cache(a(i-1:i+1), b(j))",
            "declare create(x, /blk/) copyin(y)",
            "declare device_resident(z)",
            "update host(a(1:n)) if_present",
            "enter data copyin(a(-5:5))",
            "parallel num_gangs(n/2) vector_length(128_8)",
            "parallel default(NONE)",
            "parallel copyin(s(1:len('x''y')))",
            "kernels loop independent",
            "atomic update",
            "atomic capture",
            "host_data use_device(a, b)",
            "parallel copy(a(:,:,k))",
            "set device_num(0) device_type(nvidia)",
            "init device_type(host)",
        ] {
            ok(s);
        }
        for (s, want) in [
            (
                "parallel copy(a(1:n)) copyin(A(2:3))",
                "conflicting-clauses",
            ),
            ("parallel copy(x, X)", "duplicate-clause"),
            ("parallel private(i) firstprivate(I)", "conflicting-clauses"),
            ("loop reduction(.xor.:x)", "parse-error"),
            ("loop reduction(iand x)", "parse-error"),
            ("parallel if(a b)", "invalid-argument"),
            ("parallel if(a .and.)", "invalid-argument"),
            ("parallel num_gangs(1 i)", "invalid-argument"),
            ("parallel copy(t%)", "invalid-argument"),
            ("parallel copy(a:b)", "invalid-argument"),
            ("parallel private(a(1:2))", "invalid-argument"),
            ("cache(s)", "invalid-argument"),
            ("declare create(a(1:n))", "invalid-argument"),
            ("parallel default(shared)", "invalid-argument"),
            ("parallel bogus(1)", "unknown-clause"),
            ("loop num_gangs(2)", "clause-not-allowed"),
            ("routine(f, g)", "invalid-argument"),
            ("parallel copy(a", "parse-error"),
        ] {
            assert_eq!(rule(s), want, "{s}");
        }
    }

    #[test]
    fn quotes_are_doubled_not_escaped() {
        let s = "parallel if(s == 'a\\') copy(b)";
        let d = ok(s);
        assert_eq!(d.clauses.len(), 2);
        let s = "parallel if(s == 'it''s)') copy(c)";
        assert_eq!(ok(s).clauses[1].list_text(), "c");
    }

    #[test]
    fn c_text_is_read_as_before() {
        // The C reading stays: `end` is no directive, comments are comments.
        let t = Tables::builtin();
        assert!(parse_directive("end parallel", 0..12, &t).is_err());
        let s = "PARALLEL";
        assert!(parse_directive(s, 0..s.len(), &t).is_err());
        let s = "parallel copy(a) /* c */";
        assert_eq!(
            parse_directive(s, 0..s.len(), &t).unwrap().comments.len(),
            1
        );
    }

    #[test]
    fn hostile_text_does_not_panic() {
        for s in [
            "",
            "&",
            "end",
            "end end",
            "enter",
            "exitdata",
            "parallel(",
            "parallel copy(')",
            "parallel copy('",
            "é",
            "parallel copy(é)",
            "endé",
            "parallel loop loop",
            "loop reduction(:x)",
            "wait(devnum:)",
            "cache()",
            "routine()",
            "parallel if()",
            "parallel copy(/)",
            "parallel copy(//)",
            "parallel copy(/ /)",
        ] {
            let _ = f(s);
        }
    }
}
