"""Note [Hooks and the garbage collector]: a leaf's hooks that refer back to it (through a module)
form a cycle the collector must see: the module is freed after gc.collect(), the hooks keep
working while it lives, and a script ending with such a hook exits without nanobind's leak
report."""
import gc
import subprocess
import sys
import weakref

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


def test_no_leak_report_at_exit():
    code = ("import oneflow as flow\n"
            "x = flow.ones(3, requires_grad=True)\n"
            "x.register_hook(lambda g: x)\n"
            "x.register_post_accumulate_grad_hook(lambda p: None)\n"
            "(x * 2).sum().backward()\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "leaked" not in r.stderr, r.stderr
