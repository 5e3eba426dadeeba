"""Embedding and EmbeddingBag (lookup tables) over nn.functional.embedding / embedding_bag
(python/oneflow/_embedding.py, src/ops/table/embedding.yaml). Gradients are dense: `sparse=True`
is accepted and recorded (there are no sparse tensors)."""
from ..._embedding import EmbeddingArgumentError
from ..parameter import Parameter
from .module import Module


def _F():
    from .. import functional
    return functional


def _padding_idx(padding_idx, num_embeddings, label="Padding_idx"):
    # PyTorch's texts, in a class that is both its AssertionError and a ValueError
    # (EmbeddingArgumentError). EmbeddingBag's text spells it "padding_idx".
    if padding_idx is None:
        return None
    if padding_idx > 0 and padding_idx >= num_embeddings:
        raise EmbeddingArgumentError(f"{label} must be within num_embeddings")
    if padding_idx < 0 and padding_idx < -num_embeddings:
        raise EmbeddingArgumentError(f"{label} must be within num_embeddings")
    return padding_idx + num_embeddings if padding_idx < 0 else padding_idx


def _make_weight(num_embeddings, embedding_dim, _weight, device, dtype):
    from ... import empty
    if _weight is None:
        return Parameter(empty(num_embeddings, embedding_dim, device=device, dtype=dtype)), True
    if list(_weight.shape) != [num_embeddings, embedding_dim]:
        raise EmbeddingArgumentError("Shape of weight does not match num_embeddings and embedding_dim")  # (PyTorch's)
    return Parameter(_weight), False


class Embedding(Module):
    __constants__ = ["num_embeddings", "embedding_dim", "padding_idx", "max_norm", "norm_type",
                     "scale_grad_by_freq", "sparse"]

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = _padding_idx(padding_idx, num_embeddings)
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self.weight, fresh = _make_weight(num_embeddings, embedding_dim, _weight, device, dtype)
        self.weight.requires_grad_(not _freeze)
        if fresh:
            self.reset_parameters()

    def reset_parameters(self):
        from .. import init
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            from ... import no_grad
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return _F().embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                              self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = "{num_embeddings}, {embedding_dim}"
        if self.padding_idx is not None:
            s += ", padding_idx={padding_idx}"
        if self.max_norm is not None:
            s += ", max_norm={max_norm}"
        if self.norm_type != 2:
            s += ", norm_type={norm_type}"
        if self.scale_grad_by_freq is not False:
            s += ", scale_grad_by_freq={scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s.format(**self.__dict__)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        if embeddings.dim() != 2:
            raise EmbeddingArgumentError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, _weight=embeddings, _freeze=freeze, padding_idx=padding_idx,
                   max_norm=max_norm, norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq,
                   sparse=sparse)



class EmbeddingBag(Module):
    __constants__ = ["num_embeddings", "embedding_dim", "max_norm", "norm_type",
                     "scale_grad_by_freq", "mode", "sparse", "include_last_offset", "padding_idx"]

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = _padding_idx(padding_idx, num_embeddings, "padding_idx")
        self.weight, fresh = _make_weight(num_embeddings, embedding_dim, _weight, device, dtype)
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset
        if fresh:
            self.reset_parameters()

    def reset_parameters(self):
        Embedding.reset_parameters(self)

    def _fill_padding_idx_with_zero(self):
        Embedding._fill_padding_idx_with_zero(self)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return _F().embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                                  self.scale_grad_by_freq, self.mode, self.sparse,
                                  per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self):
        s = "{num_embeddings}, {embedding_dim}"
        if self.max_norm is not None:
            s += ", max_norm={max_norm}"
        if self.norm_type != 2:
            s += ", norm_type={norm_type}"
        if self.scale_grad_by_freq is not False:
            s += ", scale_grad_by_freq={scale_grad_by_freq}"
        s += ", mode={mode}"
        if self.padding_idx is not None:
            s += ", padding_idx={padding_idx}"
        return s.format(**{k: repr(v) for k, v in self.__dict__.items()})

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, mode="mean", sparse=False,
                        include_last_offset=False, padding_idx=None):
        if embeddings.dim() != 2:
            raise EmbeddingArgumentError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, _weight=embeddings, max_norm=max_norm, norm_type=norm_type,
                  scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad_(not freeze)
        return bag


__all__ = ["Embedding", "EmbeddingBag"]
