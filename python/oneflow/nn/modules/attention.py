"""MultiheadAttention (PyTorch's parameters, state-dict keys, initialisation and forward), over
nn.functional's multi-head attention (nn/_functional_attention.py)."""
from ... import _oneflow_internal as _C
from .. import _functional_attention as FA
from .. import init
from ..parameter import Parameter
from .linear import Linear
from .module import Module

__all__ = ["MultiheadAttention", "NonDynamicallyQuantizableLinear"]


class NonDynamicallyQuantizableLinear(Linear):
    """Linear under PyTorch's name for MultiheadAttention.out_proj (kept for identical reprs)."""


class MultiheadAttention(Module):
    """MultiheadAttention(embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
    add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None, dtype=None)

    ``softmax(q k^T / sqrt(head_dim) + mask) v`` per head, with q, k, v projected from
    query/key/value (one packed ``in_proj_weight`` (3E, E) when kdim == vdim == embed_dim, else
    ``q_proj_weight``/``k_proj_weight``/``v_proj_weight``) and heads merged by ``out_proj``.
    ``forward`` returns ``(output, weights)``; weights are averaged over heads unless
    ``average_attn_weights=False``, and None with ``need_weights=False``."""

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} "
                             f"and num_heads={num_heads} instead")
        super().__init__()
        kw = {"dtype": dtype, "device": device}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(_C.empty((embed_dim, embed_dim), **kw))
            self.k_proj_weight = Parameter(_C.empty((embed_dim, self.kdim), **kw))
            self.v_proj_weight = Parameter(_C.empty((embed_dim, self.vdim), **kw))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(_C.empty((3 * embed_dim, embed_dim), **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_C.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(_C.empty((1, 1, embed_dim), **kw))
            self.bias_v = Parameter(_C.empty((1, 1, embed_dim), **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def __setstate__(self, state):
        # Checkpoints of PyTorch 1.1 predate the attribute.
        state.setdefault("_qkv_same_embed_dim", True)
        super().__setstate__(state)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        key_padding_mask = FA._canonical_mask(key_padding_mask, "key_padding_mask",
                                              FA._none_or_dtype(attn_mask), "attn_mask", query.dtype)
        attn_mask = FA._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        separate = not self._qkv_same_embed_dim
        # batch_first inputs are used as (N, L, E) directly (PyTorch transposes them to (L, N, E)).
        return FA._mha(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight,
            self.out_proj.bias, self.training, key_padding_mask, need_weights, attn_mask, separate,
            self.q_proj_weight, self.k_proj_weight, self.v_proj_weight, None, None, average_attn_weights,
            is_causal, batch_first=self.batch_first and query.dim() == 3)

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """PyTorch's helper: attn_mask and key_padding_mask as one (N, num_heads, L, S) float mask
        and its type (0 = attn_mask, 1 = key_padding_mask, 2 = both), or (None, None)."""
        merged, mask_type = None, None
        if key_padding_mask is not None:
            mask_type = 1
            merged = key_padding_mask
        if attn_mask is not None:
            n, L = query.shape[0], query.shape[1]
            mask_type = 2
            if attn_mask.dim() == 3:
                attn_expanded = attn_mask.view(n, -1, L, L)
            else:
                attn_expanded = attn_mask.view(1, 1, L, L).expand(n, self.num_heads, -1, -1)
            merged = attn_expanded
            if key_padding_mask is not None:
                kpm = key_padding_mask.view(n, 1, 1, L).expand(-1, self.num_heads, -1, -1)
                merged = attn_expanded + kpm
        return merged, mask_type
