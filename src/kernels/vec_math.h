// exp written so that loops over it vectorise (the libm call does not without -ffast-math,
// which would also drop the NaN/inf semantics the kernels need). Used by the softmax family,
// logsumexp and the scans.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>

namespace oneflow {

// exp(x) for float, within 1 ulp: x = k ln2 + r with |r| <= ln2/2 (ln2 split in two parts, so
// k ln2 is exact), exp(r) by its Taylor polynomial of degree 7 (truncation < 5e-9 relative),
// 2^k built from exponent bits in two halves (k may reach 128). Results below 2^-126 flush to
// 0 (softmax probabilities that small are 0 in every dtype that matters); NaN stays NaN.
inline float ExpFloat(float x) {
  const float xc = x < -87.33654f ? -87.33654f : (x > 88.72283f ? 88.72283f : x);
  const float kf = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round to nearest
  const float r = (xc - kf * 0.693359375f) - kf * -2.12194440e-4f;
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
  const float s1 = std::bit_cast<float>((k1 + 127) << 23);
  const float s2 = std::bit_cast<float>((k2 + 127) << 23);
  const float y = p * s1 * s2;
  return x != x ? x : (x < -87.33654f ? 0.0f : (x > 88.72283f ? INFINITY : y));
}

template <typename T> inline T VecExp(T x) { return std::exp(x); }
template <> inline float VecExp<float>(float x) { return ExpFloat(x); }

}  // namespace oneflow
