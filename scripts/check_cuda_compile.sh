#!/usr/bin/env bash
# Compile check of the CUDA build on a machine without a GPU or the CUDA libraries (the CPU
# machines have nvcc but not cuBLAS / cuDNN / NCCL): compiles sources of the library with
# ONEFLOW_CUDA=ON into build/cuda-check, and links nothing. Not run by CI or scripts/test.sh;
# run it after changing CUDA code or anything under `#ifdef ONEFLOW_WITH_CUDA` (docs/cuda.md).
#
#   bash scripts/check_cuda_compile.sh                      # every source of the library
#   bash scripts/check_cuda_compile.sh src/cuda/pool.cu src/kernels/pool.cpp   # just these
#   (generated sources by their path under the build folder: generated/pointwise_activation_0_cuda.cu)
#
# The headers of cuBLAS, cuDNN, NCCL, cuFFT and cuSOLVER come from their CUDA 13 wheels
# (downloaded once with pip, unpacked into $OF_CUDA_HEADERS, default build/cuda-headers; only
# their include/ folders are kept). The libraries are never linked: CMake is given an empty stub
# for each, so a link step would fail — build objects (or the static library) only.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
NV=${OF_CUDA_HEADERS:-build/cuda-headers}
BUILD=build/cuda-check
command -v nvcc >/dev/null || { echo "check_cuda_compile: nvcc not found" >&2; exit 1; }

if [ ! -f "$NV/nvidia/cu13/include/cublas_v2.h" ] || [ ! -f "$NV/nvidia/cudnn/include/cudnn.h" ]; then
  mkdir -p "$NV/whl"
  "$PY" -m pip download -q --disable-pip-version-check --no-deps -d "$NV/whl" \
    "nvidia-cublas>=13.0,<13.1" "nvidia-cudnn-cu13>=9,<10" "nvidia-nccl-cu13>=2,<3" \
    "nvidia-cufft>=12.0,<12.1" "nvidia-cusolver>=12.0,<12.1"
  # Only the include folders (a few MB), not the libraries (GBs).
  "$PY" - "$NV" "$NV"/whl/*.whl <<'EOF'
import sys, zipfile
for wheel in sys.argv[2:]:
    with zipfile.ZipFile(wheel) as z:
        z.extractall(sys.argv[1], [n for n in z.namelist() if "/include/" in n])
EOF
  rm -rf "$NV/whl"
fi
NV=$(cd "$NV" && pwd)
STUB="$NV/stub-library.so"  # stands for each CUDA library at configure time; never linked
touch "$STUB"

if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DONEFLOW_CUDA=ON \
    -DPython_EXECUTABLE="$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")" \
    -DOF_CUBLAS_INCLUDE_DIR="$NV/nvidia/cu13/include" -DOF_CUBLAS_LIBRARY="$STUB" \
    -DOF_CUDNN_INCLUDE_DIR="$NV/nvidia/cudnn/include" -DOF_CUDNN_LIBRARY="$STUB" \
    -DOF_CUFFT_INCLUDE_DIR="$NV/nvidia/cu13/include" -DOF_CUFFT_LIBRARY="$STUB" \
    -DOF_CUSOLVER_INCLUDE_DIR="$NV/nvidia/cu13/include" -DOF_CUSOLVER_LIBRARY="$STUB" \
    -DOF_NCCL_INCLUDE_DIR="$NV/nvidia/nccl/include" -DOF_NCCL_LIBRARY="$STUB" >"$BUILD.configure.log" 2>&1 \
    || { tail -n 40 "$BUILD.configure.log" >&2; exit 1; }
  grep -q "CUDA backend ON" "$BUILD.configure.log" || { echo "check_cuda_compile: CUDA not enabled" >&2; exit 1; }
fi

JOBS=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
if [ $# -eq 0 ]; then
  cmake --build "$BUILD" --target oneflow_core -j "$JOBS"
else
  targets=()
  for src in "$@"; do
    case "$src" in
      src/api/*) targets+=("CMakeFiles/_oneflow_internal.dir/$src.o") ;;  # the bindings' module
      *) targets+=("CMakeFiles/oneflow_core.dir/$src.o") ;;
    esac
  done
  ninja -C "$BUILD" -j "$JOBS" -k 0 "${targets[@]}"  # -k 0: every failing source reported
fi
echo "check_cuda_compile: OK"
