"""Anomaly detection (as torch.autograd.detect_anomaly / set_detect_anomaly): while enabled,
every backward node's gradients are checked and the first NaN raises a RuntimeError naming the
node ("Function 'MulBackward0' returned nan values in its 0th output.")."""
import warnings

import oneflow as flow  # the assembled namespace, looked up at call time

from .. import _oneflow_internal as _C
from .._argcheck import check_bool
from .._export import export, export_value, ref

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]


def is_anomaly_enabled():
    return _C._is_anomaly_enabled()


def is_anomaly_check_nan_enabled():
    return _C._is_anomaly_check_nan_enabled()


class detect_anomaly:  # noqa: N801 - torch's name
    """Context manager (or decorator) enabling anomaly detection for its block."""

    def __init__(self, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)

    def __enter__(self):
        _C._set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args):
        _C._set_anomaly_enabled(self.prev, self.prev_check_nan)

    def __call__(self, fn):
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:  # noqa: N801 - torch's name
    """Sets anomaly detection on or off at once; as a context manager, restores it on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        _C._set_anomaly_enabled(bool(mode), check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *args):
        _C._set_anomaly_enabled(self.prev, self.prev_check_nan)


@export("flow.set_anomaly_enabled")
def set_anomaly_enabled(enabled, check_nan=True):
    # a switch: PyTorch's parser takes only a bool (a Tensor's truth value was read)
    check_bool(enabled, "set_anomaly_enabled", "enabled", 1)
    check_bool(check_nan, "set_anomaly_enabled", "check_nan", 2)
    flow.autograd.set_detect_anomaly(enabled, check_nan)


export_value(ref("flow.autograd.anomaly_mode.is_anomaly_enabled"), "flow.is_anomaly_enabled")
export_value(ref("flow.autograd.anomaly_mode.is_anomaly_check_nan_enabled"), "flow.is_anomaly_check_nan_enabled")
