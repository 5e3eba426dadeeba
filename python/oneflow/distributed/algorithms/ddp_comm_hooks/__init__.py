"""DDP communication hooks (PyTorch's module path): default_hooks, powerSGD_hook."""
import enum
from functools import partial

from . import default_hooks, powerSGD_hook  # noqa: F401


def _powerSGD_comm_hook_wrapper(comm_hook, model, state, matrix_approximation_rank,  # noqa: N802
                                start_powerSGD_iter=1_000):  # noqa: N803
    """Registers a PowerSGD hook with a fresh state (state: the process group)."""
    model.register_comm_hook(powerSGD_hook.PowerSGDState(
        process_group=state, matrix_approximation_rank=matrix_approximation_rank,
        start_powerSGD_iter=start_powerSGD_iter), comm_hook)


class DDPCommHookType(enum.Enum):
    """The built-in hooks by name, for register_ddp_comm_hook."""
    ALLREDUCE = partial(default_hooks.allreduce_hook)
    FP16_COMPRESS = partial(default_hooks.fp16_compress_hook)
    BF16_COMPRESS = partial(default_hooks.bf16_compress_hook)
    POWER_SGD = partial(_powerSGD_comm_hook_wrapper, comm_hook=powerSGD_hook.powerSGD_hook,
                        matrix_approximation_rank=1)
    BATCHED_POWER_SGD = partial(_powerSGD_comm_hook_wrapper, comm_hook=powerSGD_hook.batched_powerSGD_hook,
                                matrix_approximation_rank=1)


def register_ddp_comm_hook(comm_hook_type, model, state=None):
    """Registers a built-in hook on a DistributedDataParallel model (state: the process group)."""
    if comm_hook_type in (DDPCommHookType.POWER_SGD, DDPCommHookType.BATCHED_POWER_SGD):
        comm_hook_type.value(model=model, state=state)
    else:
        model.register_comm_hook(state, comm_hook_type.value)
