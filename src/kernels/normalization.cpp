#include "kernels/normalization.h"

#include <omp.h>

#include <cmath>
#include <vector>

#include "core/parallel.h"

namespace oneflow {

namespace {

// Sums over contiguous runs: kLanes independent partial sums (a vector register's worth) so the
// compiler vectorises without reassociating, in T over blocks of kBlock, blocks added in double.
constexpr int kLanes = 16;
constexpr int64_t kBlock = 2048;

template <typename T, typename F>
double LaneSum(int64_t n, const F& term) {
  double total = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t e = std::min(n, b + kBlock);
    T lane[kLanes] = {};
    int64_t i = b;
    for (; i + kLanes <= e; i += kLanes)
      for (int k = 0; k < kLanes; ++k) lane[k] += term(i + k);
    T tail = 0;
    for (; i < e; ++i) tail += term(i);
    double s = tail;
    for (int k = 0; k < kLanes; ++k) s += lane[k];
    total += s;
  }
  return total;
}

template <typename T>
double Sum(const T* p, int64_t n) {
  return LaneSum<T>(n, [p](int64_t i) { return p[i]; });
}
template <typename T>
double SumSqDev(const T* p, int64_t n, T m) {
  return LaneSum<T>(n, [p, m](int64_t i) { T d = p[i] - m; return d * d; });
}
template <typename T>
double SumProdDev(const T* dy, const T* x, int64_t n, T m) {
  return LaneSum<T>(n, [dy, x, m](int64_t i) { return dy[i] * (x[i] - m); });
}

template <typename T>
const T* Ptr(const Tensor& t) { return t.defined() ? t.data<T>() : nullptr; }
template <typename T>
T* MutPtr(const Tensor& t) { return t.defined() ? t.data<T>() : nullptr; }

int64_t Grain(int64_t work_per_item) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, work_per_item)); }

template <typename F>
void DispatchNorm(DType dt, F&& f) {
  if (dt == DType::kFloat32) return f(Tag<float>{});
  OF_ASSERT(dt == DType::kFloat64) << "norm kernel called with " << DTypeName(dt);
  return f(Tag<double>{});
}

// ---- batch norm ------------------------------------------------------------------------------

template <typename T>
void BnStats(const T* x, int64_t n, int64_t c, int64_t s, double eps, T* mean, T* invstd, T* var_unbiased) {
  const int64_t m = n * s;
  ParallelFor(0, c, Grain(2 * m), [&](int64_t b, int64_t e) {
    for (int64_t ch = b; ch < e; ++ch) {
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += Sum(x + (i * c + ch) * s, s);
      const T mu = static_cast<T>(m ? sum / m : NAN);
      double sq = 0;
      for (int64_t i = 0; i < n; ++i) sq += SumSqDev(x + (i * c + ch) * s, s, mu);
      const double var = m ? sq / m : NAN;
      mean[ch] = mu;
      invstd[ch] = static_cast<T>(1.0 / std::sqrt(var + eps));
      if (var_unbiased) var_unbiased[ch] = static_cast<T>(m > 1 ? sq / (m - 1) : NAN);
    }
  });
}

template <typename T>
void BnApply(const T* x, int64_t n, int64_t c, int64_t s, const T* mean, const T* invstd, const T* w, const T* bias,
             T* y) {
  ParallelFor(0, n * c, Grain(s), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t ch = r % c;
      const T scale = invstd[ch] * (w ? w[ch] : T(1));
      const T shift = (bias ? bias[ch] : T(0)) - mean[ch] * scale;
      const T* xp = x + r * s;
      T* yp = y + r * s;
      for (int64_t j = 0; j < s; ++j) yp[j] = xp[j] * scale + shift;
    }
  });
}

template <typename T>
void BnBackward(const T* dy, const T* x, int64_t n, int64_t c, int64_t s, const T* mean, const T* invstd,
                const T* w, bool training, T* dx, T* dw, T* db) {
  const int64_t m = n * s;
  ParallelFor(0, c, Grain(3 * m), [&](int64_t b, int64_t e) {
    for (int64_t ch = b; ch < e; ++ch) {
      const T mu = mean[ch], is = invstd[ch], wc = w ? w[ch] : T(1);
      double sdy = 0, sdyx = 0;
      if (training || dw || db) {
        for (int64_t i = 0; i < n; ++i) {
          const int64_t off = (i * c + ch) * s;
          sdy += Sum(dy + off, s);
          sdyx += SumProdDev(dy + off, x + off, s, mu);
        }
      }
      if (dw) dw[ch] = m ? static_cast<T>(sdyx * is) : T(0);  // an empty batch: invstd is NaN
      if (db) db[ch] = static_cast<T>(sdy);
      if (!dx) continue;
      // training: dx = w*invstd*(dy - mean(dy) - xhat*mean(dy*xhat)), xhat = (x - mu)*invstd
      const T k1 = wc * is;
      const T mdy = training ? static_cast<T>(sdy / m) : T(0);
      const T k2 = training ? static_cast<T>(sdyx / m) * is * is : T(0);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t off = (i * c + ch) * s;
        const T* dyp = dy + off;
        const T* xp = x + off;
        T* dxp = dx + off;
        for (int64_t j = 0; j < s; ++j) dxp[j] = k1 * (dyp[j] - mdy - (xp[j] - mu) * k2);
      }
    }
  });
}

// ---- layer norm ------------------------------------------------------------------------------

template <typename T>
void LnForward(const T* x, int64_t rows, int64_t cols, double eps, const T* w, const T* bias, T* y, T* mean, T* rstd) {
  ParallelFor(0, rows, Grain(cols), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const T* xp = x + r * cols;
      T* yp = y + r * cols;
      const T mu = static_cast<T>(cols ? Sum(xp, cols) / cols : NAN);
      const T rs = static_cast<T>(1.0 / std::sqrt((cols ? SumSqDev(xp, cols, mu) / cols : NAN) + eps));
      mean[r] = mu;
      rstd[r] = rs;
      if (w && bias) {
        for (int64_t j = 0; j < cols; ++j) yp[j] = (xp[j] - mu) * rs * w[j] + bias[j];
      } else if (w) {
        for (int64_t j = 0; j < cols; ++j) yp[j] = (xp[j] - mu) * rs * w[j];
      } else if (bias) {
        for (int64_t j = 0; j < cols; ++j) yp[j] = (xp[j] - mu) * rs + bias[j];
      } else {
        for (int64_t j = 0; j < cols; ++j) yp[j] = (xp[j] - mu) * rs;
      }
    }
  });
}

template <typename T>
void LnBackward(const T* dy, const T* x, int64_t rows, int64_t cols, const T* mean, const T* rstd, const T* w,
                T* dx, T* dw, T* db) {
  // dw/db are column sums over rows: each thread sums its rows into its own buffers.
  const int nt = GetNumThreads();
  std::vector<T> pw((dw ? cols : 0) * nt, T(0)), pb((db ? cols : 0) * nt, T(0));
  ParallelFor(0, rows, Grain(3 * cols), [&](int64_t b, int64_t e) {
    const int t = omp_in_parallel() ? omp_get_thread_num() : 0;
    T* aw = dw ? pw.data() + t * cols : nullptr;
    T* ab = db ? pb.data() + t * cols : nullptr;
    std::vector<T> wdy(cols);
    for (int64_t r = b; r < e; ++r) {
      const T* dyp = dy + r * cols;
      const T* xp = x + r * cols;
      const T mu = mean[r], rs = rstd[r];
      if (aw)
        for (int64_t j = 0; j < cols; ++j) aw[j] += dyp[j] * (xp[j] - mu) * rs;
      if (ab)
        for (int64_t j = 0; j < cols; ++j) ab[j] += dyp[j];
      if (!dx) continue;
      // dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * w
      for (int64_t j = 0; j < cols; ++j) wdy[j] = w ? dyp[j] * w[j] : dyp[j];
      const T* g = wdy.data();
      const T mg = static_cast<T>(Sum(g, cols) / cols);
      const T mgx = static_cast<T>(SumProdDev(g, xp, cols, mu) / cols) * rs;
      T* dxp = dx + r * cols;
      for (int64_t j = 0; j < cols; ++j) dxp[j] = rs * (g[j] - mg - (xp[j] - mu) * rs * mgx);
    }
  });
  for (int t = 0; t < nt; ++t)
    for (int64_t j = 0; j < cols; ++j) {
      if (dw) dw[j] = (t ? dw[j] : T(0)) + pw[t * cols + j];
      if (db) db[j] = (t ? db[j] : T(0)) + pb[t * cols + j];
    }
}

// ---- group norm ------------------------------------------------------------------------------

template <typename T>
void GnForward(const T* x, int64_t n, int64_t c, int64_t s, int64_t g, double eps, const T* w, const T* bias, T* y,
               T* mean, T* rstd) {
  const int64_t d = c / g, block = d * s;
  ParallelFor(0, n * g, Grain(3 * block), [&](int64_t b, int64_t e) {
    for (int64_t ng = b; ng < e; ++ng) {
      const T* xp = x + ng * block;
      const T mu = static_cast<T>(block ? Sum(xp, block) / block : NAN);
      const T rs = static_cast<T>(1.0 / std::sqrt((block ? SumSqDev(xp, block, mu) / block : NAN) + eps));
      mean[ng] = mu;
      rstd[ng] = rs;
      for (int64_t k = 0; k < d; ++k) {
        const int64_t ch = (ng % g) * d + k;
        const T scale = rs * (w ? w[ch] : T(1));
        const T shift = (bias ? bias[ch] : T(0)) - mu * scale;
        const T* xc = xp + k * s;
        T* yc = y + ng * block + k * s;
        for (int64_t j = 0; j < s; ++j) yc[j] = xc[j] * scale + shift;
      }
    }
  });
}

template <typename T>
void GnBackward(const T* dy, const T* x, int64_t n, int64_t c, int64_t s, int64_t g, const T* mean, const T* rstd,
                const T* w, T* dx, T* dw, T* db) {
  const int64_t d = c / g, block = d * s;
  std::vector<double> ds(n * c), dsum(n * c);  // per (sample, channel): sum dy*x, sum dy
  ParallelFor(0, n * g, Grain(3 * block), [&](int64_t b, int64_t e) {
    for (int64_t ng = b; ng < e; ++ng) {
      const int64_t i = ng / g;
      const T mu = mean[ng], rs = rstd[ng];
      double ds_g = 0, db_g = 0;
      for (int64_t k = 0; k < d; ++k) {
        const int64_t ch = (ng % g) * d + k, off = ng * block + k * s;
        const double a = SumProdDev(dy + off, x + off, s, T(0)), bsum = Sum(dy + off, s);
        ds[i * c + ch] = a;
        dsum[i * c + ch] = bsum;
        const double wc = w ? static_cast<double>(w[ch]) : 1.0;
        ds_g += a * wc;
        db_g += bsum * wc;
      }
      if (!dx) continue;
      // d/dx of (x - mean)*rstd*w over the group's M elements, with ds_g = sum(w*dy*x) and
      // db_g = sum(w*dy): dx = rstd*w*dy + x*c2 + c3, c2 = (db_g*mean - ds_g)*rstd^3/M,
      // c3 = -c2*mean - db_g*rstd/M (mean and rstd depend on every x of the group).
      const double inv_m = 1.0 / static_cast<double>(block), r3 = static_cast<double>(rs) * rs * rs;
      const T c2 = static_cast<T>((db_g * mu - ds_g) * r3 * inv_m);
      const T c3 = static_cast<T>(-c2 * static_cast<double>(mu) - db_g * rs * inv_m);
      for (int64_t k = 0; k < d; ++k) {
        const int64_t ch = (ng % g) * d + k, off = ng * block + k * s;
        const T c1 = rs * (w ? w[ch] : T(1));
        for (int64_t j = 0; j < s; ++j) dx[off + j] = dy[off + j] * c1 + x[off + j] * c2 + c3;
      }
    }
  });
  for (int64_t ch = 0; ch < c; ++ch) {
    double aw = 0, ab = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t ng = i * g + ch / d;
      aw += (ds[i * c + ch] - dsum[i * c + ch] * mean[ng]) * rstd[ng];
      ab += dsum[i * c + ch];
    }
    if (dw) dw[ch] = static_cast<T>(aw);
    if (db) db[ch] = static_cast<T>(ab);
  }
}


void BatchNormStatsCpu(const Tensor& x, int64_t n, int64_t c, int64_t s, double eps, const Tensor& mean,
                    const Tensor& invstd, const Tensor& var_unbiased) {
  DispatchNorm(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    BnStats<T>(x.data<T>(), n, c, s, eps, mean.data<T>(), invstd.data<T>(), MutPtr<T>(var_unbiased));
  });
}

void BatchNormApplyCpu(const Tensor& x, int64_t n, int64_t c, int64_t s, const Tensor& mean, const Tensor& invstd,
                    const Tensor& weight, const Tensor& bias, const Tensor& y) {
  DispatchNorm(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    BnApply<T>(x.data<T>(), n, c, s, mean.data<T>(), invstd.data<T>(), Ptr<T>(weight), Ptr<T>(bias), y.data<T>());
  });
}

void BatchNormBackwardCpu(const Tensor& dy, const Tensor& x, int64_t n, int64_t c, int64_t s, const Tensor& mean,
                       const Tensor& invstd, const Tensor& weight, bool training, const Tensor& dx,
                       const Tensor& dw, const Tensor& db) {
  DispatchNorm(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    BnBackward<T>(dy.data<T>(), x.data<T>(), n, c, s, mean.data<T>(), invstd.data<T>(), Ptr<T>(weight), training,
                  MutPtr<T>(dx), MutPtr<T>(dw), MutPtr<T>(db));
  });
}

void LayerNormForwardCpu(const Tensor& x, int64_t rows, int64_t cols, double eps, const Tensor& weight,
                      const Tensor& bias, const Tensor& y, const Tensor& mean, const Tensor& rstd) {
  DispatchNorm(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    LnForward<T>(x.data<T>(), rows, cols, eps, Ptr<T>(weight), Ptr<T>(bias), y.data<T>(), mean.data<T>(),
                 rstd.data<T>());
  });
}

void LayerNormBackwardCpu(const Tensor& dy, const Tensor& x, int64_t rows, int64_t cols, const Tensor& mean,
                       const Tensor& rstd, const Tensor& weight, const Tensor& dx, const Tensor& dw,
                       const Tensor& db) {
  DispatchNorm(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    LnBackward<T>(dy.data<T>(), x.data<T>(), rows, cols, mean.data<T>(), rstd.data<T>(), Ptr<T>(weight),
                  MutPtr<T>(dx), MutPtr<T>(dw), MutPtr<T>(db));
  });
}

void GroupNormForwardCpu(const Tensor& x, int64_t n, int64_t c, int64_t s, int64_t g, double eps,
                      const Tensor& weight, const Tensor& bias, const Tensor& y, const Tensor& mean,
                      const Tensor& rstd) {
  DispatchNorm(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    GnForward<T>(x.data<T>(), n, c, s, g, eps, Ptr<T>(weight), Ptr<T>(bias), y.data<T>(), mean.data<T>(),
                 rstd.data<T>());
  });
}

void GroupNormBackwardCpu(const Tensor& dy, const Tensor& x, int64_t n, int64_t c, int64_t s, int64_t g,
                       const Tensor& mean, const Tensor& rstd, const Tensor& weight, const Tensor& dx,
                       const Tensor& dw, const Tensor& db) {
  DispatchNorm(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    GnBackward<T>(dy.data<T>(), x.data<T>(), n, c, s, g, mean.data<T>(), rstd.data<T>(), Ptr<T>(weight),
                  MutPtr<T>(dx), MutPtr<T>(dw), MutPtr<T>(db));
  });
}

}  // namespace

void BatchNormStats(const Tensor& x, int64_t n, int64_t c, int64_t s, double eps, const Tensor& mean,
                    const Tensor& invstd, const Tensor& var_unbiased) {
  kernels::CallKernel<kernels::BatchNormStatsKernel>(x.device(), x, n, c, s, eps, mean, invstd, var_unbiased);
}

void BatchNormApply(const Tensor& x, int64_t n, int64_t c, int64_t s, const Tensor& mean, const Tensor& invstd,
                    const Tensor& weight, const Tensor& bias, const Tensor& y) {
  kernels::CallKernel<kernels::BatchNormApplyKernel>(x.device(), x, n, c, s, mean, invstd, weight, bias, y);
}

void BatchNormBackward(const Tensor& dy, const Tensor& x, int64_t n, int64_t c, int64_t s, const Tensor& mean,
                       const Tensor& invstd, const Tensor& weight, bool training, const Tensor& dx,
                       const Tensor& dw, const Tensor& db) {
  kernels::CallKernel<kernels::BatchNormBackwardKernel>(dy.device(), dy, x, n, c, s, mean, invstd, weight, training, dx, dw, db);
}

void LayerNormForward(const Tensor& x, int64_t rows, int64_t cols, double eps, const Tensor& weight,
                      const Tensor& bias, const Tensor& y, const Tensor& mean, const Tensor& rstd) {
  kernels::CallKernel<kernels::LayerNormForwardKernel>(x.device(), x, rows, cols, eps, weight, bias, y, mean, rstd);
}

void LayerNormBackward(const Tensor& dy, const Tensor& x, int64_t rows, int64_t cols, const Tensor& mean,
                       const Tensor& rstd, const Tensor& weight, const Tensor& dx, const Tensor& dw,
                       const Tensor& db) {
  kernels::CallKernel<kernels::LayerNormBackwardKernel>(dy.device(), dy, x, rows, cols, mean, rstd, weight, dx, dw, db);
}

void GroupNormForward(const Tensor& x, int64_t n, int64_t c, int64_t s, int64_t g, double eps,
                      const Tensor& weight, const Tensor& bias, const Tensor& y, const Tensor& mean,
                      const Tensor& rstd) {
  kernels::CallKernel<kernels::GroupNormForwardKernel>(x.device(), x, n, c, s, g, eps, weight, bias, y, mean, rstd);
}

void GroupNormBackward(const Tensor& dy, const Tensor& x, int64_t n, int64_t c, int64_t s, int64_t g,
                       const Tensor& mean, const Tensor& rstd, const Tensor& weight, const Tensor& dx,
                       const Tensor& dw, const Tensor& db) {
  kernels::CallKernel<kernels::GroupNormBackwardKernel>(dy.device(), dy, x, n, c, s, g, mean, rstd, weight, dx, dw, db);
}

namespace {
// The CPU kernels in the registry (Note [Kernel registry]); the entries above reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::BatchNormStatsKernel>(DeviceType::kCPU, &BatchNormStatsCpu);
  kernels::RegisterKernel<kernels::BatchNormApplyKernel>(DeviceType::kCPU, &BatchNormApplyCpu);
  kernels::RegisterKernel<kernels::BatchNormBackwardKernel>(DeviceType::kCPU, &BatchNormBackwardCpu);
  kernels::RegisterKernel<kernels::LayerNormForwardKernel>(DeviceType::kCPU, &LayerNormForwardCpu);
  kernels::RegisterKernel<kernels::LayerNormBackwardKernel>(DeviceType::kCPU, &LayerNormBackwardCpu);
  kernels::RegisterKernel<kernels::GroupNormForwardKernel>(DeviceType::kCPU, &GroupNormForwardCpu);
  kernels::RegisterKernel<kernels::GroupNormBackwardKernel>(DeviceType::kCPU, &GroupNormBackwardCpu);
  return true;
}();
}  // namespace

}  // namespace oneflow
