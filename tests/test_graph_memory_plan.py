"""The memory plan of a traced program (src/graph/memory_plan.h): every intermediate gets an offset
in one arena; two values alive at the same time never share a byte, values whose lifetimes do not
meet do, and the lifetimes agree with the program's own text (a view keeps its base alive)."""
import re

import oneflow as flow


class Infer(flow.nn.Graph):
    def __init__(self, fn, **modules):
        super().__init__()
        self.fn = fn
        for k, m in modules.items():
            setattr(self, k, m)

    def build(self, *args):
        return self.fn(self, *args)


class Train(flow.nn.Graph):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.add_optimizer(flow.optim.SGD(model.parameters(), lr=0.1))

    def build(self, x, y):
        loss = flow.nn.functional.cross_entropy(self.model(x), y)
        loss.backward()
        return loss


def _program(g):
    (c,) = g._compiled.values()
    return c.program


def _check(program):
    plan = program.memory_plan()
    blocks = plan["blocks"]
    assert blocks
    for slot, size, off, first, last in blocks:
        assert off % 64 == 0 and size % 64 == 0 and size > 0 and first <= last
        assert off + size <= plan["arena_bytes"]
    for i, (s1, n1, o1, f1, l1) in enumerate(blocks):
        for s2, n2, o2, f2, l2 in blocks[i + 1:]:
            if f1 <= l2 and f2 <= l1:  # alive together
                assert o1 + n1 <= o2 or o2 + n2 <= o1, (s1, s2, (o1, n1, f1, l1), (o2, n2, f2, l2))
    assert plan["arena_bytes"] <= plan["total_bytes"] == sum(b[1] for b in blocks)
    # the lifetimes against the program's text: computed by the node that first names the slot
    # left of `=`, alive at least until the last node naming it on the right
    defs, uses = {}, {}
    for i, (_, text) in enumerate(program.nodes()):
        head, _, rest = text.partition(" = ")
        rhs = rest if rest else head
        for s in re.findall(r"%(\d+)", head if rest else ""):
            defs.setdefault(int(s), i)
        for s in re.findall(r"%(\d+)", rhs.split("  #")[0]):
            uses[int(s)] = i
    for slot, _, _, first, last in blocks:
        assert first == defs[slot], (slot, first, defs[slot])
        assert last >= uses.get(slot, first), (slot, last, uses.get(slot))
    return plan


def test_chain_reuses_memory():
    layers = flow.nn.Sequential(*[flow.nn.Sequential(flow.nn.Linear(64, 64), flow.nn.ReLU()) for _ in range(6)])
    g = Infer(lambda g, x: g.model(x), model=layers)
    g(flow.randn(32, 64))
    plan = _check(_program(g))
    assert plan["arena_bytes"] <= plan["total_bytes"] // 4  # a chain needs a few values at a time
    assert len({b[2] for b in plan["blocks"]}) < len(plan["blocks"])  # offsets shared


def test_training_graph_of_the_example_cnn():
    nn = flow.nn
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(8 * 7 * 7, 10))
    g = Train(model)
    g(flow.randn(4, 1, 14, 14), flow.tensor([1, 2, 3, 4]))
    _check(_program(g))


def test_views_keep_their_base_alive_and_take_no_bytes():
    def fn(g, x):
        a = x * 2
        v = a.view(-1)  # a view of a: no bytes of its own
        b = (x + 1).exp().sin()
        return v * b.view(-1)
    g = Infer(fn)
    g(flow.randn(8, 8))
    program = _program(g)
    plan = _check(program)
    texts = [t for _, t in program.nodes()]
    a_slot = int(re.match(r"%(\d+)", next(t for t in texts if "= mul(%0, 2)" in t)).group(1))
    v_slots = [int(re.match(r"%(\d+)", t).group(1)) for t in texts if "= view(" in t]
    last_use = max(i for i, t in enumerate(texts) if any(f"%{v}," in t or f"%{v})" in t for v in v_slots)
                   and " = view(" not in t)
    blocks = {b[0]: b for b in plan["blocks"]}
    assert not set(v_slots) & set(blocks)
    assert blocks[a_slot][4] >= last_use


def test_the_plan_covers_the_whole_training_step():
    # forward, backward and the optimizer's update (a node reading the gradients: they live
    # until it, update_nodes.py) are one program, planned as one
    model = flow.nn.Sequential(flow.nn.Linear(16, 32), flow.nn.ReLU(), flow.nn.Linear(32, 4))
    g = Train(model)
    g.config.allow_fuse_model_update_ops(True)
    g(flow.randn(8, 16), flow.tensor([0, 1, 2, 3, 0, 1, 2, 3]))
    program = _program(g)
    plan = _check(program)
    texts = [t for _, t in program.nodes()]
    (update,) = [i for i, t in enumerate(texts) if "sgd_update(" in t]
    last_backward = max(i for i, t in enumerate(texts) if "[backward]" in t)
    # after the backward: the gradients made contiguous (as .grad would be), then the update
    assert update == len(texts) - 1 and all("= contiguous(" in t for t in texts[last_backward + 1:update])
    read = {int(s) for s in re.findall(r"%(\d+)", texts[update].split("  #")[0])}
    lives = {b[0]: b[4] for b in plan["blocks"]}
    assert read and all(lives[s] >= update for s in read if s in lives)
