"""Per-coordinate adaptive optimizers: RMSprop, Adagrad, Adadelta (torch.optim semantics)."""
from .. import _oneflow_internal as _C
from .optimizer import Optimizer


def _check(lr=0.0, eps=0.0, weight_decay=0.0):
    if lr < 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")
    if eps < 0.0:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if weight_decay < 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class RMSprop(Optimizer):
    r"""RMSprop (Hinton): :math:`v \leftarrow \alpha v + (1-\alpha) g^2`, step
    :math:`g / (\sqrt{v} + \epsilon)` (``centered``: :math:`\sqrt{v - \bar g^2}` with the running
    mean :math:`\bar g`), optionally through a momentum buffer."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False, contiguous_params=False):
        _check(lr, eps, weight_decay)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if alpha < 0.0:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        params, grads = self._with_grads(group)
        if not params:
            return
        centered, momentum = bool(group["centered"]), float(group["momentum"])
        keys = ["square_avg"] + (["momentum_buffer"] if momentum > 0 else []) \
            + (["grad_avg"] if centered else [])
        steps, lists = self._state_lists(params, keys)
        by_key = dict(zip(keys, lists))
        _C.rmsprop_update(params, grads, by_key["square_avg"], by_key.get("grad_avg", []),
                          by_key.get("momentum_buffer", []), steps, lr=float(group["lr"]),
                          alpha=float(group["alpha"]), eps=float(group["eps"]),
                          weight_decay=float(group["weight_decay"]), momentum=momentum,
                          centered=centered, maximize=bool(group["maximize"]))


class Adagrad(Optimizer):
    r"""Adagrad (Duchi et al.): :math:`s \leftarrow s + g^2`, :math:`\theta \leftarrow \theta -
    \tilde\gamma\, g / (\sqrt{s} + \epsilon)` with :math:`\tilde\gamma = \gamma / (1 + (t-1)
    \eta)` (``lr_decay`` :math:`\eta`). The state starts at ``initial_accumulator_value``."""

    def __init__(self, params, lr=1e-2, lr_decay=0.0, weight_decay=0.0,
                 initial_accumulator_value=0.0, eps=1e-10, foreach=None, *, maximize=False,
                 differentiable=False, fused=None, contiguous_params=False):
        _check(lr, eps, weight_decay)
        if lr_decay < 0.0:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if initial_accumulator_value < 0.0:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        # Like torch, the state exists from the start (state_dict() lists every parameter).
        for group in self.param_groups:
            for p in group["params"]:
                self._state_lists([p], ["sum"], self._sum_init())

    def _sum_init(self):
        # torch starts every accumulator from the constructor's value (defaults), also for
        # groups that set their own initial_accumulator_value; the same here.
        v = float(self.defaults["initial_accumulator_value"])
        return {"sum": lambda p: _C.full_like(p, v)}

    def _update_group(self, group):
        params, grads = self._with_grads(group)
        if not params:
            return
        steps, (sums,) = self._state_lists(params, ["sum"], self._sum_init())
        _C.adagrad_update(params, grads, sums, steps, lr=float(group["lr"]),
                          lr_decay=float(group["lr_decay"]),
                          weight_decay=float(group["weight_decay"]), eps=float(group["eps"]),
                          maximize=bool(group["maximize"]))


class Adadelta(Optimizer):
    r"""Adadelta (Zeiler): the step :math:`\sqrt{a + \epsilon} / \sqrt{v + \epsilon}\, g` with
    running averages :math:`v` of :math:`g^2` and :math:`a` of the squared steps (``rho``)."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False,
                 contiguous_params=False):
        _check(lr, eps, weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        params, grads = self._with_grads(group)
        if not params:
            return
        steps, (sq, acc) = self._state_lists(params, ["square_avg", "acc_delta"])
        _C.adadelta_update(params, grads, sq, acc, steps, lr=float(group["lr"]),
                           rho=float(group["rho"]), eps=float(group["eps"]),
                           weight_decay=float(group["weight_decay"]),
                           maximize=bool(group["maximize"]))
