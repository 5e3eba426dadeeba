"""One process of a two-"machine" job (tests/test_global_nodes.py starts two launchers on
loopback, `--nnodes 2 --node_rank r --nproc_per_node 2`): placements over both machines, boxing
across them, a data-parallel training run against PyTorch, and the errors of processes that
disagree. `global_nodes_worker.py CASE...`."""
import os
import sys

import numpy as np
import torch

import oneflow as flow
from oneflow._global.tensor import GlobalTensor

RANK, WORLD = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
S0, S1, B, PS = flow.sbp.split(0), flow.sbp.split(1), flow.sbp.broadcast, flow.sbp.partial_sum


def case_machines():
    assert flow.env.get_node_size() == 2 and flow.env.get_local_size() == 2, flow.env.get_node_size()
    assert flow.env.get_node_rank() == RANK // 2 and flow.env.get_world_size() == 4
    every = flow.placement("cpu", {0: [0, 1], 1: [0, 1]})
    assert every == flow.placement("cpu", [0, 1, 2, 3]), every
    assert flow.placement("cpu", {0: [1], 1: [0]}).ranks.tolist() == [1, 2]
    for bad, exc in [({2: [0]}, ValueError), ({0: [2]}, ValueError), ({"a": [0]}, TypeError)]:
        try:
            flow.placement("cpu", bad)
        except exc:
            pass
        else:
            raise AssertionError(f"placement {bad} did not raise {exc.__name__}")


def case_boxing():
    """Every 1-d pair over the placement of both machines, and a move between the machines."""
    pl = flow.placement("cpu", {0: [0, 1], 1: [0, 1]})
    x = np.random.default_rng(0).standard_normal((6, 5))
    for src in (S0, S1, B):
        for dst in (S0, S1, B, PS):
            y = flow.tensor(x).to_global(pl, B).to_global(sbp=src).to_global(sbp=dst)
            np.testing.assert_allclose(y.to_global(sbp=B).to_local().numpy(), x, rtol=1e-12, err_msg=f"{src}->{dst}")
    first, second = flow.placement("cpu", {0: [0, 1]}), flow.placement("cpu", {1: [0, 1]})
    y = flow.tensor(x).to_global(first, B).to_global(placement=second, sbp=S1)
    if RANK in (2, 3):
        np.testing.assert_allclose(y.to_local().numpy(), np.array_split(x, 2, axis=1)[RANK - 2], rtol=1e-12)


def case_train():
    """Data parallel over the two machines: a split batch, a broadcast weight, SGD; the weights
    equal PyTorch's on the whole batch."""
    pl = flow.placement("cpu", {0: [0, 1], 1: [0, 1]})
    rng = np.random.default_rng(1)
    xs, ys, w0 = rng.standard_normal((8, 3)), rng.standard_normal((8, 1)), rng.standard_normal((3, 1))
    w = flow.nn.Parameter(flow.tensor(w0).to_global(pl, B))
    opt = flow.optim.SGD([w], lr=0.1)
    x, y = flow.tensor(xs).to_global(pl, B).to_global(sbp=S0), flow.tensor(ys).to_global(pl, B).to_global(sbp=S0)
    tw = torch.tensor(w0, requires_grad=True)
    topt = torch.optim.SGD([tw], lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        ((x @ w - y) ** 2).mean().backward()
        opt.step()
        topt.zero_grad()
        ((torch.tensor(xs) @ tw - torch.tensor(ys)) ** 2).mean().backward()
        topt.step()
    np.testing.assert_allclose(w.to_local().detach().numpy(), tw.detach().numpy(), rtol=1e-10, atol=1e-12)


def _small_cnn():
    """The example's CNN in miniature (8 x 8 images): conv -> batch norm -> relu -> pool twice, then
    two linear layers."""
    nn = flow.nn
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(8 * 2 * 2, 16), nn.ReLU(), nn.Linear(16, 10))


EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")


def _example_cnn():
    """examples/train_fashion_mnist.py's Net (28 x 28 images), its dropout off: a dropout's masks
    are drawn per rank on a split batch, so they (not the layout) would make the losses differ."""
    sys.path.insert(0, EXAMPLES)
    from train_fashion_mnist import Net
    net = Net()
    for m in net.modules():
        if isinstance(m, flow.nn.Dropout):
            m.p = 0.0
    return net


def _train_cnn(make, side, steps, graph=False):
    """examples/global_fashion_mnist.py's step over both machines: the model broadcast on the
    placement of the 4 processes, each batch split(0), AdamW, cross entropy (eagerly, or with
    `graph` as its nn.Graph): the losses and the weights after `steps` steps equal those of one
    process training the same model on the whole batches."""
    pl = flow.placement("cpu", {0: [0, 1], 1: [0, 1]})
    rng = np.random.default_rng(2)
    batches = [(rng.standard_normal((16, 1, side, side)).astype(np.float32), rng.integers(0, 10, 16))
               for _ in range(steps)]
    losses = {}
    for kind in ("local", "global"):
        flow.manual_seed(0)
        model = make()
        if kind == "global":
            model = model.to_global(pl, B)
        opt = flow.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
        loss_fn = flow.nn.CrossEntropyLoss()
        step = None
        if kind == "global" and graph:
            sys.path.insert(0, EXAMPLES)
            from global_fashion_mnist import TrainGraph
            step = TrainGraph(model, opt, loss_fn)
        losses[kind] = []
        for xs, ys in batches:
            x, y = flow.tensor(xs), flow.tensor(ys)
            if kind == "global":
                x, y = x.to_global(pl, B).to_global(sbp=S0), y.to_global(pl, B).to_global(sbp=S0)
            if step is not None:
                loss = step(x, y)
            else:
                loss = loss_fn(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
            losses[kind].append(loss.item())
        weights = [p.to_local().detach().numpy() if kind == "global" else p.detach().numpy()
                   for p in model.parameters()]
        losses[kind + " weights"] = weights
    np.testing.assert_allclose(losses["global"], losses["local"], rtol=1e-4, atol=1e-5)
    for g, w in zip(losses["global weights"], losses["local weights"]):
        # every rank holds the same broadcast parameters, to the last bit (Note [Identical sums]) ...
        every = [flow.zeros(g.shape, dtype=flow.float32) for _ in range(WORLD)]
        flow.distributed.all_gather(every, flow.tensor(g))
        for other in every:
            np.testing.assert_array_equal(other.numpy(), g)
        # ... and those of one process, within Adam's steps: a gradient that is only rounding noise
        # (a convolution's bias before a batch norm: the norm removes it) takes steps of about lr
        # whose signs the order of the sums decides
        np.testing.assert_allclose(g, w, rtol=1e-3, atol=2 * 2e-3 * steps)
    if RANK == 0:
        print(f"losses over 2 machines {losses['global']}, in one process {losses['local']}", flush=True)


def case_cnn_small():
    _train_cnn(_small_cnn, 8, 3)


def case_cnn():
    _train_cnn(_example_cnn, 28, 3)


def case_cnn_graph():
    _train_cnn(_example_cnn, 28, 3, graph=True)


def expect(call, text):
    try:
        call()
    except RuntimeError as e:
        assert text in str(e), f"{text!r} not in {e}"
    else:
        raise AssertionError(f"no RuntimeError ({text})")


def case_mismatch():
    """Processes that disagree on a tensor's shape or on the boxing they do get a RuntimeError
    saying so, on every process (no hang, no abort)."""
    pl = flow.placement("cpu", [0, 1, 2, 3])
    rows = 8 if RANK else 12  # rank 0 thinks the tensor is longer
    part = flow.ones(rows // 4, 3, dtype=flow.float64)
    g = GlobalTensor(part, pl, (S0,), (rows, 3))
    expect(lambda: g.to_global(sbp=B), "disagree on the tensor's shape")
    g = GlobalTensor(flow.ones(2, 3, dtype=flow.float64), pl, (S0,), (8, 3))
    expect(lambda: g.to_global(sbp=B if RANK == 0 else S1), "different calls")
    expect(lambda: g.to_global(sbp=B) if RANK == 0 else flow.comm.all_reduce(flow.ones(3)), "different calls")
    other = flow.placement("cpu", [1, 3] if RANK == 0 else [0, 1, 2])  # rank 0 names another placement
    expect(lambda: GlobalTensor(flow.ones(2, 3, dtype=flow.float64), other, (B,), (2, 3)).to_global(sbp=S0),
           "different placements")
    # and the job goes on
    np.testing.assert_allclose(g.to_global(sbp=S1).to_local().numpy(), np.ones((8, [1, 1, 1, 0][RANK])))


def case_die():
    """Rank 3 fails; the others, in a collective with it, fail within seconds."""
    pl = flow.placement("cpu", [0, 1, 2, 3])
    g = GlobalTensor(flow.ones(2, 3), pl, (S0,), (8, 3))
    if RANK == 3:
        import time
        print(f"failing at {time.time():.3f}", flush=True)
        raise RuntimeError("rank 3 fails on purpose")
    g.to_global(sbp=B)


if __name__ == "__main__":
    flow.env.init()
    for case in sys.argv[1:]:
        globals()["case_" + case]()
    print(f"rank {RANK}: ok", flush=True)
