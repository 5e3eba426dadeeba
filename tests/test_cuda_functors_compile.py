"""The math functors compile as CUDA device code (tools/check_cuda_functors.py): the CUDA
pointwise engine calls the same functors as the CPU loops, so a functor or helper without OF_HD
would break the CUDA build, which CI does not run. Needs nvcc (no GPU); skipped without it."""

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc (the CUDA compiler)")
@pytest.mark.timeout(900)  # nvcc over every functor: minutes on a loaded machine
def test_every_functor_is_device_callable():
    # the generated files go below the checkout (the tool's default, build/cuda_check), where
    # ccache finds them again on the next run: minutes of nvcc once, seconds afterwards
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "check_cuda_functors.py"), "--jobs", "2"],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
