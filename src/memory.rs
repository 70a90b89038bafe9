//! A limit on the memory a run holds (`--max-memory`), so that a file too large to translate
//! fails with a message instead of the whole run being ended by the kernel's OOM killer.
//!
//! The executable's allocator counts the bytes held (`Counting`, a few instructions per
//! allocation: counts are kept per thread and added to the total a MiB at a time). The
//! per-site work of a translation (`crate::par`) and its phases call `check`, which ends the
//! translation of the file by unwinding with `OverLimit` once the total is past the limit;
//! the command line catches it for that file (`guard`) and goes on with the others. The
//! libclang workers are separate processes, not counted.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering::Relaxed};

/// Bytes held, but for up to `BATCH` per thread not yet added.
static HELD: AtomicIsize = AtomicIsize::new(0);
/// `check`'s limit in bytes; none until the command line sets one (library use, tests).
static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);
/// Files whose translation is under way (`guard`).
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// A thread's count is added to `HELD` once it reaches a MiB either way.
const BATCH: isize = 1 << 20;

thread_local! {
    static PENDING: Cell<isize> = const { Cell::new(0) };
}

/// Inlined into the allocator's calls (another crate's, the executable's): a call per
/// allocation and per free costs about as much as the count itself.
#[inline]
fn count(bytes: isize) {
    // No destructor: the slot lives as long as the thread, and `try_with` cannot fail but
    // in the thread's very last moments, where the total is updated directly.
    let direct = PENDING.try_with(|p| {
        let v = p.get() + bytes;
        if v.abs() >= BATCH {
            HELD.fetch_add(v, Relaxed);
            p.set(0);
        } else {
            p.set(v);
        }
    });
    if direct.is_err() {
        HELD.fetch_add(bytes, Relaxed);
    }
}

/// `A`, counting the bytes it holds.
pub struct Counting<A>(pub A);

// SAFETY: every call is `A`'s; the count is a side effect that neither allocates nor unwinds.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { self.0.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { self.0.alloc_zeroed(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { self.0.dealloc(ptr, layout) };
        count(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { self.0.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// How the executable's allocator hands the memory it keeps free back to the system
/// ([`release`]); none for library use.
static RELEASE: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Set what [`release`] calls (once; later calls change nothing).
pub fn set_release(f: fn()) {
    let _ = RELEASE.set(f);
}

/// Hand the memory the allocator keeps free back to the system: this thread's now, each
/// other pool thread's when it next looks for work. For the end of a large file's
/// translation: the allocator keeps freed memory for a while for reuse, but what the
/// translation held is scattered among what survives it, and the large buffers of the output
/// that follow do not fit in it (see `crate::engine`).
pub fn release() {
    if let Some(&f) = RELEASE.get() {
        f();
        // The allocator hands back only the calling thread's free pages, and a page freed
        // from another thread is its owner's: every thread of the pool releases its own.
        if rayon::current_thread_index().is_some() {
            rayon::spawn_broadcast(move |_| f());
        }
    }
}

/// Inputs of this many bytes or more hand the memory a phase of their translation freed back
/// to the system ([`crate::memory::release`]) when the next phase's data would not fit in it:
/// after C's facts (their transient), before printing (C's facts), once the directives are
/// freed, and before the output. That memory is scattered among what survives, in pages of
/// other sizes of block, so the allocations that follow would take new memory beside it:
/// 100,000 directives in C (7.8 MB), peak RSS 217 -> 184 MB with `--diff` for the last two,
/// 170 -> 147 MiB with the first two. Smaller files leave it to the allocator: a run of many
/// files reuses it.
pub const RELEASE_AFTER: usize = 4 << 20;

/// Free `garbage`: if `release`, now, then hand the memory back to the system ([`release`]),
/// so that what is allocated next finds it there instead of taking new memory beside the
/// freed pages (a large file); else on the thread pool, out of the way (freeing millions of
/// small allocations takes a while).
pub fn free<T: Send + 'static>(garbage: T, release: bool) {
    if release {
        drop(garbage);
        self::release();
    } else {
        rayon::spawn(move || drop(garbage));
    }
}

/// Bytes held by the process, as far as counted (0 without the `Counting` allocator).
pub fn held() -> usize {
    HELD.load(Relaxed).max(0) as usize
}

/// Set the limit `check` enforces, in bytes.
pub fn set_limit(bytes: usize) {
    LIMIT.store(bytes, Relaxed);
}

/// The limit in bytes (`usize::MAX`: none).
pub fn limit() -> usize {
    LIMIT.load(Relaxed)
}

/// The payload of the unwinding that `check` starts past the limit.
#[derive(Debug)]
pub struct OverLimit {
    /// Whether the file was the only one being translated.
    pub alone: bool,
    /// Not the limit: a text of 4 GiB or more, whose offsets do not fit the tokens' 32 bits,
    /// or a Fortran token of 256 MiB or more ([`too_long`]).
    pub too_long: bool,
}

/// End the current file's translation (unwinding to its `guard`) if the run holds more
/// than the limit. Cheap: two relaxed loads.
pub fn check() {
    if held() > LIMIT.load(Relaxed) {
        let alone = IN_FLIGHT.load(Relaxed) <= 1;
        // `resume_unwind`: no panic message, this is not a bug.
        std::panic::resume_unwind(Box::new(OverLimit {
            alone,
            too_long: false,
        }));
    }
}

/// End the current file's translation (unwinding to its `guard`): it has a text of 4 GiB or
/// more (the file, or its translation as the runtime-API pass reads it again), whose token
/// offsets do not fit in 32 bits (`crate::lex::Token`), or a Fortran token of 256 MiB or
/// more (`crate::fortran::lex::Token` keeps its length in 28 bits).
pub fn too_long() -> ! {
    std::panic::resume_unwind(Box::new(OverLimit {
        alone: true,
        too_long: true,
    }))
}

/// `f()`, the translation of one file: Err when it went past the memory limit (everything
/// it held is freed by then).
pub fn guard<T>(f: impl FnOnce() -> T) -> Result<T, OverLimit> {
    IN_FLIGHT.fetch_add(1, Relaxed);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    IN_FLIGHT.fetch_sub(1, Relaxed);
    match r {
        Ok(v) => Ok(v),
        Err(payload) => match payload.downcast::<OverLimit>() {
            Ok(over) => Err(*over),
            Err(other) => std::panic::resume_unwind(other),
        },
    }
}

/// The default limit: half of the memory this process may use (the machine's, or its
/// control group's where that is less), in MiB.
pub fn default_limit_mib() -> u64 {
    let pages = unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) };
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    let machine = u64::try_from(pages.max(0))
        .unwrap_or(0)
        .saturating_mul(u64::try_from(page.max(0)).unwrap_or(0));
    let total = cgroup_limit().map_or(machine, |c| c.min(machine));
    ((total / 2) >> 20).max(1)
}

/// The memory limit of this process's control group (v2 `memory.max`, v1
/// `memory.limit_in_bytes`), where one is set and readable.
fn cgroup_limit() -> Option<u64> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    groups
        .lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            let file = match controllers {
                "" => format!("/sys/fs/cgroup{path}/memory.max"),
                c if c.split(',').any(|c| c == "memory") => {
                    format!("/sys/fs/cgroup/memory{path}/memory.limit_in_bytes")
                }
                _ => return None,
            };
            std::fs::read_to_string(file)
                .ok()?
                .trim()
                .parse::<u64>()
                .ok()
        })
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_panics_pass_through_the_guard() {
        assert_eq!(guard(|| 5).unwrap(), 5);
        let r = std::panic::catch_unwind(|| guard(|| panic!("a bug")));
        assert!(r.is_err());
        let over = guard(|| {
            std::panic::resume_unwind(Box::new(OverLimit {
                alone: true,
                too_long: false,
            }))
        });
        assert!(over.is_err_and(|o| o.alone && !o.too_long));
        // A text whose offsets do not fit the tokens' 32 bits.
        let long = guard(|| too_long());
        assert!(long.is_err_and(|o| o.alone && o.too_long));
    }

    #[test]
    fn release_calls_the_allocators_hook() {
        static CALLS: AtomicUsize = AtomicUsize::new(0);
        release();
        set_release(|| {
            CALLS.fetch_add(1, Relaxed);
        });
        release();
        assert_eq!(CALLS.load(Relaxed), 1);
    }

    #[test]
    fn the_default_limit_is_below_the_machine() {
        let mib = default_limit_mib();
        let pages = unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) } as u64;
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
        assert!(mib >= 1 && mib <= (pages * page / 2) >> 20, "{mib}");
    }
}
