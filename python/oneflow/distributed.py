"""oneflow.distributed: the checks PyTorch scripts make before using a process group. There is
no process group yet (global tensors and DDP are the next layer), so a script takes its
single-process path: is_available() and is_initialized() are False, as in a PyTorch build
without distributed support."""


def is_available():
    return False


def is_initialized():
    return False
