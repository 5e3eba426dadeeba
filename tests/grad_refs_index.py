"""Gradient references for scatter ops where torch's own backward fails on valid input.

torch 2.13's scatter/scatter_add backward returns a src gradient of index's shape when src is
larger than index ("returned an invalid gradient"), has no derivative for scatter(reduce=...),
and its scatter_reduce backward rejects the "max"/"min" spellings its forward accepts. Each
reference below computes the same forward with torch ops whose backward works: src cut to the
part the scatter reads, reduce='add'/'multiply' as scatter_reduce(sum/prod, include_self=True),
max/min as amax/amin. Used as GRAD_REF entries by test_ops_grad.py.
"""

import torch


def _fit(src, index):
    """src cut to index's shape: the elements a scatter reads."""
    if isinstance(src, torch.Tensor) and src.dim() == index.dim() and tuple(src.shape) != tuple(index.shape):
        return src[tuple(slice(0, s) for s in index.shape)]
    return src


def scatter(x, dim, index, src=None, *, value=None, reduce=None):
    if reduce not in (None, "add", "multiply"):
        return torch.scatter(x, dim, index, src if src is not None else value, reduce=reduce)  # raises
    if reduce is None:
        if src is None:
            return torch.scatter(x, dim, index, value=value)
        return torch.scatter(x, dim, index, _fit(src, index))
    s = src if src is not None else value
    if not isinstance(s, torch.Tensor):
        s = torch.full(index.shape, s, dtype=x.dtype)
    return torch.scatter_reduce(x, dim, index, _fit(s, index), "sum" if reduce == "add" else "prod")


def scatter_add(x, dim, index, src):
    return torch.scatter_add(x, dim, index, _fit(src, index))


def scatter_reduce(x, dim, index, src, reduce, *, include_self=True):
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    return torch.scatter_reduce(x, dim, index, _fit(src, index), reduce, include_self=include_self)


GRAD_REFS = {"scatter": scatter, "scatter_add": scatter_add, "scatter_reduce": scatter_reduce}
