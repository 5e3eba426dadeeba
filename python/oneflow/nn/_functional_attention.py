"""nn.functional attention: ``scaled_dot_product_attention`` and ``multi_head_attention_forward``
with PyTorch's semantics, composed of fused table ops (addmm, baddbmm, softmax, dropout).

Both end in one core (``_attend``) on 3-D ``(batch, seq, dim)`` operands:

    scores = baddbmm(bias, q, k^T, alpha=scale)   # mask added and scale applied inside the gemm
    attn   = softmax(scores, -1) -> dropout
    out    = bmm(attn, v)

Masks become one additive float ``bias`` (0 = attend, -inf = masked) broadcastable to the scores;
without a mask the gemm runs with ``beta=0`` and nothing is materialised. Head splitting is at
most one permuting copy of the projections (one for q, k and v together when they come from one
fused in-projection), and the output heads are merged by one copy feeding the out-projection.

Where it applies (no dropout, float32/float64, no attention weights wanted) the core is instead
the fused kernel ``_C.fused_attention`` (src/ops/table/attention.yaml: blocks of queries against
blocks of keys with an online softmax; the scores are never materialised, masks are read through
their broadcast strides, causal attention skips the keys after each query block).

Note [Fully masked rows]: PyTorch's ``scaled_dot_product_attention`` gives 0 (not NaN) for a
query row whose keys are all masked (its ``_safe_softmax``), while ``multi_head_attention_forward``
with ``need_weights=True`` uses a plain softmax and gives NaN. ``_attend(safe=True)`` finds such
rows on the (small) bias, gives them a finite bias so that no NaN reaches the backward, and zeroes
their weights after the softmax. The fused kernel gives such rows output 0 and logsumexp -inf,
and its backward gives them zero gradients.
"""
import math
import warnings

from .. import _lazy_state
from .. import _oneflow_internal as _C
from .._argcheck import check_optional_tensor, check_tensor

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward", "_canonical_mask",
           "_none_or_dtype"]

_NEG_INF = float("-inf")

# PyTorch's C++ names of the scalar types, for messages that quote them.
_TORCH_TYPE_NAMES = {
    "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
    "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
    "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def _type_name(dtype):
    name = str(dtype).rsplit(".", 1)[-1]
    return _TORCH_TYPE_NAMES.get(name, name)


def _is_float(t):
    return t.dtype in (_C.float32, _C.float64, _C.float16, _C.bfloat16)


def _broadcast(a, b):
    """Broadcast shape of two shapes, with PyTorch's message for the pointwise ops' failure."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                               f"at non-singleton dimension {i}")
        out.append(y if x == 1 else x)
    return tuple(out)


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


# ---------------------------------------------------------------------------------------------
# Masks


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, _C.Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _bool_to_bias(mask, dtype):
    """A bool mask (True = attend) as an additive float mask (0 / -inf)."""
    return _C.zeros(list(mask.shape), dtype=dtype, device=mask.device).masked_fill_(
        mask.logical_not(), _NEG_INF)


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """PyTorch's mask canonicalisation: bool masks (True = masked out, as MultiheadAttention
    reads them) become float masks with -inf where masked; float masks pass through."""
    if mask is None:
        return None
    is_float = _is_float(mask)
    if mask.dtype != _C.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      "Use same type for both instead.", stacklevel=3)
    if not is_float:
        mask = _C.zeros(list(mask.shape), dtype=target_type, device=mask.device).masked_fill_(
            mask, _NEG_INF)
    return mask


def _causal_bias(L, S, dtype, device):
    """Top-left aligned causal mask as PyTorch builds it: row i attends keys 0..i."""
    return _C.full([L, S], _NEG_INF, dtype=dtype, device=device).triu(1)


def _bias_3d(bias, batch, B, L, S):
    """The additive mask in a form baddbmm expands to (B, L, S): 2-D masks as they are (no copy),
    batched ones flattened to B (a view when their batch dims are already the full ones)."""
    shape = tuple(bias.shape)
    if len(shape) <= 2:
        return bias
    if all(d == 1 for d in shape[:-2]):
        return bias.reshape(shape[-2:])
    return bias.expand(*batch, *shape[-2:]).reshape(B, shape[-2], shape[-1])


# ---------------------------------------------------------------------------------------------
# The attention core


def _fused_applies(q, dropout_p):
    """Whether the fused kernel computes this attention: it has no dropout and runs in
    float32/float64 (16-bit inputs keep the composition, whose gemms run in float32), outside
    autocast (where the composition's products run in the autocast dtype, as torch's do)."""
    return (dropout_p == 0.0 and q.dtype in (_C.float32, _C.float64) and _lazy_state.device_type(q) == "cpu"
            and not _C._autocast_is_enabled("cpu"))


def _attend(q, k, v, bias, scale, dropout_p, safe, fused=False):
    """softmax(q k^T * scale + bias) v on 3-D operands; returns (output, attention weights).
    fused: the weights are not wanted (safe softmax), so the fused kernel may compute the output
    where it applies; the weights are then None."""
    if fused and _fused_applies(q, dropout_p):
        return _C.fused_attention(q, k, v, bias, scale, False)[0], None
    empty_rows = None
    if safe and bias is not None:  # Note [Fully masked rows]
        empty_rows = (bias == _NEG_INF).all(-1, keepdim=True)
        # a meta (nn.Graph) tensor has no values to test: take the masking path, which gives the
        # same numbers and only costs the two fills the test saves in eager
        if empty_rows.is_meta or bool(empty_rows.any()):
            bias = bias.masked_fill(empty_rows, 0.0)
        else:
            empty_rows = None
    if bias is None:  # beta=0: the input is never read, a 0-d placeholder stands for it
        bias, beta = _C.zeros([], dtype=q.dtype, device=q.device), 0
    else:
        beta = 1
    attn = _C.baddbmm(bias, q, k.transpose(1, 2), beta=beta, alpha=scale)
    attn = _C.softmax(attn, -1)
    if empty_rows is not None:
        attn = attn.masked_fill(empty_rows, 0.0)
    if dropout_p > 0.0:
        attn = _C.dropout(attn, dropout_p, True)
    return _C.bmm(attn, v), attn


def _check_sdpa_inputs(query, key, value, attn_mask, dropout_p):
    check_tensor(query, "scaled_dot_product_attention", "query", 1)
    check_tensor(key, "scaled_dot_product_attention", "key", 2)
    check_tensor(value, "scaled_dot_product_attention", "value", 3)
    check_optional_tensor(attn_mask, "scaled_dot_product_attention", "attn_mask", 4)
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError("Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {_type_name(query.dtype)} key.dtype: {_type_name(key.dtype)} "
                           f"and value.dtype: {_type_name(value.dtype)} instead.")
    if not (query.device == key.device == value.device):
        raise RuntimeError("Expected query, key, and value to have the same device type, but got "
                           f"query.device: {query.device} key.device: {key.device} and value.device: "
                           f"{value.device} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError("Expected query, key, and value to all be  at least 2 dimensional, but got "
                           f"query.dim: {query.dim()} key.dim: {key.dim()} and value.dim: "
                           f"{value.dim()} instead.")
    if attn_mask is not None and attn_mask.dtype != _C.bool and attn_mask.dtype != query.dtype:
        raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query dtype, but "
                           f"got attn_mask.dtype: {_type_name(attn_mask.dtype)} and  query.dtype: "
                           f"{_type_name(query.dtype)} instead.")
    if not 0.0 <= dropout_p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")


def _repeat_kv_heads(query, key, value):
    """enable_gqa: each key/value head serves q_heads / kv_heads consecutive query heads."""
    if query.dim() < 3 or key.dim() < 3 or value.dim() < 3:
        return key, value
    hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
    if hq % hk != 0 or hq % hv != 0:
        # PyTorch's message, cut short as it is there.
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
    if hk != hq:
        key = key.repeat_interleave(hq // hk, dim=-3)
    if hv != hq:
        value = value.repeat_interleave(hq // hv, dim=-3)
    return key, value


def _as_3d(t, batch, B):
    """(*batch', n, d) -> (B, n, d): a view when t already has the full batch dims."""
    if tuple(t.shape[:-2]) != batch:
        t = t.expand(*batch, t.shape[-2], t.shape[-1])
    return t.reshape(B, t.shape[-2], t.shape[-1])


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                                 scale=None, enable_gqa=False):
    """scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
    is_causal=False, scale=None, enable_gqa=False) -> Tensor

    ``softmax(query @ key^T * scale + mask) @ value`` over the last two dims, batch dims
    broadcast. ``attn_mask``: bool (True = take part in attention) or float (added to the scores),
    broadcastable to ``(..., L, S)``. ``is_causal``: query i attends keys 0..i (top-left aligned;
    combined with ``attn_mask`` if both are given). ``scale`` defaults to ``1/sqrt(E)``.
    ``dropout_p`` drops attention weights (always, as PyTorch: pass 0.0 in evaluation).
    ``enable_gqa``: key/value may have fewer heads (dim -3) than query, each serving a group.
    Query rows with every key masked give 0 (Note [Fully masked rows])."""
    _check_sdpa_inputs(query, key, value, attn_mask, dropout_p)
    if enable_gqa:
        key, value = _repeat_kv_heads(query, key, value)
    L, E = query.shape[-2], query.shape[-1]
    S, Ev = key.shape[-2], value.shape[-1]
    batch = _broadcast(_broadcast(query.shape[:-2], key.shape[:-2]), value.shape[:-2])
    if scale is None:
        scale = 1.0 / math.sqrt(E) if E > 0 else float("inf")
    if E > 0 and _fused_applies(query, dropout_p):
        # The mask as given (bool or additive, read through broadcast strides) and the causal
        # cut-off made inside the kernel. (E == 0 keeps the composition: 0 * inf scores are NaN.)
        if attn_mask is not None:
            batch = _broadcast(batch + (L, S), attn_mask.shape)[:-2]
        B = _prod(batch)
        mask = None if attn_mask is None else _bias_3d(attn_mask, batch, B, L, S)
        out, _ = _C.fused_attention(_as_3d(query, batch, B), _as_3d(key, batch, B), _as_3d(value, batch, B),
                                    mask, scale, is_causal)
        return out.view(*batch, L, Ev)
    bias = None
    if attn_mask is not None:
        bias = _bool_to_bias(attn_mask, query.dtype) if attn_mask.dtype == _C.bool else attn_mask
    if is_causal:
        causal = _causal_bias(L, S, query.dtype, query.device)
        bias = causal if bias is None else bias + causal
    if bias is not None:
        full = _broadcast(batch + (L, S), bias.shape)
        batch = full[:-2]
    B = _prod(batch)
    q3, k3, v3 = _as_3d(query, batch, B), _as_3d(key, batch, B), _as_3d(value, batch, B)
    if bias is not None:
        bias = _bias_3d(bias, batch, B, L, S)
    out, _ = _attend(q3, k3, v3, bias, scale, dropout_p, safe=True)
    return out.view(*batch, L, Ev)


# ---------------------------------------------------------------------------------------------
# multi_head_attention_forward


def _linear_2d(x, weight, bias):
    """x (rows, in) @ weight^T + bias as one gemm (addmm): weight^T is a transposed view."""
    return _C.mm(x, weight.t()) if bias is None else _C.addmm(bias, x, weight.t())


def _split_heads(proj, parts, batch_first, N, n, H, hd):
    """proj (rows, parts*E) with rows ordered (n, N) or (N, n) -> `parts` tensors (N*H, n, hd).

    Each part is made sequence-first and contiguous, (n, N, E), by at most one copy for all parts
    (none for one sequence-first part); its heads are then the strided view
    (n, N*H, hd).transpose(0, 1), whose batch dim N*H has one stride as gemm operands need.
    (A head-major (N, H, n, hd) copy would move runs of hd elements instead of E: slower.)"""
    E = H * hd
    if batch_first:
        t = proj.view(N, n, parts, E).permute(2, 1, 0, 3)
    else:
        t = proj.view(n, N, parts, E).permute(2, 0, 1, 3)
    if parts > 1 or batch_first:
        t = t.contiguous()
    # chunk, not indexing: its backward is one cat instead of a zero-filled buffer per part.
    return [c.view(n, N * H, hd).transpose(0, 1) for c in t.chunk(parts, 0)]


def _rows(x, batch_first):
    return x.reshape(-1, x.shape[-1]), x.shape[1 if batch_first else 0]


def _in_projection(query, key, value, w, b, sep, batch_first, N, H, hd):
    """q, k, v as (N*H, seq, hd): one gemm (and one head copy) for self-attention with packed
    weights, two when only key is value, else three (PyTorch's grouping)."""
    E = H * hd
    if sep is None:
        if key is value and query is key:
            x, n = _rows(query, batch_first)
            return _split_heads(_linear_2d(x, w, b), 3, batch_first, N, n, H, hd)
        ws = [w.narrow(0, 0, E), w.narrow(0, E, E), w.narrow(0, 2 * E, E)]
    else:
        ws = list(sep)
    bs = [None] * 3 if b is None else [b.narrow(0, 0, E), b.narrow(0, E, E), b.narrow(0, 2 * E, E)]
    x, n = _rows(query, batch_first)
    q = _split_heads(_linear_2d(x, ws[0], bs[0]), 1, batch_first, N, n, H, hd)[0]
    if key is value and sep is None:
        x, n = _rows(key, batch_first)
        w_kv = w.narrow(0, E, 2 * E)
        b_kv = None if b is None else b.narrow(0, E, 2 * E)
        k, v = _split_heads(_linear_2d(x, w_kv, b_kv), 2, batch_first, N, n, H, hd)
        return q, k, v
    x, n = _rows(key, batch_first)
    k = _split_heads(_linear_2d(x, ws[1], bs[1]), 1, batch_first, N, n, H, hd)[0]
    x, n = _rows(value, batch_first)
    v = _split_heads(_linear_2d(x, ws[2], bs[2]), 1, batch_first, N, n, H, hd)[0]
    return q, k, v


def _check_separate_weights(query, key, value, sep, b):
    Eq, Ek, Ev = query.shape[-1], key.shape[-1], value.shape[-1]
    bs = [None] * 3 if b is None else b.chunk(3)
    for name, w, shape, bias in zip(("query", "key", "value"), sep, ((Eq, Eq), (Eq, Ek), (Eq, Ev)), bs):
        if tuple(w.shape) != shape:
            raise AssertionError(f"Expecting {name} weights shape of {shape}, but got {w.shape}")
        if bias is not None and tuple(bias.shape) != (Eq,):
            raise AssertionError(f"Expecting {name} bias shape of {(Eq,)}, but got {bias.shape}")


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """PyTorch's checks of the ranks; returns whether the input is batched."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but "
                                 f"found {key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` "
                                 f"or 2-D but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or "
                                 f"3-D but found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but "
                                 f"found {key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` "
                                 f"or 1-D but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, "
                                     f"2-D or 3-D but found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                         f"{attn_mask.shape}")
        return False
    raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor")


def _pad_last(mask, n):
    """A zero column per key appended by bias_k / add_zero_attn."""
    return mask if mask is None or n == 0 else _C.pad(mask, [0, n])


def _extend_keys(k, v, bias_k, bias_v, static_k, static_v, add_zero_attn, N, H, hd):
    """Static keys/values, bias_k/bias_v and the zero key/value, appended along the sequence."""
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    for name, st in (("k", static_k), ("v", static_v)):
        if st is not None:
            if st.size(0) != N * H:
                raise AssertionError(f"expecting static_{name}.size(0) of {N * H}, but got {st.size(0)}")
            if st.size(2) != hd:
                raise AssertionError(f"expecting static_{name}.size(2) of {hd}, but got {st.size(2)}")
    k = k if static_k is None else static_k
    v = v if static_v is None else static_v
    extra = 0
    ks, vs = [k], [v]
    if bias_k is not None:
        # bias (1, 1, E) -> one more key per (batch, head): (N*H, 1, hd), batch-major as k.
        ks.append(bias_k.reshape(1, H, 1, hd).expand(N, H, 1, hd).reshape(N * H, 1, hd))
        vs.append(bias_v.reshape(1, H, 1, hd).expand(N, H, 1, hd).reshape(N * H, 1, hd))
        extra += 1
    if add_zero_attn:
        ks.append(_C.zeros([N * H, 1, hd], dtype=k.dtype, device=k.device))
        vs.append(_C.zeros([N * H, 1, hd], dtype=v.dtype, device=v.device))
    if len(ks) > 1:
        k, v = _C.cat(ks, 1), _C.cat(vs, 1)
    return k, v, extra, int(bool(add_zero_attn))


def _mha(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k,
         bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training, key_padding_mask,
         need_weights, attn_mask, use_separate_proj_weight, q_proj_weight, k_proj_weight,
         v_proj_weight, static_k, static_v, average_attn_weights, is_causal, batch_first):
    """multi_head_attention_forward on (L, N, E) inputs, or (N, L, E) ones with batch_first (the
    module's layout, used without transposing)."""
    seq_dim, batch_dim = (1, 0) if batch_first else (0, 1)
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(batch_dim), key.unsqueeze(batch_dim), value.unsqueeze(batch_dim)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    L, N, E = query.shape[seq_dim], query.shape[batch_dim], query.shape[2]
    S = key.shape[seq_dim]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask),
                                       "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                           "module method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint alone: the causal mask is built for the extended keys below
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if E != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {E}")
    H = num_heads
    hd = E // H
    if hd * H != E:
        raise AssertionError(f"embed_dim {E} not divisible by num_heads {H}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
        sep = (q_proj_weight, k_proj_weight, v_proj_weight)
        _check_separate_weights(query, key, value, sep, in_proj_bias)
    else:
        if key.shape != value.shape:
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        sep = None
    q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias, sep, batch_first, N, H, hd)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (L, S):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(L, S)}.")
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (N * H, L, S):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(N * H, L, S)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    k, v, n_bias, n_zero = _extend_keys(k, v, bias_k, bias_v, static_k, static_v, add_zero_attn, N, H, hd)
    attn_mask = _pad_last(_pad_last(attn_mask, n_bias), n_zero)
    key_padding_mask = _pad_last(_pad_last(key_padding_mask, n_bias), n_zero)
    S = k.shape[1]
    bias = attn_mask
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != N:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {N}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != S:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {S}, but got "
                                 f"{key_padding_mask.shape[1]}")
        kpm = key_padding_mask.view(N, 1, 1, S).expand(N, H, 1, S).reshape(N * H, 1, S)
        bias = kpm if bias is None else bias + kpm
    elif is_causal and bias is None:
        bias = _causal_bias(L, S, q.dtype, q.device)
    if not training:
        dropout_p = 0.0

    out, attn = _attend(q, k, v, bias, 1.0 / math.sqrt(hd), dropout_p, safe=not need_weights,
                        fused=not need_weights)
    # Merge heads: (N*H, L, hd) -> rows in the input's order, (L, N) or (N, L), times E.
    out = out.view(N, H, L, hd).permute(*((0, 2, 1, 3) if batch_first else (2, 0, 1, 3)))
    out = _linear_2d(out.reshape(N * L, E), out_proj_weight, out_proj_bias)
    E_out = out.shape[-1]
    out = out.view(N, L, E_out) if batch_first else out.view(L, N, E_out)
    weights = None
    if need_weights:
        if average_attn_weights:
            # The mean over heads as a batched (1, H) @ (H, L*S) product: the reduce kernel is
            # ~10x slower on this middle dim than one gemm pass.
            avg = _C.full([1, 1, H], 1.0 / H, dtype=attn.dtype, device=attn.device).expand(N, 1, H)
            weights = _C.bmm(avg, attn.view(N, H, L * S)).view(N, L, S)
        else:
            weights = attn.view(N, H, L, S)
    if not is_batched:
        out = out.squeeze(batch_dim)
        if weights is not None:
            weights = weights.squeeze(0)
    return out, weights


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p,
                                 out_proj_weight, out_proj_bias, training=True, key_padding_mask=None,
                                 need_weights=True, attn_mask=None, use_separate_proj_weight=False,
                                 q_proj_weight=None, k_proj_weight=None, v_proj_weight=None,
                                 static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Multi-head attention of ``nn.MultiheadAttention`` as a function (PyTorch's signature).

    query (L, N, E) or (L, E), key/value (S, N, E_k/E_v) or (S, E_k/E_v). ``key_padding_mask``
    (N, S), ``attn_mask`` (L, S) or (N*num_heads, L, S): bool (True = masked out) or additive
    float. Returns ``(output (L, N, E), weights)`` with weights (N, L, S) averaged over heads,
    (N, num_heads, L, S) with ``average_attn_weights=False``, or None with ``need_weights=False``."""
    return _mha(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k,
                bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training,
                key_padding_mask, need_weights, attn_mask, use_separate_proj_weight, q_proj_weight,
                k_proj_weight, v_proj_weight, static_k, static_v, average_attn_weights, is_causal,
                batch_first=False)
