//! Runtime calls inside OpenACC compute constructs: OpenMP 5.0 forbids (and GCC 12 rejects)
//! runtime calls strictly nested in `teams` and inside `loop` regions, so a call
//! is translated only where the OpenMP construct the directive translation makes of its
//! innermost enclosing OpenACC construct allows it (`target`, `parallel`, `distribute`,
//! worksharing `do`, `simd`, as the C translation).

use super::Cx;
use super::devices::static_device_type;
use super::spans::Spans;
use crate::fortran::lines::Sentinel;
use crate::fortran::sites::Site;
use crate::rules::RuntimeRule;
use std::ops::Range;

impl Cx<'_> {
    /// Whether the call of `r` at `at`, inside a compute construct, may be translated.
    pub(super) fn in_region(
        &self,
        at: usize,
        r: &RuntimeRule,
        args: &[Range<usize>],
    ) -> Result<(), String> {
        let name = r.name.as_str();
        let static_type = r.devtype.and_then(|d| args.get(d)).is_some_and(|a| {
            let t = self.src[self.span(a)].trim().to_ascii_lowercase();
            static_device_type(name, &t).is_some()
        });
        if name != "acc_on_device" || !static_type {
            return Err("it is inside an OpenACC compute construct, and only acc_on_device with a constant device type is translated there; move the call out of the construct".into());
        }
        let found = self.innermost_at(at);
        // The walk of every site is the oracle of the index in the tests.
        #[cfg(test)]
        assert_eq!(
            found.map(std::ptr::from_ref),
            self.innermost_scan(at).map(std::ptr::from_ref)
        );
        let Some(site) = found else {
            return Err("it is inside an OpenACC compute construct whose translation is not known; move the call out of the construct".into());
        };
        let edits = (self.edit_spans)
            .get_or_init(|| Spans::new(self.site_edits.iter().map(|e| e.range.clone())));
        let touching: Vec<usize> = edits.reaching(site.span.end, site.span.start).collect();
        #[cfg(test)]
        {
            let mut got = touching.clone();
            got.sort_unstable();
            let want: Vec<usize> = (0..self.site_edits.len())
                .filter(|&k| {
                    let e = &self.site_edits[k];
                    e.range.start < site.span.end && site.span.start <= e.range.end
                })
                .collect();
            assert_eq!(got, want);
        }
        // Their order does not matter: only which words there are is asked.
        let words: Vec<String> = touching
            .into_iter()
            .map(|k| &self.site_edits[k])
            .flat_map(|e| {
                e.text
                    .lines()
                    .map(str::to_ascii_lowercase)
                    .collect::<Vec<_>>()
            })
            .filter_map(|l| {
                let l = l.trim_start();
                let body = l
                    .strip_prefix("!$omp")
                    .or_else(|| l.get(1..).and_then(|r| r.strip_prefix("$omp")))?;
                let body = body.trim_start_matches('&');
                Some(body.split('(').next().unwrap_or("").to_string())
            })
            .filter(|b| !b.trim_start().starts_with("end"))
            .flat_map(|b| b.split_whitespace().map(str::to_string).collect::<Vec<_>>())
            .collect();
        let has = |w: &str| words.iter().any(|x| x == w);
        if words.is_empty() {
            return Err("it is inside an OpenACC compute construct whose translation is not known; move the call out of the construct".into());
        }
        if has("loop") {
            return Err("it is inside a construct that becomes an OpenMP 'loop' region, where OpenMP 5.0 forbids runtime calls; move the call out of the loop".into());
        }
        if has("teams") && !(has("parallel") || has("distribute") || has("do")) {
            return Err("it is directly inside a construct that becomes an OpenMP 'teams' region, where OpenMP 5.0 forbids runtime calls; move the call into a loop of the construct or out of it".into());
        }
        Ok(())
    }

    /// The innermost OpenACC compute or loop construct whose region holds `at` (of equal
    /// starts, the later site).
    fn innermost_at(&self, at: usize) -> Option<&Site> {
        let front = self.front;
        let (sites, spans) = self.innermost.get_or_init(|| {
            let sites: Vec<usize> = (front.sites.iter().zip(&front.structure.regions))
                .enumerate()
                .filter(|(_, (s, _))| s.sentinel == Sentinel::Acc && is_construct(s))
                .map(|(k, _)| k)
                .collect();
            let spans = Spans::new(sites.iter().map(|&k| front.structure.regions[k].extent()));
            (sites, spans)
        });
        let k = spans.reaching(at + 1, at + 1).next()?;
        Some(&front.sites[sites[k]])
    }

    /// [`Self::innermost_at`] as a walk of every site (its oracle).
    #[cfg(test)]
    pub(super) fn innermost_scan(&self, at: usize) -> Option<&Site> {
        let front = self.front;
        front
            .sites
            .iter()
            .zip(&front.structure.regions)
            .filter(|(s, r)| s.sentinel == Sentinel::Acc && r.extent().contains(&at))
            .filter(|(s, _)| is_construct(s))
            .max_by_key(|(_, r)| r.extent().start)
            .map(|(s, _)| s)
    }
}

/// A compute or loop construct: what a call's innermost construct may be.
fn is_construct(s: &Site) -> bool {
    let first = s.text.split_whitespace().next().unwrap_or("");
    ["parallel", "kernels", "serial", "loop"].contains(&first.to_ascii_lowercase().as_str())
}

/// The OpenMP constructs already in the file (`omp_target::constructs`) and, of them, the
/// target regions.
pub(crate) struct OmpConstructs {
    targets: Vec<Range<usize>>,
    constructs: Vec<crate::fortran::omp_target::OmpConstruct>,
}

impl OmpConstructs {
    fn new(front: &crate::fortran::Front) -> Self {
        let targets = crate::fortran::omp_target::target_regions(front)
            .into_iter()
            .map(|r| r.bytes)
            .collect();
        OmpConstructs {
            targets,
            constructs: crate::fortran::omp_target::constructs(front),
        }
    }
}

impl Cx<'_> {
    /// Whether the call of `r` at `at`, outside every OpenACC compute construct, may be
    /// translated: inside an OpenMP target region of the file it is judged as inside a
    /// compute construct (a helper is host code; `teams` and `loop` forbid runtime calls).
    pub(super) fn in_omp_region(
        &self,
        at: usize,
        r: &RuntimeRule,
        args: &[Range<usize>],
    ) -> Result<(), String> {
        let omp = self.omp.get_or_init(|| OmpConstructs::new(self.front));
        if !omp.targets.iter().any(|t| t.contains(&at)) {
            return Ok(());
        }
        let name = r.name.as_str();
        let static_type = r.devtype.and_then(|d| args.get(d)).is_some_and(|a| {
            let t = self.src[self.span(a)].trim().to_ascii_lowercase();
            static_device_type(name, &t).is_some()
        });
        if name != "acc_on_device" || !static_type {
            return Err("it is inside an OpenMP target region, and only acc_on_device with a constant device type is translated there; move the call out of the region".into());
        }
        let Some(c) = omp
            .constructs
            .iter()
            .filter(|c| c.bytes.contains(&at))
            .max_by_key(|c| c.bytes.start)
        else {
            return Ok(());
        };
        let has = |w: &str| c.has(w);
        if has("loop") {
            return Err("it is inside an OpenMP 'loop' region, where OpenMP 5.0 forbids runtime calls; move the call out of the loop".into());
        }
        if has("teams") && !(has("parallel") || has("distribute") || has("do")) {
            return Err("it is directly inside an OpenMP 'teams' region, where OpenMP 5.0 forbids runtime calls; move the call into a loop of the construct or out of it".into());
        }
        Ok(())
    }
}
