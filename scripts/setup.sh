#!/usr/bin/env bash
# One-time and incremental set-up: system packages, the virtual environment, and the build.
# Re-running it only rebuilds what changed (ninja + ccache, persistent build dir).
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
[ -f /usr/include/x86_64-linux-gnu/openblas-openmp/cblas.h ] || need_apt+=(libopenblas-openmp-dev)
command -v ccache >/dev/null || need_apt+=(ccache)
[ -f /usr/include/oneapi/dnnl/dnnl.hpp ] || need_apt+=(libdnnl-dev)
[ -f /usr/include/fftw3.h ] || need_apt+=(libfftw3-dev)
[ -f /usr/include/x86_64-linux-gnu/sleef.h ] || [ -f /usr/include/sleef.h ] || need_apt+=(libsleef-dev)
# Gloo: the collectives of oneflow.distributed.
[ -f /usr/include/gloo/allreduce.h ] || need_apt+=(libgloo-dev)
# Fashion-MNIST for the main example (examples/train_fashion_mnist.py).
[ -d /usr/share/datasets/fashion-mnist ] || need_apt+=(dataset-fashion-mnist)
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
PY=.venv/bin/python
# Build tools (no build isolation: the persistent build dir and ccache then make rebuilds cheap).
$PY -m pip install -q --disable-pip-version-check scikit-build-core nanobind pyyaml ninja cmake numpy pytest pytest-xdist 2>&1 | grep -v "is ignored: it is neither" || true
# The main example's progress bar and plot; Pillow for the image ops (python/oneflow/_legacy/image.py),
# protobuf for the OFRecord readers (python/oneflow/nn/modules/ofrecord.py).
$PY -c "import tqdm, matplotlib, PIL, google.protobuf" 2>/dev/null || { $PY -m pip install -q --disable-pip-version-check tqdm matplotlib pillow protobuf 2>&1 | grep -v "is ignored: it is neither" || true; }
$PY -c "import torch" 2>/dev/null || { $PY -m pip install -q --disable-pip-version-check torch==2.13.0 2>&1 | grep -v "is ignored: it is neither" || true; }
# Test dependency of tests/test_ecosystem_flowvision.py: OneFlow's model zoo, imported unchanged
# (torchvision is no reference there: its only 2.13 wheel needs CUDA torch's libraries). --no-deps:
# flowvision's requirements name upstream oneflow, which this package replaces. Its sdist's
# setup.py imports pkg_resources, gone from recent setuptools: the isolated build gets an older one.
$PY -c "import rich, tabulate, six" 2>/dev/null || { $PY -m pip install -q --disable-pip-version-check rich tabulate six 2>&1 | grep -v "is ignored: it is neither" || true; }  # flowvision's own requirements
$PY -c "import importlib.util as u, sys; sys.exit(u.find_spec('flowvision') is None)" || { printf 'setuptools<70\n' > .venv/flowvision-build-constraint.txt; PIP_CONSTRAINT=.venv/flowvision-build-constraint.txt $PY -m pip install -q --disable-pip-version-check --no-deps flowvision==0.2.2 2>&1 | grep -v "is ignored: it is neither" || true; }

export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
# Paths below the checkout hash as relative ones, so a fresh clone elsewhere (CI) reuses the cache.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
# -v streams the build's output (under -q the first build, minutes long, printed nothing); the
# filter keeps it all in the log and shows the phases and ninja's [n/N] progress: one updating
# line on a terminal, a line per ~10% in CI and pipes.
mkdir -p build
log=build/setup-build.log
if ! $PY -m pip install -v --disable-pip-version-check --no-build-isolation -e . \
  -Cbuild-dir=build/release 2>&1 | $PY scripts/build_progress.py "$log"; then
  tail -n 60 "$log" >&2
  echo "build failed (full log: $log)" >&2; exit 1
fi
$PY -c "import oneflow" || { echo "build failed (full log: $log)" >&2; exit 1; }
