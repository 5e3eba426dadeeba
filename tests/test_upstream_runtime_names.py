"""Upstream OneFlow's runtime names that its own test suite and scripts call (tools/upstream_suite.py,
docs/upstream_suite.md, third round): `Generator(device="auto")`, `_oneflow_internal.eager.Sync`,
`oneflow.asyncs`, `TensorTuple` as the gradients of module backward hooks."""
import copy
import pickle

import numpy as np
import pytest
import torch

import oneflow as flow


def test_eager_sync_and_asyncs_thread_keep_results():
    flow._oneflow_internal.eager.Sync()
    flow._oneflow_internal.eager.ClusterSync()
    t1, t2 = flow.asyncs.Thread(), flow.asyncs.Thread()
    assert t1.thread_global_id != t2.thread_global_id
    assert flow._oneflow_internal.AsyncThread is flow.asyncs.Thread
    with flow.asyncs.thread(t1):
        x = flow.ones(3) * 2
    assert x.tolist() == [2.0, 2.0, 2.0]

    @flow.asyncs.thread(t2)
    def f(a):
        return a + 1

    assert f(flow.zeros(2)).tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="asyncs.thread"):
        flow.asyncs.thread(3)


def test_module_backward_hooks_get_tensor_tuples_like_torch_tuples():
    from oneflow._oneflow_internal import TensorTuple
    from oneflow.framework.tensor import TensorTuple as FrameworkTensorTuple

    assert TensorTuple is FrameworkTensorTuple
    seen, tseen = [], []

    def hook(module, grad_input, grad_output):
        seen.append((type(grad_input), type(grad_output), grad_input, grad_output))

    def thook(module, grad_input, grad_output):
        tseen.append((grad_input, grad_output))

    m, tm = flow.nn.Sigmoid(), torch.nn.Sigmoid()
    m.register_full_backward_hook(hook)
    tm.register_full_backward_hook(thook)
    x, tx = flow.ones(5, 5, requires_grad=True), torch.ones(5, 5, requires_grad=True)
    (m(x) * 2).sum().backward()
    (tm(tx) * 2).sum().backward()
    gi_type, go_type, gi, go = seen[0]
    assert gi_type is TensorTuple and go_type is TensorTuple
    assert isinstance(gi, tuple) and len(gi) == len(tseen[0][0]) and len(go) == len(tseen[0][1])
    np.testing.assert_allclose(go[0].numpy(), tseen[0][1][0].numpy())
    np.testing.assert_allclose(gi[0].numpy(), tseen[0][0][0].numpy(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
    assert repr(TensorTuple((None,))) == "TensorTuple(None)"


def test_nn_optimizer_paths_are_oneflow_optims_classes():
    from oneflow.nn.optimizer.lr_scheduler import LRScheduler, CosineDecayLR
    from oneflow.nn.optimizer.optimizer import Optimizer
    from oneflow.nn.optimizer.swa_utils import SWALR, AveragedModel, update_bn
    import oneflow.nn.optimizer as opt

    assert LRScheduler is flow.optim.lr_scheduler.LRScheduler and Optimizer is flow.optim.Optimizer
    assert CosineDecayLR is flow.optim.lr_scheduler.CosineDecayLR
    assert (SWALR, AveragedModel, update_bn) == (flow.optim.swa_utils.SWALR, flow.optim.swa_utils.AveragedModel,
                                                 flow.optim.swa_utils.update_bn)
    assert opt.SGD is flow.optim.SGD and opt.AdamW is flow.optim.AdamW
    # a scheduler made through the upstream path drives the optimizer as oneflow.optim's does
    p, tp = flow.nn.Parameter(flow.ones(2)), torch.nn.Parameter(torch.ones(2))
    o, to = opt.SGD([p], lr=0.1), torch.optim.SGD([tp], lr=0.1)
    s, ts = opt.lr_scheduler.StepLR(o, 2, 0.5), torch.optim.lr_scheduler.StepLR(to, 2, 0.5)
    for _ in range(5):
        o.step(), to.step(), s.step(), ts.step()
        assert s.get_last_lr() == ts.get_last_lr()


@pytest.mark.parametrize("module,name", [("multiplicative_lr", "MultiplicativeLR"), ("step_lr", "StepLR"),
                                         ("cosine_annealing_warm_restarts", "CosineAnnealingWarmRestarts"),
                                         ("warmup_lr", "WarmupLR"), ("reduce_lr_on_plateau", "ReduceLROnPlateau"),
                                         ("chained_scheduler", "ChainedScheduler"), ("multistep_lr", "MultiStepLR")])
def test_nn_optimizer_scheduler_modules(module, name):
    import importlib

    mod = importlib.import_module(f"oneflow.nn.optimizer.{module}")
    assert getattr(mod, name) is getattr(flow.optim.lr_scheduler, name)



def test_tensor_tuple_lives_in_framework_with_upstreams_helper():
    from oneflow.framework.tensor_tuple_util import TensorTuple, convert_to_tensor_tuple

    assert flow._oneflow_internal.TensorTuple is TensorTuple is flow.framework.tensor.TensorTuple
    x, y = flow.ones(2), flow.zeros(3)
    assert convert_to_tensor_tuple(None) == TensorTuple() and type(convert_to_tensor_tuple(None)) is TensorTuple
    one = convert_to_tensor_tuple(x)
    assert type(one) is TensorTuple and len(one) == 1 and one[0] is x
    two = convert_to_tensor_tuple([x, y])
    assert type(two) is TensorTuple and two[0] is x and two[1] is y
