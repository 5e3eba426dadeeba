// Dropout's fused kernels (ops/dropout_ops.cpp has the checks and makes the outputs): element i
// is kept when draw i of the reserved blocks passes `bound` (kernels/dropout_draws.h), so every
// device keeps the same elements under the same generator state. CPU in kernels/dropout.cpp,
// CUDA in cuda/dropout.cpp (Note [Kernel registry]).
#pragma once
#include <cstdint>

#include "core/generator.h"
#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

// out = keep ? x * scale : 0 and mask = keep; x, out, mask contiguous, one shape.
void DropoutRows(const Tensor& x, const Tensor& out, const Tensor& mask, uint32_t bound, double scale,
                 const PhiloxSeed& key);
// out (contiguous floating) = keep ? keep_value : 0.
void DropoutNoise(const Tensor& out, uint32_t bound, double keep_value, const PhiloxSeed& key);
// out = mask ? grad * scale : 0 in the compute type; grad and mask broadcast to out's shape.
void DropoutGrad(const Tensor& grad, const Tensor& mask, double scale, const Tensor& out);

namespace kernels {
struct DropoutKernel {
  static constexpr const char* kName = "dropout";
  using Fn = void (*)(const Tensor& x, const Tensor& out, const Tensor& mask, uint32_t bound, double scale,
                      const PhiloxSeed& key);
  using Writes = KernelWrites<1, 2>;
};
struct DropoutNoiseKernel {
  static constexpr const char* kName = "dropout_noise";
  using Fn = void (*)(const Tensor& out, uint32_t bound, double keep_value, const PhiloxSeed& key);
  using Writes = KernelWrites<0>;
};
struct DropoutBackwardKernel {
  static constexpr const char* kName = "dropout_backward";
  using Fn = void (*)(const Tensor& grad, const Tensor& mask, double scale, const Tensor& out);
  using Writes = KernelWrites<3>;
};
}  // namespace kernels

}  // namespace oneflow
