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

fn main() {
    // A libclang worker process started by `semantic` (see src/semantic/worker.rs).
    if let Some(code) = acc2omp::semantic::serve_worker_if_requested() {
        std::process::exit(code);
    }
    acc2omp::write::exit(acc2omp::cli::main());
}
