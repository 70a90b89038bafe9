//! `acc loop`: deciding each loop's parallelism (implicit gang placement, profiles,
//! `kernels` independence) and printing the OpenMP loop directive.

mod decide;
mod directive;

pub(crate) use decide::{Decision, Decisions, Levels, LoopInfo, decide, kernels_sequential};
pub(crate) use directive::{
    assigned_control_var, calls_runtime, loop_part, plan_loop, private_op, runtime_calls,
    split_bare_loop,
};
