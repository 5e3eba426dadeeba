"""functional_call (as torch.func.functional_call / torch.nn.utils.stateless): calls a module
with some of its parameters and buffers replaced by given tensors (meta-learning, per-sample
gradients), restoring the module's own ones afterwards, also when the call raises."""
import contextlib



def _owner(module, name):
    parts = name.split(".")
    for p in parts[:-1]:
        module = getattr(module, p)
    return module, parts[-1]


@contextlib.contextmanager
def _reparametrize(module, tensors, tie_weights=True, strict=False):
    own = dict(module.named_parameters())
    own.update(dict(module.named_buffers()))
    if strict:
        missing = sorted(set(own) - set(tensors))
        unexpected = sorted(set(tensors) - set(own))
        if missing or unexpected:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}: missing keys {missing}, "
                               f"unexpected keys {unexpected}")
    saved = []
    try:
        for name, t in tensors.items():
            mod, attr = _owner(module, name)
            kind = "param" if attr in mod._parameters else "buffer" if attr in mod._buffers else None
            if kind is None:
                raise AttributeError(f"{type(mod).__name__} has no parameter or buffer named {attr!r}")
            store = mod._parameters if kind == "param" else mod._buffers
            saved.append((store, attr, store[attr]))
            store[attr] = t
        yield
    finally:
        for store, attr, old in reversed(saved):
            store[attr] = old


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True,
                    strict=False):
    """module(*args, **kwargs) with the named parameters / buffers of the dict (or tuple of
    dicts) in place of its own."""
    if isinstance(parameter_and_buffer_dicts, (list, tuple)):
        merged = {}
        for d in parameter_and_buffer_dicts:
            dup = set(merged) & set(d)
            if dup:
                raise ValueError(f"{sorted(dup)} appeared in multiple dictionaries")
            merged.update(d)
    else:
        merged = dict(parameter_and_buffer_dicts)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize(module, merged, tie_weights, strict):
        return module(*args, **(kwargs or {}))
