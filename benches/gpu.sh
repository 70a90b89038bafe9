#!/usr/bin/env bash
# Generated code on an NVIDIA GPU: the translation offloaded to the GPU against the sequential
# original and the hand-written OpenMP of the same program, as a table with the GPU's name;
# optionally also NPB on a few pinned host cores (the generated code's host figure).
#
#   benches/gpu.sh [NPB_DIR]               build and run here (a GPU and clang that offloads)
#   benches/gpu.sh --bundle DIR [NPB_DIR]  build here, no GPU needed; write DIR/run.sh
#   bash DIR/run.sh                        on the GPU machine: needs no compiler, prints the tables
#
# From the repository root, after `cargo build --release`. A bundle holds the executables, the
# runtime libraries they load (libomptarget with its CUDA plugin and the libraries it needs,
# libomp, libgomp; compressed, unpacked to a temporary folder at run time), this script and
# run.sh; copy DIR to the GPU node (nvidia-smi and the CUDA driver must be there) and run it.
#
# Programs: benches/programs/*.c (the original under `gcc -O2 -fopenacc` is the sequential
# reference and the expected output), PolyBench-ACC from ../shared/corpus/polybench-acc (its
# hand-written OpenMP/ versions run on the host's cores; the arrays of a SMALL_DATASET build of
# the translation must match the original's before it is timed) and, given a copy of
# uhhpctools/openacc-npb, the NAS Parallel Benchmarks (class W unless ACC2OMP_NPB_CLASS; a run
# counts when it prints Verification = SUCCESSFUL; times are the benchmark's own "Time in
# seconds", other programs' PolyBench's kernel time or the process's wall time).
# The translation (default profile, or ACC2OMP_BENCH_PROFILE) is built with
#   $CLANG -O2 -fopenmp -foffload-lto -fopenmp-targets=nvptx64-nvidia-cuda --offload-arch=ARCH
# (-foffload-lto: the device code of all the files is linked and optimised as one program).
# CLANG is clang-19 when it can offload to the GPU, else the newest clang-NN that can; ARCH
# comes from nvidia-smi (or ACC2OMP_GPU_ARCH, e.g. sm_90; a bundle needs it, default sm_90).
# Clang needs a CUDA toolkit's ptxas, nvlink and nvvm/libdevice to build: ACC2OMP_CUDA_PATH
# names its root when it is not found by itself; `benches/gpu-cuda-root.sh DIR` makes one
# from PyPI's CUDA 12 wheel (with CUDA 12.8 or later, LLVM 19's runtime rejects the cubins:
# see that script). Runs use OMP_TARGET_OFFLOAD=MANDATORY, so a build that would silently run
# on the host fails instead.
#
# Fixtures table (part `fixtures`): every self-checking program of fixtures/programs (C, C++,
# Fortran; not unsupported_by_gcc/, which has no GCC reference) translated and built for the GPU by clang and, where GCC's nvptx offloading is
# installed (gcc-12-offload-nvptx, nvptx-tools), by gcc, g++ or gfortran
# (-foffload=nvptx-none); each run's output must be the program's under -fopenacc on the build
# machine's host (built without OpenACC where the program says "Reference: the program built
# without OpenACC"). Programs the tool leaves untranslated (with their diagnostics) are counted.
#
# Host table (with NPB_DIR, unless ACC2OMP_BENCH_PARTS leaves out `host`): each NPB benchmark,
# sequential original vs translation under `gcc -fopenmp` and `clang -fopenmp` (the host
# offloading build, -fopenmp-targets=x86_64-pc-linux-gnu, where the translation calls
# omp_target_* functions, as benches/real_code.rs does), pinned to ACC2OMP_HOST_CPUS (default
# 0,1; `taskset`, else Python's sched_setaffinity) with OMP_NUM_THREADS = their count,
# OMP_WAIT_POLICY=passive and no GPU visible; process wall time, sequential and translated
# alternating, ratios per round as min/median/max.
#
# Environment: ACC2OMP (the acc2omp binary; default target/release/acc2omp), ACC2OMP_BENCH_RUNS
# (rounds, default 3), ACC2OMP_BENCH_PROGRAMS (words a program's name must contain),
# ACC2OMP_BENCH_PARTS (gpu,host,fixtures; default all), ACC2OMP_BENCH_DEADLINE (seconds after which no
# run starts: the tables then hold the rounds done), ACC2OMP_BENCH_TIMEOUT (seconds a run may
# take, default 600; a fixture's at most 120), ACC2OMP_POLYBENCH (corpus folder), ACC2OMP_POLYBENCH_DATASET (default
# STANDARD), ACC2OMP_GPU_FLAGS (replaces the offload flags: `-fopenmp
# -fopenmp-targets=x86_64-pc-linux-gnu` exercises this script, both modes, on a machine without
# a GPU), ACC2OMP_GPU_SKIP=1 (run.sh skips the GPU table: checks a bundle where there is no
# GPU), OMP_NUM_THREADS for the hand-written host builds (default: all cores).
#
# Exit status: 0 after printing the tables, 1 when a build, check or run failed, 2 when this
# machine cannot offload to an NVIDIA GPU (the reason is printed).
set -u

say() { printf '%s\n' "$*" >&2; }
mode=local
bundle=
case ${1:-} in
  --bundle) mode=bundle; bundle=${2:?usage: gpu.sh --bundle DIR [NPB_DIR]}; shift 2 ;;
  --run) mode=run; bundle=${2:?usage: gpu.sh --run DIR}; shift 2 ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${ACC2OMP_BENCH_RUNS:-3}
only=${ACC2OMP_BENCH_PROGRAMS:-}
parts=${ACC2OMP_BENCH_PARTS:-gpu,host,fixtures}
cpus=${ACC2OMP_HOST_CPUS:-0,1}
deadline=${ACC2OMP_BENCH_DEADLINE:-}
run_timeout=${ACC2OMP_BENCH_TIMEOUT:-600}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
problems=()

# --- the GPU and a compiler that can offload to it ---------------------------------------
gpu_name() { nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader 2>/dev/null | head -1; }
have_gpu() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; }

if [ "$mode" != run ]; then
  tool=${ACC2OMP:-$root/target/release/acc2omp}
  profile=${ACC2OMP_BENCH_PROFILE:-default}
  pb=${ACC2OMP_POLYBENCH:-$root/../shared/corpus/polybench-acc}
  dataset=${ACC2OMP_POLYBENCH_DATASET:-STANDARD}
  npb=${1:-${ACC2OMP_NPB:-}}
  class=${ACC2OMP_NPB_CLASS:-W}
  [ -x "$tool" ] || { say "acc2omp not found at $tool: run 'cargo build --release' or set ACC2OMP"; exit 2; }

  gpu="(no GPU: ACC2OMP_GPU_FLAGS given)"
  if [ -n "${ACC2OMP_GPU_FLAGS:-}" ]; then
    read -r -a offload <<<"$ACC2OMP_GPU_FLAGS"
    candidates=(${CLANG:-clang-19})
    arch=
  else
    if [ "$mode" = bundle ]; then
      gpu="(built for ${ACC2OMP_GPU_ARCH:-sm_90})"
      arch=${ACC2OMP_GPU_ARCH:-sm_90}
    else
      if ! have_gpu; then
        say "no NVIDIA GPU here: nvidia-smi is missing or lists no GPU (driver not loaded?); build a bundle with --bundle DIR to run elsewhere"
        exit 2
      fi
      gpu=$(gpu_name)
      arch=${ACC2OMP_GPU_ARCH:-}
      if [ -z "$arch" ]; then
        cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
        [ -n "$cap" ] && arch=sm_$cap
      fi
      [ -n "$arch" ] || arch=native
    fi
    offload=(-fopenmp -foffload-lto -fopenmp-targets=nvptx64-nvidia-cuda "--offload-arch=$arch")
    [ -n "${ACC2OMP_CUDA_PATH:-}" ] && offload+=("--cuda-path=$ACC2OMP_CUDA_PATH")
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
    libdir=$("$c" -print-resource-dir 2>/dev/null | sed 's|/lib/clang/.*||')/lib
    flags=("${offload[@]}")
    # Some packagings (Debian's) keep the device runtime's bitcode beside libomp, where the
    # driver does not look.
    [ -n "$arch" ] && [ -f "$libdir/libomptarget-nvptx-$arch.bc" ] &&
      flags+=("--libomptarget-nvptx-bc-path=$libdir/libomptarget-nvptx-$arch.bc")
    if ! "$c" -O2 "${flags[@]}" "$work/probe.c" -o "$work/probe" 2>"$work/probe.log"; then
      why="$why
$c ${flags[*]}: $(grep -m1 -iE 'error|cannot|not found' "$work/probe.log")"
      continue
    fi
    if [ "$mode" = local ] &&
      ! out=$(LD_LIBRARY_PATH="$libdir:${LD_LIBRARY_PATH:-}" OMP_TARGET_OFFLOAD=MANDATORY "$work/probe" 2>&1); then
      why="$why
$c: the probe built but did not run on the device (libomptarget or the CUDA driver missing?): $(echo "$out" | head -2)"
      continue
    fi
    cc=$c
    offload=("${flags[@]}")
    break
  done
  if [ -z "$cc" ]; then
    say "no compiler here offloads to the GPU (${offload[*]}):$why"
    say "clang needs the CUDA toolkit's ptxas, nvlink and libdevice (ACC2OMP_CUDA_PATH), and libomptarget with its CUDA plugin at run time"
    exit 2
  fi
  host_cc=${CLANG_HOST:-$cc}
  export LD_LIBRARY_PATH="$libdir:${LD_LIBRARY_PATH:-}"
  say "GPU: $gpu; compiler: $cc ${offload[*]}"
fi

wanted() { [ -z "$only" ] && return 0; local w; for w in ${only//,/ }; do [[ $1 == *"$w"* ]] && return 0; done; return 1; }
part() { [[ ",$parts," == *",$1,"* ]]; }

# --- builds ----------------------------------------------------------------------------
# $work/programs: name|kind|seq|gpu|hand|check-seq|check-gpu (kind out: compare stdout, npb,
# pb; - where there is none); $work/host: name|compiler|seq|translated
if [ "$mode" != run ]; then
  : >"$work/programs"
  : >"$work/host"
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

  if [ -n "$npb" ] && { part gpu || part host; }; then
    inc=$work/include; mkdir -p "$inc"; cp "$(gcc -print-file-name=include)/openacc.h" "$inc/"
    flags="-O3 -mcmodel=medium -w -fgnu89-inline -Wno-error=implicit-function-declaration"
    # Clang links its offload runtime itself; -mcmodel=medium is a host option. SP's min/max
    # macros, defined before it includes <math.h>, break the device math functions of that
    # name which clang's GPU math.h declares: <math.h> comes first.
    gflags="${flags/-mcmodel=medium/} -include math.h ${offload[*]}"
    for B in BT CG EP FT LU MG SP; do
      wanted "$B" || continue
      sub=$(cd "$npb/$B" 2>/dev/null && ls -d "$B"*/ 2>/dev/null | head -1); sub=${sub%/}
      [ -n "$sub" ] || { problems+=("NPB $B: not found in $npb"); continue; }
      b=$(echo "$B" | tr A-Z a-z)
      t=$work/npb/$B-translated; mkdir -p "$t"; cp -r "$npb/$B"/. "$t/"; rm -rf "$t/.git"
      (cd "$t/$sub" && make -C ../sys all UCC=gcc >/dev/null 2>&1 && ../sys/setparams "$b" "$class")
      db "$t/$sub" -I../common
      translate "$t" "$t/$sub" || { problems+=("NPB $B: translation failed"); continue; }
      targets=$(grep -l 'omp_target_' "$t/$sub"/*.c "$t"/common/*.c 2>/dev/null | head -1)
      # variant|source|compiler|flags|libraries
      variants=("seq-gcc|$npb/$B|gcc|$flags -I$inc|-lm -lgomp" "gpu|$t|$cc|$gflags|-lm")
      if part host; then
        hflags="$flags -fopenmp"
        [ -n "$targets" ] && hflags="${flags/-mcmodel=medium/} -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu"
        variants+=("tr-gcc|$t|gcc|$flags -fopenmp -foffload=disable|-lm" "seq-clang|$npb/$B|$host_cc|$flags -I$inc|-lm -lgomp"
          "tr-clang|$t|$host_cc|$hflags|-lm")
      fi
      ok=1
      for v in "${variants[@]}"; do
        IFS='|' read -r name from c f l <<<"$v"
        d=$work/npb/$B-$name; mkdir -p "$d"; cp -r "$from"/. "$d/"; rm -rf "$d/.git"
        (cd "$d/$sub" && make CC="$c" CLINK="$c" UCC=gcc CLASS="$class" CFLAGS="$f" CLINKFLAGS="$f" C_LIB="$l" >"$d.log" 2>&1)
        [ -x "$d/$sub/$b.$class.x" ] || { problems+=("NPB $B $name: build failed: $(grep -m2 'error:' "$d.log")"); ok=0; }
      done
      [ $ok = 1 ] || continue
      x() { echo "$work/npb/$B-$1/$sub/$b.$class.x"; }
      echo "$B.$class|npb|$(x seq-gcc)|$(x gpu)|-|-|-" >>"$work/programs"
      if part host; then
        echo "$B.$class|gcc|$(x seq-gcc)|$(x tr-gcc)" >>"$work/host"
        echo "$B.$class|$host_cc${targets:+-offload}|$(x seq-clang)|$(x tr-clang)" >>"$work/host"
      fi
    done
  fi

  if ! part gpu; then
    : # PolyBench and the bundled programs are timed in the GPU table only
  elif [ -d "$pb/OpenACC" ]; then
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
      # The translation's arrays against the original's, on the small dataset (compared
      # where the GPU is).
      gcc -O2 -w "${inc[@]}" -DSMALL_DATASET -DPOLYBENCH_DUMP_ARRAYS "$src" "$pb/common/polybench.c" -lm -o "$d/check-seq" &&
        "$cc" -O2 -w "${offload[@]}" -I"$pb/common" -I"$d/SMALL" -DSMALL_DATASET -DPOLYBENCH_DUMP_ARRAYS "$d/SMALL/$n.c" "$pb/common/polybench.c" -lm -o "$d/check-gpu" 2>"$d/check.log" ||
        { problems+=("$n: check build failed: $(grep -m1 'error:' "$d/check.log")"); continue; }
      t=(-DPOLYBENCH_TIME -D"${dataset}_DATASET")
      gcc -O2 -w "${inc[@]}" "${t[@]}" "$src" "$pb/common/polybench.c" -lm -o "$d/seq" &&
        "$cc" -O2 -w "${offload[@]}" -I"$pb/common" -I"$d/$dataset" "${t[@]}" "$d/$dataset/$n.c" "$pb/common/polybench.c" -lm -o "$d/gpu" 2>"$d/gpu.log" ||
        { problems+=("$n: build failed: $(grep -m1 'error:' "$d/gpu.log")"); continue; }
      hand=-
      if [ -f "$pb/OpenMP/$rel" ]; then
        gcc -O2 -w -fopenmp -foffload=disable -I"$pb/common" -I"$(dirname "$pb/OpenMP/$rel")" "${t[@]}" "$pb/OpenMP/$rel" "$pb/common/polybench.c" -lm -o "$d/hand" 2>/dev/null && hand=$d/hand
      fi
      echo "$n|pb|$d/seq|$d/gpu|$hand|$d/check-seq|$d/check-gpu" >>"$work/programs"
    done < <(find "$pb/OpenACC" -name '*.c' -not -path '*/utilities/*' | sort)
  else
    say "PolyBench not found at $pb (ACC2OMP_POLYBENCH)"
  fi

  for src in "$root"/benches/programs/*.c; do
    n=$(basename "$src" .c); part gpu && wanted "$n" || continue
    d=$work/bench/$n; mkdir -p "$d"; cp "$src" "$d/"
    gcc -O2 -fopenacc -foffload=disable "$src" -o "$d/seq" -lm 2>"$d/seq.log" || { problems+=("$n: gcc -fopenacc: $(head -3 "$d/seq.log")"); continue; }
    db "$d"; translate "$d" "$d" || { problems+=("$n: translation failed"); continue; }
    "$cc" -O2 "${offload[@]}" "$d/$n.c" -o "$d/gpu" -lm 2>"$d/gpu.log" || { problems+=("$n: $cc: $(grep -m1 'error:' "$d/gpu.log")"); continue; }
    echo "$n|out|$d/seq|$d/gpu|-|-|-" >>"$work/programs"
  done

  # The self-checking programs of fixtures/programs (C, C++ and Fortran): their output under
  # gcc/gfortran -fopenacc on the host is the reference; the translation is built for the
  # GPU by clang and, where GCC's nvptx offloading is installed, by gcc/g++/gfortran.
  if part fixtures; then
    : >"$work/fixtures"
    # nvptx has no 16-byte atomics of its own: libatomic has them (complex reductions).
    gcc_offload=(-fopenmp -foffload=nvptx-none "-foffload-options=nvptx-none=-lm -latomic")
    printf 'int main(void){int h=1;\n#pragma omp target map(from:h)\nh=0;\nreturn h;}\n' >"$work/gprobe.c"
    if [ -n "${ACC2OMP_GPU_FLAGS:-}" ]; then
      gcc_offload=() # no GPU: clang's build with those flags only
    elif ! gcc -O1 "${gcc_offload[@]}" "$work/gprobe.c" -o "$work/gprobe" 2>"$work/gprobe.log"; then
      say "gcc cannot offload to nvptx (gcc-12-offload-nvptx missing?): the fixtures get clang's GPU build only"
      gcc_offload=()
    fi
    fx=$work/fixtures.d
    # Fortran programs gfortran cannot build in any OpenMP form (the Fortran suite's
    # [[oracle_limit]] entries for its gfortran build): counted as `limit`, not built.
    gf_limits=" $(awk '/^\[\[/ { limit = ($0 == "[[oracle_limit]]"); prog = "" }
      limit && /^program *=/ { gsub(/.*= *"|".*/, ""); prog = $0 }
      limit && prog != "" && /^builds *=/ && /"gfortran"/ { print prog }' "$root/fixtures/programs/fortran/expectations.toml" 2>/dev/null | tr '\n' ' ')"
    for src in "$root"/fixtures/programs/*.c "$root"/fixtures/programs/*.cpp "$root"/fixtures/programs/fortran/*.[fF]*; do
      n=$(basename "$src"); wanted "$n" || continue
      case $n in
        *.c) ref=gcc; builds=("clang|$cc" "gcc|gcc") ;;
        *.cpp) ref=g++; builds=("clang|${cc/clang/clang++}" "gcc|g++") ;;
        *.f|*.F|*.f90|*.F90) ref=gfortran; builds=("gfortran|gfortran") ;;
        *) continue ;;
      esac
      d=$fx/$n; mkdir -p "$d/ref" "$d/tr"
      cp "$src" "$d/ref/"; cp "$src" "$d/tr/"
      # A Fortran program's `! flags:` line (e.g. -O2) applies to every build.
      # clang-19's nvptx build at -O1 can emit calls ptxas rejects ("Call has wrong number of
      # parameters"): the GPU builds use -O2.
      read -r -a extra <<<"$(sed -n '1s/^! flags://p' "$src")"
      [ ${#extra[@]} -gt 0 ] || extra=(-O1)
      gpu_opt=("${extra[@]}"); [ "${extra[*]}" = -O1 ] && gpu_opt=(-O2)
      # A program marked "Reference: the program built without OpenACC" (whose -fopenacc
      # build is undefined) is compared with its build without OpenACC.
      acc=(-fopenacc -foffload=disable)
      grep -q 'Reference: the program built without OpenACC' "$src" && acc=()
      if ! (cd "$d/ref" && "$ref" "${extra[@]}" -w "${acc[@]}" "$n" -o ref -lm >build.log 2>&1 &&
        timeout 60 ./ref >"$d/expected" 2>/dev/null); then
        problems+=("fixture $n: the reference (${acc[*]:-without OpenACC}) did not build or run"); continue
      fi
      # Each build's row: the executable, or why there is none (`-`: its build failed).
      state=
      if ! "$tool" migrate --write -q --exit-zero --profile "$profile" "$d/tr/$n" >"$d/translate.log" 2>&1; then
        state=failed; problems+=("fixture $n: acc2omp failed: $(tail -c 300 "$d/translate.log" | tr '\n' ' ')")
      elif grep -qiE '^[[:space:]]*(#[[:space:]]*pragma[[:space:]]+acc|[!*cC]\$acc)|_Pragma[[:space:]]*\([[:space:]]*"[[:space:]]*acc' "$d/tr/$n"; then
        state=left # OpenACC left with a diagnostic
      fi
      for b in "${builds[@]}"; do
        IFS='|' read -r bname bc <<<"$b"
        if [ -n "$state" ]; then echo "$n|$bname|$state|-" >>"$work/fixtures"; continue; fi
        if [ "$bname" = gfortran ] && [[ $gf_limits == *" $n "* ]]; then echo "$n|$bname|limit|-" >>"$work/fixtures"; continue; fi
        if [ "$bname" = clang ]; then flags=("${offload[@]}")
        elif [ ${#gcc_offload[@]} -gt 0 ]; then flags=("${gcc_offload[@]}")
        else echo "$n|$bname|skipped|-" >>"$work/fixtures"; continue; fi
        if (cd "$d/tr" && "$bc" "${gpu_opt[@]}" -w "${flags[@]}" "$n" -o "gpu-$bname" -lm >"build-$bname.log" 2>&1); then
          echo "$n|$bname|$d/tr/gpu-$bname|$d/expected" >>"$work/fixtures"
        else
          echo "$n|$bname|-|-" >>"$work/fixtures"
          problems+=("fixture $n: the $bname GPU build failed: $(grep -m1 -E 'error|undefined' "$d/tr/build-$bname.log")")
        fi
      done
    done
  fi

  info="$cc ${offload[*]}; profile $profile; $("$tool" --version 2>/dev/null | head -1)"
  if [ "$mode" = bundle ]; then
    # Executables under bin/, with the manifests' paths made relative to the bundle.
    mkdir -p "$bundle" "$work/payload/bin" "$work/payload/lib"
    for m in programs host fixtures; do
      while IFS= read -r line; do
        IFS='|' read -r -a f <<<"$line"
        out=
        for ((i = 0; i < ${#f[@]}; i++)); do
          v=${f[$i]}
          if [ "$i" -ge 2 ] && [[ $v == /* ]]; then
            rel=bin/$(echo "${v#"$work"/}" | tr '/' '_')
            cp "$v" "$work/payload/$rel"; v=$rel
          fi
          out+="${out:+|}$v"
        done
        echo "$out"
      done < <(cat "$work/$m" 2>/dev/null) >"$work/payload/$m"
    done
    # The runtime libraries: libomptarget (its plugins are inside), libomp, libgomp and what
    # they need beyond the C and C++ runtimes every Linux has.
    libs=("$libdir"/libomptarget.so.[0-9]* "$libdir/libomp.so.5" "$(gcc -print-file-name=libgomp.so.1)")
    # GCC's offloaded fixtures: libgomp's nvptx plugin and the Fortran runtime.
    for l in libgomp-plugin-nvptx.so.1 libgfortran.so.5 libquadmath.so.0; do
      l=$(gcc -print-file-name=$l); [ -f "$l" ] && libs+=("$l")
    done
    for l in "${libs[@]}"; do
      [ -f "$l" ] || continue
      cp -L "$l" "$work/payload/lib/"
      ldd "$l" | awk '$3 ~ /^\// { print $1, $3 }' | while read -r soname path; do
        case $soname in libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) continue ;; esac
        [ -f "$work/payload/lib/$soname" ] || cp -L "$path" "$work/payload/lib/$soname"
      done
    done
    [ -f "$work/payload/lib/libomptarget.so" ] || ln -s "$(basename "$libdir"/libomptarget.so.[0-9]*)" "$work/payload/lib/libomptarget.so" 2>/dev/null
    cp "$work/probe" "$work/payload/probe"
    echo "$info" >"$work/payload/info"
    printf '%s\n' "${problems[@]}" >"$work/payload/problems"
    # The libraries (about 190 MB, 40 compressed) go in their own archive, kept when a
    # bundle written before holds the same files.
    (cd "$work/payload/lib" && ls -l) | awk '{ print $5, $9 }' >"$work/lib.list"
    if ! cmp -s "$work/lib.list" "$bundle/lib.list" || [ ! -s "$bundle/lib.tar.xz" ]; then
      say "compressing the libraries"
      tar -C "$work/payload" -cf - lib | xz -T0 -6 >"$bundle/lib.tar.xz" && cp "$work/lib.list" "$bundle/lib.list" ||
        { say "tar/xz failed"; exit 1; }
    fi
    tar -C "$work/payload" -cf - --exclude=./lib . | xz -T0 -6 >"$bundle/payload.tar.xz" || { say "tar/xz failed"; exit 1; }
    cp "$0" "$bundle/gpu.sh"
    cat >"$bundle/run.sh" <<'EOF'
#!/usr/bin/env bash
# Runs the bundle on the GPU machine and prints the tables (benches/gpu.sh --run; see its header).
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/gpu.sh" --run "$here" "$@"
EOF
    chmod +x "$bundle/run.sh"
    say "bundle written to $bundle ($(du -sh "$bundle" | cut -f1)); problems so far: ${#problems[@]}"
    [ ${#problems[@]} -gt 0 ] && printf '%s\n' "${problems[@]}" >&2
    exit 0
  fi
  payload=$work
else
  # --run: unpack the bundle's executables and libraries.
  payload=$work/payload; mkdir -p "$payload"
  for a in lib payload; do
    xz -dc "$bundle/$a.tar.xz" | tar -C "$payload" -xf - || { say "cannot unpack $bundle/$a.tar.xz"; exit 1; }
  done
  export LD_LIBRARY_PATH="$payload/lib:${LD_LIBRARY_PATH:-}"
  info=$(cat "$payload/info")
  while IFS= read -r p; do [ -n "$p" ] && problems+=("(at build) $p"); done <"$payload/problems"
  missing=$(for f in "$payload"/bin/* "$payload"/lib/*.so*; do ldd "$f" 2>/dev/null | grep 'not found'; done | sort -u)
  [ -n "$missing" ] && say "libraries missing here: $missing"
  if [ -n "${ACC2OMP_GPU_SKIP:-}" ]; then
    parts=${parts//gpu/}; parts=${parts//fixtures/}
    gpu="(GPU runs skipped: ACC2OMP_GPU_SKIP)"
  elif [ -n "${ACC2OMP_GPU_FLAGS:-}" ]; then
    gpu="(no GPU: ACC2OMP_GPU_FLAGS given)"
  elif ! part gpu && ! part fixtures; then
    gpu="(GPU runs not asked for: ACC2OMP_BENCH_PARTS)"
  elif have_gpu; then
    gpu=$(gpu_name)
    # LLVM's CUDA plugin opens libcuda.so, which driver-only installations may lack (they
    # have libcuda.so.1).
    real=$( (ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 / { print $NF }'; ls /usr/local/nvidia/lib64/libcuda.so.1 /usr/lib/x86_64-linux-gnu/libcuda.so.1 2>/dev/null) | head -1)
    [ -n "$real" ] && ln -sf "$real" "$payload/lib/libcuda.so"
    if ! out=$(cd "$work" && OMP_TARGET_OFFLOAD=MANDATORY timeout 120 "$payload/probe" 2>&1); then
      say "the bundle's probe did not run on the GPU ($real): $(echo "$out" | head -5)"; exit 2
    fi
    say "probe on the GPU: $out (devices, on host)"
  else
    say "no NVIDIA GPU here: nvidia-smi is missing or lists no GPU"; exit 2
  fi
fi
# Paths in the manifests are relative to the payload (bundle) or absolute (local).
abs() { case $1 in -) echo - ;; /*) echo "$1" ;; *) echo "$payload/$1" ;; esac; }

# --- runs --------------------------------------------------------------------------------
start_all=$(date +%s)
late() { [ -n "$deadline" ] && [ $(($(date +%s) - start_all)) -ge "$deadline" ]; }
# run EXE KIND OUT [COMMAND PREFIX...] -> prints seconds, stdout in OUT; fails on a failed
# run or an NPB verification that does not succeed
run() {
  local exe=$1 kind=$2 out=$3 start end; shift 3
  start=$(date +%s.%N)
  (cd "$(dirname "$exe")" && ulimit -s unlimited 2>/dev/null; timeout "$run_timeout" "$@" "$exe") >"$out" 2>"$out.err" || return 1
  end=$(date +%s.%N)
  case $kind in
    pb) tail -1 "$out" ;;
    npb) grep -qE 'Verification *= *SUCCESSFUL' "$out" || return 1
         grep -m1 -E 'Time in seconds' "$out" | awk '{ print $NF }' ;;
    *) awk -v a="$start" -v b="$end" 'BEGIN { print b - a }' ;;
  esac
}
med() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR]=$1 } END { if (NR==0) print "-"; else if (NR%2) printf "%.3f", v[(NR+1)/2]; else printf "%.3f", (v[NR/2]+v[NR/2+1])/2 }'; }
ratio() { if [ "$1" = - ] || [ "$2" = - ]; then echo -; else awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }'; fi; }
mmm() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR]=$1 } END { if (NR==0) print "-"; else printf "%.2f/%.2f/%.2f", v[1], (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2), v[NR] }'; }
declare -A times
failed=()
stopped=

if part gpu && [ -s "$payload/programs" ]; then
  mapfile -t progs <"$payload/programs"
  # PolyBench: the translation's arrays must be the original's before it is timed.
  declare -A bad
  for p in "${progs[@]}"; do
    IFS='|' read -r n kind seq tr hand cs cg <<<"$p"
    [ "$kind" = pb ] && wanted "$n" || continue
    (cd "$work" && ulimit -s unlimited 2>/dev/null; timeout "$run_timeout" "$(abs "$cs")" 2>"$work/seq.dump" >/dev/null) 2>/dev/null
    (cd "$work" && ulimit -s unlimited 2>/dev/null; OMP_TARGET_OFFLOAD=MANDATORY timeout "$run_timeout" "$(abs "$cg")" 2>"$work/gpu.dump" >/dev/null) 2>/dev/null ||
      { bad[$n]=1; failed+=("$n: the SMALL_DATASET check run on the GPU failed: $(grep -v '^ *[-0-9.]' "$work/gpu.dump" | head -1)"); continue; }
    if ! awk 'NR==FNR { a[FNR]=$0; n=FNR; next }
              { split(a[FNR], x); m=split($0, y); for (i=1;i<=m;i++) { d=x[i]-y[i]; if (d<0) d=-d; if (d>0.01+1e-9*(x[i]<0?-x[i]:x[i])) exit 1 } }
              END { if (FNR!=n) exit 1 }' "$work/seq.dump" "$work/gpu.dump"; then
      bad[$n]=1; failed+=("$n: the GPU translation prints other arrays than the original (SMALL_DATASET)")
    fi
  done
  for ((r = 0; r < runs; r++)); do
    for p in "${progs[@]}"; do
      IFS='|' read -r n kind seq tr hand cs cg <<<"$p"
      [ -n "${bad[$n]:-}" ] && continue
      wanted "$n" || continue
      for which in seq tr hand; do
        exe=$(abs "${!which}"); [ "$exe" = - ] && continue
        late && { stopped="GPU table: stopped at the deadline in round $((r + 1)), at $n"; break 3; }
        prefix=(env)
        [ $which = tr ] && prefix=(env OMP_TARGET_OFFLOAD=MANDATORY)
        if t=$(run "$exe" "$kind" "$work/out-$which.txt" "${prefix[@]}"); then
          times[$n,$which]="${times[$n,$which]:-} $t"
        else
          failed+=("$n: the $which run failed (round $((r + 1))): $(tail -c 300 "$work/out-$which.txt.err" | tr '\n' ' ')")
        fi
      done
      if [ "$kind" = out ] && ! cmp -s "$work/out-seq.txt" "$work/out-tr.txt"; then
        failed+=("$n: the GPU output differs from the reference (round $((r + 1)))")
      fi
    done
  done
  echo "GPU: $gpu; $info; $runs round(s), medians; host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, OMP_NUM_THREADS=$OMP_NUM_THREADS for hand; load average $(cut -d' ' -f1-3 /proc/loadavg)"
  printf '%-22s %10s %10s %10s %10s %11s %6s\n' program "seq s" "hand s" "gpu s" "gpu/seq" "gpu/hand" runs
  for p in "${progs[@]}"; do
    IFS='|' read -r n kind seq tr hand cs cg <<<"$p"
    wanted "$n" || continue
    s=$(echo "${times[$n,seq]:-}" | med); g=$(echo "${times[$n,tr]:-}" | med); h=$(echo "${times[$n,hand]:-}" | med)
    k=$(echo "${times[$n,tr]:-}" | wc -w)
    printf '%-22s %10s %10s %10s %10s %11s %6s\n' "$n" "$s" "$h" "$g" "$(ratio "$g" "$s")" "$(ratio "$g" "$h")" "$k"
  done
  echo "(seq: the original, sequential, gcc -O2/-O3; hand: PolyBench's hand-written OpenMP on the host's cores, gcc; gpu: the translation offloaded; NPB: its own Time in seconds; PolyBench: kernel time; others: process time)"
fi

if part fixtures && [ -s "$payload/fixtures" ]; then
  # Each translated fixture on the GPU, its output against the -fopenacc reference.
  mapfile -t fixtures <"$payload/fixtures"
  declare -A fres
  fnames=()
  for f in "${fixtures[@]}"; do
    IFS='|' read -r n b exe want <<<"$f"
    [[ " ${fnames[*]} " == *" $n "* ]] || fnames+=("$n")
    case $exe in
      -) fres[$n,$b]=no-build; continue ;;
      left|skipped|limit) fres[$n,$b]=$exe; continue ;;
      failed) fres[$n,$b]=FAIL; failed+=("fixture $n: acc2omp failed on it"); continue ;;
    esac
    late && { stopped="${stopped:+$stopped; }fixtures: stopped at the deadline at $n"; break; }
    exe=$(abs "$exe")
    if (cd "$work" && OMP_TARGET_OFFLOAD=MANDATORY timeout "$((run_timeout < 120 ? run_timeout : 120))" "$exe" >"$work/fx.out" 2>"$work/fx.err") &&
      cmp -s "$work/fx.out" "$(abs "$want")"; then
      fres[$n,$b]=ok
    else
      fres[$n,$b]=FAIL
      failed+=("fixture $n ($b on the GPU): $( { diff "$(abs "$want")" "$work/fx.out" | head -3; tail -c 200 "$work/fx.err"; } | tr '\n' ' ')")
    fi
  done
  echo
  echo "Fixtures on the GPU: $gpu; OMP_TARGET_OFFLOAD=MANDATORY; reference: gcc/g++/gfortran -fopenacc on the build machine's host"
  printf '%-40s %-9s %-9s %-9s\n' program clang gcc gfortran
  declare -A tally
  for n in "${fnames[@]}"; do
    r=()
    for b in clang gcc gfortran; do
      v=${fres[$n,$b]:--}; r+=("$v"); [ "$v" = - ] || tally[$b,$v]=$((${tally[$b,$v]:-0} + 1))
    done
    printf '%-40s %-9s %-9s %-9s\n' "$n" "${r[@]}"
  done
  for b in clang gcc gfortran; do
    echo "$b: ${tally[$b,ok]:-0} ok, ${tally[$b,FAIL]:-0} wrong or failed, ${tally[$b,no-build]:-0} not built, ${tally[$b,left]:-0} left untranslated (with their diagnostics), ${tally[$b,skipped]:-0} skipped (no such offloading compiler), ${tally[$b,limit]:-0} beyond the compiler (expectations.toml)"
  done
fi

if part host && [ -s "$payload/host" ]; then
  mapfile -t hosts <"$payload/host"
  n_cpus=$(echo "$cpus" | tr ',' '\n' | awk -F- '{ n += (NF == 2 ? $2 - $1 + 1 : 1) } END { print n }')
  if command -v taskset >/dev/null 2>&1; then
    pin=(taskset -c "$cpus")
  else
    pin=(python3 -c 'import os, sys
c = set()
for r in sys.argv[1].split(","):
    a, _, b = r.partition("-")
    c.update(range(int(a), int(b or a) + 1))
os.sched_setaffinity(0, c)
os.execv(sys.argv[2], sys.argv[2:])' "$cpus")
  fi
  henv=(env OMP_NUM_THREADS="$n_cpus" OMP_WAIT_POLICY=passive CUDA_VISIBLE_DEVICES= LIBOMP_USE_HIDDEN_HELPER_TASK=0 "${pin[@]}")
  load0=$(cut -d' ' -f1-3 /proc/loadavg)
  declare -A hr
  for ((r = 0; r < runs; r++)); do
    for h in "${hosts[@]}"; do
      IFS='|' read -r n c seq tr <<<"$h"
      wanted "$n" || continue
      ts=
      for which in seq tr; do
        late && { stopped="${stopped:+$stopped; }host table: stopped at the deadline in round $((r + 1)), at $n $c"; break 3; }
        exe=$(abs "${!which}")
        if t=$(run "$exe" out "$work/host-$which.txt" "${henv[@]}") &&
          grep -qE 'Verification *= *SUCCESSFUL' "$work/host-$which.txt"; then
          times[$n,$c,$which]="${times[$n,$c,$which]:-} $t"; ts+=" $t"
        else
          failed+=("$n $c: the $which host run failed or did not verify (round $((r + 1))): $(tail -c 300 "$work/host-$which.txt.err" | tr '\n' ' ')")
        fi
      done
      read -r a b <<<"$ts"
      [ -n "${b:-}" ] && hr[$n,$c]="${hr[$n,$c]:-} $(ratio "$b" "$a")"
    done
  done
  echo
  echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; pinned to CPUs $cpus (${pin[0]}), OMP_NUM_THREADS=$n_cpus, OMP_WAIT_POLICY=passive, no GPU visible; ${info#*; }; load average before $load0, after $(cut -d' ' -f1-3 /proc/loadavg)"
  printf '%-10s %-16s %9s %9s %18s %6s\n' npb compiler "seq s" "transl s" "transl/seq" runs
  for h in "${hosts[@]}"; do
    IFS='|' read -r n c seq tr <<<"$h"
    wanted "$n" || continue
    s=$(echo "${times[$n,$c,seq]:-}" | med); t=$(echo "${times[$n,$c,tr]:-}" | med)
    printf '%-10s %-16s %9s %9s %18s %6s\n' "$n" "$c" "$s" "$t" "$(echo "${hr[$n,$c]:-}" | mmm)" "$(echo "${hr[$n,$c]:-}" | wc -w)"
  done
  echo "(process wall time, medians; transl/seq: ratio per round, min/median/max; sequential and translated alternate)"
fi

[ -n "$stopped" ] && echo "$stopped"
all=("${problems[@]}" "${failed[@]}")
if [ ${#all[@]} -gt 0 ]; then echo; printf '%s\n' "${all[@]}"; exit 1; fi
