"""oneflow.version (torch.version): the package version and the CUDA toolkit this build was
compiled with (None in a CPU-only build), which scripts read to pick code paths."""
from . import _oneflow_internal as _C

__version__ = "0.1.0"
cuda = _C._cuda_version() if hasattr(_C, "_cuda_version") else None
hip = None
xpu = None
debug = False
git_version = "unknown"
