//! Per-site work of one file spread over the thread pool, for files with many directives.
//!
//! Files are already processed in parallel; a single large file (thousands of directives)
//! would otherwise run on one core. Small files stay sequential: splitting them costs more
//! than it gains.

use rayon::prelude::*;

/// Below this many items a file's per-site work runs sequentially.
const MIN_PARALLEL: usize = 256;
/// Items per task: enough work per split for the pool's overhead to vanish.
const CHUNK: usize = 64;

/// `(0..n).map(f).collect()`, in parallel for large `n`, results in index order.
pub fn map_indices<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync + Send) -> Vec<T> {
    if n < MIN_PARALLEL {
        return (0..n).map(f).collect();
    }
    (0..n).into_par_iter().with_min_len(CHUNK).map(f).collect()
}

/// `items.iter().map(f).collect()` with each item a task of its own (items that are already
/// runs of many sites), results in order.
pub fn map_runs<I: Sync, T: Send>(items: &[I], f: impl Fn(&I) -> T + Sync + Send) -> Vec<T> {
    if items.len() < 2 {
        return items.iter().map(f).collect();
    }
    items.par_iter().map(f).collect()
}

/// `items.iter().map(f).collect()`, in parallel for many items, results in order.
pub fn map<I: Sync, T: Send>(items: &[I], f: impl Fn(&I) -> T + Sync + Send) -> Vec<T> {
    if items.len() < MIN_PARALLEL {
        return items.iter().map(f).collect();
    }
    items.par_iter().with_min_len(CHUNK).map(f).collect()
}
