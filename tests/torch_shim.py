"""A torch-backed stand-in for ``oneflow``, used only to validate the test
harness while the real package is not built (``OF_TEST_SHIM=torch``).

It forwards every attribute to torch and fills the few gaps where OneFlow's
API names something torch spells differently.  Tests that check behaviour on
which OneFlow deliberately differs from torch are marked ``oneflow_only`` and
skipped under the shim; nothing here tries to imitate those differences.
"""

import types

import torch
import torch.nn.functional as F


def make_shim():
    shim = types.ModuleType("oneflow_torch_shim")
    extras = {
        "cast": lambda x, dtype: x.to(dtype),
        "gelu": F.gelu,
        "silu": F.silu,
    }

    def __getattr__(name):
        if name in extras:
            return extras[name]
        return getattr(torch, name)

    shim.__getattr__ = __getattr__
    shim.IS_TORCH_SHIM = True
    # OneFlow has Tensor.gelu()/silu(); torch only has the functional forms.
    # Adding methods to torch.Tensor is harmless for the reference side, which
    # never calls them.
    if not hasattr(torch.Tensor, "gelu"):
        torch.Tensor.gelu = lambda self: F.gelu(self)
        torch.Tensor.silu = lambda self: F.silu(self)
    return shim
