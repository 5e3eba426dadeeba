"""PyTorch's `out=` keyword (Note [out= arguments], src/api/out_arg.cpp): every function of the op
table and the Python-level ones exported with `out=True` (python/oneflow/_export.py) write their result into `out`, resized
when its shape differs, after PyTorch's checks (dtype, autograd), and return it."""
import warnings

import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow._oneflow_internal as _C
from oneflow import _export

# The Python-level functions exported with out=True (flow.X, flow.linalg.X, ...; not Tensor methods).
NAMES = sorted(t[len("flow."):] for t, (out, _) in _export.records().items()
               if out and not t.startswith("flow.Tensor."))

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4)).astype(np.float32)
B = RNG.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
SQ = RNG.standard_normal((4, 4)).astype(np.float32)
SPD = (SQ @ SQ.T + 4 * np.eye(4)).astype(np.float32)


def both(make):
    """make(lib, tensor) for oneflow and torch."""
    return make(flow, flow.tensor), make(torch, torch.tensor)


CASES = {  # name: make(lib, tensor) -> (function, args, kwargs)
    "add": lambda L, T: (L.add, (T(A), T(B)), {"alpha": 2}),
    "mul scalar": lambda L, T: (L.mul, (T(A), 3.0), {}),
    "maximum": lambda L, T: (L.maximum, (T(A), T(B)), {}),
    "pow": lambda L, T: (L.pow, (T(B), 2.5), {}),
    "exp": lambda L, T: (L.exp, (T(A),), {}),
    "gt (bool into float)": lambda L, T: (L.gt, (T(A), T(B)), {}),
    "clamp": lambda L, T: (L.clamp, (T(A), -0.5, 0.5), {}),
    "sum dim": lambda L, T: (L.sum, (T(A), 1), {}),
    "mean keepdim": lambda L, T: (L.mean, (T(A), 0), {"keepdim": True}),
    "cumsum": lambda L, T: (L.cumsum, (T(A), 1), {}),
    "matmul": lambda L, T: (L.matmul, (T(A), T(B).T), {}),
    "addmm": lambda L, T: (L.addmm, (T(A[:, :3]), T(A), T(B).T), {"beta": 0.5}),
    "cat": lambda L, T: (L.cat, ([T(A), T(B)], 1), {}),
    "stack": lambda L, T: (L.stack, ([T(A), T(B)],), {}),
    "argmax": lambda L, T: (L.argmax, (T(A), 1), {}),
    "arange": lambda L, T: (L.arange, (2, 11, 3), {}),
    "zeros": lambda L, T: (L.zeros, (2, 3), {}),
    "full": lambda L, T: (L.full, ((2, 2), 7.0), {}),
    "where": lambda L, T: (L.where, (T(A) > 0, T(A), T(B)), {}),
    "std": lambda L, T: (L.std, (T(A), 1), {}),
    "norm": lambda L, T: (L.norm, (T(A),), {}),
    "quantile": lambda L, T: (L.quantile, (T(A), 0.25), {"dim": 1}),
    "cholesky_solve": lambda L, T: (L.cholesky_solve, (T(A.T[:, :3].copy()), L.linalg.cholesky(T(SPD))), {}),
    "ldexp": lambda L, T: (L.ldexp, (T(A), T(np.ones((3, 4), np.float32))), {}),
}
MULTI = {  # several results: out is a tuple
    "sort": lambda L, T: (L.sort, (T(A), 1), {"descending": True}),
    "topk": lambda L, T: (L.topk, (T(A), 2), {}),
    "max dim": lambda L, T: (L.max, (T(A), 1), {}),
    "min dim": lambda L, T: (L.min, (T(A), 0), {}),
    "median dim": lambda L, T: (L.median, (T(A), 1), {}),
    "var_mean": lambda L, T: (L.var_mean, (T(A), 1), {}),
}


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("out_shape", ["same", "empty", "transposed"])
def test_out_receives_the_result(name, out_shape):
    (ff, fa, fk), (tf, ta, tk) = both(CASES[name])
    want = tf(*ta, **tk)
    shape = tuple(want.shape)
    odtype = flow.float32 if name.startswith("gt") else getattr(flow, str(want.dtype).split(".")[1])
    if out_shape == "empty":
        out = flow.empty(0, dtype=odtype)
    elif out_shape == "transposed" and len(shape) == 2:  # a non-contiguous out of the right shape
        out = flow.empty(shape[::-1], dtype=odtype).t()
    else:
        out = flow.empty(shape, dtype=odtype)
    got = ff(*fa, **fk, out=out)
    assert got is out and tuple(out.shape) == shape
    np.testing.assert_allclose(out.numpy(), want.numpy().astype(out.numpy().dtype), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", MULTI)
def test_out_tuple_receives_the_results(name):
    (ff, fa, fk), (tf, ta, tk) = both(MULTI[name])
    want = tf(*ta, **tk)
    outs = tuple(flow.empty(0, dtype=getattr(flow, str(w.dtype).split(".")[1])) for w in want)
    got = ff(*fa, **fk, out=outs)
    assert all(g is o for g, o in zip(got, outs))
    assert type(got).__name__ == type(ff(*fa, **fk)).__name__  # the op's namedtuple (values, indices)
    for o, w in zip(outs, want):
        np.testing.assert_allclose(o.numpy(), w.numpy(), rtol=1e-5, atol=1e-5)


def test_out_may_be_an_input():
    a, b = flow.tensor(A), flow.tensor(B)
    flow.mul(a, b, out=a)
    np.testing.assert_allclose(a.numpy(), A * B, rtol=1e-6)
    flow.matmul(a[:, :3], a[:3], out=a)  # (the result is computed before out is written)
    np.testing.assert_allclose(a.numpy(), (A * B)[:, :3] @ (A * B)[:3], rtol=1e-5)


def test_resizing_an_out_with_elements_warns_as_pytorch():
    out = flow.zeros(5)
    with pytest.warns(UserWarning, match="resized since it had shape \\[5\\]"):
        flow.add(flow.tensor(A), 1, out=out)
    assert tuple(out.shape) == (3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        flow.add(flow.tensor(A), 1, out=flow.empty(0))  # no warning for an empty one


@pytest.mark.parametrize("bad, exc, msg", [
    (lambda: flow.add(flow.tensor(A), 1, out=flow.zeros(3, 4, dtype=flow.int64)), RuntimeError,
     "result type Float can't be cast to the desired output type Long"),
    (lambda: flow.sum(flow.tensor(A), 0, out=flow.zeros(4, dtype=flow.bool)), RuntimeError, "can't be cast"),
    (lambda: flow.add(flow.tensor(A, requires_grad=True), 1, out=flow.empty(3, 4)), RuntimeError,
     "add\\(\\): functions with out=... arguments don't support automatic differentiation"),
    (lambda: flow.exp(flow.tensor(A), out=flow.empty(3, 4, requires_grad=True)), RuntimeError,
     "don't support automatic differentiation"),
    (lambda: flow.add(flow.tensor(A), 1, out=5), TypeError, "argument 'out' must be a Tensor, not int"),
    (lambda: flow.sort(flow.tensor(A), 1, out=flow.empty(0)), TypeError, "must be a tuple of 2 Tensors"),
    (lambda: flow.sort(flow.tensor(A), 1, out=(flow.empty(0),)), TypeError, "must be a tuple of 2 Tensors, got 1"),
    (lambda: flow.where(flow.tensor(A) > 0, flow.tensor(A), 0.0, out=flow.empty(0, dtype=flow.int32)), RuntimeError,
     "can't be cast"),
])
def test_out_errors_leave_out_untouched(bad, exc, msg):
    with pytest.raises(exc, match=msg):
        bad()


def test_out_untouched_after_a_refused_call():
    out = flow.full((2, 2), 9.0, requires_grad=True)
    with pytest.raises(RuntimeError):
        flow.add(flow.ones(3, 4), 1, out=out)
    assert tuple(out.shape) == (2, 2) and out.detach().numpy().tolist() == [[9.0, 9.0], [9.0, 9.0]]


def test_out_without_grad_mode():
    with flow.no_grad():
        out = flow.empty(3, 4, requires_grad=True)
        flow.add(flow.tensor(A, requires_grad=True), 1, out=out)
    np.testing.assert_allclose(out.detach().numpy(), A + 1)


def test_every_table_function_takes_out():
    """The generated flow._C functions (not the in-place forms) all take out= (a guard for the
    generator); the non-op helpers listed here do not."""
    helpers = {"from_numpy", "get_default_dtype", "get_num_threads", "get_rng_state", "initial_seed",
               "is_grad_enabled", "manual_seed", "promote_types", "seed", "set_default_dtype", "set_num_threads",
               "set_rng_state", "split"}
    import optable_path  # noqa: F401  (tools/ on sys.path)
    import optable

    table_names = {e["name"] for e in optable.load()}
    # names that only upstream OneFlow's forms bring (`oneflow:` in the table: identity, concat, ...)
    upstream_only = {f["sig"].split("(")[0] for e in optable.load() for f in e.get("oneflow") or []} - table_names
    missing = []
    for name in dir(_C):
        if name in upstream_only:
            continue
        sig = getattr(getattr(_C, name), "__nb_signature__", None)
        if sig is None or name.startswith("_") or name.endswith("_") or name in helpers:
            continue
        # the first overload is our (PyTorch's) form; upstream OneFlow's forms (`oneflow:` in the
        # table) follow it as further overloads and take no out=, as upstream's functions
        if "out" not in sig[0][0] and "**kwargs" not in sig[0][0]:
            missing.append(name)
    assert missing == []


def test_out_names_cover_the_python_level_families():
    # a registry that lost its out= records would leave NAMES (and the test below) empty
    for name in ("quantile", "std", "where", "narrow_copy", "linalg.norm", "linalg.vector_norm",
                 "special.chebyshev_polynomial_t", "fft.rfft"):
        assert name in NAMES, name
    assert len(NAMES) >= 59


@pytest.mark.parametrize("name", NAMES)
def test_python_level_functions_take_out(name):
    import functools
    import inspect
    fn = functools.reduce(getattr, name.split("."), flow)
    assert "out" in inspect.signature(fn, follow_wrapped=False).parameters


@pytest.mark.parametrize("name, args", [
    ("linalg.vector_norm", lambda L, T: (T(A), 3)),
    ("linalg.matrix_norm", lambda L, T: (T(SQ),)),
    ("linalg.multi_dot", lambda L, T: ([T(A), T(B).T, T(A)],)),
    ("linalg.solve_triangular", lambda L, T: (L.linalg.cholesky(T(SPD)), T(SQ)),),
    ("special.chebyshev_polynomial_t", lambda L, T: (T(A), 3)),
    ("fft.rfft", lambda L, T: (T(A),)),
    ("fft.fftfreq", lambda L, T: (8,)),
])
def test_namespace_functions_take_out(name, args):
    import functools
    fa, ta = args(flow, flow.tensor), args(torch, torch.tensor)
    if name == "linalg.solve_triangular":
        fa, ta = (fa[0], fa[1]), (ta[0], ta[1])
    kw = {"upper": False} if name == "linalg.solve_triangular" else {}
    want = functools.reduce(getattr, name.split("."), torch)(*ta, **kw)
    out = flow.empty(0, dtype=getattr(flow, str(want.dtype).split(".")[1]))
    got = functools.reduce(getattr, name.split("."), flow)(*fa, **kw, out=out)
    assert got is out
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("bad, start", [
    (lambda: flow.add(flow.tensor(A), 1, out=5), "add(): argument 'out'"),
    (lambda: flow.add(flow.tensor(A, requires_grad=True), 1, out=flow.empty(3, 4)), "add(): functions with out="),
    (lambda: flow.quantile(flow.tensor(A), 0.5, out=5), "quantile(): argument 'out'"),  # a Python export's out=
    (lambda: flow.quantile(flow.tensor(A), 0.5, out=flow.zeros((), dtype=flow.int64)), "quantile(): result type"),
    (lambda: flow.nn.functional.normalize(flow.tensor(A), out=flow.zeros(3, 4, dtype=flow.bool)),
     "normalize(): result type"),
])
def test_out_errors_name_the_op_once(bad, start):
    # one scope names the op (the generated bindings' messages read "add(): add(): ..." before)
    with pytest.raises((TypeError, RuntimeError)) as e:
        bad()
    assert str(e.value).startswith(start) and "(): " not in str(e.value)[len(start.split("(")[0]) + 4:], str(e.value)


@pytest.mark.parametrize("odt", ["complex64", "complex128"])
def test_real_result_into_a_complex_out(odt):
    # PyTorch's canCast: a floating result goes into a complex out (it was refused here)
    got, want = (lib.zeros(3, 4, dtype=getattr(lib, odt)) for lib in (flow, torch))
    flow.add(flow.tensor(A), 1.5, out=got)
    torch.add(torch.tensor(A), 1.5, out=want)
    assert got.dtype == getattr(flow, odt)
    np.testing.assert_allclose(got.numpy(), want.numpy())
    with pytest.raises(RuntimeError, match=r"^add\(\): result type ComplexFloat can't be cast to the desired output type Float"):
        flow.add(flow.tensor(A, dtype=flow.complex64), 1, out=flow.zeros(3, 4))
