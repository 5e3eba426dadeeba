"""``flow.math``: the job-function API's math namespace (TensorFlow-style names and arguments:
``axis`` / ``keepdims``), usable in jobs and on eager tensors."""
import oneflow as flow
from .. import _oneflow_internal as _C
from .._argcheck import check_tensor, check_tensors
from .ops import clip_by_value  # noqa: F401  (flow.math.clip_by_value)


def _dims(axis, t):
    if axis is None:
        return list(range(t.ndim))
    return [axis] if isinstance(axis, int) else list(axis)


def _reduce(op):
    def fn(input_tensor, axis=None, keepdims=False, name=None):
        dims = _dims(axis, input_tensor)
        if not dims:
            return input_tensor
        return getattr(_C, op)(input_tensor, dims, keepdims)
    fn.__name__ = op
    fn.__doc__ = f"{op} over `axis` (all axes when None)."
    return fn


reduce_sum = _reduce("sum")
reduce_mean = _reduce("mean")
reduce_prod = _reduce("prod")
reduce_max = _reduce("amax")
reduce_min = _reduce("amin")
reduce_any = _reduce("any")
reduce_all = _reduce("all")


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    return _C.var(input_tensor, _dims(axis, input_tensor), correction=0, keepdim=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    return _C.std(input_tensor, _dims(axis, input_tensor), correction=0, keepdim=keepdims)


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    return reduce_sum(input_tensor * input_tensor, axis, keepdims).sqrt()


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    return _C.logsumexp(input_tensor, _dims(axis, input_tensor), keepdims)


def _op(op):
    """The table op `op` with the legacy trailing `name=` argument."""
    def fn(*args, name=None):
        return getattr(_C, op)(*args)
    fn.__name__ = op
    return fn


add = _op("add")
subtract = _op("sub")
multiply = _op("mul")
divide = _op("div")
floordiv = _op("floor_divide")
mod = _op("fmod")
pow = _op("pow")  # noqa: A001
maximum = _op("maximum")
minimum = _op("minimum")
equal = _op("eq")
not_equal = _op("ne")
less = _op("lt")
less_equal = _op("le")
greater = _op("gt")
greater_equal = _op("ge")
logical_and = _op("logical_and")
xdivy = _op("div")

for _n in ("abs", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "square", "sign", "floor", "ceil", "round",
           "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "reciprocal",
           "erf", "erfc", "lgamma", "digamma"):
    globals()[_n] = _op(_n)
negative = _op("neg")
reciprocal_no_nan = _op("reciprocal")


def relu(x, name=None):
    """flow.math.relu: flow.nn.relu's op (0.x had one relu op; a link of a convolution's chain
    in a job with quantization-aware training, qat.py)."""
    from .layers import relu as nn_relu
    return nn_relu(x, name)


def squared_difference(x, y, name=None):
    d = x - y
    return d * d


def add_n(inputs, name=None):
    """(In a job with quantization-aware training of the default backend: its inputs and output
    fake-quantized, qat.py.)"""
    from . import qat
    if qat.active("add_n"):
        name = qat.op_name("add_n", name)
        inputs, _ = qat.inputs(name, *inputs)
        return qat.output(name, _sum(inputs))
    return _sum(inputs)


def _sum(inputs):
    out = inputs[0]
    for t in inputs[1:]:
        out = out + t
    return out


def softplus(x, name=None):
    return flow.nn.functional.softplus(x)


def gelu(x, name=None):
    return flow.nn.functional.gelu(x)


def relu6(x, name=None):
    return flow.nn.functional.relu6(x)


def argmax(input, axis=-1, name=None):  # noqa: A002
    return _C.argmax(input, axis)


def top_k(input, k=1, sorted=True, name=None):  # noqa: A002
    """The indices of the k largest values along the last axis."""
    return _C.topk(input, k, -1, True, sorted)[1]


def in_top_k(targets, predictions, k, name=None):
    return flow.in_top_k(targets, predictions, k)


def unsorted_segment_sum(data, segment_ids, num_segments, axis=0, name=None):
    """out[..., s, ...] = sum of data's slices (along axis) whose segment id is s."""
    axis = axis % data.ndim
    ids = segment_ids.long()
    shape = list(data.shape[:axis]) + [num_segments] + list(data.shape[axis + ids.ndim:])
    flat = data.reshape(list(data.shape[:axis]) + [-1] + list(data.shape[axis + ids.ndim:]))
    out = flow.zeros(shape, dtype=data.dtype)
    return out.index_add(axis, ids.reshape(-1), flat)


def unsorted_segment_sum_like(data, segment_ids, like, axis=0, name=None):
    check_tensor(like, "unsorted_segment_sum_like", "like", 3)
    return unsorted_segment_sum(data, segment_ids, like.shape[axis], axis)


def unsorted_batch_segment_sum(data, segment_ids, num_segments, name=None):
    """Per batch row b: out[b, s] = sum of data[b, i] with segment_ids[b, i] == s."""
    ids = segment_ids.long()
    shape = [data.shape[0], num_segments] + list(data.shape[2:])
    out = flow.zeros(shape, dtype=data.dtype)
    index = ids.reshape(list(ids.shape) + [1] * (data.ndim - 2)).expand(*data.shape)
    return out.scatter_add(1, index, data)


def broadcast_to_compatible_with(x, compatible, name=None):
    """x broadcast to the common shape of x and every blob of `compatible`."""
    check_tensor(x, "broadcast_to_compatible_with", "x", 1)
    check_tensors(compatible, "broadcast_to_compatible_with", "compatible", 2)
    shape = tuple(x.shape)
    for c in compatible:
        shape = tuple(flow.broadcast_shapes(shape, tuple(c.shape)))
    return x.expand(*shape)
