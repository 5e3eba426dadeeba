"""Copying and pickling of op-table functions (nanobind `nb_func` objects such as F.gelu).

Modules often hold an op as an attribute (TransformerEncoderLayer's `activation`), and
`copy.deepcopy(module)` / `flow.save(module)` must work on them. Functions are immutable, so a
copy is the function itself and a pickle refers to it by module and name, as Python does for its
own functions.

Tensor methods are nanobind methods too: `flow.Tensor.add` is an `nb_method` (pickled like a
function, by module and qualified name) and `t.add` an `nb_bound_method`. PyTorch's and upstream
OneFlow's tensor methods are builtin methods, which `copy.deepcopy` treats as atomic (the copy is
the same bound method: upstream's autotest deep-copies `tensor.method` before calling it, and the
tensor may be a non-leaf that cannot itself be deep-copied) and which pickle as
`getattr(self, name)`; ours behave the same, also the Tensor methods defined in Python (bound
`types.MethodType` objects, which Python would deep-copy together with their tensor)."""
import copy
import copyreg
import importlib
import types

from . import _oneflow_internal as _C


def _resolve(module, qualname):
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _reduce_op(fn):
    return _resolve, (fn.__module__, fn.__qualname__)


copyreg.pickle(type(_C.gelu), _reduce_op)


def _reduce_bound_method(method):
    return getattr, (method.__self__, method.__func__.__name__)


_unbound_method = type(_C.Tensor.add)
_bound_method = type(_C.Tensor([0.0]).add)
copyreg.pickle(_unbound_method, _reduce_op)
copyreg.pickle(_bound_method, _reduce_bound_method)
# copy.deepcopy has no public hook that keeps an object as it is apart from __deepcopy__, which
# nanobind's method types do not have; its dispatch table is where Python registers its own
# builtin methods as atomic.
copy._deepcopy_dispatch[_bound_method] = copy._deepcopy_atomic

_deepcopy_python_method = copy._deepcopy_dispatch[types.MethodType]


def _deepcopy_method(method, memo):
    if isinstance(method.__self__, _C.Tensor):
        return method
    return _deepcopy_python_method(method, memo)


copy._deepcopy_dispatch[types.MethodType] = _deepcopy_method
