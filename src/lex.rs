//! A C/C++ token scanner that is exact about byte positions.
//!
//! It does not preprocess: a preprocessor line becomes one `PpLine` token (with its
//! `\` continuations and comments), so code in inactive `#if 0` branches is seen too.

use std::ops::Range;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokKind {
    Ident,
    Number,
    /// String or character literal, with its encoding prefix (`L`, `u8`, `u`, `U`) and `R`.
    Literal,
    Punct,
    /// A whole logical preprocessor line, from `#` to before its line terminator.
    PpLine,
}

/// Packed, with 32-bit offsets: a large file has millions of tokens (9 bytes each instead
/// of 24; x86 reads unaligned fields at no cost). A longer text than [`MAX_TEXT`] bytes is
/// not lexed: its file's translation ends (`crate::memory::too_long`) and the command line
/// skips the file with a `file-too-large` error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, packed)]
pub struct Token {
    pub kind: TokKind,
    lo: u32,
    hi: u32,
}

/// The longest text whose tokens' offsets fit (4 GiB - 1 bytes).
pub const MAX_TEXT: usize = u32::MAX as usize;

/// An offset of a text of at most [`MAX_TEXT`] bytes.
fn offset32(o: usize) -> u32 {
    u32::try_from(o).unwrap_or(u32::MAX)
}

impl Token {
    pub fn new(kind: TokKind, start: usize, end: usize) -> Self {
        Token {
            kind,
            lo: offset32(start),
            hi: offset32(end),
        }
    }
    /// Offset of the first byte.
    pub fn start(&self) -> usize {
        self.lo as usize
    }
    /// Offset after the last byte.
    pub fn end(&self) -> usize {
        self.hi as usize
    }
    pub fn range(&self) -> Range<usize> {
        self.start()..self.end()
    }
    pub fn text<'a>(&self, src: &'a str) -> &'a str {
        &src[self.start()..self.end()]
    }
}

/// C's assignment operators (`=` and the compound ones).
pub const ASSIGNMENT_OPS: [&str; 11] = [
    "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=",
];

/// Words that name C and C++ arithmetic types (and common typedefs of them).
pub(crate) const SCALAR_WORDS: &[&str] = &[
    "char",
    "short",
    "int",
    "long",
    "float",
    "double",
    "_Bool",
    "bool",
    "_Complex",
    "__int128",
    "wchar_t",
    "char8_t",
    "char16_t",
    "char32_t",
    "size_t",
    "ssize_t",
    "ptrdiff_t",
    "intptr_t",
    "uintptr_t",
    "intmax_t",
    "uintmax_t",
    "off_t",
    "float_t",
    "double_t",
    "_Float16",
    "__fp16",
    "__bf16",
    "_Float128",
];

/// Whether `w` names an arithmetic type (`int`, `double`, `uint32_t`, ...).
pub(crate) fn is_scalar_word(w: &str) -> bool {
    if SCALAR_WORDS.contains(&w) {
        return true;
    }
    // int32_t, uint_fast8_t, int_least16_t, ...
    let w = w.strip_prefix('u').unwrap_or(w);
    w.strip_prefix("int")
        .and_then(|r| r.strip_suffix("_t"))
        .is_some_and(|mid| {
            let mid = mid
                .strip_prefix("_fast")
                .or_else(|| mid.strip_prefix("_least"))
                .unwrap_or(mid);
            !mid.is_empty() && mid.bytes().all(|b| b.is_ascii_digit())
        })
}

/// `text` without parentheses around all of it (`(a = b)` → `a = b`).
pub(crate) fn strip_parens(text: &str) -> &str {
    let t = text.trim();
    let Some(inner) = t.strip_prefix('(').and_then(|r| r.strip_suffix(')')) else {
        return t;
    };
    // The first `(` must close at the very end.
    let mut depth = 0i32;
    for (k, c) in t.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 && k + 1 < t.len() {
                    return t;
                }
            }
            _ => {}
        }
    }
    inner
}

/// Length of the punctuator at the start of `rest`: the longest of C's multi-byte
/// punctuators that the scanner groups, else one character.
fn punct_len(rest: &[u8]) -> usize {
    match rest {
        [b'<', b'<', b'=', ..] | [b'>', b'>', b'=', ..] | [b'.', b'.', b'.', ..] => 3,
        [b'-', b'>' | b'-' | b'=', ..]
        | [b'+', b'+' | b'=', ..]
        | [b'<', b'<' | b'=', ..]
        | [b'>', b'>' | b'=', ..]
        | [b'=' | b'!' | b'*' | b'/' | b'%' | b'^', b'=', ..]
        | [b'&', b'&' | b'=', ..]
        | [b'|', b'|' | b'=', ..]
        | [b':', b':', ..]
        | [b'#', b'#', ..] => 2,
        // Anything else is one byte: non-ASCII bytes start identifiers, never punctuators.
        _ => 1,
    }
}

/// Length of a line splice (`\` + newline) at `i`, or 0.
pub fn splice_len(b: &[u8], i: usize) -> usize {
    if b.get(i) != Some(&b'\\') {
        return 0;
    }
    match (b.get(i + 1), b.get(i + 2)) {
        (Some(b'\n'), _) => 2,
        (Some(b'\r'), Some(b'\n')) => 3,
        (Some(b'\r'), _) => 2,
        _ => 0,
    }
}

/// `text` without its line splices, as translation phase 2 reads it (borrowed when it has
/// none): a splice may cut a word, `#inc\` + newline + `lude`.
pub fn without_splices(text: &str) -> std::borrow::Cow<'_, str> {
    let b = text.as_bytes();
    if !b.contains(&b'\\') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match splice_len(b, i) {
            0 => {
                out.push(b[i]);
                i += 1;
            }
            n => i += n,
        }
    }
    // Only ASCII bytes were removed, each a whole character.
    std::borrow::Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| text.to_string()))
}

/// End of a `/* */` comment starting at `i` (or end of input if unterminated).
pub fn block_comment_end(b: &[u8], i: usize) -> usize {
    let mut j = i + 2;
    while j + 1 < b.len() {
        if b[j] == b'*' && b[j + 1] == b'/' {
            return j + 2;
        }
        j += 1;
    }
    b.len()
}

/// End of a `//` comment starting at `i`: before the line terminator, following splices.
pub fn line_comment_end(b: &[u8], i: usize) -> usize {
    let mut j = i;
    while j < b.len() {
        let s = splice_len(b, j);
        if s > 0 {
            j += s;
            continue;
        }
        if b[j] == b'\n' || (b[j] == b'\r' && b.get(j + 1) == Some(&b'\n')) {
            return j;
        }
        j += 1;
    }
    b.len()
}

/// End of a quoted literal whose opening quote is at `i`; stops at an unescaped newline.
pub fn quoted_end(b: &[u8], i: usize) -> usize {
    let q = b[i];
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            // A line splice (`\` and LF, CRLF or CR) continues the literal on the next line;
            // any other backslash escapes the byte after it.
            b'\\' => j += splice_len(b, j).max(2),
            b'\n' => return j,
            c if c == q => return j + 1,
            _ => j += 1,
        }
    }
    b.len()
}

/// Encoding prefixes of string and character literals, and whether each makes a raw string.
const LITERAL_PREFIXES: [(&[u8], bool); 9] = [
    (b"L", false),
    (b"u8", false),
    (b"u", false),
    (b"U", false),
    (b"R", true),
    (b"LR", true),
    (b"u8R", true),
    (b"uR", true),
    (b"UR", true),
];

/// Whether the identifier `word` followed by `next` starts a literal, and if so whether raw.
fn literal_prefix(word: &[u8], next: Option<&u8>) -> Option<bool> {
    let (_, raw) = LITERAL_PREFIXES.iter().find(|(p, _)| *p == word)?;
    match next {
        Some(b'"') => Some(*raw),
        Some(b'\'') if !raw => Some(false),
        _ => None,
    }
}

/// Where the directive text of a `_Pragma` string literal lies: the content between its
/// quotes (after any prefix, raw-string delimiters excluded) and whether it is raw.
pub fn string_content(lit: &str) -> Option<(Range<usize>, bool)> {
    let q = lit.find('"')?;
    let raw = lit[..q].ends_with('R');
    if !lit.ends_with('"') || lit.len() < q + 2 {
        return None;
    }
    if !raw {
        return Some((q + 1..lit.len() - 1, false));
    }
    let open = q + 1 + lit[q + 1..].find('(')?;
    let delim = &lit[q + 1..open];
    let close = lit.len().checked_sub(2 + delim.len())?;
    (close > open && lit[close..].starts_with(')') && lit[close + 1..].starts_with(delim))
        .then_some((open + 1..close, true))
}

/// End of a C++ raw string `R"delim( ... )delim"` whose `"` is at `i`.
fn raw_string_end(b: &[u8], i: usize) -> Option<usize> {
    // A delimiter has at most 16 characters: look no further for its `(`.
    let head = &b[i + 1..b.len().min(i + 18)];
    let open = head.iter().position(|&c| c == b'(')? + i + 1;
    let delim = &b[i + 1..open];
    if delim.len() > 16 || delim.iter().any(|c| c.is_ascii_whitespace() || *c == b'\\') {
        return None;
    }
    let mut j = open + 1;
    while j < b.len() {
        if b[j] == b')'
            && b[j + 1..].starts_with(delim)
            && b.get(j + 1 + delim.len()) == Some(&b'"')
        {
            return Some(j + 2 + delim.len());
        }
        j += 1;
    }
    Some(b.len())
}

/// `s` is one identifier (letters, digits and `_`, not starting with a digit).
pub fn is_identifier(s: &str) -> bool {
    let mut ch = s.chars();
    ch.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && ch.all(|c| c.is_alphanumeric() || c == '_')
}

/// Byte classes for [`lex_into`]'s dispatch: one table read per token start, and one per
/// byte inside identifiers and blanks.
const IDENT: u8 = 1;
const DIGIT: u8 = 2;
const BLANK: u8 = 4;
/// Bytes that [`pp_line_end`] looks at: splices, line ends, comments and quotes.
const PP_STOP: u8 = 8;

const fn byte_classes() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = if b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b >= 0x80 {
            IDENT
        } else if b.is_ascii_digit() {
            DIGIT
        } else if b == b' ' || b == b'\t' || b == b'\r' || b == 0x0C {
            // `is_ascii_whitespace` but for the newline, which starts a line.
            BLANK
        } else {
            0
        } | if matches!(b, b'\\' | b'\n' | b'\r' | b'/' | b'"' | b'\'') {
            PP_STOP
        } else {
            0
        };
        c += 1;
    }
    t
}

static CLASS: [u8; 256] = byte_classes();

fn is_ident_char(c: u8) -> bool {
    CLASS[c as usize] & (IDENT | DIGIT) != 0
}

/// How many bytes at the start of `b` are `what`.
fn span(b: &[u8], what: impl Fn(u8) -> bool) -> usize {
    b.iter().position(|&c| !what(c)).unwrap_or(b.len())
}

/// End of the logical preprocessor line starting at `i` (position of its terminator).
fn pp_line_end(b: &[u8], i: usize) -> usize {
    let mut j = i;
    while j < b.len() {
        // Most bytes of a line are none of the ones below: skip them in a tight loop.
        match b[j..]
            .iter()
            .position(|&c| CLASS[c as usize] & PP_STOP != 0)
        {
            Some(n) => j += n,
            None => break,
        }
        let s = splice_len(b, j);
        if s > 0 {
            j += s;
            continue;
        }
        match b[j] {
            b'\n' => return j,
            b'\r' if b.get(j + 1) == Some(&b'\n') => return j,
            b'/' if b.get(j + 1) == Some(&b'*') => j = block_comment_end(b, j),
            b'/' if b.get(j + 1) == Some(&b'/') => return line_comment_end(b, j),
            b'"' | b'\'' => j = quoted_end(b, j),
            _ => j += 1,
        }
    }
    b.len()
}

/// Tokenize `src[range]`. Offsets in the result are absolute. `line_start` says whether
/// the range begins at the start of a line (so a `#` there opens a preprocessor line).
pub fn lex_range(src: &str, range: Range<usize>, line_start: bool) -> Vec<Token> {
    let len = range.end.min(src.len()).saturating_sub(range.start);
    // C code has at least two bytes per token (one and a separator) outside of punctuation
    // runs: reserving that up front spares the copies of a growing vector on large files.
    // The reservation is virtual: pages no token reaches are never touched. A short range (a
    // clause item, a directive line, lexed again and again) gets room for as many tokens as
    // it has bytes, so one allocation holds them all.
    let cap = match len {
        0..=SHORT => len,
        _ if len > 1 << 16 => len / 2,
        _ => 0,
    };
    let mut toks = Vec::with_capacity(cap);
    lex_into(src, range, line_start, &mut toks);
    // The unused part of a large reservation is returned: untouched, it costs no resident
    // memory, but it counts against the memory limit while the tokens live (a large file's
    // whole read), and C code averages well over two bytes per token.
    if toks.capacity() - toks.len() > 1 << 16 {
        toks.shrink_to_fit();
    }
    toks
}

/// Ranges up to this many bytes are "short" for [`lex_range`]'s reservation.
const SHORT: usize = 256;

/// [`lex_range`], appending to `toks`.
pub fn lex_into(src: &str, range: Range<usize>, line_start: bool, toks: &mut Vec<Token>) {
    if src.len() > MAX_TEXT {
        crate::memory::too_long();
    }
    let b = src.as_bytes();
    let end = range.end.min(b.len());
    let mut i = range.start;
    let mut at_line_start = line_start;
    // A byte order mark starting the text is skipped (tested once, not per identifier).
    if i == 0 && end > 0 && b.starts_with("\u{feff}".as_bytes()) {
        i = 3;
    }
    while i < end {
        let c = b[i];
        let class = CLASS[c as usize];
        // Blanks and line ends between tokens: the most common bytes after identifiers'.
        if class & BLANK != 0 {
            i += 1 + span(&b[i + 1..end], |c| CLASS[c as usize] & BLANK != 0);
            continue;
        }
        if c == b'\n' {
            at_line_start = true;
            i += 1;
            continue;
        }
        let start = i;
        let kind;
        if class & IDENT != 0 {
            i += 1 + span(&b[i + 1..end], is_ident_char);
            let quote = i < end && matches!(b[i], b'"' | b'\'');
            kind = match quote
                .then(|| literal_prefix(&b[start..i], b.get(i)))
                .flatten()
            {
                Some(false) => {
                    i = quoted_end(b, i).min(end);
                    TokKind::Literal
                }
                Some(true) => match raw_string_end(b, i) {
                    Some(e) => {
                        i = e.min(end);
                        TokKind::Literal
                    }
                    None => TokKind::Ident,
                },
                None => TokKind::Ident,
            };
        } else if class & DIGIT != 0 || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            i += 1;
            while i < end {
                let d = b[i];
                let separator =
                    d == b'\'' && b.get(i + 1).is_some_and(|n| n.is_ascii_alphanumeric());
                let exponent_sign =
                    (d == b'+' || d == b'-') && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P');
                if !(is_ident_char(d) || d == b'.' || separator || exponent_sign) {
                    break;
                }
                i += 1;
            }
            kind = TokKind::Number;
        } else {
            match c {
                b'\\' if splice_len(b, i) > 0 => {
                    i += splice_len(b, i);
                    continue;
                }
                b'/' if b.get(i + 1) == Some(&b'*') => {
                    i = block_comment_end(b, i).min(end);
                    continue;
                }
                b'/' if b.get(i + 1) == Some(&b'/') => {
                    i = line_comment_end(b, i).min(end);
                    continue;
                }
                b'#' if at_line_start => {
                    i = pp_line_end(b, i).min(end);
                    kind = TokKind::PpLine;
                }
                b'"' | b'\'' => {
                    i = quoted_end(b, i).min(end);
                    kind = TokKind::Literal;
                }
                // Brackets, `;` and `,` (most punctuators) start no longer punctuator.
                b'(' | b')' | b'[' | b']' | b'{' | b'}' | b';' | b',' => {
                    i += 1;
                    kind = TokKind::Punct;
                }
                _ => {
                    i += punct_len(&b[i..end]);
                    kind = TokKind::Punct;
                }
            }
        }
        at_line_start = false;
        toks.push(Token::new(kind, start, i));
    }
}

pub fn lex(src: &str) -> Vec<Token> {
    lex_range(src, 0..src.len(), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A large file's tokens (and its preprocessor lines') hold no more room than the
    /// threshold past their count: the reservation's unused part would count against the
    /// memory limit for the whole read.
    #[test]
    fn a_large_files_tokens_keep_no_spare_reservation() {
        let src = "#pragma acc parallel loop gang\nfor (int i = 0; i < n; i++) a[i] = b[i];\n"
            .repeat(10_000);
        let toks = lex(&src);
        assert!(toks.len() > 1 << 17, "{}", toks.len());
        assert_eq!(toks.capacity(), toks.len());
        let pp = PpLines::new(&src, &toks);
        assert_eq!(pp.toks.capacity(), pp.toks.len());
        assert_eq!(pp.starts.len(), 10_000);
        // Two tokens per `#pragma acc` line are kept: `pragma` and `acc`.
        assert_eq!(pp.toks.len(), 20_000);
    }

    /// `PpLines` against the reading it replaces, every line lexed whole: over lines made of
    /// fragments that a `#pragma acc` line's usual spelling can be confused with (splices,
    /// comments, other blanks, glued names, line ends, `#if` blocks, macros), `inner` is that
    /// lexing, and `head` is it too but for the first two tokens only of a `pragma acc` line.
    #[test]
    fn pp_lines_match_every_line_lexed_whole() {
        const PARTS: [&str; 32] = [
            "#",
            "# ",
            "#\t",
            "#  ",
            "pragma",
            "pra\\\ngma",
            "pragma\\\n",
            " ",
            "\t",
            "\x0c",
            "\r",
            "/**/",
            "/* c */",
            "// c",
            "acc",
            "acc_x",
            "accx",
            "acc$",
            "acc\u{e9}",
            "ac\\\nc",
            "acc\\\n",
            " parallel loop",
            " copy(a[0:n])",
            "\"s\"",
            "'c'",
            "\n",
            "\r\n",
            "omp",
            "define",
            "if 0",
            "endif",
            "(",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut src = String::from("int x;\n#pragma acc parallel\n# pragma acc\n#pragma acc");
        for _ in 0..4000 {
            src.push('\n');
            // Most lines start like a `#pragma acc` line, then go their own way.
            if next(3) > 0 {
                src.push_str(["#pragma acc", "#pragma", "# pragma\tacc"][next(3)]);
            }
            for _ in 0..next(6) {
                src.push_str(PARTS[next(PARTS.len())]);
            }
        }
        src.push_str("\n_Pragma(\"acc parallel\") x;\n#pragma acc");
        let toks = lex(&src);
        let pp = PpLines::new(&src, &toks);
        let (mut lines, mut cut) = (0, 0);
        for t in toks.iter().filter(|t| t.kind == TokKind::PpLine) {
            let whole = lex_range(&src, t.start() + 1..t.end(), false);
            assert_eq!(*pp.inner(&src, t), whole[..], "{:?}", t.text(&src));
            let pragma_acc = is_pragma_acc(&src, &whole);
            let head = if pragma_acc { &whole[..2] } else { &whole[..] };
            assert_eq!(*pp.head(&src, t), *head, "{:?}", t.text(&src));
            assert_eq!(pp.directive(&src, t), whole.first().map(|w| w.text(&src)));
            lines += 1;
            cut += usize::from(pragma_acc && whole.len() > 2);
        }
        assert!(lines > 2000 && cut > 500, "{lines} {cut}");
        // A line no stream of the file holds (a macro body's) is lexed anew, as before.
        let body = Token::new(TokKind::PpLine, 7, 27);
        assert_eq!(body.text(&src), "#pragma acc parallel");
        let other = PpLines::default();
        assert_eq!(*other.inner(&src, &body), *pp.inner(&src, &body));
        assert_eq!(other.head(&src, &body).len(), 2);
    }

    fn kinds(src: &str) -> Vec<(TokKind, &str)> {
        lex(src).iter().map(|t| (t.kind, t.text(src))).collect()
    }

    /// A literal continued by a line splice ends at its closing quote on the next line,
    /// whatever the line ends are: a CRLF splice ended it at the LF, so that a `/*` after the
    /// splice opened a comment that hid the directives after it.
    #[test]
    fn splices_of_any_line_end_are_removed() {
        assert!(matches!(
            without_splices("include x"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(without_splices("inc\\\nlude"), "include");
        assert_eq!(without_splices("inc\\\r\nlude"), "include");
        assert_eq!(without_splices("inc\\\rlude é"), "include é");
        // A backslash not before a line end stays.
        assert_eq!(without_splices("a\\b\\"), "a\\b\\");
    }

    #[test]
    fn a_spliced_literal_ends_at_its_quote_with_any_line_end() {
        for eol in ["\n", "\r\n", "\r"] {
            let src = format!("s = \"a\\{eol}/*\";{eol}#pragma acc parallel{eol}x = \"*/\";{eol}");
            let k = kinds(&src);
            assert_eq!(k[2], (TokKind::Literal, &src[4..10 + eol.len()]), "{eol:?}");
            assert_eq!(k[3], (TokKind::Punct, ";"), "{eol:?}");
            // (A CR-only file is lexed with LF line ends, `crate::encoding`: a CR alone here
            // ends no preprocessor line, so only the literal is checked.)
            if eol != "\r" {
                assert_eq!(k[4], (TokKind::PpLine, "#pragma acc parallel"), "{eol:?}");
            }
            let b = src.as_bytes();
            assert_eq!(quoted_end(b, 4), 10 + eol.len(), "{eol:?}");
        }
    }

    #[test]
    fn pp_line_keeps_continuations_and_comments() {
        let src = "int a;\n  #pragma acc parallel \\\n  copy(a) /* x\ny */ z\nint b;";
        let k = kinds(src);
        assert_eq!(
            k[3],
            (
                TokKind::PpLine,
                "#pragma acc parallel \\\n  copy(a) /* x\ny */ z"
            )
        );
        assert_eq!(k[4], (TokKind::Ident, "int"));
    }

    #[test]
    fn hash_mid_line_is_punct_and_crlf_excluded() {
        let src = "#define X(a) #a\r\nx # y";
        let k = kinds(src);
        assert_eq!(k[0], (TokKind::PpLine, "#define X(a) #a"));
        assert_eq!(k[2], (TokKind::Punct, "#"));
    }

    #[test]
    fn literals_comments_and_raw_strings() {
        let src = "s = \"a\\\"b\" /* c */ + 'x' // d\n R\"(q\")\" ;";
        let k: Vec<_> = kinds(src).into_iter().map(|(_, t)| t).collect();
        assert_eq!(
            k,
            vec!["s", "=", "\"a\\\"b\"", "+", "'x'", "R\"(q\")\"", ";"]
        );
    }

    #[test]
    fn literal_prefixes_are_part_of_the_literal() {
        let src = "L\"a\" u8\"b\" u'c' U\"d\" LR\"x(e)\")x\" u8R\"(f\")\" Lx \"g\"";
        let k: Vec<_> = kinds(src).into_iter().map(|(_, t)| t).collect();
        assert_eq!(
            k,
            vec![
                "L\"a\"",
                "u8\"b\"",
                "u'c'",
                "U\"d\"",
                "LR\"x(e)\")x\"",
                "u8R\"(f\")\"",
                "Lx",
                "\"g\""
            ]
        );
        assert_eq!(string_content("L\"acc\""), Some((2..5, false)));
        assert_eq!(string_content("R\"x(acc)x\""), Some((4..7, true)));
        assert_eq!(string_content("R\"x(acc)y\""), None);
    }

    #[test]
    fn numbers_and_multichar_punct() {
        let k: Vec<_> = kinds("x+=1e-3f; p->q++; a<<=0x1'0;")
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        assert_eq!(
            k,
            vec![
                "x", "+=", "1e-3f", ";", "p", "->", "q", "++", ";", "a", "<<=", "0x1'0", ";"
            ]
        );
    }

    /// Every punctuator is as long as `punct_len` reads it from its first byte (the rule
    /// before brackets, `;` and `,` were taken as one byte without it).
    #[test]
    fn punctuators_are_as_long_as_punct_len_reads_them() {
        let src = "a[i]=(b<<=c)>>d; {x->y, z::w} ...; p&&q||r!=s; #x\n(f)(g)[h]{i};,;<=>=";
        let toks = lex(src);
        assert!(toks.iter().filter(|t| t.kind == TokKind::Punct).count() > 30);
        for t in toks.iter().filter(|t| t.kind == TokKind::Punct) {
            let len = punct_len(&src.as_bytes()[t.start()..]);
            assert_eq!(t.end() - t.start(), len, "{:?}", t.text(src));
        }
    }

    #[test]
    fn blanks_splices_and_a_byte_order_mark_between_tokens() {
        // Form feed and `\r` are blanks, a vertical tab is a punctuator; a splice continues a
        // preprocessor line even after a run of plain bytes, a `\` alone is a punctuator.
        let src = "\u{feff}a\x0c\t\r\n#define X 1 \\\r\n + 2 \"q\\\n\" //c\\\nd\r\nb\x0b\\ c$1";
        assert_eq!(
            kinds(src),
            [
                (TokKind::Ident, "a"),
                (TokKind::PpLine, "#define X 1 \\\r\n + 2 \"q\\\n\" //c\\\nd"),
                (TokKind::Ident, "b"),
                (TokKind::Punct, "\x0b"),
                (TokKind::Punct, "\\"),
                (TokKind::Ident, "c$1"),
            ]
        );
    }

    #[test]
    fn unterminated_input_does_not_panic() {
        for s in [
            "/*",
            "\"abc",
            "'",
            "#pragma acc \\",
            "R\"(",
            "\\",
            "\r",
            "a\\\r",
        ] {
            let _ = lex(s);
        }
    }
}

/// The tokens inside each preprocessor line of a file's token stream, lexed once per file:
/// the passes that read `#define`, `#pragma`, `#include` and conditionals all share them.
///
/// A `#pragma acc` line keeps its first two tokens only (a large file has a hundred thousand
/// of them, a dozen tokens each, which no pass reads but the directive's own parser and the
/// runtime-API pass's lines with `acc_` names): [`PpLines::inner`] lexes its tokens anew,
/// [`PpLines::head`] gives the two.
#[derive(Default)]
pub struct PpLines {
    /// Start and end of each `PpLine` token, in file order (32-bit offsets, as in [`Token`]).
    starts: Vec<u32>,
    ends: Vec<u32>,
    /// For each line, where its tokens begin in `toks` (from `#`'s successor to the line's
    /// end); they end where the next line's begin.
    firsts: Vec<u32>,
    toks: Vec<Token>,
}

impl PpLines {
    pub fn new(src: &str, file: &[Token]) -> Self {
        // Lexed in one pass into one vector: a line is a few dozen bytes, so a vector per
        // line (and a thread pool's hand-offs) cost more than the lexing itself.
        let lines = file.iter().filter(|t| t.kind == TokKind::PpLine);
        let n = lines.clone().count();
        let mut out = PpLines {
            starts: Vec::with_capacity(n),
            ends: Vec::with_capacity(n),
            firsts: Vec::with_capacity(n),
            // Most lines of a large file are `#pragma acc` lines: two tokens each.
            toks: Vec::with_capacity(2 * n),
        };
        for t in lines {
            let from = out.toks.len();
            let inner = t.start() + 1..t.end();
            if !pragma_acc_head(src, inner.clone(), &mut out.toks) {
                lex_into(src, inner, false, &mut out.toks);
                if is_pragma_acc(src, &out.toks[from..]) {
                    out.toks.truncate(from + 2);
                }
            }
            out.starts.push(t.lo);
            out.ends.push(t.hi);
            out.firsts.push(offset32(from));
        }
        // As in `lex_range`: the vector's spare room is returned.
        if out.toks.capacity() - out.toks.len() > 1 << 16 {
            out.toks.shrink_to_fit();
        }
        out
    }

    /// The tokens after the `#` of preprocessor line `line` (a `PpLine` token of `src`).
    /// A line this file's stream does not hold (a macro body's own tokens) or a `#pragma
    /// acc` line is lexed anew.
    pub fn inner<'a>(&'a self, src: &str, line: &Token) -> std::borrow::Cow<'a, [Token]> {
        match self.kept(line) {
            Some(toks) if !is_pragma_acc(src, toks) => std::borrow::Cow::Borrowed(toks),
            _ => std::borrow::Cow::Owned(lex_range(src, line.start() + 1..line.end(), false)),
        }
    }

    /// [`PpLines::inner`], but for a `#pragma acc` line its first two tokens only: for the
    /// passes that read no further into a line that starts so (they look for `#define`,
    /// `#include`, conditionals or `#pragma omp`).
    pub fn head<'a>(&'a self, src: &str, line: &Token) -> std::borrow::Cow<'a, [Token]> {
        match self.kept(line) {
            Some(toks) => std::borrow::Cow::Borrowed(toks),
            None => {
                let mut toks = lex_range(src, line.start() + 1..line.end(), false);
                if is_pragma_acc(src, &toks) {
                    toks.truncate(2);
                }
                std::borrow::Cow::Owned(toks)
            }
        }
    }

    /// The tokens kept for `line`, when this file's stream holds it.
    fn kept(&self, line: &Token) -> Option<&[Token]> {
        let k = self.find(line.lo).filter(|&k| self.ends[k] == line.hi)?;
        let to = self
            .firsts
            .get(k + 1)
            .map_or(self.toks.len(), |&f| f as usize);
        Some(&self.toks[self.firsts[k] as usize..to])
    }

    /// The line starting at byte `start`. Passes walk the lines in file order, asking for
    /// each one's tokens (hundreds of thousands of times in a large file): the line after the
    /// one this thread found last is tried before a search.
    fn find(&self, start: u32) -> Option<usize> {
        thread_local! {
            static NEXT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
        }
        let guess = NEXT.get();
        let k = if self.starts.get(guess) == Some(&start) {
            guess
        } else {
            self.starts.binary_search(&start).ok()?
        };
        NEXT.set(k + 1);
        Some(k)
    }

    /// The first word after the `#` of `line` (`define`, `pragma`, `include`, ...).
    pub fn directive<'s>(&self, src: &'s str, line: &Token) -> Option<&'s str> {
        self.head(src, line).first().map(|w| &src[w.range()])
    }
}

/// Whether a preprocessor line's tokens (after its `#`) start `pragma acc`.
fn is_pragma_acc(src: &str, toks: &[Token]) -> bool {
    matches!(toks, [p, a, ..] if p.text(src) == "pragma" && a.text(src) == "acc")
}

/// The usual spelling of a `#pragma acc` line, `src[inner]` after its `#`: blanks, `pragma`,
/// spaces or tabs, and `acc` ending at a byte no identifier holds. Its two tokens are pushed
/// (as [`lex_into`] reads them) without lexing the rest of the line; any other line is left
/// to the lexer.
fn pragma_acc_head(src: &str, inner: Range<usize>, toks: &mut Vec<Token>) -> bool {
    let b = &src.as_bytes()[..inner.end];
    let blanks = |from: usize| from + span(&b[from..], |c| c == b' ' || c == b'\t');
    let p = blanks(inner.start);
    if !b[p..].starts_with(b"pragma") {
        return false;
    }
    let a = blanks(p + 6);
    let after = a + 3;
    let ok =
        a > p + 6 && b[a..].starts_with(b"acc") && b.get(after).is_none_or(|&c| !is_ident_char(c));
    if ok {
        toks.push(Token::new(TokKind::Ident, p, p + 6));
        toks.push(Token::new(TokKind::Ident, a, after));
    }
    ok
}

/// The keyword of a conditional directive line (`if`, `ifdef`, `else`, `endif`, …).
pub fn conditional(line: &str) -> Option<&str> {
    let rest = line.trim_start_matches([' ', '\t']).strip_prefix('#')?;
    let rest = rest.trim_start_matches([' ', '\t']);
    let n = rest
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
        .count();
    let kw = &rest[..n];
    matches!(
        kw,
        "if" | "ifdef" | "ifndef" | "elif" | "elifdef" | "elifndef" | "else" | "endif"
    )
    .then_some(kw)
}
