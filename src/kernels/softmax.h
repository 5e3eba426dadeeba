// The softmax family's fused kernels (ops/softmax_ops.cpp has the dtype rules and checks): x, y,
// g and out contiguous, viewed as [outer, n, inner] with n the softmax dim. CPU in
// kernels/softmax.cpp, CUDA in cuda/softmax.cu (Note [Kernel registry]).
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

enum class SoftmaxMode { kSoftmax, kLogSoftmax, kSoftmin };  // softmin: softmax of -x

void SoftmaxRows(const Tensor& x, const Tensor& out, int64_t outer, int64_t n, int64_t inner, SoftmaxMode mode);
// softmax: out = y * (g - sum(g * y)); log_softmax: out = g - exp(y) * sum(g).
void SoftmaxRowsBackward(const Tensor& g, const Tensor& y, const Tensor& out, int64_t outer, int64_t n, int64_t inner,
                         bool log);

namespace kernels {
struct SoftmaxForwardKernel {
  static constexpr const char* kName = "softmax";
  using Fn = void (*)(const Tensor& x, const Tensor& out, int64_t outer, int64_t n, int64_t inner,
                      int mode);  // SoftmaxMode's order
  using Writes = KernelWrites<1>;
};
struct SoftmaxBackwardKernel {
  static constexpr const char* kName = "softmax_backward";
  using Fn = void (*)(const Tensor& g, const Tensor& y, const Tensor& out, int64_t outer, int64_t n, int64_t inner,
                      bool log);
  using Writes = KernelWrites<2>;
};
}  // namespace kernels

}  // namespace oneflow
