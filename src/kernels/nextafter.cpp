// CPU kernel of the 16-bit nextafter (kernels/nextafter.h).
#include "kernels/nextafter.h"

#include <type_traits>

#include "kernels/functors/math_shared.h"
#include "kernels/loop.h"

namespace oneflow {

namespace {

void Nextafter16Cpu(const Tensor& out, const Tensor& a, const Tensor& b) {
  const Tensor* ops[3] = {&out, &a, &b};
  const LoopPlan plan = MakePlan(out.sizes(), ops, 3);
  auto run = [&](auto tag) {
    using H = typename std::decay_t<decltype(tag)>::type;
    RunLoop(plan, [](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<H*>(p[0] + i * s[0]) =
            Next16(*reinterpret_cast<const H*>(p[1] + i * s[1]), *reinterpret_cast<const H*>(p[2] + i * s[2]));
    });
  };
  if (out.dtype() == DType::kFloat16) run(Tag<Half>{});
  else run(Tag<BFloat16>{});
}

// The CPU kernel in the registry (Note [Kernel registry]); the entry below reaches it.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::Nextafter16Kernel>(DeviceType::kCPU, &Nextafter16Cpu);
  return true;
}();

}  // namespace

void Nextafter16Into(const Tensor& out, const Tensor& a, const Tensor& b) {
  kernels::CallKernel<kernels::Nextafter16Kernel>(out.device(), out, a, b);
}

}  // namespace oneflow
