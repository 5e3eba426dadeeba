"""Module hooks against torch: forward pre-hooks and hooks (order, prepend, with_kwargs,
always_call, return values, removal) and full backward hooks / pre-hooks (gradients seen,
gradients replaced, None for non-tensors and unused outputs)."""
import warnings

import numpy as np
import pytest
import torch

from harness import flow
from nn_util import arr, close


def np_or_none(x):
    if x is None:
        return None
    return np.round(x.detach().numpy().astype(np.float64), 5).tolist()


def run_both(scenario):
    """scenario(lib, log) -> anything comparable; returns (flow result, torch result)."""
    logs = {}
    results = {}
    for lib in (flow, torch):
        logs[lib] = []
        results[lib] = scenario(lib, logs[lib])
    assert logs[flow] == logs[torch], (logs[flow], logs[torch])
    return results[flow], results[torch]


# ---------------------------------------------------------------------------
# Forward hooks


def _forward_order(lib, log):
    m = lib.nn.Linear(2, 2)
    m.register_forward_pre_hook(lambda mod, args: log.append("pre1"))
    m.register_forward_pre_hook(lambda mod, args: log.append("pre0"), prepend=True)
    m.register_forward_hook(lambda mod, args, out: log.append("post1"))
    m.register_forward_hook(lambda mod, args, out: log.append("post0"), prepend=True)
    m.register_forward_pre_hook(lambda mod, args, kwargs: log.append(("prekw", kwargs)),
                                with_kwargs=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: log.append(("postkw", kwargs)),
                            with_kwargs=True)
    m(lib.ones(1, 2))


def test_forward_hook_order():
    run_both(_forward_order)


def _forward_modify(lib, log):
    m = lib.nn.Linear(2, 2)
    with lib.no_grad():
        m.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
        m.bias.zero_()
    m.register_forward_pre_hook(lambda mod, args: args[0] * 2)  # a single value is wrapped
    m.register_forward_pre_hook(lambda mod, args: (args[0] + 1,))
    m.register_forward_hook(lambda mod, args, out: out * 10)
    m.register_forward_hook(lambda mod, args, out: log.append(np_or_none(args[0])))
    return np_or_none(m(lib.ones(1, 2)))


def test_forward_hooks_replace_inputs_and_outputs():
    f, t = run_both(_forward_modify)
    assert f == t == [[90.0, 210.0]]


def _forward_kwargs(lib, log):
    class Scale(lib.nn.Module):
        def forward(self, x, *, factor=1.0):
            return x * factor

    m = Scale()
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"factor": 3.0}), with_kwargs=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: log.append(kwargs["factor"]) or out + 1,
                            with_kwargs=True)
    return np_or_none(m(lib.ones(2), factor=2.0))


def test_forward_hooks_with_kwargs():
    f, t = run_both(_forward_kwargs)
    assert f == t == [4.0, 4.0]


def _bad_pre_hook(lib):
    m = lib.nn.ReLU()
    m.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
    m(lib.ones(1))


def test_with_kwargs_pre_hook_must_return_a_pair():
    with pytest.raises(RuntimeError) as te:
        _bad_pre_hook(torch)
    with pytest.raises(RuntimeError) as fe:
        _bad_pre_hook(flow)
    assert str(fe.value) == str(te.value)


def _always_call(lib, log):
    class Boom(lib.nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Boom()
    m.register_forward_hook(lambda mod, args, out: log.append(("always", out)), always_call=True)
    m.register_forward_hook(lambda mod, args, out: log.append("normal"))
    try:
        m(lib.ones(1))
    except ValueError as e:
        log.append(str(e))


def test_always_call_hooks_run_when_forward_raises():
    run_both(_always_call)


def _removal(lib, log):
    m = lib.nn.ReLU()
    h1 = m.register_forward_hook(lambda mod, args, out: log.append("a"), with_kwargs=False,
                                 always_call=True)
    h2 = m.register_forward_pre_hook(lambda mod, args, kwargs: log.append("b"), with_kwargs=True)
    m(lib.ones(1))
    h1.remove()
    h2.remove()
    h1.remove()  # twice is harmless
    m(lib.ones(1))
    with m.register_forward_hook(lambda mod, args, out: log.append("ctx")):
        m(lib.ones(1))
    m(lib.ones(1))
    return (len(m._forward_hooks), len(m._forward_hooks_always_called),
            len(m._forward_pre_hooks_with_kwargs))


def test_handles_remove_hooks_and_their_flags():
    f, t = run_both(_removal)
    assert f == t == (0, 0, 0)


def test_hooks_on_submodules_run_in_call_order():
    def scenario(lib, log):
        net = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU(), lib.nn.Linear(2, 1))
        for name, sub in net.named_modules():
            sub.register_forward_pre_hook(lambda mod, args, name=name: log.append(("pre", name)))
            sub.register_forward_hook(lambda mod, args, out, name=name: log.append(("post", name)))
        net(lib.ones(3, 2))

    run_both(scenario)


# ---------------------------------------------------------------------------
# Full backward hooks


class _Pair:
    """Builds `forward(a, b, c=None) -> (a * b, a + b)` in a lib."""

    @staticmethod
    def make(lib):
        class Pair(lib.nn.Module):
            def forward(self, a, b, c=None):
                return a * b, a + b
        return Pair()


def _backward_basic(lib, log, b_requires_grad, use_second=True, extra=None):
    m = _Pair.make(lib)
    m.register_full_backward_pre_hook(
        lambda mod, go: log.append(("pre", [np_or_none(g) for g in go])))
    m.register_full_backward_hook(
        lambda mod, gi, go: log.append(("full", [np_or_none(g) for g in gi],
                                        [np_or_none(g) for g in go])))
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, -1.0], requires_grad=b_requires_grad)
    args = (a, b) if extra is None else (a, b, extra)
    x, y = m(*args)
    loss = (x * lib.tensor([1.0, 2.0])).sum()
    if use_second:
        loss = loss + (y * 3).sum()
    loss.backward()
    return np_or_none(a.grad), np_or_none(b.grad) if b_requires_grad else None


@pytest.mark.parametrize("b_requires_grad", [True, False])
@pytest.mark.parametrize("use_second", [True, False])
@pytest.mark.parametrize("extra", [None, 7])
def test_full_backward_hook_sees_torch_gradients(b_requires_grad, use_second, extra):
    f, t = run_both(lambda lib, log: _backward_basic(lib, log, b_requires_grad, use_second, extra))
    assert f == t


def _backward_replace(lib, log):
    m = lib.nn.Linear(2, 2)
    with lib.no_grad():
        m.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
    m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 2,))
    m.register_full_backward_hook(lambda mod, gi, go: log.append(np_or_none(gi[0])))
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] + 100,))
    x = lib.tensor([[1.0, 1.0]], requires_grad=True)
    m(x).sum().backward()
    return np_or_none(x.grad), np_or_none(m.weight.grad)


def test_backward_hooks_replace_gradients():
    f, t = run_both(_backward_replace)
    assert f == t
    assert f[0] == [[108.0, 112.0]]  # (2 * [1, 1] @ W) + 100
    assert f[1] == [[2.0, 2.0], [2.0, 2.0]]  # parameter grads see the pre-hook's doubling


def _backward_prepend_and_remove(lib, log):
    m = lib.nn.Tanh()
    h = m.register_full_backward_hook(lambda mod, gi, go: log.append("first"))
    m.register_full_backward_hook(lambda mod, gi, go: log.append("zeroth"), prepend=True)
    m.register_full_backward_pre_hook(lambda mod, go: log.append("pre1"))
    m.register_full_backward_pre_hook(lambda mod, go: log.append("pre0"), prepend=True)
    x = lib.ones(2, requires_grad=True)
    m(x).sum().backward()
    h.remove()
    m(x).sum().backward()


def test_backward_hook_prepend_and_removal():
    run_both(_backward_prepend_and_remove)


def _backward_no_input_grad(lib, log):
    p = lib.nn.Parameter(lib.tensor([2.0, 3.0]))

    class Mul(lib.nn.Module):
        def forward(self, x):
            return x * p

    m = Mul()
    m.register_full_backward_hook(
        lambda mod, gi, go: log.append((gi, [np_or_none(g) for g in go])))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m(lib.ones(2)).sum().backward()
    log.append(any("Full backward hook is firing when gradients are computed with respect to "
                   "module outputs since no inputs require gradients" in str(x.message) for x in w))
    return np_or_none(p.grad)


def test_full_backward_hook_without_input_grads_fires_on_outputs():
    f, t = run_both(_backward_no_input_grad)
    assert f == t == [1.0, 1.0]


def _bad_backward_hook(lib, pre):
    m = lib.nn.Tanh()
    if pre:
        m.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
    else:
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    m(lib.ones(2, requires_grad=True)).sum().backward()


@pytest.mark.parametrize("pre", [True, False])
def test_backward_hook_wrong_count_is_an_error(pre):
    with pytest.raises(RuntimeError) as te:
        _bad_backward_hook(torch, pre)
    with pytest.raises(RuntimeError) as fe:
        _bad_backward_hook(flow, pre)
    assert str(te.value) in str(fe.value)


def test_module_inputs_and_outputs_are_views_when_backward_hooks_are_set():
    seen = []

    class Keep(flow.nn.Module):
        def forward(self, x):
            seen.append(x)
            return x * 2

    m = Keep()
    m.register_full_backward_hook(lambda mod, gi, go: None)
    x = flow.tensor(arr(3), requires_grad=True)
    y = m(x)
    assert seen[0] is not x and seen[0]._shares_storage(x)
    y.sum().backward()
    close(x.grad, np.full(3, 2.0))


def test_backward_hooks_need_grad_mode():
    calls = []
    m = flow.nn.Tanh()
    m.register_full_backward_hook(lambda *a: calls.append(1))
    x = flow.ones(2, requires_grad=True)
    with flow.no_grad():
        y = m(x)
    assert not y.requires_grad and calls == []


def test_backward_hooks_leave_no_uncollectable_cycle():
    import gc
    import weakref

    class Remember(flow.nn.Module):
        def forward(self, x):
            self.last = x * 2  # the module keeps its output, whose graph holds the hooks
            return self.last

    m = Remember()
    m.register_full_backward_hook(lambda mod, gi, go: None)
    m(flow.ones(2, requires_grad=True)).sum().backward()
    ref = weakref.ref(m)
    del m
    gc.collect()
    assert ref() is None
