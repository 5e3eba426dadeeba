// CPU kernels of advanced indexing (kernels/adv_index.h): result rows over threads; a put walks
// every index position of a row in order, so repeated indices resolve in order (deterministic).
#include "kernels/adv_index.h"

#include <algorithm>
#include <type_traits>

#include "core/dtype.h"
#include "core/parallel.h"
#include "ops/index_util.h"

namespace oneflow {

namespace {

// Calls f(r, p, q) over the result rows of the put kernels: (pre, post) pairs, each walking
// every index position in order, so repeated indices resolve in order (deterministic).
template <typename F>
void ForPutRows(const AdvIndex& a, const F& f) {
  const int64_t q = a.post_off.size(), rows = a.pre_off.size() * q;
  ParallelFor(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, a.n * a.inner)),
              [&](int64_t b, int64_t e) {
                for (int64_t r = b; r < e; ++r) f(r / q, r % q);
              });
}

void GatherCpu(const Tensor& self, const AdvIndex& a, const Tensor& out) {
  DispatchBySize(self.element_size(), [&](auto tag) {
    using U = typename std::decay_t<decltype(tag)>::type;
    const U* base = static_cast<const U*>(self.storage()->data());
    U* o = out.data<U>();
    const int64_t n = a.n, q = a.post_off.size(), inner = a.inner, is = a.inner_stride;
    const int64_t* offs = a.offsets.data();
    if (!a.has_post) {
      // Rows of the pre dims; the index positions are the contiguous inner loop.
      ParallelFor(0, static_cast<int64_t>(a.pre_off.size()), std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, n)),
                  [&](int64_t b, int64_t e) {
                    for (int64_t p = b; p < e; ++p) {
                      const U* src = base + a.pre_off[p];
                      U* dst = o + p * n;
                      for (int64_t k = 0; k < n; ++k) dst[k] = src[offs[k]];
                    }
                  });
      return;
    }
    const int64_t rows = static_cast<int64_t>(a.pre_off.size()) * n * q;
    ParallelFor(0, rows, std::max<int64_t>(1, kGrainSize / inner), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t p = r / (n * q), k = (r / q) % n, j = r % q;
        const U* src = base + a.pre_off[p] + offs[k] + a.post_off[j];
        U* dst = o + r * inner;
        if (is == 1) {
          for (int64_t i = 0; i < inner; ++i) dst[i] = src[i];
        } else {
          for (int64_t i = 0; i < inner; ++i) dst[i] = src[i * is];
        }
      }
    });
  });
}

void PutCpu(const Tensor& self, const AdvIndex& a, const Tensor& v, bool scalar, bool accumulate) {
  DispatchAllAndComplex(self.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    T* base = static_cast<T*>(self.storage()->data());
    const T* vp = v.data<T>();
    const int64_t n = a.n, q = a.post_off.size(), inner = a.inner, is = a.inner_stride;
    const int64_t* offs = a.offsets.data();
    auto put = [accumulate](T& dst, T x) {
      if (!accumulate) {
        dst = x;
      } else if constexpr (std::is_same_v<T, bool>) {
        dst = dst || x;
      } else {
        dst = static_cast<T>(static_cast<M>(dst) + static_cast<M>(x));
      }
    };
    ForPutRows(a, [&](int64_t p, int64_t j) {
      T* row = base + a.pre_off[p] + a.post_off[j];
      for (int64_t k = 0; k < n; ++k) {
        T* dst = row + offs[k];
        const int64_t at = ((p * n + k) * q + j) * inner;
        for (int64_t i = 0; i < inner; ++i) put(dst[i * is], scalar ? vp[0] : vp[at + i]);
      }
    });
  });
}

// The CPU kernels in the registry (Note [Kernel registry]); the entries below reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::AdvGatherKernel>(DeviceType::kCPU, &GatherCpu);
  kernels::RegisterKernel<kernels::AdvPutKernel>(DeviceType::kCPU, &PutCpu);
  return true;
}();

}  // namespace

void AdvGather(const Tensor& self, const AdvIndex& a, const Tensor& out) {
  kernels::CallKernel<kernels::AdvGatherKernel>(self.device(), self, a, out);
}

void AdvPut(const Tensor& self, const AdvIndex& a, const Tensor& v, bool scalar, bool accumulate) {
  kernels::CallKernel<kernels::AdvPutKernel>(self.device(), self, a, v, scalar, accumulate);
}

}  // namespace oneflow
