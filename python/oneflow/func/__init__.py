"""oneflow.func (torch.func): functional_call, vmap, and the gradient transforms grad,
grad_and_value, vjp, jvp, jacrev, jacfwd, hessian; stack_module_state."""
from ..nn.utils.stateless import functional_call  # noqa: F401
from ._transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, stack_module_state, vjp  # noqa: F401
from ._vmap import vmap  # noqa: F401

__all__ = ["functional_call", "vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
           "stack_module_state"]
