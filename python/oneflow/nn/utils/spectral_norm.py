"""Spectral normalisation (Miyato et al., https://arxiv.org/abs/1802.05957): w = w_orig / sigma.

PyTorch's hook form of nn.utils.spectral_norm. sigma, the largest singular value of w_orig seen
as a matrix (dim `dim` first, the rest flattened), is estimated as u^T W v with the buffers
`<name>_u` / `<name>_v`, refined by power iteration (in place, without gradient) before every
forward in training mode only; eval uses the stored u and v. The state_dict holds
`<name>_orig`, `<name>_u`, `<name>_v` and records version 1 in its metadata; a version-0 state
dict (which held `<name>` instead of `<name>_v`) is converted on load as PyTorch does.
"""
from ... import _oneflow_internal as _C
from ..._grad_mode import no_grad
from .. import functional as F
from ..parameter import Parameter

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook that recomputes `module.<name>` from `<name>_orig`, `_u`, `_v`."""

    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.name = name
        self.dim = dim
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.ndim) if d != self.dim])
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    F.normalize(_C.mv(weight_mat.t(), u), dim=0, eps=self.eps, out=v)
                    F.normalize(_C.mv(weight_mat, v), dim=0, eps=self.eps, out=u)
                # sigma's backward needs the u and v of this step, not the buffers that the
                # next training forward overwrites in place.
                u, v = u.clone(), v.clone()
        sigma = _C.dot(u, _C.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, weight_mat, u, target_sigma):
        # v with u = W v / ||W v|| (least squares), scaled so that u^T W v = target_sigma.
        wt = weight_mat.t()
        v = _C.mv(_C.matmul(_C.pinverse(_C.matmul(wt, weight_mat)), wt), u)
        return v * (target_sigma / _C.dot(u, _C.mv(weight_mat, v)))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = F.normalize(_C.randn(h, dtype=weight.dtype, device=weight.device), dim=0, eps=eps)
            v = F.normalize(_C.randn(w, dtype=weight.dtype, device=weight.device), dim=0, eps=eps)
        delattr(module, name)
        module.register_parameter(name + "_orig", weight)
        # A plain attribute until the first forward computes it (as PyTorch: the raw weight).
        setattr(module, name, weight.data)
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Converts a version-0 state dict (`<name>`, `_orig`, `_u`; no `_v`) on load."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs):
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        key = prefix + fn.name
        if (version is None and key not in state_dict
                and all(key + s in state_dict for s in ("_orig", "_u", "_v"))):
            return  # the current format, saved without metadata
        missing = [key + s for s in ("_orig", "", "_u") if key + s not in state_dict]
        if missing:
            if strict:
                missing_keys.extend(missing)
            return
        with no_grad():
            weight_orig = state_dict[key + "_orig"]
            sigma = (weight_orig / state_dict.pop(key)).mean()
            weight_mat = fn.reshape_weight_to_matrix(weight_orig)
            state_dict[key + "_v"] = fn._solve_v_and_rescale(weight_mat, state_dict[key + "_u"],
                                                             sigma)


class SpectralNormStateDictHook:
    """Records the format version in the state dict's metadata."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata):
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = self.fn._version


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Reparameterises `module.<name>` as `<name>_orig / sigma(<name>_orig)` and returns the
    module. dim (the output dim) defaults to 1 for ConvTranspose1d/2d/3d and 0 otherwise."""
    if dim is None:
        from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Undoes spectral_norm: `<name>` becomes a plain Parameter holding w_orig / sigma (the
    stored u and v, no power iteration)."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for hooks, kind in ((module._state_dict_hooks, SpectralNormStateDictHook),
                        (module._load_state_dict_pre_hooks, SpectralNormLoadStateDictPreHook)):
        for k, hook in hooks.items():
            hook = getattr(hook, "hook", hook)  # load pre-hooks are stored wrapped
            if isinstance(hook, kind) and hook.fn.name == name:
                del hooks[k]
                break
    return module
