//! The directive sites of a Fortran file: `!$acc` directives (the ones to translate),
//! `!$omp` directives (already OpenMP: a second run finds them and leaves them) and `!$`
//! conditional-compilation lines, each with all its continuation lines.
//!
//! A site's directive text is its lines' statement text joined as compilers join it
//! (sentinels, continuation marks, trailing `&`, comments and columns past 72 left out), so
//! the directive parser reads one string; [`Site::file_range`] maps any span of that string
//! back to the file bytes an edit must replace. [`Site::pieces`] keeps each line's fields
//! for a printer that rewrites a directive line by line.

use super::Problem;
use super::form::Form;
use super::lines::{Line, LineKind, Lines, Sentinel};
use crate::hash::HashSet;
use std::ops::Range;
use std::sync::OnceLock;

/// One line of a site: the fields its printers read, in 32 bits ([`super::lines::MAX_LEN`]
/// bounds a file); the line's other fields are [`Lines::get`]`(piece.line())`'s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    line: u32,
    start: u32,
    sentinel: [u32; 2],
    body: [u32; 2],
    /// `u32::MAX`: none.
    amp: u32,
    comment: [u32; 2],
    /// A blank stands before this piece's part of [`Site::text`] ([`word_break`]).
    lead: bool,
}

impl Piece {
    fn of(index: usize, l: &Line) -> Piece {
        let none = u32::MAX;
        let pair = |r: &Range<usize>| [r.start as u32, r.end as u32];
        Piece {
            line: index as u32,
            start: l.start as u32,
            sentinel: pair(&l.sentinel),
            body: pair(&l.body),
            amp: l.amp.map_or(none, |a| a as u32),
            comment: l.comment.as_ref().map_or([none, none], pair),
            lead: false,
        }
    }

    /// Bytes of [`Site::text`] before this piece's part that belong to no line (its blank).
    fn lead(&self) -> usize {
        usize::from(self.lead)
    }

    /// Index of the line in [`Lines`].
    pub fn line(&self) -> usize {
        self.line as usize
    }

    /// The line's start; bytes from here to `sentinel().start` are its indentation.
    pub fn start(&self) -> usize {
        self.start as usize
    }

    pub fn sentinel(&self) -> Range<usize> {
        self.sentinel[0] as usize..self.sentinel[1] as usize
    }

    /// The directive text on this line.
    pub fn body(&self) -> Range<usize> {
        self.body[0] as usize..self.body[1] as usize
    }

    /// The trailing `&` (free form).
    pub fn amp(&self) -> Option<usize> {
        (self.amp != u32::MAX).then_some(self.amp as usize)
    }

    /// The `!` comment at the end of the line.
    pub fn comment(&self) -> Option<Range<usize>> {
        (self.comment[0] != u32::MAX).then(|| self.comment[0] as usize..self.comment[1] as usize)
    }
}

/// [`Site::offsets`]: the piece of the last offset mapped, and where its part of the text
/// starts (the walk goes on from there, or starts again for an offset before it).
pub struct Offsets<'s> {
    site: &'s Site,
    piece: usize,
    from: usize,
}

impl Offsets<'_> {
    /// [`Site::file_offset`]`(k)`.
    pub fn file_offset(&mut self, k: usize) -> usize {
        let pieces = &self.site.pieces;
        if pieces.is_empty() {
            return self.site.span.start;
        }
        if k < self.from {
            (self.piece, self.from) = (0, 0);
        }
        // The last piece whose part starts at or before `k` (an empty piece's part starts
        // where the next one's does: the later one is it).
        while self.piece + 1 < pieces.len() {
            let start = self.from + pieces[self.piece].body().len() + pieces[self.piece + 1].lead();
            if start > k {
                break;
            }
            (self.piece, self.from) = (self.piece + 1, start);
        }
        let body = pieces[self.piece].body();
        body.start + (k - self.from).min(body.len())
    }
}

/// A directive (or conditional compilation line) with its continuation lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    pub sentinel: Sentinel,
    /// The form of its first line.
    pub form: Form,
    /// The first line's sentinel (`!$acc`, `C$ACC`, `!$`).
    pub mark: Range<usize>,
    /// From the first sentinel to the end of the last line's text (comments included,
    /// line terminator excluded); comment and blank lines between its lines are inside.
    pub span: Range<usize>,
    /// The lines it spans (indices into [`Lines`]).
    pub lines: Range<usize>,
    /// Its directive lines, in order (comment and blank lines between them left out).
    pub pieces: Vec<Piece>,
    /// The directive text after the sentinel, joined over the lines: the pieces' bodies,
    /// in order, each after its lead blank if it has one (which is how
    /// [`Site::file_offset`] maps it back without a table; a lead blank maps to the end of
    /// the piece before).
    pub text: String,
}

impl Site {
    /// File offset of byte `k` of [`Site::text`]; `text.len()` maps to the end of the last
    /// piece.
    pub fn file_offset(&self, k: usize) -> usize {
        match self.piece_of(k) {
            Some((_, j, body)) => body.start + (k - j).min(body.len()),
            None => self.span.start,
        }
    }

    /// A mapper of many offsets of `text` to the file, as [`Site::file_offset`] maps them:
    /// offsets in ascending order walk the pieces once between them all.
    pub fn offsets(&self) -> Offsets<'_> {
        Offsets {
            site: self,
            piece: 0,
            from: 0,
        }
    }

    /// The last piece whose part of `text` starts at or before byte `k`: its index, where
    /// its part starts in `text`, and its body in the file.
    fn piece_of(&self, k: usize) -> Option<(usize, usize, Range<usize>)> {
        let mut found = None;
        let mut j = 0;
        for (p, piece) in self.pieces.iter().enumerate() {
            let start = j + piece.lead();
            if start > k {
                break;
            }
            let body = piece.body();
            j = start + body.len();
            found = Some((p, start, body));
        }
        found
    }

    /// The file bytes of `text[r]`: a range ending at a piece's end ends there, not at the
    /// start of the next piece.
    pub fn file_range(&self, r: Range<usize>) -> Range<usize> {
        if r.is_empty() {
            let f = self.file_offset(r.start);
            return f..f;
        }
        self.file_offset(r.start)..self.file_offset(r.end - 1) + 1
    }

    /// Whether `text[r]` lies on one line (an edit of it leaves the other lines alone).
    pub fn one_line(&self, r: Range<usize>) -> bool {
        if r.is_empty() {
            return true;
        }
        let piece = |k: usize| self.piece_of(k).map(|p| p.0);
        piece(r.start) == piece(r.end - 1)
    }

    /// The file offset just past the site's last line terminator.
    pub fn end_of_lines(&self, lines: &Lines) -> usize {
        lines.next(self.lines.end - 1)
    }
}

/// All sites of a file, in order, and the continuation problems found.
pub fn find_sites(src: &str, lines: &Lines) -> (Vec<Site>, Vec<Problem>) {
    let mut sites: Vec<Site> = Vec::new();
    let mut errors = Vec::new();
    let ls = lines;
    // The site still open to continuation lines: its index and sentinel.
    let mut open: Option<(usize, Sentinel)> = None;
    // The open site's parenthesis depth at the end of its text ([`word_break`]).
    let mut depth = 0i32;
    for (k, l) in ls.iter().enumerate() {
        let s = match l.kind {
            LineKind::Directive(s) => s,
            LineKind::Code => {
                if let Some((i, _)) = open.take() {
                    unterminated(&sites[i], &mut errors);
                }
                continue;
            }
            // Preprocessor lines vanish before the compiler reads the directive.
            LineKind::Comment | LineKind::Blank | LineKind::Preprocessor => continue,
        };
        match open {
            Some((i, o)) if o == s && l.continuation => {
                let site = &mut sites[i];
                let body = &src[l.body.clone()];
                let mut piece = Piece::of(k, &l);
                piece.lead = s == Sentinel::Acc
                    && l.form == Form::Fixed
                    && word_break(&site.text, depth, body);
                if piece.lead {
                    site.text.push(' ');
                }
                site.text.push_str(body);
                depth += paren_balance(body);
                site.pieces.push(piece);
                site.span.end = l.end;
                site.lines.end = k + 1;
            }
            _ if l.amp.is_none() && !l.continuation && src[l.body.clone()].trim().is_empty() => {
                // A sentinel with nothing but a comment after it: compilers ignore the line.
                if let Some((i, _)) = open.take() {
                    unterminated(&sites[i], &mut errors);
                }
                continue;
            }
            _ => {
                if let Some((i, _)) = open.take() {
                    unterminated(&sites[i], &mut errors);
                }
                if l.continuation {
                    errors.push(Problem {
                        offset: l.sentinel.start,
                        message: "continuation line without a directive to continue".into(),
                        related: None,
                        rule: None,
                    });
                }
                depth = paren_balance(&src[l.body.clone()]);
                sites.push(Site {
                    sentinel: s,
                    form: l.form,
                    mark: l.sentinel.clone(),
                    span: l.sentinel.start..l.end,
                    lines: k..k + 1,
                    pieces: vec![Piece::of(k, &l)],
                    text: src[l.body.clone()].to_string(),
                });
            }
        }
        let i = sites.len() - 1;
        // Free form: a trailing `&` asks for a continuation line; fixed form: any directive
        // line of the same sentinel with a column-6 mark continues it.
        open = match l.form {
            Form::Free if l.amp.is_none() => None,
            _ => Some((i, s)),
        };
    }
    if let Some((i, _)) = open {
        unterminated(&sites[i], &mut errors);
    }
    // Kept as long as the file's translation: the room left by doubling (up to half the
    // sites' 104 bytes each) is given back.
    sites.shrink_to_fit();
    (sites, errors)
}

/// A free-form directive whose last line ends with `&` and no continuation line follows.
/// Fixed form ignores blanks, so `!$acc kernels` continued by `!$acc+default(present)` reads
/// `kernels default(present)` where the bodies joined alone would be one unknown word: a
/// blank goes between them when, outside parentheses, the word ending `text` is a directive
/// or clause keyword and it does not join the word starting `next` into another one (`copy`
/// + `in(a)` stays `copyin(a)`, `priv` + `ate(i)` stays `private(i)`).
fn word_break(text: &str, depth: i32, next: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if depth != 0 || !next.starts_with(word) {
        return false;
    }
    let before = &text[text.trim_end_matches(word).len()..];
    let after = &next[..next.find(|c: char| !word(c)).unwrap_or(next.len())];
    let keywords = keywords();
    !before.is_empty()
        && keywords.contains(&before.to_ascii_lowercase())
        && !keywords.contains(&format!("{before}{after}").to_ascii_lowercase())
}

/// The words of the directive names and the clause names of the built-in tables.
fn keywords() -> &'static HashSet<String> {
    static WORDS: OnceLock<HashSet<String>> = OnceLock::new();
    WORDS.get_or_init(|| {
        let t = crate::rules::Tables::builtin();
        let directives = t.directives.iter().flat_map(|d| d.name.split_whitespace());
        let clauses = t.clauses.iter().flat_map(|c| {
            std::iter::once(c.name.as_str()).chain(c.aliases.iter().map(String::as_str))
        });
        std::iter::once("end")
            .chain(directives)
            .chain(clauses)
            .map(str::to_ascii_lowercase)
            .collect()
    })
}

/// Opening minus closing parentheses in `s`.
fn paren_balance(s: &str) -> i32 {
    s.bytes().fold(0, |n, b| match b {
        b'(' => n + 1,
        b')' => n - 1,
        _ => n,
    })
}

fn unterminated(site: &Site, errors: &mut Vec<Problem>) {
    let last = site.pieces.last();
    if let Some(amp) = last
        .and_then(Piece::amp)
        .filter(|_| site.form == Form::Free)
    {
        errors.push(Problem {
            offset: amp,
            message: "the directive is continued with '&' but no directive line follows".into(),
            related: None,
            rule: None,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fortran::form::SourceKind;
    use crate::fortran::lines::scan;

    fn sites(src: &str, form: Form) -> (Vec<Site>, Vec<Problem>) {
        find_sites(src, &scan(src, SourceKind { form, cpp: false }))
    }

    #[test]
    fn free_form_sites_join_their_lines() {
        let src = "program p\n  !$ACC Parallel Loop &  ! why\n  ! note\n\n  !$acc& copy(a(1:n)) &\n  !$acc   if(x .and. y)\n  do i = 1, n\n  !$acc end parallel loop\nend\n";
        let (s, e) = sites(src, Form::Free);
        assert!(e.is_empty());
        assert_eq!(s.len(), 2);
        let d = &s[0];
        assert_eq!(d.sentinel, Sentinel::Acc);
        assert_eq!(d.text, " Parallel Loop  copy(a(1:n))    if(x .and. y)");
        assert_eq!(&src[d.mark.clone()], "!$ACC");
        assert_eq!(d.lines, 1..6);
        assert_eq!(
            &src[d.span.clone()],
            &src[src.find("!$ACC").unwrap()..src.find("\n  do").unwrap()]
        );
        assert_eq!(d.pieces.len(), 3);
        assert_eq!(&src[d.pieces[0].comment().unwrap()], "! why");
        assert_eq!(
            &src[d.pieces[0].start()..d.pieces[0].sentinel().start],
            "  "
        );
        // Spans of the joined text map back to the file.
        for word in ["Parallel", "copy(a(1:n))", "if(x .and. y)", "(1:n)"] {
            let k = d.text.find(word).unwrap();
            let r = d.file_range(k..k + word.len());
            assert_eq!(&src[r], word);
            assert!(d.one_line(k..k + word.len()));
        }
        let all = 1..d.text.len();
        assert!(!d.one_line(all.clone()));
        let r = d.file_range(all);
        assert_eq!(&src[r.start..r.start + 8], "Parallel");
        assert!(src[..r.end].ends_with("if(x .and. y)"));
        assert_eq!(d.file_offset(d.text.len()), r.end);
        assert_eq!(s[1].text, " end parallel loop");
    }

    #[test]
    fn fixed_form_sites() {
        let src = "c$acc parallel loop\nC comment\nC$ACC& copy(a)\n*$acc1 copyin(b)\n      do i = 1, n\n!$acc& wait\n";
        let (s, e) = sites(src, Form::Fixed);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].text, "parallel loop copy(a) copyin(b)");
        assert_eq!(s[0].lines, 0..4);
        assert_eq!(s[0].pieces.len(), 3);
        let k = s[0].text.find("copyin").unwrap();
        assert_eq!(&src[s[0].file_range(k..k + 6)], "copyin");
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].offset, src.find("!$acc&").unwrap());
    }

    /// Fixed form ignores blanks: a continuation written right after its column-6 mark
    /// starts a new word where the word before the break is complete, and continues the
    /// word otherwise.
    #[test]
    fn fixed_form_continuations_without_a_blank() {
        let src = "!$acc kernels\n!$acc+default(present)\n      x = 1\n\
                   c$acc parallel loop copy\nc$acc&in(a) priv\nc$acc&ate(i) copy(a,data\nc$acc&x)gang\nc$acc&vector\n\
                   !$acc parallel\n!$acc+loop\n";
        let (s, e) = sites(src, Form::Fixed);
        assert!(e.is_empty());
        let t: Vec<_> = s.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(
            t,
            [
                "kernels default(present)",
                "parallel loop copyin(a) private(i) copy(a,datax)gang vector",
                "parallel loop"
            ]
        );
        // The words of one line map back to the file, the blank to the end of the line
        // before it.
        let mut mapped = 0;
        for site in &s {
            for word in site
                .text
                .split([' ', '(', ')', ','])
                .filter(|w| !w.is_empty())
            {
                let k = site.text.find(word).unwrap();
                if site.one_line(k..k + word.len()) {
                    assert_eq!(&src[site.file_range(k..k + word.len())], word);
                    mapped += 1;
                }
            }
        }
        assert_eq!(mapped, 13);
        let k = s[0].text.find(' ').unwrap();
        assert_eq!(s[0].file_offset(k), src.find('\n').unwrap());
        // Free form keeps its blanks as written (there they are significant).
        let (s, _) = sites("!$acc kernels&\n!$acc&default(present)\n", Form::Free);
        assert_eq!(s[0].text, " kernelsdefault(present)");
    }

    #[test]
    fn omp_and_conditional_sites() {
        let src = "!$ use openacc\n!$omp target teams &\n!$omp& distribute\n  !$ x = acc_get_num_devices(acc_device_nvidia) + &\n  !$& 1\n";
        let (s, e) = sites(src, Form::Free);
        assert!(e.is_empty());
        let k: Vec<_> = s.iter().map(|s| (s.sentinel, s.text.as_str())).collect();
        assert_eq!(
            k,
            [
                (Sentinel::Conditional, " use openacc"),
                (Sentinel::Omp, " target teams  distribute"),
                (
                    Sentinel::Conditional,
                    " x = acc_get_num_devices(acc_device_nvidia) +  1"
                ),
            ]
        );
    }

    #[test]
    fn unterminated_continuations_are_reported() {
        let src = "!$acc parallel &\nx = 1\n!$acc kernels &\n!$omp& barrier\n!$acc wait &";
        let (s, e) = sites(src, Form::Free);
        assert_eq!(s.len(), 4);
        let at: Vec<_> = e.iter().map(|e| e.offset).collect();
        assert_eq!(at, [15, 37, src.len() - 1]);
        assert_eq!(s[2].text, "& barrier");
    }

    #[test]
    fn a_sentinel_with_only_a_comment_is_no_directive() {
        let src = "!$acc parallel &\n!$acc loop & ! c\n!$acc & reduction(+:x)\n!$acc ! kernels\n  !$acc\n!$acc end parallel\n";
        let (s, e) = sites(src, Form::Free);
        assert!(e.is_empty());
        let t: Vec<_> = s.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(t, [" parallel  loop  reduction(+:x)", " end parallel"]);
    }

    #[test]
    fn preprocessor_lines_between_continuations() {
        let src = "!$acc parallel &\n#ifdef X\n!$acc copy(a)\n#endif\n";
        let (s, e) = sites(src, Form::Free);
        assert!(e.is_empty());
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].text, " parallel  copy(a)");
    }

    /// The table of (offset in `text`, file offset) per piece that sites kept before
    /// `file_offset` walked the pieces, with its lookups: the oracle of the walk.
    fn old_file_offset(s: &Site, src: &str, k: usize) -> (usize, usize) {
        let mut map = Vec::new();
        let mut text = String::new();
        for p in &s.pieces {
            if p.lead {
                text.push(' ');
            }
            map.push((text.len(), p.body().start));
            text.push_str(&src[p.body()]);
        }
        assert_eq!(text, s.text);
        let p = map.partition_point(|&(j, _)| j <= k);
        let (j, f) = map[p - 1];
        let piece_len = map.get(p).map_or(text.len(), |n| n.0) - j;
        (f + (k - j).min(piece_len), p)
    }

    #[test]
    fn file_offsets_as_the_old_table_gave_them() {
        let srcs = [
            "!$acc parallel loop &  ! why\n  ! note\n\n  !$acc& copy(a(1:n)) &\n  !$acc   if(x)\n",
            "!$acc kernels &\n!$acc&&\n!$acc& &\n!$acc& copy(b)\n",
            "!$acc wait\n!$acc update &\n!$acc&\n!$acc& host(a)\n",
            "!$acc kernels\n!$acc+default(none)\n!$acc+gang\n!$acc&vector\n",
        ];
        for src in srcs {
            let form = if src.contains('+') {
                Form::Fixed
            } else {
                Form::Free
            };
            let (sites, _) = sites(src, form);
            for s in &sites {
                for k in 0..=s.text.len() + 2 {
                    let (f, piece) = old_file_offset(s, src, k);
                    assert_eq!(s.file_offset(k), f, "{src:?} {k}");
                    for e in k + 1..=s.text.len() {
                        let (_, last) = old_file_offset(s, src, e - 1);
                        assert_eq!(s.one_line(k..e), piece == last, "{src:?} {k}..{e}");
                    }
                }
            }
        }
    }

    /// The walking mapper gives what `file_offset` gives, for offsets in ascending order,
    /// in descending order and in a scrambled one, repeated ones too.
    #[test]
    fn offsets_walked_once_match_file_offset() {
        let mut long = String::from("!$acc parallel loop &\n");
        for i in 0..200 {
            long.push_str(match i % 4 {
                0 => "!$acc& copy(a) &\n",
                1 => "!$acc&&\n",
                2 => "  ! note\n!$acc& &\n",
                _ => "  !$acc&   present(b(1:n)) & ! c\n",
            });
        }
        long.push_str("!$acc& if(x)\n");
        let srcs = [
            "!$acc parallel loop &  ! why\n  ! note\n\n  !$acc& copy(a(1:n)) &\n  !$acc   if(x)\n",
            "!$acc kernels &\n!$acc&&\n!$acc& &\n!$acc& copy(b)\n",
            "!$acc wait\n!$acc update &\n!$acc&\n!$acc& host(a)\n",
            long.as_str(),
        ];
        let mut mapped = 0;
        for src in srcs {
            let (sites, _) = sites(src, Form::Free);
            assert!(src != long || sites[0].pieces.len() > 200, "one long site");
            for s in &sites {
                let n = s.text.len() + 2;
                let up: Vec<usize> = (0..=n).flat_map(|k| [k, k]).collect();
                let down: Vec<usize> = (0..=n).rev().collect();
                let scrambled: Vec<usize> = (0..=n).map(|k| k * 7919 % (n + 1)).collect();
                for order in [up, down, scrambled] {
                    let mut walk = s.offsets();
                    for k in order {
                        assert_eq!(walk.file_offset(k), s.file_offset(k), "{src:?} {k}");
                        mapped += 1;
                    }
                }
            }
        }
        assert!(mapped > 5_000, "{mapped}");
    }

    /// A site keeps no table of its pieces' offsets (100,000 directives held 4 MB of it).
    #[test]
    fn a_site_is_small() {
        assert!(std::mem::size_of::<Site>() <= 104);
    }

    #[test]
    fn hostile_inputs_do_not_panic() {
        for src in [
            "!$acc",
            "!$acc &",
            "!$acc&",
            "!$",
            "!$&",
            "c$acc&",
            "!$acc '&\n!$acc x'",
            "!$acc é&\n!$acc& ü",
            "!$acc\r\n!$acc\r",
            "\u{feff}!$acc wait",
            "c$acc parallel\nc$acc\u{f7e9} copy(a)\nc$accé\n",
        ] {
            for form in [Form::Free, Form::Fixed] {
                let (sites, _) = sites(src, form);
                for s in &sites {
                    for k in 0..=s.text.len() {
                        let f = s.file_offset(k);
                        assert!(f <= src.len());
                    }
                    for k in 0..s.text.len() {
                        let _ = s.file_range(k..s.text.len());
                    }
                }
            }
        }
    }
}
