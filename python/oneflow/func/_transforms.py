"""torch.func's gradient transforms on oneflow's reverse-mode autograd: grad, grad_and_value,
vjp, jvp, jacrev, jacfwd, hessian, and stack_module_state (for vmap over model ensembles).

Each transform differentiates with respect to aliases of the arguments it is given: a plain
tensor becomes a fresh leaf; a tensor an enclosing transform (or the user) tracks is aliased
through a differentiable view, and the inner derivatives are then built with create_graph, so
transforms nest (hessian = jacfwd(jacrev(f)), grad(grad(f)), ...)."""
import oneflow as flow
import functools

from .._oneflow_internal import Tensor
from . import _pytree


def _argnums_of(argnums, n, name):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise RuntimeError(f"{name}: argnums must be non-empty")
    out = []
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"{name}: argnums must be int or Tuple[int, ...], got: {type(a)}")
        if not -n <= a < n:
            raise RuntimeError(f"{name}: Got argnums={a}, but only {n} positional inputs")
        out.append(a % n)
    if len(set(out)) != len(out):
        raise RuntimeError(f"{name}: argnums must be unique, got {argnums}")
    return out


def _alias(x, name):
    if not isinstance(x, Tensor):
        raise RuntimeError(f"{name}: expected the differentiated arguments to be Tensors, got {type(x)}")
    if not (x.is_floating_point() or x.is_complex()):
        raise RuntimeError(f"{name}: only Tensors of floating point dtype can require gradients, got {x.dtype}")
    if x.requires_grad:
        return x.view_as(x), True
    return x.detach().requires_grad_(True), False


def _prepare(args, argnums, name):
    """(new args, the differentiated leaves per argnum (pytrees), their flat list, outer
    tracking: whether any of them is tracked outside)."""
    args = list(args)
    trees, flat, outer = [], [], False
    for a in argnums:
        leaves, spec = _pytree.flatten(args[a])
        new = []
        for x in leaves:
            y, tracked = _alias(x, name)
            outer = outer or tracked
            new.append(y)
        flat += new
        trees.append((new, spec))
        args[a] = _pytree.unflatten(new, spec)
    return args, trees, flat, outer and flow.is_grad_enabled()


def _split_aux(out, has_aux, name):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{name}(f, ...)(*args): output of function f should be a tuple: (output, aux) if "
                           f"has_aux is True")
    return out


def _detach_tree(t, keep):
    if keep:
        return t
    leaves, spec = _pytree.flatten(t)
    return _pytree.unflatten([x.detach() if isinstance(x, Tensor) else x for x in leaves], spec)


def _regroup(flat_grads, trees, argnums):
    out, k = [], 0
    for new, spec in trees:
        out.append(_pytree.unflatten(list(flat_grads[k:k + len(new)]), spec))
        k += len(new)
    return out[0] if isinstance(argnums, int) else tuple(out)


def grad_and_value(func, argnums=0, has_aux=False):
    """(gradient of func's scalar output with respect to the arguments argnums, the output)
    (((gradient, (output, aux)) with has_aux)."""
    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        nums = _argnums_of(argnums, len(args), "grad_and_value")
        with flow.enable_grad():
            new_args, trees, flat, outer = _prepare(args, nums, "grad_and_value")
            out, aux = _split_aux(func(*new_args, **kwargs), has_aux, "grad_and_value")
            if not isinstance(out, Tensor) or out.numel() != 1:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                                   f"{type(out).__name__ if not isinstance(out, Tensor) else tuple(out.shape)}")
            if not out.requires_grad:  # output independent of the inputs: zero gradients
                gs = [flow.zeros_like(x) for x in flat]
            else:
                gs = flow.autograd.grad(out, flat, create_graph=outer, allow_unused=True)
                gs = [flow.zeros_like(x) if g is None else g for g, x in zip(gs, flat)]
        g = _detach_tree(_regroup(gs, trees, argnums), outer)
        value = out if outer else out.detach()
        if has_aux:
            return g, (value, _detach_tree(aux, outer))
        return g, value

    return wrapped


def grad(func, argnums=0, has_aux=False):
    """The gradient of func's scalar output with respect to the arguments argnums ((gradient,
    aux) with has_aux), as torch.func.grad."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapped


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn): vjp_fn(cotangents) is the tuple of the products of the
    cotangents (shaped as the output) with func's Jacobian, one per primal."""
    with flow.enable_grad():
        new_args, trees, flat, outer = _prepare(primals, range(len(primals)), "vjp")
        out, aux = _split_aux(func(*new_args), has_aux, "vjp")
    out_leaves, out_spec = _pytree.flatten(out)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        ct_leaves, _ = _pytree.flatten(cotangents)
        if len(ct_leaves) != len(out_leaves):
            raise RuntimeError("vjp_fn: Expected cotangents to have the same structure as the primal output")
        for c, o in zip(ct_leaves, out_leaves):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"vjp_fn: Mismatch in shape: the cotangent has shape {tuple(c.shape)} and the "
                                   f"output has shape {tuple(o.shape)}")
        cg = outer if create_graph is None else create_graph
        with flow.enable_grad():
            pairs = [(o, c) for o, c in zip(out_leaves, ct_leaves) if o.requires_grad]
            if pairs:
                gs = flow.autograd.grad([p[0] for p in pairs], flat, [p[1] for p in pairs],
                                        retain_graph=retain_graph, create_graph=cg, allow_unused=True)
            else:
                gs = [None] * len(flat)
        gs = [flow.zeros_like(x) if g is None else g for g, x in zip(gs, flat)]
        res = _regroup(gs, trees, tuple(range(len(trees))))
        return _detach_tree(res, cg)

    value = _detach_tree(out, outer)
    return (value, vjp_fn, _detach_tree(aux, outer)) if has_aux else (value, vjp_fn)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), the product of func's Jacobian with tangents), by two reverse passes
    (the transpose of the vjp), as torch.func.jvp's results."""
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be tuples")
    if len(primals) != len(tangents):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same length")
    pl, _ = _pytree.flatten(primals)
    tl, _ = _pytree.flatten(tangents)
    for p, t in zip(pl, tl):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"jvp(f, primals, tangents): Expected tangents to have the same shape as primals, "
                               f"got {tuple(t.shape)} and {tuple(p.shape)}")
    with flow.enable_grad():
        new_args, trees, flat, outer = _prepare(primals, range(len(primals)), "jvp")
        out, aux = _split_aux(func(*new_args), has_aux, "jvp")
        out_leaves, out_spec = _pytree.flatten(out)
        # u -> J^T u is linear in u; its derivative with respect to u, applied to the tangents, is J t.
        us = [flow.zeros_like(o).requires_grad_(True) for o in out_leaves]
        live = [(o, u) for o, u in zip(out_leaves, us) if o.requires_grad]
        if live:
            gs = flow.autograd.grad([o for o, _ in live], flat, [u for _, u in live], create_graph=True,
                                    allow_unused=True)
            pairs = [(g, t) for g, t in zip(gs, tl) if g is not None and g.requires_grad]
        else:
            pairs = []
        if pairs:
            jt = flow.autograd.grad([g for g, _ in pairs], us, [t for _, t in pairs], create_graph=outer,
                                    allow_unused=True)
        else:
            jt = [None] * len(us)
    jt = [flow.zeros_like(o) if j is None else j for j, o in zip(jt, out_leaves)]
    res = (_detach_tree(out, outer), _detach_tree(_pytree.unflatten(jt, out_spec), outer))
    return res + (_detach_tree(aux, outer),) if has_aux else res


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is the Jacobian of func at primals applied to
    tangents, as torch.func.linearize. func runs once; the vjp graph it leaves (linear in the
    cotangents u) is kept, and each jvp_fn call differentiates it with respect to u (one reverse
    pass, no re-evaluation of func)."""
    pl, _ = _pytree.flatten(primals)
    with flow.enable_grad():
        new_args, trees, flat, outer = _prepare(primals, range(len(primals)), "linearize")
        out = func(*new_args)
        out_leaves, out_spec = _pytree.flatten(out)
        us = [flow.zeros_like(o).requires_grad_(True) for o in out_leaves]
        live = [(o, u) for o, u in zip(out_leaves, us) if o.requires_grad]
        gs = (flow.autograd.grad([o for o, _ in live], flat, [u for _, u in live], create_graph=True,
                                 allow_unused=True) if live else [None] * len(flat))

    def jvp_fn(*tangents):
        tl, _ = _pytree.flatten(tangents)
        if len(tl) != len(pl):
            raise RuntimeError(f"linearize: expected {len(pl)} tangents, got {len(tl)}")
        for p, t in zip(pl, tl):
            if tuple(p.shape) != tuple(t.shape) or p.dtype != t.dtype:
                raise RuntimeError(f"linearize: the tangent of shape {tuple(t.shape)} and dtype {t.dtype} does not "
                                   f"match its primal's {tuple(p.shape)}, {p.dtype}")
        pairs = [(g, t) for g, t in zip(gs, tl) if g is not None and g.requires_grad]
        with flow.enable_grad():
            jt = (flow.autograd.grad([g for g, _ in pairs], us, [t for _, t in pairs], retain_graph=True,
                                     allow_unused=True) if pairs else [None] * len(us))
        jt = [flow.zeros_like(o) if j is None else j.detach() for j, o in zip(jt, out_leaves)]
        return _pytree.unflatten(jt, out_spec)

    return _detach_tree(out, outer), jvp_fn


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _name="jacrev"):
    """The Jacobian of func's outputs with respect to the arguments argnums: for an output of
    shape O and an input of shape I, a tensor of shape O + I; by reverse mode, a backward pass per
    output element."""
    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        nums = _argnums_of(argnums, len(args), _name)
        with flow.enable_grad():
            new_args, trees, flat, outer = _prepare(args, nums, _name)
            out, aux = _split_aux(func(*new_args, **kwargs), has_aux, _name)
            out_leaves, out_spec = _pytree.flatten(out)
            per_output = []
            for o in out_leaves:
                if not isinstance(o, Tensor):
                    raise RuntimeError(f"{_name}(f, ...)(*args): expected f(*args) to return only tensors, got "
                                       f"{type(o)}")
                rows = [[] for _ in flat]
                of = o.reshape(-1)
                for i in range(of.numel()):
                    if o.requires_grad:
                        gs = flow.autograd.grad(of[i], flat, retain_graph=True, create_graph=outer,
                                                allow_unused=True)
                    else:
                        gs = [None] * len(flat)
                    for k, (g, x) in enumerate(zip(gs, flat)):
                        rows[k].append(flow.zeros_like(x) if g is None else g)
                jac = []
                for k, x in enumerate(flat):
                    j = flow.stack(rows[k]) if rows[k] else flow.zeros(0, *x.shape, dtype=x.dtype, device=x.device)
                    jac.append(j.reshape(*o.shape, *x.shape))
                per_output.append(_regroup(jac, trees, argnums))
        result = _detach_tree(_pytree.unflatten(per_output, out_spec), outer)
        return (result, _detach_tree(aux, outer)) if has_aux else result

    return wrapped


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """func's Jacobian as jacrev's (PyTorch computes it in forward mode: the same numbers)."""
    return jacrev(func, argnums, has_aux=has_aux, _name="jacfwd")


def hessian(func, argnums=0):
    """The Jacobian of the Jacobian: for a scalar function of an input of shape I, shape I + I."""
    return jacfwd(jacrev(func, argnums), argnums)


def stack_module_state(models):
    """(params, buffers): each name's tensors of the models stacked along a new leading dim (for
    vmap over an ensemble with functional_call); the stacked parameters are new leaves."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    kinds = {type(m) for m in models}
    if len(kinds) != 1:
        raise RuntimeError(f"stack_module_state: Expected all models to be of the same class, got {kinds}")
    params = {n: flow.stack([dict(m.named_parameters())[n].detach() for m in models]).requires_grad_(
        p.requires_grad) for n, p in models[0].named_parameters()}
    buffers = {n: flow.stack([dict(m.named_buffers())[n] for m in models]) for n, _ in models[0].named_buffers()}
    return params, buffers
