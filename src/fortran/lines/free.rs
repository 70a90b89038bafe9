//! Free-form lines: `!` comments and sentinels at any column, `&` continuations at the
//! end of a line and optionally at the start of the next.

use super::{Line, LineKind, Pending, Scanner, Sentinel, blank, scan_text, sentinel_word};
use crate::fortran::form::Form;
use std::ops::Range;

impl Scanner<'_> {
    pub(super) fn free(&mut self, start: usize, end: usize, next: usize) -> Line {
        let b = self.b;
        let lead = start + b[start..end].iter().take_while(|&&c| blank(c)).count();
        if lead == end {
            return Line::new(start, end, next, Form::Free, LineKind::Blank);
        }
        if b[lead] == b'!' {
            let rest = &b[lead + 1..end];
            if rest.first() == Some(&b'$') {
                let after = &rest[1..];
                let word = sentinel_word(after).filter(|_| {
                    after
                        .get(3)
                        .is_none_or(|&c| blank(c) || c == b'&' || c == b'!')
                });
                let (sentinel, len) = match word {
                    Some(s) => (Some(s), 5),
                    None if after.first().is_none_or(|&c| blank(c) || c == b'&') => {
                        (Some(Sentinel::Conditional), 2)
                    }
                    None => (None, 0),
                };
                if let Some(s) = sentinel {
                    return self.free_directive(start, end, next, s, lead..lead + len);
                }
            }
            return Line::new(start, end, next, Form::Free, LineKind::Comment);
        }
        // A source line.
        self.directive = None;
        let mut line = Line::new(start, end, next, Form::Free, LineKind::Code);
        let pending = std::mem::take(&mut self.code);
        let mut from = start;
        if pending.open {
            line.continuation = true;
            if b[lead] == b'&' {
                line.mark = Some(lead..lead + 1);
                from = lead + 1;
            } else if pending.quote.is_some() {
                // gfortran and flang resume a character constant at the first non-blank.
                from = lead;
            }
            line.string_in = pending.quote;
        }
        self.free_text(
            &mut line,
            from,
            pending.open.then_some(pending.quote).flatten(),
        );
        self.code = Pending {
            open: line.amp.is_some(),
            quote: line.string_out,
        };
        line
    }

    /// Body, trailing `&` and comment of a free-form line whose text starts at `from`.
    fn free_text(&self, line: &mut Line, from: usize, quote: Option<u8>) {
        let b = self.b;
        let s = scan_text(b, from, line.end, quote);
        line.comment = s.comment;
        let amp = s.last > from && b[s.last - 1] == b'&';
        // An `&` ending a line continues it; inside a character constant only when it is the
        // last character of the line (no comment can follow a constant).
        if amp && (s.open.is_none() || line.comment.is_none()) {
            line.amp = Some(s.last - 1);
            line.body = from..s.last - 1;
            line.string_out = s.open;
        } else {
            line.body = from..s.last;
        }
    }

    fn free_directive(
        &mut self,
        start: usize,
        end: usize,
        next: usize,
        s: Sentinel,
        sentinel: Range<usize>,
    ) -> Line {
        let b = self.b;
        let mut line = Line::new(start, end, next, Form::Free, LineKind::Directive(s));
        line.sentinel = sentinel.clone();
        let mut from = sentinel.end;
        let pending = match self.directive.take() {
            Some((k, p)) if k == s && p.open => Some(p),
            _ => None,
        };
        let after = from + b[from..end].iter().take_while(|&&c| blank(c)).count();
        let mut quote = None;
        if let Some(p) = pending {
            line.continuation = true;
            line.string_in = p.quote;
            quote = p.quote;
            if after < end && b[after] == b'&' {
                line.mark = Some(after..after + 1);
                from = after + 1;
            } else if p.quote.is_some() {
                from = after;
            }
        }
        self.free_text(&mut line, from, quote);
        // Conditional compilation lines are source lines to a compiler with OpenMP: they
        // continue with other conditional lines only.
        self.directive = Some((
            s,
            Pending {
                open: line.amp.is_some(),
                quote: line.string_out,
            },
        ));
        line
    }
}
