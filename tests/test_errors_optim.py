"""Error messages of the training APIs: optimizer and scheduler arguments (torch's types and
wording), the fused update ops (the op named, shapes and dtypes in the message), and the boxed
form of ops with several tensor lists."""
import numpy as np
import pytest
import torch

import oneflow as flow
from oneflow import _boxed


def _p():
    return [flow.zeros(2, requires_grad=True)]


@pytest.mark.parametrize("make,exc,msg", [
    (lambda p: flow.optim.SGD(p, lr=-0.1), ValueError, "Invalid learning rate: -0.1"),
    (lambda p: flow.optim.SGD(p, momentum=-1), ValueError, "Invalid momentum value: -1"),
    (lambda p: flow.optim.SGD(p, nesterov=True), ValueError, "Nesterov momentum requires"),
    (lambda p: flow.optim.SGD(p, weight_decay=-1), ValueError, "Invalid weight_decay value"),
    (lambda p: flow.optim.Adam(p, betas=(1.0, 0.9)), ValueError,
     "Invalid beta parameter at index 0: 1.0"),
    (lambda p: flow.optim.AdamW(p, betas=(0.9, -0.1)), ValueError,
     "Invalid beta parameter at index 1"),
    (lambda p: flow.optim.Adam(p, eps=-1.0), ValueError, "Invalid epsilon value: -1.0"),
    (lambda p: flow.optim.RMSprop(p, alpha=-1.0), ValueError, "Invalid alpha value"),
    (lambda p: flow.optim.Adagrad(p, lr_decay=-1.0), ValueError, "Invalid lr_decay value"),
    (lambda p: flow.optim.Adagrad(p, initial_accumulator_value=-1.0), ValueError,
     "Invalid initial_accumulator_value value"),
    (lambda p: flow.optim.Adadelta(p, rho=1.5), ValueError, "Invalid rho value: 1.5"),
    (lambda p: flow.optim.NAdam(p, momentum_decay=-1.0), ValueError,
     "Invalid momentum_decay value"),
    (lambda p: flow.optim.SGD(p[0], lr=0.1), TypeError, "should be an iterable of Tensors"),
    (lambda p: flow.optim.SGD([1.0], lr=0.1), TypeError, "optimizer can only optimize Tensors"),
    (lambda p: flow.optim.SGD([{"params": {p[0]}}], lr=0.1), TypeError, "ordered collections"),
    (lambda p: flow.optim.SGD([p[0] * 2], lr=0.1), ValueError, "can't optimize a non-leaf"),
    (lambda p: flow.optim.SGD([{"params": p}, {"params": p}], lr=0.1), ValueError,
     "more than one parameter group"),
    (lambda p: flow.optim.LAMB(p, amsgrad=True), RuntimeError, "does not support AMSGrad"),
    (lambda p: flow.optim.LBFGS([{"params": p}, {"params": [flow.zeros(1)]}]), ValueError,
     "doesn't support per-parameter options"),
    (lambda p: flow.optim.LBFGS(p, line_search_fn="armijo"), ValueError, "strong_wolfe"),
    (lambda p: flow.optim.Adam([{"params": p, "clip_grad_max_norm": 1.0}]), ValueError,
     "clip_grad_norm_type"),
])
def test_optimizer_argument_errors(make, exc, msg):
    with pytest.raises(exc, match=msg.replace("(", r"\(").replace(")", r"\)")):
        make(_p())


def test_same_error_types_as_torch():
    for name, kw in [("SGD", dict(lr=-1)), ("Adam", dict(betas=(1.0, 0.9))),
                     ("RMSprop", dict(alpha=-1.0)), ("Adadelta", dict(rho=2.0)),
                     ("Adagrad", dict(lr_decay=-1.0)), ("NAdam", dict(momentum_decay=-1.0))]:
        with pytest.raises(ValueError) as fe:
            getattr(flow.optim, name)(_p(), **kw)
        with pytest.raises(ValueError) as te:
            getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kw)
        assert str(fe.value) == str(te.value)


def test_lbfgs_needs_a_closure():
    with pytest.raises(RuntimeError, match="requires a closure"):
        flow.optim.LBFGS(_p()).step(None)
    with pytest.raises(TypeError):  # a required argument, as in torch
        flow.optim.LBFGS(_p()).step()


def test_scheduler_argument_errors():
    opt = flow.optim.SGD(_p(), lr=0.1, momentum=0.9)
    S = flow.optim.lr_scheduler
    cases = [
        (lambda: S.StepLR(object(), 3), TypeError, "is not an Optimizer"),
        (lambda: S.LambdaLR(opt, [lambda e: 1, lambda e: 2]), ValueError,
         "Expected 1 lr_lambdas, but got 2"),
        (lambda: S.ConstantLR(opt, factor=2.0), ValueError, "between 0 and 1"),
        (lambda: S.LinearLR(opt, start_factor=0.0), ValueError, "greater than 0"),
        (lambda: S.CosineAnnealingWarmRestarts(opt, T_0=0), ValueError,
         "Expected positive integer T_0"),
        (lambda: S.OneCycleLR(opt, max_lr=0.1), ValueError, "total_steps OR"),
        (lambda: S.OneCycleLR(opt, max_lr=0.1, total_steps=10, anneal_strategy="x"), ValueError,
         "anneal_strategy"),
        (lambda: S.CyclicLR(opt, 0.01, 0.1, mode="nope"), ValueError, "mode is invalid"),
        (lambda: S.ReduceLROnPlateau(opt, factor=1.0), ValueError, "Factor should be < 1.0"),
        (lambda: S.ReduceLROnPlateau(opt, mode="avg"), ValueError, "mode avg is unknown"),
        (lambda: S.SequentialLR(opt, [S.StepLR(opt, 2)], milestones=[3]), ValueError,
         "one more than the number of milestone points"),
        (lambda: S.CosineDecayLR(opt, decay_steps=0), ValueError, "greater than zero"),
        (lambda: S.WarmupLR(opt, warmup_method="cubic"), ValueError, "'linear' or 'constant'"),
        (lambda: S.WarmupLR(opt, warmup_iters=0), ValueError, "can't be equal to 0"),
        (lambda: S.WarmupLR(S.MultiplicativeLR(opt, lambda e: 0.9)), ValueError, "closed form"),
        (lambda: S.PolynomialLR(opt, decay_batch=0), ValueError, "greater than zero"),
    ]
    for make, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            make()
    sched = S.OneCycleLR(opt, max_lr=0.1, total_steps=3)
    for _ in range(3):
        sched.step()
    with pytest.raises(ValueError, match="Tried to step 4 times"):
        sched.step()


# ---------------------------------------------------------------------------------------------
# The fused update ops


def _lists(n=2, shape=(3,), dtype=flow.float32):
    return [flow.zeros(*shape, dtype=dtype) for _ in range(n)]


def test_update_op_errors_name_the_op():
    p, g, m, v, s = _lists(), _lists(), _lists(), _lists(), [flow.zeros(()) for _ in range(2)]
    with pytest.raises(ValueError, match=r"adam_update\(\).*'grads' \(2 params\), got 1"):
        flow._C.adam_update(p, g[:1], m, v, [], s, lr=0.1)
    with pytest.raises(ValueError, match=r"adam_update\(\).*one step tensor per parameter"):
        flow._C.adam_update(p, g, m, v, [], s[:1], lr=0.1)
    with pytest.raises(RuntimeError, match=r"'exp_avgs'\[1\] has shape \[4\] but params\[1\] "
                                           r"has shape \[3\]"):
        flow._C.adam_update(p, g, [m[0], flow.zeros(4)], v, [], s, lr=0.1)
    with pytest.raises(TypeError, match=r"'grads'\[0\] has dtype float64 but params\[0\] has "
                                        "dtype float32"):
        flow._C.adam_update(p, [g[0].double(), g[1]], m, v, [], s, lr=0.1)
    with pytest.raises(TypeError, match="params.0. must be a floating point or complex tensor, got int64"):
        flow._C.sgd_update([flow.zeros(2, dtype=flow.int64)], [flow.zeros(2, dtype=flow.int64)],
                           [], lr=0.1)
    with pytest.raises(ValueError, match=r"'max_exp_avg_sqs' \(2 params\), got 0"):
        flow._C.adam_update(p, g, m, v, [], s, lr=0.1, amsgrad=True)
    with pytest.raises(RuntimeError, match="steps.0. must be a one-element tensor"):
        flow._C.radam_update(p, g, m, v, [flow.zeros(2), s[1]], lr=0.1)
    with pytest.raises(ValueError, match="Nesterov momentum requires"):
        flow._C.sgd_update(p, g, _lists(), lr=0.1, nesterov=True)
    # Nothing was written by any failing call.
    assert all(float(t.abs().sum()) == 0 for t in p + m + v + s)


def test_update_refuses_leaves_requiring_grad_under_grad_mode():
    p = [flow.zeros(3, requires_grad=True)]
    with pytest.raises(RuntimeError, match="requires grad and grad mode is on"):
        flow._C.sgd_update(p, [flow.ones(3)], [], lr=0.1)
    with flow.no_grad():
        flow._C.sgd_update(p, [flow.ones(3)], [], lr=0.1)
    np.testing.assert_allclose(p[0].detach().numpy(), -0.1 * np.ones(3), rtol=1e-6)


def test_boxed_form_with_several_tensor_lists():
    p, g, m, v = _lists(), [flow.ones(3), flow.ones(3)], _lists(), _lists()
    s = [flow.zeros(()), flow.zeros(())]
    out = _boxed.call("adam_update", p, g, m, v, [], s, lr=0.1)
    assert len(out) == 2 and all(o is q for o, q in zip(out, p))
    np.testing.assert_allclose(p[0].numpy(), np.full(3, -0.1), rtol=1e-5)
    assert float(s[0]) == 1.0
    meta = _boxed.infer("adam_update", p, g, m, v, [], s, lr=0.1)
    assert [tuple(t.shape) for t in meta] == [(3,), (3,)] and str(meta[0].device) == "meta"
    with pytest.raises(ValueError, match="'exp_avgs' .2 params., got 1"):
        _boxed.call("adam_update", p, g, m[:1], v, [], s, lr=0.1)
