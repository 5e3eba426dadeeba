// Matrix products of CUDA tensors on cuBLAS (the CUDA side of kernels/gemm.h, same contracts).
#pragma once
#include "core/scalar.h"
#include "core/tensor.h"

namespace oneflow::cuda {

void Gemm(const Tensor& a, const Tensor& b, const Tensor& c, const Scalar& alpha, const Scalar& beta);
void BatchedGemm(const Tensor& a, const Tensor& b, const Tensor& out, const Scalar& alpha, const Scalar& beta);
// flow.backends.cuda.matmul.allow_tf32: float32 products on TF32 tensor cores.
void SetAllowTF32(bool allow);
bool AllowTF32();

}  // namespace oneflow::cuda
