"""oneflow.cuda: device queries, seeding and memory statistics, as torch.cuda.

This build has no CUDA backend: the queries answer False / 0 and what needs a device raises
PyTorch's "not compiled with CUDA enabled" error (an AssertionError as in PyTorch that is also a
RuntimeError). Every function first asks the C++ core (`_C._cuda_available()`), so the CUDA
backend answers here by providing the `_C._cuda_*` functions named below.
"""

import contextlib

from .. import _oneflow_internal as _C
from . import amp  # noqa: F401


class CudaNotAvailableError(AssertionError, RuntimeError):
    """Raised by what needs a CUDA device in a build (or on a machine) without one."""


def is_available():
    return _C._cuda_available()


def device_count():
    return _C._cuda_device_count()


def is_initialized():
    return is_available()


def _lazy_init():
    if not is_available():
        raise CudaNotAvailableError(
            "oneflow not compiled with CUDA enabled: this build has no CUDA backend "
            "(oneflow.cuda.is_available() is False)"
        )


def _backend(name):
    """The CUDA backend's C++ function `name` (after the availability check)."""
    _lazy_init()
    fn = getattr(_C, name, None)
    if fn is None:
        raise CudaNotAvailableError(f"oneflow.cuda: {name} is not provided by this build")
    return fn


def _index(device):
    if device is None:
        return None
    if isinstance(device, int):
        return device
    d = _C.device(device) if isinstance(device, str) else device
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return d.index


def current_device():
    return _backend("_cuda_current_device")()


def set_device(device):
    idx = _index(device)
    if idx is not None and idx < 0:
        return  # torch: a negative index is a no-op
    _backend("_cuda_set_device")(idx)


def synchronize(device=None):
    _backend("_cuda_synchronize")(_index(device))


def get_device_name(device=None):
    return _backend("_cuda_device_name")(_index(device))


def get_device_capability(device=None):
    return _backend("_cuda_device_capability")(_index(device))


def get_device_properties(device=None):
    return _backend("_cuda_device_properties")(_index(device))


def is_bf16_supported(including_emulation=True):
    return is_available() and _backend("_cuda_bf16_supported")()


# ---- seeding: without a device PyTorch queues these lazily; there is nothing to seed here.
default_generators = ()


def manual_seed(seed):
    if is_available():
        _backend("_cuda_manual_seed")(int(seed))


def manual_seed_all(seed):
    if is_available():
        _backend("_cuda_manual_seed_all")(int(seed))


def seed():
    if is_available():
        _backend("_cuda_seed")()


def seed_all():
    if is_available():
        _backend("_cuda_seed_all")()


def initial_seed():
    return _backend("_cuda_initial_seed")()


def get_rng_state(device="cuda"):
    return _backend("_cuda_get_rng_state")(_index(device))


def set_rng_state(new_state, device="cuda"):
    _backend("_cuda_set_rng_state")(new_state, _index(device))


def get_rng_state_all():
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    for i, s in enumerate(new_states):
        set_rng_state(s, i)


# ---- memory: nothing is allocated without a device (PyTorch answers 0 / {} too).
def _stat(name, device=None):
    return _backend(name)(_index(device)) if is_available() else 0


def empty_cache():
    if is_available():
        _backend("_cuda_empty_cache")()


def memory_allocated(device=None):
    return _stat("_cuda_memory_allocated", device)


def max_memory_allocated(device=None):
    return _stat("_cuda_max_memory_allocated", device)


def memory_reserved(device=None):
    return _stat("_cuda_memory_reserved", device)


def max_memory_reserved(device=None):
    return _stat("_cuda_max_memory_reserved", device)


memory_cached = memory_reserved
max_memory_cached = max_memory_reserved


def memory_stats(device=None):
    return _backend("_cuda_memory_stats")(_index(device)) if is_available() else {}


def reset_peak_memory_stats(device=None):
    _backend("_cuda_reset_peak_memory_stats")(_index(device))


def reset_max_memory_allocated(device=None):
    reset_peak_memory_stats(device)


def mem_get_info(device=None):
    return _backend("_cuda_mem_get_info")(_index(device))


# ---- device and stream contexts
class device:  # noqa: N801 - torch's name
    """Context manager selecting the current CUDA device (a negative index or None: no-op)."""

    def __init__(self, device):
        self.idx = _index(device) if device is not None else -1
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None and self.idx >= 0:
            self.prev_idx = current_device()
            set_device(self.idx)

    def __exit__(self, *exc):
        if self.prev_idx >= 0:
            set_device(self.prev_idx)
        return False


class device_of(device):  # noqa: N801
    def __init__(self, obj):
        super().__init__(obj.device.index if obj.is_cuda else -1)


class Stream:
    """A CUDA stream (needs the CUDA backend)."""

    def __init__(self, device=None, priority=0, **kwargs):
        self._handle = _backend("_cuda_stream_new")(_index(device), priority)

    def synchronize(self):
        _backend("_cuda_stream_synchronize")(self._handle)

    def wait_stream(self, stream):
        _backend("_cuda_stream_wait_stream")(self._handle, stream._handle)

    def query(self):
        return _backend("_cuda_stream_query")(self._handle)


class Event:
    """A CUDA event (needs the CUDA backend)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self._handle = _backend("_cuda_event_new")(enable_timing, blocking)

    def record(self, stream=None):
        _backend("_cuda_event_record")(self._handle, None if stream is None else stream._handle)

    def synchronize(self):
        _backend("_cuda_event_synchronize")(self._handle)

    def elapsed_time(self, end_event):
        return _backend("_cuda_event_elapsed_time")(self._handle, end_event._handle)

    def query(self):
        return _backend("_cuda_event_query")(self._handle)


def current_stream(device=None):
    return _backend("_cuda_current_stream")(_index(device))


def default_stream(device=None):
    return _backend("_cuda_default_stream")(_index(device))


@contextlib.contextmanager
def stream(stream):
    """Makes `stream` current in the block (None: no-op, as torch)."""
    if stream is None:
        yield
        return
    _lazy_init()
    prev = current_stream()
    _backend("_cuda_set_stream")(stream._handle)
    try:
        yield
    finally:
        _backend("_cuda_set_stream")(prev)
