"""oneflow.backends.cuda: CUDA math switches (matmul.allow_tf32, scaled-dot-product kernels)."""

from .. import _oneflow_internal as _C


class _MatmulFlags:
    """torch.backends.cuda.matmul: reduced-precision switches of CUDA matmuls."""

    def __init__(self):
        self._allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True
        self.fp32_precision = "ieee"

    # float32 matmuls on TF32 tensor cores (off by default, as in PyTorch); the CUDA backend
    # reads the switch at each product.
    @property
    def allow_tf32(self):
        return self._allow_tf32

    @allow_tf32.setter
    def allow_tf32(self, value):
        self._allow_tf32 = bool(value)
        setter = getattr(_C, "_cuda_set_allow_tf32", None)
        if setter is not None:
            setter(self._allow_tf32)


matmul = _MatmulFlags()
cufft_plan_cache = None

_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def is_built():
    """Whether this build has the CUDA backend."""
    return _C._cuda_available()


def preferred_linalg_library(backend=None):
    return "default"


def enable_flash_sdp(enabled):
    _sdp["flash"] = bool(enabled)


def flash_sdp_enabled():
    return _sdp["flash"]


def enable_mem_efficient_sdp(enabled):
    _sdp["mem_efficient"] = bool(enabled)


def mem_efficient_sdp_enabled():
    return _sdp["mem_efficient"]


def enable_math_sdp(enabled):
    _sdp["math"] = bool(enabled)


def math_sdp_enabled():
    return _sdp["math"]


def enable_cudnn_sdp(enabled):
    _sdp["cudnn"] = bool(enabled)


def cudnn_sdp_enabled():
    return _sdp["cudnn"]
