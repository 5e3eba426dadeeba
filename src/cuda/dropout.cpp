// CUDA kernels of dropout (kernels/dropout.h): cuda/random.cu's launches, each drawing the words
// of the blocks the op reserved.
#include "cuda/ops.h"
#include "decl/expand.h"
#include "kernels/dropout.h"
#include "ops/copy.h"

namespace oneflow::cuda {

namespace {

void DropoutCuda(const Tensor& x, const Tensor& out, const Tensor& mask, uint32_t bound, double scale,
                 const PhiloxSeed& key) {
  Dropout(x, out, mask, bound, scale, key.seed, key.offset);
}

void NoiseCuda(const Tensor& out, uint32_t bound, double keep_value, const PhiloxSeed& key) {
  BernoulliNoise(out, bound, keep_value, key.seed, key.offset);
}

// The one-shape kernel; a broadcast operand (feature dropout's mask) is expanded first, so the
// result is the CPU kernel's arithmetic either way.
void BackwardCuda(const Tensor& grad, const Tensor& mask, double scale, const Tensor& out) {
  auto full = [&](const Tensor& t) { return Contiguous(t.sizes() == out.sizes() ? t : Expand(t, out.sizes())); };
  DropoutBackwardSameShape(full(grad), full(mask), scale, out);
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterDropoutKernels() {
  kernels::RegisterKernel<kernels::DropoutKernel>(DeviceType::kCUDA, &DropoutCuda);
  kernels::RegisterKernel<kernels::DropoutNoiseKernel>(DeviceType::kCUDA, &NoiseCuda);
  kernels::RegisterKernel<kernels::DropoutBackwardKernel>(DeviceType::kCUDA, &BackwardCuda);
}

}  // namespace oneflow::cuda
