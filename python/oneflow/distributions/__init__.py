"""oneflow.distributions: probability distributions with sampling and log-densities, as
torch.distributions (the API OneFlow follows): Distribution, Normal, Bernoulli, Uniform,
Categorical, the closed-form scalar families (Exponential, Laplace, LogNormal, Gumbel, Cauchy,
HalfNormal, Poisson, Geometric, Gamma, Chi2, Beta, Dirichlet, StudentT), OneHotCategorical,
Independent, MultivariateNormal, with
argument validation, and kl_divergence / register_kl."""

from . import constraints  # noqa: F401
from .bernoulli import Bernoulli  # noqa: F401
from .categorical import Categorical  # noqa: F401
from .continuous import Cauchy, Exponential, Gumbel, HalfNormal, Laplace, LogNormal  # noqa: F401
from .discrete import Geometric, OneHotCategorical, Poisson  # noqa: F401
from .distribution import Distribution  # noqa: F401
from .gamma_family import Beta, Chi2, Dirichlet, Gamma, StudentT  # noqa: F401
from .independent import Independent  # noqa: F401
from .kl import kl_divergence, register_kl  # noqa: F401
from .multivariate_normal import MultivariateNormal  # noqa: F401
from .normal import Normal  # noqa: F401
from .uniform import Uniform  # noqa: F401
from . import kl  # noqa: F401

__all__ = ["Distribution", "Normal", "Bernoulli", "Uniform", "Categorical", "Exponential", "Laplace", "LogNormal",
           "Gumbel", "Cauchy", "HalfNormal", "Poisson", "Geometric", "OneHotCategorical", "Independent",
           "MultivariateNormal", "Gamma", "Chi2", "Beta", "Dirichlet", "StudentT", "kl_divergence", "register_kl",
           "constraints"]
