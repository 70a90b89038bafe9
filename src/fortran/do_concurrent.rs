//! `do concurrent` loops outside OpenACC compute constructs that use data the file's OpenACC
//! data directives keep on the device (`do-concurrent-device-data`). OpenACC runs such a
//! loop on the host, and so does its OpenMP translation; but code written this way (NVIDIA's
//! "standard parallelism with OpenACC data", POT3D's releases of 2022-2024) was built with
//! `nvfortran -stdpar=gpu`, which runs it on the device over the OpenACC data. With
//! separate memory the host copy it then reads is stale: the warning names the loop, the
//! data and what offloads it in OpenMP. Nothing is rewritten: no directive says what the
//! loop needs.

use super::Front;
use super::lex::{Lexed, Stmt, TokKind};
use super::structure::{Applies, DoKind};
use crate::diag::Diagnostic;
use crate::directive::{Directive, LIFETIME_CLAUSES};
use crate::hash::HashMap;
use crate::rules::id;

/// Directives whose data clauses keep data on the device beyond one compute construct.
const DATA_DIRECTIVES: [&str; 4] = ["enter data", "exit data", "data", "declare"];

/// Names at most listed in one warning (the rest counted).
const LISTED: usize = 4;

/// A variable as a unit sees it: where this file declares it (a module's variable is the
/// same everywhere it is used); one declared elsewhere (another file's module, flang's
/// facts) or nowhere, by its name alone.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Declared(usize),
    Named(String),
}

/// The variable `name` (lower case) as unit `unit` sees it.
fn key(front: &Front, unit: Option<usize>, name: &str) -> Option<Key> {
    let var = front.facts.lookup(&front.structure, unit?, name)?;
    Some(if var.at > 0 {
        Key::Declared(var.at)
    } else {
        Key::Named(name.to_string())
    })
}

/// Where a data directive keeps a variable on the device: its unit, its line, and the
/// bytes of that unit where the data is there.
#[derive(Debug, Clone)]
struct Kept {
    unit: Option<usize>,
    line: usize,
    bytes: std::ops::Range<usize>,
}

/// The warnings for `front`'s `do concurrent` loops; `dirs[j]` is the parsed directive of
/// the `j`-th OpenACC site, `acc_of[j]` its index among the sites.
pub fn check(
    src: &str,
    front: &Front,
    acc_of: &[usize],
    dirs: &[Option<Directive>],
) -> Vec<Diagnostic> {
    let loops = &front.structure.loops;
    if !loops.iter().any(|l| l.kind == DoKind::Concurrent) {
        return Vec::new();
    }
    // The variables data directives keep on the device, each with where that is said; and
    // the byte ranges of the constructs whose code runs on the device.
    let mut on_device: HashMap<Key, Vec<Kept>> = HashMap::default();
    let mut kernels = Vec::new();
    let mut routines = Vec::new();
    let st = &front.structure;
    for (j, d) in dirs.iter().enumerate() {
        let k = acc_of[j];
        let region = &st.regions[k];
        let Some(d) = d else {
            // Left unchanged: what it applies to stays OpenACC, device code included.
            if matches!(region.applies, Applies::Block { .. } | Applies::Loop { .. }) {
                kernels.push(region.extent());
            }
            continue;
        };
        if matches!(region.applies, Applies::Block { .. } | Applies::Loop { .. })
            && d.name != "data"
            && d.name != "host_data"
        {
            kernels.push(region.extent());
        }
        let at = front.sites[k].span.start;
        if d.name == "routine" && d.arg.is_none() {
            // Its unit may run on the device, called from a compute construct.
            routines.push(st.unit_at(at));
        }
        if !DATA_DIRECTIVES.contains(&d.name.as_str()) {
            continue;
        }
        let unit = st.unit_at(at);
        let kept = Kept {
            unit,
            line: front.lines.line_of(at) + 1,
            // Where the data is on the device in its own unit: a `data` construct's region,
            // after an `enter data` (up to an `exit data` of it), anywhere for `declare`.
            bytes: match d.name.as_str() {
                "data" => region.extent(),
                "enter data" => at..usize::MAX,
                "exit data" => 0..0,
                _ => 0..usize::MAX,
            },
        };
        let items = d
            .clauses
            .iter()
            .filter(|c| {
                let n = c.name.as_str();
                // `no_create` keeps nothing; an `exit data` item ends an `enter data`'s range.
                n != "no_create" && (LIFETIME_CLAUSES.contains(&n) || n == "device_resident")
            })
            .flat_map(|c| c.items());
        for it in items {
            if let Some(key) = super::lang::Fortran
                .base_name(&it.text)
                .and_then(|name| key(front, unit, name))
            {
                let kept_here = on_device.entry(key).or_default();
                if d.name != "exit data" {
                    kept_here.push(kept.clone());
                } else if let Some(open) = kept_here
                    .iter_mut()
                    .rev()
                    .find(|k| k.unit == unit && k.bytes.start < at && k.bytes.end == usize::MAX)
                {
                    // The data leaves the device here: a loop after it reads the host's.
                    open.bytes.end = at;
                }
            }
        }
    }
    if on_device.is_empty() {
        return Vec::new();
    }
    let lx = &front.lexed;
    let mut out = Vec::new();
    // The outermost `do concurrent` of a nest: an inner one is reported with it.
    let mut covered = 0..0;
    for l in loops.iter().filter(|l| l.kind == DoKind::Concurrent) {
        let span = l.span();
        if covered.contains(&span.start) || kernels.iter().any(|r| r.contains(&span.start)) {
            continue;
        }
        covered = span.clone();
        let unit = st.unit_at(span.start);
        if routines.contains(&unit) {
            continue;
        }
        // The names of the loop's statements, first use first, each once.
        let last = l
            .end()
            .unwrap_or(l.body().end.saturating_sub(1))
            .max(l.stmt());
        let Some(stmts) = lx.stmts.get(l.stmt()..=last) else {
            continue;
        };
        let mut used: Vec<(String, usize)> = Vec::new();
        for name in names_used(src, lx, stmts) {
            if used.iter().any(|(n, _)| *n == name) {
                continue;
            }
            // Kept on the device by a directive of another unit, or of this one where the
            // data is there at the loop.
            let line = key(front, unit, &name)
                .and_then(|key| on_device.get(&key))
                .and_then(|kept| {
                    kept.iter()
                        .find(|k| k.unit != unit || k.bytes.contains(&span.start))
                })
                .map(|k| k.line);
            if let Some(line) = line {
                used.push((name, line));
            }
        }
        let Some(&(_, line)) = used.first() else {
            continue;
        };
        let mut names = used
            .iter()
            .take(LISTED)
            .map(|(n, _)| format!("'{n}'"))
            .collect::<Vec<_>>()
            .join(", ");
        if used.len() > LISTED {
            names.push_str(&format!(" and {} more", used.len() - LISTED));
        }
        out.push(Diagnostic::new(
            span.start,
            id::DO_CONCURRENT_DEVICE_DATA,
            format!(
                "'do concurrent' runs on the host (in OpenACC as in OpenMP) but uses {names}, which this file's OpenACC data directives keep on the device (line {line}): built with nvfortran -stdpar=gpu it ran on the device, and the host copy may be stale; offload it in OpenMP too (flang -fdo-concurrent-to-openmp=device, or '!$omp target teams loop') or update the host copy around it"
            ),
        ));
    }
    out
}

/// The names `stmts` (a `do concurrent` loop, its statement first) use as variables, in
/// order: not a component after `%`, a keyword argument or loop index (`name =` right after
/// `(` or `,`), nor a name a `local(...)` locality list declares anew (the loop's own list:
/// in all of it; an inner loop's: in the list).
fn names_used(src: &str, lx: &Lexed, stmts: &[Stmt]) -> Vec<String> {
    let punct = |t: usize, p: &str| lx.tokens[t].kind() == TokKind::Punct && lx.is(src, t, p);
    let mut out = Vec::new();
    let mut locals = Vec::new();
    for (k, s) in stmts.iter().enumerate() {
        let toks = s.toks();
        // Locality lists are in `do concurrent` statements only (elsewhere `local(...)`
        // is an array or a function).
        let header = toks.clone().any(|t| lx.is(src, t, "concurrent"));
        // The `)` depth that ends a `local(` list being skipped.
        let mut local_until = None;
        let mut depth = 0usize;
        for t in toks.clone() {
            if punct(t, "(") {
                depth += 1;
            } else if punct(t, ")") {
                if local_until == Some(depth) {
                    local_until = None;
                }
                depth = depth.saturating_sub(1);
            }
            if lx.tokens[t].kind() != TokKind::Name {
                continue;
            }
            if local_until.is_some() {
                if k == 0 {
                    locals.push(lx.lower(src, t));
                }
                continue;
            }
            let after = (t + 1 < toks.end).then_some(t + 1);
            let before = (t > toks.start).then(|| t - 1);
            if header
                && after.is_some_and(|a| punct(a, "("))
                && lx.is(src, t, "local")
                && before.is_some_and(|b| punct(b, ")") || punct(b, ","))
            {
                local_until = Some(depth + 1);
                continue;
            }
            let component = before.is_some_and(|b| punct(b, "%"));
            let keyword = depth > 0
                && after.is_some_and(|a| punct(a, "="))
                && before.is_some_and(|b| punct(b, "(") || punct(b, ","));
            if !component && !keyword {
                out.push(lx.lower(src, t));
            }
        }
    }
    out.retain(|n| !locals.contains(n));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names used, keywords left out.
    fn used(src: &str) -> Vec<String> {
        let kind = crate::fortran::form::kind_of(std::path::Path::new("x.f90")).expect("Fortran");
        let front = Front::new(src, kind, |_| Default::default());
        let mut names = names_used(src, &front.lexed, &front.lexed.stmts);
        names.retain(|n| !["do", "concurrent", "end", "shared"].contains(&n.as_str()));
        names
    }

    #[test]
    fn components_keywords_and_locals_are_not_uses() {
        let src = "do concurrent (i = 1:n) local(w) shared(u)\n  w = p(i)%u + f(u=v(i))\n  do concurrent (j = 1:2) local(z)\n    z = u(j)\n  end do\nend do\n";
        // The loop's own local `w` nowhere; the inner loop's `z` only in its list.
        assert_eq!(
            used(src),
            ["n", "u", "p", "i", "f", "v", "i", "z", "u", "j"]
        );
    }
}
