"""MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril): a Gaussian
vector, held by the lower Cholesky factor L of its covariance (log_prob by triangular solves)."""

import math

from .. import _oneflow_internal as _C
from .._size import Size
from . import constraints
from .distribution import Distribution
from .utils import lazy_property


def _solve_lower(L, b):
    import oneflow
    return oneflow.linalg.solve_triangular(L, b, upper=False)


def _batch_mahalanobis(L, x):
    """x^T (L L^T)^-1 x over the last dim, for broadcastable batches of L and x."""
    y = _solve_lower(L.expand(tuple(x.shape[:-1]) + tuple(L.shape[-2:])), x.unsqueeze(-1)).squeeze(-1)
    return y.pow(2).sum(-1)


def _precision_to_scale_tril(P):
    import oneflow
    Lf = oneflow.linalg.cholesky(P.flip((-2, -1)))
    L_inv = Lf.flip((-2, -1)).transpose(-2, -1)
    eye = oneflow.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return _solve_lower(L_inv, eye.expand(L_inv.shape))


class MultivariateNormal(Distribution):
    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        import oneflow
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        m = scale_tril if scale_tril is not None else covariance_matrix if covariance_matrix is not None \
            else precision_matrix
        if m.dim() < 2:
            raise ValueError("scale_tril, covariance_matrix or precision_matrix must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        batch_shape = oneflow.broadcast_shapes(tuple(m.shape[:-2]), tuple(loc.shape[:-1]))
        event_shape = tuple(loc.shape[-1:])
        self.loc = loc.expand(tuple(batch_shape) + event_shape)
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand(tuple(batch_shape) + (-1, -1))
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand(tuple(batch_shape) + (-1, -1))
        else:
            self.precision_matrix = precision_matrix.expand(tuple(batch_shape) + (-1, -1))
        super().__init__(Size(batch_shape), Size(event_shape), validate_args=validate_args)  # validates first
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = oneflow.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(*loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(*cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def precision_matrix(self):
        import oneflow
        return oneflow.cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            tuple(self._batch_shape) + tuple(self._event_shape) * 2) if hasattr(oneflow, "cholesky_inverse") \
            else oneflow.linalg.inv(self.covariance_matrix)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        eps = _C.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        return H if len(self._batch_shape) == 0 else H.expand(*self._batch_shape)


class LowRankMultivariateNormal(Distribution):
    """A Gaussian vector with covariance cov_factor @ cov_factor^T + diag(cov_diag)."""

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        import oneflow
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            batch_shape = tuple(oneflow.broadcast_shapes(tuple(loc.shape[:-1]), tuple(cov_factor.shape[:-2]),
                                                         tuple(cov_diag.shape[:-1])))
        except (RuntimeError, ValueError) as e:
            raise ValueError(f"Incompatible batch shapes: loc {tuple(loc.shape)}, cov_factor "
                             f"{tuple(cov_factor.shape)}, cov_diag {tuple(cov_diag.shape)}") from e
        self.loc = loc.expand(batch_shape + event_shape)
        self.cov_factor = cov_factor.expand(batch_shape + tuple(cov_factor.shape[-2:]))
        self.cov_diag = cov_diag.expand(batch_shape + event_shape)
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = self._capacitance(cov_factor, cov_diag)
        super().__init__(Size(batch_shape), Size(event_shape), validate_args=validate_args)

    @staticmethod
    def _capacitance(W, D):
        import oneflow
        Wt_Dinv = W.transpose(-1, -2) / D.unsqueeze(-2)
        K = Wt_Dinv @ W
        m = W.shape[-1]
        K = K + oneflow.eye(m, dtype=W.dtype, device=W.device)
        return oneflow.linalg.cholesky(K)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = tuple(Size(batch_shape))
        loc_shape = batch_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(*loc_shape)
        new.cov_diag = self.cov_diag.expand(*loc_shape)
        new.cov_factor = self.cov_factor.expand(*(loc_shape + tuple(self.cov_factor.shape[-1:])))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, Size(batch_shape), self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full(self, x):
        return x.expand(tuple(self._batch_shape) + tuple(x.shape[-2:]))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + D).expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def covariance_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return self._full(W @ W.transpose(-1, -2) + _C.diag_embed(D))

    @lazy_property
    def scale_tril(self):
        import oneflow
        return oneflow.linalg.cholesky(self.covariance_matrix)

    @lazy_property
    def precision_matrix(self):
        # Woodbury: D^-1 - D^-1 W C^-1 W^T D^-1, C = L L^T the capacitance
        import oneflow
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        Wt_Dinv = W.transpose(-1, -2) / D.unsqueeze(-2)
        A = oneflow.linalg.solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        return self._full(_C.diag_embed(1 / D) - A.transpose(-1, -2) @ A)

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        eps_w = _C.randn(shape[:-1] + tuple(W.shape[-1:]), dtype=self.loc.dtype, device=self.loc.device)
        eps_d = _C.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (W @ eps_w.unsqueeze(-1)).squeeze(-1) + D.sqrt() * eps_d

    def _log_det(self):
        logdet_c = 2 * self._capacitance_tril.diagonal(0, -2, -1).log().sum(-1)
        return logdet_c + self._unbroadcasted_cov_diag.log().sum(-1)

    def log_prob(self, value):
        import oneflow
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        W, D, L = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril
        # x^T S^-1 x = x^T D^-1 x - |L^-1 W^T D^-1 x|^2
        shape = tuple(diff.shape[:-1])
        wtdx = (W.transpose(-1, -2) @ (diff / D).unsqueeze(-1))
        Lb = L.expand(shape + tuple(L.shape[-2:]))
        y = oneflow.linalg.solve_triangular(Lb, wtdx.expand(shape + tuple(wtdx.shape[-2:])), upper=False)
        m = (diff.pow(2) / D).sum(-1) - y.squeeze(-1).pow(2).sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m + self._log_det())

    def entropy(self):
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return h if len(self._batch_shape) == 0 else h.expand(*self._batch_shape)
