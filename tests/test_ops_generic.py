"""Generic op tests driven by the table in opinfo.py.

For every op and dtype, each sample is run in flow and in torch (same dtype)
and compared: result structure, shape, dtype name and values.  The same
samples drive the in-place, non-contiguous and meta-device tests.

Where torch raises for a sample, flow must raise the same kind of exception
(TypeError / IndexError / ValueError / RuntimeError), except that a TypeError
from torch's argument parser means "this call form does not exist" (e.g.
``torch.maximum(2, x)``) and that form is skipped for the sample.

Each test loops over the samples of one (op, dtype) and reports every failing
sample at once, so one run shows the whole picture for an op.
"""

import os
import re
import sys

import numpy as np
import pytest
import torch

from harness import (
    SHIM,
    assert_close,
    assert_same_meta,
    builtin_exc_type,
    flow,
    flow_dtype_name,
    flow_to_torch,
    invoke,
    oneflow_only,
    to_numpy,
)
from opinfo import (
    ALL,
    FLOATS,
    INT_LIKE,
    INTS,
    NUMBER,
    OP_BY_NAME,
    OPS,
    RANDOM_DIST,
    Arr,
    COVERED_ELSEWHERE,
    DT,
    Sample,
    arrs_in,
    make_tensor,
    materialize,
)


def _cases(kinds=None, exclude_kinds=(), pred=None):
    out = []
    for op in OPS:
        if kinds is not None and op.kind not in kinds:
            continue
        if op.kind in exclude_kinds or (pred is not None and not pred(op)):
            continue
        for dt in op.dtypes:
            marks = [oneflow_only] if dt in op.oneflow_dtypes else []
            out.append(pytest.param(op, dt, id=f"{op.name}-{dt}", marks=marks))
    return out


def _call(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001 - we compare exception kinds
        return None, e


def _check_same_outcome(op, t_res, t_err, f_res, f_err, what, error_types=None):
    """Compare a flow outcome (result or exception) with torch's."""
    if t_err is not None:
        want = error_types or builtin_exc_type(t_err)
        assert f_err is not None, (
            f"{what}: torch raised {type(t_err).__name__} ({str(t_err)[:120]}), flow returned a result"
        )
        assert isinstance(f_err, want), (
            f"{what}: flow raised {type(f_err).__name__} ({f_err}), torch raises {type(t_err).__name__}"
        )
        return
    assert f_err is None, f"{what}: flow raised {type(f_err).__name__}: {f_err}"
    if op.values:
        assert_close(f_res, t_res, overrides=op.tol, what=what)
    else:
        assert_same_meta(f_res, t_res, what)


def _snapshot(flow_args):
    return [to_numpy(a).copy() if isinstance(a, flow.Tensor) else None for a in flow_args]


def _assert_inputs_unchanged(flow_args, snapshot, what):
    """Out-of-place ops must not write to their inputs."""
    for i, (fa, before) in enumerate(zip(flow_args, snapshot)):
        if before is not None:
            np.testing.assert_array_equal(to_numpy(fa), before, err_msg=f"{what}: input {i} was modified")


def _report(failures, op, dtype):
    if failures:
        pytest.fail(f"{op.name} [{dtype}]: {len(failures)} failing sample(s):\n  " + "\n  ".join(failures))


# ---------------------------------------------------------------------------
# forward vs torch


@pytest.mark.parametrize("op,dtype", _cases(exclude_kinds=("random",)))
def test_forward(op, dtype):
    failures = []
    for s in op.sample_list(dtype):
        for form in ("fn", "method", "op"):
            if not op.has_form(form, s):
                continue
            what = f"{s.desc} [{form}]"
            t_args, t_kwargs = materialize(s.args, torch), materialize(s.kwargs, torch)
            t_res, t_err = _call(invoke, op, form, torch, t_args, t_kwargs)
            if isinstance(t_err, TypeError):
                continue  # this call form is not part of the API for these args
            f_args, f_kwargs = materialize(s.args, flow), materialize(s.kwargs, flow)
            snap = _snapshot(f_args)
            f_res, f_err = _call(invoke, op, form, flow, f_args, f_kwargs)
            try:
                _check_same_outcome(op, t_res, t_err, f_res, f_err, what, s.error_types)
                _assert_inputs_unchanged(f_args, snap, what)
            except AssertionError as e:
                failures.append(str(e).replace("\n", " | ")[:600])
    _report(failures, op, dtype)


# ---------------------------------------------------------------------------
# non-contiguous inputs


def _non_contiguous_form(op, s):
    for form in ("fn", "method"):
        if op.has_form(form, s):
            return form
    return None


@pytest.mark.parametrize("op,dtype", _cases(exclude_kinds=("random", "creation")))
def test_non_contiguous(op, dtype):
    """Inputs that are step-sliced and transposed views of larger buffers."""
    failures = []
    tested = 0
    for s in op.sample_list(dtype):
        arrs = arrs_in(s.args)
        if not any(a.value.ndim >= 1 for a in arrs):
            continue
        form = _non_contiguous_form(op, s)
        if form is None:
            continue
        what = f"{s.desc} [{form}, non-contiguous]"
        # The reference uses contiguous torch inputs: the values are what count (except for
        # ops reading the memory layout itself, compared on the same layout).
        t_layout = "noncontig" if op.layout_dependent else "contiguous"
        t_res, t_err = _call(
            invoke, op, form, torch, materialize(s.args, torch, t_layout), materialize(s.kwargs, torch, t_layout)
        )
        if isinstance(t_err, TypeError):
            continue
        f_args = materialize(s.args, flow, layout="noncontig")
        f_kwargs = materialize(s.kwargs, flow, layout="noncontig")
        t_nc = materialize(s.args, torch, layout="noncontig")
        try:
            for fa, ta in zip(_flat_tensors(f_args), _flat_tensors(t_nc)):
                assert fa.is_contiguous() == ta.is_contiguous(), (
                    f"{what}: is_contiguous() {fa.is_contiguous()} for shape {tuple(fa.shape)} "
                    f"strides {fa.stride()}; torch says {ta.is_contiguous()}"
                )
            # view() legitimately refuses some non-contiguous inputs; then
            # flow must refuse too (torch decides, on its own non-contiguous run).
            if op.name in ("view", "view_as"):
                t_kw = materialize(s.kwargs, torch, "noncontig")
                t_res, t_err = _call(invoke, op, form, torch, t_nc, t_kw)
            f_res, f_err = _call(invoke, op, form, flow, f_args, f_kwargs)
            _check_same_outcome(op, t_res, t_err, f_res, f_err, what, s.error_types)
            tested += 1
        except AssertionError as e:
            failures.append(str(e).replace("\n", " | ")[:600])
    _report(failures, op, dtype)
    if not tested and not failures:
        pytest.skip("no sample with a non-contiguous input for this op")


def _flat_tensors(obj):
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _flat_tensors(o)]
    if isinstance(obj, (flow.Tensor, torch.Tensor)):
        return [obj]
    return []


# ---------------------------------------------------------------------------
# in-place variants


@pytest.mark.parametrize("layout", ["contiguous", "noncontig"])
@pytest.mark.parametrize("op,dtype", _cases(exclude_kinds=("random",), pred=lambda op: op.inplace))
def test_inplace(op, dtype, layout):
    """x.X_(...) returns x itself, writes through views, equals x.X(...) cast
    to x's dtype, and raises exactly where torch raises (then x is unchanged)."""
    name_ = (op.method or op.name) + "_"
    failures = []
    for s in op.sample_list(dtype):
        if not s.args or not isinstance(s.args[0], Arr):
            continue
        what = f"{s.desc} [{name_}, {layout}]"
        tx = make_tensor(torch, s.args[0])
        t_rest, t_kwargs = materialize(s.args[1:], torch), materialize(s.kwargs, torch)
        _, t_err = _call(lambda: op.call_inplace(torch, tx, *t_rest, **t_kwargs))
        if isinstance(t_err, TypeError):
            continue
        fx, fbase = make_tensor(flow, s.args[0], layout, return_base=True)
        f_rest, f_kwargs = materialize(s.args[1:], flow, layout), materialize(s.kwargs, flow, layout)
        before = to_numpy(fx).copy()
        f_res, f_err = _call(lambda: op.call_inplace(flow, fx, *f_rest, **f_kwargs))
        try:
            if t_err is not None:
                _check_same_outcome(op, None, t_err, f_res, f_err, what, s.error_types)
                np.testing.assert_array_equal(
                    to_numpy(fx), before, err_msg=f"{what}: failed in-place op modified self"
                )
                continue
            assert f_err is None, f"{what}: flow raised {type(f_err).__name__}: {f_err}"
            assert f_res is fx, f"{what}: in-place op did not return self"
            assert_close(fx, tx, overrides=op.tol, what=what + " vs torch")
            # Same values as the out-of-place op, cast back to self's dtype.
            out = op.fn(flow) if op.fn is not None else None
            if out is not None:
                fo = out(make_tensor(flow, s.args[0]), *f_rest, **f_kwargs)
                ref = flow_to_torch(fo).to(tx.dtype)
                assert_close(fx, ref, overrides=op.tol, what=what + " vs out-of-place")
            if layout == "noncontig" and s.args[0].value.ndim >= 1:
                # Re-derive the view from the base buffer: the write must have
                # landed in the shared storage, not in a private copy.
                v = fbase[::2]
                if s.args[0].value.ndim >= 2:
                    v = v.transpose(-1, -2)
                np.testing.assert_array_equal(
                    to_numpy(v), to_numpy(fx), err_msg=f"{what}: base buffer not updated"
                )
        except AssertionError as e:
            failures.append(str(e).replace("\n", " | ")[:600])
    _report(failures, op, dtype)


# ---------------------------------------------------------------------------
# large inputs: the samples above are tiny, so multi-threaded kernel paths
# (work split across threads above some grain size) need their own check.


def _large_cases():
    rng = np.random.default_rng(99)

    def a(shape, dtype, lo=-5.0, hi=5.0):
        if dtype in INTS:
            return Arr(rng.integers(int(lo), int(hi) + 1, size=shape).astype(dtype), dtype)
        if dtype == "bool":
            return Arr(rng.random(shape) < 0.5, dtype)
        v = rng.uniform(lo, hi, size=shape)
        return Arr(v.astype(np.float32 if dtype == "bfloat16" else dtype), dtype)

    # Sums of positive values: no cancellation, so a relative tolerance
    # bounds the accumulation error of any reasonable summation order.
    sum_tol = {"float32": (5e-4, 1e-3), "float64": (1e-10, 1e-10)}
    S = Sample
    return [
        ("add", S((a((300, 700), "float32"), a((700,), "float32")), desc="broadcast row"), None),
        ("add", S((a((300, 700), "float32"), a((300, 1), "float32")), desc="broadcast column"), None),
        ("mul", S((a((300, 700), "int32"), a((300, 1), "int32")), desc="int32 broadcast"), None),
        ("sub", S((a((210000,), "float16"), 1.5), desc="float16 scalar"), None),
        ("floor_divide", S((a((200000,), "int64", -50, 50), 7), desc="int64 // 7"), None),
        ("exp", S((a((210000,), "float32"),), desc="1-d"), None),
        ("sigmoid", S((a((200000,), "bfloat16"),), desc="bfloat16"), None),
        ("sqrt", S((a((400, 500), "float64", 0.0, 9.0),), desc="2-d"), None),
        ("sum", S((a((300, 700), "float32", 0.0, 1.0),), desc="full"), sum_tol),
        ("sum", S((a((300, 700), "float32", 0.0, 1.0),), {"dim": 0}, desc="dim 0"), sum_tol),
        ("sum", S((a((300, 700), "float32", 0.0, 1.0),), {"dim": 1}, desc="dim 1"), sum_tol),
        ("sum", S((a((200000,), "int8", -100, 100),), desc="int8 -> int64"), None),
        ("mean", S((a((300, 700), "float64", 0.0, 1.0),), {"dim": 1}, desc="dim 1"), sum_tol),
        ("amax", S((a((300, 700), "float16"),), {"dim": 0}, desc="dim 0"), None),
        ("argmax", S((Arr(rng.permutation(210000).astype(np.float32).reshape(300, 700), "float32"),),
                     {"dim": 1}, desc="dim 1"), None),
        ("argmin", S((Arr(rng.permutation(210000).astype(np.float32), "float32"),), desc="full"), None),
        ("all", S((Arr(np.ones(200000, bool), "bool"),), desc="all true"), None),
        ("any", S((Arr(np.eye(1, 200000, 199999, dtype=bool)[0], "bool"),), desc="last true"), None),
        ("cast", S((a((300, 700), "float32", 0.0, 100.0), DT("float16")), desc="to float16"), None),
        ("cast", S((a((300, 700), "int32", -1000, 1000), DT("float64")), desc="to float64"), None),
        ("where", S((a((300, 700), "bool"), a((300, 700), "float32"), a((700,), "float32")),
                    desc="broadcast"), None),
        ("clamp", S((a((210000,), "float32"),), {"min": -1.0, "max": 2.0}, desc="min/max"), None),
        ("contiguous", S((a((300, 700), "float32"),), desc="copy"), None),
        ("cat", S(([a((300, 700), "float32"), a((300, 100), "float32")],), {"dim": 1}, desc="dim 1"),
         None),
        ("matmul", S((a((64, 300), "float32", -1, 1), a((300, 50), "float32", -1, 1)), desc="2-d"),
         {"float32": (1e-4, 1e-4)}),
        ("matmul", S((a((8, 64, 32), "float64", -1, 1), a((8, 32, 48), "float64", -1, 1)),
                     desc="batched"), None),
    ]


_LARGE = _large_cases()


@pytest.mark.parametrize("layout", ["contiguous", "noncontig"])
@pytest.mark.parametrize(
    "name,sample,tol", _LARGE, ids=[f"{n}-{s.desc.replace(' ', '_')}" for n, s, _ in _LARGE]
)
def test_large_inputs(name, sample, tol, layout):
    op = OP_BY_NAME[name]
    form = _non_contiguous_form(op, sample)
    t_res = invoke(op, form, torch, materialize(sample.args, torch), materialize(sample.kwargs, torch))
    f_args = materialize(sample.args, flow, layout)
    f_res, f_err = _call(invoke, op, form, flow, f_args, materialize(sample.kwargs, flow, layout))
    assert f_err is None, f"flow raised {type(f_err).__name__}: {f_err}"
    assert_close(f_res, t_res, overrides=tol or op.tol, what=f"{name} {sample.desc} ({layout})")


# ---------------------------------------------------------------------------
# meta device: same shape and dtype as the real run, no data


def _meta_kwargs(op, s):
    kwargs = dict(s.kwargs)
    if op.takes_device:
        kwargs["device"] = "meta"
    return kwargs


@pytest.mark.parametrize("op,dtype", _cases(pred=lambda op: op.name != "tensor"))
def test_meta_shape_matches_real(op, dtype):
    failures = []
    for s in op.sample_list(dtype):
        form = _non_contiguous_form(op, s)
        if form is None:
            continue
        if not arrs_in(s.args) and not op.takes_device:
            continue  # nothing would put the computation on the meta device
        if not s.meta:
            continue  # the output shape depends on values the meta device does not have
        what = f"{s.desc} [{form}, meta]"
        real, err = _call(invoke, op, form, flow, materialize(s.args, flow), materialize(s.kwargs, flow))
        if err is not None:
            continue  # errors are test_forward's business
        try:
            m_args = materialize(s.args, flow, device="meta")
            m_kwargs = materialize(_meta_kwargs(op, s), flow, device="meta")
            meta, m_err = _call(invoke, op, form, flow, m_args, m_kwargs)
            if op.data_dependent:
                assert isinstance(m_err, RuntimeError), f"{what}: data-dependent op gave {m_err!r} on meta"
                continue
            assert m_err is None, f"{what}: raised {type(m_err).__name__}: {m_err}"
            assert_same_meta(meta, real, what, device_type="meta")
        except AssertionError as e:
            failures.append(str(e).replace("\n", " | ")[:600])
    _report(failures, op, dtype)


# ---------------------------------------------------------------------------
# random ops: shape/dtype vs torch, range, statistics, reproducibility


def _random_call(op, lib, s):
    return invoke(op, "fn", lib, materialize(s.args, lib), materialize(s.kwargs, lib))


def _randint_bounds(s):
    """[lo, hi) of randint / randint_like / random_ samples (None: random_'s full range)."""
    a = [x for x in s.args if not isinstance(x, Arr)]
    if a and isinstance(a[-1], tuple):  # randint's size
        a = a[:-1]
    if not a:
        return None
    return (a[0], a[1]) if len(a) == 2 else (0, a[0])


def _check_random_values(op, s, t):
    dist = RANDOM_DIST[op.name]
    dtype = flow_dtype_name(t.dtype)
    v = to_numpy(t).astype(np.float64)
    if dist.kind != "cauchy":
        assert np.all(np.isfinite(v)), "non-finite values"
    if dist.kind == "uniform":
        assert v.size == 0 or (v.min() >= dist.lo and v.max() <= dist.hi), (
            f"outside [{dist.lo}, {dist.hi}): {v.min()}..{v.max()}")
        # [lo, hi) is half-open; in 16-bit types rounding can legitimately reach
        # hi (torch's kernel avoids it for rand, so require it for 32/64-bit only).
        if dtype in ("float32", "float64") or op.name == "rand":
            assert v.size == 0 or v.max() < dist.hi, f"{op.name} produced {dist.hi}"
    elif dist.kind == "randint":
        b = _randint_bounds(s)
        if b is not None:
            lo, hi = b
            assert v.size == 0 or (v.min() >= lo and v.max() < hi), f"outside [{lo}, {hi}): {v.min()}..{v.max()}"
        else:
            assert v.size == 0 or v.min() >= 0, "random_() drew a negative value"
    elif dist.kind == "perm":
        np.testing.assert_array_equal(np.sort(v), np.arange(v.size), err_msg="not a permutation")
    elif dist.kind == "bernoulli":
        assert np.all((v == 0) | (v == 1)), "bernoulli values other than 0 and 1"
    elif dist.kind == "multinomial":
        n = s.args[0].shape[-1]
        assert v.size == 0 or (v.min() >= 0 and v.max() < n), f"indices outside [0, {n})"
        replacement = s.args[2] if len(s.args) > 2 else s.kwargs.get("replacement", False)
        if not replacement:
            rows = v.reshape(-1, v.shape[-1]) if v.size else v
            for r in rows:
                assert len(set(r.tolist())) == len(r), "repeated index without replacement"
    elif dist.kind == "moments":
        assert v.size == 0 or (v.min() >= dist.lo and v.max() <= dist.hi), f"outside [{dist.lo}, {dist.hi}]"
        if dist.integral:
            np.testing.assert_array_equal(v, np.round(v), err_msg="non-integer values")


@pytest.mark.parametrize("op,dtype", _cases(kinds=("random",)))
def test_random_shape_dtype_range(op, dtype):
    failures = []
    for s in op.sample_list(dtype):
        what = s.desc
        try:
            t_res, t_err = _call(_random_call, op, torch, s)
            f_res, f_err = _call(_random_call, op, flow, s)
            if t_err is not None:
                _check_same_outcome(op, None, t_err, f_res, f_err, what, s.error_types)
                continue
            assert f_err is None, f"{what}: flow raised {type(f_err).__name__}: {f_err}"
            assert_same_meta(f_res, t_res, what)
            _check_random_values(op, s, f_res)
        except AssertionError as e:
            failures.append(str(e).replace("\n", " | ")[:600])
    _report(failures, op, dtype)


@pytest.mark.parametrize("op,dtype", _cases(kinds=("random",)))
def test_random_statistics(op, dtype):
    s = next(s for s in op.sample_list(dtype) if s.desc == "stats")
    flow.manual_seed(20240601)  # deterministic: the bounds are wide, but never flaky
    v = to_numpy(_random_call(op, flow, s)).astype(np.float64)
    dist = RANDOM_DIST[op.name]
    n = v.size
    if dist.kind in ("uniform", "normal", "bernoulli", "moments"):
        # 16-bit dtypes round each draw; the moments survive that.
        se = dist.std / np.sqrt(n)
        assert abs(v.mean() - dist.mean) < 8 * se + 0.01 * dist.std, f"mean {v.mean()} vs {dist.mean}"
        assert abs(v.std() - dist.std) < 0.05 * dist.std, f"std {v.std()} vs {dist.std}"
        if dist.kind == "normal":
            # Roughly 68% within one sigma: catches e.g. a uniform in disguise.
            within = np.mean(np.abs(v - dist.mean) < dist.std)
            assert 0.65 < within < 0.71, f"fraction within 1 sigma: {within}"
    elif dist.kind == "cauchy":
        # No moments: the median is the location and the quartiles are location -/+ scale.
        q1, med, q3 = np.quantile(v, [0.25, 0.5, 0.75])
        assert abs(med - dist.mean) < 0.05, f"median {med}"
        assert abs((q3 - q1) / 2 - dist.std) < 0.05 * dist.std, f"half IQR {(q3 - q1) / 2}"
    elif dist.kind == "randint":
        lo, hi = _randint_bounds(s)
        counts = np.bincount((v - lo).astype(np.int64), minlength=hi - lo)
        expect = n / (hi - lo)
        assert len(counts) == hi - lo, f"values outside [{lo}, {hi})"
        assert np.all(np.abs(counts - expect) < 6 * np.sqrt(expect)), f"uneven counts {counts}"
    elif dist.kind == "multinomial":
        p = s.args[0].value.astype(np.float64)
        p = p / p.sum()
        counts = np.bincount(v.astype(np.int64), minlength=p.size)
        expect = n * p
        assert np.all(np.abs(counts - expect) < 6 * np.sqrt(expect)), f"counts {counts} vs {expect}"
    elif dist.kind == "perm":
        # A shuffled permutation of 1000 has ~1 fixed point on average.
        assert np.sum(v == np.arange(n)) < 20, "randperm looks unshuffled"


@pytest.mark.parametrize("op,dtype", _cases(kinds=("random",)))
def test_random_reproducible(op, dtype):
    s = max(op.sample_list(dtype), key=lambda s: 0 if s.desc != "stats" else 1)
    flow.manual_seed(1234)
    a = to_numpy(_random_call(op, flow, s))
    b = to_numpy(_random_call(op, flow, s))
    flow.manual_seed(1234)
    a2 = to_numpy(_random_call(op, flow, s))
    b2 = to_numpy(_random_call(op, flow, s))
    np.testing.assert_array_equal(a, a2, err_msg="same seed, different first draw")
    np.testing.assert_array_equal(b, b2, err_msg="same seed, different second draw")
    assert not np.array_equal(a, b), "consecutive draws are identical"
    flow.manual_seed(4321)
    c = to_numpy(_random_call(op, flow, s))
    assert not np.array_equal(a, c), "different seeds give identical draws"
    # A seeded generator= gives the same draw each time, whatever the default generator did.
    g = next(x for x in op.sample_list(dtype) if x.desc == "generator")
    d1 = to_numpy(_random_call(op, flow, g))
    flow.manual_seed(99)
    d2 = to_numpy(_random_call(op, flow, g))
    np.testing.assert_array_equal(d1, d2, err_msg="generator= draws depend on the default generator")


# ---------------------------------------------------------------------------
# the op table itself

import optable_path  # noqa: E402,F401  (tools/ on sys.path)
import optable  # noqa: E402  (the generator's own reader of src/ops/table)


def yaml_entries():
    """The entries of the op table (src/ops/table/*.yaml), defaults applied."""
    return [
        dict(e, aliases=e.get("aliases") or [], inplace=e.get("inplace", False),
             method=e.get("method", True), test_none=e.get("test") == "none")
        for e in optable.load()
    ]


def yaml_op_names():
    """Names of the table's ops, skipping those marked ``test: none``."""
    return [e["name"] for e in yaml_entries() if not e["test_none"]]


def test_every_yaml_op_has_samples():
    names = yaml_op_names()
    assert names, "no ops found in src/ops/table"
    inplace_bases = {(op.method or op.name) + "_" for op in OPS if op.inplace}
    missing = [
        n for n in names
        if n not in OP_BY_NAME and n not in inplace_bases and n not in COVERED_ELSEWHERE
    ]
    assert not missing, f"table ops without an OpInfo in tests/opinfo: {missing}"
    for n in names:
        if n in OP_BY_NAME:
            assert any(OP_BY_NAME[n].sample_list(d) for d in OP_BY_NAME[n].dtypes), n


def test_yaml_inplace_flags_match_table():
    """An op whose yaml entry generates ``X_`` must be in-place-tested, and
    the table must not test an ``X_`` the yaml does not generate."""
    wrong = [
        (e["name"], e["inplace"], OP_BY_NAME[e["name"]].inplace)
        for e in yaml_entries()
        if e["name"] in OP_BY_NAME and e["inplace"] != OP_BY_NAME[e["name"]].inplace
    ]
    assert not wrong, f"(op, yaml inplace, table inplace): {wrong}"


def _alias_cases():
    return [
        pytest.param(e["name"], a, e["method"], id=f"{a}->{e['name']}")
        for e in yaml_entries()
        for a in e["aliases"]
        if e["name"] in OP_BY_NAME
    ]


@pytest.mark.parametrize("name,alias,method", _alias_cases())
def test_alias(name, alias, method):
    """flow.<alias> (and Tensor.<alias>) compute the same as flow.<name>."""
    op = OP_BY_NAME[name]
    dtype = "float32" if "float32" in op.dtypes else op.dtypes[0]
    s = op.sample_list(dtype)[0]
    args, kwargs = materialize(s.args, flow), materialize(s.kwargs, flow)
    want = flow_to_torch(op.fn(flow)(*args, **kwargs)) if op.fn else None
    assert hasattr(flow, alias), f"flow.{alias} is missing"
    got = getattr(flow, alias)(*args, **kwargs)
    if want is not None:
        assert_close(got, want, what=f"flow.{alias}")
    if method and isinstance(s.args[0], Arr):
        assert hasattr(args[0], alias), f"Tensor.{alias} is missing"
        got = getattr(args[0], alias)(*args[1:], **kwargs)
        if want is not None:
            assert_close(got, want, what=f"Tensor.{alias}")


def test_table_is_well_formed():
    """Harness self-check: every op has samples for every dtype it lists,
    and dtype lists only use this project's dtypes."""
    for op in OPS:
        assert op.dtypes, op.name
        assert set(op.dtypes) <= set(ALL) | {"complex64", "complex128"}, op.name
        for d in op.dtypes:
            assert op.sample_list(d), f"{op.name}/{d} has no samples"


def test_table_covers_spec_groups():
    """The in-place variants and dtype groups the spec lists."""
    unary_float = (
        "exp log log2 log10 log1p expm1 sqrt rsqrt sin cos tan asin acos atan sinh cosh tanh "
        "asinh acosh atanh sigmoid erf erfc reciprocal gelu silu"
    ).split()
    unary_same = "abs neg sign square ceil floor round trunc relu".split()
    binary_inplace = "add sub mul div floor_divide remainder fmod pow".split()
    for n in unary_float:
        assert OP_BY_NAME[n].inplace == (n != "gelu"), n
    for n in unary_same + binary_inplace:
        assert OP_BY_NAME[n].inplace, n
    assert set(OP_BY_NAME["bitwise_not"].dtypes) == set(INT_LIKE)
    # The ops with a complex meaning also list complex64/complex128 (Note [Complex dtypes]).
    cplx = {"complex64", "complex128"}
    for n in unary_same:  # sign also takes bool (the identity, as PyTorch)
        assert set(OP_BY_NAME[n].dtypes) - cplx == set(ALL if n == "sign" else NUMBER), n
    assert set(OP_BY_NAME["matmul"].dtypes) == {"float32", "float64"} | cplx
    assert set(OP_BY_NAME["mean"].dtypes) == set(FLOATS) | cplx
    assert INTS and FLOATS
