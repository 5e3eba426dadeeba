"""OpInfos of the resampling family (src/ops/table/resample.yaml): interpolate in every mode
(sizes, scale factors, align_corners, recompute_scale_factor, up and down), the pixel shuffles,
unfold / fold, with their error cases; the backward ops against torch's gradients."""

from .core import *  # noqa: F401,F403

_F32_64 = ("float32", "float64")
_TOL = {"float16": (4e-3, 4e-3), "bfloat16": (3e-2, 3e-2), "float32": (2e-5, 2e-5)}


def _F(name):
    return lambda lib: getattr(lib.nn.functional, name)


def interpolate_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    S = Sample
    out = []
    for mode in ("nearest", "nearest-exact", "area"):
        out += [
            S((x((2, 3, 5)),), {"scale_factor": 2, "mode": mode}, desc=f"{mode} 1-d x2"),
            S((x((2, 3, 5)),), {"size": 3, "mode": mode}, desc=f"{mode} 1-d down"),
            S((x((1, 2, 4, 5)),), {"size": (7, 3), "mode": mode}, desc=f"{mode} 2-d size"),
            S((x((1, 2, 4, 5)),), {"scale_factor": (1.5, 0.7), "mode": mode}, desc=f"{mode} 2-d scales"),
            S((x((1, 2, 3, 4, 2)),), {"scale_factor": 2.0, "mode": mode}, desc=f"{mode} 3-d"),
        ]
    for mode, nd in (("linear", 3), ("bilinear", 4), ("bicubic", 4), ("trilinear", 5)):
        shape = (2, 3, 5, 4, 3)[:nd]
        for ac in (False, True):
            out += [
                S((x(shape),), {"scale_factor": 2, "mode": mode, "align_corners": ac}, desc=f"{mode} x2 ac={ac}"),
                S((x(shape),), {"size": [3] * (nd - 2), "mode": mode, "align_corners": ac},
                  desc=f"{mode} down ac={ac}"),
            ]
        out += [
            S((x(shape),), {"scale_factor": 1.7, "mode": mode}, desc=f"{mode} scale 1.7"),
            S((x(shape),), {"scale_factor": 1.7, "mode": mode, "recompute_scale_factor": True},
              desc=f"{mode} recompute"),
            S((x(shape),), {"size": [1] * (nd - 2), "mode": mode, "align_corners": True}, desc=f"{mode} to 1"),
        ]
    out += [
        S((x((1, 2, 4, 5)),), {"scale_factor": 2, "mode": "nearest", "align_corners": True},
          desc="align_corners with nearest"),
        S((x((1, 2, 4, 5)),), {"size": 3, "scale_factor": 2}, desc="size and scale_factor"),
        S((x((1, 2, 4, 5)),), {"mode": "bilinear"}, desc="neither size nor scale"),
        S((x((1, 2, 4, 5)),), {"size": (2, 3, 4)}, desc="size of the wrong length"),
        S((x((1, 2, 4)),), {"scale_factor": 2, "mode": "bilinear"}, desc="bilinear on 3-d"),
        S((x((1, 2, 4, 5)),), {"scale_factor": 2, "mode": "linear"}, desc="linear on 4-d"),
        S((x((1, 2, 4, 5)),), {"size": 3, "recompute_scale_factor": True}, desc="recompute with size"),
        S((x((1, 2, 4, 5)),), {"scale_factor": 0.1}, desc="output size 0"),
        S((x((2, 4)),), {"scale_factor": 2}, desc="2-d input"),
        S((x((1, 2, 4, 5)),), {"scale_factor": 2, "mode": "cubic"}, desc="unknown mode"),
    ]
    return out


add(OpInfo("interpolate", "resample", FLOATS, interpolate_samples, fn=_F("interpolate"), method="", tol=_TOL))


def interpolate_backward_samples(dtype, rng):
    g = lambda s: arr(rng, s, dtype, Domain(-1.0, 1.0))  # noqa: E731
    return [
        Sample((g((1, 2, 8, 10)), (1, 2, 4, 5), None, [2.0, 2.0], "bilinear", False, None, False), desc="bilinear"),
        Sample((g((1, 2, 3, 7)), (1, 2, 4, 5), [3, 7], None, "bicubic", True, None, False), desc="bicubic"),
        Sample((g((2, 3, 10)), (2, 3, 5), None, [2.0], "nearest", None, None, False), desc="nearest"),
        Sample((g((2, 3, 3)), (2, 3, 7), [3], None, "area", None, None, False), desc="area"),
        Sample((g((1, 1, 4, 6, 2)), (1, 1, 2, 3, 4), [4, 6, 2], None, "trilinear", False, None, False),
               desc="trilinear"),
    ]


def _interpolate_backward_ref(torch):
    def f(grad, input_sizes, size, scale_factor, mode, align_corners, recompute, antialias):
        x = torch.zeros(input_sizes, dtype=grad.dtype, requires_grad=True)
        with torch.enable_grad():
            y = torch.nn.functional.interpolate(x, size=size, scale_factor=scale_factor, mode=mode,
                                                align_corners=align_corners, recompute_scale_factor=recompute,
                                                antialias=antialias)
            (gx,) = torch.autograd.grad(y, x, grad, create_graph=grad.requires_grad)
        return gx

    return f


add(OpInfo("interpolate_backward", "resample_backward", FLOATS, interpolate_backward_samples,
           fn=lambda lib: lib._C.interpolate_backward, ref=_interpolate_backward_ref, method="", tol=_TOL))


def shuffle_samples(up):
    def gen(dtype, rng):
        x = lambda s: arr(rng, s, dtype)  # noqa: E731
        if up:
            return [
                Sample((x((2, 8, 3, 4)), 2), desc="4-d"),
                Sample((x((9, 2, 2)), 3), desc="unbatched"),
                Sample((x((2, 2, 4, 1, 3)), 2), desc="5-d"),
                Sample((x((2, 3, 2, 2)), 1), desc="factor 1"),
                Sample((x((0, 4, 2, 2)), 2), desc="zero batch"),
                Sample((x((2, 6, 3, 4)), 2), desc="channels not divisible"),
                Sample((x((4, 4)), 2), desc="2-d input"),
                Sample((x((2, 4, 2, 2)), 0), desc="factor 0"),
            ]
        return [
            Sample((x((2, 2, 6, 4)), 2), desc="4-d"),
            Sample((x((1, 9, 6)), 3), desc="unbatched"),
            Sample((x((2, 2, 1, 4, 6)), 2), desc="5-d"),
            Sample((x((2, 2, 5, 4)), 2), desc="height not divisible"),
            Sample((x((4, 4)), 2), desc="2-d input"),
        ]

    return gen


add(
    OpInfo("pixel_shuffle", "resample", ALL, shuffle_samples(True), method=""),
    OpInfo("pixel_unshuffle", "resample", ALL, shuffle_samples(False), method=""),
)


def unfold_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        Sample((x((2, 3, 5, 6)), 2), desc="kernel 2"),
        Sample((x((2, 3, 5, 6)), (2, 3)), {"dilation": (1, 2), "padding": 1, "stride": (2, 1)}, desc="all options"),
        Sample((x((3, 4, 4)), 3), {"padding": (1, 0)}, desc="unbatched"),
        Sample((x((1, 1, 3, 3)), 3), desc="one block"),
        Sample((x((1, 1, 2, 2)), 3), desc="kernel larger than input"),
        Sample((x((2, 3)), 1), desc="2-d input",  # torch: an IndexError of its dim wrapping
               error_types=(RuntimeError,)),
        Sample((x((1, 1, 3, 3)), 0), desc="kernel 0"),
    ]


def fold_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        Sample((x((2, 12, 20)), (5, 6), 2), desc="kernel 2"),
        Sample((x((2, 18, 15)), (5, 6), (2, 3)), {"dilation": (1, 2), "padding": 1, "stride": (2, 1)},
               desc="all options"),
        Sample((x((36, 12)), (4, 4), 3), {"padding": (1, 0)}, desc="unbatched"),
        Sample((x((2, 10, 20)), (5, 6), 2), desc="channels not divisible"),
        Sample((x((2, 12, 19)), (5, 6), 2), desc="wrong block count"),
    ]


add(
    OpInfo("im2col", "resample", FLOATS, unfold_samples, fn=_F("unfold"), method=""),
    OpInfo("col2im", "resample", _F32_64, fold_samples, fn=_F("fold"), method=""),
)
