"""flow.optimizer in train jobs (_legacy/optimizer.py): `variables=` limits what an optimizer
updates (names or a callable giving them), AdamW's weight_decay_includes / excludes pick the
variables it decays; compiled and eager. Checked against PyTorch."""
import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.typing as tp


pytestmark = pytest.mark.usefixtures("fresh_job_session")


@pytest.mark.parametrize("eager", [False, True])
def test_optimizer_variables_subset(eager):
    """variables= (names, or a callable giving them) limits what minimize() updates; the other
    variables keep their values and their gradients do not pile up."""
    flow.enable_eager_execution(eager)
    try:
        for variables in (["a"], lambda: ["a"]):
            flow.clear_default_session()

            @flow.global_function(type="train")
            def train(x: tp.Numpy.Placeholder((4,))) -> tp.Numpy:
                a = flow.get_variable("a", shape=(4,), initializer=flow.constant_initializer(1.0))
                b = flow.get_variable("b", shape=(4,), initializer=flow.constant_initializer(2.0))
                loss = (x * a * b).sum()
                flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]), momentum=0,
                                   variables=variables).minimize(loss)
                return loss

            x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
            for _ in range(2):
                train(x)
            got = flow.get_all_variables()
            np.testing.assert_allclose(got["a"].numpy(), 1.0 - 2 * 0.1 * x * 2.0, rtol=1e-6)  # d/da = x * b
            np.testing.assert_array_equal(got["b"].numpy(), np.full(4, 2.0, np.float32))
            assert got["b"].grad is None
    finally:
        flow.enable_eager_execution(False)
    flow.clear_default_session()

    @flow.global_function(type="train")
    def wrong(x: tp.Numpy.Placeholder((4,))) -> tp.Numpy:
        a = flow.get_variable("a", shape=(4,), initializer=flow.constant_initializer(1.0))
        loss = (x * a).sum()
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]), variables=["nope"]).minimize(loss)
        return loss

    with pytest.raises(ValueError, match="nope"):
        wrong(np.ones(4, np.float32))
    with pytest.raises(TypeError, match="variable names"):
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]), variables=[1])


@pytest.mark.parametrize("eager", [False, True])
def test_adamw_weight_decay_includes_and_excludes_match_torch_param_groups(eager):
    """0.x's AdamW(weight_decay_excludes='_bn-') (of_cnn_train_val's optimizer_util: no decay on
    batch-norm variables) or weight_decay_includes: the decay on the variables whose names the
    patterns match (or do not), as torch's AdamW with a group without decay."""
    x = np.array([[1.0, -2.0, 0.5], [0.3, 0.1, -1.0]], np.float32)
    init = {"conv-weight": np.array([0.5, -1.0, 2.0], np.float32), "conv_bn-gamma": np.array([1.5, 0.2, -0.7], np.float32)}
    flow.enable_eager_execution(eager)
    try:
        for kw, decayed in (({"weight_decay_excludes": "_bn-"}, ["conv-weight"]),
                            ({"weight_decay_includes": ["weight$"]}, ["conv-weight"]),
                            ({"weight_decay_excludes": ["nothing"]}, ["conv-weight", "conv_bn-gamma"])):
            flow.clear_default_session()

            @flow.global_function(type="train")
            def train(v: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
                w = flow.get_variable("conv-weight", shape=(3,), initializer=flow.constant_initializer(0.0))
                g = flow.get_variable("conv_bn-gamma", shape=(3,), initializer=flow.constant_initializer(0.0))
                loss = ((v * w * g).sum(1) ** 2).sum()
                flow.optimizer.AdamW(flow.optimizer.PiecewiseConstantScheduler([], [0.1]), weight_decay=0.5,
                                     do_bias_correction=True, **kw).minimize(loss)
                return loss

            flow.load_variables(init)  # (the values of the variables the first call makes)
            tw = {n: torch.tensor(init[n], requires_grad=True) for n in init}
            topt = torch.optim.AdamW([{"params": [tw[n] for n in init if n in decayed]},
                                      {"params": [tw[n] for n in init if n not in decayed], "weight_decay": 0.0}],
                                     lr=0.1, weight_decay=0.5)
            for _ in range(3):
                train(x)
                loss = ((torch.from_numpy(x) * tw["conv-weight"] * tw["conv_bn-gamma"]).sum(1) ** 2).sum()
                topt.zero_grad()
                loss.backward()
                topt.step()
            for n, v in flow.get_all_variables().items():
                np.testing.assert_allclose(v.numpy(), tw[n].detach().numpy(), rtol=1e-5, atol=1e-6)
    finally:
        flow.enable_eager_execution(False)
    sched = flow.optimizer.PiecewiseConstantScheduler([], [0.1])
    with pytest.raises(ValueError, match="not both"):
        flow.optimizer.AdamW(sched, weight_decay=0.1, weight_decay_includes="a", weight_decay_excludes="b")
    with pytest.raises(TypeError, match="str or a list of str"):
        flow.optimizer.AdamW(sched, weight_decay=0.1, weight_decay_excludes=[3])
