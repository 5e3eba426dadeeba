// Row statistics of contiguous [outer, inner] rows (ops/reduce_stats_ops.cpp makes the rows with
// ReducedLast): var / std (two passes, the mean then the squared deviations, in double) and
// logsumexp. CPU in kernels/row_stats.cpp, CUDA in cuda/row_stats.cu (Note [Kernel registry]).
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

// out [outer] = sum of squared deviations / dof (its sqrt when take_sqrt), and mean [outer] the
// row means when defined; floating rows, out and mean of the rows' dtype.
void RowMoments(const Tensor& rows, int64_t outer, int64_t inner, double dof, bool take_sqrt, const Tensor& out,
                const Tensor& mean);
// out [outer] = max + log(sum exp(x - max)); an infinite max shifts by 0, NaN propagates.
void RowLogSumExp(const Tensor& rows, int64_t outer, int64_t inner, const Tensor& out);

namespace kernels {
struct RowMomentsKernel {
  static constexpr const char* kName = "row_moments";
  using Fn = void (*)(const Tensor& rows, int64_t outer, int64_t inner, double dof, bool take_sqrt, const Tensor& out,
                      const Tensor& mean);
  using Writes = KernelWrites<5, 6>;
};
struct RowLogSumExpKernel {
  static constexpr const char* kName = "row_logsumexp";
  using Fn = void (*)(const Tensor& rows, int64_t outer, int64_t inner, const Tensor& out);
  using Writes = KernelWrites<3>;
};
}  // namespace kernels

}  // namespace oneflow
