"""oneflow.distributions: probability distributions with sampling and log-densities, as
torch.distributions (the API OneFlow follows): Distribution, Normal, Bernoulli, Uniform and
Categorical, with argument validation."""

from . import constraints  # noqa: F401
from .bernoulli import Bernoulli  # noqa: F401
from .categorical import Categorical  # noqa: F401
from .distribution import Distribution  # noqa: F401
from .normal import Normal  # noqa: F401
from .uniform import Uniform  # noqa: F401

__all__ = ["Distribution", "Normal", "Bernoulli", "Uniform", "Categorical", "constraints"]
