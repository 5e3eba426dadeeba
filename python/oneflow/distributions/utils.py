"""Helpers shared by the distributions (as torch.distributions.utils)."""

import numbers

from .. import _oneflow_internal as _C
from .._size import Size


class lazy_property:  # noqa: N801 - torch's name
    """Computed on first access, then cached on the instance (probs <-> logits)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def broadcast_shape(*shapes):
    out = []
    for shape in shapes:
        shape = list(shape)
        if len(shape) > len(out):
            out = [1] * (len(shape) - len(out)) + out
        shape = [1] * (len(out) - len(shape)) + shape
        for i, (a, b) in enumerate(zip(out, shape)):
            if a != b and a != 1 and b != 1:
                raise ValueError(f"shapes {shapes} are not broadcastable")
            out[i] = b if a == 1 else a
    return Size(out)


def broadcast_all(*values):
    """Numbers and tensors as tensors of one broadcast shape (numbers take the tensors' dtype,
    or the default dtype)."""
    if not all(isinstance(v, (_C.Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number or Tensor.")
    tensors = [v for v in values if isinstance(v, _C.Tensor)]
    dtype = tensors[0].dtype if tensors else _C.get_default_dtype()
    device = tensors[0].device if tensors else None
    as_t = [
        v if isinstance(v, _C.Tensor) else _C.full((), float(v), dtype=dtype, device=device)
        for v in values
    ]
    shape = broadcast_shape(*(t.shape for t in as_t))
    return tuple(t.expand(*shape) if tuple(t.shape) != tuple(shape) else t for t in as_t)


def _eps(dtype):
    from .._types import finfo

    return finfo(dtype).eps


def clamp_probs(probs):
    eps = _eps(probs.dtype)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    ps = clamp_probs(probs)
    if is_binary:
        return ps.log() - (-ps).log1p()
    return ps.log()


def logits_to_probs(logits, is_binary=False):
    if is_binary:
        return logits.sigmoid()
    return softmax(logits)


def logsumexp(x, dim, keepdim=False):
    m = x.amax(dim, keepdim=True)
    m = _C.where(m.isfinite(), m, _C.zeros_like(m))
    out = (x - m).exp().sum(dim, keepdim=True).log() + m
    return out if keepdim else out.squeeze(dim)


def softmax(x):
    e = (x - x.amax(-1, keepdim=True)).exp()
    return e / e.sum(-1, keepdim=True)


def softplus(x):
    """log(1 + exp(x)) without overflow: the op (relu(x) + log1p(exp(-|x|)) has gradient 0 at x = 0,
    where relu' and |x|' are 0: Bernoulli(probs=0.5)'s log_prob / entropy got wrong gradients)."""
    return _C.softplus(x)


class BinaryProbsLogits:
    """A two-outcome parameter given as probs or logits: the other is computed when first read
    (lazy_property), and param_shape is that of the one given (`_param`). Mixed into Bernoulli,
    Geometric, Binomial, NegativeBinomial, LogitRelaxedBernoulli."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()
