//! What the file's `routine` directives say about its functions: which are device code,
//! which are gang routines (they need the teams of their caller).

use super::Unit;
use crate::intervals::Nested;
use crate::lex::TokKind;
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
                if let Some(st) = &u.stmts[r] {
                    let toks = &u.structure.toks[st.toks.clone()];
                    if let Some(w) = toks.windows(2).find(|w| w[1].text(u.src) == "(") {
                        out.push(named(w[0].text(u.src)));
                    }
                }
            }
        }
    }
    out
}

/// Names of the functions defined in the file (`name(…) {`).
fn defined_functions<'s>(u: &Unit<'s>) -> Vec<&'s str> {
    let toks = u.structure.toks;
    let mut out = Vec::new();
    for (k, t) in toks.iter().enumerate() {
        if t.kind != TokKind::Punct || t.text(u.src) != "{" || k == 0 {
            continue;
        }
        if let Some(name) = function_name_before(u, k) {
            out.push(name);
        }
    }
    out
}

/// For a `{` at token `k`: the name of the function whose body it opens.
fn function_name_before<'s>(u: &Unit<'s>, k: usize) -> Option<&'s str> {
    let toks = u.structure.toks;
    let text = |k: usize| toks[k].text(u.src);
    let mut p = k;
    while p > 0
        && matches!(
            text(p - 1),
            "const" | "noexcept" | "override" | "final" | "mutable" | "volatile"
        )
    {
        p -= 1;
    }
    if p == 0 || text(p - 1) != ")" {
        return None;
    }
    let mut depth = 0i32;
    let mut q = p - 1;
    loop {
        match text(q) {
            ")" => depth += 1,
            "(" => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
        q = q.checked_sub(1)?;
    }
    let name = q.checked_sub(1)?;
    (toks[name].kind == TokKind::Ident
        && !matches!(text(name), "for" | "while" | "if" | "switch" | "catch"))
    .then(|| text(name))
}

/// Names of the functions whose bodies enclose token `t`, innermost first.
fn enclosing_functions<'s>(u: &Unit<'s>, t: usize) -> Vec<&'s str> {
    let mut out = Vec::new();
    let mut at = t;
    while let Some((open, _)) = u.structure.enclosing_brace(at) {
        out.extend(function_name_before(u, open));
        at = open;
    }
    out
}

/// What the file says about its functions, gathered once per file.
pub struct Routines<'s> {
    /// Functions named by `routine` directives, with their levels.
    named: Vec<Named>,
    /// Functions defined in the file.
    defined: Vec<&'s str>,
    /// Token indices of OpenMP `declare target` and `end declare target` lines, in order,
    /// with how many `declare target` regions are open after each.
    declare_target: Vec<(usize, i32)>,
    /// Statements of the `routine` directives without a name (ids: sites).
    routine_bodies: Nested,
}

impl<'s> Routines<'s> {
    pub fn of(u: &Unit<'s>) -> Self {
        let mut declare_target = Vec::new();
        for (k, tok) in u.structure.toks.iter().enumerate() {
            if tok.kind != TokKind::PpLine {
                continue;
            }
            let words: Vec<&str> = tok
                .text(u.src)
                .split_whitespace()
                .map(|w| w.trim_start_matches('#'))
                .collect();
            match words.as_slice() {
                [.., "omp", "end", "declare", "target"] => declare_target.push((k, -1)),
                [.., "omp", "declare", "target"] => declare_target.push((k, 1)),
                _ => {}
            }
        }
        let mut open = 0;
        for (_, d) in &mut declare_target {
            open += *d;
            *d = open;
        }
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
            defined: defined_functions(u),
            declare_target,
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
        let names = enclosing_functions(u, t);
        let named = self.named.iter().any(|n| names.contains(&n.name.as_str()));
        let k = self.declare_target.partition_point(|(k, _)| *k < t);
        let open = k.checked_sub(1).map_or(0, |k| self.declare_target[k].1);
        before_definition || named || open > 0
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
    /// defines nor names in a `routine` directive may be).
    fn may_call(
        &self,
        u: &Unit,
        c: usize,
        partitioned: &[Range<usize>],
        level: impl Fn(&Named) -> bool,
        unknown: bool,
    ) -> bool {
        let Some(st) = &u.stmts[c] else { return false };
        let toks = u.structure.toks;
        st.toks.clone().any(|k| {
            let (Some(t), Some(next)) = (toks.get(k), toks.get(k + 1)) else {
                return false;
            };
            let name = t.text(u.src);
            if t.kind != TokKind::Ident
                || next.text(u.src) != "("
                || partitioned.iter().any(|r| r.contains(&k))
            {
                return false;
            }
            let member = k > 0 && matches!(toks[k - 1].text(u.src), "." | "->");
            if matches!(
                name,
                "if" | "for" | "while" | "switch" | "return" | "sizeof" | "_Pragma" | "defined"
            ) || name.starts_with("acc_")
                || name.starts_with("omp_")
                || name.starts_with("__builtin")
                || MATH.contains(&name)
            {
                return false;
            }
            match self.named.iter().find(|n| n.name == name) {
                Some(n) => level(n),
                None => unknown && (member || !self.defined.contains(&name)),
            }
        })
    }
}

/// Functions whose calls cannot be gang routines: the C math library.
const MATH: &[&str] = &[
    "sqrt", "sqrtf", "fabs", "fabsf", "abs", "labs", "exp", "expf", "log", "logf", "log10", "pow",
    "powf", "sin", "sinf", "cos", "cosf", "tan", "atan", "atan2", "floor", "ceil", "fmax", "fmin",
    "fmaxf", "fminf", "fmod", "round", "trunc", "hypot", "cbrt", "erf", "tanh", "sinh", "cosh",
    "asin", "acos", "copysign", "isnan", "isinf", "min", "max",
];
