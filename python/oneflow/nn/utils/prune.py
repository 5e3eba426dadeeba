"""Pruning (as torch.nn.utils.prune): zero out part of a parameter through a fixed mask.

Pruning the parameter `name` of a module reparametrises it: the original values move to the
Parameter `<name>_orig`, the mask to the buffer `<name>_mask`, and `module.<name>` becomes a
plain attribute holding `<name>_orig * <name>_mask`, recomputed by a forward pre-hook (the
pruning method object itself) before every forward. Gradients therefore reach `<name>_orig`,
masked. `remove` makes the pruning permanent: `<name>` is a Parameter again, holding the pruned
values.

Pruning the same parameter again combines the methods in a PruningContainer: each new method
only sees the entries (unstructured) or channels (structured) that are still unpruned, so an
`amount` given as a fraction is a fraction of what is left.

Masks are constants, so they are computed without recording autograd history.
"""
import oneflow as flow
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ..._grad_mode import no_grad

__all__ = [
    "BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
    "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
    "l1_unstructured", "random_structured", "ln_structured", "global_unstructured",
    "custom_from_mask", "remove", "is_pruned",
]


# ---------------------------------------------------------------------------------- helpers

def _validate_pruning_amount_init(amount):
    """An int amount is a count (>= 0), a float one a fraction in [0, 1]. bool counts as int, as
    in PyTorch (numbers.Integral)."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if isinstance(amount, numbers.Integral):
        bad = amount < 0
    else:
        bad = not 0.0 <= float(amount) <= 1.0
    if bad:
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _validate_pruning_amount(amount, tensor_size):
    """A count cannot exceed the number of units that can be pruned (only known at mask time)."""
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to "
                         f"prune={tensor_size}")


def _compute_nparams_toprune(amount, tensor_size):
    """How many units to prune; a fraction is rounded with Python's round (half to even), the
    rounding PyTorch uses, so both prune the same count."""
    _validate_pruning_amount(amount, tensor_size)
    if isinstance(amount, numbers.Integral):
        return int(amount)
    return round(amount * tensor_size)


def _validate_structured_pruning(t):
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {shape} with {len(shape)} dims")


def _normalize_dim(dim, ndim):
    if dim < 0:
        dim += ndim
    if not 0 <= dim < ndim:
        raise IndexError(f"Index is out of bounds for tensor with dimensions {ndim}")
    return dim


def _channel_mask(t, dim, keep):
    """A mask shaped like t that is keep[i] on every slice i along `dim` (keep: 1-D, t.dtype);
    broadcasting a channel vector is the structured mask without any indexed writes."""
    shape = [1] * t.dim()
    shape[dim] = -1
    return keep.view(shape).expand(t.shape).contiguous()


def _find_pruning_hook(module, name):
    """(hook key, method) of the pruning hook on `name`, or (None, None)."""
    found = [(k, h) for k, h in module._forward_pre_hooks.items()
             if isinstance(h, BasePruningMethod) and h._tensor_name == name]
    if len(found) > 1:  # only reachable by registering hooks by hand
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of "
                             f"module {module}. Use a PruningContainer.")
    return found[0] if found else (None, None)


# ---------------------------------------------------------------------------------- methods

class BasePruningMethod(ABC):
    """A way of computing a pruning mask. Subclasses define `compute_mask(t, default_mask)` and
    the class attribute `PRUNING_TYPE` ("unstructured", "structured" (with a `dim` attribute)
    or "global"), which tells PruningContainer how to restrict a later method to what is left.
    Once applied, the instance is the module's forward pre-hook and `_tensor_name` the name of
    the parameter it prunes."""

    _tensor_name = None
    PRUNING_TYPE: str

    def __call__(self, module, inputs):
        # The forward pre-hook: the pruned value, recomputed from the current _orig (which the
        # optimiser may have changed since the last forward).
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask (shaped like t) to apply on top of `default_mask`, from the importance
        scores `t`."""

    def apply_mask(self, module):
        """`<name>_orig * <name>_mask` of the module (differentiable in `<name>_orig`)."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prunes `module.<name>` with `cls(*args, **kwargs)` (combined with an earlier pruning of
        the same parameter, if any) and returns the method now registered as the hook.
        `importance_scores` (shaped like the parameter) replace its values when choosing what to
        prune."""
        old_key, old_method = _find_pruning_hook(module, name)
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if old_method is None:
            final = method
        elif isinstance(old_method, PruningContainer):
            old_method.add_pruning_method(method)
            final = old_method
        else:
            final = PruningContainer(old_method)
            final.add_pruning_method(method)

        try:
            orig = getattr(module, name)
            if importance_scores is not None:
                if tuple(importance_scores.shape) != tuple(orig.shape):
                    raise AssertionError(
                        f"importance_scores should have the same shape as parameter {name} of "
                        f"{module}, got {importance_scores.shape} vs {orig.shape}")
            else:
                importance_scores = orig
        except BaseException:
            _undo_add(old_method, final)
            raise

        first = not isinstance(final, PruningContainer)
        if first:
            # register_parameter refuses a non-Parameter (e.g. a buffer) before anything moved.
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = flow.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            with no_grad():
                mask = final.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, final.apply_mask(module))
        except BaseException:
            # Leave the module as it was: a failed first pruning (e.g. amount too large) gives
            # the parameter back under its name; a failed later one keeps the earlier pruning
            # and its hook (PyTorch drops that hook; keeping it is the consistent state).
            if first:
                module.__dict__.pop(name, None)
                module._buffers.pop(name + "_mask", None)
                module.register_parameter(name, module._parameters.pop(name + "_orig"))
            else:
                _undo_add(old_method, final)
            raise
        if old_key is not None:
            del module._forward_pre_hooks[old_key]
        module.register_forward_pre_hook(final)
        return final

    def prune(self, t, default_mask=None, importance_scores=None):
        """`t` times the mask this method computes (from `importance_scores`, default `t`), on
        top of `default_mask` (default all ones); the module is not touched."""
        if importance_scores is not None:
            if tuple(importance_scores.shape) != tuple(t.shape):
                raise AssertionError("importance_scores should have the same shape as tensor t")
        else:
            importance_scores = t
        if default_mask is None:
            default_mask = flow.ones_like(t)
        with no_grad():
            mask = self.compute_mask(importance_scores, default_mask=default_mask)
        return t * mask

    def remove(self, module):
        """Makes the pruning permanent: `<name>` becomes the Parameter `<name>_orig` (the same
        object, so optimisers holding it stay valid) holding the pruned values; `<name>_orig`,
        `<name>_mask` go. The caller removes the hook (see the function `remove`)."""
        name = self._tensor_name
        if name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be "
                                 "removed")
        weight = self.apply_mask(module)
        if name in module.__dict__:
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        orig.data = weight.data
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


def _undo_add(old_method, final):
    """Takes back the method that apply() appended to an existing PruningContainer."""
    if old_method is not None and final is old_method:
        old_method._pruning_methods = old_method._pruning_methods[:-1]


class PruningContainer(BasePruningMethod):
    """The pruning methods applied in turn to one parameter; its mask is the last method's,
    computed on what the earlier ones left. PruningContainer(m1, m2, ...) takes the parameter
    name of m1."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if args and isinstance(args[0], BasePruningMethod):
            self._tensor_name = args[0]._tensor_name
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method):
        """Appends a method (None is ignored); it must prune the same parameter."""
        if method is None:
            return
        if not isinstance(method, BasePruningMethod):
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """`default_mask` (the earlier methods' combined mask) with the last method's mask
        written over the part still unpruned: the surviving entries (unstructured), the
        channels along its `dim` that keep a nonzero (structured), or everything (global)."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype).clone()
        kind = getattr(method, "PRUNING_TYPE", None)
        if kind == "unstructured":
            alive = default_mask == 1
            partial = method.compute_mask(t[alive], default_mask=default_mask[alive])
            new_mask[alive] = partial.to(dtype=new_mask.dtype)
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to have "
                                     "the attribute `dim` defined.")
            ndim = t.dim()
            dim = _normalize_dim(method.dim, ndim)
            others = [d for d in range(ndim) if d != dim]
            kept = (default_mask.sum(dim=others) != 0).nonzero().view(-1)
            # The method sees only the kept channels; its mask is written back into them.
            partial = method.compute_mask(t.index_select(dim, kept),
                                          default_mask=default_mask.index_select(dim, kept))
            new_mask.index_copy_(dim, kept, partial.to(dtype=new_mask.dtype))
        elif kind == "global":
            new_mask = method.compute_mask(t, default_mask=default_mask).to(dtype=new_mask.dtype)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing (the mask is all ones): puts a parameter in the pruned form."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class _UnstructuredByAmount(BasePruningMethod):
    """Prunes `amount` entries (a count, or a fraction of the entries): those `_pick` chooses."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        k = _compute_nparams_toprune(self.amount, t.numel())
        mask = default_mask.contiguous().clone()
        if k:
            mask.view(-1)[self._pick(t, k)] = 0
        return mask


class RandomUnstructured(_UnstructuredByAmount):
    """Prunes `amount` entries chosen at random."""

    def _pick(self, t, k):
        # k distinct uniformly random positions: the k largest of i.i.d. uniform keys.
        return flow.topk(flow.rand_like(t).view(-1), k).indices

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_UnstructuredByAmount):
    """Prunes the `amount` entries of smallest absolute value."""

    def _pick(self, t, k):
        return flow.topk(t.abs().reshape(-1), k, largest=False).indices

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes `amount` whole channels along `dim`, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        n = t.shape[self.dim]
        k = _compute_nparams_toprune(self.amount, n)
        if k == 0:
            return default_mask
        keep = flow.ones(n, dtype=t.dtype, device=t.device)
        keep[flow.topk(flow.rand(n, device=t.device), k, largest=False).indices] = 0
        return _channel_mask(t, _normalize_dim(self.dim, t.dim()), keep) * default_mask.to(
            dtype=t.dtype)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the `amount` channels along `dim` of smallest Ln norm (`n` as torch.norm's p: a
    number, inf, -inf or 'fro'), the norm taken over all the other dims."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        size = t.shape[self.dim]
        k = _compute_nparams_toprune(self.amount, size)
        if k == 0:
            return default_mask
        dim = _normalize_dim(self.dim, t.dim())
        norm = flow.norm(t, p=self.n, dim=[d for d in range(t.dim()) if d != dim])
        keep = flow.zeros(size, dtype=t.dtype, device=t.device)
        keep[flow.topk(norm, size - k, largest=True).indices] = 1
        return _channel_mask(t, dim, keep) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given mask (shaped like the parameter) is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if tuple(default_mask.shape) != tuple(self.mask.shape):
            raise AssertionError(f"mask of shape {tuple(self.mask.shape)} does not match the "
                                 f"parameter's shape {tuple(default_mask.shape)}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


# ---------------------------------------------------------------------------------- functions

def identity(module, name):
    """Puts `module.<name>` in the pruned form with an all-ones mask; returns the module."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prunes `amount` random entries of `module.<name>`; returns the module."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prunes the `amount` entries of `module.<name>` of smallest |importance_scores| (default
    the parameter itself); returns the module."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prunes `amount` random channels of `module.<name>` along `dim`; returns the module."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prunes the `amount` channels along `dim` of smallest Ln norm; returns the module."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prunes the (module, name) pairs of `parameters` as one tensor: `pruning_method(**kwargs)`
    (an unstructured method) chooses among all their entries at once, so a layer may lose more
    or less than `amount` of its own. `importance_scores` maps (module, name) to scores used in
    place of the parameter's values."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)  # read twice below: a generator would be empty the 2nd time
    if importance_scores is None:
        importance_scores = {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = flow.cat([importance_scores.get((m, n), getattr(m, n)).reshape(-1)
                       for m, n in parameters])
    # Parameters not pruned yet start from an all-ones mask.
    default_mask = flow.cat([(getattr(m, n + "_mask") if hasattr(m, n + "_mask")
                              else flow.ones_like(getattr(m, n))).reshape(-1)
                             for m, n in parameters])

    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container = PruningContainer()
    container._tensor_name = "temp"
    container.add_pruning_method(method)
    with no_grad():
        final_mask = container.compute_mask(scores, default_mask)

    offset = 0
    for module, name in parameters:
        param = getattr(module, name)
        n = param.numel()
        custom_from_mask(module, name, mask=final_mask[offset:offset + n].view_as(param))
        offset += n


def custom_from_mask(module, name, mask):
    """Prunes `module.<name>` where `mask` is 0; returns the module."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Makes the pruning of `module.<name>` permanent (see BasePruningMethod.remove) and drops
    its hook; returns the module."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     "can be removed")


def is_pruned(module):
    """Whether `module` or one of its submodules has a pruning hook."""
    return any(isinstance(hook, BasePruningMethod)
               for _, sub in module.named_modules() for hook in sub._forward_pre_hooks.values())
