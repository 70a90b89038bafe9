//! Profiles (mapping choices that are matters of target or taste) and the OpenMP version.

use clap::ValueEnum;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Profile {
    /// Independent loops that no nested loop partitions get gang, worker and vector
    /// parallelism (`target teams distribute parallel for simd`).
    #[default]
    Default,
    /// Clacc's prescriptive mapping: only explicit levels plus an implicit gang on the
    /// outermost naked loop.
    Clacc,
    /// OpenMP 5 `loop`: `target teams loop`.
    Loop,
}

impl Profile {
    pub fn name(self) -> &'static str {
        match self {
            Profile::Default => "default",
            Profile::Clacc => "clacc",
            Profile::Loop => "loop",
        }
    }
    pub const ALL: [Profile; 3] = [Profile::Default, Profile::Clacc, Profile::Loop];

    /// Launch sizes are chosen for speed (a combined construct's `num_gangs` dropped,
    /// workers times vector lanes as `thread_limit`) rather than spelled as the seeds do.
    pub fn tunes_launch(self) -> bool {
        matches!(self, Profile::Default | Profile::Loop)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum, Default)]
pub enum OmpVersion {
    /// The subset GCC 12 and Clang 16+ both accept.
    #[default]
    #[value(name = "5.0")]
    V50,
    /// Adds the `present` map modifier and `defaultmap(present)`.
    #[value(name = "5.1")]
    V51,
}
