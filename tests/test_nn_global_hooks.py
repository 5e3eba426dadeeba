"""Module-global hooks (nn.modules.module.register_module_*) against torch's: order relative to
the modules' own hooks, arguments seen, replaced args / outputs / gradients / registered values,
always_call with a raising forward, and handle.remove(). Every test removes its global hooks in a
finally block, so nothing leaks into other tests."""
import contextlib

import numpy as np
import pytest
import torch

from harness import flow
from nn_util import arr, close, twins


def gmod(lib):
    return lib.nn.modules.module


@contextlib.contextmanager
def global_hooks(lib, *registrations):
    """registrations: (name of a register_module_* function, hook[, kwargs]); removed on exit."""
    handles = []
    try:
        for reg in registrations:
            name, hook = reg[0], reg[1]
            kwargs = reg[2] if len(reg) > 2 else {}
            handles.append(getattr(gmod(lib), "register_module_" + name)(hook, **kwargs))
        yield handles
    finally:
        for h in handles:
            h.remove()


def shapes(args):
    return [tuple(a.shape) if hasattr(a, "shape") else a for a in args]


def run_both(scenario):
    """scenario(lib, log) -> result; the logs of flow and torch must be equal."""
    logs, results = {}, {}
    for lib in (flow, torch):
        logs[lib] = []
        results[lib] = scenario(lib, logs[lib])
    assert logs[flow] == logs[torch], (logs[flow], logs[torch])
    assert logs[flow], "scenario logged nothing"
    return results[flow], results[torch]


def make_seq(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))


X = arr(5, 3)


def test_no_global_hooks_left_behind():
    # The fast-path flag dict is empty once every handle is removed.
    with global_hooks(flow, ("forward_pre_hook", lambda m, a: None),
                      ("forward_hook", lambda m, a, o: None, {"always_call": True}),
                      ("full_backward_hook", lambda m, gi, go: None),
                      ("full_backward_pre_hook", lambda m, go: None)):
        assert len(flow.nn.modules.module._global_call_hooks) == 4
    assert not flow.nn.modules.module._global_call_hooks
    assert not flow.nn.modules._module_hooks._global_forward_hooks_always_called


def test_forward_order_and_arguments():
    fm, tm = twins(make_seq)

    def scenario(lib, log):
        m = fm if lib is flow else tm
        local = [m.register_forward_pre_hook(lambda mod, a: log.append(("local_pre", shapes(a)))),
                 m.register_forward_hook(
                     lambda mod, a, o: log.append(("local_post", shapes(a), tuple(o.shape)))),
                 m[0].register_forward_hook(lambda mod, a, o: log.append(("lin0_post",)))]
        try:
            with global_hooks(
                    lib,
                    ("forward_pre_hook", lambda mod, a: log.append(
                        ("g_pre", type(mod).__name__, shapes(a)))),
                    ("forward_hook", lambda mod, a, o: log.append(
                        ("g_post", type(mod).__name__, shapes(a), tuple(o.shape)))),
                    ("forward_pre_hook", lambda mod, a: log.append(("g_pre2",)))):
                return m(lib.tensor(X)).detach().numpy()
        finally:
            for h in local:
                h.remove()

    out_f, out_t = run_both(scenario)
    np.testing.assert_allclose(out_f, out_t, rtol=1e-5, atol=1e-6)


def test_replacement_of_args_and_output():
    fm, tm = twins(lambda lib: lib.nn.Linear(3, 2))

    def scenario(lib, log):
        m = fm if lib is flow else tm
        local = [m.register_forward_pre_hook(
                     lambda mod, a: log.append(round(float(a[0].sum()), 4))),
                 m.register_forward_hook(lambda mod, a, o: o * 3)]
        try:
            with global_hooks(lib, ("forward_pre_hook", lambda mod, a: a[0] * 2),  # non-tuple
                              ("forward_hook", lambda mod, a, o: o + 1)):
                out = m(lib.tensor(X))
            log.append(round(float(out.detach().sum()), 4))
            out_after = m(lib.tensor(X))  # hooks removed: only the local ones are left
            return out.detach().numpy(), out_after.detach().numpy()
        finally:
            for h in local:
                h.remove()

    (of, of2), (ot, ot2) = run_both(scenario)
    np.testing.assert_allclose(of, ot, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(of2, ot2, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(of, (fm(flow.tensor(X * 2)).detach().numpy() + 1) * 3, rtol=1e-5)


def test_forward_hook_with_kwargs():
    def scenario(lib, log):
        class Scale(lib.nn.Module):
            def forward(self, x, scale=1.0):
                return x * scale

        def hook(mod, a, kw, o):
            log.append((shapes(a), dict(kw)))
            return o - kw["scale"]

        with global_hooks(lib, ("forward_hook", hook, {"with_kwargs": True})):
            return Scale()(lib.tensor(X), scale=2.0).numpy()

    of, ot = run_both(scenario)
    np.testing.assert_allclose(of, ot, rtol=1e-6)
    np.testing.assert_allclose(of, X * 2 - 2, rtol=1e-6)


@pytest.mark.parametrize("always_call", [True, False])
def test_always_call_with_raising_forward(always_call):
    def scenario(lib, log):
        class Boom(lib.nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        m = Boom()
        local = m.register_forward_hook(lambda mod, a, o: log.append(("local", o)),
                                        always_call=True)
        try:
            with global_hooks(lib, ("forward_hook", lambda mod, a, o: log.append(("g", o)),
                                    {"always_call": always_call}),
                              ("forward_hook", lambda mod, a, o: log.append(("g_plain", o)))):
                with pytest.raises(ValueError, match="boom"):
                    m(lib.tensor(X))
        finally:
            local.remove()
        return None

    run_both(scenario)
    scenario_log = []
    # Spelled out for flow: the global always-called hook runs first, with output None.
    with global_hooks(flow, ("forward_hook", lambda mod, a, o: scenario_log.append(o),
                             {"always_call": always_call})):
        with pytest.raises(RuntimeError):
            flow.nn.Linear(3, 2)(flow.tensor(arr(5, 4)))
    assert scenario_log == ([None] if always_call else []), scenario_log


def test_always_call_hook_runs_once_when_forward_succeeds():
    def scenario(lib, log):
        with global_hooks(lib, ("forward_hook", lambda mod, a, o: log.append(type(mod).__name__),
                                {"always_call": True})):
            make_seq(lib)(lib.tensor(X))

    run_both(scenario)


def test_backward_hooks_order_shapes_and_values():
    fm, tm = twins(make_seq)

    def fmt(grads):
        return [None if g is None else np.round(g.detach().numpy().astype(np.float64), 5).tolist()
                for g in grads]

    def scenario(lib, log):
        m = fm if lib is flow else tm
        local = [m[2].register_full_backward_pre_hook(
                     lambda mod, go: log.append(("local_pre", type(mod).__name__, fmt(go)))),
                 m[2].register_full_backward_hook(
                     lambda mod, gi, go: log.append(("local", type(mod).__name__, fmt(gi),
                                                     fmt(go))))]
        try:
            with global_hooks(
                    lib,
                    ("full_backward_pre_hook", lambda mod, go: log.append(
                        ("g_pre", type(mod).__name__, shapes(go), fmt(go)))),
                    ("full_backward_hook", lambda mod, gi, go: log.append(
                        ("g", type(mod).__name__, shapes(gi), shapes(go), fmt(gi))))):
                x = lib.tensor(X, requires_grad=True)
                m(x).sum().backward()
            log.append("done")
            return x.grad.numpy(), m[0].weight.grad.numpy()
        finally:
            for h in local:
                h.remove()
            for p in m.parameters():
                p.grad = None

    (xf, wf), (xt, wt) = run_both(scenario)
    np.testing.assert_allclose(xf, xt, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(wf, wt, rtol=1e-5, atol=1e-6)


def test_backward_hooks_replace_gradients():
    fm, tm = twins(lambda lib: lib.nn.Linear(3, 2))

    def scenario(lib, log):
        m = fm if lib is flow else tm

        def local_hook(mod, gi, go):
            log.append(("local_sees_doubled_go", round(float(go[0].sum()), 4)))
            return (gi[0] + 1,)

        local = m.register_full_backward_hook(local_hook)
        try:
            with global_hooks(lib, ("full_backward_pre_hook", lambda mod, go: (go[0] * 2,)),
                              ("full_backward_hook", lambda mod, gi, go: (gi[0] * 10,))):
                x = lib.tensor(X, requires_grad=True)
                m(x).sum().backward()
            return x.grad.numpy(), m.weight.grad.numpy()
        finally:
            local.remove()
            m.weight.grad = None
            m.bias.grad = None

    (xf, wf), (xt, wt) = run_both(scenario)
    np.testing.assert_allclose(xf, xt, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(wf, wt, rtol=1e-5, atol=1e-5)
    # global pre doubles grad_output; global hook scales grad_input by 10, then local adds 1
    w = fm.weight.detach().numpy()
    np.testing.assert_allclose(xf, np.full((5, 2), 2.0) @ w * 10 + 1, rtol=1e-5, atol=1e-5)


def test_buffer_registration_hook():
    def scenario(lib, log):
        def hook(mod, name, buf):
            log.append((type(mod).__name__, name, None if buf is None else tuple(buf.shape)))
            if name == "replace_me":
                return lib.zeros(7)
            return None

        m = lib.nn.Module()
        with global_hooks(lib, ("buffer_registration_hook", hook)):
            m.register_buffer("a", lib.ones(2))
            m.register_buffer("replace_me", lib.ones(3), persistent=False)
            m.register_buffer("none", None)
            m.a = lib.ones(4)  # assignment to an existing buffer goes through register_buffer
            bn = lib.nn.BatchNorm1d(3)
        m.register_buffer("after", lib.ones(1))  # removed: not logged
        return (m.replace_me.numpy().tolist(), tuple(m.a.shape), sorted(m.state_dict()),
                sorted(bn.state_dict()))

    rf, rt = run_both(scenario)
    assert rf == rt
    assert rf[0] == [0.0] * 7


def test_parameter_registration_hook():
    def scenario(lib, log):
        def hook(mod, name, p):
            log.append((type(mod).__name__, name, tuple(p.shape)))
            if name == "replace_me":
                return lib.nn.Parameter(lib.full((2,), 5.0))
            return None

        m = lib.nn.Module()
        with global_hooks(lib, ("parameter_registration_hook", hook)):
            m.register_parameter("replace_me", lib.nn.Parameter(lib.ones(3)))
            m.register_parameter("none", None)  # not a Parameter: the hooks are not called
            m.w = lib.nn.Parameter(lib.ones(2, 2))
            lib.nn.Linear(3, 4)
        return m.replace_me.detach().numpy().tolist(), sorted(n for n, _ in m.named_parameters())

    rf, rt = run_both(scenario)
    assert rf == rt
    assert rf[0] == [5.0, 5.0]


def test_module_registration_hook():
    def scenario(lib, log):
        def hook(mod, name, sub):
            log.append((type(mod).__name__, name, type(sub).__name__))
            if name == "swap":
                return lib.nn.Tanh()
            return None

        m = lib.nn.Module()
        with global_hooks(lib, ("module_registration_hook", hook)):
            m.add_module("lin", lib.nn.Linear(2, 2))
            m.register_module("swap", lib.nn.ReLU())
            m.seq = lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Sigmoid())
            m.lin = None  # clearing a registered submodule also goes through the hooks
        m.late = lib.nn.ReLU()  # removed: not logged
        return type(m.swap).__name__, [n for n, _ in m.named_children()]

    rf, rt = run_both(scenario)
    assert rf == rt
    assert rf[0] == "Tanh"


def test_module_registration_hook_replaces_on_assignment():
    def scenario(lib, log):
        m = lib.nn.Module()
        with global_hooks(lib, ("module_registration_hook",
                                lambda mod, name, sub: log.append(name) or lib.nn.Identity())):
            m.child = lib.nn.ReLU()
        return type(m.child).__name__, float(m.child(lib.tensor([-1.0])))

    rf, rt = run_both(scenario)
    assert rf == rt == ("Identity", -1.0)


def test_handle_remove_and_context_manager():
    def scenario(lib, log):
        lin = lib.nn.Linear(3, 2)
        h1 = gmod(lib).register_module_forward_pre_hook(lambda mod, a: log.append("pre"))
        try:
            h2 = gmod(lib).register_module_forward_hook(lambda mod, a, o: log.append("post"))
            try:
                lin(lib.tensor(X))
                h2.remove()
                h2.remove()  # idempotent
                lin(lib.tensor(X))
            finally:
                h2.remove()
        finally:
            h1.remove()
        lin(lib.tensor(X))
        with gmod(lib).register_module_forward_hook(lambda mod, a, o: log.append("ctx")):
            lin(lib.tensor(X))
        lin(lib.tensor(X))
        return None

    run_both(scenario)
    assert not flow.nn.modules.module._global_call_hooks


def test_global_hooks_apply_to_modules_created_before_and_after():
    def scenario(lib, log):
        before = lib.nn.ReLU()
        with global_hooks(lib, ("forward_hook", lambda mod, a, o: log.append(type(mod).__name__))):
            after = lib.nn.Tanh()
            before(lib.tensor(X))
            after(lib.tensor(X))
        before(lib.tensor(X))
        return None

    run_both(scenario)
