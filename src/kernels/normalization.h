// Normalisation kernels (batch, layer and group norm), fused forward and backward, float32 and
// float64 (half types are computed in float32 by the ops). Tensors are contiguous; statistics
// are per channel (batch norm), per row (layer norm) or per (sample, group) (group norm).
// Every statistic is two-pass (mean, then the mean squared deviation), as PyTorch's CPU kernels,
// so a large mean does not cancel the variance. Hand-written rather than oneDNN: oneDNN has no
// float64, no layer/group-norm weight gradients in PyTorch's layout without reorders, and the
// measured float32 times are in docs/decisions.md.
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

// x viewed as [n, c, s]. Training: writes mean/invstd (per channel) from the batch; eval: they
// are given (from the running statistics). Then y = (x - mean) * invstd * w + b.
void BatchNormStats(const Tensor& x, int64_t n, int64_t c, int64_t s, double eps, const Tensor& mean,
                    const Tensor& invstd, const Tensor& var_unbiased);
void BatchNormApply(const Tensor& x, int64_t n, int64_t c, int64_t s, const Tensor& mean, const Tensor& invstd,
                    const Tensor& weight, const Tensor& bias, const Tensor& y);
// Gradients; dx/dw/db may be undefined (not wanted). training: mean/invstd are batch statistics
// (dx gets the terms through them); eval: constants.
void BatchNormBackward(const Tensor& dy, const Tensor& x, int64_t n, int64_t c, int64_t s, const Tensor& mean,
                       const Tensor& invstd, const Tensor& weight, bool training, const Tensor& dx,
                       const Tensor& dw, const Tensor& db);

// x viewed as [rows, cols] normalised over cols; weight/bias have cols elements (may be undefined).
void LayerNormForward(const Tensor& x, int64_t rows, int64_t cols, double eps, const Tensor& weight,
                      const Tensor& bias, const Tensor& y, const Tensor& mean, const Tensor& rstd);
void LayerNormBackward(const Tensor& dy, const Tensor& x, int64_t rows, int64_t cols, const Tensor& mean,
                       const Tensor& rstd, const Tensor& weight, const Tensor& dx, const Tensor& dw,
                       const Tensor& db);

// x viewed as [n, c, s] with c split into g groups; mean/rstd are [n, g].
void GroupNormForward(const Tensor& x, int64_t n, int64_t c, int64_t s, int64_t g, double eps,
                      const Tensor& weight, const Tensor& bias, const Tensor& y, const Tensor& mean,
                      const Tensor& rstd);
void GroupNormBackward(const Tensor& dy, const Tensor& x, int64_t n, int64_t c, int64_t s, int64_t g,
                       const Tensor& mean, const Tensor& rstd, const Tensor& weight, const Tensor& dx,
                       const Tensor& dw, const Tensor& db);

// Their kernel interfaces (Note [Kernel registry]): CPU in kernels/normalization.cpp, CUDA in
// cuda/normalization.cu.
namespace kernels {
struct BatchNormStatsKernel {
  static constexpr const char* kName = "batch_norm_stats";
  using Fn = void (*)(const Tensor& x, int64_t n, int64_t c, int64_t s, double eps, const Tensor& mean,
      const Tensor& invstd, const Tensor& var_unbiased);
  using Writes = KernelWrites<5, 6, 7>;
};
struct BatchNormApplyKernel {
  static constexpr const char* kName = "batch_norm_apply";
  using Fn = void (*)(const Tensor& x, int64_t n, int64_t c, int64_t s, const Tensor& mean, const Tensor& invstd,
      const Tensor& weight, const Tensor& bias, const Tensor& y);
  using Writes = KernelWrites<8>;
};
struct BatchNormBackwardKernel {
  static constexpr const char* kName = "batch_norm_backward";
  using Fn = void (*)(const Tensor& dy, const Tensor& x, int64_t n, int64_t c, int64_t s, const Tensor& mean,
      const Tensor& invstd, const Tensor& weight, bool training, const Tensor& dx, const Tensor& dw,
      const Tensor& db);
  using Writes = KernelWrites<9, 10, 11>;
};
struct LayerNormForwardKernel {
  static constexpr const char* kName = "layer_norm_forward";
  using Fn = void (*)(const Tensor& x, int64_t rows, int64_t cols, double eps, const Tensor& weight,
      const Tensor& bias, const Tensor& y, const Tensor& mean, const Tensor& rstd);
  using Writes = KernelWrites<6, 7, 8>;
};
struct LayerNormBackwardKernel {
  static constexpr const char* kName = "layer_norm_backward";
  using Fn = void (*)(const Tensor& dy, const Tensor& x, int64_t rows, int64_t cols, const Tensor& mean,
      const Tensor& rstd, const Tensor& weight, const Tensor& dx, const Tensor& dw, const Tensor& db);
  using Writes = KernelWrites<7, 8, 9>;
};
struct GroupNormForwardKernel {
  static constexpr const char* kName = "group_norm_forward";
  using Fn = void (*)(const Tensor& x, int64_t n, int64_t c, int64_t s, int64_t g, double eps, const Tensor& weight,
      const Tensor& bias, const Tensor& y, const Tensor& mean, const Tensor& rstd);
  using Writes = KernelWrites<8, 9, 10>;
};
struct GroupNormBackwardKernel {
  static constexpr const char* kName = "group_norm_backward";
  using Fn = void (*)(const Tensor& dy, const Tensor& x, int64_t n, int64_t c, int64_t s, int64_t g,
      const Tensor& mean, const Tensor& rstd, const Tensor& weight, const Tensor& dx, const Tensor& dw,
      const Tensor& db);
  using Writes = KernelWrites<9, 10, 11>;
};
}  // namespace kernels


}  // namespace oneflow
