// nextafter of float16 / bfloat16 CUDA tensors (kernels/nextafter.h, entered from
// cuda/nextafter_entry.cpp): the CPU's step in the 16-bit
// format (Next16, kernels/functors/math_shared.h) through the pointwise engine, which hands its
// functors OpMath (float) values - exact here, as they are the 16-bit values.
#include "cuda/ops.h"
#include "cuda/pointwise.cuh"
#include "kernels/functors/math_shared.h"

namespace oneflow::cuda {

namespace {
template <typename H>
struct Next16Op {
  OF_HD float operator()(float a, float b) const { return static_cast<float>(Next16(H(a), H(b))); }
};
}  // namespace

void Nextafter16(const LoopPlan& plan, const CudaLaunch& l, DType dt) {
  if (dt == DType::kFloat16) LaunchPointwise<2, Half, Half>(plan, l, Next16Op<Half>{});
  else LaunchPointwise<2, BFloat16, BFloat16>(plan, l, Next16Op<BFloat16>{});
}

}  // namespace oneflow::cuda
