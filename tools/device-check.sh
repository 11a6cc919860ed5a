#!/usr/bin/env bash
# Builds and runs the device program of tests/device (every network engine on the CPU and, when this machine's
# LibTorch sees one, on CUDA; see tests/device/main.cpp) against the LibTorch of this machine:
#   1. $TORCH_PREFIX (a LibTorch cmake prefix), else
#   2. the PyTorch of $PYTHON (default: python3, then /usr/bin/python3): torch.utils.cmake_prefix_path, else
#   3. the system's (Debian's libtorch-dev).
# Eigen: $EIGEN3_INCLUDE_DIR, else /usr/include/eigen3, else R's RcppEigen. Without cmake it compiles with the
# compiler and flags PyTorch reports. The report goes to stdout and to $OUT/device-check.txt (OUT defaults to
# out/device-check). Arguments are passed on (e.g. --quick, --device cpu, --only wbb).
#   bash tools/device-check.sh            # full run (a GPU machine)
#   bash tools/device-check.sh --quick    # what CI runs (CPU: one thread against two)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
out=${OUT:-$root/out/device-check}
build=${SB_DEVICE_BUILD:-$root/build/device}
mkdir -p "$out" "$build"
log="$out/build.log"

py=""
for p in ${PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import torch' >/dev/null 2>&1; then py=$p; break; fi
done
prefix=${TORCH_PREFIX:-}
if [ -z "$prefix" ] && [ -n "$py" ]; then
  prefix=$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)')
  [ -f "$prefix/Torch/TorchConfig.cmake" ] || prefix=""  # a PyTorch without its CMake files: the system's
fi

eigen=${EIGEN3_INCLUDE_DIR:-}
if [ -z "$eigen" ]; then
  for d in /usr/include/eigen3 /usr/local/include/eigen3 "$root/build/eigen3"; do
    if [ -f "$d/Eigen/Dense" ]; then eigen=$d; break; fi
  done
fi
if [ -z "$eigen" ] && command -v Rscript >/dev/null 2>&1; then
  eigen=$(Rscript -e 'cat(system.file("include", package = "RcppEigen"))' 2>/dev/null || true)
fi
if [ -z "$eigen" ] || [ ! -f "$eigen/Eigen/Dense" ]; then
  echo "device-check: Eigen not found; set EIGEN3_INCLUDE_DIR to a folder holding Eigen/Dense" >&2
  exit 2
fi
echo "device-check: python ${py:-none}, LibTorch prefix ${prefix:-system}, Eigen $eigen" | tee "$out/device-check.txt"
jobs=$(nproc 2>/dev/null || echo 2)
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi

t0=$(date +%s)
if command -v cmake >/dev/null 2>&1; then
  cmake -S tests/device -B "$build" -DCMAKE_BUILD_TYPE=Release ${prefix:+-DCMAKE_PREFIX_PATH="$prefix"} \
    -DEIGEN3_INCLUDE_DIR="$eigen" "${launcher[@]}" > "$log" 2>&1 || { tail -40 "$log"; exit 1; }
  cmake --build "$build" -j "$jobs" >> "$log" 2>&1 || { grep -m 20 -A 5 "error" "$log"; tail -20 "$log"; exit 1; }
  exe="$build/sb_device_check"
elif [ -n "$py" ]; then  # no cmake: PyTorch's own include and library folders
  eval "$("$py" - <<'PY'
import torch, torch.utils.cpp_extension as e
print("incs='%s'" % " ".join("-I" + p for p in e.include_paths(cuda=False)))
print("libdir='%s'" % e.library_paths(cuda=False)[0])
print("abi=%d" % int(torch._C._GLIBCXX_USE_CXX11_ABI))
print("cuda=%d" % int(torch.version.cuda is not None))
PY
)"
  libs=(-ltorch -ltorch_cpu -lc10)
  if [ "$cuda" = 1 ]; then libs+=(-Wl,--no-as-needed -ltorch_cuda -lc10_cuda -Wl,--as-needed); fi
  mkdir -p "$build/obj"
  pids=()
  for f in main check_wbb check_sgmcmc check_vi; do
    ${CXX:-g++} -std=c++17 -O2 -DEIGEN_NO_DEBUG -D_GLIBCXX_USE_CXX11_ABI=$abi $incs -Iinst/include -I"$eigen" \
      -c tests/device/$f.cpp -o "$build/obj/$f.o" > "$build/obj/$f.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || { cat "$build"/obj/*.log | grep -m 20 -A 5 error; exit 1; }; done
  ${CXX:-g++} "$build"/obj/*.o -o "$build/sb_device_check" -L"$libdir" -Wl,-rpath,"$libdir" "${libs[@]}" -lpthread -ldl
  exe="$build/sb_device_check"
else
  echo "device-check: neither cmake nor a python with torch; cannot build" >&2
  exit 2
fi
echo "device-check: built in $(( $(date +%s) - t0 )) s" | tee -a "$out/device-check.txt"
"$exe" "$@" 2>&1 | tee -a "$out/device-check.txt"
exit "${PIPESTATUS[0]}"
