"""OpInfos of pad (src/ops/table/padding.yaml): every mode, 1-3 padded dims, batched and
unbatched, negative (cropping) pads, the constant value, and the error cases."""

from .core import *  # noqa: F401,F403


def _F(name):
    return lambda lib: getattr(lib.nn.functional, name)


def pad_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    S = Sample
    out = [
        S((x((2, 3, 4)), (1, 2)), desc="constant 1-d"),
        S((x((2, 3, 4)), (1, 0, 2, 1)), {"value": 1.5 if dtype in FLOATS else 3}, desc="constant 2-d value"),
        S((x((2, 3, 4, 5)), (1, 1, 0, 2, 1, 0)), desc="constant 3-d"),
        S((x((2, 3, 4)), (-1, 2)), desc="constant negative (crop)"),
        S((x((2, 3, 4)), (1, 1, 1, 1, 1, 1)), desc="constant all dims"),
        S((x((5,)), (2, 3)), desc="constant 1-d input"),
        S((x(()), ()), desc="0-d, no padding"),
        S((x((0, 3)), (1, 1)), desc="zero-size"),
        S((x((2, 3, 4)), (1,)), desc="odd length"),
        S((x((2, 3)), (1, 1, 1, 1, 1, 1)), desc="too long"),
        S((x((2, 3, 4)), (-3, -2)), desc="negative output size"),
    ]
    if dtype == "bool":
        return out[:2] + out[6:8]
    for mode in ("reflect", "replicate", "circular"):
        out += [
            S((x((2, 3, 5)), (2, 1)), {"mode": mode}, desc=f"{mode} 1-d batched"),
            S((x((3, 5)), (1, 2)), {"mode": mode}, desc=f"{mode} 1-d unbatched"),
            S((x((2, 3, 4, 5)), (1, 2, 2, 1)), {"mode": mode}, desc=f"{mode} 2-d"),
            S((x((3, 4, 5)), (2, 1, 1, 2)), {"mode": mode}, desc=f"{mode} 2-d unbatched"),
            S((x((1, 2, 3, 4, 5)), (1, 1, 2, 0, 1, 2)), {"mode": mode}, desc=f"{mode} 3-d"),
            S((x((2, 3, 5)), (-1, 2)), {"mode": mode}, desc=f"{mode} negative"),
            S((x((5,)), (1, 1)), {"mode": mode}, desc=f"{mode} unsupported dims"),
            S((x((2, 3, 5)), (1, 1)), {"mode": mode, "value": 1.0}, desc=f"{mode} with value"),
        ]
    out += [
        S((x((2, 3, 3)), (3, 1)), {"mode": "reflect"}, desc="reflect pad >= size"),
        S((x((2, 3, 3)), (4, 0)), {"mode": "circular"}, desc="circular wraps twice"),
        S((x((2, 3, 3)), (3, 3)), {"mode": "circular"}, desc="circular pad == size"),
        S((x((2, 3, 5)), (1, 1)), {"mode": "wrap"}, desc="unknown mode"),
    ]
    return out


add(OpInfo("pad", "padding", ALL + COMPLEX, pad_samples, fn=_F("pad"), method=""))


def pad_backward_samples(dtype, rng):
    g = lambda s: arr(rng, s, dtype, Domain(-1.0, 1.0))  # noqa: E731
    return [
        Sample((g((2, 3, 7)), (2, 3, 4), (1, 2), "constant"), desc="constant"),
        Sample((g((2, 3, 8)), (2, 3, 5), (2, 1), "reflect"), desc="reflect"),
        Sample((g((2, 3, 6, 7)), (2, 3, 4, 4), (1, 2, 2, 0), "replicate"), desc="replicate 2-d"),
        Sample((g((1, 2, 4, 5, 6)), (1, 2, 3, 4, 5), (1, 0, 0, 1, 1, 0), "circular"), desc="circular 3-d"),
        Sample((g((2, 3, 4)), (2, 3, 5), (-1, 0), "constant"), desc="crop"),
    ]


def _pad_backward_ref(torch):
    def f(grad, input_sizes, pad, mode):
        x = torch.zeros(input_sizes, dtype=grad.dtype, requires_grad=True)
        with torch.enable_grad():
            y = torch.nn.functional.pad(x, pad, mode=mode)
            (gx,) = torch.autograd.grad(y, x, grad, create_graph=grad.requires_grad)
        return gx

    return f


add(OpInfo("pad_backward", "padding_backward", FLOATS + COMPLEX, pad_backward_samples,
           fn=lambda lib: lib._C.pad_backward, ref=_pad_backward_ref, method=""))
