"""Optimizers that treat a parameter as a matrix: Adafactor (second moments factored into row
and column statistics) and Muon (momentum orthogonalised by a Newton-Schulz iteration), with
torch.optim's semantics and numbers. Per-parameter updates of a few table ops each: their cost is
in the reductions and the matmuls, not in the Python around them."""
import math

from .. import _oneflow_internal as _C
from .._types import finfo
from .optimizer import Optimizer, _new_step


def _require(name, value, ok):
    """ValueError("{name} should be {value}") unless ok (torch's wording)."""
    if not ok:
        raise ValueError(f"{name} should be {value}")


def _refuse_complex(name, p):
    if p.dtype.is_complex:
        raise RuntimeError(f"{name} does not support complex parameters")


class Adafactor(Optimizer):
    r"""Adafactor (Shazeer & Stern), as torch.optim.Adafactor. Per step t of a parameter
    :math:`\theta` with gradient :math:`g`:

    .. math::
        \beta_{2,t} = 1 - t^{c}, \quad \rho_t = \min(\gamma, 1/\sqrt t), \quad
        \alpha_t = \max(\epsilon_2, \mathrm{RMS}(\theta)) \rho_t

    A matrix (the last two dims) keeps the row and column means of :math:`g^2` as running
    averages :math:`R, C` and estimates :math:`v = R C / \mathrm{mean}(R)`; a vector keeps
    :math:`v` itself. The update :math:`u = g / \sqrt{\max(v, \epsilon_1^2)}` is scaled down to an
    RMS of at most ``d`` and applied as :math:`\theta \leftarrow \theta(1 - \gamma\lambda) -
    \alpha_t u`.

    Args:
        params: iterable of tensors or param-group dicts.
        lr (float): :math:`\gamma`, the cap of the relative step size (default 1e-2).
        beta2_decay (float): :math:`c \le 0` (default -0.8).
        eps (tuple): :math:`(\epsilon_1, \epsilon_2)`; :math:`\epsilon_1` None: the dtype's
            machine epsilon (default (None, 1e-3)).
        d (float): the clipping threshold of the update's RMS (default 1).
        weight_decay (float): decoupled weight decay :math:`\lambda` (default 0).
        maximize (bool): ascend instead of descending.
    """

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        lr_value = float(lr)
        _require("Learning rate", f">= 0 but is: {lr_value}", lr_value >= 0.0)
        _require("beta2_decay", f"<= 0 but is: {beta2_decay}", beta2_decay <= 0.0)
        _require("epsilon1", f">= 0 but is: {eps[0]}", eps[0] is None or eps[0] >= 0.0)
        _require("epsilon2", f">= 0 but is: {eps[1]}", eps[1] >= 0.0)
        _require("Clipping threshold d", f">= 1 but is: {d}", d >= 1.0)
        _require("weight_decay", f">= 0 but is: {weight_decay}", weight_decay >= 0.0)
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def _state_of(self, p, g):
        st = self.state[p]
        if "step" not in st:
            st["step"] = _new_step()
            if g.dim() > 1:
                st["row_var"] = _C.zeros(list(g.shape[:-1]) + [1], dtype=g.dtype, device=g.device)
                st["col_var"] = _C.zeros(list(g.shape[:-2]) + [1, g.shape[-1]], dtype=g.dtype, device=g.device)
            else:
                st["variance"] = _C.zeros_like(g)
        return st

    def _update_group(self, group):
        params, grads = self._with_grads(group)
        lr, weight_decay, d = float(group["lr"]), float(group["weight_decay"]), float(group["d"])
        eps1, eps2 = group["eps"]
        for p, g in zip(params, grads):
            _refuse_complex("Adafactor", p)
            g = -g if group["maximize"] else g
            st = self._state_of(p, g)
            e1 = finfo(p.dtype).eps if eps1 is None else float(eps1)
            st["step"].add_(1)
            t = float(st["step"].item())
            weight = t ** float(group["beta2_decay"])  # 1 - beta2_t
            rho = min(lr, 1.0 / math.sqrt(t))
            alpha = max(float(eps2), p.norm(2).item() / math.sqrt(p.numel())) * rho
            if weight_decay != 0.0:
                p.mul_(1.0 - lr * weight_decay)
            if g.dim() > 1:
                st["row_var"].lerp_(g.square().mean(-1, keepdim=True), weight)
                st["col_var"].lerp_(g.square().mean(-2, keepdim=True), weight)
                v = _C.matmul(st["row_var"], st["col_var"])
                v.div_(st["row_var"].mean(-2, keepdim=True).clamp_(min=e1))
            else:
                st["variance"].lerp_(g * g, weight)
                v = st["variance"].clone()
            u = v.clamp_(min=e1 * e1).rsqrt_().mul_(g)
            denom = max(1.0, u.norm(2).item() / (math.sqrt(u.numel()) * d))
            p.add_(u, alpha=-alpha / denom)


def _orthogonalised(g, coefficients, steps, eps):
    """Newton-Schulz's quintic iteration towards U V^T of g = U S V^T, in bfloat16 (torch's):
    X <- a X + (b A + c A^2) X with A = X X^T, from X = g / ||g|| (the wide orientation, so that
    A is the smaller Gram matrix)."""
    if steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if g.dim() != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = coefficients
    tall = g.shape[0] > g.shape[1]
    x = g.bfloat16()
    if tall:
        x = x.T
    x = x / x.norm().clamp(min=eps)
    for _ in range(steps):
        gram = x @ x.T
        x = _C.addmm(x, _C.addmm(gram, gram, gram, beta=b, alpha=c), x, beta=a)
    return x.T if tall else x


_LR_ADJUSTMENTS = (None, "original", "match_rms_adamw")


class Muon(Optimizer):
    r"""Muon (Jordan et al.), as torch.optim.Muon, for 2-D parameters (hidden-layer weights; train
    biases and embeddings with another optimizer). Per step:

    .. math::
        B \leftarrow \mu B + (1 - \mu) g, \quad
        \tilde B = \begin{cases} (1-\mu) g + \mu B & \text{nesterov} \\ B \end{cases}, \quad
        \theta \leftarrow \theta (1 - \gamma\lambda) - \gamma' \, \mathrm{NS}_k(\tilde B)

    :math:`\mathrm{NS}_k` is k Newton-Schulz steps with coefficients (a, b, c) (computed in
    bfloat16); :math:`\gamma' = \gamma \sqrt{\max(1, A/B)}` for an A x B parameter
    ("original", the default) or :math:`0.2 \gamma \sqrt{\max(A, B)}` ("match_rms_adamw").

    Args:
        params: iterable of 2-D tensors or param-group dicts.
        lr (float): (default 1e-3). weight_decay (float): :math:`\lambda` (default 0.1).
        momentum (float): :math:`\mu` (default 0.95). nesterov (bool): (default True).
        ns_coefficients (tuple): (a, b, c) (default (3.4445, -4.775, 2.0315)).
        eps (float): the floor of the norm the iteration starts by dividing by (default 1e-7).
        ns_steps (int): k (default 5). adjust_lr_fn (str): see above.
    """

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(3.4445, -4.775, 2.0315), eps=1e-7, ns_steps=5, adjust_lr_fn=None):
        _require("Learning rate", f">= 0 but is: {float(lr)}", float(lr) >= 0.0)
        _require("momentum", f">= 0 but is: {momentum}", momentum >= 0.0)
        _require("weight decay", f">= 0 but is: {weight_decay}", weight_decay >= 0.0)
        if adjust_lr_fn not in _LR_ADJUSTMENTS:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=tuple(ns_coefficients), eps=eps, ns_steps=ns_steps,
                        adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with "
                                     f"size: {p.size()}")

    def _update_group(self, group):
        params, grads = self._with_grads(group)
        lr, weight_decay, mu = float(group["lr"]), float(group["weight_decay"]), float(group["momentum"])
        for p, g in zip(params, grads):
            _refuse_complex("Muon", p)
            st = self.state[p]
            if "momentum_buffer" not in st:
                st["momentum_buffer"] = _C.zeros_like(g)
            buf = st["momentum_buffer"]
            buf.lerp_(g, 1.0 - mu)
            update = g.lerp(buf, mu) if group["nesterov"] else buf
            o = _orthogonalised(update, group["ns_coefficients"], int(group["ns_steps"]), float(group["eps"]))
            rows, cols = p.shape
            if group["adjust_lr_fn"] == "match_rms_adamw":
                ratio = 0.2 * math.sqrt(max(rows, cols))
            else:
                ratio = math.sqrt(max(1.0, rows / cols))
            p.mul_(1.0 - lr * weight_decay)
            p.add_(o, alpha=-lr * ratio)
