"""The optimizers' side of flow.one_embedding: the options of a table's sparse update taken from
the optimizer that steps it (Note [Embedding gradients] in _embedding.py), OneFlow's Ftrl and
SmartDecayAdam (upstream's eager wrapper `one_embedding.Optimizer` is in _wrapper.py)."""
from .. import _oneflow_internal as _C
from ..optim.adam import Adam
from ..optim.adaptive import Adagrad
from ..optim.optimizer import Optimizer as _Optimizer
from ..optim.sgd import SGD


class Ftrl(_Optimizer):
    r"""FTRL, as OneFlow's ``flow.one_embedding.Ftrl`` (dense parameters and one_embedding
    tables alike). With :math:`g = \nabla + \lambda_{wd}\theta`:
    :math:`a' = a + g^2`, :math:`\sigma = (a'^{p} - a^{p}) / \gamma`, :math:`z \leftarrow z + g -
    \sigma\theta`, :math:`\theta = 0` if :math:`|z| < \lambda_1`, else :math:`\theta =
    (\mathrm{sign}(z)\lambda_1 - z) / ((\beta + a'^{p}) / \gamma + \lambda_2)`, with
    :math:`p` = ``lr_power`` taken as given (upstream's kernel).

    Args:
        params: iterable of tensors or param-group dicts.
        lr (float): :math:`\gamma` (default 1e-3). weight_decay (float): L2 penalty (default 0).
        lr_power (float): default -0.5. initial_accumulator_value (float): :math:`a` at the
        start (default 0.1). lambda1, lambda2 (float): L1 / L2 strengths (default 0).
        beta (float): default 0.
    """

    def __init__(self, params, lr=0.001, weight_decay=0.0, lr_power=-0.5,
                 initial_accumulator_value=0.1, lambda1=0.0, lambda2=0.0, beta=0.0):
        if not lr > 0.0:
            raise ValueError(f"Ftrl: invalid learning rate {lr} (it must be positive)")
        if weight_decay < 0.0:
            raise ValueError(f"Ftrl: invalid weight_decay value {weight_decay}")
        if initial_accumulator_value < 0.0:
            raise ValueError(f"Ftrl: invalid initial_accumulator_value {initial_accumulator_value}")
        defaults = dict(lr=lr, weight_decay=weight_decay, lr_power=lr_power,
                        initial_accumulator_value=initial_accumulator_value, lambda1=lambda1,
                        lambda2=lambda2, beta=beta)
        super().__init__(params, defaults)

    def _update_group(self, group):
        params, grads = self._with_grads(group)
        lr, wd, pw = float(group["lr"]), float(group["weight_decay"]), float(group["lr_power"])
        l1, l2, beta = float(group["lambda1"]), float(group["lambda2"]), float(group["beta"])
        for p, g in zip(params, grads):
            st = self.state[p]
            if "accumulate" not in st:
                st["accumulate"] = _C.full_like(p, float(group["initial_accumulator_value"]))
                st["z"] = _C.zeros_like(p)
            acc, z = st["accumulate"], st["z"]
            g = g + wd * p if wd else g
            acc_new = acc + g * g
            p_new = acc_new.pow(pw)
            sigma = (p_new - acc.pow(pw)) / lr
            z.add_(g - sigma * p)
            w = (_C.sign(z) * l1 - z) / ((beta + p_new) / lr + l2)
            p.copy_(_C.where(z.abs() >= l1, w, _C.zeros_like(w)))
            acc.copy_(acc_new)

    @property
    def support_sparse(self):
        return True


class SmartDecayAdam(Adam):
    r"""OneFlow's SmartDecayAdam: Adam for dense parameters; on a one_embedding table, upstream's
    SmartDecaySparseAdam: a row last updated :math:`k` steps ago decays its moments by
    :math:`\beta^k` at once and adds the momentum steps it missed,
    :math:`c = m\,\beta_1 (1-\beta_1^{k-1}) / (1-\beta_1)`, to the update
    :math:`\theta \leftarrow \theta - \gamma (m' + c) / (\sqrt{v'} + \epsilon)` (no bias
    correction; weight decay as L2). The row keeps its last step after m and v: its
    ``storage_dim`` is :math:`3\,d` rounded up to even, plus 2 (upstream's layout)."""


def sparse_options(optimizer, group, shadow):
    """The options of the store's fused update (src/embedding/store.h UpdateOptions) for a table
    whose shadow parameter is in `group` of `optimizer`; counts the table's steps."""
    state = optimizer.state[shadow]
    step = int(state.get("sparse_step", 0)) + 1
    name = type(optimizer).__name__
    if group.get("maximize", False):
        raise NotImplementedError(f"one_embedding: the sparse {name} update does not maximize")
    wd = float(group.get("weight_decay", 0.0))
    if isinstance(optimizer, Ftrl):
        opts = dict(kind="ftrl", lr_power=float(group["lr_power"]), lambda1=float(group["lambda1"]),
                    lambda2=float(group["lambda2"]), beta=float(group["beta"]),
                    initial_accumulator_value=float(group["initial_accumulator_value"]))
    elif isinstance(optimizer, SGD):
        opts = dict(kind="sgd", momentum=float(group["momentum"]), dampening=float(group["dampening"]),
                    nesterov=bool(group["nesterov"]))
    elif isinstance(optimizer, Adam):
        if group.get("amsgrad", False):
            raise NotImplementedError("one_embedding: the sparse Adam update has no amsgrad (as OneFlow)")
        betas = group["betas"]
        kind = "smart_decay_adam" if isinstance(optimizer, SmartDecayAdam) else "adam"
        opts = dict(kind=kind, beta1=float(betas[0]), beta2=float(betas[1]), eps=float(group["eps"]),
                    do_bias_correction=bool(group.get("do_bias_correction", True)),
                    decoupled_weight_decay=bool(group.get("decoupled_weight_decay", False)))
    elif isinstance(optimizer, Adagrad):
        # (torch starts every accumulator from the constructor's value, Adagrad._sum_init)
        opts = dict(kind="adagrad", eps=float(group["eps"]), lr_decay=float(group["lr_decay"]),
                    initial_accumulator_value=float(optimizer.defaults["initial_accumulator_value"]))
    else:
        raise NotImplementedError(f"one_embedding: {name} has no sparse update for embedding tables "
                                  "(SGD, Adam, AdamW, Adagrad and one_embedding.Ftrl have)")
    state["sparse_step"] = step
    opts.update(lr=float(group["lr"]), weight_decay=wd, step=step)
    return opts
