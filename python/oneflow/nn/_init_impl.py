"""The random fills behind nn.init (and so Tensor.uniform_/normal_).

The op table has no in-place random kernels yet, so each fill draws with flow.rand / flow.randn
(the default generator, hence flow.manual_seed governs them) and copies into the tensor. When
`uniform_`/`normal_` table ops arrive, each body below becomes one line: `tensor.uniform_(a, b)`.
"""
from .. import _oneflow_internal as _C
from .._grad_mode import no_grad


def _check_generator(generator):
    if generator is not None:
        raise NotImplementedError("nn.init: generator= is not supported yet (only the default "
                                  "generator, seeded by flow.manual_seed)")


def _draw(sampler, tensor):
    # float64 tensors draw in float64; the others draw in float32 and round once in copy_.
    dtype = _C.float64 if tensor.dtype == _C.float64 else _C.float32
    return sampler(tuple(tensor.shape), dtype=dtype, device=tensor.device)


def uniform_(tensor, a, b, generator=None):
    """Fills `tensor` with U(a, b) in place, without recording autograd history."""
    _check_generator(generator)
    with no_grad():
        tensor.copy_(_draw(_C.rand, tensor) * (b - a) + a)
    return tensor


def normal_(tensor, mean, std, generator=None):
    """Fills `tensor` with N(mean, std^2) in place, without recording autograd history."""
    _check_generator(generator)
    with no_grad():
        tensor.copy_(_draw(_C.randn, tensor) * std + mean)
    return tensor
