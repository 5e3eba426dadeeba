"""Bad input to the selection / scatter / sort ops: the Python exception PyTorch raises (run on
both), a message naming the op and the offending value, nothing written before the error, and
no crash (out-of-range indices far outside the tensor run in a subprocess)."""

import os
import subprocess
import sys
import textwrap

import pytest

from error_cases import Case, check_error_case
from harness import flow, oneflow_only

HERE = os.path.dirname(os.path.abspath(__file__))




def _i(lib, *vals, dtype=None):
    return lib.tensor(list(vals), dtype=dtype or lib.int64)


def _x(lib):
    return lib.arange(6.0).reshape(2, 3)


CASES = [
    # index values out of range
    Case("gather-out-of-range", lambda lib: _x(lib).gather(1, _i(lib, [0], [5])), ["gather", "index 5", "size 3"]),
    Case("gather-negative", lambda lib: _x(lib).gather(1, _i(lib, [0], [-1])), ["gather", "index -1"]),
    Case("scatter-out-of-range", lambda lib: _x(lib).scatter(1, _i(lib, [0], [7]), 1.0), ["scatter", "index 7", "size 3"]),
    Case("scatter_add-out-of-range", lambda lib: lib.zeros(3).scatter_add(0, _i(lib, 0, 5), lib.ones(2)),
         ["scatter_add", "index 5", "size 3"]),
    Case("scatter_reduce-out-of-range",
         lambda lib: lib.zeros(3).scatter_reduce(0, _i(lib, 0, 3), lib.ones(2), "amax"), ["scatter_reduce", "index 3"]),
    Case("index_select-out-of-range", lambda lib: _x(lib).index_select(1, _i(lib, 0, 3)),
         ["index_select", "index 3", "size 3"]),
    Case("index_select-negative", lambda lib: _x(lib).index_select(1, _i(lib, -1)), ["index_select", "-1"]),
    Case("take-out-of-range", lambda lib: lib.take(_x(lib), _i(lib, 0, 7)), ["take", "7", "6 elements"]),
    Case("take-negative-out-of-range", lambda lib: lib.take(_x(lib), _i(lib, -7)), ["take", "-7"]),
    Case("index_add-out-of-range", lambda lib: lib.zeros(3).index_add(0, _i(lib, 0, 5), lib.ones(2)), ["index_add", "5"]),
    Case("index_copy-out-of-range", lambda lib: lib.zeros(3).index_copy(0, _i(lib, 0, 5), lib.ones(2)),
         ["index_copy", "index 5", "size 3"]),
    Case("index_fill-out-of-range", lambda lib: lib.zeros(3).index_fill(0, _i(lib, 4), 1.0), ["index_fill", "index 4"]),
    Case("index_put-out-of-range", lambda lib: lib.zeros(3).index_put((_i(lib, 3),), lib.ones(1)), ["index 3", "size 3"]),
    Case("bincount-negative", lambda lib: lib.bincount(_i(lib, 0, -1)), ["bincount", "non-negative"]),
    # index dtypes
    Case("gather-float-index", lambda lib: _x(lib).gather(1, lib.zeros(2, 1)), ["gather", "int64"]),
    Case("gather-uint8-index", lambda lib: _x(lib).gather(1, lib.zeros(2, 1, dtype=lib.uint8)), ["gather"]),
    Case("scatter-float-index", lambda lib: _x(lib).scatter(1, lib.zeros(2, 1), 1.0), ["scatter", "index"]),
    Case("index_select-float-index", lambda lib: _x(lib).index_select(1, lib.zeros(2)), ["index_select", "int64"]),
    Case("take-int32-index", lambda lib: lib.take(_x(lib), _i(lib, 0, dtype=lib.int32)), ["take", "long"]),
    Case("index_fill-int32-index", lambda lib: lib.zeros(3).index_fill(0, _i(lib, 0, dtype=lib.int32), 1.0),
         ["index_fill", "int64"]),
    Case("index_copy-int32-index", lambda lib: lib.zeros(3).index_copy(0, _i(lib, 0, dtype=lib.int32), lib.ones(1)),
         ["index_copy", "long"]),
    Case("bincount-float", lambda lib: lib.bincount(lib.zeros(3)), ["bincount"]),
    Case("bincount-bool", lambda lib: lib.bincount(lib.zeros(3, dtype=lib.bool)), ["bincount"]),
    Case("getitem-float-index-tensor", lambda lib: _x(lib)[lib.zeros(2)], ["indices"]),
    # shapes
    Case("gather-ndim", lambda lib: _x(lib).gather(1, _i(lib, 0, 1)), ["same number of dimensions"]),
    Case("gather-index-too-large", lambda lib: _x(lib).gather(1, lib.zeros(3, 1, dtype=lib.int64)),
         ["size does not match", "[3, 1]"]),
    Case("scatter-src-too-small", lambda lib: _x(lib).scatter(1, lib.zeros(2, 2, dtype=lib.int64), lib.ones(2, 1)),
         ["scatter", "src"]),
    Case("scatter-dtype", lambda lib: _x(lib).scatter(1, lib.zeros(2, 1, dtype=lib.int64), lib.ones(2, 1, dtype=lib.float64)),
         ["scatter", "dtype"]),
    Case("scatter-bad-reduce", lambda lib: _x(lib).scatter(1, lib.zeros(2, 1, dtype=lib.int64), 1.0, reduce="max"),
         ["reduce", "add or multiply"]),
    Case("scatter_reduce-bad-reduce",
         lambda lib: lib.zeros(3).scatter_reduce(0, _i(lib, 0), lib.ones(1), "add"), ["reduce", "amax"]),
    Case("index_select-2d-index", lambda lib: _x(lib).index_select(1, _i(lib, [0, 1])), ["index_select", "vector"]),
    Case("index_add-count", lambda lib: lib.zeros(3).index_add(0, _i(lib, 0, 0), lib.ones(3)), ["index_add", "(2)", "(3)"]),
    Case("index_add-dtype", lambda lib: lib.zeros(3).index_add(0, _i(lib, 0), lib.ones(1, dtype=lib.float64)),
         ["index_add", "same scalar type"]),
    Case("masked_fill-1d-value", lambda lib: _x(lib).masked_fill(_x(lib) > 2, lib.ones(2)),
         ["masked_fill", "0-dimensional"]),
    Case("masked_fill-float-mask", lambda lib: _x(lib).masked_fill(lib.ones(2, 3), 1.0), ["masked_fill", "mask"]),
    Case("masked_fill-overflow", lambda lib: lib.ones(2, dtype=lib.int8).masked_fill(lib.ones(2, dtype=lib.bool), 1000),
         ["overflow"]),
    Case("masked_fill_-broadcast-self", lambda lib: lib.zeros(3).masked_fill_(lib.ones(2, 3, dtype=lib.bool), 1.0),
         ["broadcast"]),
    Case("masked_select-shape", lambda lib: lib.masked_select(lib.zeros(2), lib.ones(3, dtype=lib.bool)), ["size"]),
    Case("masked_scatter-source-too-small",
         lambda lib: lib.zeros(3).masked_scatter(lib.ones(3, dtype=lib.bool), lib.ones(2)), ["number of elements of source"]),
    Case("where-shape", lambda lib: lib.where(lib.ones(3, dtype=lib.bool), lib.zeros(2), 1.0), ["where", "size"]),
    Case("index_put-values-shape", lambda lib: lib.zeros(4, 3).index_put((_i(lib, 0, 1),), lib.ones(3, 2)),
         ["shape mismatch", "[3, 2]"]),
    Case("index_put-values-dtype", lambda lib: lib.zeros(4, 3).index_put((_i(lib, 0),), lib.ones(3, dtype=lib.float64)),
         ["index put", "dtype"]),
    # sort / search
    Case("topk-k-too-large", lambda lib: lib.topk(_x(lib), 4), ["topk", "selected index k out of range"]),
    Case("topk-k-negative", lambda lib: lib.topk(_x(lib), -1), ["selected index k out of range"]),
    Case("topk-bool", lambda lib: lib.topk(lib.ones(3, dtype=lib.bool), 1), ["topk", "bool"]),
    Case("kthvalue-k", lambda lib: lib.kthvalue(_x(lib), 4), ["kthvalue", "k out of range"]),
    Case("kthvalue-empty-dim", lambda lib: lib.kthvalue(lib.zeros(3, 0), 1, 1), ["kthvalue", "non-zero size"]),
    Case("median-empty-dim", lambda lib: lib.median(lib.zeros(3, 0), 1), ["median", "non-zero size"]),
    Case("mode-empty-dim", lambda lib: lib.mode(lib.zeros(3, 0), 1), ["mode", "non-zero size"]),
    Case("sort-bad-dim", lambda lib: lib.sort(_x(lib), 2), ["sort", "dimension out of range"]),
    Case("argsort-bad-dim", lambda lib: lib.argsort(_x(lib), -3), ["argsort", "dimension out of range"]),
    Case("searchsorted-side", lambda lib: lib.searchsorted(_i(lib, 1, 2), _i(lib, 1), side="left", right=True),
         ["searchsorted", "side"]),
    Case("searchsorted-bad-side", lambda lib: lib.searchsorted(_i(lib, 1, 2), _i(lib, 1), side="up"), ["side"]),
    Case("searchsorted-rows", lambda lib: lib.searchsorted(lib.zeros(2, 3), lib.zeros(3, 1)), ["boundaries"]),
    Case("bucketize-2d", lambda lib: lib.bucketize(_i(lib, 1), lib.zeros(2, 2)), ["boundaries", "1 dimension"]),
    Case("histc-bins", lambda lib: lib.histc(lib.zeros(3), bins=0), ["histc", "bins"]),
    Case("histc-min-max", lambda lib: lib.histc(lib.zeros(3), bins=2, min=2, max=1), ["max must be larger than min"]),
    Case("histc-int", lambda lib: lib.histc(_i(lib, 1, 2)), ["histc"]),
    Case("bincount-weights-length", lambda lib: lib.bincount(_i(lib, 0, 1), weights=lib.ones(3)), ["weights"]),
]




@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_error(case):
    check_error_case(case)


# ---------------------------------------------------------------------------
# OneFlow-only ops and deliberate differences (no torch run)


@oneflow_only
@pytest.mark.parametrize(
    "fn,exc,words",
    [
        (lambda: flow.gather_nd(flow.zeros(3, 3), flow.tensor([[3]])), IndexError, ["gather_nd", "index 3"]),
        (lambda: flow.gather_nd(flow.zeros(3, 3), flow.tensor([[0, 0, 0]])), IndexError, ["gather_nd", "last dim"]),
        (lambda: flow.gather_nd(flow.zeros(3), flow.zeros(1, 1)), RuntimeError, ["gather_nd", "int32 or int64"]),
        (lambda: flow.scatter_nd(flow.tensor([[5]]), flow.ones(1), [3]), IndexError, ["scatter_nd", "index 5"]),
        (lambda: flow.scatter_nd(flow.tensor([[0]]), flow.ones(2), [3]), RuntimeError, ["scatter_nd", "shape"]),
        (lambda: flow.tensor_scatter_nd_add(flow.zeros(3), flow.tensor([[3]]), flow.ones(1)), IndexError,
         ["tensor_scatter_nd_add", "index 3"]),
        (lambda: flow.tensor_scatter_nd_update(flow.zeros(3), flow.tensor([[0]]), flow.ones(1, dtype=flow.float64)),
         RuntimeError, ["tensor_scatter_nd_update", "dtype"]),
        (lambda: flow.in_top_k(flow.tensor([0, 1]), flow.zeros(3, 4), 1), RuntimeError, ["in_top_k", "num of targets"]),
        (lambda: flow.in_top_k(flow.tensor([0.0]), flow.zeros(1, 4), 1), RuntimeError, ["in_top_k", "targets"]),
        (lambda: flow.in_top_k(flow.tensor([0]), flow.zeros(1, 4, dtype=flow.int64), 1), RuntimeError,
         ["in_top_k", "floating"]),
        # PyTorch 2.13 wraps take_along_dim indices modulo the size; OneFlow raises (see
        # docs/oneflow_differences.md).
        (lambda: flow.take_along_dim(flow.zeros(2, 3), flow.tensor([[3]]), 1), IndexError,
         ["take_along_dim", "index 3", "size 3"]),
        (lambda: flow.where(flow.ones(3, dtype=flow.bool), flow.ones(3)), TypeError, ["where"]),
        (lambda: flow.gather(flow.zeros(3)), TypeError, ["gather", "missing"]),
        (lambda: flow.median(flow.tensor([], dtype=flow.int64)), RuntimeError, ["median", "empty"]),
    ],
)
def test_oneflow_only_errors(fn, exc, words):
    with pytest.raises(exc) as info:
        fn()
    for w in words:
        assert w.lower() in str(info.value).lower(), f"{w!r} not in {str(info.value)!r}"


# ---------------------------------------------------------------------------
# nothing written before the error


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.scatter_(1, flow.tensor([[0, 1], [1, 9]]), flow.ones(2, 2)),
        lambda x: x.scatter_add_(1, flow.tensor([[0, 1], [1, 9]]), flow.ones(2, 2)),
        lambda x: x.scatter_reduce_(1, flow.tensor([[0, 1], [1, 9]]), flow.ones(2, 2), "sum"),
        lambda x: x.index_add_(0, flow.tensor([0, 5]), flow.ones(2, 3)),
        lambda x: x.index_copy_(0, flow.tensor([1, 5]), flow.ones(2, 3)),
        lambda x: x.index_fill_(1, flow.tensor([0, 3]), 7.0),
        lambda x: x.index_put_((flow.tensor([0, 1]), flow.tensor([0, 3])), flow.ones(2)),
        lambda x: x.masked_scatter_(flow.ones(2, 3, dtype=flow.bool), flow.ones(5)),
        lambda x: x.masked_fill_(flow.ones(2, 3, dtype=flow.bool), flow.ones(2)),
        lambda x: x.__setitem__((flow.tensor([0, 1]), flow.tensor([2, 3])), 5.0),
    ],
    ids=["scatter_", "scatter_add_", "scatter_reduce_", "index_add_", "index_copy_", "index_fill_", "index_put_",
         "masked_scatter_", "masked_fill_", "setitem"],
)
def test_failed_inplace_leaves_self_unchanged(fn):
    x = flow.arange(6.0).reshape(2, 3)
    with pytest.raises((RuntimeError, IndexError)):
        fn(x)
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


# ---------------------------------------------------------------------------
# indices far outside the tensor never touch memory (isolated: a crash fails the test only)

_FAR = [
    "flow.zeros(3).gather(0, flow.tensor([2**40]))",
    "flow.zeros(3).scatter_(0, flow.tensor([-2**40]), 1.0)",
    "flow.zeros(3).scatter_add_(0, flow.tensor([2**62]), flow.ones(1))",
    "flow.zeros(3).index_select(0, flow.tensor([2**40]))",
    "flow.take(flow.zeros(3), flow.tensor([-2**40]))",
    "flow.zeros(3).index_add_(0, flow.tensor([2**40]), flow.ones(1))",
    "flow.zeros(3)[flow.tensor([2**40])]",
    "flow.zeros(3).__setitem__(flow.tensor([-2**40]), 1.0)",
    "flow.zeros(3).index_put_((flow.tensor([2**40]),), flow.ones(1), accumulate=True)",
    "flow.gather_nd(flow.zeros(3), flow.tensor([[2**40]]))",
    "flow.bincount(flow.tensor([-2**40]))",
    "flow.searchsorted(flow.tensor([1.0, 2.0]), flow.tensor([1.5]), sorter=flow.tensor([0, 2**40]))",
]


def test_far_out_of_range_indices_raise_without_crash():
    code = "import sys\nsys.path.insert(0, %r)\nfrom harness import flow\n" % HERE
    code += textwrap.dedent(
        """
        exprs = %r
        for e in exprs:
            try:
                eval(e)
                print("NO-ERROR", e)
            except (IndexError, RuntimeError):
                print("RAISED", e)
        print("ALIVE", float((flow.ones(2) + 1).sum().item()))
        """
        % (_FAR,)
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ))
    assert proc.returncode == 0, f"interpreter died (rc={proc.returncode}): {proc.stderr[-2000:]}"
    assert "NO-ERROR" not in proc.stdout, proc.stdout
    assert proc.stdout.count("RAISED") == len(_FAR), proc.stdout
    assert "ALIVE 4.0" in proc.stdout
