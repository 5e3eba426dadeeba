// CUDA kernel of index_add (kernels/index_slices.h): cuda/index.h's row adds (atomic, any order).
#include <limits>

#include "cuda/index.h"
#include "kernels/index_slices.h"

namespace oneflow::cuda {

namespace {

void IndexAdd(const Tensor& self, const Slices& s, const Tensor& idx, const Tensor& src, const Scalar& alpha) {
  IndexRowsAdd(self, src, idx, s.outer, s.size, s.inner, alpha, std::numeric_limits<int64_t>::min(),
               Tensor());
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterIndexSlicesKernels() {
  kernels::RegisterKernel<kernels::IndexAddSlicesKernel>(DeviceType::kCUDA, &IndexAdd);
}

}  // namespace oneflow::cuda
