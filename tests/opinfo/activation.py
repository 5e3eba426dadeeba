"""OpInfos of the activation functions (src/ops/table/activation.yaml) and of their fused
backward ops (X_backward: checked against torch's backward and, for second derivatives, against
torch's double backward)."""

from .core import *  # noqa: F401,F403

_TOL = {"float32": (5e-6, 1e-5)}  # libm vs SLEEF / our vectorised exp/erf/tanh: a few ulp


def _F(name):
    return lambda lib: getattr(lib.nn.functional, name)


def _vectorised(f):
    """f run on its input padded to a long contiguous tensor. At NaN and at the kinks, torch's
    activation gradients depend on whether its vectorised or scalar loop ran (size, layout);
    ours follow the vectorised kernels (Note [Activation edge cases] in
    src/kernels/functors/activation.h), so the reference forces that loop."""

    def g(x, *a, **k):
        import torch

        flat = x.reshape(-1)
        y = f(torch.cat([flat, flat.new_zeros(64)]), *a, **k)
        return y[: flat.numel()].reshape(x.shape)

    return g


def _vec_ref(name):
    return lambda torch: _vectorised(getattr(torch.nn.functional, name))


def _act_samples(dom=DEFAULT, specials=True, **kwargs_variants):
    """unary samples (0-d, zero-size, 1..3-d), the special values, one (3, 4) sample per keyword
    variant (a dict of kwargs, or a tuple of positional arguments)."""

    def gen(dtype, rng):
        out = unary_samples(dom, specials=specials)(dtype, rng)
        for desc, kw in kwargs_variants.items():
            x = arr(rng, (3, 4), dtype, dom)
            if isinstance(kw, tuple):
                out.append(Sample((x,) + kw, desc=desc))
            else:
                out.append(Sample((x,), dict(kw), desc=desc))
        return out

    return gen


def _inplace(name, torch_has_kw=True):
    """The in-place call: flow's F.X(..., inplace=True) (or F.X_ where F.X takes no inplace=);
    torch's is a copy_ of the vectorised reference into x (see _vectorised)."""

    def get(lib):
        F = lib.nn.functional
        if getattr(lib, "__name__", "") == "torch":
            return lambda x, *a, **k: x.copy_(_vectorised(getattr(F, name))(x.clone(), *a, **k))
        if torch_has_kw:
            return lambda x, *a, **k: getattr(F, name)(x, *a, inplace=True, **k)
        return getattr(F, name + "_")

    return get


def _act(name, samples, inplace=True, torch_kw=True, method="", fn=None, dtypes=FLOATS,
         ref=None, **kw):
    return OpInfo(name, "activation", dtypes, samples, fn=fn or _F(name), method=method,
                  inplace=inplace, inplace_fn=_inplace(name, torch_kw) if inplace else None,
                  ref=ref or _vec_ref(name), tol=_TOL, **kw)


def _gelu_ref(torch):
    """torch's AVX-512 gelu loop gives NaN at +inf where its AVX2 and scalar loops (and ours) give
    the limit, +inf: the reference pins that one value so the check does not depend on the CPU."""
    f = _vectorised(torch.nn.functional.gelu)

    def g(x, *a, **k):
        y = f(x, *a, **k)
        return torch.where(torch.isposinf(x), torch.full_like(y, float("inf")), y)

    return g


add(
    _act("leaky_relu", _act_samples(slope_02={"negative_slope": 0.2}, slope_neg=(-1.5,))),
    _act("relu6", _act_samples(Domain(-8.0, 8.0))),
    _act("hardtanh", _act_samples(bounds={"min_val": -0.5, "max_val": 2.0}, positional=(0.0, 1.0),
                                  equal=(0.5, 0.5), bad=(2.0, 1.0))),
    _act("elu", _act_samples(alpha_2={"alpha": 2.0}, alpha_neg=(-0.5,))),
    _act("selu", _act_samples(), method="selu"),
    _act("celu", _act_samples(alpha_half={"alpha": 0.5}, alpha_3=(3.0,), alpha_0=(0.0,))),
    _act("hardsigmoid", _act_samples()),
    _act("hardswish", _act_samples()),
    _act("hardshrink", _act_samples(lambd_2={"lambd": 2.0}, lambd_0=(0.0,)), torch_kw=False,
         method="hardshrink"),
    _act("softshrink", _act_samples(lambd_2={"lambd": 2.0}, lambd_0=(0.0,), lambd_neg=(-0.5,)),
         torch_kw=False),
    _act("tanhshrink", _act_samples(), inplace=False),
    _act("softsign", _act_samples(), torch_kw=False, method="softsign"),
    _act("softplus", _act_samples(beta_2={"beta": 2.0}, threshold_1={"beta": 1.5, "threshold": 1.0},
                                  positional=(0.5, 3.0)), inplace=False, method="softplus"),
    _act("mish", _act_samples(Domain(-25.0, 25.0)), method="mish"),
    _act("logsigmoid", _act_samples(Domain(-30.0, 30.0)), inplace=False),
    _act("threshold", _act_samples(args=(0.5, -2.0), kw={"threshold": -1.0, "value": 7.0}),
         fn=lambda lib: lambda x, threshold=0.1, value=20.0: lib.nn.functional.threshold(
             x, threshold, value),
         ref=lambda torch: _vectorised(lambda x, threshold=0.1, value=20.0:
                                       torch.nn.functional.threshold(x, threshold, value))),
    # silu and gelu: floating input only, as PyTorch and upstream OneFlow (floating kernels only)
    _act("silu", _act_samples(), method="silu"),
    _act("gelu", _act_samples(tanh={"approximate": "tanh"}, none={"approximate": "none"},
                              bad={"approximate": "fast"}), inplace=False, method="gelu",
         ref=_gelu_ref),
    _act("rrelu", _act_samples(bounds={"lower": 0.2, "upper": 0.4}, equal=(0.3, 0.3, False),
                               bad=(0.5, 0.1, False)),
         fn=lambda lib: lib.rrelu, ref=lambda torch: _vectorised(torch.rrelu)),
)
def prelu_samples(dtype, rng):
    a = lambda s, d=dtype: arr(rng, s, d)  # noqa: E731
    w = lambda s: arr(rng, s, dtype, Domain(-1.0, 1.0))  # noqa: E731
    return [
        Sample((a((2, 3, 4)), w((3,))), desc="per channel 3-d"),
        Sample((a((2, 3, 4, 5)), w((3,))), desc="per channel 4-d"),
        Sample((a((2, 3)), w((3,))), desc="per channel 2-d"),
        Sample((a((2, 3, 4)), w((1,))), desc="one weight"),
        Sample((a((5,)), w((1,))), desc="1-d input"),
        Sample((a(()), w(())), desc="0-d"),
        Sample((a((0, 3)), w((3,))), desc="zero-size"),
        Sample((a((2, 4, 3)), w((3,))), desc="channel mismatch"),
        Sample((a((2, 3)), w((3, 1))), desc="2-d weight"),
    ]


def glu_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        Sample((a((3, 4)),), desc="last dim"),
        Sample((a((4, 3)), 0), desc="dim 0"),
        Sample((a((2, 6, 3)),), {"dim": -2}, desc="dim -2"),
        Sample((a((0, 4)),), desc="zero-size"),
        Sample((a((3, 5)),), desc="odd size"),
        Sample((a(()),), desc="0-d"),
    ]


add(
    OpInfo("prelu", "activation", FLOATS, prelu_samples, method="prelu", tol=_TOL),
    OpInfo("glu", "activation", FLOATS, glu_samples, fn=_F("glu"), method="", tol=_TOL),
)

# ---- fused backward ops --------------------------------------------------------------


def _vjp(fwd):
    """torch reference of X_backward(grad, input, *attrs): the vector-Jacobian product of the
    forward fwd(torch)(x, *attrs), built with create_graph so it is differentiable again."""

    def ref(torch):
        def f(g, x, *attrs, **kw):
            need = g.requires_grad or x.requires_grad
            x2 = x if x.requires_grad else x.detach().requires_grad_(True)
            with torch.enable_grad():
                y = fwd(torch)(x2, *attrs, **kw)
                (gx,) = torch.autograd.grad(y, x2, g, create_graph=need)
            return gx

        return f

    return ref


def _aten(name):
    return lambda torch: getattr(torch.ops.aten, name)


def _bw_samples(*attr_variants, dom=DEFAULT, kw=None):
    """(grad, input, *attrs) samples: several shapes for the first attribute set, one (3, 4)
    sample per further set."""

    def gen(dtype, rng):
        g = lambda s: arr(rng, s, dtype, Domain(-1.0, 1.0))  # noqa: E731
        x = lambda s: arr(rng, s, dtype, dom)  # noqa: E731
        first = attr_variants[0] if attr_variants else ()
        out = [Sample((g(s), x(s)) + tuple(first), dict(kw or {}), desc=f"shape{s}")
               for s in [(), (5,), (3, 4), (2, 3, 4), (0, 3)]]
        for k, attrs in enumerate(attr_variants[1:]):
            out.append(Sample((g((3, 4)), x((3, 4))) + tuple(attrs), dict(kw or {}), desc=f"attrs{k}"))
        return out

    return gen


def _bw(name, samples, ref):
    return OpInfo(name, "activation_backward", FLOATS, samples,
                  fn=lambda lib: getattr(lib._C, name),
                  ref=ref, method="", tol=_TOL)


def _hardsigmoid_bw_ref(torch):
    # torch's hardsigmoid_backward has no double backward (its second derivative is 0).
    return lambda g, x: torch.where((x > -3) & (x < 3), g / 6, torch.zeros_like(g)) + x * 0


add(
    _bw("leaky_relu_backward", _bw_samples((0.01,), (0.3,), (-1.5,)),
        lambda torch: lambda g, x, s: torch.ops.aten.leaky_relu_backward(g, x, s, False)),
    _bw("hardtanh_backward", _bw_samples((-1.0, 1.0), (0.0, 6.0), (-0.5, 2.0)),
        _aten("hardtanh_backward")),
    _bw("elu_backward", _bw_samples((1.0, 1.0, 1.0), (0.5, 1.0, 2.0), (1.6732632423543772,
                                                                        1.0507009873554805, 1.0)),
        lambda torch: lambda g, x, a, s, i: torch.ops.aten.elu_backward(g, a, s, i, False, x)),
    _bw("hardsigmoid_backward", _bw_samples(), _hardsigmoid_bw_ref),
    _bw("hardswish_backward", _bw_samples(), _aten("hardswish_backward")),
    _bw("shrink_backward", _bw_samples((0.5,), (2.0,), (0.0,)), _aten("hardshrink_backward")),
    _bw("tanhshrink_backward", _bw_samples(), _vjp(lambda t: t.nn.functional.tanhshrink)),
    _bw("softsign_backward", _bw_samples(), _vjp(lambda t: t.nn.functional.softsign)),
    _bw("softplus_backward", _bw_samples((1.0, 20.0), (2.0, 3.0), (0.5, 1.0)),
        _aten("softplus_backward")),
    _bw("mish_backward", _bw_samples(), _vjp(lambda t: t.nn.functional.mish)),
    _bw("logsigmoid_backward", _bw_samples(), _vjp(lambda t: t.nn.functional.logsigmoid)),
    _bw("threshold_backward", _bw_samples((0.0,), (0.5,), (-1.0,)), _aten("threshold_backward")),
    _bw("silu_backward", _bw_samples(), _vjp(lambda t: t.nn.functional.silu)),
    _bw("gelu_backward", _bw_samples(kw={}), _aten("gelu_backward")),
)


def gelu_backward_samples(dtype, rng):
    out = _bw_samples()(dtype, rng)
    g = arr(rng, (3, 4), dtype, Domain(-1.0, 1.0))
    out.append(Sample((g, arr(rng, (3, 4), dtype)), {"approximate": "tanh"}, desc="tanh"))
    out.append(Sample((g, arr(rng, (3, 4), dtype)), {"approximate": "bad"}, desc="bad approximate"))
    return out


next(o for o in OPS if o.name == "gelu_backward").samples = gelu_backward_samples
