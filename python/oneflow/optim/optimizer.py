"""The optimizer base class: parameter groups, state, state_dict, zero_grad, gradient clipping.

Follows torch.optim.Optimizer (param groups are dicts with per-group options, state keyed by
parameter, `state_dict()` in torch's layout: state keyed by parameter index, param_groups with
'params' index lists) plus OneFlow's per-group `clip_grad_max_norm` / `clip_grad_norm_type`
options and `clip_grad()`. The element-wise update of each optimizer is one fused C++ op per
param group (src/ops/table/optim.yaml); the Python here only gathers the tensors.
"""
import copy
import math
import warnings
from collections import defaultdict
from itertools import chain

from .. import _global_hooks
from .. import _oneflow_internal as _C
from .._grad_mode import no_grad

Tensor = _C.Tensor


class _RequiredParameter:
    """Marks a default every param group must set itself (torch's `required`)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class ParamGroup(dict):
    """A param group: a dict ('params' plus the options) as in PyTorch; `.parameters` and
    `.options` are OneFlow's names for its parts. Built as a dict, or as upstream OneFlow's
    `ParamGroup(parameters, default_options)`: a copy of the defaults, overridden and extended by
    the group's own entries."""

    def __init__(self, parameters=(), default_options=None, **kwargs):
        if default_options is None:
            super().__init__(parameters, **kwargs)
            return
        if not isinstance(parameters, dict) or "params" not in parameters:
            raise ValueError("ParamGroup(parameters, default_options): parameters must be a dict "
                             "with a 'params' entry")
        params = parameters["params"]
        if isinstance(params, Tensor):
            raise TypeError("ParamGroup: 'params' must be an iterable of Tensors, got a Tensor")
        options = copy.deepcopy(dict(default_options))
        options.update((k, v) for k, v in parameters.items() if k != "params")
        super().__init__(options, params=list(params), **kwargs)

    @property
    def parameters(self):
        return self["params"]

    @property
    def options(self):
        return {k: v for k, v in self.items() if k != "params"}


def _as_real(t):
    """torch.optim's rule for complex parameters: updated as their real view (pairs of
    independent reals), the update ops here and the fused ones (src/ops/optim_util.h) alike."""
    return _C.view_as_real(t) if t.is_complex() else t


def _new_step():
    """A step counter as torch keeps it: a 0-d float32 tensor."""
    return _C.zeros((), dtype=_C.float32)


def _as_step(v):
    if isinstance(v, Tensor):
        return v
    return _C.full((), float(v), dtype=_C.float32)


def _grad_norm(grads, norm_type):
    """Total norm of the grads (0-d float tensor), as nn.utils.clip_grad_norm_."""
    if norm_type == math.inf:
        per = [g.abs().amax().cast(_C.float64) if g.numel() else _C.zeros((), dtype=_C.float64, device=g.device)
               for g in grads]
        return _C.stack(per).amax()
    if norm_type == -math.inf:
        per = [g.abs().amin().cast(_C.float64) for g in grads if g.numel()]
        return _C.stack(per).amin() if per else _C.zeros((), dtype=_C.float64, device=grads[0].device)
    p = float(norm_type)
    if p == 0:
        # as nn.utils.clip_grad_norm_ (PyTorch's and upstream's): the 0-norm of the per-tensor
        # 0-norms, i.e. how many grads have a nonzero element (for p > 0 the norm of the
        # per-tensor norms is the norm of all grads as one vector; for p = 0 it is not)
        per = [(g != 0).sum() for g in grads]
        return (_C.stack(per) != 0).sum().cast(_C.float64)
    if p == 2.0:
        per = [(g.cast(_C.float64) * g.cast(_C.float64)).sum() for g in grads]
        return _C.stack(per).sum().sqrt()
    per = [(g.cast(_C.float64).abs() ** p).sum() for g in grads]
    return _C.stack(per).sum() ** (1.0 / p)


def clip_grads(params, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Scales the grads of `params` in place so that their total `norm_type`-norm is at most
    `max_norm` (coefficient max_norm / (norm + 1e-6), clamped to 1); returns the norm."""
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return _C.zeros(())
    norm = _grad_norm(grads, float(norm_type))
    if error_if_nonfinite and not math.isfinite(norm.item()):
        raise RuntimeError(
            f"The total norm of order {float(norm_type)} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`")
    coef = min(float(max_norm) / (norm.item() + 1e-6), 1.0)
    if coef < 1.0 or math.isnan(coef):
        for g in grads:
            g.mul_(coef)
    return norm.cast(grads[0].dtype)


def _sparse_step(optimizer, group):
    """Note [Sparse parameters]: a parameter that stands for rows kept outside it (the `shadow` of
    a flow.one_embedding table, Note [Embedding gradients] in one_embedding/_embedding.py) carries
    `_sparse_rows`; the group's options update those rows first (and the rows' step clears the
    parameter's gradient, so the dense update below skips it). Eager steps and nn.Graph's
    `add_optimizer` steps both come through here."""
    for p in group["params"]:
        rows = getattr(p, "_sparse_rows", None)
        if rows is not None:
            rows.step(optimizer, group)


class Optimizer:
    """Base class of all optimizers.

    Args:
        params: an iterable of tensors, or of dicts defining param groups ('params' plus any
            option of the optimizer, and OneFlow's 'clip_grad_max_norm' / 'clip_grad_norm_type').
        defaults: the default value of every option.
    """

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        self._grads_clipped = False
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {type(params).__name__}")
        param_groups = list(params)
        # OneFlow accepts an empty parameter list (an optimizer with nothing to update; a model
        # whose parameters are all frozen), where PyTorch raises (docs/oneflow_differences.md).
        if param_groups and not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    # ---- OneFlow's spelling of the state ------------------------------------------------
    @property
    def _state(self):
        return self.state

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._grads_clipped = False

    def __repr__(self):
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group.keys()):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    def add_param_group(self, param_group):
        """Adds a param group (a dict with 'params' and options) to the optimizer."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            params = list(params)
        group = ParamGroup(param_group)
        group["params"] = params
        for p in params:
            if not isinstance(p, Tensor) and not getattr(p, "_oneflow_global_", False):  # (global tensors too)
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__module__}.{type(p).__name__}")
            if not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            group.setdefault(name, default)
        if ("clip_grad_max_norm" in group) != ("clip_grad_norm_type" in group):
            raise ValueError("gradient clipping needs both 'clip_grad_max_norm' and "
                             "'clip_grad_norm_type' in the param group")
        ids = [id(p) for p in params]
        if len(ids) != len(set(ids)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error", stacklevel=3)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(i in seen for i in ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        """Resets the gradients of all optimized tensors: to None (default), or to zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    # ---- gradient clipping (OneFlow) ------------------------------------------------------
    def clip_grad(self, error_if_nonfinite=False):
        """Clips the grads of every group that sets 'clip_grad_max_norm' and
        'clip_grad_norm_type' (the group's grads as one vector). `step()` does it by itself;
        calling this first (OneFlow's eager idiom) makes that step skip clipping once."""
        any_group = False
        for group in self.param_groups:
            if "clip_grad_max_norm" in group:
                any_group = True
                clip_grads(group["params"], group["clip_grad_max_norm"],
                           group["clip_grad_norm_type"], error_if_nonfinite)
        if not any_group:
            warnings.warn("To enable clip_grad, passing the `clip_grad_max_norm` and "
                          "`clip_grad_norm_type` parameters when instantializing the Optimizer.")
        self._grads_clipped = True

    def _clip_before_step(self):
        if self._grads_clipped:
            self._grads_clipped = False
            return
        for group in self.param_groups:
            if "clip_grad_max_norm" in group:
                clip_grads(group["params"], group["clip_grad_max_norm"],
                           group["clip_grad_norm_type"])

    # ---- step -------------------------------------------------------------------------------
    def step(self, closure=None):
        """Performs one optimization step; `closure` re-evaluates the model and returns the
        loss (it runs with grad enabled)."""
        loss = None
        if closure is not None:
            from .._grad_mode import enable_grad

            with enable_grad():
                loss = closure()
        with no_grad():
            self._clip_before_step()
            for group in self.param_groups:
                _sparse_step(self, group)
                self._update_group(group)
        return loss

    def _update_group(self, group):
        raise NotImplementedError

    def _with_grads(self, group):
        """The group's params that have a gradient, and the gradients."""
        params, grads = [], []
        for p in group["params"]:
            if p.grad is not None:
                params.append(p)
                grads.append(p.grad)
        return params, grads

    def _state_lists(self, params, keys, init=None):
        """Per-parameter state as lists for the fused update op: [step tensors] and one list
        per key of `keys`; missing state is created (zeros like the param, or `init[key](p)`),
        a step kept as a Python number (older checkpoints) becomes a tensor."""
        steps, lists = [], [[] for _ in keys]
        for p in params:
            st = self.state[p]
            if "step" not in st:
                st["step"] = _new_step()
            elif not isinstance(st["step"], Tensor):
                st["step"] = _as_step(st["step"])
            steps.append(st["step"])
            for lst, key in zip(lists, keys):
                if key not in st:
                    st[key] = init[key](p) if init and key in init else _C.zeros_like(p)
                lst.append(st[key])
        return steps, lists

    # ---- state_dict -------------------------------------------------------------------------
    def state_dict(self):
        """The optimizer's state in torch's layout: {'state': {param index: {...}},
        'param_groups': [{options..., 'params': [param indices]}]} (tensors are shared with
        the optimizer, as in PyTorch)."""
        mapping = {}
        start = 0

        def pack_group(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            mapping.update({id(p): i for i, p in enumerate(group["params"], start)
                            if id(p) not in mapping})
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(mapping[id(k)] if id(k) in mapping else k): v  # (global parameters too)
                        for k, v in self.state.items()}
        return {"state": packed_state, "param_groups": param_groups}

    def load_state_dict(self, state_dict):
        """Loads a state from `state_dict()` (of this optimizer class, or torch's layout).
        Tensors are copied onto each parameter's device and (floating state) dtype."""
        if not isinstance(state_dict, dict) or "state" not in state_dict \
                or "param_groups" not in state_dict:
            raise ValueError("optimizer state_dict must be a dict with 'state' and "
                             "'param_groups' (as returned by Optimizer.state_dict())")
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        param_lens = (len(g["params"]) for g in groups)
        saved_lens = (len(g["params"]) for g in saved_groups)
        if any(a != b for a, b in zip(param_lens, saved_lens)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, key=None):
            if getattr(param, "_oneflow_global_", False) or getattr(value, "_oneflow_global_", False):
                return _cast_global(param, value, key)
            if isinstance(value, Tensor):
                if key == "step":
                    return value.clone()
                if param.dtype.is_floating_point and value.dtype.is_floating_point:
                    return value.to(device=param.device, dtype=param.dtype).clone()
                return value.to(device=param.device).clone()
            if isinstance(value, dict):
                return {k: cast(param, v, k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v)
            else:
                state[k] = v
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved = ParamGroup(saved)
            saved["params"] = group["params"]
            new_groups.append(saved)
        self.state = state
        self.param_groups = new_groups


def _cast_global(param, value, key):
    """Optimizer state loaded for a global parameter (docs/global_tensors.md): tensors laid out as
    the parameter (a local one, as flow.load reads a plain checkpoint, taken as its logical value);
    step counters stay local."""
    local_to_global, broadcast = _global_hooks.use("local_to_global"), _global_hooks.use("broadcast")  # Note [Global hooks]
    is_global = _global_hooks.is_global
    if isinstance(value, dict):
        return {k: _cast_global(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_global(param, v, None) for v in value)
    if not isinstance(value, Tensor):
        return value
    if key == "step":
        return (value.to_local() if is_global(value) else value).clone()
    if not is_global(param):
        return value.to_global(sbp=broadcast).to_local().to(device=param.device).clone()
    if not is_global(value):
        value = local_to_global(value, param.placement, broadcast, "Optimizer.load_state_dict")
    if param.dtype.is_floating_point and value.dtype.is_floating_point:
        value = value.to(param.dtype)
    return value.to_global(param.placement, param.sbp).clone()
