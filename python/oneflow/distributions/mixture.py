"""MixtureSameFamily (as torch.distributions'): a Categorical mixture of the batch of one
component distribution, with its log_prob (log-sum-exp over the components), moments, cdf and
samples (draw a component, then gather its draw)."""
from .._grad_mode import no_grad
from .._size import Size
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .utils import logsumexp


class MixtureSameFamily(Distribution):
    """A mixture over the rightmost batch dim of component_distribution, weighted by the
    Categorical mixture_distribution."""

    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError("The Mixture distribution needs to be an instance of torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of torch.distributions.Distribution")
        mdbs = tuple(mixture_distribution.batch_shape)
        cdbs = tuple(component_distribution.batch_shape)[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                                 f"`component_distribution.batch_shape`({cdbs})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km is not None and kc is not None and km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(Size(cdbs), component_distribution.event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(
            Size(tuple(batch_shape) + (self._num_component,)))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return self._component_distribution.support

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _weights(self):
        p = self._mixture_distribution.probs
        return p.reshape(tuple(p.shape) + (1,) * self._event_ndims)

    @property
    def mean(self):
        return (self._weights() * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        w = self._weights()
        d = -1 - self._event_ndims
        mean_cond_var = (w * self._component_distribution.variance).sum(d)
        var_cond_mean = (w * (self._component_distribution.mean - self.mean.unsqueeze(d)).pow(2)).sum(d)
        return mean_cond_var + var_cond_mean

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def cdf(self, x):
        x = self._pad(x)
        cdf_x = self._component_distribution.cdf(x)
        return (cdf_x * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self._component_distribution.log_prob(self._pad(x))
        log_mix = self._mixture_distribution.logits
        log_mix = log_mix - logsumexp(log_mix, -1, keepdim=True)
        return logsumexp(log_prob_x + log_mix, -1)

    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        with no_grad():
            mix = self._mixture_distribution.sample(sample_shape)  # S + B
            comp = self._component_distribution.sample(sample_shape)  # S + B + (K,) + E
            es = tuple(self.event_shape)
            idx = mix.reshape(tuple(mix.shape) + (1,) + (1,) * len(es))
            idx = idx.expand(tuple(mix.shape) + (1,) + es).long()
            return comp.gather(len(sample_shape) + len(self.batch_shape), idx).squeeze(
                len(sample_shape) + len(self.batch_shape))

    def __repr__(self):
        return (f"MixtureSameFamily(\n  {self._mixture_distribution!r},\n"
                f"  {self._component_distribution!r})")
