//! What the Fortran front end's structure needs to know of a directive site, read by this
//! parser: its canonical name and how many loops it applies to.

use super::count::constant;
use super::parse::checks;
use super::{Dialect, Directive, ParseError, directive_name_in};
use crate::fortran::lines::Sentinel;
use crate::fortran::sites::Site;
use crate::fortran::structure::SiteInfo;
use crate::rules::Tables;

/// The [`SiteInfo`] of a Fortran site (`!$omp` and `!$` sites name no OpenACC directive).
///
/// The same as reading the site with [`super::parse_directive_all_in`] (name and nest of a
/// directive that parses; the name alone, nest 1, of one that does not), but the checks after
/// the grammar run only where a nest of more than one loop hangs on them. The translation
/// reads each site once with [`fortran_site_parse`], which gives this and the full parse.
pub fn fortran_site_info(site: &Site, t: &Tables) -> SiteInfo {
    if site.sentinel != Sentinel::Acc {
        return SiteInfo::default();
    }
    let text = &site.text;
    match super::parse_grammar_in(text, 0..text.len(), t, Dialect::Fortran) {
        Ok(d) => {
            let nest = nest_of(&d);
            let checked = nest == 1 || checks(text, &d, t, Dialect::Fortran).is_ok();
            SiteInfo {
                nest: if checked { nest } else { 1 },
                name: Some(d.name.as_str().into()),
            }
        }
        // A directive that does not parse still takes what follows it.
        Err(_) => SiteInfo {
            name: directive_name_in(text, 0..text.len(), t, Dialect::Fortran),
            nest: 1,
        },
    }
}

/// What [`parse_directive_all_in`](super::parse_directive_all_in) returns for a site's text:
/// the directive, or every problem the grammar or the checks after it find.
pub type Parsed = Result<Directive, Vec<ParseError>>;

/// A Fortran site read once: its [`SiteInfo`] (as [`fortran_site_info`]) and, for an
/// `!$acc` site, the directive as [`parse_directive_all_in`](super::parse_directive_all_in)
/// reads it, which the front end translates (the grammar was read twice per site, once for
/// each).
pub fn fortran_site_parse(site: &Site, t: &Tables) -> (SiteInfo, Option<Parsed>) {
    if site.sentinel != Sentinel::Acc {
        return (SiteInfo::default(), None);
    }
    let text = &site.text;
    match super::parse_grammar_in(text, 0..text.len(), t, Dialect::Fortran) {
        Ok(d) => {
            let checked = checks(text, &d, t, Dialect::Fortran);
            let info = SiteInfo {
                nest: if checked.is_ok() { nest_of(&d) } else { 1 },
                name: Some(d.name.as_str().into()),
            };
            (info, Some(checked.map(|()| d)))
        }
        Err(e) => {
            let info = SiteInfo {
                name: directive_name_in(text, 0..text.len(), t, Dialect::Fortran),
                nest: 1,
            };
            (info, Some(Err(vec![e])))
        }
    }
}

/// How many loops a loop directive applies to: `collapse(n)` with `n` an integer constant
/// expression of literals (`2`, `3-1`, `(1+1)`), or the number of `tile` sizes; 1 otherwise.
pub fn nest_of(d: &Directive) -> usize {
    let collapse = d
        .find("collapse")
        .and_then(|c| c.items().next())
        .and_then(|i| constant(&i.text, Dialect::Fortran))
        .and_then(|n| usize::try_from(n).ok());
    let tile = d.find("tile").map(|c| c.items().count());
    collapse.into_iter().chain(tile).max().unwrap_or(1).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fortran::Front;
    use crate::fortran::form::kind_of;
    use std::cell::Cell;
    use std::path::Path;

    /// The reading before the checks were left to the sites whose nest hangs on them.
    fn fully_parsed(site: &Site, t: &Tables) -> SiteInfo {
        if site.sentinel != Sentinel::Acc {
            return SiteInfo::default();
        }
        let text = &site.text;
        match super::super::parse_directive_in(text, 0..text.len(), t, Dialect::Fortran) {
            Ok(d) => SiteInfo {
                nest: nest_of(&d),
                name: Some(d.name.as_str().into()),
            },
            Err(_) => SiteInfo {
                name: directive_name_in(text, 0..text.len(), t, Dialect::Fortran),
                nest: 1,
            },
        }
    }

    /// Directives whose nest the checks decide (a `collapse` or `tile` on a directive
    /// that does not pass them), that the grammar rejects, and that name nothing.
    const SITES: &[&str] = &[
        "parallel loop collapse(2) collapse(3)",
        "loop tile(2, 4) gang(foo:5)",
        "loop collapse(3) private(a(1:2))",
        "parallel loop tile(4,4) copy(1)",
        "kernels loop collapse(2) copy(a) copyin(a)",
        "loop collapse(2.0)",
        "loop collapse(0)",
        "loop collapse(2)",
        "LOOP COLLAPSE(3) Tile(2,2)",
        "loop tile(*, 8)",
        "parallel loop collapse(2) device_type(nvidia) collapse(3)",
        "parallel loop collapse(2) num_gangs(1 i)",
        "loop collapse(2",
        "loop collapse(2) bogus",
        "end parallel loop",
        "end bogus",
        "bogus collapse(2)",
        "routine(f, g) seq",
        "parallel default(shared) loop",
        "parallel loop collapse(2) default(shared)",
    ];

    #[test]
    fn as_the_full_parse() {
        let t = Tables::builtin();
        let mut sources = Vec::new();
        let mut made = String::new();
        for s in SITES {
            made.push_str(&format!(
                "!$acc {s}\ndo i = 1, n\ndo j = 1, n\ndo k = 1, n\n"
            ));
            made.push_str("a(i, j, k) = 0\nend do\nend do\nend do\n");
        }
        sources.push(("made.f90".to_string(), made));
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/translate");
        for case in std::fs::read_dir(root).unwrap() {
            for f in std::fs::read_dir(case.unwrap().path()).unwrap() {
                let p = f.unwrap().path();
                if p.file_stem().is_some_and(|s| s == "input") && kind_of(&p).is_some() {
                    let src = std::fs::read_to_string(&p).unwrap();
                    sources.push((p.display().to_string(), src));
                }
            }
        }
        let (sites, nested, failed_nest) = (Cell::new(0), Cell::new(0), Cell::new(0));
        for (name, src) in &sources {
            let kind = kind_of(Path::new(name)).unwrap();
            Front::new(src, kind, |s| {
                let (new, old) = (fortran_site_info(s, &t), fully_parsed(s, &t));
                assert_eq!(new, old, "{name}: {}", s.text);
                sites.set(sites.get() + 1);
                nested.set(nested.get() + usize::from(old.nest > 1));
                let text = &s.text;
                let grammar =
                    super::super::parse_grammar_in(text, 0..text.len(), &t, Dialect::Fortran);
                let failed = grammar.is_ok_and(|d| nest_of(&d) > 1) && old.nest == 1;
                failed_nest.set(failed_nest.get() + usize::from(failed));
                new
            });
        }
        assert!(sites.get() > 150, "{} sites", sites.get());
        assert!(nested.get() >= 4 && failed_nest.get() >= 6);
    }

    /// The Fortran fixtures' sources, with their source kinds.
    fn fixture_sources() -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")];
        while let Some(d) = dirs.pop() {
            for f in std::fs::read_dir(d).unwrap() {
                let p = f.unwrap().path();
                if p.is_dir() {
                    dirs.push(p);
                } else if kind_of(&p).is_some() {
                    let src = std::fs::read_to_string(&p).unwrap();
                    out.push((p.display().to_string(), src));
                }
            }
        }
        out
    }

    /// [`SITES`] written in free and fixed form, continued, in upper case, with CRLF line
    /// ends, trailing comments and `!` in strings.
    fn made_sources() -> Vec<(String, String)> {
        let body =
            "do i = 1, n\ndo j = 1, n\ndo k = 1, n\na(i, j, k) = 0\nend do\nend do\nend do\n";
        let (mut free, mut continued, mut fixed, mut commented) =
            (String::new(), String::new(), String::new(), String::new());
        for s in SITES {
            free.push_str(&format!("!$acc {s}\n{body}"));
            let (a, b) = s.split_once(' ').unwrap_or((s, ""));
            continued.push_str(&format!("  !$acc {a} &\n  !$acc& {b}\n{body}"));
            commented.push_str(&format!(
                "print *, 'a ! b'\n!$acc {s} ! it's 'quoted'\n{body}"
            ));
            let fixed_body: String = body.lines().map(|l| format!("      {l}\n")).collect();
            fixed.push_str(&format!("!$acc {a}\n!$acc&{b}\n{fixed_body}"));
            fixed.push_str(&format!("C$ACC {}\n{fixed_body}", s.to_uppercase()));
        }
        let upper = free.to_uppercase();
        let crlf = |t: &str| t.replace('\n', "\r\n");
        vec![
            ("free.f90".into(), free.clone()),
            ("upper.f90".into(), upper),
            ("crlf.f90".into(), crlf(&continued)),
            ("continued.f90".into(), continued),
            ("commented.f90".into(), commented),
            ("fixed_crlf.f".into(), crlf(&fixed)),
            ("fixed.f".into(), fixed),
        ]
    }

    #[test]
    fn read_once_as_the_information_and_the_full_parse() {
        let t = Tables::builtin();
        let (sites, failed) = (Cell::new(0), Cell::new(0));
        for (name, src) in made_sources().into_iter().chain(fixture_sources()) {
            let kind = kind_of(Path::new(&name)).unwrap();
            Front::new(&src, kind, |s| {
                let (info, parsed) = fortran_site_parse(s, &t);
                assert_eq!(info, fortran_site_info(s, &t), "{name}: {}", s.text);
                let text = &s.text;
                let full = (s.sentinel == Sentinel::Acc).then(|| {
                    super::super::parse_directive_all_in(text, 0..text.len(), &t, Dialect::Fortran)
                });
                failed.set(failed.get() + usize::from(full.as_ref().is_some_and(|f| f.is_err())));
                sites.set(sites.get() + usize::from(full.is_some()));
                assert_eq!(parsed, full, "{name}: {text}");
                info
            });
        }
        assert!(sites.get() > 300, "{} sites", sites.get());
        assert!(failed.get() > 40, "{} failed", failed.get());
    }
}
