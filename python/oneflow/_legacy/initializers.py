"""The legacy initializers (``flow.constant_initializer(2.5)``, ``flow.truncated_normal(0.1)``...)
and regularizers that ``flow.get_variable`` and ``flow.layers.*`` take.

An initializer here is an object that fills a new variable: ``init(shape, dtype) -> Tensor``.
Fan-based ones (glorot / xavier, variance scaling, kaiming) compute fan_in / fan_out from the
shape and ``data_format`` as OneFlow does: a weight of shape (out, in, *kernel) in "NCHW" (or an
empty data_format), (out, *kernel, in) in "NHWC".
"""
import math


class InitializerConf:
    """A variable initializer (what the spec's functions return)."""

    def __init__(self, kind, fill, **conf):
        self.kind, self._fill, self.conf = kind, fill, conf

    def __call__(self, shape, dtype=None):
        from .. import empty, float32
        t = empty(*shape, dtype=dtype or float32)
        if t.numel():
            self._fill(t)
        return t

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.conf.items())
        return f"{self.kind}({args})"


def constant_initializer(value=0, dtype=None):
    return InitializerConf("constant_initializer", lambda t: t.fill_(value), value=value)


def zeros_initializer(dtype=None):
    return InitializerConf("zeros_initializer", lambda t: t.fill_(0))


def ones_initializer(dtype=None):
    return InitializerConf("ones_initializer", lambda t: t.fill_(1))


def empty_initializer(dtype=None):
    """Leaves the values as allocated (no fill)."""
    return InitializerConf("empty_initializer", lambda t: None)


def random_uniform_initializer(minval=0, maxval=1, dtype=None):
    if minval > maxval:
        raise ValueError(f"random_uniform_initializer: minval {minval} > maxval {maxval}")
    return InitializerConf("random_uniform_initializer", lambda t: t.uniform_(minval, maxval),
                           minval=minval, maxval=maxval)


def random_normal_initializer(mean=0.0, stddev=1.0, seed=None, dtype=None):
    if seed is not None:
        raise NotImplementedError("random_normal_initializer: seed is not supported (as in OneFlow); "
                                  "use flow.manual_seed or get_variable(random_seed=)")
    return InitializerConf("random_normal_initializer", lambda t: t.normal_(mean, stddev), mean=mean, stddev=stddev)


def _truncated(t, mean, std):
    from ..nn import init
    init.trunc_normal_(t, mean=mean, std=std, a=mean - 2 * std, b=mean + 2 * std)


def truncated_normal_initializer(mean=0.0, stddev=1.0):
    """Normal values redrawn when farther than two standard deviations from the mean."""
    return InitializerConf("truncated_normal_initializer", lambda t: _truncated(t, mean, stddev),
                           mean=mean, stddev=stddev)


def truncated_normal(stddev=1.0):
    """Short form used by the layer examples: truncated normal with mean 0."""
    return truncated_normal_initializer(0.0, stddev)


def _fans(shape, data_format):
    if len(shape) < 2:
        n = shape[0] if shape else 1
        return n, n
    if data_format in ("NHWC", "channels_last"):
        receptive = math.prod(shape[1:-1])
        return shape[-1] * receptive, shape[0] * receptive
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def _scaled_fill(scale, mode, distribution, data_format):
    modes = {"fan_in", "fan_out", "fan_avg"}
    if mode not in modes:
        raise ValueError(f"variance scaling: mode must be one of {sorted(modes)}, got {mode!r}")
    dists = {"truncated_normal", "random_normal", "random_uniform"}
    if distribution not in dists:
        raise ValueError(f"variance scaling: distribution must be one of {sorted(dists)}, got {distribution!r}")

    def fill(t):
        fan_in, fan_out = _fans(tuple(t.shape), data_format)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[mode]
        var = scale / max(1.0, n)
        if distribution == "random_uniform":
            limit = math.sqrt(3.0 * var)
            t.uniform_(-limit, limit)
        elif distribution == "random_normal":
            t.normal_(0.0, math.sqrt(var))
        else:
            _truncated(t, 0.0, math.sqrt(var))
    return fill


def variance_scaling_initializer(scale=1.0, mode="fan_in", distribution="truncated_normal", data_format=""):
    return InitializerConf("variance_scaling_initializer", _scaled_fill(scale, mode, distribution, data_format),
                           scale=scale, mode=mode, distribution=distribution)


def glorot_uniform_initializer(data_format=""):
    """U(-l, l) with l = sqrt(6 / (fan_in + fan_out))."""
    return InitializerConf("glorot_uniform_initializer", _scaled_fill(1.0, "fan_avg", "random_uniform", data_format))


def glorot_normal_initializer(data_format=""):
    """N(0, sqrt(2 / (fan_in + fan_out)))."""
    return InitializerConf("glorot_normal_initializer", _scaled_fill(1.0, "fan_avg", "random_normal", data_format))


xavier_uniform_initializer = glorot_uniform_initializer
xavier_normal_initializer = glorot_normal_initializer


def kaiming_initializer(shape, distribution="random_normal", mode="fan_in", nonlinearity="leaky_relu",
                        negative_slope=0.0, data_format="NCHW"):
    """He initialization for a variable of `shape` (returns a normal or uniform initializer)."""
    gains = {"relu": math.sqrt(2.0), "tanh": 5.0 / 3, "sigmoid": 1.0, "linear": 1.0,
             "leaky_relu": math.sqrt(2.0 / (1 + negative_slope ** 2))}
    if nonlinearity not in gains:
        raise ValueError(f"kaiming_initializer: unsupported nonlinearity {nonlinearity!r}")
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"kaiming_initializer: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _fans(tuple(shape), data_format)
    std = gains[nonlinearity] / math.sqrt(fan_in if mode == "fan_in" else fan_out)
    if distribution == "random_normal":
        return random_normal_initializer(0.0, std)
    if distribution == "random_uniform":
        bound = math.sqrt(3.0) * std
        return random_uniform_initializer(-bound, bound)
    raise ValueError(f"kaiming_initializer: distribution must be 'random_normal' or 'random_uniform', got {distribution!r}")


class RegularizerConf:
    """l1 * sign(w) + l2 * w added to a variable's gradient before the update (OneFlow's L1L2)."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1, self.l2 = float(l1), float(l2)

    def apply(self, var):
        if var.grad is None:
            return
        if self.l1:
            var.grad.add_(var.detach().sign(), alpha=self.l1)
        if self.l2:
            var.grad.add_(var.detach(), alpha=self.l2)


class regularizers:  # noqa: N801 - flow.regularizers namespace
    @staticmethod
    def l1_l2(l1=0.01, l2=0.01):
        return RegularizerConf(l1, l2)

    @staticmethod
    def l1(l=0.01):  # noqa: E741 - OneFlow's argument name
        return RegularizerConf(l1=l)

    @staticmethod
    def l2(l=0.01):  # noqa: E741
        return RegularizerConf(l2=l)


INITIALIZERS = ["constant_initializer", "zeros_initializer", "ones_initializer", "empty_initializer",
                "random_uniform_initializer", "random_normal_initializer", "truncated_normal_initializer",
                "truncated_normal", "variance_scaling_initializer", "glorot_uniform_initializer",
                "glorot_normal_initializer", "xavier_uniform_initializer", "xavier_normal_initializer",
                "kaiming_initializer"]
