"""The boxed form of every op (docs/architecture.md §8): each table op is called by name through
``flow._C._call_boxed`` (via ``oneflow._boxed.call``, which binds a Python-style argument list to
the op's schema) and must give exactly what the direct call gives; ``_infer_boxed`` (meta
inference alone) must give the real outputs' shapes and dtypes.  Every table op has a schema."""

import numpy as np
import pytest

from harness import SHIM, flow, to_numpy
from opinfo import OPS, RANDOM_DIST, materialize

pytestmark = pytest.mark.skipif(bool(SHIM), reason="the boxed form is oneflow's own")

if not SHIM:
    from oneflow import _boxed

import optable_path  # noqa: F401,E402  (tools/ on sys.path)
import optable  # noqa: E402

# Ops whose flow._C binding also takes upstream OneFlow's forms (table field `oneflow:`): the boxed
# schema is the canonical signature alone, so a sample written in an upstream form (randint(high,
# size)) binds directly but not boxed.
UPSTREAM_FORMS = {e["name"] for e in optable.load() if e.get("oneflow")}


def _cases():
    if SHIM:
        return []
    names = set(flow._C._op_names())
    out = []
    for op in OPS:
        if op.name not in names or op.fn is None:
            continue
        if op.fn(flow) not in (getattr(flow, op.name, None), getattr(flow._C, op.name, None)):
            continue  # the OpInfo calls something else than flow.<name>
        dt = "float32" if "float32" in op.dtypes else op.dtypes[0]
        out.append(pytest.param(op, dt, id=f"{op.name}-{dt}"))
    return out


def _flat(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


@pytest.mark.parametrize("op,dtype", _cases())
def test_boxed_matches_direct(op, dtype):
    checked = 0
    for s in op.sample_list(dtype):
        args, kwargs = materialize(s.args, flow), materialize(s.kwargs, flow)
        try:
            # The C++ binding: the boxed schema is its signature (flow.<name> may be a
            # Python wrapper adding overloads, e.g. randint(high, size)).
            want = _flat(getattr(flow._C, op.name)(*args, **kwargs))
        except Exception as e:  # noqa: BLE001 - the boxed call must fail the same way
            with pytest.raises(type(e)):
                _boxed.call(op.name, *args, **kwargs)
            continue
        try:
            got = _flat(_boxed.call(op.name, *args, **kwargs))
        except TypeError:
            if op.name in UPSTREAM_FORMS:
                continue  # an upstream form: the canonical schema rejects it, as the binding would without it
            raise
        if op.data_dependent:  # no meta inference: the shape depends on the values
            with pytest.raises(RuntimeError):
                _boxed.infer(op.name, *args, **kwargs)
            meta = got
        else:
            # (samples whose output shape depends on values have no meta inference: Sample.meta)
            meta = _flat(_boxed.infer(op.name, *args, **kwargs)) if s.meta else got
        assert len(got) == len(want) == len(meta), s.desc
        for g, w, m in zip(got, want, meta):
            assert g.dtype == w.dtype and tuple(g.shape) == tuple(w.shape), s.desc
            assert m.dtype == w.dtype and tuple(m.shape) == tuple(w.shape), f"meta: {s.desc}"
            assert str(m.device) == "meta" or op.data_dependent or not s.meta
            if op.values and op.name not in RANDOM_DIST:
                np.testing.assert_array_equal(to_numpy(g), to_numpy(w), err_msg=s.desc)
        checked += 1
    assert checked, "no sample ran"


@pytest.mark.skipif(bool(SHIM), reason="oneflow only")
def test_every_table_op_has_a_schema():
    names = set(flow._C._op_names())
    table = {e["name"] for e in optable.load()}
    assert table <= names, sorted(table - names)


@pytest.mark.skipif(bool(SHIM), reason="oneflow only")
def test_boxed_errors():
    x = flow.ones(2, 3)
    with pytest.raises(ValueError, match="no op named 'nope'"):
        flow._C._call_boxed("nope", [x])
    with pytest.raises(TypeError, match="has no argument 'bogus'"):
        flow._C._call_boxed("sum", [x], {"bogus": 1})
    with pytest.raises(TypeError, match="missing its argument 'other'"):
        flow._C._call_boxed("mul", [x])
    # Meta inference raises the eager op's error, before any kernel.
    with pytest.raises(RuntimeError, match="size"):
        flow._C._infer_boxed("add", [x, flow.ones(4)])


@pytest.mark.skipif(bool(SHIM), reason="oneflow only")
def test_boxed_schema_and_defaults():
    params, outs = flow._C._op_schema("sum")
    assert [p[0] for p in params] == ["input", "dim", "keepdim", "dtype"]
    assert outs == ["result"]
    x = flow.arange(6.0).reshape(2, 3)
    (r,) = flow._C._call_boxed("sum", [x], {"dim": [1]})
    assert r.tolist() == [3.0, 12.0]
    v, i = flow._C._call_boxed("max", [x], {"dim": 1})
    assert v.tolist() == [2.0, 5.0] and i.tolist() == [2, 2]
    parts = flow._C._call_boxed("split", [x], {"split_size_or_sections": [1, 2], "dim": 1})
    assert [tuple(p.shape) for p in parts] == [(2, 1), (2, 2)]
    (c,) = flow._C._call_boxed("cat", [x, x], {"dim": 0})
    assert tuple(c.shape) == (4, 3)
