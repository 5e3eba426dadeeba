// CPU kernels of where and masked_fill (kernels/where.h): one pass over a broadcast plan.
#include "kernels/where.h"

#include <type_traits>

#include "core/dtype.h"
#include "kernels/loop.h"

namespace oneflow {

namespace {

void WhereCpu(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  const Tensor* ops[4] = {&out, &cond, &a, &b};
  const LoopPlan plan = MakePlan(out.sizes(), ops, 4);
  DispatchAllAndComplex(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    RunLoop(plan, [](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * s[0]) =
            *reinterpret_cast<const bool*>(p[1] + i * s[1]) ? *reinterpret_cast<const T*>(p[2] + i * s[2])
                                                             : *reinterpret_cast<const T*>(p[3] + i * s[3]);
    });
  });
}

void MaskedFillCpu(const Tensor& out, const Tensor& in, const Tensor& mask, const Scalar& v) {
  const Tensor* ops[3] = {&out, &in, &mask};
  const LoopPlan plan = MakePlan(out.sizes(), ops, 3);
  DispatchAllAndComplex(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    const T fill = v.To<T>();
    RunLoop(plan, [fill](char** p, const int64_t* s, int64_t n) {
      if (s[0] == sizeof(T) && s[1] == sizeof(T) && s[2] == 1) {
        T* o = reinterpret_cast<T*>(p[0]);
        const T* a = reinterpret_cast<const T*>(p[1]);
        const bool* m = reinterpret_cast<const bool*>(p[2]);
        for (int64_t i = 0; i < n; ++i) o[i] = m[i] ? fill : a[i];
        return;
      }
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * s[0]) =
            *reinterpret_cast<const bool*>(p[2] + i * s[2]) ? fill : *reinterpret_cast<const T*>(p[1] + i * s[1]);
    });
  });
}

// The CPU kernels in the registry (Note [Kernel registry]); the entries below reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::WhereKernel>(DeviceType::kCPU, &WhereCpu);
  kernels::RegisterKernel<kernels::MaskedFillKernel>(DeviceType::kCPU, &MaskedFillCpu);
  return true;
}();

}  // namespace

void WhereInto(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  kernels::CallKernel<kernels::WhereKernel>(out.device(), out, cond, a, b);
}

void MaskedFillInto(const Tensor& out, const Tensor& in, const Tensor& mask, const Scalar& v) {
  kernels::CallKernel<kernels::MaskedFillKernel>(out.device(), out, in, mask, v);
}

}  // namespace oneflow
