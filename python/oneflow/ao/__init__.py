"""oneflow.ao: PyTorch's architecture-optimisation namespace (quantization; nn holds the QAT,
fused and converted modules it swaps in). The subpackages load on first use (about 20 ms that
`import oneflow` need not pay)."""
import importlib

_SUBPACKAGES = ("nn", "quantization")


def __getattr__(name):
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'oneflow.ao' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_SUBPACKAGES))
