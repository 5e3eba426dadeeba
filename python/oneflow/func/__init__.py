"""oneflow.func (torch.func): functional_call, vmap, and the gradient transforms grad,
grad_and_value, vjp, jvp, linearize, jacrev, jacfwd, hessian; stack_module_state."""
from ..nn.utils.stateless import functional_call  # noqa: F401
from ._transforms import (  # noqa: F401
    grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, stack_module_state, vjp,
)
from ._vmap import vmap  # noqa: F401

__all__ = ["functional_call", "vmap", "grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd",
           "hessian", "stack_module_state"]
