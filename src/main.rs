// Translating a large file makes millions of small allocations (directives, clauses, facts),
// which glibc's malloc serves several times slower than mimalloc.
// Counted, for the memory limit (`--max-memory`, see src/memory.rs).
#[global_allocator]
static GLOBAL: acc2omp::memory::Counting<mimalloc::MiMalloc> =
    acc2omp::memory::Counting(mimalloc::MiMalloc);

fn main() {
    // A libclang worker process started by `semantic` (see src/semantic/worker.rs).
    if let Some(code) = acc2omp::semantic::serve_worker_if_requested() {
        std::process::exit(code);
    }
    acc2omp::write::exit(acc2omp::cli::main());
}
