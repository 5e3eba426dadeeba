"""Rprop and ASGD (torch.optim semantics), per-parameter updates of a few table ops each (no
fused kernel: both are rarely on a hot path)."""
from .. import _oneflow_internal as _C
from .optimizer import Optimizer, _as_real, _new_step


class Rprop(Optimizer):
    r"""Resilient backpropagation: each coordinate's step size grows by etas[1] while its
    gradient keeps its sign and shrinks by etas[0] when the sign flips (that step then skips the
    coordinate); the update is -sign(g) * step_size, the sizes clamped to step_sizes."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False,
                 foreach=None, maximize=False, differentiable=False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        params, grads = self._with_grads(group)
        eta_minus, eta_plus = group["etas"]
        lo, hi = group["step_sizes"]
        for p, g in zip(params, grads):
            g = -g if group["maximize"] else g
            st = self.state[p]
            if "step" not in st:
                lr = float(group["lr"])
                st["step"] = _new_step()
                st["prev"] = _C.zeros_like(p)
                # (complex: both real components start at lr, as torch)
                st["step_size"] = _C.full_like(g, complex(lr, lr) if g.is_complex() else lr)
            st["step"].add_(1)
            p, g, prev, step_size = (_as_real(t) for t in (p, g, st["prev"], st["step_size"]))
            s = (g * prev).sign()
            factor = _C.where(s > 0, _C.full_like(s, eta_plus), _C.where(s < 0, _C.full_like(s, eta_minus),
                                                                          _C.ones_like(s)))
            step_size.mul_(factor).clamp_(lo, hi)
            g = _C.where(s < 0, _C.zeros_like(g), g)  # a sign flip: no step, and no memory of it
            p.addcmul_(g.sign(), step_size, value=-1)
            prev.copy_(g)


class ASGD(Optimizer):
    r"""Averaged SGD (Polyak-Juditsky): SGD with the step size eta = lr / (1 + lambd lr t)^alpha
    and a decay of the parameters by (1 - lambd eta); `ax` keeps their running average from step
    t0 on."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        params, grads = self._with_grads(group)
        lr, lambd, alpha, t0 = (float(group[k]) for k in ("lr", "lambd", "alpha", "t0"))
        wd = float(group["weight_decay"])
        for p, g in zip(params, grads):
            g = -g if group["maximize"] else g
            st = self.state[p]
            if "step" not in st:
                real = _as_real(p).dtype
                st["step"] = _new_step()
                st["eta"] = _C.full((), lr, dtype=real, device=p.device)
                st["mu"] = _C.ones((), dtype=real, device=p.device)
                st["ax"] = _C.zeros_like(p)
            st["step"].add_(1)
            p, g, ax = _as_real(p), _as_real(g), _as_real(st["ax"])
            step = float(st["step"])
            if wd != 0:
                g = g + p * wd
            eta = float(st["eta"])
            p.mul_(1 - lambd * eta)
            p.add_(g, alpha=-eta)
            mu = float(st["mu"])
            if mu != 1:
                ax.add_((p - ax) * mu)
            else:
                ax.copy_(p)
            st["eta"].fill_(lr / ((1 + lambd * lr * step) ** alpha))
            st["mu"].fill_(1 / max(1, step - t0))
