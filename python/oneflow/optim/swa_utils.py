"""oneflow.optim.swa_utils: Stochastic Weight Averaging and exponential moving averages of a
model's weights (torch.optim.swa_utils): AveragedModel, the averaging functions, SWALR (the
learning rate annealed to a constant SWA rate) and update_bn (batch-norm statistics recomputed
for the averaged weights). Tested against PyTorch in tests/test_optim_swa.py.
"""
import oneflow as flow
import copy
import itertools
import math

from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler


def get_ema_multi_avg_fn(decay=0.999):
    """In-place EMA over lists of one dtype: averaged <- decay * averaged + (1 - decay) * current
    (a lerp for floating tensors; integer ones take the rounded-down value, as PyTorch's)."""
    def ema_update(averaged, current, num_averaged):
        for a, c in zip(averaged, current):
            if a.dtype.is_floating_point or a.dtype.is_complex:
                a.lerp_(c, 1.0 - decay)
            else:
                a.copy_(a * decay + c * (1.0 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """In-place running mean over lists of one dtype: averaged <- averaged + (current -
    averaged) / (n + 1) (a lerp by 1 / (n + 1) for floating tensors)."""
    def swa_update(averaged, current, num_averaged):
        for a, c in zip(averaged, current):
            if a.dtype.is_floating_point or a.dtype.is_complex:
                a.lerp_(c, 1.0 / (num_averaged + 1))
            else:
                a.copy_(a + (c - a) / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """The EMA as a function returning the new average of one parameter."""
    def ema_update(averaged, current, num_averaged):
        return decay * averaged + (1.0 - decay) * current
    return ema_update


def get_swa_avg_fn():
    """The running mean as a function returning the new average of one parameter."""
    def swa_update(averaged, current, num_averaged):
        return averaged + (current - averaged) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of `model` whose parameters (and buffers, with use_buffers=True) are the
    average of the models given to update_parameters: the running mean by default (SWA), or
    avg_fn(averaged, current, n) per tensor / multi_avg_fn(averaged_list, current_list, n)
    in place over lists (EMA: get_ema_multi_avg_fn). The first update copies. Without
    use_buffers the buffers are copied from the model at every update."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", flow.tensor(0, dtype=flow.int64, device=device))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _tensors(self, module):
        if self.use_buffers:
            return list(itertools.chain(module.parameters(), module.buffers()))
        return list(module.parameters())

    def update_parameters(self, model):
        mine = [t.detach() for t in self._tensors(self.module)]
        theirs = [t.detach().to(a.device) for t, a in zip(self._tensors(model), mine)]
        with flow.no_grad():
            if self.n_averaged.item() == 0:
                for a, c in zip(mine, theirs):
                    a.copy_(c)
            elif self.avg_fn is not None:
                for a, c in zip(mine, theirs):
                    a.copy_(self.avg_fn(a, c, self.n_averaged.to(a.device)))
            else:
                # multi_avg_fn sees the tensors of one device and dtype at a time (PyTorch's
                # grouping); the default is the running mean, integer buffers rounded down.
                groups = {}
                for a, c in zip(mine, theirs):
                    groups.setdefault((str(a.device), a.dtype), []).append((a, c))
                for pairs in groups.values():
                    n = self.n_averaged.to(pairs[0][0].device)
                    if self.multi_avg_fn is not None:
                        self.multi_avg_fn([a for a, _ in pairs], [c for _, c in pairs], n)
                    else:
                        for a, c in pairs:
                            a.copy_(a + (c - a) / (n + 1))
            if not self.use_buffers:
                for a, c in zip(self.module.buffers(), model.buffers()):
                    a.detach().copy_(c.detach().to(a.device))
            self.n_averaged.add_(1)


def update_bn(loader, model, device=None):
    """Recomputes every batch norm's running statistics over `loader` (one pass, as a cumulative
    average: momentum None) with the model's current weights; the model's training mode and the
    norms' momenta are restored. A batch that is a list / tuple contributes its first item."""
    norms = [m for m in model.modules() if isinstance(m, _BatchNorm)]
    if not norms:
        return
    momenta = {}
    for m in norms:
        m.reset_running_stats()
        momenta[m] = m.momentum
        m.momentum = None
    was_training = model.training
    model.train()
    with flow.no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for m, momentum in momenta.items():
        m.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr from its value at construction to `swa_lr` (a number, or one per
    group) over `anneal_epochs` steps, by a cosine or linear ramp, then holds it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        groups = optimizer.param_groups
        if isinstance(swa_lr, (list, tuple)):
            if len(swa_lr) != len(groups):
                raise ValueError(f"swa_lr must have the same length as optimizer.param_groups: "
                                 f"swa_lr has {len(swa_lr)}, optimizer.param_groups has {len(groups)}")
            lrs = list(swa_lr)
        else:
            lrs = [swa_lr] * len(groups)
        for lr, group in zip(lrs, groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}")
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        # The lr the ramp started from, recovered from the current one (chainable form).
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        span = max(1, self.anneal_epochs)
        prev_alpha = self.anneal_func(max(0.0, min(1.0, (step - 1) / span)))
        alpha = self.anneal_func(max(0.0, min(1.0, step / span)))
        out = []
        for group in self.optimizer.param_groups:
            start = self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
            out.append(group["swa_lr"] * alpha + start * (1 - alpha))
        return out

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}
