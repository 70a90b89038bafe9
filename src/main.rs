use std::alloc::{GlobalAlloc, Layout};

// Translating a large file makes millions of small allocations (directives, clauses, facts),
// which glibc's malloc serves several times slower than mimalloc.
// Counted, for the memory limit (`--max-memory`, see src/memory.rs).
#[global_allocator]
static GLOBAL: acc2omp::memory::Counting<Mimalloc> = acc2omp::memory::Counting(Mimalloc);

/// mimalloc through its plain entry points where the alignment asked for is one every block
/// has (a word), through its aligned ones otherwise: the aligned path costs about twice the
/// instructions, on every one of those millions of allocations.
struct Mimalloc;

const WORD: usize = std::mem::size_of::<usize>();

// SAFETY: mimalloc's blocks are word-aligned, so `mi_malloc`, `mi_zalloc` and `mi_realloc`
// meet a layout of at most that alignment; any other goes to `MiMalloc`'s aligned calls, and
// every block is freed by `mi_free` whichever call made it.
unsafe impl GlobalAlloc for Mimalloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= WORD {
            unsafe { libmimalloc_sys::mi_malloc(layout.size()).cast() }
        } else {
            unsafe { mimalloc::MiMalloc.alloc(layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= WORD {
            unsafe { libmimalloc_sys::mi_zalloc(layout.size()).cast() }
        } else {
            unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        unsafe { libmimalloc_sys::mi_free(ptr.cast()) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        if layout.align() <= WORD {
            unsafe { libmimalloc_sys::mi_realloc(ptr.cast(), size).cast() }
        } else {
            unsafe { mimalloc::MiMalloc.realloc(ptr, layout, size) }
        }
    }
}

unsafe extern "C" {
    /// mimalloc's: frees the calling thread's empty pages and, `force`d, decommits all the
    /// memory its arenas hold free (which it otherwise does a second after a free).
    fn mi_collect(force: bool);
}

fn main() {
    // SAFETY: `mi_collect` takes no pointer, and any thread may call it at any time.
    acc2omp::memory::set_release(|| unsafe { mi_collect(true) });
    // A libclang worker process started by `semantic` (see src/semantic/worker.rs).
    if let Some(code) = acc2omp::semantic::serve_worker_if_requested() {
        std::process::exit(code);
    }
    acc2omp::write::exit(acc2omp::cli::main());
}

#[cfg(test)]
mod tests {
    use std::alloc::{Layout, alloc, alloc_zeroed, dealloc, realloc};

    /// Each entry point of the allocator, at a word's alignment (mimalloc's plain calls) and
    /// above it (its aligned calls): blocks aligned as asked, zeroed where asked, contents kept
    /// by a reallocation that grows and one that shrinks.
    #[test]
    fn blocks_are_aligned_zeroed_and_kept_on_both_paths() {
        for align in [1, 8, 16, 64, 4096] {
            for size in [1, 24, 100, 5000] {
                let layout = Layout::from_size_align(size, align).unwrap();
                unsafe {
                    let z = alloc_zeroed(layout);
                    assert!(
                        !z.is_null() && (z as usize).is_multiple_of(align),
                        "{size} at {align}"
                    );
                    assert!(std::slice::from_raw_parts(z, size).iter().all(|&b| b == 0));
                    dealloc(z, layout);

                    let p = alloc(layout);
                    assert!(
                        !p.is_null() && (p as usize).is_multiple_of(align),
                        "{size} at {align}"
                    );
                    for k in 0..size {
                        *p.add(k) = k as u8;
                    }
                    let grown = realloc(p, layout, size * 3);
                    assert!(
                        !grown.is_null() && (grown as usize).is_multiple_of(align),
                        "{size} grown at {align}"
                    );
                    assert!((0..size).all(|k| *grown.add(k) == k as u8));
                    let big = Layout::from_size_align(size * 3, align).unwrap();
                    let shrunk = realloc(grown, big, size.div_ceil(2));
                    assert!(
                        !shrunk.is_null() && (shrunk as usize).is_multiple_of(align),
                        "{size} shrunk at {align}"
                    );
                    assert!((0..size.div_ceil(2)).all(|k| *shrunk.add(k) == k as u8));
                    dealloc(
                        shrunk,
                        Layout::from_size_align(size.div_ceil(2), align).unwrap(),
                    );
                }
            }
        }
    }

    /// The allocations go through the counting wrapper: what is held grows by a block's size
    /// while it lives (the figure `--max-memory` is checked against).
    #[test]
    fn held_bytes_follow_a_large_block() {
        let before = acc2omp::memory::held();
        let v: Vec<u8> = std::hint::black_box(Vec::with_capacity(64 << 20));
        let during = acc2omp::memory::held();
        drop(v);
        assert!(
            during >= before + (64 << 20) - (8 << 20),
            "{before} -> {during}"
        );
    }
}
