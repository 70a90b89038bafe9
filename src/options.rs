//! What a translation is asked for: the profile, the OpenMP version, the rule tables and
//! how the result is written (`--emit`). Every layer reads them; they depend on nothing above.

use crate::profile::{OmpVersion, Profile};
use crate::rules::Tables;
use clap::ValueEnum;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct Options {
    pub profile: Profile,
    pub omp_version: OmpVersion,
    /// Treat loops in `kernels` regions whose independence is unknown as independent.
    pub assume_independent: bool,
    /// Keep `#include <openacc.h>` and `_OPENACC` tests (dual-build guards) as they are.
    pub keep_openacc_guards: bool,
    /// The device type whose `device_type` sections apply (None: only `device_type(*)`).
    pub device_type: Option<String>,
    /// The rule tables of the file's configuration (shared by the files that have it).
    pub tables: Arc<Tables>,
    /// How the translation is written (`--emit`).
    pub emit: Emit,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            profile: Profile::Default,
            omp_version: OmpVersion::V50,
            assume_independent: false,
            keep_openacc_guards: false,
            device_type: None,
            tables: Arc::new(Tables::builtin()),
            emit: Emit::Omp,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Emit {
    /// The OpenMP translation.
    #[default]
    Omp,
    /// The OpenMP translation, each original OpenACC line after it as a comment.
    #[value(name = "omp-acc")]
    OmpAcc,
    /// The original OpenACC, each line of its translation after it as a comment.
    #[value(name = "acc-omp")]
    AccOmp,
    /// Both, under `#ifdef _OPENACC` … `#else` … `#endif`: the file builds as OpenACC and
    /// as OpenMP.
    Dual,
}

impl Emit {
    pub const ALL: [Emit; 4] = [Emit::Omp, Emit::OmpAcc, Emit::AccOmp, Emit::Dual];
    pub fn name(self) -> &'static str {
        match self {
            Emit::Omp => "omp",
            Emit::OmpAcc => "omp-acc",
            Emit::AccOmp => "acc-omp",
            Emit::Dual => "dual",
        }
    }
}
