"""nn.DataParallel (as torch.nn's, for one device): scripts wrap their model in it whatever the
number of GPUs; with at most one device it calls the module directly (PyTorch does the same),
`.module` is the wrapped model and the state dict has the `module.` prefix. Several devices
(replicating the module per batch slice) are not supported: they raise."""
from .module import Module


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if device_ids is not None and len(device_ids) > 1:
            raise NotImplementedError(
                f"DataParallel over {len(device_ids)} devices is not supported by oneflow's eager mode; use one "
                "device, or distributed data parallelism")
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


class NLLLoss2d(Module):
    """Deprecated PyTorch name of NLLLoss (which takes (N, C, H, W) inputs itself)."""

    def __new__(cls, *args, **kwargs):
        from .loss import NLLLoss
        return NLLLoss(*args, **kwargs)


__all__ = ["DataParallel", "NLLLoss2d"]
