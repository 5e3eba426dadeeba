"""oneflow.distributed, oneflow.env / comm and nn.parallel.DistributedDataParallel.

The multi-process cases start tests/dist_worker.py through the launcher (which they test too):
each process checks its results against numpy / PyTorch itself. The single-process cases (a world
of one) cover the API's argument handling and errors."""
import datetime
import os
import socket
import subprocess
import sys

import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.distributed as dist

pytestmark = pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
WORKER = os.path.join(os.path.dirname(__file__), "dist_worker.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(case, nproc=2, extra=()):
    cmd = [sys.executable, "-m", "oneflow.distributed.launch", "--nproc_per_node", str(nproc),
           "--master_port", str(free_port()), *extra, WORKER, case]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)


# (3 processes where the case's code has sub-groups, odd sizes or non-members to cover)
@pytest.mark.parametrize("case,nproc", [("collectives", 3), ("p2p", 3),
                                        ("objects", 3), ("ddp", 2), ("ddp_unused", 2),
                                        ("sync_bn", 3), ("autograd_collectives", 3),
                                        ("mismatch", 2), ("ddp_hooks", 2),
                                        ("zero", 3), ("monitored_barrier", 3), ("ddp_join", 3),
                                        ("ddp_powersgd", 2), ("zero_join", 3)])
def test_multi_process(case, nproc):
    r = launch(case, nproc)
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in range(nproc):
        assert f"rank {rank}: {case} ok" in r.stdout, r.stdout + r.stderr


def test_launcher_stops_the_job_when_a_process_fails():
    r = launch("fail", 2)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "process 1" in r.stderr and "exited with code 3" in r.stderr


def test_collective_timeout_is_a_runtime_error():
    r = launch("timeout", 2)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "rank 0: timeout ok" in r.stdout


def test_launcher_log_dir(tmp_path):
    r = launch("objects", 2, ["--logdir", str(tmp_path)])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "rank 1: objects ok" in (tmp_path / "rank_1.log").read_text()


def test_launcher_rejects_bad_arguments():
    from oneflow.distributed.launch import parse_args
    with pytest.raises(SystemExit):
        parse_args(["--nproc_per_node", "0", "x.py"])
    with pytest.raises(SystemExit):
        parse_args(["--nnodes", "2", "--node_rank", "2", "x.py"])
    st = parse_args(["--standalone", "--nproc-per-node", "2", "x.py"])
    assert st.master_addr == "127.0.0.1" and st.master_port > 0 and st.nnodes == 1
    a = parse_args(["--nproc-per-node", "4", "--master_port", "1234", "train.py", "--lr", "0.1"])
    assert (a.nproc_per_node, a.master_port, a.training_script, a.training_script_args) == (4, 1234, "train.py",
                                                                                             ["--lr", "0.1"])


@pytest.fixture
def world_of_one():
    store = dist.TCPStore("127.0.0.1", 0, 1, is_master=True, timeout=datetime.timedelta(seconds=20))
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    yield store
    dist.destroy_process_group()


def test_not_initialized():
    assert dist.is_available() and not dist.is_initialized()
    with pytest.raises(RuntimeError, match="init_process_group"):
        dist.all_reduce(flow.ones(2))
    with pytest.raises(RuntimeError, match="init_process_group"):
        dist.get_rank()


def test_init_errors(monkeypatch):
    for k in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"):
        monkeypatch.delenv(k, raising=False)
    with pytest.raises(ValueError, match="RANK"):
        dist.init_process_group("gloo")
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    with pytest.raises(ValueError, match="MASTER_ADDR"):
        dist.init_process_group("gloo")
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.init_process_group("carrier-pigeon")
    with pytest.raises(RuntimeError, match="MPI"):
        dist.init_process_group("mpi")
    with pytest.raises(ValueError, match="init_method"):
        dist.init_process_group("gloo", init_method="udp://x:1")
    with pytest.raises(ValueError, match="rank 3 is outside"):
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}", rank=3, world_size=2)
    assert not dist.is_initialized()


def test_env_rendezvous_and_reinit(monkeypatch):
    monkeypatch.setenv("MASTER_ADDR", "localhost")
    monkeypatch.setenv("MASTER_PORT", str(free_port()))
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    dist.init_process_group()
    try:
        assert dist.get_backend() == "gloo" and dist.get_world_size() == 1
        with pytest.raises(RuntimeError, match="twice"):
            dist.init_process_group("gloo")
    finally:
        dist.destroy_process_group()
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1)
    dist.destroy_process_group()


def test_file_rendezvous(tmp_path):
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/store", rank=0, world_size=1)
    try:
        t = flow.arange(4.0)
        dist.all_reduce(t)
        assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    finally:
        dist.destroy_process_group()


def test_store():
    master = dist.TCPStore("127.0.0.1", 0, 2, is_master=True, timeout=datetime.timedelta(seconds=5))
    client = dist.TCPStore("127.0.0.1", master.port, 2, timeout=datetime.timedelta(seconds=5))
    client.set("k", "v")
    master.set("b", b"\x00\x01")
    assert master.get("k") == b"v" and client.get("b") == b"\x00\x01"
    assert client.add("n", 2) == 2 and master.add("n", 5) == 7
    assert master.check(["k", "n"]) and not master.check(["missing"])
    with pytest.raises(RuntimeError, match="timed out.*missing"):
        client.wait(["missing"], datetime.timedelta(seconds=0.3))
    assert client.get("k") == b"v"  # the client reconnects after a timed-out request
    pre = dist.PrefixStore("p", master)
    pre.set("x", "1")
    assert master.get("p/x") == b"1" and pre.get("x") == b"1"
    assert pre.add("n", 3) == 3 and master.add("p/n", 1) == 4 and pre.check(["x", "n"]) and not pre.check(["k"])
    with pytest.raises(RuntimeError, match=f"could not listen on port {master.port}"):
        dist.TCPStore("127.0.0.1", master.port, is_master=True, timeout=datetime.timedelta(seconds=1))
    with pytest.raises(RuntimeError, match="could not reach the store"):
        dist.TCPStore("127.0.0.1", free_port(), timeout=datetime.timedelta(seconds=0.3))


def test_world_of_one_api(world_of_one):
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "gloo")
    assert dist.group.WORLD is dist.GroupMember.WORLD and dist.get_process_group_ranks(dist.group.WORLD) == [0]
    t = flow.tensor([[1.0, 2.0], [3.0, 4.0]])
    for op in dist.ReduceOp:
        if op in (dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR):
            continue
        u = t.clone()
        dist.all_reduce(u, op=op)
        assert u.tolist() == t.tolist()
    out = flow.zeros(1, 2, 2)
    dist.all_gather_into_tensor(out, t)
    assert out[0].tolist() == t.tolist()
    objs = [None]
    dist.all_gather_object(objs, {"a": [1, 2]})
    assert objs == [{"a": [1, 2]}]
    with pytest.raises(ValueError, match="not a rank"):
        dist.broadcast(t, src=1)
    with pytest.raises(ValueError, match="same size"):
        dist.all_to_all_single(flow.zeros(3), flow.zeros(2))
    with pytest.raises(ValueError, match="distinct ranks"):
        dist.new_group([0, 0])
    with pytest.raises(TypeError, match="complex"):
        dist.all_reduce(flow.complex(t, t), op=dist.ReduceOp.MAX)
    with pytest.raises(TypeError, match="must be a Tensor"):
        dist.broadcast(np.ones(2), 0)
    with pytest.raises(ValueError, match="send to itself"):
        dist.send(t, 0)


def test_env_and_comm_single_process(monkeypatch):
    for k in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(k, raising=False)
    assert (flow.env.get_rank(), flow.env.get_world_size(), flow.env.get_local_rank(), flow.env.get_node_size()) \
        == (0, 1, 0, 1)
    t = flow.ones(3)
    try:
        flow.comm.all_reduce(t)  # joins a world of one by itself, as OneFlow
        assert dist.is_initialized() and t.tolist() == [1.0, 1.0, 1.0]
        lst = [flow.zeros(3)]
        flow.comm.all_gather(lst, t * 2)
        assert lst[0].tolist() == [2.0, 2.0, 2.0]
    finally:
        dist.destroy_process_group()


def test_ddp_world_of_one_matches_the_plain_module(world_of_one):
    flow.manual_seed(0)
    net = flow.nn.Sequential(flow.nn.Linear(5, 4), flow.nn.Tanh(), flow.nn.Linear(4, 2))
    ref = flow.nn.Sequential(flow.nn.Linear(5, 4), flow.nn.Tanh(), flow.nn.Linear(4, 2))
    ref.load_state_dict(net.state_dict())
    ddp = flow.nn.parallel.DistributedDataParallel(net, bucket_size=1)
    assert len(ddp._buckets) == 4 and ddp.module is net
    x = flow.randn(6, 5)
    ddp(x).pow(2).sum().backward()
    ref(x).pow(2).sum().backward()
    for p, q in zip(net.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6)
    assert list(ddp.state_dict()) == ["module." + k for k in net.state_dict()]
    with pytest.raises(RuntimeError, match="doesn't have any parameter"):
        flow.nn.parallel.DistributedDataParallel(flow.nn.ReLU())
    with pytest.raises(TypeError, match="nn.Module"):
        flow.nn.parallel.DistributedDataParallel(lambda x: x)


def test_queue_callback_runs_after_the_backward_pass():
    x = flow.ones(3, requires_grad=True)
    seen = []

    def hook(g):
        flow.autograd.Variable._execution_engine.queue_callback(lambda: seen.append(x.grad is not None))
    h = x.register_hook(hook)
    (x * 2).sum().backward()
    h.remove()
    assert seen == [True]  # ran once the gradient had been accumulated
    with pytest.raises(RuntimeError, match="during backward"):
        flow.autograd.Variable._execution_engine.queue_callback(print)
    t = torch.ones(2)  # the reference call's name exists in torch too
    assert hasattr(torch.autograd.Variable, "_execution_engine") and flow.autograd.Variable(flow.ones(1)).shape == t[:1].shape


def test_futures():
    from oneflow.futures import Future, collect_all, wait_all
    f = Future()
    g = f.then(lambda fut: fut.value() + 1)
    assert not g.done()
    f.set_result(1)
    assert g.wait() == 2 and g.done()
    with pytest.raises(RuntimeError, match="once"):
        f.set_result(3)
    bad = f.then(lambda fut: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        bad.wait()
    h = Future()
    assert [x.value() for x in collect_all([f, g]).wait()] == [1, 2] and wait_all([f, g]) == [1, 2]
    seen = []
    h.add_done_callback(lambda fut: seen.append(fut.value()))
    h.set_result("x")
    assert seen == ["x"]
    with pytest.raises(RuntimeError, match="nothing can complete it"):
        Future().wait()


def test_two_node_launch_on_one_machine():
    """--nnodes 2: two launchers (node ranks 0 and 1, one process each) form one world of 2."""
    port = free_port()
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cmds = [[sys.executable, "-m", "oneflow.distributed.launch", "--nnodes", "2", "--node_rank", str(node),
             "--nproc_per_node", "1", "--master_addr", "127.0.0.1", "--master_port", str(port), WORKER, "objects"]
            for node in (0, 1)]
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for c in cmds]
    outs = [p.communicate(timeout=240) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, out + err
    assert "rank 0: objects ok" in outs[0][0] and "rank 1: objects ok" in outs[1][0]
