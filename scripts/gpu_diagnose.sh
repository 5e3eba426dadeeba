#!/usr/bin/env bash
# One device call to find the open problem of docs/cuda.md (C++ exceptions crash in the CUDA build
# on the lent GPU machine): toolchain facts, a backtrace of one crashing error, and the same
# error with the CPU-only build of the same tree. carry [".debs"]; ~4 min on 16 cores.
set -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_out}; mkdir -p "$OUT"
for f in .debs/*.deb; do dpkg -x "$f" /; done; ldconfig
export PATH=/usr/local/cuda/bin:$PATH CUDACXX=/usr/local/cuda/bin/nvcc CMAKE_BUILD_PARALLEL_LEVEL=16 PYTHONUNBUFFERED=1
g++ --version | head -1; /opt/gcc/bin/g++ --version 2>/dev/null | head -1; echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
CRASH='import torch, oneflow as flow
try:
    flow.ones(2) + flow.ones(3)
except RuntimeError as e:
    print("raised:", e)'
for cuda in ON OFF; do
  python3 -m pip install -q --no-build-isolation --no-deps -e . -Cbuild-dir=build/gpu_$cuda \
    -Ccmake.define.ONEFLOW_CUDA=$cuda > "$OUT/build_$cuda.log" 2>&1 || { tail -30 "$OUT/build_$cuda.log"; continue; }
  so=$(python3 -c "import oneflow, os; print(oneflow._C.__file__)")
  echo "== ONEFLOW_CUDA=$cuda: $so"; readelf -d "$so" | grep -E "NEEDED|RUNPATH|RPATH"
  ldd "$so" | grep -E "stdc|gcc_s|cudart|cublas"
  python3 -c "$CRASH" && echo "no crash" || echo "CRASHED ($?)"
  $(command -v gdb || command -v cuda-gdb) -q -batch -ex run -ex bt --args python3 -c "$CRASH" 2>&1 | grep -E "^#|signal" | head -25
done
