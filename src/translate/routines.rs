//! What the file's `routine` directives say about its functions: which are device code,
//! which are gang routines (they need the teams of their caller).

use super::Unit;
use crate::intervals::Nested;
use std::ops::Range;

/// A function a `routine` directive names.
struct Named {
    name: String,
    /// A gang routine.
    gang: bool,
    /// A gang, worker or vector routine: its loops use the threads of its caller's team.
    threads: bool,
}

/// Each function a `routine` directive names (`routine(name)`, or the declaration after
/// it), with its level.
fn routine_names(u: &Unit) -> Vec<Named> {
    let mut out = Vec::new();
    for r in 0..u.sites.len() {
        let Some(d) = u.dir(r).filter(|d| d.name == "routine") else {
            continue;
        };
        let gang = d.has("gang");
        let threads = gang || d.has("worker") || d.has("vector");
        let named = |name: &str| Named {
            name: name.to_string(),
            gang,
            threads,
        };
        match &d.arg {
            Some(a) => out.extend(
                a.items
                    .iter()
                    .map(|x| named(x.text.rsplit("::").next().unwrap_or("").trim())),
            ),
            None => {
                if let Some(name) = u.stmts[r]
                    .as_ref()
                    .and_then(|st| u.syntax.name_before_parens(&st.toks()))
                {
                    out.push(named(&name));
                }
            }
        }
    }
    out
}

/// What the file says about its functions, gathered once per file.
pub struct Routines {
    /// Functions named by `routine` directives, with their levels.
    named: Vec<Named>,
    /// Functions defined in the file.
    defined: Vec<String>,
    /// Statements of the `routine` directives without a name (ids: sites).
    routine_bodies: Nested,
}

impl Routines {
    pub fn of(u: &Unit) -> Self {
        let routine_bodies = Nested::with_ids(
            // A routine left unchanged still makes its procedure device code in the source:
            // its loops are not host loops (a second run would see it so).
            (0..u.sites.len())
                .filter(|&r| match u.dir(r) {
                    Some(d) => d.name == "routine" && d.arg.is_none(),
                    None => u.sites[r].token().is_some() && left_unnamed_routine(u, r),
                })
                .filter_map(|r| Some((u.stmts[r].as_ref()?.bytes(), r)))
                .collect(),
        );
        Routines {
            named: routine_names(u),
            defined: u.syntax.defined_functions(),
            routine_bodies,
        }
    }

    /// Whether site `i` is in a function that a `routine` directive of this file (before
    /// the definition or a prototype, or `routine(name)`) or an OpenMP `declare target`
    /// region makes device code.
    pub fn in_device_function(&self, u: &Unit, i: usize) -> bool {
        let at = u.at(i);
        let Some(t) = u.sites[i].token() else {
            return true;
        };
        let before_definition = self.routine_bodies.contains(at);
        let names = u.syntax.enclosing_functions(t);
        let named = self
            .named
            .iter()
            .any(|n| names.iter().any(|f| u.lang.same_name(f, &n.name)));
        before_definition || named || u.syntax.in_declare_target(t)
    }

    /// Whether the statement of compute construct `c`, outside the token ranges
    /// `partitioned` (its worker and vector loops), may call a gang routine: one a `routine
    /// gang` of this file names, or a function neither defined in the file nor named by a
    /// `routine` directive here (its `routine` is in a header this file cannot see).
    pub fn may_call_gang_routine(&self, u: &Unit, c: usize, partitioned: &[Range<usize>]) -> bool {
        self.may_call(u, c, partitioned, |n| n.gang, true)
    }

    /// Whether the statement of site `c` calls a gang, worker or vector routine of this file:
    /// its loops use the threads of a team. (Not a function the file does not name: a call
    /// and a function-like macro look the same in the tokens.)
    pub fn calls_threaded_routine(&self, u: &Unit, c: usize) -> bool {
        self.may_call(u, c, &[], |n| n.threads, false)
    }

    /// Whether the statement of site `c`, outside the token ranges `partitioned`, may call a
    /// routine of the kind `level` selects (`unknown`: what a function that the file neither
    /// defines nor names in a `routine` directive may be, where its declaration may be out
    /// of the file's sight).
    fn may_call(
        &self,
        u: &Unit,
        c: usize,
        partitioned: &[Range<usize>],
        level: impl Fn(&Named) -> bool,
        unknown: bool,
    ) -> bool {
        let Some(st) = &u.stmts[c] else { return false };
        u.syntax.calls_in(st.toks()).into_iter().any(|call| {
            let name = call.name.as_str();
            if partitioned.iter().any(|r| r.contains(&call.tok))
                || name.starts_with("acc_")
                || name.starts_with("omp_")
                || u.lang.is_library_function(name)
            {
                return false;
            }
            match self.named.iter().find(|n| u.lang.same_name(&n.name, name)) {
                Some(n) => level(n),
                None => {
                    unknown
                        && call.hidden
                        && (call.member || !self.defined.iter().any(|d| u.lang.same_name(d, name)))
                }
            }
        })
    }
}

/// Whether site `r`, left unchanged, is a `routine` directive without a name. Its grammar
/// is read again in the file's dialect; a `routine` whose grammar fails counts as unnamed,
/// so that its procedure's loops are never taken for host code.
fn left_unnamed_routine(u: &Unit, r: usize) -> bool {
    use crate::directive::{Dialect, directive_name_in, parse_grammar_in};
    let s = &u.sites[r];
    let text = s.unescaped.as_deref().unwrap_or(u.src);
    let dialect = Dialect::of_language(u.lang.name());
    match parse_grammar_in(text, s.text(), u.tables, dialect) {
        Ok(d) => d.name == "routine" && d.arg.is_none(),
        Err(_) => {
            directive_name_in(text, s.text(), u.tables, dialect).as_deref() == Some("routine")
        }
    }
}
