// cdist's direct form (ops/cdist_ops.cpp; p = 2 on larger inputs takes the GEMM form there, on
// any device): CPU in kernels/cdist.cpp, CUDA in cuda/cdist.cu (Note [Kernel registry]).
#pragma once

#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

// out [batch, r1, r2] = p-norm distances of the rows of a [batch, r1, m] and b [batch, r2, m]; all
// contiguous, float32 or float64.
void CdistRows(const Tensor& a, const Tensor& b, const Tensor& out, double p);

namespace kernels {
struct CdistRowsKernel {
  static constexpr const char* kName = "cdist_rows";
  using Fn = void (*)(const Tensor& a, const Tensor& b, const Tensor& out, double p);
  using Writes = KernelWrites<2>;
};
}  // namespace kernels

}  // namespace oneflow
