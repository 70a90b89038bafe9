//! Reductions beyond the loop that names them: what the enclosing compute construct must
//! do for them (OpenACC's implicit `copy` of a reduction variable, gang reductions combined
//! across teams), and the nested parallel loops that update a reduction variable.

use super::loops::{Decision, LoopInfo};
use super::{Mode, Unit};
use std::borrow::Cow;

use crate::directive::Directive;
use crate::hash::{HashMap, HashSet};
use crate::lang::Language;

/// A loop reduction the compute construct takes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lifted {
    pub op: String,
    pub var: String,
    /// The loop site that names it.
    pub from: usize,
    /// A gang reduction under `target teams`: the teams combine it (`reduction` on the
    /// construct). Otherwise only the variable's value comes back (`map(tofrom:)`).
    pub gang: bool,
}

pub(crate) use crate::lang::name_key;

pub(super) fn names_in(l: &dyn Language, d: &Directive, clauses: &[&str], v: &str) -> bool {
    d.clauses.iter().any(|k| {
        clauses.contains(&k.name.as_str())
            && k.items()
                .any(|x| l.base_name(&x.text).is_some_and(|b| l.same_name(b, v)))
    })
}

/// Reductions on loops nested in a compute construct, per compute site. OpenACC gives a
/// reduction variable an implicit `copy` on the compute construct whatever the loop's level
/// (OpenMP would make it firstprivate and drop the result); a gang reduction under `target
/// teams` is also combined across the teams.
pub fn lifted(u: &Unit, dec: &[Option<LoopInfo>]) -> LiftedBySite {
    let mut out: Vec<(usize, Lifted)> = Vec::new();
    for (i, info) in dec.iter().enumerate() {
        let (Some(info), Some(d)) = (info, u.dir(i)) else {
            continue;
        };
        let Some(c) = info.compute else { continue };
        if c == i || !u.is_loop(i) {
            continue;
        }
        let gang = matches!((&info.decision, info.mode), (Decision::Par(l), Mode::Teams) if l.gang);
        // Private to the construct or to a loop around this one: nothing leaves the region.
        let private = |v: &str| {
            u.ancestors(i)
                .take_while(|&a| a != c)
                .chain(std::iter::once(c))
                .filter_map(|a| u.dir(a))
                .any(|a| names_in(u.lang, a, &["private", "firstprivate"], v))
        };
        for r in d.all("reduction") {
            let op = r.modifier().unwrap_or("+").to_string();
            for v in r.items() {
                let var = v.text.to_string();
                // A variable declared inside the region is private to it: its loop reduces
                // into the gang's copy, and the construct has no variable of that name.
                let local = u
                    .site_facts(c)
                    .is_some_and(|f| f.declared_inside(&var) && f.var(&var).is_none());
                if private(&var) || local {
                    continue;
                }
                out.push((
                    c,
                    Lifted {
                        op: op.clone(),
                        var,
                        from: i,
                        gang,
                    },
                ));
            }
        }
    }
    LiftedBySite::new(out)
}

/// The lifted reductions of every compute construct, in one list by construct: most sites
/// lift none (a list per site held 24 bytes at each while the plans are made).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LiftedBySite {
    /// The construct of each of `list`, ascending.
    sites: Vec<usize>,
    list: Vec<Lifted>,
}

impl LiftedBySite {
    /// From (construct, reduction) pairs, each construct's in the order given.
    fn new(mut pairs: Vec<(usize, Lifted)>) -> Self {
        // Stable: a construct's reductions stay in the order of their loops.
        pairs.sort_by_key(|&(c, _)| c);
        let (sites, list) = pairs.into_iter().unzip();
        LiftedBySite { sites, list }
    }

    /// The reductions compute construct `c` takes on.
    pub fn of(&self, c: usize) -> &[Lifted] {
        let from = self.sites.partition_point(|&s| s < c);
        let to = self.sites.partition_point(|&s| s <= c);
        &self.list[from..to]
    }
}

/// Reductions that loop `i` takes over from the loops and compute construct around it: a
/// variable reduced there and updated in `i` only by the same operation (`s += …`,
/// `s = fmax(s, …)`). OpenACC compilers combine those updates; OpenMP threads would race
/// on them (multigrid-style norms with the reduction on the gang loop only).
pub fn inherited(u: &Unit, i: usize, dec: &[Option<LoopInfo>]) -> Vec<(String, String)> {
    inherited_by(u, i, dec.get(i).and_then(Option::as_ref))
}

/// [`inherited`], with the decision `info` about loop `i`.
pub fn inherited_by(u: &Unit, i: usize, info: Option<&LoopInfo>) -> Vec<(String, String)> {
    let (Some(d), Some(info)) = (u.dir(i), info) else {
        return Vec::new();
    };
    let (Some(c), Decision::Par(_)) = (info.compute, &info.decision) else {
        return Vec::new();
    };
    if c == i {
        return Vec::new();
    }
    // The loop's own names, and the reductions found so far by name: sets, as a directive
    // may list thousands of names (built when an enclosing reduction first asks).
    let mut own: Option<HashSet<Cow<str>>> = None;
    let mut found: HashMap<&str, &str> = HashMap::default();
    let mut out: Vec<(String, String)> = Vec::new();
    let mut clash: HashSet<&str> = HashSet::default();
    for a in u.ancestors(i) {
        let Some(ad) = u.dir(a) else { continue };
        for r in ad.all("reduction") {
            let op = r.modifier().unwrap_or("+");
            for v in r.items() {
                let v = v.text.as_str();
                let own = own.get_or_insert_with(|| own_names(u.lang, d));
                if own.contains(&name_key(u.lang, v)) {
                    continue;
                }
                match found.get(v) {
                    Some(&o) if o != op => {
                        clash.insert(v);
                    }
                    Some(_) => {}
                    None if u.stmts[i]
                        .as_ref()
                        .is_some_and(|st| u.syntax.updated_only_by(&st.toks(), v, op)) =>
                    {
                        found.insert(v, op);
                        out.push((op.to_string(), v.to_string()))
                    }
                    None => {}
                }
            }
        }
        if a == c {
            break;
        }
    }
    if !clash.is_empty() {
        out.retain(|(_, v)| !clash.contains(v.as_str()));
    }
    out
}

/// The keys ([`name_key`]) of the base names of `d`'s `reduction`, `private` and
/// `firstprivate` items: what [`names_in`] finds there.
pub(super) fn own_names<'d>(l: &dyn Language, d: &'d Directive) -> HashSet<Cow<'d, str>> {
    d.clauses
        .iter()
        .filter(|k| matches!(k.name.as_str(), "reduction" | "private" | "firstprivate"))
        .flat_map(|k| k.items())
        .filter_map(|x| l.base_name(&x.text))
        .map(|b| name_key(l, b))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lifted(var: &str, from: usize) -> Lifted {
        Lifted {
            op: "+".into(),
            var: var.into(),
            from,
            gang: false,
        }
    }

    /// The loop's names as a set answer as the scan of its clauses ([`names_in`]) did, for
    /// each ancestor reduction item: base names, members, sections, Fortran's case.
    #[test]
    fn own_names_as_the_scan() {
        use crate::directive::{Dialect, parse_directive_all_in};
        use crate::rules::Tables;
        let t = Tables::builtin();
        // (Language, dialect, directives, names asked about.)
        type Case<'a> = (&'a dyn Language, Dialect, &'a [&'a str], &'a [&'a str]);
        let cases: [Case; 2] = [
            (
                &crate::c::lang::C,
                Dialect::C,
                &[
                    "loop reduction(+:s,t) private(a)",
                    "loop vector reduction(max:x.y) private(p)",
                    "parallel firstprivate(S) reduction(*:a[0:n])",
                    "loop seq",
                ],
                &["s", "t", "a", "a[0:n]", "x", "x.y", "S", "p", "q"],
            ),
            (
                &crate::fortran::lang::Fortran,
                Dialect::Fortran,
                &[
                    "loop reduction(+:s,T) private(a)",
                    "loop vector reduction(max:x%y) private(P)",
                    "parallel firstprivate(S) reduction(*:a(1:n))",
                    "loop seq",
                ],
                &["s", "S", "t", "a", "A", "a(1:n)", "x", "x%y", "p", "q"],
            ),
        ];
        for (l, dialect, texts, names) in cases {
            for x in texts {
                let d = parse_directive_all_in(x, 0..x.len(), &t, dialect).expect("parses");
                let own = own_names(l, &d);
                for v in names {
                    let old = names_in(l, &d, &["reduction", "private", "firstprivate"], v);
                    assert_eq!(own.contains(&name_key(l, v)), old, "{v} in {x}");
                }
            }
        }
    }

    /// The table answers as the list per site it replaces: each construct's reductions in
    /// the order they were found, none for the other sites; no room held per site.
    #[test]
    fn lifted_by_site_as_lists_per_site() {
        let pairs = vec![
            (5, lifted("a", 6)),
            (0, lifted("b", 1)),
            (5, lifted("c", 7)),
            (9, lifted("d", 10)),
            (0, lifted("e", 3)),
        ];
        let mut per_site: Vec<Vec<Lifted>> = vec![Vec::new(); 12];
        for (c, l) in pairs.clone() {
            per_site[c].push(l);
        }
        let table = LiftedBySite::new(pairs);
        for (c, old) in per_site.iter().enumerate() {
            assert_eq!(table.of(c), old.as_slice(), "site {c}");
        }
        assert_eq!(table.list.capacity(), 5);
        assert!(LiftedBySite::new(Vec::new()).of(3).is_empty());
    }
}
