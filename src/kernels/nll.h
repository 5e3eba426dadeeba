// The rows of nll_loss / cross_entropy and their gradients (ops/loss_nll*.cpp check the
// arguments, range-check the targets on the host and reduce the per-position losses): x is
// contiguous [outer, classes, inner]; t (int64, range-checked) holds one class per position or is
// undefined for probability targets q (contiguous, x's shape, float64); w: float64 [classes];
// every tensor on x's device. CPU in kernels/nll.cpp, CUDA in cuda/nll.cu (Note [Kernel
// registry]).
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

struct ClassRows {
  int64_t outer, classes, inner;
  int64_t ignore_index;
  double smoothing;
  bool log_softmax;  // cross_entropy; nll_loss takes log-probabilities
};

// Per-position losses (float64 [outer * inner]), 0 at ignored positions.
void ClassRowLosses(const Tensor& x, const Tensor& t, const Tensor& q, const Tensor& w, const ClassRows& g,
                    const Tensor& loss);
// cross_entropy's gradient: s (float64 per position, 0 where ignored) times (A softmax - B), A and
// B as in ops/loss_nll_backward_ops.cpp; wall = sum of w.
void CrossEntropyRowGrads(const Tensor& x, const Tensor& t, const Tensor& q, const Tensor& w, const Tensor& s,
                          const ClassRows& g, double wall, const Tensor& out);
// The gradients' per-position scales: s (float64 [positions], the kernel's device) =
// t[i] == ignore_index ? 0 : g / divisor, g the incoming gradient (contiguous float64, one value
// per position when per_position, else one value, on s's device) and t the range-checked class
// targets on the host (undefined for probability targets: every position kept).
void NllGradScales(const Tensor& g, const Tensor& t, int64_t ignore_index, bool per_position, double divisor,
                   const Tensor& s);
// nll_loss's gradient: out (zeroed) gets -w[y] * s at each (position, y) that is not ignored.
void NllRowGrads(const Tensor& t, const Tensor& w, const Tensor& s, const ClassRows& g, const Tensor& out);

namespace kernels {
struct ClassRowLossesKernel {
  static constexpr const char* kName = "nll_loss";
  using Fn = void (*)(const Tensor& x, const Tensor& t, const Tensor& q, const Tensor& w, const ClassRows& g,
                      const Tensor& loss);
  using Writes = KernelWrites<5>;
};
struct CrossEntropyRowGradsKernel {
  static constexpr const char* kName = "cross_entropy_backward";
  using Fn = void (*)(const Tensor& x, const Tensor& t, const Tensor& q, const Tensor& w, const Tensor& s,
                      const ClassRows& g, double wall, const Tensor& out);
  using Writes = KernelWrites<7>;
};
struct NllGradScalesKernel {
  static constexpr const char* kName = "nll_grad_scales";
  using Fn = void (*)(const Tensor& g, const Tensor& t, int64_t ignore_index, bool per_position, double divisor,
                      const Tensor& s);
  using Writes = KernelWrites<5>;
};
struct NllRowGradsKernel {
  static constexpr const char* kName = "nll_loss_backward";
  using Fn = void (*)(const Tensor& t, const Tensor& w, const Tensor& s, const ClassRows& g, const Tensor& out);
  using Writes = KernelWrites<4>;
};
}  // namespace kernels

}  // namespace oneflow
