"""One process of the ZeRO tests (tests/test_graph_api_zero.py runs it through the launcher):
a data-parallel training graph (broadcast parameters, batches split over the ranks) with
``config.enable_zero(stage=1|2|3)`` against the same graph without ZeRO and PyTorch on the whole
batch; what this rank holds (optimizer state, gradients, parameters) measured and printed."""

import numpy as np
import torch

import global_worker as gw
import oneflow as flow
from global_worker import B, RANK, S0, WORLD, X, check, torch_mse, torch_step

CASES = ["stages", "sharded_gradients", "min_size", "errors"]


class TrainGraph(flow.nn.Graph):
    def __init__(self, model, opt):
        super().__init__()
        self.model = model
        self.add_optimizer(opt)

    def build(self, x, y):
        loss = ((self.model(x) - y) ** 2).mean()
        loss.backward()
        return loss


def _pair():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
    fm = flow.nn.Sequential(flow.nn.Linear(6, 16), flow.nn.Tanh(), flow.nn.Linear(16, 4))
    fm.load_state_dict({k: flow.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    fm.to_global(gw.P, B)
    return fm, tm


def _local_bytes(t):
    loc = t.to_local()
    return loc.numel() * loc.element_size()


def _train(stage, steps=4, min_size=1):
    fm, tm = _pair()
    opt = flow.optim.Adam(fm.parameters(), lr=0.02)
    topt = torch.optim.Adam(tm.parameters(), lr=0.02)
    g = TrainGraph(fm, opt)
    if stage:
        g.config.enable_zero(True, stage=stage, shard_min_size=min_size)
    losses = []
    for step in range(steps):
        x, y = X((8, 6), 30 + step), X((8, 4), 40 + step)
        loss = g(gw.g_of(x, S0), gw.g_of(y, S0))
        want = torch_step(topt, torch_mse(tm, x, y))
        losses.append(loss.to_global(sbp=B).to_local().numpy())
        np.testing.assert_allclose(losses[-1], want, rtol=1e-5, atol=1e-6, err_msg=f"stage {stage} loss {step}")
    state = sum(_local_bytes(v) for p in fm.parameters() for v in opt.state[p].values() if v.dim() > 0)
    params = sum(_local_bytes(p) for p in fm.parameters())
    return g, fm, tm, opt, losses, state, params


def case_stages():
    base = _train(0)
    _, _, _, _, base_losses, base_state, base_params = base
    total = sum(p.numel() for p in base[1].parameters())
    assert base_state == 2 * 4 * total, "unsharded: Adam's two moments of every parameter on every rank"
    for stage in (1, 2, 3):
        g, fm, tm, opt, losses, state, params = _train(stage)
        for a, b in zip(losses, base_losses):  # the unsharded graph's numbers
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7, err_msg=f"stage {stage} vs unsharded")
        for (n, p), (_, tp) in zip(fm.named_parameters(), tm.named_parameters()):
            laid = S0 if stage == 3 else B  # stage 3 keeps the parameters split
            check(p, tp.detach().numpy(), laid, f"stage {stage} {n}")
            for k in ("exp_avg", "exp_avg_sq"):
                assert opt.state[p][k].sbp == (S0,), f"stage {stage}: {n}'s {k} is {opt.state[p][k].sbp}"
        # this rank's rows of every state tensor: a 1/WORLD share (uneven splits: the first ranks one row more)
        rows = sum(gw.part(np.zeros(tuple(p.shape)), 0).size for p in fm.parameters())
        assert state == 2 * 4 * rows, (stage, state, rows)
        assert params == (4 * rows if stage == 3 else base_params)
        stats = g._zero_stats
        assert stats["state_bytes"] == state
        assert stats["grad_bytes"] == 4 * rows  # the gradient the step sees: this rank's rows
        print(f"rank {RANK}: world {WORLD} ZeRO stage {stage}: optimizer state {state} B, parameters {params} B "
              f"(unsharded: {base_state} B, {base_params} B)", flush=True)


def _train_graph(stage, acc=1, steps=3, bucket_bytes=None):
    """The graph's parameters after `steps` calls, and the bytes its gradient reductions received."""
    from oneflow.nn.graph import zero
    fm, _ = _pair()
    opt = flow.optim.Adam(fm.parameters(), lr=0.02)
    g = TrainGraph(fm, opt)
    if acc > 1:
        g.config.set_gradient_accumulation_steps(acc)
    if stage:
        g.config.enable_zero(True, stage=stage, shard_min_size=1)
    saved = zero.BUCKET_BYTES
    zero.BUCKET_BYTES = bucket_bytes or saved
    flow.boxing.reset_bytes_moved()
    try:
        for step in range(steps):
            g(gw.g_of(X((8, 6), 50 + step), S0), gw.g_of(X((8, 4), 60 + step), S0))
    finally:
        zero.BUCKET_BYTES = saved
    return [p.numpy() for p in fm.parameters()], flow.boxing.gradient_bytes_moved(), fm


def case_sharded_gradients():
    """Note [Sharded gradients]: stage 2 reduce-scatters the gradients (in one bucket, in several,
    with gradient accumulation) and trains as the unsharded graph; its gradient reductions receive
    (n - 1) / n of this rank's rows where the all-reduce receives 2 (n - 1) / n of everything.
    Stage 3 receives the same, reduce-scattering each use's gradient."""
    fm, _ = _pair()
    total = 4 * sum(p.numel() for p in fm.parameters())
    rows = 4 * sum(gw.part(np.zeros(tuple(p.shape)), 0).size for p in fm.parameters())
    for acc in (1, 2):
        base, base_bytes, _ = _train_graph(0, acc)
        assert base_bytes == 3 * acc * (2 * (WORLD - 1) * total // WORLD), (acc, base_bytes)
        _, stage1_bytes, _ = _train_graph(1, acc)
        assert stage1_bytes == base_bytes, "stage 1 still all-reduces the gradients"
        for bucket in (None, 64):  # (64 B: a bucket per parameter or two)
            params, moved, sharded = _train_graph(2, acc, bucket_bytes=bucket)
            for (n, p), a, b in zip(sharded.named_parameters(), params, base):
                assert p.sbp == (B,), n
                np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7, err_msg=f"stage 2 {n} (acc {acc}, {bucket})")
            assert moved == 3 * acc * (WORLD - 1) * rows, (acc, bucket, moved, rows)
            assert moved < base_bytes
        # stage 3: each split parameter gathered for its use, its gradient reduce-scattered back
        params3, moved3, _ = _train_graph(3, acc)
        for a, b in zip(params3, base):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7, err_msg=f"stage 3 (acc {acc})")
        assert moved3 == moved, (acc, moved3, moved)
        print(f"rank {RANK}: world {WORLD} gradient bytes received over 3 calls of {acc} micro-batches: "
              f"all-reduce {base_bytes} B, ZeRO-2 and 3 reduce-scatters {moved} B", flush=True)


def case_min_size():
    # parameters below shard_min_size stay whole (the biases here: 16 and 4 elements)
    _, fm, _, opt, _, _, _ = _train(1, steps=2, min_size=64)
    for n, p in fm.named_parameters():
        want = (S0,) if p.numel() >= 64 else (B,)
        assert opt.state[p]["exp_avg"].sbp == want, (n, opt.state[p]["exp_avg"].sbp)


def case_errors():
    cfg = TrainGraph(*(lambda m: (m, flow.optim.SGD(m.parameters(), lr=0.1)))(_pair()[0])).config
    gw.expect_errors([
        (lambda: cfg.enable_zero(True, stage=4), ValueError, "stage must be 1, 2 or 3"),
        (lambda: cfg.enable_zero(True, shard_min_size=0), ValueError, "shard_min_size must be a positive int"),
        (lambda: cfg.enable_zero("yes"), TypeError, "mode must be a bool"),
        (lambda: cfg.enable_zero(True, shard_restore_level=3), ValueError, "shard_restore_level"),
        (lambda: cfg.set_zero_redundancy_optimizer_mode("distributed_split"), RuntimeError, "enable_zero"),
    ])
    cfg.enable_zero(True, stage=3)
    assert cfg.zero_stage == 3
    cfg.enable_zero(False)
    assert cfg.zero_stage == 0


if __name__ == "__main__":
    gw.run_worker(globals(), CASES)
