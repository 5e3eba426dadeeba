"""oneflow.backends.mkl: Intel MKL (not used: BLAS and LAPACK come from OpenBLAS)."""


def is_available():
    return False
