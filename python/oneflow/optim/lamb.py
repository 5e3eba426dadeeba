"""LAMB (You et al., "Large Batch Optimization for Deep Learning"), as OneFlow defines it."""
from .. import _oneflow_internal as _C
from .adam import _check_adam_args, _common
from .optimizer import Optimizer


class LAMB(Optimizer):
    r"""Layer-wise adaptive moments (OneFlow's ``oneflow.optim.LAMB``), per parameter tensor:

    .. math::
        g' &= g + \lambda_{l2}\theta \qquad (\lambda_{l2} = \lambda \text{ unless adam\_w\_mode}) \\
        m &\leftarrow \beta_1 m + (1-\beta_1) g', \quad v \leftarrow \beta_2 v + (1-\beta_2) g'^2 \\
        u &= \frac{m / (1-\beta_1^t)}{\sqrt{v} / \sqrt{1-\beta_2^t} + \epsilon}
            \qquad (\text{no } 1-\beta^t \text{ factors without bias correction}) \\
        r &= \|\theta\|_2 / \|u\|_2 \qquad (1 \text{ when either norm is } 0) \\
        \theta &\leftarrow \theta - \gamma\, r\, (u + \lambda_{w}\theta)
            \qquad (\lambda_{w} = \lambda \text{ in adam\_w\_mode, else } 0)

    Args:
        params: iterable of tensors or param-group dicts.
        lr (float): learning rate :math:`\gamma` (default 1e-3).
        betas (tuple): (default (0.9, 0.999)).
        eps (float): (default 1e-8).
        weight_decay (float): :math:`\lambda` (default 0).
        adam_w_mode (bool): decoupled weight decay (True, default) or an L2 penalty.
        do_bias_correction (bool): (default True).
        amsgrad (bool): not supported by LAMB (raises, as OneFlow).
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 adam_w_mode=True, do_bias_correction=True, amsgrad=False,
                 contiguous_params=False):
        if amsgrad:
            raise RuntimeError("LAMB does not support AMSGrad variant.")
        _check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        adam_w_mode=adam_w_mode, do_bias_correction=do_bias_correction,
                        amsgrad=False)
        super().__init__(params, defaults)

    def _update_group(self, group):
        params, grads = self._with_grads(group)
        if not params:
            return
        steps, (m, v) = self._state_lists(params, ["exp_avg", "exp_avg_sq"])
        _C.lamb_update(params, grads, m, v, steps, adam_w_mode=bool(group["adam_w_mode"]),
                       do_bias_correction=bool(group["do_bias_correction"]), **_common(group))
