"""The random fills behind nn.init: the in-place random ops of the op table (Tensor.uniform_ /
Tensor.normal_, src/ops/random_inplace_ops.cpp), run without recording autograd history and
with the caller's generator (None: the default generator, seeded by flow.manual_seed)."""
from .. import _oneflow_internal as _C
from .._grad_mode import no_grad


def uniform_(tensor, a, b, generator=None):
    """Fills `tensor` with U(a, b) in place, without recording autograd history."""
    with no_grad():
        return _C.uniform_(tensor, a, b, generator=generator)


def normal_(tensor, mean, std, generator=None):
    """Fills `tensor` with N(mean, std^2) in place, without recording autograd history."""
    with no_grad():
        return _C.normal_(tensor, mean, std, generator=generator)
