"""vmap (torch.func.vmap): func over a batch dimension of its inputs. Each example is a slice of
the mapped inputs; func runs once per example and the outputs are stacked along out_dims. The
results (and gradients: the slices and the stack are differentiable ops) are those of
PyTorch's batching rules; the cost is a call per example rather than one batched call."""
import oneflow as flow
import functools

from .._oneflow_internal import Tensor
from . import _pytree


def _fname(func):
    return getattr(func, "__name__", repr(func))


def _rng_states(flow):
    return [flow.get_rng_state()] + (flow.cuda.get_rng_state_all() if flow.cuda.is_available() else [])


def _set_rng_states(flow, states):
    flow.set_rng_state(states[0])
    if len(states) > 1:
        flow.cuda.set_rng_state_all(states[1:])


def _same_state(a, b):
    return all(x.numel() == y.numel() and bool((x == y).all()) for x, y in zip(a, b))


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over dim in_dims of its inputs (an int / None, or a structure matching the
    arguments'); outputs batched along out_dims. randomness: 'error' (random ops inside raise),
    'different' (each example draws its own numbers) or 'same' (every example the same draws)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        name = _fname(func)
        if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                             f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
        if isinstance(in_dims, tuple) and len(in_dims) != len(args):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                             f"structure of `inputs`. in_dims has structure {len(in_dims)} but inputs has "
                             f"structure {len(args)}.")
        leaves, spec = _pytree.flatten(args)
        dims = _pytree.broadcast_prefix(in_dims, args, f"vmap({name}, in_dims={in_dims}, ...)")
        sizes, norm = [], []
        for x, d in zip(leaves, dims):
            if d is None:
                norm.append(None)
                continue
            if not isinstance(x, Tensor):
                raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but "
                                 f"the input is of type {type(x)}. We cannot vmap over non-Tensor arguments, please "
                                 f"use None as the respective in_dim")
            if not -x.dim() <= d < max(x.dim(), 0) or x.dim() == 0:
                raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, "
                                 f"but that input is a Tensor of dimensionality {x.dim()} so expected in_dim to "
                                 f"satisfy -{x.dim()} <= in_dim < {x.dim()}.")
            norm.append(d % x.dim())
            sizes.append(x.shape[d % x.dim()])
        if not sizes:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): at least one input must be mapped "
                             f"(in_dim not None) and a Tensor")
        if len(set(sizes)) != 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sizes} for the mapped dimension")
        B = sizes[0]

        def example(i):
            return _pytree.unflatten([x if d is None else (x.select(d, i) if B else flow.zeros(
                [s for k, s in enumerate(x.shape) if k != d], dtype=x.dtype, device=x.device))
                for x, d in zip(leaves, norm)], spec)

        start = _rng_states(flow) if randomness != "different" else None
        results = []
        for i in range(max(B, 1)):
            if randomness == "same":
                _set_rng_states(flow, start)
            if B == 0:  # the output's structure and example shapes, from a stand-in example
                with flow.no_grad():
                    results.append(func(*example(0), **kwargs))
            else:
                results.append(func(*example(i), **kwargs))
            if randomness == "error" and i == 0 and not _same_state(start, _rng_states(flow)):
                raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use "
                                   "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                                   "operation out of vmap")
        return _stack_outputs(flow, name, results, out_dims, B)

    return wrapped


def _stack_outputs(flow, name, results, out_dims, B):
    outs = [_pytree.flatten(r) for r in results]
    spec = outs[0][1]
    dims = _pytree.broadcast_prefix(out_dims, results[0], f"vmap({name}, ..., out_dims={out_dims})")
    stacked = []
    for k, d in enumerate(dims):
        vals = [o[0][k] for o in outs]
        if d is None:
            stacked.append(vals[0])
            continue
        if not isinstance(vals[0], Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(vals[0])}. Did "
                             f"you mean to set out_dims= to None for output?")
        nd = vals[0].dim() + 1
        if not -nd <= d < nd:
            raise IndexError(f"vmap({name}, ..., out_dims={out_dims}): out_dim {d} is out of range for an output "
                             f"of {nd} dimensions")
        if B == 0:
            shape = list(vals[0].shape)
            shape.insert(d % nd, 0)
            stacked.append(flow.zeros(shape, dtype=vals[0].dtype, device=vals[0].device))
        else:
            stacked.append(flow.stack(vals, dim=d % nd))
    return _pytree.unflatten(stacked, spec)
