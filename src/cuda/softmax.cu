// softmax / log_softmax / softmin and their backward on CUDA (cuda/ops.h; the CPU kernels are in
// ops/softmax_ops.cpp). One warp per row of the softmax dim (a row is n elements at stride inner):
// lanes stride the row, the max and the sum are warp shuffles. The same NaN rule as the CPU: a
// NaN, or a max of +-inf, makes the whole row NaN. 16-bit floats compute in float.
#include <cuda_runtime.h>

#include <cmath>

#include "cuda/ops.h"
#include "cuda/runtime.h"
#include "cuda/warp.cuh"

namespace oneflow::cuda {

namespace {

template <typename T, int kMode>
__global__ void __launch_bounds__(kWarpThreads * kRowWarps) SoftmaxForwardKernel(const T* x, T* y, int64_t rows,
                                                                                  int64_t n, int64_t inner) {
  using M = OpMath<T>;
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kRowWarps + threadIdx.x / kWarpThreads;
  if (r >= rows) return;  // the whole warp leaves together: the shuffles below see full warps
  const int lane = threadIdx.x % kWarpThreads;
  const int64_t base = (r / inner) * n * inner + r % inner;
  const M sign = kMode == 2 ? M(-1) : M(1);
  M mx = -INFINITY;
  for (int64_t k = lane; k < n; k += kWarpThreads) {
    const M v = sign * static_cast<M>(x[base + k * inner]);
    mx = v > mx ? v : mx;
  }
  mx = WarpMax(mx);
  M sum = 0;
  for (int64_t k = lane; k < n; k += kWarpThreads) sum += DevExp(sign * static_cast<M>(x[base + k * inner]) - mx);
  sum = WarpSum(sum);
  if constexpr (kMode == 1) {
    const M ls = DevLog(sum);
    for (int64_t k = lane; k < n; k += kWarpThreads)
      y[base + k * inner] = static_cast<T>((static_cast<M>(x[base + k * inner]) - mx) - ls);
  } else {
    const M f = M(1) / sum;
    for (int64_t k = lane; k < n; k += kWarpThreads)
      y[base + k * inner] = static_cast<T>(DevExp(sign * static_cast<M>(x[base + k * inner]) - mx) * f);
  }
}

template <typename T, bool kLog>
__global__ void __launch_bounds__(kWarpThreads * kRowWarps) SoftmaxBackwardKernel(const T* g, const T* y, T* out,
                                                                                   int64_t rows, int64_t n,
                                                                                   int64_t inner) {
  using M = OpMath<T>;
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kRowWarps + threadIdx.x / kWarpThreads;
  if (r >= rows) return;
  const int lane = threadIdx.x % kWarpThreads;
  const int64_t base = (r / inner) * n * inner + r % inner;
  M s = 0;
  for (int64_t k = lane; k < n; k += kWarpThreads) {
    const int64_t i = base + k * inner;
    s += kLog ? static_cast<M>(g[i]) : static_cast<M>(g[i]) * static_cast<M>(y[i]);
  }
  s = WarpSum(s);
  for (int64_t k = lane; k < n; k += kWarpThreads) {
    const int64_t i = base + k * inner;
    const M gv = static_cast<M>(g[i]), yv = static_cast<M>(y[i]);
    out[i] = static_cast<T>(kLog ? gv - DevExp(yv) * s : yv * (gv - s));
  }
}

}  // namespace

void SoftmaxForward(const Tensor& x, const Tensor& out, int64_t outer, int64_t n, int64_t inner, int mode) {
  const int64_t rows = outer * inner;
  if (rows == 0 || n == 0) return;
  const int dev = out.device().index;
  DeviceGuard guard(dev);
  const unsigned blocks = RowBlocks(rows, "softmax");
  auto stream = static_cast<cudaStream_t>(Stream(dev));
  DispatchFloat(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    const T* xp = x.ptr<T>();
    T* yp = out.ptr<T>();
    if (mode == 0) SoftmaxForwardKernel<T, 0><<<blocks, kWarpThreads * kRowWarps, 0, stream>>>(xp, yp, rows, n, inner);
    else if (mode == 1) SoftmaxForwardKernel<T, 1><<<blocks, kWarpThreads * kRowWarps, 0, stream>>>(xp, yp, rows, n, inner);
    else SoftmaxForwardKernel<T, 2><<<blocks, kWarpThreads * kRowWarps, 0, stream>>>(xp, yp, rows, n, inner);
  });
  CheckLaunch("the softmax kernel");
}

void SoftmaxBackward(const Tensor& g, const Tensor& y, const Tensor& out, int64_t outer, int64_t n, int64_t inner,
                     bool log) {
  const int64_t rows = outer * inner;
  if (rows == 0 || n == 0) return;
  const int dev = out.device().index;
  DeviceGuard guard(dev);
  const unsigned blocks = RowBlocks(rows, "softmax_backward");
  auto stream = static_cast<cudaStream_t>(Stream(dev));
  DispatchFloat(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    if (log)
      SoftmaxBackwardKernel<T, true><<<blocks, kWarpThreads * kRowWarps, 0, stream>>>(g.ptr<T>(), y.ptr<T>(), out.ptr<T>(), rows, n, inner);
    else
      SoftmaxBackwardKernel<T, false><<<blocks, kWarpThreads * kRowWarps, 0, stream>>>(g.ptr<T>(), y.ptr<T>(), out.ptr<T>(), rows, n, inner);
  });
  CheckLaunch("the softmax backward kernel");
}

}  // namespace oneflow::cuda
