// The math family's functors that the hand-written entries of src/ops/math_ops.cpp use too
// (clamp with tensor bounds, nan_to_num, nextafter), apart from src/kernels/functors/math.h so
// that a new math functor does not recompile math_ops.cpp (docs/build.md).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/hd.h"

namespace oneflow {

namespace math_detail {
template <typename T> constexpr bool kFloat = std::is_floating_point_v<T>;
constexpr double kPi = 3.14159265358979323846;
constexpr double kLn2 = 0.69314718055994530942;
}  // namespace math_detail

// clamp_min / clamp_max: NaN in either operand gives NaN (as torch.clamp).
struct ClampMinFunctor { template <typename T> OF_HD T operator()(T x, T lo) const {
  if constexpr (math_detail::kFloat<T>) { if (x != x) return x; if (lo != lo) return lo; }
  return x < lo ? lo : x; } };
struct ClampMaxFunctor { template <typename T> OF_HD T operator()(T x, T hi) const {
  if constexpr (math_detail::kFloat<T>) { if (x != x) return x; if (hi != hi) return hi; }
  return x > hi ? hi : x; } };
// clamp with both bounds: min(max(x, lo), hi), so lo > hi gives hi.
struct ClampFunctor { template <typename T> OF_HD T operator()(T x, T lo, T hi) const {
  return ClampMaxFunctor{}(ClampMinFunctor{}(x, lo), hi); } };

struct NextafterFunctor { template <typename T> OF_HD T operator()(T a, T b) const { return std::nextafter(a, b); } };
// nextafter of 16-bit floats in their own format (H = Half / BFloat16; math_ops.cpp on the CPU,
// cuda/nextafter.cu on the device): the storage formats are sign-magnitude, so the neighbour is
// one step of the bit pattern.
template <typename H>
OF_HD H Next16(H a, H b) {
  const float fa = a, fb = b;
  if (fa != fa || fb != fb) return H(fa + fb);
  if (fa == fb) return b;
  H r;
  if (fa == 0) r.x = fb > 0 ? 0x0001 : 0x8001;
  else r.x = static_cast<uint16_t>((fa < fb) == (fa > 0) ? a.x + 1 : a.x - 1);
  return r;
}

// NaN -> nan, +inf -> posinf, -inf -> neginf; the entry resolves the defaults (the input
// dtype's largest / lowest finite values) before building the functor.
// On complex input the real and imaginary parts are replaced separately, as PyTorch does.
struct NanToNumFunctor {
  static constexpr int kComplex = 1;
  double nan, posinf, neginf;
  template <typename T> OF_HD T operator()(T x) const {
    if constexpr (requires { x.imag(); }) {
      return T((*this)(x.real()), (*this)(x.imag()));
    } else if constexpr (math_detail::kFloat<T>) {
      // selects, not early returns: the CPU loop vectorises (1.5x PyTorch's time before)
      const T inf = std::numeric_limits<T>::infinity();
      T r = x != x ? static_cast<T>(nan) : x;
      r = x == inf ? static_cast<T>(posinf) : r;
      return x == -inf ? static_cast<T>(neginf) : r;
    }
    return x;
  }
};

// Truncating division; integer MIN / -1 wraps instead of trapping (divisors were checked).
struct TruncDivideFunctor {
  template <typename T> OF_HD T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      return std::trunc(a / b);
    } else if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return static_cast<T>(-static_cast<std::make_unsigned_t<T>>(a));
      return static_cast<T>(a / b);
    } else {
      return static_cast<T>(a / b);
    }
  }
};

}  // namespace oneflow
