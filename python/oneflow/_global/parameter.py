"""A global parameter: ``nn.Parameter(global_tensor)`` and the parameters of a module made global
are global tensors that are also ``nn.Parameter``s (a module registers them as parameters;
``isinstance(p, nn.Parameter)`` holds, as in OneFlow).

nanobind allows one bound base per class, so GlobalParameter cannot derive from both GlobalTensor
and Parameter: it derives from Parameter and takes GlobalTensor's whole namespace (``share``,
called by ``install_routes``), its own slots alike. Code that asks whether a tensor is global
therefore asks ``is_global(x)``, not ``isinstance(x, GlobalTensor)``."""
from .. import _oneflow_internal as _C
from ..nn.parameter import Parameter
from .tensor import GlobalTensor


class GlobalParameter(Parameter):
    """Built as a GlobalTensor (local component, placement, sbp, logical shape); the component is
    the leaf that autograd and the optimizers update."""

    __slots__ = ("_local", "_placement", "_sbp", "_shape")  # (Parameter has __weakref__)

    def __new__(cls, local, placement, sbp, shape):
        self = _C.Tensor.__new__(cls)
        GlobalTensor.__init__(self, local, placement, sbp, shape)
        return self

    def __init__(self, *args, **kwargs):
        pass  # all done in __new__ (nn.Parameter(data, requires_grad) calls __init__ with its own arguments)


_OWN = {"__slots__", "__dict__", "__weakref__", "__module__", "__doc__", "__qualname__", "__new__", "__init__",
        "_local", "_placement", "_sbp", "_shape"}


def share():
    """GlobalTensor's attributes (its own and its routes) on GlobalParameter too."""
    for name, value in GlobalTensor.__dict__.items():
        if name not in _OWN:
            setattr(GlobalParameter, name, value)
    GlobalParameter.__repr__ = GlobalParameter.__str__ = lambda self: "Parameter containing:\n" + GlobalTensor.__repr__(self)


def parameter_of(data, requires_grad):
    """nn.Parameter(data) for a global `data`: a leaf aliasing its component."""
    local = data._local.detach()
    if requires_grad:
        local.requires_grad_(True)
    return GlobalParameter(local, data._placement, data._sbp, data._shape)
