// Elementwise terms of the pointwise losses (src/ops/loss_pointwise_ops.cpp). T is the OpMath
// type. Formulas follow PyTorch's kernels (including BCE's log clamp at -100).
#pragma once
#include <cmath>

#include "core/hd.h"

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
};
// (1 - y) x + (1 + (pw - 1) y) log(1 + e^-x), with log(1 + e^-x) written stably.
struct BceWithLogitsFunctor {
  template <typename T> OF_HD T operator()(T x, T y, T pw) const {
    const T sp = std::log1p(std::exp(-std::fabs(x))) + (x < T(0) ? -x : T(0));
    return (T(1) - y) * x + (T(1) + (pw - T(1)) * y) * sp;
  }
};
// y (log y - x), 0 where y <= 0 (OneFlow); e^y (y - x) for log-space targets.
struct KlDivFunctor {
  bool log_target;
  template <typename T> OF_HD T operator()(T x, T y) const {
    if (log_target) return std::exp(y) * (y - x);
    return y > T(0) ? y * (std::log(y) - x) : T(0);
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
