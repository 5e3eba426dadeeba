// Functors of the activation family (src/ops/table/activation.yaml). T is the OpMath type.
// Each activation X has X's forward functor and XBackward's functor (grad, x) -> grad * X'(x).
// Note [Activation edge cases]: at NaN and at the kinks, PyTorch's CPU gradients depend on
// whether its vectorised or its scalar loop ran (tensor size and layout). These functors follow
// the vectorised kernels, which is what large contiguous tensors get; the tests compare with
// torch run that way (tests/opinfo/activation.py).
#pragma once
#include <cmath>
#include <type_traits>

#include "core/hd.h"
#include "kernels/sleef_map.h"
#include "kernels/vec_math.h"

namespace oneflow {

namespace act {
template <typename T> OF_VMATH_INLINE T Sigmoid(T x) { return T(1) / (T(1) + VecExp(-x)); }
// Comparisons written so that NaN falls through to the last branch and propagates.
template <typename T> OF_VMATH_INLINE T Clamp(T x, T lo, T hi) { return x < lo ? lo : (x > hi ? hi : x); }
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kGeluKappa = 0.044715;
// d/dx x Phi(x) = Phi(x) + x phi(x). For float on the host, erf's tail and the density share one
// exp: with u = x / sqrt(2), exp(-u^2) = exp(-x^2 / 2) is both (ErfGivenExpFloat).
template <typename T> OF_VMATH_INLINE T GeluDerivative(T x) {
#ifndef __CUDA_ARCH__
  if constexpr (std::is_same_v<T, float>) {
    const float u = x * float(kSqrt1_2), z = u * u, e = ExpFloat(-z);
    return 0.5f * (1.0f + ErfGivenExpFloat(u, z, e)) + x * (e * float(kInvSqrt2Pi));
  }
#endif
  const T cdf = T(0.5) * (T(1) + VecErf(x * T(kSqrt1_2)));
  const T pdf = VecExp(T(-0.5) * x * x) * T(kInvSqrt2Pi);
  return cdf + x * pdf;
}
}  // namespace act

// ---- forward ----
struct LeakyReluFunctor {
  double negative_slope;
  template <typename T> OF_HD T operator()(T x) const { return x > T(0) ? x : x * T(negative_slope); }
};
struct Relu6Functor {
  template <typename T> OF_HD T operator()(T x) const { return act::Clamp(x, T(0), T(6)); }
};
struct HardtanhFunctor {
  double min_val, max_val;
  template <typename T> OF_HD T operator()(T x) const { return act::Clamp(x, T(min_val), T(max_val)); }
};
// elu, selu and celu are one formula: scale * (x > 0 ? x : alpha * (exp(x * input_scale) - 1)).
// The Block members: contiguous float / double runs on SLEEF (Note [SLEEF blocks]).
struct EluFunctor {
  double alpha, scale = 1.0, input_scale = 1.0;
  template <typename T> OF_HD T operator()(T x) const {
    return x > T(0) ? x * T(scale) : T(alpha * scale) * std::expm1(x * T(input_scale));
  }
  template <typename T> void BlockOf(const T* a, T* o, int64_t n) const {
    const T s = T(scale), is = T(input_scale), as = T(alpha * scale);
    SleefCompose(a, o, n, SleefFn::kExpm1, SleefFn::kNone, [=](T x) { return x * is; },
                 [=](T x, T e) { return x > T(0) ? x * s : as * e; });
  }
  void Block(const float* a, float* o, int64_t n) const { BlockOf(a, o, n); }
  void Block(const double* a, double* o, int64_t n) const { BlockOf(a, o, n); }
};
struct SeluFunctor {
  template <typename T> OF_HD T operator()(T x) const {
    return EluFunctor{act::kSeluAlpha, act::kSeluScale}(x);
  }
  void Block(const float* a, float* o, int64_t n) const { EluFunctor{act::kSeluAlpha, act::kSeluScale}.Block(a, o, n); }
  void Block(const double* a, double* o, int64_t n) const { EluFunctor{act::kSeluAlpha, act::kSeluScale}.Block(a, o, n); }
};
struct CeluFunctor {
  double alpha;
  template <typename T> OF_HD T operator()(T x) const { return EluFunctor{alpha, 1.0, 1.0 / alpha}(x); }
  void Block(const float* a, float* o, int64_t n) const { EluFunctor{alpha, 1.0, 1.0 / alpha}.Block(a, o, n); }
  void Block(const double* a, double* o, int64_t n) const { EluFunctor{alpha, 1.0, 1.0 / alpha}.Block(a, o, n); }
};
struct HardsigmoidFunctor {
  template <typename T> OF_HD T operator()(T x) const { return act::Clamp(x + T(3), T(0), T(6)) / T(6); }
};
struct HardswishFunctor {
  template <typename T> OF_HD T operator()(T x) const {
    return x * act::Clamp(x + T(3), T(0), T(6)) / T(6);
  }
};
struct HardshrinkFunctor {
  double lambd;
  template <typename T> OF_HD T operator()(T x) const {
    return (x >= T(-lambd) && x <= T(lambd)) ? T(0) : x;
  }
};
struct SoftshrinkFunctor {
  double lambd;
  template <typename T> OF_HD T operator()(T x) const {
    const T l = T(lambd);
    return x > l ? x - l : (x < -l ? x + l : x * T(0));
  }
};
struct TanhshrinkFunctor {
  template <typename T> OF_HD T operator()(T x) const { return x - VecTanh(x); }
};
struct SoftsignFunctor {
  template <typename T> OF_HD T operator()(T x) const { return x / (T(1) + std::fabs(x)); }
};
// Linear above the threshold: log1p(exp(bx)) / b would overflow there.
struct SoftplusFunctor {
  double beta, threshold;
  template <typename T> OF_HD T operator()(T x) const {
    const T bx = x * T(beta);
    return bx > T(threshold) ? x : std::log1p(std::exp(bx)) / T(beta);
  }
  template <typename T> void BlockOf(const T* a, T* o, int64_t n) const {
    const T b = T(beta), th = T(threshold);
    SleefCompose(a, o, n, SleefFn::kExp, SleefFn::kLog1p, [=](T x) { return x * b; },
                 [=](T x, T l) { return x * b > th ? x : l / b; });
  }
  void Block(const float* a, float* o, int64_t n) const { BlockOf(a, o, n); }
  void Block(const double* a, double* o, int64_t n) const { BlockOf(a, o, n); }
};
// tanh(softplus(x)) = n / (n + 2) with n = e^x (e^x + 2): one exp, no log. Above 20 the ratio
// is 1 in every float type (and e^x (e^x + 2) would overflow).
struct MishFunctor {
  template <typename T> OF_HD T operator()(T x) const {
    const T e = VecExp(x);
    const T n = e * (e + T(2));
    return x > T(20) ? x : x * (n / (n + T(2)));
  }
};
// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), stable for both signs.
struct LogsigmoidFunctor {
  template <typename T> OF_HD T operator()(T x) const {
    return (x < T(0) ? x : T(0)) - std::log1p(std::exp(-std::fabs(x)));
  }
  template <typename T> void BlockOf(const T* a, T* o, int64_t n) const {
    SleefCompose(a, o, n, SleefFn::kExp, SleefFn::kLog1p, [](T x) { return -std::fabs(x); },
                 [](T x, T l) { return (x < T(0) ? x : T(0)) - l; });
  }
  void Block(const float* a, float* o, int64_t n) const { BlockOf(a, o, n); }
  void Block(const double* a, double* o, int64_t n) const { BlockOf(a, o, n); }
};
struct ThresholdFunctor {
  double threshold, value;
  template <typename T> OF_HD T operator()(T x) const { return x <= T(threshold) ? T(value) : x; }
};
struct SiluFunctor {
  template <typename T> OF_VMATH_INLINE T operator()(T x) const { return x / (T(1) + VecExp(-x)); }
};
// gelu = x * Phi(x) (exact, erf) or its tanh approximation.
// (silu and the gelus forced inline, as GeluDerivative: in a large kernel file calling them from
// its own lambdas (fused_bias_ops.cpp, fused_glu_ops.cpp), GCC's inliner budget otherwise leaves
// a scalar call in the loop)
struct GeluFunctor {
  template <typename T> OF_VMATH_INLINE T operator()(T x) const {
    return T(0.5) * x * (T(1) + VecErf(x * T(act::kSqrt1_2)));
  }
};
struct GeluTanhFunctor {
  template <typename T> OF_VMATH_INLINE T operator()(T x) const {
    const T inner = T(act::kSqrt2OverPi) * (x + T(act::kGeluKappa) * x * x * x);
    return T(0.5) * x * (T(1) + VecTanh(inner));
  }
};
// prelu's binary form: the weight arrives broadcast along the channel dim.
struct PreluFunctor {
  template <typename T> OF_HD T operator()(T x, T w) const { return x > T(0) ? x : w * x; }
};

// ---- backward: (grad, x) -> grad * d/dx ----
struct LeakyReluBackwardFunctor {
  double negative_slope;
  template <typename T> OF_HD T operator()(T g, T x) const { return x > T(0) ? g : g * T(negative_slope); }
};
// The gradient is 0 at and beyond the bounds, and at NaN (PyTorch's vectorised kernel).
struct HardtanhBackwardFunctor {
  double min_val, max_val;
  template <typename T> OF_HD T operator()(T g, T x) const {
    return (x > T(min_val) && x < T(max_val)) ? g : T(0);
  }
};
struct EluBackwardFunctor {
  double alpha, scale, input_scale;
  template <typename T> OF_HD T operator()(T g, T x) const {
    return x > T(0) ? g * T(scale)
                    : g * T(alpha * scale * input_scale) * std::exp(x * T(input_scale));
  }
};
struct HardsigmoidBackwardFunctor {
  template <typename T> OF_HD T operator()(T g, T x) const {
    return (x > T(-3) && x < T(3)) ? g / T(6) : T(0);
  }
};
struct HardswishBackwardFunctor {
  template <typename T> OF_HD T operator()(T g, T x) const {
    return x <= T(-3) ? T(0) : (x >= T(3) ? g : g * (x / T(3) + T(0.5)));
  }
};
// hardshrink and softshrink share it: no gradient inside [-lambd, lambd] (nor at NaN).
struct ShrinkBackwardFunctor {
  double lambd;
  template <typename T> OF_HD T operator()(T g, T x) const {
    return (x < T(-lambd) || x > T(lambd)) ? g : T(0);
  }
};
struct TanhshrinkBackwardFunctor {
  template <typename T> OF_HD T operator()(T g, T x) const {
    const T t = VecTanh(x);
    return g * t * t;
  }
};
// 1/d - x sign(x)/d^2 with d = 1 + |x| (= 1/d^2), in the order PyTorch's composite gradient
// takes, so that +-inf give NaN as there.
struct SoftsignBackwardFunctor {
  template <typename T> OF_HD T operator()(T g, T x) const {
    const T d = T(1) + std::fabs(x);
    const T sgn = x > T(0) ? T(1) : (x < T(0) ? T(-1) : x);
    return g / d - g * x / (d * d) * sgn;
  }
};
struct SoftplusBackwardFunctor {
  double beta, threshold;
  template <typename T> OF_HD T operator()(T g, T x) const {
    const T z = std::exp(x * T(beta));
    return x * T(beta) > T(threshold) ? g : g * z / (z + T(1));
  }
};
// d/dx x tanh(sp(x)) = tanh(sp(x)) + x sigmoid(x) (1 - tanh(sp(x))^2).
struct MishBackwardFunctor {
  template <typename T> OF_HD T operator()(T g, T x) const {
    const T e = VecExp(x);
    const T n = e * (e + T(2));
    const T ts = x > T(20) ? T(1) : n / (n + T(2));
    return g * (ts + x * act::Sigmoid(x) * (T(1) - ts * ts));
  }
};
struct LogsigmoidBackwardFunctor {
  template <typename T> OF_HD T operator()(T g, T x) const {
    const T z = std::exp(-std::fabs(x));
    return x < T(0) ? g * (T(1) - z / (T(1) + z)) : g * (z / (T(1) + z));
  }
};
struct ThresholdBackwardFunctor {
  double threshold;
  template <typename T> OF_HD T operator()(T g, T x) const { return x <= T(threshold) ? T(0) : g; }
};
struct SiluBackwardFunctor {
  template <typename T> OF_HD T operator()(T g, T x) const {
    const T s = act::Sigmoid(x);
    return g * s * (T(1) + x * (T(1) - s));
  }
};
struct GeluBackwardFunctor {
  template <typename T> OF_VMATH_INLINE T operator()(T g, T x) const {
    return g * act::GeluDerivative(x);
  }
};
struct GeluTanhBackwardFunctor {
  template <typename T> OF_HD T operator()(T g, T x) const {
    const T x2 = x * x;
    const T t = VecTanh(T(act::kSqrt2OverPi) * (x + T(act::kGeluKappa) * x2 * x));
    const T left = T(0.5) * (T(1) + t);
    const T right = T(0.5) * x * (T(1) - t * t) * T(act::kSqrt2OverPi) *
                    (T(1) + T(3 * act::kGeluKappa) * x2);
    return g * (left + right);
  }
};

}  // namespace oneflow
