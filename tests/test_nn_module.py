"""nn.Module against torch.nn.Module: attribute routing, registration, traversal, modes,
conversion, repr, dir, deepcopy and pickle. (state_dict: test_nn_state_dict.py; hooks:
test_nn_hooks.py.)"""
import copy
import pickle

import numpy as np
import pytest
import torch

from harness import flow
from error_cases import raises_like_torch
from nn_util import arr, check_forward_backward, close, make_net, torch_repr, twins


def empty_module(lib):
    return lib.nn.Module()


# ---------------------------------------------------------------------------
# Attribute routing and registration


def test_setattr_routes_parameters_modules_and_buffers():
    m = flow.nn.Module()
    p = flow.nn.Parameter(flow.ones(2))
    m.w = p
    m.sub = flow.nn.Linear(2, 2)
    m.register_buffer("buf", flow.zeros(3))
    m.plain = flow.ones(1)  # a plain tensor is an ordinary attribute
    assert m.w is p and "w" in m._parameters and "w" not in m.__dict__
    assert "sub" in m._modules and "sub" not in m.__dict__
    assert "buf" in m._buffers
    assert "plain" in m.__dict__ and "plain" not in m._buffers
    # Assigning a tensor to a buffer's name updates the buffer.
    new = flow.ones(3)
    m.buf = new
    assert m._buffers["buf"] is new
    # A name moves between kinds when re-assigned.
    m.sub = flow.nn.Parameter(flow.ones(1))
    assert "sub" in m._parameters and "sub" not in m._modules


def test_assigning_none_keeps_the_registration():
    for lib in (flow, torch):
        m = lib.nn.Linear(2, 2)
        m.bias = None
        assert "bias" in m._parameters and m.bias is None
        assert [n for n, _ in m.named_parameters()] == ["weight"]
        m.register_buffer("b", None)
        assert m.b is None and "b" not in m.state_dict()


def test_non_persistent_buffer_stays_non_persistent_when_reassigned():
    m = flow.nn.Module()
    m.register_buffer("tmp", flow.zeros(2), persistent=False)
    m.tmp = flow.ones(2)
    assert "tmp" in m._non_persistent_buffers_set and "tmp" not in m.state_dict()
    m.register_buffer("tmp", flow.ones(2))  # re-registering as persistent
    assert "tmp" in m.state_dict()


def test_delattr_removes_registrations():
    m = flow.nn.Module()
    m.p = flow.nn.Parameter(flow.ones(1))
    m.register_buffer("b", flow.ones(1), persistent=False)
    m.c = flow.nn.Identity()
    m.x = 3
    for name in ("p", "b", "c", "x"):
        delattr(m, name)
        assert not hasattr(m, name)
    assert not m._non_persistent_buffers_set


def test_register_module_and_add_module():
    m = flow.nn.Module()
    m.register_module("a", flow.nn.ReLU())
    m.add_module("b", None)
    assert isinstance(m.a, flow.nn.ReLU) and m.b is None
    assert [n for n, _ in m.named_children()] == ["a"]


def _assign_tensor_to_param(lib):
    m = lib.nn.Linear(2, 2)
    m.weight = lib.ones(2, 2)


def _assign_int_to_module(lib):
    m = lib.nn.Sequential(lib.nn.ReLU())
    setattr(m, "0", 5)


def _assign_int_to_buffer(lib):
    m = lib.nn.Module()
    m.register_buffer("b", lib.ones(1))
    m.b = 3


def _param_before_init(lib):
    class Bad(lib.nn.Module):
        def __init__(self):
            self.w = lib.nn.Parameter(lib.ones(1))

    Bad()


def _module_before_init(lib):
    class Bad(lib.nn.Module):
        def __init__(self):
            self.m = lib.nn.ReLU()

    Bad()


def _buffer_before_init(lib):
    class Bad(lib.nn.Module):
        def __init__(self):
            self.register_buffer("b", lib.ones(1))

    Bad()


def _existing_attr(kind):
    def action(lib):
        m = lib.nn.Module()
        m.taken = 1
        if kind == "param":
            m.register_parameter("taken", lib.nn.Parameter(lib.ones(1)))
        elif kind == "buffer":
            m.register_buffer("taken", lib.ones(1))
        else:
            m.add_module("taken", lib.nn.ReLU())
    return action


REGISTRATION_ERRORS = [
    ("tensor-to-param", _assign_tensor_to_param, TypeError),
    ("int-to-module", _assign_int_to_module, TypeError),
    ("module-to-param", lambda lib: setattr(lib.nn.Linear(1, 1), "weight", lib.nn.ReLU()),
     TypeError),
    # torch 2.5+ also accepts its nn.Buffer marker type, which OneFlow has not.
    ("int-to-buffer", _assign_int_to_buffer, TypeError,
     lambda msg: msg.replace("torch.nn.Buffer, ", "")),
    ("param-before-init", _param_before_init, AttributeError),
    ("module-before-init", _module_before_init, AttributeError),
    ("buffer-before-init", _buffer_before_init, AttributeError),
    ("param-dot", lambda lib: empty_module(lib).register_parameter("a.b", None), KeyError),
    ("param-empty", lambda lib: empty_module(lib).register_parameter("", None), KeyError),
    ("param-not-str", lambda lib: empty_module(lib).register_parameter(1, None), TypeError),
    ("param-plain-tensor", lambda lib: empty_module(lib).register_parameter("w", lib.ones(1)),
     TypeError),
    ("buffer-dot", lambda lib: empty_module(lib).register_buffer("a.b", None), KeyError),
    ("buffer-empty", lambda lib: empty_module(lib).register_buffer("", None), KeyError),
    ("buffer-not-tensor", lambda lib: empty_module(lib).register_buffer("b", [1.0]), TypeError,
     lambda msg: msg.replace("(torch Tensor", "(oneflow Tensor")),
    ("module-not-module", lambda lib: empty_module(lib).add_module("m", 3), TypeError),
    ("module-dot", lambda lib: empty_module(lib).add_module("a.b", None), KeyError),
    ("module-empty", lambda lib: empty_module(lib).add_module("", None), KeyError),
    ("module-name-not-str", lambda lib: empty_module(lib).add_module(2, None), TypeError),
    ("existing-param", _existing_attr("param"), KeyError),
    ("existing-buffer", _existing_attr("buffer"), KeyError),
    ("existing-module", _existing_attr("module"), KeyError),
    ("missing-attr", lambda lib: lib.nn.Linear(1, 1).nope, AttributeError),
    ("init-args", lambda lib: lib.nn.Module(3), TypeError),
    ("init-kwargs", lambda lib: lib.nn.Module(a=3), TypeError),
    ("no-forward", lambda lib: lib.nn.Module()(lib.ones(1)), NotImplementedError),
    ("train-not-bool", lambda lib: lib.nn.ReLU().train("yes"), ValueError),
    ("to-int-dtype", lambda lib: lib.nn.Linear(1, 1).to(lib.int32), TypeError),
]


@pytest.mark.parametrize("case", REGISTRATION_ERRORS, ids=[c[0] for c in REGISTRATION_ERRORS])
def test_registration_errors_match_torch(case):
    raises_like_torch(*case[1:3], translate=case[3] if len(case) > 3 else None)


# ---------------------------------------------------------------------------
# Lookup by path


@pytest.mark.parametrize("call", [
    lambda m: m.get_submodule("head.0"),
    lambda m: m.get_submodule(""),
    lambda m: m.get_parameter("block.fc.weight"),
    lambda m: m.get_parameter("scale"),
    lambda m: m.get_buffer("stats"),
    lambda m: m.get_buffer("block.count"),
])
def test_get_by_path(call):
    fm, tm = twins(make_net)
    got, want = call(fm), call(tm)
    if isinstance(want, torch.nn.Module):
        assert torch_repr(want) == repr(got)
    else:
        close(got, want)
        assert isinstance(got, flow.nn.Parameter) == isinstance(want, torch.nn.Parameter)


@pytest.mark.parametrize("call", [
    lambda m: m.get_submodule("head.5"),
    lambda m: m.get_submodule("scale"),
    lambda m: m.get_parameter("block.nope"),
    lambda m: m.get_parameter("stats"),
    lambda m: m.get_buffer("scale"),
    lambda m: m.get_buffer("x.y"),
])
def test_get_by_path_errors(call):
    raises_like_torch(lambda lib: call(make_net(lib)), AttributeError)


def test_set_submodule():
    for lib in (flow, torch):
        m = make_net(lib)
        m.set_submodule("block.act", lib.nn.Tanh())
        assert isinstance(m.block.act, lib.nn.Tanh)
    raises_like_torch(lambda lib: make_net(lib).set_submodule("block.new", lib.nn.ReLU(), strict=True))
    raises_like_torch(lambda lib: make_net(lib).set_submodule("scale", lib.nn.ReLU()))


# ---------------------------------------------------------------------------
# Traversal: names and order as torch


TRAVERSALS = {
    "named_parameters": lambda m: [n for n, _ in m.named_parameters()],
    "named_parameters-prefix": lambda m: [n for n, _ in m.named_parameters(prefix="net")],
    "named_parameters-no-recurse": lambda m: [n for n, _ in m.named_parameters(recurse=False)],
    "named_parameters-keep-duplicates": lambda m: [
        n for n, _ in m.named_parameters(remove_duplicate=False)],
    "parameters-count": lambda m: len(list(m.parameters())),
    "named_buffers": lambda m: [n for n, _ in m.named_buffers()],
    "named_buffers-keep-duplicates": lambda m: [
        n for n, _ in m.named_buffers(remove_duplicate=False)],
    "buffers-count": lambda m: len(list(m.buffers(recurse=False))),
    "named_children": lambda m: [n for n, _ in m.named_children()],
    "children-types": lambda m: [type(c).__name__ for c in m.children()],
    "named_modules": lambda m: [n for n, _ in m.named_modules()],
    "named_modules-prefix": lambda m: [n for n, _ in m.named_modules(prefix="root")],
    "named_modules-keep-duplicates": lambda m: [
        n for n, _ in m.named_modules(remove_duplicate=False)],
    "modules-types": lambda m: [type(x).__name__ for x in m.modules()],
}


@pytest.mark.parametrize("name", list(TRAVERSALS))
def test_traversal_matches_torch(name):
    fm, tm = twins(make_net)
    assert TRAVERSALS[name](fm) == TRAVERSALS[name](tm)


def test_traversal_yields_the_registered_objects():
    m = make_net(flow)
    assert m.block.fc.weight in set(m.parameters())
    buffers = list(m.buffers())
    assert buffers[0] is m.stats and buffers[2] is m.block.count  # own first, then children's
    assert next(m.modules()) is m
    assert all(isinstance(p, flow.nn.Parameter) for p in m.parameters())


# ---------------------------------------------------------------------------
# Forward / backward against torch


def test_forward_backward_matches_torch():
    fm, tm = twins(make_net)
    check_forward_backward(fm, tm, arr(5, 3))


def test_call_passes_args_and_kwargs_to_forward():
    class Add(flow.nn.Module):
        def forward(self, a, b=0, *, scale=1):
            return (a + b) * scale

    out = Add()(flow.ones(2), b=flow.ones(2), scale=3)
    close(out, np.full(2, 6.0))


# ---------------------------------------------------------------------------
# Modes


def test_train_eval_recursive():
    fm, tm = make_net(flow), make_net(torch)
    assert fm.eval() is fm
    tm.eval()
    def flags(m):
        return [x.training for x in m.modules()]

    assert flags(fm) == flags(tm) and not any(flags(fm))
    fm.block.train()
    tm.block.train()
    assert flags(fm) == flags(tm)
    assert fm.train() is fm and all(flags(fm))


def test_requires_grad_and_zero_grad():
    m = make_net(flow)
    assert m.requires_grad_(False) is m
    assert not any(p.requires_grad for p in m.parameters())
    m.requires_grad_()
    m(flow.tensor(arr(2, 3))).sum().backward()
    grads = [p.grad for p in m.parameters()]
    assert all(g is not None for g in grads)
    m.zero_grad(set_to_none=False)
    for p, g in zip(m.parameters(), grads):
        assert p.grad is g and float(p.grad.abs().sum()) == 0.0
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())


def test_zero_grad_detaches_a_grad_with_history():
    p = flow.nn.Parameter(flow.ones(2))
    m = flow.nn.Module()
    m.p = p
    p.grad = flow.ones(2, requires_grad=True) * 2  # a gradient with a history
    m.zero_grad(set_to_none=False)
    assert p.grad.grad_fn is None and not p.grad.requires_grad
    assert p.grad.tolist() == [0.0, 0.0]


def test_apply_visits_children_first_as_torch():
    visited = {flow: [], torch: []}
    for lib in (flow, torch):
        m = make_net(lib)
        assert m.apply(lambda x, lib=lib: visited[lib].append(type(x).__name__)) is m
    assert visited[flow] == visited[torch]


def test_apply_for_initialisation():
    m = flow.nn.Sequential(flow.nn.Linear(3, 3), flow.nn.ReLU(), flow.nn.Linear(3, 1))

    def init(mod):
        if isinstance(mod, flow.nn.Linear):
            flow.nn.init.ones_(mod.weight)
            flow.nn.init.zeros_(mod.bias)

    m.apply(init)
    assert m[2].weight.tolist() == [[1.0, 1.0, 1.0]] and m[0].bias.tolist() == [0.0] * 3


# ---------------------------------------------------------------------------
# Conversion: to / float / double / half / bfloat16 / type / cpu / cuda


@pytest.mark.parametrize("convert,dtype", [
    (lambda m, lib: m.to(lib.float64), "float64"),
    (lambda m, lib: m.to(dtype=lib.float64), "float64"),
    (lambda m, lib: m.to("cpu", lib.float16), "float16"),
    (lambda m, lib: m.to(lib.zeros(1, dtype=lib.float64)), "float64"),
    (lambda m, lib: m.double(), "float64"),
    (lambda m, lib: m.half(), "float16"),
    (lambda m, lib: m.bfloat16(), "bfloat16"),
    (lambda m, lib: m.double().float(), "float32"),
])
def test_dtype_conversion_keeps_parameter_identity_as_torch(convert, dtype):
    fm, tm = twins(make_net)
    for m, lib in ((fm, flow), (tm, torch)):
        m.register_buffer("steps", lib.tensor([3]))  # integral: never cast
        m(lib.tensor(arr(2, 3))).sum().backward()
        before = {n: p for n, p in m.named_parameters()}
        assert convert(m, lib) is m
        for n, p in m.named_parameters():
            assert p is before[n]  # torch replaces param.data, keeping the object
            assert str(p.dtype).endswith(dtype) and str(p.grad.dtype).endswith(dtype)
        assert str(m.stats.dtype).endswith(dtype) and str(m.steps.dtype).endswith("int64")
    assert all(type(p) is flow.nn.Parameter for p in fm.parameters())
    sd_t = tm.state_dict()
    for k, v in fm.state_dict().items():
        a, b = v.float().numpy(), sd_t[k].float().numpy()
        np.testing.assert_array_equal(a, b)


def test_type_casts_every_tensor_as_torch():
    for lib in (flow, torch):
        m = make_net(lib)
        m.register_buffer("steps", lib.tensor([3]))
        w = m.block.fc.weight
        assert m.type(lib.float64) is m and m.block.fc.weight is w
        assert str(w.dtype).endswith("float64") and str(m.steps.dtype).endswith("float64")


def test_converted_module_trains_in_the_new_dtype():
    fm, tm = twins(make_net)
    fm.double()
    tm.double()
    check_forward_backward(fm, tm, arr(4, 3, dtype=np.float64), rtol=1e-10, atol=1e-12)


def test_cpu_is_a_no_op_and_cuda_raises_without_cuda():
    m = make_net(flow)
    w = m.block.fc.weight
    assert m.cpu() is m and m.block.fc.weight is w and w.device.type == "cpu"
    if flow.cuda.is_available():
        m.cuda()
        assert m.block.fc.weight.device.type == "cuda" and m.block.fc.weight is w
    else:
        with pytest.raises(RuntimeError, match="cuda"):
            m.cuda()
        with pytest.raises(RuntimeError, match="cuda"):
            m.to("cuda")


def test_to_empty_materialises_a_meta_module():
    for lib in (flow, torch):
        m = lib.nn.Sequential(lib.nn.Linear(3, 2, device="meta"))
        m.register_buffer("steps", lib.zeros(2, device="meta"))
        w = m[0].weight
        assert w.is_meta
        assert m.to_empty(device="cpu") is m
        w2 = m[0].weight  # a new Parameter: a meta tensor's data can't be swapped in place
        assert w2 is not w and type(w2) is type(w) and w2.requires_grad
        assert not w2.is_meta and w2.device.type == "cpu"
        assert not m.steps.is_meta and tuple(m.steps.shape) == (2,)
        m[0].reset_parameters()
        assert tuple(m(lib.ones(4, 3)).shape) == (4, 2)


# ---------------------------------------------------------------------------
# repr and dir


def test_repr_matches_torch():
    fm, tm = twins(make_net)
    assert repr(fm) == torch_repr(tm)
    assert repr(flow.nn.Module()) == "Module()"


def test_repr_with_multiline_extra_repr_and_children():
    def build(lib):
        class Layer(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU())

            def extra_repr(self):
                return "first line\nsecond line"

        class Outer(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = Layer()
                self.single = lib.nn.Identity()

            def extra_repr(self):
                return "size=3"

        return Outer()

    assert repr(build(flow)) == torch_repr(build(torch))


def test_dir_lists_registered_names():
    m = make_net(flow)
    names = dir(m)
    for n in ("scale", "block", "head", "shared", "stats", "cache", "forward", "training"):
        assert n in names
    assert names == sorted(names)
    seq = flow.nn.Sequential(flow.nn.ReLU())
    assert "0" not in dir(seq)
    tnames = set(dir(make_net(torch)))
    assert {"scale", "block", "head", "shared", "stats", "cache"} <= tnames


# ---------------------------------------------------------------------------
# deepcopy / pickle


def test_deepcopy_module():
    m = make_net(flow)
    m(flow.tensor(arr(2, 3))).sum().backward()
    c = copy.deepcopy(m)
    assert repr(c) == repr(m)
    assert c.shared is c.block  # sharing inside the tree survives
    for (n, p), (n2, q) in zip(m.named_parameters(), c.named_parameters()):
        assert n == n2 and type(q) is flow.nn.Parameter and q is not p
        assert not q._shares_storage(p) and q.requires_grad
        close(q, p.numpy())
    x = flow.tensor(arr(3, 3))
    close(c(x), m(x).detach().numpy())
    with flow.no_grad():
        c.scale.mul_(0)
    assert float(m.scale.abs().sum()) == 3.0  # the copy is independent


class PickledBlock(flow.nn.Module):
    """Module-level classes (pickle stores classes by name)."""

    def __init__(self):
        super().__init__()
        self.fc = flow.nn.Linear(3, 3)
        self.register_buffer("cache", flow.zeros(2), persistent=False)

    def forward(self, x):
        return self.fc(x).tanh()


class PickledNet(flow.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = PickledBlock()
        self.shared = self.block
        self.head = flow.nn.Sequential(flow.nn.Linear(3, 2), flow.nn.SiLU())
        self.scale = flow.nn.Parameter(flow.tensor(arr(3)))

    def forward(self, x):
        return self.head(self.shared(self.block(x)) * self.scale)


def test_pickle_module():
    m = PickledNet()
    m.eval()
    c = pickle.loads(pickle.dumps(m))
    assert repr(c) == repr(m) and not c.training and c.shared is c.block
    assert list(c.state_dict()) == list(m.state_dict())
    for k, v in m.state_dict().items():
        close(c.state_dict()[k], v.numpy())
    assert "cache" in c.block._buffers and "cache" in c.block._non_persistent_buffers_set
    x = flow.tensor(arr(2, 3))
    close(c(x), m(x).detach().numpy())


class OpHolder(flow.nn.Module):
    """Holds op-table functions (nanobind functions) as attributes, as Transformer layers do."""

    def __init__(self):
        super().__init__()
        self.fc = flow.nn.Linear(3, 3)
        self.act = flow.nn.functional.gelu
        self.acts = [flow.relu, flow.nn.functional.softmax]

    def forward(self, x):
        return self.acts[1](self.acts[0](self.act(self.fc(x))), dim=-1)


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copy_module_holding_op_functions(how):
    m = OpHolder()
    c = copy.deepcopy(m) if how == "deepcopy" else pickle.loads(pickle.dumps(m))
    # Functions are immutable: the copy refers to the very same op.
    assert c.act is flow.nn.functional.gelu and c.acts[0] is flow.relu
    assert c.acts[1] is flow.nn.functional.softmax
    x = flow.tensor(arr(2, 3))
    close(c(x), m(x).detach().numpy())
