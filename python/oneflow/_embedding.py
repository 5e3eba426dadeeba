"""nn.functional.embedding / embedding_bag with PyTorch's Python-level handling (argument order
input-then-weight, padding_idx normalisation, max_norm renormalising the used rows in place
under no_grad, 2-D bags) over the op table's entries (src/ops/table/embedding.yaml)."""
import oneflow as flow

from . import _oneflow_internal as _C
from ._export import export
from ._global_hooks import placed_like


class EmbeddingArgumentError(AssertionError, ValueError):
    """A bad num_embeddings / padding_idx / weight shape: PyTorch's modules check these with
    `assert` (AssertionError, which upstream OneFlow's tests expect too); also a ValueError, the
    class a bad argument value has everywhere else here."""


def _padding_idx(padding_idx, weight):
    if padding_idx is None:
        return -1
    n = weight.shape[0]
    if padding_idx >= n or padding_idx < -n:
        raise EmbeddingArgumentError("Padding_idx must be within num_embeddings")  # (PyTorch's text)
    return padding_idx + n if padding_idx < 0 else padding_idx


def _renorm(weight, input, max_norm, norm_type):
    with flow.no_grad():
        _C.embedding_renorm_(weight, input, float(max_norm), float(norm_type))


@export("flow.nn.functional.embedding")
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    padding_idx = _padding_idx(padding_idx, weight)
    if max_norm is not None:
        _renorm(weight, input, max_norm, norm_type)
    return _C.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


@export("flow.nn.functional.embedding_bag")
def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a "
                             "mini-batch of fixed length sequences. However, found offsets of type "
                             f"{type(offsets)}")
        offsets = flow.arange(0, input.numel(), input.shape[1], dtype=input.dtype, **placed_like(input))
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is "
                                  f"only supported for mode='sum' (got mode='{mode}'). Please open a "
                                  "feature request on GitHub.")
    padding_idx = _padding_idx(padding_idx, weight)
    if max_norm is not None:
        _renorm(weight, input, max_norm, norm_type)
    return _C.embedding_bag(weight, input, offsets, mode, per_sample_weights, include_last_offset,
                            padding_idx, scale_grad_by_freq)
