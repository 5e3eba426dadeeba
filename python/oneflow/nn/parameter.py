"""nn.Parameter: the Tensor subclass that a Module registers as a parameter when assigned."""
from .. import _global_hooks
from .. import _oneflow_internal as _C


class Parameter(_C.Tensor):
    """A leaf tensor that aliases `data` (a detached view of its memory, like PyTorch's) and is a
    module parameter when assigned as a Module attribute.

    Args:
        data (Tensor): parameter tensor (an empty float tensor when None).
        requires_grad (bool): whether the parameter requires gradient (even under no_grad).
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _C.empty(0)
        if getattr(type(data), "_oneflow_global_", False):  # a global parameter (_global/parameter.py)
            return _global_hooks.use("parameter_of")(data, requires_grad)
        return _C._make_subclass(cls, data, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        pass  # all done in __new__; Tensor.__init__ would parse `data` a second time

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        state = dict(self.__dict__)
        return (_rebuild_parameter, (self.data, self.requires_grad, state))


def _rebuild_parameter(data, requires_grad, state):
    param = Parameter(data, requires_grad)
    param.__dict__.update(state)
    return param


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet (lazy modules): zero elements until
    materialize(shape), which gives it memory and makes it a plain Parameter (the same object,
    so optimizers built before the first forward see the materialised parameter)."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return _C._make_subclass(cls, _C.empty(0, dtype=dtype, device=device), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def materialize(self, shape, device=None, dtype=None):
        self.data = _C.empty(tuple(shape), dtype=dtype or self.dtype, device=device or self.device)
        self.__class__ = self.cls_to_become

    def __repr__(self):
        return "<UninitializedParameter>"

    __str__ = __repr__

    def __deepcopy__(self, memo):
        result = type(self)(self.requires_grad, self.device, self.dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(_C.Tensor):
    """A buffer whose shape is not known yet (lazy modules); the module replaces it by a tensor
    of the inferred shape."""

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        return _C._make_subclass(cls, _C.empty(0, dtype=dtype, device=device), requires_grad)

    def __init__(self, requires_grad=False, device=None, dtype=None):
        pass

    def __repr__(self):
        return "<UninitializedBuffer>"

    __str__ = __repr__


class _BufferMeta(type):
    def __instancecheck__(cls, instance):
        return isinstance(instance, _C.Tensor) and getattr(instance, "_is_buffer", False)


class Buffer(metaclass=_BufferMeta):
    """Marks a tensor as a module buffer (as torch.nn.Buffer): assigned as a Module attribute it
    is registered with register_buffer(name, tensor, persistent). Buffer(data) returns the
    detached tensor itself, marked."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _C.empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t
