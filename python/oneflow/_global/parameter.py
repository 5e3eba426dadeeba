"""A global parameter: ``nn.Parameter(global_tensor)`` and the parameters of a module made global
are global tensors that are also ``nn.Parameter``s (a module registers them as parameters;
``isinstance(p, nn.Parameter)`` holds, as in OneFlow).

nanobind allows one bound base per class, so GlobalParameter cannot derive from both GlobalTensor
and Parameter: it derives from Parameter and takes GlobalTensor's whole namespace (``share``,
called by ``routes.install_routes``), its own slots alike. Code that asks whether a tensor is global
therefore asks ``is_global(x)``, not ``isinstance(x, GlobalTensor)``."""
from .. import _oneflow_internal as _C
from .._export import export
from ..nn.parameter import Parameter
from .tensor import GlobalTensor, _as_sbp_tuple, all_broadcast, is_global, local_to_global


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


@export("flow.nn.Module.to_global", "flow.nn.Module.to_consistent")
def module_to_global(module, placement=None, sbp=None):
    """nn.Module.to_global: every parameter and buffer becomes global, laid out as `sbp` (0-d ones
    broadcast), its value the first rank's (parameters initialised differently on each rank agree
    afterwards). Parameters keep requires_grad; optimizers built afterwards update the global ones."""
    if placement is None or sbp is None:
        raise TypeError("Module.to_global: needs placement and sbp")
    for m in module.modules():
        for group in (m._parameters, m._buffers):
            for key, t in list(group.items()):
                if t is None:
                    continue
                lay = all_broadcast(placement) if t.dim() == 0 else sbp
                if is_global(t):
                    # (OneFlow's: a global one is moved / boxed to the module's new layout, a
                    # module built with a global weight included)
                    if t._placement == placement and t._sbp == _as_sbp_tuple(lay, "Module.to_global", placement):
                        continue
                    g = t.detach().to_global(placement, lay)
                else:
                    g = local_to_global(t.detach(), placement, all_broadcast(placement), "Module.to_global").to_global(
                        sbp=lay)
                g._local = g._local.detach().contiguous()
                if group is m._parameters:
                    g = parameter_of(g, t.requires_grad)
                group[key] = g
    return module
