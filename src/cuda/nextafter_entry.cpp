// The registry's entry of the 16-bit nextafter on CUDA (kernels/nextafter.h): the pointwise plan
// and launch (host scalars by value), then cuda/nextafter.cu's kernel.
#include "cuda/ops.h"
#include "kernels/nextafter.h"
#include "ops/pointwise.h"

namespace oneflow::cuda {

namespace {

void Nextafter16Entry(const Tensor& out, const Tensor& a, const Tensor& b) {
  const Tensor* ops[3] = {&out, &a, &b};
  Nextafter16(MakePlan(out.sizes(), ops, 3, /*any_device=*/true), CudaLaunchOf(ops, 2), out.dtype());
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterNextafterKernels() {
  kernels::RegisterKernel<kernels::Nextafter16Kernel>(DeviceType::kCUDA, &Nextafter16Entry);
}

}  // namespace oneflow::cuda
