// cuBLAS's switches (cuda/blas.cpp; its products are the CUDA kernels of kernels/gemm.h, registered
// under the same kernel ids, Note [Kernel registry]).
#pragma once

namespace oneflow::cuda {

// flow.backends.cuda.matmul.allow_tf32: float32 products on TF32 tensor cores.
void SetAllowTF32(bool allow);
bool AllowTF32();

}  // namespace oneflow::cuda
