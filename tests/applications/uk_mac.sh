#!/usr/bin/env bash
# UK-MAC's Fortran mini-apps with OpenACC (UK-MAC/CloverLeaf_OpenACC, UK-MAC/TeaLeaf_OpenACC):
# migrate a copy of a checkout with acc2omp, build the translation with flang-22 offloading to
# the host device (separate memory; tests/common/device_stub.c stands in for the device
# runtime) and compare its field summaries with the application built without OpenACC. Their
# code is never part of this repository: pass the paths of your own checkouts.
#
#   tests/applications/uk_mac.sh [--cloverleaf DIR] [--tealeaf DIR] [--acc2omp BIN]
#       [--work DIR] [--keep]
#
# The reference is the sequential build (gfortran -O2, no OpenACC): under gcc -fopenacc
# CloverLeaf reads an uninitialized 'private(k)' copy in its accelerate kernel (its kinetic
# energy stays 0). Builds of the translation: flang-offload, and flang-offload-reverse (every
# device worksharing loop backwards). gfortran 12 cannot build either translation: it rejects
# components of a variable with allocatable components in 'map' (docs/translation.md).
# CloverLeaf: 480x480 cells, 87 steps, summaries must match exactly (forward) or to 1e-9
# (reverse: sums in another order). TeaLeaf: 200x200 cells, 5 steps, each solver (cg,
# chebyshev, jacobi, ppcg), to 1e-9, with OMP_NUM_THREADS=1: its host 'parallel' region
# around a kernel with a teams reduction hangs this oracle at 2 threads (flang-22's offload
# runtime over LLVM 19's libomp; a hand-written target reduction inside 'parallel' hangs too).
# MPI is a one-rank stand-in (mpi_stub/). Prints one line per app, solver and build; exits 1
# when any differs.
set -uo pipefail

usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
here=$(cd "$(dirname "$0")/../.." && pwd)
clover= tea= acc2omp="$here/target/release/acc2omp" work= keep=0
while [ $# -gt 0 ]; do
    case "$1" in
    --cloverleaf) clover=$(cd "$2" && pwd) || exit 2; shift 2 ;;
    --tealeaf) tea=$(cd "$2" && pwd) || exit 2; shift 2 ;;
    --acc2omp) acc2omp=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) usage ;;
    esac
done
[ -n "$clover$tea" ] || usage
for tool in gfortran gcc flang-22 "$acc2omp"; do
    command -v "$tool" >/dev/null || { echo "uk_mac.sh: $tool is missing" >&2; exit 2; }
done
# The work folder, the MPI stand-in and the offload flags.
. "$here/tests/applications/flang_offload.sh"

failed=0
# same FILE1 FILE2 TOLERANCE: the ' step:' lines agree field by field.
same() {
    local a b
    a=$(grep '^ step:' "$1") b=$(grep '^ step:' "$2")
    [ -n "$a" ] && [ "$(wc -l <<<"$a")" = "$(wc -l <<<"$b")" ] || return 1
    paste -d'\n' <(echo "$a") <(echo "$b") | awk -v tol="$3" '
        NR % 2 == 1 { n = split($0, x); next }
        { m = split($0, y); if (m != n) bad = 1
          for (i = 3; i <= n; i++) { d = x[i] - y[i]; if (d < 0) d = -d
            s = y[i] < 0 ? -y[i] : y[i]; if (d > tol * (s > 1e-300 ? s : 1)) bad = 1 } }
        END { exit bad }'
}
report() { # APP BUILD REFERENCE-OUT OUT TOLERANCE RC
    if [ "$6" = 0 ] && same "$3" "$4" "$5"; then
        echo "$1 $2: same field summaries"
    else
        echo "$1 $2: DIFFERS (exit $6; $4)"
        failed=1
    fi
}
# prepare APP SRC DECK CELLS STEPS: $work/APP/seq and tr, copies of SRC whose input deck
# DECK runs CELLS x CELLS cells for STEPS steps without the app's own test problem; tr
# migrated. Sets w.
prepare() {
    w="$work/$1"
    rm -rf "$w" && mkdir -p "$w"
    for v in seq tr; do
        cp -r "$2" "$w/$v"
        sed -i "s/x_cells=[0-9]*/x_cells=$4/; s/y_cells=[0-9]*/y_cells=$4/; s/end_step=[0-9]*/end_step=$5/; /test_problem/d" "$w/$v/$3"
    done
    "$acc2omp" migrate "$w/tr" --write -q >"$w/migrate.log" 2>&1
    [ $? -le 1 ] || { echo "acc2omp failed on $1: $(tail -3 "$w/migrate.log")"; failed=1; }
}

if [ -n "$clover" ]; then
    prepare cloverleaf "$clover" clover.in 480 87
    files=$(sed -n '/^clover_leaf:/,/-o clover_leaf/p' "$w/seq/Makefile" | grep -o '[A-Za-z_][A-Za-z_]*[.]f90')
    (cd "$w/seq" && gcc -O2 -c timer_c.c && gfortran -O2 -ffree-line-length-none -fallow-argument-mismatch \
        "$stub/mpi.f90" $files timer_c.o "$work/mpi_stub.o" -o clover_leaf >build.log 2>&1) ||
        { echo "cloverleaf: the sequential build failed ($w/seq/build.log)"; failed=1; }
    (cd "$w/tr" && gcc -O2 -c timer_c.c && flang-22 -O2 "${offload[@]}" "${link[@]}" \
        "$stub/mpi.f90" $files timer_c.o "$work/mpi_stub.o" -o clover_leaf >build.log 2>&1) ||
        { echo "cloverleaf: flang-22 cannot build the translation ($w/tr/build.log)"; failed=1; }
    (cd "$w/seq" && OMP_NUM_THREADS=2 timeout 600 ./clover_leaf >run.log 2>&1)
    for order in forward reverse; do
        tol=0
        [ $order = reverse ] && tol=1e-9
        cp -r "$w/tr" "$w/tr-$order"
        (cd "$w/tr-$order" && ACC2OMP_DEVICE_LOOP_ORDER=$order OMP_NUM_THREADS=2 \
            timeout 900 "${run_env[@]}" ./clover_leaf >run.log 2>&1)
        rc=$?
        build=flang-offload
        [ $order = reverse ] && build=flang-offload-reverse
        report cloverleaf $build "$w/seq/clover.out" "$w/tr-$order/clover.out" $tol $rc
    done
fi

if [ -n "$tea" ]; then
    prepare tealeaf "$tea" tea.in 200 5
    (cd "$w/seq/src" && make -j2 COMPILER=GNU MPI_COMPILER="gfortran -I$stub" C_MPI_COMPILER=gcc \
        OMP_GNU= FLAGS_GNU="-O2 -cpp -ffree-line-length-none -fallow-argument-mismatch" \
        LDLIBS="$work/mpi_stub.o" >build.log 2>&1) ||
        { echo "tealeaf: the sequential build failed ($w/seq/src/build.log)"; failed=1; }
    (cd "$w/tr/src" && make -j2 COMPILER=GNU MPI_COMPILER="flang-22 -I$stub" C_MPI_COMPILER=gcc \
        CFLAGS="-O2 -c" OMP_GNU="${offload[*]}" FLAGS_GNU="-O2 -cpp" LDFLAGS="${link[*]}" \
        LDLIBS="$work/mpi_stub.o" >build.log 2>&1) ||
        { echo "tealeaf: flang-22 cannot build the translation ($w/tr/src/build.log)"; failed=1; }
    for solver in cg chebyshev jacobi ppcg; do
        sed -i "s/^tl_use_[a-z]*/tl_use_$solver/" "$w/seq/tea.in" "$w/tr/tea.in"
        (cd "$w/seq" && OMP_NUM_THREADS=1 timeout 600 ./src/tea_leaf >run.log 2>&1)
        cp "$w/seq/tea.out" "$w/seq/tea.$solver.out"
        for order in forward reverse; do
            (cd "$w/tr" && ACC2OMP_DEVICE_LOOP_ORDER=$order OMP_NUM_THREADS=1 \
                timeout 600 "${run_env[@]}" ./src/tea_leaf >run.log 2>&1)
            rc=$?
            cp "$w/tr/tea.out" "$w/tr/tea.$solver.$order.out"
            build=flang-offload
            [ $order = reverse ] && build=flang-offload-reverse
            report "tealeaf-$solver" $build "$w/seq/tea.$solver.out" "$w/tr/tea.$solver.$order.out" 1e-9 $rc
        done
    done
fi
exit $failed
