"""OpInfos of the factories."""

from .core import *  # noqa: F401,F403

# ---- creation -------------------------------------------------------------


def zeros_like_shapes(name):
    def gen(dtype, rng):
        out = [
            _s([2, 3], {"dtype": DT(dtype)}, desc="varargs"),
            _s([(2, 3)], {"dtype": DT(dtype)}, desc="tuple"),
            _s([()], {"dtype": DT(dtype)}, desc="0-d"),
            _s([0, 3], {"dtype": DT(dtype)}, desc="zero-size"),
        ]
        if dtype == "float32":
            out.append(_s([4], desc="default dtype"))
        return out

    return gen


def full_samples(dtype, rng):
    v = {"bool": True, "float16": 1.5, "bfloat16": 1.5, "float32": -2.25, "float64": 0.1}.get(dtype, 7)
    out = [
        _s([(2, 3), v], {"dtype": DT(dtype)}, desc="tuple size"),
        _s([(), v], {"dtype": DT(dtype)}, desc="0-d"),
        _s([(0, 2), v], {"dtype": DT(dtype)}, desc="zero-size"),
    ]
    if dtype == "float32":
        # The dtype is inferred from the fill value, as in torch.
        out += [
            _s([(2,), 1.5], desc="float fill -> float32"),
            _s([(2,), 3], desc="int fill -> int64"),
            _s([(2,), True], desc="bool fill -> bool"),
        ]
    return out


def arange_samples(dtype, rng):
    if dtype in FLOATS:
        out = [
            _s([0, 2, 0.25], {"dtype": DT(dtype)}, desc="float step"),
            _s([5], {"dtype": DT(dtype)}, desc="end only"),
            _s([3, -1, -0.5], {"dtype": DT(dtype)}, desc="negative step"),
        ]
    else:
        lo = 0 if dtype == "uint8" else -4
        out = [
            _s([5], {"dtype": DT(dtype)}, desc="end only"),
            _s([lo, 10, 3], {"dtype": DT(dtype)}, desc="start, end, step"),
            _s([10, lo, -3], {"dtype": DT(dtype)}, desc="negative step"),
            _s([0], {"dtype": DT(dtype)}, desc="empty"),
        ]
    if dtype == "float32":
        out += [
            _s([6], desc="ints -> int64"),
            _s([1, 10, 3], desc="start/end/step ints"),
            _s([0.0, 1.0, 0.25], desc="floats -> float32"),
            _s([0, 1, 0.3], desc="non-dividing float step"),
            _s([5, 5], desc="empty range"),
        ]
    return out


def linspace_samples(dtype, rng):
    out = [
        _s([0, 1, 5], {"dtype": DT(dtype)}, desc="0..1"),
        _s([3, -1, 9], {"dtype": DT(dtype)}, desc="descending"),
        _s([-2, 2, 1], {"dtype": DT(dtype)}, desc="one step"),
        _s([0, 1, 0], {"dtype": DT(dtype)}, desc="zero steps"),
    ]
    if dtype == "float32":
        out.append(_s([0.5, 2.5, 7], desc="default dtype"))
    return out


def eye_samples(dtype, rng):
    out = [
        _s([3], {"dtype": DT(dtype)}, desc="square"),
        _s([2, 4], {"dtype": DT(dtype)}, desc="wide"),
        _s([4, 2], {"dtype": DT(dtype)}, desc="tall"),
        _s([0], {"dtype": DT(dtype)}, desc="empty"),
    ]
    if dtype == "float32":
        out.append(_s([2], desc="default dtype"))
    return out


def like_samples(fill=None):
    def gen(dtype, rng):
        extra = [] if fill is None else [fill]
        out = [
            _s([arr(rng, (2, 3), dtype)] + extra, desc="same dtype"),
            _s([arr(rng, (), dtype)] + extra, desc="0-d"),
            _s([arr(rng, (0, 3), dtype)] + extra, desc="zero-size"),
        ]
        other = "float64" if dtype != "float64" else "int32"
        out.append(_s([arr(rng, (2, 3), dtype)] + extra, {"dtype": DT(other)}, desc=f"dtype={other}"))
        return out

    return gen


def tensor_samples(dtype, rng):
    vals = {"bool": [[True, False], [False, True]]}.get(dtype, [[1, 2, 3], [4, 5, 6]])
    if dtype in FLOATS:
        vals = [[1.5, -2.0, 0.25], [3.0, 0.0, -0.5]]
    out = [
        _s([vals], {"dtype": DT(dtype)}, desc="nested list"),
        _s([1], {"dtype": DT(dtype)}, desc="scalar -> 0-d"),
        _s([[]], {"dtype": DT(dtype)}, desc="empty list"),
    ]
    if dtype == "float32":
        # dtype inference, as in torch (and OneFlow): ints -> int64,
        # floats -> float32, bools -> bool, mixed int/float -> float32.
        out += [
            _s([[1, 2, 3]], desc="ints"),
            _s([[1.0, 2.0]], desc="floats"),
            _s([[True, False]], desc="bools"),
            _s([[1, 2.5]], desc="mixed int/float"),
            _s([[True, 2]], desc="mixed bool/int"),
            _s([3.5], desc="float scalar"),
            _s([7], desc="int scalar"),
            _s([[]], desc="empty -> float32"),
            _s([[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]], desc="3-d"),
            _s([np.arange(6, dtype=np.float64).reshape(2, 3)], desc="numpy float64 keeps dtype"),
            _s([np.arange(4, dtype=np.int32)], desc="numpy int32 keeps dtype"),
        ]
    return out

# -- creation -----------------------------------------------------------------------
add(OpInfo("tensor", "creation", ALL, tensor_samples, method=""))
for _name in ("zeros", "ones"):
    add(OpInfo(_name, "creation", ALL, zeros_like_shapes(_name), method="", takes_device=True))
add(OpInfo("empty", "creation", ALL, zeros_like_shapes("empty"), method="", values=False, takes_device=True))
add(OpInfo("full", "creation", ALL, full_samples, method="", takes_device=True))
add(OpInfo("arange", "creation", NUMBER, arange_samples, method="", takes_device=True))
add(OpInfo("linspace", "creation", FLOATS, linspace_samples, method="", takes_device=True))
add(OpInfo("eye", "creation", ALL, eye_samples, method="", takes_device=True))
add(OpInfo("zeros_like", "creation", ALL, like_samples(), method=""))
add(OpInfo("ones_like", "creation", ALL, like_samples(), method=""))
add(OpInfo("empty_like", "creation", ALL, like_samples(), method="", values=False))
add(OpInfo("full_like", "creation", ALL, like_samples(fill=1), method=""))
