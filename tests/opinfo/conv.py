"""OpInfos of the convolutions (src/ops/table/conv.yaml), called through nn.functional.

Samples stay small (inputs of at most 64 elements where possible) so that the float64 finite-
difference check covers them. The conv_weight_grad op is the weight gradient itself; its
reference is torch's own weight gradient (torch.nn.grad.convNd_weight).
"""

from .core import *  # noqa: F401,F403

CONV_INTS = ("uint8", "int8", "int16", "int32", "int64")
# Different summation orders (oneDNN blocks, im2col + gemm) than torch's: a few float32 ulps.
CONV_TOL = {"float32": (1e-5, 1e-5), "complex64": (1e-5, 1e-5), "float16": (4e-3, 2e-3), "bfloat16": (2e-2, 2e-2)}
# Integer samples stay in [-3, 3] (sums of a few products fit every integer dtype but uint8,
# whose wrap-around is the same modular result in both frameworks).
SMALL = Domain(-1.0, 1.0, -3, 3)


def _f(name):
    return lambda lib: getattr(lib.nn.functional, name)


def _conv_samples(k):
    def sp(n):
        return (n,) * k

    def gen(dtype, rng):
        def a(shape):
            return arr(rng, shape, dtype, SMALL)

        S = Sample
        out = [
            S((a((2, 3) + sp(5)), a((4, 3) + sp(3)), a((4,))), desc="basic with bias"),
            S((a((2, 3) + sp(5)), a((4, 3) + sp(3))), desc="no bias"),
            S((a((1, 2) + sp(6)), a((3, 2) + sp(3)), a((3,))), {"stride": 2, "padding": 1}, desc="stride 2 pad 1"),
            S((a((1, 2) + sp(7)), a((2, 2) + sp(2))), {"stride": tuple(range(1, k + 1)), "padding": tuple(range(k)),
                                                      "dilation": tuple(range(2, k + 2))},
              desc="per-dim stride/padding/dilation"),
            S((a((1, 4) + sp(4)), a((6, 2) + sp(3)), a((6,))), {"groups": 2, "padding": 1}, desc="groups=2"),
            S((a((1, 4) + sp(4)), a((4, 1) + sp(3))), {"groups": 4, "padding": 1}, desc="depthwise"),
            S((a((2, 3) + sp(4)), a((5, 3) + sp(1)), a((5,))), desc="1x1"),
            S((a((1, 2) + sp(5)), a((3, 2) + sp(3))), {"padding": "same"}, desc="padding same"),
            S((a((1, 2) + sp(5)), a((3, 2) + sp(2))), {"padding": "same", "dilation": 1}, desc="padding same, even kernel"),
            S((a((1, 2) + sp(5)), a((3, 2) + sp(2))), {"padding": "same", "dilation": 2}, desc="padding same, dilated"),
            S((a((1, 2) + sp(5)), a((3, 2) + sp(3))), {"padding": "valid"}, desc="padding valid"),
            S((a((3,) + sp(5)), a((2, 3) + sp(3)), a((2,))), desc="unbatched"),
            S((a((0, 3) + sp(5)), a((4, 3) + sp(3)), a((4,))), desc="zero batch"),
            S((a((1, 2) + sp(3)), a((2, 2) + sp(2))), {"bias": None, "stride": 1, "dilation": 1}, desc="kwargs"),
            # errors (the exception type is compared with torch's)
            S((a((1, 4) + sp(5)), a((3, 3) + sp(3))), desc="wrong channel count"),
            S((a((1, 3) + sp(2)), a((3, 3) + sp(3))), desc="kernel larger than input"),
            S((a(sp(5)), a((3, 1) + sp(3))), desc="wrong input rank"),
            S((a((1, 3) + sp(5)), a((3, 3) + sp(3)), a((4,))), desc="wrong bias size"),
            S((a((1, 4) + sp(5)), a((3, 2) + sp(3))), {"groups": 2}, desc="groups not dividing out channels"),
            S((a((1, 3) + sp(5)), a((3, 3) + sp(3))), {"padding": -1}, desc="negative padding"),
            S((a((1, 3) + sp(5)), a((3, 3) + sp(3))), {"stride": 0}, desc="zero stride"),
            S((a((1, 3) + sp(5)), a((3, 3) + sp(3))), {"padding": "same", "stride": 2}, desc="same with stride"),
            S((a((1, 3) + sp(5)), a((3, 3) + sp(3))), {"stride": (1,) * (k + 1)}, desc="stride list too long"),
        ]
        if dtype in ("float32", "float64"):
            other = "float64" if dtype == "float32" else "float32"
            out.append(S((a((1, 3) + sp(5)), arr(rng, (3, 3) + sp(3), other)), desc="weight of another dtype"))
        if dtype in COMPLEX:  # (Note [Complex convolutions]: four real convolutions of the parts)
            real = "float32" if dtype == "complex64" else "float64"
            out.append(S((a((1, 3) + sp(5)), arr(rng, (3, 3) + sp(3), real)), desc="real weight of a complex input"))
        return out

    return gen


def _conv_transpose_samples(k):
    def sp(n):
        return (n,) * k

    def gen(dtype, rng):
        def a(shape):
            return arr(rng, shape, dtype, SMALL)

        S = Sample
        return [
            S((a((2, 3) + sp(4)), a((3, 2) + sp(3)), a((2,))), desc="basic with bias"),
            S((a((1, 2) + sp(3)), a((2, 3) + sp(3))), {"stride": 2, "padding": 1, "output_padding": 1},
              desc="stride 2, output_padding"),
            S((a((1, 2) + sp(3)), a((2, 2) + sp(2))), {"stride": 1, "dilation": 2, "output_padding": 1},
              desc="output_padding below dilation"),
            S((a((1, 2) + sp(3)), a((2, 1) + sp(2))), {"stride": tuple(range(1, k + 1)),
                                                      "dilation": tuple(range(2, k + 2)), "padding": 1},
              desc="per-dim stride/dilation"),
            S((a((1, 4) + sp(3)), a((4, 3) + sp(3)), a((6,))), {"groups": 2}, desc="groups=2"),
            S((a((3,) + sp(3)), a((3, 2) + sp(2))), desc="unbatched"),
            S((a((0, 3) + sp(3)), a((3, 2) + sp(2))), desc="zero batch"),
            S((a((1, 3) + sp(3)), a((3, 2) + sp(2))), {"bias": None, "groups": 1}, desc="kwargs"),
            S((a((1, 2) + sp(3)), a((3, 2) + sp(3))), desc="wrong channel count"),
            S((a((1, 2) + sp(3)), a((2, 2) + sp(3))), {"output_padding": 1}, desc="output_padding too large"),
            S((a((1, 2) + sp(1)), a((2, 2) + sp(3))), {"padding": 3}, desc="output size too small"),
            S((a((1, 2) + sp(3)), a((2, 2) + sp(3)), a((3,))), desc="wrong bias size"),
        ]

    return gen


def half_via_float(name):
    """Reference for float16/bfloat16 computed by torch in float32 and rounded once, which is what
    flow does (src/ops/conv_ops.cpp), where torch's own half kernel is less exact or missing."""
    def make(torch):
        f = getattr(torch.nn.functional, name)

        def ref(*a, **kw):
            half = [t.dtype for t in a if isinstance(t, torch.Tensor) and t.dtype in (torch.float16, torch.bfloat16)]
            if not half:
                return f(*a, **kw)
            up = [t.float() if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in a]
            kw = {k: v.float() if isinstance(v, torch.Tensor) and v.is_floating_point() else v for k, v in kw.items()}
            out = f(*up, **kw)
            return out.to(half[0]) if isinstance(out, torch.Tensor) else \
                tuple(o.to(half[0]) if o.is_floating_point() else o for o in out)

        return ref

    return make


def _int_via_int64(name):
    """torch lacks some integer kernels (dilated convolutions of uint8/int8/int16/int32); integer sums
    wrap the same in every width, so the reference computes in int64 and casts back."""
    def make(torch):
        f = getattr(torch.nn.functional, name)

        def ref(x, w, *a, **kw):
            if x.dtype in (torch.uint8, torch.int8, torch.int16, torch.int32) and x.dtype == w.dtype:
                b = kw.get("bias", a[0] if a else None)
                if b is not None and b.dtype == x.dtype:
                    b = b.long()
                    a = (b,) + tuple(a[1:]) if a else a
                    kw = dict(kw, bias=b) if "bias" in kw else kw
                return f(x.long(), w.long(), *a, **kw).to(x.dtype)
            return f(x, w, *a, **kw)

        return ref

    return make


def _conv_ref(name):
    ints, halves = _int_via_int64(name), half_via_float(name)

    def make(torch):
        i, h = ints(torch), halves(torch)
        return lambda x, *a, **kw: (h if x.dtype in (torch.float16, torch.bfloat16) else i)(x, *a, **kw)

    return make


# Half convolutions: torch's backward kernels sum in half precision, flow in float32 (rounded once).
for _k in (1, 2, 3):
    add(OpInfo(f"conv{_k}d", "conv", CONV_INTS + FLOATS + COMPLEX, _conv_samples(_k), fn=_f(f"conv{_k}d"), method="",
               ref=_conv_ref(f"conv{_k}d"), oneflow_dtypes=("uint8", "int8", "int32"), tol=CONV_TOL))
    # torch's half transposed convolutions add up col2im in half precision (errors of several
    # ulps measured against float64); flow sums in float32 and rounds once.
    add(OpInfo(f"conv_transpose{_k}d", "conv", ("int64",) + FLOATS + COMPLEX, _conv_transpose_samples(_k),
               fn=_f(f"conv_transpose{_k}d"), method="", tol=CONV_TOL,
               ref=half_via_float(f"conv_transpose{_k}d")))


# -- conv_weight_grad: flow._C only; torch's reference is its weight gradient ------------------

def _weight_grad_ref(torch):
    def ref(input, grad_output, weight_size, stride=1, padding=0, dilation=1, groups=1):
        k = len(weight_size) - 2
        f = getattr(torch.nn.grad, f"conv{k}d_weight")
        batched = input.dim() == k + 2
        x = input if batched else input.unsqueeze(0)
        g = grad_output if batched else grad_output.unsqueeze(0)
        if x.is_complex():
            # torch's weight-gradient kernels are real-only; its autograd through a convolution
            # gives conj(x) (*) g, so the convolution of conj(x) gives the bilinear x (*) g.
            w = torch.zeros(weight_size, dtype=x.dtype, requires_grad=True)
            conv = getattr(torch.nn.functional, f"conv{k}d")
            y = conv(x.conj(), w, None, stride, padding, dilation, groups)
            return torch.autograd.grad(y, w, g, create_graph=True)[0]
        return f(x, list(weight_size), g, stride, padding, dilation, groups)

    return ref


def _weight_grad_samples(dtype, rng):
    def a(shape):
        return arr(rng, shape, dtype, SMALL)

    S = Sample
    return [
        S((a((2, 3, 5, 5)), a((2, 4, 3, 3)), (4, 3, 3, 3)), desc="2-d"),
        S((a((1, 4, 6, 6)), a((1, 6, 4, 4)), (6, 2, 2, 2)), {"stride": 2, "padding": 1, "groups": 2}, desc="groups, stride"),
        S((a((1, 2, 7)), a((1, 3, 3)), (3, 2, 3)), {"dilation": 2}, desc="1-d dilated"),
        S((a((1, 2, 3, 3, 3)), a((1, 2, 2, 2, 2)), (2, 2, 2, 2, 2)), desc="3-d"),
        S((a((2, 4, 4)), a((3, 2, 2)), (3, 2, 3, 3)), desc="unbatched 2-d"),
    ]


add(OpInfo("conv_weight_grad", "conv", FLOATS + COMPLEX, _weight_grad_samples, fn=lambda lib: lib._C.conv_weight_grad,
           ref=_weight_grad_ref, method="", tol=CONV_TOL))
