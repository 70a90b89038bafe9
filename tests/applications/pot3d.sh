#!/usr/bin/env bash
# POT3D (predsci/POT3D), a fixed-form Fortran solar-corona potential-field solver with OpenACC
# (80 directives: unstructured data, async queues, atomics, host_data around MPI): migrate a
# copy with acc2omp, build the translation with flang-22 offloading to the host device
# (separate memory; tests/common/device_stub.c stands in for the device runtime) and compare
# its solver iterations and magnetic energies with POT3D built without OpenACC. POT3D's code
# is never part of this repository: pass a checkout of a release whose source is
# src/pot3d.f (v3.1.0r up to 5e8ee69, r3.3.0; later ones use 'do concurrent').
#
#   tests/applications/pot3d.sh --pot3d DIR [--acc2omp BIN] [--work DIR] [--keep]
#
# Cases: the release's validation run (63x91x225 mesh; the sequential build must also print
# the energies of the release's own validation output) and its three examples on a 41x61x121
# mesh. Builds of the translation: flang-offload and flang-offload-reverse (every device
# worksharing loop backwards); iterations must match and energies agree exactly (forward)
# or to 1e-9 (reverse: sums in another order). MPI is a one-rank stand-in (mpi_stub/, whose
# periodic neighbour is the rank itself); HDF5 input is read from a raw copy written by
# pot3d/h5raw.py (needs Python's h5py) through pot3d/h5_stub.f90, as flang cannot read
# gfortran's HDF5 modules. flang keeps automatic arrays on the stack: the runs lift its
# limit. Prints one line per case and build; exits 1 when any differs.
set -uo pipefail

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
here=$(cd "$(dirname "$0")/../.." && pwd)
pot3d= acc2omp="$here/target/release/acc2omp" work= keep=0
while [ $# -gt 0 ]; do
    case "$1" in
    --pot3d) [ $# -ge 2 ] || usage; pot3d=$(cd "$2" && pwd) || exit 2; shift 2 ;;
    --acc2omp) [ $# -ge 2 ] || usage; acc2omp=$2; shift 2 ;;
    --work) [ $# -ge 2 ] || usage; work=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) usage ;;
    esac
done
[ -n "$pot3d" ] || usage
[ -f "$pot3d/src/pot3d.f" ] ||
    { echo "pot3d.sh: $pot3d/src/pot3d.f is missing (check out v3.1.0r .. 5e8ee69)" >&2; exit 2; }
for tool in gfortran gcc flang-22 python3 "$acc2omp"; do
    command -v "$tool" >/dev/null || { echo "pot3d.sh: $tool is missing" >&2; exit 2; }
done
python3 -c 'import h5py' 2>/dev/null ||
    { echo "pot3d.sh: Python's h5py is missing (pip install h5py)" >&2; exit 2; }
# The work folder, the MPI stand-in and the offload flags.
. "$here/tests/applications/flang_offload.sh"
h5="$here/tests/applications/pot3d"
ulimit -s unlimited 2>/dev/null || ulimit -s 1048576 2>/dev/null

failed=0
# The sources: the release's, HDF5's reader and writer (rdh5, wrh5) taken out of zm_sds.f for
# h5_stub.f90's; seq as it is, tr migrated.
for v in seq tr; do
    rm -rf "${work:?}/$v" && mkdir -p "$work/$v"
    cp "$pot3d"/src/*.f "$h5/h5_stub.f90" "$work/$v/"
    awk '/^ +subroutine (rdh5|wrh5) / { skip = 1 }
         !skip { print }
         skip && /^ +end( +subroutine.*)? *$/ { skip = 0 }' "$pot3d/src/zm_sds.f" >"$work/$v/zm_sds.f"
done
grep -q -i 'use hdf5' "$work/seq/zm_sds.f" &&
    { echo "pot3d.sh: zm_sds.f still uses HDF5 after rdh5 and wrh5 were removed" >&2; exit 2; }
"$acc2omp" migrate "$work/tr" --write -q >"$work/migrate.log" 2>&1
[ $? -le 1 ] || { echo "acc2omp failed on pot3d: $(tail -3 "$work/migrate.log")"; failed=1; }
files="number_types.f zm_parse_modules.f zm_parse.f zm_sds_modules.f zm_sds.f h5_stub.f90 pot3d.f"
(cd "$work/seq" && gfortran -O2 -fallow-argument-mismatch "$stub/mpi.f90" $files \
    "$work/mpi_stub.o" -o pot3d >build.log 2>&1) ||
    { echo "pot3d: the sequential build failed ($work/seq/build.log)"; exit 1; }
(cd "$work/tr" && flang-22 -O2 "${offload[@]}" "${link[@]}" "$stub/mpi.f90" $files \
    "$work/mpi_stub.o" -o pot3d >build.log 2>&1) ||
    { echo "pot3d: flang-22 cannot build the translation ($work/tr/build.log)"; exit 1; }

# summary OUT: the solver's iteration count and the energies, one number per line.
summary() {
    grep -h -A1 'Number of iterations' "$1" | grep -o '[0-9][0-9]*' | tail -1
    grep -h '^Energy in\|^Magnetic energy' "$1" | sed 's/.*= *//'
}
# same A B TOLERANCE: the summaries have the same lines, numbers within TOLERANCE.
same() {
    local a b
    a=$(summary "$1") b=$(summary "$2")
    [ "$(wc -l <<<"$a")" = 5 ] && [ "$(wc -l <<<"$b")" = 5 ] || return 1
    paste <(echo "$a") <(echo "$b") | awk -v tol="$3" '
        { d = $1 - $2; if (d < 0) d = -d; s = $2 < 0 ? -$2 : $2
          if (d > tol * (s > 1e-300 ? s : 1)) bad = 1 }
        END { exit bad }'
}
# run CASE DIR [MESH]: copies DIR's pot3d.dat and HDF5 files into $work/CASE/BUILD, the mesh
# set to MESH ("nr nt np") when given, and runs each build there.
run() {
    local c=$1 src=$2 w="$work/$1" mesh=${3:-} order rc nr nt np
    python3 "$h5/h5raw.py" "$src"/*.h5 || { echo "$c: h5raw.py failed"; failed=1; return; }
    for b in seq flang-offload flang-offload-reverse; do
        rm -rf "${w:?}/$b" && mkdir -p "$w/$b"
        cp "$src"/pot3d.dat "$src"/*.h5.raw "$w/$b/"
        if [ -n "$mesh" ]; then
            read -r nr nt np <<<"$mesh"
            sed -i "s/nr=[0-9]*/nr=$nr/; s/nt=[0-9]*/nt=$nt/; s/np=[0-9]*/np=$np/" "$w/$b/pot3d.dat"
        fi
        if [ $b = seq ]; then
            (cd "$w/$b" && OMP_NUM_THREADS=2 timeout 900 ../../seq/pot3d >run.log 2>&1)
            rc=$?
            [ $rc = 0 ] || { echo "$c seq: the sequential build failed (exit $rc; $w/seq/run.log)"; failed=1; return; }
            continue
        fi
        order=forward
        [ $b = flang-offload-reverse ] && order=reverse
        (cd "$w/$b" && ACC2OMP_DEVICE_LOOP_ORDER=$order OMP_NUM_THREADS=2 \
            timeout 900 "${run_env[@]}" ../../tr/pot3d >run.log 2>&1)
        rc=$?
        tol=0
        [ $order = reverse ] && tol=1e-9
        if [ $rc = 0 ] && same "$w/seq/pot3d.out" "$w/$b/pot3d.out" $tol; then
            echo "$c $b: same iterations and energies"
        else
            echo "$c $b: DIFFERS (exit $rc; $w/$b/pot3d.out)"
            failed=1
        fi
    done
}

# The release's own answer for its validation case (printed to 9 digits).
if [ -d "$pot3d/testsuite/validation/input" ]; then
    run validation "$pot3d/testsuite/validation/input"
    expected="$pot3d/testsuite/validation/validation/pot3d.out"
    if [ -f "$expected" ] && ! diff <(grep '^Energy in' "$expected") \
        <(grep '^Energy in' "$work/validation/seq/pot3d.out") >/dev/null; then
        echo "validation seq: energies differ from the release's validation output"
        failed=1
    fi
fi
for ex in "$pot3d"/examples/*/; do
    [ -f "$ex/pot3d.dat" ] && run "$(basename "$ex")" "$ex" "41 61 121"
done
exit $failed
