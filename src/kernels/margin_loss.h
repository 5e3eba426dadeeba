// Row kernels of the margin losses (ops/loss_margin_ops.cpp checks the arguments, casts and
// reduces): CPU in kernels/margin_loss.cpp, CUDA in cuda/margin.cu (Note [Kernel registry]).
// All tensors are contiguous and on one device.
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

// multi_margin_loss per row: x float64 [rows, C], t int64 [rows] (checked in [0, C)), w float64
// [C] or undefined (all 1); loss float64 [rows] = sum_{i != y} max(0, w_y (margin - x_y + x_i))^p / C.
// The gradient: s float64 [rows] (the incoming gradient per row), gx float64 [rows, C].
void MultiMarginRows(const Tensor& x, const Tensor& t, const Tensor& w, int64_t p, double margin, const Tensor& loss);
void MultiMarginGrad(const Tensor& x, const Tensor& t, const Tensor& w, const Tensor& s, int64_t p, double margin,
                     const Tensor& gx);
// multilabel_margin_loss: x float64 [rows, C], t int64 [rows, C] (checked in [-1, C); a row's
// targets are its leading non-negative entries), mark a uint8 [rows, C] scratch buffer; loss / s
// float64 [rows], gx float64 [rows, C].
void MultilabelMarginRows(const Tensor& x, const Tensor& t, const Tensor& mark, const Tensor& loss);
void MultilabelMarginGrad(const Tensor& x, const Tensor& t, const Tensor& mark, const Tensor& s, const Tensor& gx);

namespace kernels {
struct MultiMarginRowsKernel {
  static constexpr const char* kName = "multi_margin_rows";
  using Fn = void (*)(const Tensor& x, const Tensor& t, const Tensor& w, int64_t p, double margin,
                      const Tensor& loss);
  using Writes = KernelWrites<5>;
};
struct MultiMarginGradKernel {
  static constexpr const char* kName = "multi_margin_grad";
  using Fn = void (*)(const Tensor& x, const Tensor& t, const Tensor& w, const Tensor& s, int64_t p, double margin,
                      const Tensor& gx);
  using Writes = KernelWrites<6>;
};
struct MultilabelMarginRowsKernel {
  static constexpr const char* kName = "multilabel_margin_rows";
  using Fn = void (*)(const Tensor& x, const Tensor& t, const Tensor& mark, const Tensor& loss);
  using Writes = KernelWrites<2, 3>;
};
struct MultilabelMarginGradKernel {
  static constexpr const char* kName = "multilabel_margin_grad";
  using Fn = void (*)(const Tensor& x, const Tensor& t, const Tensor& mark, const Tensor& s, const Tensor& gx);
  using Writes = KernelWrites<2, 4>;
};
}  // namespace kernels

}  // namespace oneflow
