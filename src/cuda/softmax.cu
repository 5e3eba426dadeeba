// softmax / log_softmax / softmin and their backward on CUDA: the kernels of kernels/softmax.h.
// One warp per row of the softmax dim (a row is n elements at stride inner): lanes stride the
// row, the max and the sum are warp shuffles. The same NaN rule as the CPU: a
// NaN, or a max of +-inf, makes the whole row NaN. 16-bit floats compute in float.
#include <cuda_runtime.h>

#include <cmath>
#include <type_traits>

#include "cuda/runtime.h"
#include "cuda/warp.cuh"
#include "kernels/softmax.h"

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
// work, each thread keeping kPer = 8 elements in registers, so the row is read once (the warp
// kernels above read it three times, twice for the backward: at 8K columns those re-reads miss
// L2 and cost a third of the bandwidth). The block grows with the row (256 to 1024 threads)
// rather than each thread's share: 32 kept elements took 80 registers (106-122 backward), which
// left 3 blocks of 256 threads per SM (0.76x PyTorch at 8192 columns on the H100); 8 take 32,
// full occupancy. Same formulas and NaN rule; the sums' order differs.
constexpr int kCachedPer = 8, kCachedMaxThreads = 1024;
constexpr int64_t kCachedMin = 1024, kCachedMax = int64_t(kCachedMaxThreads) * kCachedPer;

template <typename T, int kMode, int kThreads>
__global__ void __launch_bounds__(kThreads) SoftmaxCachedKernel(const T* x, T* y, int n) {
  using M = OpMath<T>;
  x += static_cast<int64_t>(blockIdx.x) * n + threadIdx.x;  // constant offsets below: fewer registers
  y += static_cast<int64_t>(blockIdx.x) * n + threadIdx.x;
  const int left = n - threadIdx.x;  // this thread's i-th element exists when i * kThreads < left
  const M sign = kMode == 2 ? M(-1) : M(1);
  M v[kCachedPer];
  M mx = -INFINITY;
#pragma unroll
  for (int i = 0; i < kCachedPer; ++i) {
    v[i] = i * kThreads < left ? sign * static_cast<M>(x[i * kThreads]) : M(-INFINITY);
    mx = v[i] > mx ? v[i] : mx;
  }
  mx = BlockMax(mx);
  M sum = 0;
#pragma unroll
  for (int i = 0; i < kCachedPer; ++i) {
    if (i * kThreads >= left) continue;
    const M e = DevExp(v[i] - mx);
    if constexpr (kMode != 1) v[i] = e;
    sum += e;
  }
  sum = BlockSum(sum);
  const M post = kMode == 1 ? DevLog(sum) : M(1) / sum;
#pragma unroll
  for (int i = 0; i < kCachedPer; ++i) {
    if (i * kThreads < left) y[i * kThreads] = static_cast<T>(kMode == 1 ? (v[i] - mx) - post : v[i] * post);
  }
}

template <typename T, bool kLog, int kThreads>
__global__ void __launch_bounds__(kThreads) SoftmaxBackwardCachedKernel(const T* g, const T* y, T* out, int n) {
  using M = OpMath<T>;
  const int64_t base = static_cast<int64_t>(blockIdx.x) * n + threadIdx.x;
  g += base, y += base, out += base;
  const int left = n - threadIdx.x;
  M gv[kCachedPer], yv[kCachedPer];
  M s = 0;
#pragma unroll
  for (int i = 0; i < kCachedPer; ++i) {
    gv[i] = i * kThreads < left ? static_cast<M>(g[i * kThreads]) : M(0);
    yv[i] = i * kThreads < left ? static_cast<M>(y[i * kThreads]) : M(0);
    s += kLog ? gv[i] : gv[i] * yv[i];
  }
  s = BlockSum(s);
#pragma unroll
  for (int i = 0; i < kCachedPer; ++i) {
    if (i * kThreads < left) out[i * kThreads] = static_cast<T>(kLog ? gv[i] - DevExp(yv[i]) * s : yv[i] * (gv[i] - s));
  }
}

// Whether a row takes the cached kernels, and their block size (a template constant, so that
// the kept elements' addresses are one pointer plus immediate offsets): 256, 512 or 1024 threads,
// the fewest that hold the row at kCachedPer elements a thread.
bool Cached(int64_t n, int64_t inner) { return inner == 1 && n > kCachedMin && n <= kCachedMax; }
template <typename F>
void WithThreads(int64_t n, F&& f) {
  if (n <= 256 * kCachedPer) return f(std::integral_constant<int, 256>{});
  if (n <= 512 * kCachedPer) return f(std::integral_constant<int, 512>{});
  return f(std::integral_constant<int, kCachedMaxThreads>{});
}

unsigned CachedBlocks(int64_t rows, const char* op) {
  OF_CHECK(rows < (int64_t(1) << 31)) << op << "(): too many rows (" << rows << ") for one CUDA launch";
  return static_cast<unsigned>(rows);
}

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
      WithThreads(n, [&](auto threads) {
        constexpr int B = decltype(threads)::value;
        const T* xp = x.ptr<T>();
        T* yp = out.ptr<T>();
        const int cols = static_cast<int>(n);
        if (mode == 0) SoftmaxCachedKernel<T, 0, B><<<blocks, B, 0, stream>>>(xp, yp, cols);
        else if (mode == 1) SoftmaxCachedKernel<T, 1, B><<<blocks, B, 0, stream>>>(xp, yp, cols);
        else SoftmaxCachedKernel<T, 2, B><<<blocks, B, 0, stream>>>(xp, yp, cols);
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
      WithThreads(n, [&](auto threads) {
        constexpr int B = decltype(threads)::value;
        const int cols = static_cast<int>(n);
        if (log) SoftmaxBackwardCachedKernel<T, true, B><<<blocks, B, 0, stream>>>(g.ptr<T>(), y.ptr<T>(), out.ptr<T>(), cols);
        else SoftmaxBackwardCachedKernel<T, false, B><<<blocks, B, 0, stream>>>(g.ptr<T>(), y.ptr<T>(), out.ptr<T>(), cols);
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

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterSoftmaxKernels() {
  kernels::RegisterKernel<kernels::SoftmaxForwardKernel>(DeviceType::kCUDA, &SoftmaxForward);
  kernels::RegisterKernel<kernels::SoftmaxBackwardKernel>(DeviceType::kCUDA, &SoftmaxBackward);
}

}  // namespace oneflow::cuda
