"""Parametrizations (as torch.nn.utils.parametrize): module.<name> becomes the result of
modules applied to an unconstrained original, module.parametrizations[<name>].original (or
original0, original1, ... when the first parametrization's right_inverse returns a tuple).

The module's class is swapped for a generated subclass ("Parametrized<Class>") holding one
property per parametrized tensor: reading it runs the parametrizations (cached inside
`cached()`), assigning to it goes through right_inverse into the originals. remove_parametrizations
puts a plain parameter back (the current value, or the original) and restores the class when the
last one goes.
"""
import contextlib

from ... import _oneflow_internal as _C
from ..._grad_mode import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized", "cached",
           "type_before_parametrizations", "ParametrizationList"]

_cache_enabled = 0
_cache = {}


@contextlib.contextmanager
def cached():
    """Within the block, each parametrized tensor is computed once (its first read)."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register(module, name, value, like):
    """Registers value as a parameter when `like` is one (requires_grad kept), else a buffer."""
    if isinstance(like, Parameter):
        module.register_parameter(name, Parameter(value, like.requires_grad))
    else:
        module.register_buffer(name, value)


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and its original(s)."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        new = original
        with no_grad():
            for m in reversed(list(self)):
                if hasattr(m, "right_inverse"):
                    new = m.right_inverse(new)
        self.is_tensor = isinstance(new, _C.Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(f"When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
            with no_grad():  # the same object keeps its identity (optimizers, user references)
                if tuple(original.shape) == tuple(new.shape):
                    original.copy_(new)
                else:
                    original.data = new.detach()
            if isinstance(original, Parameter):
                self.register_parameter("original", original)
            else:
                self.register_buffer("original", original)
        else:
            for i, t in enumerate(new):
                if not isinstance(t, _C.Tensor):
                    raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of tensors. Got {type(t)}")
                _register(self, f"original{i}", t.detach().clone(), original)
        if not unsafe:
            value = self()
            if not isinstance(value, _C.Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(value).__name__}.")
            if tuple(value.shape) != tuple(original.shape) or value.dtype != original.dtype:
                raise ValueError("Registering a parametrization may not change the shape or dtype of the tensor "
                                 f"(got {tuple(value.shape)} {value.dtype} from {tuple(original.shape)} "
                                 f"{original.dtype}), unless `unsafe` is true.")

    def right_inverse(self, value):
        """Assigning to the parametrized tensor: value through the right inverses, into the
        originals (in place)."""
        with no_grad():
            for m in reversed(list(self)):
                if not hasattr(m, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(m).__name__} does not implement right_inverse.")
                value = m.right_inverse(value)
            if not self.is_tensor:
                for i, v in enumerate(value):
                    getattr(self, f"original{i}").copy_(v)
            elif tuple(value.shape) == tuple(self.original.shape):
                self.original.copy_(value)
            else:  # unsafe parametrizations may change the original's shape
                self.original.data = value.detach()

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for m in list(self)[1:]:
            x = m(x)
        return x


def _inject_new_class(module):
    cls = module.__class__

    def getstate(self):
        raise RuntimeError("Serialization of parametrized modules is only supported through state_dict().")

    param_cls = type(f"Parametrized{cls.__name__}", (cls,), {"__getstate__": getstate})
    module.__class__ = param_cls


def _inject_property(module, name):
    def get(self):
        plist = self.parametrizations[name]
        if _cache_enabled:
            key = (id(self), name)
            if key not in _cache:
                _cache[key] = plist()
            return _cache[key]
        return plist()

    def set_(self, value):
        self.parametrizations[name].right_inverse(value)

    setattr(module.__class__, name, property(get, set_))


def is_parametrized(module, tensor_name=None):
    """Whether the module (or its tensor `tensor_name`) has a parametrization."""
    plists = getattr(module, "parametrizations", None)
    if plists is None or not isinstance(plists, ModuleDict):
        return False
    return len(plists) > 0 if tensor_name is None else tensor_name in plists


def type_before_parametrizations(module):
    """The module's class before parametrizations swapped it."""
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Makes module.<tensor_name> the output of `parametrization` (a Module) applied to its
    original (appended to the existing ones of that tensor); returns the module."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, _C.Tensor) or tuple(x.shape) != tuple(y.shape) or x.dtype != y.dtype:
                raise ValueError("Registering a parametrization may not change the shape or dtype of the tensor, "
                                 "unless `unsafe` is true.")
            if hasattr(parametrization, "right_inverse"):
                z = parametrization.right_inverse(x)
                if not isinstance(z, _C.Tensor) or tuple(z.shape) != tuple(y.shape):
                    raise ValueError("parametrization.right_inverse must return a tensor of the original's shape")
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._parameters or tensor_name in module._buffers:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    return module


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Removes the parametrizations of tensor_name: it becomes a plain parameter (or buffer)
    holding its current value (leave_parametrized) or its original."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
            with no_grad():
                if tuple(t.shape) == tuple(original.shape) and t.dtype == original.dtype:
                    original.copy_(t)
                else:
                    original.data = t.detach()
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                             "parametrized in terms of a sequence of tensors.")
        with no_grad():
            t = getattr(module, tensor_name)
        original = Parameter(t.detach(), t.requires_grad) if isinstance(plist.original0, Parameter) else t.detach()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    if isinstance(original, Parameter):
        module.register_parameter(tensor_name, original)
    else:
        module.register_buffer(tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module
