// CPU kernels of dropout (kernels/dropout.h).
#include "kernels/dropout.h"

#include <type_traits>

#include "core/dtype.h"
#include "kernels/dropout_draws.h"
#include "kernels/loop.h"

namespace oneflow {

namespace {

void DropoutCpu(const Tensor& x, const Tensor& out, const Tensor& mask, uint32_t bound, double scale,
                const PhiloxSeed& key) {
  DispatchFloat(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const T* xp = x.data<T>();
    T* op = out.data<T>();
    bool* mp = mask.data<bool>();
    const M sc = static_cast<M>(scale);
    ForEachDraw(key, x.numel(), [&](int64_t i, uint32_t u) {
      const bool keep = (u >> 8) < bound;
      mp[i] = keep;
      op[i] = static_cast<T>(keep ? static_cast<M>(xp[i]) * sc : M(0));
    });
  });
}

void NoiseCpu(const Tensor& out, uint32_t bound, double keep_value, const PhiloxSeed& key) {
  DispatchFloat(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    T* o = out.data<T>();
    const T kv = static_cast<T>(static_cast<OpMath<T>>(keep_value)), zero = static_cast<T>(0.0f);
    ForEachDraw(key, out.numel(), [&](int64_t i, uint32_t u) { o[i] = (u >> 8) < bound ? kv : zero; });
  });
}

void BackwardCpu(const Tensor& grad, const Tensor& mask, double scale, const Tensor& out) {
  const Tensor* ops[3] = {&out, &grad, &mask};
  const LoopPlan plan = MakePlan(out.sizes(), ops, 3);
  DispatchFloat(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const M sc = static_cast<M>(scale);
    RunLoop(plan, [sc](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        const M g = static_cast<M>(*reinterpret_cast<const T*>(p[1] + i * s[1]));
        const bool k = *reinterpret_cast<const bool*>(p[2] + i * s[2]);
        *reinterpret_cast<T*>(p[0] + i * s[0]) = static_cast<T>(k ? g * sc : M(0));
      }
    });
  });
}

// The CPU kernels in the registry (Note [Kernel registry]); the entries below reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::DropoutKernel>(DeviceType::kCPU, &DropoutCpu);
  kernels::RegisterKernel<kernels::DropoutNoiseKernel>(DeviceType::kCPU, &NoiseCpu);
  kernels::RegisterKernel<kernels::DropoutBackwardKernel>(DeviceType::kCPU, &BackwardCpu);
  return true;
}();

}  // namespace

void DropoutRows(const Tensor& x, const Tensor& out, const Tensor& mask, uint32_t bound, double scale,
                 const PhiloxSeed& key) {
  kernels::CallKernel<kernels::DropoutKernel>(out.device(), x, out, mask, bound, scale, key);
}

void DropoutNoise(const Tensor& out, uint32_t bound, double keep_value, const PhiloxSeed& key) {
  kernels::CallKernel<kernels::DropoutNoiseKernel>(out.device(), out, bound, keep_value, key);
}

void DropoutGrad(const Tensor& grad, const Tensor& mask, double scale, const Tensor& out) {
  kernels::CallKernel<kernels::DropoutBackwardKernel>(out.device(), grad, mask, scale, out);
}

}  // namespace oneflow
