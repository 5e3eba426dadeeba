"""from_torch / to_torch (upstream's oneflow.utils.tensor.from_or_to_torch_tensor).

Both go through DLPack (utils/dlpack.py), so the result shares memory with its source: a write
through one is seen by the other. Where DLPack cannot carry the tensor (a device this build does
not import, a global tensor) the data is copied instead, and the result is independent.
torch is imported only when these functions are called.
"""
from ... import _global_hooks
from ... import _oneflow_internal as _C
from .. import dlpack


def _torch():
    try:
        import torch
    except ImportError as e:
        raise ImportError("oneflow.utils.tensor: PyTorch is not installed") from e
    return torch


def from_torch(torch_tensor):
    """A oneflow tensor sharing `torch_tensor`'s memory (dtype, shape and strides kept).

    A tensor that requires grad is exported detached (DLPack carries no autograd history). A CUDA
    tensor, which this build's DLPack import does not take, is copied to the same device."""
    torch = _torch()
    if not isinstance(torch_tensor, torch.Tensor):
        raise TypeError(f"from_torch: expected a torch.Tensor, got {type(torch_tensor).__name__}")
    t = torch_tensor.detach()
    if t.device.type == "cpu":
        return dlpack.from_dlpack(t.resolve_conj().resolve_neg() if t.is_complex() else t)
    out = dlpack.from_dlpack(t.cpu())
    return out.to(f"{t.device.type}:{t.device.index or 0}")


def to_torch(flow_tensor):
    """A torch tensor sharing `flow_tensor`'s memory. A global tensor is gathered and copied
    (its value as a whole, on the CPU)."""
    torch = _torch()
    if _global_hooks.is_global(flow_tensor):  # Note [Global hooks]
        return torch.utils.dlpack.from_dlpack(dlpack.to_dlpack(flow_tensor._full().detach().cpu()))
    if not isinstance(flow_tensor, _C.Tensor):
        raise TypeError(f"to_torch: expected a oneflow.Tensor, got {type(flow_tensor).__name__}")
    t = flow_tensor.detach()
    if t.device.type != "cpu":
        return torch.utils.dlpack.from_dlpack(dlpack.to_dlpack(t.cpu())).to(str(t.device))
    return torch.utils.dlpack.from_dlpack(dlpack.to_dlpack(t))
