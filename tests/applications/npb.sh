#!/usr/bin/env bash
# NAS Parallel Benchmarks, C OpenACC port (uhhpctools/openacc-npb): migrate a copy of a
# checkout with acc2omp, build each benchmark as OpenACC (the reference, gcc -fopenacc) and as
# OpenMP, run it and check the benchmark's own verification. The port has no licence: its
# code is never part of this repository; pass the path of your own checkout.
#
#   tests/applications/npb.sh NPB_DIR [--class S|W] [--benchmarks bt,cg,...]
#       [--builds reference,gcc,clang,clang-offload,clang-offload-4teams] [--no-db]
#       [--profile P] [--acc2omp BIN] [--work DIR] [--keep]
#
# Builds: reference (gcc -fopenacc, original), gcc (gcc -fopenmp, OMP_NUM_THREADS=2), clang
# (clang-19 -fopenmp, 2 threads), clang-offload (clang-19 host offloading, separate memory, one
# team), clang-offload-4teams (OMP_NUM_TEAMS=4). --no-db migrates without a compile
# database (by default the script writes one and passes it with -p). Prints one line per
# benchmark and build; exits 1 when any does not verify.
set -uo pipefail

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ $# -ge 1 ] || usage
case "$1" in -h | --help) usage ;; esac
npb=$(cd "$1" && pwd) || exit 2
shift
here=$(cd "$(dirname "$0")/../.." && pwd)
class=S
benchmarks=bt,cg,ep,ft,lu,mg,sp
builds=reference,gcc,clang,clang-offload,clang-offload-4teams
db=1
profile=default
acc2omp="$here/target/release/acc2omp"
work=
keep=
while [ $# -gt 0 ]; do
  case "$1" in
    --class) class=$2; shift ;;
    --benchmarks) benchmarks=$2; shift ;;
    --builds) builds=$2; shift ;;
    --no-db) db= ;;
    --profile) profile=$2; shift ;;
    --acc2omp) acc2omp=$2; shift ;;
    --work) work=$2; shift ;;
    --keep) keep=1 ;;
    *) usage ;;
  esac
  shift
done
[ -x "$acc2omp" ] || { echo "npb: $acc2omp not found (cargo build --release)" >&2; exit 2; }
if [ -z "$work" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/acc2omp-npb.XXXXXX")
  [ -n "$keep" ] || trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
libomp=/usr/lib/llvm-19/lib
offload="-fopenmp -fopenmp-targets=x86_64-pc-linux-gnu"
# EP calls vranlc without a declaration (C89 style): an error by default in Clang 16+.
implicit="-Wno-error=implicit-function-declaration"

# The benchmark's directory inside its folder (LU's is LU-HP).
src_dir() {
  local b=${1^^}
  if [ "$b" = LU ]; then echo "$b/LU-HP"; else echo "$b/$b"; fi
}

# compiler, flags and environment of a build
build_cc() {
  case $1 in
    reference) echo "gcc|-O2 -fopenacc|" ;;
    gcc) echo "gcc|-O2 -fopenmp|OMP_NUM_THREADS=2" ;;
    clang) echo "clang-19|-O2 -fopenmp $implicit|OMP_NUM_THREADS=2 LD_LIBRARY_PATH=$libomp" ;;
    clang-offload) echo "clang-19|-O2 $offload $implicit|OMP_NUM_THREADS=2 LD_LIBRARY_PATH=$libomp" ;;
    clang-offload-4teams)
      echo "clang-19|-O2 $offload $implicit|OMP_NUM_TEAMS=4 KMP_TEAMS_THREAD_LIMIT=8 OMP_NUM_THREADS=2 LD_LIBRARY_PATH=$libomp" ;;
    *) echo "npb: unknown build $1" >&2; exit 2 ;;
  esac
}

# A compile database for every C file of a benchmark copy, as its Makefile compiles them.
write_db() {
  local top=$1 first=1
  {
    echo "["
    while IFS= read -r f; do
      local d
      d=$(dirname "$f")
      [ -n "$first" ] || echo ","
      first=
      printf '  {"directory": "%s", "file": "%s", "command": "gcc -c -I../common -O2 %s"}' \
        "$d" "$f" "$(basename "$f")"
    done < <(find "$top" -name '*.c' -not -path '*/sys/*' | sort)
    echo
    echo "]"
  } >"$top/compile_commands.json"
}

# Build copy $1 (a benchmark folder) with build $2 into its benchmark directory; echo the
# executable.
make_bench() {
  local top=$1 bld=$2 b=$3 cc flags
  IFS='|' read -r cc flags _ <<<"$(build_cc "$bld")"
  local dir="$top/$(src_dir "$b" | cut -d/ -f2)"
  (
    cd "$dir" &&
      make -s CC="$cc" CLASS="$class" >/dev/null 2>&1 clean
    make -s CC="$cc" CLINK="$cc" UCC=gcc CLASS="$class" CFLAGS="$flags -mcmodel=medium -fgnu89-inline" \
      CLINKFLAGS="$flags -mcmodel=medium" C_LIB=-lm >"$top/make-$bld.log" 2>&1
  ) || return 1
  echo "$dir/$b.$class.x"
}

status=0
ulimit -s unlimited 2>/dev/null || ulimit -s 1048576 2>/dev/null || true
IFS=, read -ra bench_list <<<"$benchmarks"
IFS=, read -ra build_list <<<"$builds"
for b in "${bench_list[@]}"; do
  B=${b^^}
  [ -d "$npb/$B" ] || { echo "$b: $npb/$B missing"; status=1; continue; }
  orig="$work/$b-acc"
  migrated="$work/$b-omp"
  rm -rf "$orig" "$migrated"
  cp -r "$npb/$B" "$orig"
  cp -r "$npb/$B" "$migrated"
  # npbparams.h (the class's sizes) is generated: the migration must see it.
  for top in "$orig" "$migrated"; do
    (cd "$top/$(src_dir "$b" | cut -d/ -f2)" && make -s config CLASS="$class" >/dev/null 2>&1) ||
      { echo "$b: cannot generate npbparams.h"; status=1; continue 2; }
  done
  args=(migrate --write --profile "$profile")
  if [ -n "$db" ]; then
    write_db "$migrated"
    args+=(-p "$migrated/compile_commands.json")
  fi
  "$acc2omp" "${args[@]}" "$migrated" >"$work/$b-migrate.log" 2>&1
  rc=$?
  if [ $rc -ge 2 ]; then
    echo "$b: acc2omp failed (exit $rc), see $work/$b-migrate.log"
    status=1
    continue
  fi
  summary=$(grep -E '^acc2omp: [0-9]+ file' "$work/$b-migrate.log" | head -1)
  echo "$b: ${summary#acc2omp: }"
  for bld in "${build_list[@]}"; do
    top=$migrated
    [ "$bld" = reference ] && top=$orig
    IFS='|' read -r _ _ env <<<"$(build_cc "$bld")"
    if ! exe=$(make_bench "$top" "$bld" "$b"); then
      printf '%-3s %-22s BUILD FAILED (%s)\n' "$b" "$bld" "$top/make-$bld.log"
      status=1
      continue
    fi
    log="$work/$b-$bld.out"
    start=$(date +%s.%N)
    (cd "$(dirname "$exe")" && env $env OMP_WAIT_POLICY=passive timeout 600 "$exe") >"$log" 2>&1
    rc=$?
    secs=$(echo "$(date +%s.%N) - $start" | bc)
    if [ $rc -eq 0 ] && grep -q 'Verification *= *SUCCESSFUL' "$log"; then
      printf '%-3s %-22s verified   %6.2f s\n' "$b" "$bld" "$secs"
    else
      why=$(grep -m1 -E 'Verification|UNSUCCESSFUL|FAILURE' "$log" | tr -s ' ')
      [ $rc -eq 124 ] && why="timed out"
      printf '%-3s %-22s FAILED     %6.2f s exit %s %s (%s)\n' "$b" "$bld" "$secs" "$rc" "$why" "$log"
      status=1
    fi
  done
done
exit $status
