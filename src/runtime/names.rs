//! Types and constants of openacc.h in code, and what they become: the device-type model's
//! enumerators (`acc2omp_device_t`), the property enumerators and the async constants, all
//! defined by helpers (see `helpers.rs`).

use crate::lex::{TokKind, lex, lex_range, string_content};
use std::ops::Range;

/// What an openacc.h type or constant becomes.
pub(super) struct Rename {
    pub to: &'static str,
    /// A vendor device type (`acc_device_nvidia`): OpenMP cannot tell vendors apart, so it
    /// becomes "not host".
    pub vendor: bool,
}

/// Vendor device types of OpenACC implementations (GCC, NVHPC, Cray, PGI).
const VENDORS: &[&str] = &[
    "nvidia",
    "radeon",
    "gcn",
    "xeonphi",
    "opencl",
    "nvidia_opencl",
    "pgi_opencl",
    "altera",
    "intel",
    "host_nonshm",
];

/// The model name an OpenACC constant or type name becomes and whether it is a vendor
/// device type (for the Fortran translation, which declares the model's constants itself).
pub(crate) fn rename_name(name: &str) -> Option<(&'static str, bool)> {
    rename(name).map(|r| (r.to, r.vendor))
}

/// The replacement of an openacc.h name, None for any other identifier.
pub(super) fn rename(name: &str) -> Option<Rename> {
    let to = match name {
        "acc_device_t" => "acc2omp_device_t",
        "acc_device_none" => "acc2omp_device_none",
        "acc_device_default" => "acc2omp_device_default",
        "acc_device_host" => "acc2omp_device_host",
        "acc_device_not_host" => "acc2omp_device_not_host",
        "acc_device_current" => "acc2omp_device_current",
        "acc_device_property_t" | "acc_device_property" => "acc2omp_property_t",
        "acc_property_memory" => "acc2omp_property_memory",
        "acc_property_free_memory" => "acc2omp_property_free_memory",
        "acc_property_shared_memory_support" => "acc2omp_property_shared_memory_support",
        "acc_property_name" => "acc2omp_property_name",
        "acc_property_vendor" => "acc2omp_property_vendor",
        "acc_property_driver" => "acc2omp_property_driver",
        "acc_async_t" => "int",
        "acc_async_noval" | "acc_async_default" => "acc2omp_async_noval",
        "acc_async_sync" => "acc2omp_async_sync",
        _ => {
            let vendor = name
                .strip_prefix("acc_device_")
                .is_some_and(|v| VENDORS.contains(&v));
            return vendor.then_some(Rename {
                to: "acc2omp_device_not_host",
                vendor: true,
            });
        }
    };
    Some(Rename { to, vendor: false })
}

/// `text` with the openacc.h names among its tokens renamed (in preprocessor lines and
/// `_Pragma` strings too, never in comments or other literals), and the vendor device types
/// met; None when nothing is renamed.
pub(super) fn rename_in(text: &str) -> Option<(String, Vec<String>)> {
    // Every name renamed starts with `acc_`: most texts have none to look for.
    if !super::text::has(text, "acc_") {
        return None;
    }
    let mut renames: Vec<(Range<usize>, Rename)> = Vec::new();
    let mut pending = vec![lex(text)];
    // Preprocessor lines and `_Pragma` strings are read again as tokens (one level each).
    while let Some(toks) = pending.pop() {
        for (i, t) in toks.iter().enumerate() {
            let prev = i.checked_sub(1).map(|p| toks[p].text(text));
            match t.kind {
                TokKind::PpLine => pending.push(lex_range(text, t.start() + 1..t.end(), false)),
                TokKind::Literal
                    if prev == Some("(") && i >= 2 && toks[i - 2].text(text) == "_Pragma" =>
                {
                    if let Some((c, false)) = string_content(t.text(text)) {
                        pending.push(lex_range(
                            text,
                            t.start() + c.start..t.start() + c.end,
                            false,
                        ));
                    }
                }
                TokKind::Ident if !matches!(prev, Some("." | "->" | "::")) => {
                    if let Some(r) = rename(t.text(text)) {
                        renames.push((t.range(), r));
                    }
                }
                _ => {}
            }
        }
    }
    if renames.is_empty() {
        return None;
    }
    renames.sort_by_key(|(r, _)| r.start);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut vendors = Vec::new();
    for (range, r) in renames {
        out.push_str(&text[at..range.start]);
        out.push_str(r.to);
        at = range.end;
        if r.vendor {
            vendors.push(text[range].to_string());
        }
    }
    out.push_str(&text[at..]);
    Some((out, vendors))
}

/// What a constant device type names in the device-type model (see docs/translation.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeviceType {
    /// `acc_device_host`: OpenMP's initial device.
    Host,
    /// `acc_device_not_host`, or a vendor type (`vendor`): any non-initial device.
    NotHost { vendor: bool },
}

/// The device type an argument written `name` names; None for a type known only at run time
/// (a variable, `acc_device_default`, `acc_device_current`, `acc_device_none`). Fortran
/// callers pass the name in lower case.
pub(crate) fn device_type(name: &str) -> Option<DeviceType> {
    let r = rename(name)?;
    match r.to {
        "acc2omp_device_host" => Some(DeviceType::Host),
        "acc2omp_device_not_host" => Some(DeviceType::NotHost { vendor: r.vendor }),
        _ => None,
    }
}

/// The note on a vendor device type `name` (taken as any non-host device).
pub(super) fn vendor_note(name: &str) -> String {
    format!(
        "'{name}' is any non-host device ('acc2omp_device_not_host'): OpenMP numbers devices and cannot tell vendors apart"
    )
}

/// Constants and types declared by openacc.h (translated or not).
pub(super) fn is_openacc_name(name: &str) -> bool {
    rename(name).is_some()
        || (name.starts_with("acc_device_") && !name.starts_with("acc_device_api"))
        || name.starts_with("acc_property_")
}

/// Names of the OpenACC profiling interface (acc_prof.h): types, events and the routines a
/// tool library calls or defines.
pub(super) fn is_profiling_name(name: &str) -> bool {
    name.starts_with("acc_ev_")
        || name.starts_with("acc_prof_")
        || name.starts_with("acc_construct_")
        || name.starts_with("acc_device_api")
        || matches!(
            name,
            "acc_event_t"
                | "acc_event_info"
                | "acc_data_event_info"
                | "acc_launch_event_info"
                | "acc_other_event_info"
                | "acc_api_info"
                | "acc_callback"
                | "acc_register_library"
                | "acc_register_action_t"
                | "acc_query_fn"
                | "acc_register_fn"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(rename("acc_device_host").unwrap().to, "acc2omp_device_host");
        let v = rename("acc_device_nvidia").unwrap();
        assert!(v.vendor && v.to == "acc2omp_device_not_host");
        assert!(rename("acc_device_api_cuda").is_none());
        assert!(rename("acc_device_num").is_none());
        assert!(is_openacc_name("acc_property_unknown") && !is_openacc_name("acc_copyin"));
        assert!(is_profiling_name("acc_ev_enqueue_launch_start"));
        assert!(is_profiling_name("acc_prof_info") && !is_profiling_name("acc_copyin"));
    }
}
