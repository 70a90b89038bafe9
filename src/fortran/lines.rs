//! A Fortran file's physical lines, each classified as compilers read it: blank, comment,
//! preprocessor, directive (`!$acc`, `!$omp`, `!$` conditional compilation) or source, with
//! the byte ranges of its fields (label, continuation mark, statement text, trailing `&`,
//! `!` comment, text past column 72).
//!
//! One pass, linear in the file: the only state carried from line to line is whether a
//! statement or directive is continued and whether a character constant is still open.

mod fixed;
mod free;

use super::form::{Form, SourceKind, switch};
use std::ops::Range;

/// The directive sentinels this front end reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sentinel {
    /// `!$acc` (fixed form also `c$acc`, `*$acc`).
    Acc,
    /// `!$omp` (fixed form also `c$omp`, `*$omp`): already OpenMP.
    Omp,
    /// `!$` followed by a blank: conditional compilation, a source line when OpenMP is on.
    Conditional,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// Only blanks (fixed form: up to column 72).
    Blank,
    /// A comment line (also `!dir$` lines and sentinels this front end does not read).
    Comment,
    /// A C preprocessor line (`#` first), or a line a `\` at the end of the previous
    /// preprocessor line continues.
    Preprocessor,
    /// A line with a directive sentinel.
    Directive(Sentinel),
    /// A source line.
    Code,
}

/// One physical line. Ranges are byte offsets into the file; empty ranges and `None` mean
/// "absent". For blank, comment and preprocessor lines only `start`, `end`, `next`, `form`
/// and `kind` are meaningful (`body` is empty at `start`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub start: usize,
    /// End of the text, before the line terminator (`\n`, `\r\n` or `\r`).
    pub end: usize,
    /// Start of the next line (after the terminator).
    pub next: usize,
    /// The source form in effect on this line (`!dir$ free` / `!dir$ fixed` switch it).
    pub form: Form,
    pub kind: LineKind,
    /// Directive lines: the sentinel (`!$acc`, `C$ACC`, `!$`).
    pub sentinel: Range<usize>,
    /// Fixed form: the label field (columns 1-5, or the label digits of a conditional
    /// compilation line) when it is not blank.
    pub label: Option<Range<usize>>,
    /// The line continues the previous source line or directive.
    pub continuation: bool,
    /// The continuation mark: fixed form's column-6 character, free form's leading `&`.
    pub mark: Option<Range<usize>>,
    /// The statement or directive text: after the label, continuation mark and sentinel,
    /// before a trailing `&`, a `!` comment and column 73 (fixed form).
    pub body: Range<usize>,
    /// Free form: the trailing `&` that continues the line.
    pub amp: Option<usize>,
    /// The `!` comment at the end of the line (up to column 72 in fixed form).
    pub comment: Option<Range<usize>>,
    /// Fixed form: the text past column 72, which compilers ignore.
    pub ignored: Option<Range<usize>>,
    /// The body starts inside a character constant continued from the previous line
    /// (the quote that opened it).
    pub string_in: Option<u8>,
    /// The line ends inside a character constant that continues on the next line.
    pub string_out: Option<u8>,
}

impl Line {
    fn new(start: usize, end: usize, next: usize, form: Form, kind: LineKind) -> Line {
        Line {
            start,
            end,
            next,
            form,
            kind,
            sentinel: start..start,
            label: None,
            continuation: false,
            mark: None,
            body: start..start,
            amp: None,
            comment: None,
            ignored: None,
            string_in: None,
            string_out: None,
        }
    }

    /// A source line or a directive line continues on the next line of its kind.
    pub fn continues(&self) -> bool {
        self.amp.is_some()
    }
}

/// The largest file this front end reads: its tables hold 32-bit offsets (a file this size
/// would need hundreds of GiB to translate; `--max-file-size` and `--max-memory` stop one
/// long before).
pub const MAX_LEN: usize = u32::MAX as usize - 1;

/// "Absent" in a [`Packed`] line's fields.
const NONE: u32 = u32::MAX;

/// A [`Line`] as [`Lines`] keeps it: 32-bit offsets, the flags in one byte, the fields most
/// lines do not have (a sentinel, a label, a continuation mark or `&`, a comment, text past
/// column 72) in [`Extra`] apart (24 bytes a line, and 44 more for a line with any of them,
/// against 176).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Packed {
    start: u32,
    end: u32,
    body: [u32; 2],
    /// Index into [`Lines::extra`], `NONE`: the line has none of its fields.
    extra: u32,
    form: Form,
    kind: LineKind,
    /// Bits 0-1: the terminator's length (`next - end`: 0, 1 or 2); bit 2: `continuation`;
    /// bits 3-4 and 5-6: `string_in` and `string_out` ([`quote_code`]).
    bits: u8,
}

impl Packed {
    fn next(&self) -> u32 {
        self.end + u32::from(self.bits & 3)
    }
}

/// A line's open quote in 2 bits: 0 none, 1 `'`, 2 `"` (the only quotes [`scan_text`]
/// opens).
fn quote_code(q: Option<u8>) -> u8 {
    match q {
        None => 0,
        Some(b'\'') => 1,
        Some(b'"') => 2,
        Some(_) => unreachable!("a character constant opens with a quote"),
    }
}

/// [`quote_code`]'s quotes by their code (a table: [`Lines::get`] is called for every line
/// many times over).
const QUOTES: [Option<u8>; 4] = [None, Some(b'\''), Some(b'"'), None];

/// A line's less common fields (`NONE`: absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Extra {
    sentinel: [u32; 2],
    label: [u32; 2],
    mark: [u32; 2],
    amp: u32,
    comment: [u32; 2],
    ignored: [u32; 2],
}

fn pack(r: &Range<usize>) -> [u32; 2] {
    [r.start as u32, r.end as u32]
}

fn pack_opt(r: &Option<Range<usize>>) -> [u32; 2] {
    r.as_ref().map_or([NONE, NONE], pack)
}

fn unpack(r: [u32; 2]) -> Range<usize> {
    r[0] as usize..r[1] as usize
}

fn unpack_opt(r: [u32; 2]) -> Option<Range<usize>> {
    (r[0] != NONE).then(|| unpack(r))
}

/// The lines of a file, kept packed ([`Lines::get`] gives one as a [`Line`]).
#[derive(Debug, Clone, Default)]
pub struct Lines {
    /// Bytes of a UTF-8 byte-order mark before the first line (0 or 3).
    pub bom: usize,
    lines: Vec<Packed>,
    extra: Vec<Extra>,
}

impl Lines {
    /// Whether the statement starting at byte `at` is the first on its line: before it
    /// there are only blanks, a statement label, a construct name (`outer:`).
    pub fn first_on_line(&self, src: &str, at: usize) -> bool {
        let l = self.get(self.line_of(at));
        src.get(l.start..at).is_some_and(first_on_line)
    }

    fn push(&mut self, l: &Line) {
        debug_assert!(l.next - l.end <= 2, "a line terminator is 1 or 2 bytes");
        let plain = l.sentinel == (l.start..l.start)
            && l.label.is_none()
            && l.mark.is_none()
            && l.amp.is_none()
            && l.comment.is_none()
            && l.ignored.is_none();
        let extra = if plain {
            NONE
        } else {
            self.extra.push(Extra {
                sentinel: pack(&l.sentinel),
                label: pack_opt(&l.label),
                mark: pack_opt(&l.mark),
                amp: l.amp.map_or(NONE, |a| a as u32),
                comment: pack_opt(&l.comment),
                ignored: pack_opt(&l.ignored),
            });
            (self.extra.len() - 1) as u32
        };
        self.lines.push(Packed {
            start: l.start as u32,
            end: l.end as u32,
            body: pack(&l.body),
            extra,
            form: l.form,
            kind: l.kind,
            bits: (l.next - l.end) as u8
                | u8::from(l.continuation) << 2
                | quote_code(l.string_in) << 3
                | quote_code(l.string_out) << 5,
        });
    }

    fn unpack(&self, p: &Packed) -> Line {
        let start = p.start as usize;
        let mut l = Line::new(start, p.end as usize, p.next() as usize, p.form, p.kind);
        l.body = unpack(p.body);
        l.continuation = p.bits & 4 != 0;
        l.string_in = QUOTES[usize::from((p.bits >> 3) & 3)];
        l.string_out = QUOTES[usize::from((p.bits >> 5) & 3)];
        if let Some(x) = self.extra.get(p.extra as usize) {
            l.sentinel = unpack(x.sentinel);
            l.label = unpack_opt(x.label);
            l.mark = unpack_opt(x.mark);
            l.amp = (x.amp != NONE).then_some(x.amp as usize);
            l.comment = unpack_opt(x.comment);
            l.ignored = unpack_opt(x.ignored);
        }
        l
    }

    /// The number of lines.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Line `k` (panics past the last line, as indexing does).
    pub fn get(&self, k: usize) -> Line {
        self.unpack(&self.lines[k])
    }

    /// The last line.
    pub fn last(&self) -> Option<Line> {
        self.lines.last().map(|p| self.unpack(p))
    }

    /// The lines in file order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Line> + ExactSizeIterator + '_ {
        self.lines.iter().map(|p| self.unpack(p))
    }

    /// Lines `r` in file order.
    pub fn range(
        &self,
        r: Range<usize>,
    ) -> impl DoubleEndedIterator<Item = Line> + ExactSizeIterator + '_ {
        self.lines[r].iter().map(|p| self.unpack(p))
    }

    /// The last line that starts before byte `offset`.
    pub fn last_starting_before(&self, offset: usize) -> Option<usize> {
        self.lines
            .partition_point(|l| (l.start as usize) < offset)
            .checked_sub(1)
    }

    /// Where line `k` starts.
    pub fn start(&self, k: usize) -> usize {
        self.lines[k].start as usize
    }

    /// Where the line after line `k` starts.
    pub fn next(&self, k: usize) -> usize {
        self.lines[k].next() as usize
    }

    /// Line `k`'s kind.
    pub fn kind(&self, k: usize) -> LineKind {
        self.lines[k].kind
    }

    /// The index of the line holding byte `offset` (the last line for offsets past the end).
    pub fn line_of(&self, offset: usize) -> usize {
        self.lines
            .partition_point(|l| (l.next() as usize) <= offset)
            .min(self.lines.len().saturating_sub(1))
    }
}

/// Where each line ends: (end of text, start of next line).
fn line_end(b: &[u8], start: usize) -> (usize, usize) {
    match memchr::memchr2(b'\n', b'\r', &b[start..]) {
        None => (b.len(), b.len()),
        Some(k) => {
            let e = start + k;
            if b[e] == b'\r' && b.get(e + 1) == Some(&b'\n') {
                (e, e + 2)
            } else {
                (e, e + 1)
            }
        }
    }
}

fn blank(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

/// The sentinel word after `!$` at `rest` (case-insensitive): `acc` or `omp`, with the
/// byte that must follow it in free form checked by the caller.
fn sentinel_word(rest: &[u8]) -> Option<Sentinel> {
    let w = rest.get(..3)?;
    if w.eq_ignore_ascii_case(b"acc") {
        Some(Sentinel::Acc)
    } else if w.eq_ignore_ascii_case(b"omp") {
        Some(Sentinel::Omp)
    } else {
        None
    }
}

/// The largest char boundary of `s` at or before `i`.
/// The first character boundary of `s` at or after `i`.
fn ceil_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// What scanning a line's text found.
struct Scanned {
    /// Last non-blank byte before the comment (exclusive end), or the start.
    last: usize,
    comment: Option<Range<usize>>,
    /// Open quote at the end of the text.
    open: Option<u8>,
}

/// Scan `b[from..to]` for quotes and a `!` comment, starting inside a string opened by
/// `quote` if any.
fn scan_text(b: &[u8], from: usize, to: usize, mut quote: Option<u8>) -> Scanned {
    let mut last = from;
    let mut i = from;
    while i < to {
        let c = b[i];
        match quote {
            Some(q) => {
                if c == q {
                    if b.get(i + 1) == Some(&q) && i + 1 < to {
                        i += 1;
                    } else {
                        quote = None;
                    }
                }
            }
            None => match c {
                b'\'' | b'"' => quote = Some(c),
                b'!' => {
                    return Scanned {
                        last,
                        comment: Some(i..to),
                        open: None,
                    };
                }
                _ => {}
            },
        }
        if !blank(c) {
            last = i + 1;
        }
        i += 1;
    }
    Scanned {
        last,
        comment: None,
        open: quote,
    }
}

/// What one continued construct (source statement or directive) carries to its next line.
#[derive(Default, Clone, Copy)]
struct Pending {
    /// The previous line of this kind ended with `&` (free form) or exists (fixed form).
    open: bool,
    /// A character constant continues.
    quote: Option<u8>,
}

struct Scanner<'a> {
    src: &'a str,
    b: &'a [u8],
    form: Form,
    code: Pending,
    /// The directive being continued, and its state.
    directive: Option<(Sentinel, Pending)>,
    /// The previous line was a preprocessor line ending with `\`.
    pp_continues: bool,
}

/// Classify every line of `src`.
///
/// A file of more than [`MAX_LEN`] bytes ends the file's translation
/// ([`crate::memory::too_long`]: its offsets would not fit in 32 bits).
pub fn scan(src: &str, kind: SourceKind) -> Lines {
    if src.len() > MAX_LEN {
        crate::memory::too_long();
    }
    let b = src.as_bytes();
    let bom = if b.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
    let mut sc = Scanner {
        src,
        b,
        form: kind.form,
        code: Pending::default(),
        directive: None,
        pp_continues: false,
    };
    // Room for one line per `\n` (and a last line without one) spares a large file the
    // copies and twice the pages of a growing vector (lone `\r` ends are rare).
    let mut lines = Lines {
        bom,
        lines: Vec::with_capacity(memchr::memchr_iter(b'\n', b).count() + 1),
        extra: Vec::new(),
    };
    let mut start = bom;
    while start < b.len() {
        let (end, next) = line_end(b, start);
        lines.push(&sc.line(start, end, next));
        start = next;
    }
    lines
}

impl Scanner<'_> {
    fn line(&mut self, start: usize, end: usize, next: usize) -> Line {
        let b = self.b;
        let text = &b[start..end];
        let form = self.form;
        let pp = std::mem::take(&mut self.pp_continues);
        if pp || self.is_preprocessor(text) {
            self.pp_continues = text.last() == Some(&b'\\');
            return Line::new(start, end, next, form, LineKind::Preprocessor);
        }
        if let Some(f) = switch(text, form) {
            self.form = f;
            return Line::new(start, end, next, form, LineKind::Comment);
        }
        match form {
            Form::Free => self.free(start, end, next),
            Form::Fixed => self.fixed(start, end, next),
        }
    }

    fn is_preprocessor(&self, text: &[u8]) -> bool {
        let lead = text.iter().take_while(|&&c| blank(c)).count();
        let limit = match self.form {
            Form::Free => text.len(),
            // Column 6 holds the continuation mark: `#` there continues a statement.
            Form::Fixed => 5,
        };
        lead < limit && text.get(lead) == Some(&b'#')
    }
}

/// Whether the text `head` before a statement on its line leaves the statement first on
/// it: blanks, a statement label, a construct name (`outer:`).
fn first_on_line(head: &str) -> bool {
    let rest = head.trim_start();
    let rest = rest
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .trim_start();
    match rest.trim_end().strip_suffix(':') {
        Some(name) => {
            let name = name.trim_end();
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => rest.is_empty(),
    }
}

#[cfg(test)]
mod first_on_line_tests {
    use super::first_on_line;

    #[test]
    fn a_statement_is_first_on_its_line_after_a_label_or_a_construct_name() {
        for head in [
            "",
            "  ",
            "   10 ",
            "10 ",
            "  outer: ",
            "  outer : ",
            "10 outer:",
        ] {
            assert!(first_on_line(head), "{head:?}");
        }
        for head in ["  a = 1; ", "x; ", "  if (p) ", "outer ", "  a b: "] {
            assert!(!first_on_line(head), "{head:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FREE: SourceKind = SourceKind {
        form: Form::Free,
        cpp: false,
    };
    const FIXED: SourceKind = SourceKind {
        form: Form::Fixed,
        cpp: false,
    };

    fn at<'a>(src: &'a str, r: &Range<usize>) -> &'a str {
        &src[r.clone()]
    }

    /// (kind, body, continuation) of each line.
    fn summary(src: &str, kind: SourceKind) -> Vec<(LineKind, &str, bool)> {
        scan(src, kind)
            .iter()
            .map(|l| (l.kind, at(src, &l.body), l.continuation))
            .collect()
    }

    /// Every field of a line comes back from its 24 packed bytes: the terminator's length,
    /// the continuation flag and both open quotes share one byte.
    #[test]
    fn packed_flags_round_trip() {
        assert_eq!(std::mem::size_of::<Packed>(), 24);
        let mut lines = Lines::default();
        let mut want = Vec::new();
        for (k, (term, cont, sin, sout)) in [
            (0, false, None, None),
            (1, true, Some(b'\''), None),
            (2, false, None, Some(b'"')),
            (1, true, Some(b'"'), Some(b'\'')),
            (2, true, Some(b'\''), Some(b'\'')),
        ]
        .into_iter()
        .enumerate()
        {
            let start = 10 * k;
            let mut l = Line::new(
                start,
                start + 5,
                start + 5 + term,
                Form::Free,
                LineKind::Code,
            );
            l.body = start + 1..start + 4;
            l.continuation = cont;
            l.string_in = sin;
            l.string_out = sout;
            if k == 3 {
                l.amp = Some(start + 4);
            }
            lines.push(&l);
            want.push(l);
        }
        assert_eq!(lines.iter().collect::<Vec<_>>(), want);
        // Scanned: each line's next start is where the following line starts.
        let src = "a = 1\r\nb = 'x&\r  &y'\nc = 2";
        let l = scan(src, FREE);
        assert_eq!(l.len(), 4);
        for k in 0..3 {
            assert_eq!(l.next(k), l.start(k + 1));
        }
        assert_eq!(l.next(3), src.len());
        assert_eq!(l.get(1).string_out, Some(b'\''));
        assert_eq!(l.get(2).string_in, Some(b'\''));
        assert_eq!(l.get(3).string_in, None);
        assert_eq!(l.line_of(src.len() - 1), 3);
    }

    #[test]
    fn free_form_lines() {
        use LineKind::*;
        let src = "x = 1 + & ! c\n\n  ! note\n   & 2; y = 'a!b' ! d\n#ifdef X\n  !$acc parallel\n!$ use openacc\n!$omp end\n!$accx\n!dir$ ivdep\n";
        assert_eq!(
            summary(src, FREE),
            vec![
                (Code, "x = 1 + ", false),
                (Blank, "", false),
                (Comment, "", false),
                (Code, " 2; y = 'a!b'", true),
                (Preprocessor, "", false),
                (Directive(Sentinel::Acc), " parallel", false),
                (Directive(Sentinel::Conditional), " use openacc", false),
                (Directive(Sentinel::Omp), " end", false),
                (Comment, "", false),
                (Comment, "", false),
            ]
        );
        let l = scan(src, FREE);
        assert_eq!(at(src, l.get(0).comment.as_ref().unwrap()), "! c");
        assert_eq!(
            at(src, &(l.get(0).amp.unwrap()..l.get(0).amp.unwrap() + 1)),
            "&"
        );
        assert_eq!(at(src, l.get(3).mark.as_ref().unwrap()), "&");
        assert_eq!(at(src, l.get(3).comment.as_ref().unwrap()), "! d");
        assert_eq!(at(src, &l.get(5).sentinel), "!$acc");
    }

    #[test]
    fn free_form_strings_across_lines() {
        let src = "s = 'ab&\n  &c!d''e&\n      f' ! x\nt = \"q\" // '&'\n";
        let l = scan(src, FREE);
        let body: Vec<_> = l.iter().map(|l| at(src, &l.body)).collect();
        assert_eq!(body, ["s = 'ab", "c!d''e", "f'", "t = \"q\" // '&'"]);
        assert_eq!(l.get(0).string_out, Some(b'\''));
        assert_eq!(l.get(1).string_in, Some(b'\''));
        assert_eq!(l.get(2).string_in, Some(b'\''));
        assert_eq!(at(src, l.get(2).comment.as_ref().unwrap()), "! x");
        // An `&` inside a constant closed on its line is text, not a continuation.
        assert_eq!(l.get(3).amp, None);
        assert!(!l.get(3).continuation);
    }

    /// The packed lines give back every field the scanner found.
    #[test]
    fn packed_lines_round_trip() {
        let fixed = format!(
            "C comment\n  100 X = 1 ! c\n     &+ 2\n!$acc parallel\nc$acc& copy(a)\n!$ 10 continue\n      A = '{}'SEQ001\n",
            "x".repeat(60)
        );
        let free = "x = 1 + & ! c\n\n   & 2; y = 'a!b' ! d\n#ifdef X\n  !$acc parallel &\n  !$acc& copy(a)\ns = 'ab&\n  &c'\n!$ use openacc\n";
        for (src, kind) in [(fixed.as_str(), FIXED), (free, FREE)] {
            let mut sc = Scanner {
                src,
                b: src.as_bytes(),
                form: kind.form,
                code: Pending::default(),
                directive: None,
                pp_continues: false,
            };
            let mut direct = Vec::new();
            let mut start = 0;
            while start < src.len() {
                let (end, next) = line_end(src.as_bytes(), start);
                direct.push(sc.line(start, end, next));
                start = next;
            }
            let l = scan(src, kind);
            assert_eq!(l.iter().collect::<Vec<_>>(), direct);
            assert!(!l.extra.is_empty() && l.extra.len() < l.len());
        }
    }

    #[test]
    fn line_terminators_and_bom() {
        let src = "\u{feff}a = 1\r\nb = 2\rc = 3\n\r\nd";
        let l = scan(src, FREE);
        assert_eq!(l.bom, 3);
        let lines: Vec<_> = l.iter().map(|l| at(src, &(l.start..l.end))).collect();
        assert_eq!(lines, ["a = 1", "b = 2", "c = 3", "", "d"]);
        assert_eq!(l.get(0).next, 3 + 7);
        assert_eq!(l.last().unwrap().next, src.len());
        assert_eq!(l.line_of(src.len()), 4);
        assert_eq!(l.line_of(3 + 7), 1);
    }

    #[test]
    fn fixed_form_columns() {
        use LineKind::*;
        let src = format!(
            "C comment\n* star\nd debug\n   ! bang\n  100 X = 1 ! c\n     &+ 2\n     0Y = 3\n\tZ = 4\n\t1+ 5\n12\tW = 6\n      A = '{}'SEQ001\n      \n",
            "x".repeat(60)
        );
        let src = src.as_str();
        let s = summary(src, FIXED);
        assert_eq!(
            s[..4],
            [
                (Comment, "", false),
                (Comment, "", false),
                (Comment, "", false),
                (Comment, "", false)
            ]
        );
        assert_eq!(s[4], (Code, "X = 1", false));
        assert_eq!(s[5], (Code, "+ 2", true));
        assert_eq!(s[6], (Code, "Y = 3", false));
        assert_eq!(s[7], (Code, "Z = 4", false));
        assert_eq!(s[8], (Code, "+ 5", true));
        assert_eq!(s[9], (Code, "W = 6", false));
        assert_eq!(s[11], (Blank, "", false));
        let l = scan(src, FIXED);
        assert_eq!(at(src, l.get(4).label.as_ref().unwrap()), "100");
        assert_eq!(at(src, l.get(4).comment.as_ref().unwrap()), "! c");
        assert_eq!(at(src, l.get(5).mark.as_ref().unwrap()), "&");
        assert_eq!(at(src, l.get(8).mark.as_ref().unwrap()), "1");
        assert_eq!(at(src, l.get(9).label.as_ref().unwrap()), "12");
        let long = &l.get(10);
        assert_eq!(long.body.end - long.start, 72);
        assert_eq!(at(src, long.ignored.as_ref().unwrap()), "SEQ001");
    }

    #[test]
    fn fixed_form_strings_continue_to_column_72() {
        let src = "      S = 'ab  \n     1cd'\n";
        let l = scan(src, FIXED);
        assert_eq!(at(src, &l.get(0).body), "S = 'ab  ");
        assert_eq!(l.get(1).string_in, Some(b'\''));
        assert_eq!(at(src, &l.get(1).body), "cd'");
        // A `!` in a continued constant is text.
        let src = "      S = 'ab\n     1!cd' ! e\n";
        let l = scan(src, FIXED);
        assert_eq!(at(src, &l.get(1).body), "!cd'");
        assert_eq!(at(src, l.get(1).comment.as_ref().unwrap()), "! e");
    }

    #[test]
    fn fixed_form_sentinels() {
        use LineKind::*;
        let src = "c$acc parallel loop\nC$ACC& copy(a)\n*$acc end parallel loop\n!$acc0 kernels\n   !$acc wait\n!$    x = 1\nc$ 10 continue\n!$   & , y\nc$omp barrier\nc$accx\n";
        let s = summary(src, FIXED);
        assert_eq!(
            s,
            vec![
                (Directive(Sentinel::Acc), "parallel loop", false),
                (Directive(Sentinel::Acc), " copy(a)", true),
                (Directive(Sentinel::Acc), "end parallel loop", false),
                (Directive(Sentinel::Acc), " kernels", false),
                (Comment, "", false),
                (Directive(Sentinel::Conditional), "x = 1", false),
                (Directive(Sentinel::Conditional), "continue", false),
                (Directive(Sentinel::Conditional), " , y", true),
                (Directive(Sentinel::Omp), "barrier", false),
                // Column 6 of `c$accx` is a continuation mark.
                (Directive(Sentinel::Acc), "", true),
            ]
        );
        let l = scan(src, FIXED);
        assert_eq!(at(src, l.get(6).label.as_ref().unwrap()), "10");
        assert_eq!(at(src, &l.get(1).sentinel), "C$ACC");
    }

    #[test]
    fn free_form_directive_continuations() {
        let src = "!$acc parallel &  ! why\n! between\n\n  !$ACC& copy(a) &\n  !$acc   copyin(b)\n!$acc & wait\nx = 1\n";
        let l = scan(src, FREE);
        let c: Vec<_> = l
            .iter()
            .map(|l| (l.continuation, at(src, &l.body)))
            .collect();
        assert_eq!(
            c,
            [
                (false, " parallel "),
                (false, ""),
                (false, ""),
                (true, " copy(a) "),
                (true, "   copyin(b)"),
                (false, " & wait"),
                (false, "x = 1")
            ]
        );
        assert_eq!(at(src, l.get(0).comment.as_ref().unwrap()), "! why");
        assert_eq!(at(src, l.get(3).mark.as_ref().unwrap()), "&");
    }

    #[test]
    fn form_switches_apply_to_the_following_lines() {
        let src = "      X = 1\n!dir$ free\ny = 2 + &\n  3\n!dir$ fixed\n      Z = 4\n";
        let l = scan(src, FIXED);
        let forms: Vec<_> = l.iter().map(|l| l.form).collect();
        use Form::*;
        assert_eq!(forms, [Fixed, Fixed, Free, Free, Free, Fixed]);
        assert!(l.get(3).continuation);
    }

    #[test]
    fn preprocessor_lines_and_their_continuations() {
        use LineKind::*;
        let src = "#define F(x) \\\n   x + 1\n  # if 0\nx = 1\n";
        let s = summary(src, FREE);
        assert_eq!(s[0].0, Preprocessor);
        assert_eq!(s[1].0, Preprocessor);
        assert_eq!(s[2].0, Preprocessor);
        assert_eq!(s[3].0, Code);
        // Fixed form: `#` in column 6 continues a statement.
        let s = summary("      X = 1\n     #+ 2\n", FIXED);
        assert_eq!(s[1], (Code, "+ 2", true));
    }

    #[test]
    fn hostile_inputs_do_not_panic() {
        for src in [
            "",
            "&",
            "!",
            "!$",
            "!$acc",
            "'",
            "\"",
            "x = 'abc&",
            "&\n&\n&",
            "\r",
            "\r\n\r",
            "\t",
            "\t1",
            "c$",
            "     1",
            "12345678",
            "é = 'ü&\n&ö'",
            "      x = 'é",
            "\u{feff}",
            "\u{feff}!$acc",
            "#",
            "#\\",
            "!$acc &\n!$acc &\n",
            "      A = 'x\n",
        ] {
            for kind in [FREE, FIXED] {
                let l = scan(src, kind);
                for line in l.iter() {
                    for r in [&line.body, &line.sentinel] {
                        assert!(r.start <= r.end && r.end <= src.len(), "{src:?}");
                        let _ = &src[r.clone()];
                    }
                }
            }
        }
        // Every byte of a long line of UTF-8 in fixed form is cut on a character boundary.
        let src = format!("      x = '{}'\n", "é".repeat(50));
        let l = scan(&src, FIXED);
        let _ = &src[l.get(0).body.clone()];
        let _ = &src[l.get(0).ignored.clone().unwrap()];
    }
}
