"""LRScheduler base and the step-wise schedulers (torch.optim.lr_scheduler semantics).

A scheduler sets `optimizer.param_groups[i]['lr']` on each `step()`. Like PyTorch's, most are
chainable: `get_lr()` computes the new lr from the group's current lr, so two schedulers on one
optimizer compose. Schedulers with a closed form also give `_lr_at(i, base_lr, step)` (the lr of
group i at a step), used by `step(epoch)` and by OneFlow's WarmupLR to jump to a step.
OneFlow spells the step counter `last_step`; it is an alias of `last_epoch` here.
"""
import math
import types
import warnings
from bisect import bisect_right
from collections import Counter

from ..optimizer import Optimizer


class LRScheduler:
    """Base class: `step()`, `get_last_lr()`, `state_dict()` / `load_state_dict()`."""

    def __init__(self, optimizer, last_epoch=-1, verbose=False, last_step=None):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if last_step is not None:
            last_epoch = last_step
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] "
                                   "when resuming an optimizer")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.verbose = verbose
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        self.step()

    # OneFlow's names.
    @property
    def last_step(self):
        return self.last_epoch

    @last_step.setter
    def last_step(self, v):
        self.last_epoch = v

    @property
    def _optimizer(self):
        return self.optimizer

    def state_dict(self):
        """Every attribute except the optimizer."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        """The lr of every group as set by the last `step()`."""
        return self._last_lr

    def get_lr(self):
        raise NotImplementedError

    def print_lr(self, is_verbose, group, lr, epoch=None):
        if is_verbose:
            print(f"Adjusting learning rate of group {group} to {lr:.4e}.")

    def step(self, epoch=None):
        """Advances one step (or jumps to `epoch`, using the closed form where there is one)."""
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            warnings.warn("The epoch parameter in `scheduler.step()` was not necessary and is "
                          "being deprecated where possible. Please use `scheduler.step()` to "
                          "step the scheduler.", UserWarning, stacklevel=2)
            self.last_epoch = epoch
            if self._has_closed_form():
                values = [self._lr_at(i, b, epoch) for i, b in enumerate(self.base_lrs)]
            else:
                values = self.get_lr()
        self._set_lrs(values)

    def _set_lrs(self, values):
        for i, (group, lr) in enumerate(zip(self.optimizer.param_groups, values)):
            group["lr"] = lr
            self.print_lr(self.verbose, i, lr)
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _has_closed_form(self):
        return type(self)._lr_at is not LRScheduler._lr_at

    def _lr_at(self, i, base_lr, step):
        raise NotImplementedError(f"{type(self).__name__} has no closed form")

    def _group_lrs(self):
        return [group["lr"] for group in self.optimizer.param_groups]


_LRScheduler = LRScheduler


def _format_param(name, optimizer, param):
    """One value per param group (a list of them, or one value for all)."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(param)} values, param_groups has "
                             f"{len(optimizer.param_groups)}.")
        return list(param)
    return [param] * len(optimizer.param_groups)


class LambdaLR(LRScheduler):
    """lr = base_lr * lr_lambda(step) (one function, or one per group)."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1, verbose=False, last_step=None):
        self.optimizer = optimizer
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                                 f"{len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        super().__init__(optimizer, last_epoch, verbose, last_step)

    def state_dict(self):
        """Functions are not saved; callable objects' attributes are."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        for fn, saved in zip(self.lr_lambdas, lambdas):
            if saved is not None:
                fn.__dict__.update(saved)

    def get_lr(self):
        return [self._lr_at(i, b, self.last_epoch) for i, b in enumerate(self.base_lrs)]

    def _lr_at(self, i, base_lr, step):
        return base_lr * self.lr_lambdas[i](step)


class MultiplicativeLR(LambdaLR):
    """lr = previous lr * lr_lambda(step) for step > 0 (no closed form)."""

    def get_lr(self):
        if self.last_epoch > 0:
            return [g["lr"] * fn(self.last_epoch)
                    for fn, g in zip(self.lr_lambdas, self.optimizer.param_groups)]
        return self._group_lrs()

    _lr_at = LRScheduler._lr_at


class StepLR(LRScheduler):
    """Multiplies the lr by gamma every step_size steps."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1, verbose=False,
                 last_step=None):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch, verbose, last_step)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]

    def _lr_at(self, i, base_lr, step):
        return base_lr * self.gamma ** (step // self.step_size)


class MultiStepLR(LRScheduler):
    """Multiplies the lr by gamma at each milestone (a repeated milestone multiplies twice)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1, verbose=False,
                 last_step=None):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch, verbose, last_step)

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return self._group_lrs()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._group_lrs()]

    def _lr_at(self, i, base_lr, step):
        return base_lr * self.gamma ** bisect_right(sorted(self.milestones.elements()), step)


class ConstantLR(LRScheduler):
    """lr * factor until total_iters steps, then the lr itself."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1, verbose=False,
                 last_step=None):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch, verbose, last_step)

    def get_lr(self):
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._group_lrs()]
        if self.last_epoch != self.total_iters:
            return self._group_lrs()
        return [lr * (1.0 / self.factor) for lr in self._group_lrs()]

    def _lr_at(self, i, base_lr, step):
        return base_lr * (self.factor + (step >= self.total_iters) * (1 - self.factor))


class LinearLR(LRScheduler):
    """Multiplies the lr by a factor going linearly from start_factor to end_factor over
    total_iters steps."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1, verbose=False, last_step=None):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch, verbose, last_step)

    def get_lr(self):
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in self._group_lrs()]
        if self.last_epoch > self.total_iters:
            return self._group_lrs()
        d = self.end_factor - self.start_factor
        ratio = 1.0 + d / (self.total_iters * self.start_factor + (self.last_epoch - 1) * d)
        return [lr * ratio for lr in self._group_lrs()]

    def _lr_at(self, i, base_lr, step):
        return base_lr * (self.start_factor + (self.end_factor - self.start_factor)
                          * min(self.total_iters, step) / self.total_iters)


class ExponentialLR(LRScheduler):
    """Multiplies the lr by gamma every step."""

    def __init__(self, optimizer, gamma, last_epoch=-1, verbose=False, last_step=None):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch, verbose, last_step)

    def get_lr(self):
        if self.last_epoch == 0:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]

    def _lr_at(self, i, base_lr, step):
        return base_lr * self.gamma ** step


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the base lr to eta_min over T_max steps (SGDR without restarts),
    in PyTorch's recursive form (so it chains with other schedulers)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1, verbose=False,
                 last_step=None):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch, verbose, last_step)

    def get_lr(self):
        e, T, lo = self.last_epoch, self.T_max, self.eta_min
        if e == 0:
            return self._group_lrs()
        if self._step_count == 1 and e > 0:
            return [lo + (b - lo) * (1 + math.cos(e * math.pi / T)) / 2 for b in self.base_lrs]
        if (e - 1 - T) % (2 * T) == 0:
            return [g["lr"] + (b - lo) * (1 - math.cos(math.pi / T)) / 2
                    for b, g in zip(self.base_lrs, self.optimizer.param_groups)]
        return [(1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T))
                * (g["lr"] - lo) + lo for g in self.optimizer.param_groups]

    def _lr_at(self, i, base_lr, step):
        return self.eta_min + (base_lr - self.eta_min) * (
            1 + math.cos(math.pi * step / self.T_max)) / 2


class PolynomialLR(LRScheduler):
    """Polynomial decay. Two signatures:

    - PyTorch's ``PolynomialLR(optimizer, total_iters=5, power=1.0)``: lr = base_lr * (1 -
      min(step, total_iters) / total_iters) ** power (chainable form).
    - OneFlow's ``PolynomialLR(optimizer, decay_batch, end_learning_rate=0.0001, power=1.0,
      cycle=False)`` (also ``steps=`` for decay_batch), chosen when decay_batch/steps,
      end_learning_rate or cycle is passed by keyword: lr = (base_lr - end_lr) * (1 - step /
      decay) ** power + end_lr, with decay = decay_batch * ceil(step / decay_batch) when cycling
      (step 0 counts as 1) and step capped at decay_batch otherwise.
    A positional second argument is PyTorch's total_iters.
    """

    def __init__(self, optimizer, total_iters=None, power=1.0, last_epoch=-1, verbose=False,
                 *, decay_batch=None, steps=None, end_learning_rate=None, cycle=None,
                 last_step=None):
        oneflow_form = (decay_batch is not None or steps is not None
                        or end_learning_rate is not None or cycle is not None)
        if oneflow_form:
            n = decay_batch if decay_batch is not None else steps
            if n is None:
                n = total_iters
            if n is None or n <= 0:
                raise ValueError(f"decay_batch must be greater than zero, but got {n}")
            self.max_decay_steps = n
            self.end_learning_rate = 0.0001 if end_learning_rate is None else end_learning_rate
            self.cycle = bool(cycle)
        else:
            n = 5 if total_iters is None else total_iters
        self._oneflow_form = oneflow_form
        self.total_iters = n
        self.power = power
        super().__init__(optimizer, last_epoch, verbose, last_step)

    def get_lr(self):
        if self._oneflow_form:
            return [self._lr_at(i, b, self.last_epoch) for i, b in enumerate(self.base_lrs)]
        e, T = self.last_epoch, self.total_iters
        if e == 0 or e > T:
            return self._group_lrs()
        factor = ((1.0 - e / T) / (1.0 - (e - 1) / T)) ** self.power
        return [lr * factor for lr in self._group_lrs()]

    def _lr_at(self, i, base_lr, step):
        if not self._oneflow_form:
            return base_lr * (1.0 - min(self.total_iters, step) / self.total_iters) ** self.power
        decay, cur = self.max_decay_steps, step
        if self.cycle:
            cur = max(cur, 1)
            decay = decay * math.ceil(cur / decay)
        else:
            cur = min(cur, decay)
        end = self.end_learning_rate
        return (base_lr - end) * (1 - cur / decay) ** self.power + end


class CosineDecayLR(LRScheduler):
    """OneFlow's cosine decay: lr = base_lr * ((1 - alpha) * (1 + cos(pi * step / decay_steps))
    / 2 + alpha) for step < decay_steps, then base_lr * alpha."""

    def __init__(self, optimizer, decay_steps, alpha=0.0, last_epoch=-1, verbose=False,
                 last_step=None):
        if decay_steps <= 0:
            raise ValueError(f"decay_steps must greater than zero, but got {decay_steps}")
        self.decay_steps = decay_steps
        self.alpha = alpha
        super().__init__(optimizer, last_epoch, verbose, last_step)

    def get_lr(self):
        return [self._lr_at(i, b, self.last_epoch) for i, b in enumerate(self.base_lrs)]

    def _lr_at(self, i, base_lr, step):
        if step < self.decay_steps:
            cos_decay = 0.5 * (1 + math.cos(math.pi * step / self.decay_steps))
            return base_lr * ((1 - self.alpha) * cos_decay + self.alpha)
        return base_lr * self.alpha


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing with warm restarts (SGDR): periods T_0, T_0 * T_mult, ...

    Upstream OneFlow's keywords too: `decay_rate` scales the peak lr by decay_rate ** n in the
    n-th period (base_lr in the first), and after `restart_limit` periods (0: no limit) the lr
    stays at eta_min. Their defaults (1.0, 0) give PyTorch's schedule."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1, verbose=False,
                 last_step=None, *, decay_rate=1.0, restart_limit=0):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        if not isinstance(restart_limit, int) or restart_limit < 0:
            raise ValueError(f"Expected a non-negative integer restart_limit, but got {restart_limit}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.decay_rate = decay_rate
        self.restart_limit = restart_limit
        self.T_cur = last_epoch if last_step is None else last_step
        self._period = 0  # restarts so far: the index of the current period
        super().__init__(optimizer, last_epoch, verbose, last_step)

    def _lr_in_period(self, base_lr, t_cur, t_i, period):
        if self.restart_limit and period >= self.restart_limit:
            return self.eta_min
        peak = base_lr * self.decay_rate ** period if self.decay_rate != 1.0 else base_lr
        return self.eta_min + (peak - self.eta_min) * (1 + math.cos(math.pi * t_cur / t_i)) / 2

    def get_lr(self):
        return [self._lr_in_period(b, self.T_cur, self.T_i, self._period) for b in self.base_lrs]

    def _position(self, epoch):
        """(T_cur, T_i, period index) at a (possibly fractional) epoch."""
        if epoch >= self.T_0:
            if self.T_mult == 1:
                return epoch % self.T_0, self.T_0, int(epoch // self.T_0)
            n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
            return (epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1),
                    self.T_0 * self.T_mult ** n, n)
        return epoch, self.T_0, 0

    def _lr_at(self, i, base_lr, step):
        return self._lr_in_period(base_lr, *self._position(step))

    def step(self, epoch=None):
        """Advances one step, or goes to `epoch` (fractional epochs allowed)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur - self.T_i
                self.T_i = self.T_i * self.T_mult
                self._period += 1
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            self.T_cur, self.T_i, self._period = self._position(epoch)
        self.last_epoch = math.floor(epoch)
        self._step_count = getattr(self, "_step_count", 0) + 1
        self._set_lrs(self.get_lr())
