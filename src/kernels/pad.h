// pad's kernels (ops/padding_ops.cpp checks the arguments and makes the plan): CPU in
// kernels/pad.cpp, CUDA in cuda/pad.cu (Note [Kernel registry]).
#pragma once
#include <cstdint>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

enum class PadMode { kConstant, kReflect, kReplicate, kCircular };

// Each padded dim gets an index map from output position to source position (-1: the constant).
struct PadPlan {
  PadMode mode = PadMode::kConstant;
  DimVector in, out;
  int first = 0;  // first padded dim
  std::vector<std::vector<int64_t>> maps;  // per padded dim: output position -> source (-1: fill)
};

// out (contiguous, the plan's out shape) = x (contiguous) padded, `fill` where a map says -1; at
// least one padded dim, any non-complex dtype.
void PadRows(const Tensor& x, const Tensor& out, const PadPlan& p, const Scalar& fill);
// out (contiguous, the plan's in shape, zeroed) += g (contiguous) through the maps; numbers only.
void PadRowsBackward(const Tensor& g, const Tensor& out, const PadPlan& p);

namespace kernels {
struct PadForwardKernel {
  static constexpr const char* kName = "pad";
  using Fn = void (*)(const Tensor& x, const Tensor& out, const PadPlan& p, const Scalar& fill);
  using Writes = KernelWrites<1>;
};
struct PadBackwardKernel {
  static constexpr const char* kName = "pad_backward";
  using Fn = void (*)(const Tensor& g, const Tensor& out, const PadPlan& p);
  using Writes = KernelWrites<1>;
};
}  // namespace kernels

}  // namespace oneflow
