"""Python glue of the selection / scatter / sort ops (src/ops/table/index.yaml, sort.yaml).

Each function here is one op-table entry (``flow._C.<name>``) with the call forms a single C++
signature cannot express: overloads that change the number of outputs (``where(condition)``,
``nonzero(as_tuple=True)``, ``median(x)`` vs ``median(x, dim)``, ``unique(return_counts=...)``)
and OneFlow's argument order ``gather(input, index, dim=...)``.
"""
from . import _oneflow_internal as _C
from ._argcheck import LEFT_OUT
from ._export import export, export_value

Tensor = _C.Tensor


@export("flow.where", out=True)
def where(condition, x=LEFT_OUT, y=LEFT_OUT):
    # x / y left out: nonzero; an explicit None is no `nonzero` (PyTorch and upstream OneFlow
    # refuse None for x and y)
    """Elements of ``x`` where ``condition`` is nonzero, else of ``y``. With the condition alone:
    the indices of its nonzero elements, one tensor per dim (``nonzero(as_tuple=True)``)."""
    if x is LEFT_OUT and y is LEFT_OUT:
        return nonzero(condition, as_tuple=True)
    if x is LEFT_OUT or y is LEFT_OUT:
        raise TypeError("where() takes the condition alone or the condition, x and y")
    return _C.where(condition, x, y)  # a None x / y: the binding's TypeError naming it


@export("Tensor.where")
def _tensor_where(self, x=LEFT_OUT, y=LEFT_OUT):
    # OneFlow's Tensor.where: the tensor is the condition (``condition.where(x, y)``). Upstream's
    # method passes x=None / y=None on, which its flow.where refuses: both are required here.
    if x is LEFT_OUT or y is LEFT_OUT:
        raise TypeError("where(): missing a required argument: Tensor.where takes x and y "
                        "(condition.where(x, y))")
    return where(self, x, y)


@export("flow.nonzero", out=True)
def nonzero(input, as_tuple=False):  # as_tuple also positional: upstream OneFlow's signature
    """Coordinates of the nonzero elements: ``[n, ndim]`` int64, or one 1-d tensor per dim."""
    if not isinstance(as_tuple, (bool, int)):  # (an int reads as a bool, as OneFlow's parser does)
        raise TypeError(f"nonzero(): argument 'as_tuple' must be bool, not {type(as_tuple).__name__}")
    r = _C.nonzero(input)
    if not as_tuple:
        return r
    if input.ndim == 0:
        # A nonzero scalar is "at" index 0 of a 1-d view of itself (PyTorch).
        # (r is (n, 0): its sum over dim 1 is n int64 zeros -- a method, so a global r gives a
        # global result on its own layout, where zeros(n) would make a local one)
        return (r.sum(1),)
    return tuple(r.unbind(1))  # (a method: a global tensor's runs on its own layout, docs/global_tensors.md)


@export("Tensor.nonzero")
def _tensor_nonzero(self, as_tuple=False):
    return nonzero(self, as_tuple=as_tuple)


@export("flow.gather", out=True)
def gather(input, *args, sparse_grad=False, **kwargs):
    """gather(input, dim, index) (PyTorch) or gather(input, index, dim=0) (OneFlow's documented
    order): a tensor in the second position is the index."""
    dim = kwargs.pop("dim", None)
    index = kwargs.pop("index", None)
    if kwargs:
        raise TypeError(f"gather() got an unexpected keyword argument '{next(iter(kwargs))}'")
    pos = list(args)
    if pos and isinstance(pos[0], Tensor):
        index = pos.pop(0)
        if pos:
            dim = pos.pop(0)
        if dim is None:
            dim = 0
    else:
        if pos:
            dim = pos.pop(0)
        if pos:
            index = pos.pop(0)
    if pos:
        raise TypeError(f"gather() takes at most 3 positional arguments ({len(args) + 1} given)")
    if dim is None or index is None:
        raise TypeError("gather() missing required argument '" + ("dim" if dim is None else "index") + "'")
    return _C.gather(input, dim, index, sparse_grad=sparse_grad)


@export("Tensor.gather")
def _tensor_gather(self, *args, **kwargs):
    return gather(self, *args, **kwargs)


@export("flow.median", out=True)
def median(input, dim=None, keepdim=False):
    """The lower median: of all elements (a 0-d tensor), or along ``dim`` as (values, indices)."""
    r = _C.median(input, dim, keepdim)
    return r.values if dim is None else r


@export("flow.nanmedian")
def nanmedian(input, dim=None, keepdim=False):
    """median() ignoring NaNs."""
    r = _C.nanmedian(input, dim, keepdim)
    return r.values if dim is None else r


def _with_flags(out, inverse, counts, return_inverse, return_counts):
    if not return_inverse and not return_counts:
        return out
    return (out,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())


@export("flow.unique")
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements (or slices along ``dim``), sorted; optionally the inverse indices
    and the counts."""
    out, inv, cnt = _C.unique(input, sorted, return_inverse, return_counts, dim)
    return _with_flags(out, inv, cnt, return_inverse, return_counts)


@export("flow.unique_consecutive")
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """unique() of runs of equal neighbours, in input order."""
    out, inv, cnt = _C.unique_consecutive(input, return_inverse, return_counts, dim)
    return _with_flags(out, inv, cnt, return_inverse, return_counts)


def _method(fn):
    def m(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    m.__name__ = fn.__name__
    m.__doc__ = fn.__doc__
    return m


export_value(_method(median), "Tensor.median")
export_value(_method(nanmedian), "Tensor.nanmedian")
export_value(_method(unique), "Tensor.unique")
export_value(_method(unique_consecutive), "Tensor.unique_consecutive")
