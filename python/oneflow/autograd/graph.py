"""oneflow.autograd.graph: hooks on the tensors autograd saves for backward (Note [Saved tensor
hooks] in src/autograd/node.h), as torch.autograd.graph: `saved_tensors_hooks(pack, unpack)`,
`save_on_cpu` (saved tensors kept in host memory until backward) and
`disable_saved_tensors_hooks`. Both hooks run with grad mode off. Not supported: backward with
create_graph=True through a saved input that requires grad (raises NotImplementedError)."""
import contextlib

from .. import _oneflow_internal as _C

_DISABLED = []  # error messages of the enclosing disable_saved_tensors_hooks blocks


class saved_tensors_hooks:  # noqa: N801 - torch's name
    """Inside the block, every tensor saved for backward is replaced by pack_hook(tensor), and
    unpack_hook(that) gives it back when backward needs it."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        if _DISABLED:
            raise RuntimeError(_DISABLED[-1])
        _C._push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc):
        _C._pop_saved_tensors_hooks()
        return False


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - torch's name
    """Saved tensors are copied to host memory (pinned with pin_memory=True, where CUDA is
    available) and copied back to their device in backward: GPU memory for activations traded
    for transfers."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        import oneflow as flow

        def pack(t):
            pin = pin_memory and flow.cuda.is_available()
            host = flow.empty(tuple(t.shape), dtype=t.dtype)
            host.copy_(t)
            return t.device, (host.pin_memory() if pin else host)

        def unpack(packed):
            device, host = packed
            return host.to(device, non_blocking=pin_memory)

        super().__init__(pack, unpack)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Inside the block, entering saved_tensors_hooks raises RuntimeError(error_message)."""
    _DISABLED.append(error_message)
    try:
        yield
    finally:
        _DISABLED.pop()
