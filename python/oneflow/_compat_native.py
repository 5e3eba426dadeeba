"""PyTorch's top-level forms of the normalisation functions with their ATen signatures
(torch.batch_norm, instance_norm, constant_pad_nd, native_layer_norm, native_batch_norm,
native_group_norm), composed of oneflow's nn.functional, and of the dropout table ops
(native_dropout, dropout_, feature_dropout, ...); plus range, triangular_solve, svd_lowrank /
pca_lowrank, nonzero_static, as_strided_scatter, frombuffer / from_file, cond / while_loop.
Tested against PyTorch in tests/test_compat_native.py.
"""
import oneflow as flow
import math
import os
import warnings

from . import _C
from ._oneflow_internal import Tensor
from ._export import export, export_value, ref
from ._argcheck import check_tensor


def _F():
    return flow.nn.functional


# ---------------------------------------------------------------------------------------------
# normalisation and dropout, ATen argument order


@export("flow.batch_norm")
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled=True):
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


@export("flow.instance_norm")
def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                  cudnn_enabled=True):
    return _F().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


@export("flow.constant_pad_nd")
def constant_pad_nd(input, pad, value=0):
    return _F().pad(input, list(pad), mode="constant", value=value)


def _stats(x, dims, eps):
    """Mean and 1 / sqrt(biased variance + eps) over dims (kept), without gradient."""
    x = x.detach()
    mean = x.mean(dim=dims, keepdim=True)
    var = x.var(dim=dims, unbiased=False, keepdim=True)
    return mean, (var + eps).rsqrt()


@export("flow.native_layer_norm")
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(output, mean, rstd); mean and rstd keep the normalised dims as size 1."""
    normalized_shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    out = _F().layer_norm(input, normalized_shape, weight, bias, eps)
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    mean, rstd = _stats(input, dims, eps) if dims else (input.detach(), input.detach())
    return out, mean, rstd


@export("flow.native_batch_norm")
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(output, save_mean, save_invstd): the batch statistics per channel when training (empty
    tensors otherwise, as PyTorch's CPU kernel)."""
    out = _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        e = flow.empty(0, dtype=input.dtype, device=input.device)
        return out, e, e.clone()
    dims = [0] + list(range(2, input.dim()))
    mean, invstd = _stats(input, dims, eps)
    return out, mean.reshape(-1), invstd.reshape(-1)


@export("flow.native_group_norm")
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(output, mean, rstd) with mean and rstd of shape (N, group)."""
    out = _F().group_norm(input, group, weight, bias, eps)
    g = input.detach().reshape(N, group, -1)
    mean, rstd = _stats(g, [2], eps)
    return out, mean.reshape(N, group), rstd.reshape(N, group)


# ---------------------------------------------------------------------------------------------
# others


@export("flow.range")
def range_(start, end, step=1, *, dtype=None, device=None, requires_grad=False, **kwargs):
    """Deprecated in PyTorch: the values start, start + step, ... up to end inclusive (in the
    default float dtype unless told)."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    if step == 0:
        raise RuntimeError("range: step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("range: upper bound and larger bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    dtype = dtype or flow.get_default_dtype()
    t = flow.arange(n, dtype=flow.float64, device=device) * step + start
    return t.to(dtype).requires_grad_(requires_grad)


@export("flow.triangular_solve", out=True)
def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """Deprecated torch.triangular_solve: (X, A's copy) with op(A) X = b, op(A) = A or A^T."""
    check_tensor(b, "triangular_solve", "input", 1)
    check_tensor(A, "triangular_solve", "A", 2)
    import collections
    M = A.transpose(-2, -1) if transpose else A
    x = flow.linalg.solve_triangular(M, b, upper=upper != transpose, unitriangular=unitriangular)
    return collections.namedtuple("triangular_solve", ["solution", "cloned_coefficient"])(x, A.clone())


@export("flow.svd_lowrank")
def svd_lowrank(A, q=6, niter=2, M=None):
    """The q leading singular triplets (U, S, V) of A - M, A = U diag(S) V^T (batched). PyTorch
    approximates them by randomized subspace iteration; here they come from the exact SVD, which
    that iteration converges to."""
    q = 6 if q is None else q
    X = A if M is None else A - M
    U, S, Vh = flow.linalg.svd(X, full_matrices=False)
    q = min(q, S.shape[-1])
    return U[..., :q], S[..., :q], Vh[..., :q, :].transpose(-2, -1)


@export("flow.pca_lowrank")
def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V) of the centred A's q leading principal directions (q = min(6, m, n) by
    default), as torch.pca_lowrank."""
    check_tensor(A, "pca_lowrank", "A", 1)
    m, n = A.shape[-2], A.shape[-1]
    q = min(6, m, n) if q is None else q
    if not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if center:
        A = A - A.mean(dim=-2, keepdim=True)
    return svd_lowrank(A, q, niter)


@export("flow.nonzero_static")
def nonzero_static(input, *, size, fill_value=-1):
    """nonzero(input) as a (size, input.dim()) tensor: truncated, or padded with fill_value."""
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, got {size}")
    nz = flow.nonzero(input)
    if nz.shape[0] >= size:
        return nz[:size]
    pad = flow.full((size - nz.shape[0], nz.shape[1]), fill_value, dtype=nz.dtype, device=nz.device)
    return flow.cat([nz, pad])


@export("flow.as_strided_scatter")
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of input whose elements at the strided view (size, stride, storage_offset) are
    src's."""
    out = input.clone()
    view = out.as_strided(size, stride, storage_offset or 0)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"as_strided_scatter: expected src to have a size equal to the slice of self. src "
                           f"size = {list(src.shape)}, slice size = {list(view.shape)}")
    view.copy_(src)
    return out


@export("flow.frombuffer")
def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor over the bytes of an object with the buffer protocol (sharing them)."""
    import numpy as np
    np_dtype = flow.empty(0, dtype=dtype).numpy().dtype
    arr = np.frombuffer(buffer, dtype=np_dtype, count=count, offset=offset)
    t = flow.from_numpy(arr)
    return t.requires_grad_(requires_grad) if requires_grad else t


@export("flow.from_file")
def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None, pin_memory=False,
              requires_grad=False):
    """The first size elements of a binary file; with shared=True the tensor maps the file
    (writes reach it)."""
    if not isinstance(filename, (str, bytes, os.PathLike)):
        raise TypeError(f"from_file(): argument 'filename' (position 1) must be str, not {type(filename).__name__}")
    import numpy as np
    dtype = dtype or flow.get_default_dtype()
    np_dtype = flow.empty(0, dtype=dtype).numpy().dtype
    if shared:
        arr = np.memmap(filename, dtype=np_dtype, mode="r+", shape=(size,))
    else:
        arr = np.fromfile(filename, dtype=np_dtype, count=size)
        if arr.size < size:
            raise RuntimeError(f"from_file: the file holds {arr.size} elements of {dtype}, fewer than size={size}")
    t = flow.from_numpy(arr)
    if device is not None:
        t = t.to(device)
    return t.requires_grad_(requires_grad) if requires_grad else t


@export("flow.cond")
def cond(pred, true_fn, false_fn, operands=()):
    """true_fn(*operands) if pred else false_fn(*operands) (torch.cond, run eagerly)."""
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
        pred = bool(pred.item())
    elif not isinstance(pred, bool):
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred!r}.")
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/tuple, got {operands!r}")
    return true_fn(*operands) if pred else false_fn(*operands)


@export("flow.while_loop")
def while_loop(cond_fn, body_fn, carried_inputs):
    """carried_inputs = body_fn(*carried_inputs) while cond_fn(*carried_inputs) (torch.while_loop,
    run eagerly); the final carried values."""
    carried = tuple(carried_inputs)
    while True:
        c = cond_fn(*carried)
        if isinstance(c, Tensor):
            if c.numel() != 1:
                raise RuntimeError(f"cond_fn must return a boolean scalar tensor or a python bool, got {c}")
            c = bool(c.item())
        if not c:
            return carried
        out = body_fn(*carried)
        carried = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        if len(carried) != len(carried_inputs):
            raise RuntimeError(f"body_fn should return as many values as carried_inputs ({len(carried_inputs)}), "
                               f"got {len(carried)}")


# the dropout table ops have the ATen signatures (input, p, train) already
# (feature_dropout is a top-level name of the op table itself)
for _name in ("native_dropout", "feature_dropout_", "dropout_", "alpha_dropout_", "feature_alpha_dropout_"):
    export_value(getattr(_C, _name), "flow." + _name)
del _name
export_value(ref("Tensor.fill_"), "flow.fill_")
export_value(ref("Tensor.detach_"), "flow.detach_")
export_value(ref("Tensor.put"), "flow.put")


@export("flow.get_device")
def get_device(input):
    return check_tensor(input, "get_device", "input").get_device()


@export("flow.alias_copy")
def alias_copy(input):
    return check_tensor(input, "alias_copy", "input").clone()


@export("flow.detach_copy")
def detach_copy(input):
    return check_tensor(input, "detach_copy", "input").detach().clone()


export_value(lambda self: False, "Tensor.is_inference")


@export("flow.is_inference")
def is_inference(input):
    return check_tensor(input, "is_inference", "input").is_inference()


export_value(ref("flow.utils.dlpack.to_dlpack"), "flow.to_dlpack")
export_value(lambda self, dim, start, length: self.narrow(dim, start, length).clone(), "Tensor.narrow_copy")
export_value(lambda self, *, size, fill_value=-1: nonzero_static(self, size=size,
                                                                           fill_value=fill_value), "Tensor.nonzero_static")
export_value(lambda self, A, upper=True, transpose=False, unitriangular=False: triangular_solve(
    self, A, upper, transpose, unitriangular), "Tensor.triangular_solve")
export_value(lambda self, src, size, stride, storage_offset=None: as_strided_scatter(
    self, src, size, stride, storage_offset), "Tensor.as_strided_scatter")
export_value(lambda self, *a, **k: flow.histogram(self, *a, **k), "Tensor.histogram")


