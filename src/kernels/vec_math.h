// The vectorised float math of the CPU kernels, in one place: exp, log, tanh, sigmoid and erf
// written so that loops over them vectorise. std::exp and friends are library calls, and a call
// stops GCC from vectorising a loop (glibc's vector variants are only declared under
// -ffast-math, which would also drop the NaN/inf semantics the kernels need); these are plain
// arithmetic with selects (branch-free), so the loops become AVX code. NaN propagates. double
// keeps the library functions: its loops are not the hot ones. Whole arrays go through SLEEF
// instead where it has the function (kernels/sleef_map.h).
// `XFloat` are the float forms; `VecX<T>` the functors' entry points (float: XFloat, others: libm).
// Used by the pointwise functors (functors.h, functors/*.h), the softmax family, logsumexp, the
// NLL / cross-entropy rows, attention and the scans.
// The functions are OF_HD (the functors run in CUDA kernels too); in device code the float
// forms return the device's own expf / logf / tanhf / erff instead, as there is no loop to
// vectorise.
#pragma once
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/hd.h"

// Forced inline: a translation unit instantiating many functors can exceed GCC's inlining
// budget, and an out-of-line call would stop the caller's loop from vectorising.
#define OF_VMATH_INLINE OF_HD inline __attribute__((always_inline))

namespace oneflow {

// exp(x) for float, within 1 ulp: x = k ln2 + r with |r| <= ln2/2 (ln2 split in two parts, so
// k ln2 is exact), exp(r) by its Taylor polynomial of degree 7 (truncation < 5e-9 relative),
// 2^k built from exponent bits in two halves (k from -150 to 128, each half a normal float, so
// p 2^k1 is exact and the second product rounds once, subnormal results included). Results
// below half the smallest subnormal give 0, beyond FLT_MAX inf, NaN stays NaN. Branch-free
// (the special cases are bit masks applied at the end), so that GCC vectorises loops over it
// without -ffast-math.
// 2^k p(r) of ExpFloat for a given k (as a float, already clamped by the caller).
OF_VMATH_INLINE float ExpScaled(float x, float kf) {
  const float r = (x - kf * 0.693359375f) - kf * -2.12194440e-4f;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t k = static_cast<int32_t>(kf);
  const int32_t k1 = k >> 1, k2 = k - k1;
  return p * std::bit_cast<float>((k1 + 127) << 23) * std::bit_cast<float>((k2 + 127) << 23);
}

// round(x / ln 2), to nearest, as a float.
OF_VMATH_INLINE float ExpExponent(float x) { return (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f; }

OF_VMATH_INLINE float ExpFloat(float x) {
#ifdef __CUDA_ARCH__
  return ::expf(x);
#else
  // (this operand order of the clamp also maps NaN to -150)
  const float y = ExpScaled(x, std::min(128.0f, std::max(-150.0f, ExpExponent(x))));
  const uint32_t under = 0u - static_cast<uint32_t>(x < -103.972084f);
  const uint32_t over = 0u - static_cast<uint32_t>(x > 88.72283f);
  const uint32_t nan = 0u - static_cast<uint32_t>(x != x);
  const uint32_t bits = (std::bit_cast<uint32_t>(y) & ~(under | over | nan)) | (over & 0x7f800000u) |
                        (nan & std::bit_cast<uint32_t>(x));
  return std::bit_cast<float>(bits);
#endif
}

// log(x) for positive normal floats (callers guarantee the range), within 1 ulp: x = m 2^e
// with m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s), s = (m - 1)/(m + 1), |s| <= 0.1716, by the
// odd series up to s^11 (truncation < 1e-9 relative). Branch-free, vectorisable.
OF_VMATH_INLINE float LogPositiveFloat(float x) {
#ifdef __CUDA_ARCH__
  return ::logf(x);
#else
  // The exponent counted from sqrt(1/2)'s bit pattern (0x3f3504f3), so that the mantissa left
  // after removing it lies in [sqrt(1/2), sqrt(2)).
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const int32_t ex = static_cast<int32_t>(bits - 0x3f3504f3u) >> 23;
  const float m = std::bit_cast<float>(bits - (static_cast<uint32_t>(ex) << 23));
  const float s = (m - 1.0f) / (m + 1.0f), z = s * s;
  float p = 2.0f / 11;
  p = p * z + 2.0f / 9;
  p = p * z + 2.0f / 7;
  p = p * z + 2.0f / 5;
  p = p * z + 2.0f / 3;
  p = p * z + 2.0f;
  const float fe = static_cast<float>(ex);
  return (fe * 0.693359375f + s * p) + fe * -2.12194440e-4f;
#endif
}

// tanh(x) for float, branch-free (vectorises): |x| < 0.4 by its odd Taylor series up to x^15
// (truncation < 2e-9 relative there), else 1 - 2 / (exp(2|x|) + 1) with the sign of x
// (no cancellation beyond a factor 2 at |x| >= 0.4; 1 exactly once exp overflows); NaN stays NaN.
OF_VMATH_INLINE float TanhFloat(float x) {
#ifdef __CUDA_ARCH__
  return ::tanhf(x);
#else
  const float a = std::fabs(x), z = x * x;
  float p = -929569.0f / 638512875;
  p = p * z + 21844.0f / 6081075;
  p = p * z + -1382.0f / 155925;
  p = p * z + 62.0f / 2835;
  p = p * z + -17.0f / 315;
  p = p * z + 2.0f / 15;
  p = p * z + -1.0f / 3;
  const float small = a + a * z * p;
  const float big = 1.0f - 2.0f / (ExpFloat(2.0f * a) + 1.0f);
  return std::copysign(a < 0.4f ? small : big, x);  // the sign of x, -0 included
#endif
}

// sigmoid(x) = 1 / (1 + exp(-x)) for float on ExpFloat (vectorises); exp(-x) overflowing gives 0,
// underflowing gives 1, as the libm form does.
OF_VMATH_INLINE float SigmoidFloat(float x) { return 1.0f / (1.0f + ExpFloat(-x)); }

// ExpFloat for x <= 0 or NaN, the shifted exponents of softmax-like kernels (x - max): the same
// result bits as ExpFloat there (checked over every such float in tests/test_softmax_rows.py),
// without the overflow and NaN-payload masks, which are dead for these arguments (a NaN argument
// still gives NaN, through the polynomial). About 25% faster in a loop.
OF_VMATH_INLINE float ExpNonPositiveFloat(float x) {
#ifdef __CUDA_ARCH__
  return ::expf(x);
#else
  const float y = ExpScaled(x, std::max(-150.0f, ExpExponent(x)));
  return x < -103.972084f ? 0.0f : y;
#endif
}

// erf for float, within 2e-7 absolute: Cephes' odd polynomial for |x| < 1 (where the form below
// would cancel), Abramowitz & Stegun 7.1.26 elsewhere: 1 - t P(t) e^{-x^2}, t = 1 / (1 + p|x|).
// ErfGivenExpFloat takes z = x * x and e = exp(-z) from the caller: gelu's gradient needs that
// same exp for the Gaussian density, and shares it instead of computing it twice.
OF_VMATH_INLINE float ErfGivenExpFloat(float x, float z, float e) {
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

OF_VMATH_INLINE float ErfFloat(float x) {
#ifdef __CUDA_ARCH__
  return ::erff(x);
#else
  const float z = x * x;
  return ErfGivenExpFloat(x, z, ExpFloat(-z));
#endif
}

// The functors' entry points: float through the forms above, other types through libm.
template <typename T> OF_VMATH_INLINE T VecExp(T x) {
  if constexpr (std::is_same_v<T, float>) return ExpFloat(x); else return std::exp(x);
}
template <typename T> OF_VMATH_INLINE T VecExpNonPositive(T x) {
  if constexpr (std::is_same_v<T, float>) return ExpNonPositiveFloat(x); else return std::exp(x);
}
template <typename T> OF_VMATH_INLINE T VecTanh(T x) {
  if constexpr (std::is_same_v<T, float>) return TanhFloat(x); else return std::tanh(x);
}
template <typename T> OF_VMATH_INLINE T VecErf(T x) {
  if constexpr (std::is_same_v<T, float>) return ErfFloat(x); else return std::erf(x);
}

}  // namespace oneflow
