// softmax / log_softmax / softmin and their backward on CUDA (cuda/ops.h; the CPU kernels are in
// ops/softmax_ops.cpp). One warp per row of the softmax dim (a row is n elements at stride inner):
// lanes stride the row, the max and the sum are warp shuffles. The same NaN rule as the CPU: a
// NaN, or a max of +-inf, makes the whole row NaN. 16-bit floats compute in float.
#include <cuda_runtime.h>

#include <cmath>
#include <type_traits>

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

// Note [Cached softmax rows]: a contiguous row (inner == 1) of 1K to 8K elements is one block's
// work, each thread keeping its kPer elements in registers, so the row is read once (the warp
// kernels above read it three times, twice for the backward: at 8K columns those re-reads miss
// L2 and cost a third of the bandwidth). Same formulas and NaN rule; the sums' order differs.
constexpr int kCachedThreads = 256;
constexpr int64_t kCachedMin = 1024, kCachedMax = int64_t(kCachedThreads) * 32;

template <typename T, int kMode, int kPer>
__global__ void __launch_bounds__(kCachedThreads) SoftmaxCachedKernel(const T* x, T* y, int64_t n) {
  using M = OpMath<T>;
  const int64_t base = static_cast<int64_t>(blockIdx.x) * n;
  const M sign = kMode == 2 ? M(-1) : M(1);
  M v[kPer];
  M mx = -INFINITY;
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int64_t k = threadIdx.x + static_cast<int64_t>(i) * kCachedThreads;
    v[i] = k < n ? sign * static_cast<M>(x[base + k]) : M(-INFINITY);
    mx = v[i] > mx ? v[i] : mx;
  }
  mx = BlockMax(mx);
  M sum = 0;
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    if (threadIdx.x + static_cast<int64_t>(i) * kCachedThreads >= n) continue;
    const M e = DevExp(v[i] - mx);
    if constexpr (kMode != 1) v[i] = e;
    sum += e;
  }
  sum = BlockSum(sum);
  const M post = kMode == 1 ? DevLog(sum) : M(1) / sum;
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int64_t k = threadIdx.x + static_cast<int64_t>(i) * kCachedThreads;
    if (k < n) y[base + k] = static_cast<T>(kMode == 1 ? (v[i] - mx) - post : v[i] * post);
  }
}

template <typename T, bool kLog, int kPer>
__global__ void __launch_bounds__(kCachedThreads) SoftmaxBackwardCachedKernel(const T* g, const T* y, T* out,
                                                                                int64_t n) {
  using M = OpMath<T>;
  const int64_t base = static_cast<int64_t>(blockIdx.x) * n;
  M gv[kPer], yv[kPer];
  M s = 0;
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int64_t k = threadIdx.x + static_cast<int64_t>(i) * kCachedThreads;
    gv[i] = k < n ? static_cast<M>(g[base + k]) : M(0);
    yv[i] = k < n ? static_cast<M>(y[base + k]) : M(0);
    s += kLog ? gv[i] : gv[i] * yv[i];
  }
  s = BlockSum(s);
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int64_t k = threadIdx.x + static_cast<int64_t>(i) * kCachedThreads;
    if (k < n) out[base + k] = static_cast<T>(kLog ? gv[i] - DevExp(yv[i]) * s : yv[i] * (gv[i] - s));
  }
}

// Whether a row takes the cached kernels, and how many elements each thread keeps (8, 16 or 32).
bool Cached(int64_t n, int64_t inner) { return inner == 1 && n > kCachedMin && n <= kCachedMax; }
template <typename F>
void WithPer(int64_t n, F&& f) {
  if (n <= kCachedThreads * 8) return f(std::integral_constant<int, 8>{});
  if (n <= kCachedThreads * 16) return f(std::integral_constant<int, 16>{});
  return f(std::integral_constant<int, 32>{});
}

unsigned CachedBlocks(int64_t rows, const char* op) {
  OF_CHECK(rows < (int64_t(1) << 31)) << op << "(): too many rows (" << rows << ") for one CUDA launch";
  return static_cast<unsigned>(rows);
}

}  // namespace

void SoftmaxForward(const Tensor& x, const Tensor& out, int64_t outer, int64_t n, int64_t inner, int mode) {
  const int64_t rows = outer * inner;
  if (rows == 0 || n == 0) return;
  const int dev = out.device().index;
  DeviceGuard guard(dev);
  auto stream = static_cast<cudaStream_t>(Stream(dev));
  if (Cached(n, inner)) {  // Note [Cached softmax rows]
    const unsigned blocks = CachedBlocks(rows, "softmax");
    DispatchFloat(out.dtype(), [&](auto tag) {
      using T = typename std::decay_t<decltype(tag)>::type;
      WithPer(n, [&](auto per) {
        constexpr int P = decltype(per)::value;
        const T* xp = x.ptr<T>();
        T* yp = out.ptr<T>();
        if (mode == 0) SoftmaxCachedKernel<T, 0, P><<<blocks, kCachedThreads, 0, stream>>>(xp, yp, n);
        else if (mode == 1) SoftmaxCachedKernel<T, 1, P><<<blocks, kCachedThreads, 0, stream>>>(xp, yp, n);
        else SoftmaxCachedKernel<T, 2, P><<<blocks, kCachedThreads, 0, stream>>>(xp, yp, n);
      });
    });
    CheckLaunch("the softmax kernel");
    return;
  }
  const unsigned blocks = RowBlocks(rows, "softmax");
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
  auto stream = static_cast<cudaStream_t>(Stream(dev));
  if (Cached(n, inner)) {  // Note [Cached softmax rows]
    const unsigned blocks = CachedBlocks(rows, "softmax_backward");
    DispatchFloat(out.dtype(), [&](auto tag) {
      using T = typename std::decay_t<decltype(tag)>::type;
      WithPer(n, [&](auto per) {
        constexpr int P = decltype(per)::value;
        if (log)
          SoftmaxBackwardCachedKernel<T, true, P><<<blocks, kCachedThreads, 0, stream>>>(g.ptr<T>(), y.ptr<T>(),
                                                                                         out.ptr<T>(), n);
        else
          SoftmaxBackwardCachedKernel<T, false, P><<<blocks, kCachedThreads, 0, stream>>>(g.ptr<T>(), y.ptr<T>(),
                                                                                          out.ptr<T>(), n);
      });
    });
    CheckLaunch("the softmax backward kernel");
    return;
  }
  const unsigned blocks = RowBlocks(rows, "softmax_backward");
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
