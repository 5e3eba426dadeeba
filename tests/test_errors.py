"""Bad inputs raise the right Python exception, with a message that names
the op, and leave the interpreter (and the framework) usable.

Most cases are written once as ``f(lib)`` and run on both flow and torch: the
exception class flow must raise is the builtin family of what torch raises
(torch's NotImplementedError for a missing dtype kernel counts as
RuntimeError), unless the case pins a class itself.  Message contents are
OneFlow's own contract (errors name the op), so they are only checked
against the real package, not under the torch shim.

Cases that could kill the process in a broken build (integer division by
zero can raise SIGFPE, a huge allocation can be OOM-killed) run in a
subprocess, so a crash is a test failure instead of the end of the run.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from error_cases import Case, check_error_case
from harness import SHIM, flow, oneflow_only

HERE = os.path.dirname(os.path.abspath(__file__))


def _framework_still_works():
    x = flow.ones(2, 3)
    assert float((x + 1).sum().item()) == 12.0




def _i64(lib, *vals):
    return lib.tensor(list(vals), dtype=lib.int64)


CASES = [
    # shape mismatches
    Case("add-shape-mismatch", lambda lib: lib.add(lib.zeros(2, 3), lib.zeros(2, 4)), ["add"]),
    Case("add-operator-shape-mismatch", lambda lib: lib.zeros(2, 3) + lib.zeros(4, 3), ["add"]),
    Case("mul-shape-mismatch", lambda lib: lib.mul(lib.zeros(3), lib.zeros(4)), ["mul"]),
    Case("matmul-shape-mismatch", lambda lib: lib.matmul(lib.zeros(2, 3), lib.zeros(4, 5)), ["matmul"]),
    Case("matmul-operator-mismatch", lambda lib: lib.zeros(2, 3) @ lib.zeros(2, 3), ["matmul"]),
    Case("matmul-0d", lambda lib: lib.matmul(lib.zeros(()), lib.zeros(3)), ["matmul"]),
    Case("mm-not-2d", lambda lib: lib.mm(lib.zeros(2, 2, 3), lib.zeros(3, 5)), ["mm"]),
    Case("mm-shape-mismatch", lambda lib: lib.mm(lib.zeros(2, 3), lib.zeros(4, 5)), ["mm"]),
    Case("bmm-batch-mismatch", lambda lib: lib.bmm(lib.zeros(2, 2, 3), lib.zeros(3, 3, 5)), ["bmm"]),
    Case("cat-shape-mismatch", lambda lib: lib.cat([lib.zeros(2, 3), lib.zeros(2, 4)]), ["cat"]),
    Case("cat-ndim-mismatch", lambda lib: lib.cat([lib.zeros(2, 3), lib.zeros(3)]), ["cat"]),
    Case("stack-shape-mismatch", lambda lib: lib.stack([lib.zeros(2, 3), lib.zeros(3, 2)]), ["stack"]),
    Case("expand-incompatible", lambda lib: lib.zeros(3, 2).expand(3, 4), ["expand"]),
    Case("inplace-broadcast-self", lambda lib: lib.zeros(3, 1).add_(lib.zeros(1, 4)), ["add"]),
    Case("setitem-shape", lambda lib: lib.zeros(2, 3).__setitem__(slice(None), lib.ones(4))),
    # reshape / view
    Case("reshape-incompatible", lambda lib: lib.zeros(2, 3).reshape(4, 2), ["reshape"]),
    Case("reshape-two-inferred", lambda lib: lib.zeros(2, 3).reshape(-1, -1), ["reshape"]),
    Case("reshape-negative", lambda lib: lib.zeros(2, 3).reshape(-2, 3), ["reshape"]),
    Case("view-incompatible-size", lambda lib: lib.zeros(2, 3).view(4), ["view"]),
    Case("view-non-contiguous", lambda lib: lib.zeros(2, 3).transpose(0, 1).view(6), ["view"]),
    Case("view-step-slice", lambda lib: lib.zeros(4, 3)[::2].view(6), ["view"]),
    # dims
    Case("sum-bad-dim", lambda lib: lib.zeros(2, 3).sum(5), ["sum"]),
    Case("sum-bad-negative-dim", lambda lib: lib.zeros(2, 3).sum(-3), ["sum"]),
    Case("max-bad-dim", lambda lib: lib.max(lib.zeros(2, 3), 3), ["max"]),
    Case("argmax-bad-dim", lambda lib: lib.argmax(lib.zeros(2, 3), 3), ["argmax"]),
    Case("transpose-bad-dim", lambda lib: lib.zeros(2, 3).transpose(0, 5), ["transpose"]),
    Case("unsqueeze-bad-dim", lambda lib: lib.zeros(2, 3).unsqueeze(4), ["unsqueeze"]),
    Case("squeeze-bad-dim", lambda lib: lib.zeros(3).squeeze(3), ["squeeze"]),
    Case("cat-bad-dim", lambda lib: lib.cat([lib.zeros(2, 3), lib.zeros(2, 3)], 3), ["cat"]),
    Case("flatten-bad-dim", lambda lib: lib.zeros(2, 3).flatten(2), ["flatten"]),
    Case("narrow-bad-dim", lambda lib: lib.zeros(2, 3).narrow(5, 0, 1), ["narrow"]),
    Case("narrow-out-of-range", lambda lib: lib.zeros(3).narrow(0, 2, 5), ["narrow"]),
    Case("permute-duplicate", lambda lib: lib.zeros(3, 2).permute(0, 0), ["permute"]),
    Case("permute-wrong-length", lambda lib: lib.zeros(3, 2).permute(0), ["permute"]),
    Case("split-size-zero", lambda lib: lib.zeros(3).split(0), ["split"]),
    Case("chunk-zero", lambda lib: lib.zeros(3).chunk(0), ["chunk"]),
    # indexing
    Case("getitem-out-of-range", lambda lib: lib.zeros(2, 3)[10]),
    Case("getitem-negative-out-of-range", lambda lib: lib.zeros(2, 3)[-3]),
    Case("getitem-second-dim", lambda lib: lib.zeros(2, 3)[0, 10]),
    Case("getitem-ellipsis", lambda lib: lib.zeros(2, 3)[..., 5]),
    Case("getitem-list-out-of-range", lambda lib: lib.zeros(2, 3)[[0, 5]]),
    Case("getitem-tensor-out-of-range", lambda lib: lib.zeros(2, 3)[_i64(lib, 0, 5)]),
    Case("getitem-too-many", lambda lib: lib.zeros(2, 3)[0, 0, 0]),
    Case("getitem-float-index", lambda lib: lib.zeros(2, 3)[lib.tensor([0.5])]),
    Case("getitem-mask-shape", lambda lib: lib.zeros(2, 3)[lib.ones(3, dtype=lib.bool)]),
    Case("getitem-negative-step", lambda lib: lib.zeros(2, 3)[::-1]),
    Case("setitem-out-of-range", lambda lib: lib.zeros(2, 3).__setitem__(10, 1.0)),
    # dtypes
    Case("bitwise_and-float", lambda lib: lib.bitwise_and(lib.zeros(3), lib.zeros(3)), ["bitwise_and"]),
    Case("bitwise_or-float", lambda lib: lib.bitwise_or(lib.zeros(3), lib.zeros(3)), ["bitwise_or"]),
    Case("bitwise_xor-float-scalar", lambda lib: lib.zeros(3) ^ 1, ["bitwise_xor"]),
    Case("bitwise_and-int-with-float-scalar", lambda lib: _i64(lib, 1, 2) & 1.5, ["bitwise_and"]),
    Case("bitwise_not-float", lambda lib: lib.bitwise_not(lib.zeros(3)), ["bitwise_not"]),
    # torch raises TypeError for ~float and RuntimeError for bitwise_not(float)
    Case("invert-operator-float", lambda lib: ~lib.zeros(3)),
    Case("sub-bool", lambda lib: lib.ones(2, dtype=lib.bool) - lib.ones(2, dtype=lib.bool), ["sub"]),
    Case("neg-bool", lambda lib: -lib.ones(2, dtype=lib.bool), ["neg"]),
    Case("mean-int", lambda lib: _i64(lib, 1, 2).mean(), ["mean"]),
    Case("where-float-condition", lambda lib: lib.where(lib.ones(2), lib.ones(2), lib.ones(2)), ["where"]),
    Case("inplace-uncastable-scalar", lambda lib: _i64(lib, 1, 2).add_(1.5), ["add"]),
    Case("inplace-uncastable-tensor", lambda lib: _i64(lib, 1, 2).mul_(lib.ones(2)), ["mul"]),
    Case("inplace-uncastable-div", lambda lib: _i64(lib, 1, 2).div_(2), ["div"]),
    Case("inplace-uncastable-unary", lambda lib: _i64(lib, 1, 2).exp_(), ["exp"]),
    Case("inplace-bool-add-int", lambda lib: lib.ones(2, dtype=lib.bool).add_(2), ["add"]),
    Case("add-float-alpha-int", lambda lib: lib.add(_i64(lib, 1), _i64(lib, 1), alpha=0.5), ["add"]),
    # creation
    Case("zeros-negative", lambda lib: lib.zeros(-1), ["zeros"]),
    Case("zeros-negative-2d", lambda lib: lib.zeros(2, -3), ["zeros"]),
    Case("ones-negative-tuple", lambda lib: lib.ones((2, -1)), ["ones"]),
    Case("empty-negative", lambda lib: lib.empty(-5), ["empty"]),
    Case("Tensor-negative", lambda lib: lib.Tensor(-1)),
    Case("randperm-negative", lambda lib: lib.randperm(-1), ["randperm"]),
    Case("arange-zero-step", lambda lib: lib.arange(0, 10, 0), ["arange"]),
    Case("arange-wrong-sign", lambda lib: lib.arange(0, 10, -1), ["arange"]),
    Case("linspace-negative-steps", lambda lib: lib.linspace(0, 1, -1), ["linspace"]),
    Case("eye-negative", lambda lib: lib.eye(-1), ["eye"]),
    Case("randint-empty-range", lambda lib: lib.randint(5, 2, (3,)), ["randint"]),
    Case("tensor-ragged", lambda lib: lib.tensor([[1, 2], [3]])),
    Case("tensor-ragged-scalar-row", lambda lib: lib.tensor([[1, 2], 3])),
    Case("tensor-string", lambda lib: lib.tensor(["a"])),
    Case("tensor-None", lambda lib: lib.tensor(None)),
    # scalars out of tensors
    Case("item-many-elements", lambda lib: lib.zeros(3).item()),
    Case("item-empty", lambda lib: lib.zeros(0).item()),
    Case("bool-ambiguous", lambda lib: bool(lib.zeros(3))),
    Case("bad-device-string", lambda lib: lib.zeros(2, device="npu")),
    Case("bad-device-index", lambda lib: lib.device("cuda:x")),
]




@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_error(case):
    check_error_case(case, _framework_still_works)


def test_error_types_match_torch_exactly_for_basic_families():
    """Spot-check the families the spec names, independent of the torch run."""
    with pytest.raises(RuntimeError):
        flow.zeros(2, 3) + flow.zeros(2, 4)
    with pytest.raises(IndexError):
        flow.zeros(2, 3).sum(5)
    with pytest.raises(IndexError):
        flow.zeros(2, 3)[10]
    with pytest.raises(RuntimeError):
        flow.zeros(-1)
    with pytest.raises(RuntimeError):
        flow.tensor([1, 2], dtype=flow.int64).add_(1.5)
    with pytest.raises((ValueError, TypeError)):
        flow.tensor([[1, 2], [3]])
    _framework_still_works()


def test_failed_inplace_leaves_tensor_unchanged():
    x = flow.tensor([1, 2, 3])
    with pytest.raises(RuntimeError):
        x.add_(1.5)
    assert x.tolist() == [1, 2, 3]
    y = flow.zeros(3, 1)
    with pytest.raises(RuntimeError):
        y.add_(flow.ones(1, 4))
    assert y.tolist() == [[0.0], [0.0], [0.0]]


# ---------------------------------------------------------------------------
# Cases run in a subprocess: a crash must not take the test run down.


def _run_isolated(body):
    """Run ``body`` (with ``flow`` bound as in this run) in a fresh interpreter.
    Returns (returncode, stdout, stderr)."""
    code = "import sys\nsys.path.insert(0, %r)\nfrom harness import flow\n" % HERE
    code += textwrap.dedent(body)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=dict(os.environ)
    )
    return proc.returncode, proc.stdout, proc.stderr


_ISOLATED_PRELUDE = """
def expect(fn, exc, words=()):
    try:
        fn()
    except exc as e:
        msg = str(e).lower()
        missing = [w for w in words if w not in msg]
        print("RAISED", type(e).__name__, "MISSING" if missing else "OK", repr(str(e))[:200])
        return
    except BaseException as e:
        print("WRONG", type(e).__name__, repr(str(e))[:200])
        return
    print("NO-ERROR")
"""


@pytest.mark.parametrize(
    "expr,words",
    [
        ("flow.tensor([1, 2, 3]) // flow.tensor([1, 0, 1])", ["floor_divide"]),
        ("flow.tensor([1, 2, 3]) % flow.tensor([1, 0, 1])", ["remainder"]),
        ("flow.fmod(flow.tensor([1, 2, 3]), 0)", ["fmod"]),
        ("flow.tensor([1, 2, 3], dtype=flow.int32) // 0", ["floor_divide"]),
        ("flow.tensor([1, 2, 3], dtype=flow.uint8).floor_divide_(flow.zeros(3, dtype=flow.uint8))",
         ["floor_divide"]),
        ("flow.tensor([-128], dtype=flow.int8) // flow.tensor([0], dtype=flow.int8)", ["floor_divide"]),
    ],
    ids=["floor_divide", "remainder", "fmod-scalar", "int32-floordiv-scalar", "uint8-inplace", "int8"],
)
def test_integer_division_by_zero(expr, words):
    """RuntimeError (torch says ZeroDivisionError inside it), never SIGFPE."""
    rc, out, err = _run_isolated(
        _ISOLATED_PRELUDE
        + f"expect(lambda: {expr}, RuntimeError, {[] if SHIM else words!r})\n"
        + "print('ALIVE', float((flow.ones(2) + 1).sum().item()))\n"
    )
    assert rc == 0, f"interpreter died (rc={rc}): {err[-2000:]}"
    assert "RAISED RuntimeError OK" in out, out + err[-2000:]
    assert "ALIVE 4.0" in out, out


def test_float_division_by_zero_is_not_an_error():
    x = flow.tensor([1.0, -1.0, 0.0])
    r = (x / 0).numpy()
    assert np.isposinf(r[0]) and np.isneginf(r[1]) and np.isnan(r[2])


def test_huge_allocation():
    """2**60 elements: a RuntimeError that mentions memory, no crash; an
    element count that overflows int64: a RuntimeError, no crash."""
    words = [] if SHIM else ["memory"]
    rc, out, err = _run_isolated(
        _ISOLATED_PRELUDE
        + f"expect(lambda: flow.empty(2**40, 2**20), RuntimeError, {words!r})\n"
        # element count overflowing int64: any RuntimeError (it is a size
        # error before it is a memory one)
        + "expect(lambda: flow.zeros(2**31, 2**31, 2**31), RuntimeError)\n"
        + "print('ALIVE', float((flow.ones(2) + 1).sum().item()))\n"
    )
    assert rc == 0, f"interpreter died (rc={rc}): {err[-2000:]}"
    lines = [ln for ln in out.splitlines() if ln.startswith(("RAISED", "WRONG", "NO-ERROR"))]
    assert len(lines) == 2 and all(ln.startswith("RAISED RuntimeError OK") for ln in lines), out
    assert "ALIVE 4.0" in out, out


# ---------------------------------------------------------------------------
# devices


def test_cuda_device_parses():
    d = flow.device("cuda:0")
    assert d.type == "cuda"
    assert d.index == 0
    assert flow.device("cuda").type == "cuda"
    assert flow.device("cpu").type == "cpu"


@oneflow_only  # torch raises AssertionError ("not compiled with CUDA"); OneFlow: RuntimeError
@pytest.mark.no_cuda
@pytest.mark.parametrize(
    "make",
    [
        lambda: flow.zeros(2, device="cuda:0"),
        lambda: flow.tensor([1.0, 2.0], device="cuda"),
        lambda: flow.ones(2).to("cuda"),
        lambda: flow.empty(3, device=flow.device("cuda:0")),
        lambda: flow.randn(2, device="cuda:0"),
    ],
    ids=["zeros", "tensor", "to", "empty-device-object", "randn"],
)
def test_tensor_on_cuda_without_cuda_raises(make):
    with pytest.raises(RuntimeError) as info:
        make()
    assert "cuda" in str(info.value).lower()
    _framework_still_works()


def test_many_errors_do_not_leak_or_break_state():
    """A thousand caught errors later, ops still work (error path frees its
    temporaries and restores per-op state such as the op-name scope)."""
    a, b = flow.zeros(2, 3), flow.zeros(2, 4)
    for _ in range(1000):
        try:
            a + b
        except RuntimeError:
            pass
    _framework_still_works()
    if not SHIM:
        # The next error must name its own op, not a stale one from the loop.
        with pytest.raises(RuntimeError) as info:
            flow.matmul(flow.zeros(2, 3), flow.zeros(4, 5))
        assert "matmul" in str(info.value).lower()
