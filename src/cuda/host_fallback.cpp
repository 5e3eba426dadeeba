// Note [Host fallback] (ops/host_fallback.h): the non-template half of the op-level fallback, which
// only a CUDA build has (the policy itself, Enabled / Report, is in kernels/registry.cpp).
#include "ops/host_fallback.h"

#include "ops/copy.h"

namespace oneflow::host_fallback {

Tensor ToHostTensor(const Tensor& t) { return OnHost(t); }

Tensor ToDeviceTensor(const Tensor& t, const Device& d) {
  if (!t.defined() || t.device().type != DeviceType::kCPU) return t;
  return MovedTo(t, d);
}

void CopyBack(const Tensor& dst, const Tensor& src) {
  if (dst.is_same(src)) return;
  CopyInto(dst, src);
  dst.BumpVersion();
}

}  // namespace oneflow::host_fallback
