"""oneflow.distributed on CUDA tensors (Note [NCCL groups]): a world of one process on the lent GPU
(NCCL refuses two ranks on one device, and the GPU machine has one), through NCCL where the build
has it, and through host memory over Gloo with the "gloo" backend. Each collective of one rank
leaves its input as it was (or gathers it once), so the expected values are the inputs; the route
taken is checked too. Marker ``cuda``."""
import datetime

import numpy as np
import pytest

import oneflow as flow
import oneflow.distributed as dist

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not dist.is_available(), reason="built without Gloo or NCCL")]


@pytest.fixture(params=["nccl", "gloo"])
def world(request):
    if request.param == "nccl" and not dist.is_nccl_available():
        pytest.skip("built without NCCL")
    if request.param == "gloo" and not dist.is_gloo_available():
        pytest.skip("built without Gloo")
    store = dist.TCPStore("127.0.0.1", 0, 1, is_master=True, timeout=datetime.timedelta(seconds=60))
    dist.init_process_group(request.param, store=store, rank=0, world_size=1,
                            timeout=datetime.timedelta(seconds=60))
    yield request.param
    dist.destroy_process_group()


def _x(shape=(5, 7), dtype=flow.float32):
    return flow.tensor(np.random.default_rng(0).standard_normal(shape)).to(dtype).to("cuda")


@pytest.mark.parametrize("dtype", [flow.float32, flow.float16, flow.bfloat16, flow.float64, flow.int64])
def test_all_reduce_broadcast_reduce(world, dtype):
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX, dist.ReduceOp.MIN, dist.ReduceOp.PRODUCT):
        x = _x(dtype=dtype) if dtype != flow.int64 else flow.arange(12, device="cuda").reshape(3, 4)
        ref = x.cpu().double().numpy()  # (bfloat16 has no numpy type)
        dist.all_reduce(x, op=op)
        assert x.is_cuda
        np.testing.assert_array_equal(x.cpu().double().numpy(), ref)
    x = _x()
    view = x[:, ::2]  # non-contiguous: staged, then written back
    dist.all_reduce(view, op=dist.ReduceOp.AVG)
    dist.broadcast(x, 0)
    dist.reduce(x, 0)
    np.testing.assert_array_equal(x.cpu().numpy(), _x().cpu().numpy())
    if world == "nccl":
        assert dist.group.WORLD._nccl, "CUDA tensors must go through NCCL"
    else:
        assert not dist.group.WORLD._nccl


def test_gathers_scatter_all_to_all(world):
    x = _x()
    outs = [flow.zeros(5, 7, device="cuda")]
    dist.all_gather(outs, x)
    np.testing.assert_array_equal(outs[0].cpu().numpy(), x.cpu().numpy())
    whole = flow.zeros(1, 5, 7, device="cuda")
    dist.all_gather_into_tensor(whole, x)
    np.testing.assert_array_equal(whole[0].cpu().numpy(), x.cpu().numpy())
    g = [flow.zeros(5, 7, device="cuda")]
    dist.gather(x, g, dst=0)
    np.testing.assert_array_equal(g[0].cpu().numpy(), x.cpu().numpy())
    s = flow.zeros(5, 7, device="cuda")
    dist.scatter(s, [x * 2], src=0)
    np.testing.assert_array_equal(s.cpu().numpy(), (x * 2).cpu().numpy())
    o = flow.zeros(5, 7, device="cuda")
    dist.all_to_all_single(o, x)
    np.testing.assert_array_equal(o.cpu().numpy(), x.cpu().numpy())
    o = flow.zeros(5, 7, device="cuda")
    dist.reduce_scatter_tensor(o, x)
    np.testing.assert_array_equal(o.cpu().numpy(), x.cpu().numpy())
    objs = [None]
    dist.all_gather_object(objs, {"on": world})
    assert objs == [{"on": world}]
    dist.barrier()


def test_ddp_on_cuda_matches_the_plain_module(world):
    flow.manual_seed(0)
    net = flow.nn.Sequential(flow.nn.Linear(6, 8), flow.nn.ReLU(), flow.nn.Linear(8, 3)).to("cuda")
    ref = flow.nn.Sequential(flow.nn.Linear(6, 8), flow.nn.ReLU(), flow.nn.Linear(8, 3)).to("cuda")
    ref.load_state_dict(net.state_dict())
    ddp = flow.nn.parallel.DistributedDataParallel(net, device_ids=[0])
    x = flow.randn(4, 6, device="cuda")
    ddp(x).square().sum().backward()
    ref(x).square().sum().backward()
    for p, q in zip(net.parameters(), ref.parameters()):
        assert p.grad.is_cuda
        np.testing.assert_allclose(p.grad.cpu().numpy(), q.grad.cpu().numpy(), rtol=1e-6, atol=1e-7)
