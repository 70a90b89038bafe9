//! Per-site work of one file spread over the thread pool, for files with many directives.
//!
//! Files are already processed in parallel; a single large file (thousands of directives)
//! would otherwise run on one core. Small files stay sequential: splitting them costs more
//! than it gains.
//!
//! Each item first checks the run's memory limit (`crate::memory::check`): the per-site work
//! is where a file's memory grows with its size.

use rayon::prelude::*;

/// Below this many items a file's per-site work runs sequentially.
const MIN_PARALLEL: usize = 256;
/// Items per task: enough work per split for the pool's overhead to vanish.
const CHUNK: usize = 64;

thread_local! {
    /// Set by tests: everything this thread starts runs in one piece, on this thread.
    static ONE_PIECE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether work of `n` items is split: not for small `n` (splitting costs more than it
/// gains), nor where a test asked for work in one piece.
pub fn splits(n: usize) -> bool {
    n >= MIN_PARALLEL && !one_piece()
}

fn one_piece() -> bool {
    ONE_PIECE.with(|c| c.get())
}

/// `f()` with every split this thread would make left out: what a file's translation would
/// be read in one piece (for tests that runs change nothing).
#[cfg(test)]
pub fn in_one_piece<T>(f: impl FnOnce() -> T) -> T {
    ONE_PIECE.with(|c| c.set(true));
    let out = f();
    ONE_PIECE.with(|c| c.set(false));
    out
}

/// How many items of `n` a task should take: all of them unless `splits(n)`.
pub fn run_length(n: usize) -> usize {
    if splits(n) { CHUNK } else { n.max(1) }
}

/// `(0..n).map(f).collect()`, in parallel for large `n`, results in index order.
pub fn map_indices<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync + Send) -> Vec<T> {
    let f = |i| {
        crate::memory::check();
        f(i)
    };
    if !splits(n) {
        return (0..n).map(f).collect();
    }
    (0..n).into_par_iter().with_min_len(CHUNK).map(f).collect()
}

/// `items.iter().map(f).collect()`, in parallel for many items, results in order.
pub fn map<I: Sync, T: Send>(items: &[I], f: impl Fn(&I) -> T + Sync + Send) -> Vec<T> {
    let f = |x| {
        crate::memory::check();
        f(x)
    };
    if !splits(items.len()) {
        return items.iter().map(f).collect();
    }
    items.par_iter().with_min_len(CHUNK).map(f).collect()
}

/// `f(run, &mut items[run])` for each of `runs` (consecutive ranges that cover `items`), in
/// parallel when there are several.
pub fn for_each_run_mut<T: Send>(
    items: &mut [T],
    runs: &[std::ops::Range<usize>],
    f: impl Fn(std::ops::Range<usize>, &mut [T]) + Sync + Send,
) {
    debug_assert_eq!(runs.iter().map(|r| r.len()).sum::<usize>(), items.len());
    let mut parts = Vec::with_capacity(runs.len());
    let mut rest = items;
    for r in runs {
        let (head, tail) = rest.split_at_mut(r.len().min(rest.len()));
        parts.push((r.clone(), head));
        rest = tail;
    }
    let f = |(r, p)| {
        crate::memory::check();
        f(r, p)
    };
    if parts.len() < 2 || one_piece() {
        parts.into_iter().for_each(f);
    } else {
        parts.into_par_iter().for_each(f);
    }
}
