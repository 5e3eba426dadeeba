"""Quantization-aware training (spec 002, INVENTORY D.8): observers that compute (scale,
zero_point) from a tensor's range, FakeQuantization (quantize + dequantize, gradient passed
straight through) and Quantization (quantize only, integer values as floats).

Formulas (OneFlow's): with b = quantization_bit,
* "google", "symmetric": scale = max(|max|, |min|) / (2^(b-1) - 1), zero_point = 0, integers
  in [-2^(b-1), 2^(b-1) - 1];
* "google", "affine": scale = (max - min) / (2^b - 1), zero_point = -round(min / scale),
  integers in [0, 2^b - 1];
* "cambricon": scale is a power-of-two exponent, shift = floor(log2(max(|max|, |min|))) - (b - 2),
  zero_point = 0, integers as symmetric.
Rounding is to the nearest even (std::nearbyint). Per-channel observers
(per_layer_quantization=False) reduce over all but dimension 0, giving (scale, zero_point) of
shape (input.shape[0],) that broadcast over dimension 0 when quantizing.
"""
from ... import _oneflow_internal as _C
from .module import Module

_FORMULAS = ("google", "cambricon")
_SCHEMES = ("symmetric", "affine")


def _check(formula, bit, scheme):
    if formula not in _FORMULAS:
        raise ValueError(f"quantization_formula must be 'google' or 'cambricon', got {formula!r}")
    if scheme not in _SCHEMES:
        raise ValueError(f"quantization_scheme must be 'symmetric' or 'affine', got {scheme!r}")
    # OneFlow documents [2, 8] but its kernels take any width (its tests use 32: integers in
    # [-2^31, 2^31 - 1], exact in the float64 bound computation); wider would leave int64.
    if isinstance(bit, bool) or not isinstance(bit, int) or not 2 <= bit <= 32:
        raise ValueError(f"quantization_bit must be an int in [2, 32], got {bit!r}")
    if formula == "cambricon" and scheme != "symmetric":
        raise ValueError("the cambricon formula is symmetric only")


def _scale_zero_point(mx, mn, formula, bit, scheme):
    """(scale, zero_point) from per-layer or per-channel max / min tensors."""
    if formula == "cambricon":
        absmax = _C.maximum(mx.abs(), mn.abs())
        return (absmax.log2().floor() - (bit - 2)), _C.zeros_like(mx)
    if scheme == "symmetric":
        absmax = _C.maximum(mx.abs(), mn.abs())
        return absmax / (2 ** (bit - 1) - 1), _C.zeros_like(mx)
    scale = (mx - mn) / (2 ** bit - 1)
    return scale, -(mn / scale).round()


def _bounds(bit, scheme):
    if scheme == "affine":
        return 0.0, float(2 ** bit - 1)
    return float(-(2 ** (bit - 1))), float(2 ** (bit - 1) - 1)


def _per_channel(t, like):
    """scale / zero_point of shape (C,) broadcast over dimension 0 of `like`."""
    if t.numel() == 1:
        return t.reshape(())
    return t.reshape([-1] + [1] * (like.ndim - 1))


def _quantize(x, scale, zero_point, formula, bit, scheme):
    lo, hi = _bounds(bit, scheme)
    if formula == "cambricon":
        scale = _C.pow(2.0, _per_channel(scale, x).trunc())
        return (x / scale).round().clamp(lo, hi), scale, None
    scale = _per_channel(scale, x)
    if scheme == "affine":
        zp = _per_channel(zero_point, x).round()
        return (x / scale + zp).round().clamp(lo, hi), scale, zp
    return (x / scale).round().clamp(lo, hi), scale, None


class MinMaxObserver(Module):
    """(scale, zero_point) of a tensor from its min and max (see the module's docstring)."""

    def __init__(self, quantization_formula="google", quantization_bit=8, quantization_scheme="symmetric",
                 per_layer_quantization=True):
        super().__init__()
        _check(quantization_formula, quantization_bit, quantization_scheme)
        self.quantization_formula, self.quantization_bit = quantization_formula, quantization_bit
        self.quantization_scheme, self.per_layer_quantization = quantization_scheme, per_layer_quantization

    def forward(self, input):  # noqa: A002
        if input.numel() == 0:
            raise RuntimeError("MinMaxObserver: the input is empty")
        if self.per_layer_quantization or input.ndim == 0:
            mx, mn = input.max().reshape(1), input.min().reshape(1)
        else:
            flat = input.reshape(input.shape[0], -1)
            mx, mn = flat.amax(1), flat.amin(1)
        with _no_grad():
            return _scale_zero_point(mx.detach(), mn.detach(), self.quantization_formula, self.quantization_bit,
                                     self.quantization_scheme)

    def extra_repr(self):
        return (f"quantization_formula={self.quantization_formula}, quantization_bit={self.quantization_bit}, "
                f"quantization_scheme={self.quantization_scheme}, per_layer_quantization={self.per_layer_quantization}")


class MovingAverageMinMaxObserver(Module):
    """(scale, zero_point) from moving averages of the min and max, updated in training while
    current_train_step < stop_update_after_iters; the first update takes the batch's values."""

    def __init__(self, training=False, quantization_formula="google", stop_update_after_iters=0,
                 quantization_bit=8, quantization_scheme="symmetric", momentum=0):
        super().__init__()
        _check(quantization_formula, quantization_bit, quantization_scheme)
        if not 0 <= momentum <= 1:
            raise ValueError(f"MovingAverageMinMaxObserver: momentum must be in [0, 1], got {momentum}")
        self.training = training
        self.quantization_formula, self.quantization_bit = quantization_formula, quantization_bit
        self.quantization_scheme, self.stop_update_after_iters = quantization_scheme, stop_update_after_iters
        self.momentum = float(momentum)
        self.register_buffer("moving_max", _C.zeros(1))
        self.register_buffer("moving_min", _C.zeros(1))
        self._initialized = False

    def reset_running_stats(self):
        self.moving_max.fill_(0)
        self.moving_min.fill_(0)
        self._initialized = False

    def _forward_traced(self, input, current_train_step):  # noqa: A002
        """Inside nn.Graph's build() tensors have no values: the same update without Python branches
        on them (OneFlow's kernel rule: zero statistics mean none yet, the batch's are taken)."""
        import oneflow as flow
        with _no_grad():
            if self.training:
                step = current_train_step if hasattr(current_train_step, "reshape") \
                    else flow.tensor([int(current_train_step)])
                update = step.reshape(-1)[:1] < self.stop_update_after_iters
                mx, mn = input.max().reshape(1), input.min().reshape(1)
                if self.quantization_scheme == "symmetric":
                    mx = _C.maximum(mx.abs(), mn.abs())
                    mn = mx.neg()
                first = (self.moving_max == 0) & (self.moving_min == 0)
                m = self.momentum
                new_max = flow.where(first, mx, self.moving_max * m + mx * (1 - m))
                new_min = flow.where(first, mn, self.moving_min * m + mn * (1 - m))
                self.moving_max.copy_(flow.where(update, new_max, self.moving_max))
                self.moving_min.copy_(flow.where(update, new_min, self.moving_min))
            return _scale_zero_point(self.moving_max.clone(), self.moving_min.clone(), self.quantization_formula,
                                     self.quantization_bit, self.quantization_scheme)

    def forward(self, input, current_train_step):  # noqa: A002
        from ..._lazy_state import recording
        if recording() is not None:
            return self._forward_traced(input, current_train_step)
        step = int(current_train_step.reshape(-1)[0].item()) if hasattr(current_train_step, "reshape") \
            else int(current_train_step)
        with _no_grad():
            # statistics loaded with load_state_dict count as initialised (as OneFlow, whose kernel
            # tests moving_max != 0)
            if not self._initialized and bool((self.moving_max != 0).any() or (self.moving_min != 0).any()):
                self._initialized = True
            if self.training and step < self.stop_update_after_iters:
                mx, mn = input.max().reshape(1), input.min().reshape(1)
                if self.quantization_scheme == "symmetric":
                    mx = _C.maximum(mx.abs(), mn.abs())
                    mn = mx.neg()
                if not self._initialized:
                    self.moving_max.copy_(mx)
                    self.moving_min.copy_(mn)
                    self._initialized = True
                else:
                    m = self.momentum
                    self.moving_max.copy_(self.moving_max * m + mx * (1 - m))
                    self.moving_min.copy_(self.moving_min * m + mn * (1 - m))
            elif not self._initialized:
                raise RuntimeError("MovingAverageMinMaxObserver: no statistics yet (call it in training with "
                                   "current_train_step < stop_update_after_iters first)")
            return _scale_zero_point(self.moving_max.clone(), self.moving_min.clone(), self.quantization_formula,
                                     self.quantization_bit, self.quantization_scheme)


class _Quantizer(Module):
    def __init__(self, quantization_formula="google", quantization_bit=8, quantization_scheme="symmetric"):
        super().__init__()
        _check(quantization_formula, quantization_bit, quantization_scheme)
        self.quantization_formula, self.quantization_bit = quantization_formula, quantization_bit
        self.quantization_scheme = quantization_scheme

    def extra_repr(self):
        return (f"quantization_formula={self.quantization_formula}, quantization_bit={self.quantization_bit}, "
                f"quantization_scheme={self.quantization_scheme}")


class FakeQuantization(_Quantizer):
    """Quantizes and dequantizes with (scale, zero_point); the gradient passes straight through
    (the identity), so training sees the quantization error."""

    def forward(self, input, scale, zero_point):  # noqa: A002
        with _no_grad():
            q, s, zp = _quantize(input.detach(), scale, zero_point, self.quantization_formula, self.quantization_bit,
                                 self.quantization_scheme)
            value = (q - zp) * s if zp is not None else q * s
        # straight-through: forward value, gradient of the identity
        return input + (value - input).detach()


class Quantization(_Quantizer):
    """Quantizes with (scale, zero_point): the integers as floats (for storing weights fixed-point)."""

    def forward(self, input, scale, zero_point):  # noqa: A002
        with _no_grad():
            return _quantize(input, scale, zero_point, self.quantization_formula, self.quantization_bit,
                             self.quantization_scheme)[0]


def _no_grad():
    from ..._grad_mode import no_grad
    return no_grad()


__all__ = ["MinMaxObserver", "MovingAverageMinMaxObserver", "FakeQuantization", "Quantization"]
