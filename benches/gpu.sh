#!/usr/bin/env bash
# Generated code on an NVIDIA GPU: the translation offloaded to the GPU against the sequential
# original and the hand-written OpenMP of the same program, as a table with the GPU's name.
#
#   benches/gpu.sh [NPB_DIR]          (from the repository root, after `cargo build --release`)
#
# Programs: benches/programs/*.c (the original under `gcc -O2 -fopenacc` is the sequential
# reference and the expected output), PolyBench-ACC from ../shared/corpus/polybench-acc (its
# hand-written OpenMP/ versions run on the host's cores; the arrays of a SMALL_DATASET build of
# the translation must match the original's) and, given a copy of uhhpctools/openacc-npb, the
# NAS Parallel Benchmarks (class W unless ACC2OMP_NPB_CLASS; a run counts when it verifies).
# The translation (default profile, or ACC2OMP_BENCH_PROFILE) is built with
#   $CLANG -O2 -fopenmp -fopenmp-targets=nvptx64-nvidia-cuda --offload-arch=ARCH
# CLANG is clang-19 when it can offload to the GPU, else the newest clang-NN that can; ARCH
# comes from nvidia-smi (or ACC2OMP_GPU_ARCH, e.g. sm_90). Runs use OMP_TARGET_OFFLOAD=MANDATORY,
# so a build that would silently run on the host fails instead.
#
# Environment: ACC2OMP (the acc2omp binary; default target/release/acc2omp), ACC2OMP_BENCH_RUNS
# (rounds, default 3), ACC2OMP_BENCH_PROGRAMS (words a program's name must contain),
# ACC2OMP_POLYBENCH (corpus folder), ACC2OMP_POLYBENCH_DATASET (default STANDARD),
# ACC2OMP_GPU_FLAGS (replaces the offload flags: `-fopenmp -fopenmp-targets=x86_64-pc-linux-gnu`
# exercises this script on a machine without a GPU), OMP_NUM_THREADS for the host builds.
#
# Exit status: 0 after printing the table, 1 when a build, check or run failed, 2 when this
# machine cannot offload to an NVIDIA GPU (the reason is printed).
set -u

say() { printf '%s\n' "$*" >&2; }
root=$(cd "$(dirname "$0")/.." && pwd)
tool=${ACC2OMP:-$root/target/release/acc2omp}
runs=${ACC2OMP_BENCH_RUNS:-3}
profile=${ACC2OMP_BENCH_PROFILE:-default}
pb=${ACC2OMP_POLYBENCH:-$root/../shared/corpus/polybench-acc}
dataset=${ACC2OMP_POLYBENCH_DATASET:-STANDARD}
npb=${1:-${ACC2OMP_NPB:-}}
class=${ACC2OMP_NPB_CLASS:-W}
only=${ACC2OMP_BENCH_PROGRAMS:-}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}

[ -x "$tool" ] || { say "acc2omp not found at $tool: run 'cargo build --release' or set ACC2OMP"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# --- the GPU and a compiler that can offload to it ---------------------------------------
gpu="(no GPU: ACC2OMP_GPU_FLAGS given)"
if [ -n "${ACC2OMP_GPU_FLAGS:-}" ]; then
  read -r -a offload <<<"$ACC2OMP_GPU_FLAGS"
  candidates=(${CLANG:-clang-19})
else
  if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    say "no NVIDIA GPU here: nvidia-smi is missing or lists no GPU (driver not loaded?)"
    exit 2
  fi
  gpu=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1)
  arch=${ACC2OMP_GPU_ARCH:-}
  if [ -z "$arch" ]; then
    cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
    [ -n "$cap" ] && arch=sm_$cap
  fi
  [ -n "$arch" ] || arch=native
  offload=(-fopenmp -fopenmp-targets=nvptx64-nvidia-cuda "--offload-arch=$arch")
  candidates=(${CLANG:-clang-19 $(compgen -c clang- | grep -E '^clang-[0-9]+$' | sort -t- -k2 -rn | uniq) clang})
fi
cat >"$work/probe.c" <<'EOF'
#include <omp.h>
#include <stdio.h>
int main(void) {
  int on_host = 1, n = omp_get_num_devices();
#pragma omp target map(from: on_host)
  on_host = omp_is_initial_device();
  printf("%d %d\n", n, on_host);
  return on_host;
}
EOF
cc=
why=
for c in "${candidates[@]}"; do
  command -v "$c" >/dev/null 2>&1 || continue
  if ! "$c" -O2 "${offload[@]}" "$work/probe.c" -o "$work/probe" 2>"$work/probe.log"; then
    why="$why
$c ${offload[*]}: $(grep -m1 -iE 'error|cannot|not found' "$work/probe.log")"
    continue
  fi
  libdir=$("$c" -print-resource-dir 2>/dev/null | sed 's|/lib/clang/.*||')/lib
  if ! out=$(LD_LIBRARY_PATH="$libdir:${LD_LIBRARY_PATH:-}" OMP_TARGET_OFFLOAD=MANDATORY "$work/probe" 2>&1); then
    why="$why
$c: the probe built but did not run on the device (libomptarget or the CUDA driver missing?): $(echo "$out" | head -2)"
    continue
  fi
  cc=$c
  break
done
if [ -z "$cc" ]; then
  say "no compiler here offloads to the GPU (${offload[*]}):$why"
  say "clang needs the CUDA toolkit's ptxas and libdevice (--cuda-path), and libomptarget with its CUDA plugin at run time"
  exit 2
fi
export LD_LIBRARY_PATH="$libdir:${LD_LIBRARY_PATH:-}"
say "GPU: $gpu; compiler: $cc ${offload[*]}; host threads: $OMP_NUM_THREADS"

# --- builds ----------------------------------------------------------------------------
# programs: name|seq exe|translated exe|hand exe (or -)|kind (out: compare stdout; npb; pb)
progs=()
problems=()
wanted() { [ -z "$only" ] && return 0; local w; for w in ${only//,/ }; do [[ $1 == *"$w"* ]] && return 0; done; return 1; }
translate() { # dir db
  "$tool" migrate --write -q --exit-zero --profile "$profile" -p "$2" "$1" >"$1.translate.log" 2>&1
}
db() { # dir flags...
  local dir=$1; shift
  local first=1
  { printf '['
    for f in "$dir"/*.c; do
      [ $first = 1 ] || printf ','; first=0
      printf '{"directory":"%s","file":"%s","command":"cc -c %s %s"}' "$dir" "$f" "$*" "$f"
    done
    printf ']'; } >"$dir/compile_commands.json"
}

for src in "$root"/benches/programs/*.c; do
  n=$(basename "$src" .c); wanted "$n" || continue
  d=$work/bench/$n; mkdir -p "$d"; cp "$src" "$d/"
  gcc -O2 -fopenacc "$src" -o "$d/seq" -lm 2>"$d/seq.log" || { problems+=("$n: gcc -fopenacc: $(head -3 "$d/seq.log")"); continue; }
  db "$d"; translate "$d" "$d" || { problems+=("$n: translation failed"); continue; }
  "$cc" -O2 "${offload[@]}" "$d/$n.c" -o "$d/gpu" -lm 2>"$d/gpu.log" || { problems+=("$n: $cc: $(grep -m3 error "$d/gpu.log")"); continue; }
  progs+=("$n|$d/seq|$d/gpu|-|out")
done

if [ -d "$pb/OpenACC" ]; then
  while IFS= read -r src; do
    n=$(basename "$src" .c); wanted "$n" || continue
    rel=${src#"$pb"/OpenACC/}
    d=$work/pb/$n; mkdir -p "$d"
    inc=(-I"$pb/common" -I"$(dirname "$src")")
    ok=1
    for ds in SMALL "$dataset"; do
      mkdir -p "$d/$ds"; cp "$(dirname "$src")"/* "$d/$ds/" 2>/dev/null
      db "$d/$ds" "-I$pb/common -D${ds}_DATASET"; translate "$d/$ds" "$d/$ds" || ok=0
    done
    [ $ok = 1 ] || { problems+=("$n: translation failed"); continue; }
    # The translation's arrays against the original's, on the small dataset.
    gcc -O2 -w "${inc[@]}" -DSMALL_DATASET -DPOLYBENCH_DUMP_ARRAYS "$src" "$pb/common/polybench.c" -lm -o "$d/check-seq" &&
      "$cc" -O2 -w "${offload[@]}" -I"$pb/common" -I"$d/SMALL" -DSMALL_DATASET -DPOLYBENCH_DUMP_ARRAYS "$d/SMALL/$n.c" "$pb/common/polybench.c" -lm -o "$d/check-gpu" 2>"$d/check.log" ||
      { problems+=("$n: check build failed: $(grep -m3 error "$d/check.log")"); continue; }
    "$d/check-seq" 2>"$d/seq.dump" >/dev/null
    OMP_TARGET_OFFLOAD=MANDATORY "$d/check-gpu" 2>"$d/gpu.dump" >/dev/null
    if ! awk 'NR==FNR { a[FNR]=$0; n=FNR; next }
              { split(a[FNR], x); m=split($0, y); for (i=1;i<=m;i++) { d=x[i]-y[i]; if (d<0) d=-d; if (d>0.01+1e-9*(x[i]<0?-x[i]:x[i])) exit 1 } }
              END { if (FNR!=n) exit 1 }' "$d/seq.dump" "$d/gpu.dump"; then
      problems+=("$n: the GPU translation prints other arrays than the original (SMALL_DATASET)"); continue
    fi
    t=(-DPOLYBENCH_TIME -D"${dataset}_DATASET")
    gcc -O2 -w "${inc[@]}" "${t[@]}" "$src" "$pb/common/polybench.c" -lm -o "$d/seq" &&
      "$cc" -O2 -w "${offload[@]}" -I"$pb/common" -I"$d/$dataset" "${t[@]}" "$d/$dataset/$n.c" "$pb/common/polybench.c" -lm -o "$d/gpu" 2>"$d/gpu.log" ||
      { problems+=("$n: build failed: $(grep -m3 error "$d/gpu.log")"); continue; }
    hand=-
    if [ -f "$pb/OpenMP/$rel" ]; then
      gcc -O2 -w -fopenmp -I"$pb/common" -I"$(dirname "$pb/OpenMP/$rel")" "${t[@]}" "$pb/OpenMP/$rel" "$pb/common/polybench.c" -lm -o "$d/hand" && hand=$d/hand
    fi
    progs+=("$n|$d/seq|$d/gpu|$hand|pb")
  done < <(find "$pb/OpenACC" -name '*.c' -not -path '*/utilities/*' | sort)
else
  say "PolyBench not found at $pb (ACC2OMP_POLYBENCH)"
fi

if [ -n "$npb" ]; then
  inc=$work/include; mkdir -p "$inc"; cp "$(gcc -print-file-name=include)/openacc.h" "$inc/"
  flags="-O3 -mcmodel=medium -w -fgnu89-inline -Wno-error=implicit-function-declaration"
  for B in BT CG EP FT LU MG SP; do
    wanted "$B" || continue
    sub=$(cd "$npb/$B" 2>/dev/null && ls -d "$B"*/ 2>/dev/null | head -1); sub=${sub%/}
    [ -n "$sub" ] || { problems+=("NPB $B: not found in $npb"); continue; }
    b=$(echo "$B" | tr A-Z a-z)
    for v in seq gpu; do
      d=$work/npb/$B-$v; mkdir -p "$d"; cp -r "$npb/$B"/. "$d/"; rm -rf "$d/.git"
      if [ $v = gpu ]; then
        (cd "$d/$sub" && make -C ../sys all UCC=gcc >/dev/null 2>&1 && ../sys/setparams "$b" "$class")
        db "$d/$sub" -I../common; translate "$d" "$d/$sub" || problems+=("NPB $B: translation failed")
        # Clang links its offload runtime itself; -mcmodel=medium is a host option.
        (cd "$d/$sub" && make CC="$cc" CLINK="$cc" UCC=gcc CLASS="$class" CFLAGS="${flags/-mcmodel=medium/} ${offload[*]}" \
          CLINKFLAGS="${flags/-mcmodel=medium/} ${offload[*]}" C_LIB=-lm >"$d.log" 2>&1)
      else
        (cd "$d/$sub" && make CC=gcc CLINK=gcc UCC=gcc CLASS="$class" CFLAGS="$flags -I$inc" CLINKFLAGS="$flags" \
          C_LIB="-lm -lgomp" >"$d.log" 2>&1)
      fi
    done
    s=$work/npb/$B-seq/$sub/$b.$class.x; g=$work/npb/$B-gpu/$sub/$b.$class.x
    if [ -x "$s" ] && [ -x "$g" ]; then progs+=("$B.$class|$s|$g|-|npb"); else problems+=("NPB $B: build failed (see $work/npb/$B-*.log)"); fi
  done
fi

# --- runs --------------------------------------------------------------------------------
# run EXE KIND OUT -> prints seconds (PolyBench: the kernel's), stdout in OUT; fails on a
# failed run or an NPB verification that does not succeed
run() {
  local exe=$1 kind=$2 out=$3 start end
  start=$(date +%s.%N)
  (cd "$(dirname "$exe")" && ulimit -s unlimited 2>/dev/null; OMP_TARGET_OFFLOAD=MANDATORY timeout 3600 "$exe") >"$out" 2>/dev/null || return 1
  end=$(date +%s.%N)
  case $kind in
    pb) tail -1 "$out" ;;
    npb) grep -qE 'Verification *= *SUCCESSFUL' "$out" || return 1; awk -v a="$start" -v b="$end" 'BEGIN { print b - a }' ;;
    *) awk -v a="$start" -v b="$end" 'BEGIN { print b - a }' ;;
  esac
}
declare -A times
failed=()
for ((r = 0; r < runs; r++)); do
  for p in "${progs[@]}"; do
    IFS='|' read -r n seq tr hand kind <<<"$p"
    for which in seq tr hand; do
      exe=${!which}; [ "$exe" = - ] && continue
      if t=$(run "$exe" "$kind" "$work/out-$which.txt"); then
        times[$n,$which]="${times[$n,$which]:-} $t"
      else
        failed+=("$n: the $which run failed (round $((r + 1)))")
      fi
    done
    if [ "$kind" = out ] && ! cmp -s "$work/out-seq.txt" "$work/out-tr.txt"; then
      failed+=("$n: the GPU output differs from the reference (round $((r + 1)))")
    fi
  done
done

med() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR]=$1 } END { if (NR==0) print "-"; else if (NR%2) printf "%.3f", v[(NR+1)/2]; else printf "%.3f", (v[NR/2]+v[NR/2+1])/2 }'; }
ratio() { if [ "$1" = - ] || [ "$2" = - ]; then echo -; else awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }'; fi; }
echo "GPU: $gpu; $cc ${offload[*]}; profile $profile; $runs round(s), medians; host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), OMP_NUM_THREADS=$OMP_NUM_THREADS; load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-22s %10s %10s %10s %10s %11s\n' program "seq s" "hand s" "gpu s" "gpu/seq" "gpu/hand"
for p in "${progs[@]}"; do
  IFS='|' read -r n seq tr hand kind <<<"$p"
  s=$(echo "${times[$n,seq]:-}" | med); g=$(echo "${times[$n,tr]:-}" | med); h=$(echo "${times[$n,hand]:-}" | med)
  printf '%-22s %10s %10s %10s %10s %11s\n' "$n" "$s" "$h" "$g" "$(ratio "$g" "$s")" "$(ratio "$g" "$h")"
done
echo "(seq: the original, sequential, gcc; hand: PolyBench's hand-written OpenMP on the host's cores, gcc; gpu: the translation offloaded; PolyBench: kernel time, others: process time)"
all=("${problems[@]}" "${failed[@]}")
if [ ${#all[@]} -gt 0 ]; then printf '\n%s\n' "${all[@]}"; exit 1; fi
