"""OneFlow 0.1-0.2's training configuration: ``FunctionConfig.train.primary_lr(lr)``,
``train.model_update_conf({...})``, ``train.loss_scale_factor(f)`` and ``flow.losses.add_loss(loss)``
inside the job (docs/job_functions.md, FunctionConfig's ``train`` row).

Before ``flow.optimizer`` a train job named its loss with ``add_loss`` and the job's configuration
said how to update: ``model_update_conf`` holds one optimizer message (``naive_conf``,
``momentum_conf {beta}``, ``adam_conf {beta1, beta2, epsilon, do_bias_correction}``,
``rmsprop_conf {decay_rate, epsilon, centered}``) and optionally ``learning_rate_decay``,
``warmup_conf`` and ``clip_conf {clip_by_global_norm {clip_norm}}``, with the defaults of
OneFlow's job_conf.proto. Here that configuration builds the matching ``flow.optimizer`` object,
whose ``minimize`` does the rest, so both forms train identically. The values are checked then
(the job's first call, before anything runs): FunctionConfig (job.py) only records them, as
this module depends on the job's machinery and not the other way round.
"""
from . import optimizer as opt

# optimizer message -> (flow.optimizer class, {field: (keyword, default)})
_UPDATES = {
    "naive_conf": (opt.SGD, {}, {"momentum": 0.0}),
    "momentum_conf": (opt.SGD, {"beta": ("momentum", 0.9)}, {}),
    "adam_conf": (opt.Adam, {"beta1": ("beta1", 0.9), "beta2": ("beta2", 0.999), "epsilon": ("epsilon", 1e-8),
                             "do_bias_correction": ("do_bias_correction", False)}, {}),
    "rmsprop_conf": (opt.RMSProp, {"decay_rate": ("decay_rate", 0.99), "epsilon": ("epsilon", 1e-8),
                                   "centered": ("centered", False)}, {}),
}
_EXTRAS = ("learning_rate_decay", "warmup_conf", "clip_conf")


def _check(name, value):
    if name in ("primary_lr", "loss_scale_factor"):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ValueError(f"FunctionConfig.train.{name}: expected a positive number, got {value!r}")
        return float(value)
    if not isinstance(value, dict):
        raise TypeError(f"FunctionConfig.train.model_update_conf: expected a dict such as "
                        f"{{'momentum_conf': {{'beta': 0.9}}}}, got {type(value).__name__}")
    return value


def optimizer_of(conf):
    """The flow.optimizer object a job's train configuration describes (its values checked)."""
    if "primary_lr" not in conf or "model_update_conf" not in conf:
        raise RuntimeError("flow.losses.add_loss: the job's FunctionConfig needs train.primary_lr(lr) and "
                           "train.model_update_conf({...}) (or call flow.optimizer.X(scheduler).minimize(loss))")
    conf = {k: _check(k, v) for k, v in conf.items()}
    cls, kwargs = _parse(conf["model_update_conf"], conf["primary_lr"])
    return cls(loss_scale_factor=conf.get("loss_scale_factor"), **kwargs)


def add_loss(loss):
    """Marks `loss` as the loss of the current train job: it is minimized as the job's
    FunctionConfig.train configuration says."""
    from ._job_state import current_job
    job = current_job()
    if job is None or job.type != "train":
        raise RuntimeError("flow.losses.add_loss must be called inside a job function of type 'train'")
    conf = job.config.function_desc.get("train")
    optimizer_of(conf if isinstance(conf, dict) else {}).minimize(loss)


def _fields(where, msg, known):
    if not isinstance(msg, dict):
        raise TypeError(f"FunctionConfig.train.model_update_conf: {where} must be a dict, got {type(msg).__name__}")
    unknown = sorted(set(msg) - set(known))
    if unknown:
        raise ValueError(f"FunctionConfig.train.model_update_conf: {where} has no field(s) {unknown} "
                         f"(known: {sorted(known)})")
    return msg


def _parse(conf, lr):
    updates = [k for k in conf if k in _UPDATES]
    _fields("model_update_conf", conf, list(_UPDATES) + list(_EXTRAS))
    if len(updates) != 1:
        raise ValueError("FunctionConfig.train.model_update_conf: give exactly one of "
                         f"{sorted(_UPDATES)}, got {updates}")
    cls, fields, fixed = _UPDATES[updates[0]]
    msg = _fields(updates[0], conf[updates[0]], fields)
    kwargs = dict(fixed)
    for field, (kw, default) in fields.items():
        kwargs[kw] = msg.get(field, default)
    kwargs["lr_scheduler"] = _scheduler(conf.get("learning_rate_decay"), lr, _warmup(conf.get("warmup_conf")))
    clip = conf.get("clip_conf")
    if clip is not None:
        by = _fields("clip_conf", clip, ["clip_by_global_norm"]).get("clip_by_global_norm")
        if by is None:
            raise ValueError("FunctionConfig.train.model_update_conf: clip_conf needs clip_by_global_norm")
        kwargs["grad_clipping"] = opt.grad_clipping.by_global_norm(
            _fields("clip_by_global_norm", by, ["clip_norm"])["clip_norm"])
    return cls, kwargs


def _warmup(conf):
    if conf is None:
        return None
    _fields("warmup_conf", conf, ["linear_conf", "constant_conf"])
    if "linear_conf" in conf:
        m = _fields("linear_conf", conf["linear_conf"], ["warmup_batches", "start_multiplier"])
        return opt.warmup.linear(m["warmup_batches"], m.get("start_multiplier", 0.0))
    m = _fields("constant_conf", conf["constant_conf"], ["warmup_batches", "multiplier"])
    return opt.warmup.constant(m["warmup_batches"], m["multiplier"])


def _scheduler(conf, lr, warmup):
    if conf is None:
        return opt.PiecewiseConstantScheduler([], [lr], warmup=warmup)
    kinds = ["piecewise_constant_conf", "piecewise_scaling_conf", "cosine_conf", "exponential_conf",
             "polynomial_conf", "inverse_time_conf", "natural_exp_conf", "linear_cosine_conf"]
    _fields("learning_rate_decay", conf, kinds)
    if len(conf) != 1:
        raise ValueError(f"FunctionConfig.train.model_update_conf: learning_rate_decay holds one of {kinds}")
    (kind, m), = conf.items()
    if kind == "piecewise_constant_conf":
        m = _fields(kind, m, ["boundaries", "values"])
        sched = opt.PiecewiseConstantScheduler(m["boundaries"], m["values"], warmup=warmup)
        sched.base_lr = lr  # (the warmup multiplies the job's primary_lr: 0.x's learning_rate field)
        return sched
    if kind == "piecewise_scaling_conf":  # the message's scales: one per piece (boundaries + 1)
        m = _fields(kind, m, ["boundaries", "scales"])
        boundaries, scales = list(m["boundaries"]), list(m["scales"])
        if len(scales) != len(boundaries) + 1:
            raise ValueError("FunctionConfig.train.model_update_conf: piecewise_scaling_conf needs one more "
                             f"scale than boundaries, got {len(scales)} scales for {len(boundaries)} boundaries")
        sched = opt.PiecewiseScalingScheduler(lr, boundaries, scales[1:], warmup=warmup)
        sched.scales = [float(s) for s in scales]  # (the first piece's scale too, which the class's form fixes at 1)
        return sched
    if kind == "cosine_conf":
        m = _fields(kind, m, ["decay_batches", "alpha"])
        return opt.CosineScheduler(lr, m["decay_batches"], m.get("alpha", 0.0), warmup=warmup)
    decays = {"exponential_conf": opt.ExponentialScheduler, "inverse_time_conf": opt.InverseTimeScheduler,
              "natural_exp_conf": opt.NaturalExpScheduler}
    if kind in decays:
        m = _fields(kind, m, ["decay_batches", "decay_rate", "staircase"])
        return decays[kind](lr, m["decay_batches"], m["decay_rate"], m.get("staircase", False), warmup=warmup)
    if kind == "linear_cosine_conf":
        m = _fields(kind, m, ["decay_batches", "num_periods", "alpha", "beta"])
        return opt.LinearCosineScheduler(lr, m["decay_batches"], m.get("num_periods", 0.5), m.get("alpha", 0.0),
                                         m.get("beta", 0.001), warmup=warmup)
    m = _fields(kind, m, ["decay_batches", "end_learning_rate", "power", "cycle"])
    return opt.PolynomialScheduler(lr, m["decay_batches"], m.get("end_learning_rate", 0.0001),
                                   m.get("power", 1.0), m.get("cycle", False), warmup=warmup)
