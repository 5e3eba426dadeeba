"""oneflow.distributions: probability distributions with sampling and log-densities, as
torch.distributions (the API OneFlow follows), one module per family group:

* distribution.py (Distribution), exp_family.py (ExponentialFamily), constraints.py, utils.py;
* normal.py, uniform.py, bernoulli.py (Bernoulli, ContinuousBernoulli), categorical.py;
* continuous.py: the closed-form scalar families (Exponential, Laplace, LogNormal, Gumbel,
  Cauchy, HalfNormal, VonMises, GeneralizedPareto);
* discrete.py (Poisson, Geometric, OneHotCategorical, OneHotCategoricalStraightThrough),
  binomial_family.py (Binomial, NegativeBinomial, Multinomial);
* gamma_family.py (Gamma, Chi2, Beta, Dirichlet, StudentT, FisherSnedecor);
* multivariate_normal.py (MultivariateNormal, LowRankMultivariateNormal), matrix_families.py
  (LKJCholesky, Wishart), independent.py, mixture.py (MixtureSameFamily);
* transforms.py (public; the base in _transform_base.py, the structural transforms in
  _structural_transforms.py), transformed_distribution.py, transformed_families.py (HalfCauchy,
  Pareto, Weibull, the relaxed families, ...), constraint_registry.py (biject_to / transform_to);
* kl.py: kl_divergence / register_kl and every closed-form pair.
"""

from . import constraints  # noqa: F401
from .bernoulli import Bernoulli, ContinuousBernoulli  # noqa: F401
from .categorical import Categorical  # noqa: F401
from .continuous import (  # noqa: F401
    Cauchy, Exponential, GeneralizedPareto, Gumbel, HalfNormal, Laplace, LogNormal, VonMises)
from .discrete import Geometric, OneHotCategorical, OneHotCategoricalStraightThrough, Poisson  # noqa: F401
from .distribution import Distribution  # noqa: F401
from .exp_family import ExponentialFamily  # noqa: F401
from .gamma_family import Beta, Chi2, Dirichlet, FisherSnedecor, Gamma, StudentT  # noqa: F401
from .binomial_family import Binomial, Multinomial, NegativeBinomial  # noqa: F401
from .matrix_families import LKJCholesky, Wishart  # noqa: F401
from .mixture import MixtureSameFamily  # noqa: F401
from .independent import Independent  # noqa: F401
from .kl import kl_divergence, register_kl  # noqa: F401
from .multivariate_normal import LowRankMultivariateNormal, MultivariateNormal  # noqa: F401
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
