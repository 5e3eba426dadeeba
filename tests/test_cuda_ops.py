"""Every op of the op-sample table on CUDA, against the CPU kernels (the oracle).

For each (op, dtype) sample the inputs are moved to the GPU and the op is run there. The
result must match the CPU result (values, dtype, shape, device). An op without a CUDA kernel runs
through the host fallback (Note [Host fallback], src/ops/host_fallback.h) and must match all the
same; with ONEFLOW_CUDA_HOST_FALLBACK=0 it must raise NotImplementedError instead (a clear error,
never a crash), except the pointwise ops of the table (`kind: unary|binary|ternary`), which all
have CUDA kernels from the shared functors (complex dtypes aside).
Random ops are compared by shape and dtype only (the device generator draws other numbers), and
so are the `empty` ops (no defined values); samples that pass a CPU `flow.Generator` are left
out (a CPU generator with CUDA tensors is an error, as in PyTorch)."""

import os
import warnings

import pytest

from harness import assert_close, flow, flow_to_torch, invoke
from opinfo import OPS, Gen, arrs_in, materialize
import optable_path  # noqa: F401  (puts tools/ on sys.path)
import optable  # noqa: E402

POINTWISE = {e["name"] for e in optable.load() if e.get("kind") in ("unary", "binary", "ternary")}
FALLBACK = os.environ.get("ONEFLOW_CUDA_HOST_FALLBACK", "1") != "0"
# Samples whose result is not defined on CUDA: a plain scatter to repeated positions keeps one of
# the written values (PyTorch's CUDA backend documents the same); compared by shape and dtype.
UNDEFINED_ON_CUDA = {("scatter", "repeated targets (last wins)")}


@pytest.fixture(autouse=True)
def _full_float32_convolutions():
    """cuDNN may use TF32 for float32 convolutions by default (as PyTorch): the sweep compares
    with the CPU at float32 tolerance, so TF32 is off here (tests/test_cuda_nn.py tests the switch)."""
    old = flow.backends.cudnn.allow_tf32
    flow.backends.cudnn.allow_tf32 = False
    yield
    flow.backends.cudnn.allow_tf32 = old


def _cases():
    out = []
    for op in OPS:
        if op.name == "tensor":
            continue
        for dt in op.dtypes:
            out.append(pytest.param(op, dt, id=f"{op.name}-{dt}", marks=pytest.mark.cuda))
    return out


def _to_cpu(r):
    if isinstance(r, flow.Tensor):
        return r.cpu()
    if isinstance(r, (list, tuple)):
        vals = [_to_cpu(x) for x in r]
        return type(r)(*vals) if hasattr(r, "_fields") else type(r)(vals)
    return r


def _to_torch(r):
    """The CPU result as the reference assert_close compares with (it takes torch objects)."""
    if isinstance(r, flow.Tensor):
        return flow_to_torch(r)
    if isinstance(r, (list, tuple)):
        vals = [_to_torch(x) for x in r]
        return type(r)(*vals) if hasattr(r, "_fields") else type(r)(vals)
    return r


def _has_gen(obj):
    if isinstance(obj, Gen):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_has_gen(o) for o in obj)
    if isinstance(obj, dict):
        return any(_has_gen(o) for o in obj.values())
    return False


def _shapes(r):
    if isinstance(r, flow.Tensor):
        return (tuple(r.shape), r.dtype)
    if isinstance(r, (list, tuple)):
        return [_shapes(x) for x in r]
    return r


def _devices(r):
    if isinstance(r, flow.Tensor):
        return {r.device.type}
    if isinstance(r, (list, tuple)):
        return set().union(*[_devices(x) for x in r]) if r else set()
    return set()


def _report(name, dtype, e):
    """ONEFLOW_CUDA_REPORT=<file>: one line per (op, dtype) sample without a CUDA kernel (the
    list of what is left to port; scripts/gpu_check.sh summarises it). With the host fallback on,
    the ops that fell back (its warning is shown once per op and process)."""
    path = os.environ.get("ONEFLOW_CUDA_REPORT")
    if path:
        with open(path, "a") as f:
            f.write(f"{name}\t{dtype}\t{str(e).splitlines()[0][:160]}\n")


@pytest.mark.parametrize("op,dtype", _cases())
def test_cuda_matches_cpu(op, dtype):
    failures, ran = [], 0
    for s in op.sample_list(dtype):
        form = next((f for f in ("fn", "method") if op.has_form(f, s)), None)
        if form is None or not arrs_in(s.args) or _has_gen(s.args) or _has_gen(s.kwargs):
            continue
        try:
            want = invoke(op, form, flow, materialize(s.args, flow), materialize(s.kwargs, flow))
        except Exception:  # noqa: BLE001 - errors are test_ops_generic's business
            continue
        what = f"{op.name} {s.desc} [{dtype}]"
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                got = invoke(op, form, flow, materialize(s.args, flow, device="cuda"),
                             materialize(s.kwargs, flow, device="cuda"))
        except NotImplementedError as e:
            _report(op.name, dtype, e)
            if FALLBACK:
                failures.append(f"{what}: NotImplementedError on CUDA despite the host fallback: {e}")
            # complex operands (also the complex side of a mixed sample) have no CUDA kernels yet
            elif op.name in POINTWISE and "complex" not in dtype and "complex" not in str(e):
                failures.append(f"{what}: pointwise op raised NotImplementedError on CUDA: {e}")
            continue
        except Exception as e:  # noqa: BLE001
            failures.append(f"{what}: raised {type(e).__name__}: {str(e)[:200]}")
            continue
        for w in caught:
            if "has no CUDA kernel" in str(w.message):
                _report(op.name, dtype, "host fallback: " + str(w.message))
        ran += 1
        if "cpu" in _devices(got) and op.kind not in ("creation",):
            failures.append(f"{what}: result on the CPU")
        try:
            if op.kind == "random" or op.name.startswith("empty") or (op.name, s.desc) in UNDEFINED_ON_CUDA:
                assert _shapes(got) == _shapes(want), f"{what}: shapes {_shapes(got)} != {_shapes(want)}"
                continue
            assert_close(_to_cpu(got), _to_torch(want), overrides=op.tol, what=what)
        except AssertionError as e:
            failures.append(str(e).replace("\n", " | ")[:400])
    if failures:
        pytest.fail(f"{op.name} [{dtype}] on CUDA: {len(failures)} failing sample(s):\n  " + "\n  ".join(failures))
