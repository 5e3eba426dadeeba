"""ExponentialFamily (as torch.distributions'): the base of the families written in natural
parameters, whose entropy is computed through the Bregman divergence of the log-normaliser."""

from .._grad_mode import enable_grad
from .distribution import Distribution


class ExponentialFamily(Distribution):
    """p(x; theta) = exp(<t(x), theta> - F(theta) + k(x)). Subclasses give _natural_params,
    _log_normalizer(*natural_params) and _mean_carrier_measure (E[k(x)])."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """H = F(theta) - <theta, grad F(theta)> - E[k(x)]."""
        import oneflow
        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        with enable_grad():
            log_norm = self._log_normalizer(*params)
            grads = oneflow.autograd.grad(log_norm.sum(), params, create_graph=True)
        result = result + log_norm
        for p, g in zip(params, grads):
            prod = p * g
            if len(self.event_shape):
                prod = prod.reshape(tuple(self.batch_shape) + (-1,)).sum(-1)
            result = result - prod
        return result
