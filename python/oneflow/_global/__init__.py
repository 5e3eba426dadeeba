"""Global tensors: placement + SBP over the processes of a job, with boxing (docs/global_tensors.md)."""
from .placement import placement
from .tensor import GlobalTensor, local_to_global, tensor_to_global
from . import dispatch  # noqa: F401  (registers the dispatcher with the bindings)

__all__ = ["placement", "GlobalTensor", "local_to_global", "tensor_to_global"]

# Note [Global hooks] (oneflow/_global_hooks.py): what the layers below need of global tensors.
# parameter.py and serialization.py import nn / distributed, which may still be importing now:
# those two are looked up at call time.
from .. import _global_hooks  # noqa: E402
from ..sbp import broadcast as _broadcast  # noqa: E402
from .tensor import _grad_sbp, from_logical  # noqa: E402


def _parameter_of(*args, **kwargs):
    from .parameter import parameter_of
    return parameter_of(*args, **kwargs)


def _job_initialized():
    """Whether this process is in a job (its process group initialised): flow.load's global_src_rank."""
    from .. import distributed
    return distributed.is_initialized()


def _serialization(name):
    def call(*args, **kwargs):
        from . import serialization
        return getattr(serialization, name)(*args, **kwargs)
    return call


_global_hooks.provide(GlobalTensor=GlobalTensor, grad_sbp=_grad_sbp, from_logical=from_logical,
                      local_to_global=local_to_global, broadcast=_broadcast, run=dispatch.run,
                      parameter_of=_parameter_of, contains_global=_serialization("contains_global"),
                      save=_serialization("save"), load=_serialization("load"), job_initialized=_job_initialized)
