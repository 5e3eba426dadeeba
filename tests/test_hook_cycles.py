"""Note [Hooks and the garbage collector]: a leaf's hooks that refer back to it (through a module)
form a cycle the collector must see: the module is freed after gc.collect(), the hooks keep
working while it lives, and a script ending with such a hook exits without nanobind's leak
report."""
import gc
import os
import subprocess
import sys
import weakref

import pytest

import oneflow as flow


class Scaled(flow.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = flow.nn.Linear(2, 2)
        self.scale, self.seen = 2.0, []
        self.lin.weight.register_hook(lambda g: g * self.scale)
        self.lin.bias.register_post_accumulate_grad_hook(lambda p: self.seen.append(p.grad.clone()))

    def forward(self, x):
        return self.lin(x)


def test_hooks_survive_a_collection_while_the_module_lives():
    m = Scaled()
    x = flow.ones(3, 2)
    m(x).sum().backward()
    first = m.lin.weight.grad.clone()
    gc.collect()
    m.zero_grad()
    m(x).sum().backward()
    assert flow.equal(m.lin.weight.grad, first) and len(m.seen) == 2
    assert flow.equal(first, flow.full((2, 2), 6.0))  # the weight hook doubled the gradient of 3 ones


def test_a_module_with_hook_cycles_is_collected():
    m = Scaled()
    m(flow.ones(1, 2)).sum().backward()
    ref = weakref.ref(m)
    del m
    gc.collect()
    assert ref() is None


def test_hook_held_by_a_graph_is_not_cleared():
    # the leaf's wrapper goes away while the graph still holds the tensor: its hook must run
    seen = []
    x = flow.ones(3, requires_grad=True)
    x.register_hook(lambda g: seen.append(1))
    y = (x * 2).sum()
    del x
    gc.collect()
    y.backward()
    assert seen == [1]


def stderr_of(code, env=None):
    """What a script writes to stderr (it must succeed)."""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    return r.stderr


def test_no_leak_report_at_exit():
    err = stderr_of("import oneflow as flow\n"
                    "x = flow.ones(3, requires_grad=True)\n"
                    "x.register_hook(lambda g: x)\n"
                    "x.register_post_accumulate_grad_hook(lambda p: None)\n"
                    "(x * 2).sum().backward()\n")
    assert "leaked" not in err, err


@pytest.mark.parametrize("forward", ["x * 2", "x"])
def test_no_leak_report_for_a_function_output_alive_at_exit(forward):
    """An autograd.Function's output kept by the script: output -> node -> backward closure ->
    Function class -> module globals -> output, a cycle through C++ that the Tensor type's
    traversal shows the collector (autograd_bind.cpp, SoleNode)."""
    err = stderr_of("import oneflow as flow\n"
                    "class F(flow.autograd.Function):\n"
                    "    @staticmethod\n"
                    f"    def forward(ctx, x): return {forward}\n"
                    "    @staticmethod\n"
                    "    def backward(ctx, g): return g\n"
                    "x = flow.ones(3, requires_grad=True)\n"
                    "o = F.apply(x)\n")
    assert "leaked" not in err, err


def test_no_report_at_exit_for_users():
    """A module's full backward hook with its output alive at exit still forms a cycle the
    collector cannot see whole (the hook object is also held by the input's node, deep in the
    C++ graph): nanobind's report of it is for developers (ONEFLOW_LEAK_WARNINGS=1), not users."""
    env = {k: v for k, v in os.environ.items() if k != "ONEFLOW_LEAK_WARNINGS"}
    err = stderr_of("import oneflow as flow\n"
                    "x = flow.ones(3, requires_grad=True)\n"
                    "m = flow.nn.Linear(3, 2)\n"
                    "m.register_full_backward_hook(lambda *a: None)\n"
                    "y = m(x)\n", env)
    assert err == "", err


def test_a_function_output_in_a_collected_cycle_still_backpropagates():
    class F(flow.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = flow.ones(2, requires_grad=True)
    y = F.apply(x)
    holder = [y]
    holder.append(holder)  # a Python cycle around the output, collected while y lives on
    del holder
    gc.collect()
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
