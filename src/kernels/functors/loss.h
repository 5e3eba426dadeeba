// Elementwise terms of the pointwise losses (src/ops/loss_pointwise_ops.cpp). T is the OpMath
// type. Formulas follow PyTorch's kernels (including BCE's log clamp at -100).
#pragma once
#include <algorithm>
#include <cmath>

#include "core/hd.h"
#include "kernels/sleef_map.h"

namespace oneflow {

struct MseLossFunctor {
  template <typename T> OF_HD T operator()(T x, T y) const { const T d = x - y; return d * d; }
};
struct L1LossFunctor {
  template <typename T> OF_HD T operator()(T x, T y) const { return std::fabs(x - y); }
};
// beta = 0 gives |d| (the quadratic piece is empty).
struct SmoothL1LossFunctor {
  double beta;
  template <typename T> OF_HD T operator()(T x, T y) const {
    const T d = std::fabs(x - y), b = T(beta);
    return d < b ? T(0.5) * d * d / b : d - T(0.5) * b;
  }
};
struct HuberLossFunctor {
  double delta;
  template <typename T> OF_HD T operator()(T x, T y) const {
    const T d = std::fabs(x - y), k = T(delta);
    return d < k ? T(0.5) * d * d : k * (d - T(0.5) * k);
  }
};
struct SoftMarginLossFunctor {
  template <typename T> OF_HD T operator()(T x, T y) const { return std::log1p(std::exp(-x * y)); }
};
// -(y log x + (1 - y) log(1 - x)), each log clamped at -100 so that x = 0 or 1 stays finite.
struct BinaryCrossEntropyFunctor {
  template <typename T> OF_HD T operator()(T x, T y) const {
    const T l1 = std::log1p(-x), l0 = std::log(x);
    return (y - T(1)) * (l1 > T(-100) ? l1 : T(-100)) - y * (l0 > T(-100) ? l0 : T(-100));
  }
  // Host float / double runs (Note [SLEEF blocks]): the same terms, the logs on SLEEF.
  template <typename T> void Block2(const T* x, const T* y, T* o, int64_t n) const {
    constexpr int64_t kChunk = 256;
    T l1[kChunk], l0[kChunk];
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
      const int64_t m = std::min(kChunk, n - i0);
      for (int64_t i = 0; i < m; ++i) l1[i] = -x[i0 + i];
      SleefMap(SleefFn::kLog1p, l1, l1, m);
      SleefMap(SleefFn::kLog, x + i0, l0, m);
      for (int64_t i = 0; i < m; ++i) {
        const T yi = y[i0 + i];
        o[i0 + i] = (yi - T(1)) * (l1[i] > T(-100) ? l1[i] : T(-100)) - yi * (l0[i] > T(-100) ? l0[i] : T(-100));
      }
    }
  }
};
// (1 - y) x + (1 + (pw - 1) y) log(1 + e^-x), with log(1 + e^-x) written stably.
struct BceWithLogitsFunctor {
  template <typename T> OF_HD T operator()(T x, T y, T pw) const {
    const T sp = std::log1p(std::exp(-std::fabs(x))) + (x < T(0) ? -x : T(0));
    return (T(1) - y) * x + (T(1) + (pw - T(1)) * y) * sp;
  }
  // Host float / double runs (Note [SLEEF blocks]): the same formula, exp and log1p on SLEEF.
  template <typename T> void Block3(const T* x, const T* y, const T* pw, T* o, int64_t n) const {
    constexpr int64_t kChunk = 256;
    T t[kChunk];
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
      const int64_t m = std::min(kChunk, n - i0);
      for (int64_t i = 0; i < m; ++i) t[i] = -std::fabs(x[i0 + i]);
      SleefMap(SleefFn::kExp, t, t, m);
      SleefMap(SleefFn::kLog1p, t, t, m);
      for (int64_t i = 0; i < m; ++i) {
        const T xi = x[i0 + i], yi = y[i0 + i];
        const T sp = t[i] + (xi < T(0) ? -xi : T(0));
        o[i0 + i] = (T(1) - yi) * xi + (T(1) + (pw[i0 + i] - T(1)) * yi) * sp;
      }
    }
  }
};
// y (log y - x), 0 where y <= 0 (OneFlow); e^y (y - x) for log-space targets.
struct KlDivFunctor {
  bool log_target;
  template <typename T> OF_HD T operator()(T x, T y) const {
    if (log_target) return std::exp(y) * (y - x);
    return y > T(0) ? y * (std::log(y) - x) : T(0);
  }
  // Host float / double runs (Note [SLEEF blocks]): exp(y) or log(y) on SLEEF, the rest as above.
  template <typename T> void Block2(const T* x, const T* y, T* o, int64_t n) const {
    constexpr int64_t kChunk = 256;
    T t[kChunk];
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
      const int64_t m = std::min(kChunk, n - i0);
      SleefMap(log_target ? SleefFn::kExp : SleefFn::kLog, y + i0, t, m);
      for (int64_t i = 0; i < m; ++i) {
        const T xi = x[i0 + i], yi = y[i0 + i];
        o[i0 + i] = log_target ? t[i] * (yi - xi) : (yi > T(0) ? yi * (t[i] - xi) : T(0));
      }
    }
  }
};
// max(0, -y (x1 - x2) + margin), NaN propagating like clamp_min.
struct MarginRankingLossFunctor {
  double margin;
  template <typename T> OF_HD T operator()(T x1, T x2, T y) const {
    const T z = -y * (x1 - x2) + T(margin);
    return z < T(0) ? T(0) : z;
  }
};

}  // namespace oneflow
