"""Schedulers that combine others (SequentialLR, ChainedScheduler, OneFlow's WarmupLR) or that
move momentum too / react to a metric (OneCycleLR, CyclicLR, ReduceLROnPlateau)."""
import math
import types
import warnings
from bisect import bisect_right
from functools import partial

from ..optimizer import Optimizer
from ._base import LRScheduler, _format_param


def _check_schedulers(optimizer, schedulers, who):
    if len(schedulers) < 1:
        raise ValueError(f"{who} expects at least one scheduler, but got no scheduler.")
    for i, s in enumerate(schedulers):
        if not hasattr(s, "optimizer"):
            raise TypeError(f"{who} at index {i} should have `optimizer` as its attribute.")
        if isinstance(s, ReduceLROnPlateau):
            raise ValueError(f"{who} does not support `ReduceLROnPlateau` scheduler as it "
                             "requires additional kwargs to be specified when calling `step`, "
                             f"but got one at index {i} in the given schedulers sequence.")
        if s.optimizer is not optimizer:
            raise ValueError(f"{who} expects all schedulers to belong to the same optimizer, "
                             f"but got scheduler {type(s).__name__} at index {i} has "
                             f"{s.optimizer}, which is different from {optimizer}.")


class SequentialLR(LRScheduler):
    """Runs schedulers one after the other, switching at the milestones (each later scheduler
    restarts from step 0 at its milestone)."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1, verbose=False):
        _check_schedulers(optimizer, schedulers, "SequentialLR")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be "
                             "one more than the number of milestone points, but got number of "
                             f"schedulers {len(schedulers)} and the number of milestones to be "
                             f"equal to {len(milestones)}")
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # The schedulers' constructors already stepped: restore the initial lrs, undo their
        # steps, and start only the first one.
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        for s in self._schedulers:
            s.last_epoch -= 1
        self._schedulers[0]._initial_step()
        self._last_lr = self._schedulers[0].get_last_lr()

    def step(self):
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        s = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                s.step(0)
        else:
            s.step()
        self._last_lr = s.get_last_lr()

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        inner = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for s, st in zip(self._schedulers, inner):
            s.load_state_dict(st)


class ChainedScheduler(LRScheduler):
    """Steps every scheduler on each step (their effects multiply through the group lrs)."""

    def __init__(self, schedulers, optimizer=None):
        schedulers = list(schedulers)
        if len(schedulers) < 1:
            raise ValueError("ChainedScheduler expects at least one scheduler to be chained, but "
                             "got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(optimizer, schedulers, "ChainedScheduler")
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = self._group_lrs()

    def step(self):
        for s in self._schedulers:
            s.step()
        self._last_lr = self._group_lrs()

    state_dict = SequentialLR.state_dict
    load_state_dict = SequentialLR.load_state_dict


class WarmupLR(LRScheduler):
    """OneFlow's warmup: `warmup_iters` steps of linear or constant warmup in front of a
    scheduler (or of a constant lr when given an optimizer).

    During warmup (step s < warmup_iters) lr = base_lr * f(s): "constant" f = warmup_factor;
    "linear" f = warmup_factor + (end - warmup_factor) * s / warmup_iters, where end is the
    wrapped scheduler's factor at step warmup_iters (so the warmup joins it continuously; 1
    with an optimizer or `warmup_prefix=True`). Afterwards the wrapped scheduler's lr at step s
    (at s - warmup_iters with `warmup_prefix=True`). The wrapped scheduler needs a closed form
    (every scheduler here except MultiplicativeLR, ReduceLROnPlateau and the composites), or
    must be a user's subclass written for OneFlow's older API, whose `get_lr()` computes every
    group's rate from `last_step` (the official BERT script's PolynomialLR): it is asked at the
    step in question.
    """

    def __init__(self, scheduler_or_optimizer, warmup_factor=1.0 / 3, warmup_iters=5,
                 warmup_method="linear", warmup_prefix=False, last_step=-1, verbose=False):
        if not isinstance(scheduler_or_optimizer, (LRScheduler, Optimizer)):
            raise ValueError("'scheduler_or_optimizer' must be a LRScheduler or an Optimizer, "
                             f"but got {type(scheduler_or_optimizer)}")
        if warmup_method not in ("linear", "constant"):
            raise ValueError("'warmup_method' must be 'linear' or 'constant', but got "
                             f"{warmup_method}")
        if isinstance(scheduler_or_optimizer, LRScheduler):
            inner, opt = scheduler_or_optimizer, scheduler_or_optimizer.optimizer
            if not inner._has_closed_form() and not _rates_from_step(inner):
                raise ValueError(f"WarmupLR can't wrap {type(inner).__name__}: it has no "
                                 "closed form to jump to a step")
        else:
            inner, opt = None, scheduler_or_optimizer
            if warmup_iters == 0:
                raise ValueError("When 'scheduler_or_optimizer' is an optimizer warmup_iters "
                                 "can't be equal to 0")
        self.inner = inner
        self.warmup_factor = warmup_factor
        self.warmup_iters = warmup_iters
        self.warmup_method = warmup_method
        self.warmup_prefix = warmup_prefix
        super().__init__(opt, last_step, verbose)

    def _lr_at(self, i, base_lr, step):
        if step < self.warmup_iters:
            if self.warmup_method == "constant":
                return base_lr * self.warmup_factor
            end = 1.0
            if self.inner is not None and not self.warmup_prefix:
                end = self._inner_lr_at(i, base_lr, self.warmup_iters) / base_lr
            return base_lr * (self.warmup_factor
                              + (end - self.warmup_factor) * step / self.warmup_iters)
        if self.inner is None:
            return base_lr
        inner_step = step - self.warmup_iters if self.warmup_prefix else step
        return self._inner_lr_at(i, base_lr, inner_step)

    def _inner_lr_at(self, i, base_lr, step):
        if self.inner._has_closed_form():
            return self.inner._lr_at(i, base_lr, step)
        saved = self.inner.last_epoch  # (_rates_from_step: its get_lr() reads the step)
        self.inner.last_epoch = step
        try:
            return self.inner.get_lr()[i]
        finally:
            self.inner.last_epoch = saved

    def get_lr(self):
        return [self._lr_at(i, b, self.last_epoch) for i, b in enumerate(self.base_lrs)]

    def step(self, epoch=None):
        super().step(epoch)
        if self.inner is not None and self.last_epoch >= self.warmup_iters:
            # Keep the wrapped scheduler's own counters where the schedule is.
            self.inner.last_epoch = self.last_epoch - (self.warmup_iters if self.warmup_prefix
                                                       else 0)
            self.inner._last_lr = self._last_lr

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "inner")}
        state["inner"] = None if self.inner is None else self.inner.state_dict()
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        inner = state_dict.pop("inner", None)
        self.__dict__.update(state_dict)
        if inner is not None and self.inner is not None:
            self.inner.load_state_dict(inner)


WarmUpLR = WarmupLR


def _rates_from_step(scheduler):
    """A user's scheduler class (defined outside oneflow) with its own get_lr(): OneFlow's older
    LrScheduler API, whose get_lr() is the rates at `last_step` (a closed form by its state)."""
    cls = type(scheduler)
    return not cls.__module__.startswith("oneflow.") and cls.get_lr is not LRScheduler.get_lr


def _annealing_cos(start, end, pct):
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


def _annealing_linear(start, end, pct):
    return (end - start) * pct + start


def _set_momentum(group, use_beta1, m):
    if use_beta1:
        group["betas"] = (m, *group["betas"][1:])
    else:
        group["momentum"] = m


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin): lr rises from max_lr/div_factor to max_lr over
    pct_start of the steps, then anneals to initial_lr/final_div_factor; momentum (or beta1)
    moves the opposite way when cycle_momentum."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85,
                 max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False,
                 last_epoch=-1, verbose=False):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError("Expected positive integer steps_per_epoch, but got "
                                 f"{steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        n = self.total_steps
        if three_phase:
            self._schedule_phases = [
                dict(end_step=float(pct_start * n) - 1, start_lr="initial_lr", end_lr="max_lr",
                     start_momentum="max_momentum", end_momentum="base_momentum"),
                dict(end_step=float(2 * pct_start * n) - 2, start_lr="max_lr",
                     end_lr="initial_lr", start_momentum="base_momentum",
                     end_momentum="max_momentum"),
                dict(end_step=n - 1, start_lr="initial_lr", end_lr="min_lr",
                     start_momentum="max_momentum", end_momentum="max_momentum")]
        else:
            self._schedule_phases = [
                dict(end_step=float(pct_start * n) - 1, start_lr="initial_lr", end_lr="max_lr",
                     start_momentum="max_momentum", end_momentum="base_momentum"),
                dict(end_step=n - 1, start_lr="max_lr", end_lr="min_lr",
                     start_momentum="base_momentum", end_momentum="max_momentum")]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = _format_param("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for m, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = m / div_factor
                group["max_lr"] = m
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            maxs = _format_param("max_momentum", optimizer, max_momentum)
            bases = _format_param("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for mx, bs, group in zip(maxs, bases, optimizer.param_groups):
                    _set_momentum(group, self.use_beta1, mx)
                    group["max_momentum"] = mx
                    group["base_momentum"] = bs
        super().__init__(optimizer, last_epoch, verbose)

    def _anneal(self, start, end, pct):
        f = _annealing_cos if self._anneal_func_type == "cos" else _annealing_linear
        return f(start, end, pct)

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps "
                             f"is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, ph in enumerate(self._schedule_phases):
                end = ph["end_step"]
                if step <= end or i == len(self._schedule_phases) - 1:
                    pct = (step - start) / (end - start)
                    lr = self._anneal(group[ph["start_lr"]], group[ph["end_lr"]], pct)
                    if self.cycle_momentum:
                        mom = self._anneal(group[ph["start_momentum"]],
                                           group[ph["end_momentum"]], pct)
                    break
                start = ph["end_step"]
            lrs.append(lr)
            if self.cycle_momentum:
                _set_momentum(group, self.use_beta1, mom)
        return lrs


class CyclicLR(LRScheduler):
    """Cyclical learning rates (Smith): the lr cycles between base_lr and max_lr with policy
    "triangular", "triangular2", "exp_range" or a custom scale_fn; momentum cycles inversely."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1,
                 verbose=False):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_ref = None
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        self.optimizer = optimizer
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            self.max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for mx, group in zip(self.max_momentums, optimizer.param_groups):
                    _set_momentum(group, self.use_beta1, mx)
        super().__init__(optimizer, last_epoch, verbose)
        self.base_lrs = base_lrs

    def _init_scale_fn(self):
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = lambda x: 1.0
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = lambda x: 1 / (2.0 ** (x - 1))
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = partial(pow, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x):
        fn = self._scale_fn_custom if self._scale_fn_custom is not None else self._scale_fn_ref
        return fn(x)

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        arg = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = [b + (m - b) * scale_factor * self.scale_fn(arg)
               for b, m in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, b, m in zip(self.optimizer.param_groups, self.base_momentums,
                                   self.max_momentums):
                _set_momentum(group, self.use_beta1, m - (m - b) * scale_factor
                              * self.scale_fn(arg))
        return lrs

    def state_dict(self):
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


class ReduceLROnPlateau(LRScheduler):
    """Reduces the lr by `factor` when a metric has not improved for `patience` steps."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8, verbose=False):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got "
                                 f"{len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self._last_lr = self._group_lrs()
        self.patience = patience
        self.cooldown = cooldown
        self.cooldown_counter = 0
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode
        self.eps = eps
        self.verbose = verbose
        self.last_epoch = 0
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None):
        """Records `metrics` (a number or one-element tensor) and reduces the lr when stuck."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        self.last_epoch = epoch
        if self.is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = self._group_lrs()

    def _reduce_lr(self):
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError("The number of param groups in the `optimizer` "
                                   f"({len(self.optimizer.param_groups)}) differs from when "
                                   f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), "
                                   "usually due to a new param group being added to the "
                                   "optimizer. Please modify the `min_lrs` field to match the "
                                   "length of the `optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for i, group in enumerate(self.optimizer.param_groups):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                group["lr"] = new_lr

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def is_better(self, a, best):
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min" and self.threshold_mode == "abs":
            return a < best - self.threshold
        if self.mode == "max" and self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in ("min", "max"):
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)
