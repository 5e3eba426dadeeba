"""autograd.graph's Node interface and hooks (Note [Node hooks] in src/autograd/node.h),
register_multi_grad_hook and increment_version, against torch."""
import gc
import weakref

import pytest
import torch

import oneflow as flow


def _both(fn):
    return fn(torch), fn(flow)


def _lists(gs):
    return [None if g is None else g.tolist() for g in gs]


def test_grad_fn_is_a_node():
    for lib in (torch, flow):
        x = lib.tensor([1.0], requires_grad=True)
        assert isinstance((x * 2).grad_fn, lib.autograd.graph.Node)
        assert isinstance((x * 2).grad_fn.next_functions[0][0], lib.autograd.graph.Node)  # AccumulateGrad
        assert not isinstance(x, lib.autograd.graph.Node)


def test_node_prehook_and_hook_see_and_replace_gradients():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([0.5, -1.0], requires_grad=True)
        y = x * w
        log = []
        y.grad_fn.register_prehook(lambda go: log.append(("pre", _lists(go))))
        y.grad_fn.register_prehook(lambda go: (go[0] * 2,))  # replaces the incoming gradient
        y.grad_fn.register_hook(lambda gi, go: log.append(("post", _lists(gi), _lists(go))))
        h = y.grad_fn.register_hook(lambda gi, go: (gi[0] + 1, None))  # and the produced ones
        y.sum().backward()
        out = [log, x.grad.tolist(), w.grad]
        h.remove()
        x.grad = None
        (x * w).sum().backward()  # a new node: no hooks
        return out + [x.grad.tolist()]

    t, f = _both(run)
    assert t == f


def test_node_hook_errors_and_removal():
    for lib in (torch, flow):
        x = lib.tensor([1.0], requires_grad=True)
        y = x * 2
        y.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0]))
        with pytest.raises(RuntimeError, match="can't replace a None gradient"):
            y.sum().backward()
        y = x * 2
        y.grad_fn.register_hook(lambda gi, go: (gi[0],))
        with pytest.raises(RuntimeError, match="incorrect number of values"):
            y.sum().backward()
    x = flow.tensor([1.0], requires_grad=True)
    y = x.exp()
    with y.grad_fn.register_prehook(lambda go: (go[0] * 100,)):
        pass  # removed on exit
    y.backward()
    assert abs(x.grad.item() - 2.718281828) < 1e-5
    y = x.exp()
    y.grad_fn.register_prehook(lambda go: 3)
    with pytest.raises(TypeError, match="None or a tuple"):
        y.backward()


def test_node_hooks_only_run_when_the_node_runs():
    def run(lib):
        a = lib.tensor([1.0], requires_grad=True)
        b = lib.tensor([2.0], requires_grad=True)
        u, v = a * 3, b * 4
        ran = []
        v.grad_fn.register_prehook(lambda go: ran.append("v"))
        u.grad_fn.register_prehook(lambda go: ran.append("u"))
        lib.autograd.grad((u + v).sum(), [a])  # v's node is off the path to a
        return ran

    t, f = _both(run)
    assert t == f == ["u"]


def test_a_node_hook_closing_over_its_output_is_collected():
    class Box:
        pass

    box = Box()
    x = flow.tensor([1.0], requires_grad=True)
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go, y=y, box=box: None)  # y -> node -> hook -> y
    ref = weakref.ref(box)
    del y, box
    gc.collect()
    assert ref() is None


def test_multi_grad_hook_all_and_any():
    def run(lib):
        a = lib.tensor([1.0], requires_grad=True)
        b = lib.tensor([2.0], requires_grad=True)
        c = a * 1.5  # a non-leaf among them
        seen, first = [], []
        h = lib.autograd.graph.register_multi_grad_hook((a, b, c), lambda gs: seen.append(_lists(gs)))
        (c * 2 + b * 5).sum().backward()
        (a * 7).sum().backward()  # b and c get nothing
        lib.autograd.graph.register_multi_grad_hook((a, b), lambda g: first.append(g.tolist()), mode="any")
        (a * 2 + b * 5).sum().backward()
        (a * 3).sum().backward()
        h.remove()
        (a * 2 + b).sum().backward()
        return seen, first

    t, f = _both(run)
    assert t == f
    with pytest.raises(ValueError, match="mode"):
        flow.autograd.graph.register_multi_grad_hook((flow.ones(1, requires_grad=True),), print, mode="some")


def test_increment_version_invalidates_saved_tensors():
    for lib in (torch, flow):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        z = y * y  # saves y
        v = y._version
        lib.autograd.graph.increment_version(y)
        assert y._version == v + 1
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()
