"""nn.Graph's program as text and its passes (src/graph/ir.cpp, src/graph/passes.{h,cpp}).

The program prints one node a line with the slot's dtype and sizes and the user's source line;
``print(graph)`` after a call is the module tree with each module's operators. Each pass is
checked alone (the others off): it removes what it should from the program, and the outputs
(and a training run's losses and parameters) are bit for bit those of the program without passes
and of eager; the cases where a pass must not act (random ops, values written in place or
returned, buffers updated by an op whose output is unused) are checked too."""
import inspect
import re

import numpy as np
import pytest

import oneflow as flow

PASSES = ("simplify", "fold", "cse", "dce")
SWITCH = {"simplify": "enable_algebraic_simplification", "fold": "enable_constant_folding",
          "cse": "enable_common_subexpression_elimination", "dce": "enable_dead_code_elimination"}
# the fusion passes and the arena: tests/test_graph_fusion.py (off where `only` is given)
OTHERS = ("enable_producer_fusion", "allow_fuse_add_to_output", "enable_pointwise_fusion", "enable_auto_memory")


class Fn(flow.nn.Graph):
    def __init__(self, fn, only=None, **modules):
        super().__init__()
        self.fn = fn
        for k, m in modules.items():
            setattr(self, k, m)
        if only is not None:  # only these passes on
            for p in PASSES:
                getattr(self.config, SWITCH[p])(p in only)
            for switch in OTHERS:
                getattr(self.config, switch)(False)

    def build(self, *args):
        return self.fn(self, *args)


def _text(g):
    (text,) = g._programs()
    return text


def _ops(g):
    return re.findall(r"= (\w+)\(", _text(g))


def _stats(g):
    (c,) = g._compiled.values()
    return c.pass_stats


def _same(a, b):
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def _ab(fn, pass_name, *inputs, **modules):
    """(graph with only `pass_name`, graph without passes): each run twice, outputs equal to each
    other and to eager."""
    on, off = Fn(fn, {pass_name}, **modules), Fn(fn, set(), **modules)
    eager = fn(type("E", (), modules)(), *inputs)
    for _ in range(2):
        a, b = on(*inputs), off(*inputs)
        _same(a, b)
        _same(a, eager)
    return on, off


# ---- the program's text ----

def test_program_prints_types_and_source_lines():
    model = flow.nn.Sequential(flow.nn.Linear(8, 16), flow.nn.ReLU(), flow.nn.Linear(16, 4))

    def fn(g, x):
        return g.model(x) * 2  # (the line every node names: modules' own code is oneflow's)
    line = inspect.getsourcelines(fn)[1] + 1
    g = Fn(fn, set(PASSES), model=model)  # (no fusion: each op of the Linear is a node)
    g(flow.randn(3, 8))
    text = _text(g)
    assert text.startswith("graph(%0:f32[3,8]):\n"), text
    here = f"test_graph_passes.py:{line}"
    assert re.search(r"%\d+:f32\[3,16\] = matmul\(%0, %\d+\)  # " + here, text), text
    assert re.search(r"= t\(model\.0\.weight:f32\[16,8\]\)", text), text
    assert re.search(r"= add\(%\d+, model\.0\.bias:f32\[16\]\)", text), text
    assert re.search(r"%\d+:f32\[3,4\] = mul\(%\d+, 2\)  # " + here, text), text
    assert re.search(r"\n  return %\d+\n$", text), text
    # every node line names its source line
    assert all("# test_graph_passes.py:" in ln for ln in text.splitlines()[1:-1]), text


def test_print_graph_shows_modules_and_their_operators():
    model = flow.nn.Sequential(flow.nn.Linear(8, 16), flow.nn.ReLU())
    g = Fn(lambda g, x: g.model(x).sum(), set(PASSES), model=model)  # (no fusion)
    before = repr(g)
    assert "(MODULE:model:Sequential)" in before and "OPERATOR" not in before
    g(flow.randn(2, 8))
    lines = repr(g).splitlines()
    assert lines[0] == f"(GRAPH:{g.name}:Fn): ("
    k = lines.index("    (MODULE:model.0:Linear(in_features=8, out_features=16, bias=True)): (")
    assert "= matmul(" in lines[k + 2] and lines[k + 2].startswith("      (OPERATOR: %")
    r = lines.index("    (MODULE:model.1:ReLU()): (")
    assert re.match(r"      \(OPERATOR: %\d+:f32\[2,16\] = relu\(%\d+\)  # test_graph_passes.py:\d+\)", lines[r + 1])
    assert re.match(r"  \(OPERATOR: %\d+:f32\[\] = sum\(%\d+\)", lines[-3]), lines  # build()'s own op
    assert lines[-2].startswith("  (OUTPUTS: %") and lines[-1] == ")"


# ---- each pass alone ----

def test_algebraic_simplification():
    def fn(g, x):
        a = x.t().t() + x.transpose(0, 1).transpose(1, 0)
        b = x.reshape(6, 4).reshape(24).view(4, 6)
        c = x.double().float() + x.to(flow.float32).contiguous()
        d = x.unsqueeze(0).permute(1, 0, 2).permute(0, 2, 1)  # -> one permute
        e = x.permute(1, 0).permute(1, 0)
        return a + b + c + e, d * 1
    x = flow.randn(4, 6)
    on, off = _ab(fn, "simplify", x)
    assert _ops(off).count("t") == 2 and _ops(off).count("cast") == 2 and _ops(off).count("permute") == 4
    # the outer node of each chain is gone (the inner ones, now unused, are dead-code elimination's)
    ops = _ops(on)
    assert (ops.count("t"), ops.count("transpose"), ops.count("cast"), ops.count("view")) == (1, 1, 1, 0), _text(on)
    assert re.search(r"permute\(%\d+, \[1, 2, 0\]\)", _text(on)), _text(on)
    assert _stats(on)["simplified"] == 8 and not any(_stats(off).values()), _stats(off)
    both = Fn(fn, {"simplify", "dce"})
    _same(both(x), off(x))
    ops = _ops(both)
    assert "t" not in ops and "transpose" not in ops and "cast" not in ops and "reshape" not in ops, _text(both)
    assert ops.count("permute") == 1 and ops.count("unsqueeze") == 1, _text(both)


def test_simplification_of_returned_values():
    on, _ = _ab(lambda g, x: x.double().float(), "simplify", flow.randn(3))
    assert _ops(on).count("cast") == 2  # the output is a new tensor in eager, not the caller's input
    # a returned view chain is a view of its base in eager too: it is the base
    both = Fn(lambda g, x: (x * 2).permute(1, 0).permute(1, 0), {"simplify", "dce"})
    x = flow.randn(2, 3)
    _same(both(x), x * 2)
    assert _ops(both) == ["mul"], _text(both)


def test_simplification_keeps_casts_that_lose_values_and_no_grad_boundaries():
    def fn(g, x):
        a = x.half().float()  # f32 -> f16 -> f32 rounds: not an identity
        with flow.no_grad():
            b = x.t()
        return a, b.t() * 1  # t(t(x)) across no_grad: b.t() must not carry x's grad
    x = flow.randn(3, 5)
    on, _ = _ab(fn, "simplify", x)
    assert _ops(on).count("cast") == 2 and _ops(on).count("t") == 2, _text(on)


def test_constant_folding():
    def fn(g, x):
        c = flow.zeros(4) + flow.arange(4, dtype=flow.float32) * 0.5  # no graph input: a constant
        return x * c + flow.ones(4).sum()
    x = flow.randn(3, 4)
    on, off = _ab(fn, "fold", x)
    assert "zeros" in _ops(off) and "arange" in _ops(off)
    ops = _ops(on)
    assert "zeros" not in ops and "arange" not in ops and "ones" not in ops, _text(on)
    assert len(re.findall(r"= constant\n", _text(on))) == 2, _text(on)
    assert _stats(on)["folded"] == 6


def test_constant_folding_leaves_returned_written_random_and_grad_values():
    def fn(g, x):
        z = flow.zeros(3)  # returned: the user may write it
        w = flow.zeros(3)
        w.add_(x)  # written by the program
        r = flow.rand(3)  # random
        p = flow.ones(3, requires_grad=True)  # a new leaf each call
        return z, w, r.shape, p * 1
    on = Fn(fn, {"fold"})
    z, w, _, _ = on(flow.ones(3))
    z.add_(5)
    z2, w2, _, _ = on(flow.ones(3))
    assert z2.numpy().tolist() == [0, 0, 0] and w2.numpy().tolist() == [1, 1, 1]
    ops = _ops(on)
    assert ops.count("zeros") == 2 and "rand" in ops and "ones" in ops and _stats(on)["folded"] == 0, _text(on)


def test_common_subexpression_elimination():
    w = flow.randn(4, 4)

    def fn(g, x):
        a = flow.matmul(x, w).relu()
        b = flow.matmul(x, w).relu()
        return a + b + (x * 2) + (x * 2)
    x = flow.randn(3, 4)
    on, off = _ab(fn, "cse", x)
    assert _ops(off).count("matmul") == 2 and _ops(off).count("mul") == 2
    assert _ops(on).count("matmul") == 1 and _ops(on).count("relu") == 1 and _ops(on).count("mul") == 1, _text(on)
    assert _stats(on)["merged"] == 3


def test_cse_leaves_random_inplace_and_written_captured_values():
    buf = flow.zeros(3)

    def fn(g, x):
        d1 = flow.nn.functional.dropout(x, 0.5, training=True)
        d2 = flow.nn.functional.dropout(x, 0.5, training=True)
        y = x * 2
        y.add_(1)  # y is written: x * 2 below is another value
        z = x * 2
        u = buf + 1
        buf.add_(x)  # the captured buffer changes: buf + 1 below differs
        v = buf + 1
        return d1 - d2, y, z, u, v
    on = Fn(fn, {"cse"})
    off = Fn(fn, set())
    x = flow.randn(3)
    buf.zero_()
    flow.manual_seed(1)
    a = on(x)
    buf.zero_()
    flow.manual_seed(1)
    b = off(x)
    _same(a, b)
    ops = _ops(on)
    assert ops.count("dropout") == 2 and ops.count("mul") == 2 and ops.count("add") == 2, _text(on)
    assert (a[0].numpy() != 0).any()  # two masks


def test_dead_code_elimination():
    def fn(g, x):
        unused = x.exp().sum()  # noqa: F841
        _ = x.t()
        return x * 3
    x = flow.randn(2, 3)
    on, off = _ab(fn, "dce", x)
    assert {"exp", "sum", "t"} <= set(_ops(off))
    assert _ops(on) == ["mul"], _text(on)
    assert _stats(on)["removed"] == 3


def test_dce_keeps_writes_random_draws_and_buffer_updates():
    bn = flow.nn.BatchNorm1d(3)
    bn.train()

    def fn(g, x):
        g.bn(x)  # output unused: its running statistics update stays
        flow.rand(2)  # unused draw: the later draw's numbers depend on it
        return flow.rand(3) + x.sum()
    on = Fn(fn, {"dce"}, bn=bn)
    x = flow.randn(4, 3)
    flow.manual_seed(3)
    got = on(x)
    flow.manual_seed(3)
    flow.rand(2)
    want = flow.rand(3) + x.sum()
    _same(got, want)
    ops = _ops(on)
    assert "batch_norm" in ops and ops.count("rand") == 2, _text(on)
    assert not np.allclose(bn.running_mean.numpy(), 0)


def test_training_with_and_without_passes_is_identical():
    def run(passes):
        flow.manual_seed(0)
        model = flow.nn.Sequential(flow.nn.Linear(10, 32), flow.nn.ReLU(), flow.nn.Linear(32, 5))
        opt = flow.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        class Train(flow.nn.Graph):
            def __init__(self):
                super().__init__()
                self.model = model
                self.add_optimizer(opt)
                for p in PASSES:
                    getattr(self.config, SWITCH[p])(p in passes)

            def build(self, x, y):
                h = self.model(x.t().t())
                loss = flow.nn.functional.cross_entropy(h, y) + (h * 0).sum() + flow.zeros(1).sum()
                loss.backward()
                return loss
        g = Train()
        rng = np.random.default_rng(0)
        losses = []
        for _ in range(5):
            x = flow.tensor(rng.standard_normal((8, 10)).astype(np.float32))
            y = flow.tensor(rng.integers(0, 5, 8))
            losses.append(g(x, y).numpy())
        return losses, [p.numpy() for p in model.parameters()], g
    l_on, p_on, g_on = run(set(PASSES))
    l_off, p_off, g_off = run(set())
    for a, b in zip(l_on + p_on, l_off + p_off):
        np.testing.assert_array_equal(a, b)
    assert len(_ops(g_on)) < len(_ops(g_off))


def test_switches():
    g = Fn(lambda g, x: x.t().t() * 1, None)
    assert all(g.config.passes[p] for p in PASSES)
    g(flow.randn(2, 3))
    assert "t" not in _ops(g)
    g.config.enable_algebraic_simplification(False)  # a changed pass traces again
    g(flow.randn(2, 3))
    assert _ops(g).count("t") == 2
    with pytest.raises(TypeError, match="enable_constant_folding: mode must be a bool"):
        g.config.enable_constant_folding("yes")
    g.config.allow_fuse_cast_scale(True)  # OneFlow's switches of passes not here: accepted
    assert g.config.hints == {"allow_fuse_cast_scale": True}


def test_each_pass_alone_on_ops_returning_their_input():
    # contiguous() of a contiguous tensor and .to() its own dtype record nodes whose output is
    # their input: no pass may loop on or merge them wrongly
    def fn(g, x):
        return x.contiguous() + x.contiguous() + x.to(flow.float32) * x.to(flow.float32)
    x = flow.randn(2, 3)
    for p in PASSES:
        _ab(fn, p, x)


def test_constant_folding_under_amp_computes_as_the_program_runs():
    def fn(g, x):
        w = flow.arange(16, dtype=flow.float32).reshape(4, 4) * 0.37
        c = flow.matmul(flow.ones(4, 4), w)  # folded: under autocast, in bfloat16 as at run time
        return x + c
    x = flow.randn(4, 4)
    on, off = Fn(fn, {"fold"}), Fn(fn, set())
    on.config.enable_amp(True)
    off.config.enable_amp(True)
    _same(on(x), off(x))
    assert "matmul" not in _ops(on) and "matmul" in _ops(off)


def test_python_steps_are_named_in_the_text():
    model = flow.nn.Linear(3, 2)
    # a gradient hook on a parameter keeps the backward a Python step (Note [Backward nodes])
    model.weight.register_hook(lambda g: g)

    class Train(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.model = model
            self.add_optimizer(flow.optim.SGD(model.parameters(), lr=0.1))

        def build(self, x):
            loss = self.model(x).sum()
            loss.backward()
            return loss
    g = Train()
    g(flow.randn(4, 3))
    (text,) = g._programs()
    loss = re.search(r"(%\d+):f32\[\] = sum", text).group(1)
    assert f"<python 0: backward({loss})>()" in text, text
    assert f"(OPERATOR: <python 0: backward({loss})>())" in repr(g)
