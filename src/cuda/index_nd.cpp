// CUDA kernels of the n-d index ops' slice loops (kernels/index_nd.h), over the advanced-indexing
// kernels of cuda/index.h: the index rows are its n positions, a slice its contiguous inner run
// (one pre and one post offset, both 0).
#include <vector>

#include "cuda/index.h"
#include "decl/empty.h"
#include "kernels/index_nd.h"
#include "ops/copy.h"

namespace oneflow::cuda {

namespace {

// The offsets with the pre and post offset, as AdvGeom's `geo` on `device`.
Tensor RowGeometry(const std::vector<int64_t>& offsets, int64_t slice, const Device& device, AdvGeom* a) {
  const int64_t rows = static_cast<int64_t>(offsets.size());
  *a = AdvGeom{rows, 1, 1, slice, 1};
  std::vector<int64_t> geo(offsets);
  geo.push_back(0);
  geo.push_back(0);
  return VectorTensor(geo, device);
}

void GatherRows(const Tensor& src, const Tensor& out, const std::vector<int64_t>& offsets, int64_t slice) {
  AdvGeom a;
  const Tensor geo = RowGeometry(offsets, slice, out.device(), &a);
  AdvGather(src.raw_ptr(), out, geo, a);
}

void AddRows(const Tensor& out, const Tensor& updates, const std::vector<int64_t>& offsets, int64_t slice) {
  AdvGeom a;
  const Tensor geo = RowGeometry(offsets, slice, out.device(), &a);
  AdvPut(out.raw_ptr(), updates, false, geo, a, true);
}

void ZeroRows(const Tensor& out, const std::vector<int64_t>& offsets, int64_t slice) {
  AdvGeom a;
  const Tensor geo = RowGeometry(offsets, slice, out.device(), &a);
  AdvPut(out.raw_ptr(), MovedTo(ScalarToTensor(Scalar(0), out.dtype()), out.device()), true, geo,
         a, false);
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterIndexNdKernels() {
  kernels::RegisterKernel<kernels::NdGatherRowsKernel>(DeviceType::kCUDA, &GatherRows);
  kernels::RegisterKernel<kernels::NdAddRowsKernel>(DeviceType::kCUDA, &AddRows);
  kernels::RegisterKernel<kernels::NdZeroRowsKernel>(DeviceType::kCUDA, &ZeroRows);
}

}  // namespace oneflow::cuda
