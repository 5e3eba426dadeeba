"""oneflow.nn.utils: gradient clipping and parameter/vector conversion."""
from .clip_grad import (  # noqa: F401
    clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401
from . import rnn  # noqa: F401  (PackedSequence, pack/pad helpers)
