//! Directives a plan adds before statements inside its construct (`Insert::BeforeStatement`:
//! the loops of a `kernels` region that run in parallel). Each is a `!$omp` line before the
//! `do` statement, in the spelling of the construct's directive. Only loop constructs over a
//! `do` loop are written: their end directive is optional, so nothing goes after the loop.

use super::{FortranPrinter, Spelling, directive_lines};
use crate::edit::Edit;
use crate::intent::{Insert, Plan};
use crate::unit::Unit;

impl FortranPrinter<'_> {
    /// The lines `plan` of site `i` adds before statements of its region, or why one cannot
    /// be written (then the construct stays OpenACC).
    pub(super) fn inserted_lines(
        &self,
        u: &Unit,
        plan: &Plan,
        i: usize,
    ) -> Result<Vec<Edit>, &'static str> {
        let mut out = Vec::new();
        for x in &plan.inserts {
            let Insert::BeforeStatement {
                stmt, directive, ..
            } = x
            else {
                continue;
            };
            if out.is_empty() && self.has_versions(u, i) {
                // The other versions copy the region's original bytes, without these lines: a
                // `target teams` there would run the loop once per team.
                return Err(
                    "its region gets versions by the presence of OPTIONAL arguments and directives added inside it",
                );
            }
            let name = directive.name.spelled("do");
            // A loop-associated construct: the last word names what applies to the loop.
            let over_loop = matches!(
                name.split_whitespace().last(),
                Some("do" | "simd" | "distribute" | "loop")
            );
            if !over_loop || u.syntax.loop_at(*stmt).is_none() {
                return Err("it needs a directive added around a statement of its region");
            }
            let at = u.syntax.token_range(*stmt).start;
            let lines = &self.front.lines;
            let l = lines.get(lines.line_of(at));
            let head = &self.src[l.start..at.max(l.start)];
            if !lines.first_on_line(self.src, at) {
                return Err("a loop of its region shares its line with another statement");
            }
            let mut directive = directive.clone();
            if directive.name.has("simd") && !self.simd_fits(at, &directive) {
                directive.name.remove("simd");
            }
            let indent = &head[..head.len() - head.trim_start().len()];
            let sp = Spelling {
                form: l.form,
                ..Spelling::of(self.src, self.site(i))
            };
            let text = directive_lines(sp, indent, &directive.text("do"), u.eol);
            out.push(Edit::insert(l.start, format!("{text}{}", u.eol)));
        }
        Ok(out)
    }

    /// Whether the construct of site `i` names OPTIONAL arguments, which give it versions.
    fn has_versions(&self, u: &Unit, i: usize) -> bool {
        let (k, Some(d)) = (self.acc_sites[i], u.dir(i)) else {
            return false;
        };
        let vars = u.site_facts(i).map_or(&[][..], |f| &f.vars[..]);
        !crate::fortran::optional_args::tested(self.front, k, d, vars, u.tables).is_empty()
    }

    /// Whether `simd` may stay on `directive` before the loop whose `do` statement starts at
    /// byte `at`: gfortran 12 fails on `simd` with `collapse(n)`, n ≥ 2, over a loop whose
    /// step is not 1 or -1 ([`crate::fortran::simd_collapse`]).
    fn simd_fits(&self, at: usize, directive: &crate::intent::OmpDirective) -> bool {
        let n = directive
            .clauses
            .iter()
            .find(|c| c.name == "collapse")
            .and_then(|c| c.arg.as_deref()?.trim().parse::<usize>().ok())
            .unwrap_or(1);
        if n < 2 {
            return true;
        }
        let st = &self.front.structure;
        let Some(l) = st
            .loops_starting_in(at..at + 1)
            .first()
            .and_then(|lp| st.loop_at(lp.stmt()))
        else {
            return false;
        };
        let (loops, _) = st.tight_prefix(&self.front.lexed, &self.front.sites, l, n);
        crate::fortran::simd_collapse::unit_steps(self.src, self.front, loops)
    }
}
