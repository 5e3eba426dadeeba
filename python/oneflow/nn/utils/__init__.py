"""oneflow.nn.utils: gradient clipping, parameter/vector conversion, weight / spectral norm,
batch-norm fusion (fusion), functional_call (stateless), skip_init."""
from .clip_grad import (  # noqa: F401
    clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401
from . import rnn  # noqa: F401  (PackedSequence, pack/pad helpers)
from . import fusion, parametrizations, parametrize, stateless  # noqa: F401,E402
from .fusion import (  # noqa: F401,E402
    fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights,
)
from . import prune  # noqa: F401


def skip_init(module_cls, *args, **kwargs):
    """The module built without caring about its initial values (PyTorch builds it on the meta
    device and allocates uninitialised memory; here it is built normally, whose values are as
    valid as uninitialised ones)."""
    if "device" not in module_cls.__init__.__code__.co_varnames:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    return module_cls(*args, **kwargs)
