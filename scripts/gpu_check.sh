#!/usr/bin/env bash
# Build and test the CUDA backend on the lent GPU machine (docs/cuda.md; ../shared/GPU.md):
# run through the `device` tool with carry [".debs"] (the Debian packages of OpenBLAS, oneDNN and
# FFTW, which that machine lacks). Logs go to $OUT. Usage: bash scripts/gpu_check.sh [pytest args]
# Once, here: echo /.debs/ >> .git/info/exclude; mkdir -p .debs && (cd .debs && apt-get download \
#   libopenblas0-openmp libopenblas-openmp-dev libopenblas-dev libopenblas0 libdnnl-dev libdnnl2 \
#   libfftw3-dev libfftw3-double3 libfftw3-single3)
set -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_out}; mkdir -p "$OUT"
for f in .debs/*.deb; do dpkg -x "$f" /; done; ldconfig
export PATH=/usr/local/cuda/bin:$PATH CUDACXX=/usr/local/cuda/bin/nvcc
export CMAKE_BUILD_PARALLEL_LEVEL=16 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
start=$(date +%s)
python3 -m pip install -q --no-build-isolation --no-deps -e . -Cbuild-dir=build/gpu \
  -Ccmake.define.ONEFLOW_CUDA=ON > "$OUT/build.log" 2>&1 || { grep -E "error|Error" "$OUT/build.log" | head -60; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
python3 -c "import oneflow as flow; print('cuda available:', flow.cuda.is_available(), flow.cuda.get_device_name())"
python3 -m pytest -q -p no:cacheprovider "${@:-tests/test_cuda.py}" 2>&1 | tee "$OUT/tests.log" | tail -60
