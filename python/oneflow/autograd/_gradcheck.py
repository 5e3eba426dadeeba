"""flow.autograd.gradcheck / gradgradcheck (as torch.autograd's): the analytic Jacobian of a
function (rows by autograd.grad) against central finite differences, for every input that
requires grad and every floating output. Use float64 inputs: float32 differences are too
coarse for the default tolerances (a warning says so).
"""
import oneflow as flow
import warnings

from .. import _oneflow_internal as _C

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """A gradient check failed (an analytic and a numerical Jacobian differ)."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _diff_outputs(outputs):
    return [o for o in outputs if isinstance(o, _C.Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex)]


def _numerical(func, inputs, k, eps):
    """d outputs / d inputs[k] by central differences: one column per element of the input, for
    each differentiable output (a list of (out_numel, in_numel) float64 arrays)."""
    import numpy as np
    x = inputs[k]
    base = x.detach().clone()
    flat = base.reshape(-1).cpu().numpy().copy()
    cols = None
    for j in range(flat.size):
        vals = []
        for sign in (1, -1):
            pert = flat.copy()
            pert[j] += sign * eps
            xs = list(inputs)
            xs[k] = flow.tensor(pert.reshape(tuple(base.shape)), dtype=base.dtype, device=base.device)
            with flow.no_grad():
                outs = _diff_outputs(_as_tuple(func(*xs)))
            vals.append([o.detach().double().reshape(-1).cpu().numpy() for o in outs])
        if cols is None:
            cols = [np.zeros((v.size, flat.size)) for v in vals[0]]
        for c, hi, lo in zip(cols, vals[0], vals[1]):
            c[:, j] = (hi - lo) / (2 * eps)
    return cols or []


def _analytic(func, inputs, k):
    import numpy as np
    with flow.enable_grad():
        outs = _diff_outputs(_as_tuple(func(*inputs)))
    x = inputs[k]
    mats = []
    for o in outs:
        m = np.zeros((o.numel(), x.numel()))
        flat = o.reshape(-1)
        for r in range(flat.numel()):
            if not o.requires_grad:
                continue
            (g,) = flow.autograd.grad(flat[r], [x], retain_graph=True, allow_unused=True)
            if g is not None:
                m[r] = g.detach().double().reshape(-1).cpu().numpy()
        mats.append(m)
    return mats


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """True when the gradients of func at inputs agree with finite differences (else raises
    GradcheckError, or returns False with raise_exception=False)."""
    import numpy as np
    inputs = _as_tuple(inputs)
    wanted = [k for k, t in enumerate(inputs) if isinstance(t, _C.Tensor) and t.requires_grad]
    if not wanted:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    for k in wanted:
        if inputs[k].dtype not in (flow.float64, flow.complex128):
            warnings.warn(f"Input #{k} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating "
                          "point or complex.")
    if not check_backward_ad:
        return True
    for k in wanted:
        num = _numerical(func, inputs, k, eps)
        ana = _analytic(func, inputs, k)
        for i, (n, a) in enumerate(zip(num, ana)):
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                msg = (f"Jacobian mismatch for output {i} with respect to input {k},\n"
                       f"numerical:{n}\nanalytical:{a}\n")
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """gradcheck of the gradient: the second derivatives of func at inputs (grad_outputs random,
    requiring grad, when not given) against finite differences of its first derivatives."""
    inputs = _as_tuple(inputs)
    with flow.enable_grad():
        outs = _diff_outputs(_as_tuple(func(*inputs)))
    if grad_outputs is None:
        grad_outputs = tuple(flow.randn(tuple(o.shape), dtype=o.dtype, device=o.device).requires_grad_(True)
                             for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    diff_idx = [k for k, t in enumerate(inputs) if isinstance(t, _C.Tensor) and t.requires_grad]

    def first_grads(*args):
        # the finite differences call this with perturbed copies that do not require grad
        xs = [x if k not in diff_idx or x.requires_grad else x.detach().requires_grad_(True)
              for k, x in enumerate(args[:n_in])]
        gos = args[n_in:]
        with flow.enable_grad():
            ys = _diff_outputs(_as_tuple(func(*xs)))
            pairs = [(y, g) for y, g in zip(ys, gos) if y.requires_grad]
            gs = flow.autograd.grad([y for y, _ in pairs], [xs[k] for k in diff_idx], [g for _, g in pairs],
                                    create_graph=True, allow_unused=True)
        return tuple(g if g is not None else flow.zeros_like(xs[k]) for g, k in zip(gs, diff_idx))

    return gradcheck(first_grads, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
