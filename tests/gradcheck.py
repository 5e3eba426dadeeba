"""Helpers for the gradient tests (test_ops_grad.py).

* Turning an OpInfo sample into flow/torch arguments whose floating tensors
  are leaves with ``requires_grad=True`` (``materialize_leaves``).
* Deterministic ``grad_output`` values (``grad_values``) that every float
  dtype represents exactly, so flow and torch receive identical vectors.
* Comparing one input gradient with torch's (``assert_grad_close``).
* A finite-difference ``gradcheck`` for float64 functions.

Only numpy, torch and the harness are needed; ``flow`` may be the torch shim.
"""

import numpy as np
import pytest
import torch

from harness import COMPLEX, FLOATS, NP_DTYPE, assert_close, flow, flow_dtype_name, to_numpy
from opinfo import DT, Arr, make_tensor

# ---------------------------------------------------------------------------
# Samples -> arguments


def materialize_leaves(obj, lib, layout="contiguous", leaves=None, grad=True):
    """Like ``opinfo.materialize``, and every floating ``Arr`` becomes a leaf
    that requires grad (appended to ``leaves`` in traversal order).

    A non-contiguous tensor is a view of a buffer that does not require grad,
    so it is still a leaf: its gradient has the view's shape.
    """
    if isinstance(obj, Arr):
        t = make_tensor(lib, obj, layout)
        if grad and (obj.dtype in FLOATS or obj.dtype in COMPLEX):
            t.requires_grad_(True)
            if leaves is not None:
                leaves.append(t)
        return t
    if isinstance(obj, DT):
        return getattr(lib, obj.name)
    if isinstance(obj, list):
        return [materialize_leaves(o, lib, layout, leaves, grad) for o in obj]
    if isinstance(obj, tuple):
        return tuple(materialize_leaves(o, lib, layout, leaves, grad) for o in obj)
    if isinstance(obj, dict):
        return {k: materialize_leaves(v, lib, layout, leaves, grad) for k, v in obj.items()}
    return obj


def materialize_with(obj, lib, given):
    """Like ``opinfo.materialize`` (contiguous), except that an Arr ``a`` with
    ``id(a)`` in ``given`` becomes the tensor ``given[id(a)]``."""
    if isinstance(obj, Arr):
        return given[id(obj)] if id(obj) in given else make_tensor(lib, obj)
    if isinstance(obj, DT):
        return getattr(lib, obj.name)
    if isinstance(obj, list):
        return [materialize_with(o, lib, given) for o in obj]
    if isinstance(obj, tuple):
        return tuple(materialize_with(o, lib, given) for o in obj)
    if isinstance(obj, dict):
        return {k: materialize_with(v, lib, given) for k, v in obj.items()}
    return obj


def flat_tensors(res):
    """The tensors of a result (a tensor, or a tuple/list such as split's
    pieces or max(dim)'s (values, indices)), in order."""
    if isinstance(res, (tuple, list)):
        return [t for r in res for t in flat_tensors(r)]
    if isinstance(res, (flow.Tensor, torch.Tensor)):
        return [res]
    return []


def call(f, *a, **k):
    """(result, None) or (None, the exception): outcomes are compared."""
    try:
        return f(*a, **k), None
    except Exception as e:  # noqa: BLE001
        return None, e


def dtype_of(t):
    """``float32`` for a flow or torch float32 tensor."""
    return str(t.dtype).split(".")[-1]


def fmt_error(e):
    return str(e).replace("\n", " | ")[:700]


def report(failures, what):
    """Fail once with every collected failure message."""
    if failures:
        pytest.fail(f"{what}: {len(failures)} failure(s):\n  " + "\n  ".join(failures))


# ---------------------------------------------------------------------------
# grad_output values


def grad_values(rng, shape, dtype):
    """Multiples of 1/64 in [-1, 1]: exact in float16 and bfloat16 too, so the
    two frameworks see the same vector whatever their rounding of casts."""
    v = rng.integers(-64, 65, size=shape) / 64.0
    if dtype in COMPLEX:
        v = v + 1j * (rng.integers(-64, 65, size=shape) / 64.0)
    return np.asarray(v, dtype=NP_DTYPE[dtype])


# ---------------------------------------------------------------------------
# Comparing gradients


def _is_zero(t):
    """A torch reference gradient that is None or all zeros (no NaN)."""
    return t is None or not bool(torch.any(t != 0))


def assert_grad_close(fg, tg, leaf, tol, what):
    """One input's gradient: flow ``fg`` vs torch ``tg`` (either may be None).

    Both frameworks may legitimately answer "no gradient" with None or with
    zeros (an unused input, a piecewise-constant op), so None and all-zeros
    are interchangeable.  A nonzero reference gradient needs a tensor.
    Whatever tensor flow returns must have the leaf's shape and dtype.
    """
    if fg is not None:
        assert isinstance(fg, flow.Tensor), f"{what}: gradient is a {type(fg)}"
        assert tuple(fg.shape) == tuple(leaf.shape), (
            f"{what}: gradient shape {tuple(fg.shape)} != input shape {tuple(leaf.shape)}"
        )
        assert flow_dtype_name(fg.dtype) == flow_dtype_name(leaf.dtype), (
            f"{what}: gradient dtype {fg.dtype} != input dtype {leaf.dtype}"
        )
    if _is_zero(tg):
        if fg is not None:
            v = to_numpy(fg)
            assert not np.any(v != 0), f"{what}: expected a zero (or None) gradient, got {v}"
        return
    assert fg is not None, f"{what}: flow returned no gradient; torch's is nonzero"
    rtol, atol = tol
    assert_close(fg, tg, rtol=rtol, atol=atol, what=what)


# ---------------------------------------------------------------------------
# Finite differences


def gradcheck(fn, arrays, eps=1e-6, atol=1e-5, rtol=1e-3, max_rows=32, n_vectors=3, seed=0):
    """Check the autograd derivative of ``fn`` against central differences.

    ``arrays``: float64 numpy arrays, the inputs.  ``fn(tensors)`` receives
    flow float64 tensors made from them and returns a list of output tensors
    (every output must be float64).  Each input element is perturbed by
    +-eps through numpy, giving the numerical Jacobian J (outputs x inputs).
    The analytic side uses ``flow.autograd.grad``: one-hot grad_outputs give
    J row by row when there are at most ``max_rows`` output elements, else
    ``n_vectors`` random vectors v are compared as v^T J.
    """
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    sizes = [a.size for a in arrays]

    def run(arrs, grad):
        ts = [flow.tensor(a.copy()) for a in arrs]
        if grad:
            for t in ts:
                t.requires_grad_(True)
        outs = fn(ts)
        for o in outs:
            assert flow_dtype_name(o.dtype) == "float64", f"gradcheck output dtype {o.dtype}"
        return ts, outs

    def flat_out(outs):
        if not outs:
            return np.zeros(0)
        return np.concatenate([to_numpy(o).astype(np.float64).ravel() for o in outs])

    leaves, outs = run(arrays, True)
    out_shapes = [tuple(o.shape) for o in outs]
    n_out = sum(int(np.prod(s)) for s in out_shapes)
    n_in = sum(sizes)
    if n_out == 0 or n_in == 0:
        return

    # Numerical Jacobian, column by column.
    num = np.zeros((n_out, n_in))
    col = 0
    for k, a in enumerate(arrays):
        for j in range(a.size):
            plus = [x.copy() for x in arrays]
            minus = [x.copy() for x in arrays]
            plus[k].reshape(-1)[j] += eps
            minus[k].reshape(-1)[j] -= eps
            num[:, col] = (flat_out(run(plus, False)[1]) - flat_out(run(minus, False)[1])) / (2 * eps)
            col += 1

    def vjp(v):
        """v^T J from autograd, as one flat vector over all inputs."""
        gos, off = [], 0
        for s in out_shapes:
            n = int(np.prod(s))
            gos.append(flow.tensor(v[off:off + n].reshape(s).copy()))
            off += n
        gs = flow.autograd.grad(outs, leaves, gos, retain_graph=True, allow_unused=True)
        parts = [np.zeros(sz) if g is None else to_numpy(g).astype(np.float64).ravel()
                 for g, sz in zip(gs, sizes)]
        return np.concatenate(parts)

    if n_out <= max_rows:
        vectors = np.eye(n_out)
        expected = num
    else:
        vectors = np.random.default_rng(seed).uniform(-1, 1, size=(n_vectors, n_out))
        expected = vectors @ num
    analytic = np.stack([vjp(v) for v in vectors])
    bad = ~np.isclose(analytic, expected, rtol=rtol, atol=atol)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise AssertionError(
            f"gradcheck: {int(bad.sum())} of {bad.size} entries differ "
            f"({'Jacobian' if n_out <= max_rows else 'v^T J'}); first at row {r}, input "
            f"element {c}: analytic {analytic[r, c]!r}, numerical {expected[r, c]!r}; "
            f"max |diff| {np.max(np.abs(analytic - expected)):.3g}"
        )
