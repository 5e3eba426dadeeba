"""OpInfos of the reductions."""

from .core import *  # noqa: F401,F403

# -- reductions -----------------------------------------------------------------
_SUM_TOL = {"float32": (1e-5, 1e-5), "float16": (4e-3, 2e-3), "bfloat16": (2e-2, 2e-2),
            "complex64": (1e-5, 1e-5)}


def _with_complex(real_gen, complex_gen):
    """Samples of real dtypes from real_gen, of complex ones from complex_gen (no dtype= casts
    of complex input to real dtypes, which torch refuses)."""
    return lambda dtype, rng: (complex_gen if dtype in COMPLEX else real_gen)(dtype, rng)


add(OpInfo("sum", "reduction", ALL + COMPLEX,
           _with_complex(reduction_samples(dtype_kw=("float64", "int64")),
                         reduction_samples(dtype_kw=("complex128",))), tol=_SUM_TOL))
add(OpInfo("mean", "reduction", FLOATS + COMPLEX,
           _with_complex(reduction_samples(dtype_kw=("float64",)),
                         reduction_samples(dtype_kw=("complex128",))), tol=_SUM_TOL))
add(
    OpInfo(
        "prod",
        "reduction",
        ALL + COMPLEX,
        # prod takes one int dim only (no tuples), as in torch.
        _with_complex(reduction_samples(Domain(0.8, 1.25, -2, 2), tuple_dims=False, dtype_kw=("float64",)),
                      reduction_samples(Domain(0.6, 0.9, -2, 2), tuple_dims=False)),
        tol=_SUM_TOL,
    )
)
for _name in ("max", "min"):
    add(OpInfo(_name, "reduction", ALL,
               reduction_samples(tuple_dims=False, distinct_values=True, binary_form=True)))
for _name in ("argmax", "argmin"):
    add(OpInfo(_name, "reduction", NUMBER, reduction_samples(tuple_dims=False, distinct_values=True)))
for _name in ("amax", "amin"):
    add(OpInfo(_name, "reduction", ALL, reduction_samples()))
for _name in ("all", "any"):
    add(
        OpInfo(
            _name,
            "reduction",
            ALL + COMPLEX,
            reduction_samples(),
            ref=(lambda n: lambda torch: _bool_result(getattr(torch, n)))(_name),
            oneflow_dtypes=("uint8",),
        )
    )


def aminmax_samples(dtype, rng):
    def x(shape):
        return distinct(rng, shape, dtype) if dtype != "bool" else arr(rng, shape, dtype)

    return [
        Sample((x((2, 3, 4)),), desc="full"),
        Sample((x((2, 3, 4)),), {"dim": 1}, desc="dim=1"),
        Sample((x((2, 3, 4)),), {"dim": -1, "keepdim": True}, desc="dim=-1 keepdim"),
        Sample((x((2, 3)),), {"keepdim": True}, desc="full keepdim"),
        Sample((x(()),), desc="0-d"),
        Sample((x((0, 3)),), {"dim": 1}, desc="zero-size, non-empty dim"),
        Sample((x((0, 3)),), desc="zero-size full", error_types=(RuntimeError, IndexError)),
        Sample((arr(rng, (3, 4), dtype),), {"dim": 0}, desc="ties"),
    ]


def _aminmax_ref(torch):
    """amin and amax: the same values and (ties shared evenly) the same gradients as torch 2.13's
    aminmax, which older torch cannot differentiate."""

    def f(x, dim=None, keepdim=False):
        if dim is None:
            dims = tuple(range(x.dim()))
            if not dims:
                return torch.return_types.aminmax((torch.amin(x), torch.amax(x)))
            return torch.return_types.aminmax((torch.amin(x, dims, keepdim), torch.amax(x, dims, keepdim)))
        return torch.return_types.aminmax((torch.amin(x, dim, keepdim), torch.amax(x, dim, keepdim)))

    return f


add(OpInfo("aminmax", "reduce", ALL, aminmax_samples, ref=_aminmax_ref))
