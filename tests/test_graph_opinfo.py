"""Every sample of the OpInfo table (tests/opinfo) traced inside an nn.Graph against eager oneflow.

For each op, dtype and sample the op is called once eagerly and once as the whole build() of a
graph (the sample's tensors are the graph's inputs, its other arguments fixed at trace time):

* forward: the graph's outputs have eager's structure, dtypes and shapes and the same values --
  bit for bit, since the program runs the eager kernels (random ops: the same seed);
  a sample eager refuses must be refused by the graph too, with the same builtin error kind;
* backward: when the eager result has outputs that require grad, a training graph (one
  optimizer, lr 0) computes ``loss = sum((out_i * g_i).sum())`` (its real part for complex
  outputs; floating and complex inputs are the leaves) from fixed random ``g_i`` and
  calls ``loss.backward()`` in build(); the gradients the graph leaves in its inputs' ``.grad``
  must equal eager's, and the backward must be nodes of the program (Note [Backward nodes],
  src/graph/lazy.h: no Python step, `backward_steps` empty) except for the ops in BACKWARD_STEPS.

`python tests/test_graph_opinfo.py [dtype]` prints, per differentiable op, whether its samples'
backward traces as nodes (all / some / none of them) and the counts: docs/graph.md's coverage.

A new op in the table is covered here without a graph test of its own. Ops that cannot be traced
yet are in GRAPH_GAPS with the reason: each entry must still fail (a fixed gap fails the test
until its entry is removed). CI runs one dtype of every op (float32 when listed); the whole
table, every dtype, is the `slow` test (-m slow or ONEFLOW_SLOW_TESTS=1), as tests/test_fuzz.py.
"""
import zlib

import numpy as np
import pytest

from harness import builtin_exc_type, flow, invoke, to_numpy
from opinfo import OPS, materialize

# op name -> (why it cannot be traced yet, what each failing sample's message must say): a real gap
# of nn.Graph, to fix or to keep documented. A gap op's other samples still run and must pass, and
# each failing one must fail for the listed reason (its message containing the second string), so
# an entry hides nothing else.
# Ops whose output's size depends on the input's values (nonzero, masked_select, unique, bincount,
# repeat_interleave with a tensor of repeats, one_hot without num_classes, linalg_lstsq's residuals)
# trace as dynamic-shape nodes (Note [Dynamic shapes], src/graph/dynamic_shapes.h) and run here
# like any op (tensor_split at a tensor of indices too: python/oneflow/_shape.py). tensor_split
# given its number of sections as a 0-d tensor is not: the value decides how many tensors
# build() gets, a structure a program fixes when traced.
_NO_VALUES = "a meta tensor has none"  # (CheckHasData's refusal, src/core/tensor.cpp)
GRAPH_GAPS = {
    "tensor_split": ("a 0-d tensor of sections: its value is the number of outputs", _NO_VALUES),
}
# (keys: an op name, every dtype; or (op name, dtype))

# op name -> why some sample's backward in a training graph is still a Python step (the graph's
# gradients still equal eager's). Each entry must still have such a sample (a fixed one fails the
# test until its entry is removed).
# (An op whose formula reads values or calls a kernel entry -- cumprod, det, masked_scatter, ... --
# is `traced: local` in the table: one local-autograd node whose backward runs that formula on the
# real tensors, src/ops/table/README.md.)
# (keys as GRAPH_GAPS': an op name, every dtype; or (op name, dtype))
BACKWARD_STEPS = {
    # repeat_interleave(counts, output_size=n), the one-argument form: arange(len(counts)) repeated,
    # whose output needs no gradient in the graph (the counts are its repeats, not its input) while
    # eager's does; the loss's backward() then stays a Python step
    "repeat_interleave": "the one-argument form's output needs no gradient (counts are the repeats)",
    "linalg_lu_factor": "a Python-level op whose step is a Python function (record_call)",
    # eig's formula refuses a loss that depends on the eigenvectors' phases (a check of the
    # gradient's values, src/autograd/formulas/linalg.cpp): the op should be `traced: local`
    # (every dtype: a real input's eigen decomposition is complex too)
    "linalg_eig": "the formula checks the eigenvectors' gradient for phase dependence (values)",
}


class _OpGraph(flow.nn.Graph):
    """build() is one call of the op; with `grads`, a training step of sum((out_i * g_i).sum())."""

    def __init__(self, call, grads=None):
        super().__init__()
        self._call, self._grads = call, grads
        if grads is not None:
            self._anchor = flow.nn.Parameter(flow.zeros(1))  # (an optimizer needs a parameter)
            self.add_optimizer(flow.optim.SGD([self._anchor], lr=0.0))

    def build(self, *args, **kwargs):
        out = self._call(*args, **kwargs)
        if self._grads is None:
            return out
        loss = None
        for o, g in zip(_flat(out), self._grads):
            if g is not None:
                term = _term(o, g)
                loss = term if loss is None else loss + term
        loss.backward()
        return loss


def _differentiable(t):
    return t.is_floating_point() or t.is_complex()


def _seed(rng, o):
    """Fixed random values shaped as output o (complex for a complex o) that weigh it in the loss."""
    g = rng.standard_normal(tuple(o.shape))
    if o.is_complex():
        g = g + 1j * rng.standard_normal(tuple(o.shape))
    return flow.tensor(g).to(o.dtype)


def _term(o, g):
    """Output o's part of the loss, sum(o * g): its real part for a complex o (a loss is real)."""
    term = (o * g).sum()
    return term.real if term.is_complex() else term


def _flat(obj):
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _flat(o)]
    return [obj]


def _outcome(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001 - the outcomes are compared
        return None, e


def _same(got, want, what, values=True):
    """got (graph) == want (eager): structure, dtype, shape and (values) every element."""
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), (
            f"{what}: structure {type(got).__name__} of {len(got) if isinstance(got, (list, tuple)) else '-'}, "
            f"eager {type(want).__name__} of {len(want)}")
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{what}[{i}]", values)
        return
    if not isinstance(want, flow.Tensor):
        assert not isinstance(got, flow.Tensor) and got == want, f"{what}: {got!r} != eager {want!r}"
        return
    assert isinstance(got, flow.Tensor), f"{what}: a {type(got).__name__}, eager gives a tensor"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != eager {want.dtype}"
    assert tuple(got.shape) == tuple(want.shape), f"{what}: shape {tuple(got.shape)} != eager {tuple(want.shape)}"
    if values:
        a, b = to_numpy(got), to_numpy(want)
        np.testing.assert_array_equal(a, b, err_msg=what)  # (NaN equals NaN here)


def _form(op, s):
    for form in ("fn", "method", "op"):
        if op.has_form(form, s):
            return form
    return None


def _call_eager(op, form, s, seed, leaves=False):
    args, kwargs = materialize(s.args, flow), materialize(s.kwargs, flow)
    if leaves:
        for t in _flat(args) + _flat(list(kwargs.values())):
            if isinstance(t, flow.Tensor) and _differentiable(t):
                t.requires_grad_(True)
    flow.manual_seed(seed)
    res, err = _outcome(invoke, op, form, flow, args, kwargs)
    return args, kwargs, res, err


def _inputs(args, kwargs):
    return [t for t in _flat(args) + _flat(list(kwargs.values())) if isinstance(t, flow.Tensor)]


def _check_sample(op, dtype, s, k):
    form = _form(op, s)
    if form is None:
        return
    what = f"{s.desc or k} [{form}]"
    seed = zlib.crc32(f"{op.name}/{dtype}/{k}".encode())
    _, _, want, err = _call_eager(op, form, s, seed)
    args, kwargs = materialize(s.args, flow), materialize(s.kwargs, flow)
    graph = _OpGraph(lambda *a, **kw: invoke(op, form, flow, a, kw))
    flow.manual_seed(seed)
    got, gerr = _outcome(graph, *args, **kwargs)
    if err is not None:
        want_kind = s.error_types or builtin_exc_type(err)
        assert gerr is not None, f"{what}: eager raised {type(err).__name__} ({str(err)[:120]}), the graph did not"
        assert isinstance(gerr, want_kind), (
            f"{what}: the graph raised {type(gerr).__name__} ({str(gerr)[:200]}), eager {type(err).__name__}")
        return
    assert gerr is None, f"{what}: the graph raised {type(gerr).__name__}: {str(gerr)[:300]}"
    _same(got, want, f"{what} forward", op.values)

    # backward: floating inputs as leaves, the outputs that require grad seeded with fixed values
    eargs, ekwargs, eout, eerr = _call_eager(op, form, s, seed, leaves=True)
    if eerr is not None:
        return
    leaves = [t for t in _inputs(eargs, ekwargs) if t.requires_grad]
    outs = _flat(eout)
    rng = np.random.default_rng(seed)
    grads = [_seed(rng, o) if isinstance(o, flow.Tensor) and o.requires_grad and _differentiable(o) else None
             for o in outs]
    if not leaves or all(g is None for g in grads):
        return
    loss = sum(_term(o, g) for o, g in zip(outs, grads) if g is not None)
    _, berr = _outcome(loss.backward)
    if berr is not None:
        return  # eager's own backward refuses (test_ops_grad.py's subject, not the graph's)
    gargs, gkwargs = materialize(s.args, flow), materialize(s.kwargs, flow)
    gleaves = [t for t in _inputs(gargs, gkwargs) if _differentiable(t)]
    for t in gleaves:
        t.requires_grad_(True)
    train = _OpGraph(lambda *a, **kw: invoke(op, form, flow, a, kw), grads)
    flow.manual_seed(seed)
    _, terr = _outcome(train, *gargs, **gkwargs)
    assert terr is None, f"{what}: the training graph raised {type(terr).__name__}: {str(terr)[:300]}"
    for i, (g, e) in enumerate(zip(gleaves, leaves)):
        assert (g.grad is None) == (e.grad is None), f"{what}: grad of input {i}: graph {g.grad is not None}, eager {e.grad is not None}"
        if e.grad is not None:
            _same(g.grad, e.grad, f"{what} grad of input {i}")
    (compiled,) = train._compiled.values()
    return compiled.backward_steps  # why the backward stayed a Python step; [] = nodes


def _backward_steps(op, dtype):
    """Per sample with a backward: its `backward_steps` (forward/grad failures are _run's)."""
    steps = []
    for k, s in enumerate(op.sample_list(dtype)):
        try:
            why = _check_sample(op, dtype, s, k)
        except AssertionError:
            continue
        if why is not None:
            steps.append((s.desc or str(k), why))
    return steps


def _run(op, dtype):
    failures, steps, trained = [], [], 0
    for k, s in enumerate(op.sample_list(dtype)):
        try:
            why = _check_sample(op, dtype, s, k)
        except AssertionError as e:
            failures.append(str(e).replace("\n", " | ")[:500])
            continue
        trained += why is not None
        if why:
            steps.append(f"{s.desc or k}: {'; '.join(why)}"[:300])
    gap = GRAPH_GAPS.get((op.name, dtype)) or GRAPH_GAPS.get(op.name)
    if gap is not None:
        reason, sign = gap
        assert failures, f"{op.name} [{dtype}] traces now: remove it from GRAPH_GAPS ({reason})"
        others = [f for f in failures if sign not in f]
        assert not others, (f"{op.name} [{dtype}]: {len(others)} sample(s) failing for another reason than its "
                            f"GRAPH_GAPS entry ({reason}):\n  " + "\n  ".join(others))
        return
    if failures:
        pytest.fail(f"{op.name} [{dtype}]: {len(failures)} failing sample(s):\n  " + "\n  ".join(failures))
    known = BACKWARD_STEPS.get((op.name, dtype)) or BACKWARD_STEPS.get(op.name)
    if known is not None and trained:
        assert steps, f"{op.name} [{dtype}]: every backward is nodes now: remove it from BACKWARD_STEPS ({known})"
    elif steps:
        pytest.fail(f"{op.name} [{dtype}]: {len(steps)} sample(s) whose backward is a Python step (a formula "
                    "that reads values: mark the op `traced: local` in the table):\n  "
                    + "\n  ".join(steps))


def _ci_dtype(op):
    return "float32" if "float32" in op.dtypes else op.dtypes[0]


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_graph_vs_eager(op):
    """One dtype of every op (float32 where listed)."""
    _run(op, _ci_dtype(op))


@pytest.mark.slow(seconds=1)  # (one op in one dtype: a second or less)
@pytest.mark.parametrize("op,dtype", [(op, dt) for op in OPS for dt in op.dtypes if dt != _ci_dtype(op)],
                         ids=lambda v: v if isinstance(v, str) else v.name)
def test_graph_vs_eager_every_dtype(op, dtype):
    _run(op, dtype)


def _coverage(dtype=None):
    """Per op with a backward sample: 'all' / 'some' / 'none' of them traced as nodes."""
    rows = {}
    for op in OPS:
        per = _backward_steps(op, dtype or _ci_dtype(op)) if (dtype is None or dtype in op.dtypes) else []
        if not per:
            continue
        stepped = [(d, w) for d, w in per if w]
        kind = "all" if not stepped else ("none" if len(stepped) == len(per) else "some")
        rows[op.name] = (kind, len(per), stepped[0] if stepped else None)
    return rows


if __name__ == "__main__":
    import sys
    rows = _coverage(sys.argv[1] if len(sys.argv) > 1 else None)
    for name, (kind, n, first) in sorted(rows.items()):
        if kind != "all":
            print(f"{kind:5} {name} ({n} samples): {first[0]}: {'; '.join(first[1])[:200]}")
    counts = {k: sum(1 for r in rows.values() if r[0] == k) for k in ("all", "some", "none")}
    print(f"{len(rows)} ops with a backward: every sample's backward as nodes {counts['all']}, "
          f"some {counts['some']}, none {counts['none']}")
