"""``flow.optimizer``: the job-function API's optimizers and learning-rate schedules.

``flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]), momentum=0).minimize(loss)``
inside a "train" job marks the loss to differentiate; after each call the job updates its
trainable variables with the matching ``flow.optim`` optimizer at the schedule's rate for that
step (the job's train step, counted from 0).
"""
import math


class _Warmup:
    def __init__(self, warmup_batches, start):
        if warmup_batches < 0:
            raise ValueError("warmup: warmup_batches must be >= 0")
        self.warmup_batches, self.start = int(warmup_batches), float(start)


class _LinearWarmup(_Warmup):
    def multiplier(self, step):
        return self.start + (1.0 - self.start) * step / self.warmup_batches


class _ConstantWarmup(_Warmup):
    def multiplier(self, step):
        return self.start


class warmup:  # noqa: N801 - flow.optimizer.warmup namespace
    """``warmup.linear(warmup_batches, start_multiplier)``: the rate grows linearly from
    start_multiplier times the schedule's to the schedule's over warmup_batches steps;
    ``warmup.constant(warmup_batches, multiplier)``: multiplier times the schedule's until then."""

    @staticmethod
    def linear(warmup_batches, start_multiplier):
        return _LinearWarmup(warmup_batches, start_multiplier)

    @staticmethod
    def constant(warmup_batches, multiplier):
        return _ConstantWarmup(warmup_batches, multiplier)


class _Scheduler:
    """A learning-rate schedule: ``lr(step)``, the rate of the job's train step `step` (from 0).
    As 0.x's learning-rate kernel, a step inside the warmup takes the warmup's multiplier times
    the schedule's base rate (``base_lr``; a piecewise-constant schedule's first value), not
    times the decayed rate: the decay counts from step 0 and takes over after the warmup."""

    def lr(self, step):
        w = getattr(self, "warmup", None)
        if w is not None and step < w.warmup_batches:
            return self.base_lr * w.multiplier(step)
        return self._lr(step)

    def _check_warmup(self, warmup):
        if warmup is not None and not isinstance(warmup, _Warmup):
            raise TypeError(f"{type(self).__name__}: warmup must come from flow.optimizer.warmup")
        self.warmup = warmup


class _ClipByGlobalNorm:
    def __init__(self, clip_norm):
        if clip_norm <= 0:
            raise ValueError("grad_clipping.by_global_norm: clip_norm must be positive")
        self.clip_norm = float(clip_norm)

    def apply(self, params):
        from ..nn.utils import clip_grad_norm_
        clip_grad_norm_([p for p in params if p.grad is not None], self.clip_norm)


class grad_clipping:  # noqa: N801 - flow.optimizer.grad_clipping namespace
    @staticmethod
    def by_global_norm(clip_norm):
        """Scales all gradients together so that their global L2 norm is at most clip_norm."""
        return _ClipByGlobalNorm(clip_norm)


def _piece(boundaries, step):
    """The index of the piece a step is in, as 0.x's kernel: the first i with step <=
    boundaries[i] (len(boundaries) after the last). A boundary is the last step of its piece:
    ``boundaries=[10]`` runs steps 0..10 at the first value and 11 on at the second."""
    for i, b in enumerate(boundaries):
        if step <= b:
            return i
    return len(boundaries)


class PiecewiseConstantScheduler(_Scheduler):
    """values[i] for the steps up to boundaries[i] (included), values[-1] after the last:
    ``([], [0.1])`` is a constant 0.1, ``([10], [0.1, 0.01])`` 0.1 for steps 0..10."""

    def __init__(self, boundaries, values, warmup=None):
        self._check_warmup(warmup)
        if len(values) != len(boundaries) + 1:
            raise ValueError("PiecewiseConstantScheduler: values needs one more entry than boundaries")
        self.boundaries, self.values = list(boundaries), [float(v) for v in values]
        self.base_lr = self.values[0]

    def _lr(self, step):
        return self.values[_piece(self.boundaries, step)]


class PiecewiseScalingScheduler(_Scheduler):
    """base_lr for the steps up to boundaries[0] (included), base_lr * scale[i] after
    boundaries[i] (up to the next one)."""

    def __init__(self, base_lr, boundaries, scale, warmup=None):
        self._check_warmup(warmup)
        scale = [scale] * len(boundaries) if isinstance(scale, (int, float)) else list(scale)
        if len(scale) != len(boundaries):
            raise ValueError("PiecewiseScalingScheduler: one scale per boundary")
        self.base_lr, self.boundaries = float(base_lr), list(boundaries)
        self.scales = [1.0] + [float(s) for s in scale]  # one per piece, as 0.x's message

    def _lr(self, step):
        return self.base_lr * self.scales[_piece(self.boundaries, step)]


class CosineScheduler(_Scheduler):
    """base_lr * ((1 - alpha) * (1 + cos(pi * min(step, steps) / steps)) / 2 + alpha)."""

    def __init__(self, base_lr, steps, alpha=0.0, warmup=None):
        self._check_warmup(warmup)
        self.base_lr, self.steps, self.alpha = float(base_lr), int(steps), float(alpha)

    def _lr(self, step):
        t = min(step, self.steps) / self.steps
        return self.base_lr * ((1 - self.alpha) * 0.5 * (1 + math.cos(math.pi * t)) + self.alpha)


class ExponentialScheduler(_Scheduler):
    """base_lr * decay_rate ** (step / steps) (floored with staircase)."""

    def __init__(self, base_lr, steps, decay_rate, staircase=False, warmup=None):
        self._check_warmup(warmup)
        self.base_lr, self.steps, self.decay_rate, self.staircase = float(base_lr), int(steps), float(decay_rate), staircase

    def _lr(self, step):
        p = step / self.steps
        return self.base_lr * self.decay_rate ** (math.floor(p) if self.staircase else p)


class PolynomialScheduler(_Scheduler):
    """(base_lr - end_learning_rate) * (1 - step / decay_steps) ** power + end_learning_rate, with
    decay_steps = steps and step capped at steps, or with cycle decay_steps = the first multiple
    of steps at or above step (the decay restarts every `steps` steps; step 0 counts as 1, as
    0.x's kernel has it)."""

    def __init__(self, base_lr, steps, end_learning_rate=0.0001, power=1.0, cycle=False, warmup=None):
        self._check_warmup(warmup)
        if steps <= 0:
            raise ValueError(f"PolynomialScheduler: steps must be positive, got {steps}")
        self.base_lr, self.steps, self.end = float(base_lr), int(steps), float(end_learning_rate)
        self.power, self.cycle = float(power), bool(cycle)

    def _lr(self, step):
        if self.cycle:  # (0.x's kernel counts step 0 as step 1 here: no restart at 0)
            step = max(step, 1)
            decay = self.steps * math.ceil(step / self.steps)
        else:
            decay, step = self.steps, min(step, self.steps)
        return (self.base_lr - self.end) * (1 - step / decay) ** self.power + self.end


class PolynomialSchduler(PolynomialScheduler):
    """0.x's misspelt, deprecated name of PolynomialScheduler (it warned on use, as here)."""

    def __init__(self, base_lr, steps, end_learning_rate=0.0001, power=1.0, cycle=False, warmup=None):
        import warnings
        warnings.warn("flow.optimizer.PolynomialSchduler will be removed, use flow.optimizer.PolynomialScheduler",
                      DeprecationWarning, stacklevel=2)
        super().__init__(base_lr, steps, end_learning_rate, power, cycle, warmup)


class _DecayScheduler(_Scheduler):
    def __init__(self, base_lr, steps, decay_rate, staircase=False, warmup=None):
        self._check_warmup(warmup)
        if steps <= 0:
            raise ValueError(f"{type(self).__name__}: steps must be positive, got {steps}")
        self.base_lr, self.steps, self.decay_rate, self.staircase = float(base_lr), int(steps), float(decay_rate), \
            bool(staircase)

    def _ratio(self, step):
        p = step / self.steps
        return math.floor(p) if self.staircase else p


class InverseTimeScheduler(_DecayScheduler):
    """base_lr / (1 + decay_rate * step / steps) (the ratio floored with staircase)."""

    def _lr(self, step):
        return self.base_lr / (1.0 + self.decay_rate * self._ratio(step))


class NaturalExpScheduler(_DecayScheduler):
    """base_lr * exp(-decay_rate * step / steps) (the ratio floored with staircase)."""

    def _lr(self, step):
        return self.base_lr * math.exp(-self.decay_rate * self._ratio(step))


class LinearCosineScheduler(_Scheduler):
    """base_lr * ((alpha + linear) * cosine + beta) with t = min(step, steps), linear =
    (steps - t) / steps and cosine = (1 + cos(2 pi num_periods t / steps)) / 2."""

    def __init__(self, base_lr, steps, num_periods=0.5, alpha=0.0, beta=0.001, warmup=None):
        self._check_warmup(warmup)
        if steps <= 0:
            raise ValueError(f"LinearCosineScheduler: steps must be positive, got {steps}")
        self.base_lr, self.steps = float(base_lr), int(steps)
        self.num_periods, self.alpha, self.beta = float(num_periods), float(alpha), float(beta)

    def _lr(self, step):
        t = min(step, self.steps)
        linear = (self.steps - t) / self.steps
        cosine = 0.5 * (1.0 + math.cos(math.pi * 2.0 * self.num_periods * t / self.steps))
        return self.base_lr * ((self.alpha + linear) * cosine + self.beta)


class CustomScheduler(_Scheduler):
    """0.x's ``CustomScheduler(lbn)``: the rate of each step is the value of a blob the job
    computes -- any schedule a job can write with blob ops (of the train step it keeps in a
    variable, of the loss...). `lbn` is the blob's logical name ``"op_name/blob_name"`` as 0.x
    scripts pass it (``blob.logical_blob_name``: a variable's ``"<name>/out"``, another blob's
    name in its job, blob_names.py), a variable's name alone, or the blob itself. The
    blob holds one value (a ``ValueError`` at ``minimize`` otherwise, as for a name that is no
    blob of the job); each call reads it as the
    job computed it in that call (for a variable: its value before the update), and the
    optimizer steps at that rate. A warmup does not apply (0.x refused one with a blob's rate)."""

    def __init__(self, lbn):
        from .. import _oneflow_internal as _C
        if isinstance(lbn, str):
            if not lbn or lbn.count("/") > 1 or (lbn.count("/") == 1 and not lbn.endswith("/out")):
                raise ValueError(f"CustomScheduler: lbn must be a logical blob name ('op/out'), a variable's name "
                                 f"or a blob, got {lbn!r}")
        elif not isinstance(lbn, _C.Tensor):
            raise TypeError(f"CustomScheduler: lbn must be a blob of the job, its logical name or a variable's "
                            f"name, got {type(lbn).__name__}")
        self.lbn, self.warmup = lbn, None

    def blob(self, job):
        """The blob whose value is the rate, in the job being traced or run."""
        from .blob_names import lookup
        if not isinstance(self.lbn, str):
            blob = self.lbn
        else:
            blob = lookup(job, self.lbn)
            if blob is None:
                raise ValueError(f"CustomScheduler: {self.lbn!r} names no blob or variable of job function "
                                 f"{job.fn.name} (its variables: {sorted(job.variables)}; its named blobs: "
                                 f"{sorted(job.blob_names)})")
        if blob.numel() != 1:
            raise ValueError(f"CustomScheduler: the learning-rate blob must hold one value, got shape "
                             f"{tuple(blob.shape)}")
        return blob

    def lr(self, step):
        raise RuntimeError("CustomScheduler: the rate is the value of its blob in each call of the job "
                           "(there is no rate of a step alone)")


class _StaticLossScale:
    def __init__(self, loss_scale_factor):
        if loss_scale_factor <= 0:
            raise ValueError(f"loss_scale.static_loss_scale: the factor must be positive, got {loss_scale_factor}")
        self.loss_scale_factor = float(loss_scale_factor)


class _DynamicLossScale:
    """The loss scale of mixed precision: a step whose gradients hold an inf / nan is skipped and
    the scale divided by `multiplier`; after `increment_period` finite steps in a row it is
    multiplied by it. The jobs compute their gradients in float32 here (bfloat16 autocast keeps
    float32 gradients), where multiplying the loss by the scale and the gradients by its inverse
    changes nothing, so the scale is kept as OneFlow's (``scale``) and only the skipping acts."""

    def __init__(self, initial_loss_scale=2 ** 30, increment_period=2000, multiplier=2.0):
        if initial_loss_scale <= 0 or increment_period < 1 or multiplier <= 1:
            raise ValueError("loss_scale.dynamic_loss_scale: initial_loss_scale > 0, increment_period >= 1 and "
                             "multiplier > 1 are needed")
        self.scale, self.increment_period, self.multiplier = float(initial_loss_scale), int(increment_period), \
            float(multiplier)
        self.good_steps = 0

    def step_ok(self, params):
        """Whether this step's gradients are finite (then the update runs), moving the scale."""
        from .. import isfinite
        finite = all(bool(isfinite(p.grad).all()) for p in params if p.grad is not None)
        if not finite:
            self.scale /= self.multiplier
            self.good_steps = 0
            return False
        self.good_steps += 1
        if self.good_steps >= self.increment_period:
            self.scale *= self.multiplier
            self.good_steps = 0
        return True


class loss_scale:  # noqa: N801 - flow.optimizer.loss_scale namespace
    """``static_loss_scale(factor)``: the loss_scale_factor of the optimizers;
    ``dynamic_loss_scale(initial_loss_scale, increment_period, multiplier)``: see
    _DynamicLossScale."""

    @staticmethod
    def static_loss_scale(loss_scale_factor):
        return _StaticLossScale(loss_scale_factor)

    @staticmethod
    def dynamic_loss_scale(initial_loss_scale=2 ** 30, increment_period=2000, multiplier=2.0):
        return _DynamicLossScale(initial_loss_scale, increment_period, multiplier)


class _Optimizer:
    indexed_slices = False  # whether 0.x's indexed-slices rewrite applied to its update (job.py)

    def __init__(self, lr_scheduler, grad_clipping=None, loss_scale_factor=None, train_step_lbn=None,
                 variables=None, loss_scale_policy=None):
        if not isinstance(lr_scheduler, _Scheduler):
            raise TypeError(f"{type(self).__name__}: lr_scheduler must be a flow.optimizer scheduler, "
                            f"got {type(lr_scheduler).__name__}")
        if variables is not None and not callable(variables) and not (
                isinstance(variables, (list, tuple)) and all(isinstance(v, str) for v in variables)):
            raise TypeError(f"{type(self).__name__}: variables must be a list of variable names or a callable "
                            f"returning one, got {variables!r}")
        self.variables = variables
        if grad_clipping is not None and not isinstance(grad_clipping, _ClipByGlobalNorm):
            raise TypeError(f"{type(self).__name__}: grad_clipping must come from flow.optimizer.grad_clipping")
        if loss_scale_factor is not None and loss_scale_factor <= 0:
            raise ValueError(f"{type(self).__name__}: loss_scale_factor must be positive")
        self.lr_scheduler, self.grad_clipping = lr_scheduler, grad_clipping
        if loss_scale_policy is not None and not isinstance(loss_scale_policy, (_StaticLossScale, _DynamicLossScale)):
            raise TypeError(f"{type(self).__name__}: loss_scale_policy must come from flow.optimizer.loss_scale")
        if isinstance(loss_scale_policy, _StaticLossScale):
            if loss_scale_factor is not None:
                raise ValueError(f"{type(self).__name__}: give loss_scale_factor or loss_scale_policy, not both")
            loss_scale_factor = loss_scale_policy.loss_scale_factor
        self.loss_scale_policy = loss_scale_policy if isinstance(loss_scale_policy, _DynamicLossScale) else None
        self.loss_scale_factor = float(loss_scale_factor) if loss_scale_factor is not None else None

    def minimize(self, loss):
        """Differentiates `loss` (a blob of the current train job) and updates the job's
        trainable variables after each call."""
        from .. import _oneflow_internal as _C
        from ._job_state import current_job
        job = current_job()
        if job is None or job.type != "train":
            raise RuntimeError("Optimizer.minimize() must be called inside a job function of type 'train'")
        if not isinstance(loss, _C.Tensor):
            raise TypeError(f"Optimizer.minimize: expected a loss blob, got {type(loss).__name__}")
        if job.minimize:
            raise RuntimeError("Optimizer.minimize: a job function has one optimizer")
        grad = None if loss.numel() == 1 and self.loss_scale_factor is None else _ones_like(loss)
        if self.loss_scale_factor is not None:  # the seed scaled; the update divides it out again
            grad = grad * self.loss_scale_factor
        parts = self._parts()
        self._check_parts(job)
        # CustomScheduler: the blobs whose values are the rates (checked now, before anything runs)
        rate_blobs = {id(p): p.lr_scheduler.blob(job) for p in parts if isinstance(p.lr_scheduler, CustomScheduler)}
        if job.trace is not None:
            for key, blob in rate_blobs.items():  # a program's blob is read from its run (pinned)
                slot = job.trace.tracer.slot_of(blob)
                if slot >= 0:
                    job.trace.tracer.pin(slot)
                job.rate_sources[key] = (slot, None if slot >= 0 else blob)
            from .. import autograd
            job.trace.minimizing = True  # (autograd.backward records the step: _JobTrace.record_backward)
            try:
                autograd.backward(loss, grad)
            finally:
                job.trace.minimizing = False
        else:  # an eager job updates now
            from .. import autograd
            autograd.backward(loss, grad)
            opts = []
            for part in parts:
                params = [v for v in part._select(job) if v.requires_grad]
                key = (type(part).__name__, tuple(id(p) for p in params))
                opt = job.fn._eager_optimizers.get(key)  # keeps its state (momentum) across calls
                if opt is None:
                    opt = job.fn._eager_optimizers[key] = part._make(params)
                opts.append(opt)
            from .job import _call_handler, _rate_of
            for kind, _, blob, handler in job.watchers:
                if kind == "diff":
                    _call_handler(handler, blob.grad)
            job.minimize.extend((part, loss) for part in parts)
            job.fn._update(job, opts, parts, {k: _rate_of(b) for k, b in rate_blobs.items()})
            return
        job.minimize.extend((part, loss) for part in parts)

    def _parts(self):
        """The optimizers that update the job's variables: this one (CombinedOptimizer: its
        optimizers)."""
        return [self]

    def _check_parts(self, job):
        pass

    def _select(self, job):
        """The variables this optimizer updates: `variables` (names, or a callable returning them,
        read when the job is traced) or every trainable variable of the job."""
        from .job import _trainable
        if self.variables is None:
            return [v for n, v in job.variables.items() if _trainable(n)]
        names = self.variables() if callable(self.variables) else self.variables
        unknown = [n for n in names if n not in job.variables]
        if unknown:
            raise ValueError(f"{type(self).__name__}: variables {unknown} are not variables of job function "
                             f"{job.fn.name} (it has {sorted(job.variables)})")
        return [job.variables[n] for n in names]

    def _initial_lr(self):
        """The rate the update rule is made with (each step sets its own: _set_lr)."""
        return 0.0 if isinstance(self.lr_scheduler, CustomScheduler) else self.lr_scheduler.lr(0)

    def _set_lr(self, opt, step, rate=None):
        """The rate of this step: the schedule's for `step`, or `rate` (a CustomScheduler's blob)."""
        lr = self.lr_scheduler.lr(step) if rate is None else rate
        for g in opt.param_groups:
            g["lr"] = lr


def _ones_like(t):
    """A non-scalar loss seeds a gradient of one per element (the variables' gradients are then
    divided by the element count, GlobalFunction._update)."""
    from .. import ones_like
    return ones_like(t)


class SGD(_Optimizer):
    indexed_slices = True  # (0.x's sgd / momentum / adam update ops)

    def __init__(self, lr_scheduler, loss_scale_factor=None, momentum=0.9, grad_clipping=None,
                 train_step_lbn=None, variables=None, loss_scale_policy=None):
        super().__init__(lr_scheduler, grad_clipping, loss_scale_factor, train_step_lbn, variables,
                         loss_scale_policy)
        self.momentum = float(momentum)

    def _make(self, params):
        # 0.x's momentum rule (m = beta m - lr g; w += m: the rate inside the buffer), which is
        # flow.optim.SGD's (buf = beta buf + g; w -= lr buf) only while the rate stays the same
        from .update_rules import MomentumW
        return MomentumW(params, lr=self._initial_lr(), momentum=self.momentum)


class Adam(_Optimizer):
    indexed_slices = True  # (0.x's sgd / momentum / adam update ops)

    def __init__(self, lr_scheduler, beta1=0.9, beta2=0.999, epsilon=1e-8, do_bias_correction=False,
                 loss_scale_factor=None, grad_clipping=None, train_step_lbn=None, variables=None, loss_scale_policy=None):
        super().__init__(lr_scheduler, grad_clipping, loss_scale_factor, train_step_lbn, variables,
                         loss_scale_policy)
        self.betas, self.eps, self.bias_correction = (beta1, beta2), epsilon, do_bias_correction

    def _make(self, params):
        from ..optim import Adam as FlowAdam
        return FlowAdam(params, lr=self._initial_lr(), betas=self.betas, eps=self.eps,
                        do_bias_correction=self.bias_correction)


class _WeightDecayFilter:
    """0.x's weight_decay with weight_decay_includes / weight_decay_excludes: patterns (a str is
    one) searched in the variables' names (a partial regex match, as its weight-decay filter); the
    decay applies to the names some include matches, or to all but those some exclude matches."""

    def _init_decay(self, weight_decay, includes, excludes):
        if includes is not None and excludes is not None:
            raise ValueError(f"{type(self).__name__}: give weight_decay_includes or weight_decay_excludes, not both")
        self.decay_includes = _patterns(type(self).__name__, "weight_decay_includes", includes)
        self.decay_excludes = _patterns(type(self).__name__, "weight_decay_excludes", excludes)
        self.weight_decay = float(weight_decay or 0.0)

    def _decays(self, name):
        if self.decay_includes is not None:
            return any(p.search(name) for p in self.decay_includes)
        return not any(p.search(name) for p in self.decay_excludes or ())

    def _decay_groups(self, params):
        """Param groups: the decayed variables (the optimizer's weight_decay) and the others (0)."""
        from .variables import get_all_variables
        names = {id(v): n for n, v in get_all_variables().items()}
        decayed = [p for p in params if self._decays(names.get(id(p), ""))]
        rest = [p for p in params if not self._decays(names.get(id(p), ""))]
        groups = [g for g in ({"params": decayed, "weight_decay": self.weight_decay},
                              {"params": rest, "weight_decay": 0.0}) if g["params"]]
        return groups or [{"params": params, "weight_decay": self.weight_decay}]


def _patterns(owner, what, patterns):
    """Compiled regexes of weight_decay_includes / excludes (a str or a list of str)."""
    import re
    if patterns is None:
        return None
    if isinstance(patterns, str):
        patterns = [patterns]
    if not isinstance(patterns, (list, tuple)) or not all(isinstance(p, str) for p in patterns):
        raise TypeError(f"{owner}: {what} must be a str or a list of str, got {patterns!r}")
    try:
        return [re.compile(p) for p in patterns]
    except re.error as e:
        raise ValueError(f"{owner}: {what} has an invalid pattern: {e}") from None


class AdamW(_WeightDecayFilter, _Optimizer):
    indexed_slices = True  # (0.x's sgd / momentum / adam update ops)

    def __init__(self, lr_scheduler, beta1=0.9, beta2=0.999, epsilon=1e-8, do_bias_correction=False,
                 loss_scale_factor=None, weight_decay=None, weight_decay_includes=None,
                 weight_decay_excludes=None, grad_clipping=None, train_step_lbn=None, variables=None, loss_scale_policy=None):
        super().__init__(lr_scheduler, grad_clipping, loss_scale_factor, train_step_lbn, variables,
                         loss_scale_policy)
        self._init_decay(weight_decay, weight_decay_includes, weight_decay_excludes)
        self.betas, self.eps, self.bias_correction = (beta1, beta2), epsilon, do_bias_correction

    def _make(self, params):
        from ..optim import AdamW as FlowAdamW
        return FlowAdamW(self._decay_groups(params), lr=self._initial_lr(), betas=self.betas, eps=self.eps,
                         do_bias_correction=self.bias_correction)


class RMSProp(_Optimizer):
    def __init__(self, lr_scheduler, decay_rate=0.99, epsilon=1e-8, centered=False, loss_scale_factor=None,
                 grad_clipping=None, train_step_lbn=None, variables=None, loss_scale_policy=None):
        super().__init__(lr_scheduler, grad_clipping, loss_scale_factor, train_step_lbn, variables,
                         loss_scale_policy)
        self.alpha, self.eps, self.centered = decay_rate, epsilon, centered

    def _make(self, params):
        from ..optim import RMSprop
        return RMSprop(params, lr=self._initial_lr(), alpha=self.alpha, eps=self.eps, centered=self.centered)


class SGDW(_WeightDecayFilter, _Optimizer):
    """0.x's SGD with decoupled weight decay: update_rules.MomentumW on the variables the
    weight-decay filter picks (the others without decay)."""

    indexed_slices = True  # (0.x's momentum update op, with its weight_decay)

    def __init__(self, lr_scheduler, loss_scale_factor=None, momentum=0.9, weight_decay=None,
                 weight_decay_includes=None, weight_decay_excludes=None, grad_clipping=None,
                 train_step_lbn=None, loss_scale_policy=None, variables=None):
        super().__init__(lr_scheduler, grad_clipping, loss_scale_factor, train_step_lbn, variables,
                         loss_scale_policy)
        self._init_decay(weight_decay, weight_decay_includes, weight_decay_excludes)
        self.momentum = float(momentum)

    def _make(self, params):
        from .update_rules import MomentumW
        return MomentumW(self._decay_groups(params), lr=self._initial_lr(), momentum=self.momentum)


class LARS(_WeightDecayFilter, _Optimizer):
    """0.x's layer-wise adaptive rate scaling with momentum: update_rules.Lars."""

    def __init__(self, lr_scheduler, momentum_beta=0.9, epsilon=1e-9, lars_coefficient=0.0001,
                 loss_scale_factor=None, weight_decay=None, weight_decay_includes=None,
                 weight_decay_excludes=None, grad_clipping=None, train_step_lbn=None, loss_scale_policy=None,
                 variables=None):
        super().__init__(lr_scheduler, grad_clipping, loss_scale_factor, train_step_lbn, variables,
                         loss_scale_policy)
        self._init_decay(weight_decay, weight_decay_includes, weight_decay_excludes)
        self.momentum_beta, self.epsilon, self.lars_coefficient = float(momentum_beta), float(epsilon), \
            float(lars_coefficient)

    def _make(self, params):
        from .update_rules import Lars
        return Lars(self._decay_groups(params), lr=self._initial_lr(), momentum_beta=self.momentum_beta,
                    epsilon=self.epsilon, lars_coefficient=self.lars_coefficient)


class LazyAdam(_Optimizer):
    """0.x's LazyAdam (bias-corrected, no weight decay; rows without gradient untouched):
    update_rules.LazyAdam, told the job's train step before each update."""

    def __init__(self, lr_scheduler, beta1=0.9, beta2=0.999, epsilon=1e-8, loss_scale_factor=None,
                 grad_clipping=None, train_step_lbn=None, loss_scale_policy=None, variables=None):
        super().__init__(lr_scheduler, grad_clipping, loss_scale_factor, train_step_lbn, variables,
                         loss_scale_policy)
        self.beta1, self.beta2, self.epsilon = float(beta1), float(beta2), float(epsilon)

    def _make(self, params):
        from .update_rules import LazyAdam as Rule
        return Rule(params, lr=self._initial_lr(), beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon)

    def _set_lr(self, opt, step, rate=None):
        super()._set_lr(opt, step, rate)
        for g in opt.param_groups:
            g["train_step"] = step


class LAMB(_WeightDecayFilter, _Optimizer):
    """0.x's LAMB: flow.optim.LAMB with bias correction and decoupled decay, which is 0.x's
    kernel (the trust ratio ||w|| / ||adam update||, 1 when either is 0, times the rate, on the
    update plus weight_decay * w)."""

    def __init__(self, lr_scheduler, beta1=0.9, beta2=0.999, epsilon=1e-6, loss_scale_factor=None,
                 weight_decay=None, weight_decay_includes=None, weight_decay_excludes=None, grad_clipping=None,
                 train_step_lbn=None, loss_scale_policy=None, variables=None):
        super().__init__(lr_scheduler, grad_clipping, loss_scale_factor, train_step_lbn, variables,
                         loss_scale_policy)
        self._init_decay(weight_decay, weight_decay_includes, weight_decay_excludes)
        self.betas, self.eps = (float(beta1), float(beta2)), float(epsilon)

    def _make(self, params):
        from ..optim import LAMB as FlowLAMB
        return FlowLAMB(self._decay_groups(params), lr=self._initial_lr(), betas=self.betas, eps=self.eps,
                        adam_w_mode=True, do_bias_correction=True)


class CombinedOptimizer(_Optimizer):
    """Several optimizers in one job, each over its own variables (`variables=`; no variable in
    two of them), minimizing one loss: the loss scale (factor or policy) is the combined one's,
    the schedules, clipping and update rules each optimizer's own."""

    def __init__(self, optimizers, loss_scale_factor=None, train_step_lbn=None, loss_scale_policy=None):
        optimizers = list(optimizers)
        if not optimizers or not all(isinstance(o, _Optimizer) for o in optimizers):
            raise TypeError("CombinedOptimizer: optimizers must be a non-empty list of flow.optimizer optimizers")
        for o in optimizers:
            if isinstance(o, CombinedOptimizer):
                raise TypeError("CombinedOptimizer: a CombinedOptimizer cannot hold another one")
            if o.loss_scale_factor is not None or o.loss_scale_policy is not None:
                raise ValueError("CombinedOptimizer: give the loss scale to the CombinedOptimizer, not to "
                                 f"its {type(o).__name__}")
        super().__init__(optimizers[0].lr_scheduler, None, loss_scale_factor, train_step_lbn, None,
                         loss_scale_policy)
        self.optimizers = optimizers

    def _parts(self):
        for o in self.optimizers:  # (the scale acts on the one loss: every part carries it)
            o.loss_scale_factor, o.loss_scale_policy = self.loss_scale_factor, self.loss_scale_policy
        return self.optimizers

    def _check_parts(self, job):
        seen = {}
        for o in self.optimizers:
            for v in o._select(job):
                if id(v) in seen:
                    raise ValueError(f"CombinedOptimizer: a variable is updated by both {type(seen[id(v)]).__name__} "
                                     f"and {type(o).__name__} (give each optimizer its own variables=)")
                seen[id(v)] = o
