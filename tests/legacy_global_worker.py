"""One process of tests/test_legacy_global_jobs.py (started through the launcher, a world of 2;
of 4 for the mesh case):
0.x job functions under ``flow.scope.placement("cpu", "0:0-1")`` run on global tensors over the
two ranks (Note [Jobs over several ranks] in python/oneflow/_legacy/job.py), checked against
PyTorch on the whole batch: the consistent view (every rank passes the logical batch, gets whole
results), the mirrored view (each rank its own half), a variable split by ``distribute`` /
``model_distribute``, a placement of one rank, and a callback job (queued) over the ranks."""
import os
import sys
import typing

import numpy as np
import torch

import oneflow as flow
import oneflow.typing as tp

RANK, WORLD = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
B, LR, STEPS = 6, 0.5, 3


def data(step):
    rs = np.random.RandomState(step)
    return rs.randn(B, 8).astype(np.float32), rs.randint(0, 3, B).astype(np.int32)


def jobs(config=None, model_distribute=None, ids="0:0-1"):
    init = flow.random_uniform_initializer(-0.3, 0.3)

    def net(x):
        h = flow.layers.dense(x, 4, activation=flow.nn.relu, kernel_initializer=init, bias_initializer=init,
                              name="d1", model_distribute=model_distribute)
        return flow.layers.dense(h, 3, kernel_initializer=init, bias_initializer=init, name="d2")

    @flow.global_function(type="train", function_config=config)
    def train(x: tp.Numpy.Placeholder((B // WORLD if mirrored(config) else B, 8)),
              y: tp.Numpy.Placeholder((B // WORLD if mirrored(config) else B,), dtype=flow.int32)) -> tp.Numpy:
        with flow.scope.placement("cpu", ids):
            loss = flow.nn.sparse_softmax_cross_entropy_with_logits(y, net(x))
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [LR]), momentum=0).minimize(loss)
            return loss

    return train


def mirrored(config):
    return config is not None and "default_logical_view" in config.function_desc


def torch_twin():
    """The variables as torch leaves (their logical values, gathered) and the network on them."""
    v = {k: torch.from_numpy(t.numpy().copy()).requires_grad_() for k, t in flow.get_all_variables().items()}
    return v, lambda x: torch.relu(x @ v["d1-weight"].T + v["d1-bias"]) @ v["d2-weight"].T + v["d2-bias"]


def train_against_torch(train, view, eager=False):
    x0, y0 = data(0)
    mine = slice(RANK * B // WORLD, (RANK + 1) * B // WORLD)
    first = train(x0[mine], y0[mine]) if view == "mirrored" else train(x0, y0)  # creates the variables
    assert all(t.is_global for t in flow.get_all_variables().values())
    # (the twin starts from the variables after that first step, so the steps below are compared)
    v, fwd = torch_twin()
    opt = torch.optim.SGD(list(v.values()), lr=LR)
    for step in range(1, STEPS + 1):
        x, y = data(step)
        got = train(x[mine], y[mine]) if view == "mirrored" else train(x, y)
        tl = torch.nn.functional.cross_entropy(fwd(torch.from_numpy(x)), torch.from_numpy(y).long(), reduction="none")
        opt.zero_grad()
        tl.mean().backward()  # (OneFlow divides the variables' gradients by the loss's size)
        opt.step()
        want = tl.detach().numpy()[mine] if view == "mirrored" else tl.detach().numpy()
        assert got.shape == want.shape, (got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"{view} step {step}")
    for k, t in flow.get_all_variables().items():
        np.testing.assert_allclose(t.numpy(), v[k].detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
    assert first.shape == ((B // WORLD,) if view == "mirrored" else (B,))
    # compiled into one program (Note [Compiled jobs over several ranks]), unless eager
    assert train._dynamic == eager and len(train._compiled) == (0 if eager else 1), (train._dynamic, train._compiled)


def case_consistent():
    train_against_torch(jobs(), "consistent")
    w = flow.get_all_variables()["d1-weight"]
    assert w.sbp == (flow.sbp.broadcast,) and w.placement == flow.placement("cpu", [0, 1])


def case_eager():
    """The same job run eagerly (flow.enable_eager_execution(True)): its Python at every call."""
    flow.enable_eager_execution(True)
    try:
        train_against_torch(jobs(), "consistent", eager=True)
    finally:
        flow.enable_eager_execution(False)


def case_mirrored():
    cfg = flow.function_config()
    cfg.default_logical_view(flow.scope.mirrored_view())
    train_against_torch(jobs(cfg), "mirrored")


def case_model_distribute():
    train_against_torch(jobs(model_distribute=flow.distribute.split(0)), "consistent")
    w = flow.get_all_variables()["d1-weight"]
    assert w.sbp == (flow.sbp.split(0),) and tuple(w.to_local().shape) == (2, 8), (w.sbp, w.to_local().shape)


def case_default_placement_scope():
    """FunctionConfig.default_placement_scope over both ranks; a predict job returning a split result."""
    cfg = flow.function_config()
    cfg.default_placement_scope(flow.scope.placement("cpu", "0:0-1"))

    @flow.global_function(function_config=cfg)
    def double(x: tp.Numpy.Placeholder((5, 3))) -> tp.Numpy:
        assert x.is_global and x.sbp == (flow.sbp.split(0),)
        v = flow.get_variable("scale", shape=(3,), initializer=flow.constant_initializer(2.0),
                              distribute=flow.distribute.split(0))
        return flow.parallel_cast(x * v, distribute=flow.distribute.broadcast())

    a = np.arange(15, dtype=np.float32).reshape(5, 3)
    for _ in range(2):
        np.testing.assert_array_equal(double(a), a * 2)
    assert flow.get_all_variables()["scale"].sbp == (flow.sbp.split(0),)


def case_one_rank():
    """A placement of rank 1 alone: rank 0 runs the job on meta components and still gets the value."""
    @flow.global_function()
    def plus(x: tp.Numpy.Placeholder((4,))) -> tp.Numpy:
        with flow.scope.placement("cpu", "0:1"):
            return x + 1

    np.testing.assert_array_equal(plus(np.arange(4, dtype=np.float32)), np.arange(4) + 1)


def case_callback():
    """A job answering through a callback runs queued (asynchronously) over the ranks too."""
    got = []

    @flow.global_function()
    def square(x: tp.Numpy.Placeholder((4, 2))) -> tp.Callback[tp.Numpy]:
        with flow.scope.placement("cpu", "0:0-1"):
            return x * x

    a = np.arange(8, dtype=np.float32).reshape(4, 2)
    for k in range(3):
        square(a + k)(got.append)
    flow.sync_default_session()
    assert len(got) == 3
    for k, g in enumerate(got):
        np.testing.assert_array_equal(g, (a + k) ** 2)


def case_tensor_list():
    """ListListNumpy over the ranks (0.x's mirrored tensor list, Note [Tensor lists over several
    ranks] in job.py): each process passes its own device's list -- of its own length: 2 images on
    rank 0, 1 on rank 1 --, the tensor-list ops run on each rank's list (its flipped images come
    back as its own), and cast_to_current_logical_view makes the ranks' dense batches one global
    batch (their rows in rank order) that meets a global variable; in both views. Counts that are
    no balanced split of the batch (the first ranks at most one more) raise on every rank."""
    def images(rank, counts=(2, 1)):
        rs = np.random.RandomState(10 + rank)
        return [rs.randint(0, 256, (4, 4, 3)).astype(np.uint8) for _ in range(counts[rank])]

    w0 = np.array([1.0, 2.0, -1.0], np.float32)
    for view in ("consistent", "mirrored"):
        flow.clear_default_session()
        cfg = flow.function_config()
        if view == "mirrored":
            cfg.default_logical_view(flow.scope.mirrored_view())

        @flow.global_function(function_config=cfg)
        def job(imgs: tp.ListListNumpy.Placeholder((2, 4, 4, 3), dtype=flow.uint8)
                ) -> typing.Tuple[tp.ListListNumpy, tp.Numpy]:
            with flow.scope.placement("cpu", "0:0-1"):
                buf = flow.image_flip(flow.tensor_list_to_tensor_buffer(imgs), 1)
                flipped = flow.tensor_buffer_to_tensor_list(buf, shape=(4, 4, 3), dtype=flow.float32)
                dense = flow.cast_to_current_logical_view(flow.tensor_buffer_to_tensor(buf, flow.float32, (4, 4, 3)))
                assert dense.is_global and dense.shape == (3, 4, 4, 3), (dense.shape, dense.sbp)
                w = flow.get_variable("w", shape=(3,), initializer=flow.constant_initializer(0.0))
                return flipped, flow.math.reduce_sum(dense * w, axis=[1, 2, 3])

        flow.load_variables({"w": w0})
        mine = images(RANK)
        for _ in range(2):
            (out,), sums = job([mine])
            assert len(out) == len(mine)
            for got, img in zip(out, mine):
                np.testing.assert_array_equal(got, img[:, ::-1].astype(np.float32))
            every = np.array([(img.astype(np.float32) * w0).sum() for r in range(WORLD) for img in images(r)])
            want = every[[0, 1] if RANK == 0 else [2]] if view == "mirrored" else every
            np.testing.assert_allclose(sums, want, rtol=1e-5, err_msg=view)
    try:
        job([images(RANK, counts=(1, 2))])
    except RuntimeError as e:
        assert "balanced" in str(e), e
    else:
        raise AssertionError("an unbalanced split of the ranks' tensor lists did not raise")


def case_errors():
    for ids in ("0:2", "1:0", "0:0-2"):
        try:
            with flow.scope.placement("cpu", ids):
                pass
        except ValueError as e:
            assert "not a process of this job" in str(e), e
        else:
            raise AssertionError(f"placement {ids} in a world of {WORLD} did not raise")

    @flow.global_function()
    def two_placements(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0-1"):
            y = x + 1
        with flow.scope.placement("cpu", "0:1"):
            return y * 2

    try:
        two_placements(np.zeros(2, np.float32))
    except ValueError as e:
        assert "one placement" in str(e), e
    else:
        raise AssertionError("a job entering two placements did not raise")


def case_mesh():
    """0.x's hierarchy (a world of 4): flow.scope.placement("cpu", "0:0-3", (2, 2)) lays the ranks
    out as a 2 x 2 mesh, hierarchical_parallel_cast gives blobs one SBP per mesh axis (0.x's
    test_hierarchical_parallel_cast: a gather of x on [B, S(1)] by indices on [S(0), B]), and a
    train job's variable laid out [B, S(1)] by get_variable's parallel_distribution trains as
    PyTorch on the whole batch."""
    rs = np.random.RandomState(0)
    x, idx = rs.randn(8, 6).astype(np.float32), rs.randint(0, 8, 4).astype(np.int32)

    @flow.global_function()
    def gather(x: tp.Numpy.Placeholder((8, 6)), i: tp.Numpy.Placeholder((4,), dtype=flow.int32)) -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0-3", (2, 2)):
            x = flow.hierarchical_parallel_cast(x, parallel_distribution=["B", "S(1)"])
            i = flow.hierarchical_parallel_cast(i, parallel_distribution=["S(0)", "B"])
            assert x.placement.hierarchy == (2, 2) and x.sbp == (flow.sbp.broadcast, flow.sbp.split(1))
            y = flow.gather(x, i)
            return flow.hierarchical_parallel_cast(y, parallel_distribution=["B", "B"])

    np.testing.assert_allclose(gather(x, idx), x[idx], rtol=1e-6)

    @flow.global_function(type="train")
    def train(x: tp.Numpy.Placeholder((8, 6)), y: tp.Numpy.Placeholder((8, 3))) -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0-3", (2, 2)):
            w = flow.get_variable("w", shape=(6, 3), initializer=flow.random_uniform_initializer(-0.3, 0.3),
                                  parallel_distribution=["B", "S(1)"])
            x = flow.hierarchical_parallel_cast(x, parallel_distribution=["S(0)", "B"])
            out = flow.hierarchical_parallel_cast(flow.matmul(x, w), parallel_distribution=["S(0)", "S(0)"])
            loss = ((out - y) ** 2).sum(1)
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]), momentum=0).minimize(loss)
            return loss

    ys = rs.randn(8, 3).astype(np.float32)
    first = train(x, ys)
    w = flow.get_all_variables()["w"]
    assert w.placement.hierarchy == (2, 2) and w.sbp == (flow.sbp.broadcast, flow.sbp.split(1)), (w.placement, w.sbp)
    assert first.shape == (8,)
    tw = torch.from_numpy(w.numpy().copy()).requires_grad_()
    opt = torch.optim.SGD([tw], lr=0.1)
    for step in range(3):
        xs = np.random.RandomState(step + 1).randn(8, 6).astype(np.float32)
        got = train(xs, ys)
        tl = ((torch.from_numpy(xs) @ tw - torch.from_numpy(ys)) ** 2).sum(1)
        opt.zero_grad()
        tl.mean().backward()
        opt.step()
        np.testing.assert_allclose(got, tl.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=f"mesh step {step}")
    np.testing.assert_allclose(flow.get_all_variables()["w"].numpy(), tw.detach().numpy(), rtol=1e-5, atol=1e-6)
    for job in (gather, train):  # compiled on the mesh too (Note [Compiled jobs over several ranks])
        assert not job._dynamic and len(job._compiled) == 1, (job.name, job._dynamic, job._compiled)
    try:
        with flow.scope.placement("cpu", "0:0-3", (3, 2)):
            pass
    except ValueError as e:
        assert "holds 6 devices" in str(e), e
    else:
        raise AssertionError("a hierarchy of 6 for 4 devices did not raise")


CASES = {"mesh": case_mesh, "consistent": case_consistent, "mirrored": case_mirrored, "eager": case_eager,
         "model_distribute": case_model_distribute,
         "default_placement_scope": case_default_placement_scope, "one_rank": case_one_rank, "callback": case_callback,
         "tensor_list": case_tensor_list, "errors": case_errors}

if __name__ == "__main__":
    names = [c for c in CASES if c != "mesh"] if sys.argv[1:] == ["all"] else sys.argv[1:]
    for name in names:
        flow.clear_default_session()
        flow.manual_seed(0)
        CASES[name]()
        print(f"rank {RANK}: {name} ok", flush=True)
    print(f"rank {RANK}: all ok", flush=True)
