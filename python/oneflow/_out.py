"""Note [out= arguments] (src/api/out_arg.cpp) for the flow.X functions written in Python: the
generated bindings take `out=` themselves; these functions are wrapped where the package exports
them (the Tensor methods of the same names are left as they are: PyTorch's take no out=)."""
import functools

from . import _oneflow_internal as _C

# Functions written in Python (flow.X, flow.linalg.X, ...) whose PyTorch counterparts take out=.
NAMES = ("where", "nonzero", "gather", "median", "std", "var", "norm", "narrow_copy", "addr", "cholesky_inverse",
         "cholesky_solve", "histogram", "ldexp", "lu_unpack", "quantile", "nanquantile", "renorm",
         "triangular_solve") + tuple(
    "linalg." + n for n in ("cond", "matrix_norm", "multi_dot", "norm", "solve_triangular", "tensorinv",
                            "tensorsolve", "vecdot", "vector_norm")) + tuple(
    "special." + n for n in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                             "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
                             "laguerre_polynomial_l", "legendre_polynomial_p", "shifted_chebyshev_polynomial_t",
                             "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
                             "shifted_chebyshev_polynomial_w")) + tuple(
    "fft." + n for n in ("fft", "fft2", "fftfreq", "fftn", "hfft", "hfft2", "hfftn", "ifft", "ifft2", "ifftn",
                         "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq",
                         "rfftn"))


def takes_out(fn, name):
    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        result = fn(*args, **kwargs)
        return result if out is None else _C._with_out(name, result, out)
    return with_out


def install(flow):
    for dotted in NAMES:
        *path, name = dotted.split(".")
        owner = flow
        for p in path:
            owner = getattr(owner, p)
        setattr(owner, name, takes_out(getattr(owner, name), name))
