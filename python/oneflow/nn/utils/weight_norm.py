"""Weight normalisation (Salimans & Kingma, https://arxiv.org/abs/1602.07868): w = g v / ||v||.

PyTorch's hook form of nn.utils.weight_norm: the parameter `name` is replaced by `name_g` (the
magnitude) and `name_v` (the direction), and a forward pre-hook recomputes `name` as a plain
tensor attribute before every forward. The norm is taken over every dim except `dim`; as in
PyTorch, dim=None and dim=-1 both mean the norm of the whole tensor (a 0-d `name_g`).
"""
from ... import _oneflow_internal as _C
from ..._argcheck import check_tensor
from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def norm_except_dim(v, pow=2, dim=0):
    """The `pow`-norm of v over every dim except `dim`, keeping v's rank (size 1 on the reduced
    dims) so that it broadcasts against v; dim=-1: the norm of all elements (0-d)."""
    check_tensor(v, "norm_except_dim", "v", 1)
    if isinstance(pow, bool) or not isinstance(pow, int):  # PyTorch's int; a float p went to vector_norm
        raise TypeError(f"norm_except_dim(): argument 'pow' (position 2) must be int, not {type(pow).__name__}")
    if dim == -1:
        return _C.linalg_vector_norm(v, pow)
    ndim = v.ndim
    if not -ndim <= dim < ndim:
        raise IndexError("Dimension out of range (expected to be in range of "
                         f"[{-ndim}, {ndim - 1}], but got {dim})")
    dim %= ndim
    if v.shape[dim] == 0:  # PyTorch views v as (v.shape[dim], -1): ambiguous without elements
        raise RuntimeError(f"norm_except_dim: cannot reshape tensor of 0 elements into shape [0, -1] because the "
                           "unspecified dimension size -1 can be any value and is ambiguous")
    if ndim == 1:  # one element per slice: its absolute value (an empty dim list means "all")
        return _C.linalg_vector_norm(v.unsqueeze(1), pow, [1])
    return _C.linalg_vector_norm(v, pow, [d for d in range(ndim) if d != dim], True)


def _weight_norm(v, g, dim=0):
    """g * v / ||v|| (norm over every dim except `dim`); differentiable through its parts."""
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes `module.<name>` from `<name>_g` and `<name>_v`."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"),
                            self.dim)

    @staticmethod
    def apply(module, name, dim):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Reparameterises `module.<name>` as `<name>_g * <name>_v / ||<name>_v||` (norm over every
    dim except `dim`; dim=None: over the whole tensor) and returns the module.

    >>> m = flow.nn.utils.weight_norm(flow.nn.Linear(20, 40), name='weight')
    >>> m.weight_g.size(), m.weight_v.size()
    (oneflow.Size([40, 1]), oneflow.Size([40, 20]))
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Undoes weight_norm: `<name>` becomes a plain Parameter holding the current weight."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
