// Bessel functions of torch.special and the scaled complementary error function (the bessel
// family of the op table, src/ops/table/bessel.yaml). T is the OpMath type; every function is
// evaluated in double and rounded once. J0, J1, Y0, Y1 are the C library's (glibc on the host,
// CUDA's math library on the device); K0 / K1 come from their integral representation, erfcx
// from erfc with an exactly split x^2 and an asymptotic series.
#pragma once
#include <cmath>

#include "core/hd.h"
#include "kernels/functors/special.h"

namespace oneflow {

namespace special {

OF_INLINE_HD double BesselJ0(double x) { return ::j0(x); }
OF_INLINE_HD double BesselJ1(double x) { return ::j1(x); }
// Y0 / Y1: -inf at 0, NaN below (outside their domain), as PyTorch.
OF_INLINE_HD double BesselY0(double x) { return x < 0 ? kNaN : ::y0(x); }
OF_INLINE_HD double BesselY1(double x) { return x < 0 ? kNaN : ::y1(x); }

// K_nu(x) for nu = 0, 1 (scaled: e^x K_nu(x)) from K_nu(x) = int_0^inf exp(-x cosh t) cosh(nu t) dt
// by the trapezoidal rule. The integrand is analytic and decays doubly exponentially, so the rule
// converges geometrically in 1 / h; with h = min(1/4, 1 / (2 sqrt(x))) (the peak's width is about
// 1 / sqrt(x)) and the sum cut where terms fall below 1e-18 of it, the result is within 1.3e-15 of
// mpmath's from x = 1e-300 to 1e8 (checked when written; tests/test_special_bessel.py). The factor
// exp(-x (cosh t - 1)) is taken as exp(-2 x sinh^2(t / 2)), which has no cancellation.
OF_INLINE_HD double BesselK(int nu, double x, bool scaled) {
  if (x != x) return x;
  if (x < 0) return kNaN;
  if (x == 0) return kInf;
  if (std::isinf(x)) return 0.0;
  if (nu == 1 && x < 1e-300) return 1 / x;  // K1(x) = 1/x (1 + O(x^2 log x)); cosh t would overflow
  const double h = x > 4.0 ? 0.5 / std::sqrt(x) : 0.25;
  double sum = 0.5;  // the t = 0 term, halved
  for (int k = 1; k < 100000; ++k) {
    const double t = k * h, s = std::sinh(0.5 * t);
    const double term = std::exp(-2 * x * s * s) * (nu == 0 ? 1.0 : std::cosh(t));
    sum += term;
    if (term < 1e-18 * sum) break;
  }
  return scaled ? h * sum : h * sum * std::exp(-x);
}

// sin(x) / x (1 at 0).
OF_INLINE_HD double SphericalBesselJ0(double x) {
  if (std::isinf(x)) return 0.0;
  return x == 0 ? 1.0 : std::sin(x) / x;
}

// erfcx(x) = exp(x^2) erfc(x). Below 25: exp(x^2) with x^2 = hi + lo split exactly (fma), so the
// rounding of x^2 costs nothing; erfc(x) is still a normal number there. From 25 on: the
// asymptotic series 1 / (x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k (terms below 1e-22 by k = 10).
OF_INLINE_HD double Erfcx(double x) {
  if (x != x) return x;
  if (x == -kInf) return kInf;
  if (x < 25) {
    const double hi = x * x, lo = std::fma(x, x, -hi);
    return std::exp(hi) * (1 + lo) * std::erfc(x);
  }
  if (std::isinf(x)) return 0.0;
  const double z = 1 / (2 * x * x);
  double term = 1, sum = 1;
  for (int k = 1; k < 12; ++k) {
    term *= -(2 * k - 1) * z;
    sum += term;
  }
  return sum / (x * kSqrtPi);
}

}  // namespace special

struct BesselJ0Functor { template <typename T> OF_HD T operator()(T x) const {
  return static_cast<T>(special::BesselJ0(x)); } };
struct BesselJ1Functor { template <typename T> OF_HD T operator()(T x) const {
  return static_cast<T>(special::BesselJ1(x)); } };
struct BesselY0Functor { template <typename T> OF_HD T operator()(T x) const {
  return static_cast<T>(special::BesselY0(x)); } };
struct BesselY1Functor { template <typename T> OF_HD T operator()(T x) const {
  return static_cast<T>(special::BesselY1(x)); } };
struct ModifiedBesselK0Functor { template <typename T> OF_HD T operator()(T x) const {
  return static_cast<T>(special::BesselK(0, x, false)); } };
struct ModifiedBesselK1Functor { template <typename T> OF_HD T operator()(T x) const {
  return static_cast<T>(special::BesselK(1, x, false)); } };
struct ScaledModifiedBesselK0Functor { template <typename T> OF_HD T operator()(T x) const {
  return static_cast<T>(special::BesselK(0, x, true)); } };
struct ScaledModifiedBesselK1Functor { template <typename T> OF_HD T operator()(T x) const {
  return static_cast<T>(special::BesselK(1, x, true)); } };
struct SphericalBesselJ0Functor { template <typename T> OF_HD T operator()(T x) const {
  return static_cast<T>(special::SphericalBesselJ0(x)); } };
struct ErfcxFunctor { template <typename T> OF_HD T operator()(T x) const {
  return static_cast<T>(special::Erfcx(x)); } };

}  // namespace oneflow
