"""oneflow.special: the op table's entries whose `also:` names `special.X`, and the orthogonal
polynomials defined in Python (_polynomials: Chebyshev, Hermite, Laguerre, Legendre). The module
is private so that its name is not a public name of the namespace."""
from . import _polynomials  # noqa: F401
