// CPU kernel of interpolate and its backward (kernels/resample.h): a pass over a dim that is not
// the last one combines whole contiguous rows (vectorised axpy); intermediate shapes in the math
// type.
#include "kernels/resample.h"

#include <type_traits>

#include "core/dtype.h"
#include "core/parallel.h"

namespace oneflow {

namespace {

// One forward pass along a dim: x [outer, n_in, inner] -> y [outer, n_out, inner].
template <typename In, typename Out, typename M>
void Pass(const In* x, Out* y, int64_t outer, int64_t n_in, int64_t n_out, int64_t inner, const Taps<M>& t) {
  const int64_t work = outer * n_out;
  ParallelFor(0, work, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, inner * 4)), [&](int64_t b, int64_t e) {
    std::vector<M> acc(inner);
    for (int64_t r = b; r < e; ++r) {
      const int64_t o = r / n_out, p = r % n_out;
      const In* xo = x + o * n_in * inner;
      Out* yr = y + r * inner;
      if (inner == 1) {
        M v = 0;
        for (int64_t j = t.start[p]; j < t.start[p + 1]; ++j) v += t.w[j] * static_cast<M>(xo[t.src[j]]);
        yr[0] = static_cast<Out>(v);
        continue;
      }
      std::fill(acc.begin(), acc.end(), M(0));
      for (int64_t j = t.start[p]; j < t.start[p + 1]; ++j) {
        const M w = t.w[j];
        const In* row = xo + t.src[j] * inner;
        for (int64_t k = 0; k < inner; ++k) acc[k] += w * static_cast<M>(row[k]);
      }
      for (int64_t k = 0; k < inner; ++k) yr[k] = static_cast<Out>(acc[k]);
    }
  });
}

// The transposed pass: gy [outer, n_out, inner] scattered into gx [outer, n_in, inner] (zeroed).
template <typename In, typename Out, typename M>
void PassT(const In* gy, Out* gx, int64_t outer, int64_t n_in, int64_t n_out, int64_t inner, const Taps<M>& t) {
  ParallelFor(0, outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, n_out * inner * 2)),
              [&](int64_t b, int64_t e) {
    std::vector<M> acc(n_in * inner);
    for (int64_t o = b; o < e; ++o) {
      std::fill(acc.begin(), acc.end(), M(0));
      const In* go = gy + o * n_out * inner;
      for (int64_t p = 0; p < n_out; ++p) {
        const In* grow = go + p * inner;
        for (int64_t j = t.start[p]; j < t.start[p + 1]; ++j) {
          M* arow = acc.data() + t.src[j] * inner;
          const M w = t.w[j];
          for (int64_t k = 0; k < inner; ++k) arow[k] += w * static_cast<M>(grow[k]);
        }
      }
      Out* xo = gx + o * n_in * inner;
      for (int64_t k = 0; k < n_in * inner; ++k) xo[k] = static_cast<Out>(acc[k]);
    }
  });
}

template <typename T>
void Resample(const ResampleSetup& s, const Tensor& x, const Tensor& y, bool backward) {
  using M = OpMath<T>;
  const int k = s.spatial();
  // The shape evolves pass by pass (forward: last dim first; backward: the reverse).
  DimVector cur = backward ? s.out : s.in;
  std::vector<M> buf[2];
  const T* src_t = x.data<T>();
  const M* src_m = nullptr;
  for (int step = 0; step < k; ++step) {
    const int d = backward ? step : k - 1 - step;
    const Taps<M> t = MakeTaps<M>(s, d);
    const int64_t n_from = cur[d + 2], n_to = backward ? s.in[d + 2] : s.out[d + 2];
    int64_t outer, inner;
    PassGeom(cur, d, &outer, &inner);
    const bool last = step == k - 1;
    std::vector<M>& dst = buf[step % 2];
    if (!last) dst.assign(outer * n_to * inner, M(0));
    auto run = [&](auto* out_ptr) {
      if (src_m == nullptr) {
        backward ? PassT(src_t, out_ptr, outer, n_to, n_from, inner, t) : Pass(src_t, out_ptr, outer, n_from, n_to, inner, t);
      } else {
        backward ? PassT(src_m, out_ptr, outer, n_to, n_from, inner, t) : Pass(src_m, out_ptr, outer, n_from, n_to, inner, t);
      }
    };
    if (last) run(y.data<T>()); else run(dst.data());
    cur[d + 2] = n_to;
    src_m = dst.data();
  }
}

void ResampleCpu(const ResampleSetup& s, const Tensor& x, const Tensor& y, bool backward) {
  DispatchFloat(x.dtype(), [&](auto tag) { Resample<typename std::decay_t<decltype(tag)>::type>(s, x, y, backward); });
}

// The CPU kernel in the registry (Note [Kernel registry]); the entry below reaches it.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::ResampleKernel>(DeviceType::kCPU, &ResampleCpu);
  return true;
}();

}  // namespace

void ResampleInto(const ResampleSetup& s, const Tensor& x, const Tensor& y, bool backward) {
  kernels::CallKernel<kernels::ResampleKernel>(y.device(), s, x, y, backward);
}

}  // namespace oneflow
