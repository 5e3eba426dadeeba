"""Sessions of the job-function API (INVENTORY C.10; python/oneflow/_legacy/session.py): the
default session's registry of jobs, variables and interface ops, running a job through AsyncPush /
LazyRun / AsyncPull, the stash, and the configuration messages."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from oneflow._legacy.session import default_session


pytestmark = pytest.mark.usefixtures("fresh_job_session")


def _jobs():
    @flow.global_function()
    def scale(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(3,), initializer=flow.constant_initializer(2.0))
        flow.watch(x, lambda v: None)
        return x * w

    @flow.global_function(type="train")
    def fit(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        w = flow.get_variable("w2", shape=(3,), initializer=flow.constant_initializer(1.0))
        loss = (x * w).sum()
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1])).minimize(loss)
        return loss
    return scale, fit


def test_default_session_registers_jobs_variables_and_interface_ops():
    scale, fit = _jobs()
    s = default_session()
    assert isinstance(s, flow.Session) and s.status.name == "OPEN" and not s.is_running
    assert s.interface_ops == {"scale.x", "scale.return", "fit.x", "fit.return"}
    info = s.inter_user_job_info
    assert info.input_or_var_op_name2push_job_name == {"scale.x": "scale", "fit.x": "fit"}
    assert info.output_or_var_op_name2pull_job_name["fit.return"] == "fit"
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(s.LazyRun(scale, x), x * 2)
    assert s.is_running and s.status.name == "RUNNING"
    assert set(s.var_name2var_blob) == {"w"} and len(s.uuid2watch_handler) == 1
    assert s.config_proto.session_id == s.id and s.resource.machine_num >= 1
    assert s.function_flag_name2default_val["enable_reused_mem"] is True
    assert s.function_flag_name2default_val["use_xla_jit"] is None
    flow.clear_default_session()
    assert s.status.name == "CLOSED" and default_session() is not s and not default_session().interface_ops
    with pytest.raises(RuntimeError, match="closed"):
        s.LazyRun(scale, x)
    with pytest.raises(ValueError, match="not a job function"):
        default_session().LazyRun(scale, x)


def test_push_launch_pull():
    scale, fit = _jobs()
    s = default_session()
    got = []
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    s.AsyncPush("scale.x", lambda blob: blob.CopyFromNdarray(x))
    s.AsyncPull("scale.return", got.append)
    s.LaunchUserJob(scale)
    np.testing.assert_array_equal(got[0], x * 2)
    with pytest.raises(RuntimeError, match="AsyncPush"):
        s.LaunchUserJob(scale)  # the push was used up
    with pytest.raises(KeyError):
        s.AsyncPush("scale.y", lambda blob: None)
    # a train job through the session steps its variable
    s.LazyRun(fit, np.ones((2, 3), np.float32))
    w2 = flow.get_all_variables()["w2"].numpy()
    np.testing.assert_allclose(w2, np.full(3, 1.0 - 0.1 * 2), rtol=1e-6)  # d(sum x*w)/dw = 2


def test_eager_run_stash_and_lazy_blobs():
    scale, _ = _jobs()
    s = default_session()
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(s.EagerRun("scale", x), x * 2)
    from oneflow._legacy import job as job_mod
    assert job_mod._eager_jobs[0] is False  # (the jobs' mode is restored)
    s.StashJob("scale", key="k")
    with pytest.raises(KeyError):
        s.StashJob("nope")
    s.StashVariableBlob4Job("scale", "w", "blob")
    assert s.TryGetVariableBlobOfJobFromStash("scale", "w") == ("blob", True)
    assert s.TryGetVariableBlobOfJobFromStash("scale", "v") == (None, False)
    made = []
    assert s.FindOrCreateLazyBlob("op", lambda: made.append(1) or "b") == "b"
    assert s.FindOrCreateLazyBlob("op", lambda: made.append(1) or "c") == "b" and made == [1]
    s.AddInfo4InterfaceOpName("extra", {"attr": 1})
    assert "extra" in s.interface_ops


def test_snapshot_manager(tmp_path):
    scale, _ = _jobs()
    s = default_session()
    s.LazyRun(scale, np.ones((2, 3), np.float32))
    s.snapshot_mgr.save(str(tmp_path / "snap"))
    flow.get_all_variables()["w"].data.fill_(5.0)
    s.snapshot_mgr.load(str(tmp_path / "snap"))
    np.testing.assert_array_equal(flow.get_all_variables()["w"].numpy(), [2.0, 2.0, 2.0])
    assert s.snapshot_mgr.latest == str(tmp_path / "snap")


def test_config_messages():
    c = flow.ConfigProto(session_id=3)
    assert c.session_id == 3 and c.load_lib_path == [] and c.HasField("session_id") and not c.HasField("resource")
    with pytest.raises(AttributeError, match="no field"):
        c.nope = 1
    with pytest.raises(AttributeError):
        flow.ConfigProto(bogus=1)
    d = flow.ConfigProto()
    d.CopyFrom(c)
    assert d == c and "session_id: 3" in repr(d)

    cfg = flow.FunctionConfig()
    cfg.default_data_type(flow.float64)
    cfg.enable_reused_mem(False)
    cfg.use_xla_jit(True)

    @flow.global_function(type="train", function_config=cfg)
    def job(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        seen["conf"] = flow.current_global_function_desc().job_config_proto
        loss = (x * flow.get_variable("v", shape=(2,), initializer=flow.ones_initializer())).sum()
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1])).minimize(loss)
        return loss

    seen = {}
    job(np.ones(2, np.float32))
    conf = seen["conf"]
    assert isinstance(conf, flow.JobConfigProto) and conf.job_name == "job"
    assert conf.default_data_type == flow.float64 and conf.enable_reuse_mem is False
    assert conf.train_conf == {} and conf.predict_conf is None and conf.num_gradient_accumulation_steps == 1
    entry = conf.flag_name2flag_value["use_xla_jit"]
    assert isinstance(entry, flow.JobConfigProto.FlagName2flagValueEntry) and entry.value is True


def test_multi_client_session():
    m = flow.MultiClientSession(7)
    assert m.id == 7 and m.status is flow.MultiClientSession.Status.INITED and m.is_running
    assert m.config_proto.session_id == 7 and m.resource.machine_num >= 1
    assert "enable_inplace" in m.function_flag_name2default_val and "device_tag" in m.scope_attr_name2default_val
    m.TryClose()
    assert m.status.name == "CLOSED" and not m.is_running


def test_micro_batch_ops_accumulate_gradients_in_a_train_job():
    """unpack -> per-step ops -> acc: OneFlow's gradient accumulation inside a job; the step
    equals one over the whole batch (equal micro-batches, mean of their losses)."""
    import torch
    w0 = np.random.RandomState(0).randn(3, 2).astype(np.float32)

    @flow.global_function(type="train")
    def train(x: tp.Numpy.Placeholder((8, 3))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(3, 2), initializer=flow.constant_initializer(0.0))
        steps = flow.unpack(x, 4)
        loss = flow.acc(((flow.matmul(steps, w) - 1) ** 2).mean(), 4) / 4
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]), momentum=0).minimize(loss)
        return loss

    @flow.global_function()
    def twice(x: tp.Numpy.Placeholder((6, 2))) -> tp.Numpy:
        return flow.pack(flow.unpack(x, 3) * 2, 3) + flow.acc(flow.repeat(x, 2), 2)

    x0 = np.random.RandomState(1).randn(8, 3).astype(np.float32)
    train(x0)  # creates w
    flow.get_all_variables()["w"].data.copy_(flow.tensor(w0))
    tw = torch.tensor(w0, requires_grad=True)
    for k in range(3):
        x = np.random.RandomState(2 + k).randn(8, 3).astype(np.float32)
        loss = train(x)
        tl = ((torch.tensor(x) @ tw - 1) ** 2).mean()
        tl.backward()
        with torch.no_grad():
            tw -= 0.1 * tw.grad
        tw.grad = None
        np.testing.assert_allclose(loss, tl.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(flow.get_all_variables()["w"].numpy(), tw.detach().numpy(), rtol=1e-5)
    y = np.arange(12, dtype=np.float32).reshape(6, 2)
    np.testing.assert_array_equal(twice(y), y * 4)


def test_micro_batch_errors():
    from oneflow._legacy.micro import MicroBatches
    x = flow.arange(6.0).reshape(3, 2)
    m = flow.unpack(x, 3)
    assert isinstance(m, MicroBatches) and len(m) == 3 and tuple(m.shape) == (1, 2)
    for bad, exc, msg in [(lambda: flow.unpack(x, 2), ValueError, "does not divide"),
                          (lambda: flow.acc(m, 2), ValueError, "groups of 2"),
                          (lambda: flow.pack(x, 0), ValueError, "positive int"),
                          (lambda: m + flow.unpack(flow.ones(2, 2), 2), ValueError, "different time shapes"),
                          (lambda: flow.acc([1, 2], 1), TypeError, "expected a blob")]:
        with pytest.raises(exc, match=msg):
            bad()
    np.testing.assert_array_equal(flow.pack(flow.unpack(flow.unpack(x, 3), 1), 3).numpy(), x.numpy())
    assert flow.acc(x, 1) is x


def test_oneflow_snapshot_format(tmp_path):
    """CheckPoint writes OneFlow's snapshot (<name>/out raw bytes, <name>/meta text, snapshot_done);
    one written by hand as OneFlow does (every dtype) loads through flow.load and CheckPoint."""
    scale, _ = _jobs()
    scale(np.ones((2, 3), np.float32))
    path = tmp_path / "snap"
    flow.train.CheckPoint().save(str(path))
    assert (path / "snapshot_done").exists() and (path / "w" / "out").read_bytes() == np.full(3, 2.0, "<f4").tobytes()
    assert (path / "w" / "meta").read_text() == "shape {\n  dim: 3\n}\ndata_type: kFloat\n"
    loaded = flow.load(str(path))
    assert list(loaded) == ["w"] and loaded["w"].numpy().tolist() == [2.0, 2.0, 2.0]

    hand = tmp_path / "from_oneflow"
    values = {"a-weight": np.arange(6, dtype="<f4").reshape(2, 3), "b/ids": np.array([3, -1], "<i8"),
              "c": np.array([1.5, -2.0], "<f2"), "d": np.array([[True, False]]), "e": np.array(7.0, "<f8")}
    names = {"float32": "kFloat", "int64": "kInt64", "float16": "kFloat16", "bool": "kBool", "float64": "kDouble"}
    for name, v in values.items():
        d = hand.joinpath(*name.split("/"))
        d.mkdir(parents=True)
        (d / "out").write_bytes(v.tobytes())
        dims = " ".join(f"dim: {n}" for n in v.shape)
        (d / "meta").write_text(f"shape {{ {dims} }}\ndata_type: {names[str(v.dtype)]}\n")
    got = flow.load(str(hand))
    assert sorted(got) == sorted(values)
    for name, v in values.items():
        assert got[name].numpy().dtype == v.dtype and got[name].shape == v.shape
        np.testing.assert_array_equal(got[name].numpy(), v)
    bf = flow.tensor([1.0, -2.5, 3.0]).to(flow.bfloat16)
    from oneflow.framework.serialization import _snapshot_format as snapshot
    snapshot.write(str(tmp_path / "bf"), {"x": bf})
    assert flow.load(str(tmp_path / "bf"))["x"].dtype == flow.bfloat16
    assert flow.load(str(tmp_path / "bf"))["x"].float().tolist() == [1.0, -2.5, 3.0]

    # CheckPoint.load: a variable without meta takes its registered shape; a wrong size is an error
    (path / "w" / "meta").unlink()
    (path / "w" / "out").write_bytes(np.array([1, 2, 3], "<f4").tobytes())
    flow.train.CheckPoint().load(str(path))
    assert flow.get_all_variables()["w"].numpy().tolist() == [1.0, 2.0, 3.0]
    (path / "w" / "out").write_bytes(b"\0" * 8)
    with pytest.raises(RuntimeError, match="bytes of data"):
        flow.train.CheckPoint().load(str(path))
    (path / "w" / "out").unlink()
    with pytest.raises(RuntimeError, match="no values for"):
        flow.train.CheckPoint().load(str(path))
