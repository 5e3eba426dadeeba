"""nn.functional dropouts with PyTorch's Python-level arguments (training=, inplace=, the
dimension rules of dropout1d/2d/3d) over the op table's dropout entries
(src/ops/table/dropout.yaml)."""
import warnings

from . import _oneflow_internal as _C
from ._export import export
from ._argcheck import check_tensor


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


@export("flow.nn.functional.dropout")
def dropout(input, p=0.5, training=True, inplace=False, generator=None, addend=None):
    """PyTorch's dropout; upstream OneFlow's `generator=` (a flow.Generator of the input's device
    or an "auto" one) draws the mask, and `addend` is added to the result (upstream's fused
    residual: `dropout(x) + addend`)."""
    _check_p(p)
    f = _C.dropout_ if inplace else _C.dropout
    return f(input, p, training, generator=generator, addend=addend)


@export("flow.nn.functional.alpha_dropout")
def alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return _C.alpha_dropout_(input, p, training) if inplace else _C.alpha_dropout(input, p, training)


@export("flow.nn.functional.feature_alpha_dropout")
def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    f = _C.feature_alpha_dropout_ if inplace else _C.feature_alpha_dropout
    return f(input, p, training)


def _feature(input, p, training, inplace, unbatched):
    """Channel-wise dropout over dim 1; an unbatched input gets (and loses) a batch dim around it."""
    x = (input.unsqueeze_(0) if inplace else input.unsqueeze(0)) if unbatched else input
    out = _C.feature_dropout_(x, p, training) if inplace else _C.feature_dropout(x, p, training)
    if unbatched:
        out = out.squeeze_(0) if inplace else out.squeeze(0)
    return out


def _deprecated_dims(name, dim, spatial):
    warnings.warn(f"{name}: Received a {dim}-D input to {name}, which is deprecated and will result in "
                  "an error in a future release. To retain the behavior and silence this warning, please "
                  f"use dropout instead. Note that {name} exists to provide channel-wise dropout on "
                  f"inputs with {spatial} spatial dimensions, a channel dimension, and an optional batch "
                  f"dimension (i.e. {spatial + 1}D or {spatial + 2}D inputs).", stacklevel=3)


@export("flow.nn.functional.dropout1d")
def dropout1d(input, p=0.5, training=True, inplace=False):
    check_tensor(input, "dropout1d", "input", 1)
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. "
                           "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 "
                           "spatial dimension, a channel dimension, and an optional batch dimension "
                           "(i.e. 2D or 3D inputs).")
    return _feature(input, p, training, inplace, input.dim() == 2)


@export("flow.nn.functional.dropout2d")
def dropout2d(input, p=0.5, training=True, inplace=False):
    """As PyTorch: a 3-D input is read as (N, C, L) (with a warning), not as unbatched."""
    check_tensor(input, "dropout2d", "input", 1)
    _check_p(p)
    if input.dim() not in (3, 4):
        _deprecated_dims("dropout2d", input.dim(), 2)
    if input.dim() == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
                      "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
                      "the channel dim. This behavior will change in a future release to interpret the "
                      "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
                      "channel-wise dropout behavior, please switch to using dropout1d instead.",
                      stacklevel=2)
    return _feature(input, p, training, inplace, False)


@export("flow.nn.functional.dropout3d")
def dropout3d(input, p=0.5, training=True, inplace=False):
    check_tensor(input, "dropout3d", "input", 1)
    _check_p(p)
    if input.dim() not in (4, 5):
        _deprecated_dims("dropout3d", input.dim(), 3)
    return _feature(input, p, training, inplace, input.dim() == 4)
