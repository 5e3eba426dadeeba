// CPU kernel of index_add (kernels/index_slices.h).
#include "kernels/index_slices.h"

#include <type_traits>

#include "core/dtype.h"

namespace oneflow {

namespace {

void IndexAddCpu(const Tensor& self, const Slices& s, const Tensor& idx, const Tensor& src, const Scalar& alpha) {
  DispatchAllAndComplex(self.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    if constexpr (std::is_same_v<T, bool>) {
      SliceUpdate<T>(self, s, idx, src, [](bool a, bool b) { return a || b; });
    } else {
      const M a = alpha.To<M>();
      if (a == M(1)) {
        SliceUpdate<T>(self, s, idx, src, [](T x, T y) { return static_cast<T>(static_cast<M>(x) + static_cast<M>(y)); });
      } else {
        SliceUpdate<T>(self, s, idx, src, [a](T x, T y) { return static_cast<T>(static_cast<M>(x) + a * static_cast<M>(y)); });
      }
    }
  });
}

// The CPU kernel in the registry (Note [Kernel registry]); the entry below reaches it.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::IndexAddSlicesKernel>(DeviceType::kCPU, &IndexAddCpu);
  return true;
}();

}  // namespace

void IndexAddSlices(const Tensor& self, const Slices& s, const Tensor& idx, const Tensor& src, const Scalar& alpha) {
  kernels::CallKernel<kernels::IndexAddSlicesKernel>(self.device(), self, s, idx, src, alpha);
}

}  // namespace oneflow
