#include "kernels/move.h"

#include <cstring>

#include "kernels/loop.h"
#include "ops/copy.h"

namespace oneflow {

void MoveInto(const Tensor& dst, const Tensor& src) {
  OF_ASSERT(dst.dtype() == src.dtype() && dst.sizes() == src.sizes()) << "MoveInto needs equal dtype and shape";
  if (dst.numel() == 0 || dst.device().type == DeviceType::kMeta) return;
  // CUDA tensors: the copy engine's device path (any strides, negative ones included).
  if (dst.device().type == DeviceType::kCUDA || src.device().type == DeviceType::kCUDA) return CopyInto(dst, src);
  const Tensor* ops[2] = {&dst, &src};
  LoopPlan plan = MakePlan(dst.sizes(), ops, 2);
  DispatchWidth(dst.element_size(), [&](auto tag) {
    using U = typename std::decay_t<decltype(tag)>::type;
    constexpr int64_t es = sizeof(U);
    RunLoop(plan, [](char** p, const int64_t* s, int64_t n) {
      U* o = reinterpret_cast<U*>(p[0]);
      const U* a = reinterpret_cast<const U*>(p[1]);
      if (s[0] == es && s[1] == es) {
        std::memcpy(o, a, n * es);
      } else if (s[0] == es && s[1] == -es) {
        for (int64_t i = 0; i < n; ++i) o[i] = a[-i];
      } else if (s[0] == es) {
        const int64_t sa = s[1] / es;
        for (int64_t i = 0; i < n; ++i) o[i] = a[i * sa];
      } else {
        for (int64_t i = 0; i < n; ++i)
          *reinterpret_cast<U*>(p[0] + i * s[0]) = *reinterpret_cast<const U*>(p[1] + i * s[1]);
      }
    });
  });
}

}  // namespace oneflow
