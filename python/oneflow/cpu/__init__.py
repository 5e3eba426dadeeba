"""oneflow.cpu: the CPU device's counterparts of oneflow.cuda (as torch.cpu)."""

import contextlib

from .. import _oneflow_internal as _C
from . import amp  # noqa: F401


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def set_device(device):
    pass


def synchronize(device=None):
    """CPU ops run synchronously: nothing to wait for."""


@contextlib.contextmanager
def stream(stream):
    yield


def _get_num_threads():
    return _C.get_num_threads()
