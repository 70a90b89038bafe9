#!/usr/bin/env bash
# A CUDA root for clang-19's NVIDIA offloading builds on a machine without the CUDA toolkit,
# for `ACC2OMP_CUDA_PATH=DIR benches/gpu.sh --bundle ...`:
#
#   benches/gpu-cuda-root.sh DIR
#
# It holds ptxas and libdevice from the PyPI wheel nvidia-cuda-nvcc-cu12 (downloaded with pip)
# and an nvlink stand-in. ptxas must be CUDA 12's: CUDA 12.8 and later write sm_90 cubins in a
# new ELF layout (ABI version 8) in which LLVM 19's CUDA plugin does not find the
# architecture, so it rejects them at run time ("No images found compatible with the installed
# hardware"). The wheel has no nvlink; with -foffload-lto (benches/gpu.sh passes it) the
# device program, runtime included, reaches ptxas whole, so the ptxas wrapper also writes the
# executable cubin and the stand-in hands it over instead of linking.
set -eu
dir=${1:?usage: gpu-cuda-root.sh DIR}
mkdir -p "$dir/bin" "$dir/include" "$dir/nvvm/libdevice"
dir=$(cd "$dir" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
  --python-version 3.12 -d "$tmp" "nvidia-cuda-nvcc-cu12==${ACC2OMP_CUDA_WHEEL:-12.9.86}"
(cd "$tmp" && python3 -m zipfile -e nvidia_cuda_nvcc_cu12-*.whl x)
cp "$tmp"/x/nvidia/cuda_nvcc/bin/ptxas "$dir/bin/ptxas.real"
cp "$tmp"/x/nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc "$dir/nvvm/libdevice/"
chmod +x "$dir/bin/ptxas.real"

cat >"$dir/bin/ptxas" <<'EOF'
#!/usr/bin/env bash
# ptxas that also keeps the executable cubin (no -c) of each relocatable one it writes, under
# the latter's checksum, for the nvlink stand-in beside.
real=$(dirname "$0")/ptxas.real
"$real" "$@" || exit
args=() out= prev=
for a in "$@"; do
  case $prev in -o|--output-file) out=$a ;; esac
  prev=$a
  [ "$a" = -c ] || args+=("$a")
done
[ -n "$out" ] && [ ${#args[@]} -lt $# ] || exit 0
store=${TMPDIR:-/tmp}/ptxas-executables; mkdir -p "$store"
args2=() prev=
for a in "${args[@]}"; do
  case $prev in -o|--output-file) a=$store/tmp.$$ ;; esac
  args2+=("$a"); prev=$a
done
# Fails where the device program is not whole (one file's code before the link): the
# stand-in nvlink then says so.
"$real" "${args2[@]}" >/dev/null 2>&1 && mv "$store/tmp.$$" "$store/$(sha256sum <"$out" | cut -d' ' -f1)"
rm -f "$store/tmp.$$"
exit 0
EOF

cat >"$dir/bin/nvlink" <<'EOF'
#!/usr/bin/env bash
# nvlink stand-in for one whole-program cubin: the executable cubin that the ptxas beside
# wrote for it.
out= ins=()
while [ $# -gt 0 ]; do
  case $1 in
    -o) out=$2; shift 2 ;;
    -arch|-L) shift 2 ;;
    -*) shift ;;
    *) ins+=("$1"); shift ;;
  esac
done
exe=${TMPDIR:-/tmp}/ptxas-executables/$(sha256sum <"${ins[0]:-/dev/null}" | cut -d' ' -f1)
[ ${#ins[@]} -eq 1 ] && [ -n "$out" ] && [ -f "$exe" ] ||
  { echo "nvlink stand-in: needs exactly one cubin that the ptxas beside wrote, and -o (got ${ins[*]}; build with -foffload-lto)" >&2; exit 1; }
exec cp "$exe" "$out"
EOF
chmod +x "$dir/bin/ptxas" "$dir/bin/nvlink"
echo "CUDA root for clang in $dir: ACC2OMP_CUDA_PATH=$dir"
