// exp written so that loops over it vectorise (the libm call does not without -ffast-math,
// which would also drop the NaN/inf semantics the kernels need). Used by the float exp / tanh /
// sigmoid functors, the softmax family, logsumexp and the scans.
// The functions are OF_HD (the functors run in CUDA kernels too); in device code the float
// forms return the device's own expf / logf / tanhf instead, as there is no loop to vectorise.
#pragma once
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "core/hd.h"

namespace oneflow {

// exp(x) for float, within 1 ulp: x = k ln2 + r with |r| <= ln2/2 (ln2 split in two parts, so
// k ln2 is exact), exp(r) by its Taylor polynomial of degree 7 (truncation < 5e-9 relative),
// 2^k built from exponent bits in two halves (k from -150 to 128, each half a normal float, so
// p 2^k1 is exact and the second product rounds once, subnormal results included). Results
// below half the smallest subnormal give 0, beyond FLT_MAX inf, NaN stays NaN. Branch-free
// (the special cases are bit masks applied at the end), so that GCC vectorises loops over it
// without -ffast-math.
// 2^k p(r) of ExpFloat for a given k (as a float, already clamped by the caller).
OF_INLINE_HD float ExpScaled(float x, float kf) {
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
OF_INLINE_HD float ExpExponent(float x) { return (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f; }

OF_INLINE_HD float ExpFloat(float x) {
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
OF_INLINE_HD float LogPositiveFloat(float x) {
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
OF_INLINE_HD float TanhFloat(float x) {
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
OF_INLINE_HD float SigmoidFloat(float x) { return 1.0f / (1.0f + ExpFloat(-x)); }

// ExpFloat for x <= 0 or NaN, the shifted exponents of softmax-like kernels (x - max): the same
// result bits as ExpFloat there (checked over every such float in tests/test_softmax_rows.py),
// without the overflow and NaN-payload masks, which are dead for these arguments (a NaN argument
// still gives NaN, through the polynomial). About 25% faster in a loop.
OF_INLINE_HD float ExpNonPositiveFloat(float x) {
#ifdef __CUDA_ARCH__
  return ::expf(x);
#else
  const float y = ExpScaled(x, std::max(-150.0f, ExpExponent(x)));
  return x < -103.972084f ? 0.0f : y;
#endif
}

template <typename T> OF_INLINE_HD T VecExp(T x) { return std::exp(x); }
template <> OF_INLINE_HD float VecExp<float>(float x) { return ExpFloat(x); }
template <typename T> OF_INLINE_HD T VecExpNonPositive(T x) { return std::exp(x); }
template <> OF_INLINE_HD float VecExpNonPositive<float>(float x) { return ExpNonPositiveFloat(x); }

}  // namespace oneflow
