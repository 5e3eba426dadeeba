"""OpInfos of the softmax family (src/ops/table/softmax.yaml). The backward ops are compared with
torch's own (_softmax_backward_data / _log_softmax_backward_data)."""

from .core import *  # noqa: F401,F403

NAN, INF = float("nan"), float("inf")
_TOL = {"float32": (2e-6, 1e-6), "bfloat16": (2e-2, 1e-2)}


def _softmax_samples(dtype, rng):
    def x(shape):
        return arr(rng, shape, dtype)

    out = [
        Sample((x((3, 5)), -1), desc="rows"),
        Sample((x((3, 5)), 0), desc="dim 0 (inner > 1)"),
        Sample((x((2, 3, 4)),), {"dim": 1}, desc="3-d dim 1"),
        Sample((x((2, 3, 4, 5)), -3), desc="4-d dim -3"),
        Sample((x((6,)), 0), desc="1-d"),
        Sample((x(()), 0), desc="0-d"),
        Sample((x((0, 3)), 1), desc="zero-size rows"),
        Sample((x((3, 0)), 1), desc="empty softmax dim"),
        Sample((x((2, 3)), 2), desc="bad dim (error)"),
        Sample((x((2, 3, 4)),), desc="implicit dim (3-d: 0)"),
        Sample((x((2, 3)),), desc="implicit dim (2-d: 1)"),
        Sample((x((2, 600)), 1), desc="long rows"),
        Sample((x((2, 3, 700)), 1), desc="inner > one block"),
    ]
    out.append(Sample((x((2, 3)), 1), {"dtype": DT("float64")}, desc="dtype=float64"))
    if dtype in FLOATS:
        out += [
            Sample((const([[1.0, -INF, 2.0], [-INF, -INF, -INF], [INF, 1.0, 0.0]], dtype), 1), desc="infinities"),
            Sample((const([[1.0, NAN, 2.0], [1.0, 2.0, 3.0]], dtype), 1), desc="NaN"),
            Sample((const([[1000.0, 0.0, -1000.0]], dtype), 1), desc="large range"),
        ]
    return out


def _functional(name):
    return lambda lib: getattr(lib.nn.functional, name)


add(OpInfo("softmax", "softmax", ALL, _softmax_samples, tol=_TOL))
add(OpInfo("log_softmax", "softmax", ALL, _softmax_samples, tol=_TOL))
add(OpInfo("softmin", "softmax", ALL, _softmax_samples, fn=_functional("softmin"), method="", tol=_TOL))


def _backward_samples(log):
    def gen(dtype, rng):
        def pair(shape, dim):
            t = rng.uniform(-3, 3, size=shape)
            e = np.exp(t - t.max(axis=dim, keepdims=True))
            y = e / e.sum(axis=dim, keepdims=True)
            y = np.log(y) if log else y
            g = rng.uniform(-1, 1, size=shape)
            return Arr(g.astype(NP_DTYPE[dtype]), dtype), Arr(y.astype(NP_DTYPE[dtype]), dtype)

        out = []
        for shape, dim in (((3, 5), 1), ((3, 5), 0), ((2, 3, 4), 1), ((6,), 0), ((), 0), ((0, 3), 1)):
            g, y = pair(shape, dim)
            out.append(Sample((g, y, dim), desc=f"{shape} dim {dim}"))
        if not log:  # (torch's log version does not check the shapes)
            g, y = pair((2, 3), 1)
            out.append(Sample((g, Arr(y.value[:, :2], dtype), 1), desc="shape mismatch (error)"))
        return out

    return gen


def _torch_backward(name):
    def ref(torch):
        f = getattr(torch, name)
        return lambda g, y, dim: f(g, y, dim, g.dtype)

    return ref


add(OpInfo("softmax_backward", "softmax", FLOATS, _backward_samples(False), fn=lambda lib: lib._C.softmax_backward,
           method="", ref=_torch_backward("_softmax_backward_data"), tol=_TOL))
add(OpInfo("log_softmax_backward", "softmax", FLOATS, _backward_samples(True),
           fn=lambda lib: lib._C.log_softmax_backward, method="", ref=_torch_backward("_log_softmax_backward_data"),
           tol=_TOL))
