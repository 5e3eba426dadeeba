// cumsum / cumprod / logcumsumexp and cummax / cummin on CUDA: the kernels of kernels/scan.h. The
// CPU's arithmetic: accumulators in double (floating types) or int64 (integers), one sequential pass per (outer, inner) line, one
// thread per line, so results equal the CPU's. One long line alone (outer = inner = 1) is split
// into chunks: chunk totals, their prefix, then each chunk scanned from its offset (the CPU does
// the same over its threads; the association differs, the accumulator is still double).
#include <cuda_runtime.h>

#include <cmath>

#include "cuda/index.h"
#include "cuda/runtime.h"
#include "decl/empty.h"
#include "kernels/scan.h"
#include "ops/copy.h"

namespace oneflow::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int64_t kChunks = 1024;

template <typename T> using Acc = std::conditional_t<std::is_floating_point_v<OpMath<T>>, double, int64_t>;

__device__ inline double LogAddExp(double a, double b) {
  if (a != a || b != b) return a + b;
  const double lo = a < b ? a : b, hi = a < b ? b : a;
  if (lo != hi || isfinite(lo)) return hi + log1p(exp(lo - hi));
  return a;
}

template <int kKind, typename A>
__device__ inline A Step(A acc, A x) {
  if constexpr (kKind == 0) return acc + x;
  else if constexpr (kKind == 1) return acc * x;
  else return LogAddExp(acc, x);
}

template <int kKind, typename A>
__device__ inline A Init() {
  if constexpr (kKind == 0) return A(0);
  else if constexpr (kKind == 1) return A(1);
  else return -INFINITY;
}

template <typename T, typename A>
__device__ inline A Load(const T* p) { return static_cast<A>(static_cast<OpMath<T>>(*p)); }
template <typename T, typename A>
__device__ inline void Store(T* p, A v) { *p = static_cast<T>(static_cast<OpMath<T>>(v)); }

template <typename T, typename A, int kKind>
__global__ void LinesKernel(const T* x, T* y, int64_t lines, int64_t n, int64_t inner, bool reverse) {
  for (int64_t l = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; l < lines;
       l += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t base = l / inner * n * inner + l % inner;
    A acc = Init<kKind, A>();
    for (int64_t s = 0; s < n; ++s) {
      const int64_t k = base + (reverse ? n - 1 - s : s) * inner;
      acc = Step<kKind>(acc, Load<T, A>(x + k));
      Store(y + k, acc);
    }
  }
}

// One line in kChunks chunks: phase 0 writes chunk totals, phase 1 scans chunks from offsets.
template <typename T, typename A, int kKind>
__global__ void ChunkKernel(const T* x, T* y, int64_t n, bool reverse, A* totals, int phase) {
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= kChunks) return;
  const int64_t per = (n + kChunks - 1) / kChunks, b = c * per < n ? c * per : n, e = b + per < n ? b + per : n;
  if (phase == 0) {
    A acc = Init<kKind, A>();
    for (int64_t k = b; k < e; ++k) acc = Step<kKind>(acc, Load<T, A>(x + k));
    totals[c] = acc;
    return;
  }
  A acc = Init<kKind, A>();  // the chunks before this one in scan order
  if (!reverse) {
    for (int64_t s = 0; s < c; ++s) acc = Step<kKind>(acc, totals[s]);
    for (int64_t k = b; k < e; ++k) Store(y + k, acc = Step<kKind>(acc, Load<T, A>(x + k)));
  } else {
    for (int64_t s = kChunks - 1; s > c; --s) acc = Step<kKind>(acc, totals[s]);
    for (int64_t k = e - 1; k >= b; --k) Store(y + k, acc = Step<kKind>(acc, Load<T, A>(x + k)));
  }
}

template <typename T, int kKind>
void Run(const Tensor& x, const Tensor& out, int64_t outer, int64_t n, int64_t inner, bool reverse) {
  using A = std::conditional_t<kKind == 2, double, Acc<T>>;
  const cudaStream_t s = static_cast<cudaStream_t>(Stream(out.device().index));
  const int64_t lines = outer * inner;
  if (lines == 1 && n >= 64 * kChunks) {
    const Tensor totals = Empty(DimVector{kChunks * static_cast<int64_t>(sizeof(A))}, DType::kUInt8, out.device());
    A* tp = reinterpret_cast<A*>(totals.raw_ptr());
    const unsigned blocks = (kChunks + kThreads - 1) / kThreads;
    ChunkKernel<T, A, kKind><<<blocks, kThreads, 0, s>>>(x.ptr<T>(), out.ptr<T>(), n, reverse, tp, 0);
    ChunkKernel<T, A, kKind><<<blocks, kThreads, 0, s>>>(x.ptr<T>(), out.ptr<T>(), n, reverse, tp, 1);
    return;
  }
  const int64_t b = (lines + kThreads - 1) / kThreads;
  LinesKernel<T, A, kKind><<<static_cast<unsigned>(b < (1 << 20) ? b : (1 << 20)), kThreads, 0, s>>>(
      x.ptr<T>(), out.ptr<T>(), lines, n, inner, reverse);
}

// cummax / cummin: the CPU's TakesOver rule (ops/scan_ops.cpp), one thread per line.
template <bool kMax, typename M>
__device__ inline bool TakesOver(M x, M cur) {
  if constexpr (std::is_floating_point_v<M>) {
    if (x != x) return true;
    if (cur != cur) return false;
  }
  return kMax ? x >= cur : x <= cur;
}

template <typename T, bool kMax>
__global__ void CumExtremeKernel(const T* x, T* values, int64_t* indices, int64_t lines, int64_t n, int64_t inner) {
  using M = OpMath<T>;
  for (int64_t l = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; l < lines;
       l += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t base = l / inner * n * inner + l % inner;
    M cur = static_cast<M>(x[base]);
    int64_t at = 0;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t p = base + k * inner;
      const M v = static_cast<M>(x[p]);
      if (TakesOver<kMax>(v, cur)) cur = v, at = k;
      values[p] = static_cast<T>(cur);
      indices[p] = at;
    }
  }
}

void CumExtreme(const Tensor& x, const Tensor& values, const Tensor& indices, int64_t outer, int64_t n,
                int64_t inner, bool max) {
  const int64_t lines = outer * inner;
  if (lines * n == 0) return;
  DeviceGuard guard(values.device().index);
  const cudaStream_t s = static_cast<cudaStream_t>(Stream(values.device().index));
  const int64_t b = (lines + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(b < (1 << 20) ? b : (1 << 20));
  DispatchAll(values.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    if (max)
      CumExtremeKernel<T, true><<<blocks, kThreads, 0, s>>>(x.ptr<T>(), values.ptr<T>(), indices.ptr<int64_t>(),
                                                           lines, n, inner);
    else
      CumExtremeKernel<T, false><<<blocks, kThreads, 0, s>>>(x.ptr<T>(), values.ptr<T>(), indices.ptr<int64_t>(),
                                                            lines, n, inner);
  });
  CheckLaunch("the cummax / cummin kernel");
}

void Scan(const Tensor& x, const Tensor& out, int64_t outer, int64_t n, int64_t inner, int kind, bool reverse) {
  if (outer * n * inner == 0) return;
  DeviceGuard guard(out.device().index);
  DispatchAll(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    if (kind == 0) Run<T, 0>(x, out, outer, n, inner, reverse);
    else if (kind == 1) Run<T, 1>(x, out, outer, n, inner, reverse);
    else if constexpr (std::is_floating_point_v<OpMath<T>>) Run<T, 2>(x, out, outer, n, inner, reverse);
  });
  CheckLaunch("a scan kernel");
}

// The extremes' gradient through the scatter-add kernel of cuda/index.h (atomic adds).
void CumExtremeBackward(const Tensor& g, const Tensor& idx, const Tensor& out, int64_t outer, int64_t n,
                        int64_t inner) {
  // 16-bit gradients are summed in float and rounded once, as the CPU loop does: 16-bit atomic
  // adds round at every add, which loses digits where large gradients cancel.
  const bool narrow = g.dtype() == DType::kFloat16 || g.dtype() == DType::kBFloat16;
  const Tensor acc = narrow ? Empty(out.sizes(), DType::kFloat32, out.device()) : out;
  FillWith(acc, Scalar(0));
  const DimVector sizes{outer, n, inner}, strides{n * inner, inner, 1};  // the [outer, n, inner] views
  const Tensor src = narrow ? CastTo(g, DType::kFloat32) : g;
  ScatterDim(MakeView(acc, sizes, strides, acc.offset()), 1, MakeView(idx, sizes, strides, idx.offset()),
             MakeView(src, sizes, strides, src.offset()), true);
  if (narrow) CopyInto(out, acc);
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterScanKernels() {
  kernels::RegisterKernel<kernels::ScanKernel>(DeviceType::kCUDA, &Scan);
  kernels::RegisterKernel<kernels::CumExtremeKernel>(DeviceType::kCUDA, &CumExtreme);
  kernels::RegisterKernel<kernels::CumExtremeBackwardKernel>(DeviceType::kCUDA, &CumExtremeBackward);
}

}  // namespace oneflow::cuda
