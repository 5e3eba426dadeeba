"""oneflow.sysconfig: what this build was made with, under upstream OneFlow's names (scripts and
upstream's tests branch on them: `if flow.sysconfig.with_cuda(): ...`). The same answers are
upstream's `flow._oneflow_internal.flags.*`, exported there too."""
import types

from . import version as _version
from ._export import export_value


def with_cuda():
    """Whether this build has the CUDA backend (a GPU may still be absent: flow.cuda.is_available)."""
    return _version.cuda is not None


def get_cuda_version():
    """The CUDA toolkit built against as CUDA_VERSION encodes it (12040 for 12.4); 0 without CUDA."""
    if _version.cuda is None:
        return 0
    major, minor = (int(x) for x in _version.cuda.split(".")[:2])
    return major * 1000 + minor * 10


def with_rdma():
    return False  # no RDMA transport: processes talk through oneflow.distributed (Gloo / NCCL)


def has_rpc_backend_grpc():
    return False  # upstream's multi-machine control plane; processes here join a process group


def has_rpc_backend_local():
    return True  # every process runs its own eager runtime


def with_mlir():
    return False


def with_mlir_cuda_codegen():
    return False


# upstream's flags submodule of its extension, with its names for the same questions
flags = types.ModuleType("oneflow._oneflow_internal.flags", "Build switches (oneflow.sysconfig).")
flags.with_cuda, flags.cuda_version, flags.with_rdma = with_cuda, get_cuda_version, with_rdma
flags.has_rpc_backend_grpc, flags.has_rpc_backend_local = has_rpc_backend_grpc, has_rpc_backend_local
flags.with_mlir, flags.with_mlir_cuda_codegen = with_mlir, with_mlir_cuda_codegen
export_value(flags, "flow._oneflow_internal.flags")
