"""Copying and pickling of op-table functions (nanobind `nb_func` objects such as F.gelu).

Modules often hold an op as an attribute (TransformerEncoderLayer's `activation`), and
`copy.deepcopy(module)` / `flow.save(module)` must work on them. Functions are immutable, so a
copy is the function itself and a pickle refers to it by module and name, as Python does for its
own functions."""
import copyreg
import importlib

from . import _oneflow_internal as _C


def _resolve(module, qualname):
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _reduce_op(fn):
    return _resolve, (fn.__module__, fn.__qualname__)


copyreg.pickle(type(_C.gelu), _reduce_op)
