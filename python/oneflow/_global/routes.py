"""GlobalTensor's operators and its routes to the dispatcher: every attribute of flow.Tensor that
GlobalTensor does not define itself becomes a route (Note [A global tensor is a Tensor] in
tensor.py). Installed once, by ``install_routes``, at the end of the package's import, after the
Python methods were added to flow.Tensor. Apart from tensor.py so that the class sits below the
dispatcher (dispatch.py reads GlobalTensor; the routes call the dispatcher)."""
from .. import _oneflow_internal as _C
from .dispatch import _wrap_same, call_function, call_method, inplace_name, run
from .parameter import GlobalParameter, share
from .sbp_table import DUNDER
from .tensor import GlobalTensor

# The attributes of flow.Tensor a global tensor takes from object (or has no use for).
_NOT_ROUTED = {"__class__", "__dict__", "__doc__", "__module__", "__new__", "__init_subclass__", "__subclasshook__",
               "__getattribute__", "__setattr__", "__delattr__", "__dir__", "__format__", "__getstate__", "__reduce__",
               "__sizeof__", "__init__", "__weakref__"}


def _operator(name):
    def op(self, *other):  # (unary: none; binary: one)
        return call_method(name, self, other, {})
    op.__name__ = name
    op._global_route_ = True  # (install_routes: Note [Global fast path])
    return op


def _reflected(name):
    def op(self, other):
        return call_function(name.replace("__r", "__", 1), (other, self), {})
    op.__name__ = name
    op._global_route_ = True  # (Note [Global fast path] runs the elementwise ones: global_bind.cpp's LookUp)
    return op


def _getitem(self, index):
    return call_method("__getitem__", self, (index,), {})


def _setitem(self, index, value):
    call_method("__setitem__", self, (index, value), {})


def _operators(Tensor):
    """{name: function} of GlobalTensor's Python operators and indexing: the op table's operators
    (its entries' `dunder:`, sbp_table.DUNDER) and the reflected forms flow.Tensor has of them."""
    ops = {"__getitem__": _getitem, "__setitem__": _setitem}
    ops.update((n, _operator(n)) for n in DUNDER)
    ops.update((r, _reflected(r)) for r in ("__r" + n[2:] for n in DUNDER) if hasattr(Tensor, r))
    return ops


def _route(name, attr):
    """The dispatcher's form of flow.Tensor's attribute `name`: a property's value computed on
    the components, or the method run there (Note [A global tensor is a Tensor])."""
    if not callable(attr):  # a property (x.T, x.mT, x.real): its value
        return property(lambda self: run(name, lambda x: getattr(x, name), (self,), {}))

    def method(self, *args, **kwargs):
        return call_method(name, self, args, kwargs)
    method.__name__ = name
    method._global_route_ = True
    return method


def install_routes(Tensor):
    """Defines on GlobalTensor its operators and every attribute of `Tensor` (flow.Tensor) it does
    not define itself (called at the end of the package's import, after the Python methods were
    added to flow.Tensor)."""
    for name, fn in _operators(Tensor).items():
        setattr(GlobalTensor, name, fn)
    for name in dir(Tensor):
        if name in _NOT_ROUTED or name in GlobalTensor.__dict__:
            continue
        if name.startswith("__"):
            raise AssertionError(f"GlobalTensor: flow.Tensor's {name} has no global form")
        setattr(GlobalTensor, name, _route(name, getattr(Tensor, name)))
    # Note [Global fast path] (src/api/global.h): each route to the dispatcher becomes a C++ method
    # that runs an elementwise op on inputs of one layout itself and calls the route otherwise.
    for name, fn in list(GlobalTensor.__dict__.items()):
        if getattr(fn, "_global_route_", False):
            setattr(GlobalTensor, name, _C._global_method(name, inplace_name(name), fn))
    share()
    _C._register_global_kind(Tensor, (GlobalTensor, GlobalParameter), _wrap_same)
