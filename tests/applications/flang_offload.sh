# Sourced by the Fortran application scripts (uk_mac.sh, pot3d.sh) once their options are
# read: $here (the repository), $work (empty: a temporary folder, removed at exit unless
# $keep is 1). Makes $work absolute and sets what the builds need: $stub (the one-rank MPI
# stand-in, compiled to $work/mpi_stub.o), the flang-22 offload flags $offload and $link
# (tests/common/device_stub.c standing in for the device runtime, as tests/common/fortran.rs
# sets it) and $run_env, the environment a translation runs in.
if [ -z "$work" ]; then
    work=$(mktemp -d)
    [ "$keep" = 1 ] || trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work" && work=$(cd "$work" && pwd)
stub="$here/tests/applications/mpi_stub"
dev="$work/offload"
mkdir -p "$dev"
ln -sf /usr/lib/llvm-22/lib/libomptarget.so.22.1 "$dev/libomptarget.so"
ln -sf /usr/lib/x86_64-linux-gnu/libomp.so.5 "$dev/libomp.so"
gcc -O1 -fPIC -c "$here/tests/common/device_stub.c" -o "$dev/device_stub.o" || exit 2
gcc -O2 -c "$stub/mpi_stub.c" -o "$work/mpi_stub.o" || exit 2
offload=(-fopenmp -fopenmp-version=51 -fopenmp-targets=x86_64-pc-linux-gnu)
link=(-Xoffload-linker "$dev/device_stub.o" -L"$dev")
run_env=(env LD_LIBRARY_PATH="$dev" OMP_TARGET_OFFLOAD=MANDATORY LIBOMP_USE_HIDDEN_HELPER_TASK=0)
