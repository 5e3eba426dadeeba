"""flow.amp.GradScaler: dynamic loss scaling, as torch.amp.GradScaler.

The loss is multiplied by `scale` before backward so that small float16 gradients do not flush
to zero; `unscale_` divides the gradients back and records whether any is inf/NaN; `step` skips
the optimizer step when one was; `update` backs the scale off after an overflow and grows it
after `growth_interval` clean steps.
"""

import enum
import math
import numbers
import warnings

import numpy as np

from .. import _oneflow_internal as _C
from .._grad_mode import no_grad
from .._export import export_value, ref


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf": None}


class GradScaler:
    """GradScaler(device="cuda", init_scale=2.**16, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True). OneFlow's order without `device` also works
    (GradScaler(init_scale=...)); the default device is "cuda" when CUDA is available, else
    "cpu" (torch disables the scaler instead: see docs/oneflow_differences.md)."""

    def __init__(self, *args, **kwargs):
        # Note [GradScaler's two positional orders]: PyTorch's first parameter is `device`,
        # OneFlow's is `init_scale`. A real number first is OneFlow's init_scale (no device is
        # a number); anything else is PyTorch's device, stored unchecked as PyTorch does
        # (GradScaler(None) / GradScaler(obj) construct there and so here).
        if args and isinstance(args[0], numbers.Real) and not isinstance(args[0], bool):
            args = (None,) + args
        self._setup(*args, **kwargs)

    def _setup(
        self,
        device=None,
        init_scale=2.0**16,
        growth_factor=2.0,
        backoff_factor=0.5,
        growth_interval=2000,
        enabled=True,
    ):
        if device is None:
            device = "cuda" if _C._cuda_available() else "cpu"
        self._device = device
        # The settings are kept as given (PyTorch's getters return them so); a value that is no
        # number fails where it is first used, as in PyTorch.
        self._enabled = enabled
        if isinstance(device, str) and device == "cuda" and enabled and not _C._cuda_available():
            warnings.warn(
                "GradScaler is enabled, but CUDA is not available.  Disabling.", stacklevel=2
            )
            self._enabled = False
        if self._enabled:  # AssertionErrors, as PyTorch's and upstream OneFlow's asserts
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = init_scale
        self._scale = None  # a 1-element float32 tensor, made on first use
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._growth_tracker = None
        self._per_optimizer_states = {}

    def _lazy_init(self):
        self._scale = _C.full((), self._init_scale, dtype=_C.float32)
        self._growth_tracker = self._init_growth_tracker

    def scale(self, outputs):
        """outputs * scale (a tensor or any nesting of lists/tuples of tensors)."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._lazy_init()
        if isinstance(outputs, _C.Tensor):
            return outputs * self._scale.to(outputs.device)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        if hasattr(outputs, "__iter__"):
            return map(self.scale, outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _unscale_grads_(self, optimizer, inv_scale, allow_fp16):
        found_inf = False
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    g = param.grad
                    if g is None:
                        continue
                    if not allow_fp16 and g.dtype == _C.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    g.mul_(inv_scale)
                    if not found_inf and not bool(g.isfinite().all()):
                        found_inf = True
        return found_inf

    def unscale_(self, optimizer):
        """Divides optimizer's gradients by the scale (once per step), recording inf/NaN."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states.setdefault(id(optimizer), _refresh_per_optimizer_state())
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = 1.0 / self._scale.item()
        state["found_inf"] = self._unscale_grads_(optimizer, inv_scale, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step(*args, **kwargs) unless the (unscaled) gradients hold inf/NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states.setdefault(id(optimizer), _refresh_per_optimizer_state())
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        assert state["found_inf"] is not None, "No inf checks were recorded for this optimizer."
        retval = None
        if not state["found_inf"]:
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Backs off the scale after an overflow, grows it after growth_interval clean steps
        (or sets it to new_scale)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                reason = (
                    "new_scale should be a float or a 1-element oneflow.FloatTensor with "
                    "requires_grad=False."
                )
                if not (
                    isinstance(new_scale, _C.Tensor)
                    and new_scale.numel() == 1
                    and new_scale.dtype == _C.float32
                    and not new_scale.requires_grad
                ):
                    raise ValueError(reason)
                self._scale.copy_(new_scale.reshape(()))
        else:
            found = [
                s["found_inf"]
                for s in self._per_optimizer_states.values()
                if s["found_inf"] is not None
            ]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):
                self._scale.fill_(self._scale.item() * self._backoff_factor)
                self._growth_tracker = 0
            else:
                successful = self._growth_tracker + 1
                if successful == self._growth_interval:
                    # Grow unless the float32 scale would overflow (as torch's
                    # _amp_update_scale_).
                    with np.errstate(over="ignore"):
                        grown = float(np.float32(self._scale.item() * self._growth_factor))
                    if math.isfinite(grown):
                        self._scale.fill_(grown)
                    successful = 0
                self._growth_tracker = successful
        self._per_optimizer_states = {}

    def _check_scale_growth_tracker(self, funcname):
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) earlier "
               "in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)

    def get_scale(self):
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = int(new_interval)

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._get_growth_tracker(),
        }

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler."
            )
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker = self._init_growth_tracker

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            assert len(self._per_optimizer_states) == 0, (
                "A GradScaler instance may only be pickled at the beginning of an iteration, or "
                "at the end after scaler.update()."
            )
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)


class StaticGradScaler:
    """OneFlow's fixed loss scale (`nn.Graph.set_grad_scaler(flow.amp.StaticGradScaler(f))`, or
    eagerly as a GradScaler): the loss is multiplied by `scale_factor` before backward and the
    gradients divided by it before each optimizer step; the factor never changes and steps are
    never skipped (a non-finite gradient reaches the optimizer, as upstream)."""

    def __init__(self, scale_factor):
        if not scale_factor > 0.0:
            raise ValueError(f"StaticGradScaler's scale_factor must > 0.0, got {scale_factor}")
        self._scale_factor = float(scale_factor)

    def is_enabled(self):
        return True

    def get_scale(self):
        return self._scale_factor

    def scale(self, outputs):
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        return outputs * self._scale_factor

    def unscale_(self, optimizer):
        inv = 1.0 / self._scale_factor
        from ..autograd import no_grad

        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.grad.mul_(inv)

    def step(self, optimizer, *args, **kwargs):
        self.unscale_(optimizer)
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        if new_scale is not None:
            raise ValueError("StaticGradScaler.update: the scale of a StaticGradScaler is fixed")

    def state_dict(self):
        return {"scale": self._scale_factor}

    def load_state_dict(self, state):
        self._scale_factor = float(state["scale"])


export_value(ref("flow.amp.GradScaler"), "flow.GradScaler")
