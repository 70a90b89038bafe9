//! Fixed-form lines: comment and sentinel characters in column 1, the label field in
//! columns 1-5, the continuation mark in column 6, and text past column 72 ignored.

use super::{
    Line, LineKind, Pending, Scanner, Sentinel, blank, floor_boundary, scan_text, sentinel_word,
};
use crate::fortran::form::Form;

impl Scanner<'_> {
    pub(super) fn fixed(&mut self, start: usize, end: usize, next: usize) -> Line {
        let b = self.b;
        let text = &b[start..end];
        let first = text.first().copied().unwrap_or(b' ');
        // Directive sentinels in columns 1-5 (conditional compilation: 1-2).
        if matches!(first, b'!' | b'c' | b'C' | b'*') && text.get(1) == Some(&b'$') {
            if let Some(s) = text.get(2..5).and_then(sentinel_word) {
                return self.fixed_directive(start, end, next, s, 5);
            }
            let label = text.get(2..5.min(text.len())).unwrap_or(&[]);
            if label.iter().all(|c| *c == b' ' || c.is_ascii_digit()) {
                return self.fixed_directive(start, end, next, Sentinel::Conditional, 2);
            }
        }
        if matches!(first, b'c' | b'C' | b'*' | b'!' | b'd' | b'D') {
            return Line::new(start, end, next, Form::Fixed, LineKind::Comment);
        }
        // Label field and continuation column, with gfortran's reading of a tab there: a
        // tab then a digit 1-9 makes that digit the continuation mark, a tab then anything
        // else starts the statement text in column 7.
        let mut i = 0;
        let mut col = 1;
        let mut mark = None;
        let mut bang = None;
        while i < text.len() && col <= 6 {
            match text[i] {
                b'\t' => {
                    if text.get(i + 1).is_some_and(|c| (b'1'..=b'9').contains(c)) {
                        mark = Some(i + 1);
                        i += 2;
                    } else {
                        i += 1;
                    }
                    col = 7;
                    break;
                }
                b'!' if col < 6 => {
                    bang = Some(i);
                    break;
                }
                c if col == 6 => {
                    if c != b' ' && c != b'0' {
                        mark = Some(i);
                    }
                    i += 1;
                    col = 7;
                }
                _ => {
                    i += 1;
                    col += 1;
                }
            }
        }
        // Columns count bytes: a character across column 6 or 7 is kept whole.
        while !self.src.is_char_boundary(start + i) {
            i += 1;
        }
        let label_end = floor_boundary(
            self.src,
            start + mark.unwrap_or(i).min(bang.unwrap_or(usize::MAX)).min(5),
        ) - start;
        let label_field = &text[..label_end.min(text.len())];
        let label_blank = label_field.iter().all(|&c| blank(c));
        // Columns 1-72 hold the line; gfortran counts a tab after column 6 as one column.
        let col72 = |from: usize, col: usize| floor_boundary(self.src, (from + 73 - col).min(end));
        if bang.is_some() && label_blank {
            return Line::new(start, end, next, Form::Fixed, LineKind::Comment);
        }
        let (body_from, body_to) = match bang {
            Some(k) => (start + k, start + k),
            None if col >= 7 => (start + i, col72(start + i, 7).max(start + i)),
            None => (start + i, start + i),
        };
        let blank_body = b[body_from..body_to].iter().all(|&c| blank(c));
        if label_blank && mark.is_none() && blank_body && bang.is_none() {
            let mut line = Line::new(start, end, next, Form::Fixed, LineKind::Blank);
            line.ignored = (body_to < end).then_some(body_to..end);
            return line;
        }
        self.directive = None;
        let mut line = Line::new(start, end, next, Form::Fixed, LineKind::Code);
        if !label_blank {
            let f = label_field.iter().position(|&c| !blank(c)).unwrap_or(0);
            let l = label_field
                .iter()
                .rposition(|&c| !blank(c))
                .map_or(0, |k| k + 1);
            line.label = Some(start + f..start + l);
        }
        let pending = std::mem::take(&mut self.code);
        let mut quote = None;
        if let Some(m) = mark {
            line.continuation = true;
            line.mark = Some(start + m..start + m + 1);
            quote = pending.quote;
            line.string_in = quote;
        }
        let s = scan_text(b, body_from, body_to, quote);
        // A character constant continued on the next line keeps its trailing blanks.
        line.body = body_from..if s.open.is_some() { body_to } else { s.last };
        line.comment = match bang {
            Some(k) => Some(start + k..col72(start, 1).max(start + k)),
            None => s.comment,
        };
        let kept = line
            .comment
            .as_ref()
            .map_or(body_to, |c| c.end.max(body_to));
        line.ignored = (kept < end).then_some(kept..end);
        line.string_out = s.open;
        self.code = Pending {
            open: true,
            quote: s.open,
        };
        line
    }

    fn fixed_directive(
        &mut self,
        start: usize,
        end: usize,
        next: usize,
        s: Sentinel,
        len: usize,
    ) -> Line {
        let b = self.b;
        let text = &b[start..end];
        let mut line = Line::new(start, end, next, Form::Fixed, LineKind::Directive(s));
        line.sentinel = start..start + len;
        if len < 5 {
            let field = &text[len..5.min(text.len())];
            if let (Some(f), Some(l)) = (
                field.iter().position(|&c| !blank(c)),
                field.iter().rposition(|&c| !blank(c)),
            ) {
                line.label = Some(start + len + f..start + len + l + 1);
            }
        }
        let col6 = text.get(5).copied().unwrap_or(b' ');
        let continued = !matches!(col6, b' ' | b'0' | b'\t');
        let pending = match self.directive.take() {
            Some((k, p)) if k == s => Some(p),
            _ => None,
        };
        let mut quote = None;
        // The mark is column 6's whole character (a non-ASCII one too).
        let body_from = super::ceil_boundary(self.src, (start + 6).min(end));
        if continued {
            line.continuation = true;
            line.mark = Some(start + 5..body_from);
            quote = pending.and_then(|p| p.quote);
            line.string_in = quote;
        }
        let body_to = floor_boundary(self.src, (start + 72).min(end)).max(body_from);
        let sc = scan_text(b, body_from, body_to, quote);
        line.body = body_from..if sc.open.is_some() { body_to } else { sc.last };
        line.comment = sc.comment;
        line.ignored = (body_to < end).then_some(body_to..end);
        line.string_out = sc.open;
        self.directive = Some((
            s,
            Pending {
                open: true,
                quote: sc.open,
            },
        ));
        line
    }
}
