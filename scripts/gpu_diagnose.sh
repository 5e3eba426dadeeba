#!/usr/bin/env bash
# One device call to find the open problem of docs/cuda.md (C++ exceptions crash in the CUDA build
# on the lent GPU machine): toolchain facts, a backtrace of one crashing error, and the same
# error with the CPU-only build of the same tree; when the CUDA build crashes, once more built with
# the system g++. Leaves the last build installed. carry [".debs"]; ~4-6 min on 16 cores.
set -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_out}; mkdir -p "$OUT"
for f in .debs/*.deb; do dpkg -x "$f" /; done; ldconfig
export PATH=/usr/local/cuda/bin:$PATH CUDACXX=/usr/local/cuda/bin/nvcc CMAKE_BUILD_PARALLEL_LEVEL=16 PYTHONUNBUFFERED=1
echo "CC=$CC CXX=$CXX CUDAHOSTCXX=$CUDAHOSTCXX LD_LIBRARY_PATH=$LD_LIBRARY_PATH"; which -a g++ c++ | tr '\n' ' '; echo
for gxx in g++ /usr/bin/g++ /opt/gcc/bin/g++; do echo "$gxx: $($gxx --version 2>/dev/null | head -1)"; done
/opt/gcc/bin/g++ -v 2>&1 | grep -o -- "--enable-[a-z-]*shared[^ ]*\|--with-[a-z-]*=[^ ]*" | head -8
CRASH='import oneflow as flow
try:
    flow.ones(2) + flow.ones(3)
except RuntimeError as e:
    print("raised:", str(e)[:60])'
probe() {  # $1: label; sets CRASHED when the error snippet or test_errors_math crashes or fails
  local so; so=$(python3 -c "import oneflow; print(oneflow._C.__file__)")
  echo "== $1: $so"; readelf -d "$so" | grep -E "NEEDED|RUNPATH|RPATH" | awk '{print $NF}' | tr '\n' ' '; echo
  readelf -W --dyn-syms "$so" | grep -E " (_Unwind_RaiseException|__cxa_throw|__gxx_personality_v0)$" | awk '{print $5, $7, $8}'
  python3 -c "import oneflow; print(sorted({l.split()[-1] for l in open('/proc/self/maps') if 'stdc++' in l or 'gcc_s' in l}))"
  for pre in "" "import torch; "; do
    python3 -X faulthandler -c "$pre$CRASH" 2>&1 | tail -4 && echo "  [$pre] ok" || echo "  [$pre] CRASHED"
  done
  local gdb; gdb=$(command -v gdb || command -v cuda-gdb)
  $gdb -q -batch -ex run -ex "bt 25" -ex "x/3i \$pc" --args python3 -c "$CRASH" 2>&1 | grep -E "^#|signal|=>" | head -30
  timeout 120 python3 -m pytest -q -p no:cacheprovider -p no:xdist -x tests/test_errors_math.py 2>&1 | tail -2 || CRASHED=1
  python3 -c "$CRASH" > /dev/null 2>&1 || CRASHED=1
  timeout 150 $gdb -q -batch -ex run -ex "bt 25" --args python3 -m pytest -q -p no:cacheprovider -p no:xdist -x \
    tests/test_errors_math.py 2>&1 | grep -E "^#|signal|passed|failed" | head -30
}
build() {  # $1: build dir, rest: cmake defines
  local dir=$1; shift
  python3 -m pip install -q --no-build-isolation --no-deps -e . -Cbuild-dir=$dir "$@" > "$OUT/$(basename $dir).log" 2>&1 \
    || { grep -E "error|Error" "$OUT/$(basename $dir).log" | head -30; return 1; }
}
[ -n "$DIAG_OFF" ] && build build/gpu_off -Ccmake.define.ONEFLOW_CUDA=OFF && probe "CPU build"
start=$(date +%s)
build build/gpu -Ccmake.define.ONEFLOW_CUDA=ON && echo "CUDA build: $(( $(date +%s) - start )) s" && probe "CUDA build"
if [ -n "$CRASHED" ] && [ -x /usr/bin/g++ ]; then
  build build/gpu_sys -Ccmake.define.ONEFLOW_CUDA=ON -Ccmake.define.CMAKE_CXX_COMPILER=/usr/bin/g++ \
    -Ccmake.define.CMAKE_CUDA_HOST_COMPILER=/usr/bin/g++ && probe "CUDA build, system g++"
fi
