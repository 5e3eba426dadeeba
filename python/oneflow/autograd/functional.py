"""oneflow.autograd.functional: derivatives of whole functions (as torch.autograd.functional):
vjp, jvp, jacobian, hessian, vhp, hvp, built on autograd.grad. `inputs` is a tensor or a tuple
of tensors; `func` returns a tensor or a tuple of tensors; results mirror those structures as
PyTorch's do. jvp and hvp use the double-backward trick (the gradient of a vector-Jacobian
product with respect to its vector), so `func` must be twice differentiable for them.
"""
import oneflow as flow
from .. import _oneflow_internal as _C
from .._grad_mode import enable_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _tuple(x, name, fn):
    is_tuple = isinstance(x, (tuple, list))
    items = tuple(x) if is_tuple else (x,)
    for i, t in enumerate(items):
        if not isinstance(t, _C.Tensor):
            kind = f"The {name} given to {fn} must be either a Tensor or a tuple of Tensors"
            raise TypeError(f"{kind} but the value at index {i} has type {type(t)}.")
    return is_tuple, items


def _prepare(inputs, create_graph):
    """Fresh leaves (or graph-connected copies with create_graph) that require grad."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(True))
    return tuple(out)


def _grad(outputs, inputs, grad_outputs, create_graph, strict, fn, what="outputs"):
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not pairs:
        grads = (None,) * len(inputs)
    else:
        grads = flow.autograd.grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=True,
                                      create_graph=create_graph, allow_unused=True)
    result = []
    for i, (g, x) in enumerate(zip(grads, inputs)):
        if g is None:
            if strict:
                raise RuntimeError(f"The {what} of the user-provided function are independent of input {i}. "
                                   f"This is not allowed in strict mode.")
            g = flow.zeros_like(x)
        result.append(g)
    return tuple(result)


def _finish(items, is_tuple, create_graph):
    items = tuple(t if create_graph else t.detach() for t in items)
    return items if is_tuple else items[0]


def _check_v(v, like, name, fn):
    if v is None:
        if len(like) != 1 or like[0].numel() != 1:
            raise RuntimeError(f"The vector v can only be None if the {name} of the user-provided function is a "
                               f"single Tensor with a single element.")
        return (flow.ones_like(like[0]),)
    _, vs = _tuple(v, "v", fn)
    if len(vs) != len(like):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(like)} but got {len(vs)}.")
    for a, b in zip(vs, like):
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(f"Mismatch in shape: v has shape {tuple(a.shape)} but the {name} has shape "
                               f"{tuple(b.shape)}.")
    return vs


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at inputs."""
    in_tuple, xs = _tuple(inputs, "inputs", "vjp")
    with enable_grad():
        xs = _prepare(xs, create_graph)
        out = func(*xs)
        out_tuple, outs = _tuple(out, "outputs of the user-provided function", "vjp")
        vs = _check_v(v, outs, "output", "vjp")
        g = _grad(outs, xs, vs, create_graph, strict, "vjp")
    return _finish(outs, out_tuple, create_graph), _finish(g, in_tuple, create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product at inputs."""
    in_tuple, xs = _tuple(inputs, "inputs", "jvp")
    vs = _check_v(v, xs, "input", "jvp")
    with enable_grad():
        xs = _prepare(xs, create_graph)
        out = func(*xs)
        out_tuple, outs = _tuple(out, "outputs of the user-provided function", "jvp")
        us = tuple(flow.zeros_like(o).requires_grad_(True) for o in outs)
        g = _grad(outs, xs, us, True, strict, "jvp")  # u^T J, linear in u
        jv = _grad(g, us, vs, create_graph, strict, "jvp", what="outputs")
    return _finish(outs, out_tuple, create_graph), _finish(jv, out_tuple, create_graph)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian d func / d inputs: for one input and one output a tensor of shape
    output.shape + input.shape, else nested tuples [output][input]."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    in_tuple, xs = _tuple(inputs, "inputs", "jacobian")
    with enable_grad():
        xs = _prepare(xs, create_graph)
        out = func(*xs)
        out_tuple, outs = _tuple(out, "outputs of the user-provided function", "jacobian")
        rows = []
        for i, o in enumerate(outs):
            per_input = [[] for _ in xs]
            flat = o.reshape(-1)
            for k in range(flat.numel()):
                if o.requires_grad:
                    g = flow.autograd.grad(flat[k], xs, retain_graph=True, create_graph=create_graph,
                                           allow_unused=True)
                else:
                    g = (None,) * len(xs)
                for j, (gj, x) in enumerate(zip(g, xs)):
                    if gj is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{j}. This is not allowed in strict mode.")
                        gj = flow.zeros_like(x)
                    per_input[j].append(gj)
            block = []
            for j, x in enumerate(xs):
                if per_input[j]:
                    jac = flow.stack(per_input[j], 0).reshape(tuple(o.shape) + tuple(x.shape))
                else:
                    jac = flow.zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype, device=x.device)
                block.append(jac if create_graph else jac.detach())
            rows.append(tuple(block) if in_tuple else block[0])
    return tuple(rows) if out_tuple else rows[0]


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function: shape input.shape + input.shape (nested tuples for
    several inputs)."""
    in_tuple, xs = _tuple(inputs, "inputs", "hessian")

    def gradient(*args):
        out = func(*args)
        _, outs = _tuple(out, "outputs of the user-provided function", "hessian")
        if len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor with a single element")
        g = _grad(outs, args, (flow.ones_like(outs[0]),), True, strict, "hessian")
        return g if in_tuple else g[0]

    return jacobian(gradient, xs if in_tuple else xs[0], create_graph=create_graph, strict=strict)


def _scalar_gradient(name, func, inputs, v, create_graph, strict):
    """Shared start of vhp / hvp: (in_tuple, prepared inputs, vectors, outputs, gradient with
    its graph) for a function with one single-element output. Call under enable_grad."""
    in_tuple, xs = _tuple(inputs, "inputs", name)
    vs = _check_v(v, xs, "input", name)
    xs = _prepare(xs, create_graph)
    _, outs = _tuple(func(*xs), "outputs of the user-provided function", name)
    if len(outs) != 1 or outs[0].numel() != 1:
        raise RuntimeError(f"The function given to {name} should return a single Tensor with a single element")
    g = _grad(outs, xs, (flow.ones_like(outs[0]),), True, strict, name)
    return in_tuple, xs, vs, outs, g


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar function."""
    with enable_grad():
        in_tuple, xs, vs, outs, g = _scalar_gradient("vhp", func, inputs, v, create_graph, strict)
        r = _grad(g, xs, vs, create_graph, strict, "vhp")
    return _finish(outs, False, create_graph), _finish(r, in_tuple, create_graph)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar function (the double-backward trick)."""
    with enable_grad():
        in_tuple, xs, vs, outs, g = _scalar_gradient("hvp", func, inputs, v, create_graph, strict)
        us = tuple(flow.zeros_like(x).requires_grad_(True) for x in xs)
        gu = _grad(g, xs, us, True, strict, "hvp")  # u^T H, linear in u
        r = _grad(gu, us, vs, create_graph, strict, "hvp")
    return _finish(outs, False, create_graph), _finish(r, in_tuple, create_graph)
