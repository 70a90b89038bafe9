//! Fortran tokens and statements, with byte-exact spans.
//!
//! The source lines of a statement (an initial line and its continuation lines, with the
//! comment, blank, preprocessor and directive lines between them skipped) are joined as
//! compilers join them, then split at `;` into statements and cut into tokens. A token keeps
//! the file bytes it covers; one that a continuation splits (a character constant, a name
//! broken by `&` … `&` or at column 72) covers the bytes between its pieces too, and
//! [`Lexed::text`] gives it joined. Names keep their spelling: compare them with
//! [`Lexed::is`], which ignores case as Fortran does.
//!
//! Blanks separate tokens in both forms: fixed-form source that relies on blanks being
//! insignificant (`DO10I=1,N`, `GO TO` split inside a name) lexes as other tokens; the
//! compound keywords compilers accept with or without a blank (`enddo`, `go to`, `double
//! precision`, …) are read either way by the statement classifier.

use super::lines::{LineKind, Lines};
use crate::hash::HashMap;
use std::borrow::Cow;
use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokKind {
    /// A name or keyword (letters, digits, `_`, `$`).
    Name,
    /// An integer literal, with its kind (`10`, `8_i8`).
    Int,
    /// A real literal (`1.0`, `1.e-3_dp`, `2d0`, `.5`).
    Real,
    /// A character constant with its kind prefix (`'it''s'`, `"x"`, `c_char_'a'`), or a
    /// BOZ constant (`z'ff'`).
    Str,
    /// `.true.` / `.false.` (with a kind).
    Logical,
    /// An operator spelled with dots: `.and.`, `.eq.`, `.not.`, a defined operator `.op.`.
    DotOp,
    /// Symbols: `(`, `)`, `,`, `=`, `==`, `/=`, `<=`, `>=`, `=>`, `::`, `**`, `//`, `%`, …
    Punct,
}

/// One token: 8 bytes (a 32-bit offset, [`super::lines::scan`] refusing a file of 4 GiB or
/// more, and its length, kind and `split` flag in 32 bits), where a file holds about one
/// token per 4 bytes. A token of [`MAX_TOKEN`] bytes or more ends the file's translation
/// ([`crate::memory::too_long`]), as a file too long for 32-bit offsets does: it takes a
/// file past 256 MiB, 8 times the default `--max-file-size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    start: u32,
    /// Bits 0-2: the kind ([`KINDS`]); bit 3: `split`; bits 4-31: the length.
    meta: u32,
}

/// The longest token: 28 bits of length.
pub const MAX_TOKEN: usize = (1 << 28) - 1;

/// The kinds by their number in [`Token`] (`kind as u32`: the order of [`TokKind`]).
const KINDS: [TokKind; 7] = [
    TokKind::Name,
    TokKind::Int,
    TokKind::Real,
    TokKind::Str,
    TokKind::Logical,
    TokKind::DotOp,
    TokKind::Punct,
];

impl Token {
    /// `range` no longer than [`MAX_TOKEN`] (the lexer ends a file's translation first).
    pub fn new(kind: TokKind, range: Range<usize>, split: bool) -> Token {
        debug_assert!(range.len() <= MAX_TOKEN);
        Token {
            start: range.start as u32,
            meta: (range.len() as u32) << 4 | u32::from(split) << 3 | kind as u32,
        }
    }

    pub fn kind(&self) -> TokKind {
        KINDS[(self.meta & 7) as usize]
    }

    /// The token spans a continuation: its file bytes hold `&`, a line break or the
    /// label and continuation columns between its pieces (see [`Lexed::text`]).
    pub fn split(&self) -> bool {
        self.meta & 8 != 0
    }

    pub fn start(&self) -> usize {
        self.start as usize
    }

    pub fn end(&self) -> usize {
        self.start() + (self.meta >> 4) as usize
    }

    pub fn range(&self) -> Range<usize> {
        self.start()..self.end()
    }
}

/// A statement label: its value and where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub value: u32,
    pub span: Range<usize>,
}

/// One statement (after `;` splitting), in 32 bytes (a file has about one per 26 bytes):
/// token and line indices and byte offsets in 32 bits ([`super::lines::scan`] refuses a file
/// of 4 GiB or more), behind accessors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stmt {
    /// Boxed: most statements have none.
    pub label: Option<Box<Label>>,
    toks: [u32; 2],
    span: [u32; 2],
    lines: [u32; 2],
}

fn pack(r: &Range<usize>) -> [u32; 2] {
    [r.start as u32, r.end as u32]
}

impl Stmt {
    pub fn new(
        label: Option<Box<Label>>,
        toks: Range<usize>,
        span: Range<usize>,
        lines: Range<usize>,
    ) -> Stmt {
        Stmt {
            label,
            toks: pack(&toks),
            span: pack(&span),
            lines: pack(&lines),
        }
    }

    /// Its tokens in [`Lexed::tokens`] (never empty).
    pub fn toks(&self) -> Range<usize> {
        self.toks[0] as usize..self.toks[1] as usize
    }

    /// From the label (or first token) to the end of the last token.
    pub fn span(&self) -> Range<usize> {
        self.span[0] as usize..self.span[1] as usize
    }

    /// The physical lines it is written on (indices into [`Lines`]): from its first
    /// line to its last, directive and comment lines between them included.
    pub fn lines(&self) -> Range<usize> {
        self.lines[0] as usize..self.lines[1] as usize
    }
}

/// Tokens and statements of a file.
#[derive(Debug, Clone, Default)]
pub struct Lexed {
    pub tokens: Vec<Token>,
    pub stmts: Vec<Stmt>,
    /// The joined text of each split token.
    joined: HashMap<usize, String>,
}

impl Lexed {
    /// The token's text as the compiler reads it (a split token with its pieces joined).
    pub fn text<'a>(&'a self, src: &'a str, i: usize) -> Cow<'a, str> {
        let t = &self.tokens[i];
        match t.split().then(|| self.joined.get(&i)).flatten() {
            Some(s) => Cow::Borrowed(s.as_str()),
            None => Cow::Borrowed(&src[t.range()]),
        }
    }

    /// Whether token `i` exists and is `word` (ASCII case ignored).
    pub fn is(&self, src: &str, i: usize, word: &str) -> bool {
        self.tokens
            .get(i)
            .is_some_and(|_| self.text(src, i).eq_ignore_ascii_case(word))
    }

    /// Token `i` in lower case (names are case-insensitive).
    pub fn lower(&self, src: &str, i: usize) -> String {
        self.text(src, i).to_ascii_lowercase()
    }

    /// The statement holding byte `offset`, if any.
    pub fn stmt_at(&self, offset: usize) -> Option<usize> {
        let k = self.stmts.partition_point(|s| s.span().end <= offset);
        self.stmts
            .get(k)
            .filter(|s| s.span().start <= offset)
            .map(|_| k)
    }
}

/// The joined text of one group of source lines, and where each byte came from.
#[derive(Default)]
struct Joined {
    buf: Vec<u8>,
    /// (offset in `buf`, file offset) at the start of each piece, ascending.
    pieces: Vec<(usize, usize)>,
}

impl Joined {
    fn clear(&mut self) {
        self.buf.clear();
        self.pieces.clear();
    }

    fn push(&mut self, src: &[u8], r: Range<usize>) {
        if r.is_empty() {
            return;
        }
        self.pieces.push((self.buf.len(), r.start));
        self.buf.extend_from_slice(&src[r]);
    }

    /// File offset of joined byte `k` (k < len).
    fn file(&self, k: usize) -> usize {
        let p = self.pieces.partition_point(|&(j, _)| j <= k) - 1;
        let (j, f) = self.pieces[p];
        f + (k - j)
    }

    /// File range of joined range `r` (non-empty), and whether it crosses pieces.
    fn span(&self, r: Range<usize>) -> (Range<usize>, bool) {
        // One piece (no continuation): the common case, without the searches.
        if let [(0, f)] = self.pieces[..] {
            return (f + r.start..f + r.end, false);
        }
        let a = self.file(r.start);
        let b = self.file(r.end - 1) + 1;
        (a..b, b - a != r.len())
    }
}

/// Tokenize the source lines of a file (`lines` from [`super::lines::scan`]).
pub fn lex(src: &str, lines: &Lines) -> Lexed {
    let b = src.as_bytes();
    let mut out = Lexed {
        tokens: Vec::with_capacity(if b.len() > 1 << 16 { b.len() / 4 } else { 0 }),
        ..Lexed::default()
    };
    let mut j = Joined::default();
    let ls = lines;
    let mut k = 0;
    while k < ls.len() {
        if ls.get(k).kind != LineKind::Code {
            k += 1;
            continue;
        }
        // The group: line k and the continuation lines after it.
        j.clear();
        let first = k;
        let label = ls.get(k).label.clone();
        j.push(b, ls.get(k).body.clone());
        let mut last = k;
        let mut n = k + 1;
        while n < ls.len() {
            match ls.get(n).kind {
                LineKind::Code if ls.get(n).continuation => {
                    j.push(b, ls.get(n).body.clone());
                    last = n;
                }
                LineKind::Code => break,
                _ => {}
            }
            n += 1;
        }
        statements(src, &j, label, first..last + 1, &mut out, true);
        k = last + 1;
    }
    // Kept as long as the file's translation: the room left by doubling (up to half the
    // statements' 32 bytes each) is given back.
    out.tokens.shrink_to_fit();
    out.stmts.shrink_to_fit();
    out
}

fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$'
}

/// End of a character constant whose quote is at `i` (doubled quotes stay inside).
fn quoted_end(s: &[u8], i: usize) -> usize {
    let q = s[i];
    let mut k = i + 1;
    while k < s.len() {
        if s[k] == q {
            if s.get(k + 1) == Some(&q) {
                k += 2;
                continue;
            }
            return k + 1;
        }
        k += 1;
    }
    s.len()
}

/// The dot operator or logical constant at `i` (`.and.`, `.true._k`): its end.
fn dot_word(s: &[u8], i: usize) -> Option<usize> {
    let n = s[i + 1..]
        .iter()
        .take_while(|c| c.is_ascii_alphabetic())
        .count();
    (n > 0 && s.get(i + 1 + n) == Some(&b'.')).then_some(i + n + 2)
}

/// Length of a kind suffix `_k` at `i` (`_8`, `_dp`), or 0.
fn kind_suffix(s: &[u8], i: usize) -> usize {
    if s.get(i) != Some(&b'_') {
        return 0;
    }
    let n = s[i + 1..].iter().take_while(|&&c| is_name_char(c)).count();
    if n > 0 { n + 1 } else { 0 }
}

/// A numeric literal at `i` (a digit, or `.` then a digit): its end and kind.
fn number(s: &[u8], i: usize) -> (usize, TokKind) {
    let digits = |k: usize| s[k..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut k = i + digits(i);
    let mut kind = TokKind::Int;
    if s.get(k) == Some(&b'.') && dot_word(s, k).is_none_or(|_| exponent_at(s, k + 1)) {
        // `1.5`, `1.`, `1.e5` (but `1.eq.x` is `1` `.eq.` `x`).
        k += 1 + digits(k + 1);
        kind = TokKind::Real;
    }
    if exponent_at(s, k) {
        k += 1;
        if matches!(s.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        k += digits(k);
        kind = TokKind::Real;
    }
    (k + kind_suffix(s, k), kind)
}

/// An exponent letter followed by a (signed) digit at `i`.
fn exponent_at(s: &[u8], i: usize) -> bool {
    if !matches!(s.get(i), Some(b'e' | b'E' | b'd' | b'D' | b'q' | b'Q')) {
        return false;
    }
    let k = if matches!(s.get(i + 1), Some(b'+' | b'-')) {
        i + 2
    } else {
        i + 1
    };
    s.get(k).is_some_and(u8::is_ascii_digit)
}

/// Symbols of two characters the lexer keeps together.
#[cfg(test)]
const PAIRS: [&[u8]; 9] = [
    b"**", b"//", b"==", b"/=", b"<=", b">=", b"=>", b"::", b"->",
];

/// Whether `a` and `b` are one of the symbols of two characters (`PAIRS`), matched as
/// bytes: every punctuation token is tested.
fn is_pair(a: u8, b: u8) -> bool {
    matches!(
        (a, b),
        (b'*', b'*')
            | (b'/', b'/')
            | (b'=', b'=')
            | (b'/', b'=')
            | (b'<', b'=')
            | (b'>', b'=')
            | (b'=', b'>')
            | (b':', b':')
            | (b'-', b'>')
    )
}

/// The tokens of `src[range]`, read as one piece of Fortran text (a clause argument): no
/// labels, `;` dropped. A text too long for 32-bit offsets ends the file's translation, as
/// [`super::lines::scan`] does.
pub fn lex_text(src: &str, range: Range<usize>) -> Vec<Token> {
    if src.len() > super::lines::MAX_LEN {
        crate::memory::too_long();
    }
    let mut j = Joined::default();
    j.push(src.as_bytes(), range);
    let mut out = Lexed::default();
    statements(src, &j, None, 0..0, &mut out, false);
    out.tokens
}

/// Cut the joined text into statements and tokens (`labels`: a statement's leading
/// integer is its label).
fn statements(
    src: &str,
    j: &Joined,
    fixed_label: Option<Range<usize>>,
    lines: Range<usize>,
    out: &mut Lexed,
    labels: bool,
) {
    let s = &j.buf[..];
    let mut i = 0;
    let mut stmt_start = out.tokens.len();
    let mut label = fixed_label.map(|r| Label {
        value: src[r.clone()].trim().parse().unwrap_or(0),
        span: r,
    });
    let finish = |out: &mut Lexed, from: usize, label: &mut Option<Label>| {
        let label = label.take();
        let Some(last) = out.tokens[from..].last() else {
            return;
        };
        let start = label
            .as_ref()
            .map_or(out.tokens[from].start(), |l| l.span.start);
        let span = start..last.end();
        out.stmts.push(Stmt::new(
            label.map(Box::new),
            from..out.tokens.len(),
            span,
            lines.clone(),
        ));
    };
    while i < s.len() {
        let c = s[i];
        if c == b' ' || c == b'\t' || c == b'\x0c' {
            i += 1;
            continue;
        }
        if c == b';' {
            finish(out, stmt_start, &mut label);
            stmt_start = out.tokens.len();
            i += 1;
            continue;
        }
        let start = i;
        let kind;
        if c.is_ascii_alphabetic() || c == b'_' {
            i += s[i..].iter().take_while(|&&c| is_name_char(c)).count();
            let quote = matches!(s.get(i), Some(b'\'' | b'"'));
            let word = &s[start..i];
            let boz = word.len() == 1 && matches!(word[0] | 0x20, b'b' | b'o' | b'z' | b'x');
            if quote && (boz || word.ends_with(b"_")) {
                i = quoted_end(s, i);
                kind = TokKind::Str;
            } else {
                kind = TokKind::Name;
            }
        } else if c.is_ascii_digit() {
            let (e, k) = number(s, i);
            // `4_'abc'`: a character constant with an integer kind.
            if s.get(e) == Some(&b'_') && matches!(s.get(e + 1), Some(b'\'' | b'"')) {
                i = quoted_end(s, e + 1);
                kind = TokKind::Str;
            } else {
                i = e;
                kind = k;
            }
        } else if c == b'.' && s.get(i + 1).is_some_and(u8::is_ascii_digit) {
            let (e, _) = number(s, i);
            i = e;
            kind = TokKind::Real;
        } else if c == b'.'
            && let Some(e) = dot_word(s, i)
        {
            let w = s[i + 1..e - 1].to_ascii_lowercase();
            if w == b"true" || w == b"false" {
                i = e + kind_suffix(s, e);
                kind = TokKind::Logical;
            } else {
                i = e;
                kind = TokKind::DotOp;
            }
        } else if c == b'\'' || c == b'"' {
            i = quoted_end(s, i);
            kind = TokKind::Str;
        } else {
            let pair = s.get(i + 1).is_some_and(|&d| is_pair(c, d));
            // Whole characters: spans stay on UTF-8 boundaries.
            let len = if pair {
                2
            } else {
                match c {
                    0xF0..=0xFF => 4,
                    0xE0..=0xEF => 3,
                    0xC0..=0xDF => 2,
                    _ => 1,
                }
            };
            i = (i + len).min(s.len());
            kind = TokKind::Punct;
        }
        let (span, split) = j.span(start..i);
        let index = out.tokens.len();
        // A statement's first token that is an unsigned integer is its label (free form).
        if labels
            && kind == TokKind::Int
            && index == stmt_start
            && label.is_none()
            && s[start..i].iter().all(u8::is_ascii_digit)
            && !split
        {
            label = Some(Label {
                value: std::str::from_utf8(&s[start..i])
                    .ok()
                    .and_then(|d| d.parse().ok())
                    .unwrap_or(0),
                span,
            });
            continue;
        }
        if split {
            out.joined
                .insert(index, String::from_utf8_lossy(&s[start..i]).into_owned());
        }
        if span.len() > MAX_TOKEN {
            crate::memory::too_long();
        }
        out.tokens.push(Token::new(kind, span, split));
    }
    finish(out, stmt_start, &mut label);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fortran::form::{Form, SourceKind};
    use crate::fortran::lines::scan;

    fn lexed(src: &str, form: Form) -> Lexed {
        lex(src, &scan(src, SourceKind { form, cpp: false }))
    }

    /// One per statement: 56 bytes with ranges of `usize`.
    #[test]
    fn a_statement_is_32_bytes() {
        assert_eq!(std::mem::size_of::<Stmt>(), 32);
        let s = Stmt::new(None, 3..9, 40..95, 2..5);
        assert_eq!((s.toks(), s.span(), s.lines()), (3..9, 40..95, 2..5));
    }

    /// A token keeps its kind, `split` flag and range in 8 bytes, up to [`MAX_TOKEN`] long.
    #[test]
    fn tokens_pack_in_8_bytes() {
        assert_eq!(std::mem::size_of::<Token>(), 8);
        for (i, &kind) in KINDS.iter().enumerate() {
            assert_eq!(kind as usize, i);
            for split in [false, true] {
                for r in [
                    0..0,
                    3..4,
                    7..7 + MAX_TOKEN,
                    u32::MAX as usize - 9..u32::MAX as usize,
                ] {
                    let t = Token::new(kind, r.clone(), split);
                    assert_eq!((t.kind(), t.split(), t.range()), (kind, split, r));
                }
            }
        }
        let l = lexed("x = 'a&\n&b' // y\n", Form::Free);
        let t: Vec<_> = (l.tokens.iter())
            .map(|t| (t.kind(), t.split(), t.range()))
            .collect();
        assert_eq!(
            t,
            [
                (TokKind::Name, false, 0..1),
                (TokKind::Punct, false, 2..3),
                (TokKind::Str, true, 4..11),
                (TokKind::Punct, false, 12..14),
                (TokKind::Name, false, 15..16),
            ]
        );
    }

    /// What the front end keeps for the whole translation holds no room left by doubling:
    /// 32 bytes a statement, 88 a loop, on a large file.
    #[test]
    fn kept_vectors_hold_no_spare_room() {
        let body = "  do i = 1, n\n    a(i) = a(i) + 1\n  end do\n".repeat(1000);
        let src = format!("subroutine f(n, a)\n  integer :: n, i\n  real :: a(n)\n{body}end\n");
        let kind = SourceKind {
            form: Form::Free,
            cpp: false,
        };
        let f = crate::fortran::Front::new(&src, kind, |_| Default::default());
        assert_eq!(f.lexed.stmts.capacity(), f.lexed.stmts.len());
        assert_eq!(f.lexed.tokens.capacity(), f.lexed.tokens.len());
        assert_eq!(f.structure.loops.len(), 1000);
        assert_eq!(f.structure.loops.capacity(), f.structure.loops.len());
    }

    /// `Joined::span` as it was, by two searches of the pieces whatever their number.
    fn span_searched(j: &Joined, r: Range<usize>) -> (Range<usize>, bool) {
        let a = j.file(r.start);
        let b = j.file(r.end - 1) + 1;
        (a..b, b - a != r.len())
    }

    #[test]
    fn pairs_match_the_list() {
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                assert_eq!(is_pair(a, b), PAIRS.contains(&&[a, b][..]), "{a} {b}");
            }
        }
    }

    #[test]
    fn one_piece_spans_match_the_searches() {
        let src = b"  x = 1 ! c\r\n     &  y\n  'a!b' // \"c\"";
        // Pieces as (start, end).
        let shapes: [&[(usize, usize)]; 5] = [
            &[(0, 0), (2, 11)],
            &[(5, 9)],
            &[(0, src.len())],
            &[(2, 7), (17, 20)],
            &[(1, 4), (6, 6), (9, 15), (20, 24)],
        ];
        for pieces in shapes {
            let mut j = Joined::default();
            for &(a, b) in pieces {
                j.push(src, a..b);
            }
            for a in 0..j.buf.len() {
                for b in a + 1..=j.buf.len() {
                    assert_eq!(j.span(a..b), span_searched(&j, a..b), "{pieces:?} {a}..{b}");
                }
            }
        }
    }

    /// Each statement's tokens as the compiler reads them.
    fn words(src: &str, form: Form) -> Vec<Vec<String>> {
        let l = lexed(src, form);
        l.stmts
            .iter()
            .map(|s| s.toks().map(|i| l.text(src, i).into_owned()).collect())
            .collect()
    }

    #[test]
    fn tokens_of_free_form_statements() {
        let src =
            "x(1:n) = a%b**2 .and. .not. y .eqv. .true._lk; if (i.eq.1) z = 1.e-3_dp + 2d0 + .5\n";
        assert_eq!(
            words(src, Form::Free),
            [
                vec![
                    "x",
                    "(",
                    "1",
                    ":",
                    "n",
                    ")",
                    "=",
                    "a",
                    "%",
                    "b",
                    "**",
                    "2",
                    ".and.",
                    ".not.",
                    "y",
                    ".eqv.",
                    ".true._lk"
                ],
                vec![
                    "if", "(", "i", ".eq.", "1", ")", "z", "=", "1.e-3_dp", "+", "2d0", "+", ".5"
                ]
            ]
        );
        let l = lexed(src, Form::Free);
        let kinds: Vec<_> = l.tokens.iter().map(|t| t.kind()).collect();
        assert_eq!(kinds[16], TokKind::Logical);
        assert_eq!(kinds[12], TokKind::DotOp);
        assert_eq!(l.stmts[1].span().start, src.find("if").unwrap());
    }

    #[test]
    fn character_constants() {
        let src = "s = 'it''s' // \"a\"\"b\" // c_char_'x' // 4_'y' // z'ff' ! 'no\n";
        assert_eq!(
            words(src, Form::Free)[0],
            [
                "s",
                "=",
                "'it''s'",
                "//",
                "\"a\"\"b\"",
                "//",
                "c_char_'x'",
                "//",
                "4_'y'",
                "//",
                "z'ff'"
            ]
        );
    }

    #[test]
    fn labels() {
        let src = "10 continue\n  20 x = 1; 30 y = 2\n";
        let l = lexed(src, Form::Free);
        let labels: Vec<_> = l
            .stmts
            .iter()
            .map(|s| s.label.as_ref().map(|l| l.value))
            .collect();
        assert_eq!(labels, [Some(10), Some(20), Some(30)]);
        assert_eq!(&src[l.stmts[1].span()], "20 x = 1");
        let src = "  100 CONTINUE\n      GO TO 100\n";
        let l = lexed(src, Form::Fixed);
        assert_eq!(l.stmts[0].label.as_ref().unwrap().value, 100);
        assert_eq!(&src[l.stmts[0].span()], "100 CONTINUE");
        assert_eq!(l.stmts[1].label, None);
    }

    #[test]
    fn continuations_join_and_split_tokens_keep_their_bytes() {
        let src = "call foo(ab&\n  ! c\n   &cd, 'x&\n   &y', &\n   e)\n";
        let l = lexed(src, Form::Free);
        assert_eq!(l.stmts.len(), 1);
        let w: Vec<_> = l.stmts[0]
            .toks()
            .map(|i| l.text(src, i).into_owned())
            .collect();
        assert_eq!(w, ["call", "foo", "(", "abcd", ",", "'xy'", ",", "e", ")"]);
        let t = l.tokens[3];
        assert!(t.split());
        assert_eq!(&src[t.range()], "ab&\n  ! c\n   &cd");
        assert_eq!(l.stmts[0].lines(), 0..5);
        // Fixed form: columns 7-72 of each line, joined.
        let src = "      CALL FOO(AB\n     1CD, 'X\n     2Y')\n";
        assert_eq!(
            words(src, Form::Fixed)[0],
            ["CALL", "FOO", "(", "ABCD", ",", "'XY'", ")"]
        );
    }

    #[test]
    fn directives_between_continuation_lines_are_not_statement_text() {
        let src = "x = 1 + &\n!$acc wait\n  2\n";
        assert_eq!(words(src, Form::Free), [vec!["x", "=", "1", "+", "2"]]);
    }

    #[test]
    fn numbers_next_to_dot_operators() {
        let src = "a = 1.eq.2 .or. 3.e4.gt.x .and. 1..and.y\n";
        assert_eq!(
            words(src, Form::Free)[0],
            [
                "a", "=", "1", ".eq.", "2", ".or.", "3.e4", ".gt.", "x", ".and.", "1.", ".and.",
                "y"
            ]
        );
    }

    #[test]
    fn hostile_inputs_do_not_panic() {
        for src in [
            "",
            ";",
            ";;;",
            "'",
            "x = 'abc&",
            "1",
            "1 ",
            ".",
            "..",
            ".a",
            ".and",
            "1.e",
            "1_",
            "4_'",
            "z'",
            "é",
            "a = é + ü",
            "&",
            "& &\n&",
            "10;20",
            "x(((((",
            "\u{feff}x",
            "      x = 'é",
            "\t1é",
        ] {
            for form in [Form::Free, Form::Fixed] {
                let l = lexed(src, form);
                for t in &l.tokens {
                    let _ = &src[t.range()];
                }
                for s in &l.stmts {
                    let _ = &src[s.span()];
                    assert!(!s.toks().is_empty());
                }
            }
        }
    }
}
