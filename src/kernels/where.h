// Elementwise selection over a broadcast plan (ops/masked_ops.cpp): where and masked_fill, the
// condition / mask already bool. CPU in kernels/where.cpp, CUDA in cuda/select.cu (Note [Kernel
// registry]); the CUDA kernels take host scalars (0-d CPU operands) by copying them over.
#pragma once
#include "core/scalar.h"
#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

// out = cond ? a : b, every operand broadcast to out's shape; a and b of out's dtype.
void WhereInto(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
// out = mask ? v : in, in and mask broadcast to out's shape (out may be `in` itself: in-place).
void MaskedFillInto(const Tensor& out, const Tensor& in, const Tensor& mask, const Scalar& v);

namespace kernels {
struct WhereKernel {
  static constexpr const char* kName = "where";
  using Fn = void (*)(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
  using Writes = KernelWrites<0>;
};
struct MaskedFillKernel {
  static constexpr const char* kName = "masked_fill";
  using Fn = void (*)(const Tensor& out, const Tensor& in, const Tensor& mask, const Scalar& v);
  using Writes = KernelWrites<0>;
};
}  // namespace kernels

}  // namespace oneflow
