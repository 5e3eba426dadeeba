"""OpInfos of the normalisations (src/ops/table/normalization.yaml and the nn.functional compositions).

batch_norm and instance_norm update their running statistics in place. The generic tests
require that an op leaves its inputs alone, so the OpInfo calls them on copies and returns
the updated copies next to the output: the running statistics are compared with torch's too.
"""

from .core import *  # noqa: F401,F403

# The fused kernels sum in another order than torch's (and halves compute in float32).
NORM_TOL = {"float32": (2e-5, 2e-5), "float64": (1e-7, 1e-7), "float16": (4e-3, 4e-3),
            "bfloat16": (3e-2, 3e-2)}


def _with_running(name):
    """lib.nn.functional.<name> on copies of running_mean/var, returning them too."""
    def make(lib):
        f = getattr(lib.nn.functional, name)

        def call(x, running_mean=None, running_var=None, *args, **kwargs):
            rm = None if running_mean is None else running_mean.detach().clone()
            rv = None if running_var is None else running_var.detach().clone()
            out = f(x, rm, rv, *args, **kwargs)
            return out if rm is None and rv is None else (out, rm, rv)

        return call

    return make


def _bn_samples(dtype, rng):
    def a(shape, d=dtype):
        return arr(rng, shape, d)

    # Running statistics: float32 for half inputs (PyTorch's mixed-dtype rule), else the dtype.
    sd = "float32" if dtype in ("float16", "bfloat16") else dtype
    rm, rv = a((3,), sd), arr(rng, (3,), sd, POSITIVE)
    w, b = a((3,), sd), a((3,), sd)
    S = Sample
    return [
        S((a((4, 3, 5)), rm, rv, w, b), {"training": True}, desc="training, 3-d"),
        S((a((4, 3, 2, 3)), rm, rv, w, b), {"training": True, "momentum": 0.3, "eps": 1e-3},
          desc="training, 4-d, momentum/eps"),
        S((a((2, 3, 2, 2, 2)), rm, rv), {"training": True}, desc="training, 5-d, no affine"),
        S((a((5, 3)), None, None, w, b, True), desc="training without running stats, 2-d"),
        S((a((4, 3, 5)), rm, rv, w, b), desc="eval"),
        S((a((2, 3, 2, 3)), rm, rv, None, b, False), desc="eval, bias only"),
        S((a((0, 3, 4)), rm, rv, w, b), {"training": True}, desc="training, empty batch"),
        S((a((1, 3)), rm, rv), {"training": True}, desc="one value per channel"),
        S((a((4, 3, 5)), None, None, w, b), desc="eval without running stats"),
        S((a((4, 3, 5)), a((4,), sd), rv), {"training": True}, desc="wrong running_mean size"),
    ]


def _in_samples(dtype, rng):
    def a(shape, d=dtype):
        return arr(rng, shape, d)

    sd = "float32" if dtype in ("float16", "bfloat16") else dtype
    S = Sample
    return [
        S((a((2, 3, 5)),), desc="3-d"),
        S((a((2, 3, 2, 3)), None, None, a((3,), sd), a((3,), sd)), desc="affine"),
        S((a((2, 3, 2, 2, 2)), a((3,), sd), arr(rng, (3,), sd, POSITIVE)), {"momentum": 0.2},
          desc="running stats updated"),
        S((a((2, 3, 4)), a((3,), sd), arr(rng, (3,), sd, POSITIVE)), {"use_input_stats": False},
          desc="running stats used"),
        S((a((2, 3, 1)),), desc="one spatial element"),
    ]


def _ln_samples(dtype, rng):
    def a(shape, d=dtype):
        return arr(rng, shape, d)

    sd = "float32" if dtype in ("float16", "bfloat16") else dtype
    S = Sample
    return [
        S((a((3, 4)), (4,), a((4,), sd), a((4,), sd)), desc="2-d"),
        S((a((2, 3, 4)), (3, 4), a((3, 4), sd), a((3, 4), sd)), {"eps": 1e-3}, desc="two normalized dims"),
        S((a((2, 3, 4)), 4), desc="int shape, no affine"),
        S((a((2, 3, 4)), [4], a((4,), sd)), desc="weight only"),
        S((a((2, 3, 4)), (4,), None, a((4,), sd)), desc="bias only"),
        S((a((5,)), (5,), a((5,), sd), a((5,), sd)), desc="1-d: every dim normalised"),
        S((a((0, 4)), (4,), a((4,), sd), a((4,), sd)), desc="empty batch"),
        S((a((2, 3, 4)), (3,)), desc="shape mismatch"),
        S((a((2, 3, 4)), (4,), a((3,), sd)), desc="weight shape mismatch"),
    ]


def _gn_samples(dtype, rng):
    def a(shape, d=dtype):
        return arr(rng, shape, d)

    sd = "float32" if dtype in ("float16", "bfloat16") else dtype
    S = Sample
    return [
        S((a((2, 6, 4)), 3, a((6,), sd), a((6,), sd)), desc="3-d, 3 groups"),
        S((a((2, 4, 2, 3)), 2), {"eps": 1e-3}, desc="4-d, no affine"),
        S((a((2, 4, 2, 2, 2)), 4, a((4,), sd)), desc="5-d, instance-norm-like"),
        S((a((3, 4)), 1, None, a((4,), sd)), desc="2-d, one group"),
        S((a((0, 4, 3)), 2, a((4,), sd), a((4,), sd)), desc="empty batch"),
        S((a((2, 6, 4)), 4), desc="groups not dividing channels"),
        S((a((2, 6, 4)), 3, a((4,), sd)), desc="wrong weight size"),
    ]


def _lrn_samples(dtype, rng):
    def a(shape):
        return arr(rng, shape, dtype)

    S = Sample
    return [
        S((a((2, 5, 4)), 2), desc="3-d, size 2"),
        S((a((2, 5, 3, 2)), 3), {"alpha": 1e-2, "beta": 0.5, "k": 2.0}, desc="4-d, size 3"),
        S((a((1, 4, 2, 2, 2)), 5), desc="5-d, size 5"),
        S((a((0, 4, 3)), 2), desc="empty"),
        S((a((4, 3)), 2), desc="2-d input"),
    ]


add(OpInfo("batch_norm", "normalization", FLOATS, _bn_samples, fn=_with_running("batch_norm"), method="", tol=NORM_TOL))

def _instance_norm_ref(torch):
    # torch rounds the per-instance statistics of a half input to its dtype before averaging
    # them into the (float32) running statistics; flow keeps them in float32 throughout, as
    # its batch_norm does (and torch's batch_norm with float32 parameters): the reference is
    # torch on the float32 input, rounded once.
    f = _with_running("instance_norm")(torch)

    def ref(x, *a, **kw):
        if x.dtype not in (torch.float16, torch.bfloat16):
            return f(x, *a, **kw)
        out = f(x.float(), *a, **kw)
        return out.to(x.dtype) if isinstance(out, torch.Tensor) else (out[0].to(x.dtype),) + tuple(out[1:])

    return ref


add(OpInfo("instance_norm", "normalization", FLOATS, _in_samples, fn=_with_running("instance_norm"), ref=_instance_norm_ref,
           method="", tol=NORM_TOL))
add(OpInfo("layer_norm", "normalization", FLOATS, _ln_samples, fn=lambda lib: lib.nn.functional.layer_norm, method="",
           tol=NORM_TOL))
add(OpInfo("group_norm", "normalization", FLOATS, _gn_samples, fn=lambda lib: lib.nn.functional.group_norm, method="",
           tol=NORM_TOL))
add(OpInfo("local_response_norm", "normalization", ("int64", "float32", "float64"), _lrn_samples,
           fn=lambda lib: lib.nn.functional.local_response_norm, method="", tol=NORM_TOL))


# -- compositions: references where torch's fused backward raises ------------------------------

def layer_norm_composite(torch):
    def ref(x, normalized_shape, weight=None, bias=None, eps=1e-5):
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        dims = tuple(range(x.dim() - len(shape), x.dim()))
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        mu = xf.mean(dims, keepdim=True)
        y = (xf - mu) * torch.rsqrt(((xf - mu) ** 2).mean(dims, keepdim=True) + eps)
        y = y * weight if weight is not None else y
        y = y + bias if bias is not None else y
        return y.to(x.dtype)

    return ref


def group_norm_composite(torch):
    def ref(x, num_groups, weight=None, bias=None, eps=1e-5):
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        g = xf.reshape(x.shape[0], num_groups, -1)
        mu = g.mean(-1, keepdim=True)
        y = ((g - mu) * torch.rsqrt(((g - mu) ** 2).mean(-1, keepdim=True) + eps)).reshape(x.shape)
        bshape = (1, -1) + (1,) * (x.dim() - 2)
        y = y * weight.reshape(bshape) if weight is not None else y
        y = y + bias.reshape(bshape) if bias is not None else y
        return y.to(x.dtype)

    return ref
