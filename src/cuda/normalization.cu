// Batch norm and layer norm on CUDA (the CUDA side of kernels/normalization.h, same contracts:
// float32/float64, contiguous). The statistics follow the CPU kernels: two passes (the mean, then
// the mean squared deviation from the mean rounded to T), sums accumulated in double, one block
// per channel (batch norm) or per row (layer norm); the elementwise parts are one thread per
// element. Layer norm's weight and bias gradients are column sums, one thread per column.
#include <cuda_runtime.h>

#include <cmath>

#include "cuda/normalization.h"
#include "cuda/launch.cuh"
#include "cuda/runtime.h"
#include "cuda/warp.cuh"
#include "decl/empty.h"

namespace oneflow::cuda {

namespace {

constexpr int kThreads = kGridThreads;

template <typename T>
const T* Ptr(const Tensor& t) { return t.defined() ? t.ptr<T>() : nullptr; }
template <typename T>
T* MutPtr(const Tensor& t) { return t.defined() ? t.ptr<T>() : nullptr; }

// ---- batch norm: x viewed as [n, c, s] ----

template <typename T>
__global__ void BnStatsKernel(const T* x, int64_t n, int64_t c, int64_t s, double eps, T* mean, T* invstd,
                              T* var_unbiased) {
  const int64_t ch = blockIdx.x, m = n * s;
  double sum = 0;
  for (int64_t k = threadIdx.x; k < m; k += blockDim.x) sum += static_cast<double>(x[(k / s * c + ch) * s + k % s]);
  sum = BlockSum(sum);
  const T mu = static_cast<T>(m ? sum / m : NAN);
  double sq = 0;
  for (int64_t k = threadIdx.x; k < m; k += blockDim.x) {
    const T d = x[(k / s * c + ch) * s + k % s] - mu;
    sq += static_cast<double>(d * d);
  }
  sq = BlockSum(sq);
  if (threadIdx.x == 0) {
    const double var = m ? sq / m : NAN;
    mean[ch] = mu;
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

// Per channel: db, dw and the dx coefficients k1, mdy, k2 (into coef[3c]).
template <typename T>
__global__ void BnBackwardSumsKernel(const T* dy, const T* x, int64_t n, int64_t c, int64_t s, const T* mean,
                                     const T* invstd, const T* w, bool training, T* dw, T* db, T* coef) {
  const int64_t ch = blockIdx.x, m = n * s;
  const T mu = mean[ch], is = invstd[ch], wc = w ? w[ch] : T(1);
  double sdy = 0, sdyx = 0;
  for (int64_t k = threadIdx.x; k < m; k += blockDim.x) {
    const int64_t i = (k / s * c + ch) * s + k % s;
    sdy += static_cast<double>(dy[i]);
    sdyx += static_cast<double>(dy[i] * (x[i] - mu));
  }
  sdy = BlockSum(sdy);
  sdyx = BlockSum(sdyx);
  if (threadIdx.x == 0) {
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

template <typename T>
__global__ void LnForwardKernel(const T* x, int64_t cols, double eps, const T* w, const T* bias, T* y, T* mean,
                                T* rstd) {
  const int64_t r = blockIdx.x;
  const T* xp = x + r * cols;
  T* yp = y + r * cols;
  double sum = 0;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) sum += static_cast<double>(xp[j]);
  sum = BlockSum(sum);
  const T mu = static_cast<T>(cols ? sum / cols : NAN);
  double sq = 0;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const T d = xp[j] - mu;
    sq += static_cast<double>(d * d);
  }
  sq = BlockSum(sq);
  const T rs = static_cast<T>(1.0 / sqrt((cols ? sq / cols : NAN) + eps));
  if (threadIdx.x == 0) mean[r] = mu, rstd[r] = rs;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    T v = (xp[j] - mu) * rs;
    if (w) v = v * w[j];
    if (bias) v = v + bias[j];
    yp[j] = v;
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

template <typename T>
__global__ void LnBackwardParamsKernel(const T* dy, const T* x, int64_t rows, int64_t cols, const T* mean,
                                       const T* rstd, T* dw, T* db) {
  OF_GRID_LOOP(j, cols) {
    double aw = 0, ab = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const T d = dy[r * cols + j];
      aw += static_cast<double>(d * (x[r * cols + j] - mean[r]) * rstd[r]);
      ab += static_cast<double>(d);
    }
    if (dw) dw[j] = static_cast<T>(aw);
    if (db) db[j] = static_cast<T>(ab);
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

}  // namespace

void BatchNormStats(const Tensor& x, int64_t n, int64_t c, int64_t s, double eps, const Tensor& mean,
                    const Tensor& invstd, const Tensor& var_unbiased) {
  if (c == 0) return;
  CheckBlocks(c, "batch_norm");
  DeviceGuard guard(x.device().index);
  DispatchNorm(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    BnStatsKernel<T><<<static_cast<unsigned>(c), kThreads, 0, StreamOf(x)>>>(
        x.ptr<T>(), n, c, s, eps, mean.ptr<T>(), invstd.ptr<T>(), MutPtr<T>(var_unbiased));
  });
  CheckLaunch("the batch norm statistics kernel");
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
  DispatchNorm(dy.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    BnBackwardSumsKernel<T><<<static_cast<unsigned>(c), kThreads, 0, StreamOf(dy)>>>(
        dy.ptr<T>(), x.ptr<T>(), n, c, s, mean.ptr<T>(), invstd.ptr<T>(), Ptr<T>(weight), training, MutPtr<T>(dw),
        MutPtr<T>(db), coef.ptr<T>());
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
    LnForwardKernel<T><<<static_cast<unsigned>(rows), kThreads, 0, StreamOf(x)>>>(
        x.ptr<T>(), cols, eps, Ptr<T>(weight), Ptr<T>(bias), y.ptr<T>(), mean.ptr<T>(), rstd.ptr<T>());
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
    if ((dw.defined() || db.defined()) && cols > 0)
      LnBackwardParamsKernel<T><<<GridFor(cols), kThreads, 0, StreamOf(dy)>>>(
          dy.ptr<T>(), x.ptr<T>(), rows, cols, mean.ptr<T>(), rstd.ptr<T>(), MutPtr<T>(dw), MutPtr<T>(db));
  });
  CheckLaunch("the layer norm backward kernels");
}

}  // namespace oneflow::cuda
