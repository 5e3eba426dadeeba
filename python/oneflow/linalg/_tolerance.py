"""linalg.matrix_rank and linalg.pinv: the table ops (src/ops/table/linalg.yaml) under all of
PyTorch's overloads.

Note [Tolerance overloads]: besides `(A, *, atol=None, rtol=None, hermitian=False)`, PyTorch
takes the NumPy-style tolerance second, positionally: `matrix_rank(A, tol, hermitian=False)`
(an absolute tolerance: atol=tol, rtol=0) and `pinv(A, rcond, hermitian=False)` (a relative one:
atol=0, rtol=rcond), each as a number or a tensor; and every tolerance may be a tensor, one value
per matrix of the batch (broadcast against the batch dims). Number tolerances go to the table op
as they are; tensor ones are composed here from the singular values (the eigenvalues' moduli
for hermitian), as PyTorch composes both functions: a singular value counts when it is greater
than max(atol, rtol * the largest one)."""
import numbers

from .. import _oneflow_internal as _C
from .._export import export
from .._argcheck import check_bool, check_tensor
from .._global_hooks import placed_like

# The machine epsilon of linalg's real dtypes (finfo(dtype).eps; flow.finfo's module imports this
# package, so not read from there)
_EPS = {_C.float32: 2.0 ** -23, _C.float64: 2.0 ** -52}
_UNSET = object()  # `tol` / `rcond` left out (None given is PyTorch's TypeError)


def _is_number(v):
    return v is None or (isinstance(v, numbers.Real) and not isinstance(v, bool))


def _check_tolerances(name, pairs, differentiable):
    """Each tolerance is a number or a tensor (PyTorch's TypeError otherwise); pinv's tensor
    tolerances may not require grad (PyTorch's RuntimeError: no derivative flows to them)."""
    for arg, v in pairs:
        if v is None or isinstance(v, numbers.Real):
            continue
        if not isinstance(v, _C.Tensor):
            raise TypeError(f"{name}(): argument '{arg}' must be float or Tensor, not {type(v).__name__}")
        if differentiable and v.requires_grad and _C.is_grad_enabled():
            raise RuntimeError(f"The function '{name}' is not differentiable with respect to argument "
                               f"'{arg}'. This input cannot have requires_grad True.")


def _arguments(name, input, hermitian, atol, rtol, overload, value, as_atol_rtol):
    """(atol, rtol) after the argument checks; `value` is the positional overload's tolerance
    (`tol` / `rcond`, _UNSET when left out), `as_atol_rtol` what it stands for."""
    if value is not _UNSET:
        if value is None or atol is not None or rtol is not None:
            raise TypeError(f"{name}(): {overload} is a float or Tensor, and is not given with atol or rtol")
        atol, rtol = as_atol_rtol(value)
    check_tensor(input, name, "input")
    check_bool(hermitian, name, "hermitian", 3)
    # pinv's tensor tolerances may not require grad; matrix_rank has no derivative at all
    _check_tolerances(name, (("atol", atol), ("rtol", rtol)), name == "linalg_pinv")
    return atol, rtol


def _tolerances(A, atol, rtol, name):
    """(atol, rtol) as real tensors with PyTorch's defaults (rtol = eps * max(m, n) unless a
    positive atol is given)."""
    real = A.real.dtype if A.is_complex() else A.dtype
    for arg, v in (("atol", atol), ("rtol", rtol)):
        if isinstance(v, _C.Tensor) and v.is_complex():
            raise RuntimeError(f"{name}: {arg} tensor of complex type is not supported.")
    def as_real(v):
        if isinstance(v, _C.Tensor):
            return v.to(dtype=real, device=A.device)
        return _C.full((), v, dtype=real, **placed_like(A))

    zero = as_real(0.0)
    atol = zero if atol is None else as_real(atol)
    if rtol is None:
        default = as_real(_EPS[real] * max(A.shape[-2], A.shape[-1]))
        rtol = default if atol is zero else _C.where(atol > 0, zero, default)
    else:
        rtol = as_real(rtol)
    return atol, rtol


def _spectrum(A, hermitian):
    """The singular values (last dim), largest first, and with hermitian the eigenvectors."""
    if hermitian:
        w, Q = _C.linalg_eigh(A)
        return w.abs(), w, Q
    return _C.linalg_svdvals(A), None, None


def _threshold(S, atol, rtol):
    """max(atol, rtol * max(S)) per matrix, shaped to compare with S."""
    s_max = S.amax(-1, keepdim=True) if S.shape[-1] > 0 else _C.zeros_like(S).sum(-1, keepdim=True)
    return _C.maximum(atol.unsqueeze(-1), rtol.unsqueeze(-1) * s_max)


@export("flow.linalg.matrix_rank")
# PyTorch's names: the function linalg_matrix_rank (as torch.linalg.matrix_rank.__name__, so that
# errors name it so), the parameter `input`, not the documented `A` (`matrix_rank(A=x)` is a TypeError)
def linalg_matrix_rank(input, tol=_UNSET, hermitian=False, *, atol=None, rtol=None, out=None):
    """The number of singular values greater than max(atol, rtol * the largest); `tol` second is
    PyTorch's absolute-tolerance overload (Note [Tolerance overloads])."""
    atol, rtol = _arguments("linalg_matrix_rank", input, hermitian, atol, rtol, "tol", tol,
                            lambda t: (t, 0.0))
    if _is_number(atol) and _is_number(rtol):
        return _C.linalg_matrix_rank(input, atol=atol, rtol=rtol, hermitian=hermitian, out=out)
    if input.dim() < 2:
        raise RuntimeError("linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    S = _spectrum(input, hermitian)[0]  # first: its dtype checks are the op's
    atol, rtol = _tolerances(input, atol, rtol, "linalg.matrix_rank")
    if input.numel() == 0:  # no singular values: rank 0 per matrix of the batch (PyTorch's shape)
        rank = _C.zeros(tuple(input.shape[:-2]), dtype=_C.int64, **placed_like(input))
    else:
        rank = (S > _threshold(S, atol, rtol)).sum(-1)
    if out is not None:
        return out.resize_(rank.shape).copy_(rank)
    return rank


@export("flow.linalg.pinv")
def linalg_pinv(input, rcond=_UNSET, hermitian=False, *, atol=None, rtol=None, out=None):
    """The Moore-Penrose pseudo-inverse, singular values up to max(atol, rtol * the largest)
    treated as zero; `rcond` second is PyTorch's relative-tolerance overload (Note [Tolerance
    overloads])."""
    atol, rtol = _arguments("linalg_pinv", input, hermitian, atol, rtol, "rcond", rcond,
                            lambda r: (0.0, r))
    if _is_number(atol) and _is_number(rtol):
        return _C.linalg_pinv(input, atol=atol, rtol=rtol, hermitian=hermitian, out=out)
    if input.dim() < 2:
        raise RuntimeError("linalg.pinv(input): The input tensor input must have at least 2 "
                           "dimensions.")
    _C.linalg_svdvals(input[..., :0, :0])  # first: its dtype checks are the op's (on no values)
    atol, rtol = _tolerances(input, atol, rtol, "linalg.pinv")
    if input.numel() == 0:  # the (n, m) empty matrices, as PyTorch's early return
        result = _C.empty(tuple(input.shape[:-2]) + (input.shape[-1], input.shape[-2]), dtype=input.dtype,
                          **placed_like(input))
    elif hermitian:
        S, w, Q = _spectrum(input, True)
        keep = S > _threshold(S, atol, rtol)
        inv = _C.where(keep, 1.0 / _C.where(keep, w, _C.ones_like(w)), _C.zeros_like(w))
        result = (Q * inv.unsqueeze(-2).to(Q.dtype)) @ Q.mH
    else:
        U, S, Vh = _C.linalg_svd(input, full_matrices=False)
        keep = S > _threshold(S, atol, rtol)
        inv = _C.where(keep, 1.0 / _C.where(keep, S, _C.ones_like(S)), _C.zeros_like(S))
        result = (Vh.mH * inv.unsqueeze(-2).to(Vh.dtype)) @ U.mH
    if out is not None:
        return out.resize_(result.shape).copy_(result)
    return result
