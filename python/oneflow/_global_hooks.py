"""Note [Global hooks]: the layers below the global one (tensor factories, autograd, nn.Parameter,
nn.functional, optimizers, checkpoints) meet global tensors, but may not import the global layer,
which sits above them (tools/import_graph.py LAYERS) and itself builds on them. They ask here.
python/oneflow/_global/__init__.py registers its functions under the names below when it is
imported (oneflow/__init__.py imports it, so before any call can need one); `use(name)` hands the
registered function back. A kind query (`is_global(x)`) needs nothing of the global layer: the
class marker says it."""

_HOOKS = {}

# The names the global layer registers (one place to read what the lower layers need of it).
NAMES = ("GlobalTensor", "grad_sbp", "from_logical", "local_to_global", "broadcast", "run",
         "parameter_of", "contains_global", "save", "load", "job_initialized")


def is_global(x):
    """Whether x is a global tensor (a GlobalTensor or a GlobalParameter): the class's marker."""
    return getattr(type(x), "_global_tensor_", False)


def placed_like(t):
    """The factory keywords of a constant an op's Python function makes beside tensor `t` (a pad's
    zeros, a base grid, an identity, an initial state): `t`'s device; for a global `t` its
    placement, every mesh axis broadcast -- the constant whole on every rank, which the op's SBP
    rule slices to the layout it needs (a local one beside a global tensor is the mixing
    RuntimeError of Note [Global arguments])."""
    if is_global(t):
        return {"placement": t.placement, "sbp": (use("broadcast"),) * len(t.sbp)}
    return {"device": t.device}


def provide(**hooks):
    """Registers the global layer's functions (each name once: a second registration is a bug)."""
    for name, fn in hooks.items():
        if name not in NAMES:
            raise ValueError(f"global hooks: {name!r} is not one of {NAMES}")
        if name in _HOOKS:
            raise RuntimeError(f"global hooks: {name!r} is registered twice")
        _HOOKS[name] = fn


def use(name):
    """The global layer's function registered as `name`."""
    try:
        return _HOOKS[name]
    except KeyError:
        raise RuntimeError(f"global hooks: {name!r} is not registered (oneflow._global is not imported: "
                           f"import oneflow first)") from None
