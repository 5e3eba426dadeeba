"""oneflow.nn.functional: filled from the op table (entries with `functional: true`)."""
from ._functional_conv import *  # noqa: F401,F403  (convolutions: padding strings)
from ._functional_pool import *  # noqa: F401,F403  (pooling: return_indices, output sizes)
from ._functional_norm import *  # noqa: F401,F403  (normalisation: statistics outputs, compositions)
