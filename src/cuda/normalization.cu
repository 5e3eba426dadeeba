// Batch norm, layer norm and group norm on CUDA (the CUDA side of kernels/normalization.h, same contracts:
// float32/float64, contiguous). The statistics follow the CPU kernels: two passes (the mean, then
// the mean squared deviation from the mean rounded to T), sums accumulated in double; batch norm's
// over many blocks per channel (Note [Batch norm reductions]), one block per row (layer norm) or
// per (sample, group) (group norm); the
// elementwise parts are one thread per element. Layer norm's weight and bias gradients are column
// sums, one thread per column; group norm's are sums over the samples, one thread per channel.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>

#include "cuda/launch.cuh"
#include "cuda/runtime.h"
#include "cuda/warp.cuh"
#include "decl/empty.h"
#include "kernels/normalization.h"

namespace oneflow::cuda {

namespace {

constexpr int kThreads = kGridThreads;

template <typename T>
const T* Ptr(const Tensor& t) { return t.defined() ? t.ptr<T>() : nullptr; }
template <typename T>
T* MutPtr(const Tensor& t) { return t.defined() ? t.ptr<T>() : nullptr; }

// ---- batch norm: x viewed as [n, c, s] ----

// Note [Batch norm reductions]: a channel's n * s values are summed by many blocks (`per` values
// each, partial sums in double into a workspace), then one block per channel adds its partials, so
// a layer with few channels and large images still fills the GPU (one block per channel left most
// SMs idle: 64 blocks for ResNet's first layers, each walking 1.6M values). Two passes as on the
// CPU: the mean, then the squared deviations from the mean rounded to T. I is the index type
// (32-bit when every index fits: cheaper divisions).
template <typename T, typename I, int kWhat>  // 0: x; 1: (x - mean)^2; 2: dy and dy * (x - mean)
__global__ void BnPartialKernel(const T* x, const T* dy, I c, I s, I m, I per, const T* mean, double* part) {
  const I ch = blockIdx.x, b = blockIdx.y, bpc = gridDim.y;
  const I k0 = b * per, k1 = m - k0 < per ? m : k0 + per;
  const T mu = kWhat == 0 ? T(0) : mean[ch];
  double a = 0, a2 = 0;
  for (I k = k0 + static_cast<I>(threadIdx.x); k < k1; k += static_cast<I>(blockDim.x)) {
    const I i = (k / s * c + ch) * s + k % s;
    if constexpr (kWhat == 0) {
      a += static_cast<double>(x[i]);
    } else if constexpr (kWhat == 1) {
      const T d = x[i] - mu;
      a += static_cast<double>(d * d);
    } else {
      a += static_cast<double>(dy[i]);
      a2 += static_cast<double>(dy[i] * (x[i] - mu));
    }
  }
  a = BlockSum(a);
  if constexpr (kWhat == 2) a2 = BlockSum(a2);
  if (threadIdx.x == 0) {
    part[static_cast<int64_t>(ch) * bpc + b] = a;
    if constexpr (kWhat == 2) part[(static_cast<int64_t>(gridDim.x) + ch) * bpc + b] = a2;
  }
}

// The sum of channel ch's bpc partials (row `row` of the workspace), by the whole block.
__device__ inline double PartialsSum(const double* part, int64_t row, int64_t bpc) {
  double a = 0;
  for (int64_t b = threadIdx.x; b < bpc; b += blockDim.x) a += part[row * bpc + b];
  return BlockSum(a);
}

template <typename T>
__global__ void BnMeanKernel(const double* part, int64_t bpc, int64_t m, T* mean) {
  const double sum = PartialsSum(part, blockIdx.x, bpc);
  if (threadIdx.x == 0) mean[blockIdx.x] = static_cast<T>(m ? sum / m : NAN);
}

template <typename T>
__global__ void BnVarKernel(const double* part, int64_t bpc, int64_t m, double eps, T* invstd, T* var_unbiased) {
  const int64_t ch = blockIdx.x;
  const double sq = PartialsSum(part, ch, bpc);
  if (threadIdx.x == 0) {
    const double var = m ? sq / m : NAN;
    invstd[ch] = static_cast<T>(1.0 / sqrt(var + eps));
    if (var_unbiased) var_unbiased[ch] = static_cast<T>(m > 1 ? sq / (m - 1) : NAN);
  }
}

template <typename T>
__global__ void BnApplyKernel(const T* x, int64_t n, int64_t c, int64_t s, const T* mean, const T* invstd, const T* w,
                              const T* bias, T* y) {
  OF_GRID_LOOP(e, n * c * s) {
    const int64_t ch = e / s % c;
    const T scale = invstd[ch] * (w ? w[ch] : T(1));
    const T shift = (bias ? bias[ch] : T(0)) - mean[ch] * scale;
    y[e] = x[e] * scale + shift;
  }
}

// Per channel, from the partial sums of dy and dy * (x - mean): db, dw and the dx coefficients
// k1, mdy, k2 (into coef[3c]).
template <typename T>
__global__ void BnBackwardFinishKernel(const double* part, int64_t bpc, int64_t c, int64_t m, const T* invstd,
                                       const T* w, bool training, T* dw, T* db, T* coef) {
  const int64_t ch = blockIdx.x;
  const double sdy = PartialsSum(part, ch, bpc);
  const double sdyx = PartialsSum(part, c + ch, bpc);
  if (threadIdx.x == 0) {
    const T is = invstd[ch], wc = w ? w[ch] : T(1);
    if (dw) dw[ch] = m ? static_cast<T>(sdyx * is) : T(0);
    if (db) db[ch] = static_cast<T>(sdy);
    coef[ch] = wc * is;
    coef[c + ch] = training ? static_cast<T>(sdy / m) : T(0);
    coef[2 * c + ch] = training ? static_cast<T>(sdyx / m) * is * is : T(0);
  }
}

template <typename T>
__global__ void BnBackwardDxKernel(const T* dy, const T* x, int64_t n, int64_t c, int64_t s, const T* mean,
                                   const T* coef, T* dx) {
  OF_GRID_LOOP(e, n * c * s) {
    const int64_t ch = e / s % c;
    dx[e] = coef[ch] * (dy[e] - coef[c + ch] - (x[e] - mean[ch]) * coef[2 * c + ch]);
  }
}

// ---- layer norm: x viewed as [rows, cols] ----

// The mean and 1 / sqrt(var + eps) of the n contiguous values at xp, by the whole block (layer
// and group norm): the mean, then the mean squared deviation from it rounded to T, sums in double.
template <typename T>
__device__ void BlockMeanRstd(const T* xp, int64_t n, double eps, T* mu_out, T* rs_out) {
  double sum = 0;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) sum += static_cast<double>(xp[j]);
  sum = BlockSum(sum);
  const T mu = static_cast<T>(n ? sum / n : NAN);
  double sq = 0;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    const T d = xp[j] - mu;
    sq += static_cast<double>(d * d);
  }
  sq = BlockSum(sq);
  *mu_out = mu;
  *rs_out = static_cast<T>(1.0 / sqrt((n ? sq / n : NAN) + eps));
}

template <typename T>
__global__ void LnForwardKernel(const T* x, int64_t cols, double eps, const T* w, const T* bias, T* y, T* mean,
                                T* rstd) {
  const int64_t r = blockIdx.x;
  const T* xp = x + r * cols;
  T* yp = y + r * cols;
  T mu, rs;
  BlockMeanRstd(xp, cols, eps, &mu, &rs);
  if (threadIdx.x == 0) mean[r] = mu, rstd[r] = rs;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    T v = (xp[j] - mu) * rs;
    if (w) v = v * w[j];
    if (bias) v = v + bias[j];
    yp[j] = v;
  }
}

// The same for rows of at most kThreads * kPer columns with the row kept in registers: one read
// of x instead of three (sum, squares, output). Each thread visits the same columns in the same
// order as BlockMeanRstd's loops, so the statistics and outputs are the same numbers.
constexpr int64_t kLnCachedMax = int64_t(kThreads) * 32;

template <typename T, int kPer>
__global__ void __launch_bounds__(kThreads) LnForwardCachedKernel(const T* x, int64_t cols, double eps, const T* w,
                                                                   const T* bias, T* y, T* mean, T* rstd) {
  const int64_t r = blockIdx.x;
  const T* xp = x + r * cols;
  T* yp = y + r * cols;
  T v[kPer];
  double sum = 0;
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int64_t j = threadIdx.x + static_cast<int64_t>(i) * kThreads;
    v[i] = j < cols ? xp[j] : T(0);
    if (j < cols) sum += static_cast<double>(v[i]);
  }
  sum = BlockSum(sum);
  const T mu = static_cast<T>(cols ? sum / cols : NAN);
  double sq = 0;
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    if (threadIdx.x + static_cast<int64_t>(i) * kThreads >= cols) continue;
    const T d = v[i] - mu;
    sq += static_cast<double>(d * d);
  }
  sq = BlockSum(sq);
  const T rs = static_cast<T>(1.0 / sqrt((cols ? sq / cols : NAN) + eps));
  if (threadIdx.x == 0) mean[r] = mu, rstd[r] = rs;
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int64_t j = threadIdx.x + static_cast<int64_t>(i) * kThreads;
    if (j >= cols) continue;
    T o = (v[i] - mu) * rs;
    if (w) o = o * w[j];
    if (bias) o = o + bias[j];
    yp[j] = o;
  }
}

template <typename T>
__global__ void LnBackwardDxKernel(const T* dy, const T* x, int64_t cols, const T* mean, const T* rstd, const T* w,
                                   T* dx) {
  const int64_t r = blockIdx.x;
  const T* dyp = dy + r * cols;
  const T* xp = x + r * cols;
  const T mu = mean[r], rs = rstd[r];
  double sg = 0, sgx = 0;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const T g = w ? dyp[j] * w[j] : dyp[j];
    sg += static_cast<double>(g);
    sgx += static_cast<double>(g * (xp[j] - mu));
  }
  sg = BlockSum(sg);
  sgx = BlockSum(sgx);
  const T mg = static_cast<T>(sg / cols), mgx = static_cast<T>(sgx / cols) * rs;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const T g = w ? dyp[j] * w[j] : dyp[j];
    dx[r * cols + j] = rs * (g - mg - (xp[j] - mu) * rs * mgx);
  }
}

// Weight and bias gradients are column sums over the rows. Rows are cut into chunks of `per` (32,
// more past 65535 chunks: gridDim.y's limit) on a 2-d grid (column blocks x chunks; partials in
// double, one pair per (chunk, column)), then one
// thread per column adds its chunks' partials: one thread per column over every row left most of
// the GPU idle (4 blocks for a Transformer's 1024 columns, each walking 16K rows).
constexpr int64_t kLnRowChunk = 32;

template <typename T>
__global__ void LnParamsPartialKernel(const T* dy, const T* x, int64_t rows, int64_t cols, int64_t per,
                                      const T* mean, const T* rstd, double* part) {
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * per;
  const int64_t r1 = rows - r0 < per ? rows : r0 + per;
  double aw = 0, ab = 0;
  for (int64_t r = r0; r < r1; ++r) {
    const T d = dy[r * cols + j];
    aw += static_cast<double>(d * (x[r * cols + j] - mean[r]) * rstd[r]);
    ab += static_cast<double>(d);
  }
  const int64_t chunks = gridDim.y;
  part[static_cast<int64_t>(blockIdx.y) * cols + j] = aw;
  part[(chunks + blockIdx.y) * cols + j] = ab;
}

template <typename T>
__global__ void LnParamsFinishKernel(const double* part, int64_t chunks, int64_t cols, T* dw, T* db) {
  OF_GRID_LOOP(j, cols) {
    double aw = 0, ab = 0;
    for (int64_t k = 0; k < chunks; ++k) {
      aw += part[k * cols + j];
      ab += part[(chunks + k) * cols + j];
    }
    if (dw) dw[j] = static_cast<T>(aw);
    if (db) db[j] = static_cast<T>(ab);
  }
}

// ---- group norm: x viewed as [n, g, d, s] (c = g * d channels); a group is d * s contiguous ----

template <typename T>
__global__ void GnForwardKernel(const T* x, int64_t g, int64_t d, int64_t s, double eps, const T* w,
                                const T* bias, T* y, T* mean, T* rstd) {
  const int64_t ng = blockIdx.x, block = d * s;
  const T* xp = x + ng * block;
  T mu, rs;
  BlockMeanRstd(xp, block, eps, &mu, &rs);
  if (threadIdx.x == 0) {
    mean[ng] = mu;
    rstd[ng] = rs;
  }
  for (int64_t k = threadIdx.x; k < block; k += blockDim.x) {
    const int64_t ch = (ng % g) * d + k / s;
    const T scale = rs * (w ? w[ch] : T(1));
    const T shift = (bias ? bias[ch] : T(0)) - mu * scale;
    y[ng * block + k] = xp[k] * scale + shift;
  }
}

// Per (sample, channel): sums[2 * i] = sum dy * x, sums[2 * i + 1] = sum dy, in double.
template <typename T>
__global__ void GnChannelSumsKernel(const T* dy, const T* x, int64_t s, double* sums) {
  const int64_t i = blockIdx.x;
  double a = 0, b = 0;
  for (int64_t j = threadIdx.x; j < s; j += blockDim.x) {
    a += static_cast<double>(dy[i * s + j] * x[i * s + j]);
    b += static_cast<double>(dy[i * s + j]);
  }
  a = BlockSum(a);
  b = BlockSum(b);
  if (threadIdx.x == 0) {
    sums[2 * i] = a;
    sums[2 * i + 1] = b;
  }
}

// dx of one (sample, group) per block, as the CPU's GnBackward.
template <typename T>
__global__ void GnBackwardDxKernel(const T* dy, const T* x, int64_t g, int64_t d, int64_t s, const T* mean,
                                   const T* rstd, const T* w, const double* sums, T* dx) {
  const int64_t ng = blockIdx.x, block = d * s, c = g * d, i = ng / g;
  const T mu = mean[ng], rs = rstd[ng];
  double ds_g = 0, db_g = 0;
  for (int64_t k = 0; k < d; ++k) {  // d is small: every thread sums the group's channels
    const int64_t ch = (ng % g) * d + k;
    const double wc = w ? static_cast<double>(w[ch]) : 1.0;
    ds_g += sums[2 * (i * c + ch)] * wc;
    db_g += sums[2 * (i * c + ch) + 1] * wc;
  }
  const double inv_m = 1.0 / static_cast<double>(block), r3 = static_cast<double>(rs) * rs * rs;
  const T c2 = static_cast<T>((db_g * mu - ds_g) * r3 * inv_m);
  const T c3 = static_cast<T>(-c2 * static_cast<double>(mu) - db_g * rs * inv_m);
  for (int64_t k = threadIdx.x; k < block; k += blockDim.x) {
    const int64_t ch = (ng % g) * d + k / s, off = ng * block + k;
    dx[off] = dy[off] * (rs * (w ? w[ch] : T(1))) + x[off] * c2 + c3;
  }
}

template <typename T>
__global__ void GnBackwardParamsKernel(int64_t n, int64_t c, int64_t d, const T* mean, const T* rstd,
                                       const double* sums, T* dw, T* db) {
  OF_GRID_LOOP(ch, c) {
    const int64_t g = c / d;
    double aw = 0, ab = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t ng = i * g + ch / d;
      aw += (sums[2 * (i * c + ch)] - sums[2 * (i * c + ch) + 1] * mean[ng]) * rstd[ng];
      ab += sums[2 * (i * c + ch) + 1];
    }
    if (dw) dw[ch] = static_cast<T>(aw);
    if (db) db[ch] = static_cast<T>(ab);
  }
}

template <typename F>
void DispatchNorm(DType dt, F&& f) {
  if (dt == DType::kFloat32) return f(Tag<float>{});
  OF_ASSERT(dt == DType::kFloat64) << "norm kernel called with " << DTypeName(dt);
  return f(Tag<double>{});
}

cudaStream_t StreamOf(const Tensor& t) { return static_cast<cudaStream_t>(Stream(t.device().index)); }

void CheckBlocks(int64_t blocks, const char* op) {
  OF_CHECK(blocks < (int64_t(1) << 31)) << op << ": too many rows for one CUDA launch";
}

// How batch norm's per-channel sums are split (Note [Batch norm reductions]): bpc blocks per
// channel of `per` values each (16 per thread, more when a channel would need over 65535 blocks:
// gridDim.y's limit); grid = (channels, bpc); 32-bit indices when every element index fits.
struct BnSplit {
  int64_t bpc, per;
  bool wide;  // 64-bit indices
  dim3 grid;
};
BnSplit SplitOf(int64_t n, int64_t c, int64_t s) {
  const int64_t m = n * s;
  int64_t per = int64_t(kThreads) * 16;
  if ((m + per - 1) / per > 65535) per = (m + 65534) / 65535;
  const int64_t bpc = std::max<int64_t>(1, (m + per - 1) / per);
  const bool wide = n * c * s + per >= (int64_t(1) << 31);
  return {bpc, per, wide, dim3(static_cast<unsigned>(c), static_cast<unsigned>(bpc))};
}
template <typename F>
void WithIndex(const BnSplit& sp, F&& f) {
  if (sp.wide) f(Tag<int64_t>{});
  else f(Tag<int32_t>{});
}

void BatchNormStats(const Tensor& x, int64_t n, int64_t c, int64_t s, double eps, const Tensor& mean,
                    const Tensor& invstd, const Tensor& var_unbiased) {
  if (c == 0) return;
  CheckBlocks(c, "batch_norm");
  DeviceGuard guard(x.device().index);
  const BnSplit sp = SplitOf(n, c, s);
  const Tensor part = Empty(DimVector{c * sp.bpc}, DType::kFloat64, x.device());
  const cudaStream_t st = StreamOf(x);
  DispatchNorm(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    WithIndex(sp, [&](auto itag) {
      using I = typename decltype(itag)::type;
      BnPartialKernel<T, I, 0><<<sp.grid, kThreads, 0, st>>>(x.ptr<T>(), nullptr, I(c), I(s), I(n * s), I(sp.per),
                                                              nullptr, part.ptr<double>());
      BnMeanKernel<T><<<static_cast<unsigned>(c), kThreads, 0, st>>>(part.ptr<double>(), sp.bpc, n * s, mean.ptr<T>());
      BnPartialKernel<T, I, 1><<<sp.grid, kThreads, 0, st>>>(x.ptr<T>(), nullptr, I(c), I(s), I(n * s), I(sp.per),
                                                              mean.ptr<T>(), part.ptr<double>());
      BnVarKernel<T><<<static_cast<unsigned>(c), kThreads, 0, st>>>(part.ptr<double>(), sp.bpc, n * s, eps,
                                                                   invstd.ptr<T>(), MutPtr<T>(var_unbiased));
    });
  });
  CheckLaunch("the batch norm statistics kernels");
}

void BatchNormApply(const Tensor& x, int64_t n, int64_t c, int64_t s, const Tensor& mean, const Tensor& invstd,
                    const Tensor& weight, const Tensor& bias, const Tensor& y) {
  if (n * c * s == 0) return;
  DeviceGuard guard(y.device().index);
  DispatchNorm(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    BnApplyKernel<T><<<GridFor(n * c * s), kThreads, 0, StreamOf(y)>>>(
        x.ptr<T>(), n, c, s, mean.ptr<T>(), invstd.ptr<T>(), Ptr<T>(weight), Ptr<T>(bias), y.ptr<T>());
  });
  CheckLaunch("the batch norm kernel");
}

void BatchNormBackward(const Tensor& dy, const Tensor& x, int64_t n, int64_t c, int64_t s, const Tensor& mean,
                       const Tensor& invstd, const Tensor& weight, bool training, const Tensor& dx,
                       const Tensor& dw, const Tensor& db) {
  if (c == 0) return;
  CheckBlocks(c, "batch_norm_backward");
  DeviceGuard guard(dy.device().index);
  const Tensor coef = Empty(DimVector{3 * c}, dy.dtype(), dy.device());
  const BnSplit sp = SplitOf(n, c, s);
  const Tensor part = Empty(DimVector{2 * c * sp.bpc}, DType::kFloat64, dy.device());
  DispatchNorm(dy.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    WithIndex(sp, [&](auto itag) {
      using I = typename decltype(itag)::type;
      BnPartialKernel<T, I, 2><<<sp.grid, kThreads, 0, StreamOf(dy)>>>(x.ptr<T>(), dy.ptr<T>(), I(c), I(s), I(n * s),
                                                                     I(sp.per), mean.ptr<T>(), part.ptr<double>());
    });
    BnBackwardFinishKernel<T><<<static_cast<unsigned>(c), kThreads, 0, StreamOf(dy)>>>(
        part.ptr<double>(), sp.bpc, c, n * s, invstd.ptr<T>(), Ptr<T>(weight), training, MutPtr<T>(dw), MutPtr<T>(db),
        coef.ptr<T>());
    if (dx.defined() && n * c * s > 0)
      BnBackwardDxKernel<T><<<GridFor(n * c * s), kThreads, 0, StreamOf(dy)>>>(
          dy.ptr<T>(), x.ptr<T>(), n, c, s, mean.ptr<T>(), coef.ptr<T>(), dx.ptr<T>());
  });
  CheckLaunch("the batch norm backward kernels");
}

void LayerNormForward(const Tensor& x, int64_t rows, int64_t cols, double eps, const Tensor& weight,
                      const Tensor& bias, const Tensor& y, const Tensor& mean, const Tensor& rstd) {
  if (rows == 0) return;
  CheckBlocks(rows, "layer_norm");
  DeviceGuard guard(x.device().index);
  DispatchNorm(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto launch = [&](auto kernel) {
      kernel<<<static_cast<unsigned>(rows), kThreads, 0, StreamOf(x)>>>(
          x.ptr<T>(), cols, eps, Ptr<T>(weight), Ptr<T>(bias), y.ptr<T>(), mean.ptr<T>(), rstd.ptr<T>());
    };
    if (cols > kLnCachedMax) launch(LnForwardKernel<T>);
    else if (cols > kThreads * 16) launch(LnForwardCachedKernel<T, 32>);
    else if (cols > kThreads * 8) launch(LnForwardCachedKernel<T, 16>);
    else if (cols > kThreads * 4) launch(LnForwardCachedKernel<T, 8>);
    else if (cols > kThreads * 2) launch(LnForwardCachedKernel<T, 4>);
    else if (cols > kThreads) launch(LnForwardCachedKernel<T, 2>);
    else launch(LnForwardCachedKernel<T, 1>);
  });
  CheckLaunch("the layer norm kernel");
}

void LayerNormBackward(const Tensor& dy, const Tensor& x, int64_t rows, int64_t cols, const Tensor& mean,
                       const Tensor& rstd, const Tensor& weight, const Tensor& dx, const Tensor& dw,
                       const Tensor& db) {
  DeviceGuard guard(dy.device().index);
  DispatchNorm(dy.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (dx.defined() && rows > 0 && cols > 0) {
      CheckBlocks(rows, "layer_norm_backward");
      LnBackwardDxKernel<T><<<static_cast<unsigned>(rows), kThreads, 0, StreamOf(dy)>>>(
          dy.ptr<T>(), x.ptr<T>(), cols, mean.ptr<T>(), rstd.ptr<T>(), Ptr<T>(weight), dx.ptr<T>());
    }
    if ((dw.defined() || db.defined()) && cols > 0) {
      const int64_t per = std::max<int64_t>(kLnRowChunk, (rows + 65534) / 65535);
      const int64_t chunks = std::max<int64_t>(1, (rows + per - 1) / per);
      const Tensor part = Empty(DimVector{2 * chunks * cols}, DType::kFloat64, dy.device());
      const dim3 grid(static_cast<unsigned>((cols + kThreads - 1) / kThreads), static_cast<unsigned>(chunks));
      LnParamsPartialKernel<T><<<grid, kThreads, 0, StreamOf(dy)>>>(dy.ptr<T>(), x.ptr<T>(), rows, cols, per,
                                                                   mean.ptr<T>(), rstd.ptr<T>(), part.ptr<double>());
      LnParamsFinishKernel<T><<<GridFor(cols), kThreads, 0, StreamOf(dy)>>>(part.ptr<double>(), chunks, cols,
                                                                            MutPtr<T>(dw), MutPtr<T>(db));
    }
  });
  CheckLaunch("the layer norm backward kernels");
}

void GroupNormForward(const Tensor& x, int64_t n, int64_t c, int64_t s, int64_t g, double eps,
                      const Tensor& weight, const Tensor& bias, const Tensor& y, const Tensor& mean,
                      const Tensor& rstd) {
  if (n * g == 0) return;
  CheckBlocks(n * g, "group_norm");
  DeviceGuard guard(x.device().index);
  DispatchNorm(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    GnForwardKernel<T><<<static_cast<unsigned>(n * g), kThreads, 0, StreamOf(x)>>>(
        x.ptr<T>(), g, c / g, s, eps, Ptr<T>(weight), Ptr<T>(bias), y.ptr<T>(), mean.ptr<T>(), rstd.ptr<T>());
  });
  CheckLaunch("the group norm kernel");
}

void GroupNormBackward(const Tensor& dy, const Tensor& x, int64_t n, int64_t c, int64_t s, int64_t g,
                       const Tensor& mean, const Tensor& rstd, const Tensor& weight, const Tensor& dx,
                       const Tensor& dw, const Tensor& db) {
  if (c == 0) return;
  CheckBlocks(n * c, "group_norm_backward");
  DeviceGuard guard(dy.device().index);
  const Tensor sums = Empty(DimVector{2 * n * c}, DType::kFloat64, dy.device());
  DispatchNorm(dy.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (n > 0)
      GnChannelSumsKernel<T><<<static_cast<unsigned>(n * c), kThreads, 0, StreamOf(dy)>>>(
          dy.ptr<T>(), x.ptr<T>(), s, sums.ptr<double>());
    if (dx.defined() && n > 0)
      GnBackwardDxKernel<T><<<static_cast<unsigned>(n * g), kThreads, 0, StreamOf(dy)>>>(
          dy.ptr<T>(), x.ptr<T>(), g, c / g, s, mean.ptr<T>(), rstd.ptr<T>(), Ptr<T>(weight), sums.ptr<double>(),
          dx.ptr<T>());
    if (dw.defined() || db.defined())
      GnBackwardParamsKernel<T><<<GridFor(c), kThreads, 0, StreamOf(dy)>>>(
          n, c, c / g, mean.ptr<T>(), rstd.ptr<T>(), sums.ptr<double>(), MutPtr<T>(dw), MutPtr<T>(db));
  });
  CheckLaunch("the group norm backward kernels");
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterNormalizationKernels() {
  kernels::RegisterKernel<kernels::BatchNormStatsKernel>(DeviceType::kCUDA, &BatchNormStats);
  kernels::RegisterKernel<kernels::BatchNormApplyKernel>(DeviceType::kCUDA, &BatchNormApply);
  kernels::RegisterKernel<kernels::BatchNormBackwardKernel>(DeviceType::kCUDA, &BatchNormBackward);
  kernels::RegisterKernel<kernels::LayerNormForwardKernel>(DeviceType::kCUDA, &LayerNormForward);
  kernels::RegisterKernel<kernels::LayerNormBackwardKernel>(DeviceType::kCUDA, &LayerNormBackward);
  kernels::RegisterKernel<kernels::GroupNormForwardKernel>(DeviceType::kCUDA, &GroupNormForward);
  kernels::RegisterKernel<kernels::GroupNormBackwardKernel>(DeviceType::kCUDA, &GroupNormBackward);
}

}  // namespace oneflow::cuda
