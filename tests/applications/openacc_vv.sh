#!/usr/bin/env bash
# The OpenACC V&V suite's Fortran tests (OpenACCUserGroup/OpenACCV-V, Tests/*.F90: one
# program per feature, exit status 0 when every subtest passes): each is migrated with
# acc2omp and its translation built with gfortran -fopenmp (host, 3 threads) and with flang-22
# offloading to the host device (separate memory; 4 teams of 3 threads). The suite is never
# part of this repository: pass the path of your own checkout.
#
#   tests/applications/openacc_vv.sh --vv DIR [--only WORD,...] [--jobs N]
#       [--acc2omp BIN] [--work DIR] [--keep]
#
# The reference is the original under gfortran -fopenacc (host fallback: shared memory). A
# test counts where that reference passes. For each, a line: the reference's status, what
# the translation reported (ok, warn: warnings, err: errors, left: OpenACC left with its
# diagnostic), the gfortran and flang builds' statuses (0: passed; build: did not build;
# 124: timed out) and the original built by flang-22 without OpenACC ("seq-flang": a test
# whose own sequential build runs and fails under flang is no evidence against the
# translation; flang-22 has no 'openacc' module, so a test that uses it does not build). Then a
# summary, and the tests whose translation fails where the reference passes, each with its
# known reason when the list below has one. Exits 1 when such a failure is not known.
# About 8 minutes for the 445 tests with 2 jobs on 2 cores (--only selects by name).
set -uo pipefail

usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
here=$(cd "$(dirname "$0")/../.." && pwd)
vv= only= jobs=2 acc2omp="$here/target/release/acc2omp" work= keep=0
while [ $# -gt 0 ]; do
    case "$1" in
    --vv) [ $# -ge 2 ] || usage; vv=$(cd "$2" && pwd) || exit 2; shift 2 ;;
    --only) [ $# -ge 2 ] || usage; only=$2; shift 2 ;;
    --jobs) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
    --acc2omp) [ $# -ge 2 ] || usage; acc2omp=$2; shift 2 ;;
    --work) [ $# -ge 2 ] || usage; work=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) usage ;;
    esac
done
[ -n "$vv" ] && [ -f "$vv/Tests/acc_testsuite.Fh" ] || usage
for tool in gfortran gcc flang-22 "$acc2omp"; do
    command -v "$tool" >/dev/null || { echo "openacc_vv.sh: $tool is missing" >&2; exit 2; }
done
acc2omp=$(command -v "$acc2omp")
. "$here/tests/applications/flang_offload.sh"

# Failures of the translation where the reference passes that are the tests' own, read from
# their sources: they hold with any correct translation under separate memory.
declare -A known=(
    [acc_copyin_async]="test1 leaves 'a' and 'b' on the device (no exit data); test2's stack arrays at the same addresses are then present with test1's values"
    [acc_copyin_async_with_len]="as acc_copyin_async: test1 never deletes what it copies in"
    [acc_copyout_async]="'acc_copyout_async' inside a 'data present(c, f)' region: the structured reference keeps the data, so nothing is copied out (OpenACC and OpenMP alike)"
    [acc_copyout_async_with_len]="as acc_copyout_async"
    [kernels_create]="'devtest' stays on the device (enter data without exit); a later test's array overlapping its address aborts the map ('explicit extension not allowed')"
    [serial_copyout]="'hasDevice' stays on the device (enter data without exit) under a later test's stack data"
    [serial_loop_reduction_bitor_general]="'a', 'b' and 'host_b' are read before they are assigned"
    [data_with_changing_subscript]="flang-22 does not lower 'firstprivate' on 'target teams', kept where the region has a statement besides its loop (docs/translation.md, compiler limits)"
    [acc_on_device]="acc_on_device with a device type known at run time inside a compute construct is left unchanged ('use openacc' stays, which flang-22 lacks)"
)

find "$vv/Tests" -name '*.F90' | sort | while read -r src; do
    n=$(basename "$src" .F90)
    if [ -n "$only" ]; then
        hit=0
        for w in ${only//,/ }; do [[ $n == *"$w"* ]] && hit=1; done
        [ $hit = 1 ] || continue
    fi
    echo "$src"
done >"$work/list"
[ -s "$work/list" ] || { echo "openacc_vv.sh: no test matches" >&2; exit 2; }

# One test: prints "name ref translation gfortran flang seq".
one() {
    local src=$1 n w ref tr g f seq
    n=$(basename "$src" .F90)
    w=$work/t/$n
    mkdir -p "$w/ref" "$w/tr" "$w/seq"
    for d in ref tr seq; do cp "$src" "$vv/Tests/acc_testsuite.Fh" "$w/$d/"; done
    status() { # dir exe [env...]: the exit status of a 30-second run
        local d=$1 exe=$2; shift 2
        (cd "$d" && ulimit -s unlimited 2>/dev/null; "$@" timeout 30 "./$exe" >"$exe.out" 2>&1) 2>/dev/null
        echo $?
    }
    ref=build
    gfortran -cpp -O1 -w -fopenacc -foffload=disable "$w/ref/$n.F90" -o "$w/ref/ref" >"$w/ref/build.log" 2>&1 &&
        ref=$(status "$w/ref" ref)
    if [ "$ref" != 0 ]; then
        echo "$n $ref - - - -"
        return
    fi
    (cd "$w/tr" && "$acc2omp" migrate --write -q --exit-zero "$n.F90" >translate.log 2>&1)
    tr=ok
    grep -q ': warning: ' "$w/tr/translate.log" && tr=warn
    grep -q ': error: ' "$w/tr/translate.log" && tr=err
    grep -qiE '^[[:space:]]*!\$acc' "$w/tr/$n.F90" && tr="$tr+left"
    g=build
    gfortran -cpp -O1 -w -fopenmp -foffload=disable "$w/tr/$n.F90" -o "$w/tr/g" >"$w/tr/g.log" 2>&1 &&
        g=$(status "$w/tr" g env OMP_NUM_THREADS=3)
    f=build
    flang-22 -cpp -O1 "${offload[@]}" "${link[@]}" "$w/tr/$n.F90" -o "$w/tr/f" >"$w/tr/f.log" 2>&1 &&
        f=$(status "$w/tr" f "${run_env[@]}" OMP_NUM_TEAMS=4 OMP_NUM_THREADS=3)
    seq=-
    if [ "$f" != 0 ]; then
        seq=build
        flang-22 -cpp -O1 "$w/seq/$n.F90" -o "$w/seq/s" >"$w/seq/build.log" 2>&1 && seq=$(status "$w/seq" s)
    fi
    echo "$n $ref $tr $g $f $seq"
}
export -f one
export work vv acc2omp
export offload_flags="${offload[*]}" link_flags="${link[*]}" run_flags="${run_env[*]}"
# The arrays do not cross `export`: each job reads them back from the flat strings.
xargs -P "$jobs" -I{} bash -c 'read -r -a offload <<<"$offload_flags"; read -r -a link <<<"$link_flags"; read -r -a run_env <<<"$run_flags"; one "$1"' _ {} <"$work/list" |
    sort >"$work/results"

printf '%-48s %-6s %-12s %-9s %-9s %s\n' test reference translation gfortran flang seq-flang
while read -r n ref tr g f seq; do
    printf '%-48s %-6s %-12s %-9s %-9s %s\n' "$n" "$ref" "$tr" "$g" "$f" "$seq"
done <"$work/results"
awk -v total="$(wc -l <"$work/list")" '
    $2 == 0 { n++; if ($4 == 0) g++; if ($5 == 0) f++; if ($5 != 0 && $6 != 0 && $6 != "build") fs++; if ($3 ~ /left/) left++ }
    END { printf "\n%d tests, %d whose reference passes: gfortran %d pass, flang-22 offload %d pass (%d more fail as their own sequential flang build does), %d with OpenACC left\n", total, n, g, f, fs, left }' "$work/results"

unknown=0
while read -r n ref tr g f seq; do
    [ "$ref" = 0 ] || continue
    for b in gfortran flang; do
        s=$g; [ $b = flang ] && s=$f
        [ "$s" = 0 ] && continue
        [ $b = flang ] && [ "$seq" != 0 ] && [ "$seq" != build ] && continue
        if [ -n "${known[$n]:-}" ]; then
            echo "known: $n ($b $s): ${known[$n]}"
        else
            echo "FAILS: $n ($b $s; translation $tr): $work/t/$n"
            unknown=1
        fi
    done
done <"$work/results"
[ $unknown = 0 ] || { [ "$keep" = 1 ] || echo "(rerun with --keep to look at the builds)"; exit 1; }
