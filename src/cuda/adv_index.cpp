// CUDA kernels of advanced indexing (kernels/adv_index.h): cuda/index.h's AdvGather / AdvPut over
// the geometry uploaded as one device tensor.
#include <algorithm>

#include "cuda/index.h"
#include "decl/empty.h"
#include "decl/reshape.h"
#include "kernels/adv_index.h"
#include "ops/copy.h"

namespace oneflow::cuda {

namespace {

// The geometry for the CUDA kernels: offsets, pre and post offsets in one device tensor.
Tensor DeviceGeometry(const AdvIndex& a, const Device& device, AdvGeom* g) {
  *g = AdvGeom{a.n, static_cast<int64_t>(a.pre_off.size()), static_cast<int64_t>(a.post_off.size()), a.inner,
               a.inner_stride};
  const int64_t host_n = a.device_offsets.defined() ? 0 : g->n;  // offsets made on the device stay there
  Tensor geo = Empty(DimVector{host_n + g->pre + g->post}, DType::kInt64);
  int64_t* d = geo.data<int64_t>();
  std::copy(a.offsets.begin(), a.offsets.end(), d);
  std::copy(a.pre_off.begin(), a.pre_off.end(), d + host_n);
  std::copy(a.post_off.begin(), a.post_off.end(), d + host_n + g->pre);
  if (!a.device_offsets.defined()) return MovedTo(geo, device);
  Tensor all = Empty(DimVector{g->n + g->pre + g->post}, DType::kInt64, device);
  CopyInto(MakeView(all, DimVector{g->n}, DimVector{1}, 0), Reshape(a.device_offsets, DimVector{g->n}));
  CopyInto(MakeView(all, DimVector{g->pre + g->post}, DimVector{1}, g->n), geo);
  return all;
}

void GatherCuda(const Tensor& self, const AdvIndex& a, const Tensor& out) {
  AdvGeom g;
  const Tensor geo = DeviceGeometry(a, self.device(), &g);
  cuda::AdvGather(static_cast<const char*>(self.storage()->data()), out, geo, g);
}

void PutCuda(const Tensor& self, const AdvIndex& a, const Tensor& values, bool scalar, bool accumulate) {
  const Tensor v = values.device() == self.device() ? values : MovedTo(values, self.device());  // a host scalar
  AdvGeom g;
  const Tensor geo = DeviceGeometry(a, self.device(), &g);
  cuda::AdvPut(static_cast<char*>(self.storage()->data()), v, scalar, geo, g, accumulate);
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterAdvIndexKernels() {
  kernels::RegisterKernel<kernels::AdvGatherKernel>(DeviceType::kCUDA, &GatherCuda);
  kernels::RegisterKernel<kernels::AdvPutKernel>(DeviceType::kCUDA, &PutCuda);
}

}  // namespace oneflow::cuda
