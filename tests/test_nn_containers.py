"""Containers against torch: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
(construction, indexing, mutation, iteration, registration and repr)."""
from collections import OrderedDict

import pytest
import torch

from harness import flow
from nn_util import arr, check_forward_backward, close, torch_repr, twins


def names(m):
    return [n for n, _ in m.named_modules()] + [n for n, _ in m.named_parameters()]


def both(build):
    """build(lib) for flow and torch: same repr (torch. -> oneflow.) and same registered names."""
    f, t = build(flow), build(torch)
    assert repr(f) == torch_repr(t)
    assert names(f) == names(t)
    return f, t


# ---------------------------------------------------------------------------
# Sequential


def seq(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2), nn.Sigmoid())


def test_sequential_forward_backward():
    fm, tm = twins(seq)
    check_forward_backward(fm, tm, arr(5, 3))


def test_sequential_from_ordered_dict():
    f, _ = both(lambda lib: lib.nn.Sequential(OrderedDict([
        ("fc", lib.nn.Linear(2, 2)), ("act", lib.nn.Tanh())])))
    assert isinstance(f.fc, flow.nn.Linear) and isinstance(f[1], flow.nn.Tanh)


@pytest.mark.parametrize("op", [
    lambda s: s[1:],
    lambda s: s[::2],
    lambda s: s[-1],
    lambda s: s[0],
    lambda s: s[:0],
])
def test_sequential_indexing(op):
    f, t = seq(flow), seq(torch)
    got, want = op(f), op(t)
    assert repr(got) == torch_repr(want)
    same = op(list(f))  # the same selection on a plain list of the modules
    if isinstance(want, torch.nn.Sequential):
        assert type(got) is flow.nn.Sequential and names(got) == names(want)
        assert [id(m) for m in got] == [id(m) for m in same]  # slices share the modules
    else:
        assert got is same


def test_sequential_slicing_shares_modules():
    s = seq(flow)
    tail = s[2:]
    assert tail[0] is s[2] and tail[1] is s[3]


@pytest.mark.parametrize("mutate", [
    lambda lib, s: s.append(lib.nn.Identity()),
    lambda lib, s: s.insert(1, lib.nn.Identity()),
    lambda lib, s: s.insert(-1, lib.nn.Identity()),
    lambda lib, s: s.insert(4, lib.nn.Identity()),
    lambda lib, s: s.extend([lib.nn.Identity(), lib.nn.Tanh()]),
    lambda lib, s: s.pop(1),
    lambda lib, s: s.__delitem__(0),
    lambda lib, s: s.__delitem__(slice(1, 3)),
    lambda lib, s: s.__setitem__(-1, lib.nn.Tanh()),
    lambda lib, s: s.__iadd__(lib.nn.Sequential(lib.nn.Identity())),
    lambda lib, s: s.__imul__(2),
])
def test_sequential_mutation_matches_torch(mutate):
    def build(lib):
        s = seq(lib)
        mutate(lib, s)
        return s

    f, t = both(build)
    assert len(f) == len(t)
    assert [type(m).__name__ for m in f] == [type(m).__name__ for m in t]


def test_sequential_pop_returns_the_module_and_len():
    s = seq(flow)
    second = s[1]
    assert s.pop(1) is second and len(s) == 3 and list(s._modules) == ["0", "1", "2"]


@pytest.mark.parametrize("combine", [
    lambda lib, a: a + lib.nn.Sequential(lib.nn.Tanh()),
    lambda lib, a: a * 2,
    lambda lib, a: 2 * a,
])
def test_sequential_operators(combine):
    f, t = both(lambda lib: combine(lib, lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Identity())))
    assert len(f) == len(t)


@pytest.mark.parametrize("action", [
    lambda lib: lib.nn.Sequential(lib.nn.ReLU())[3],
    lambda lib: lib.nn.Sequential(lib.nn.ReLU()).insert(5, lib.nn.ReLU()),
    lambda lib: lib.nn.Sequential(lib.nn.ReLU()) + lib.nn.ModuleList(),
    lambda lib: lib.nn.Sequential(lib.nn.ReLU()) * 0,
    lambda lib: lib.nn.Sequential(lib.nn.ReLU()) * 1.5,
    lambda lib: lib.nn.Sequential(3),
])
def test_sequential_errors_match_torch(action):
    with pytest.raises(Exception) as te:
        action(torch)
    with pytest.raises(type(te.value)) as fe:
        action(flow)
    assert str(fe.value) == str(te.value).replace("torch.", "oneflow.")


def test_sequential_iteration_and_dir():
    s = seq(flow)
    assert [type(m).__name__ for m in s] == ["Linear", "ReLU", "Linear", "Sigmoid"]
    assert not any(k.isdigit() for k in dir(s))


# ---------------------------------------------------------------------------
# ModuleList


def mlist(lib):
    return lib.nn.ModuleList([lib.nn.Linear(2, 2) for _ in range(3)] + [lib.nn.ReLU()])


def test_module_list_repr_folds_repeats():
    f, _ = both(mlist)
    assert "(0-2): 3 x Linear(in_features=2, out_features=2, bias=True)" in repr(f)
    both(lambda lib: lib.nn.ModuleList())
    both(lambda lib: lib.nn.ModuleList([lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Tanh())] * 2))


@pytest.mark.parametrize("mutate", [
    lambda lib, m: m.append(lib.nn.Tanh()),
    lambda lib, m: m.extend([lib.nn.Tanh(), lib.nn.Identity()]),
    lambda lib, m: m.insert(1, lib.nn.Tanh()),
    lambda lib, m: m.pop(0),
    lambda lib, m: m.__delitem__(slice(0, 2)),
    lambda lib, m: m.__delitem__(-1),
    lambda lib, m: m.__setitem__(1, lib.nn.Tanh()),
    lambda lib, m: m.__iadd__([lib.nn.Identity()]),
])
def test_module_list_mutation_matches_torch(mutate):
    def build(lib):
        m = mlist(lib)
        mutate(lib, m)
        return m

    f, t = both(build)
    assert len(f) == len(t)


def test_module_list_indexing_and_add():
    f = mlist(flow)
    assert f[-1] is f[3] and type(f[1:3]) is flow.nn.ModuleList and f[1:3][0] is f[1]
    combined = f + flow.nn.ModuleList([flow.nn.Tanh()])
    assert len(combined) == 5 and combined[0] is f[0]
    assert [type(m).__name__ for m in f] == ["Linear"] * 3 + ["ReLU"]
    with pytest.raises(IndexError, match="index 4 is out of range"):
        f[4]
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable"):
        f.extend(flow.nn.ReLU())


def test_module_list_registers_parameters():
    f, t = twins(mlist)
    assert [n for n, _ in f.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert len(list(f.parameters())) == 6


# ---------------------------------------------------------------------------
# ModuleDict


def mdict(lib):
    return lib.nn.ModuleDict({"b": lib.nn.Linear(2, 2), "a": lib.nn.ReLU()})


def test_module_dict_keeps_insertion_order():
    f, t = both(mdict)
    assert list(f.keys()) == list(t.keys()) == ["b", "a"]
    both(lambda lib: lib.nn.ModuleDict([("x", lib.nn.Tanh()), ("y", lib.nn.Identity())]))


def test_module_dict_methods():
    d = mdict(flow)
    assert "a" in d and len(d) == 2 and list(d) == ["b", "a"]
    d["c"] = flow.nn.Tanh()
    assert [type(v).__name__ for v in d.values()] == ["Linear", "ReLU", "Tanh"]
    assert [k for k, _ in d.items()] == ["b", "a", "c"]
    popped = d.pop("a")
    assert type(popped).__name__ == "ReLU" and "a" not in d
    del d["b"]
    assert list(d.keys()) == ["c"]
    d.update(OrderedDict(z=flow.nn.ReLU()))
    d.update(mdict(flow))
    assert list(d.keys()) == ["c", "z", "b", "a"]
    d.clear()
    assert len(d) == 0


@pytest.mark.parametrize("action", [
    lambda lib: lib.nn.ModuleDict(5),
    lambda lib: lib.nn.ModuleDict([3]),
    lambda lib: lib.nn.ModuleDict([("a", lib.nn.ReLU(), 1)]),
    lambda lib: lib.nn.ModuleDict()["missing"],
])
def test_module_dict_errors_match_torch(action):
    with pytest.raises(Exception) as te:
        action(torch)
    with pytest.raises(type(te.value)) as fe:
        action(flow)
    assert str(fe.value) == str(te.value).replace("torch.", "oneflow.")


# ---------------------------------------------------------------------------
# ParameterList / ParameterDict


def plist(lib):
    return lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2, 3)), lib.zeros(4), "text"])


def test_parameter_list_wraps_tensors_and_reprs_as_torch():
    f, _ = both(plist)
    assert type(f[1]) is flow.nn.Parameter and f[1].requires_grad
    assert f[2] == "text" and len(f) == 3
    assert [n for n, _ in f.named_parameters()] == ["0", "1"]


def test_parameter_list_methods():
    f = plist(flow)
    f.append(flow.ones(1))
    f.extend([flow.ones(2)])
    f += [flow.ones(3)]
    assert len(f) == 6 and [tuple(p.shape) for p in list(f)[3:]] == [(1,), (2,), (3,)]
    f[0] = flow.zeros(5)
    assert type(f[0]) is flow.nn.Parameter and tuple(f[0].shape) == (5,)
    sub = f[3:5]
    assert type(sub) is flow.nn.ParameterList and sub[0] is f[3]
    assert f[-1] is f[5]
    with pytest.raises(TypeError, match="ParameterList.extend should be called with an iterable"):
        f.extend(flow.ones(2))
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        f()


def pdict(lib):
    return lib.nn.ParameterDict({"w": lib.nn.Parameter(lib.ones(2)), "b": lib.zeros(3, 1)})


def test_parameter_dict_wraps_tensors_and_reprs_as_torch():
    f, t = both(pdict)
    assert list(f.keys()) == list(t.keys()) == ["b", "w"]  # a plain dict is added sorted
    assert type(f["b"]) is flow.nn.Parameter
    both(lambda lib: lib.nn.ParameterDict(OrderedDict(
        [("z", lib.ones(1)), ("a", lib.ones(2, dtype=lib.float64)), ("n", None)])))


def test_parameter_dict_methods():
    d = pdict(flow)
    d["c"] = flow.ones(1)
    assert "c" in d and len(d) == 3 and list(reversed(d)) == ["c", "w", "b"]
    assert d.get("nope", 5) == 5 and d.get("c") is d["c"]
    assert d.setdefault("c") is d["c"]
    d.setdefault("e", flow.ones(4))
    assert tuple(d["e"].shape) == (4,)
    k, v = d.popitem()
    assert k == "e" and "e" not in d and tuple(v.shape) == (4,)
    c = d.pop("c")
    assert type(c) is flow.nn.Parameter and "c" not in d
    copied = d.copy()
    assert copied["w"] is d["w"] and list(copied.keys()) == list(d.keys())
    merged = d | flow.nn.ParameterDict({"x": flow.ones(1)})
    assert list(merged.keys()) == ["b", "w", "x"]
    d |= {"y": flow.ones(1)}
    assert list(d.keys()) == ["b", "w", "y"]
    fk = d.fromkeys(["p", "q"], flow.ones(2))
    assert list(fk.keys()) == ["p", "q"]
    assert [n for n, _ in d.named_parameters()] == ["b", "w", "y"]
    d.clear()
    assert len(d) == 0 and list(d.parameters()) == []
    with pytest.raises(TypeError, match="cannot be used as a key as it is not a string"):
        d[3] = flow.ones(1)
    with pytest.raises(RuntimeError, match="ParameterDict should not be called."):
        d(1)


def test_parameter_containers_train_as_torch():
    def build(lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.ws = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(3, 3) * 0.5)] * 1
                                               + [lib.nn.Parameter(lib.ones(3, 2) * 0.25)])
                self.bs = lib.nn.ParameterDict({"out": lib.nn.Parameter(lib.ones(2) * 0.1)})

            def forward(self, x):
                for w in self.ws:
                    x = (x @ w).tanh()
                return x + self.bs["out"]

        return Net()

    fm, tm = twins(build)
    assert list(fm.state_dict()) == list(tm.state_dict()) == ["ws.0", "ws.1", "bs.out"]
    check_forward_backward(fm, tm, arr(4, 3))
    close(fm.ws[0], tm.ws[0])
