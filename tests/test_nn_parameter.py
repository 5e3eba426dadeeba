"""nn.Parameter (a Tensor subclass aliasing its data) and Tensor deepcopy / pickle / type()."""
import copy
import pickle
import types

import numpy as np
import pytest
import torch

from harness import flow
from nn_util import arr, close


def test_parameter_is_a_tensor_and_a_leaf():
    data = flow.tensor(arr(2, 3))
    p = flow.nn.Parameter(data)
    assert isinstance(p, flow.Tensor) and isinstance(p, flow.nn.Parameter)
    assert type(p) is flow.nn.Parameter
    assert flow.nn.parameter.Parameter is flow.nn.Parameter
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert p.dtype == data.dtype and tuple(p.shape) == (2, 3)


def test_parameter_shares_memory_with_its_data_as_torch():
    a = arr(3)
    data, tdata = flow.tensor(a), torch.tensor(a)
    p, tp = flow.nn.Parameter(data), torch.nn.Parameter(tdata)
    with flow.no_grad():
        p.mul_(2)
    with torch.no_grad():
        tp.mul_(2)
    close(data, tdata)  # the parameter is an alias of its data
    assert not data.requires_grad


def test_parameter_detaches_from_history():
    x = flow.tensor(arr(3), requires_grad=True)
    p = flow.nn.Parameter(x * 2)
    assert p.is_leaf and p.grad_fn is None and p.requires_grad
    (p * 3).sum().backward()
    close(p.grad, np.full(3, 3.0))
    assert x.grad is None


def test_parameter_requires_grad_false_and_default_data():
    p = flow.nn.Parameter(flow.ones(2), requires_grad=False)
    assert not p.requires_grad and type(p) is flow.nn.Parameter
    empty, tempty = flow.nn.Parameter(), torch.nn.Parameter()
    assert tuple(empty.shape) == tuple(tempty.shape) == (0,)
    assert str(empty.dtype).split(".")[1] == str(tempty.dtype).split(".")[1]
    assert empty.requires_grad


def test_parameter_requires_grad_under_no_grad():
    with flow.no_grad():
        p = flow.nn.Parameter(flow.ones(2))
    assert p.requires_grad


def test_integer_parameter_requiring_grad_is_an_error():
    with pytest.raises(RuntimeError, match="floating point"):
        flow.nn.Parameter(flow.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="floating point"):
        torch.nn.Parameter(torch.tensor([1, 2]))
    p = flow.nn.Parameter(flow.tensor([1, 2]), requires_grad=False)
    assert str(p.dtype) == "oneflow.int64"


def test_inplace_ops_return_the_parameter_object():
    p = flow.nn.Parameter(flow.ones(3))
    with flow.no_grad():
        r = p.add_(1)
    assert r is p and type(r) is flow.nn.Parameter
    assert p.requires_grad_(False) is p
    # A new tensor computed from a parameter is a plain Tensor, as in torch.
    assert type(p * 2) is flow.Tensor and type(p.detach()) is flow.Tensor
    assert type(p.data) is flow.Tensor


def test_parameter_repr():
    a = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    p = flow.nn.Parameter(flow.tensor(a))
    expected = "Parameter containing:\n" + flow.Tensor.__repr__(p)
    assert repr(p) == expected and str(p) == expected
    tp = torch.nn.Parameter(torch.tensor(a))
    assert repr(tp).split("\n")[0] == repr(p).split("\n")[0]
    assert repr(p).endswith("requires_grad=True)")


def test_parameter_gradient_flows_in_a_graph():
    a = arr(2, 3)
    p, tp = flow.nn.Parameter(flow.tensor(a)), torch.nn.Parameter(torch.tensor(a))
    (p.sin() * p).sum().backward()
    (tp.sin() * tp).sum().backward()
    close(p.grad, tp.grad)


def test_parameter_deepcopy_keeps_type_and_copies_memory():
    p = flow.nn.Parameter(flow.tensor(arr(2, 2)), requires_grad=False)
    q = copy.deepcopy(p)
    assert type(q) is flow.nn.Parameter and not q.requires_grad
    close(q, p.numpy())
    assert not q._shares_storage(p)
    memo = {}
    assert copy.deepcopy(p, memo) is copy.deepcopy(p, memo)


def test_parameter_pickle_keeps_type_and_flags():
    p = flow.nn.Parameter(flow.tensor(arr(3, 2)))
    p.tag = "w"
    q = pickle.loads(pickle.dumps(p))
    assert type(q) is flow.nn.Parameter and q.requires_grad and q.is_leaf
    assert q.tag == "w"
    close(q, p.numpy())
    r = pickle.loads(pickle.dumps(flow.nn.Parameter(flow.ones(2), requires_grad=False)))
    assert type(r) is flow.nn.Parameter and not r.requires_grad


# ---------------------------------------------------------------------------
# Tensor deepcopy / pickle / type()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "bool"])
def test_tensor_pickle_round_trip(dtype):
    t = flow.tensor(arr(2, 3) > 0) if dtype == "bool" else flow.tensor(arr(2, 3) * 5)
    t = t.to(getattr(flow, dtype))
    u = pickle.loads(pickle.dumps(t))
    assert type(u) is flow.Tensor and u.dtype == t.dtype and tuple(u.shape) == (2, 3)
    assert bool((u == t).all())


def test_tensor_pickle_keeps_requires_grad_and_attributes():
    t = flow.tensor(arr(4), requires_grad=True)
    t.note = {"k": 1}
    u = pickle.loads(pickle.dumps(t))
    assert u.requires_grad and u.is_leaf and u.note == {"k": 1}
    # A non-contiguous view pickles its values, not its storage.
    v = pickle.loads(pickle.dumps(flow.tensor(arr(3, 4)).t()))
    assert tuple(v.shape) == (4, 3)
    meta = pickle.loads(pickle.dumps(flow.empty(2, 5, device="meta")))
    assert meta.is_meta and tuple(meta.shape) == (2, 5)


def test_tensor_deepcopy_keeps_leaf_grad_and_attributes():
    t = flow.tensor(arr(3), requires_grad=True)
    (t * 2).sum().backward()
    t.extra = [1, 2]
    u = copy.deepcopy(t)
    assert u.requires_grad and u.is_leaf and u.grad_fn is None
    close(u, t.numpy())
    close(u.grad, t.grad.numpy())
    assert u.extra == [1, 2] and u.extra is not t.extra
    assert not u._shares_storage(t) and not u.grad._shares_storage(t.grad)
    plain = copy.deepcopy(flow.tensor([1, 2, 3]))
    assert not plain.requires_grad and plain.tolist() == [1, 2, 3]


def test_deepcopy_of_non_leaf_copies_its_values_as_oneflow():
    # PyTorch raises here; upstream OneFlow returns a detached copy (test_ecosystem_semantics).
    a = arr(2)
    src = flow.tensor(a, requires_grad=True)
    y = src * 2
    u = copy.deepcopy(y)
    close(u, (torch.tensor(a) * 2).numpy())
    assert u.is_leaf and not u.requires_grad
    u.add_(1)  # its own memory: y unchanged, and y's graph still runs backward
    y.sum().backward()
    close(src.grad, np.full(2, 2.0))


def test_tensor_methods_copy_and_pickle_as_torch_builtin_methods():
    # Upstream's autotest deep-copies `tensor.method` of non-leaf tensors before calling it:
    # builtin methods are atomic under deepcopy in PyTorch, and pickle as getattr(self, name).
    a, b = arr(3), arr(4)
    ft = flow.tensor(a, requires_grad=True) * 2
    tt = torch.tensor(a, requires_grad=True) * 2
    for method in (ft.add, tt.add):
        assert copy.deepcopy(method) is method
    # Tensor methods written in Python (bound types.MethodType) too; other classes' bound
    # methods still deep-copy their object, as Python does.
    assert isinstance(ft.half, types.MethodType) and copy.deepcopy(ft.half) == ft.half
    close(copy.deepcopy(ft.half)().float(), tt.half().float().detach().numpy())

    class Box:
        def get(self):
            return self

    box = Box()
    assert copy.deepcopy(box.get)() is not box
    close(copy.copy(ft.mul)(3), (tt.mul(3)).detach().numpy())
    fu, tu = flow.tensor(b), torch.tensor(b)
    fm, tm = pickle.loads(pickle.dumps(fu.mul)), pickle.loads(pickle.dumps(tu.mul))
    assert fm.__self__ is not fu and tm.__self__ is not tu
    close(fm(2.5), tm(2.5).numpy())
    # Unbound methods pickle by name: the same object comes back, as torch.Tensor.add does.
    assert pickle.loads(pickle.dumps(flow.Tensor.add)) is flow.Tensor.add
    assert pickle.loads(pickle.dumps(torch.Tensor.add)) is torch.Tensor.add
    assert copy.deepcopy(flow.Tensor.add) is flow.Tensor.add


def test_deepcopy_memo_keeps_aliasing_between_objects():
    t = flow.tensor(arr(2))
    a, b = copy.deepcopy([t, t])
    assert a is b


def test_tensor_type():
    t = flow.tensor(arr(2))
    assert t.type() == "oneflow.FloatTensor"
    assert flow.tensor([1, 2]).type() == "oneflow.LongTensor"
    assert t.type(flow.float64).dtype == flow.float64
    assert t.type("oneflow.DoubleTensor").dtype == flow.float64
    assert t.type(flow.float32) is t
    for name in ("float16", "bfloat16", "int8", "uint8", "int32", "bool"):
        ours = t.to(getattr(flow, name)).type().replace("oneflow.", "")
        assert ours == torch.zeros(1, dtype=getattr(torch, name)).type().replace("torch.", "")
    with pytest.raises(ValueError, match="invalid type"):
        t.type("oneflow.NoSuchTensor")


def test_as_subclass_shares_data_and_history():
    import torch

    class Mine(flow.Tensor):
        pass

    for lib, cls in ((flow, Mine), (torch, type("TMine", (torch.Tensor,), {}))):
        x = lib.ones(3, requires_grad=True)
        y = (x * 2).as_subclass(cls)
        assert type(y) is cls and y.requires_grad and y.grad_fn is not None
        (y * 3).sum().backward()
        assert x.grad.tolist() == [6.0, 6.0, 6.0]
        z = x.detach().as_subclass(cls)
        z[0] = 5.0  # a view: writes reach the original
        assert x[0].item() == 5.0
    with pytest.raises(TypeError, match="subclass of oneflow.Tensor"):
        flow.ones(2).as_subclass(int)
    assert flow.is_inference(flow.ones(1)) is False
    assert flow.from_dlpack(flow.to_dlpack(flow.arange(3))).tolist() == [0, 1, 2]
