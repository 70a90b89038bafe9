//! What the file's `routine` directives say about its functions: which are device code,
//! which are gang routines (they need the teams of their caller).

use super::Unit;
use crate::intervals::Nested;
use std::ops::Range;

/// Each function a `routine` directive names (`routine(name)`, or the declaration after
/// it), and whether it is a gang routine.
fn routine_names(u: &Unit) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for r in 0..u.sites.len() {
        let Some(d) = u.dir(r).filter(|d| d.name == "routine") else {
            continue;
        };
        let gang = d.has("gang");
        match &d.arg {
            Some(a) => out.extend(a.items.iter().map(|x| {
                let n = x.text.rsplit("::").next().unwrap_or("").trim();
                (n.to_string(), gang)
            })),
            None => {
                if let Some(name) = u.stmts[r]
                    .as_ref()
                    .and_then(|st| u.syntax.name_before_parens(&st.toks))
                {
                    out.push((name, gang));
                }
            }
        }
    }
    out
}

/// What the file says about its functions, gathered once per file.
pub struct Routines {
    /// Functions named by `routine` directives, and whether each is a gang routine.
    named: Vec<(String, bool)>,
    /// Functions defined in the file.
    defined: Vec<String>,
    /// Statements of the `routine` directives without a name (ids: sites).
    routine_bodies: Nested,
}

impl Routines {
    pub fn of(u: &Unit) -> Self {
        let routine_bodies = Nested::with_ids(
            (0..u.sites.len())
                .filter(|&r| {
                    u.dir(r)
                        .is_some_and(|d| d.name == "routine" && d.arg.is_none())
                })
                .filter_map(|r| Some((u.stmts[r].as_ref()?.bytes.clone(), r)))
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
        let Some(t) = u.sites[i].token else {
            return true;
        };
        let before_definition = self.routine_bodies.contains(at);
        let names = u.syntax.enclosing_functions(t);
        let named = self.named.iter().any(|(n, _)| names.contains(n));
        before_definition || named || u.syntax.in_declare_target(t)
    }

    /// Whether the statement of compute construct `c`, outside the token ranges
    /// `partitioned` (its worker and vector loops), may call a gang routine: one a `routine
    /// gang` of this file names, or a function neither defined in the file nor named by a
    /// `routine` directive here (its `routine` is in a header this file cannot see).
    pub fn may_call_gang_routine(&self, u: &Unit, c: usize, partitioned: &[Range<usize>]) -> bool {
        let Some(st) = &u.stmts[c] else { return false };
        u.syntax.calls_in(st.toks.clone()).into_iter().any(|call| {
            let name = call.name.as_str();
            if partitioned.iter().any(|r| r.contains(&call.tok))
                || name.starts_with("acc_")
                || name.starts_with("omp_")
                || u.lang.is_library_function(name)
            {
                return false;
            }
            match self.named.iter().find(|(n, _)| n == name) {
                Some((_, gang)) => *gang,
                None => call.member || !self.defined.iter().any(|d| d == name),
            }
        })
    }
}
