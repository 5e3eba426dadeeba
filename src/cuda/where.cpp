// CUDA kernels of where and masked_fill (kernels/where.h): cuda/select.cu's width-moving kernel
// over the broadcast plan; host scalars among the operands are copied to the device first.
#include <type_traits>

#include "cuda/ops.h"
#include "kernels/loop.h"
#include "kernels/where.h"
#include "ops/copy.h"

namespace oneflow::cuda {

namespace {

Tensor OnDeviceOf(const Tensor& t, const Device& device) { return t.device() == device ? t : MovedTo(t, device); }

void WhereCuda(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  const Device& d = out.device();
  const Tensor c = OnDeviceOf(cond, d), x = OnDeviceOf(a, d), y = OnDeviceOf(b, d);
  const Tensor* ops[4] = {&out, &c, &x, &y};
  WhereSelect(MakePlan(out.sizes(), ops, 4, /*any_device=*/true), out.element_size(), nullptr, d.index);
}

void MaskedFillCuda(const Tensor& out, const Tensor& in, const Tensor& mask, const Scalar& v) {
  const Tensor m = OnDeviceOf(mask, out.device());
  const Tensor* ops[3] = {&out, &m, &in};
  const LoopPlan plan = MakePlan(out.sizes(), ops, 3, /*any_device=*/true);
  DispatchAllAndComplex(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    const T fill = v.To<T>();
    WhereSelect(plan, sizeof(T), &fill, out.device().index);
  });
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterWhereKernels() {
  kernels::RegisterKernel<kernels::WhereKernel>(DeviceType::kCUDA, &WhereCuda);
  kernels::RegisterKernel<kernels::MaskedFillKernel>(DeviceType::kCUDA, &MaskedFillCuda);
}

}  // namespace oneflow::cuda
