"""Note [out= arguments] (src/api/out_arg.cpp) for the flow.X functions written in Python: the
generated bindings take `out=` themselves; these functions are wrapped where the package exports
them (the Tensor methods of the same names are left as they are: PyTorch's take no out=)."""
import functools

from . import _oneflow_internal as _C

# flow.X functions written in Python whose PyTorch counterparts take out=.
NAMES = ("where", "nonzero", "gather", "median", "std", "var", "norm", "narrow_copy", "addr", "cholesky_inverse",
         "cholesky_solve", "histogram", "ldexp", "lu_unpack", "quantile", "nanquantile", "renorm",
         "triangular_solve")


def takes_out(fn, name):
    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        result = fn(*args, **kwargs)
        return result if out is None else _C._with_out(name, result, out)
    return with_out


def install(flow):
    for name in NAMES:
        setattr(flow, name, takes_out(getattr(flow, name), name))
