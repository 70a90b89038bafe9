//! What the Fortran front end's structure needs to know of a directive site, read by this
//! parser: its canonical name and how many loops it applies to.

use super::{Dialect, Directive, directive_name_in};
use crate::fortran::lines::Sentinel;
use crate::fortran::sites::Site;
use crate::fortran::structure::SiteInfo;
use crate::rules::Tables;

/// The [`SiteInfo`] of a Fortran site (`!$omp` and `!$` sites name no OpenACC directive).
pub fn fortran_site_info(site: &Site, t: &Tables) -> SiteInfo {
    if site.sentinel != Sentinel::Acc {
        return SiteInfo::default();
    }
    let text = &site.text;
    match super::parse_directive_in(text, 0..text.len(), t, Dialect::Fortran) {
        Ok(d) => SiteInfo {
            nest: nest_of(&d),
            name: Some(d.name.text.into()),
        },
        // A directive that does not parse still takes what follows it.
        Err(_) => SiteInfo {
            name: directive_name_in(text, 0..text.len(), t, Dialect::Fortran),
            nest: 1,
        },
    }
}

/// How many loops a loop directive applies to: `collapse(n)` with a literal `n`, or the
/// number of `tile` sizes; 1 otherwise.
pub fn nest_of(d: &Directive) -> usize {
    let collapse = d
        .find("collapse")
        .and_then(|c| c.items().next())
        .and_then(|i| i.text.trim().parse::<usize>().ok());
    let tile = d.find("tile").map(|c| c.items().count());
    collapse.into_iter().chain(tile).max().unwrap_or(1).max(1)
}
