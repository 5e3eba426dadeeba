"""oneflow.backends: switches and queries of the compute backends, as torch.backends.

The flags are plain module attributes scripts set and read (cudnn.benchmark = True); the CPU
kernels here are deterministic and never use TF32, so the flags change nothing until a CUDA
backend reads them.
"""

from . import cuda, cudnn, mkl, mkldnn, mps, openmp  # noqa: F401
