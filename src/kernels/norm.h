// The p-norm of the rows of a contiguous [outer, inner] tensor (linalg.vector_norm,
// ops/norm_ops.cpp): CPU in kernels/norm.cpp, CUDA in cuda/row_stats.cu (Note [Kernel registry]).
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

// out [outer] (float32 / float64, rows' dtype) = the p-norm of each row, p any order including
// +-inf and 0; NaN propagates.
void RowNorm(const Tensor& rows, int64_t outer, int64_t inner, double p, const Tensor& out);

namespace kernels {
struct RowNormKernel {
  static constexpr const char* kName = "row_norm";
  using Fn = void (*)(const Tensor& rows, int64_t outer, int64_t inner, double p, const Tensor& out);
  using Writes = KernelWrites<4>;
};
}  // namespace kernels

}  // namespace oneflow
