"""The job-function API (spec 003, INVENTORY C; python/oneflow/_legacy/): @flow.global_function
with oneflow.typing placeholders, traced once and run many times; variables, layers, legacy op
signatures, optimizers, watchers, checkpoints. Results are checked against PyTorch / numpy on the
same values; the eager mode of job functions must give what the compiled mode gives."""
import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.typing as tp
from typing import Dict, List, Tuple


@pytest.fixture(autouse=True)
def _fresh_session():
    flow.clear_default_session()
    flow.enable_eager_execution(False)
    yield
    flow.clear_default_session()
    flow.enable_eager_execution(False)


def _mlp_jobs(batch, lr, momentum, reg=None):
    init = flow.random_uniform_initializer(-0.1, 0.1)

    def net(x):
        h = flow.layers.dense(x, 16, activation=flow.nn.relu, kernel_initializer=init,
                              bias_initializer=init, kernel_regularizer=reg, name="d1")
        return flow.layers.dense(h, 3, kernel_initializer=init, bias_initializer=init, name="d2")

    @flow.global_function(type="predict")
    def infer(x: tp.Numpy.Placeholder((batch, 8))) -> tp.Numpy:
        return net(x)

    @flow.global_function(type="train")
    def train(x: tp.Numpy.Placeholder((batch, 8)), y: tp.Numpy.Placeholder((batch,), dtype=flow.int32)) -> tp.Numpy:
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(y, net(x))
        sch = flow.optimizer.PiecewiseConstantScheduler([2], [lr, lr / 10])
        flow.optimizer.SGD(sch, momentum=momentum).minimize(loss)
        return loss

    return infer, train


def _torch_mlp(variables):
    v = {k: torch.from_numpy(t.numpy().copy()).requires_grad_() for k, t in variables.items()}
    return v, lambda x: torch.relu(x @ v["d1-weight"].T + v["d1-bias"]) @ v["d2-weight"].T + v["d2-bias"]


@pytest.mark.parametrize("eager", [False, True])
def test_train_job_matches_torch(eager):
    flow.enable_eager_execution(eager)
    infer, train = _mlp_jobs(6, 0.5, 0.9)
    rs = np.random.RandomState(0)
    x0 = rs.randn(6, 8).astype(np.float32)
    infer(x0)  # creates the variables (shared by name with the train job)
    v, fwd = _torch_mlp(flow.get_all_variables())
    buf = {k: torch.zeros_like(t) for k, t in v.items()}
    for step in range(5):
        x = rs.randn(6, 8).astype(np.float32)
        y = rs.randint(0, 3, 6).astype(np.int32)
        loss = train(x, y)
        lr = 0.5 if step <= 2 else 0.05  # boundary 2 is the last step at the first rate (0.x's kernel)
        tl = torch.nn.functional.cross_entropy(fwd(torch.from_numpy(x)), torch.from_numpy(y).long(), reduction="none")
        for t in v.values():
            t.grad = None
        tl.mean().backward()  # OneFlow divides the variables' gradients by the loss's size
        with torch.no_grad():  # 0.x's momentum: the rate inside the buffer (m = 0.9 m - lr g, w += m)
            for k, t in v.items():
                buf[k] = 0.9 * buf[k] - lr * t.grad
                t += buf[k]
        assert loss.shape == (6,) and loss.dtype == np.float32
        np.testing.assert_allclose(loss, tl.detach().numpy(), rtol=1e-5, atol=1e-6)
    for k, t in flow.get_all_variables().items():
        np.testing.assert_allclose(t.numpy(), v[k].detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
    np.testing.assert_allclose(infer(x0), fwd(torch.from_numpy(x0)).detach().numpy(), rtol=1e-5, atol=1e-6)
    if not eager:
        assert len(train._compiled) == 1 and len(infer._compiled) == 1


def test_l2_regularizer_adds_to_the_gradient():
    infer, train = _mlp_jobs(4, 0.1, 0.0, reg=flow.regularizers.l2(0.01))
    rs = np.random.RandomState(1)
    x, y = rs.randn(4, 8).astype(np.float32), rs.randint(0, 3, 4).astype(np.int32)
    infer(x)
    v, fwd = _torch_mlp(flow.get_all_variables())
    train(x, y)
    tl = torch.nn.functional.cross_entropy(fwd(torch.from_numpy(x)), torch.from_numpy(y).long())
    tl.backward()
    with torch.no_grad():
        want = v["d1-weight"] - 0.1 * (v["d1-weight"].grad + 0.01 * v["d1-weight"])
        want_b = v["d1-bias"] - 0.1 * v["d1-bias"].grad  # no regularizer on the bias
    np.testing.assert_allclose(flow.get_all_variables()["d1-weight"].numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(flow.get_all_variables()["d1-bias"].numpy(), want_b.numpy(), rtol=1e-5, atol=1e-6)


def test_watch_and_variable_initializers(capsys):
    seen = []

    def handler(y: tp.Numpy):
        seen.append(y)

    @flow.global_function()
    def constant_job() -> None:
        blob = flow.get_variable("blob", shape=(3,), initializer=flow.constant_initializer(2.5))
        flow.watch(blob, handler)
        flow.watch(blob * 2, "doubled:")

    flow.train.CheckPoint().init()
    assert constant_job() is None
    np.testing.assert_array_equal(seen[0], [2.5, 2.5, 2.5])
    assert "doubled: [5. 5. 5.]" in capsys.readouterr().out


def test_watch_diff_gets_gradients():
    diffs = {}

    @flow.global_function(type="train")
    def job(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(3,), initializer=flow.ones_initializer())
        y = x * w
        flow.watch_diff(y, lambda d: diffs.__setitem__("y", d))
        flow.watch_diff(w, lambda d: diffs.__setitem__("w", d))
        loss = y.sum()
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0]), momentum=0).minimize(loss)
        return loss

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    job(x)
    np.testing.assert_array_equal(diffs["y"], np.ones((2, 3)))
    np.testing.assert_array_equal(diffs["w"], x.sum(0))


def test_conv2d_same_padding_and_pooling_match_torch():
    @flow.global_function()
    def conv_job(x: tp.Numpy.Placeholder((1, 4, 9, 9))) -> Tuple[tp.Numpy, tp.Numpy, tp.Numpy]:
        w = flow.get_variable("conv-weight", shape=(6, 4, 3, 3), initializer=flow.truncated_normal(0.1))
        conv = flow.nn.conv2d(x, w, strides=2, padding="SAME")
        mp = flow.nn.max_pool2d(x, ksize=2, strides=2, padding="SAME")
        ap = flow.nn.avg_pool2d(x, ksize=3, strides=2, padding="VALID")
        return conv, mp, ap

    x = np.random.RandomState(2).randn(1, 4, 9, 9).astype(np.float32)
    conv, mp, ap = conv_job(x)
    w = torch.from_numpy(flow.get_all_variables()["conv-weight"].numpy())
    tx = torch.from_numpy(x)
    # SAME with stride 2 on 9: out 5, total pad 2 -> (1, 1)
    np.testing.assert_allclose(conv, torch.nn.functional.conv2d(tx, w, stride=2, padding=1).numpy(), rtol=1e-5, atol=1e-5)
    tmp = torch.nn.functional.max_pool2d(torch.nn.functional.pad(tx, (0, 1, 0, 1), value=-np.inf), 2, 2)
    np.testing.assert_allclose(mp, tmp.numpy())
    np.testing.assert_allclose(ap, torch.nn.functional.avg_pool2d(tx, 3, 2).numpy(), rtol=1e-6)
    assert np.abs(w.numpy()).max() <= 0.2  # truncated at two standard deviations


def test_layers_conv2d_shape_of_the_spec_example():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((1, 64, 32, 32))) -> tp.Numpy:
        return flow.layers.conv2d(x, 128, kernel_size=3, strides=2, padding="SAME",
                                  kernel_initializer=flow.constant_initializer(0.01), name="conv")

    out = job(np.ones((1, 64, 32, 32), np.float32))
    assert out.shape == (1, 128, 16, 16)
    np.testing.assert_allclose(out[0, 0, 5, 5], 64 * 9 * 0.01, rtol=1e-5)  # interior: a full window


def test_legacy_signatures_inside_jobs_only():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((3, 4)), i: tp.Numpy.Placeholder((2,), dtype=flow.int32)) -> Dict[str, tp.Numpy]:
        return {
            "gather": flow.gather(x, i, axis=1),
            "matmul": flow.matmul(x, x, transpose_b=True),
            "sort": flow.sort(x, axis=1, direction="DESCENDING"),
            "transpose": flow.transpose(x, perm=[1, 0]),
            "squeeze": flow.squeeze(flow.reshape(x, [3, 1, 4]), axis=[1]),
            "clamp": flow.clamp(x, min_value=-0.5, max_value=0.5),
            "expand": flow.expand(flow.reshape(x[:, :1], [3, 1]), [3, 5]),
            "concat": flow.concat([x, x], axis=0),
            "stack": flow.stack([x, x], axis=1),
            "one_hot": flow.one_hot(i, depth=4),
            "pad": flow.pad(x, [(1, 0), (0, 2)], constant_value=9),
            "reverse": flow.reverse(x, axis=1),
            "range": flow.range(5),
            "slice": flow.slice(x, [1, 1], [2, -1]),
        }

    x = np.random.RandomState(3).randn(3, 4).astype(np.float32)
    i = np.array([3, 0], np.int32)
    r = job(x, i)
    np.testing.assert_array_equal(r["gather"], x[:, i])
    np.testing.assert_allclose(r["matmul"], x @ x.T, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(r["sort"], -np.sort(-x, axis=1))
    np.testing.assert_array_equal(r["transpose"], x.T)
    np.testing.assert_array_equal(r["squeeze"], x)
    np.testing.assert_array_equal(r["clamp"], np.clip(x, -0.5, 0.5))
    np.testing.assert_array_equal(r["expand"], np.broadcast_to(x[:, :1], (3, 5)))
    np.testing.assert_array_equal(r["concat"], np.concatenate([x, x]))
    np.testing.assert_array_equal(r["stack"], np.stack([x, x], 1))
    np.testing.assert_array_equal(r["one_hot"], np.eye(4, dtype=np.float32)[i])
    np.testing.assert_array_equal(r["pad"], np.pad(x, [(1, 0), (0, 2)], constant_values=9))
    np.testing.assert_array_equal(r["reverse"], x[:, ::-1])
    np.testing.assert_array_equal(r["range"], np.arange(5))
    np.testing.assert_array_equal(r["slice"], x[1:3, 1:])
    # outside the job the eager signatures are back
    t = flow.tensor(x)
    idx = np.array([[2], [1], [0]])
    np.testing.assert_array_equal(flow.gather(t, 1, flow.tensor(idx)).numpy(), np.take_along_axis(x, idx, 1))
    assert flow.transpose(t, 0, 1).shape == (4, 3)


def test_math_namespace_against_numpy():
    x = np.random.RandomState(4).rand(3, 4).astype(np.float32) + 0.5
    t = flow.tensor(x)
    m = flow.math
    np.testing.assert_allclose(m.reduce_sum(t, axis=1).numpy(), x.sum(1), rtol=1e-6)
    np.testing.assert_allclose(m.reduce_mean(t, axis=[0, 1], keepdims=True).numpy(), x.mean(keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(m.reduce_max(t).numpy(), x.max())
    np.testing.assert_allclose(m.reduce_variance(t, axis=0).numpy(), x.var(0), rtol=1e-5)
    np.testing.assert_allclose(m.squared_difference(t, t * 2).numpy(), x * x, rtol=1e-6)
    np.testing.assert_allclose(m.add_n([t, t, t]).numpy(), 3 * x, rtol=1e-6)
    np.testing.assert_array_equal(m.argmax(t).numpy(), x.argmax(-1))
    np.testing.assert_array_equal(m.top_k(t, 2).numpy(), np.argsort(-x, -1)[:, :2])
    seg = m.unsorted_segment_sum(t, flow.tensor([0, 2, 0]), 3).numpy()
    np.testing.assert_allclose(seg, np.stack([x[0] + x[2], np.zeros(4), x[1]]), rtol=1e-6)
    bseg = m.unsorted_batch_segment_sum(t, flow.tensor([[0, 1, 1, 0]] * 3), 2).numpy()
    np.testing.assert_allclose(bseg, np.stack([x[:, 0] + x[:, 3], x[:, 1] + x[:, 2]], 1), rtol=1e-6)
    np.testing.assert_allclose(m.clip_by_value(t, 0.7, 1.0).numpy(), np.clip(x, 0.7, 1.0))
    b = m.broadcast_to_compatible_with(flow.ones(1, 4), [flow.ones(3, 1)])
    assert tuple(b.shape) == (3, 4)


def test_returns_and_callbacks():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2, 2))) -> tp.Callback[Tuple[tp.Numpy, tp.ListNumpy]]:
        return x + 1, x * 2

    got = []
    job(np.ones((2, 2), np.float32))(got.append)
    flow.sync_default_session()  # the call returned at once; the callback ran on the job queue
    a, b = got[0]
    np.testing.assert_array_equal(a, np.full((2, 2), 2.0))
    assert isinstance(b, list) and len(b) == 1
    np.testing.assert_array_equal(b[0], np.full((2, 2), 2.0))

    @flow.global_function()
    def dyn(x: tp.ListNumpy.Placeholder((4, 3))) -> List[tp.Numpy]:
        return [x.sum(dim=1)]

    (s,) = dyn([np.ones((2, 3), np.float32)])
    np.testing.assert_array_equal(s, [3.0, 3.0])
    (s,) = dyn([np.ones((4, 3), np.float32)])  # another shape: another program
    assert s.shape == (4,) and len(dyn._compiled) == 2


def test_namespace_checkpoint_and_load(tmp_path):
    @flow.global_function()
    def job() -> tp.Numpy:
        with flow.scope.namespace("enc"):
            v = flow.get_variable("w", shape=(2, 2), initializer=flow.random_normal_initializer())
        return v + 0

    first = job()
    assert list(flow.get_all_variables()) == ["enc-w"]
    ckpt = flow.train.CheckPoint()
    ckpt.save(str(tmp_path / "ck"))
    flow.load_variables({"enc-w": np.zeros((2, 2), np.float32)})
    np.testing.assert_array_equal(job(), np.zeros((2, 2)))  # the program reads the variable
    ckpt.load(str(tmp_path / "ck"))
    np.testing.assert_array_equal(job(), first)
    ckpt.init()  # fresh draws from the initializer
    assert not np.array_equal(job(), first)
    with pytest.raises(FileNotFoundError):
        ckpt.load(str(tmp_path / "none"))


def test_function_config_and_desc():
    cfg = flow.function_config()
    cfg.default_data_type(flow.float64)
    cfg.default_logical_view(None)
    seen = {}

    @flow.global_function(function_config=cfg)
    def job() -> tp.Numpy:
        seen["desc"] = flow.current_global_function_desc()
        return flow.get_variable("d", shape=(1,), initializer=flow.ones_initializer()) + 0

    assert job().dtype == np.float64
    assert seen["desc"].job_name == "job" and not seen["desc"].IsTrainable()
    with pytest.raises(AttributeError, match="no property"):
        cfg.no_such_knob(True)


# ---- errors ----

def test_job_errors():
    with pytest.raises(TypeError, match="annotate argument 'x'"):
        @flow.global_function()
        def bad(x) -> tp.Numpy:
            return x

    @flow.global_function()
    def ok(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        return x

    with pytest.raises(ValueError, match=r"shape \(2, 3\)"):
        ok(np.ones((3, 2), np.float32))
    with pytest.raises(TypeError, match="must be float32"):
        ok(np.ones((2, 3), np.int64))
    with pytest.raises(TypeError, match="takes 1 arguments"):
        ok()

    @flow.global_function(type="train")
    def no_minimize(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        return x

    with pytest.raises(RuntimeError, match="minimize"):
        no_minimize(np.ones(2, np.float32))

    @flow.global_function()
    def predict_minimize(x: tp.Numpy.Placeholder((2,))) -> None:
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1])).minimize(x.sum())

    with pytest.raises(RuntimeError, match="type 'train'"):
        predict_minimize(np.ones(2, np.float32))

    @flow.global_function()
    def unannotated(x: tp.Numpy.Placeholder((2,))):
        return x

    with pytest.raises(TypeError, match="annotate"):
        unannotated(np.ones(2, np.float32))

    @flow.global_function()
    def reshaped() -> tp.Numpy:
        flow.get_variable("v", shape=(2,), initializer=flow.zeros_initializer())
        return flow.get_variable("v", shape=(3,))

    with pytest.raises(ValueError, match="has shape"):
        reshaped()
    with pytest.raises(ValueError, match="type must be"):
        flow.global_function(type="eval")(lambda: None)
    with pytest.raises(RuntimeError, match="inside a job"):
        flow.watch(flow.ones(1))
    with pytest.raises(ValueError, match="values needs one more"):
        flow.optimizer.PiecewiseConstantScheduler([1, 2], [0.1])
    # a failed trace leaves the eager names in place
    assert flow.gather(flow.ones(2, 2), 1, flow.tensor([[0], [1]])).shape == (2, 1)


@pytest.mark.skipif(not __import__("os").path.isdir("/usr/share/datasets/fashion-mnist"),
                    reason="dataset-fashion-mnist missing (scripts/setup.sh installs it)")
def test_example_trains_on_fashion_mnist():
    """examples/job_function_mnist.py (spec 003's MLP) learns: well above chance after 3000 images."""
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "examples", "job_function_mnist.py")
    spec = importlib.util.spec_from_file_location("job_function_mnist", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--limit", "3000"]) > 0.6


def test_spec_examples_of_legacy_ops():
    """The spec's examples (000: gather, expand, one_hot), with their documented outputs."""
    @flow.global_function()
    def gather_job(x: tp.Numpy.Placeholder(shape=(3, 3), dtype=flow.float32),
                   indice: tp.Numpy.Placeholder(shape=(2,), dtype=flow.int32)) -> Tuple[tp.Numpy, tp.Numpy]:
        return flow.gather(params=x, indices=indice, axis=1), flow.gather(params=x, indices=indice)

    x = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]]).astype(np.float32)
    a, b = gather_job(x, np.array([0, 2]).astype(np.int32))
    np.testing.assert_array_equal(a, [[1, 3], [4, 6], [7, 9]])
    np.testing.assert_array_equal(b, [[1, 2, 3], [7, 8, 9]])

    @flow.global_function()
    def expand_job(x: tp.Numpy.Placeholder(shape=(1, 3, 1, 2), dtype=flow.int32)) -> tp.Numpy:
        return flow.expand(input=x, expand_size=[1, 3, 2, 2])

    out = expand_job(np.array([[[[0, 1]], [[2, 3]], [[4, 5]]]]).astype(np.int32))
    assert out.shape == (1, 3, 2, 2) and out.dtype == np.int32
    np.testing.assert_array_equal(out[0, :, 1], [[0, 1], [2, 3], [4, 5]])

    @flow.global_function()
    def onehot_job(x: tp.Numpy.Placeholder((4,), dtype=flow.int32)) -> Tuple[tp.Numpy, tp.Numpy]:
        return flow.one_hot(indices=x, depth=5, axis=-1), flow.one_hot(indices=x, depth=5, axis=0)

    last, first = onehot_job(np.array([0, 3, 1, 2]).astype(np.int32))
    want = np.eye(5, dtype=np.int32)[[0, 3, 1, 2]]
    assert last.dtype == np.int32
    np.testing.assert_array_equal(last, want)
    np.testing.assert_array_equal(first, want.T)


def test_warmup_clipping_and_loss_scale_match_torch():
    infer, _ = _mlp_jobs(4, 0.1, 0.0)

    @flow.global_function(type="train")
    def train(x: tp.Numpy.Placeholder((4, 8)), y: tp.Numpy.Placeholder((4,), dtype=flow.int32)) -> tp.Numpy:
        init = flow.random_uniform_initializer(-0.1, 0.1)
        h = flow.layers.dense(x, 16, activation=flow.nn.relu, kernel_initializer=init, bias_initializer=init, name="d1")
        logits = flow.layers.dense(h, 3, kernel_initializer=init, bias_initializer=init, name="d2")
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(y, logits)
        sch = flow.optimizer.PiecewiseConstantScheduler([], [0.1], warmup=flow.optimizer.warmup.linear(2, 0.5))
        flow.optimizer.SGD(sch, momentum=0, loss_scale_factor=128.0,
                           grad_clipping=flow.optimizer.grad_clipping.by_global_norm(0.05)).minimize(loss)
        return loss

    rs = np.random.RandomState(5)
    infer(rs.randn(4, 8).astype(np.float32))
    v, fwd = _torch_mlp(flow.get_all_variables())
    for step, lr in enumerate([0.05, 0.075, 0.1, 0.1]):
        x, y = rs.randn(4, 8).astype(np.float32), rs.randint(0, 3, 4).astype(np.int32)
        train(x, y)
        tl = torch.nn.functional.cross_entropy(fwd(torch.from_numpy(x)), torch.from_numpy(y).long())
        for t in v.values():
            t.grad = None
        tl.backward()
        torch.nn.utils.clip_grad_norm_(list(v.values()), 0.05)
        with torch.no_grad():
            for t in v.values():
                t -= lr * t.grad
    for k, t in flow.get_all_variables().items():
        np.testing.assert_allclose(t.numpy(), v[k].detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
    with pytest.raises(TypeError, match="warmup must come from"):
        flow.optimizer.PiecewiseConstantScheduler([], [0.1], warmup=3)


def _np_batch_gather(params, indices, axis, k):
    """TF's gather with batch_dims k, by loops over the batch."""
    batch = params.shape[:k]
    out = [np.take(params[b], indices[b], axis=axis - k) for b in np.ndindex(*batch)]
    return np.stack(out).reshape(batch + out[0].shape)


def test_gather_with_batch_dims_matches_tf_semantics():
    rng = np.random.default_rng(0)
    p = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    cases = [(rng.integers(0, 3, (2, 6)), 1, 1), (rng.integers(0, 4, (2, 3, 2, 2)), 2, 2),
             (rng.integers(0, 5, (2, 3)), 3, 2), (rng.integers(0, 4, (2, 7)), 2, 1), (rng.integers(0, 4, (2, 3, 4)), 2, -1)]

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2, 3, 4, 5)), i: tp.Numpy.Placeholder((2, 7), dtype=flow.int32)) -> tp.Numpy:
        return flow.gather(x, i, axis=2, batch_dims=1)

    i = rng.integers(0, 4, (2, 7)).astype(np.int32)
    np.testing.assert_array_equal(job(p, i), _np_batch_gather(p, i, 2, 1))
    from oneflow._legacy.ops import gather
    for idx, axis, k in cases:
        want = _np_batch_gather(p, idx, axis, k if k >= 0 else k + idx.ndim)
        np.testing.assert_array_equal(gather(flow.tensor(p), flow.tensor(idx), axis=axis, batch_dims=k).numpy(), want)
    # axis defaults to batch_dims (0.x's batch_gather)
    idx = rng.integers(0, 3, (2, 4))
    np.testing.assert_array_equal(gather(flow.tensor(p), flow.tensor(idx), batch_dims=1).numpy(),
                                  _np_batch_gather(p, idx, 1, 1))
    with pytest.raises(ValueError, match="batch dims"):
        gather(flow.tensor(p), flow.tensor(rng.integers(0, 3, (3, 4))), axis=1, batch_dims=1)
    with pytest.raises(ValueError, match="at most axis"):
        gather(flow.tensor(p), flow.tensor(rng.integers(0, 3, (2, 3))), axis=1, batch_dims=2)


@pytest.mark.parametrize("eager", [False, True])
def test_dropout_seed_and_noise_shape(eager):
    """0.x's nn.dropout(x, rate, noise_shape, seed): a seeded dropout draws from its own
    generator, continuing across the job's calls (compiled or eager: the same masks), and a run
    repeats in a new session; noise_shape drops whole slices (TF's broadcast mask)."""
    x = np.ones((4, 6), np.float32)

    def run(calls):
        flow.clear_default_session()

        @flow.global_function(type="train")
        def train(v: tp.Numpy.Placeholder((4, 6))) -> Tuple[tp.Numpy, tp.Numpy]:
            w = flow.get_variable("w", shape=(6,), initializer=flow.constant_initializer(1.0))
            y = v * w
            a = flow.nn.dropout(y, rate=0.5, seed=3)
            b = flow.nn.dropout(y, rate=0.5, noise_shape=[4, 1], seed=4)
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0]), momentum=0).minimize((a + b).sum())
            return a, b
        return [train(x) for _ in range(calls)]

    flow.enable_eager_execution(eager)
    try:
        first = run(3)
    finally:
        flow.enable_eager_execution(False)
    again = run(3)  # (compiled: the same draws as the eager run, and a new session repeats them)
    for (a, b), (a2, b2) in zip(first, again):
        np.testing.assert_array_equal(a, a2)
        np.testing.assert_array_equal(b, b2)
        assert set(np.unique(a)) <= {0.0, 2.0} and set(np.unique(b)) <= {0.0, 2.0}
        assert all(len(set(row)) == 1 for row in b)  # a row kept or dropped whole
    assert not np.array_equal(first[0][0], first[1][0])  # the generator continues across calls
    with pytest.raises(ValueError, match="does not broadcast"):
        flow.nn.dropout(flow.ones(4, 6), rate=0.5, noise_shape=[4, 2])
