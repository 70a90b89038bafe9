//! Lines that runtime translations make longer than the form allows, broken with
//! continuations.

use super::Cx;
use crate::edit::Edit;
use crate::fortran::form::Form;
use crate::fortran::print::limit;
use crate::rules::id;

impl Cx<'_> {
    /// Lines the expression replacements make longer than the form allows are broken with
    /// continuations: at a token boundary of the original text, else after a comma of the
    /// inserted text.
    pub(super) fn fit(&mut self, mut exprs: Vec<Edit>) {
        exprs.sort_by_key(|e| e.range.start);
        let mut k = 0;
        while k < exprs.len() {
            let li = self.front.lines.line_of(exprs[k].range.start);
            let mut j = k + 1;
            while j < exprs.len() && self.front.lines.line_of(exprs[j].range.start) == li {
                j += 1;
            }
            let group = &exprs[k..j];
            match self.fitted(li, group) {
                Ok(Some(e)) => self.edits.push(e),
                Ok(None) => self.edits.extend(group.iter().cloned()),
                Err(()) => {
                    for e in group {
                        let at = e.range.start;
                        let k = self.front.lexed.tokens.partition_point(|t| t.start() < at);
                        let name = self.front.lexed.lower(self.src, k);
                        let unit = self
                            .front
                            .lexed
                            .stmt_at(at)
                            .and_then(|s| self.front.structure.unit_of(s));
                        let lim = limit(self.lines().get(li).form);
                        let why = format!(
                            "its translation would make the line longer than {lim} columns, and the line has no place to break it; split the statement"
                        );
                        self.refuse(at, id::RUNTIME_FORTRAN_HELPER, &name, unit, why);
                    }
                }
            }
            k = j;
        }
    }

    /// One edit from the first replacement on line `li` to the end of its code, with
    /// breaks; None when the line fits (or spans lines: not measured), Err when it cannot
    /// be broken to fit.
    pub(super) fn fitted(&self, li: usize, group: &[Edit]) -> Result<Option<Edit>, ()> {
        let src = self.src;
        let line = &self.lines().get(li);
        let end = line.amp.map_or(line.body.end, |a| a + 1);
        if group.iter().any(|e| e.range.end > end) || line.ignored.is_some() {
            return Ok(None);
        }
        let lim = limit(line.form);
        let start = group[0].range.start;
        // The new text from `start` to `end`, with candidate breaks (offset, original).
        let mut text = String::new();
        let mut cands: Vec<(usize, bool)> = Vec::new();
        let mut at = start;
        let all = &self.lx().tokens;
        let first = all.partition_point(|t| t.start() < start);
        let toks: Vec<usize> = all[first..]
            .iter()
            .take_while(|t| t.start() < end)
            .map(|t| t.start())
            .collect();
        let orig = |from: usize, to: usize, text: &mut String, cands: &mut Vec<(usize, bool)>| {
            for &t in toks.iter().filter(|&&t| t >= from && t < to) {
                cands.push((text.len() + t - from, true));
            }
            text.push_str(&src[from..to]);
        };
        for e in group {
            orig(at, e.range.start, &mut text, &mut cands);
            cands.push((text.len(), true));
            let b = text.len();
            for (p, _) in e.text.match_indices(", ") {
                cands.push((b + p + 2, false));
            }
            text.push_str(&e.text);
            at = e.range.end;
        }
        orig(at, end, &mut text, &mut cands);
        let head = src[line.start..start].chars().count();
        if head + text.chars().count() <= lim {
            return Ok(None);
        }
        let lead: String = src[line.start..line.body.start.max(line.start)]
            .chars()
            .chain(src[line.body.start..].chars().take_while(|c| *c == ' '))
            .collect();
        let cont = match line.form {
            Form::Free => format!("{}  ", " ".repeat(lead.chars().count())),
            Form::Fixed => format!(
                "     &{}",
                " ".repeat(lead.chars().count().saturating_sub(6) + 2)
            ),
        };
        let amp = usize::from(line.form == Form::Free);
        let mut out = String::new();
        let mut from = 0;
        let mut width = head;
        loop {
            if width + text[from..].chars().count() <= lim {
                out.push_str(&text[from..]);
                break;
            }
            let fits = |&&(c, _): &&(usize, bool)| {
                c > from
                    && width + text[from..c].chars().count() + amp <= lim
                    && !text[from..c].trim().is_empty()
            };
            let pick = cands
                .iter()
                .filter(|c| c.1)
                .rfind(fits)
                .or_else(|| cands.iter().filter(|c| !c.1).rfind(fits));
            let Some(&(c, _)) = pick else {
                return Err(());
            };
            out.push_str(&text[from..c]);
            // The blanks before the break are between tokens: none is left at a line's end.
            if line.form == Form::Fixed {
                out.truncate(out.trim_end_matches(' ').len());
            }
            if line.form == Form::Free {
                if !out.ends_with(' ') {
                    out.push(' ');
                }
                out.push('&');
            }
            out.push_str(self.eol);
            out.push_str(&cont);
            width = cont.chars().count();
            from = c;
        }
        Ok(Some(Edit::replace(start..end, out)))
    }
}
