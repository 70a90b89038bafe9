fn main() {
    std::process::exit(acc2omp::cli::main());
}
