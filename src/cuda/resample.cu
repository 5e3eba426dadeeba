// interpolate's separable passes on CUDA (ops/resample_ops.cpp): one thread per output element
// sums its taps (CSR: start / idx / w) in the CPU pass's order. The backward runs the same kernel
// with the transposed taps, built on the host, so it gathers too (no atomics, a fixed order).
#include <cuda_runtime.h>

#include "cuda/launch.cuh"
#include "cuda/ops.h"
#include "cuda/runtime.h"

namespace oneflow::cuda {

namespace {

template <typename In, typename Out, typename M>
__global__ void ResampleKernel(const In* x, Out* y, int64_t n_in, int64_t n_out, int64_t inner, int64_t total,
                               const int64_t* start, const int64_t* idx, const M* w) {
  OF_GRID_LOOP(e, total) {
    const int64_t k = e % inner, p = e / inner % n_out, o = e / inner / n_out;
    const In* xo = x + o * n_in * inner + k;
    M acc = 0;
    for (int64_t j = start[p]; j < start[p + 1]; ++j) acc += w[j] * static_cast<M>(xo[idx[j] * inner]);
    y[e] = static_cast<Out>(acc);
  }
}

}  // namespace

void ResamplePass(const Tensor& x, const Tensor& y, int64_t outer, int64_t n_in, int64_t n_out, int64_t inner,
                  const Tensor& start, const Tensor& idx, const Tensor& w) {
  const int64_t total = outer * n_out * inner;
  if (total == 0) return;
  DeviceGuard guard(y.device().index);
  const cudaStream_t s = static_cast<cudaStream_t>(Stream(y.device().index));
  DispatchFloat(x.dtype(), [&](auto in_tag) {
    using In = typename decltype(in_tag)::type;
    DispatchFloat(y.dtype(), [&](auto out_tag) {
      using Out = typename decltype(out_tag)::type;
      // The taps' type: double when either side is (the float64 op), else float.
      using M = std::conditional_t<std::is_same_v<In, double> || std::is_same_v<Out, double>, double, float>;
      OF_ASSERT(w.dtype() == (std::is_same_v<M, double> ? DType::kFloat64 : DType::kFloat32))
          << "resample taps of dtype " << DTypeName(w.dtype());
      ResampleKernel<In, Out, M><<<GridFor(total), kGridThreads, 0, s>>>(
          x.ptr<In>(), y.ptr<Out>(), n_in, n_out, inner, total, start.ptr<int64_t>(), idx.ptr<int64_t>(), w.ptr<M>());
    });
  });
  CheckLaunch("the interpolate kernel");
}

}  // namespace oneflow::cuda
