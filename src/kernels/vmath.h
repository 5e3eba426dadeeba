// Branch-free float exp / erf / tanh for the pointwise functors. std::exp and friends are library
// calls, and a call stops GCC from vectorising the engine's contiguous inner loop (glibc's vector
// variants are only declared under -ffast-math); these are plain arithmetic with selects, so the
// loops become AVX code. NaN propagates (every select compares, and comparisons with NaN are
// false). double keeps the library functions: its loops are not the hot ones.
// Accuracy (checked against double libm over their ranges): Exp 1 ulp, Tanh 2 ulp, Erf 2e-7
// absolute. In device code (the functors run in CUDA kernels too) they return the device's own
// expf / erff / tanhf instead: there is no loop to vectorise there.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/hd.h"

// Forced inline: a translation unit instantiating many functors can exceed GCC's inlining
// budget, and an out-of-line call would stop the caller's loop from vectorising.
#define OF_VMATH_INLINE OF_HD inline __attribute__((always_inline))

namespace oneflow::vmath {

OF_VMATH_INLINE float BitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// e^x = 2^n e^r with n = round(x / ln 2) and |r| <= ln2 / 2 (ln 2 split in two parts so that r
// is exact); e^r by Cephes' degree-7 polynomial; 2^n built in the exponent field, in two halves
// so that results in the subnormal range survive.
OF_VMATH_INLINE float Exp(float x) {
#ifdef __CUDA_ARCH__
  return ::expf(x);
#else
  const float kHi = 88.72283935546875f, kLo = -103.972084045410f;
  float xc = x > kHi ? kHi : x;
  xc = xc < kLo ? kLo : xc;
  float n = std::floor(xc * 1.44269504088896341f + 0.5f);
  n = n == n ? n : 0.f;  // NaN input: keep the integer conversion defined (r is NaN anyway)
  float r = xc - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * r * r + r + 1.0f;
  const int32_t k = static_cast<int32_t>(n), k1 = k >> 1, k2 = k - k1;
  const float s1 = BitsToFloat(static_cast<uint32_t>(k1 + 127) << 23);
  const float s2 = BitsToFloat(static_cast<uint32_t>(k2 + 127) << 23);
  const float res = y * s1 * s2;
  const float hi = x > kHi ? INFINITY : res;
  return x < kLo ? 0.0f : hi;
#endif
}

// erf: Cephes' odd polynomial for |x| < 1 (relative error ~2e-7, where the form below would
// cancel), Abramowitz & Stegun 7.1.26 elsewhere: 1 - t P(t) e^{-x^2}, t = 1 / (1 + p|x|).
// ErfGivenExp takes z = x * x and e = exp(-z) from the caller: gelu's gradient needs that same
// exp for the Gaussian density, and shares it instead of computing it twice.
OF_VMATH_INLINE float ErfGivenExp(float x, float z, float e) {
  float q = 7.853861353153693e-5f;
  q = q * z - 8.010193625184903e-4f;
  q = q * z + 5.188327685732524e-3f;
  q = q * z - 2.685381193529856e-2f;
  q = q * z + 1.128358514861418e-1f;
  q = q * z - 3.761262582423300e-1f;
  q = q * z + 1.128379165726710e0f;
  const float ax = std::fabs(x);
  const float t = 1.0f / (1.0f + 0.3275911f * ax);
  float p = 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  const float big = std::copysign(1.0f - p * t * e, x);
  return ax < 1.0f ? x * q : big;
}
OF_VMATH_INLINE float Erf(float x) {
#ifdef __CUDA_ARCH__
  return ::erff(x);
#else
  const float z = x * x;
  return ErfGivenExp(x, z, Exp(-z));
#endif
}

// tanh: an odd polynomial near 0 (Cephes' tanhf, where 1 - 2/(e^{2x}+1) would cancel), the
// exp form elsewhere; saturates to +-1 for large |x|.
OF_VMATH_INLINE float Tanh(float x) {
#ifdef __CUDA_ARCH__
  return ::tanhf(x);
#else
  const float ax = std::fabs(x);
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = x + x * z * p;
  const float e = Exp(2.0f * ax);  // inf for large |x|: 1 - 2/inf = 1
  const float big = std::copysign(1.0f - 2.0f / (e + 1.0f), x);
  return ax < 0.625f ? small : big;
#endif
}

// The functors' entry points: float goes through the branch-free versions, double through libm.
template <typename T> OF_VMATH_INLINE T ExpOf(T x) {
  if constexpr (std::is_same_v<T, float>) return Exp(x); else return std::exp(x);
}
template <typename T> OF_VMATH_INLINE T ErfOf(T x) {
  if constexpr (std::is_same_v<T, float>) return Erf(x); else return std::erf(x);
}
template <typename T> OF_VMATH_INLINE T TanhOf(T x) {
  if constexpr (std::is_same_v<T, float>) return Tanh(x); else return std::tanh(x);
}

}  // namespace oneflow::vmath
