// Matrix products on OpenBLAS (float32/float64; see docs/decisions.md) with a plain reference
// loop for the other dtypes. Shared by matmul/mm/bmm, the add*mm family, einsum and linalg.
#pragma once
#include "core/scalar.h"
#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

// c = alpha * a @ b + beta * c for 2-D a [m,k], b [k,n] (any strides) and c [m,n] whose columns
// are unit-stride. beta == 0 ignores c's old values (NaN included), as BLAS does.
void Gemm(const Tensor& a, const Tensor& b, const Tensor& c, const Scalar& alpha, const Scalar& beta);
// y = alpha * a @ x + beta * y for a [m,n], x [n], y [m] (any strides).
void Gemv(const Tensor& a, const Tensor& x, const Tensor& y, const Scalar& alpha, const Scalar& beta);
// out[i] = a[i] @ b[i] for 3-D a, b (batch already matched) and contiguous out. Products are
// spread over threads by batch when there are enough of them; else BLAS threads each one.
void BatchedGemm(const Tensor& a, const Tensor& b, const Tensor& out, const Scalar& alpha, const Scalar& beta);
Tensor Select0(const Tensor& t, int64_t i);  // t[i] as a view
// The kernel interfaces of Gemm and BatchedGemm (Note [Kernel registry]): CPU in kernels/gemm.cpp
// (OpenBLAS, reference loops), CUDA in cuda/blas.cpp (cuBLAS).
namespace kernels {
struct GemmKernel {
  static constexpr const char* kName = "gemm";
  using Fn = void (*)(const Tensor& a, const Tensor& b, const Tensor& c, const Scalar& alpha, const Scalar& beta);
  using Writes = KernelWrites<2>;
};
struct BatchedGemmKernel {
  static constexpr const char* kName = "batched_gemm";
  using Fn = void (*)(const Tensor& a, const Tensor& b, const Tensor& out, const Scalar& alpha, const Scalar& beta);
  using Writes = KernelWrites<2>;
};
}  // namespace kernels
// Row-major c[m,n] = alpha * op(a) @ op(b) + beta * c on raw float/double pointers, op(a) = a
// [m,k] (ta: a stored [k,m]) and op(b) = b [k,n] (tb: stored [n,k]); leading dimensions are row
// strides. For kernels that multiply blocks of larger tensors (fused attention). Inside a
// parallel region BLAS runs on the calling thread.
template <typename T>
void BlasGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
              int64_t ldb, T beta, T* c, int64_t ldc);

}  // namespace oneflow
