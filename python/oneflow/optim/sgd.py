"""Stochastic gradient descent (torch.optim.SGD / oneflow.optim.SGD)."""
from .. import _oneflow_internal as _C
from .optimizer import Optimizer, required


class SGD(Optimizer):
    r"""Stochastic gradient descent, optionally with momentum (Nesterov's too).

    With :math:`g = \nabla + \lambda\theta` (weight decay :math:`\lambda`; :math:`-\nabla` when
    maximizing): :math:`b \leftarrow \mu b + (1-\tau) g` (the first step sets :math:`b = g`),
    :math:`g \leftarrow g + \mu b` (Nesterov) or :math:`b`, then :math:`\theta \leftarrow
    \theta - \gamma g`.

    Args:
        params: iterable of tensors or param-group dicts.
        lr (float): learning rate :math:`\gamma` (default 1e-3).
        momentum (float): :math:`\mu` (default 0).
        dampening (float): :math:`\tau` (default 0).
        weight_decay (float): L2 penalty :math:`\lambda` (default 0).
        nesterov (bool): Nesterov momentum (default False).
        maximize (bool): maximize the objective (default False).
        contiguous_params (bool): OneFlow's option to pack parameters into one buffer; accepted,
            the update is already one fused op per group.
    """

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None, contiguous_params=False):
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def _update_group(self, group):
        params, grads = self._with_grads(group)
        if not params:
            return
        momentum = float(group["momentum"])
        kw = dict(lr=float(group["lr"]), momentum=momentum, dampening=float(group["dampening"]),
                  weight_decay=float(group["weight_decay"]), nesterov=bool(group["nesterov"]),
                  maximize=bool(group["maximize"]))
        if momentum == 0:
            _C.sgd_update(params, grads, [], **kw)
            return
        # torch starts a momentum buffer as the gradient itself: a zero buffer updated with
        # dampening 0 (0 * momentum + 1 * g) is exactly that, so fresh buffers get their own call.
        old, new = ([], [], []), ([], [], [])
        for p, g in zip(params, grads):
            buf = self.state[p].get("momentum_buffer")
            fresh = buf is None
            if fresh:
                buf = _C.zeros_like(p)
                self.state[p]["momentum_buffer"] = buf
            dst = new if fresh else old
            dst[0].append(p)
            dst[1].append(g)
            dst[2].append(buf)
        if old[0]:
            _C.sgd_update(*old, **kw)
        if new[0]:
            _C.sgd_update(*new, **dict(kw, dampening=0.0))
