"""``flow.layers.*`` (ops with their own variables) and the legacy functional ``flow.nn.*`` of the
job-function API (``flow.nn.conv2d(input, weight, strides, padding)``, ``max_pool2d``, ``dropout``,
``sparse_softmax_cross_entropy_with_logits``...). They work in jobs and on eager tensors.

Padding is OneFlow's (TensorFlow's): "VALID" (none), "SAME" / "SAME_UPPER" (output size
ceil(in / stride), the odd pixel after), "SAME_LOWER" (the odd pixel before), or an explicit list
of (before, after) per dimension, which may include the batch and channel dimensions as zeros.
"""
from . import qat
from .variables import get_variable
from .initializers import constant_initializer


def _tuple(v, n, what):
    if isinstance(v, int):
        return (v,) * n
    v = tuple(int(x) for x in v)
    if len(v) != n:
        raise ValueError(f"{what}: expected {n} values, got {len(v)}")
    return v


def _same_pads(size, k, s, d, lower):
    out = -(-size // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
    small = total // 2
    return (total - small, small) if lower else (small, total - small)


def _pads(padding, spatial, ks, strides, dilations, channels_last, what):
    """[(before, after)] per spatial dimension."""
    if isinstance(padding, str):
        p = padding.upper()
        if p == "VALID":
            return [(0, 0)] * len(spatial)
        if p in ("SAME", "SAME_UPPER", "SAME_LOWER"):
            return [_same_pads(n, k, s, d, p == "SAME_LOWER") for n, k, s, d in zip(spatial, ks, strides, dilations)]
        raise ValueError(f"{what}: padding must be 'VALID', 'SAME', 'SAME_UPPER', 'SAME_LOWER' or a list, got {padding!r}")
    pads = [tuple(p) if isinstance(p, (list, tuple)) else (int(p), int(p)) for p in padding]
    if len(pads) == len(spatial) + 2:  # with batch and channel entries
        pads = pads[1:-1] if channels_last else pads[2:]
    if len(pads) != len(spatial):
        raise ValueError(f"{what}: padding has {len(pads)} entries for {len(spatial)} spatial dimensions")
    return pads


def _pad_input(x, pads, value=0.0):
    """x (NCHW) padded; returns (x, symmetric padding for the op)."""
    from ..nn import functional as F
    if all(a == b for a, b in pads):
        return x, [a for a, _ in pads]
    flat = []
    for a, b in reversed(pads):
        flat += [a, b]
    return F.pad(x, flat, value=value), [0] * len(pads)


def _nchw(x, data_format, what):
    if data_format in ("NCHW", "channels_first"):
        return False
    if data_format in ("NHWC", "channels_last"):
        return True
    raise ValueError(f"{what}: data_format must be 'NCHW' or 'NHWC', got {data_format!r}")


def conv2d(input, filters, strides, padding, data_format="NCHW", dilations=None, groups=1, name=None):  # noqa: A002
    """flow.nn.conv2d: 2-d convolution of `input` with the weight blob `filters`
    (out_channels, in_channels / groups, kh, kw). In a job with quantization-aware training its
    input, filters and output (or its chain's) are fake-quantized (qat.py)."""
    return qat.conv(name, input, filters,
                    lambda x, w: _conv2d(x, w, strides, padding, data_format, dilations, groups))


def _conv2d(input, filters, strides, padding, data_format, dilations, groups):  # noqa: A002
    from ..nn import functional as F
    last = _nchw(input, data_format, "nn.conv2d")
    if last:
        input = input.permute(0, 3, 1, 2)
    ks = tuple(filters.shape[-2:])
    st = _tuple(strides, 2, "nn.conv2d strides")
    dl = _tuple(dilations if dilations is not None else 1, 2, "nn.conv2d dilations")
    pads = _pads(padding, tuple(input.shape[2:]), ks, st, dl, last, "nn.conv2d")
    x, sym = _pad_input(input, pads)
    out = F.conv2d(x, filters, None, st, sym, dl, groups)
    return out.permute(0, 2, 3, 1) if last else out


def _pool(kind, input, ksize, strides, padding, data_format, what):  # noqa: A002
    from ..nn import functional as F
    last = _nchw(input, data_format, what)
    if last:
        input = input.permute(0, 3, 1, 2)
    ks, st = _tuple(ksize, 2, what + " ksize"), _tuple(strides, 2, what + " strides")
    pads = _pads(padding, tuple(input.shape[2:]), ks, st, (1, 1), last, what)
    if kind == "max":
        x, sym = _pad_input(input, pads, float("-inf"))
        out = F.max_pool2d(x, ks, st, sym)
    elif all(a == b for a, b in pads):  # TF's average counts only the real pixels of a window
        out = F.avg_pool2d(input, ks, st, [a for a, _ in pads], count_include_pad=False)
    else:
        from .. import ones
        x, _ = _pad_input(input, pads)
        cnt, _ = _pad_input(ones((1, 1) + tuple(input.shape[2:]), dtype=input.dtype), pads)
        out = F.avg_pool2d(x, ks, st, 0) / F.avg_pool2d(cnt, ks, st, 0)
    return out.permute(0, 2, 3, 1) if last else out


def max_pool2d(input, ksize, strides, padding, data_format="NCHW", name=None):  # noqa: A002
    return _int8_pool("max", input, ksize, strides, padding, data_format, name)


def avg_pool2d(input, ksize, strides, padding, data_format="NCHW", name=None):  # noqa: A002
    return _int8_pool("avg", input, ksize, strides, padding, data_format, name)


def _int8_pool(kind, input, ksize, strides, padding, data_format, name):  # noqa: A002
    """A pool, its input and output fake-quantized in a job whose QAT backend counts pools among
    its int8 ops (0.x's default one: qat.py)."""
    op = f"{kind}_pool_2d"
    if not qat.active(op):
        return _pool(kind, input, ksize, strides, padding, data_format, f"nn.{kind}_pool2d")
    name = qat.op_name(op, name)
    (input,), _ = qat.inputs(name, input)
    return qat.output(name, _pool(kind, input, ksize, strides, padding, data_format, f"nn.{kind}_pool2d"))


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """Zeroes elements with probability `rate` (scaling the others by 1 / (1 - rate)) in train
    jobs and eager code; the identity in predict jobs. `noise_shape` (TF's): the shape of the
    kept / dropped mask, broadcast over x (a dim of 1 drops whole slices). `seed`: the op draws
    from its own generator, which in a job continues across the job's calls (the k-th seeded
    dropout of a call is the k-th of every call, compiled or eager), so a run is reproducible."""
    from ..nn import functional as F
    from ._job_state import current_job
    if not 0 <= rate < 1:
        raise ValueError(f"nn.dropout: rate must be in [0, 1), got {rate}")
    if noise_shape is not None:
        noise_shape = tuple(int(d) for d in noise_shape)
        if len(noise_shape) != x.ndim or any(n not in (1, d) for n, d in zip(noise_shape, x.shape)):
            raise ValueError(f"nn.dropout: noise_shape {noise_shape} does not broadcast to the input's {tuple(x.shape)}")
    job = current_job()
    training = job is None or job.type == "train"
    generator = None
    if seed is not None:
        generator = _dropout_generator(job, int(seed))
    if noise_shape is None or not training:
        return F.dropout(x, rate, training=training, generator=generator)
    from .. import _oneflow_internal as _C
    return x * F.dropout(_C.ones(noise_shape, dtype=x.dtype, device=x.device), rate, training=True, generator=generator)


def _dropout_generator(job, seed):
    """The generator of a seeded dropout: a new one outside jobs; in a job, the k-th seeded
    dropout's of the job function, made once (a compiled job's program keeps drawing from it)."""
    from .._oneflow_internal import Generator
    if job is None:
        g = Generator()
        g.manual_seed(seed)
        return g
    k = getattr(job, "dropout_count", 0)
    job.dropout_count = k + 1
    gens = job.fn.__dict__.setdefault("_dropout_generators", {})
    if k not in gens:
        gens[k] = Generator()
        gens[k].manual_seed(seed)
    return gens[k]


def sparse_softmax_cross_entropy_with_logits(labels, logits, name=None):
    """Per-example -log softmax(logits)[label] (no reduction)."""
    from ..nn import functional as F
    return F.cross_entropy(logits, labels.long(), reduction="none")


def softmax_cross_entropy_with_logits(labels, logits, name=None):
    """Per-example cross entropy against probability labels."""
    from ..nn import functional as F
    return -(labels * F.log_softmax(logits, dim=-1)).sum(dim=-1)


def sigmoid_cross_entropy_with_logits(labels, logits, name=None):
    from ..nn import functional as F
    return F.binary_cross_entropy_with_logits(logits, labels, reduction="none")


def bias_add(value, bias, data_format=None, name=None):
    """value + bias along the channel axis (1, or the last one for "NHWC" / 2-d inputs). (A link of
    a convolution's chain in a job with quantization-aware training, qat.py.)"""
    axis = value.ndim - 1 if data_format in ("NHWC", "channels_last") or value.ndim == 2 else 1
    shape = [1] * value.ndim
    shape[axis] = -1
    return qat.link("bias_add", value, lambda b: value + b.reshape(shape), bias)


def relu(x, name=None):
    """(A link of a convolution's chain in a job with quantization-aware training, qat.py.)"""
    from .. import _oneflow_internal as _C
    return qat.link("relu", x, lambda _: _C.relu(x))


def softmax(logits, axis=None, name=None):
    from ..nn import functional as F
    return F.softmax(logits, dim=-1 if axis is None else axis)


def logsoftmax(logits, axis=None, name=None):
    from ..nn import functional as F
    return F.log_softmax(logits, dim=-1 if axis is None else axis)


def leaky_relu(x, alpha=0.2, name=None):
    from ..nn import functional as F
    return F.leaky_relu(x, alpha)


# ---- flow.layers ----

def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None,
          kernel_regularizer=None, bias_regularizer=None, trainable=True, name="Dense", model_distribute=None):
    """inputs @ weight^T + bias with variables "<name>-weight" (units, in) and "<name>-bias";
    inputs of more than 2 dimensions are flattened to (batch..., in) first. Both initializers
    default to zeros, as in OneFlow."""
    if inputs.ndim < 2:
        raise ValueError(f"layers.dense: inputs must have at least 2 dimensions, got {inputs.ndim}")
    lead = tuple(inputs.shape[:-1])
    x = inputs.reshape(-1, inputs.shape[-1]) if inputs.ndim > 2 else inputs
    w = get_variable(f"{name}-weight", shape=(units, x.shape[1]), dtype=inputs.dtype,
                     initializer=kernel_initializer or constant_initializer(0), regularizer=kernel_regularizer,
                     trainable=trainable, distribute=model_distribute)
    quantized = qat.active("matmul")
    if quantized:  # (0.x: dense is matmul then bias_add; the matmul's output is quantized)
        qat.reshaped(inputs, x)
        (x, w), _ = qat.inputs(name, x, w)
    out = x.matmul(w.t())
    if quantized:
        out = qat.output(name, out)
    if use_bias:
        b = get_variable(f"{name}-bias", shape=(units,), dtype=inputs.dtype,
                         initializer=bias_initializer or constant_initializer(0), regularizer=bias_regularizer,
                         trainable=trainable, distribute=model_distribute)
        out = out + b
    if activation is not None:
        out = activation(out)
    return out.reshape(lead + (units,)) if inputs.ndim > 2 else out


def conv2d_layer(inputs, filters, kernel_size=1, strides=1, padding="VALID", data_format="NCHW",
                 dilation_rate=1, groups=1, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=None, kernel_regularizer=None, bias_regularizer=None, trainable=True,
                 name="Conv2d", weight_name=None, bias_name=None):
    """flow.layers.conv2d: a convolution with variables "<name>-weight" (filters, in / groups,
    kh, kw) and "<name>-bias"."""
    last = _nchw(inputs, data_format, "layers.conv2d")
    ks = _tuple(kernel_size, 2, "layers.conv2d kernel_size")
    cin = inputs.shape[3] if last else inputs.shape[1]
    if cin % groups or filters % groups:
        raise ValueError(f"layers.conv2d: channels ({cin} in, {filters} out) must divide by groups={groups}")
    w = get_variable(weight_name or f"{name}-weight", shape=(filters, cin // groups) + ks, dtype=inputs.dtype,
                     initializer=kernel_initializer, regularizer=kernel_regularizer, trainable=trainable)
    # (any relu given -- flow.nn.relu, flow.math.relu, the eager F.relu -- is 0.x's relu op: a link of
    # the convolution's chain with quantization-aware training)
    relu_act = getattr(activation, "__name__", None) == "relu"
    qat.layer_chain(["conv2d"] + (["bias_add"] if use_bias else []) + (["relu"] if relu_act else []))
    out = qat.conv(name, inputs, w, lambda x, w: _conv2d(x, w, strides, padding, data_format, dilation_rate, groups))
    if use_bias:
        b = get_variable(bias_name or f"{name}-bias", shape=(filters,), dtype=inputs.dtype,
                         initializer=bias_initializer or constant_initializer(0), regularizer=bias_regularizer,
                         trainable=trainable)
        out = bias_add(out, b, data_format if last else "NCHW")
    if activation is not None:
        out = relu(out) if relu_act else activation(out)
    return out


class layers:  # noqa: N801 - the flow.layers namespace
    dense = staticmethod(dense)
    conv2d = staticmethod(conv2d_layer)


# Names added to flow.nn for the job-function API (none of them exists in current OneFlow's nn).
NN_NAMES = {"conv2d": conv2d, "max_pool2d": max_pool2d, "avg_pool2d": avg_pool2d, "dropout": dropout,
            "sparse_softmax_cross_entropy_with_logits": sparse_softmax_cross_entropy_with_logits,
            "softmax_cross_entropy_with_logits": softmax_cross_entropy_with_logits,
            "sigmoid_cross_entropy_with_logits": sigmoid_cross_entropy_with_logits, "bias_add": bias_add,
            "relu": relu, "softmax": softmax, "logsoftmax": logsoftmax, "leaky_relu": leaky_relu}
