"""The update rules of OneFlow 0.x's optimizers that ``flow.optim`` has no counterpart for:
LARS, LazyAdam, and SGDW's decoupled weight decay with 0.x's momentum (the learning rate inside
the momentum buffer). ``flow.optimizer.LARS`` / ``LazyAdam`` / ``SGDW`` (optimizer.py) build
these; LAMB and the others map onto ``flow.optim`` directly.

Each is a ``flow.optim.Optimizer`` (param groups with ``lr`` and ``weight_decay``, state per
parameter) whose step follows the 0.x kernel (oneflow/user/kernels/model_update_kernel_util.*
of 0.3-0.5) on the gradient the job hands it (already divided by the loss's element count and
regularized, GlobalFunction._update).
"""
import math

from .. import _oneflow_internal as _C
from ..optim.optimizer import Optimizer


def _norm(t):
    return float(_C.sqrt((t * t).sum()))


class Lars(Optimizer):
    r"""0.x's LARS, per parameter tensor :math:`\theta` with gradient :math:`g`:

    .. math::
        r &= c\,\|\theta\| / (\epsilon + \|g\| + \lambda\|\theta\|)
            \qquad (1 \text{ when either norm is } 0) \\
        m &\leftarrow \beta m - \gamma r g, \qquad
        \theta \leftarrow \theta + m - \gamma r \lambda \theta
    """

    def __init__(self, params, lr, momentum_beta, epsilon, lars_coefficient, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, momentum_beta=momentum_beta, epsilon=epsilon,
                                      lars_coefficient=lars_coefficient, weight_decay=weight_decay))

    def _update_group(self, group):
        beta, eps, coeff = float(group["momentum_beta"]), float(group["epsilon"]), float(group["lars_coefficient"])
        wd = float(group["weight_decay"])
        for p, g in zip(*self._with_grads(group)):
            st = self.state[p]
            if "momentum" not in st:
                st["momentum"] = _C.zeros_like(p)
            w_norm, g_norm = _norm(p), _norm(g)
            trust = coeff * w_norm / (eps + g_norm + wd * w_norm) if w_norm > 0 and g_norm > 0 else 1.0
            local_lr = float(group["lr"]) * trust
            m = st["momentum"]
            m.copy_(m * beta - g * local_lr)
            p.copy_(p + m - p * (local_lr * wd))


class LazyAdam(Optimizer):
    r"""0.x's LazyAdam: Adam with its bias correction folded into the rate,
    :math:`\gamma_t = \gamma\sqrt{1-\beta_2^t}/(1-\beta_1^t)` with t the job's train step plus one
    (the group's ``train_step``, set before each step), that updates only the rows (slices along
    the first dimension) whose gradient is not all zero -- the rows the batch touched, as 0.x's
    indexed-slices update of a gathered embedding; the other rows keep their value and their
    moments:

    .. math::
        m \leftarrow \beta_1 m + (1-\beta_1) g, \quad v \leftarrow \beta_2 v + (1-\beta_2) g^2,
        \quad \theta \leftarrow \theta - \gamma_t\, m / (\sqrt{v} + \epsilon)
    """

    def __init__(self, params, lr, beta1, beta2, epsilon):
        super().__init__(params, dict(lr=lr, beta1=beta1, beta2=beta2, epsilon=epsilon, train_step=0))

    def _update_group(self, group):
        b1, b2, eps = float(group["beta1"]), float(group["beta2"]), float(group["epsilon"])
        t = int(group["train_step"]) + 1
        lr = float(group["lr"]) * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        for p, g in zip(*self._with_grads(group)):
            st = self.state[p]
            for key in ("m", "v"):
                if key not in st:
                    st[key] = _C.zeros_like(p)
            m, v = st["m"], st["v"]
            if p.ndim == 0:
                touched = g != 0
            else:  # a row is touched when some element of its gradient is not zero
                touched = (g != 0).reshape(p.shape[0], -1).any(1).reshape([p.shape[0]] + [1] * (p.ndim - 1))
            new_m = m * b1 + g * (1 - b1)
            new_v = v * b2 + g * g * (1 - b2)
            m.copy_(_C.where(touched, new_m, m))
            v.copy_(_C.where(touched, new_v, v))
            p.copy_(_C.where(touched, p - new_m / (_C.sqrt(new_v) + eps) * lr, p))


class MomentumW(Optimizer):
    r"""0.x's SGD update with decoupled weight decay :math:`\lambda` (SGDW, and SGD's naive and
    momentum rules when :math:`\lambda = 0`): without momentum
    :math:`\theta \leftarrow \theta - \gamma(g + \lambda\theta)`; with momentum :math:`\beta`,
    :math:`m \leftarrow \beta m - \gamma g,\ \theta \leftarrow \theta + m - \gamma\lambda\theta`
    (the rate inside the buffer: a schedule's change acts on new gradients only)."""

    def __init__(self, params, lr, momentum, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay))

    def _update_group(self, group):
        lr, beta, wd = float(group["lr"]), float(group["momentum"]), float(group["weight_decay"])
        for p, g in zip(*self._with_grads(group)):
            if beta == 0:
                p.copy_(p - (g + p * wd) * lr)
                continue
            st = self.state[p]
            if "momentum" not in st:
                st["momentum"] = _C.zeros_like(p)
            m = st["momentum"]
            m.copy_(m * beta - g * lr)
            p.copy_(p + m - p * (lr * wd))


class IndexedSlices:
    """0.x's indexed-slices update (FunctionConfig.indexed_slices_optimizer_conf, its
    IndexedSlicesOptimizerRewritePass): for the variables it names whose gradient comes from a
    lookup (gather along dim 0), the update of SGD, momentum and Adam touched only the rows the
    batch looked up -- the other rows kept their value (no weight decay either) and their
    optimizer state (a momentum that does not decay, Adam's moments). Here a row is looked up when
    its gradient is not all zero (a looked-up row whose summed gradient is exactly zero is left
    alone too; 0.x would move its state).

    ``with IndexedSlices(opt, params): opt.step()`` restores the untouched rows of `params` and of
    their state tensors of the same shape after the step (state the step creates starts at zero,
    which a zero gradient leaves so: the updates of a row depend on that row alone)."""

    def __init__(self, opt, params):
        self.opt, self.params = opt, [p for p in params if p.grad is not None and p.ndim > 0]

    def __enter__(self):
        self.saved = []
        for p in self.params:
            g = p.grad
            untouched = (g == 0).reshape(p.shape[0], -1).all(1).reshape([p.shape[0]] + [1] * (p.ndim - 1))
            if not bool(untouched.any()):
                continue
            state = [s for s in self.opt.state.get(p, {}).values()
                     if isinstance(s, _C.Tensor) and tuple(s.shape) == tuple(p.shape)]
            self.saved.append((untouched, [(t, t.detach().clone()) for t in [p] + state]))
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            for untouched, pairs in self.saved:
                for t, old in pairs:
                    t.data.copy_(_C.where(untouched, old, t.detach()))
        return False
