"""OpInfos of the pools (src/ops/table/pool.yaml), called through nn.functional, and of the
internal gradient ops (flow._C only; torch's reference is the matching autograd result)."""

from .conv import half_via_float
from .core import *  # noqa: F401,F403

POOL_INTS = ("uint8", "int8", "int16", "int32", "int64")
# Averages: float32 rounding of a different summation order; halves compute in float32.
AVG_TOL = {"float32": (1e-5, 1e-6), "float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2)}


def _f(name):
    return lambda lib: getattr(lib.nn.functional, name)


def _sp(k, n):
    return (n,) * k


def _max_pool_samples(k):
    def gen(dtype, rng):
        def a(shape):
            # distinct values: the index of a maximum is unambiguous (ties would pick by order)
            return distinct(rng, shape, dtype) if dtype not in ("uint8", "int8") else arr(rng, shape, dtype)

        S = Sample
        out = [
            S((a((2, 3) + _sp(k, 6)), 2), desc="kernel 2"),
            S((a((1, 2) + _sp(k, 7)), 3), {"stride": 2, "padding": 1}, desc="3/2 pad 1"),
            S((a((1, 2) + _sp(k, 7)), 3), {"stride": 2, "padding": 1, "return_indices": True}, desc="return_indices"),
            S((a((1, 2) + _sp(k, 8)), 3), {"stride": 2, "ceil_mode": True}, desc="ceil_mode"),
            S((a((1, 2) + _sp(k, 9)), 2), {"stride": 2, "dilation": 2, "padding": 1, "return_indices": True},
              desc="dilation"),
            S((a((1, 2) + _sp(k, 6)), tuple(range(1, k + 1))), {"stride": tuple(range(k, 0, -1))},
              desc="per-dim kernel/stride"),
            S((a((2,) + _sp(k, 5)), 2), {"stride": 1}, desc="unbatched"),
            S((a((0, 2) + _sp(k, 4)), 2), desc="zero batch"),
            S((a((1, 2) + _sp(k, 2)), 3), desc="kernel larger than input"),
            S((a((1, 2) + _sp(k, 6)), 3), {"padding": 2}, desc="padding over half the kernel"),
            S((a((1, 2) + _sp(k, 6)), 0), desc="zero kernel"),
        ]
        if dtype in FLOATS:
            v = np.full((1, 1) + _sp(k, 4), -np.inf)
            v.flat[3] = np.nan
            out.append(S((Arr(v.astype(NP_DTYPE[dtype] if dtype != "bfloat16" else np.float32), dtype), 2),
                         {"return_indices": True}, desc="nan and -inf"))
        return out

    return gen


def _max_pool1d_ref(torch):
    # torch's max_pool1d has no integer kernel without indices; with them it has (same values).
    def ref(x, *a, return_indices=False, **kw):
        out = torch.nn.functional.max_pool1d(x, *a, return_indices=True, **kw)
        return out if return_indices else out[0]

    return ref


def _avg_pool_samples(k):
    def gen(dtype, rng):
        def a(shape):
            return arr(rng, shape, dtype)

        S = Sample
        out = [
            S((a((2, 3) + _sp(k, 6)), 2), desc="kernel 2"),
            S((a((1, 2) + _sp(k, 7)), 3), {"stride": 2, "padding": 1}, desc="3/2 pad 1"),
            S((a((1, 2) + _sp(k, 7)), 3), {"stride": 2, "padding": 1, "count_include_pad": False},
              desc="count_include_pad=False"),
            S((a((1, 2) + _sp(k, 8)), 3), {"stride": 2, "padding": 1, "ceil_mode": True}, desc="ceil_mode"),
            S((a((1, 2) + _sp(k, 8)), 3), {"stride": 2, "ceil_mode": True, "count_include_pad": False},
              desc="ceil_mode, exclude pad"),
            S((a((1, 2) + _sp(k, 6)), tuple(range(1, k + 1))), {"stride": tuple(range(k, 0, -1))},
              desc="per-dim kernel/stride"),
            S((a((2,) + _sp(k, 5)), 2), {"stride": 1}, desc="unbatched"),
            S((a((0, 2) + _sp(k, 4)), 2), desc="zero batch"),
            S((a((1, 2) + _sp(k, 2)), 3), desc="kernel larger than input"),
            S((a((1, 2) + _sp(k, 6)), 3), {"padding": 2}, desc="padding over half the kernel"),
        ]
        if k > 1:
            out.append(S((a((1, 2) + _sp(k, 5)), 2), {"stride": 1, "padding": 1, "divisor_override": 3},
                         desc="divisor_override"))
        return out

    return gen


def _adaptive_samples(k, with_indices):
    def gen(dtype, rng):
        def a(shape):
            return distinct(rng, shape, dtype) if with_indices else arr(rng, shape, dtype)

        S = Sample
        out = [
            S((a((2, 3) + _sp(k, 6)), 3), desc="exact windows"),
            S((a((1, 2) + _sp(k, 7)), tuple(range(2, k + 2))), desc="overlapping windows"),
            S((a((1, 2) + _sp(k, 3)), 5), desc="output larger than input"),
            S((a((2,) + _sp(k, 5)), 2), desc="unbatched"),
            S((a((0, 2) + _sp(k, 4)), 2), desc="zero batch"),
            S((a((1, 2) + _sp(k, 4)), (None,) * (k - 1) + (2,)), desc="None keeps the size"),
            S((a((1, 2) + _sp(k, 0)), 2), desc="empty spatial dim"),
        ]
        if with_indices:
            out.append(S((a((1, 2) + _sp(k, 5)), 2), {"return_indices": True}, desc="return_indices"))
        return out

    return gen


def _unpool_samples(k):
    def gen(dtype, rng):
        def pooled(shape, kernel=2, **kw):
            import torch

            x = torch.tensor(distinct(rng, shape, "float64").value)
            v, i = getattr(torch.nn.functional, f"max_pool{k}d")(x, kernel, return_indices=True, **kw)
            return Arr(v.numpy().astype(NP_DTYPE[dtype] if dtype != "bfloat16" else np.float32), dtype), \
                Arr(i.numpy(), "int64")

        S = Sample
        v, i = pooled((2, 3) + _sp(k, 6))
        v2, i2 = pooled((1, 2) + _sp(k, 7), 3, stride=3, padding=1)  # disjoint windows: no repeated index
        v3, i3 = pooled((1, 2) + _sp(k, 7))
        v4, i4 = pooled((2,) + _sp(k, 4))
        bad = Arr(np.full(i.shape, 10 ** 6, np.int64), "int64")
        return [
            S((v, i, 2), desc="kernel 2"),
            S((v2, i2, 3), {"stride": 3, "padding": 1}, desc="3/3 pad 1"),
            S((v3, i3, 2), {"output_size": _sp(k, 7)}, desc="output_size"),
            S((v4, i4, 2), desc="unbatched"),
            S((v, bad, 2), desc="index out of range"),
        ]

    return gen


def _lp_samples(k):
    def gen(dtype, rng):
        def a(shape):
            return arr(rng, shape, dtype, POSITIVE)

        S = Sample
        return [
            S((a((2, 3) + _sp(k, 6)), 2, 2), desc="p=2 kernel 2"),
            S((a((1, 2) + _sp(k, 7)), 3.0, 3), {"stride": 2}, desc="p=3 stride 2"),
            S((a((1, 2) + _sp(k, 7)), 1, 2), {"ceil_mode": True}, desc="p=1 ceil_mode"),
        ]

    return gen


# avg_pool3d: torch has no float16/bfloat16 kernel; flow computes them in float32 (half_via_float).
for _k in (1, 2, 3):
    add(OpInfo(f"max_pool{_k}d", "pool", POOL_INTS + FLOATS, _max_pool_samples(_k), fn=_f(f"max_pool{_k}d"),
               ref=_max_pool1d_ref if _k == 1 else None, method=""))
    add(OpInfo(f"avg_pool{_k}d", "pool", ("int64",) + FLOATS, _avg_pool_samples(_k), fn=_f(f"avg_pool{_k}d"),
               ref=half_via_float(f"avg_pool{_k}d") if _k == 3 else None, method="", tol=AVG_TOL))
    add(OpInfo(f"adaptive_avg_pool{_k}d", "pool", FLOATS, _adaptive_samples(_k, False),
               fn=_f(f"adaptive_avg_pool{_k}d"), method="", tol=AVG_TOL))
    add(OpInfo(f"adaptive_max_pool{_k}d", "pool", FLOATS, _adaptive_samples(_k, True),
               fn=_f(f"adaptive_max_pool{_k}d"), method=""))
    add(OpInfo(f"max_unpool{_k}d", "pool", FLOATS, _unpool_samples(_k), fn=_f(f"max_unpool{_k}d"), method=""))
for _k in (1, 2):
    add(OpInfo(f"lp_pool{_k}d", "pool", ("int64",) + FLOATS, _lp_samples(_k), fn=_f(f"lp_pool{_k}d"), method="",
               tol={"float32": (1e-5, 1e-5), "float16": (4e-3, 2e-3), "bfloat16": (2e-2, 2e-2)}))


# -- the internal gradient ops: references from torch's autograd --------------------------------

def _grad_of(torch, pool, x, out_grad, **kw):
    x = x.detach().requires_grad_(True)
    (g,) = torch.autograd.grad(pool(x, **kw), x, out_grad, create_graph=True)  # differentiable in out_grad
    return g


def _max_pool_grad_ref(torch):
    # The scatter-add of grad into the indexed positions, written with torch's scatter_add; the
    # input gives only the result's spatial sizes.
    def ref(grad_output, indices, input, spatial_dims):
        input_size = tuple(input.shape[input.dim() - spatial_dims:])
        lead = grad_output.shape[: grad_output.dim() - spatial_dims]
        flat = grad_output.reshape(*lead, -1)
        n = 1
        for s in input_size:
            n *= s
        out = torch.zeros(*lead, n, dtype=grad_output.dtype)
        out = out.scatter_add(-1, indices.reshape(*lead, -1), flat)
        return out.reshape(*lead, *input_size) + 0 * input  # input's gradient: zeros (as PyTorch's)

    return ref


def _gather_ref(torch):
    def ref(input, indices, spatial_dims):
        k = spatial_dims
        lead = input.shape[: input.dim() - k]
        flat = input.reshape(*lead, -1)
        return flat.gather(-1, indices.reshape(*lead, -1)).reshape(indices.shape)

    return ref


def _index_samples(dtype, rng):
    import torch

    x = torch.tensor(distinct(rng, (2, 3, 6, 6), "float64").value)
    _, i = torch.nn.functional.max_pool2d(x, 3, 2, 1, return_indices=True)  # overlapping windows
    _, i1 = torch.nn.functional.max_pool1d(x[0], 2, return_indices=True)
    idx, idx1 = Arr(i.numpy(), "int64"), Arr(i1.numpy(), "int64")
    return [
        Sample((arr(rng, tuple(i.shape), dtype), idx, arr(rng, (2, 3, 6, 6), dtype), 2), desc="2-d, overlapping windows"),
        Sample((arr(rng, tuple(i1.shape), dtype), idx1, arr(rng, (3, 6), dtype), 1), desc="1-d unbatched"),
    ]


def _gather_samples(dtype, rng):
    import torch

    x = torch.tensor(distinct(rng, (2, 3, 6, 6), "float64").value)
    _, i = torch.nn.functional.max_pool2d(x, 3, 2, 1, return_indices=True)
    return [Sample((arr(rng, (2, 3, 6, 6), dtype), Arr(i.numpy(), "int64"), 2), desc="2-d")]


def _avg_grad_samples(dtype, rng):
    S = Sample
    return [
        S((arr(rng, (1, 2, 3, 3), dtype), arr(rng, (1, 2, 6, 6), dtype), (3, 3), (2, 2), (1, 1), False, True),
          desc="2-d pad"),
        S((arr(rng, (1, 2, 4, 4), dtype), arr(rng, (1, 2, 7, 7), dtype), (3, 3), (2, 2), (1, 1), True, False, 5),
          desc="ceil, divisor"),
        S((arr(rng, (2, 3), dtype), arr(rng, (2, 7), dtype), (2,), (2,), (0,), False, True), desc="1-d unbatched"),
    ]


def _avg_grad_ref(torch):
    def ref(grad_output, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
            divisor_override=None):
        k = len(kernel_size)
        pool = getattr(torch.nn.functional, f"avg_pool{k}d")
        kw = dict(kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode,
                  count_include_pad=count_include_pad)
        if k > 1:
            kw["divisor_override"] = divisor_override
        return _grad_of(torch, pool, torch.zeros_like(input), grad_output, **kw) + 0 * input

    return ref


def _adaptive_grad_samples(dtype, rng):
    return [
        Sample((arr(rng, (1, 2, 3, 2), dtype), arr(rng, (1, 2, 7, 5), dtype), 2), desc="2-d"),
        Sample((arr(rng, (2, 4), dtype), arr(rng, (2, 6), dtype), 1), desc="1-d unbatched"),
    ]


def _adaptive_grad_ref(torch):
    def ref(grad_output, input, spatial_dims):
        k = spatial_dims
        pool = getattr(torch.nn.functional, f"adaptive_avg_pool{k}d")
        x = torch.zeros_like(input)
        return _grad_of(torch, pool, x, grad_output, output_size=tuple(grad_output.shape[-k:])) + 0 * input

    return ref


add(OpInfo("max_pool_grad", "pool", FLOATS, _index_samples, fn=lambda lib: lib._C.max_pool_grad,
           ref=_max_pool_grad_ref, method="", tol=AVG_TOL))
add(OpInfo("max_pool_gather", "pool", FLOATS, _gather_samples, fn=lambda lib: lib._C.max_pool_gather,
           ref=_gather_ref, method=""))
add(OpInfo("avg_pool_grad", "pool", FLOATS, _avg_grad_samples, fn=lambda lib: lib._C.avg_pool_grad,
           ref=_avg_grad_ref, method="", tol=AVG_TOL))
add(OpInfo("adaptive_avg_pool_grad", "pool", FLOATS, _adaptive_grad_samples,
           fn=lambda lib: lib._C.adaptive_avg_pool_grad, ref=_adaptive_grad_ref, method="", tol=AVG_TOL))


def unpool_scatter_ref(k):
    """max_unpoolNd as a scatter of the values into zeros (the same op: its backward is the gather
    PyTorch's max_unpool backward does, without its view of the indices, which fails for
    non-contiguous indices)."""
    def make(torch):
        def ref(x, indices, kernel_size, stride=None, padding=0, output_size=None):
            with torch.no_grad():
                shape = getattr(torch.nn.functional, f"max_unpool{k}d")(
                    x.detach(), indices.contiguous(), kernel_size, stride, padding, output_size).shape
            lead = x.shape[: x.dim() - k]
            flat = torch.zeros(*lead, int(np.prod(shape[len(lead):])), dtype=x.dtype)
            flat = flat.scatter(-1, indices.reshape(*lead, -1), x.reshape(*lead, -1))
            return flat.reshape(shape)

        return ref

    return make
