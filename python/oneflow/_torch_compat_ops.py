"""Top-level PyTorch names outside OneFlow's spec: dtype rules (result_type, can_cast), defaults
and switches (set/get_float32_matmul_precision, which drives allow_tf32; set_warn_always;
get_default_device / set_default_device), compile (returns the model: eager), asarray, empty_strided, rsub,
scalar_tensor, and aliases of existing ops: the nn.functional forms PyTorch also has at the top
level, top-level in-place forms (flow.exp_ ...), the *_copy forms of view ops. The math, linalg
and Tensor-method families are _compat_math.py, linalg/, _compat_tensor.py (the
registry makes their import order irrelevant). Tested against PyTorch in tests/test_torch_names.py.
"""
import oneflow as flow
import builtins

from . import _C
from ._oneflow_internal import Tensor
from ._argcheck import check_bool
from ._export import export, export_value, ref
from ._argcheck import check_tensor


@export("flow.result_type")
def result_type(tensor1, tensor2):
    """The dtype PyTorch's type promotion gives an op on the two (tensors or numbers): that of
    an addition of zero-element stand-ins of the same categories (0-d tensors stay 0-d)."""

    def stand_in(v):
        if isinstance(v, Tensor):
            return v if v.dim() == 0 else v.reshape(-1)[:0]
        return v

    a, b = stand_in(tensor1), stand_in(tensor2)
    if not isinstance(a, Tensor):
        a, b = (b, a) if isinstance(b, Tensor) else (flow.tensor(a), b)
    b_bool = isinstance(b, bool) or (isinstance(b, Tensor) and b.dtype == flow.bool)
    if a.dtype == flow.bool and b_bool:
        return flow.bool
    with flow.no_grad():
        return flow.add(a, b).dtype


@export("flow.can_cast")
def can_cast(from_, to):
    """Whether PyTorch's casting rules allow from_ -> to in in-place ops: no float to integral,
    no complex to non-complex, no non-bool to bool."""
    for arg, v in (("from_", from_), ("to", to)):
        if not isinstance(v, flow.dtype):
            raise TypeError(f"can_cast(): argument '{arg}' must be oneflow.dtype, not {type(v).__name__}")
    if from_.is_complex and not to.is_complex:
        return False
    if from_.is_floating_point and not (to.is_floating_point or to.is_complex):
        return False
    if from_ != flow.bool and to == flow.bool:
        return False
    return True


_MATMUL_PRECISION = ["highest"]


@export("flow.set_float32_matmul_precision")
def set_float32_matmul_precision(precision):
    """'highest' (float32 matmuls in full precision), 'high' or 'medium' (TF32 allowed on CUDA):
    flow.backends.cuda.matmul.allow_tf32 follows it, as in PyTorch."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision: {precision!r}; expected 'highest', 'high' or 'medium'")
    _MATMUL_PRECISION[0] = precision
    flow.backends.cuda.matmul.allow_tf32 = precision != "highest"


@export("flow.get_float32_matmul_precision")
def get_float32_matmul_precision():
    return _MATMUL_PRECISION[0]


@export("flow.compile")
def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    """torch.compile's signature: returns the model (or function) itself, which runs eagerly
    (the same results; oneflow's graph compilation is nn.Graph). Usable as a decorator."""
    if model is None:
        return lambda m: m
    return model


_WARN_ALWAYS = [False]


@export("flow.set_warn_always")
def set_warn_always(b):
    _WARN_ALWAYS[0] = check_bool(b, "set_warn_always", "b")


@export("flow.is_warn_always_enabled")
def is_warn_always_enabled():
    return _WARN_ALWAYS[0]


@export("flow.asarray")
def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """A tensor of obj: shares the memory of a tensor or array when dtype and device allow and
    copy is not True (as torch.asarray)."""
    if isinstance(obj, Tensor):
        t = obj
        if dtype is not None or device is not None:
            t = t.to(dtype=dtype or t.dtype, device=device or t.device)
        if copy:
            t = t.clone()
    else:
        t = flow.tensor(obj, dtype=dtype, device=device) if copy or copy is None and not hasattr(obj, "__array__") \
            else flow.as_tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        t = t.detach().requires_grad_(True) if t is obj else t.requires_grad_(True)
    return t


@export("flow.empty_strided")
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """An uninitialised tensor with the given strides (a view of a buffer just large enough)."""
    extent = 1 + builtins.sum((s - 1) * st for s, st in zip(size, stride)) if all(s > 0 for s in size) else 0
    base = flow.empty(extent, dtype=dtype, device=device)
    t = base.as_strided(tuple(size), tuple(stride))
    return t.requires_grad_(requires_grad) if requires_grad else t


@export("flow.set_default_device")
def set_default_device(device):
    """The device factories (zeros, rand, arange, flow.tensor, module parameters, ...) use when
    none is named; None restores cpu. `with flow.device(...)` sets it for a block."""
    _C._set_default_device(flow.device("cpu" if device is None else device))


@export("flow.rsub")
def rsub(input, other, *, alpha=1):
    """other - alpha * input."""
    return other - input * alpha if alpha != 1 else other - input


def _copy_form(name):
    def copy_op(*args, **kwargs):
        r = (getattr(Tensor, name, None) or getattr(flow, name))(*args, **kwargs)
        return type(r)(x.clone() for x in r) if isinstance(r, (tuple, list)) else r.clone()
    return copy_op


from ._compat import layout, strided
export_value(layout, "flow.layout")
export_value(strided, "flow.strided")
export_value(lambda input: check_tensor(input, "is_signed", "input").is_signed(), "flow.is_signed")
export_value(lambda s, *, dtype=None, device=None, requires_grad=False, **kw: flow.tensor(
    s, dtype=dtype or flow.get_default_dtype(), device=device, requires_grad=requires_grad), "flow.scalar_tensor")
export_value(_C._get_default_device, "flow.get_default_device")
export_value(lambda input: check_tensor(input, "detach", "input").detach(), "flow.detach")
export_value(lambda t, value: t.clone().fill_(value), "flow.fill")
export_value(lambda input: check_tensor(input, "zero_", "input").zero_(), "flow.zero_")
# nn.functional forms PyTorch also has at the top level with the same leading arguments
# (not batch_norm / instance_norm / embedding_bag: their torch.X signatures differ)
for _name in ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
              "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "avg_pool1d",
              "adaptive_avg_pool1d", "adaptive_max_pool1d", "layer_norm", "group_norm", "rms_norm", "bilinear",
              "pdist", "channel_shuffle"):
    export_value(ref("flow.nn.functional." + _name), "flow." + _name)
# (pixel_shuffle, cosine_similarity, prelu, selu, dropout, ... are top-level names of the op table)
# in-place functional forms at the top level (torch.exp_(t) ...): the Tensor methods
for _name in ("abs_", "acos_", "acosh_", "asin_", "asinh_", "atan_", "atanh_", "arccos_", "arccosh_", "arcsin_",
             "arcsinh_", "arctan_", "arctanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_",
             "cosh_", "deg2rad_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_", "gcd_",
             "i0_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_",
             "negative_", "rad2deg_", "reciprocal_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_",
             "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "index_put_", "addmv_", "resize_as_"):
    export_value(ref("Tensor." + _name), "flow." + _name)
# view ops' copying forms (torch.permute_copy ...)
for _name in ("permute", "transpose", "t", "squeeze", "unsqueeze", "expand", "diagonal", "select", "unfold",
             "view", "narrow", "split", "unbind", "split_with_sizes", "as_strided", "view_as_real",
             "view_as_complex", "slice"):
    export_value(_copy_form(_name), "flow." + _name + "_copy", out=_name == "narrow")
del _name


