"""Global tensors (docs/global_tensors.md): placement and SBP objects here; boxing, the ops'
SBP signatures and autograd in tests/global_worker.py, run by the launcher in worlds of 1, 2 and
3 processes (3: uneven splits), each process checking against PyTorch on the whole tensors; nn.Graph
over global tensors the same way in tests/global_graph_worker.py."""
import os
import pickle
import subprocess
import sys

import pytest

import oneflow as flow
import oneflow.distributed as dist
from test_distributed import free_port

HERE = os.path.dirname(__file__)


@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
@pytest.mark.parametrize("worker", ["global_worker.py", "global_graph_worker.py", "global_placement_worker.py",
                                    "global_matrix_worker.py"])
@pytest.mark.parametrize("nproc", [1, 2, 3])
def test_global_cases(nproc, worker):
    cmd = [sys.executable, "-m", "oneflow.distributed.launch", "--nproc_per_node", str(nproc),
           "--master_port", str(free_port()), os.path.join(HERE, worker), "all"]  # every case in turn
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in range(nproc):
        assert f"rank {rank}: all ok" in r.stdout, r.stdout + r.stderr


def test_sbp_values():
    s = flow.sbp
    assert repr(s.split(1)) == "oneflow.sbp.split(dim=1)" and repr(s.broadcast) == "oneflow.sbp.broadcast"
    assert repr(s.partial_sum) == "oneflow.sbp.partial_sum"
    assert s.split(0) == s.split(0) != s.split(1) and s.broadcast != s.partial_sum
    assert len({s.split(0), s.split(0), s.broadcast}) == 2
    assert pickle.loads(pickle.dumps(s.split(2))) == s.split(2)
    assert isinstance(s.broadcast, s.sbp)
    with pytest.raises(ValueError, match="non-negative"):
        s.split(-1)
    with pytest.raises(TypeError, match="must be an int"):
        s.split(1.0)
    with pytest.raises(AttributeError):
        s.broadcast._kind = "S"


def test_placement_values():
    p = flow.placement("cpu", ranks=[0, 1])
    assert p == flow.placement(type="cpu", ranks=[0, 1]) == flow.placement("cpu", {0: [0, 1]})
    assert p != flow.placement("cuda", ranks=[0, 1]) and flow.placement("gpu", [0]).type == "cuda"
    assert p.ranks.tolist() == [0, 1] and p.ranks.shape == (2,) and p.device_type == "cpu" and p.hierarchy == (2,)
    mesh = flow.placement("cpu", ranks=[[0, 1], [2, 3], [4, 5]])
    assert mesh.hierarchy == (3, 2) and mesh.ranks.tolist() == [[0, 1], [2, 3], [4, 5]] and mesh.ranks.shape == (3, 2) and mesh != flow.placement("cpu", range(6))
    assert repr(mesh) == 'oneflow.placement(type="cpu", ranks=[[0, 1], [2, 3], [4, 5]])'
    assert pickle.loads(pickle.dumps(mesh)) == mesh
    assert repr(p) == 'oneflow.placement(type="cpu", ranks=[0, 1])'
    assert hash(p) == hash(flow.placement("cpu", [0, 1])) and pickle.loads(pickle.dumps(p)) == p
    for bad, exc in [(lambda: flow.placement("tpu", [0]), ValueError), (lambda: flow.placement("cpu", []), TypeError),
                     (lambda: flow.placement("cpu", [0, 0]), ValueError),
                     (lambda: flow.placement("cpu", [[0, 1], [2]]), TypeError),
                     (lambda: flow.placement("cpu", {0: [0], 1: [0]}), ValueError)]:  # (a job of one machine)
        with pytest.raises(exc):
            bad()


def test_local_tensors_say_they_are_local():
    x = flow.ones(2)
    assert not x.is_global and not x.is_consistent and x.is_local
    with pytest.raises(RuntimeError, match="local tensor"):
        x.sbp
    with pytest.raises(TypeError, match="placement and sbp"):
        x.to_global(flow.placement("cpu", [0]))
    with pytest.raises(TypeError, match="placement and sbp"):
        flow.tensor([1.0], sbp=flow.sbp.broadcast)


def test_pointwise_rules_cover_the_pointwise_families_of_the_op_table():
    """Every op of the table's pointwise families has a signature (an op added there gets the
    split-preserving rule from the table, never an error or a broadcast): the generated
    signatures (tools/gen_sbp.py, through the extension; more in tests/test_global_sbp_table.py)."""
    import glob
    import yaml
    from oneflow._global.sbp_table import SIGNATURES
    root = os.path.join(os.path.dirname(__file__), "..", "src", "ops", "table")
    names = set()
    for fam in ("unary_float", "unary_same", "binary", "compare", "ternary", "pointwise_misc"):
        for path in glob.glob(os.path.join(root, fam + ".yaml")):
            entries = yaml.safe_load(open(path))
            names |= {e["name"] for e in (entries if isinstance(entries, list) else entries["ops"])}
    assert names and not names - set(SIGNATURES), sorted(names - set(SIGNATURES))
    assert {SIGNATURES[n] for n in names} <= {"pointwise", "pointwise_sum", "pointwise_scale", "pointwise_product"}


@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
def test_mesh_cases():
    """n-d SBP on a 2 x 2 mesh (tests/global_mesh_worker.py) in a world of 4."""
    cmd = [sys.executable, "-m", "oneflow.distributed.launch", "--nproc_per_node", "4", "--master_port",
           str(free_port()), os.path.join(HERE, "global_mesh_worker.py"), "all"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in range(4):
        assert f"rank {rank}: all ok" in r.stdout, r.stdout + r.stderr


def test_every_tensor_attribute_has_a_global_form():
    """Note [A global tensor is a Tensor]: no attribute of flow.Tensor reaches a global tensor from
    the base class (whose C++ methods would find no tensor in it)."""
    from oneflow._global.parameter import GlobalParameter
    from oneflow._global.routes import _NOT_ROUTED
    from oneflow._global.tensor import GlobalTensor
    assert issubclass(GlobalTensor, flow.Tensor) and issubclass(GlobalParameter, flow.nn.Parameter)
    for cls, base in ((GlobalTensor, flow.Tensor), (GlobalParameter, flow.nn.Parameter)):
        missing = [n for n in dir(base) if n not in cls.__dict__ and n not in _NOT_ROUTED]
        assert missing == [], cls


def test_an_unconstructed_tensor_subclass_is_not_a_tensor():
    """An instance of a subclass whose __init__ skipped the base's holds no tensor: ops refuse it
    with a TypeError (they used to read the missing tensor)."""
    class Half(flow.Tensor):
        def __init__(self):
            pass

    h = Half()
    for call in (lambda: flow.add(h, 1), lambda: flow.ones(2) + h, lambda: flow.relu(h), lambda: flow.cat([h, h])):
        with pytest.raises(TypeError, match="Half"):
            call()


def test_number_arguments_out_of_range_raise():
    with pytest.raises(RuntimeError, match="Overflow"):
        flow.ones(2).add(1, alpha=2 ** 70)
    with pytest.raises(RuntimeError, match="Overflow"):
        flow.ones(2).view(2 ** 70)
