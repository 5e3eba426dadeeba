"""The shape-changing and structural transforms: IndependentTransform, ReshapeTransform,
CatTransform, StackTransform (shapes), StickBreakingTransform (the simplex),
LowerCholeskyTransform, CorrCholeskyTransform, PositiveDefiniteTransform (matrices) and
CumulativeDistributionTransform. Public as oneflow.distributions.transforms.X."""

import math
import operator
from functools import reduce

from .. import _oneflow_internal as _C
from .._size import Size
from . import constraints
import oneflow as flow
from ._transform_base import Transform, _clipped_sigmoid, _finfo, _sum_rightmost

class IndependentTransform(Transform):
    """base_transform with its rightmost reinterpreted_batch_ndims dims read as event dims."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @property
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)

    def __repr__(self):
        return f"{self.__class__.__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


class ReshapeTransform(Transform):
    """Reshapes the rightmost in_shape dims to out_shape (volume preserving)."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape, self.out_shape = Size(in_shape), Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else ReshapeTransform(self.in_shape, self.out_shape, cache_size)

    def _call(self, x):
        return x.reshape(tuple(x.shape[:x.dim() - len(self.in_shape)]) + tuple(self.out_shape))

    def _inverse(self, y):
        return y.reshape(tuple(y.shape[:y.dim() - len(self.out_shape)]) + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        return _C.zeros(tuple(x.shape[:x.dim() - len(self.in_shape)]), dtype=x.dtype, device=x.device)

    @staticmethod
    def _swap(shape, src, dst):
        if len(shape) < len(src):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(src)
        if tuple(shape[cut:]) != tuple(src):
            raise ValueError(f"Shape mismatch: expected {tuple(shape[cut:])} but got {tuple(src)}")
        return Size(tuple(shape[:cut]) + tuple(dst))

    def forward_shape(self, shape):
        return self._swap(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._swap(shape, self.out_shape, self.in_shape)


class StickBreakingTransform(Transform):
    """R^K -> the (K+1)-simplex by breaking sigmoid(x_i - log(K - i)) off the remaining stick."""

    domain, codomain, bijective = constraints.real_vector, constraints.simplex, True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    @staticmethod
    def _log_offset(n, like):
        # log(K - i) for i = 0..K-1: the shift that maps x = 0 to the uniform point
        return _C.arange(n, 0, -1, dtype=like.dtype, device=like.device).log()

    def _call(self, x):
        F = flow.nn.functional
        z = _clipped_sigmoid(x - self._log_offset(x.shape[-1], x))
        remaining = (1 - z).cumprod(-1)
        return F.pad(z, [0, 1], value=1.0) * F.pad(remaining, [1, 0], value=1.0)

    def _inverse(self, y):
        head = y[..., :-1]
        rest = (1 - head.cumsum(-1)).clamp(min=_finfo(y.dtype).tiny)
        return head.log() - rest.log() + self._log_offset(head.shape[-1], y)

    def log_abs_det_jacobian(self, x, y):
        x = x - self._log_offset(x.shape[-1], x)
        return (-x + flow.nn.functional.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return Size(tuple(shape[:-1]) + (shape[-1] - 1,))


class LowerCholeskyTransform(Transform):
    """Square matrices -> lower-triangular with a positive diagonal (strict lower part kept,
    diagonal exponentiated)."""

    domain, codomain = constraints.independent(constraints.real, 2), constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tril(-1) + _C.diag_embed(x.diagonal(0, -2, -1).exp())

    def _inverse(self, y):
        return y.tril(-1) + _C.diag_embed(y.diagonal(0, -2, -1).log())


class CatTransform(Transform):
    """tseq[i] applied to the slice of lengths[i] entries along dim, results concatenated."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise TypeError("tseq must be a sequence of Transforms")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise ValueError("tseq and lengths must have the same length")
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _map(self, x, fn):
        if not -x.dim() <= self.dim < x.dim() or x.shape[self.dim] != self.length:
            raise ValueError(f"CatTransform expects size {self.length} along dim {self.dim}")
        out, start = [], 0
        for t, n in zip(self.transforms, self.lengths):
            out.append(fn(t, x.narrow(self.dim, start, n)))
            start += n
        return flow.cat(out, self.dim)

    def _call(self, x):
        return self._map(x, lambda t, s: t(s))

    def _inverse(self, y):
        return self._map(y, lambda t, s: t.inv(s))

    def log_abs_det_jacobian(self, x, y):
        terms, start = [], 0
        for t, n in zip(self.transforms, self.lengths):
            term = t.log_abs_det_jacobian(x.narrow(self.dim, start, n), y.narrow(self.dim, start, n))
            terms.append(_sum_rightmost(term, self.event_dim - t.event_dim))
            start += n
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        if dim < 0:  # the cat dim survives in the log-det: concatenate the pieces
            return flow.cat(terms, dim)
        return reduce(operator.add, terms)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """tseq[i] applied to x.select(dim, i), results stacked along dim."""

    def __init__(self, tseq, dim=0, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise TypeError("tseq must be a sequence of Transforms")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms, self.dim = list(tseq), dim

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, z):
        if not -z.dim() <= self.dim < z.dim() or z.shape[self.dim] != len(self.transforms):
            raise ValueError(f"StackTransform expects size {len(self.transforms)} along dim {self.dim}")
        return [z.select(self.dim, i) for i in range(z.shape[self.dim])]

    def _call(self, x):
        return flow.stack([t(s) for t, s in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y):
        return flow.stack([t.inv(s) for t, s in zip(self.transforms, self._slices(y))], self.dim)

    def log_abs_det_jacobian(self, x, y):
        return flow.stack([t.log_abs_det_jacobian(a, b) for t, a, b in
                              zip(self.transforms, self._slices(x), self._slices(y))], self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """x -> distribution.cdf(x), onto the unit interval (log-det: the log-density)."""

    bijective, codomain, sign = True, constraints.unit_interval, +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else CumulativeDistributionTransform(self.distribution, cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)


def _tril_positions(n, diag):
    """Row-major flat positions i * n + j of the entries with j - i <= diag of an n x n matrix."""
    return [i * n + j for i in range(n) for j in range(n) if j - i <= diag]


def _tril_to_vec(mat, diag):
    """The entries j - i <= diag of mat's last two dims, row by row, as a vector."""
    n = mat.shape[-1]
    idx = flow.tensor(_tril_positions(n, diag), dtype=flow.int64, device=mat.device)
    return mat.reshape(tuple(mat.shape[:-2]) + (n * n,))[..., idx]


def _vec_to_tril(vec, n, diag):
    """Inverse of _tril_to_vec: vec's entries placed row by row at j - i <= diag, zeros elsewhere."""
    slot = {p: k + 1 for k, p in enumerate(_tril_positions(n, diag))}
    gather = flow.tensor([slot.get(p, 0) for p in range(n * n)], dtype=flow.int64, device=vec.device)
    padded = flow.cat([_C.zeros_like(vec[..., :1]), vec], -1)  # slot 0 reads a zero
    return padded[..., gather].reshape(tuple(vec.shape[:-1]) + (n, n))


def _shift_right_ones(x):
    """x's last dim shifted one place right, a 1 entering on the left."""
    return flow.cat([_C.ones_like(x[..., :1]), x[..., :-1]], -1)


class CorrCholeskyTransform(Transform):
    """Unconstrained vectors of length D(D-1)/2 -> Cholesky factors of D x D correlation matrices.
    Each entry goes through tanh to a partial correlation r in (-1, 1), the r fill the strict lower
    triangle row by row, and row i is then built by stick breaking on the squares:
    L_ij = r_ij sqrt(1 - sum_{k<j} L_ik^2) for j < i, L_ii = sqrt(1 - sum_{k<i} L_ik^2)."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other):
        return isinstance(other, CorrCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        eps = _finfo(x.dtype).eps
        r = _vec_to_tril(x.tanh().clamp(min=-1 + eps, max=1 - eps), self._dim_of(x.shape[-1]), -1)
        remaining = _shift_right_ones((1 - r * r).sqrt().cumprod(-1))  # prod_{k<j} sqrt(1 - r_ik^2)
        eye = flow.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return (r + eye) * remaining

    def _inverse(self, y):
        left = _shift_right_ones(1 - (y * y).cumsum(-1))  # 1 - sum_{k<j} y_ik^2
        t = _tril_to_vec(y, -1) / _tril_to_vec(left, -1).sqrt()
        return 0.5 * (t.log1p() - (-t).log1p())  # atanh

    def log_abs_det_jacobian(self, x, y):
        # stick breaking: 1/2 sum over j <= i-2 of log(1 - sum_{k<=j} y_ik^2); tanh: log(1 - tanh(x)^2)
        breaking = 0.5 * _tril_to_vec(1 - (y * y).cumsum(-1), -2).log().sum(-1)
        tanh_part = (2 * (math.log(2.0) - x - _C.softplus(-2 * x))).sum(-1)
        return breaking + tanh_part

    @staticmethod
    def _dim_of(n):
        d = int(round((0.25 + 2 * n) ** 0.5 + 0.5))
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattend lower-diagonal number")
        return d

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        d = self._dim_of(shape[-1])
        return Size(tuple(shape[:-1]) + (d, d))

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return Size(tuple(shape[:-2]) + (d * (d - 1) // 2,))


class PositiveDefiniteTransform(Transform):
    """Square matrices -> symmetric positive definite ones: L L^T with L the LowerCholeskyTransform
    of the input; the inverse takes the Cholesky factor back through that transform's inverse.
    Like PyTorch's, it is not marked bijective and has no log_abs_det_jacobian."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        L = LowerCholeskyTransform()(x)
        return L @ L.transpose(-2, -1)

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(flow.linalg.cholesky(y))
