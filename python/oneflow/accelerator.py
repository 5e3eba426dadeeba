"""oneflow.accelerator (torch.accelerator): the device-agnostic calls recent PyTorch examples
use to pick and drive the accelerator. Here the accelerator is CUDA when the build has it and a
GPU is present; otherwise there is none (current_accelerator() is None) and the calls that need
one raise as PyTorch's do."""


def _cuda():
    import oneflow
    return oneflow.cuda


def is_available():
    return _cuda().is_available()


def current_accelerator(check_available=False):
    import oneflow
    return oneflow.device("cuda") if is_available() else None


def device_count():
    return _cuda().device_count() if is_available() else 0


def _need():
    if not is_available():
        raise RuntimeError("accelerator: no accelerator is available (this oneflow build or machine "
                           "has no CUDA device)")


def current_device_index():
    _need()
    return _cuda().current_device()


current_device_idx = current_device_index


def set_device_index(device):
    _need()
    _cuda().set_device(device)


set_device_idx = set_device_index


def synchronize(device=None):
    _need()
    _cuda().synchronize(device)


def current_stream(device=None):
    _need()
    return _cuda().current_stream(device)


def empty_cache():
    if is_available():
        _cuda().empty_cache()


def memory_allocated(device_index=None):
    _need()
    return _cuda().memory_allocated(device_index)


def max_memory_allocated(device_index=None):
    _need()
    return _cuda().max_memory_allocated(device_index)


def memory_reserved(device_index=None):
    _need()
    return _cuda().memory_reserved(device_index)


def reset_peak_memory_stats(device_index=None):
    _need()
    _cuda().reset_peak_memory_stats(device_index)
