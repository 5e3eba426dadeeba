"""DDP communication hooks (PyTorch's module path): default_hooks."""
import enum
from functools import partial

from . import default_hooks  # noqa: F401


class DDPCommHookType(enum.Enum):
    """The built-in hooks by name, for register_ddp_comm_hook."""
    ALLREDUCE = partial(default_hooks.allreduce_hook)
    FP16_COMPRESS = partial(default_hooks.fp16_compress_hook)
    BF16_COMPRESS = partial(default_hooks.bf16_compress_hook)


def register_ddp_comm_hook(comm_hook_type, model, state=None):
    """Registers a built-in hook on a DistributedDataParallel model (state: the process group)."""
    model.register_comm_hook(state, comm_hook_type.value)
