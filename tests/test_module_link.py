"""How the extension module is linked (CMakeLists.txt; Note [Static libstdc++] in docs/cuda.md).

Where a toolchain links libstdc++ statically (the lent GPU machine's does), its symbols must stay
private to the module: exported, the shared libstdc++ that PyTorch loads first interposes part of
them, and every C++ error path then prints truncated messages or crashes. Where libstdc++ is
shared (CI) the symbols are undefined references and the test holds trivially."""
import shutil
import subprocess
import sys

import pytest

from harness import flow

LIBSTDCXX = {"__cxa_throw", "__gxx_personality_v0", "_ZNSo9_M_insertIlEERSoT_", "_ZNSt6locale7classicEv"}


@pytest.mark.skipif(shutil.which("readelf") is None, reason="needs readelf (binutils)")
def test_module_exports_no_libstdcxx_definitions():
    out = subprocess.run(["readelf", "-W", "--dyn-syms", flow._C.__file__],
                         capture_output=True, text=True, check=True).stdout
    defined = []
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[6] != "UND" and f[7].split("@")[0] in LIBSTDCXX:
            defined.append(f[7])
    assert not defined, f"the module exports libstdc++ definitions: {defined}"


def test_error_messages_after_torch_is_loaded_first():
    # A fresh interpreter that loads PyTorch's libstdc++ before ours: integers in an error message
    # go through the ostream of the module's libstdc++.
    code = ("import torch, oneflow as flow\n"
            "try:\n    flow.round(flow.ones(2, dtype=flow.int32), decimals=3)\n"
            "except RuntimeError as e:\n    print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "rounding to 3 decimals" in r.stdout, r.stdout
