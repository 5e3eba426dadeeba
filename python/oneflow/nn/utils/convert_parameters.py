"""parameters_to_vector / vector_to_parameters."""
from ... import _oneflow_internal as _C


def _check_param_device(param, old_param_device):
    """The parameter's CUDA index (-1 on the CPU); all parameters must be on one device."""
    device = param.device.index if param.device.type == "cuda" else -1
    if old_param_device is None:
        return device
    if device != old_param_device:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return old_param_device


def parameters_to_vector(parameters):
    """One 1-D tensor holding every parameter's values, flattened and concatenated."""
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return _C.cat(vec)


def vector_to_parameters(vec, parameters):
    """Makes each parameter's data the matching slice of the 1-D `vec` (sharing its memory)."""
    if not isinstance(vec, _C.Tensor):
        raise TypeError(f"expected oneflow.Tensor, but got: {type(vec).__name__}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param
