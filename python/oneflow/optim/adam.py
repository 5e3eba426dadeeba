"""Adam-family optimizers: Adam, AdamW, Adamax, NAdam, RAdam (torch.optim semantics, plus
OneFlow's `do_bias_correction` for Adam/AdamW)."""
from .. import _oneflow_internal as _C
from .optimizer import Optimizer


def _check_adam_args(lr, betas, eps, weight_decay):
    if lr < 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")
    if eps < 0.0:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if weight_decay < 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _common(group):
    return dict(lr=float(group["lr"]), beta1=float(group["betas"][0]),
                beta2=float(group["betas"][1]), eps=float(group["eps"]),
                weight_decay=float(group["weight_decay"]))


class Adam(Optimizer):
    r"""Adam (Kingma & Ba), optionally AMSGrad and decoupled weight decay.

    :math:`m \leftarrow \beta_1 m + (1-\beta_1) g`, :math:`v \leftarrow \beta_2 v + (1-\beta_2)
    g^2`, :math:`\theta \leftarrow \theta - \frac{\gamma}{1-\beta_1^t}\, m / (\sqrt{v} /
    \sqrt{1-\beta_2^t} + \epsilon)` with :math:`g = \nabla + \lambda\theta` (L2 weight decay).
    With ``do_bias_correction=False`` (OneFlow) the two :math:`1-\beta^t` factors are 1.

    Args:
        params: iterable of tensors or param-group dicts.
        lr (float): learning rate (default 1e-3).
        betas (tuple): :math:`(\beta_1, \beta_2)` (default (0.9, 0.999)).
        eps (float): :math:`\epsilon` (default 1e-8).
        weight_decay (float): L2 penalty (default 0).
        amsgrad (bool): use the maximum of past :math:`v` (default False).
        do_bias_correction (bool): OneFlow's switch for the bias correction (default True).
        maximize (bool): maximize the objective (default False).
        decoupled_weight_decay (bool): AdamW's decay :math:`\theta \leftarrow \theta(1 -
            \gamma\lambda)` instead of L2 (default False).
    """

    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 amsgrad=False, do_bias_correction=True, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=None, contiguous_params=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        if decoupled_weight_decay is None:
            decoupled_weight_decay = self._decoupled
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay,
                        do_bias_correction=do_bias_correction)
        super().__init__(params, defaults)

    def _update_group(self, group):
        params, grads = self._with_grads(group)
        if not params:
            return
        amsgrad = bool(group["amsgrad"])
        keys = ["exp_avg", "exp_avg_sq"] + (["max_exp_avg_sq"] if amsgrad else [])
        steps, lists = self._state_lists(params, keys)
        _C.adam_update(params, grads, lists[0], lists[1], lists[2] if amsgrad else [], steps,
                       amsgrad=amsgrad, maximize=bool(group["maximize"]),
                       decoupled_weight_decay=bool(group.get("decoupled_weight_decay",
                                                             self._decoupled)),
                       do_bias_correction=bool(group.get("do_bias_correction", True)),
                       **_common(group))


class AdamW(Adam):
    r"""Adam with decoupled weight decay (Loshchilov & Hutter): :math:`\theta \leftarrow
    \theta(1 - \gamma\lambda)` before the Adam step. Arguments as :class:`Adam`; the default
    ``weight_decay`` is 0.01 as in PyTorch (OneFlow's is 0; docs/oneflow_differences.md)."""

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, do_bias_correction=True, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False, fused=None, contiguous_params=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, do_bias_correction,
                         foreach=foreach, maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


class Adamax(Optimizer):
    r"""Adamax, Adam's infinity-norm variant: :math:`u \leftarrow \max(\beta_2 u, |g| +
    \epsilon)`, :math:`\theta \leftarrow \theta - \frac{\gamma}{1-\beta_1^t} m / u`."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        params, grads = self._with_grads(group)
        if not params:
            return
        steps, (m, u) = self._state_lists(params, ["exp_avg", "exp_inf"])
        _C.adamax_update(params, grads, m, u, steps, maximize=bool(group["maximize"]),
                         **_common(group))


class NAdam(Optimizer):
    r"""Adam with Nesterov momentum (Dozat), with torch's momentum schedule
    :math:`\mu_t = \beta_1(1 - \frac12 0.96^{t\psi})` (:math:`\psi` = ``momentum_decay``)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        if momentum_decay < 0.0:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        params, grads = self._with_grads(group)
        if not params:
            return
        init = {"mu_product": lambda p: _C.ones((), dtype=_C.float32)}
        steps, (mu, m, v) = self._state_lists(params, ["mu_product", "exp_avg", "exp_avg_sq"],
                                              init)
        _C.nadam_update(params, grads, m, v, mu, steps,
                        momentum_decay=float(group["momentum_decay"]),
                        decoupled_weight_decay=bool(group["decoupled_weight_decay"]),
                        maximize=bool(group["maximize"]), **_common(group))


class RAdam(Optimizer):
    r"""Rectified Adam (Liu et al.): the adaptive step is used once the variance of the
    adaptive learning rate is tractable (:math:`\rho_t > 5`), plain momentum before."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        params, grads = self._with_grads(group)
        if not params:
            return
        steps, (m, v) = self._state_lists(params, ["exp_avg", "exp_avg_sq"])
        _C.radam_update(params, grads, m, v, steps,
                        decoupled_weight_decay=bool(group["decoupled_weight_decay"]),
                        maximize=bool(group["maximize"]), **_common(group))
