// CUDA kernel of interpolate and its backward (kernels/resample.h): the taps (transposed for the
// backward) made on the host and uploaded, then one cuda/resample.cu pass per spatial dim, the
// intermediate shapes in the math type, the last pass into y.
#include <type_traits>
#include <vector>

#include "cuda/ops.h"
#include "decl/empty.h"
#include "kernels/resample.h"
#include "ops/copy.h"

namespace oneflow::cuda {

namespace {

// The backward's taps: input position i reads the output positions p whose taps read i, with
// their weights, in increasing p (the order PassT adds them in).
template <typename M>
Taps<M> Transposed(const Taps<M>& t, int64_t n_in) {
  std::vector<int64_t> count(n_in + 1, 0);
  for (int64_t i : t.src) ++count[i + 1];
  Taps<M> r;
  r.start.assign(n_in + 1, 0);
  for (int64_t i = 0; i < n_in; ++i) r.start[i + 1] = r.start[i] + count[i + 1];
  r.src.resize(t.src.size());
  r.w.resize(t.w.size());
  std::vector<int64_t> at(r.start.begin(), r.start.end() - 1);
  for (size_t p = 0; p + 1 < t.start.size(); ++p)
    for (int64_t j = t.start[p]; j < t.start[p + 1]; ++j) {
      r.src[at[t.src[j]]] = static_cast<int64_t>(p);
      r.w[at[t.src[j]]++] = t.w[j];
    }
  return r;
}

// A host vector as a 1-d tensor on `device`.
template <typename V>
Tensor Uploaded(const std::vector<V>& v, DType dt, const Device& device) {
  Tensor t = Empty(DimVector{static_cast<int64_t>(v.size())}, dt);
  std::copy(v.begin(), v.end(), t.data<V>());
  return MovedTo(t, device);
}

// Resample's passes on the device: the taps (transposed for the backward) made on the host,
// the intermediate shapes in the math type, the last pass into y.
template <typename T>
void ResampleOnDevice(const ResampleSetup& s, const Tensor& x, const Tensor& y, bool backward) {
  using M = OpMath<T>;
  const DType md = std::is_same_v<M, double> ? DType::kFloat64 : DType::kFloat32;
  const int k = s.spatial();
  DimVector cur = backward ? s.out : s.in;
  Tensor src = x;
  for (int step = 0; step < k; ++step) {
    const int d = backward ? step : k - 1 - step;
    Taps<M> t = MakeTaps<M>(s, d);
    if (backward) t = Transposed(t, s.in[d + 2]);
    const int64_t n_from = cur[d + 2], n_to = backward ? s.in[d + 2] : s.out[d + 2];
    int64_t outer, inner;
    PassGeom(cur, d, &outer, &inner);
    cur[d + 2] = n_to;
    const Tensor dst = step == k - 1 ? y : Empty(cur, md, y.device());
    ResamplePass(src, dst, outer, n_from, n_to, inner, Uploaded(t.start, DType::kInt64, y.device()),
                       Uploaded(t.src, DType::kInt64, y.device()), Uploaded(t.w, md, y.device()));
    src = dst;
  }
}
void ResampleCuda(const ResampleSetup& s, const Tensor& x, const Tensor& y, bool backward) {
  DispatchFloat(x.dtype(), [&](auto tag) { ResampleOnDevice<typename std::decay_t<decltype(tag)>::type>(s, x, y, backward); });
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterResampleKernels() {
  kernels::RegisterKernel<kernels::ResampleKernel>(DeviceType::kCUDA, &ResampleCuda);
}

}  // namespace oneflow::cuda
