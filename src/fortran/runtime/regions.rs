//! Runtime calls inside OpenACC compute constructs: OpenMP 5.0 forbids (and GCC 12 rejects)
//! runtime calls strictly nested in `teams` and inside `loop` regions, so a call
//! is translated only where the OpenMP construct the directive translation makes of its
//! innermost enclosing OpenACC construct allows it (`target`, `parallel`, `distribute`,
//! worksharing `do`, `simd`, as the C translation).

use super::Cx;
use super::devices::static_device_type;
use crate::fortran::lines::Sentinel;
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
        let front = self.front;
        let innermost = front
            .sites
            .iter()
            .zip(&front.structure.regions)
            .filter(|(s, r)| s.sentinel == Sentinel::Acc && r.extent().contains(&at))
            .filter(|(s, _)| {
                let first = s.text.split_whitespace().next().unwrap_or("");
                ["parallel", "kernels", "serial", "loop"]
                    .contains(&first.to_ascii_lowercase().as_str())
            })
            .max_by_key(|(_, r)| r.extent().start);
        let Some((site, _)) = innermost else {
            return Err("it is inside an OpenACC compute construct whose translation is not known; move the call out of the construct".into());
        };
        let words: Vec<String> = self
            .site_edits
            .iter()
            .filter(|e| e.range.start < site.span.end && site.span.start <= e.range.end)
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
}
