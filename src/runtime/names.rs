//! Types and constants of openacc.h in code, and what they become: the device-type model's
//! enumerators (`acc2omp_device_t`), the property enumerators and the async constants, all
//! defined by helpers (see `helpers.rs`).

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
