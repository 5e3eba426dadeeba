// nextafter of float16 / bfloat16 (ops/math_ops.cpp): the step in the 16-bit format itself (Next16,
// kernels/functors/math_shared.h), not float's. CPU in kernels/nextafter.cpp, CUDA in
// cuda/nextafter_entry.cpp (Note [Kernel registry]).
#pragma once
#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

// out (the broadcast shape, float16 or bfloat16) = nextafter(a, b), a and b of out's dtype
// (either may be a host scalar when out is on a device).
void Nextafter16Into(const Tensor& out, const Tensor& a, const Tensor& b);

namespace kernels {
struct Nextafter16Kernel {
  static constexpr const char* kName = "nextafter16";
  using Fn = void (*)(const Tensor& out, const Tensor& a, const Tensor& b);
  using Writes = KernelWrites<0>;
};
}  // namespace kernels

}  // namespace oneflow
