"""Random matrices (as torch.distributions'): LKJCholesky (Cholesky factors of LKJ-distributed
correlation matrices, sampled by the onion method) and Wishart (sampled by the Bartlett
decomposition).
Wishart's rsample is pathwise in the scale (covariance / precision / scale_tril) and, through the
reparameterised chi-square draws of its diagonal, in df; LKJCholesky is not reparameterised
(as PyTorch's)."""

import oneflow as flow
import math
import warnings

from .. import _oneflow_internal as _C
from .._grad_mode import no_grad
from .._size import Size
from . import constraints
from .continuous import _finfo
from .distribution import Distribution
from .gamma_family import _standard_gamma
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import broadcast_all, lazy_property

__all__ = ["LKJCholesky", "Wishart"]


def _arange(n, like, start=0):
    return flow.arange(start, n, dtype=like.dtype, device=like.device)


def _mvlgamma(x, p):
    """log of the multivariate gamma function Gamma_p(x), elementwise over x."""
    halves = _arange(p, x) * 0.5
    return p * (p - 1) / 4.0 * math.log(math.pi) + (x.unsqueeze(-1) - halves).lgamma().sum(-1)


def _mvdigamma(x, p):
    """d/dx log Gamma_p(x), elementwise over x."""
    return (x.unsqueeze(-1) - _arange(p, x) * 0.5).digamma().sum(-1)


class LKJCholesky(Distribution):
    """Lower Cholesky factors L of dim x dim correlation matrices with density proportional to
    det(L L^T)^(concentration - 1) (uniform over correlation matrices at concentration 1)."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        self._set_beta()
        super().__init__(self.concentration.size(), Size((dim, dim)), validate_args=validate_args)

    def _set_beta(self):
        """Beta(a_i, b_i) parameters of the squared row norms below the diagonal (onion method):
        a = (0, 0, 1, ..., dim - 2) / 2 + 1/2 and b = concentration + (dim - 2) / 2 - offset / 2."""
        c = self.concentration
        offset = flow.cat([_C.zeros_like(_arange(1, c)), _arange(self.dim - 1, c)])
        self._beta_a = (offset + 0.5).expand(tuple(c.shape) + (self.dim,))
        self._beta_b = (c + 0.5 * (self.dim - 2)).unsqueeze(-1) - 0.5 * offset

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(*batch_shape)
        new._set_beta()
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()):
        with no_grad():
            shape = tuple(self._extended_shape(sample_shape))
            c = self.concentration
            ga = _standard_gamma(self._beta_a.expand(*shape[:-1]).contiguous())
            gb = _standard_gamma(self._beta_b.expand(*shape[:-1]).contiguous())
            y = (ga / (ga + gb)).unsqueeze(-1)  # squared norm of row i's off-diagonal part
            u = _C.randn(shape, dtype=c.dtype, device=c.device).tril(-1)
            tiny = _finfo(c.dtype).tiny
            u = u / u.pow(2).sum(-1, keepdim=True).sqrt().clamp(min=tiny)  # row 0 stays zero
            w = y.sqrt() * u
            diag = (1 - w.pow(2).sum(-1)).clamp(min=tiny).sqrt()
            return w + _C.diag_embed(diag)

    def log_prob(self, value):
        # density of L: prod_{i>=1} L_ii^(2 (eta - 1) + dim - 1 - i) over the LKJ normaliser
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        diag = value.diagonal(0, -2, -1)[..., 1:]
        order = 2 * (c - 1).unsqueeze(-1) + self.dim - _arange(self.dim + 1, c, start=2)
        unnormalised = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = c + 0.5 * dm1
        log_norm = 0.5 * dm1 * math.log(math.pi) + _mvlgamma(alpha - 0.5, dm1) - alpha.lgamma() * dm1
        return unnormalised - log_norm


class Wishart(ExponentialFamily):
    """Symmetric positive definite p x p matrices X = sum of df outer products of N(0, Sigma)
    vectors (df real, > p - 1); Sigma given as covariance_matrix, precision_matrix or scale_tril."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise AssertionError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, _C.Tensor):
            batch_shape = Size(flow.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(*batch_shape)
        else:
            batch_shape = Size(param.shape[:-2])
            self.df = _C.full((), float(df), dtype=param.dtype, device=param.device)
        event_shape = Size(param.shape[-2:])
        p = event_shape[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        full = tuple(batch_shape) + (-1, -1)
        if scale_tril is not None:
            self.scale_tril = param.expand(*full)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(*full)
        else:
            self.precision_matrix = param.expand(*full)
        if bool((self.df < p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for "
                          "ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = flow.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(*cov_shape)
        new.df = self.df.expand(*batch_shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(*cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(*self._full())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(*self._full())

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        eye = flow.eye(L.shape[-1], dtype=L.dtype, device=L.device).expand(*L.shape)
        L_inv = flow.linalg.solve_triangular(L, eye, upper=False)
        return (L_inv.transpose(-2, -1) @ L_inv).expand(*self._full())

    def _df_matrix(self, x):
        return x.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self._event_shape[-1] - 1
        factor = _C.where(factor <= 0, _C.full_like(factor, float("nan")), factor)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        d = V.diagonal(0, -2, -1)
        return self._df_matrix(self.df) * (V.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2))

    def _bartlett(self, sample_shape):
        """L A (L A)^T with A lower triangular: A_ii = sqrt(chi2(df - i)), A_ij ~ N(0, 1) below."""
        L = self._unbroadcasted_scale_tril
        p = self._event_shape[-1]
        shape = tuple(sample_shape) + tuple(self._batch_shape)
        chi2_df = self.df.unsqueeze(-1) - _arange(p, L)
        chi2 = 2 * _standard_gamma((0.5 * chi2_df).expand(*(shape + (p,))).contiguous())
        diag = chi2.sqrt().clamp(min=_finfo(L.dtype).eps)
        A = _C.diag_embed(diag) + _C.randn(shape + (p, p), dtype=L.dtype, device=L.device).tril(-1)
        chol = L @ A
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape=Size(), max_try_correction=10):
        """Bartlett samples; any that fail the positive-definite check are redrawn (up to
        max_try_correction times, with a warning). Gradients reach the scale, not df."""
        sample_shape = Size(sample_shape)
        sample = self._bartlett(sample_shape)
        with no_grad():
            bad = ~self.support.check(sample)
        if bool(bad.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                sample = _C.where(bad.unsqueeze(-1).unsqueeze(-1), self._bartlett(sample_shape), sample)
                with no_grad():
                    bad = ~self.support.check(sample)
                if not bool(bad.any()):
                    break
        return sample

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        shape = tuple(flow.broadcast_shapes(tuple(value.shape), tuple(L.shape)))
        Lb, Xb = L.expand(*shape), value.expand(*shape)
        A = flow.linalg.solve_triangular(Lb, Xb, upper=False)  # L^-1 X
        trace = flow.linalg.solve_triangular(Lb, A.transpose(-2, -1), upper=False).diagonal(0, -2, -1).sum(-1)
        logdet = flow.linalg.slogdet(value).logabsdet
        return (-nu * (p * math.log(2) / 2 + self._half_log_det()) - _mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * logdet - trace / 2)

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        return ((p + 1) * (p * math.log(2) / 2 + self._half_log_det()) + _mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-flow.linalg.slogdet(-2 * x).logabsdet + math.log(2) * p) \
            + _mvlgamma(y + (p + 1) / 2, p)
