// Functors of the pointwise math family (src/ops/table/math.yaml). T is the OpMath type (float
// for half/bfloat16); semantics follow PyTorch, NaN and signed zeros included.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include "core/hd.h"
#include "kernels/sleef_map.h"
#include "core/scalar.h"
#include "kernels/functors/math_shared.h"

namespace oneflow {

struct FracFunctor { template <typename T> OF_HD T operator()(T x) const { return x - std::trunc(x); } };
struct HypotFunctor : SleefBlock2<SleefFn2::kHypot> {
  template <typename T> OF_HD T operator()(T a, T b) const { return std::hypot(a, b); } };
// exp2(z) = exp(z ln 2) on complex input, as pow(2, z).
struct Exp2Functor : SleefBlock<SleefFn::kExp2> {
  static constexpr int kComplex = 1;
  template <typename T> OF_HD T operator()(T x) const {
    if constexpr (kIsCplx<T>) return std::exp(x * typename T::value_type(math_detail::kLn2));
    else return std::exp2(x);
  }
};
struct Deg2radFunctor { template <typename T> OF_HD T operator()(T x) const {
  return x * static_cast<T>(math_detail::kPi / 180.0); } };
struct Rad2degFunctor { template <typename T> OF_HD T operator()(T x) const {
  return x * static_cast<T>(180.0 / math_detail::kPi); } };
// sin(pi x) / (pi x), 1 at 0. The product is rounded in T, as PyTorch computes it. Complex
// input is computed in double from its parts (sin(a + ib) = sin a cosh b + i cos a sinh b), so
// that complex64 keeps the digits its rounded pi z would lose.
struct SincFunctor { static constexpr int kComplex = 1; template <typename T> OF_HD T operator()(T x) const {
  if constexpr (kIsCplx<T>) {
    using R = typename T::value_type;
    const double a = math_detail::kPi * static_cast<double>(x.real()), b = math_detail::kPi * static_cast<double>(x.imag());
    if (a == 0.0 && b == 0.0) return T(1);
    const double sr = std::sin(a) * std::cosh(b), si = std::cos(a) * std::sinh(b), d = a * a + b * b;
    return T(static_cast<R>((sr * a + si * b) / d), static_cast<R>((si * a - sr * b) / d));
  }
  if (x == T(0)) return T(1);
  const T px = static_cast<T>(math_detail::kPi) * x;
  return std::sin(px) / px; } };

// log(exp(a) + exp(b)) = max + log1p(exp(-|a - b|)); equal infinities give themselves. Complex
// operands: the one with the larger real part is the "max", max + log1p(exp(min - max)); NaN in
// either gives NaN; equal infinite real parts: -inf gives min (exp vanishes, the phase is lost),
// +inf the direct log(exp(a) + exp(b)), as PyTorch.
struct LogaddexpFunctor { static constexpr int kComplex = 1; template <typename T> OF_HD T operator()(T a, T b) const {
  if constexpr (kIsCplx<T>) {
    using R = typename T::value_type;
    const bool a_max = a.real() >= b.real();
    const T mx = a_max ? a : b, mn = a_max ? b : a;
    if (mn != mn || mx != mx) return T(std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN());
    if (std::isinf(mn.real()) && mn.real() == mx.real())
      return mn.real() < R(0) ? mn : std::log(std::exp(mn) + std::exp(mx));
    return mx + ComplexLog1p(std::exp(mn - mx));
  } else {
  if (std::isinf(a) && a == b) return a;
  const T m = a > b ? a : b;
  return m + std::log1p(std::exp(-std::abs(a - b))); } } };
struct Logaddexp2Functor { template <typename T> OF_HD T operator()(T a, T b) const {
  if (std::isinf(a) && a == b) return a;
  const T m = a > b ? a : b;
  return m + std::log1p(std::exp2(-std::abs(a - b))) / static_cast<T>(math_detail::kLn2); } };

// x * log(y) with 0 * log(anything but NaN) = 0.
struct XlogyFunctor { template <typename T> OF_HD T operator()(T x, T y) const {
  if (y != y) return y;
  if (x == T(0)) return T(0);
  return x * std::log(y); } };
struct Xlog1pyFunctor { template <typename T> OF_HD T operator()(T x, T y) const {
  if (y != y) return y;
  if (x == T(0)) return T(0);
  return x * std::log1p(y); } };

struct CopysignFunctor { template <typename T> OF_HD T operator()(T a, T b) const { return std::copysign(a, b); } };
// 0 below zero, 1 above, `values` at zero (NaN input gives 0, as in PyTorch).
struct HeavisideFunctor { template <typename T> OF_HD T operator()(T x, T values) const {
  return x == T(0) ? values : T(x > T(0)); } };

// fmax/fmin: NaN only when both operands are NaN.
struct FmaxFunctor { template <typename T> OF_HD T operator()(T a, T b) const {
  if constexpr (math_detail::kFloat<T>) { if (a != a) return b; if (b != b) return a; }
  return a < b ? b : a; } };
struct FminFunctor { template <typename T> OF_HD T operator()(T a, T b) const {
  if constexpr (math_detail::kFloat<T>) { if (a != a) return b; if (b != b) return a; }
  return b < a ? b : a; } };

// Integer-only ops (gcd, lcm, shifts): their entries refuse bool before any kernel runs; the
// bool instantiation only has to compile.
template <typename T> using IntOnly = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

// Euclid on magnitudes; gcd(MIN, -1) = 1 and |MIN| wraps like PyTorch's std::gcd.
struct GcdFunctor { template <typename T> OF_HD T operator()(T a, T b) const {
  using U = std::make_unsigned_t<IntOnly<T>>;
  auto mag = [](T v) { return v < T(0) ? static_cast<U>(U(0) - static_cast<U>(v)) : static_cast<U>(v); };
  U x = mag(a), y = mag(b);
  while (y != 0) { U r = x % y; x = y; y = r; }
  return static_cast<T>(x); } };
struct LcmFunctor { template <typename T> OF_HD T operator()(T a, T b) const {
  const T g = GcdFunctor{}(a, b);
  if (g == T(0)) return T(0);
  const auto l = (a / g) * b;  // in the promoted type; wraps when stored, as PyTorch's
  return static_cast<T>(l < 0 ? -l : l); } };

// Shifts by a negative amount or by the bit width or more give 0 (right shifts of negative
// values: -1), as PyTorch defines them, instead of C++'s undefined behaviour.
struct BitwiseLeftShiftFunctor { template <typename T> OF_HD T operator()(T a, T b) const {
  using U = std::make_unsigned_t<IntOnly<T>>;
  constexpr T kBits = static_cast<T>(sizeof(T) * 8);
  if (b < T(0) || b >= kBits) return T(0);
  return static_cast<T>(static_cast<U>(a) << b); } };
struct BitwiseRightShiftFunctor { template <typename T> OF_HD T operator()(T a, T b) const {
  constexpr T kBits = static_cast<T>(sizeof(T) * 8);
  if (b < T(0) || b >= kBits) return a < T(0) ? T(-1) : T(0);
  return static_cast<T>(a >> b); } };

// ---- bool results ----
struct SignbitFunctor { template <typename T> OF_HD bool operator()(T x) const {
  // copysign rather than std::signbit: GCC 12 miscompiles the vectorised signbit of
  // bfloat16-widened values (internal compiler error); same result, NaN signs included.
  if constexpr (math_detail::kFloat<T>) return std::copysign(T(1), x) < T(0);
  else if constexpr (std::is_signed_v<T>) return x < T(0);
  else return false; } };
struct IsneginfFunctor { template <typename T> OF_HD bool operator()(T x) const {
  if constexpr (math_detail::kFloat<T>) return x == -std::numeric_limits<T>::infinity();
  else return false; } };
struct IsposinfFunctor { template <typename T> OF_HD bool operator()(T x) const {
  if constexpr (math_detail::kFloat<T>) return x == std::numeric_limits<T>::infinity();
  else return false; } };
struct IsrealFunctor {
  static constexpr int kComplex = 1;
  template <typename T> OF_HD bool operator()(T x) const {
    if constexpr (kIsComplexT<T>) return x.imag() == 0; else return true;
  }
};

// |a - b| <= atol + rtol * |b|, or a == b (infinities), or both NaN with equal_nan. Integer
// and bool inputs are compared in float (no wrap-around of a - b), as PyTorch does.
// Complex: the same test on the modulus |a - b| (NaN: either part NaN), as PyTorch.
struct IscloseFunctor {
  static constexpr int kComplex = 1;
  double rtol, atol;
  bool equal_nan;
  template <typename T> OF_HD bool operator()(T a, T b) const {
    if (a == b) return true;
    if constexpr (kIsCplx<T>) {
      using R = typename T::value_type;
      const bool na = a != a, nb = b != b;
      if (na || nb) return equal_nan && na && nb;
      const R allowed = static_cast<R>(atol) + static_cast<R>(rtol) * std::abs(b);
      return std::isfinite(allowed) && std::abs(a - b) <= allowed;
    } else if constexpr (math_detail::kFloat<T>) {
      if (a != a || b != b) return equal_nan && a != a && b != b;
      const T allowed = static_cast<T>(atol) + std::abs(static_cast<T>(rtol) * b);
      return std::isfinite(allowed) && std::abs(a - b) <= allowed;
    } else {
      const float fa = static_cast<float>(a), fb = static_cast<float>(b);
      return std::abs(fa - fb) <= static_cast<float>(atol) + std::abs(static_cast<float>(rtol) * fb);
    }
  }
};

// ---- with attributes ----
// round(x, decimals), half to even like PyTorch and numpy: scale by 10^|decimals|, round half to even, scale back.
struct RoundDecimalsFunctor {
  int64_t decimals;
  template <typename T> OF_HD T operator()(T x) const {
    if constexpr (!math_detail::kFloat<T>) {
      return x;
    } else {
      if (decimals == 0) return std::nearbyint(x);
      const T ten = std::pow(T(10), static_cast<T>(decimals > 0 ? decimals : -decimals));
      return decimals > 0 ? std::nearbyint(x * ten) / ten : std::nearbyint(x / ten) * ten;
    }
  }
};

// log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps is given (and not negative).
struct LogitFunctor {
  std::optional<double> eps;
  template <typename T> OF_HD T operator()(T x) const {
    if (eps && *eps >= 0) {
      const T lo = static_cast<T>(*eps), hi = T(1) - lo;
      x = x < lo ? lo : (x > hi ? hi : x);  // NaN stays NaN
    }
    return std::log(x / (T(1) - x));
  }
  // Contiguous float / double runs: the log on SLEEF (Note [SLEEF blocks]).
  template <typename T> void BlockOf(const T* a, T* o, int64_t n) const {
    const bool clamp = eps && *eps >= 0;
    const T lo = clamp ? static_cast<T>(*eps) : T(0), hi = T(1) - lo;
    SleefCompose(a, o, n, SleefFn::kLog, SleefFn::kNone, [=](T x) {
      if (clamp) x = x < lo ? lo : (x > hi ? hi : x);
      return x / (T(1) - x);
    }, [](T, T l) { return l; });
  }
  void Block(const float* a, float* o, int64_t n) const { BlockOf(a, o, n); }
  void Block(const double* a, double* o, int64_t n) const { BlockOf(a, o, n); }
};

// addcmul: input + value * t1 * t2; addcdiv: input + value * t1 / t2 (value in T).
// (complex: the value as a complex number)
struct AddcmulFunctor {
  static constexpr int kComplex = 1;
  Scalar value;
  template <typename T> OF_HD T operator()(T x, T a, T b) const {
    if constexpr (kIsCplx<T>) {
      using R = typename T::value_type;
      return x + T(static_cast<R>(value.ToDouble()), static_cast<R>(value.ImagPart())) * a * b;
    } else if constexpr (math_detail::kFloat<T>) {
      return x + static_cast<T>(value.ToDouble()) * a * b;
    } else {
      return static_cast<T>(x + static_cast<T>(value.ToInt()) * a * b);
    }
  }
};
struct AddcdivFunctor {
  static constexpr int kComplex = 1;
  Scalar value;
  template <typename T> OF_HD T operator()(T x, T a, T b) const {
    if constexpr (kIsCplx<T>) {
      using R = typename T::value_type;
      return x + T(static_cast<R>(value.ToDouble()), static_cast<R>(value.ImagPart())) * (a / b);
    } else {
      return x + static_cast<T>(value.ToDouble()) * (a / b);
    }
  }
};

}  // namespace oneflow
