"""oneflow.distributions: probability distributions with sampling and log-densities, as
torch.distributions (the API OneFlow follows): Distribution, Normal, Bernoulli, Uniform,
Categorical, the closed-form scalar families (Exponential, Laplace, LogNormal, Gumbel, Cauchy,
HalfNormal, Poisson, Geometric, Gamma, Chi2, Beta, Dirichlet, StudentT), OneHotCategorical,
Independent, MultivariateNormal, TransformedDistribution with its transforms and the families
built on it (transformed_families.py), biject_to / transform_to, Binomial, Multinomial,
NegativeBinomial, MixtureSameFamily, VonMises, LowRankMultivariateNormal, GeneralizedPareto, LKJCholesky,
Wishart, ... (more_families*.py), with
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
from . import transforms  # noqa: F401
from .constraint_registry import biject_to, transform_to  # noqa: F401
from .transformed_distribution import TransformedDistribution  # noqa: F401
from .transformed_families import (  # noqa: F401
    ExpRelaxedCategorical, HalfCauchy, InverseGamma, Kumaraswamy, LogisticNormal, LogitRelaxedBernoulli,
    Pareto, RelaxedBernoulli, RelaxedOneHotCategorical, Weibull)
from .transforms import *  # noqa: F401,F403
from .more_families import (  # noqa: F401
    Binomial, ContinuousBernoulli, ExponentialFamily, FisherSnedecor, LowRankMultivariateNormal, MixtureSameFamily,
    Multinomial, NegativeBinomial, OneHotCategoricalStraightThrough, VonMises)
from .more_families3 import GeneralizedPareto, LKJCholesky, Wishart  # noqa: F401

__all__ = ["Distribution", "Normal", "Bernoulli", "Uniform", "Categorical", "Exponential", "Laplace", "LogNormal",
           "Gumbel", "Cauchy", "HalfNormal", "Poisson", "Geometric", "OneHotCategorical", "Independent",
           "MultivariateNormal", "Gamma", "Chi2", "Beta", "Dirichlet", "StudentT", "kl_divergence", "register_kl",
           "constraints"]
__all__ += ["transforms", "biject_to", "transform_to", "TransformedDistribution", "HalfCauchy", "Pareto", "Weibull",
            "Kumaraswamy", "InverseGamma", "LogitRelaxedBernoulli", "RelaxedBernoulli", "ExpRelaxedCategorical",
            "RelaxedOneHotCategorical", "LogisticNormal"]
__all__ += ["Binomial", "ContinuousBernoulli", "ExponentialFamily", "FisherSnedecor", "LowRankMultivariateNormal",
            "MixtureSameFamily", "Multinomial", "NegativeBinomial", "OneHotCategoricalStraightThrough", "VonMises"]
__all__ += ["GeneralizedPareto", "LKJCholesky", "Wishart"]
__all__ += transforms.__all__


def _alias_torch_submodules():
    """PyTorch's one-module-per-family paths (`from torch.distributions.beta import Beta`): here
    the families share files, so each path is a module object holding its names."""
    import sys
    import types
    paths = {
        "beta": ["Beta"], "binomial": ["Binomial"], "cauchy": ["Cauchy"], "chi2": ["Chi2"],
        "continuous_bernoulli": ["ContinuousBernoulli"], "dirichlet": ["Dirichlet"],
        "exp_family": ["ExponentialFamily"], "exponential": ["Exponential"], "fishersnedecor": ["FisherSnedecor"],
        "gamma": ["Gamma"], "generalized_pareto": ["GeneralizedPareto"], "geometric": ["Geometric"],
        "gumbel": ["Gumbel"], "half_cauchy": ["HalfCauchy"],
        "half_normal": ["HalfNormal"], "inverse_gamma": ["InverseGamma"], "kumaraswamy": ["Kumaraswamy"],
        "laplace": ["Laplace"], "lkj_cholesky": ["LKJCholesky"], "log_normal": ["LogNormal"],
        "logistic_normal": ["LogisticNormal"],
        "lowrank_multivariate_normal": ["LowRankMultivariateNormal"], "mixture_same_family": ["MixtureSameFamily"],
        "multinomial": ["Multinomial"], "negative_binomial": ["NegativeBinomial"],
        "one_hot_categorical": ["OneHotCategorical", "OneHotCategoricalStraightThrough"], "pareto": ["Pareto"],
        "poisson": ["Poisson"], "relaxed_bernoulli": ["RelaxedBernoulli", "LogitRelaxedBernoulli"],
        "relaxed_categorical": ["RelaxedOneHotCategorical", "ExpRelaxedCategorical"], "studentT": ["StudentT"],
        "von_mises": ["VonMises"], "weibull": ["Weibull"], "wishart": ["Wishart"],
    }
    package = sys.modules[__name__]
    for path, names in paths.items():
        module = types.ModuleType(f"{__name__}.{path}")
        for name in names:
            setattr(module, name, globals()[name])
        module.__all__ = list(names)
        sys.modules[module.__name__] = module
        setattr(package, path, module)


_alias_torch_submodules()
